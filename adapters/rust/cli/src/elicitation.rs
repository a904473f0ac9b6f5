//! The elicitation suite (docs/ELICITATION.md): a receiver that validates
//! complete elicitation events, and a host that applies a backend's effects
//! at both elicitation boundaries atomically.
//!
//! Server: every message but `hooks/observe` (204, not recorded) is an
//! intercept checked by `ahp_sdk::elicitation::Receiver` in the contract's
//! order, its correlation state spanning the whole file. A refusal is HTTP
//! 400 (409 for content not stored here) with a JSON-RPC `-32602` body
//! (stdio: that error as the answer line) and records nothing; an accepted
//! one is recorded `{"kind": "elicitation", "eventId", "type", "summary"}`
//! and answered with its row's scripted `responses[<id>]`, else the
//! no-effect reply. Uploads, readiness and the control listener are the
//! suite process model's (`/mark` the only POST besides `/shutdown`).
//!
//! Client: per row a `row-start` mark, then a wire row's `upload` / `send`
//! steps (messages sent unchanged but for the body refs of bound aliases,
//! outside the SDK), or an atomic row's two boundaries judged by
//! `ahp_sdk::elicitation`. It never reads `expected` or `responses`.

use std::collections::HashMap;
use std::sync::Arc;

use ahp_contract::config::{self, ConfigError, Scenario};
use ahp_contract::registry::Suite;
use ahp_contract::suite_client::{failed, unsupported, Answer, RowError, SuiteClient, SuiteRows};
use ahp_contract::suite_config::{SuiteSpec, UploadRoute, ELICITATION};
use ahp_contract::suite_server::{SuiteAnswer, SuiteDispatcher, SuiteServer, SuiteShared};
use ahp_contract::upload::{base64_decode, sha256_hex};
use ahp_contract::{log, path, Failure};
use ahp_sdk::chain::rebind_refs;
use ahp_sdk::elicitation::{
    judge_request, judge_result, no_effect_reply, request_form_schema, result_request, FormSchemas,
    Receiver, RequestVerdict, REQUEST_EVENT,
};
use ahp_sdk::json::{encode, integer_value};
use ahp_sdk::schemas::{
    Schemas, CONTENT_UPLOAD_RECEIPT, ELICITATION_REQUEST_PARAMS, ELICITATION_RESULT,
    INTERCEPT_REQUEST, INTERCEPT_RESPONSE, MCP_ELICITATION,
};
use serde_json::{json, Map, Value};

/// The elicitation suite's entry in the registry (`suites::SUITES`): the server
/// needs `uploadAuth`, the client an `upload` block (no content sources).
pub const SUITE: Suite = Suite {
    spec: SuiteSpec {
        name: ELICITATION,
        upload_auth: true,
        upload: true,
        content_sources: false,
    },
    schemas: &[
        INTERCEPT_REQUEST,
        INTERCEPT_RESPONSE,
        CONTENT_UPLOAD_RECEIPT,
        MCP_ELICITATION,
        ELICITATION_REQUEST_PARAMS,
        ELICITATION_RESULT,
    ],
    server: new_server,
    client: rows,
};

/// The one mark this suite's client makes.
pub const ROW_START: &str = "row-start";

/// The environment variable holding an upload token the receiver refuses.
pub const UNAUTHORIZED_TOKEN_ENV: &str = "AHP_INTEROP_UNAUTHORIZED_UPLOAD_TOKEN";

/// The step ops of a wire row.
pub const OPS: &[&str] = &["upload", "send"];

// ------------------------------------------------------------------ the server

/// The AHP side of an elicitation server.
pub struct Server {
    schemas: Arc<Schemas>,
    shared: Arc<SuiteShared>,
    receiver: Receiver,
    /// request id -> the scripted reply (the first row naming an id wins)
    responses: HashMap<String, Value>,
}

/// The scenario file's `authenticatedSource` (else a config error naming `scenarioFile`).
fn authenticated_source(process: &SuiteServer) -> Result<String, Failure> {
    let base = &process.settings.base;
    let bad = |why: String| Failure::Config(ConfigError::new(&base.file, "scenarioFile", why));
    let doc = config::read_json(std::path::Path::new(&base.scenario_file)).map_err(bad)?;
    match doc.get("authenticatedSource") {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        _ => Err(bad(
            "the scenario file has no authenticatedSource string".into()
        )),
    }
}

fn new_server(
    process: &mut SuiteServer,
    schemas: Arc<Schemas>,
) -> Result<Arc<dyn SuiteDispatcher>, Failure> {
    let source = authenticated_source(process)?;
    process.control_calls = Some(vec!["/mark".into()]);
    Ok(Arc::new(Server::new(
        schemas,
        process.shared.clone(),
        &process.settings.base.scenarios,
        &source,
    )))
}

impl Server {
    pub fn new(
        schemas: Arc<Schemas>,
        shared: Arc<SuiteShared>,
        rows: &[Scenario],
        authenticated_source: &str,
    ) -> Server {
        let mut responses = HashMap::new();
        for row in rows {
            if let Some(Value::Object(scripted)) = row.raw.get("responses") {
                for (id, reply) in scripted {
                    responses.entry(id.clone()).or_insert_with(|| reply.clone());
                }
            }
        }
        Server {
            schemas,
            shared,
            receiver: Receiver::new(authenticated_source),
            responses,
        }
    }
}

impl SuiteDispatcher for Server {
    fn dispatch(&self, message: &Value) -> SuiteAnswer {
        if message.get("method").and_then(Value::as_str) == Some("hooks/observe") {
            return SuiteAnswer::none(); // 204 over HTTP, nothing over stdio; not recorded
        }
        let store = &self.shared.store;
        let entries = &self.shared.entries;
        let accepted = self.receiver.accept_then(
            &self.schemas,
            message,
            |r| store.has(r),
            |a| {
                entries.record(a.entry(), "eventId");
            },
        );
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        match accepted {
            Err(refusal) => {
                log(
                    "server",
                    &format!(
                        "intercept {} refused ({}): {}",
                        encode(&id),
                        refusal.status,
                        refusal.message
                    ),
                );
                SuiteAnswer::reply(refusal.answer(message)).with_status(refusal.status)
            }
            Ok(a) => SuiteAnswer::reply(
                self.responses
                    .get(&a.event_id) // the message's id too (step 1)
                    .cloned()
                    .unwrap_or_else(|| no_effect_reply(&id)),
            ),
        }
    }

    /// The adapter's core discovery manifest. This server answers no
    /// `hooks/capabilities` itself (a POSTed one is judged as an intercept
    /// and refused, docs/ELICITATION.md), so `GET /capabilities` answers that
    /// manifest's `tool.before` capabilities, as the other suites' servers do.
    fn manifest(&self) -> Value {
        ahp_sdk::manifest::manifest()
    }
}

// ------------------------------------------------------------------ the client

fn rows() -> Box<dyn SuiteRows> {
    Box::new(Rows {
        forms: FormSchemas::new(),
    })
}

struct Rows {
    /// the requested form schemas, each compiled once for the run
    forms: FormSchemas,
}

/// What of the row this client cannot run, checked before anything is sent.
fn unsupported_in(row: &Scenario) -> Result<(), RowError> {
    if row.raw.contains_key("atomic") {
        return Ok(());
    }
    let Some(Value::Array(steps)) = row.raw.get("steps") else {
        return Err(unsupported("the row has neither atomic nor a steps array"));
    };
    for step in steps {
        let op = step.get("op");
        if !op.and_then(Value::as_str).is_some_and(|o| OPS.contains(&o)) {
            return Err(unsupported(format!(
                "step op {} is not implemented by ahp-rust",
                op.map(encode).unwrap_or_else(|| "none".into())
            )));
        }
    }
    Ok(())
}

impl SuiteRows for Rows {
    fn row(&mut self, client: &mut SuiteClient, row: &Scenario) -> Result<Value, RowError> {
        unsupported_in(row)?;
        client.aliases.clear(); // a row's aliases are its own
        client.mark(&row.id, ROW_START, &row.id)?;
        if row.raw.contains_key("atomic") {
            self.atomic(client, row)
        } else {
            wire(client, row)
        }
    }

    /// `{"language", "results", "receipts"}`: nothing more.
    fn report_extra(&self, _client: &SuiteClient, _report: &mut Map<String, Value>) {}
}

/// The JSON-RPC error code of an answer (None when it has none).
fn error_code(answer: Option<&Value>) -> Value {
    answer
        .and_then(|a| path(a, &["error", "code"]))
        .filter(|c| !c.is_boolean() && integer_value(c).is_some())
        .cloned()
        .unwrap_or(Value::Null)
}

/// A wire row: its steps in order, each after the previous one's answer.
fn wire(c: &mut SuiteClient, row: &Scenario) -> Result<Value, RowError> {
    let steps = row
        .raw
        .get("steps")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut outcomes = Vec::with_capacity(steps.len());
    for (i, step) in steps.iter().enumerate() {
        let op = step.get("op").and_then(Value::as_str).unwrap_or("");
        let done = if op == "upload" {
            upload(c, step)
        } else {
            send(c, step)
        };
        match done {
            Ok(outcome) => outcomes.push(outcome),
            Err(RowError::Failed(why)) => return Err(failed(format!("steps[{i}] ({op}): {why}"))),
            Err(e) => return Err(e),
        }
    }
    Ok(json!({"steps": outcomes}))
}

/// An upload step: the decoded bytes with their exact length, declaring the
/// step's `sha256` (else the bytes' own), under the step's credential; a
/// 201 binds (or rebinds) the alias to the receiver's ref.
fn upload(c: &mut SuiteClient, step: &Value) -> Result<Value, RowError> {
    let alias = match step.get("alias") {
        Some(Value::String(a)) if !a.is_empty() => a.clone(),
        _ => return Err(failed("an upload needs a non-empty alias")),
    };
    let data = step
        .get("bodyBase64")
        .and_then(Value::as_str)
        .and_then(|b| base64_decode(b).ok())
        .ok_or_else(|| failed("bodyBase64 is not base64"))?;
    let declared = match step.get("sha256") {
        None => sha256_hex(&data),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(failed("sha256 (the declared digest) must be a string")),
    };
    let config = c
        .settings
        .upload
        .clone()
        .ok_or_else(|| failed("the config has no upload block"))?;
    let token_env = match step.get("credential").and_then(Value::as_str) {
        Some("upload") => config.token_env.clone(),
        Some("unauthorized") => Some(UNAUTHORIZED_TOKEN_ENV.to_string()),
        Some("none") => None,
        _ => {
            return Err(failed(
                "credential must be one of upload, unauthorized, none",
            ))
        }
    };
    let route = UploadRoute {
        token_env,
        ..config
    };
    let (status, receipt) = c.upload(&route, &data, data.len() as u64, &declared)?;
    let reference = receipt
        .as_ref()
        .and_then(|r| r.get("ref"))
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Some(r) = &reference {
        c.aliases.insert(alias, r.clone());
    }
    Ok(json!({"op": "upload", "status": status, "ref": reference}))
}

/// A send step: the message unchanged (no SDK checks) but for the body refs
/// of bound aliases; one POST over HTTP, one line and its answer over stdio.
fn send(c: &mut SuiteClient, step: &Value) -> Result<Value, RowError> {
    let mut msg = match step.get("message") {
        Some(m @ Value::Object(_)) => m.clone(),
        _ => return Err(failed("a send needs the JSON-RPC message object")),
    };
    if let Some(event) = msg
        .get_mut("params")
        .and_then(|p| p.get_mut("event"))
        .and_then(Value::as_object_mut)
    {
        if let Some(items) = event.get("items") {
            let rebound = rebind_refs(items, &c.aliases);
            event.insert("items".into(), rebound);
        }
    }
    let (status, answer) = c.exchange_at("", &msg, c.timeout())?;
    let parsed = match answer {
        Answer::Parsed(v) => Some(v),
        Answer::Malformed(why) => {
            log("client", &format!("the answer is not strict JSON: {why}"));
            None
        }
        Answer::Empty => None,
    };
    let accepted = if c.stdio {
        parsed
            .as_ref()
            .is_some_and(|a| a.get("result").is_some() && a.get("error").is_none())
    } else {
        status == 200
    };
    let error = error_code(parsed.as_ref());
    Ok(json!({
        "op": "send",
        "outcome": if accepted { "accepted" } else { "rejected" },
        "status": if c.stdio { Value::Null } else { json!(status) },
        "error": error,
        "response": if accepted { parsed.unwrap_or(Value::Null) } else { Value::Null },
    }))
}

/// The reply to an intercept the host sends: a 200's body (or, over stdio,
/// the answer line), or a refusal's JSON-RPC error, which the core rules
/// reject; `Err(why)` inside when it is not strict JSON. Any other answer
/// over HTTP fails the row.
fn reply_of(c: &SuiteClient, msg: &Value) -> Result<Result<Value, String>, RowError> {
    let (status, answer) = c.exchange_at("", msg, c.timeout())?;
    let shown = msg.get("id").map(encode).unwrap_or_default();
    let ok = c.stdio || status == 200;
    match answer {
        Answer::Parsed(v) if ok => Ok(Ok(v)),
        Answer::Parsed(v) if v.get("error").is_some() => {
            log("client", &format!("{shown}: refused with HTTP {status}"));
            Ok(Ok(v))
        }
        Answer::Malformed(why) if ok => Ok(Err(format!("the reply is not strict JSON: {why}"))),
        Answer::Empty if ok => Ok(Err("an empty reply".into())),
        _ => Err(failed(format!("{shown}: HTTP status {status}"))),
    }
}

impl Rows {
    /// An atomic row (docs/ELICITATION.md, "What the host (client) does for
    /// an atomic row").
    fn atomic(&self, c: &mut SuiteClient, row: &Scenario) -> Result<Value, RowError> {
        let sid = row.id.as_str();
        let atomic = row.raw.get("atomic").unwrap_or(&Value::Null);
        let (Some(user @ Value::Object(_)), Some(caps @ Value::Object(_))) =
            (atomic.get("userResult"), atomic.get("resultCapabilities"))
        else {
            return Err(failed(
                "atomic needs a userResult and a resultCapabilities object",
            ));
        };
        let request = match atomic.get("request") {
            Some(r @ Value::Object(_)) => c.checked(r.clone(), INTERCEPT_REQUEST)?,
            _ => return Err(failed("atomic.request must be an intercept request")),
        };
        let event = path(&request, &["params", "event"])
            .cloned()
            .unwrap_or(Value::Null);
        if event.get("type").and_then(Value::as_str) != Some(REQUEST_EVENT) {
            return Err(unsupported(format!(
                "atomic.request is not a {REQUEST_EVENT} intercept"
            )));
        }
        let mut actual = json!({"request": "rejected", "result": "not-sent",
                                "published": null, "provenance": null});
        let reply = reply_of(c, &request)?;
        let verdict = judge_request(
            &c.schemas,
            &self.forms,
            &request,
            reply.as_ref().map_err(String::as_str),
        );
        actual["request"] = json!(verdict.as_str());
        let returned = match verdict {
            RequestVerdict::Allowed(returned) => returned,
            RequestVerdict::Rejected(why) => {
                log(
                    "client",
                    &format!("{sid}: the request reply is rejected: {why}"),
                );
                return Ok(actual); // fail closed: nothing more is sent
            }
            RequestVerdict::Denied => return Ok(actual), // the user is not asked
        };
        let (result, mut provenance) = match returned {
            Some(r) => (r, "hook"),
            None => (user.clone(), "user"),
        };
        let msg = result_request(
            &event,
            &result,
            &format!("{sid}:result"),
            &format!("{sid}:result-body"),
            caps,
        );
        let msg = c.checked(msg, INTERCEPT_REQUEST)?;
        let reply = reply_of(c, &msg)?;
        let schema = request_form_schema(&request);
        match judge_result(
            &c.schemas,
            &self.forms,
            &msg,
            &result,
            reply.as_ref().map_err(String::as_str),
            schema.as_ref(),
        ) {
            Err(why) => {
                log(
                    "client",
                    &format!("{sid}: the result reply is rejected: {why}"),
                );
                actual["result"] = json!("rejected");
            }
            Ok(published) => {
                if published.edited {
                    provenance = "hook";
                }
                actual["result"] = json!("accepted");
                actual["published"] = published.result;
                actual["provenance"] = json!(provenance);
            }
        }
        Ok(actual)
    }
}
