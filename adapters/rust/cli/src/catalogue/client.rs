//! The catalogue client (docs/CATALOGUE.md): one `hooks/capabilities`
//! before the first row (over HTTP a POST to `<base>/capabilities`, over
//! stdio one line), its `result.manifest` kept for the `register` steps;
//! then each row's steps in order: `notify` (sent unchanged only when the
//! SDK finds it a valid `hooks/observe`), `rawNotify` (sent unchanged,
//! unchecked), each sent message followed by `POST /wait-observed`;
//! `register` (evaluated against the discovered manifest, nothing sent).
//! A row's `actual` is `{sent, registrations}`; the report adds
//! `discovery`, the whole response as it arrived. It never reads `expected`.

use std::collections::HashMap;

use ahp_contract::config::Scenario;
use ahp_contract::suite_client::{failed, unsupported, Answer, RowError, SuiteClient, SuiteRows};
use ahp_contract::{log, path};
use ahp_sdk::json::{encode, equal};
use ahp_sdk::registration::evaluate;
use ahp_sdk::schemas::{CAPABILITIES_REQUEST, CAPABILITIES_RESPONSE, OBSERVE_NOTIFICATION};
use serde_json::{json, Map, Value};

/// The step ops this client runs.
pub const OPS: &[&str] = &["notify", "rawNotify", "register"];

/// The HTTP answers of a receiver that judged a notification (202 or 204
/// accepted, 400 and 409 rejected); any other status means it refused the
/// message before judging it, and the row fails.
pub const VERDICT_STATUSES: &[u16] = &[202, 204, 400, 409];

/// The one discovery request of a run.
pub fn discovery_request() -> Value {
    json!({"jsonrpc": "2.0", "id": "discovery", "method": "hooks/capabilities",
           "params": {"protocolVersion": "draft"}})
}

/// `ahp_contract::registry::Suite::client` of the catalogue suite.
pub fn rows() -> Box<dyn SuiteRows> {
    Box::new(Rows {
        discovery: Value::Null,
        manifest: None,
        manifest_problem: "no discovery was made".into(),
        sent: HashMap::new(),
    })
}

/// What a run keeps across its rows.
struct Rows {
    /// the discovery response as it arrived (null: nothing did)
    discovery: Value,
    /// its `result.manifest` when the response is usable
    manifest: Option<Value>,
    /// why there is no manifest
    manifest_problem: String,
    /// messages sent per event id (this run)
    sent: HashMap<String, usize>,
}

impl Rows {
    fn no_manifest(&mut self, why: String) {
        log("client", &format!("discovery: {why}"));
        self.manifest_problem = why;
    }

    fn discover(&mut self, client: &mut SuiteClient) {
        let request = discovery_request();
        if let Some(p) = client.schemas.check(CAPABILITIES_REQUEST, &request) {
            return self.no_manifest(format!("the discovery request is invalid: {p}"));
        }
        let (status, answer) = match client.exchange_at("capabilities", &request, client.timeout())
        {
            Ok(x) => x,
            Err(e) => return self.no_manifest(e.to_string()),
        };
        let answer = match answer {
            Answer::Parsed(v) => v,
            Answer::Empty => return self.no_manifest(format!("HTTP {status} without a body")),
            Answer::Malformed(e) => {
                return self.no_manifest(format!("the answer is not strict JSON: {e}"))
            }
        };
        self.discovery = answer.clone();
        if !client.stdio && status != 200 {
            return self.no_manifest(format!("HTTP status {status}"));
        }
        if let Some(p) = client.schemas.check(CAPABILITIES_RESPONSE, &answer) {
            return self.no_manifest(format!("the answer is not a capabilities response: {p}"));
        }
        let id = answer.get("id").unwrap_or(&Value::Null);
        if !equal(id, &request["id"]) {
            return self.no_manifest(format!(
                "the answer's id {} is not the request's",
                encode(id)
            ));
        }
        match path(&answer, &["result", "manifest"]) {
            Some(m) => self.manifest = Some(m.clone()),
            None => self.no_manifest("the answer has no result.manifest".into()),
        }
    }

    /// Sends one notification unchanged through the real transport (over
    /// HTTP to `<base>/observe`, its answer a verdict status), then `POST
    /// /wait-observed` with its event id and this run's count of them.
    fn deliver(&mut self, client: &mut SuiteClient, message: &Value) -> Result<(), RowError> {
        let Some(event_id) = path(message, &["params", "event", "id"]).and_then(Value::as_str)
        else {
            return Err(failed(
                "the message has no string params.event.id to wait for",
            ));
        };
        if let Some(h) = &client.http {
            let (status, _) = h
                .exchange_at("observe", message, client.timeout())
                .map_err(|e| failed(format!("notification: {e}")))?;
            if !VERDICT_STATUSES.contains(&status) {
                return Err(failed(format!(
                    "the receiver answered HTTP {status}: it refused the notification before judging it"
                )));
            }
        } else {
            client
                .channel
                .notify(message)
                .map_err(|e| failed(format!("notification: {e}")))?;
        }
        let n = self.sent.entry(event_id.to_string()).or_default();
        *n += 1;
        let count = *n;
        client.post(
            "/wait-observed",
            json!({"eventId": event_id, "count": count}),
        )
    }

    /// A `register` step's verdict against the discovered manifest.
    fn register(&self, client: &SuiteClient, row: &str, step: &Value) -> Result<Value, RowError> {
        let Some(requirements) = step.get("requirements").and_then(Value::as_array) else {
            return Err(failed("requirements must be a list"));
        };
        let Some(context) = step.get("context").and_then(Value::as_object) else {
            return Err(failed("context must be an object"));
        };
        let Some(manifest) = &self.manifest else {
            return Err(failed(format!(
                "no discovered manifest ({})",
                self.manifest_problem
            )));
        };
        let document = step.get("registration").unwrap_or(&Value::Null);
        let verdict = evaluate(&client.schemas, document, manifest, requirements, context);
        if let ahp_sdk::registration::RegistrationVerdict::Rejected { rule, reason } = &verdict {
            log(
                "client",
                &format!("{row}: registration rejected ({rule}): {reason}"),
            );
        }
        Ok(verdict.entry())
    }
}

/// The op of a step, when it is one this client runs.
fn op_of(step: &Value) -> Option<&'static str> {
    let op = step.get("op")?.as_str()?;
    OPS.iter().copied().find(|o| *o == op)
}

impl SuiteRows for Rows {
    fn begin(&mut self, client: &mut SuiteClient) {
        self.discover(client);
    }

    fn row(&mut self, client: &mut SuiteClient, row: &Scenario) -> Result<Value, RowError> {
        let Some(Value::Array(steps)) = row.raw.get("steps") else {
            return Err(failed("the scenario has no steps array"));
        };
        if let Some(step) = steps.iter().find(|s| op_of(s).is_none()) {
            return Err(unsupported(format!(
                "step op {} is not implemented by ahp-rust",
                step.get("op").map(encode).unwrap_or_else(|| "none".into())
            )));
        }
        let (mut sent, mut registrations) = (Vec::new(), Vec::new());
        for (i, step) in steps.iter().enumerate() {
            let op = op_of(step).unwrap_or_default();
            let done = match (op, step.get("message")) {
                ("register", _) => self
                    .register(client, &row.id, step)
                    .map(|entry| registrations.push(entry)),
                (_, None) => Err(failed("the step has no message")),
                (_, Some(message)) => {
                    if op == "notify" {
                        if let Some(p) = client.schemas.check(OBSERVE_NOTIFICATION, message) {
                            log(
                                "client",
                                &format!(
                                    "{}: steps[{i}]: not sent, the SDK finds it invalid: {p}",
                                    row.id
                                ),
                            );
                            continue;
                        }
                    }
                    self.deliver(client, message)
                        .map(|()| sent.push(message.clone()))
                }
            };
            done.map_err(|e| failed(format!("steps[{i}] ({op}): {e}")))?;
        }
        Ok(json!({"sent": sent, "registrations": registrations}))
    }

    /// `discovery` (no `contentUploads`: the catalogue uses no uploads).
    fn report_extra(&self, _client: &SuiteClient, report: &mut Map<String, Value>) {
        report.insert("discovery".into(), self.discovery.clone());
    }
}
