//! The core server's discovery result.

use ahp_sdk::engine::supports;
use ahp_sdk::manifest::{catalogue_manifest, discovery_result, get_capabilities, manifest};
use ahp_sdk::schemas::{Schemas, CAPABILITIES, CAPABILITIES_RESPONSE};
use serde_json::{json, Value};
use std::path::Path;

fn root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

#[test]
fn the_discovery_result_is_a_valid_capabilities_response() {
    let schemas = Schemas::load(&root().join("schemas/draft")).unwrap();
    let result = discovery_result();
    assert_eq!(result["protocolVersion"], json!("draft"));
    let wrapped = json!({"jsonrpc": "2.0", "id": "discovery", "result": result});
    assert_eq!(schemas.check(CAPABILITIES_RESPONSE, &wrapped), None);
    // fresh at every call
    assert_eq!(discovery_result(), result);
}

/// `GET /capabilities` answers exactly the capabilities of the `tool.before`
/// intercept entry, a copy, valid under the canonical capabilities.schema.json
/// (what upstream clients validate), for the core manifest and `M`.
#[test]
fn get_capabilities_is_the_bare_tool_before_capabilities() {
    let schemas = Schemas::load(&root().join("schemas/draft")).unwrap();
    assert_eq!(discovery_result()["manifest"], manifest());
    for m in [manifest(), catalogue_manifest()] {
        let entries: Vec<&Value> = m["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| {
                e["event"] == "tool.before"
                    && e["modes"].as_array().unwrap().contains(&json!("intercept"))
            })
            .collect();
        assert_eq!(entries.len(), 1);
        let mut got = get_capabilities(&m).unwrap();
        assert_eq!(got, entries[0]["capabilities"]);
        assert!(got.get("jsonrpc").is_none());
        assert_eq!(schemas.check(CAPABILITIES, &got), None);
        got["effects"] = json!([]);
        assert_ne!(got, entries[0]["capabilities"], "a copy");
    }
}

#[test]
fn get_capabilities_without_tool_before_is_the_first_intercept_entry() {
    let m = json!({"events": [
        {"event": "tool.before", "modes": ["observe"]},
        {"event": "turn.start", "modes": ["intercept"], "capabilities": {"effects": ["deny"]}},
        {"event": "tool.after", "modes": ["intercept"], "capabilities": {"effects": []}}]});
    assert_eq!(get_capabilities(&m), Some(json!({"effects": ["deny"]})));
    assert_eq!(
        get_capabilities(&json!({"events": [{"event": "tool.before", "modes": ["observe"]}]})),
        None
    );
}

#[test]
fn it_lists_the_core_set_in_intercept_mode() {
    let result = discovery_result();
    let events = result["manifest"]["events"].as_array().unwrap();
    assert_eq!(events.len(), 9);
    for e in events {
        assert!(supports(e["event"].as_str().unwrap()));
        assert_eq!(e["modes"], json!(["intercept"]));
    }
}

/// Every capability a core scenario's request advertises is one the manifest
/// offers for that event (per-request advertisements narrow the manifest).
#[test]
fn every_core_request_narrows_the_manifest() {
    let result = discovery_result();
    let by_event = |t: &str| -> Value {
        result["manifest"]["events"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["event"] == t)
            .map(|e| e["capabilities"].clone())
            .unwrap_or_else(|| panic!("{t} not in the manifest"))
    };
    let bytes = std::fs::read(root().join("scenarios/core.json")).unwrap();
    let doc = ahp_sdk::json::parse(&bytes).unwrap();
    for row in doc["scenarios"].as_array().unwrap() {
        let params = &row["request"]["params"];
        let offered = by_event(params["event"]["type"].as_str().unwrap());
        let caps = &params["capabilities"];
        for e in caps["effects"].as_array().unwrap() {
            assert!(
                offered["effects"].as_array().unwrap().contains(e),
                "{}: {e}",
                row["id"]
            );
        }
        if let Some(modify) = caps.get("modify").and_then(Value::as_object) {
            for target in modify.keys() {
                assert!(
                    offered["modify"].get(target).is_some(),
                    "{}: modify {target}",
                    row["id"]
                );
            }
        }
        if let Some(ops) = caps.pointer("/flow/operations").and_then(Value::as_array) {
            for op in ops {
                assert!(
                    offered["flow"]["operations"]
                        .as_array()
                        .unwrap()
                        .contains(op),
                    "{}: {op}",
                    row["id"]
                );
            }
        }
    }
}
