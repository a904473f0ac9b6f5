//! The step server's AHP side (docs/LIFECYCLE.md, "Server"; the lifecycle
//! suite's server, and so the isolation suite's): every intercept of a
//! scenario request is received, then held until released and answered
//! from `responseSequences` (the n-th receipt, the last again) or
//! `responses`, unchanged, with the scripted faults **[ext]**; every valid
//! observation naming stored content is recorded and, for a scenario event,
//! answered by an unsolicited adversarial intercept response (or never, for
//! a silent observer **[ext]**); a notification of the boundary event of a
//! chain with `holdObservers` is recorded `{"kind": "observer-blocked", "id":
//! EVENT}` just before its `observed` entry, as upstream servers record it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use ahp_sdk::chain::body_refs;
use ahp_sdk::json::encode;
use ahp_sdk::schemas::{Schemas, INTERCEPT_REQUEST, OBSERVE_NOTIFICATION};
use serde_json::{json, Map, Value};

use crate::backend::{
    rpc_error, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND,
};
use crate::config::Scenario;
use crate::entries::{OBSERVED, OBSERVER_BLOCKED, RECEIVED, REPLIED};
use crate::suite_server::{SuiteAnswer, SuiteDispatcher, SuiteServer, SuiteShared};
use crate::{log, path, Failure};

// Scripted faults [ext]: a responseSequences entry {"fault": KIND}; an
// observeFaults entry "silent".
pub const SERVER_ERROR: &str = "server-error";
pub const MALFORMED: &str = "malformed";
pub const TIMEOUT: &str = "timeout";
pub const SILENT: &str = "silent";

/// The 25 bytes a `malformed` fault sends (not JSON).
pub const MALFORMED_BODY: &[u8] = b"{\"jsonrpc\": \"2.0\", \"id\": ";

/// What a scenario event's observation is answered with: a client must ignore it.
pub fn unsolicited_observer() -> Value {
    json!({"jsonrpc": "2.0", "id": "unsolicited-observer", "result": {
        "protocolVersion": "draft",
        "effects": [{"type": "deny", "reason": "observer must not decide"}]}})
}

/// The fault a sequence entry scripts, if it is one.
pub fn fault_of(entry: &Value) -> Option<&'static str> {
    let m = entry.as_object().filter(|m| m.len() == 1)?;
    match m.get("fault")?.as_str()? {
        SERVER_ERROR => Some(SERVER_ERROR),
        MALFORMED => Some(MALFORMED),
        TIMEOUT => Some(TIMEOUT),
        _ => None,
    }
}

struct Found {
    row: Arc<Scenario>,
    key: String,
}

/// The dispatcher: scenario requests by request id and by event id (the first wins).
pub struct Server {
    schemas: Arc<Schemas>,
    shared: Arc<SuiteShared>,
    requests: HashMap<String, Found>,
    events: HashMap<String, Found>,
    /// the boundary event ids (`requests.a`'s event) of the chains with held observers
    held_observers: HashSet<String>,
}

/// `registry::Suite::server` of the lifecycle suite.
pub fn new(
    process: &mut SuiteServer,
    schemas: Arc<Schemas>,
) -> Result<Arc<dyn SuiteDispatcher>, Failure> {
    Ok(Arc::new(Server::new(
        schemas,
        process.shared.clone(),
        &process.settings.base.scenarios,
    )))
}

impl Server {
    pub fn new(schemas: Arc<Schemas>, shared: Arc<SuiteShared>, rows: &[Scenario]) -> Server {
        let mut s = Server {
            schemas,
            shared,
            requests: HashMap::new(),
            events: HashMap::new(),
            held_observers: HashSet::new(),
        };
        for row in rows {
            let held = row.raw.get("chain").and_then(|c| c.get("holdObservers"))
                == Some(&Value::Bool(true));
            let boundary = row
                .raw
                .get("requests")
                .and_then(|r| path(r, &["a", "params", "event", "id"]));
            if let (true, Some(Value::String(id))) = (held, boundary) {
                s.held_observers.insert(id.clone());
            }
            let row = Arc::new(row.clone());
            let Some(Value::Object(requests)) = row.raw.get("requests") else {
                continue;
            };
            let mut keys: Vec<&String> = requests.keys().collect();
            keys.sort();
            for key in keys {
                let r = &requests[key];
                let found = || Found {
                    row: row.clone(),
                    key: key.clone(),
                };
                if let Some(id) = r.get("id").and_then(Value::as_str) {
                    s.requests.entry(id.to_string()).or_insert_with(found);
                }
                if let Some(id) = path(r, &["params", "event", "id"]).and_then(Value::as_str) {
                    s.events.entry(id.to_string()).or_insert_with(found);
                }
            }
        }
        s
    }

    fn missing_ref(&self, msg: &Value) -> Option<String> {
        path(msg, &["params", "event", "items"])
            .map(body_refs)
            .unwrap_or_default()
            .into_iter()
            .find(|r| !self.shared.store.has(r))
    }

    fn intercept(&self, msg: &Map<String, Value>) -> SuiteAnswer {
        let value = Value::Object(msg.clone());
        let id = msg.get("id").cloned().unwrap_or(Value::Null);
        let n = self
            .shared
            .entries
            .record(json!({"kind": RECEIVED, "id": id, "message": value}), "id");
        let entries = self.shared.entries.clone();
        let rid = id.clone();
        let replied = move || {
            entries.record(json!({"kind": REPLIED, "id": rid}), "id");
        };
        let refuse = |status: u16, text: String| {
            log("server", &format!("intercept {}: {text}", encode(&id)));
            SuiteAnswer::reply(rpc_error(Some(&id), INVALID_PARAMS, &text, None))
                .with_status(status)
                .with_before(replied.clone())
        };
        if let Some(problem) = self.schemas.check(INTERCEPT_REQUEST, &value) {
            return refuse(0, format!("invalid intercept request: {problem}"));
        }
        if let Some(r) = self.missing_ref(&value) {
            return refuse(
                409,
                format!(
                    "no stored content for body ref {}",
                    encode(&Value::String(r))
                ),
            );
        }
        let Some(found) = id.as_str().and_then(|i| self.requests.get(i)) else {
            return refuse(0, "unknown scenario request id".into());
        };
        let raw = &found.row.raw;
        let sequence = raw
            .get("responseSequences")
            .and_then(|s| s.get(&found.key))
            .and_then(Value::as_array)
            .filter(|s| !s.is_empty())
            .cloned();
        let response = match sequence {
            Some(seq) => seq[n.min(seq.len()) - 1].clone(),
            None => match raw.get("responses").and_then(|r| r.get(&found.key)) {
                Some(r) => r.clone(),
                None => {
                    return refuse(
                        0,
                        format!(
                            "scenario {} has no response for {}",
                            found.row.id, found.key
                        ),
                    )
                }
            },
        };
        let gate = id.as_str().unwrap_or_default().to_string();
        match fault_of(&response) {
            Some(TIMEOUT) => {
                log(
                    "server",
                    &format!("intercept {gate}: a scripted timeout (receipt {n})"),
                );
                SuiteAnswer::never()
            }
            Some(SERVER_ERROR) => SuiteAnswer::reply(rpc_error(
                Some(&id),
                INTERNAL_ERROR,
                "scripted server error",
                None,
            ))
            .with_status(500)
            .with_gate(gate)
            .with_before(replied),
            Some(_) => SuiteAnswer {
                raw: Some(MALFORMED_BODY.to_vec()),
                ..SuiteAnswer::default()
            }
            .with_gate(gate)
            .with_before(replied),
            None => SuiteAnswer::reply(response)
                .with_gate(gate)
                .with_before(replied),
        }
    }

    fn observe(&self, msg: &Map<String, Value>) -> SuiteAnswer {
        let value = Value::Object(msg.clone());
        if let Some(problem) = self.schemas.check(OBSERVE_NOTIFICATION, &value) {
            log("server", &format!("invalid observation: {problem}"));
            return SuiteAnswer::status(400);
        }
        if let Some(r) = self.missing_ref(&value) {
            log(
                "server",
                &format!(
                    "an observation names no stored content: {}",
                    encode(&Value::String(r))
                ),
            );
            return SuiteAnswer::status(409);
        }
        let event = path(&value, &["params", "event"])
            .cloned()
            .unwrap_or(Value::Null);
        let event_id = event.get("id").cloned().unwrap_or(Value::Null);
        // a held observer, recorded as upstream servers do (the client marks it too)
        let blocked = event_id
            .as_str()
            .filter(|e| self.held_observers.contains(*e))
            .map(|e| json!({"kind": OBSERVER_BLOCKED, "id": e}));
        let n = self.shared.entries.record_after(
            blocked,
            json!({"kind": OBSERVED, "eventId": event_id, "event": event, "message": value}),
            "eventId",
        );
        let Some(found) = event_id.as_str().and_then(|e| self.events.get(e)) else {
            return SuiteAnswer::none();
        };
        let silent = found
            .row
            .raw
            .get("observeFaults")
            .and_then(|f| f.get(&found.key))
            .and_then(Value::as_array)
            .and_then(|faults| faults.get(n - 1))
            .is_some_and(|f| f.as_str() == Some(SILENT));
        if silent {
            log(
                "server",
                &format!(
                    "observation {n} of {}: a silent observer",
                    encode(&event_id)
                ),
            );
            return SuiteAnswer::never();
        }
        // deliberately adversarial: a client must ignore it
        SuiteAnswer::reply(unsolicited_observer())
    }
}

impl SuiteDispatcher for Server {
    fn dispatch(&self, message: &Value) -> SuiteAnswer {
        route(message, |m| self.observe(m), |m| self.intercept(m))
    }

    /// The core discovery manifest, as `hooks/capabilities` answers (`route`).
    fn manifest(&self) -> Value {
        ahp_sdk::manifest::manifest()
    }
}

/// The routing of a suite server whose only AHP methods are `hooks/observe`
/// and `hooks/intercept` (lifecycle, compaction): anything but an object is
/// -32600; `hooks/observe` goes to `observe` (one with an id fails its schema
/// there, 400); another notification is ignored; `hooks/capabilities` answers
/// the core discovery result; another method is -32601.
pub fn route(
    message: &Value,
    observe: impl FnOnce(&Map<String, Value>) -> SuiteAnswer,
    intercept: impl FnOnce(&Map<String, Value>) -> SuiteAnswer,
) -> SuiteAnswer {
    let Some(msg) = message.as_object() else {
        return SuiteAnswer::reply(rpc_error(
            None,
            INVALID_REQUEST,
            "not a single JSON-RPC object",
            None,
        ));
    };
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    if method == "hooks/observe" {
        return observe(msg);
    }
    let Some(id) = msg.get("id") else {
        log(
            "server",
            &format!(
                "ignored a notification {}",
                msg.get("method").map(encode).unwrap_or_default()
            ),
        );
        return SuiteAnswer::none();
    };
    match method {
        "hooks/intercept" => intercept(msg),
        "hooks/capabilities" => SuiteAnswer::reply(
            json!({"jsonrpc": "2.0", "id": id, "result": ahp_sdk::manifest::discovery_result()}),
        ),
        _ => SuiteAnswer::reply(rpc_error(
            Some(id),
            METHOD_NOT_FOUND,
            "method not found",
            None,
        )),
    }
}
