//! The core server's discovery result.

use ahp_sdk::engine::supports;
use ahp_sdk::manifest::discovery_result;
use ahp_sdk::schemas::{Schemas, CAPABILITIES_RESPONSE};
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
