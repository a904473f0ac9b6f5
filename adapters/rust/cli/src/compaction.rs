//! The compaction suite (docs/COMPACTION.md): the lifecycle chain model at
//! `context.compact.before`, then, when something was compacted, at
//! `context.compact.after`.
//!
//! Server: serves `<run id>:before` and `<run id>:after` of every run, the
//! n-th receipt of each answered by the n-th entry of
//! `responseSequences.before` / `.after` (the last again past the end; the
//! step engine's scripted faults, `ahp_contract::steps::server`), never held. A request invalid against
//! `intercept-request`, whose id is no run's boundary id, or whose text parts
//! carry `body` gets `-32602` and is not recorded. Every valid
//! `hooks/observe` is recorded `observed` and answered 204.
//!
//! Client (the host): per run the before chain, the host's outcome from the
//! core rules' result of the settled boundary (`ahp_sdk::compaction`), then,
//! when something was compacted, the derived after request through the
//! after chain; the chains are driven as the lifecycle suite's, by the step
//! engine (`ahp_contract::steps::chain`). Per negative, the request sent unchanged and
//! the JSON-RPC error code of its answer. It never reads `expected` or
//! `proof`.

use std::collections::HashMap;
use std::sync::Arc;

use ahp_contract::backend::{rpc_error, INTERNAL_ERROR, INVALID_PARAMS};
use ahp_contract::config::Scenario;
use ahp_contract::entries::{OBSERVED, RECEIVED, REPLIED};
use ahp_contract::registry::Suite;
use ahp_contract::steps::chain::{call_all, settle};
use ahp_contract::steps::server::{fault_of, route, MALFORMED_BODY, SERVER_ERROR, TIMEOUT};
use ahp_contract::suite_client::{failed, unsupported, Answer, RowError, SuiteClient, SuiteRows};
use ahp_contract::suite_config::{SuiteSpec, COMPACTION};
use ahp_contract::suite_server::{SuiteAnswer, SuiteDispatcher, SuiteServer, SuiteShared};
use ahp_contract::{log, path, Failure};
use ahp_sdk::chain::{Chain, Settlement, Subscription, SubscriptionError};
use ahp_sdk::compaction::{after_request, host_outcome, refusal, run_actual, COMPACT_BEFORE};
use ahp_sdk::json::{encode, integer_value};
use ahp_sdk::schemas::{Schemas, INTERCEPT_REQUEST, INTERCEPT_RESPONSE, OBSERVE_NOTIFICATION};
use serde_json::{json, Map, Value};

/// The compaction suite's entry in the registry (`suites::SUITES`): no uploads, no
/// content sources (compaction text is inline).
pub const SUITE: Suite = Suite {
    spec: SuiteSpec {
        name: COMPACTION,
        upload_auth: false,
        upload: false,
        content_sources: false,
    },
    schemas: &[INTERCEPT_REQUEST, INTERCEPT_RESPONSE, OBSERVE_NOTIFICATION],
    server: new_server,
    client: rows,
};

/// The two boundaries of a run, by the suffix of their request ids.
const PHASES: [&str; 2] = ["before", "after"];

/// The control calls a compaction server answers besides `/shutdown`
/// (`/release` is answered and changes nothing: no reply is ever held).
const CONTROL_CALLS: &[&str] = &["/wait", "/release", "/mark", "/wait-observed"];

fn is_negative(row: &Scenario) -> bool {
    row.raw.contains_key("negative")
}

// ------------------------------------------------------------------ the server

/// The AHP side of a compaction server.
pub struct Server {
    schemas: Arc<Schemas>,
    shared: Arc<SuiteShared>,
    /// `<run id>:<phase>` -> the run and the phase (the first run naming an id wins)
    requests: HashMap<String, (Arc<Scenario>, &'static str)>,
}

fn new_server(
    process: &mut SuiteServer,
    schemas: Arc<Schemas>,
) -> Result<Arc<dyn SuiteDispatcher>, Failure> {
    process.control_calls = Some(CONTROL_CALLS.iter().map(|c| c.to_string()).collect());
    Ok(Arc::new(Server::new(
        schemas,
        process.shared.clone(),
        &process.settings.base.scenarios,
    )))
}

impl Server {
    pub fn new(schemas: Arc<Schemas>, shared: Arc<SuiteShared>, rows: &[Scenario]) -> Server {
        let mut requests = HashMap::new();
        for row in rows.iter().filter(|r| !is_negative(r)) {
            let row = Arc::new(row.clone());
            for phase in PHASES {
                requests
                    .entry(format!("{}:{phase}", row.id))
                    .or_insert_with(|| (row.clone(), phase));
            }
        }
        Server {
            schemas,
            shared,
            requests,
        }
    }

    fn intercept(&self, msg: &Map<String, Value>) -> SuiteAnswer {
        let value = Value::Object(msg.clone());
        let id = msg.get("id").cloned().unwrap_or(Value::Null);
        if let Some(why) = refusal(&self.schemas, &value, |i| self.requests.contains_key(i)) {
            log(
                "server",
                &format!("intercept {} refused: {why}", encode(&id)),
            );
            return SuiteAnswer::reply(rpc_error(Some(&id), INVALID_PARAMS, &why, None));
        }
        let sid = id.as_str().unwrap_or_default().to_string();
        let (row, phase) = &self.requests[&sid];
        let n = self
            .shared
            .entries
            .record(json!({"kind": RECEIVED, "id": id, "message": value}), "id");
        let entries = self.shared.entries.clone();
        let rid = id.clone();
        let replied = move || {
            entries.record(json!({"kind": REPLIED, "id": rid}), "id");
        };
        let sequence = row
            .raw
            .get("responseSequences")
            .and_then(|s| s.get(*phase))
            .and_then(Value::as_array)
            .filter(|s| !s.is_empty())
            .cloned();
        let Some(sequence) = sequence else {
            let text = format!(
                "run {} has no responseSequences.{phase}",
                encode(&Value::String(row.id.clone()))
            );
            log("server", &format!("intercept {sid}: {text}"));
            return SuiteAnswer::reply(rpc_error(Some(&id), INTERNAL_ERROR, &text, None))
                .with_before(replied);
        };
        let response = sequence[n.min(sequence.len()) - 1].clone();
        match fault_of(&response) {
            Some(TIMEOUT) => {
                log(
                    "server",
                    &format!("intercept {sid}: a scripted timeout (receipt {n})"),
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
            .with_before(replied),
            Some(_) => SuiteAnswer {
                raw: Some(MALFORMED_BODY.to_vec()),
                ..SuiteAnswer::default()
            }
            .with_before(replied),
            None => SuiteAnswer::reply(response).with_before(replied),
        }
    }

    /// Records every schema-valid `hooks/observe`; answers 204 (nothing adversarial).
    fn observe(&self, msg: &Map<String, Value>) -> SuiteAnswer {
        let value = Value::Object(msg.clone());
        if let Some(problem) = self.schemas.check(OBSERVE_NOTIFICATION, &value) {
            log("server", &format!("invalid observation: {problem}"));
            return SuiteAnswer::status(400);
        }
        let event = path(&value, &["params", "event"])
            .cloned()
            .unwrap_or(Value::Null);
        let event_id = event.get("id").cloned().unwrap_or(Value::Null);
        self.shared.entries.record(
            json!({"kind": OBSERVED, "eventId": event_id, "event": event, "message": value}),
            "eventId",
        );
        SuiteAnswer::none()
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

// ------------------------------------------------------------------ the client

fn rows() -> Box<dyn SuiteRows> {
    Box::new(Rows)
}

struct Rows;

impl SuiteRows for Rows {
    fn row(&mut self, client: &mut SuiteClient, row: &Scenario) -> Result<Value, RowError> {
        if is_negative(row) {
            negative(client, row)
        } else {
            run(client, row)
        }
    }

    /// The lifecycle report's keys: nothing is uploaded here.
    fn report_extra(&self, _client: &SuiteClient, report: &mut Map<String, Value>) {
        report.insert("contentUploads".into(), json!([]));
    }
}

/// Sends the row's `negative` unchanged (no SDK check) and reports the
/// JSON-RPC error code of its answer (`null` when it has none), whatever
/// the HTTP status.
fn negative(c: &mut SuiteClient, row: &Scenario) -> Result<Value, RowError> {
    let msg = row.raw.get("negative").cloned().unwrap_or(Value::Null);
    let (status, answer) = c
        .exchange_at("", &msg, c.timeout())
        .map_err(|e| failed(format!("negative: {e}")))?;
    let code = match &answer {
        Answer::Parsed(v) => path(v, &["error", "code"])
            .filter(|code| integer_value(code).is_some() && !code.is_boolean())
            .cloned(),
        Answer::Malformed(why) => {
            log(
                "client",
                &format!("{}: the answer is not JSON: {why}", row.id),
            );
            None
        }
        Answer::Empty => None,
    };
    if code.is_none() {
        log(
            "client",
            &format!(
                "{}: the negative's answer (status {status}) carries no error",
                row.id
            ),
        );
    }
    Ok(json!({"error": code}))
}

fn subscriptions(row: &Scenario, phase: &str) -> Result<Vec<Subscription>, RowError> {
    let Some(list) = row.raw.get(phase) else {
        return Ok(Vec::new());
    };
    Subscription::parse_list(list).map_err(|e| match e {
        SubscriptionError::Invalid(s) => failed(format!("{phase}: {s}")),
        SubscriptionError::Unsupported(s) => unsupported(s),
    })
}

/// One boundary: `request` (validated) through `subs` against a server
/// that never holds (nothing is released), `chain-settled` marked for
/// `rid`, then its notifications.
fn boundary(
    c: &mut SuiteClient,
    sid: &str,
    rid: &str,
    request: Value,
    subs: Vec<Subscription>,
) -> Result<Chain, RowError> {
    let request = c.checked(request, INTERCEPT_REQUEST)?;
    let mut chain = Chain::new(request, subs).map_err(unsupported)?;
    call_all(c, sid, &mut chain)?;
    settle(c, sid, rid, &chain, false)?;
    Ok(chain)
}

/// One run (docs/COMPACTION.md, "What the host (client) does for a run").
fn run(c: &mut SuiteClient, row: &Scenario) -> Result<Value, RowError> {
    let request = match row.raw.get("request") {
        Some(r @ Value::Object(_)) => r.clone(),
        _ => return Err(failed("the run has no request object")),
    };
    let event_type = path(&request, &["params", "event", "type"]);
    if event_type.and_then(Value::as_str) != Some(COMPACT_BEFORE) {
        return Err(unsupported(format!(
            "the run's request is a {} intercept, not a {COMPACT_BEFORE} one",
            event_type.map(encode).unwrap_or_else(|| "none".into())
        )));
    }
    let before_subs = subscriptions(row, "before")?;
    let after_subs = subscriptions(row, "after")?;
    let sid = row.id.as_str();
    let before_id = format!("{sid}:before");
    let request = c.prepare(&request)?;
    let before = boundary(c, sid, &before_id, request, before_subs)?;
    let host = host_outcome(&c.schemas, &before, &format!("{sid}:summary")).map_err(failed)?;
    let mut after: Option<Settlement> = None;
    if host.applied {
        let (Some(summary), Some(execution)) = (&host.summary, &host.execution) else {
            return Err(failed("an applied compaction without a summary"));
        };
        let after_id = format!("{sid}:after");
        let msg = after_request(
            &after_id,
            before.request(),
            summary,
            execution,
            row.raw.get("afterObserveOnly") == Some(&Value::Bool(true)),
        );
        let chain = boundary(c, sid, &after_id, msg, after_subs)?;
        after = Some(chain.settlement());
    }
    Ok(run_actual(&before.settlement(), &host, after.as_ref()))
}
