//! The composition engine: applies one `hooks/intercept` response to its
//! request under docs/scenarios.md, "Composition rules" and "Host rules".
//!
//! Phase 1 stages the whole response in response order and rejects all of it
//! on the first failure (envelope, canonical schema, advertisement, slot
//! definitions, allowance, host rule); phase 2 derives what a blind client
//! reports, the keys of scenarios.md's "The expected keys". Nothing of a
//! rejected response is published. No I/O: schemas come from the caller.

use crate::boundaries::{boundary_for, holds_withheld, Boundary, Slot, DEF_MESSAGES};
use crate::json::{self, path, strings};
use crate::schemas::{Schemas, INTERCEPT_RESPONSE};
use serde_json::{json, Map, Value};

/// What applying one response derived.
///
/// Exactly one of two shapes: `unsupported` is set (the event type is not
/// one this engine implements; `actual` is then `{}` and reports nothing), or
/// `actual` is the derived object. For a rejected response `actual` is
/// `{"rejected": true}` and `reason` says why (diagnostics only).
#[derive(Debug, Clone)]
pub struct Outcome {
    pub actual: Value,
    pub unsupported: Option<String>,
    pub reason: Option<String>,
}

/// Options of [`apply_with`].
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Whether the synthetic host's `task` rule applies (the core suite's
    /// host has it; a host with no local rule does not).
    pub host_rule: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { host_rule: true }
    }
}

/// [`apply_with`]'s answer: the outcome, and for an accepted response the
/// `params.state` the next interceptor of a serial chain receives
/// (`permission` before the host resolves `none`, the surviving `candidate`,
/// and `flow` when there is one).
#[derive(Debug, Clone)]
pub struct Applied {
    pub outcome: Outcome,
    pub state: Option<Value>,
}

/// Whether the engine implements the event type (the whole core set).
pub fn supports(event_type: &str) -> bool {
    boundary_for(event_type).is_some()
}

/// Derives what a client reports for `response` to `request` (the synthetic
/// host of the core suite, with its `task` rule).
pub fn apply(schemas: &Schemas, request: &Value, response: &Value) -> Outcome {
    apply_with(schemas, request, response, Options::default()).outcome
}

/// [`apply`] with options, also returning the state an accepted response
/// leaves for the next interceptor.
pub fn apply_with(
    schemas: &Schemas,
    request: &Value,
    response: &Value,
    options: Options,
) -> Applied {
    let event_type = path(request, &["params", "event", "type"]);
    let Some(boundary) = event_type.and_then(Value::as_str).and_then(boundary_for) else {
        let shown = event_type
            .map(json::encode)
            .unwrap_or_else(|| "none".into());
        return Applied {
            outcome: Outcome {
                actual: Value::Object(Map::new()),
                unsupported: Some(format!("event type {shown} is not implemented by ahp-rust")),
                reason: None,
            },
            state: None,
        };
    };
    apply_at(boundary, schemas, request, response, options)
}

/// [`apply_with`] at `boundary`, whatever the request's event type says: for
/// a boundary outside the core set's table (such as
/// [`crate::boundaries::ELICITATION_REQUEST_BOUNDARY`]).
pub fn apply_at(
    boundary: &'static Boundary,
    schemas: &Schemas,
    request: &Value,
    response: &Value,
    options: Options,
) -> Applied {
    let mut t = Transaction::new(boundary, schemas, request, options);
    match t.run(response) {
        Ok((actual, state)) => Applied {
            outcome: Outcome {
                actual,
                unsupported: None,
                reason: None,
            },
            state: Some(state),
        },
        Err(Rejected(reason)) => Applied {
            outcome: Outcome {
                actual: json!({"rejected": true}),
                unsupported: None,
                reason: Some(reason),
            },
            state: None,
        },
    }
}

/// The whole response is rejected, for this reason.
struct Rejected(String);

type Staging<T> = Result<T, Rejected>;

fn reject<T>(reason: impl Into<String>) -> Staging<T> {
    Err(Rejected(reason.into()))
}

fn rank(permission: &str) -> u8 {
    match permission {
        "allow" => 1,
        "ask" => 2,
        "deny" => 3,
        _ => 0,
    }
}

fn strongest(a: &'static str, b: &'static str) -> &'static str {
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}

/// A permission as the engine knows it (`none` for anything else).
fn known_permission(v: Option<&Value>) -> &'static str {
    match v.and_then(Value::as_str) {
        Some("allow") => "allow",
        Some("ask") => "ask",
        Some("deny") => "deny",
        _ => "none",
    }
}

/// A JSON-RPC id (a string or a number) equal to the request's under JSON typing.
fn id_equal(response_id: &Value, request_id: Option<&Value>) -> bool {
    matches!(response_id, Value::String(_) | Value::Number(_))
        && request_id.is_some_and(|r| json::equal(response_id, r))
}

static EMPTY: Value = Value::Null;

/// An integer as a JSON number (exact within 64 bits).
fn integer(n: i128) -> Value {
    if let Ok(i) = i64::try_from(n) {
        json!(i)
    } else if let Ok(u) = u64::try_from(n) {
        json!(u)
    } else {
        json!(n as f64)
    }
}

struct Transaction<'a> {
    b: &'static Boundary,
    schemas: &'a Schemas,
    request: &'a Value,
    event: &'a Value,
    caps: &'a Value,
    state: &'a Value,
    options: Options,

    original: Value,
    current: Value,
    response_permission: &'static str,
    stop: bool,
    continued: bool,
    instructions: Vec<Value>,
    messages: Vec<Value>,
    injections: Vec<Value>,
    returned: Option<Value>,
}

impl<'a> Transaction<'a> {
    fn new(
        b: &'static Boundary,
        schemas: &'a Schemas,
        request: &'a Value,
        options: Options,
    ) -> Self {
        let params = request.get("params").unwrap_or(&EMPTY);
        let event = params.get("event").unwrap_or(&EMPTY);
        let original = b.original(event);
        Transaction {
            b,
            schemas,
            request,
            event,
            caps: params.get("capabilities").unwrap_or(&EMPTY),
            state: params.get("state").unwrap_or(&EMPTY),
            options,
            current: original.clone(),
            original,
            response_permission: "none",
            stop: false,
            continued: false,
            instructions: Vec::new(),
            messages: Vec::new(),
            injections: Vec::new(),
            returned: None,
        }
    }

    fn validate(&self, slot: Slot, v: &Value, what: &str) -> Staging<()> {
        match slot {
            Slot::Any => Ok(()),
            Slot::Object if v.is_object() => Ok(()),
            Slot::Object => reject(format!("{what} is not an object")),
            Slot::Schema(def) => match self.schemas.check(def, v) {
                None => Ok(()),
                Some(problem) => reject(format!("{what}: {problem}")),
            },
        }
    }

    /// Phase 1, items 1 and 2: the envelope, correlation and the canonical
    /// `intercept-response` schema.
    fn envelope(&self, response: &'a Value) -> Staging<&'a Vec<Value>> {
        let Value::Object(msg) = response else {
            return reject("response is not a JSON object");
        };
        if msg.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return reject("jsonrpc is not \"2.0\"");
        }
        if !msg
            .get("id")
            .is_some_and(|id| id_equal(id, self.request.get("id")))
        {
            return reject("response id does not match the request id");
        }
        if msg.contains_key("error") {
            return reject("response carries a JSON-RPC error");
        }
        let Some(Value::Object(result)) = msg.get("result") else {
            return reject("result is not an object");
        };
        if let Some(problem) = self.schemas.check(INTERCEPT_RESPONSE, response) {
            return reject(format!("schema: {problem}"));
        }
        let wanted = path(self.request, &["params", "protocolVersion"]).and_then(Value::as_str);
        let version = result.get("protocolVersion").and_then(Value::as_str);
        if version.is_none() || version != wanted {
            return reject("result protocolVersion differs from the request's");
        }
        let Some(Value::Array(effects)) = result.get("effects") else {
            return reject("result effects is not an array");
        };
        Ok(effects)
    }

    fn run(&mut self, response: &'a Value) -> Staging<(Value, Value)> {
        let effects = self.envelope(response)?;
        let advertised = strings(self.caps.get("effects"));
        for (i, effect) in effects.iter().enumerate() {
            let Value::Object(e) = effect else {
                return reject(format!("effect {i} is not an object"));
            };
            let kind = e.get("type").and_then(Value::as_str).unwrap_or("");
            if !advertised.contains(&kind) {
                return reject(format!("effect {i}: {kind:?} is not advertised"));
            }
            if !self.b.allows(kind) {
                return reject(format!(
                    "effect {i}: {kind} is not allowed at {}",
                    self.b.event
                ));
            }
            match kind {
                "deny" => self.response_permission = strongest(self.response_permission, "deny"),
                "ask" => self.response_permission = strongest(self.response_permission, "ask"),
                "allow" => self.response_permission = strongest(self.response_permission, "allow"),
                "message" => match e.get("text") {
                    Some(text @ Value::String(_)) => self.messages.push(text.clone()),
                    _ => return reject(format!("effect {i}: message text is not a string")),
                },
                "return" => self.on_return(i, e)?,
                "inject" => self.on_inject(i, e, effect)?,
                "flow" => self.on_flow(i, e)?,
                "modify" => self.on_modify(i, e)?,
                other => return reject(format!("effect {i}: unknown type {other:?}")),
            }
        }
        self.host_rule()?;
        Ok(self.derive())
    }

    fn on_return(&mut self, i: usize, e: &Map<String, Value>) -> Staging<()> {
        let Some(slot) = self.b.returns else {
            return reject(format!(
                "effect {i}: return is not allowed at {}",
                self.b.event
            ));
        };
        let Some(value) = e.get("value") else {
            return reject(format!("effect {i}: return has no value"));
        };
        self.validate(slot, value, &format!("effect {i}: return value"))?;
        // a later return replaces an earlier one
        self.returned = Some(value.clone());
        Ok(())
    }

    fn on_inject(&mut self, i: usize, e: &Map<String, Value>, whole: &Value) -> Staging<()> {
        let context = path(self.caps, &["inject", "context"]).unwrap_or(&EMPTY);
        if context.get("append") != Some(&Value::Bool(true)) {
            return reject(format!("effect {i}: context append is not advertised"));
        }
        if e.get("target").and_then(Value::as_str) != Some("context")
            || e.get("operation").and_then(Value::as_str) != Some("append")
        {
            return reject(format!("effect {i}: inject must append to context"));
        }
        let at = e.get("deliverAt").and_then(Value::as_str).unwrap_or("");
        if !strings(context.get("deliverAt")).contains(&at) {
            return reject(format!("effect {i}: deliverAt {at:?} is not advertised"));
        }
        let Some(value) = e.get("value") else {
            return reject(format!("effect {i}: inject has no value"));
        };
        self.validate(
            Slot::Schema(DEF_MESSAGES),
            value,
            &format!("effect {i}: inject value"),
        )?;
        self.injections.push(whole.clone());
        Ok(())
    }

    /// `capabilities.flow.remainingContinuations` (an integer by value), else 0.
    fn remaining(&self) -> i128 {
        path(self.caps, &["flow", "remainingContinuations"])
            .and_then(json::integer_value)
            .unwrap_or(0)
    }

    fn continue_advertised(&self) -> bool {
        strings(path(self.caps, &["flow", "operations"])).contains(&"continue")
    }

    fn on_flow(&mut self, i: usize, e: &Map<String, Value>) -> Staging<()> {
        let op = e.get("operation").and_then(Value::as_str).unwrap_or("");
        if !strings(path(self.caps, &["flow", "operations"])).contains(&op) {
            return reject(format!("effect {i}: flow {op:?} is not advertised"));
        }
        if !self.b.allows_flow(op) {
            return reject(format!(
                "effect {i}: flow {op} is not allowed at {}",
                self.b.event
            ));
        }
        match op {
            "stop" => self.stop = true,
            "continue" => {
                // item 5: even when a stop in the same response would win
                if self.remaining() <= 0 {
                    return reject(format!(
                        "effect {i}: continue with no continuation allowance left"
                    ));
                }
                self.continued = true;
                match e.get("instruction") {
                    None => {}
                    Some(Value::String(s)) if !s.is_empty() => {
                        self.instructions.push(Value::String(s.clone()))
                    }
                    Some(_) => {
                        return reject(format!(
                            "effect {i}: continue instruction is not a non-empty string"
                        ))
                    }
                }
            }
            other => return reject(format!("effect {i}: unknown flow operation {other:?}")),
        }
        Ok(())
    }

    fn on_modify(&mut self, i: usize, e: &Map<String, Value>) -> Staging<()> {
        let b = self.b;
        let target = e.get("target").and_then(Value::as_str).unwrap_or("");
        let op = e.get("operation").and_then(Value::as_str).unwrap_or("");
        if target != b.target {
            return reject(format!(
                "effect {i}: target {target:?} does not exist at {}",
                b.event
            ));
        }
        if path(self.caps, &["modify", target, op]) != Some(&Value::Bool(true)) {
            return reject(format!("effect {i}: {op} of {target} is not advertised"));
        }
        let Some(value) = e.get("value") else {
            return reject(format!("effect {i}: modify has no value"));
        };
        if let Some(why) = b.not_editable(self.event) {
            return reject(format!("effect {i}: {why}"));
        }
        self.validate(b.slot, value, &format!("effect {i}: value"))?;
        match op {
            "replace" => {
                if b.list && holds_withheld(&self.current) {
                    return reject(format!(
                        "effect {i}: whole-list replace over withheld content"
                    ));
                }
                self.current = value.clone();
            }
            "merge" => {
                let staged = match (&self.current, value) {
                    // a list appends in order, keeping duplicates
                    (Value::Array(cur), Value::Array(add)) if b.list => {
                        Value::Array(cur.iter().chain(add).cloned().collect())
                    }
                    // an object overwrites top-level keys shallowly; null is a value
                    (Value::Object(cur), Value::Object(add)) if !b.list => {
                        let mut m = cur.clone();
                        for (k, v) in add {
                            m.insert(k.clone(), v.clone());
                        }
                        Value::Object(m)
                    }
                    _ if b.list => return reject(format!("effect {i}: merge needs lists")),
                    _ => return reject(format!("effect {i}: merge needs objects")),
                };
                self.validate(b.slot, &staged, &format!("effect {i}: effective value"))?;
                self.current = staged;
            }
            other => return reject(format!("effect {i}: unknown modify operation {other:?}")),
        }
        Ok(())
    }

    /// The synthetic host's one rule, on the final staged input.
    fn host_rule(&self) -> Staging<()> {
        if !self.options.host_rule
            || self.b.event != "tool.before"
            || path(self.event, &["tool", "name"]).and_then(Value::as_str) != Some("task")
        {
            return Ok(());
        }
        match self.current.get("task") {
            Some(task) if self.current.is_object() && json::is_positive_integer(task) => Ok(()),
            _ => reject("host rule: the task tool needs a positive integer task"),
        }
    }

    /// Phase 2: what the accepted response publishes, and the next state.
    fn derive(&mut self) -> (Value, Value) {
        let b = self.b;
        // The incoming candidate and grant are judged on the final staged value.
        let unchanged = json::equal(&self.current, &self.original);
        let incoming = known_permission(self.state.get("permission"));
        let mut decision = "allow";
        let mut permission = None;
        if b.gated {
            let mut p = strongest(incoming, self.response_permission);
            if p == "allow" && !unchanged {
                p = "none"; // an allow was given for the value as it stood
            }
            if p != "none" {
                decision = p;
            }
            permission = Some(p);
        }
        let incoming_flow = self.state.get("flow").and_then(Value::as_str);
        let flow = if self.stop || incoming_flow == Some("stop") {
            Some("stop")
        } else if self.continued
            || (incoming_flow == Some("continue")
                && self.continue_advertised()
                && b.allows_flow("continue")
                && self.remaining() >= 1)
        {
            Some("continue")
        } else {
            None
        };
        let candidate = if b.returns.is_none() {
            None
        } else if let Some(r) = &self.returned {
            Some(r.clone())
        } else {
            match self.state.get("candidate") {
                Some(Value::Object(c)) if unchanged => c.get("value").cloned(),
                _ => None,
            }
        };
        let proceeds = decision == "allow" && flow != Some("stop");

        let mut actual = Map::new();
        actual.insert("decision".into(), json!(decision));
        if let Some(p) = permission {
            actual.insert("permission".into(), json!(p));
        }
        actual.insert(
            "executed".into(),
            json!(proceeds && candidate.is_none() && b.gated),
        );
        actual.insert(
            "messages".into(),
            Value::Array(std::mem::take(&mut self.messages)),
        );
        if b.target == "input" {
            actual.insert("input".into(), self.current.clone());
        }
        let mut effective = Map::new();
        effective.insert(b.target.into(), self.current.clone());
        actual.insert("effective".into(), Value::Object(effective));
        if let (Some(c), true) = (&candidate, proceeds) {
            actual.insert("result".into(), c.clone());
        }
        if let Some(f) = flow {
            actual.insert("flow".into(), json!(f));
        }
        if self.continue_advertised() {
            let left = self.remaining() - i128::from(flow == Some("continue"));
            actual.insert(
                "continuationInstructions".into(),
                Value::Array(std::mem::take(&mut self.instructions)),
            );
            actual.insert("continuationRemaining".into(), integer(left));
        }
        if !self.injections.is_empty() {
            actual.insert(
                "injections".into(),
                Value::Array(std::mem::take(&mut self.injections)),
            );
        }

        let mut next = Map::new();
        next.insert("permission".into(), json!(permission.unwrap_or(incoming)));
        next.insert(
            "candidate".into(),
            candidate.map_or(Value::Null, |c| json!({"value": c})),
        );
        if let Some(f) = flow {
            next.insert("flow".into(), json!(f));
        }
        (Value::Object(actual), Value::Object(next))
    }
}
