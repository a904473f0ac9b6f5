//! Every rejection of docs/CONTRACT.md, "Authentication and TLS", and every
//! server probe of docs/AUTH.md, with the positive controls.

use ahp_sdk::auth::{Key, Verifier};
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use serde_json::{json, Value};

const CLOCK: i64 = 1_800_000_000;
const ISSUER: &str = "https://issuer.test";
const AUDIENCE: &str = "ahp-interop";
const SECRET: &[u8] = b"a shared secret of the compat profile";

struct EcKey {
    pair: EcdsaKeyPair,
    rng: SystemRandom,
}

impl EcKey {
    fn new() -> EcKey {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        EcKey { pair, rng }
    }

    fn spki(&self) -> Vec<u8> {
        let mut der = vec![
            0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06,
            0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
        ];
        der.extend_from_slice(self.pair.public_key().as_ref());
        der
    }

    fn pem(&self) -> Vec<u8> {
        pem_of("PUBLIC KEY", &self.spki())
    }

    fn sign(&self, message: &[u8]) -> Vec<u8> {
        self.pair
            .sign(&self.rng, message)
            .unwrap()
            .as_ref()
            .to_vec()
    }

    fn jwk(&self) -> Value {
        let point = self.pair.public_key().as_ref();
        json!({"kty": "EC", "crv": "P-256", "x": b64(&point[1..33]), "y": b64(&point[33..])})
    }
}

fn pem_of(label: &str, der: &[u8]) -> Vec<u8> {
    let body = STANDARD.encode(der);
    let lines: Vec<&str> = body
        .as_bytes()
        .chunks(64)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    format!(
        "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
        lines.join("\n")
    )
    .into_bytes()
}

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

fn hs256(secret: &[u8], message: &[u8]) -> Vec<u8> {
    ring::hmac::sign(
        &ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret),
        message,
    )
    .as_ref()
    .to_vec()
}

fn claims(purpose: &str) -> Value {
    json!({"iss": ISSUER, "aud": AUDIENCE, "purpose": purpose, "sub": "client-1",
           "exp": CLOCK + 600, "iat": CLOCK - 10})
}

fn with(mut c: Value, key: &str, v: Option<Value>) -> Value {
    match v {
        Some(v) => c[key] = v,
        None => {
            c.as_object_mut().unwrap().remove(key);
        }
    }
    c
}

/// A compact JWS of raw header and claims texts, signed by `sign`.
fn token_raw(header: &str, claims: &str, sign: impl Fn(&[u8]) -> Vec<u8>) -> String {
    let signed = format!("{}.{}", b64(header.as_bytes()), b64(claims.as_bytes()));
    let sig = sign(signed.as_bytes());
    format!("{signed}.{}", b64(&sig))
}

fn es_token(key: &EcKey, header: Value, claims: &Value) -> String {
    token_raw(&header.to_string(), &claims.to_string(), |m| key.sign(m))
}

fn hs_token(secret: &[u8], header: Value, claims: &Value) -> String {
    token_raw(&header.to_string(), &claims.to_string(), |m| {
        hs256(secret, m)
    })
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

fn strict(key: &EcKey, purpose: &str) -> Verifier {
    Verifier::jwt(
        Key::Es256PublicPem(key.pem()),
        ISSUER,
        AUDIENCE,
        purpose,
        CLOCK,
    )
    .unwrap()
}

fn compat(purpose: &str) -> Verifier {
    Verifier::jwt(
        Key::Hs256Secret(SECRET.to_vec()),
        ISSUER,
        AUDIENCE,
        purpose,
        CLOCK,
    )
    .unwrap()
}

#[track_caller]
fn accepts(v: &Verifier, headers: &[&str]) {
    if let Err(e) = v.verify(headers) {
        panic!("refused ({e}): {:.80?}", headers);
    }
}

#[track_caller]
fn refuses(v: &Verifier, headers: &[&str], why: &str) {
    match v.verify(headers) {
        Ok(()) => panic!("accepted: {:.80?}", headers),
        Err(e) => assert!(e.contains(why), "refused for {e:?}, expected {why:?}"),
    }
}

// ---- the header, for every mode with credentials

#[test]
fn bearer_header_cases() {
    let v = Verifier::bearer("s3cret-token");
    accepts(&v, &["Bearer s3cret-token"]);
    accepts(&v, &["bearer s3cret-token"]); // scheme-is-case-insensitive
    accepts(&v, &["BEARER s3cret-token"]);
    accepts(&v, &["Bearer    s3cret-token"]); // one or more spaces
    refuses(&v, &[], "no Authorization");
    refuses(&v, &["Bearer wrong"], "wrong token");
    refuses(&v, &["Bearer s3cret-tokenX"], "wrong token");
    refuses(&v, &["Bearer s3cret-toke"], "wrong token");
    refuses(
        &v,
        &["Bearer s3cret-token", "Bearer s3cret-token"],
        "more than one",
    );
    refuses(
        &v,
        &["Bearer s3cret-token", "Bearer wrong"],
        "more than one",
    );
    refuses(
        &v,
        &["Bearer wrong", "Bearer s3cret-token"],
        "more than one",
    );
    refuses(
        &v,
        &["Bearer s3cret-token s3cret-token"],
        "more than one token",
    );
    refuses(
        &v,
        &["Bearer s3cret-token,s3cret-token"],
        "more than one token",
    );
    refuses(
        &v,
        &["Bearer s3cret-token\ts3cret-token"],
        "more than one token",
    );
    refuses(&v, &["Token s3cret-token"], "not a Bearer");
    refuses(
        &v,
        &[&format!("Basic {}", STANDARD.encode("s3cret-token"))],
        "not a Bearer",
    );
    refuses(&v, &["Basic s3cret-token"], "not a Bearer");
    refuses(&v, &["Bearer"], "not a Bearer");
    refuses(&v, &["Bearer "], "without a token");
    refuses(&v, &["Bearer   "], "without a token");
    refuses(&v, &["Bearers3cret-token"], "not a Bearer");
    refuses(&v, &["Bearer\ts3cret-token"], "not a Bearer");
    refuses(&v, &["s3cret-token"], "not a Bearer");
    refuses(&v, &[""], "not a Bearer");
    let big = bearer(&"a".repeat(16 << 10));
    refuses(&v, &[&big], "wrong token");
}

#[test]
fn mode_none_ignores_credentials() {
    let v = Verifier::none();
    accepts(&v, &[]);
    accepts(&v, &["Bearer wrong", "garbage"]);
    assert_eq!(format!("{v:?}"), "Verifier(none)");
    assert!(!format!("{:?}", Verifier::bearer("s3cret")).contains("s3cret"));
}

// ---- strict: ES256

#[test]
fn strict_positive_controls() {
    let key = EcKey::new();
    let v = strict(&key, "oauth");
    let t = es_token(
        &key,
        json!({"alg": "ES256", "typ": "JWT"}),
        &claims("oauth"),
    );
    accepts(&v, &[&bearer(&t)]);
    accepts(&v, &[&format!("bearer  {t}")]);
    // aud an array holding ours; nbf in the past or now; iat now; fractional times
    let c = with(claims("oauth"), "aud", Some(json!(["other", AUDIENCE])));
    accepts(&v, &[&bearer(&es_token(&key, json!({"alg": "ES256"}), &c))]);
    let c = with(
        with(claims("oauth"), "nbf", Some(json!(CLOCK))),
        "iat",
        Some(json!(CLOCK)),
    );
    accepts(&v, &[&bearer(&es_token(&key, json!({"alg": "ES256"}), &c))]);
    let c = with(claims("oauth"), "exp", Some(json!(CLOCK as f64 + 0.5)));
    accepts(&v, &[&bearer(&es_token(&key, json!({"alg": "ES256"}), &c))]);
    // kid, jku, x5u are ignored when the configured key signed
    let h = json!({"alg": "ES256", "kid": "k-1", "jku": "https://evil.test/jwks", "x5u": "https://evil.test/c"});
    accepts(&v, &[&bearer(&es_token(&key, h, &claims("oauth")))]);
    // workload purpose
    let w = strict(&key, "workload");
    accepts(
        &w,
        &[&bearer(&es_token(
            &key,
            json!({"alg": "ES256"}),
            &claims("workload"),
        ))],
    );
}

#[test]
fn strict_claim_rejections() {
    let key = EcKey::new();
    let v = strict(&key, "oauth");
    let signed = |c: Value| bearer(&es_token(&key, json!({"alg": "ES256"}), &c));
    let cases: Vec<(Value, &str)> = vec![
        (
            with(claims("oauth"), "iss", Some(json!("https://other.test"))),
            "wrong iss",
        ),
        (with(claims("oauth"), "iss", None), "wrong iss"),
        (
            with(claims("oauth"), "aud", Some(json!("other"))),
            "wrong aud",
        ),
        (
            with(claims("oauth"), "aud", Some(json!(["other", "more"]))),
            "wrong aud",
        ),
        (with(claims("oauth"), "aud", Some(json!([]))), "wrong aud"),
        (with(claims("oauth"), "aud", None), "wrong aud"),
        (
            with(claims("oauth"), "purpose", Some(json!("other"))),
            "wrong purpose",
        ),
        (claims("workload"), "wrong purpose"), // the other purpose's valid token
        (with(claims("oauth"), "purpose", None), "wrong purpose"),
        (with(claims("oauth"), "sub", None), "sub"),
        (with(claims("oauth"), "sub", Some(json!(""))), "sub"),
        (with(claims("oauth"), "sub", Some(json!(7))), "sub"),
        (
            with(claims("oauth"), "exp", Some(json!(CLOCK - 1))),
            "expired",
        ),
        (with(claims("oauth"), "exp", Some(json!(CLOCK))), "expired"), // exp <= clock
        (with(claims("oauth"), "exp", None), "exp"),
        (
            with(claims("oauth"), "exp", Some(json!("1900000000"))),
            "non-numeric exp",
        ),
        (
            with(claims("oauth"), "exp", Some(json!(true))),
            "non-numeric exp",
        ),
        (
            with(claims("oauth"), "nbf", Some(json!(CLOCK + 60))),
            "nbf in the future",
        ),
        (
            with(claims("oauth"), "nbf", Some(json!("0"))),
            "non-numeric nbf",
        ),
        (
            with(claims("oauth"), "iat", Some(json!(CLOCK + 60))),
            "iat in the future",
        ),
        (with(claims("oauth"), "iat", None), "iat"),
        (
            with(claims("oauth"), "iat", Some(json!(null))),
            "non-numeric iat",
        ),
    ];
    for (c, why) in cases {
        refuses(&v, &[&signed(c.clone())], why);
    }
    // claims that are not strict JSON or not an object
    let dup = format!(
        r#"{{"iss":"{ISSUER}","iss":"{ISSUER}","aud":"{AUDIENCE}","purpose":"oauth","sub":"s","exp":{},"iat":{}}}"#,
        CLOCK + 9,
        CLOCK
    );
    refuses(
        &v,
        &[&bearer(&token_raw(r#"{"alg":"ES256"}"#, &dup, |m| {
            key.sign(m)
        }))],
        "claims: not strict JSON",
    );
    refuses(
        &v,
        &[&bearer(&token_raw(r#"{"alg":"ES256"}"#, "[1]", |m| {
            key.sign(m)
        }))],
        "not an object",
    );
}

#[test]
fn strict_signature_and_algorithm_rejections() {
    let key = EcKey::new();
    let attacker = EcKey::new();
    let v = strict(&key, "oauth");
    let good = es_token(&key, json!({"alg": "ES256"}), &claims("oauth"));
    // a flipped signature
    let (body, sig) = good.rsplit_once('.').unwrap();
    let mut raw = URL_SAFE_NO_PAD.decode(sig).unwrap();
    raw[10] ^= 0x01;
    refuses(
        &v,
        &[&bearer(&format!("{body}.{}", b64(&raw)))],
        "bad signature",
    );
    // the right claims signed by another key
    refuses(
        &v,
        &[&bearer(&es_token(
            &attacker,
            json!({"alg": "ES256"}),
            &claims("oauth"),
        ))],
        "bad signature",
    );
    // alg none, with and without a signature
    let none = token_raw(r#"{"alg":"none"}"#, &claims("oauth").to_string(), |_| {
        Vec::new()
    });
    refuses(&v, &[&bearer(&none)], "algorithm");
    refuses(&v, &[&bearer(none.trim_end_matches('.'))], "compact JWS");
    let none_signed = token_raw(r#"{"alg":"none"}"#, &claims("oauth").to_string(), |m| {
        key.sign(m)
    });
    refuses(&v, &[&bearer(&none_signed)], "algorithm");
    refuses(
        &v,
        &[&bearer(&token_raw(
            r#"{"alg":"NONE"}"#,
            &claims("oauth").to_string(),
            |m| key.sign(m),
        ))],
        "algorithm",
    );
    refuses(
        &v,
        &[&bearer(&token_raw(
            r#"{"typ":"JWT"}"#,
            &claims("oauth").to_string(),
            |m| key.sign(m),
        ))],
        "algorithm",
    );
    refuses(
        &v,
        &[&bearer(&token_raw(
            r#"{"alg":"es256"}"#,
            &claims("oauth").to_string(),
            |m| key.sign(m),
        ))],
        "algorithm",
    );
    // algorithm confusion: HS256 keyed with the server's public key (PEM and DER)
    refuses(
        &v,
        &[&bearer(&hs_token(
            &key.pem(),
            json!({"alg": "HS256"}),
            &claims("oauth"),
        ))],
        "algorithm",
    );
    refuses(
        &v,
        &[&bearer(&hs_token(
            &key.spki(),
            json!({"alg": "HS256"}),
            &claims("oauth"),
        ))],
        "algorithm",
    );
    // kid, jku, x5u headers with another key's signature
    for h in [
        json!({"alg": "ES256", "kid": "attacker"}),
        json!({"alg": "ES256", "jku": "https://attacker.test/jwks.json"}),
        json!({"alg": "ES256", "x5u": "https://attacker.test/cert.pem"}),
        json!({"alg": "ES256", "jwk": attacker.jwk()}), // an embedded jwk: the attacker's key
    ] {
        refuses(
            &v,
            &[&bearer(&es_token(&attacker, h, &claims("oauth")))],
            "bad signature",
        );
    }
    // the static bearer token; not three segments; not base64url; a header that is not strict JSON
    refuses(&v, &["Bearer s3cret-token"], "compact JWS");
    refuses(&v, &[&bearer(&format!("{good}.x"))], "compact JWS");
    refuses(
        &v,
        &[&bearer(good.rsplit_once('.').unwrap().0)],
        "compact JWS",
    );
    let (h, rest) = good.split_once('.').unwrap();
    refuses(
        &v,
        &[&bearer(&format!("{h}=.{rest}"))],
        "header: not base64url",
    );
    refuses(
        &v,
        &[&bearer(&format!("{}.{rest}", h.replace('e', "+")))],
        "header",
    );
    refuses(
        &v,
        &[&bearer(&format!("{good}="))],
        "signature: not base64url",
    );
    let dup_header = token_raw(
        r#"{"alg":"ES256","alg":"ES256"}"#,
        &claims("oauth").to_string(),
        |m| key.sign(m),
    );
    refuses(&v, &[&bearer(&dup_header)], "header: not strict JSON");
    let nan_header = token_raw(
        r#"{"alg":"ES256","x":NaN}"#,
        &claims("oauth").to_string(),
        |m| key.sign(m),
    );
    refuses(&v, &[&bearer(&nan_header)], "header: not strict JSON");
    // the header checks come first
    refuses(&v, &[], "no Authorization");
    refuses(&v, &[&bearer(&good), &bearer(&good)], "more than one");
    refuses(&v, &[&format!("Token {good}")], "not a Bearer");
}

// ---- compat: HS256

#[test]
fn compat_profile() {
    let v = compat("oauth");
    let good = hs_token(
        SECRET,
        json!({"alg": "HS256", "typ": "JWT"}),
        &claims("oauth"),
    );
    accepts(&v, &[&bearer(&good)]);
    accepts(&v, &[&format!("BEARER {good}")]);
    let w = compat("workload");
    accepts(
        &w,
        &[&bearer(&hs_token(
            SECRET,
            json!({"alg": "HS256"}),
            &claims("workload"),
        ))],
    );
    refuses(&w, &[&bearer(&good)], "wrong purpose");
    // an ES256 token where HS256 is required
    let key = EcKey::new();
    refuses(
        &v,
        &[&bearer(&es_token(
            &key,
            json!({"alg": "ES256"}),
            &claims("oauth"),
        ))],
        "algorithm",
    );
    // another secret; a flipped signature; alg none; wrong claims
    refuses(
        &v,
        &[&bearer(&hs_token(
            b"another secret",
            json!({"alg": "HS256"}),
            &claims("oauth"),
        ))],
        "bad signature",
    );
    let (body, sig) = good.rsplit_once('.').unwrap();
    let mut raw = URL_SAFE_NO_PAD.decode(sig).unwrap();
    raw[0] ^= 0x80;
    refuses(
        &v,
        &[&bearer(&format!("{body}.{}", b64(&raw)))],
        "bad signature",
    );
    refuses(&v, &[&bearer(&format!("{body}."))], "bad signature");
    let none = token_raw(r#"{"alg":"none"}"#, &claims("oauth").to_string(), |_| {
        Vec::new()
    });
    refuses(&v, &[&bearer(&none)], "algorithm");
    let c = with(claims("oauth"), "exp", Some(json!(CLOCK - 5)));
    refuses(
        &v,
        &[&bearer(&hs_token(SECRET, json!({"alg": "HS256"}), &c))],
        "expired",
    );
    let c = with(claims("oauth"), "aud", Some(json!(["x"])));
    refuses(
        &v,
        &[&bearer(&hs_token(SECRET, json!({"alg": "HS256"}), &c))],
        "wrong aud",
    );
    refuses(&v, &["Bearer s3cret-token"], "compact JWS");
}

// ---- the key

#[test]
fn keys_are_checked_once_when_the_verifier_is_made() {
    let key = EcKey::new();
    let mk =
        |pem: Vec<u8>| Verifier::jwt(Key::Es256PublicPem(pem), ISSUER, AUDIENCE, "oauth", CLOCK);
    assert!(mk(key.pem()).is_ok());
    // CRLF line endings and text around the block are fine
    let crlf = String::from_utf8(key.pem()).unwrap().replace('\n', "\r\n");
    assert!(mk(format!("comment\r\n{crlf}").into_bytes()).is_ok());
    for (pem, why) in [
        (b"".to_vec(), "PEM"),
        (b"not a key".to_vec(), "PEM"),
        (pem_of("CERTIFICATE", &key.spki()), "PUBLIC KEY"),
        (
            pem_of("PUBLIC KEY", &key.spki()[..40]),
            "SubjectPublicKeyInfo",
        ),
        (
            b"-----BEGIN PUBLIC KEY-----\n!!!!\n-----END PUBLIC KEY-----\n".to_vec(),
            "base64",
        ),
    ] {
        let e = mk(pem).unwrap_err();
        assert!(e.contains(why), "{e}");
    }
    // a key on another curve (secp384r1 OID)
    let mut other = key.spki();
    other[16..24].copy_from_slice(&[0x2b, 0x81, 0x04, 0x00, 0x22, 0x05, 0x00, 0x00]);
    assert!(mk(pem_of("PUBLIC KEY", &other)).is_err());
    // not an EC key (rsaEncryption OID)
    let mut rsa = key.spki();
    rsa[6..13].copy_from_slice(&[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01]);
    assert!(mk(pem_of("PUBLIC KEY", &rsa))
        .unwrap_err()
        .contains("not an EC key"));
    // a compressed point
    let mut compressed = key.spki();
    compressed[26] = 0x02;
    assert!(mk(pem_of("PUBLIC KEY", &compressed))
        .unwrap_err()
        .contains("uncompressed"));
    // an empty HS256 secret
    assert!(Verifier::jwt(
        Key::Hs256Secret(Vec::new()),
        ISSUER,
        AUDIENCE,
        "oauth",
        CLOCK
    )
    .is_err());
    // Debug never shows a key
    assert_eq!(
        format!("{:?}", Key::Hs256Secret(SECRET.to_vec())),
        "Key::Hs256Secret"
    );
}

#[test]
fn a_verifier_is_shared_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Verifier>();
    let key = EcKey::new();
    let v = std::sync::Arc::new(strict(&key, "oauth"));
    let t = bearer(&es_token(&key, json!({"alg": "ES256"}), &claims("oauth")));
    let handles: Vec<_> = (0..3)
        .map(|_| {
            let (v, t) = (std::sync::Arc::clone(&v), t.clone());
            std::thread::spawn(move || v.verify(&[&t]))
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), Ok(()));
    }
}
