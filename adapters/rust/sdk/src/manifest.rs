//! The core server's discovery result: what it answers `hooks/capabilities`
//! (and `GET /capabilities`) with: the nine boundaries of the core set in
//! intercept mode, each with every effect, modify target and flow operation
//! the protocol allows there (as the Go and Python servers answer).

use crate::boundaries::{Boundary, BOUNDARIES};
use serde_json::{json, Map, Value};

/// The AHP version this implementation speaks.
pub const PROTOCOL_VERSION: &str = "draft";

/// The order effects are listed in.
const EFFECT_ORDER: [&str; 8] = [
    "deny", "allow", "ask", "modify", "message", "return", "flow", "inject",
];

/// The capabilities a boundary advertises: every effect it allows.
pub fn capabilities_of(b: &Boundary) -> Value {
    let effects: Vec<&str> = EFFECT_ORDER.into_iter().filter(|e| b.allows(e)).collect();
    let mut caps = Map::new();
    caps.insert("effects".into(), json!(effects));
    if b.allows("modify") {
        caps.insert(
            "modify".into(),
            json!({ b.target: {"replace": true, "merge": true} }),
        );
    }
    if b.allows("flow") {
        let mut flow = Map::new();
        flow.insert("operations".into(), json!(b.flow_operations));
        if b.allows_flow("continue") {
            flow.insert("remainingContinuations".into(), json!(1));
            flow.insert("continuationCount".into(), json!(0));
            flow.insert("maxContinuations".into(), json!(1));
        }
        caps.insert("flow".into(), Value::Object(flow));
    }
    if b.allows("inject") {
        caps.insert(
            "inject".into(),
            json!({"context": {"append": true, "deliverAt": ["now", "next_turn"]}}),
        );
    }
    Value::Object(caps)
}

/// The core server's manifest.
pub fn manifest() -> Value {
    let events: Vec<Value> = BOUNDARIES
        .iter()
        .map(|b| json!({"event": b.event, "modes": ["intercept"], "capabilities": capabilities_of(b)}))
        .collect();
    json!({
        "events": events,
        "gaps": [],
        "transports": ["http", "stdio"],
        "authentication": ["bearer", "oauth"],
        "toolPaths": ["native"],
        "contentCategories": ["text"],
        "limits": {},
        "managedPolicy": {"scopes": ["user"], "disableable": true},
        "correlationIdentityFields": ["session.id", "call.id"],
    })
}

/// The result of `hooks/capabilities`: `{"protocolVersion": "draft", "manifest": {...}}`.
pub fn discovery_result() -> Value {
    json!({"protocolVersion": PROTOCOL_VERSION, "manifest": manifest()})
}
