//! Source-local lineage (docs/CATALOGUE.md, "Lineage (source-local)" and
//! "Readings settled"): what a receiver admits among events that passed
//! their schema, and the receiver's whole verdict on a `hooks/observe`
//! notification (the schema first, then lineage). No I/O.
//!
//! A [`Lineage`] keeps, for its life, the accepted events by identity
//! `(source, id)`. An edge is an event's `parentEventId` and names an event
//! of the same source only. [`Lineage::judge`] applies, in order:
//!
//! 1. **identity**: a known `(source, id)` must keep its `type`, its
//!    `parentEventId` (both absent or equal) and, for task events,
//!    `task.id`, for workspace events `workspace.kind`; then it is a
//!    redelivery (accepted, nothing changes, no further check);
//! 2. **cycles**: the event is its own parent, or the chain of known parents
//!    from its parent reaches its id (through events that named it as their
//!    parent before it arrived, too);
//! 3. **proposal and actual**: an actual change whose known parent is a
//!    proposal is of the same kind and keeps its identity (task: `task.id`
//!    and `task.operation`; workspace: `workspace.kind`); a proposal arriving
//!    after its actual-change children (a late parent) is checked against
//!    each of them; every other parent relation is free;
//! 4. **no-op actual changes**;
//! 5. an unknown parent is accepted (checked when it arrives, by 3).
//!
//! A rejection changes nothing; an accepted event (not a redelivery) becomes
//! known. Values compare with [`json::equal`] (typed, no coercion, key order
//! ignored).

use crate::json::{self, path};
use crate::schemas::{Schemas, OBSERVE_NOTIFICATION};
use serde_json::{json, Value};
use std::collections::HashMap;

pub const TASK_BEFORE: &str = "task.change.before";
pub const TASK_AFTER: &str = "task.change.after";
pub const WORKSPACE_BEFORE: &str = "workspace.change.before";
pub const WORKSPACE_AFTER: &str = "workspace.change.after";
pub const FILE_CHANGED: &str = "file.changed";

/// The lineage rule that rejected an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineageRule {
    Identity,
    Cycle,
    Proposal,
    NoOp,
}

impl LineageRule {
    pub fn as_str(self) -> &'static str {
        match self {
            LineageRule::Identity => "identity",
            LineageRule::Cycle => "cycle",
            LineageRule::Proposal => "proposal",
            LineageRule::NoOp => "no-op",
        }
    }
}

/// The lineage verdict on one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineageVerdict {
    /// Accepted; `redelivery` when its identity was already known (rule 1).
    Accepted { redelivery: bool },
    /// Rejected by `rule`, for `reason`.
    Rejected { rule: LineageRule, reason: String },
}

impl LineageVerdict {
    pub fn accepted(&self) -> bool {
        matches!(self, LineageVerdict::Accepted { .. })
    }

    pub fn redelivery(&self) -> bool {
        matches!(self, LineageVerdict::Accepted { redelivery: true })
    }

    pub fn rule(&self) -> Option<LineageRule> {
        match self {
            LineageVerdict::Rejected { rule, .. } => Some(*rule),
            LineageVerdict::Accepted { .. } => None,
        }
    }
}

fn reject(rule: LineageRule, reason: impl Into<String>) -> LineageVerdict {
    LineageVerdict::Rejected {
        rule,
        reason: reason.into(),
    }
}

/// The kind of a proposal event type (`task`, `workspace`).
fn proposal_kind(event_type: &str) -> Option<&'static str> {
    match event_type {
        TASK_BEFORE => Some("task"),
        WORKSPACE_BEFORE => Some("workspace"),
        _ => None,
    }
}

/// The kind of an actual-change event type.
fn actual_kind(event_type: &str) -> Option<&'static str> {
    match event_type {
        TASK_AFTER => Some("task"),
        WORKSPACE_AFTER => Some("workspace"),
        _ => None,
    }
}

fn type_of(event: &Value) -> &str {
    event.get("type").and_then(Value::as_str).unwrap_or("")
}

/// One part of an identity as a map key (any JSON value, typed).
fn key(v: Option<&Value>) -> String {
    v.map(json::encode).unwrap_or_default()
}

/// Both absent, or both present and equal.
fn same_at(a: &Value, b: &Value, keys: &[&str]) -> bool {
    match (path(a, keys), path(b, keys)) {
        (None, None) => true,
        (Some(x), Some(y)) => json::equal(x, y),
        _ => false,
    }
}

/// The event's `parentEventId` as a key, when it has one.
fn parent_of(event: &Value) -> Option<String> {
    event.get("parentEventId").map(|p| key(Some(p)))
}

/// `(source, id)` of an event, as keys.
fn identity_of(event: &Value) -> (String, String) {
    (key(event.get("source")), key(event.get("id")))
}

/// Why `actual` does not carry out `proposal` (rule 3); None when it does,
/// or when the two are not a proposal and an actual change.
pub fn proposal_mismatch(proposal: &Value, actual: &Value) -> Option<String> {
    let proposed = proposal_kind(type_of(proposal))?;
    let done = actual_kind(type_of(actual))?;
    if proposed != done {
        return Some(format!(
            "a {} under a {} is the wrong kind",
            type_of(actual),
            type_of(proposal)
        ));
    }
    if done == "task" {
        for name in ["id", "operation"] {
            if !same_at(proposal, actual, &["task", name]) {
                return Some(format!(
                    "the actual change does not keep the proposal's task.{name}"
                ));
            }
        }
        return None;
    }
    (!same_at(proposal, actual, &["workspace", "kind"]))
        .then(|| "the actual change does not keep the proposal's workspace.kind".to_string())
}

/// `change` is an object whose every key is in `prior` (an object) with an
/// equal value (true for an empty change).
fn all_kept(change: Option<&Value>, prior: Option<&Value>) -> bool {
    match (change, prior) {
        (Some(Value::Object(c)), Some(Value::Object(p))) => c
            .iter()
            .all(|(k, v)| p.get(k).is_some_and(|w| json::equal(v, w))),
        _ => false,
    }
}

/// Why `event` is a no-op actual change (rule 4); None when it is not.
pub fn no_op_change(event: &Value) -> Option<String> {
    match type_of(event) {
        TASK_AFTER => {
            if path(event, &["task", "operation"]).and_then(Value::as_str) != Some("update") {
                return None;
            }
            let change = path(event, &["task", "change"]);
            if matches!(change, Some(Value::Object(c)) if c.is_empty()) {
                return Some("an update task.change.after with an empty change".into());
            }
            all_kept(change, path(event, &["task", "prior"]))
                .then(|| "an update task.change.after whose change equals its prior".into())
        }
        WORKSPACE_AFTER => all_kept(
            path(event, &["workspace", "change"]),
            path(event, &["workspace", "prior"]),
        )
        .then(|| "a workspace.change.after whose prior holds its change".into()),
        FILE_CHANGED => {
            let Some(Value::Array(changes)) = event.get("changes") else {
                return None;
            };
            changes.iter().enumerate().find_map(|(i, c)| {
                let c = c.as_object()?;
                if c.get("operation").and_then(Value::as_str) != Some("update") {
                    return None;
                }
                match (c.get("before"), c.get("after")) {
                    (Some(b), Some(a)) if json::equal(b, a) => Some(format!(
                        "file.changed changes[{i}] is an update whose before equals its after"
                    )),
                    _ => None,
                }
            })
        }
        _ => None,
    }
}

/// The accepted events of one receiver.
#[derive(Debug, Clone, Default)]
pub struct Lineage {
    /// (source, id) -> the accepted event
    known: HashMap<(String, String), Value>,
    /// (source, parent id) -> ids of known events naming it, in arrival order
    children: HashMap<(String, String), Vec<String>>,
}

impl Lineage {
    pub fn new() -> Lineage {
        Lineage::default()
    }

    /// The number of known events (every source).
    pub fn len(&self) -> usize {
        self.known.len()
    }

    pub fn is_empty(&self) -> bool {
        self.known.is_empty()
    }

    /// The verdict on `event` (schema-valid), changing nothing.
    pub fn judge(&self, event: &Value) -> LineageVerdict {
        let id = identity_of(event);
        if let Some(known) = self.known.get(&id) {
            return redelivery(known, event);
        }
        if let Some(why) = self.cycle(&id, event) {
            return reject(LineageRule::Cycle, why);
        }
        if let Some(why) = self.proposal(&id, event) {
            return reject(LineageRule::Proposal, why);
        }
        if let Some(why) = no_op_change(event) {
            return reject(LineageRule::NoOp, why);
        }
        LineageVerdict::Accepted { redelivery: false }
    }

    /// Judges `event`; accepted and not a redelivery, it becomes known.
    pub fn admit(&mut self, event: &Value) -> LineageVerdict {
        let verdict = self.judge(event);
        if verdict == (LineageVerdict::Accepted { redelivery: false }) {
            let (source, id) = identity_of(event);
            if let Some(parent) = parent_of(event) {
                self.children
                    .entry((source.clone(), parent))
                    .or_default()
                    .push(id.clone());
            }
            self.known.insert((source, id), event.clone());
        }
        verdict
    }

    /// Rule 2: why the chain of known parents from `event`'s reaches it.
    fn cycle(&self, id: &(String, String), event: &Value) -> Option<String> {
        let mut parent = parent_of(event);
        let mut seen: Vec<String> = Vec::new();
        while let Some(p) = parent {
            if p == id.1 {
                return Some(if seen.is_empty() {
                    "the event names itself as its parent".into()
                } else {
                    "the chain of known parents reaches the event itself".into()
                });
            }
            if seen.contains(&p) {
                return None; // a loop among known events that does not reach this one
            }
            let known = self.known.get(&(id.0.clone(), p.clone()))?;
            seen.push(p);
            parent = parent_of(known);
        }
        None
    }

    /// Rule 3, both ways: against the event's known parent and, for a
    /// proposal, against each known child that named it before it arrived.
    fn proposal(&self, id: &(String, String), event: &Value) -> Option<String> {
        if let Some(parent) = parent_of(event) {
            if let Some(known) = self.known.get(&(id.0.clone(), parent)) {
                if let Some(why) = proposal_mismatch(known, event) {
                    return Some(why);
                }
            }
        }
        if proposal_kind(type_of(event)).is_some() {
            for child in self.children.get(id).into_iter().flatten() {
                let Some(known) = self.known.get(&(id.0.clone(), child.clone())) else {
                    continue;
                };
                if let Some(why) = proposal_mismatch(event, known) {
                    return Some(format!("a known child {child}: {why}"));
                }
            }
        }
        None
    }

    /// The receiver's verdict on one `hooks/observe` notification
    /// (docs/CATALOGUE.md, "The receiver"): valid against the canonical
    /// `observe-notification` schema, then lineage for its `params.event`
    /// (which becomes known when accepted). A rejection changes nothing.
    pub fn deliver(&mut self, schemas: &Schemas, message: &Value) -> Delivery {
        if let Some(problem) = schemas.check(OBSERVE_NOTIFICATION, message) {
            return Delivery::Rejected {
                error_kind: ErrorKind::Schema,
                reason: problem,
            };
        }
        let event = path(message, &["params", "event"]).unwrap_or(&Value::Null);
        match self.admit(event) {
            LineageVerdict::Accepted { redelivery } => Delivery::Accepted { redelivery },
            LineageVerdict::Rejected { rule, reason } => Delivery::Rejected {
                error_kind: ErrorKind::Lineage,
                reason: format!("{}: {reason}", rule.as_str()),
            },
        }
    }
}

/// Rule 1 for a known identity.
fn redelivery(known: &Value, event: &Value) -> LineageVerdict {
    if !same_at(known, event, &["type"]) {
        return reject(
            LineageRule::Identity,
            "a known (source, id) with another type",
        );
    }
    if !same_at(known, event, &["parentEventId"]) {
        return reject(
            LineageRule::Identity,
            "a known (source, id) with another parentEventId",
        );
    }
    match type_of(event) {
        TASK_BEFORE | TASK_AFTER if !same_at(known, event, &["task", "id"]) => reject(
            LineageRule::Identity,
            "a known (source, id) with another task.id",
        ),
        WORKSPACE_BEFORE | WORKSPACE_AFTER if !same_at(known, event, &["workspace", "kind"]) => {
            reject(
                LineageRule::Identity,
                "a known (source, id) with another workspace.kind",
            )
        }
        _ => LineageVerdict::Accepted { redelivery: true },
    }
}

/// Why a receiver rejected a notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Invalid against the canonical `observe-notification` schema (HTTP 400).
    Schema,
    /// A lineage violation (HTTP 409).
    Lineage,
}

impl ErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Schema => "schema",
            ErrorKind::Lineage => "lineage",
        }
    }
}

/// A receiver's verdict on one notification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    Accepted {
        redelivery: bool,
    },
    Rejected {
        error_kind: ErrorKind,
        reason: String,
    },
}

impl Delivery {
    pub fn accepted(&self) -> bool {
        matches!(self, Delivery::Accepted { .. })
    }

    pub fn error_kind(&self) -> Option<ErrorKind> {
        match self {
            Delivery::Rejected { error_kind, .. } => Some(*error_kind),
            Delivery::Accepted { .. } => None,
        }
    }

    /// `{"accepted": bool, "errorKind": null | "schema" | "lineage"}`.
    pub fn to_value(&self) -> Value {
        json!({"accepted": self.accepted(),
               "errorKind": self.error_kind().map(ErrorKind::as_str)})
    }
}

/// The event id a receipt names: `params.event.id` when it is a string, else null.
pub fn event_id_of(message: &Value) -> Value {
    match path(message, &["params", "event", "id"]) {
        Some(id @ Value::String(_)) => id.clone(),
        _ => Value::Null,
    }
}
