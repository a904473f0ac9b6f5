//! The lifecycle commands end to end against docs/LIFECYCLE.md: the Rust
//! client runs every scenario set of the suite against the Rust server, over
//! stdio (the client spawns the server) and over HTTP (the test does, as the
//! harness would); every applicable row completes with `actual` equal to its
//! hand-written `expected`, and what both write validates against
//! schemas/contract. Also: a suite the binary does not implement.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ahp_sdk::schemas::Schemas;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_ahp-rust");
const TOKEN: &str = "upload-token-for-the-cli-test";
const SETS: &[&str] = &[
    "scenarios/lifecycle.json",
    "scenarios/upstream/lifecycle-scenarios.json",
    "scenarios/upstream/observation-chain-scenarios.json",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ahp-rust-lc-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(path: &Path, v: &Value) -> String {
    std::fs::write(path, ahp_sdk::json::encode(v)).unwrap();
    path.to_string_lossy().into_owned()
}

fn read(path: &Path) -> Value {
    ahp_sdk::json::parse(&std::fs::read(path).unwrap()).unwrap()
}

fn contract_schemas() -> Schemas {
    Schemas::load(&root().join("schemas/contract")).unwrap()
}

/// The bytes of every upload step expected to succeed, as the harness hands them.
fn content_sources(set: &Value) -> Value {
    let mut out: Vec<Value> = Vec::new();
    for s in set["scenarios"].as_array().unwrap() {
        if s.get("chain").is_some() {
            continue;
        }
        let statuses = s["expected"]["uploadStatuses"].as_array().unwrap();
        let uploads = s["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|st| st["op"] == "upload");
        for (n, up) in uploads.enumerate() {
            if statuses.get(n) == Some(&json!(201))
                && !out.iter().any(|o| o["descriptor"]["ref"] == up["ref"])
            {
                out.push(json!({"descriptor": {"ref": up["ref"], "size": up["size"],
                    "sha256": up["sha256"]}, "bytes": up["bodyBase64"]}));
            }
        }
    }
    Value::Array(out)
}

fn applicable(s: &Value, transport: &str) -> bool {
    match s.get("transports") {
        Some(Value::Array(ts)) => ts.iter().any(|t| t == transport),
        _ => true,
    }
}

fn client(config: &str) -> std::process::Output {
    Command::new(BIN)
        .args(["lifecycle-client", "--config", config])
        .env("AHP_INTEROP_UPLOAD_TOKEN", TOKEN)
        .env(
            "AHP_INTEROP_UNAUTHORIZED_UPLOAD_TOKEN",
            "a-token-the-server-refuses",
        )
        .output()
        .unwrap()
}

/// Every applicable row completed with its expectation; the report and the receipts validate.
fn judge(set: &Value, report: &Value, transport: &str) {
    let s = contract_schemas();
    assert_eq!(s.check("lifecycle-report.schema.json", report), None);
    assert_eq!(report["language"], "rust");
    let results = report["results"].as_array().unwrap();
    let rows = set["scenarios"].as_array().unwrap();
    assert_eq!(results.len(), rows.len());
    for (row, result) in rows.iter().zip(results) {
        assert_eq!(row["id"], result["id"]);
        if !applicable(row, transport) {
            assert_eq!(result["status"], "unsupported", "{}", row["id"]);
            continue;
        }
        assert_eq!(result["status"], "completed", "{}: {}", row["id"], result);
        assert!(
            ahp_sdk::json::equal(&result["actual"], &row["expected"]),
            "{} over {transport}: actual {} expected {}",
            row["id"],
            result["actual"],
            row["expected"]
        );
    }
    let entries = &report["receipts"];
    assert_eq!(
        s.check("lifecycle-control.schema.json#/$defs/receipts", entries),
        None
    );
    assert!(!entries["entries"].as_array().unwrap().is_empty());
}

fn base_client(d: &Path, set_file: &Path, set: &Value, transport: &str) -> Value {
    json!({"suite": "lifecycle", "transport": transport, "scenarioFile": set_file,
        "reportFile": d.join("report.json"), "childPidFile": d.join("child.json"),
        "auth": {"mode": "none", "profile": "strict"}, "timeoutMs": 10000,
        "upload": {"auth": {"type": "bearer", "tokenEnv": "AHP_INTEROP_UPLOAD_TOKEN"},
                   "timeoutMs": 5000, "maxBytes": 1048576},
        "contentSources": content_sources(set), "schemaDir": root().join("schemas/draft")})
}

fn server_config(d: &Path, set_file: &Path, transport: &str) -> Value {
    json!({"suite": "lifecycle", "transport": transport, "readinessFile": d.join("ready.json"),
        "scenarioFile": set_file, "auth": {"mode": "none", "profile": "strict"}, "uploadAuth": {"token": TOKEN},
        "schemaDir": root().join("schemas/draft")})
}

#[test]
fn every_set_over_stdio() {
    let s = contract_schemas();
    for (i, name) in SETS.iter().enumerate() {
        let d = temp(&format!("stdio-{i}"));
        let set_file = root().join(name);
        let set = read(&set_file);
        let server = server_config(&d, &set_file, "stdio");
        assert_eq!(
            s.check("lifecycle-server-config.schema.json", &server),
            None
        );
        let server = write(&d.join("server.json"), &server);
        let mut cfg = base_client(&d, &set_file, &set, "stdio");
        cfg["serverCommand"] = json!([BIN, "lifecycle-server"]);
        cfg["serverCwd"] = json!(d);
        cfg["serverConfig"] = json!(server);
        cfg["backends"] = json!({"unreachable": {"command": [d.join("no-such-backend")]}});
        assert_eq!(s.check("lifecycle-client-config.schema.json", &cfg), None);
        let out = client(&write(&d.join("client.json"), &cfg));
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout.is_empty());
        judge(&set, &read(&d.join("report.json")), "stdio");
        let pid = read(&d.join("child.json"))["pid"].as_i64().unwrap() as i32;
        // SAFETY: kill(2) with signal 0 only checks whether the group still exists.
        assert_ne!(
            unsafe { libc::kill(-pid, 0) },
            0,
            "the spawned server is reaped"
        );
        let ready = read(&d.join("ready.json"));
        assert_eq!(s.check("readiness.schema.json", &ready), None);
        assert!(ready["endpoint"].is_null() && ready["uploadEndpoint"].is_string());
    }
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_http_server(d: &Path, set_file: &Path) -> (Server, Value) {
    let cfg = write(&d.join("server.json"), &server_config(d, set_file, "http"));
    let child = Command::new(BIN)
        .args(["lifecycle-server", "--config", &cfg])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let server = Server(child);
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        if let Ok(data) = std::fs::read(d.join("ready.json")) {
            if let Ok(v) = ahp_sdk::json::parse(&data) {
                return (server, v);
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("no readiness file");
}

fn refused_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port() // closed when dropped: connecting is refused
}

#[test]
fn every_set_over_http() {
    let s = contract_schemas();
    for (i, name) in SETS.iter().enumerate() {
        let d = temp(&format!("http-{i}"));
        let set_file = root().join(name);
        let set = read(&set_file);
        let (mut server, ready) = start_http_server(&d, &set_file);
        assert_eq!(s.check("readiness.schema.json", &ready), None);
        let mut cfg = base_client(&d, &set_file, &set, "http");
        cfg["endpoint"] = ready["endpoint"].clone();
        cfg["controlEndpoint"] = ready["controlEndpoint"].clone();
        cfg["upload"]["endpoint"] = ready["uploadEndpoint"].clone();
        cfg["backends"] = json!({"unreachable":
            {"endpoint": format!("http://127.0.0.1:{}/intercept", refused_port())}});
        assert_eq!(s.check("lifecycle-client-config.schema.json", &cfg), None);
        let out = client(&write(&d.join("client.json"), &cfg));
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        judge(&set, &read(&d.join("report.json")), "http");
        // shutdown answers, then the server exits 0
        let control = ahp_contract::suite_control::ControlClient::new(
            ready["controlEndpoint"].as_str().unwrap(),
        )
        .unwrap();
        let ok = control.call("POST", "/shutdown", Some(&json!({}))).unwrap();
        assert_eq!(
            s.check("lifecycle-control.schema.json#/$defs/ok", &ok),
            None
        );
        let until = Instant::now() + Duration::from_secs(5);
        let code = loop {
            if let Some(st) = server.0.try_wait().unwrap() {
                break st.code();
            }
            assert!(Instant::now() < until, "the server did not exit");
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(code, Some(0));
    }
}

#[test]
fn a_suite_not_implemented_is_named() {
    let d = temp("other");
    let set_file = root().join("scenarios/compaction.json");
    let set = read(&set_file);
    let mut cfg = base_client(&d, &set_file, &json!({"scenarios": []}), "stdio");
    cfg["suite"] = json!("a-suite-from-the-future");
    let out = client(&write(&d.join("client.json"), &cfg));
    assert_eq!(out.status.code(), Some(0));
    let report = read(&d.join("report.json"));
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), set["scenarios"].as_array().unwrap().len());
    assert!(results.iter().all(|r| r["status"] == "unsupported"
        && r["error"]
            .as_str()
            .unwrap()
            .contains("\"a-suite-from-the-future\"")));
    let mut server = server_config(&d, &set_file, "stdio");
    server["suite"] = json!("a-suite-from-the-future");
    let server = write(&d.join("server.json"), &server);
    let out = Command::new(BIN)
        .args(["lifecycle-server", "--config", &server])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("field suite") && err.contains(&server),
        "{err}"
    );
}

/// A `tool.before` intercept with request id `id` and event id `event`.
fn boundary(id: &str, event: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "hooks/intercept", "params": {
        "protocolVersion": "draft",
        "event": {"id": event, "source": "urn:ahp:test", "type": "tool.before",
            "time": "2026-01-01T00:00:00Z", "session": {"id": "s"}, "call": {"id": "c"},
            "path": "native", "tool": {"origin": "native", "name": "task", "kind": "task",
                "input": {"value": "original"}}},
        "capabilities": {"effects": ["allow", "deny"]},
        "state": {"permission": "none", "candidate": null}}})
}

/// A chain with held observers and one without, each boundary event id its
/// own (not the request id).
fn held_chain_set(d: &Path) -> PathBuf {
    let row = |id: &str, hold: bool| {
        let rid = format!("{id}:a");
        json!({"id": id, "chain": {"subscriptions": [], "interrupt": false, "holdObservers": hold},
            "requests": {"a": boundary(&rid, &format!("{id}:event"))},
            "responses": {"a": {"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": "draft",
                "effects": [{"type": "deny", "reason": "d"}]}}},
            "steps": []})
    };
    let file = d.join("chains.json");
    write(
        &file,
        &json!({"version": 1, "scenarios": [row("held", true), row("plain", false)]}),
    );
    file
}

/// The `hooks/observe` of a chain's boundary event.
fn observation(id: &str) -> Value {
    let event = boundary(&format!("{id}:a"), &format!("{id}:event"))["params"]["event"].clone();
    json!({"jsonrpc": "2.0", "method": "hooks/observe",
        "params": {"protocolVersion": "draft", "event": event}})
}

const HELD_ORDER: &[&str] = &["held", "plain", "held"];

/// As upstream servers record it: `{kind: observer-blocked, id: event id}`, no
/// scenario, just before the `observed` entry, for held observers only.
fn held_entries() -> Value {
    let mut want = Vec::new();
    for id in HELD_ORDER {
        let note = observation(id);
        if *id == "held" {
            want.push(json!({"kind": "observer-blocked", "id": "held:event"}));
        }
        want.push(json!({"kind": "observed", "eventId": format!("{id}:event"),
            "event": note["params"]["event"], "message": note}));
    }
    Value::Array(want)
}

fn receipts(ready: &Value) -> Value {
    let control =
        ahp_contract::suite_control::ControlClient::new(ready["controlEndpoint"].as_str().unwrap())
            .unwrap();
    let answer = control.call("GET", "/receipts", None).unwrap();
    assert_eq!(
        contract_schemas().check("lifecycle-control.schema.json#/$defs/receipts", &answer),
        None
    );
    answer["entries"].clone()
}

#[test]
fn a_held_observer_is_recorded_observer_blocked_just_before_observed_over_http() {
    let d = temp("held-http");
    let set_file = held_chain_set(&d);
    let (_server, ready) = start_http_server(&d, &set_file);
    let endpoint = ready["endpoint"].as_str().unwrap();
    let ahp = ahp_contract::suite_control::ControlClient::new(
        endpoint.strip_suffix("/intercept").unwrap_or(endpoint),
    )
    .unwrap();
    for id in HELD_ORDER {
        // the answer unchanged: the hostile frame (200), at once
        let answer = ahp
            .call("POST", "/observe", Some(&observation(id)))
            .unwrap();
        assert_eq!(answer["id"], "unsolicited-observer");
    }
    assert!(ahp_sdk::json::equal(&receipts(&ready), &held_entries()));
}

#[test]
fn a_held_observer_is_recorded_observer_blocked_just_before_observed_over_stdio() {
    use std::io::{BufRead, BufReader, Write};
    let d = temp("held-stdio");
    let set_file = held_chain_set(&d);
    let cfg = write(
        &d.join("server.json"),
        &server_config(&d, &set_file, "stdio"),
    );
    let mut child = Command::new(BIN)
        .args(["lifecycle-server", "--config", &cfg])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap());
    let server = Server(child);
    let until = Instant::now() + Duration::from_secs(10);
    let ready = loop {
        if let Some(v) = std::fs::read(d.join("ready.json"))
            .ok()
            .and_then(|data| ahp_sdk::json::parse(&data).ok())
        {
            break v;
        }
        assert!(Instant::now() < until, "no readiness file");
        std::thread::sleep(Duration::from_millis(10));
    };
    for id in HELD_ORDER {
        let mut line = ahp_sdk::json::encode(&observation(id)).into_bytes();
        line.push(b'\n');
        stdin.write_all(&line).unwrap();
        stdin.flush().unwrap();
        let mut answer = String::new();
        lines.read_line(&mut answer).unwrap();
        let answer = ahp_sdk::json::parse(answer.trim_end().as_bytes()).unwrap();
        assert_eq!(answer["id"], "unsolicited-observer");
    }
    assert!(ahp_sdk::json::equal(&receipts(&ready), &held_entries()));
    drop(stdin); // EOF ends the server
    let mut server = server;
    assert_eq!(server.0.wait().unwrap().code(), Some(0));
}
