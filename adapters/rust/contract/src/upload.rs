//! Content upload (docs/LIFECYCLE.md, "Uploads"): raw octets POSTed to the
//! receiver's own plain-HTTP loopback listener and answered `201 {ref, size,
//! sha256}`; the content store behind it; the sender's side (declared size
//! and hash sent as they are, redirects never followed); and the body refs
//! of an event's items (checked by receivers, rebound by senders).

use std::collections::HashMap;
use std::io::Write;
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};
use serde_json::{json, Map, Value};

use crate::entries::{EntryLog, UPLOAD};
use crate::http::{self, Body, Conn, Framing, Handler, Request, Response, Stream, Url};

/// An upload body over this gets 413 without being read.
pub const MAX_UPLOAD: u64 = 1 << 20;
/// The upload route of a receiver's upload listener.
pub const UPLOAD_PATH: &str = "/upload";
/// The header carrying the body's declared SHA-256.
pub const HASH_HEADER: &str = "AHP-Content-SHA256";
pub const OCTET_STREAM: &str = "application/octet-stream";

/// The lowercase hex SHA-256 of data.
pub fn sha256_hex(data: &[u8]) -> String {
    hex(ring::digest::digest(&ring::digest::SHA256, data).as_ref())
}

/// Lowercase hex.
pub fn hex(data: &[u8]) -> String {
    data.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether s is 64 lowercase hex digits.
pub fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn random<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut b)
        .expect("the system's random source");
    b
}

/// A receiver reference `urn:uuid:` (version 4).
pub fn new_ref() -> String {
    let mut b: [u8; 16] = random();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex(&b);
    format!(
        "urn:uuid:{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// 32 random bytes in hex (an upload credential nobody is given).
pub fn random_token() -> String {
    hex(&random::<32>())
}

/// Standard base64 with padding.
pub fn base64_decode(s: &str) -> Result<Vec<u8>, String> {
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .map_err(|e| format!("not base64: {e}"))
}

pub fn base64_encode(data: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(data)
}

/// Immutable bytes by receiver reference.
#[derive(Default)]
pub struct ContentStore {
    blobs: Mutex<HashMap<String, Arc<Vec<u8>>>>,
}

impl ContentStore {
    pub fn new() -> ContentStore {
        ContentStore::default()
    }

    /// Stores a copy of data under a new reference (changed bytes never share one).
    pub fn put(&self, data: &[u8]) -> String {
        let r = new_ref();
        self.blobs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(r.clone(), Arc::new(data.to_vec()));
        r
    }

    pub fn has(&self, r: &str) -> bool {
        self.blobs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(r)
    }

    pub fn get(&self, r: &str) -> Option<Arc<Vec<u8>>> {
        self.blobs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(r)
            .cloned()
    }
}

/// The upload listener's handler: every attempt is recorded as an `upload`
/// entry (the declared `Content-Length` and `AHP-Content-SHA256`; `ref` only
/// on a 201) before it is answered.
pub struct UploadHandler {
    pub token: String,
    pub store: Arc<ContentStore>,
    pub entries: Arc<EntryLog>,
}

/// A `Bearer` credential's token (the scheme case-insensitive, one or more spaces).
pub fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, rest) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let token = rest.trim_start_matches(' ');
    (!token.is_empty()).then_some(token)
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl UploadHandler {
    fn authorization(&self, values: &[&str]) -> Option<u16> {
        match values {
            [] => Some(401),
            [one] => match bearer_token(one) {
                Some(t) if constant_time_eq(t.as_bytes(), self.token.as_bytes()) => None,
                _ => Some(401),
            },
            _ => Some(400),
        }
    }

    /// The status of a refusal from the head alone (None: read the body).
    fn head_status(&self, req: &Request, size: Option<u64>, hash: &str) -> Option<u16> {
        let h = &req.headers;
        if let Some(s) = self.authorization(&h.all("authorization")) {
            return Some(s);
        }
        if !h.all("transfer-encoding").is_empty() || !h.all("content-encoding").is_empty() {
            return Some(400);
        }
        match h.all("content-type").as_slice() {
            [one]
                if one
                    .split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .eq_ignore_ascii_case(OCTET_STREAM) => {}
            _ => return Some(400),
        }
        let size = size?;
        if size > MAX_UPLOAD {
            return Some(413);
        }
        if h.all("ahp-content-sha256").len() != 1 || !is_sha256_hex(hash) {
            return Some(400);
        }
        None
    }

    fn record(&self, status: u16, size: u64, hash: &str, r: Option<&str>) {
        let mut entry = json!({"kind": UPLOAD, "status": status, "size": size, "sha256": hash});
        if let Some(r) = r {
            entry["ref"] = json!(r);
        }
        self.entries.record(entry, "ref");
    }
}

fn refusal(status: u16, why: &str) -> Response {
    Response::json(status, &json!({"error": why})).closing()
}

impl Handler for UploadHandler {
    fn handle(&self, req: &Request, body: &mut Body) -> Response {
        if req.path != UPLOAD_PATH {
            return Response::new(404);
        }
        if req.method != "POST" {
            return Response::new(405).header("Allow", "POST");
        }
        let lengths = req.headers.all("content-length");
        let size = match lengths.as_slice() {
            [one]
                if !one.is_empty()
                    && one.len() <= 19
                    && one.bytes().all(|b| b.is_ascii_digit()) =>
            {
                one.parse::<u64>().ok()
            }
            _ => None,
        };
        let hash = match req.headers.all("ahp-content-sha256").as_slice() {
            [one] => one.to_string(),
            _ => String::new(),
        };
        let declared = size.unwrap_or(0);
        let status = match self.head_status(req, size, &hash) {
            Some(s) => Some(s),
            None if size.is_none() => Some(400),
            None => None,
        };
        if let Some(status) = status {
            self.record(status, declared, &hash, None);
            // answered unread; the close drains what the sender still writes
            return refusal(status, "refused before the body was read");
        }
        let data = match body.read_length(declared as usize) {
            Ok(d) => d,
            Err(_) => {
                self.record(400, declared, &hash, None);
                return refusal(400, "the body is shorter than its Content-Length");
            }
        };
        if sha256_hex(&data) != hash {
            self.record(400, declared, &hash, None);
            return Response::json(400, &json!({"error": format!("{HASH_HEADER} differs")}));
        }
        let r = self.store.put(&data);
        self.record(201, declared, &hash, Some(&r));
        Response::json(201, &json!({"ref": r, "size": declared, "sha256": hash}))
    }
}

/// What an upload got back.
#[derive(Debug, Clone)]
pub struct UploadAnswer {
    pub status: u16,
    pub body: Vec<u8>,
}

impl UploadAnswer {
    /// The 201 body when it is exactly `{ref, size, sha256}` with a non-empty
    /// string ref, an integer size and a string hash.
    pub fn receipt(&self) -> Option<Map<String, Value>> {
        let v = ahp_sdk::json::parse(&self.body).ok()?;
        let m = v.as_object()?;
        let ok = m.len() == 3
            && m.get("ref")
                .and_then(Value::as_str)
                .is_some_and(|r| !r.is_empty())
            && m.get("size").is_some_and(|s| s.as_u64().is_some())
            && m.get("sha256").is_some_and(Value::is_string);
        ok.then(|| m.clone())
    }
}

/// POSTs `data` declaring `size` and `sha` as they are: a body shorter than
/// `size` is sent whole and the write side shut (plain HTTP), a longer one is
/// cut at `size`. `token`, when given, is the only credential; an https
/// endpoint is verified with `tls` (which presents no client certificate).
/// One connection, closed after the answer; redirects are never followed (a
/// 3xx is its status). Err: no answer came back.
pub fn send_upload(
    endpoint: &str,
    data: &[u8],
    size: u64,
    sha: &str,
    token: Option<&str>,
    timeout: Duration,
    tls: Option<Arc<ClientConfig>>,
) -> Result<UploadAnswer, String> {
    let url = Url::parse(endpoint).map_err(|e| format!("upload endpoint: {e}"))?;
    let deadline = Instant::now() + timeout;
    let addrs: Vec<_> = (url.host.as_str(), url.port)
        .to_socket_addrs()
        .map_err(|e| format!("upload endpoint: cannot resolve {}: {e}", url.host))?
        .collect();
    let mut tcp = None;
    let mut last = String::from("no address");
    for a in addrs {
        match TcpStream::connect_timeout(&a, timeout) {
            Ok(s) => {
                tcp = Some(s);
                break;
            }
            Err(e) => last = e.to_string(),
        }
    }
    let tcp = tcp.ok_or_else(|| format!("upload connection failed: {last}"))?;
    let _ = tcp.set_nodelay(true);
    let _ = tcp.set_read_timeout(Some(timeout));
    let _ = tcp.set_write_timeout(Some(timeout));
    let mut stream = if url.https {
        let cfg = tls.ok_or("an https upload endpoint needs a CA (tls.caFile)")?;
        let name = ServerName::try_from(url.host.clone())
            .map_err(|e| format!("bad upload host {}: {e}", url.host))?;
        let mut c = ClientConnection::new(cfg, name).map_err(|e| format!("TLS setup: {e}"))?;
        let mut tcp = tcp;
        while c.is_handshaking() {
            if Instant::now() >= deadline {
                return Err("upload TLS handshake timed out".into());
            }
            c.complete_io(&mut tcp)
                .map_err(|e| format!("upload TLS handshake failed: {e}"))?;
        }
        Stream::ClientTls(Box::new(StreamOwned::new(c, tcp)))
    } else {
        Stream::Plain(tcp)
    };
    let host = if url.host.contains(':') {
        format!("[{}]:{}", url.host, url.port)
    } else {
        format!("{}:{}", url.host, url.port)
    };
    let mut head = format!(
        "POST {} HTTP/1.1\r\nHost: {host}\r\nContent-Type: {OCTET_STREAM}\r\nContent-Length: {size}\r\n{HASH_HEADER}: {sha}\r\nConnection: close\r\n",
        url.path
    );
    if let Some(t) = token {
        head.push_str(&format!("Authorization: Bearer {t}\r\n"));
    }
    head.push_str("\r\n");
    let body = if (data.len() as u64) > size {
        &data[..size as usize]
    } else {
        data
    };
    let mut out = head.into_bytes();
    out.extend_from_slice(body);
    // the receiver may answer (and close) before reading it all: a write error is not fatal
    let written = stream.write_all(&out).and_then(|_| stream.flush());
    if written.is_ok() && (body.len() as u64) < size {
        if let Stream::Plain(s) = &stream {
            let _ = s.shutdown(Shutdown::Write);
        }
    }
    let mut conn = Conn::new(stream);
    let head = match conn.read_head(http::MAX_HEAD) {
        Ok(Some(h)) => h,
        Ok(None) => return Err("upload got no answer: the connection closed".into()),
        Err(e) => return Err(format!("upload got no answer: {e}")),
    };
    let (status, headers) = http::parse_response_head(&head)?;
    let framing = if status == 204 || status == 304 {
        Framing::Empty
    } else {
        headers.framing(false)?
    };
    let answer = conn
        .read_body(framing, http::MAX_RESPONSE)
        .map_err(|e| format!("upload answer unreadable: {e}"))?;
    conn.stream.close(true);
    Ok(UploadAnswer {
        status,
        body: answer,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_refs_tokens() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert!(is_sha256_hex(&sha256_hex(b"x")));
        assert!(!is_sha256_hex(&sha256_hex(b"x").to_uppercase()));
        let r = new_ref();
        assert!(r.starts_with("urn:uuid:") && r.len() == 45, "{r}");
        assert_ne!(new_ref(), r);
        assert_eq!(random_token().len(), 64);
        assert_eq!(
            base64_decode(&base64_encode(b"\x00\xff")).unwrap(),
            b"\x00\xff"
        );
        assert_eq!(bearer_token("bearer   abc"), Some("abc"));
        assert_eq!(bearer_token("Basic abc"), None);
    }
}
