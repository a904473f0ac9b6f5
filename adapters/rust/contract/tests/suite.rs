//! The suite process model against docs/LIFECYCLE.md and schemas/contract:
//! suite configs (errors name the file and the field), the upload
//! listener's rules and its receipts, the sender's declared upload, the
//! control listener's answers, the channels' routing.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ahp_contract::channel::{CallError, Channel, StdioChannel};
use ahp_contract::entries::{EntryLog, RECEIVED};
use ahp_contract::http::{self, Handler};
use ahp_contract::suite_config::{
    load_suite_client, load_suite_server, require_suite, step_upload_route, SuiteClientConfig,
    SuiteSpec,
};
use ahp_contract::suite_control::{ControlClient, SuiteControl};
use ahp_contract::suite_server::SuiteShared;
use ahp_contract::upload::{send_upload, sha256_hex, ContentStore, UploadHandler};
use ahp_sdk::schemas::Schemas;
use serde_json::{json, Value};

const SPECS: &[SuiteSpec] = &[SuiteSpec {
    name: "lifecycle",
    upload_auth: true,
    upload: true,
    content_sources: true,
}];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

fn contract_schemas() -> Schemas {
    Schemas::load(&root().join("schemas/contract")).expect("schemas/contract loads")
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ahp-rust-suite-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(path: &std::path::Path, v: &Value) -> String {
    std::fs::write(path, ahp_sdk::json::encode(v)).unwrap();
    path.to_string_lossy().into_owned()
}

fn scenario_file(d: &std::path::Path) -> String {
    write(
        &d.join("scenarios.json"),
        &json!({"scenarios": [{"id": "row", "requests": {}}]}),
    )
}

fn client_config(d: &std::path::Path) -> Value {
    json!({"suite": "lifecycle", "transport": "http", "scenarioFile": scenario_file(d),
        "reportFile": d.join("report.json"), "childPidFile": d.join("child.json"),
        "auth": {"mode": "none", "profile": "strict"}, "timeoutMs": 10000,
        "upload": {"auth": {"type": "bearer", "tokenEnv": "AHP_INTEROP_UPLOAD_TOKEN"},
                   "timeoutMs": 5000, "maxBytes": 1048576, "endpoint": "http://127.0.0.1:9/upload"},
        "contentSources": [{"descriptor": {"ref": "alias", "size": 3, "sha256": sha256_hex(b"abc")},
                            "bytes": "YWJj"}],
        "endpoint": "http://127.0.0.1:8/intercept", "controlEndpoint": "http://127.0.0.1:7",
        "backends": {"unreachable": {"endpoint": "http://127.0.0.1:6/intercept"}}})
}

#[test]
fn suite_configs_parse_and_errors_name_the_file_and_the_field() {
    let s = contract_schemas();
    let d = temp("configs");
    let good = client_config(&d);
    assert_eq!(s.check("lifecycle-client-config.schema.json", &good), None);
    let path = write(&d.join("client.json"), &good);
    let SuiteClientConfig::Implemented(c) = load_suite_client(&path, SPECS).unwrap() else {
        panic!("lifecycle is implemented");
    };
    assert_eq!(c.suite, "lifecycle");
    let up = c.upload.as_ref().unwrap();
    assert_eq!(up.token_env.as_deref(), Some("AHP_INTEROP_UPLOAD_TOKEN"));
    assert_eq!(up.timeout, Duration::from_millis(5000));
    assert_eq!(c.content_sources[0].data, b"abc");
    assert_eq!(
        c.backends["unreachable"].endpoint.as_deref(),
        Some("http://127.0.0.1:6/intercept")
    );
    assert_eq!(c.control_endpoint.as_deref(), Some("http://127.0.0.1:7"));

    let bad = |edit: &dyn Fn(&mut Value), field: &str| {
        let mut v = good.clone();
        edit(&mut v);
        let p = write(&d.join("bad.json"), &v);
        let e = match load_suite_client(&p, SPECS) {
            Err(e) => e,
            Ok(_) => panic!("{field}: accepted"),
        };
        assert_eq!((e.file.as_str(), e.field.as_str()), (p.as_str(), field));
    };
    bad(
        &|v| v["upload"].as_object_mut().unwrap().clear(),
        "upload.timeoutMs",
    );
    bad(
        &|v| {
            v["upload"].as_object_mut().unwrap().remove("auth");
        },
        "upload.auth",
    );
    bad(
        &|v| v["contentSources"][0]["bytes"] = json!("*"),
        "contentSources[0]",
    );
    bad(
        &|v| {
            v.as_object_mut().unwrap().remove("childPidFile");
        },
        "childPidFile",
    );
    bad(
        &|v| {
            v.as_object_mut().unwrap().remove("controlEndpoint");
        },
        "controlEndpoint",
    );
    bad(
        &|v| v["backends"]["unreachable"] = json!({}),
        "backends.unreachable.command",
    );

    // another suite: enough to report every row unsupported
    let mut other = good.clone();
    other["suite"] = json!("compaction");
    let p = write(&d.join("other.json"), &other);
    let SuiteClientConfig::Other(o) = load_suite_client(&p, SPECS).unwrap() else {
        panic!("compaction is not among the specs");
    };
    assert_eq!((o.suite.as_str(), o.scenarios.len()), ("compaction", 1));

    // servers: an unknown suite names the suite field; uploadAuth is required here
    let server = json!({"suite": "lifecycle", "transport": "stdio",
        "readinessFile": d.join("ready.json"), "scenarioFile": scenario_file(&d),
        "auth": {"mode": "none", "profile": "strict"}, "uploadAuth": {"token": "0123456789abcdef0123"}});
    assert_eq!(
        s.check("lifecycle-server-config.schema.json", &server),
        None
    );
    let p = write(&d.join("server.json"), &server);
    let spec = require_suite(&p, SPECS).unwrap();
    assert_eq!(
        load_suite_server(&p, spec).unwrap().upload_token,
        "0123456789abcdef0123"
    );
    let mut v = server.clone();
    v.as_object_mut().unwrap().remove("uploadAuth");
    let p = write(&d.join("server-bad.json"), &v);
    assert_eq!(
        load_suite_server(&p, spec).err().unwrap().field,
        "uploadAuth"
    );
    v["suite"] = json!("catalogue");
    let p = write(&d.join("server-other.json"), &v);
    let e = require_suite(&p, SPECS).err().unwrap();
    assert_eq!(e.field, "suite");
    assert!(e.msg.contains("\"catalogue\""), "{}", e.msg);
}

#[test]
fn a_step_upload_block_replaces_the_config_block() {
    let d = temp("route");
    let path = write(&d.join("client.json"), &client_config(&d));
    let SuiteClientConfig::Implemented(c) = load_suite_client(&path, SPECS).unwrap() else {
        panic!();
    };
    let config = c.upload.unwrap();
    let r = step_upload_route(
        &json!({"endpoint": "https://127.0.0.1:5/capture?case=x", "tls": {"caFile": "/ca.pem"}}),
        "row",
        &config,
    )
    .unwrap();
    assert_eq!(r.token_env, None); // no auth: no credential at all
    assert_eq!(r.timeout, config.timeout);
    assert_eq!(r.ca_file.as_deref(), Some("/ca.pem"));
    assert_eq!(
        r.endpoint.as_deref(),
        Some("https://127.0.0.1:5/capture?case=x")
    );
    let r = step_upload_route(&json!({"timeoutMs": 7}), "row", &config).unwrap();
    assert_eq!(r.endpoint, config.endpoint);
    assert_eq!(r.timeout, Duration::from_millis(7));
    let e = step_upload_route(&json!({"auth": {"type": "basic"}}), "row", &config)
        .err()
        .unwrap();
    assert_eq!(
        (e.file.as_str(), e.field.as_str()),
        ("scenario row", "upload.auth.type")
    );
}

fn serve(handler: Arc<dyn Handler>) -> u16 {
    let l = http::listen().unwrap();
    let port = l.local_addr().unwrap().port();
    http::serve(l, None, handler, "test");
    port
}

/// One raw request; `half_close` shuts the write side after sending.
fn raw(port: u16, data: &[u8], half_close: bool) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = s.write_all(data);
    if half_close {
        let _ = s.shutdown(Shutdown::Write);
    }
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
    (status, body)
}

fn upload_request(body: &[u8], headers: &[&str]) -> Vec<u8> {
    let mut head = String::from("POST /upload HTTP/1.1\r\nHost: x\r\nConnection: close\r\n");
    for h in headers {
        head.push_str(h);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    let mut out = head.into_bytes();
    out.extend_from_slice(body);
    out
}

#[test]
fn the_upload_listener_keeps_every_rule_and_records_every_attempt() {
    let s = contract_schemas();
    let entries = Arc::new(EntryLog::new());
    let store = Arc::new(ContentStore::new());
    let token = "upload-token-0123456789";
    let port = serve(Arc::new(UploadHandler {
        token: token.into(),
        store: store.clone(),
        entries: entries.clone(),
    }));
    let data = b"\x00\x01binary\xff";
    let sha = sha256_hex(data);
    let auth = format!("Authorization: Bearer {token}");
    let hash = format!("AHP-Content-SHA256: {sha}");
    let length = format!("Content-Length: {}", data.len());
    let good = [
        "Content-Type: application/octet-stream",
        auth.as_str(),
        hash.as_str(),
        length.as_str(),
    ];
    let (status, body) = raw(port, &upload_request(data, &good), false);
    assert_eq!(status, 201, "{body}");
    let receipt = ahp_sdk::json::parse(body.as_bytes()).unwrap();
    let mut keys: Vec<&String> = receipt.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["ref", "sha256", "size"]);
    assert_eq!(receipt["size"], json!(data.len()));
    assert!(store.has(receipt["ref"].as_str().unwrap()));
    let (_, again) = raw(port, &upload_request(data, &good), false);
    assert_ne!(
        ahp_sdk::json::parse(again.as_bytes()).unwrap()["ref"],
        receipt["ref"]
    );

    let with = |drop: &str, add: &[&str]| -> Vec<String> {
        let mut h: Vec<String> = good
            .iter()
            .filter(|l| !l.starts_with(drop))
            .map(|l| l.to_string())
            .collect();
        h.extend(add.iter().map(|l| l.to_string()));
        h
    };
    let cases: Vec<(Vec<String>, Vec<u8>, bool, u16)> = vec![
        (with("Authorization", &[]), data.to_vec(), false, 401),
        (
            with("Authorization", &["Authorization: Bearer other"]),
            data.to_vec(),
            false,
            401,
        ),
        (with("-", &[auth.as_str()]), data.to_vec(), false, 400),
        (
            with("Content-Length", &["Transfer-Encoding: chunked"]),
            b"9\r\n\x00\x01binary\xff\r\n0\r\n\r\n".to_vec(),
            false,
            400,
        ),
        (
            with("-", &["Content-Encoding: gzip"]),
            data.to_vec(),
            false,
            400,
        ),
        (
            with("Content-Type", &["Content-Type: text/plain"]),
            data.to_vec(),
            false,
            400,
        ),
        (
            with("Content-Length", &["Content-Length: 40"]),
            data.to_vec(),
            true,
            400,
        ),
        (
            with("Content-Length", &["Content-Length: 1048577"]),
            vec![],
            false,
            413,
        ),
        (
            with(
                "AHP-Content-SHA256",
                &[&format!("AHP-Content-SHA256: {}", "0".repeat(64))],
            ),
            data.to_vec(),
            false,
            400,
        ),
    ];
    for (headers, body, half, want) in &cases {
        let h: Vec<&str> = headers.iter().map(String::as_str).collect();
        let (status, answer) = raw(port, &upload_request(body, &h), *half);
        assert_eq!(status, *want, "{headers:?}: {answer}");
    }
    assert_eq!(
        raw(
            port,
            b"GET /upload HTTP/1.1\r\nConnection: close\r\n\r\n",
            false
        )
        .0,
        405
    );
    assert_eq!(
        raw(
            port,
            b"POST /other HTTP/1.1\r\nConnection: close\r\n\r\n",
            false
        )
        .0,
        404
    );
    let log = entries.snapshot();
    assert_eq!(
        s.check("lifecycle-control.schema.json#/$defs/receipts", &log),
        None
    );
    let list = log["entries"].as_array().unwrap();
    assert_eq!(list.len(), 2 + cases.len());
    let statuses: Vec<u64> = list.iter().map(|e| e["status"].as_u64().unwrap()).collect();
    assert_eq!(
        statuses,
        [201, 201, 401, 401, 400, 400, 400, 400, 400, 413, 400]
    );
    assert!(list[2..].iter().all(|e| e.get("ref").is_none()));
    // the declared size and hash, as sent
    assert_eq!(list[8]["size"], 40);
    assert_eq!(list[10]["sha256"], "0".repeat(64));

    // the sender declares what it is told to, and reads the refusal
    let url = format!("http://127.0.0.1:{port}/upload");
    let t = Duration::from_secs(5);
    let a = send_upload(&url, data, data.len() as u64, &sha, Some(token), t, None).unwrap();
    assert_eq!(a.status, 201);
    assert!(a.receipt().is_some());
    let short = send_upload(&url, data, 64, &sha, Some(token), t, None).unwrap();
    assert_eq!(short.status, 400);
    let none = send_upload(&url, b"", 0, &sha256_hex(b""), None, t, None).unwrap();
    assert_eq!(none.status, 401);
    let empty = send_upload(&url, b"", 0, &sha256_hex(b""), Some(token), t, None).unwrap();
    assert_eq!(empty.status, 201);
}

#[test]
fn control_answers_validate_and_marks_are_recorded() {
    let s = contract_schemas();
    let shared = Arc::new(SuiteShared::new());
    let port = serve(Arc::new(SuiteControl::new(shared.clone())));
    let c = ControlClient::new(&format!("http://127.0.0.1:{port}")).unwrap();
    let health = c.call("GET", "/health", None).unwrap();
    assert_eq!(
        s.check("lifecycle-control.schema.json#/$defs/health", &health),
        None
    );
    let ok = |path: &str, body: Value| {
        let v = c.call("POST", path, Some(&body)).unwrap();
        assert_eq!(s.check("lifecycle-control.schema.json#/$defs/ok", &v), None);
    };
    ok(
        "/mark",
        json!({"scenario": "row", "kind": "acquired", "id": "row:a"}),
    );
    shared.entries.record(
        json!({"kind": RECEIVED, "id": "row:a", "message": {}}),
        "id",
    );
    ok("/wait", json!({"id": "row:a", "count": 1}));
    ok("/release", json!({"id": "row:a"}));
    assert!(shared.barriers.is_open("row:a"));
    let err = c
        .post(
            "/mark",
            &json!({"scenario": "row", "kind": "received", "id": "x"}),
        )
        .unwrap_err();
    assert!(err.contains("400"), "{err}");
    let err = c
        .post("/emit", &json!({"response": {"id": "x"}}))
        .unwrap_err();
    assert!(err.contains("409"), "{err}"); // over HTTP there is no stdout to emit on
    let err = c.post("/wait", &json!({"id": 7})).unwrap_err();
    assert!(err.contains("400"), "{err}");
    let receipts = c.call("GET", "/receipts", None).unwrap();
    assert_eq!(
        s.check("lifecycle-control.schema.json#/$defs/receipts", &receipts),
        None
    );
    assert_eq!(receipts["entries"].as_array().unwrap().len(), 2);
    shared.begin_shutdown(); // ends waits at once
    let started = std::time::Instant::now();
    let err = c
        .post("/wait", &json!({"id": "never", "count": 1}))
        .unwrap_err();
    assert!(
        err.contains("408") && started.elapsed() < Duration::from_secs(5),
        "{err}"
    );
}

#[test]
fn a_stdio_channel_routes_replies_by_id_and_strays_to_its_hook() {
    // a shell server: answers each line's id after the next line arrived (two in flight),
    // then writes a stray frame and a line that is not JSON
    let script =
        r#"read a; read b; echo "$b"; echo "$a"; echo '{"id":"stray"}'; echo 'not json'; read c"#;
    let ch = StdioChannel::start(&["sh".into(), "-c".into(), script.into()], "/").unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    ch.set_unsolicited(Box::new(move |f| {
        let _ = tx.lock().unwrap().send(f);
    }));
    let t = Duration::from_secs(5);
    let first = ch.call(&json!({"id": "one"}), t);
    let duplicate = ch.call(&json!({"id": "one"}), t);
    assert!(matches!(duplicate.result(t), Err(CallError::Transport(_))));
    let second = ch.call(&json!({"id": 2}), t);
    assert_eq!(first.result(t).unwrap(), json!({"id": "one"}));
    assert_eq!(second.result(t).unwrap(), json!({"id": 2}));
    assert_eq!(rx.recv_timeout(t).unwrap(), json!({"id": "stray"}));
    let pid = ch.pid();
    ch.close();
    // SAFETY: kill(2) with signal 0 only checks whether the group still exists.
    assert_ne!(
        unsafe { libc::kill(-pid, 0) },
        0,
        "the process group is gone"
    );
    assert!(matches!(
        ch.call(&json!({"id": 3}), t).result(t),
        Err(CallError::Transport(_))
    ));
}
