//! The catalogue suite end to end against docs/CATALOGUE.md: the Rust
//! client runs both catalogue sets against the Rust server, over stdio (the
//! client spawns the server) and over HTTP (the test does, as the harness
//! would); every row completes with `actual` equal to its hand-written
//! `expected` without `deliveries`, and the receipts are the one discovery,
//! first, then exactly the expected verdicts. The receiver's other answers
//! (GET /capabilities, other requests and notifications, the control calls
//! it serves) and the client's unsupported and malformed steps.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ahp_contract::http::{Client, Url};
use ahp_sdk::json::equal;
use ahp_sdk::schemas::Schemas;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_ahp-rust");
const SETS: &[&str] = &[
    "scenarios/catalogue.json",
    "scenarios/upstream/catalogue-scenarios.json",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ahp-rust-cat-{}-{name}", std::process::id()));
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

fn server_config(d: &Path, set_file: &Path, transport: &str) -> Value {
    json!({"suite": "catalogue", "transport": transport, "readinessFile": d.join("ready.json"),
        "scenarioFile": set_file, "auth": {"mode": "none", "profile": "strict"},
        "schemaDir": root().join("schemas/draft")})
}

fn client_config(d: &Path, set_file: &Path, transport: &str) -> Value {
    json!({"suite": "catalogue", "transport": transport, "scenarioFile": set_file,
        "reportFile": d.join("report.json"), "childPidFile": d.join("child.json"),
        "auth": {"mode": "none", "profile": "strict"}, "timeoutMs": 10000, "schemaDir": root().join("schemas/draft")})
}

fn run_client(config: &str) -> Value {
    let out = Command::new(BIN)
        .args(["lifecycle-client", "--config", config])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    let cfg = read(Path::new(config));
    read(Path::new(cfg["reportFile"].as_str().unwrap()))
}

/// `registrations` as the harness compares them: `rule` only where the
/// expectation names one.
fn registrations_match(got: &Value, want: &Value) -> bool {
    let (Some(got), Some(want)) = (got.as_array(), want.as_array()) else {
        return false;
    };
    got.len() == want.len()
        && got.iter().zip(want).all(|(g, w)| {
            g["accepted"] == w["accepted"]
                && (w.get("rule").is_none() || g.get("rule") == w.get("rule"))
        })
}

/// The harness's checks of one client run: the report, one discovery
/// first (equal to the report's, with the contract's manifest), then the
/// expected verdicts of every row, in order, and nothing after them.
fn judge(set: &Value, report: &Value) {
    let s = contract_schemas();
    assert_eq!(s.check("catalogue-report.schema.json", report), None);
    assert_eq!(report["language"], "rust");
    assert!(report.get("contentUploads").is_none());
    let results = report["results"].as_array().unwrap();
    let rows = set["scenarios"].as_array().unwrap();
    assert_eq!(results.len(), rows.len());
    let receipts = &report["receipts"];
    assert_eq!(
        s.check("catalogue-control.schema.json#/$defs/receipts", receipts),
        None
    );
    let entries = receipts["entries"].as_array().unwrap();
    let discovery = &entries[0];
    assert_eq!(discovery["kind"], "discovery");
    assert!(equal(&discovery["response"], &report["discovery"]));
    assert_eq!(discovery["request"]["id"], discovery["response"]["id"]);
    let manifest = read(&root().join("interop/suites/catalogue/manifest.json"));
    assert!(equal(&report["discovery"]["result"]["manifest"], &manifest));
    let mut deliveries = entries[1..].iter();
    for (row, result) in rows.iter().zip(results) {
        let id = &row["id"];
        assert_eq!(id, &result["id"]);
        assert_eq!(result["status"], "completed", "{id}: {result}");
        let (actual, expected) = (&result["actual"], &row["expected"]);
        assert!(equal(&actual["sent"], &expected["sent"]), "{id}: {actual}");
        assert!(
            registrations_match(&actual["registrations"], &expected["registrations"]),
            "{id}: {actual}"
        );
        let sent = expected["sent"].as_array().unwrap();
        let verdicts = expected["deliveries"].as_array().unwrap();
        for (message, verdict) in sent.iter().zip(verdicts) {
            let event = &message["params"]["event"];
            let want = if verdict["accepted"] == true {
                json!({"kind": "observed", "eventId": event["id"], "event": event, "message": message})
            } else {
                json!({"kind": "rejected", "eventId": event["id"], "message": message,
                       "errorKind": verdict["errorKind"]})
            };
            let got = deliveries
                .next()
                .unwrap_or_else(|| panic!("{id}: no receipt"));
            assert!(equal(got, &want), "{id}: receipt {got}, expected {want}");
        }
    }
    assert_eq!(deliveries.count(), 0, "receipts after the last row's");
}

#[test]
fn both_sets_over_stdio() {
    for (i, name) in SETS.iter().enumerate() {
        let d = temp(&format!("stdio-{i}"));
        let set_file = root().join(name);
        let server = write(
            &d.join("server.json"),
            &server_config(&d, &set_file, "stdio"),
        );
        let mut cfg = client_config(&d, &set_file, "stdio");
        cfg["serverCommand"] = json!([BIN, "lifecycle-server"]);
        cfg["serverCwd"] = json!(d);
        cfg["serverConfig"] = json!(server);
        assert_eq!(
            contract_schemas().check("catalogue-client-config.schema.json", &cfg),
            None
        );
        let report = run_client(&write(&d.join("client.json"), &cfg));
        judge(&read(&set_file), &report);
        let pid = read(&d.join("child.json"))["pid"].as_i64().unwrap() as i32;
        // SAFETY: kill(2) with signal 0 only checks whether the group still exists.
        assert_ne!(
            unsafe { libc::kill(-pid, 0) },
            0,
            "the spawned server is reaped"
        );
    }
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Server {
    /// `POST /shutdown` answers `{"ok": true}`, then the server exits 0.
    fn shut_down(mut self, control: &str) {
        let c = ahp_contract::suite_control::ControlClient::new(control).unwrap();
        assert_eq!(
            c.call("POST", "/shutdown", Some(&json!({}))).unwrap(),
            json!({"ok": true})
        );
        let until = Instant::now() + Duration::from_secs(5);
        let code = loop {
            if let Some(st) = self.0.try_wait().unwrap() {
                break st.code();
            }
            assert!(Instant::now() < until, "the server did not exit");
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(code, Some(0));
    }
}

fn start_http_server(d: &Path, set_file: &Path) -> (Server, Value) {
    let cfg = server_config(d, set_file, "http");
    assert_eq!(
        contract_schemas().check("catalogue-server-config.schema.json", &cfg),
        None
    );
    let cfg = write(&d.join("server.json"), &cfg);
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
                assert_eq!(contract_schemas().check("readiness.schema.json", &v), None);
                return (server, v);
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("no readiness file");
}

#[test]
fn both_sets_over_http() {
    for (i, name) in SETS.iter().enumerate() {
        let d = temp(&format!("http-{i}"));
        let set_file = root().join(name);
        let (server, ready) = start_http_server(&d, &set_file);
        let mut cfg = client_config(&d, &set_file, "http");
        cfg["endpoint"] = ready["endpoint"].clone();
        cfg["controlEndpoint"] = ready["controlEndpoint"].clone();
        assert_eq!(
            contract_schemas().check("catalogue-client-config.schema.json", &cfg),
            None
        );
        let report = run_client(&write(&d.join("client.json"), &cfg));
        judge(&read(&set_file), &report);
        server.shut_down(ready["controlEndpoint"].as_str().unwrap());
    }
}

/// One HTTP exchange: the status and the body (parsed, null when empty).
fn exchange(url: &str, method: &str, body: Option<&Value>) -> (u16, Value) {
    let url = Url::parse(url).unwrap();
    let mut c = Client::new(&url, None, Duration::from_secs(10));
    let data = body.map(ahp_sdk::json::encode).unwrap_or_default();
    let a = c
        .request(
            method,
            &url,
            &[("Content-Type", "application/json")],
            data.as_bytes(),
        )
        .unwrap();
    let v = if a.body.is_empty() {
        Value::Null
    } else {
        ahp_sdk::json::parse(&a.body).unwrap()
    };
    (a.status, v)
}

fn observe(event: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "hooks/observe",
           "params": {"protocolVersion": "draft", "event": event}})
}

fn turn_end(id: &str) -> Value {
    json!({"id": id, "source": "urn:test:cat", "time": "2026-12-01T09:30:00Z",
           "type": "turn.end", "turn": {"id": "t"}, "outcome": "completed",
           "continuationCount": 0, "items": []})
}

#[test]
fn the_receiver_records_verdicts_and_discovery_only() {
    let d = temp("receiver");
    let set_file = root().join(SETS[1]);
    let (server, ready) = start_http_server(&d, &set_file);
    let endpoint = ready["endpoint"].as_str().unwrap();
    let base = endpoint.trim_end_matches("/intercept");
    let control = ready["controlEndpoint"].as_str().unwrap();
    // GET /capabilities: the bare capabilities of M's tool.before entry
    // (intercept and observe), not the envelope; not recorded
    let (status, got) = exchange(&format!("{base}/capabilities"), "GET", None);
    assert_eq!(status, 200);
    let m = read(&root().join("interop/suites/catalogue/manifest.json"));
    assert_eq!(m["events"][0]["event"], "tool.before");
    assert!(equal(&got, &m["events"][0]["capabilities"]));
    assert!(equal(
        &got,
        &json!({"effects": ["deny", "allow", "ask", "modify", "message", "flow"],
                "modify": {"input": {"replace": true, "merge": true}},
                "flow": {"operations": ["stop"]}})
    ));
    // hooks/capabilities on any path, recorded; an invalid one -32602, recorded too
    let request = json!({"jsonrpc": "2.0", "id": 7, "method": "hooks/capabilities",
                         "params": {"protocolVersion": "draft"}});
    let (status, got) = exchange(&format!("{base}/anywhere"), "POST", Some(&request));
    assert_eq!((status, &got["id"]), (200, &json!(7)));
    assert!(equal(
        &got["result"]["manifest"],
        &read(&root().join("interop/suites/catalogue/manifest.json"))
    ));
    let invalid =
        json!({"jsonrpc": "2.0", "id": "x", "method": "hooks/capabilities", "params": {}});
    let (_, got) = exchange(endpoint, "POST", Some(&invalid));
    assert_eq!(got["error"]["code"], -32602);
    // another request -32601, another notification 204: neither recorded
    let other = json!({"jsonrpc": "2.0", "id": 1, "method": "hooks/intercept", "params": {}});
    let (_, got) = exchange(endpoint, "POST", Some(&other));
    assert_eq!(got["error"]["code"], -32601);
    let note = json!({"jsonrpc": "2.0", "method": "hooks/progress", "params": {}});
    assert_eq!(exchange(endpoint, "POST", Some(&note)), (204, Value::Null));
    // verdicts: 202, 400 (the schema; a hooks/observe with an id too), 409 (lineage)
    let observe_url = format!("{base}/observe");
    let accepted = observe(turn_end("e-1"));
    assert_eq!(
        exchange(&observe_url, "POST", Some(&accepted)),
        (202, Value::Null)
    );
    let mut no_outcome = turn_end("e-2");
    no_outcome.as_object_mut().unwrap().remove("outcome");
    assert_eq!(
        exchange(&observe_url, "POST", Some(&observe(no_outcome))).0,
        400
    );
    let mut with_id = observe(turn_end("e-3"));
    with_id["id"] = json!(3);
    assert_eq!(exchange(&observe_url, "POST", Some(&with_id)).0, 400);
    let mut reused = turn_end("e-1");
    reused["type"] = json!("task.change.before");
    reused["task"] = json!({"id": "k", "operation": "create", "change": {"status": "open"}});
    for key in ["turn", "outcome", "continuationCount", "items"] {
        reused.as_object_mut().unwrap().remove(key);
    }
    assert_eq!(
        exchange(&observe_url, "POST", Some(&observe(reused))).0,
        409
    );
    assert_eq!(
        exchange(&observe_url, "POST", Some(&accepted)),
        (202, Value::Null)
    );
    // /wait-observed counts observed and rejected; the lifecycle calls are not served
    let wait = |id: &str, n: u64| {
        exchange(
            &format!("{control}/wait-observed"),
            "POST",
            Some(&json!({"eventId": id, "count": n})),
        )
        .0
    };
    assert_eq!(wait("e-1", 3), 200);
    assert_eq!(wait("e-2", 1), 200);
    for call in ["/mark", "/release", "/wait", "/emit"] {
        assert_eq!(
            exchange(&format!("{control}{call}"), "POST", Some(&json!({}))).0,
            404,
            "{call}"
        );
    }
    let (_, receipts) = exchange(&format!("{control}/receipts"), "GET", None);
    assert_eq!(
        contract_schemas().check("catalogue-control.schema.json#/$defs/receipts", &receipts),
        None
    );
    let kinds: Vec<(Value, Value, Value)> = receipts["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["kind"].clone(),
                e["eventId"].clone(),
                e["errorKind"].clone(),
            )
        })
        .collect();
    let n = Value::Null;
    assert_eq!(
        kinds,
        vec![
            (json!("discovery"), n.clone(), n.clone()),
            (json!("discovery"), n.clone(), n.clone()),
            (json!("observed"), json!("e-1"), n.clone()),
            (json!("rejected"), json!("e-2"), json!("schema")),
            (json!("rejected"), json!("e-3"), json!("schema")),
            (json!("rejected"), json!("e-1"), json!("lineage")),
            (json!("observed"), json!("e-1"), n.clone()),
        ]
    );
    let entries = receipts["entries"].as_array().unwrap();
    assert_eq!(entries[1]["response"]["error"]["code"], -32602);
    assert!(equal(&entries[2]["event"], &accepted["params"]["event"]));
    server.shut_down(control);
}

#[test]
fn unknown_ops_are_unsupported_and_malformed_steps_fail_their_row() {
    let d = temp("steps");
    let message = observe(turn_end("s-1"));
    let set = json!({"version": 1, "suite": "catalogue", "scenarios": [
        {"id": "unknown-op", "category": "execution",
         "steps": [{"op": "notify", "message": message}, {"op": "frobnicate"}]},
        {"id": "requirements-not-a-list", "category": "registration",
         "steps": [{"op": "register", "registration": {}, "requirements": {},
                    "context": {"interactive": true, "environment": {}}}]},
        {"id": "context-not-an-object", "category": "registration",
         "steps": [{"op": "register", "registration": {}, "requirements": [], "context": []}]},
        {"id": "no-message", "category": "execution", "steps": [{"op": "rawNotify"}]},
        {"id": "sent", "category": "execution",
         "steps": [{"op": "notify", "message": message},
                   {"op": "notify", "message": observe(json!({"id": "s-2"}))},
                   {"op": "register", "registration": {}, "requirements": [],
                    "context": {"interactive": false, "environment": {}}}]}]});
    let set_file = d.join("set.json");
    write(&set_file, &set);
    let server = write(
        &d.join("server.json"),
        &server_config(&d, &set_file, "stdio"),
    );
    let mut cfg = client_config(&d, &set_file, "stdio");
    cfg["serverCommand"] = json!([BIN, "lifecycle-server"]);
    cfg["serverCwd"] = json!(d);
    cfg["serverConfig"] = json!(server);
    let report = run_client(&write(&d.join("client.json"), &cfg));
    let r = report["results"].as_array().unwrap();
    assert_eq!(r[0]["status"], "unsupported");
    assert!(r[0]["error"].as_str().unwrap().contains("\"frobnicate\""));
    for (i, why) in [
        (1, "requirements must be a list"),
        (2, "context must be an object"),
        (3, "the step has no message"),
    ] {
        assert_eq!(r[i]["status"], "failed", "{}", r[i]);
        assert!(r[i]["error"].as_str().unwrap().contains(why), "{}", r[i]);
    }
    // the invalid notify is not sent; an empty document fails the schema rule
    assert_eq!(r[4]["status"], "completed", "{}", r[4]);
    assert!(equal(
        &r[4]["actual"],
        &json!({"sent": [message], "registrations": [{"accepted": false, "rule": "schema"}]})
    ));
    // one unsupported row sends nothing: only the last row's message was received
    let entries = report["receipts"]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[1]["kind"], "observed");
}
