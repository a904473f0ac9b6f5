//! Context compaction as a host runs it (docs/COMPACTION.md), no I/O: what
//! the host does with the settled `context.compact.before` boundary (apply a
//! supplied summary, compact with the synthetic compactor, or compact
//! nothing), the synthetic compactor's summary, the `context.compact.after`
//! request derived from them, and the receiver's refusal of a boundary
//! request. Both boundaries run as [`crate::chain::Chain`]s.

use crate::boundaries::Boundary;
use crate::chain::{chain_request, Chain, Settlement};
use crate::engine::{apply_at, Options};
use crate::json::path;
use crate::manifest::PROTOCOL_VERSION;
use crate::schemas::{Schemas, INTERCEPT_REQUEST};
use serde_json::{json, Map, Value};

pub const COMPACT_BEFORE: &str = "context.compact.before";
pub const COMPACT_AFTER: &str = "context.compact.after";

/// What the after boundary advertises: `summary` replace only, or (observe
/// only) no effect at all.
pub fn after_capabilities(observe_only: bool) -> Value {
    if observe_only {
        json!({"effects": []})
    } else {
        json!({"effects": ["modify"], "modify": {"summary": {"replace": true, "merge": false}}})
    }
}

/// What the host did at the before boundary; `summary`, `execution` and
/// `provenance` are None when nothing was compacted.
#[derive(Debug, Clone, PartialEq)]
pub struct Compaction {
    pub applied: bool,
    pub summary: Option<Value>,
    pub execution: Option<Value>,
    pub provenance: Option<Value>,
}

impl Compaction {
    /// Nothing compacted.
    pub fn not_applied() -> Compaction {
        Compaction {
            applied: false,
            summary: None,
            execution: None,
            provenance: None,
        }
    }
}

/// The core rules' result (the derived `actual`) of a boundary's `request`
/// carrying its settled `value` and `state` (None: the request's own), with
/// no further effect; Err says why there is none.
pub fn settled_result(
    schemas: &Schemas,
    request: &Value,
    b: &'static Boundary,
    value: &Value,
    state: Option<&Value>,
) -> Result<Value, String> {
    let msg = chain_request(request, b, value, state, false)?;
    let reply = json!({"jsonrpc": "2.0", "id": msg.get("id").cloned().unwrap_or(Value::Null),
        "result": {"protocolVersion": path(&msg, &["params", "protocolVersion"]).cloned().unwrap_or(Value::Null),
                   "effects": []}});
    let out = apply_at(b, schemas, &msg, &reply, Options { host_rule: false }).outcome;
    match (out.unsupported, out.reason) {
        (Some(why), _) | (None, Some(why)) => Err(why),
        (None, None) => Ok(out.actual),
    }
}

/// The host's outcome from the core rules' `result` of the settled before
/// boundary (None: a fail-closed failure): a bound supplied summary (the
/// decision `allow`, no `stop`; `supplier`: the subscription whose accepted
/// return bound it), else the synthetic compactor's when the compaction is
/// executed, else nothing.
pub fn compact(
    result: Option<&Value>,
    supplier: Option<&str>,
    summary_id: &str,
    items: usize,
    instructions: &Value,
) -> Compaction {
    let Some(result) = result else {
        return Compaction::not_applied();
    };
    let decision = result.get("decision").and_then(Value::as_str);
    let stopped = result.get("flow").and_then(Value::as_str) == Some("stop");
    if let (Some(supplied), Some("allow"), false) = (result.get("result"), decision, stopped) {
        return Compaction {
            applied: true,
            summary: Some(supplied.clone()),
            execution: Some(json!({"status": "skipped", "reason": "supplied_result"})),
            provenance: Some(json!({"kind": "supplied", "supplier": supplier})),
        };
    }
    if result.get("executed") == Some(&Value::Bool(true)) {
        return Compaction {
            applied: true,
            summary: Some(synthetic_summary(summary_id, items, instructions)),
            execution: Some(json!({"status": "executed"})),
            provenance: Some(json!({"kind": "generated"})),
        };
    }
    Compaction::not_applied()
}

/// The synthetic compactor's summary, one text part: `"Summary of N
/// items."`, then `" Instructions: "` and the `text` of every instruction
/// part joined by a single space (empty strings included) when that join is
/// not empty.
pub fn synthetic_summary(id: &str, items: usize, instructions: &Value) -> Value {
    let texts: Vec<&str> = match instructions {
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => Vec::new(),
    };
    let mut text = format!("Summary of {items} items.");
    let joined = texts.join(" ");
    if !joined.is_empty() {
        text.push_str(" Instructions: ");
        text.push_str(&joined);
    }
    json!([{"id": id, "kind": "text", "mediaType": "text/plain", "selection": "body", "text": text}])
}

/// The `context.compact.after` intercept (`id` is its event's id too)
/// following the before request's event: its `source`, `time` and (when
/// present) `session`, its id as parent, the summary, the ids of the
/// compacted items, and the execution.
pub fn after_request(
    id: &str,
    before_request: &Value,
    summary: &Value,
    execution: &Value,
    observe_only: bool,
) -> Value {
    let before = path(before_request, &["params", "event"]).unwrap_or(&Value::Null);
    let mut event = Map::new();
    event.insert("id".into(), json!(id));
    for k in ["source", "time", "session"] {
        if let Some(v) = before.get(k) {
            event.insert(k.into(), v.clone());
        }
    }
    let removed: Vec<Value> = match before.get("items") {
        Some(Value::Array(items)) => items
            .iter()
            .filter(|i| i.is_object())
            .map(|i| json!({"id": i.get("id").cloned().unwrap_or(Value::Null)}))
            .collect(),
        _ => Vec::new(),
    };
    event.insert("type".into(), json!(COMPACT_AFTER));
    event.insert(
        "parentEventId".into(),
        before.get("id").cloned().unwrap_or(Value::Null),
    );
    event.insert("summary".into(), summary.clone());
    event.insert("removed".into(), Value::Array(removed));
    event.insert("execution".into(), execution.clone());
    json!({"jsonrpc": "2.0", "id": id, "method": "hooks/intercept",
           "params": {"protocolVersion": PROTOCOL_VERSION, "event": event,
                      "capabilities": after_capabilities(observe_only)}})
}

/// The host's outcome of a settled before chain (`summary_id`: the synthetic
/// summary's part id): nothing after a fail-closed failure, else
/// [`compact`] of the core rules' result of the settled request.
pub fn host_outcome(
    schemas: &Schemas,
    before: &Chain,
    summary_id: &str,
) -> Result<Compaction, String> {
    let s = before.settlement();
    if s.failed_closed {
        return Ok(Compaction::not_applied());
    }
    let result = settled_result(
        schemas,
        before.request(),
        before.boundary(),
        &s.value,
        s.state.as_ref(),
    )
    .map_err(|why| format!("the settled before boundary has no result: {why}"))?;
    let items = match path(before.request(), &["params", "event", "items"]) {
        Some(Value::Array(items)) => items.len(),
        _ => 0,
    };
    Ok(compact(
        Some(&result),
        s.supplier.as_deref(),
        summary_id,
        items,
        &s.value,
    ))
}

/// A run's `actual` (docs/COMPACTION.md, "What the host (client) does for a
/// run", step 5): a fail-closed failure at the after boundary prevents the
/// application too.
pub fn run_actual(before: &Settlement, host: &Compaction, after: Option<&Settlement>) -> Value {
    let applied = host.applied && !after.is_some_and(|a| a.failed_closed);
    let empty = json!({"called": [], "failures": [], "observations": []});
    let instructions = match &before.value {
        Value::Null => json!([]),
        v => v.clone(),
    };
    let (summary, execution, provenance) = match (applied, after) {
        (true, Some(a)) => (
            a.value.clone(),
            host.execution.clone().unwrap_or(Value::Null),
            host.provenance.clone().unwrap_or(Value::Null),
        ),
        _ => (Value::Null, Value::Null, Value::Null),
    };
    json!({"applied": applied, "instructions": instructions, "summary": summary,
           "execution": execution, "provenance": provenance, "before": before.calls(),
           "after": after.map_or(empty, Settlement::calls)})
}

/// Whether a text part anywhere in `v` carries `body` (compaction text is
/// inline, never a reference).
pub fn carries_body(v: &Value) -> bool {
    match v {
        Value::Array(items) => items.iter().any(carries_body),
        Value::Object(obj) => {
            (obj.contains_key("body") && obj.get("kind").and_then(Value::as_str) == Some("text"))
                || obj.values().any(carries_body)
        }
        _ => false,
    }
}

/// Why the receiver refuses a boundary request (JSON-RPC `-32602`, nothing
/// recorded), checking in order the canonical `intercept-request` schema,
/// the id (`is_boundary_id`: a run's `<row id>:before` / `:after`), then
/// text parts carrying `body`; None when it is served.
pub fn refusal(
    schemas: &Schemas,
    message: &Value,
    is_boundary_id: impl Fn(&str) -> bool,
) -> Option<String> {
    if let Some(problem) = schemas.check(INTERCEPT_REQUEST, message) {
        return Some(format!("invalid intercept request: {problem}"));
    }
    if !message
        .get("id")
        .and_then(Value::as_str)
        .is_some_and(is_boundary_id)
    {
        return Some("no run has this boundary id".into());
    }
    if carries_body(message.get("params").unwrap_or(&Value::Null)) {
        return Some("a text part carries body (compaction text is inline)".into());
    }
    None
}
