//! The elicitation suite end to end against docs/ELICITATION.md: the Rust
//! client runs `scenarios/elicitation.json` (and one row of this test's: a
//! draft-07 `$schema` whose `email` format is not asserted) against the Rust
//! server over stdio (the client spawns the server) and over HTTP (the test
//! does, as the harness would), judged as the harness judges it, from the
//! report and the receipts between each row's `row-start` mark and the next:
//! wire rows' step outcomes (an accepted send's response the no-effect
//! reply; over stdio a refusal carries `-32602`), receipts in order, upload
//! entries one to one with the upload steps and their refs the ones
//! reported; atomic rows' `actual` and receipts. Configs, readiness, report
//! and receipts validate against schemas/contract.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ahp_contract::upload::{base64_decode, sha256_hex};
use ahp_sdk::json::{encode, equal};
use ahp_sdk::schemas::Schemas;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_ahp-rust");
const TOKEN: &str = "upload-token-for-the-elicitation-test";
const STRANGER: &str = "a-token-the-server-refuses";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ahp-rust-eli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(path: &Path, v: &Value) -> String {
    std::fs::write(path, encode(v)).unwrap();
    path.to_string_lossy().into_owned()
}

fn read(path: &Path) -> Value {
    ahp_sdk::json::parse(&std::fs::read(path).unwrap()).unwrap()
}

fn contract_schemas() -> Schemas {
    Schemas::load(&root().join("schemas/contract")).unwrap()
}

/// A wire row of this test's: a form schema naming draft-07, whose `email`
/// format is an annotation all the same; a result that is no email address
/// is accepted.
fn draft_07_row(source: &str) -> Value {
    let id = "rust-eli-draft-07-format";
    let params = json!({"mode": "form", "message": "Where should the receipt go?",
        "requestedSchema": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
            "properties": {"contact": {"type": "string", "format": "email"}}, "required": ["contact"]}});
    let result = json!({"action": "accept", "content": {"contact": "not an email address"}});
    let event = |kind: &str, extra: Value| {
        let mut e = json!({"id": format!("{id}:{kind}"), "source": "urn:rust-test", "time": "2026-05-19T14:05:00Z",
            "session": {"id": format!("{id}:session")}});
        for (k, v) in extra.as_object().unwrap() {
            e[k] = v.clone();
        }
        json!({"jsonrpc": "2.0", "id": format!("{id}:{kind}"), "method": "hooks/intercept",
               "params": {"protocolVersion": "draft", "event": e, "capabilities": {"effects": []}}})
    };
    let part = |kind: &str, body: &Value| {
        json!({"id": format!("{id}:{kind}-body"), "kind": "text", "mediaType": "text/plain",
               "selection": "body", "text": encode(body)})
    };
    let request = event(
        "request",
        json!({"type": "user.elicitation.request",
            "elicitation": {"server": "rust-desk", "mode": "form", "request": part("request", &params)}}),
    );
    let answer = event(
        "result",
        json!({"type": "user.elicitation.result", "parentEventId": format!("{id}:request"),
            "elicitation": {"server": "rust-desk", "mode": "form", "action": "accept",
                            "result": part("result", &result)}}),
    );
    json!({"id": id, "steps": [{"op": "send", "message": request}, {"op": "send", "message": answer}],
        "expected": {"steps": [{"op": "send", "outcome": "accepted", "status": 200},
                               {"op": "send", "outcome": "accepted", "status": 200}],
            "receipts": [{"eventId": format!("{id}:request"), "summary": {"request": params}},
                {"eventId": format!("{id}:result"), "summary": {"request": params, "result": result,
                    "provenance": {"kind": "mcp", "authenticatedSource": source},
                    "externalCompletion": false}}]}})
}

/// The set with this test's row, written for one transport's processes
/// (the client's without `responses`).
fn sets(d: &Path, transport: &str) -> (Value, String, String) {
    let mut set = read(&root().join("scenarios/elicitation.json"));
    let source = set["authenticatedSource"].as_str().unwrap().to_string();
    let rows = set["scenarios"].as_array_mut().unwrap();
    rows.push(draft_07_row(&source));
    rows.retain(|r| match r.get("transports") {
        Some(Value::Array(ts)) => ts.iter().any(|t| t == transport),
        _ => true,
    });
    let server = write(&d.join("server-set.json"), &set);
    let mut client = set.clone();
    for r in client["scenarios"].as_array_mut().unwrap() {
        r.as_object_mut().unwrap().remove("responses");
    }
    let client = write(&d.join("client-set.json"), &client);
    (set, server, client)
}

fn server_config(d: &Path, set: &str, transport: &str) -> Value {
    json!({"suite": "elicitation", "transport": transport, "readinessFile": d.join("ready.json"),
        "scenarioFile": set, "auth": {"mode": "none", "profile": "strict"},
        "uploadAuth": {"token": TOKEN}, "schemaDir": root().join("schemas/draft")})
}

fn client_config(d: &Path, set: &str, transport: &str) -> Value {
    json!({"suite": "elicitation", "transport": transport, "scenarioFile": set,
        "reportFile": d.join("report.json"), "childPidFile": d.join("child.json"),
        "auth": {"mode": "none", "profile": "strict"}, "timeoutMs": 10000,
        "upload": {"auth": {"type": "bearer", "tokenEnv": "AHP_INTEROP_UPLOAD_TOKEN"},
                   "timeoutMs": 5000, "maxBytes": 1048576},
        "schemaDir": root().join("schemas/draft")})
}

fn client(config: &str) {
    let out = Command::new(BIN)
        .args(["lifecycle-client", "--config", config])
        .env("AHP_INTEROP_UPLOAD_TOKEN", TOKEN)
        .env("AHP_INTEROP_UNAUTHORIZED_UPLOAD_TOKEN", STRANGER)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
}

fn no_effect(message: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": message["id"], "result": {"protocolVersion": "draft", "effects": []}})
}

fn judge_wire(row: &Value, actual: &Value, owned: &[Value], transport: &str) {
    let id = &row["id"];
    let steps = row["steps"].as_array().unwrap();
    let got = actual["steps"].as_array().expect("actual.steps");
    let wanted = row["expected"]["steps"].as_array().unwrap();
    assert_eq!(got.len(), steps.len(), "{id}");
    for (i, ((step, want), got)) in steps.iter().zip(wanted).zip(got).enumerate() {
        assert_eq!(got["op"], step["op"], "{id} step {i}");
        if step["op"] == "upload" {
            assert_eq!(got["status"], want["status"], "{id} step {i}: {got}");
            continue;
        }
        assert_eq!(got["outcome"], want["outcome"], "{id} step {i}: {got}");
        if transport == "http" {
            assert_eq!(got["status"], want["status"], "{id} step {i}: {got}");
            if want["outcome"] == "accepted" {
                assert_eq!(
                    got["response"],
                    no_effect(&step["message"]),
                    "{id} step {i}"
                );
            }
        } else {
            assert!(got["status"].is_null(), "{id} step {i}: {got}");
            if want["outcome"] == "rejected" {
                assert_eq!(got["error"], -32602, "{id} step {i}: {got}");
            }
        }
    }
    let uploads: Vec<&Value> = owned.iter().filter(|e| e["kind"] == "upload").collect();
    let planned: Vec<(usize, &Value)> = steps
        .iter()
        .enumerate()
        .filter(|(_, s)| s["op"] == "upload")
        .collect();
    assert_eq!(uploads.len(), planned.len(), "{id}: upload receipts");
    for (entry, (i, step)) in uploads.iter().zip(planned) {
        let body = base64_decode(step["bodyBase64"].as_str().unwrap()).unwrap();
        let declared = step
            .get("sha256")
            .cloned()
            .unwrap_or_else(|| json!(sha256_hex(&body)));
        assert_eq!(entry["size"], body.len(), "{id} step {i}");
        assert_eq!(entry["sha256"], declared, "{id} step {i}");
        assert_eq!(entry["status"], got[i]["status"], "{id} step {i}");
        match entry.get("ref") {
            Some(r) => assert_eq!(&got[i]["ref"], r, "{id} step {i}: the ref bound"),
            None => assert!(got[i]["ref"].is_null(), "{id} step {i}"),
        }
    }
}

fn judge(set: &Value, report: &Value, transport: &str) {
    let s = contract_schemas();
    assert_eq!(s.check("elicitation-report.schema.json", report), None);
    let keys: Vec<&String> = report.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["language", "results", "receipts"]);
    let receipts = &report["receipts"];
    assert_eq!(
        s.check("elicitation-control.schema.json#/$defs/receipts", receipts),
        None
    );
    // each row's entries: from its row-start mark to the next one
    let mut owned: std::collections::HashMap<String, Vec<Value>> = Default::default();
    let mut current: Option<String> = None;
    for e in receipts["entries"].as_array().unwrap() {
        if e["kind"] == "row-start" {
            assert_eq!(e["id"], e["scenario"]);
            let sid = e["scenario"].as_str().unwrap().to_string();
            assert!(!owned.contains_key(&sid), "{sid}: one row-start mark");
            current = Some(sid.clone());
            owned.insert(sid, Vec::new());
        } else {
            let sid = current.clone().expect("no receipt before the first mark");
            owned.get_mut(&sid).unwrap().push(e.clone());
        }
    }
    let rows = set["scenarios"].as_array().unwrap();
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), rows.len());
    for (row, result) in rows.iter().zip(results) {
        let id = row["id"].as_str().unwrap();
        assert_eq!(result["id"], id);
        assert_eq!(result["status"], "completed", "{id}: {result}");
        let mine = owned.get(id).map(Vec::as_slice).unwrap_or_default();
        let got: Vec<Value> = mine
            .iter()
            .filter(|e| e["kind"] == "elicitation")
            .map(|e| json!({"eventId": e["eventId"], "summary": e["summary"]}))
            .collect();
        assert!(
            equal(&json!(got), &row["expected"]["receipts"]),
            "{id} over {transport}: receipts {} expected {}",
            json!(got),
            row["expected"]["receipts"]
        );
        if row.get("atomic").is_some() {
            assert!(
                equal(&result["actual"], &row["expected"]["actual"]),
                "{id} over {transport}: actual {} expected {}",
                result["actual"],
                row["expected"]["actual"]
            );
            assert!(!mine.iter().any(|e| e["kind"] == "upload"), "{id}");
        } else {
            judge_wire(row, &result["actual"], mine, transport);
        }
    }
}

#[test]
fn the_set_over_stdio() {
    let s = contract_schemas();
    let d = temp("stdio");
    let (set, server_set, client_set) = sets(&d, "stdio");
    let server = server_config(&d, &server_set, "stdio");
    assert_eq!(
        s.check("elicitation-server-config.schema.json", &server),
        None
    );
    let server = write(&d.join("server.json"), &server);
    let mut cfg = client_config(&d, &client_set, "stdio");
    cfg["serverCommand"] = json!([BIN, "lifecycle-server"]);
    cfg["serverCwd"] = json!(d);
    cfg["serverConfig"] = json!(server);
    assert_eq!(s.check("elicitation-client-config.schema.json", &cfg), None);
    client(&write(&d.join("client.json"), &cfg));
    judge(&set, &read(&d.join("report.json")), "stdio");
    let ready = read(&d.join("ready.json"));
    assert_eq!(s.check("readiness.schema.json", &ready), None);
    assert!(ready["endpoint"].is_null() && ready["uploadEndpoint"].is_string());
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_set_over_http() {
    let s = contract_schemas();
    let d = temp("http");
    let (set, server_set, client_set) = sets(&d, "http");
    let cfg = write(
        &d.join("server.json"),
        &server_config(&d, &server_set, "http"),
    );
    let child = Command::new(BIN)
        .args(["lifecycle-server", "--config", &cfg])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut server = Server(child);
    let until = Instant::now() + Duration::from_secs(10);
    let ready = loop {
        let data = std::fs::read(d.join("ready.json")).unwrap_or_default();
        if let Ok(v) = ahp_sdk::json::parse(&data) {
            break v;
        }
        assert!(Instant::now() < until, "no readiness file");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(s.check("readiness.schema.json", &ready), None);
    let mut cfg = client_config(&d, &client_set, "http");
    cfg["endpoint"] = ready["endpoint"].clone();
    cfg["controlEndpoint"] = ready["controlEndpoint"].clone();
    cfg["upload"]["endpoint"] = ready["uploadEndpoint"].clone();
    assert_eq!(s.check("elicitation-client-config.schema.json", &cfg), None);
    client(&write(&d.join("client.json"), &cfg));
    judge(&set, &read(&d.join("report.json")), "http");
    let control =
        ahp_contract::suite_control::ControlClient::new(ready["controlEndpoint"].as_str().unwrap())
            .unwrap();
    // the control calls of this suite: /mark (and /shutdown) only
    for call in ["/wait", "/release", "/wait-observed", "/emit"] {
        assert!(
            control.call("POST", call, Some(&json!({}))).is_err(),
            "{call}"
        );
    }
    control.post("/shutdown", &json!({})).unwrap();
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

#[test]
fn a_server_without_an_authenticated_source_exits_2() {
    let d = temp("no-source");
    let set = write(
        &d.join("set.json"),
        &json!({"version": 1, "suite": "elicitation", "scenarios": []}),
    );
    let cfg = write(&d.join("server.json"), &server_config(&d, &set, "stdio"));
    let out = Command::new(BIN)
        .args(["lifecycle-server", "--config", &cfg])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("scenarioFile") && err.contains(&cfg), "{err}");
}
