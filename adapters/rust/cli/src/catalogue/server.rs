//! The catalogue server's AHP side (docs/CATALOGUE.md, "Discovery", "The
//! receiver", "Readings settled"): `hooks/capabilities` answered with the
//! catalogue manifest `M` and recorded `discovery` just before the answer
//! is written (an invalid request: `-32602`, recorded too); every
//! `hooks/observe` judged schema, then lineage, its verdict recorded before
//! the answer (`rejected` 400 / 409, `observed` 202; over stdio never
//! answered); `GET /capabilities` answered with the bare capabilities of
//! `M`'s `tool.before` entry and not recorded; any other
//! request `-32601`, any other notification 204, neither recorded.

use std::sync::{Arc, Mutex};

use ahp_contract::backend::{rpc_error, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND};
use ahp_contract::entries::{EntryLog, DISCOVERY, OBSERVED, REJECTED};
use ahp_contract::suite_server::{SuiteAnswer, SuiteDispatcher, SuiteServer};
use ahp_contract::{log, path, Failure};
use ahp_sdk::json::encode;
use ahp_sdk::lineage::{event_id_of, Delivery, ErrorKind, Lineage};
use ahp_sdk::manifest::catalogue_discovery_result;
use ahp_sdk::schemas::{Schemas, CAPABILITIES_REQUEST};
use serde_json::{json, Map, Value};

/// The only POST control call besides `/shutdown` (docs/CATALOGUE.md, "Control").
pub const CONTROL_CALLS: &[&str] = &["/wait-observed"];

/// The dispatcher: one receipt log, one lineage state for the process.
pub struct Server {
    schemas: Arc<Schemas>,
    entries: Arc<EntryLog>,
    /// held while a verdict is reached and recorded, so receipts keep the
    /// order lineage saw
    lineage: Mutex<Lineage>,
}

/// `ahp_contract::registry::Suite::server` of the catalogue suite: `/wait-observed`
/// counts `observed` and `rejected` entries, and no POST control call but it
/// (and `/shutdown`) is served.
pub fn new(
    process: &mut SuiteServer,
    schemas: Arc<Schemas>,
) -> Result<Arc<dyn SuiteDispatcher>, Failure> {
    process.observed_kinds = vec![OBSERVED.into(), REJECTED.into()];
    process.control_calls = Some(CONTROL_CALLS.iter().map(|c| c.to_string()).collect());
    Ok(Arc::new(Server::new(
        schemas,
        process.shared.entries.clone(),
    )))
}

/// The answer to a valid discovery request with this id.
pub fn discovery_response(id: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": catalogue_discovery_result()})
}

impl Server {
    pub fn new(schemas: Arc<Schemas>, entries: Arc<EntryLog>) -> Server {
        Server {
            schemas,
            entries,
            lineage: Mutex::new(Lineage::new()),
        }
    }

    fn discovery(&self, msg: &Map<String, Value>, id: &Value) -> SuiteAnswer {
        let request = Value::Object(msg.clone());
        let response = match self.schemas.check(CAPABILITIES_REQUEST, &request) {
            Some(problem) => {
                log("server", &format!("invalid discovery request: {problem}"));
                rpc_error(
                    Some(id),
                    INVALID_PARAMS,
                    "invalid capabilities request",
                    None,
                )
            }
            None => discovery_response(id),
        };
        let entry = json!({"kind": DISCOVERY, "request": request, "response": response});
        let entries = self.entries.clone();
        SuiteAnswer::reply(response).with_before(move || {
            entries.record(entry, "id");
        })
    }

    fn observe(&self, message: &Value) -> SuiteAnswer {
        let event_id = event_id_of(message);
        let mut lineage = self.lineage.lock().unwrap_or_else(|p| p.into_inner());
        match lineage.deliver(&self.schemas, message) {
            Delivery::Accepted { redelivery } => {
                let event = path(message, &["params", "event"])
                    .cloned()
                    .unwrap_or(Value::Null);
                self.entries.record(
                    json!({"kind": OBSERVED, "eventId": event_id, "event": event, "message": message}),
                    "eventId",
                );
                if redelivery {
                    log(
                        "server",
                        &format!("observation {}: a redelivery", encode(&event_id)),
                    );
                }
                SuiteAnswer::status(202)
            }
            Delivery::Rejected { error_kind, reason } => {
                log(
                    "server",
                    &format!(
                        "observation {} rejected ({}): {reason}",
                        encode(&event_id),
                        error_kind.as_str()
                    ),
                );
                self.entries.record(
                    json!({"kind": REJECTED, "eventId": event_id, "message": message,
                           "errorKind": error_kind.as_str()}),
                    "eventId",
                );
                SuiteAnswer::status(match error_kind {
                    ErrorKind::Schema => 400,
                    ErrorKind::Lineage => 409,
                })
            }
        }
    }
}

impl SuiteDispatcher for Server {
    fn dispatch(&self, message: &Value) -> SuiteAnswer {
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
            return self.observe(message); // one with an id fails the schema (400)
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
        if method == "hooks/capabilities" {
            return self.discovery(msg, id);
        }
        log(
            "server",
            &format!(
                "method {} is not served by the catalogue suite",
                msg.get("method").map(encode).unwrap_or_default()
            ),
        );
        SuiteAnswer::reply(rpc_error(
            Some(id),
            METHOD_NOT_FOUND,
            "method not found",
            None,
        ))
    }

    /// `M`: `GET /capabilities` (for upstream clients) answers the bare
    /// capabilities of its `tool.before` entry, not recorded (it is no
    /// request a client sent).
    fn manifest(&self) -> Value {
        ahp_sdk::manifest::catalogue_manifest()
    }
}
