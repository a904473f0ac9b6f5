//! Elicitation events (docs/ELICITATION.md), no I/O: the receiver's checks
//! and correlation state, and the host's judgements at both boundaries. An
//! MCP `elicitation/create` request and its `ElicitResult` travel as
//! `user.elicitation.request` / `.result` events whose `request` / `result`
//! part is one text part holding the serialized MCP 2025-11-25 body.
//!
//! Requested form schemas are applied as Draft 2020-12 JSON Schema with
//! `boon`, on a compiler of their own: formats are annotations (never
//! asserted), no default is filled in, nothing is loaded from anywhere, a
//! top-level `$schema` does not change the draft; each distinct schema is
//! compiled once ([`FormSchemas`]).

use crate::boundaries::ELICITATION_REQUEST_BOUNDARY;
use crate::chain::body_refs;
use crate::engine::{apply_at, apply_with, Options};
use crate::json::{self, path};
use crate::manifest::PROTOCOL_VERSION;
use crate::schemas::{Schemas, ELICITATION_REQUEST_PARAMS, ELICITATION_RESULT, INTERCEPT_REQUEST};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub const REQUEST_EVENT: &str = "user.elicitation.request";
pub const RESULT_EVENT: &str = "user.elicitation.result";

/// The JSON-RPC error code of every refusal.
pub const INVALID_PARAMS: i64 = -32602;

/// The longest problem text this module returns.
const MAX_PROBLEM: usize = 400;

/// Whitespace collapsed to single spaces, cut at [`MAX_PROBLEM`] characters.
fn one_line(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match joined.char_indices().nth(MAX_PROBLEM) {
        Some((cut, _)) => joined[..cut].to_string(),
        None => joined,
    }
}

// ------------------------------------------------------------------ form schemas

/// A loader that loads nothing: a form schema's `$ref` to anything but
/// itself fails its compilation.
struct NoLoader;

impl boon::UrlLoader for NoLoader {
    fn load(&self, url: &str) -> Result<Value, Box<dyn std::error::Error>> {
        Err(format!("{url}: a requested schema loads nothing from anywhere").into())
    }
}

struct FormSchema {
    schemas: boon::Schemas,
    index: boon::SchemaIndex,
}

/// Requested form schemas, each compiled once per distinct schema (by its
/// JSON text with object keys sorted). `Send + Sync`.
#[derive(Default)]
pub struct FormSchemas {
    compiled: Mutex<HashMap<String, Result<Arc<FormSchema>, String>>>,
}

impl std::fmt::Debug for FormSchemas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FormSchemas")
            .field("distinct", &self.len())
            .finish()
    }
}

/// `v` with every object's keys sorted (one text per distinct value).
fn sorted(v: &Value) -> Value {
    match v {
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        Value::Object(obj) => {
            let mut keys: Vec<&String> = obj.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&obj[k])))
                    .collect(),
            )
        }
        other => other.clone(),
    }
}

impl FormSchemas {
    pub fn new() -> FormSchemas {
        FormSchemas::default()
    }

    /// How many distinct schemas were compiled (or failed to) so far.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Result<Arc<FormSchema>, String>>> {
        self.compiled
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn get(&self, schema: &Value) -> Result<Arc<FormSchema>, String> {
        let key = json::encode(&sorted(schema));
        let mut cache = self.lock();
        if let Some(found) = cache.get(&key) {
            return found.clone();
        }
        let n = cache.len() + 1;
        let built = build(schema, n);
        cache.insert(key, built.clone());
        built
    }

    /// Compiles `schema` unless it already is; Err says why it is no usable
    /// JSON Schema.
    pub fn compile(&self, schema: &Value) -> Result<(), String> {
        self.get(schema).map(|_| ())
    }

    /// None when `instance` is valid against the form `schema`, else why
    /// (also when the schema is no usable schema).
    pub fn problem(&self, schema: &Value, instance: &Value) -> Option<String> {
        let compiled = match self.get(schema) {
            Ok(c) => c,
            Err(why) => return Some(why),
        };
        match compiled.schemas.validate(instance, compiled.index) {
            Ok(()) => None,
            Err(e) => {
                let mut leaves = Vec::new();
                collect_leaves(&e, &mut leaves);
                Some(one_line(&format!(
                    "the requested schema: {}",
                    leaves.join("; ")
                )))
            }
        }
    }
}

fn build(schema: &Value, n: usize) -> Result<Arc<FormSchema>, String> {
    let Value::Object(obj) = schema else {
        return Err("the requested schema is not an object".into());
    };
    let mut doc = obj.clone();
    doc.remove("$schema"); // applied as Draft 2020-12 whatever it names
    let url = format!("https://forms.ahp-rust.invalid/{n}.json");
    let compiled = std::panic::catch_unwind(move || {
        let mut compiler = boon::Compiler::new();
        compiler.set_default_draft(boon::Draft::V2020_12);
        compiler.use_loader(Box::new(NoLoader));
        compiler
            .add_resource(&url, Value::Object(doc))
            .map_err(|e| format!("{e:#}"))?;
        let mut schemas = boon::Schemas::new();
        let index = compiler
            .compile(&url, &mut schemas)
            .map_err(|e| format!("{e:#}"))?;
        Ok::<_, String>(FormSchema { schemas, index })
    });
    match compiled {
        Ok(Ok(s)) => Ok(Arc::new(s)),
        Ok(Err(e)) => Err(one_line(&format!(
            "the requested schema is not a usable JSON Schema: {e}"
        ))),
        Err(_) => Err("the requested schema is not a usable JSON Schema".into()),
    }
}

fn collect_leaves(e: &boon::ValidationError<'_, '_>, out: &mut Vec<String>) {
    if e.causes.is_empty() {
        out.push(format!("at '{}': {}", e.instance_location, e.kind));
    }
    for cause in &e.causes {
        collect_leaves(cause, out);
    }
}

// ------------------------------------------------------------------ bodies

/// A part's `text` parsed as one strict JSON object (duplicate keys refused).
pub fn parse_body(text: Option<&Value>) -> Result<Map<String, Value>, String> {
    let Some(Value::String(s)) = text else {
        return Err("the part has no text".into());
    };
    match json::parse_str(s) {
        Ok(Value::Object(obj)) => Ok(obj),
        Ok(_) => Err("the body is not a JSON object".into()),
        Err(e) => Err(format!("the body is not strict JSON: {e}")),
    }
}

/// The mode of MCP request params (absent: `form`, MCP 2025-11-25).
pub fn request_mode(params: &Map<String, Value>) -> Value {
    params.get("mode").cloned().unwrap_or_else(|| json!("form"))
}

/// The form schema of request params (None: no body, or not a form body).
pub fn requested_schema(params: Option<&Map<String, Value>>) -> Option<&Value> {
    let params = params?;
    if request_mode(params).as_str() != Some("form") {
        return None;
    }
    params.get("requestedSchema")
}

/// The parsed body of the event's `elicitation.<name>` part when it is
/// body-selected, has no gap and parses as one object.
pub fn body_of(event: &Value, name: &str) -> Option<Map<String, Value>> {
    let part = path(event, &["elicitation", name])?.as_object()?;
    if part.get("selection").and_then(Value::as_str) != Some("body") || part.contains_key("gap") {
        return None;
    }
    parse_body(part.get("text")).ok()
}

/// Why an MCP result is no valid answer in `mode` (None: it is): valid
/// against `mcp-elicitation.schema.json#/$defs/result`, `content` only for
/// `accept` in `form` mode, and then (absent: `{}`) valid against
/// `form_schema` when it is known.
pub fn result_problem(
    schemas: &Schemas,
    forms: &FormSchemas,
    result: &Value,
    mode: Option<&Value>,
    form_schema: Option<&Value>,
) -> Option<String> {
    if let Some(problem) = schemas.check(ELICITATION_RESULT, result) {
        return Some(problem);
    }
    let action = result.get("action");
    let is_form = mode.and_then(Value::as_str) == Some("form");
    if is_form && action.and_then(Value::as_str) == Some("accept") {
        let schema = form_schema?;
        let empty = json!({});
        return forms.problem(schema, result.get("content").unwrap_or(&empty));
    }
    result.get("content").is_some().then(|| {
        format!(
            "a {} result in {} mode carries no content",
            action.map(json::encode).unwrap_or("none".into()),
            mode.map(json::encode).unwrap_or("none".into())
        )
    })
}

// ------------------------------------------------------------------ the receiver

/// The receiver refusing an intercept (nothing recorded): HTTP `status`
/// (400, or 409 for content it does not have), JSON-RPC `-32602`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    pub message: String,
}

impl Refusal {
    fn bad(message: impl Into<String>) -> Refusal {
        Refusal {
            status: 400,
            message: message.into(),
        }
    }

    /// The refusal's answer to `message`: `{"jsonrpc": "2.0", "id": <its id,
    /// or null>, "error": {"code": -32602, "message"}}`.
    pub fn answer(&self, message: &Value) -> Value {
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        json!({"jsonrpc": "2.0", "id": id,
               "error": {"code": INVALID_PARAMS, "message": self.message}})
    }
}

/// An accepted intercept's receipt parts.
#[derive(Debug, Clone, PartialEq)]
pub struct Accepted {
    pub event_id: String,
    /// [`REQUEST_EVENT`] or [`RESULT_EVENT`].
    pub event_type: &'static str,
    pub summary: Value,
}

impl Accepted {
    /// `{"kind": "elicitation", "eventId", "type", "summary"}`.
    pub fn entry(&self) -> Value {
        json!({"kind": "elicitation", "eventId": self.event_id,
               "type": self.event_type, "summary": self.summary})
    }
}

/// A request accepted and not yet answered.
#[derive(Debug, Clone)]
struct Live {
    session: String,
    source: Value,
    server: Value,
    mode: Value,
    selection: Value,
    /// the parsed body (None: metadata or omit)
    params: Option<Map<String, Value>>,
}

/// What accepting changes.
enum Change {
    Live(String, Box<Live>),
    Answered(String),
}

/// The receiver's correlation state (the live requests, for the whole
/// server: a live id is live for every session) and its checks, in order.
/// `Send + Sync`.
#[derive(Debug)]
pub struct Receiver {
    authenticated_source: String,
    forms: FormSchemas,
    live: Mutex<HashMap<String, Live>>,
}

fn equal_at(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => json::equal(x, y),
        (None, None) => true,
        _ => false,
    }
}

fn shown(v: Option<&Value>) -> String {
    v.map(json::encode).unwrap_or_else(|| "none".into())
}

impl Receiver {
    /// `authenticated_source`: who the receiver's authentication says the
    /// sender is (every result summary's provenance).
    pub fn new(authenticated_source: &str) -> Receiver {
        Receiver {
            authenticated_source: authenticated_source.to_string(),
            forms: FormSchemas::new(),
            live: Mutex::new(HashMap::new()),
        }
    }

    /// The receiver's form schemas.
    pub fn forms(&self) -> &FormSchemas {
        &self.forms
    }

    /// How many requests are live.
    pub fn live_count(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Live>> {
        self.live
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Checks `message` (`stored`: whether a body ref names bytes this server
    /// stored under the accepted upload token): a refusal (the state
    /// unchanged), or its receipt with the state updated.
    pub fn accept(
        &self,
        schemas: &Schemas,
        message: &Value,
        stored: impl Fn(&str) -> bool,
    ) -> Result<Accepted, Refusal> {
        self.accept_then(schemas, message, stored, |_| {})
    }

    /// [`Receiver::accept`], running `record` under the same lock once the
    /// state changed (receipts in the order the state changed).
    pub fn accept_then(
        &self,
        schemas: &Schemas,
        message: &Value,
        stored: impl Fn(&str) -> bool,
        record: impl FnOnce(&Accepted),
    ) -> Result<Accepted, Refusal> {
        let mut live = self.lock();
        let (accepted, change) = self.check(&live, schemas, message, stored)?;
        match change {
            Change::Live(id, request) => {
                live.insert(id, *request);
            }
            Change::Answered(id) => {
                live.remove(&id);
            }
        }
        record(&accepted);
        Ok(accepted)
    }

    fn check(
        &self,
        live: &HashMap<String, Live>,
        schemas: &Schemas,
        message: &Value,
        stored: impl Fn(&str) -> bool,
    ) -> Result<(Accepted, Change), Refusal> {
        // 1. The canonical envelope, the id, an elicitation event.
        if let Some(problem) = schemas.check(INTERCEPT_REQUEST, message) {
            return Err(Refusal::bad(format!(
                "invalid intercept request: {problem}"
            )));
        }
        let event = path(message, &["params", "event"]).unwrap_or(&Value::Null);
        if !equal_at(message.get("id"), event.get("id")) {
            return Err(Refusal::bad("the JSON-RPC id is not the event's id"));
        }
        let kind = match event.get("type").and_then(Value::as_str) {
            Some(REQUEST_EVENT) => REQUEST_EVENT,
            Some(RESULT_EVENT) => RESULT_EVENT,
            other => {
                return Err(Refusal::bad(format!(
                    "the event is a {}, not an elicitation request or result",
                    other.unwrap_or("event of no type")
                )))
            }
        };
        // 2. Content the event names must be stored here.
        for r in body_refs(event.get("items").unwrap_or(&Value::Null)) {
            if !stored(&r) {
                return Err(Refusal {
                    status: 409,
                    message: format!(
                        "no stored content for body ref {}",
                        json::encode(&Value::String(r))
                    ),
                });
            }
        }
        // 3. The session and the part; a selected gap fails closed.
        let session = match path(event, &["session", "id"]) {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            _ => return Err(Refusal::bad("the event carries no session.id")),
        };
        let name = if kind == REQUEST_EVENT {
            "request"
        } else {
            "result"
        };
        // An absent part is the omit selection (interaction-payloads.md, "MCP
        // elicitation binding": "Omission has no part").
        let omitted = json!({"selection": "omit"});
        let found = match event.get("elicitation") {
            Some(Value::Object(elicitation)) => elicitation.get(name).unwrap_or(&omitted),
            _ => &Value::Null,
        };
        let Value::Object(part) = found else {
            return Err(Refusal::bad(format!("elicitation.{name} is not a part")));
        };
        let body = part.get("selection").and_then(Value::as_str) == Some("body");
        if body && part.contains_key("gap") {
            return Err(Refusal::bad(format!(
                "elicitation.{name} is selected with a gap: no body to validate"
            )));
        }
        if kind == REQUEST_EVENT {
            self.request(live, schemas, event, session, part, body)
        } else {
            self.result(live, schemas, event, session, part, body)
        }
    }

    /// 4. A request: a fresh id, and a valid body in the event's mode.
    fn request(
        &self,
        live: &HashMap<String, Live>,
        schemas: &Schemas,
        event: &Value,
        session: String,
        part: &Map<String, Value>,
        body: bool,
    ) -> Result<(Accepted, Change), Refusal> {
        let id = event
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if live.contains_key(&id) {
            return Err(Refusal::bad(format!(
                "request {} is already live",
                json::encode(&Value::String(id))
            )));
        }
        let elicitation = event.get("elicitation").unwrap_or(&Value::Null);
        let mut params = None;
        if body {
            let parsed = parse_body(part.get("text"))
                .map_err(|e| Refusal::bad(format!("elicitation.request: {e}")))?;
            let as_value = Value::Object(parsed);
            if let Some(problem) = schemas.check(ELICITATION_REQUEST_PARAMS, &as_value) {
                return Err(Refusal::bad(format!("elicitation.request: {problem}")));
            }
            let Value::Object(parsed) = as_value else {
                return Err(Refusal::bad(
                    "elicitation.request: the body is not a JSON object",
                ));
            };
            let mode = request_mode(&parsed);
            if !equal_at(Some(&mode), elicitation.get("mode")) {
                return Err(Refusal::bad(format!(
                    "the body's mode {} is not the event's {}",
                    json::encode(&mode),
                    shown(elicitation.get("mode"))
                )));
            }
            if let Some(schema) = requested_schema(Some(&parsed)) {
                self.forms
                    .compile(schema)
                    .map_err(|why| Refusal::bad(format!("elicitation.request: {why}")))?;
            }
            params = Some(parsed);
        }
        let summary = match &params {
            Some(p) => json!({"request": p}),
            None => json!({"selection": part.get("selection")}),
        };
        let request = Live {
            session,
            source: event.get("source").cloned().unwrap_or(Value::Null),
            server: elicitation.get("server").cloned().unwrap_or(Value::Null),
            mode: elicitation.get("mode").cloned().unwrap_or(Value::Null),
            selection: part.get("selection").cloned().unwrap_or(Value::Null),
            params,
        };
        Ok((
            Accepted {
                event_id: id.clone(),
                event_type: REQUEST_EVENT,
                summary,
            },
            Change::Live(id, Box::new(request)),
        ))
    }

    /// 5. A result: correlated to a live request, and a valid answer to it.
    fn result(
        &self,
        live: &HashMap<String, Live>,
        schemas: &Schemas,
        event: &Value,
        session: String,
        part: &Map<String, Value>,
        body: bool,
    ) -> Result<(Accepted, Change), Refusal> {
        let Some(Value::String(parent_id)) = event.get("parentEventId") else {
            return Err(Refusal::bad("the result has no parentEventId"));
        };
        let Some(parent) = live.get(parent_id) else {
            return Err(Refusal::bad(format!(
                "the parent {} is not a live request",
                json::encode(&Value::String(parent_id.clone()))
            )));
        };
        let elicitation = event.get("elicitation").unwrap_or(&Value::Null);
        let session_value = Value::String(session);
        let parent_session = Value::String(parent.session.clone());
        let pairs = [
            ("session.id", Some(&session_value), &parent_session),
            ("source", event.get("source"), &parent.source),
            (
                "elicitation.server",
                elicitation.get("server"),
                &parent.server,
            ),
            ("elicitation.mode", elicitation.get("mode"), &parent.mode),
        ];
        for (what, mine, theirs) in pairs {
            if !mine.is_some_and(|m| json::equal(m, theirs)) {
                return Err(Refusal::bad(format!(
                    "the result's {what} {} is not its request's {}",
                    shown(mine),
                    json::encode(theirs)
                )));
            }
        }
        let mut result = None;
        if body {
            let parsed = Value::Object(
                parse_body(part.get("text"))
                    .map_err(|e| Refusal::bad(format!("elicitation.result: {e}")))?,
            );
            if let Some(problem) = schemas.check(ELICITATION_RESULT, &parsed) {
                return Err(Refusal::bad(format!("elicitation.result: {problem}")));
            }
            if !equal_at(parsed.get("action"), elicitation.get("action")) {
                return Err(Refusal::bad(format!(
                    "the body's action {} is not the event's {}",
                    shown(parsed.get("action")),
                    shown(elicitation.get("action"))
                )));
            }
            let form_schema = requested_schema(parent.params.as_ref());
            if let Some(problem) = result_problem(
                schemas,
                &self.forms,
                &parsed,
                Some(&parent.mode),
                form_schema,
            ) {
                return Err(Refusal::bad(format!("elicitation.result: {problem}")));
            }
            result = Some(parsed);
        }
        let provenance = json!({"kind": "mcp", "authenticatedSource": self.authenticated_source});
        let summary = match (&result, &parent.params) {
            (Some(r), Some(p)) => json!({"request": p, "result": r,
                                         "provenance": provenance, "externalCompletion": false}),
            _ => {
                json!({"selection": {"request": parent.selection, "result": part.get("selection")},
                        "bodyValidation": "not-selected", "provenance": provenance,
                        "externalCompletion": false})
            }
        };
        Ok((
            Accepted {
                event_id: event
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                event_type: RESULT_EVENT,
                summary,
            },
            Change::Answered(parent_id.clone()),
        ))
    }
}

/// The canonical no-effect reply to a request with `id`.
pub fn no_effect_reply(id: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": PROTOCOL_VERSION, "effects": []}})
}

// ------------------------------------------------------------------ the host

/// How the request boundary settled.
#[derive(Debug, Clone, PartialEq)]
pub enum RequestVerdict {
    /// Allowed, with the last accepted `return` value (None: none, the user
    /// is asked).
    Allowed(Option<Value>),
    /// A `deny`: the user is not asked and nothing more is sent.
    Denied,
    /// The whole reply is rejected (fail closed), for this reason.
    Rejected(String),
}

impl RequestVerdict {
    /// `allowed`, `denied` or `rejected`.
    pub fn as_str(&self) -> &'static str {
        match self {
            RequestVerdict::Allowed(_) => "allowed",
            RequestVerdict::Denied => "denied",
            RequestVerdict::Rejected(_) => "rejected",
        }
    }
}

fn effects_of(reply: &Value) -> &[Value] {
    match path(reply, &["result", "effects"]) {
        Some(Value::Array(effects)) => effects,
        _ => &[],
    }
}

/// The reply at the request boundary (`reply`: the parsed answer, or why
/// there is none, e.g. not strict JSON): the core envelope and effect rules
/// (only `deny`, `return` and `message`, each advertised; a `return` value a
/// valid MCP result), then each `return` value's answer rules for the
/// request's mode and form schema. Any failure rejects the whole reply; a
/// `deny` denies; otherwise the last `return` value is the effective result.
pub fn judge_request(
    schemas: &Schemas,
    forms: &FormSchemas,
    request: &Value,
    reply: Result<&Value, &str>,
) -> RequestVerdict {
    let reply = match reply {
        Ok(r) => r,
        Err(why) => return RequestVerdict::Rejected(why.to_string()),
    };
    let out = apply_at(
        &ELICITATION_REQUEST_BOUNDARY,
        schemas,
        request,
        reply,
        Options { host_rule: false },
    )
    .outcome;
    if let Some(why) = out.reason.or(out.unsupported) {
        return RequestVerdict::Rejected(why);
    }
    let event = path(request, &["params", "event"]).unwrap_or(&Value::Null);
    let mode = path(event, &["elicitation", "mode"]);
    let body = body_of(event, "request");
    let schema = requested_schema(body.as_ref());
    let mut returned = None;
    for (i, effect) in effects_of(reply).iter().enumerate() {
        if effect.get("type").and_then(Value::as_str) != Some("return") {
            continue;
        }
        let value = effect.get("value").unwrap_or(&Value::Null);
        if let Some(problem) = result_problem(schemas, forms, value, mode, schema) {
            return RequestVerdict::Rejected(format!("effect {i}: return value: {problem}"));
        }
        returned = Some(value.clone());
    }
    if out.actual.get("decision").and_then(Value::as_str) == Some("deny") {
        return RequestVerdict::Denied;
    }
    RequestVerdict::Allowed(returned)
}

/// The `hooks/intercept` of the result event the host sends for `result`,
/// answering the request event `request_event`: `event_id` (the JSON-RPC id
/// too), the request event's `source`, `time` and (when present) `session`,
/// its id as `parentEventId`, its `server` and `mode`, the result's
/// `action`, and the result serialized in one body-selected text part
/// `part_id`.
pub fn result_request(
    request_event: &Value,
    result: &Value,
    event_id: &str,
    part_id: &str,
    capabilities: &Value,
) -> Value {
    let at = |keys: &[&str]| path(request_event, keys).cloned().unwrap_or(Value::Null);
    let mut event = Map::new();
    event.insert("id".into(), json!(event_id));
    event.insert("source".into(), at(&["source"]));
    event.insert("time".into(), at(&["time"]));
    if let Some(session) = request_event.get("session") {
        event.insert("session".into(), session.clone());
    }
    event.insert("type".into(), json!(RESULT_EVENT));
    event.insert("parentEventId".into(), at(&["id"]));
    event.insert(
        "elicitation".into(),
        json!({"server": at(&["elicitation", "server"]), "mode": at(&["elicitation", "mode"]),
               "action": result.get("action").cloned().unwrap_or(Value::Null),
               "result": {"id": part_id, "kind": "text", "mediaType": "text/plain",
                          "selection": "body", "text": json::encode(result)}}),
    );
    json!({"jsonrpc": "2.0", "id": event_id, "method": "hooks/intercept",
           "params": {"protocolVersion": PROTOCOL_VERSION, "event": event,
                      "capabilities": capabilities}})
}

/// An accepted reply at the result boundary.
#[derive(Debug, Clone, PartialEq)]
pub struct Published {
    /// The effective result with its `content` as edited.
    pub result: Value,
    /// An accepted `modify` edited it (provenance becomes `hook`, even for an
    /// edit that leaves the value as it was).
    pub edited: bool,
}

/// The reply at the result boundary for the effective `result` the host sent
/// in `message`: the core rules at `user.elicitation.result` (`modify` of
/// `content`, only on an accepted form result), then the effective content
/// (absent: `{}`) against `form_schema` when it is known. Err: the whole
/// reply is rejected (nothing published), for this reason.
pub fn judge_result(
    schemas: &Schemas,
    forms: &FormSchemas,
    message: &Value,
    result: &Value,
    reply: Result<&Value, &str>,
    form_schema: Option<&Value>,
) -> Result<Published, String> {
    let reply = reply.map_err(str::to_string)?;
    let out = apply_with(schemas, message, reply, Options { host_rule: false }).outcome;
    if let Some(why) = out.reason.or(out.unsupported) {
        return Err(why);
    }
    let edited = effects_of(reply)
        .iter()
        .any(|e| e.get("type").and_then(Value::as_str) == Some("modify"));
    let mut published = result.clone();
    if edited {
        let content = path(&out.actual, &["effective", "content"])
            .cloned()
            .unwrap_or(Value::Null);
        if let Value::Object(p) = &mut published {
            p.insert("content".into(), content);
        }
    }
    let mode = path(message, &["params", "event", "elicitation", "mode"]);
    let accepted_form = mode.and_then(Value::as_str) == Some("form")
        && published.get("action").and_then(Value::as_str) == Some("accept");
    if let (true, Some(schema)) = (accepted_form, form_schema) {
        let empty = json!({});
        let content = published.get("content").unwrap_or(&empty);
        if let Some(problem) = forms.problem(schema, content) {
            return Err(format!("the effective content: {problem}"));
        }
    }
    Ok(Published {
        result: published,
        edited,
    })
}

/// The requested form schema of an intercept request's
/// `user.elicitation.request` event (None: no body, or not a form).
pub fn request_form_schema(request: &Value) -> Option<Value> {
    let event = path(request, &["params", "event"])?;
    requested_schema(body_of(event, "request").as_ref()).cloned()
}
