//! Serial subscriptions at one boundary (docs/LIFECYCLE.md, "Chains" and
//! "Operational failures"), with no I/O: what each subscription is sent, and
//! how the boundary settles.
//!
//! Each `intercept` subscription in turn gets the boundary's request with
//! the effective value the earlier ones left, `params.state` as the last
//! accepted reply left it (the request's own until then: deny is sticky, ask
//! applies unless deny, allow only from none and not past a changed value, the
//! candidate and flow carried: [`crate::engine::Applied::state`]), and the
//! event's `items` projected for it (`omit`: none). A reply that fails (any
//! operational failure, or a reply the core rules reject) fails the call:
//! `fail-open` goes on, `fail-closed` ends the chain with the original value.
//! An accepted `deny` or flow `stop` ends it (short-circuit). Once it settles,
//! every `observe` subscription, and every `intercept` subscription the chain
//! never called, gets the settled event as `hooks/observe`, in subscription
//! order.
//!
//! The primitives ([`chain_request`], [`chain_observation`], ...) are what the
//! [`Chain`] driver uses; the driver is sans-I/O: the caller sends each
//! [`Call`] it hands out and gives the reply (or the failure) back.

use crate::boundaries::{boundary_for, Boundary};
use crate::engine::{apply_at, Options, Outcome};
use crate::json::{self, path};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// The projection that withholds every item.
pub const OMIT: &str = "omit";

/// `event` with the boundary's target holding `value`; an event without the
/// target field (absent or `null`: `instructions` absent means `[]`) is kept
/// as it is while `value` is still that default (docs/COMPACTION.md,
/// "Absent instructions stay absent"). None where the target is no plain
/// event field.
pub fn settled_event(b: &Boundary, event: &Value, value: &Value) -> Option<Value> {
    let location = b.target_location()?;
    if matches!(path(event, location), None | Some(Value::Null))
        && json::equal(value, &b.original(event))
    {
        return Some(event.clone());
    }
    b.with_value(event, value)
}

/// `event` as one subscription sees it: `omit` withholds every item
/// (`items: []`; an event without `items` keeps them absent); any other
/// projection (`metadata`) keeps them as they are.
pub fn project(event: &Value, omit: bool) -> Value {
    let mut copy = event.clone();
    if omit {
        if let Some(items) = copy.as_object_mut().and_then(|e| e.get_mut("items")) {
            *items = Value::Array(Vec::new());
        }
    }
    copy
}

/// The boundary's request for one subscription: `request` with the
/// effective `value`, the carried `state` (None: the request's own) and the
/// projected items.
pub fn chain_request(
    request: &Value,
    b: &Boundary,
    value: &Value,
    state: Option<&Value>,
    omit: bool,
) -> Result<Value, String> {
    let mut msg = request.clone();
    let params = msg
        .get_mut("params")
        .and_then(Value::as_object_mut)
        .ok_or("the request has no params object")?;
    let event = params
        .get("event")
        .filter(|e| e.is_object())
        .ok_or("the request has no event object")?;
    let settled = settled_event(b, event, value)
        .ok_or_else(|| format!("setting the value of {} is not implemented", b.event))?;
    params.insert("event".into(), project(&settled, omit));
    if let Some(s) = state {
        params.insert("state".into(), s.clone());
    }
    Ok(msg)
}

/// The canonical `hooks/observe` notification of one event.
pub fn observation(protocol_version: &Value, event: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "hooks/observe",
           "params": {"protocolVersion": protocol_version, "event": event}})
}

/// The `hooks/observe` one subscription gets once the boundary settled with
/// `value` (the request's `protocolVersion`, the settled event, projected).
pub fn chain_observation(
    request: &Value,
    b: &Boundary,
    value: &Value,
    omit: bool,
) -> Result<Value, String> {
    let event = path(request, &["params", "event"])
        .filter(|e| e.is_object())
        .ok_or("the request has no event object")?;
    let settled = settled_event(b, event, value)
        .ok_or_else(|| format!("setting the value of {} is not implemented", b.event))?;
    let version = path(request, &["params", "protocolVersion"])
        .cloned()
        .unwrap_or(Value::Null);
    Ok(observation(&version, project(&settled, omit)))
}

/// An accepted reply that ends the chain: a deny or a flow stop.
pub fn short_circuits(outcome: &Outcome) -> bool {
    let a = &outcome.actual;
    a.get("permission").and_then(Value::as_str) == Some("deny")
        || a.get("decision").and_then(Value::as_str) == Some("deny")
        || a.get("flow").and_then(Value::as_str) == Some("stop")
}

/// The target's value an accepted reply left (None for a rejected one).
pub fn effective_value(b: &Boundary, outcome: &Outcome) -> Option<Value> {
    path(&outcome.actual, &["effective", b.target]).cloned()
}

/// Whether a reply's effects include a `return`.
pub fn has_return(reply: &Value) -> bool {
    match path(reply, &["result", "effects"]) {
        Some(Value::Array(effects)) => effects
            .iter()
            .any(|e| e.get("type").and_then(Value::as_str) == Some("return")),
        _ => false,
    }
}

/// Every `body.ref` (a string) of an event's `items`: of each item, and of
/// each part of a message item, in order.
pub fn body_refs(items: &Value) -> Vec<String> {
    let mut refs = Vec::new();
    let Value::Array(list) = items else {
        return refs;
    };
    for item in list.iter().filter(|i| i.is_object()) {
        let mut parts = vec![item];
        if let Some(Value::Array(ps)) = item.get("parts") {
            parts.extend(ps.iter());
        }
        for p in parts {
            if let Some(Value::String(r)) = path(p, &["body", "ref"]) {
                refs.push(r.clone());
            }
        }
    }
    refs
}

/// A copy of `v` with every `body.ref` (at any depth) that `refs` maps
/// replaced by what it maps to (a sender's alias -> the receiver's ref).
pub fn rebind_refs(v: &Value, refs: &HashMap<String, String>) -> Value {
    match v {
        Value::Array(items) => Value::Array(items.iter().map(|i| rebind_refs(i, refs)).collect()),
        Value::Object(obj) => {
            let mut out: Map<String, Value> = obj
                .iter()
                .map(|(k, i)| (k.clone(), rebind_refs(i, refs)))
                .collect();
            if let Some(Value::Object(body)) = out.get_mut("body") {
                if let Some(Value::String(r)) = body.get("ref") {
                    if let Some(to) = refs.get(r) {
                        body.insert("ref".into(), Value::String(to.clone()));
                    }
                }
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// A subscription's mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Intercept,
    Observe,
}

/// One subscription of a chain: `{id, mode, failurePolicy?, content?,
/// backend?, timeoutMs?}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Subscription {
    pub id: String,
    pub mode: Mode,
    /// `failurePolicy` is `fail-closed` (anything else fails open).
    pub fail_closed: bool,
    /// `content` is `omit` (anything else, `metadata`, keeps the items).
    pub omit: bool,
    /// `backend`, when it is a string.
    pub backend: Option<String>,
    /// An intercept subscription's own deadline (`timeoutMs`, a positive integer).
    pub timeout_ms: Option<u64>,
}

/// Why a subscription cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubscriptionError {
    /// The block is malformed (not an object, no string id, a bad `timeoutMs`).
    Invalid(String),
    /// A mode this implementation does not know.
    Unsupported(String),
}

impl std::fmt::Display for SubscriptionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SubscriptionError::Invalid(s) | SubscriptionError::Unsupported(s) => f.write_str(s),
        }
    }
}

impl Subscription {
    /// Reads one subscription block.
    pub fn parse(v: &Value) -> Result<Subscription, SubscriptionError> {
        let Value::Object(s) = v else {
            return Err(SubscriptionError::Invalid(
                "a chain subscription is not an object".into(),
            ));
        };
        let Some(Value::String(id)) = s.get("id") else {
            return Err(SubscriptionError::Invalid(
                "each chain subscription needs a string id".into(),
            ));
        };
        let mode = match s.get("mode").and_then(Value::as_str) {
            Some("intercept") => Mode::Intercept,
            Some("observe") => Mode::Observe,
            _ => {
                let shown = s.get("mode").map(json::encode).unwrap_or("none".into());
                return Err(SubscriptionError::Unsupported(format!(
                    "chain subscription mode {shown} is not implemented by ahp-rust"
                )));
            }
        };
        let timeout_ms = match (mode, s.get("timeoutMs")) {
            (Mode::Intercept, Some(t)) => match json::integer_value(t) {
                Some(n) if n >= 1 && !t.is_boolean() => Some(u64::try_from(n).unwrap_or(u64::MAX)),
                _ => {
                    return Err(SubscriptionError::Invalid(format!(
                        "subscription {}: timeoutMs must be a positive integer",
                        json::encode(&Value::String(id.clone()))
                    )))
                }
            },
            _ => None,
        };
        Ok(Subscription {
            id: id.clone(),
            mode,
            fail_closed: s.get("failurePolicy").and_then(Value::as_str) == Some("fail-closed"),
            omit: s.get("content").and_then(Value::as_str) == Some(OMIT),
            backend: s.get("backend").and_then(Value::as_str).map(str::to_string),
            timeout_ms,
        })
    }

    /// Reads a list of subscription blocks (the first problem wins).
    pub fn parse_list(v: &Value) -> Result<Vec<Subscription>, SubscriptionError> {
        let Value::Array(list) = v else {
            return Err(SubscriptionError::Invalid(
                "the subscriptions are not an array".into(),
            ));
        };
        list.iter().map(Subscription::parse).collect()
    }
}

/// One call the chain asks for: send `message` to `subscriptions()[index]`.
#[derive(Debug, Clone)]
pub struct Call {
    pub index: usize,
    pub message: Value,
}

/// One notification of a settled chain: send `message` (a `hooks/observe`)
/// to `subscriptions()[index]`.
#[derive(Debug, Clone)]
pub struct Notification {
    pub index: usize,
    pub message: Value,
}

/// How a chain settled.
#[derive(Debug, Clone, PartialEq)]
pub struct Settlement {
    /// The intercept subscriptions called (attempted), in order.
    pub called: Vec<String>,
    /// The calls that failed (operational failures), in order.
    pub failures: Vec<String>,
    /// The subscriptions notified once it settled, in order.
    pub observations: Vec<String>,
    /// The settled effective value.
    pub value: Value,
    /// The state the last accepted reply left (None: none was accepted).
    pub state: Option<Value>,
    /// A fail-closed failure ended it (the value is the original).
    pub failed_closed: bool,
    /// It was interrupted while its first call was in flight.
    pub interrupted: bool,
    /// The subscription whose accepted `return` bound the candidate still
    /// carried at the end (None: no candidate, or none supplied by a return).
    pub supplier: Option<String>,
}

impl Settlement {
    /// `{"called", "failures", "observations"}`.
    pub fn calls(&self) -> Value {
        json!({"called": self.called, "failures": self.failures, "observations": self.observations})
    }

    /// `{"called", "failures", "observations", "input"}`: a lifecycle chain's
    /// `actual` (docs/LIFECYCLE.md, "Chains").
    pub fn actual(&self) -> Value {
        json!({"called": self.called, "failures": self.failures,
               "observations": self.observations, "input": self.value})
    }
}

/// One boundary run through serial subscriptions (sans-I/O).
///
/// ```text
/// while let Some(call) = chain.next_call()? { send call.message; chain.answer(schemas, reply) }
/// // settled: mark it, then send every chain.notifications()?
/// ```
#[derive(Clone)]
pub struct Chain {
    request: Value,
    boundary: &'static Boundary,
    subscriptions: Vec<Subscription>,
    original: Value,
    value: Value,
    state: Option<Value>,
    next: usize,
    in_flight: Option<(usize, Value)>,
    called: Vec<usize>,
    failures: Vec<usize>,
    supplier: Option<usize>,
    failed_closed: bool,
    interrupted: bool,
    settled: bool,
}

impl std::fmt::Debug for Chain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chain")
            .field("boundary", &self.boundary.event)
            .field("request_id", &self.request_id())
            .field("subscriptions", &self.subscriptions)
            .field("settlement", &self.settlement())
            .finish_non_exhaustive()
    }
}

impl Chain {
    /// A chain of `subscriptions` at the boundary of `request` (an intercept
    /// request the caller already validated). Err: the event type is not
    /// implemented (outside the core set, or a target that is no plain field).
    pub fn new(request: Value, subscriptions: Vec<Subscription>) -> Result<Chain, String> {
        let event_type = path(&request, &["params", "event", "type"]);
        let boundary = event_type
            .and_then(Value::as_str)
            .and_then(boundary_for)
            .filter(|b| b.target_location().is_some())
            .ok_or_else(|| {
                format!(
                    "event type {} is not implemented by ahp-rust in a chain",
                    event_type.map(json::encode).unwrap_or("none".into())
                )
            })?;
        let original =
            boundary.original(path(&request, &["params", "event"]).unwrap_or(&Value::Null));
        Ok(Chain {
            request,
            boundary,
            subscriptions,
            value: original.clone(),
            original,
            state: None,
            next: 0,
            in_flight: None,
            called: Vec::new(),
            failures: Vec::new(),
            supplier: None,
            failed_closed: false,
            interrupted: false,
            settled: false,
        })
    }

    /// The boundary's request as given.
    pub fn request(&self) -> &Value {
        &self.request
    }

    /// The request's `id` when it is a string.
    pub fn request_id(&self) -> Option<&str> {
        self.request.get("id").and_then(Value::as_str)
    }

    pub fn boundary(&self) -> &'static Boundary {
        self.boundary
    }

    pub fn subscriptions(&self) -> &[Subscription] {
        &self.subscriptions
    }

    /// Whether any subscription intercepts (a chain of observers only calls
    /// nothing, and so releases nothing).
    pub fn has_intercepts(&self) -> bool {
        self.subscriptions.iter().any(|s| s.mode == Mode::Intercept)
    }

    /// The current effective value (the settled one once settled).
    pub fn value(&self) -> &Value {
        &self.value
    }

    pub fn is_settled(&self) -> bool {
        self.settled
    }

    /// The next call, or None once the chain is settled (no intercept
    /// subscription left, or it ended early). A call is in `called` from the
    /// moment it is handed out; give its reply to [`Chain::answer`] before
    /// asking for the next (None while one is in flight).
    pub fn next_call(&mut self) -> Result<Option<Call>, String> {
        if self.settled || self.in_flight.is_some() {
            return Ok(None);
        }
        while self.next < self.subscriptions.len()
            && self.subscriptions[self.next].mode != Mode::Intercept
        {
            self.next += 1;
        }
        let Some(sub) = self.subscriptions.get(self.next) else {
            self.settled = true;
            return Ok(None);
        };
        let index = self.next;
        self.next += 1;
        let message = chain_request(
            &self.request,
            self.boundary,
            &self.value,
            self.state.as_ref(),
            sub.omit,
        )?;
        self.called.push(index);
        self.in_flight = Some((index, message.clone()));
        Ok(Some(Call { index, message }))
    }

    /// The answer to the call in flight: `Ok(reply)` (any parsed JSON-RPC
    /// response, evaluated by the core rules without a host rule) or
    /// `Err(why)` (an operational failure before any reply: unreachable, a
    /// status other than 200, not JSON, the deadline). Returns the outcome
    /// (`reason` set when the call failed). With no call in flight it
    /// changes nothing and says so.
    pub fn answer(
        &mut self,
        schemas: &crate::schemas::Schemas,
        reply: Result<&Value, &str>,
    ) -> Outcome {
        let Some((index, message)) = self.in_flight.take() else {
            return rejected("no call is in flight");
        };
        let reply = match reply {
            Ok(reply) => reply,
            Err(why) => {
                self.fail(index);
                return rejected(&format!("no reply: {why}"));
            }
        };
        let applied = apply_at(
            self.boundary,
            schemas,
            &message,
            reply,
            Options { host_rule: false },
        );
        if applied.outcome.reason.is_some() || applied.outcome.unsupported.is_some() {
            self.fail(index);
            return applied.outcome;
        }
        if let Some(v) = effective_value(self.boundary, &applied.outcome) {
            self.value = v;
        }
        let candidate = applied
            .state
            .as_ref()
            .and_then(|s| s.get("candidate"))
            .is_some_and(|c| !c.is_null());
        if !candidate {
            self.supplier = None;
        } else if has_return(reply) {
            self.supplier = Some(index);
        }
        self.state = applied.state;
        if short_circuits(&applied.outcome) {
            self.settled = true;
        }
        applied.outcome
    }

    fn fail(&mut self, index: usize) {
        self.failures.push(index);
        if self.subscriptions[index].fail_closed {
            self.value = self.original.clone(); // a fail-closed failure denies
            self.failed_closed = true;
            self.settled = true;
        }
    }

    /// Interrupts the boundary while its call is in flight: it settles with
    /// the original value, the call's reply is to be dropped (not given to
    /// [`Chain::answer`]) and nothing is notified. Err when no call is in
    /// flight.
    pub fn interrupt(&mut self) -> Result<(), String> {
        if self.in_flight.take().is_none() {
            return Err("no call is in flight to interrupt".into());
        }
        self.value = self.original.clone();
        self.state = None;
        self.supplier = None;
        self.interrupted = true;
        self.settled = true;
        Ok(())
    }

    fn notified(&self) -> Vec<usize> {
        if !self.settled || self.interrupted {
            return Vec::new();
        }
        (0..self.subscriptions.len())
            .filter(|i| self.subscriptions[*i].mode == Mode::Observe || !self.called.contains(i))
            .collect()
    }

    /// Once settled, the notifications to send, in subscription order: every
    /// observer, and every intercept subscription not called (none for an
    /// interrupted chain). Empty before settlement.
    pub fn notifications(&self) -> Result<Vec<Notification>, String> {
        self.notified()
            .into_iter()
            .map(|index| {
                chain_observation(
                    &self.request,
                    self.boundary,
                    &self.value,
                    self.subscriptions[index].omit,
                )
                .map(|message| Notification { index, message })
            })
            .collect()
    }

    /// How it settled (so far, before settlement).
    pub fn settlement(&self) -> Settlement {
        let ids = |list: &[usize]| -> Vec<String> {
            list.iter()
                .map(|i| self.subscriptions[*i].id.clone())
                .collect()
        };
        Settlement {
            called: ids(&self.called),
            failures: ids(&self.failures),
            observations: ids(&self.notified()),
            value: self.value.clone(),
            state: self.state.clone(),
            failed_closed: self.failed_closed,
            interrupted: self.interrupted,
            supplier: self.supplier.map(|i| self.subscriptions[i].id.clone()),
        }
    }
}

fn rejected(reason: &str) -> Outcome {
    Outcome {
        actual: json!({"rejected": true}),
        unsupported: None,
        reason: Some(reason.to_string()),
    }
}
