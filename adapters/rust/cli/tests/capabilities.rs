//! `GET /capabilities` of every server role (the core `server` and
//! `lifecycle-server` in each suite), real processes over HTTP with bearer
//! authentication: the headers first (401), then 200 `application/json` with
//! exactly the bare `capabilities` of the `tool.before` intercept entry of the
//! manifest that server answers `hooks/capabilities` with (no JSON-RPC
//! envelope: upstream clients validate it against `capabilities.schema.json`),
//! and never a receipt.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ahp_sdk::json::{encode, equal, parse};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_ahp-rust");
const TOKEN: &str = "capabilities-test-token";
const UPLOAD_TOKEN: &str = "upload-token-for-the-capabilities-test";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ahp-rust-caps-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A server process, killed if a test fails before its shutdown.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Server {
    fn start(role: &str, config: Value, d: &Path) -> (Server, Value) {
        let cfg = d.join("server.json");
        std::fs::write(&cfg, encode(&config)).unwrap();
        let child = Command::new(BIN)
            .args([role, "--config", cfg.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let server = Server(child);
        let until = Instant::now() + Duration::from_secs(10);
        while Instant::now() < until {
            if let Ok(data) = std::fs::read(d.join("ready.json")) {
                if let Ok(v) = parse(&data) {
                    return (server, v);
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("no readiness file");
    }
}

/// One exchange on its own connection: status, headers (lower-case names),
/// body (parsed, null when empty).
fn exchange(
    url: &str,
    method: &str,
    path: &str,
    auth: Option<&str>,
    body: &str,
) -> (u16, String, Value) {
    let authority = url.trim_start_matches("http://").split('/').next().unwrap();
    let mut s = TcpStream::connect(authority).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let auth = auth
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {authority}\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(request.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8(out).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let body = if body.is_empty() {
        Value::Null
    } else {
        parse(body.as_bytes()).unwrap()
    };
    (status, head.to_ascii_lowercase(), body)
}

/// The capabilities of the manifest's one `tool.before` intercept entry.
fn tool_before(manifest: &Value) -> Value {
    let entries: Vec<&Value> = manifest["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["event"] == "tool.before"
                && e["modes"].as_array().unwrap().contains(&json!("intercept"))
        })
        .collect();
    assert_eq!(entries.len(), 1, "{}", encode(manifest));
    entries[0]["capabilities"].clone()
}

/// Runs the checks against one server: `discovered` is true when it answers
/// a POSTed `hooks/capabilities` (its manifest is read from that answer),
/// else the core manifest is the one its GET reads.
fn check(role: &str, suite: Option<&str>, scenarios: &str, discovered: bool) {
    let name = suite.unwrap_or("core");
    let d = temp(name);
    let mut config = json!({"transport": "http", "readinessFile": d.join("ready.json"),
        "scenarioFile": root().join(scenarios),
        "auth": {"mode": "bearer", "profile": "compat", "token": TOKEN},
        "schemaDir": root().join("schemas/draft")});
    if let Some(suite) = suite {
        config["suite"] = json!(suite);
        config["uploadAuth"] = json!({"token": UPLOAD_TOKEN});
    }
    let (server, ready) = Server::start(role, config, &d);
    let endpoint = ready["endpoint"].as_str().unwrap();
    let control = ready["controlEndpoint"].as_str().unwrap();
    let receipts = || exchange(control, "GET", "/receipts", None, "").2;
    let before = receipts();

    for auth in [None, Some("wrong")] {
        let (status, _, body) = exchange(endpoint, "GET", "/capabilities", auth, "");
        assert_eq!((status, body), (401, Value::Null), "{name}: {auth:?}");
    }
    let (status, head, got) = exchange(endpoint, "GET", "/capabilities", Some(TOKEN), "");
    assert_eq!(status, 200, "{name}");
    assert!(
        head.contains("\r\ncontent-type: application/json"),
        "{name}: {head}"
    );
    assert!(
        equal(&receipts(), &before),
        "{name}: GET /capabilities was recorded"
    );
    assert!(got.get("jsonrpc").is_none(), "{name}: an envelope");

    let manifest = if discovered {
        let ask = r#"{"jsonrpc": "2.0", "id": 9, "method": "hooks/capabilities", "params": {"protocolVersion": "draft"}}"#;
        let (status, _, answer) = exchange(endpoint, "POST", "/intercept", Some(TOKEN), ask);
        assert_eq!((status, &answer["id"]), (200, &json!(9)), "{name}");
        answer["result"]["manifest"].clone()
    } else {
        ahp_sdk::manifest::manifest()
    };
    assert!(
        equal(&got, &tool_before(&manifest)),
        "{name}: {} is not the tool.before capabilities",
        encode(&got)
    );
    let schemas = ahp_sdk::schemas::Schemas::load(&root().join("schemas/draft")).unwrap();
    assert_eq!(
        schemas.check(ahp_sdk::schemas::CAPABILITIES, &got),
        None,
        "{name}"
    );

    let (status, _, _) = exchange(control, "POST", "/shutdown", None, "{}");
    assert_eq!(status, 200, "{name}");
    drop(server);
}

#[test]
fn the_core_server() {
    check("server", None, "scenarios/core.json", true);
}

#[test]
fn the_lifecycle_server() {
    check(
        "lifecycle-server",
        Some("lifecycle"),
        "scenarios/lifecycle.json",
        true,
    );
}

#[test]
fn the_catalogue_server() {
    check(
        "lifecycle-server",
        Some("catalogue"),
        "scenarios/catalogue.json",
        true,
    );
}

#[test]
fn the_compaction_server() {
    check(
        "lifecycle-server",
        Some("compaction"),
        "scenarios/compaction.json",
        true,
    );
}

/// It answers no `hooks/capabilities` (a POSTed one is judged as an
/// intercept and refused): its GET reads the core manifest.
#[test]
fn the_elicitation_server() {
    check(
        "lifecycle-server",
        Some("elicitation"),
        "scenarios/elicitation.json",
        false,
    );
}
