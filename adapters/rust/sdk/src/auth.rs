//! Server-side token verification (docs/CONTRACT.md, "Authentication and
//! TLS"; every probe of docs/AUTH.md).
//!
//! A request must carry exactly one `Authorization` header holding `Bearer`
//! (any case) and one or more spaces before one token (RFC 7235 section 2.1,
//! RFC 6750). `bearer` compares the token in constant time. `oauth` and
//! `workload` verify a compact JWS: the header's `alg` must be the
//! configured one (strict: only `ES256` under the configured P-256 public
//! key; compat: only `HS256` under the shared secret; `none` never); `kid`,
//! `jku`, `x5u` and `jwk` headers are ignored, the key is always the
//! configured one; header and claims are strict JSON ([`crate::json`]); the
//! signature is checked (by `jsonwebtoken`, which uses `ring`) before any
//! claim is read; then `iss`, `aud` (a string, or an array holding ours),
//! `purpose`, a non-empty `sub`, a numeric `exp` > clock, a numeric `iat`
//! <= clock and, when present, a numeric `nbf` <= clock. The clock is the
//! fixed verification time of the config (Unix seconds), never the wall clock.
//!
//! Errors name the check that failed, never the credential.

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::{Map, Number, Value};
use std::cmp::Ordering;

/// A verification key.
pub enum Key {
    /// strict profile: ES256 with this P-256 public key (PEM, SubjectPublicKeyInfo)
    Es256PublicPem(Vec<u8>),
    /// compat profile: HS256 with this shared secret
    Hs256Secret(Vec<u8>),
}

/// What a server accepts in the `Authorization` header.
pub struct Verifier {
    mode: Mode,
}

enum Mode {
    None,
    Bearer(Vec<u8>),
    Jwt(Box<Jwt>),
}

struct Jwt {
    algorithm: Algorithm,
    name: &'static str,
    key: DecodingKey,
    issuer: String,
    audience: String,
    purpose: String,
    clock: i64,
}

/// Names the mode and the algorithm only, never a credential.
impl std::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.mode {
            Mode::None => f.write_str("Verifier(none)"),
            Mode::Bearer(_) => f.write_str("Verifier(bearer)"),
            Mode::Jwt(jwt) => write!(f, "Verifier(jwt {})", jwt.name),
        }
    }
}

/// Names the kind of key only.
impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Key::Es256PublicPem(_) => "Key::Es256PublicPem",
            Key::Hs256Secret(_) => "Key::Hs256Secret",
        })
    }
}

impl Verifier {
    /// Every request accepted (modes `none` and `mtls`: TLS does the work).
    pub fn none() -> Verifier {
        Verifier { mode: Mode::None }
    }

    /// A static bearer token.
    pub fn bearer(token: &str) -> Verifier {
        Verifier {
            mode: Mode::Bearer(token.as_bytes().to_vec()),
        }
    }

    /// A JWT verifier (modes `oauth` and `workload`); the key is parsed here,
    /// once. `clock` is the verification time in Unix seconds.
    pub fn jwt(
        key: Key,
        issuer: &str,
        audience: &str,
        purpose: &str,
        clock: i64,
    ) -> Result<Verifier, String> {
        let (algorithm, name, key) = match key {
            Key::Es256PublicPem(pem) => {
                let point = p256_public_point(&pem)?;
                (Algorithm::ES256, "ES256", DecodingKey::from_ec_der(&point))
            }
            Key::Hs256Secret(secret) => {
                if secret.is_empty() {
                    return Err("the HS256 signing key is empty".into());
                }
                (Algorithm::HS256, "HS256", DecodingKey::from_secret(&secret))
            }
        };
        Ok(Verifier {
            mode: Mode::Jwt(Box::new(Jwt {
                algorithm,
                name,
                key,
                issuer: issuer.to_string(),
                audience: audience.to_string(),
                purpose: purpose.to_string(),
                clock,
            })),
        })
    }

    /// Checks every `Authorization` header value of one request, in order:
    /// `Ok` when accepted, else which check failed.
    pub fn verify(&self, authorization: &[&str]) -> Result<(), String> {
        if let Mode::None = self.mode {
            return Ok(());
        }
        let header = match authorization {
            [] => return Err("no Authorization header".into()),
            [one] => *one,
            _ => return Err("more than one Authorization header".into()),
        };
        let token = bearer_token(header)?;
        match &self.mode {
            Mode::None => Ok(()),
            Mode::Bearer(expected) => {
                if constant_time_eq(token.as_bytes(), expected) {
                    Ok(())
                } else {
                    Err("wrong token".into())
                }
            }
            Mode::Jwt(jwt) => jwt.verify(token),
        }
    }
}

/// The token of `Bearer` 1*SP token (the scheme in any case); anything else
/// (another scheme, no token, two tokens) is refused.
pub fn bearer_token(header: &str) -> Result<&str, String> {
    let Some((scheme, rest)) = header.split_once(' ') else {
        return Err("not a Bearer credential".into());
    };
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err("not a Bearer credential".into());
    }
    let token = rest.trim_start_matches(' ');
    if token.is_empty() {
        return Err("Bearer without a token".into());
    }
    if token.contains([' ', '\t', ',']) {
        return Err("more than one token".into());
    }
    Ok(token)
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A base64url segment (no padding, canonical trailing bits) decoded.
fn segment(text: &str, what: &str) -> Result<Vec<u8>, String> {
    URL_SAFE_NO_PAD
        .decode(text)
        .map_err(|_| format!("JWT {what}: not base64url"))
}

/// A strict JSON object from a decoded segment.
fn json_object(bytes: &[u8], what: &str) -> Result<Map<String, Value>, String> {
    match crate::json::parse(bytes) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(format!("JWT {what}: not an object")),
        Err(_) => Err(format!("JWT {what}: not strict JSON")),
    }
}

/// How a NumericDate compares with the clock (None: not a number).
fn numeric_date_cmp(v: Option<&Value>, clock: i64) -> Option<Ordering> {
    match v {
        Some(Value::Number(n)) => crate::json::number_cmp(n, &Number::from(clock)),
        _ => None,
    }
}

impl Jwt {
    fn verify(&self, token: &str) -> Result<(), String> {
        let segments: Vec<&str> = token.split('.').collect();
        let [head, body, signature] = segments[..] else {
            return Err("not a compact JWS".into());
        };
        let header = json_object(&segment(head, "header")?, "header")?;
        // the configured algorithm only (never none); kid, jku, x5u and jwk are ignored
        if header.get("alg").and_then(Value::as_str) != Some(self.name) {
            return Err("JWT algorithm not allowed".into());
        }
        segment(signature, "signature")?;
        let signed = &token[..head.len() + 1 + body.len()];
        match jsonwebtoken::crypto::verify(signature, signed.as_bytes(), &self.key, self.algorithm)
        {
            Ok(true) => {}
            _ => return Err("bad signature".into()),
        }
        let claims = json_object(&segment(body, "claims")?, "claims")?;
        self.check_claims(&claims)
    }

    fn check_claims(&self, claims: &Map<String, Value>) -> Result<(), String> {
        if claims.get("iss").and_then(Value::as_str) != Some(self.issuer.as_str()) {
            return Err("wrong iss".into());
        }
        let audience_ok = match claims.get("aud") {
            Some(Value::String(aud)) => *aud == self.audience,
            Some(Value::Array(auds)) => auds
                .iter()
                .any(|a| a.as_str() == Some(self.audience.as_str())),
            _ => false,
        };
        if !audience_ok {
            return Err("wrong aud".into());
        }
        if claims.get("purpose").and_then(Value::as_str) != Some(self.purpose.as_str()) {
            return Err("wrong purpose".into());
        }
        match claims.get("sub") {
            Some(Value::String(sub)) if !sub.is_empty() => {}
            _ => return Err("missing or empty sub".into()),
        }
        match numeric_date_cmp(claims.get("exp"), self.clock) {
            None => return Err("missing or non-numeric exp".into()),
            Some(Ordering::Greater) => {}
            Some(_) => return Err("expired".into()),
        }
        match numeric_date_cmp(claims.get("iat"), self.clock) {
            None => return Err("missing or non-numeric iat".into()),
            Some(Ordering::Greater) => return Err("iat in the future".into()),
            Some(_) => {}
        }
        if let Some(nbf) = claims.get("nbf") {
            match numeric_date_cmp(Some(nbf), self.clock) {
                None => return Err("non-numeric nbf".into()),
                Some(Ordering::Greater) => return Err("nbf in the future".into()),
                Some(_) => {}
            }
        }
        Ok(())
    }
}

/// The uncompressed point (`04 || X || Y`) of a PEM P-256 public key
/// (SubjectPublicKeyInfo: id-ecPublicKey on prime256v1).
pub fn p256_public_point(pem: &[u8]) -> Result<Vec<u8>, String> {
    let text =
        std::str::from_utf8(pem).map_err(|_| "the public key file is not PEM text".to_string())?;
    let begin = text
        .find("-----BEGIN ")
        .ok_or_else(|| "not a PEM public key".to_string())?;
    let after_begin = &text[begin..];
    let header_end = after_begin
        .find('\n')
        .ok_or_else(|| "not a PEM public key".to_string())?;
    let label = after_begin[..header_end].trim_end();
    if label != "-----BEGIN PUBLIC KEY-----" {
        return Err("the PEM block is not a PUBLIC KEY".into());
    }
    let body = &after_begin[header_end + 1..];
    let end = body
        .find("-----END PUBLIC KEY-----")
        .ok_or_else(|| "the PEM public key has no END line".to_string())?;
    let b64: String = body[..end]
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    let der = STANDARD
        .decode(b64)
        .map_err(|_| "the PEM public key is not base64".to_string())?;
    spki_p256_point(&der)
}

/// One DER TLV at the start of `data`: (tag, contents, rest).
fn der_tlv(data: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = data.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 2 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
        (len, &rest[n..])
    };
    if rest.len() < len {
        return None;
    }
    Some((tag, &rest[..len], &rest[len..]))
}

const OID_EC_PUBLIC_KEY: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const OID_PRIME256V1: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];

fn spki_p256_point(der: &[u8]) -> Result<Vec<u8>, String> {
    let bad = || "not a readable SubjectPublicKeyInfo".to_string();
    let (tag, spki, rest) = der_tlv(der).ok_or_else(bad)?;
    if tag != 0x30 || !rest.is_empty() {
        return Err(bad());
    }
    let (tag, algorithm, rest) = der_tlv(spki).ok_or_else(bad)?;
    if tag != 0x30 {
        return Err(bad());
    }
    let (tag, bits, tail) = der_tlv(rest).ok_or_else(bad)?;
    if tag != 0x03 || !tail.is_empty() {
        return Err(bad());
    }
    let (tag, oid, params) = der_tlv(algorithm).ok_or_else(bad)?;
    if tag != 0x06 || oid != OID_EC_PUBLIC_KEY {
        return Err("the public key is not an EC key".into());
    }
    let (tag, curve, tail) = der_tlv(params).ok_or_else(bad)?;
    if tag != 0x06 || curve != OID_PRIME256V1 || !tail.is_empty() {
        return Err("the public key is not on P-256".into());
    }
    match bits.split_first() {
        Some((0, point)) if point.len() == 65 && point[0] == 0x04 => Ok(point.to_vec()),
        _ => Err("the P-256 public key is not an uncompressed point".into()),
    }
}
