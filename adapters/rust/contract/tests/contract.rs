//! The contract crate against docs/CONTRACT.md: what it writes validates against
//! schemas/contract, config errors name the file and the field, the HTTP
//! server's bad-input rules, the client's one keep-alive connection, the stdio
//! peer's process group.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ahp_contract::backend::{Answer, Backend};
use ahp_contract::config::{self, read_scenarios};
use ahp_contract::files::{self, Receipts};
use ahp_contract::http::{self, Body, Handler, Request, Response, Url};
use ahp_contract::peer::{ExchangeError, Peer, StdioPeer};
use ahp_contract::server::{AhpHandler, ControlHandler};
use ahp_sdk::schemas::Schemas;
use serde_json::{json, Value};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

fn contract_schemas() -> Schemas {
    Schemas::load(&root().join("schemas/contract")).expect("schemas/contract loads")
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ahp-rust-contract-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn read(path: &std::path::Path) -> Value {
    ahp_sdk::json::parse(&std::fs::read(path).unwrap()).unwrap()
}

fn write(path: &std::path::Path, v: &Value) -> String {
    std::fs::write(path, ahp_sdk::json::encode(v)).unwrap();
    path.to_string_lossy().into_owned()
}

fn core_rows(n: usize) -> Value {
    let core = read(&root().join("scenarios/core.json"));
    let rows: Vec<Value> = core["scenarios"].as_array().unwrap()[..n].to_vec();
    json!({"version": 1, "scenarios": rows})
}

#[test]
fn readiness_and_reports_validate() {
    let s = contract_schemas();
    let d = temp("files");
    let ready = d.join("ready.json");
    files::write_readiness(
        ready.to_str().unwrap(),
        Some("https://127.0.0.1:4433/intercept"),
        "http://127.0.0.1:9",
        &[],
    )
    .unwrap();
    assert_eq!(s.check("readiness.schema.json", &read(&ready)), None);
    files::write_readiness(ready.to_str().unwrap(), None, "http://127.0.0.1:9", &[]).unwrap();
    assert_eq!(s.check("readiness.schema.json", &read(&ready)), None);
    assert!(read(&ready)["endpoint"].is_null());
    let report = d.join("report.json");
    let v = json!({"language": "rust", "results": [
        {"id": "a", "status": "completed", "actual": {"rejected": true}},
        {"id": "b", "status": "failed", "error": "HTTP status 500"},
        {"id": "c", "status": "unsupported", "error": "event type"}]});
    files::write_json_atomic(report.to_str().unwrap(), &v).unwrap();
    assert_eq!(s.check("client-report.schema.json", &read(&report)), None);
    // no temporary file is left beside it
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 2);
}

#[test]
fn receipts_log_lines_and_control_answers_validate() {
    let s = contract_schemas();
    let d = temp("receipts");
    let log = d.join("receipts.jsonl");
    let rows = read_scenarios(&root().join("scenarios/core.json")).unwrap();
    let backend = Backend::new(
        Receipts::new(Some(log.to_str().unwrap())).unwrap(),
        rows.clone(),
    )
    .unwrap();
    assert_eq!(
        backend.dispatch(&json!({"jsonrpc": "2.0", "method": "hooks/observe"})),
        Answer::none()
    );
    let unknown = backend.dispatch(&json!({"jsonrpc": "2.0", "id": 7, "method": "nope"}));
    assert_eq!(unknown.reply.unwrap()["error"]["code"], -32601);
    backend.dispatch(&json!({"jsonrpc": "2.0", "id": "discovery", "method": "hooks/capabilities"}));
    let not_object = backend.dispatch(&json!([1]));
    assert_eq!(not_object.reply.unwrap()["error"]["code"], -32600);
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "the batch is not receipted");
    for line in &lines {
        assert_eq!(
            s.check(
                "receipt-line.schema.json",
                &ahp_sdk::json::parse(line.as_bytes()).unwrap()
            ),
            None
        );
    }
    let snap = backend.receipts.snapshot();
    assert_eq!(s.check("control.schema.json#/$defs/receipts", &snap), None);
    assert_eq!(snap["requests"].as_array().unwrap().len(), 1);
    assert_eq!(snap["discovery"].as_array().unwrap().len(), 1);
    assert_eq!(snap["notifications"].as_array().unwrap().len(), 1);
    // reset clears the lists, never the log
    backend.reset(None).unwrap();
    assert_eq!(backend.receipts.snapshot()["requests"], json!([]));
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 3);
    // a bad file changes nothing
    assert!(backend.reset(Some("/nonexistent/rows.json")).is_err());
    assert!(backend.scenario(Some(&json!(rows[0].id))).is_some());
}

#[test]
fn barriers_hold_until_released_and_stay_released_until_reset() {
    let b = Arc::new(ahp_contract::files::Barriers::new());
    assert!(!b.is_open("g"));
    let waiter = {
        let b = b.clone();
        std::thread::spawn(move || b.wait("g"))
    };
    std::thread::sleep(Duration::from_millis(50));
    assert!(!waiter.is_finished());
    b.release("g");
    waiter.join().unwrap();
    assert!(b.is_open("g"));
    b.reset();
    assert!(!b.is_open("g"));
    b.release_all();
    assert!(b.is_open("anything"));
}

#[test]
fn config_errors_name_the_file_and_the_field() {
    let d = temp("config");
    let rows = write(&d.join("rows.json"), &core_rows(1));
    let cases: Vec<(Value, &str)> = vec![
        (json!({"transport": "stdio"}), "readinessFile"),
        (json!({"transport": "tcp"}), "transport"),
        (
            json!({"transport": "http", "readinessFile": "rel/ready.json"}),
            "readinessFile",
        ),
        (
            json!({"transport": "http", "readinessFile": "/r", "scenarioFile": "/nonexistent.json", "auth": {"mode": "none"}}),
            "scenarioFile",
        ),
        (
            json!({"transport": "http", "readinessFile": "/r", "scenarioFile": rows, "auth": {"mode": "bearer", "profile": "strict", "token": "t"}}),
            "tls",
        ),
        (
            json!({"transport": "http", "readinessFile": "/r", "scenarioFile": rows, "auth": {"mode": "bearer", "profile": "compat"}}),
            "auth.token",
        ),
        (
            json!({"transport": "http", "readinessFile": "/r", "scenarioFile": rows, "auth": {"mode": "magic"}}),
            "auth.mode",
        ),
        (
            json!({"transport": "http", "readinessFile": "/r", "scenarioFile": rows, "auth": {"mode": "mtls", "profile": "strict"}, "tls": {"certFile": "/c", "keyFile": "/k"}}),
            "tls.clientCaFile",
        ),
    ];
    for (i, (cfg, field)) in cases.into_iter().enumerate() {
        let file = write(&d.join(format!("server-{i}.json")), &cfg);
        let err = config::load_server(&file)
            .err()
            .unwrap_or_else(|| panic!("case {i} loads"));
        assert_eq!(
            (err.file.as_str(), err.field.as_str()),
            (file.as_str(), field),
            "case {i}: {err}"
        );
        assert!(err.to_string().contains(&file) && err.to_string().contains(field));
    }
    let malformed = d.join("dup.json");
    std::fs::write(
        &malformed,
        br#"{"transport": "http", "transport": "stdio"}"#,
    )
    .unwrap();
    let err = config::load_server(malformed.to_str().unwrap())
        .err()
        .unwrap();
    assert!(err.msg.contains("strict JSON"), "{err}");
    let client = write(
        &d.join("client.json"),
        &json!({"transport": "http", "scenarioFile": rows, "reportFile": "/tmp/r.json", "auth": {"mode": "none", "profile": "strict"}, "timeoutMs": 0}),
    );
    assert_eq!(
        config::load_client(&client).err().unwrap().field,
        "timeoutMs"
    );
    let client = write(
        &d.join("client2.json"),
        &json!({"transport": "stdio", "scenarioFile": rows, "reportFile": "/tmp/r.json", "auth": {"mode": "none", "profile": "strict"}, "timeoutMs": 5, "serverCommand": []}),
    );
    assert_eq!(
        config::load_client(&client).err().unwrap().field,
        "serverCommand"
    );
    let ok = write(
        &d.join("client3.json"),
        &json!({"transport": "http", "endpoint": "http://127.0.0.1:1", "scenarioFile": rows, "reportFile": "/tmp/r.json", "auth": {"mode": "none", "profile": "strict"}, "timeoutMs": 5}),
    );
    let c = config::load_client(&ok).unwrap();
    assert_eq!(
        (c.language.as_str(), c.timeout_ms, c.scenarios.len()),
        ("rust", 5, 1)
    );
}

struct Echo;
impl Handler for Echo {
    fn handle(&self, req: &Request, body: &mut Body) -> Response {
        if req.headers.get("authorization") == Some("no") {
            return Response::new(401).closing();
        }
        match body.read() {
            Ok(b) => Response::json(
                200,
                &json!({"len": b.len(), "auth": req.headers.all("authorization")}),
            ),
            Err(http::BodyError::Status(s)) => Response::new(s).closing(),
            Err(http::BodyError::Close) => Response::hang_up(),
        }
    }
}

fn serve(handler: Arc<dyn Handler>) -> u16 {
    let l = http::listen().unwrap();
    let port = l.local_addr().unwrap().port();
    http::serve(l, None, handler, "test");
    port
}

fn raw(port: u16, data: &[u8]) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = s.write_all(data);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn server_bad_input_rules() {
    let port = serve(Arc::new(Echo));
    let r = raw(port, b"POST / HTTP/1.1\r\nContent-Length: 9000000\r\n\r\n");
    assert!(r.starts_with("HTTP/1.1 413 "), "{r}");
    let r = raw(
        port,
        b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    );
    assert!(r.starts_with("HTTP/1.1 400 "), "{r}");
    let r = raw(
        port,
        b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\n",
    );
    assert!(r.starts_with("HTTP/1.1 400 "), "{r}");
    let r = raw(
        port,
        b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
    );
    assert!(r.starts_with("HTTP/1.1 400 "), "{r}");
    let big = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(70 << 10));
    let r = raw(port, big.as_bytes());
    assert!(r.starts_with("HTTP/1.1 431 "), "{r}");
    // authentication before the body: 401 without reading the (huge) body
    let r = raw(
        port,
        b"POST / HTTP/1.1\r\nAuthorization: no\r\nContent-Length: 100000000\r\n\r\nabc",
    );
    assert!(
        r.starts_with("HTTP/1.1 401 ") && r.contains("Content-Length: 0"),
        "{r}"
    );
    // chunked body, duplicate Authorization headers as a list, keep-alive for two requests
    let two = b"POST / HTTP/1.1\r\nAuthorization: a\r\nAuthorization: b\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\nPOST / HTTP/1.1\r\nContent-Length: 1\r\nConnection: close\r\n\r\nz";
    let r = raw(port, two);
    assert_eq!(r.matches("HTTP/1.1 200 OK").count(), 2, "{r}");
    assert!(r.contains(r#"{"len":5,"auth":["a","b"]}"#), "{r}");
    assert!(r.contains(r#"{"len":1,"auth":[]}"#), "{r}");
    // still serving
    let r = raw(
        port,
        b"POST / HTTP/1.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    );
    assert!(r.starts_with("HTTP/1.1 200 "), "{r}");
}

#[test]
fn client_uses_one_keep_alive_connection() {
    let port = serve(Arc::new(Echo));
    let url = Url::parse(&format!("http://127.0.0.1:{port}/x")).unwrap();
    let mut c = http::Client::new(&url, None, Duration::from_secs(5));
    for _ in 0..3 {
        let a = c
            .request("POST", &url, &[("Authorization", "Bearer t")], b"abcd")
            .unwrap();
        assert_eq!(a.status, 200);
        assert_eq!(
            ahp_sdk::json::parse(&a.body).unwrap(),
            json!({"len": 4, "auth": ["Bearer t"]})
        );
    }
    // a refusal that closes the connection: the next request opens another
    let a = c
        .request("POST", &url, &[("Authorization", "no")], b"")
        .unwrap();
    assert_eq!(a.status, 401);
    assert_eq!(c.request("POST", &url, &[], b"").unwrap().status, 200);
    c.close();
    let dead = Url::parse("http://127.0.0.1:1/intercept").unwrap();
    let mut c = http::Client::new(&dead, None, Duration::from_secs(2));
    assert!(c.request("POST", &dead, &[], b"").is_err());
}

fn ahp_server(rows: Value) -> (u16, u16, Arc<Backend>) {
    let d = temp("ahp");
    let file = d.join("rows.json");
    write(&file, &rows);
    let mut backend =
        Backend::new(Receipts::new(None).unwrap(), read_scenarios(&file).unwrap()).unwrap();
    backend.add_method(
        "hooks/intercept",
        Box::new(|b, msg| match b.scenario(msg.get("id")) {
            Some(row) => b.scripted(&row),
            None => Answer::reply(ahp_contract::backend::rpc_error(
                msg.get("id"),
                -32602,
                "unknown",
                None,
            )),
        }),
    );
    let backend = Arc::new(backend);
    let verifier = Some(Arc::new(ahp_sdk::auth::Verifier::bearer("secret")));
    let p1 = serve(Arc::new(AhpHandler {
        backend: backend.clone(),
        verifier,
    }));
    let p2 = serve(Arc::new(ControlHandler {
        backend: backend.clone(),
    }));
    (p1, p2, backend)
}

#[test]
fn ahp_listener_authenticates_then_answers_unchanged_and_holds_barriers() {
    let mut rows = core_rows(2);
    rows["scenarios"][1]["barrier"] = json!("gate");
    rows["scenarios"][0]["response"] = Value::Null;
    let (port, control, backend) = ahp_server(rows.clone());
    let first = ahp_sdk::json::encode(&rows["scenarios"][0]["request"]);
    let post = move |auth: &str, body: &str| {
        raw(port, format!("POST /anything HTTP/1.1\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()).as_bytes())
    };
    let r = post("", &first);
    assert!(r.starts_with("HTTP/1.1 401 "), "{r}");
    let r = post(
        "Authorization: Bearer secret\r\nAuthorization: Bearer secret\r\n",
        &first,
    );
    assert!(
        r.starts_with("HTTP/1.1 401 "),
        "duplicates are refused: {r}"
    );
    assert_eq!(
        backend.receipts.snapshot()["requests"],
        json!([]),
        "refusals are not receipted"
    );
    let r = post("Authorization: Bearer secret\r\n", &first);
    assert!(
        r.starts_with("HTTP/1.1 200 ") && r.ends_with("\r\n\r\nnull"),
        "a null response unchanged: {r}"
    );
    let r = post("Authorization: Bearer secret\r\n", r#"{"a":1,"a":2}"#);
    assert!(
        r.starts_with("HTTP/1.1 400 ") && r.contains("-32700"),
        "{r}"
    );
    // the held row: receipted at once, answered after the release
    let held = ahp_sdk::json::encode(&rows["scenarios"][1]["request"]);
    let t = std::thread::spawn(move || post("Authorization: Bearer secret\r\n", &held));
    std::thread::sleep(Duration::from_millis(200));
    assert!(!t.is_finished());
    assert_eq!(
        backend.receipts.snapshot()["requests"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let r = raw(control, b"POST /release HTTP/1.1\r\nContent-Length: 18\r\nConnection: close\r\n\r\n{\"barrier\":\"gate\"}");
    assert!(r.ends_with(r#"{"released":"gate"}"#), "{r}");
    let r = t.join().unwrap();
    assert!(r.starts_with("HTTP/1.1 200 "), "{r}");
    let r = raw(
        control,
        b"GET /health HTTP/1.1\r\nConnection: close\r\n\r\n",
    );
    assert!(r.ends_with(r#"{"ready":true}"#), "{r}");
}

#[test]
fn stdio_peer_reads_one_line_per_request_and_kills_its_group() {
    let d = temp("stdio");
    let pidfile = d.join("grandchild.pid");
    // a server that leaves a grandchild behind, answers two lines, then a stray id
    let script = format!(
        "sleep 60 & echo $! > {}; read a; echo '{{\"jsonrpc\":\"2.0\",\"id\":1}}'; read b; echo 'not json'; read c; echo '{{\"id\":99}}'; cat >/dev/null",
        pidfile.display()
    );
    let argv = vec!["sh".to_string(), "-c".to_string(), script];
    let mut p = StdioPeer::start(&argv, "/", Duration::from_secs(5)).unwrap();
    assert_eq!(
        p.exchange(&json!({"id": 1})).unwrap(),
        json!({"jsonrpc": "2.0", "id": 1})
    );
    assert!(matches!(
        p.exchange(&json!({"id": 2})),
        Err(ExchangeError::Malformed(_))
    ));
    // another id is the request's correlation failure, handed to the engine, never a wait
    assert_eq!(p.exchange(&json!({"id": 3})).unwrap(), json!({"id": 99}));
    let grandchild: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    p.close();
    std::thread::sleep(Duration::from_millis(100));
    let stat = std::fs::read_to_string(format!("/proc/{grandchild}/stat")).unwrap_or_default();
    let state = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .next()
        .unwrap_or("");
    assert!(
        stat.is_empty() || state == "Z" || state == "X",
        "the grandchild in the group was killed: {stat}"
    );
}

#[test]
fn stdio_peer_eof_is_a_transport_failure() {
    let argv = vec!["sh".to_string(), "-c".to_string(), "exit 0".to_string()];
    let mut p = StdioPeer::start(&argv, "/", Duration::from_secs(5)).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert!(matches!(
        p.exchange(&json!({"id": 1})),
        Err(ExchangeError::Transport(_))
    ));
    assert!(matches!(
        p.exchange(&json!({"id": 2})),
        Err(ExchangeError::Transport(_))
    ));
    p.close();
}
