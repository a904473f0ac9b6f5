//! The binary against docs/CONTRACT.md: exit codes and their stderr line, the
//! replay's report, the stdio server's one line in and one line out.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_ahp-rust");

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ahp-rust-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(path: &std::path::Path, v: &Value) -> String {
    std::fs::write(path, ahp_sdk::json::encode(v)).unwrap();
    path.to_string_lossy().into_owned()
}

fn read(path: &std::path::Path) -> Value {
    ahp_sdk::json::parse(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn usage_and_config_errors_exit_2_with_one_line() {
    let out = Command::new(BIN).arg("nonsense").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let d = temp("errors");
    let bad = write(&d.join("bad.json"), &json!({"transport": "stdio"}));
    for role in ["server", "client", "replay", "lifecycle-server"] {
        let out = Command::new(BIN)
            .args([role, "--config", &bad])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{role}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{role}: {err}");
        assert!(
            err.contains(&bad) && err.contains("field "),
            "{role}: {err}"
        );
        assert!(out.stdout.is_empty());
    }
    let out = Command::new(BIN)
        .args(["server", "--config", "/nonexistent/config.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn replay_reports_every_core_row_completed() {
    let d = temp("replay");
    let report = d.join("report.json");
    let cfg = json!({"scenarioFile": root().join("scenarios/core.json"), "reportFile": report,
        "schemaDir": root().join("schemas/draft"), "language": "rust-copy"});
    let cfg = write(&d.join("replay.json"), &cfg);
    let out = Command::new(BIN)
        .args(["replay", "--config", &cfg])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = read(&report);
    let schemas = ahp_sdk::schemas::Schemas::load(&root().join("schemas/contract")).unwrap();
    assert_eq!(schemas.check("client-report.schema.json", &v), None);
    assert_eq!(v["language"], "rust-copy");
    let results = v["results"].as_array().unwrap();
    let rows = read(&root().join("scenarios/core.json"))["scenarios"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(results.len(), rows);
    assert!(
        results.iter().all(|r| r["status"] == "completed"),
        "every core row is supported"
    );
}

#[test]
fn stdio_server_one_line_in_one_line_out_and_eof_ends_it() {
    let d = temp("stdio");
    let core = read(&root().join("scenarios/core.json"));
    let row = core["scenarios"][0].clone();
    let rows = write(
        &d.join("rows.json"),
        &json!({"version": 1, "scenarios": [row]}),
    );
    let ready = d.join("ready.json");
    let log = d.join("receipts.jsonl");
    let cfg = write(
        &d.join("server.json"),
        &json!({"transport": "stdio", "readinessFile": ready, "scenarioFile": rows,
            "auth": {"mode": "none", "profile": "strict"}, "receiptLog": log,
            "schemaDir": root().join("schemas/draft")}),
    );
    let mut child = Command::new(BIN)
        .args(["server", "--config", &cfg])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        let mut stdin = child.stdin.take().unwrap();
        let mut line = ahp_sdk::json::encode(&row["request"]).into_bytes();
        line.extend_from_slice(b"\n{\"a\":1,\"a\":2}\n");
        stdin.write_all(&line).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(ahp_sdk::json::equal(
        &ahp_sdk::json::parse(lines[0].as_bytes()).unwrap(),
        &row["response"]
    ));
    assert_eq!(
        ahp_sdk::json::parse(lines[1].as_bytes()).unwrap()["error"]["code"],
        -32700
    );
    let readiness = read(&ready);
    let schemas = ahp_sdk::schemas::Schemas::load(&root().join("schemas/contract")).unwrap();
    assert_eq!(schemas.check("readiness.schema.json", &readiness), None);
    assert!(readiness["endpoint"].is_null());
    let receipts = std::fs::read_to_string(&log).unwrap();
    assert_eq!(receipts.lines().count(), 1);
    assert_eq!(
        schemas.check(
            "receipt-line.schema.json",
            &ahp_sdk::json::parse(receipts.as_bytes()).unwrap()
        ),
        None
    );
}
