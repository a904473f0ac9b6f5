//! The compaction suite end to end against docs/COMPACTION.md: the Rust
//! client (the host) runs `scenarios/compaction.json` against the Rust
//! server over stdio (the client spawns the server) and over HTTP (the test
//! does, as the harness would), and the run is judged as the harness judges
//! it: every run's `actual` equal to `expected`, each boundary's received
//! calls equal to `proof.before` / `proof.after` in order, each replied
//! before the next is received (a scripted timeout has no reply), one
//! `chain-settled` per boundary that ran, the observations `proof.observations`
//! as a multiset and after their boundary's settlement; every negative
//! answered `-32602` and never recorded. Configs, readiness, report and
//! receipts validate against schemas/contract.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ahp_sdk::json::equal;
use ahp_sdk::schemas::Schemas;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_ahp-rust");
const SET: &str = "scenarios/compaction.json";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ahp-rust-cmp-{}-{name}", std::process::id()));
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

fn server_config(d: &Path, transport: &str) -> Value {
    json!({"suite": "compaction", "transport": transport, "readinessFile": d.join("ready.json"),
        "scenarioFile": root().join(SET), "auth": {"mode": "none", "profile": "strict"},
        "schemaDir": root().join("schemas/draft")})
}

fn client_config(d: &Path, transport: &str) -> Value {
    json!({"suite": "compaction", "transport": transport, "scenarioFile": root().join(SET),
        "reportFile": d.join("report.json"), "childPidFile": d.join("child.json"),
        "auth": {"mode": "none", "profile": "strict"}, "timeoutMs": 10000, "schemaDir": root().join("schemas/draft")})
}

fn client(config: &str) {
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
}

fn kinds<'a>(entries: &'a [Value], kind: &str, key: &str, id: &str) -> Vec<(usize, &'a Value)> {
    entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e["kind"] == kind && e[key] == id)
        .collect()
}

fn fault(row: &Value, phase: &str, n: usize) -> Option<String> {
    let seq = row["responseSequences"][phase].as_array()?;
    let entry = seq.get(n).or(seq.last())?;
    entry["fault"].as_str().map(str::to_string)
}

/// The harness's checks of one run's receipts.
fn judge_run(row: &Value, entries: &[Value]) {
    let id = row["id"].as_str().unwrap();
    let expected = &row["expected"];
    for phase in ["before", "after"] {
        let rid = format!("{id}:{phase}");
        let received = kinds(entries, "received", "id", &rid);
        let replied = kinds(entries, "replied", "id", &rid);
        let got: Vec<Value> = received.iter().map(|(_, e)| e["message"].clone()).collect();
        assert!(
            equal(&json!(got), &row["proof"][phase]),
            "{rid}: the calls received {} are not the proof's",
            json!(got)
        );
        let mut pattern = Vec::new();
        for n in 0..received.len() {
            pattern.push("received");
            if fault(row, phase, n).as_deref() != Some("timeout") {
                pattern.push("replied");
            }
        }
        let mut order: Vec<(usize, &str)> = received
            .iter()
            .map(|(i, _)| (*i, "received"))
            .chain(replied.iter().map(|(i, _)| (*i, "replied")))
            .collect();
        order.sort();
        let order: Vec<&str> = order.into_iter().map(|(_, k)| k).collect();
        assert_eq!(order, pattern, "{rid}: calls are serial");
        let settled: Vec<usize> = entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e["kind"] == "chain-settled" && e["id"] == rid.as_str())
            .map(|(i, e)| {
                assert_eq!(e["scenario"], id);
                i
            })
            .collect();
        let ran = phase == "before"
            || expected["applied"] == true
            || !expected["after"]["failures"].as_array().unwrap().is_empty();
        assert_eq!(settled.len(), usize::from(ran), "{rid}: chain-settled");
        let last = received.iter().chain(&replied).map(|(i, _)| *i).max();
        if let (Some(s), Some(last)) = (settled.first(), last) {
            assert!(*s > last, "{rid}: settled after its last call's receipt");
        }
        for (i, _) in kinds(entries, "observed", "eventId", &rid) {
            assert!(settled.first().is_some_and(|s| i > *s), "{rid}: observed");
        }
    }
    let ids = [format!("{id}:before"), format!("{id}:after")];
    let mut remaining: Vec<Value> = row["proof"]["observations"].as_array().unwrap().clone();
    for e in entries
        .iter()
        .filter(|e| e["kind"] == "observed" && ids.iter().any(|i| e["eventId"] == i.as_str()))
    {
        let at = remaining
            .iter()
            .position(|w| equal(w, &e["message"]))
            .unwrap_or_else(|| panic!("{id}: an unexpected observation {}", e["message"]));
        remaining.remove(at);
    }
    assert!(remaining.is_empty(), "{id}: observations never arrived");
}

fn judge(report: &Value) {
    let s = contract_schemas();
    assert_eq!(s.check("lifecycle-report.schema.json", report), None);
    let receipts = &report["receipts"];
    assert_eq!(
        s.check("lifecycle-control.schema.json#/$defs/receipts", receipts),
        None
    );
    let entries = receipts["entries"].as_array().unwrap();
    let set = read(&root().join(SET));
    let rows = set["scenarios"].as_array().unwrap();
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), rows.len());
    for (row, result) in rows.iter().zip(results) {
        assert_eq!(row["id"], result["id"]);
        assert_eq!(result["status"], "completed", "{}: {result}", row["id"]);
        assert!(
            equal(&result["actual"], &row["expected"]),
            "{}: actual {} expected {}",
            row["id"],
            result["actual"],
            row["expected"]
        );
        match row.get("negative") {
            Some(negative) => assert!(
                !entries.iter().any(|e| e["id"] == negative["id"]
                    || e["eventId"] == negative["params"]["event"]["id"]),
                "{}: a refused negative was recorded",
                row["id"]
            ),
            None => judge_run(row, entries),
        }
    }
}

#[test]
fn the_set_over_stdio() {
    let s = contract_schemas();
    let d = temp("stdio");
    let server = server_config(&d, "stdio");
    assert_eq!(
        s.check("compaction-server-config.schema.json", &server),
        None
    );
    let server = write(&d.join("server.json"), &server);
    let mut cfg = client_config(&d, "stdio");
    cfg["serverCommand"] = json!([BIN, "lifecycle-server"]);
    cfg["serverCwd"] = json!(d);
    cfg["serverConfig"] = json!(server);
    cfg["backends"] = json!({"unreachable": {"command": [d.join("no-such-backend")]}});
    assert_eq!(s.check("compaction-client-config.schema.json", &cfg), None);
    client(&write(&d.join("client.json"), &cfg));
    judge(&read(&d.join("report.json")));
    let ready = read(&d.join("ready.json"));
    assert_eq!(s.check("readiness.schema.json", &ready), None);
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
    let cfg = write(&d.join("server.json"), &server_config(&d, "http"));
    let child = Command::new(BIN)
        .args(["lifecycle-server", "--config", &cfg])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut server = Server(child);
    let until = Instant::now() + Duration::from_secs(10);
    let ready = loop {
        if let Ok(v) =
            ahp_sdk::json::parse(&std::fs::read(d.join("ready.json")).unwrap_or_default())
        {
            break v;
        }
        assert!(Instant::now() < until, "no readiness file");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(s.check("readiness.schema.json", &ready), None);
    let mut cfg = client_config(&d, "http");
    cfg["endpoint"] = ready["endpoint"].clone();
    cfg["controlEndpoint"] = ready["controlEndpoint"].clone();
    assert_eq!(s.check("compaction-client-config.schema.json", &cfg), None);
    client(&write(&d.join("client.json"), &cfg));
    judge(&read(&d.join("report.json")));
    let control =
        ahp_contract::suite_control::ControlClient::new(ready["controlEndpoint"].as_str().unwrap())
            .unwrap();
    // no reply is ever held: /release is answered and changes nothing; /emit is not served
    control
        .post("/release", &json!({"id": "cmp-chain:before"}))
        .unwrap();
    assert!(control
        .call("POST", "/emit", Some(&json!({"response": {}})))
        .is_err());
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
