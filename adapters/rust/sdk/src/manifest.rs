//! The core server's discovery result: what it answers `hooks/capabilities`
//! with: the nine boundaries of the core set in intercept mode, each with
//! every effect, modify target and flow operation the protocol allows there
//! (as the Go and Python servers answer). `GET /capabilities` answers the
//! bare capabilities object of a manifest's `tool.before` entry
//! (`get_capabilities`).

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

/// The event whose capabilities `GET /capabilities` answers.
pub const GET_CAPABILITIES_EVENT: &str = "tool.before";

/// What `GET /capabilities` answers: the `capabilities` object of the
/// `manifest` entry for `tool.before` whose `modes` include `intercept`, as it
/// is (a copy), not a JSON-RPC envelope: upstream clients validate the answer
/// against `capabilities.schema.json`. A manifest without such an entry
/// answers its first intercept entry's capabilities (every manifest here has
/// one); None when it has no intercept entry at all.
pub fn get_capabilities(manifest: &Value) -> Option<Value> {
    let intercepts: Vec<&Map<String, Value>> = manifest
        .get("events")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .filter(|entry| {
            entry
                .get("modes")
                .and_then(Value::as_array)
                .is_some_and(|modes| modes.iter().any(|m| m == "intercept"))
                && entry.get("capabilities").is_some_and(Value::is_object)
        })
        .collect();
    let chosen = intercepts
        .iter()
        .find(|entry| entry.get("event").and_then(Value::as_str) == Some(GET_CAPABILITIES_EVENT))
        .or(intercepts.first())?;
    chosen.get("capabilities").cloned()
}

/// Every event type of the protocol but `hook.failure`, in the order of
/// `common.schema.json#/$defs/eventType` (a test compares them).
pub const CATALOGUE_EVENT_TYPES: [&str; 31] = [
    "tool.before",
    "tool.after",
    "session.start",
    "config.change.before",
    "turn.start",
    "turn.finish.before",
    "model.request.before",
    "model.response.after",
    "model.switch.before",
    "tool.permission.request",
    "tool.batch.after",
    "context.compact.before",
    "context.compact.after",
    "task.change.before",
    "user.elicitation.request",
    "user.elicitation.result",
    "user.message.inbound",
    "user.message.outbound",
    "workspace.change.before",
    "session.end",
    "config.change.after",
    "turn.end",
    "turn.progress",
    "model.error",
    "model.switch.after",
    "tool.permission.resolved",
    "tool.progress",
    "task.change.after",
    "user.attention",
    "workspace.change.after",
    "file.changed",
];

/// The capabilities of the three events the catalogue manifest also offers
/// for interception.
fn catalogue_intercepted(event: &str) -> Option<Value> {
    Some(match event {
        "tool.before" => json!({
            "effects": ["deny", "allow", "ask", "modify", "message", "flow"],
            "modify": {"input": {"replace": true, "merge": true}},
            "flow": {"operations": ["stop"]},
        }),
        "tool.after" => json!({
            "effects": ["modify", "message"],
            "modify": {"output": {"replace": true, "merge": false}},
        }),
        "turn.start" => json!({"effects": ["deny", "message"]}),
        _ => return None,
    })
}

/// `M`, the catalogue suite's manifest (docs/CATALOGUE.md, "Discovery"),
/// built here, fresh at every call: every catalogue event in observe mode,
/// `tool.before`, `tool.after` and `turn.start` also in intercept mode.
pub fn catalogue_manifest() -> Value {
    let events: Vec<Value> = CATALOGUE_EVENT_TYPES
        .iter()
        .map(|event| match catalogue_intercepted(event) {
            Some(caps) => {
                json!({"event": event, "modes": ["intercept", "observe"], "capabilities": caps})
            }
            None => json!({"event": event, "modes": ["observe"]}),
        })
        .collect();
    json!({
        "events": events,
        "gaps": [],
        "transports": ["http"],
        "authentication": ["bearer"],
        "toolPaths": ["native"],
        "contentCategories": ["text"],
        "limits": {"minTimeoutMs": 100, "maxTimeoutMs": 30000},
        "managedPolicy": {"scopes": ["user", "project"], "disableable": true},
        "correlationIdentityFields": ["session.id", "call.id"],
    })
}

/// The result of `hooks/capabilities` in the catalogue suite.
pub fn catalogue_discovery_result() -> Value {
    json!({"protocolVersion": PROTOCOL_VERSION, "manifest": catalogue_manifest()})
}
