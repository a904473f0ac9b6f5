//! The boundaries of the core set (docs/scenarios.md, "Boundaries in the core
//! set", and the slot table of "Composition rules", phase 1, item 4): for each
//! event type its modify target and where the target lives in the event, the
//! canonical definition every value of the target is validated against,
//! whether it gates an operation (and so has permission semantics), which
//! effects and flow operations the protocol allows there, and what a `return`
//! may supply.

use crate::json::{self, path};
use serde_json::{json, Map, Value};

/// `content-item.schema.json#/$defs/messages`: message lists (`output`,
/// `response`, `request`, a model `return`) and inject values.
pub const DEF_MESSAGES: &str = "content-item.schema.json#/$defs/messages";
/// Outbound `content`: every message has role `assistant`.
pub const DEF_ASSISTANT_MESSAGES: &str = "interaction-event.schema.json#/$defs/assistantMessages";
/// Text-part lists (`instructions`, `summary`, a compaction `return`).
pub const DEF_TEXT_PARTS: &str = "content-item.schema.json#/$defs/textParts";
/// `workspace`: `cwd` and/or `workspaceRoots`, nothing else.
pub const DEF_WORKSPACE_CHANGE: &str = "common.schema.json#/$defs/workspaceChange";
/// Elicitation `content`: a flat answer object.
pub const DEF_ANSWER_CONTENT: &str = "mcp-elicitation.schema.json#/$defs/answerContent";

/// Every canonical definition the engine validates against.
pub const DEFINITIONS: [&str; 5] = [
    DEF_MESSAGES,
    DEF_ASSISTANT_MESSAGES,
    DEF_TEXT_PARTS,
    DEF_WORKSPACE_CHANGE,
    DEF_ANSWER_CONTENT,
];

/// What a slot's values must satisfy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// A JSON object (the tool input: `tool-before.schema.json` says no more).
    Object,
    /// Any JSON value (a tool's supplied result).
    Any,
    /// A canonical schema definition (`file#pointer`).
    Schema(&'static str),
}

/// One row of the boundary table.
pub struct Boundary {
    /// The event type.
    pub event: &'static str,
    /// The modify target.
    pub target: &'static str,
    /// The definition every value of the target satisfies.
    pub slot: Slot,
    /// The target is a list: `merge` appends, `replace` minds withheld content.
    pub list: bool,
    /// The boundary gates an operation, and so has permission semantics.
    pub gated: bool,
    /// The effect types the protocol allows here.
    pub effects: &'static [&'static str],
    /// The flow operations allowed here.
    pub flow_operations: &'static [&'static str],
    /// What a `return` may supply, or None where no `return` is allowed.
    pub returns: Option<Slot>,
    original: fn(&Value) -> Value,
    editable: fn(&Value) -> Option<&'static str>,
}

impl Boundary {
    /// The event's own value of the target (a copy).
    pub fn original(&self, event: &Value) -> Value {
        (self.original)(event)
    }

    /// Why the target may not be edited in this event, or None when it may.
    pub fn not_editable(&self, event: &Value) -> Option<&'static str> {
        (self.editable)(event)
    }

    /// Whether the protocol allows the effect type at this boundary.
    pub fn allows(&self, effect: &str) -> bool {
        self.effects.contains(&effect)
    }

    /// Whether the flow operation is allowed at this boundary.
    pub fn allows_flow(&self, operation: &str) -> bool {
        self.flow_operations.contains(&operation)
    }

    /// The event with its target replaced by `value` (what the next
    /// interceptor of a chain, or an observer, sees), where the target is a
    /// plain event field; None for the elicitation answer, which lives in a
    /// serialized text.
    pub fn with_value(&self, event: &Value, value: &Value) -> Option<Value> {
        let location = self.location()?;
        let mut copy = event.clone();
        let mut node = &mut copy;
        for key in &location[..location.len() - 1] {
            let obj = node.as_object_mut()?;
            let child = obj
                .entry((*key).to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            if !child.is_object() {
                *child = Value::Object(Map::new());
            }
            node = child;
        }
        node.as_object_mut()?
            .insert(location[location.len() - 1].to_string(), value.clone());
        Some(copy)
    }

    /// Where the target lives in the event (keys from the event down), or
    /// None where it is no plain event field (the elicitation answer, inside
    /// a serialized text).
    pub fn target_location(&self) -> Option<&'static [&'static str]> {
        self.location()
    }

    fn location(&self) -> Option<&'static [&'static str]> {
        Some(match self.event {
            "tool.before" => &["tool", "input"],
            "tool.after" | "turn.finish.before" | "model.request.before" => &["items"],
            "context.compact.before" => &["instructions"],
            "context.compact.after" => &["summary"],
            "user.message.outbound" => &["message", "messages"],
            "workspace.change.before" => &["workspace", "change"],
            _ => return None,
        })
    }
}

/// The value at `keys`, or `default` when it is absent or `null`.
fn value_at(event: &Value, keys: &[&str], default: Value) -> Value {
    match path(event, keys) {
        None | Some(Value::Null) => default,
        Some(v) => v.clone(),
    }
}

fn tool_input(event: &Value) -> Value {
    value_at(event, &["tool", "input"], json!({}))
}

fn items(event: &Value) -> Value {
    value_at(event, &["items"], json!([]))
}

fn instructions(event: &Value) -> Value {
    value_at(event, &["instructions"], json!([]))
}

fn summary(event: &Value) -> Value {
    value_at(event, &["summary"], json!([]))
}

fn outbound(event: &Value) -> Value {
    value_at(event, &["message", "messages"], json!([]))
}

fn workspace(event: &Value) -> Value {
    value_at(event, &["workspace", "change"], Value::Null)
}

/// The parsed MCP result carried as text in `elicitation.result`: only a
/// text part with body selection (and no gap) carries one, and its text must
/// be strict JSON holding an object.
pub fn elicitation_result(event: &Value) -> Option<Map<String, Value>> {
    let part = path(event, &["elicitation", "result"])?.as_object()?;
    if part.get("selection").and_then(Value::as_str) != Some("body")
        || part.get("kind").and_then(Value::as_str) != Some("text")
        || part.contains_key("gap")
    {
        return None;
    }
    let text = part.get("text")?.as_str()?;
    match json::parse(text.as_bytes()) {
        Ok(Value::Object(obj)) => Some(obj),
        _ => None,
    }
}

/// The answer's `content` (null when the event carries none).
fn elicitation_answer(event: &Value) -> Value {
    elicitation_result(event)
        .and_then(|mut r| r.remove("content"))
        .unwrap_or(Value::Null)
}

/// Content edits need an accepted form result carried with body selection
/// (docs/scenarios.md, phase 1, item 4).
fn elicitation_editable(event: &Value) -> Option<&'static str> {
    if path(event, &["elicitation", "mode"]).and_then(Value::as_str) != Some("form") {
        return Some("content edits need a form elicitation");
    }
    if path(event, &["elicitation", "action"]).and_then(Value::as_str) != Some("accept") {
        return Some("content edits need an accepted elicitation");
    }
    let Some(parsed) = elicitation_result(event) else {
        return Some("content edits need a result part with body selection carrying a JSON object");
    };
    match parsed.get("action") {
        None => None,
        Some(Value::String(a)) if a == "accept" => None,
        Some(_) => Some("the carried result is not an accepted one"),
    }
}

fn always_editable(_: &Value) -> Option<&'static str> {
    None
}

/// The core set, in the order of the docs' table.
pub static BOUNDARIES: [Boundary; 9] = [
    Boundary {
        event: "tool.before",
        target: "input",
        slot: Slot::Object,
        list: false,
        gated: true,
        effects: &[
            "deny", "allow", "ask", "modify", "message", "return", "flow", "inject",
        ],
        flow_operations: &["stop"],
        returns: Some(Slot::Any),
        original: tool_input,
        editable: always_editable,
    },
    Boundary {
        event: "tool.after",
        target: "output",
        slot: Slot::Schema(DEF_MESSAGES),
        list: true,
        gated: false,
        effects: &["modify", "message", "flow", "inject"],
        flow_operations: &["stop", "continue"],
        returns: None,
        original: items,
        editable: always_editable,
    },
    Boundary {
        event: "turn.finish.before",
        target: "response",
        slot: Slot::Schema(DEF_MESSAGES),
        list: true,
        gated: false,
        effects: &["modify", "message", "flow"],
        flow_operations: &["stop", "continue"],
        returns: None,
        original: items,
        editable: always_editable,
    },
    Boundary {
        event: "model.request.before",
        target: "request",
        slot: Slot::Schema(DEF_MESSAGES),
        list: true,
        gated: true,
        effects: &["deny", "modify", "message", "return", "flow", "inject"],
        flow_operations: &["stop"],
        returns: Some(Slot::Schema(DEF_MESSAGES)),
        original: items,
        editable: always_editable,
    },
    Boundary {
        event: "context.compact.before",
        target: "instructions",
        slot: Slot::Schema(DEF_TEXT_PARTS),
        list: true,
        gated: true,
        effects: &["deny", "modify", "message", "return", "inject"],
        flow_operations: &[],
        returns: Some(Slot::Schema(DEF_TEXT_PARTS)),
        original: instructions,
        editable: always_editable,
    },
    Boundary {
        event: "context.compact.after",
        target: "summary",
        slot: Slot::Schema(DEF_TEXT_PARTS),
        list: true,
        gated: false,
        effects: &["modify", "message", "inject"],
        flow_operations: &[],
        returns: None,
        original: summary,
        editable: always_editable,
    },
    Boundary {
        event: "user.message.outbound",
        target: "content",
        slot: Slot::Schema(DEF_ASSISTANT_MESSAGES),
        list: true,
        gated: true,
        effects: &["deny", "modify", "message"],
        flow_operations: &[],
        returns: None,
        original: outbound,
        editable: always_editable,
    },
    Boundary {
        event: "user.elicitation.result",
        target: "content",
        slot: Slot::Schema(DEF_ANSWER_CONTENT),
        list: false,
        gated: false,
        effects: &["modify", "message"],
        flow_operations: &[],
        returns: None,
        original: elicitation_answer,
        editable: elicitation_editable,
    },
    Boundary {
        event: "workspace.change.before",
        target: "workspace",
        slot: Slot::Schema(DEF_WORKSPACE_CHANGE),
        list: false,
        gated: true,
        effects: &["deny", "modify", "message"],
        flow_operations: &[],
        returns: None,
        original: workspace,
        editable: always_editable,
    },
];

/// The `user.elicitation.request` boundary (docs/ELICITATION.md, "What the
/// host (client) does for an atomic row"), outside the core set's table (so
/// [`boundary_for`] never returns it): gated, with `deny`, `return` (an MCP
/// `ElicitResult`, `mcp-elicitation.schema.json#/$defs/result`) and
/// `message`; nothing to modify (its target is never set: no `modify` is
/// allowed here).
pub static ELICITATION_REQUEST_BOUNDARY: Boundary = Boundary {
    event: "user.elicitation.request",
    target: "request",
    slot: Slot::Schema(crate::schemas::ELICITATION_RESULT),
    list: false,
    gated: true,
    effects: &["deny", "return", "message"],
    flow_operations: &[],
    returns: Some(Slot::Schema(crate::schemas::ELICITATION_RESULT)),
    original: no_value,
    editable: always_editable,
};

fn no_value(_: &Value) -> Value {
    Value::Null
}

/// The boundary of an event type, or None outside the core set.
pub fn boundary_for(event_type: &str) -> Option<&'static Boundary> {
    BOUNDARIES.iter().find(|b| b.event == event_type)
}

/// Whether a message or part list holds content the host withheld: a part
/// with `selection` `omit` or `metadata`, or a `gap` (directly in the list,
/// or among a message's `parts`).
pub fn holds_withheld(v: &Value) -> bool {
    let Value::Array(items) = v else { return false };
    items.iter().any(|item| match item.get("parts") {
        Some(Value::Array(parts)) => parts.iter().any(part_withheld),
        _ => part_withheld(item),
    })
}

fn part_withheld(part: &Value) -> bool {
    let Value::Object(p) = part else { return false };
    matches!(
        p.get("selection").and_then(Value::as_str),
        Some("omit" | "metadata")
    ) || p.contains_key("gap")
}
