//! Source-local lineage (docs/CATALOGUE.md, "Lineage (source-local)"): a
//! sequence per rule, each case judged against the state the cases before it
//! left (one receiver per sequence).

mod common;

use ahp_sdk::lineage::*;
use common::{schemas, text};
use serde_json::{json, Value};

/// An event of source `urn:a` with `extra` JSON members.
fn event(id: &str, kind: &str, extra: &str) -> Value {
    let extra = if extra.is_empty() {
        String::new()
    } else {
        format!(", {extra}")
    };
    text(&format!(
        r#"{{"id": "{id}", "source": "urn:a", "time": "2026-01-01T00:00:00Z", "type": "{kind}"{extra}}}"#
    ))
}

fn with_source(mut e: Value, source: &str) -> Value {
    e["source"] = json!(source);
    e
}

/// (what, event, the failing rule or None, a redelivery)
type Case = (&'static str, Value, Option<LineageRule>, bool);

fn run(cases: Vec<Case>) {
    let mut l = Lineage::new();
    for (what, e, rule, redelivery) in cases {
        let before = l.len();
        let v = l.admit(&e);
        assert_eq!(v.rule(), rule, "{what}: {v:?}");
        assert_eq!(v.accepted(), rule.is_none(), "{what}");
        assert_eq!(v.redelivery(), redelivery, "{what}");
        let grew = l.len() - before;
        assert_eq!(
            grew == 1,
            rule.is_none() && !redelivery,
            "{what}: known events grew by {grew}"
        );
    }
}

use LineageRule::{Cycle, Identity, NoOp, Proposal};

#[test]
fn rule_1_identity() {
    let task = r#""task": {"id": "t1", "operation": "create", "change": {"status": "open"}}"#;
    let first = event("e1", TASK_BEFORE, task);
    let mut again = first.clone();
    again["time"] = json!("2026-02-02T00:00:00Z"); // only the fields rule 1 names must match
    again["task"]["change"] = json!({"status": "closed"});
    run(vec![
        ("first", first, None, false),
        ("a redelivery", again, None, true),
        (
            "another type",
            event("e1", TASK_AFTER, task),
            Some(Identity),
            false,
        ),
        (
            "another parent",
            event(
                "e1",
                TASK_BEFORE,
                &format!(r#"{task}, "parentEventId": "x""#),
            ),
            Some(Identity),
            false,
        ),
        (
            "another task.id",
            event(
                "e1",
                TASK_BEFORE,
                r#""task": {"id": "t2", "operation": "create", "change": {}}"#,
            ),
            Some(Identity),
            false,
        ),
        (
            "the same id of another source",
            with_source(event("e1", "turn.end", ""), "urn:b"),
            None,
            false,
        ),
        (
            "workspace",
            event(
                "w1",
                WORKSPACE_BEFORE,
                r#""workspace": {"kind": "cwd", "change": {"cwd": "/a"}}"#,
            ),
            None,
            false,
        ),
        (
            "workspace again, another kind",
            event(
                "w1",
                WORKSPACE_BEFORE,
                r#""workspace": {"kind": "roots", "change": {"cwd": "/a"}}"#,
            ),
            Some(Identity),
            false,
        ),
        (
            "workspace again, another change",
            event(
                "w1",
                WORKSPACE_BEFORE,
                r#""workspace": {"kind": "cwd", "change": {"cwd": "/b"}}"#,
            ),
            None,
            true,
        ),
        (
            "a parent where there was none",
            event("n1", "turn.end", ""),
            None,
            false,
        ),
        (
            "...then one",
            event("n1", "turn.end", r#""parentEventId": "e1""#),
            Some(Identity),
            false,
        ),
    ]);
}

#[test]
fn rule_2_cycles() {
    run(vec![
        (
            "its own parent",
            event("a", "turn.end", r#""parentEventId": "a""#),
            Some(Cycle),
            false,
        ),
        (
            "a child of an unknown parent",
            event("b", "turn.end", r#""parentEventId": "c""#),
            None,
            false,
        ),
        (
            "that parent, naming its child",
            event("c", "turn.end", r#""parentEventId": "b""#),
            Some(Cycle),
            false,
        ),
        (
            "a longer chain",
            event("d", "turn.end", r#""parentEventId": "b""#),
            None,
            false,
        ),
        (
            "the chain's root closing it",
            event("c", "turn.end", r#""parentEventId": "d""#),
            Some(Cycle),
            false,
        ),
        (
            "the root from another source",
            with_source(event("c", "turn.end", r#""parentEventId": "d""#), "urn:b"),
            None,
            false,
        ),
        (
            "the root, no parent",
            event("c", "turn.end", ""),
            None,
            false,
        ),
    ]);
}

#[test]
fn rule_3_proposal_and_actual_both_ways() {
    let before = |id: &str, task: &str, op: &str| {
        event(
            id,
            TASK_BEFORE,
            &format!(r#""task": {{"id": "{task}", "operation": "{op}", "change": {{"s": 1}}}}"#),
        )
    };
    let after = |id: &str, parent: &str, task: &str, op: &str| {
        event(
            id,
            TASK_AFTER,
            &format!(
                r#""parentEventId": "{parent}", "task": {{"id": "{task}", "operation": "{op}", "change": {{"s": 2}}}}"#
            ),
        )
    };
    let ws_after = |id: &str, parent: &str, kind: &str| {
        event(
            id,
            WORKSPACE_AFTER,
            &format!(
                r#""parentEventId": "{parent}", "workspace": {{"kind": "{kind}", "change": {{"cwd": "/x"}}}}"#
            ),
        )
    };
    let ws_before = |id: &str| {
        event(
            id,
            WORKSPACE_BEFORE,
            r#""workspace": {"kind": "cwd", "change": {"cwd": "/z"}}"#,
        )
    };
    run(vec![
        ("a proposal", before("p1", "t1", "create"), None, false),
        (
            "its actual change (another value)",
            after("a1", "p1", "t1", "create"),
            None,
            false,
        ),
        (
            "another task",
            after("a2", "p1", "t2", "create"),
            Some(Proposal),
            false,
        ),
        (
            "another operation",
            after("a3", "p1", "t1", "remove"),
            Some(Proposal),
            false,
        ),
        (
            "the wrong kind",
            ws_after("a4", "p1", "cwd"),
            Some(Proposal),
            false,
        ),
        ("a tool event", event("tb", "tool.before", ""), None, false),
        (
            "a task event under a tool event is free",
            after("a5", "tb", "t9", "update"),
            None,
            false,
        ),
        ("a workspace proposal", ws_before("wp"), None, false),
        (
            "another workspace kind",
            ws_after("w2", "wp", "roots"),
            Some(Proposal),
            false,
        ),
        ("the same kind", ws_after("w3", "wp", "cwd"), None, false),
        (
            "a task actual under a workspace proposal",
            after("w4", "wp", "t1", "create"),
            Some(Proposal),
            false,
        ),
        (
            "a file change under an actual change is free",
            event(
                "f1",
                FILE_CHANGED,
                r#""parentEventId": "w3", "changes": [{"path": "a", "operation": "create", "agentCaused": true}]"#,
            ),
            None,
            false,
        ),
        (
            "a proposal under a proposal is free",
            event(
                "p2",
                TASK_BEFORE,
                r#""parentEventId": "p1", "task": {"id": "t8", "operation": "remove", "change": {}}"#,
            ),
            None,
            false,
        ),
        // late parents: children first
        (
            "a child of a late proposal",
            after("c1", "late", "t5", "create"),
            None,
            false,
        ),
        (
            "a non-change child of it",
            event("c2", "turn.end", r#""parentEventId": "late""#),
            None,
            false,
        ),
        (
            "the late proposal of another task",
            before("late", "t6", "create"),
            Some(Proposal),
            false,
        ),
        (
            "the late proposal of its task",
            before("late", "t5", "create"),
            None,
            false,
        ),
        (
            "a late workspace proposal without children",
            ws_before("late2"),
            None,
            false,
        ),
        (
            "a task child named it first",
            after("c3", "late3", "t7", "create"),
            None,
            false,
        ),
        (
            "a late workspace proposal of a task child",
            ws_before("late3"),
            Some(Proposal),
            false,
        ),
    ]);
    assert!(proposal_mismatch(&event("x", "turn.end", ""), &event("y", TASK_AFTER, "")).is_none());
}

#[test]
fn rule_4_no_op_actual_changes() {
    let task = |id: &str, op: &str, change: &str, prior: &str| {
        let prior = if prior.is_empty() {
            String::new()
        } else {
            format!(r#", "prior": {prior}"#)
        };
        event(
            id,
            TASK_AFTER,
            &format!(r#""task": {{"id": "t", "operation": "{op}", "change": {change}{prior}}}"#),
        )
    };
    let ws = |id: &str, change: &str, prior: &str| {
        let prior = if prior.is_empty() {
            String::new()
        } else {
            format!(r#", "prior": {prior}"#)
        };
        event(
            id,
            WORKSPACE_AFTER,
            &format!(r#""workspace": {{"kind": "cwd", "change": {change}{prior}}}"#),
        )
    };
    let part = |t: &str| {
        format!(
            r#"{{"id": "p", "kind": "text", "mediaType": "text/plain", "selection": "inline", "text": "{t}"}}"#
        )
    };
    let file =
        |id: &str, changes: String| event(id, FILE_CHANGED, &format!(r#""changes": {changes}"#));
    let update = |b: &str, a: &str| {
        format!(
            r#"{{"path": "a", "operation": "update", "agentCaused": true, "before": {}, "after": {}}}"#,
            part(b),
            part(a)
        )
    };
    run(vec![
        (
            "an update without change keys",
            task("n1", "update", "{}", ""),
            Some(NoOp),
            false,
        ),
        (
            "a create without change keys",
            task("n2", "create", "{}", ""),
            None,
            false,
        ),
        (
            "an update equal to its prior",
            task("n3", "update", r#"{"a": 1}"#, r#"{"a": 1.0, "b": 2}"#),
            Some(NoOp),
            false,
        ),
        (
            "an update with a coerced value",
            task("n4", "update", r#"{"a": 1}"#, r#"{"a": "1"}"#),
            None,
            false,
        ),
        (
            "true is not 1",
            task("n5", "update", r#"{"a": true}"#, r#"{"a": 1}"#),
            None,
            false,
        ),
        (
            "an update with a new key",
            task("n6", "update", r#"{"a": 1, "c": 3}"#, r#"{"a": 1}"#),
            None,
            false,
        ),
        (
            "an update without prior",
            task("n7", "update", r#"{"a": 1}"#, ""),
            None,
            false,
        ),
        (
            "nested objects, key order ignored",
            task(
                "n8",
                "update",
                r#"{"a": {"x": 1, "y": [1, 2]}}"#,
                r#"{"a": {"y": [1, 2], "x": 1}}"#,
            ),
            Some(NoOp),
            false,
        ),
        (
            "a workspace change its prior holds",
            ws(
                "n9",
                r#"{"cwd": "/a"}"#,
                r#"{"cwd": "/a", "workspaceRoots": ["/"]}"#,
            ),
            Some(NoOp),
            false,
        ),
        (
            "a workspace change without prior",
            ws("n10", r#"{"cwd": "/a"}"#, ""),
            None,
            false,
        ),
        (
            "a workspace change of another value",
            ws("n11", r#"{"cwd": "/a"}"#, r#"{"cwd": "/b"}"#),
            None,
            false,
        ),
        (
            "a file update with equal parts",
            file("n12", format!("[{}]", update("x", "x"))),
            Some(NoOp),
            false,
        ),
        (
            "one no-op change among others",
            file(
                "n13",
                format!(
                    r#"[{{"path": "b", "operation": "create", "agentCaused": true}}, {}]"#,
                    update("x", "x")
                ),
            ),
            Some(NoOp),
            false,
        ),
        (
            "a file update with other parts",
            file("n14", format!("[{}]", update("x", "y"))),
            None,
            false,
        ),
        (
            "a file update with only after",
            file(
                "n15",
                format!(
                    r#"[{{"path": "a", "operation": "update", "agentCaused": true, "after": {}}}]"#,
                    part("x")
                ),
            ),
            None,
            false,
        ),
        (
            "a file create with equal parts",
            file(
                "n16",
                format!(
                    r#"[{{"path": "a", "operation": "create", "agentCaused": true, "before": {0}, "after": {0}}}]"#,
                    part("x")
                ),
            ),
            None,
            false,
        ),
    ]);
}

#[test]
fn rule_5_an_unknown_parent_is_accepted_and_a_rejection_keeps_no_state() {
    let mut l = Lineage::new();
    let cyclic = event(
        "r",
        TASK_BEFORE,
        r#""parentEventId": "r", "task": {"id": "t", "operation": "create", "change": {}}"#,
    );
    assert_eq!(l.admit(&cyclic).rule(), Some(Cycle));
    // the rejected proposal is unknown: a child of another task is free
    let child = event(
        "c",
        TASK_AFTER,
        r#""parentEventId": "r", "task": {"id": "other", "operation": "create", "change": {"s": 1}}"#,
    );
    assert!(l.admit(&child).accepted());
    assert_eq!(l.len(), 1);
    // judge changes nothing
    let fresh = event("f", "turn.end", "");
    assert!(l.judge(&fresh).accepted() && l.judge(&fresh) == l.judge(&fresh));
    assert_eq!(l.len(), 1);
}

#[test]
fn the_receiver_checks_the_schema_first_then_lineage() {
    let mut l = Lineage::new();
    let note = |e: Value| json!({"jsonrpc": "2.0", "method": "hooks/observe", "params": {"protocolVersion": "draft", "event": e}});
    let valid = note(
        json!({"id": "t1", "source": "urn:a", "type": "turn.end", "time": "2026-01-01T00:00:00Z",
                            "turn": {"id": "u"}, "outcome": "completed", "continuationCount": 0, "items": []}),
    );
    let first = l.deliver(schemas(), &valid);
    assert!(first.accepted(), "{first:?}");
    assert_eq!(
        first.to_value(),
        json!({"accepted": true, "errorKind": null})
    );
    assert_eq!(
        l.deliver(schemas(), &valid),
        Delivery::Accepted { redelivery: true }
    );
    let mut no_outcome = valid.clone();
    no_outcome["params"]["event"]
        .as_object_mut()
        .unwrap()
        .remove("outcome");
    no_outcome["params"]["event"]["id"] = json!("t2");
    let d = l.deliver(schemas(), &no_outcome);
    assert_eq!(d.error_kind(), Some(ErrorKind::Schema), "{d:?}");
    assert_eq!(
        d.to_value(),
        json!({"accepted": false, "errorKind": "schema"})
    );
    let mut retyped = valid.clone();
    retyped["params"]["event"] = json!({"id": "t1", "source": "urn:a", "type": "turn.start",
        "time": "2026-01-01T00:00:00Z", "turn": {"id": "u"}, "trigger": "user", "items": []});
    let d = l.deliver(schemas(), &retyped);
    assert_eq!(d.error_kind(), Some(ErrorKind::Lineage), "{d:?}");
    assert_eq!(l.len(), 1);
    assert_eq!(event_id_of(&valid), json!("t1"));
    assert_eq!(
        event_id_of(&json!({"params": {"event": {"id": 3}}})),
        Value::Null
    );
}
