//! Loading the canonical schemas and validating against them.

use ahp_sdk::boundaries::DEFINITIONS;
use ahp_sdk::json::parse;
use ahp_sdk::schemas::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn draft() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../schemas/draft")
}

fn canonical() -> Schemas {
    Schemas::load(&draft()).expect("schemas/draft loads")
}

/// A fresh directory under the target folder's tmp, removed at drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("ahp-sdk-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
    fn write(&self, name: &str, text: &str) {
        std::fs::write(self.0.join(name), text).unwrap();
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn request(id: &str) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "hooks/intercept",
        "params": {
            "protocolVersion": "draft",
            "event": {
                "id": id, "source": "urn:ahp-interop:core", "type": "tool.before",
                "time": "2026-04-02T10:15:00Z", "session": {"id": "s"}, "call": {"id": "c"},
                "tool": {"name": "read_file", "kind": "file_read", "origin": "native", "input": {"path": "a"}},
                "path": "native"
            },
            "capabilities": {"effects": ["deny", "message"]},
            "state": {"permission": "none", "candidate": null}
        }
    })
}

#[test]
fn every_file_of_the_directory_is_registered_by_id() {
    let s = canonical();
    let on_disk: Vec<String> = {
        let mut v: Vec<String> = std::fs::read_dir(draft())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".schema.json"))
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        s.names(),
        on_disk.iter().map(String::as_str).collect::<Vec<_>>()
    );
    for name in [
        INTERCEPT_REQUEST,
        INTERCEPT_RESPONSE,
        CAPABILITIES_REQUEST,
        CAPABILITIES_RESPONSE,
        OBSERVE_NOTIFICATION,
        REGISTRATION,
        CONTENT_UPLOAD,
        CONTENT_UPLOAD_RECEIPT,
        JSON_RPC_MESSAGE,
        MCP_ELICITATION,
    ] {
        assert!(s.has(name), "{name}");
        assert_eq!(s.id_of(name), Some(format!("{SCHEMA_BASE}{name}").as_str()));
    }
    assert!(
        !s.has("manifest.json"),
        "only *.schema.json files are schemas"
    );
}

#[test]
fn every_name_the_suites_use_compiles() {
    let s = canonical();
    for name in [
        INTERCEPT_REQUEST,
        INTERCEPT_RESPONSE,
        CAPABILITIES_REQUEST,
        CAPABILITIES_RESPONSE,
        OBSERVE_NOTIFICATION,
        REGISTRATION,
        CONTENT_UPLOAD_RECEIPT,
        ELICITATION_REQUEST_PARAMS,
        ELICITATION_RESULT,
    ]
    .into_iter()
    .chain(DEFINITIONS)
    {
        s.compile(name).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn a_request_validates_and_each_fault_is_named() {
    let s = canonical();
    assert_eq!(s.check(INTERCEPT_REQUEST, &request("r1")), None);
    let mut bad = request("r1");
    bad["params"]["event"]["type"] = json!("tool.nonsense");
    assert!(s
        .check(INTERCEPT_REQUEST, &bad)
        .unwrap()
        .starts_with("intercept-request.schema.json: "));
    let mut bad = request("r1");
    bad["method"] = json!("hooks/other");
    assert!(s.check(INTERCEPT_REQUEST, &bad).is_some());
    assert!(s.check(INTERCEPT_REQUEST, &json!(null)).is_some());
    assert!(s.check(INTERCEPT_REQUEST, &json!([])).is_some());
}

#[test]
fn formats_are_asserted() {
    let s = canonical();
    // date-time
    let mut bad = request("r1");
    bad["params"]["event"]["time"] = json!("yesterday");
    let problem = s
        .check(INTERCEPT_REQUEST, &bad)
        .expect("a bad date-time fails");
    assert!(problem.contains("/params/event/time"), "{problem}");
    let mut bad = request("r1");
    bad["params"]["event"]["time"] = json!("2026-04-02 10:15:00");
    assert!(s.check(INTERCEPT_REQUEST, &bad).is_some());
    let mut fine = request("r1");
    fine["params"]["event"]["time"] = json!("2026-04-02T10:15:00.25+02:00");
    assert_eq!(s.check(INTERCEPT_REQUEST, &fine), None);
    // uri (the event source)
    let mut bad = request("r1");
    bad["params"]["event"]["source"] = json!("not a uri");
    let problem = s
        .check(INTERCEPT_REQUEST, &bad)
        .expect("a relative or malformed uri fails");
    assert!(problem.contains("/params/event/source"), "{problem}");
}

#[test]
fn definitions_by_pointer() {
    let s = canonical();
    let part = json!({"id": "p", "kind": "text", "mediaType": "text/plain", "selection": "body", "text": "hi"});
    let message = json!({"id": "m", "role": "user", "parts": [part]});
    assert!(s
        .check(
            ahp_sdk::boundaries::DEF_MESSAGES,
            &json!([{"role": "user", "parts": []}])
        )
        .is_some());
    assert_eq!(
        s.check(ahp_sdk::boundaries::DEF_MESSAGES, &json!([message])),
        None
    );
    assert!(s
        .check(ahp_sdk::boundaries::DEF_MESSAGES, &json!({}))
        .is_some());
    assert!(s
        .check(
            ahp_sdk::boundaries::DEF_ASSISTANT_MESSAGES,
            &json!([message])
        )
        .is_some());
    assert_eq!(
        s.check(ahp_sdk::boundaries::DEF_TEXT_PARTS, &json!([part])),
        None
    );
    assert_eq!(
        s.check(
            ahp_sdk::boundaries::DEF_WORKSPACE_CHANGE,
            &json!({"cwd": "/w"})
        ),
        None
    );
    assert!(s
        .check(
            ahp_sdk::boundaries::DEF_WORKSPACE_CHANGE,
            &json!({"cwd": ""})
        )
        .is_some());
    assert!(s
        .check(
            ahp_sdk::boundaries::DEF_WORKSPACE_CHANGE,
            &json!({"cwd": "/w", "x": 1})
        )
        .is_some());
    assert_eq!(
        s.check(
            ahp_sdk::boundaries::DEF_ANSWER_CONTENT,
            &json!({"a": "b", "n": 1, "t": true, "l": ["x"]})
        ),
        None
    );
    assert!(s
        .check(
            ahp_sdk::boundaries::DEF_ANSWER_CONTENT,
            &json!({"a": {"b": 1}})
        )
        .is_some());
    // unknown names are problems, not panics
    assert!(s
        .check("nope.schema.json", &json!(1))
        .unwrap()
        .contains("not found"));
    assert!(s
        .check("common.schema.json#/$defs/nope", &json!(1))
        .is_some());
}

#[test]
fn each_schema_compiles_once_and_is_shared_between_threads() {
    let s = Arc::new(canonical());
    let threads: Vec<_> = (0..4)
        .map(|i| {
            let s = Arc::clone(&s);
            std::thread::spawn(move || s.check(INTERCEPT_REQUEST, &request(&format!("r{i}"))))
        })
        .collect();
    for t in threads {
        assert_eq!(t.join().unwrap(), None);
    }
}

#[test]
fn integers_by_value() {
    let dir = TempDir::new("integers");
    dir.write(
        "n.schema.json",
        r#"{"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://example.test/n.schema.json",
            "type": "integer", "minimum": 1, "$defs": {"one": {"const": 1}}}"#,
    );
    let s = Schemas::load(&dir.0).unwrap();
    assert_eq!(s.check("n.schema.json", &parse(b"2").unwrap()), None);
    assert_eq!(s.check("n.schema.json", &parse(b"2.0").unwrap()), None);
    assert!(s.check("n.schema.json", &parse(b"2.5").unwrap()).is_some());
    assert!(s.check("n.schema.json", &parse(b"true").unwrap()).is_some());
    assert_eq!(
        s.check("n.schema.json#/$defs/one", &parse(b"1.0").unwrap()),
        None
    );
}

#[test]
fn load_refuses_what_is_not_a_schema_directory() {
    let empty = TempDir::new("empty");
    empty.write("notes.json", "{}");
    assert!(Schemas::load(&empty.0)
        .unwrap_err()
        .contains("no *.schema.json"));
    assert!(Schemas::load(&empty.0.join("missing")).is_err());

    let dup = TempDir::new("dup");
    dup.write("a.schema.json", r#"{"type": "object", "type": "array"}"#);
    let e = Schemas::load(&dup.0).unwrap_err();
    assert!(
        e.contains("a.schema.json") && e.contains("duplicate"),
        "{e}"
    );

    let same = TempDir::new("same-id");
    same.write("a.schema.json", r#"{"$id": "https://example.test/x"}"#);
    same.write("b.schema.json", r#"{"$id": "https://example.test/x"}"#);
    assert!(Schemas::load(&same.0)
        .unwrap_err()
        .contains("share the $id"));

    let scalar = TempDir::new("scalar");
    scalar.write("a.schema.json", "true");
    assert!(Schemas::load(&scalar.0)
        .unwrap_err()
        .contains("not a schema object"));

    // no $id: registered under the canonical base; subdirectories are not read
    let plain = TempDir::new("plain");
    plain.write("p.schema.json", r#"{"type": "string"}"#);
    std::fs::create_dir(plain.0.join("sub.schema.json")).unwrap();
    let s = Schemas::load(&plain.0).unwrap();
    assert_eq!(s.names(), vec!["p.schema.json"]);
    assert_eq!(
        s.id_of("p.schema.json"),
        Some(format!("{SCHEMA_BASE}p.schema.json").as_str())
    );
    assert_eq!(s.check("p.schema.json", &json!("x")), None);
    assert!(s.check("p.schema.json", &json!(1)).is_some());
}

#[test]
fn a_schema_that_does_not_compile_is_a_problem_every_time() {
    let dir = TempDir::new("broken");
    dir.write(
        "b.schema.json",
        r#"{"$ref": "https://example.test/elsewhere.json"}"#,
    );
    let s = Schemas::load(&dir.0).unwrap();
    assert!(s.compile("b.schema.json").is_err());
    assert!(s.check("b.schema.json", &json!(1)).is_some());
    assert!(s.check("b.schema.json", &json!(1)).is_some());
}
