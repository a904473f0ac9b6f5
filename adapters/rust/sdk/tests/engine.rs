//! The composition rules of docs/scenarios.md, a representative test per rule.

use ahp_sdk::engine::{apply, apply_with, supports, Options, Outcome};
use ahp_sdk::json::equal;
use ahp_sdk::schemas::Schemas;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::OnceLock;

fn schemas() -> &'static Schemas {
    static S: OnceLock<Schemas> = OnceLock::new();
    S.get_or_init(|| {
        Schemas::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../schemas/draft"))
            .unwrap()
    })
}

const ID: &str = "row-1";

fn part(id: &str, text: &str) -> Value {
    json!({"id": id, "kind": "text", "mediaType": "text/plain", "selection": "body", "text": text})
}

fn msg(id: &str, role: &str, text: &str) -> Value {
    json!({"id": id, "role": role, "parts": [part(&format!("{id}-t"), text)]})
}

/// A hooks/intercept request: the event's common fields plus `fields`.
fn request(event_type: &str, fields: Value, caps: Value, state: Option<Value>) -> Value {
    let mut event = json!({
        "id": ID, "source": "urn:ahp-interop:core", "type": event_type,
        "time": "2026-04-02T10:15:00Z", "session": {"id": "s-1"}
    });
    for (k, v) in fields.as_object().unwrap() {
        event[k] = v.clone();
    }
    let mut params = json!({"protocolVersion": "draft", "event": event, "capabilities": caps});
    if let Some(s) = state {
        params["state"] = s;
    }
    json!({"jsonrpc": "2.0", "id": ID, "method": "hooks/intercept", "params": params})
}

fn tool(name: &str, input: Value) -> Value {
    json!({"call": {"id": "c-1"}, "path": "native",
           "tool": {"name": name, "kind": "other", "origin": "native", "input": input}})
}

fn all_tool_caps() -> Value {
    json!({"effects": ["deny", "allow", "ask", "modify", "message", "return", "flow", "inject"],
           "modify": {"input": {"replace": true, "merge": true}},
           "flow": {"operations": ["stop"]},
           "inject": {"context": {"append": true, "deliverAt": ["now", "next_turn"]}}})
}

fn tb(input: Value, state: Option<Value>) -> Value {
    request(
        "tool.before",
        tool("read_file", input),
        all_tool_caps(),
        state,
    )
}

fn state(permission: &str, candidate: Value) -> Option<Value> {
    Some(json!({"permission": permission, "candidate": candidate}))
}

fn response(effects: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": ID, "result": {"protocolVersion": "draft", "effects": effects}})
}

fn run(req: &Value, effects: Value) -> Outcome {
    apply(schemas(), req, &response(effects))
}

fn rejected(o: &Outcome) -> bool {
    o.unsupported.is_none() && equal(&o.actual, &json!({"rejected": true})) && o.reason.is_some()
}

#[track_caller]
fn assert_rejected(o: &Outcome, why: &str) {
    assert!(rejected(o), "expected a rejection, got {}", o.actual);
    let reason = o.reason.as_deref().unwrap();
    assert!(
        reason.contains(why),
        "reason {reason:?} does not mention {why:?}"
    );
}

#[track_caller]
fn assert_has(o: &Outcome, want: Value) {
    assert!(
        o.unsupported.is_none() && o.reason.is_none(),
        "rejected: {:?}",
        o.reason
    );
    for (k, v) in want.as_object().unwrap() {
        let got = o
            .actual
            .get(k)
            .unwrap_or_else(|| panic!("{k} missing in {}", o.actual));
        assert!(
            equal(got, v),
            "{k}: expected {v}, got {got} (actual {})",
            o.actual
        );
    }
}

#[track_caller]
fn assert_absent(o: &Outcome, keys: &[&str]) {
    for k in keys {
        assert!(o.actual.get(*k).is_none(), "{k} present in {}", o.actual);
    }
}

fn note(text: &str) -> Value {
    json!({"type": "message", "text": text})
}

fn modify(target: &str, op: &str, value: Value) -> Value {
    json!({"type": "modify", "target": target, "operation": op, "value": value})
}

// ---- unsupported event types

#[test]
fn the_whole_core_set_is_supported_and_nothing_else() {
    for t in [
        "tool.before",
        "tool.after",
        "turn.finish.before",
        "model.request.before",
        "context.compact.before",
        "context.compact.after",
        "user.message.outbound",
        "user.elicitation.result",
        "workspace.change.before",
    ] {
        assert!(supports(t), "{t}");
    }
    assert!(!supports("session.start") && !supports("") && !supports("Tool.Before"));
    let o = run(
        &request("session.start", json!({}), json!({"effects": []}), None),
        json!([]),
    );
    assert!(o.unsupported.unwrap().contains("session.start"));
    let o = apply(schemas(), &json!({"params": {}}), &response(json!([])));
    assert!(o.unsupported.is_some());
}

// ---- phase 1, item 1: the envelope

#[test]
fn a_malformed_envelope_rejects_everything() {
    let req = tb(json!({"path": "a"}), None);
    let ok = response(json!([note("m")]));
    let mut cases = vec![json!(null), json!([ok.clone()]), json!("x"), json!(1)];
    for (key, value) in [
        ("jsonrpc", json!("1.0")),
        ("jsonrpc", json!(2.0)),
        ("id", json!("row-2")),
        ("id", json!("ROW-1")),
        ("id", json!(1)),
        ("id", Value::Null),
        ("result", Value::Null),
        ("result", json!([])),
        ("error", json!({"code": -32000, "message": "no"})),
    ] {
        let mut r = ok.clone();
        r[key] = value;
        cases.push(r);
    }
    let mut no_id = ok.clone();
    no_id.as_object_mut().unwrap().remove("id");
    cases.push(no_id);
    let mut no_version = ok.clone();
    no_version.as_object_mut().unwrap().remove("jsonrpc");
    cases.push(no_version);
    for r in cases {
        let o = apply(schemas(), &req, &r);
        assert!(rejected(&o), "{r} accepted: {}", o.actual);
    }
    assert_has(&apply(schemas(), &req, &ok), json!({"messages": ["m"]}));
}

// ---- phase 1, item 2: the canonical schema

#[test]
fn an_invalid_effect_rejects_the_valid_ones_beside_it() {
    let req = tb(json!({"path": "a"}), None);
    for bad in [
        json!({"type": "teleport"}),
        json!({"type": "deny"}),
        json!({"type": "deny", "reason": ""}),
        json!({"type": "message", "text": 1}),
        json!({"type": "allow", "extra": true}),
        json!({"type": "modify", "target": "input", "operation": "patch", "value": {}}),
        json!({"type": "modify", "target": "input", "operation": "replace", "value": [1]}),
        json!({"type": "return"}),
        json!("message"),
    ] {
        let o = run(&req, json!([note("first"), bad.clone()]));
        assert_rejected(&o, "schema");
    }
    // another protocolVersion
    let mut r = response(json!([]));
    r["result"]["protocolVersion"] = json!("2025-01-01");
    assert!(rejected(&apply(schemas(), &req, &r)));
}

#[test]
fn unknown_fields_on_the_result_envelope_are_ignored() {
    let req = tb(json!({"path": "a"}), None);
    let mut r = response(json!([note("kept")]));
    r["result"]["x-trace"] = json!({"span": 1});
    assert_has(
        &apply(schemas(), &req, &r),
        json!({"messages": ["kept"], "decision": "allow"}),
    );
}

// ---- phase 1, item 3: advertisement

#[test]
fn an_effect_the_request_did_not_advertise_is_rejected() {
    let input = json!({"path": "a"});
    let caps = |c: Value| request("tool.before", tool("read_file", input.clone()), c, None);
    let deny = json!({"type": "deny", "reason": "no"});
    // the type
    assert_rejected(
        &run(
            &caps(json!({"effects": ["message"]})),
            json!([note("m"), deny]),
        ),
        "not advertised",
    );
    // the modify target / flag
    let no_merge = caps(
        json!({"effects": ["modify"], "modify": {"input": {"replace": true, "merge": false}}}),
    );
    assert_rejected(
        &run(
            &no_merge,
            json!([modify("input", "merge", json!({"x": 1}))]),
        ),
        "not advertised",
    );
    let no_target = caps(json!({"effects": ["modify"], "modify": {}}));
    assert_rejected(
        &run(&no_target, json!([modify("input", "replace", json!({}))])),
        "not advertised",
    );
    let other_target =
        caps(json!({"effects": ["modify"], "modify": {"input": {"replace": true, "merge": true}}}));
    assert_rejected(
        &run(
            &other_target,
            json!([modify("output", "replace", json!([]))]),
        ),
        "does not exist",
    );
    // the flow operation
    let stop_only = caps(json!({"effects": ["flow"], "flow": {"operations": ["stop"]}}));
    assert_rejected(
        &run(
            &stop_only,
            json!([{"type": "flow", "operation": "continue"}]),
        ),
        "not advertised",
    );
    // the delivery time and append
    let next_turn = caps(
        json!({"effects": ["inject"], "inject": {"context": {"append": true, "deliverAt": ["next_turn"]}}}),
    );
    let inject = json!({"type": "inject", "target": "context", "operation": "append", "deliverAt": "now",
                        "value": [msg("i", "user", "x")]});
    assert_rejected(&run(&next_turn, json!([inject])), "deliverAt");
    let no_append = caps(
        json!({"effects": ["inject"], "inject": {"context": {"append": false, "deliverAt": ["now"]}}}),
    );
    assert_rejected(&run(&no_append, json!([inject])), "append");
}

#[test]
fn an_effect_the_boundary_can_never_carry_is_rejected() {
    // tool.after allows no return, even when a (non-canonical) request advertises one
    let req = request(
        "tool.after",
        json!({"call": {"id": "c"}, "tool": {"name": "t"}, "items": [msg("o", "tool", "out")]}),
        json!({"effects": ["message", "return"]}),
        None,
    );
    assert_rejected(
        &run(&req, json!([note("m"), {"type": "return", "value": []}])),
        "not allowed",
    );
}

// ---- phase 1, item 4: slot definitions

fn tool_after(items: Value, caps: Value, st: Option<Value>) -> Value {
    request(
        "tool.after",
        json!({"call": {"id": "c"}, "tool": {"name": "t"}, "items": items}),
        caps,
        st,
    )
}

fn list_caps(target: &str) -> Value {
    json!({"effects": ["modify", "message"], "modify": {target: {"replace": true, "merge": true}}})
}

#[test]
fn values_are_validated_against_their_slot() {
    let items = json!([msg("o", "tool", "out")]);
    let req = tool_after(items.clone(), list_caps("output"), None);
    // a value that is not a message list, and a message missing its id
    assert_rejected(
        &run(
            &req,
            json!([note("m"), modify("output", "replace", json!({"a": 1}))]),
        ),
        "schema",
    );
    assert_rejected(
        &run(
            &req,
            json!([modify(
                "output",
                "merge",
                json!([{"role": "tool", "parts": []}])
            )]),
        ),
        "schema",
    );
    // a valid list is applied
    let o = run(
        &req,
        json!([modify("output", "merge", json!([msg("n", "tool", "more")]))]),
    );
    assert_has(
        &o,
        json!({"effective": {"output": [msg("o", "tool", "out"), msg("n", "tool", "more")]}, "executed": false}),
    );

    // outbound content: assistant messages only
    let out = request(
        "user.message.outbound",
        json!({"message": {"channel": "chat", "messages": [msg("r", "assistant", "hi")]}}),
        json!({"effects": ["deny", "modify", "message"], "modify": {"content": {"replace": true, "merge": true}}}),
        None,
    );
    assert_rejected(
        &run(
            &out,
            json!([modify("content", "replace", json!([msg("u", "user", "x")]))]),
        ),
        "assistantMessages",
    );
    assert_has(
        &run(
            &out,
            json!([modify(
                "content",
                "replace",
                json!([msg("a", "assistant", "bye")])
            )]),
        ),
        json!({"effective": {"content": [msg("a", "assistant", "bye")]}, "executed": true, "permission": "none"}),
    );

    // workspace: cwd and roots only, cwd non-empty
    let ws = request(
        "workspace.change.before",
        json!({"workspace": {"change": {"cwd": "/a"}}}),
        json!({"effects": ["deny", "modify", "message"], "modify": {"workspace": {"replace": true, "merge": true}}}),
        None,
    );
    assert_rejected(
        &run(
            &ws,
            json!([modify("workspace", "replace", json!({"cwd": ""}))]),
        ),
        "schema",
    );
    assert_rejected(
        &run(
            &ws,
            json!([modify(
                "workspace",
                "merge",
                json!({"cwd": "/b", "env": {}})
            )]),
        ),
        "schema",
    );
    assert_has(
        &run(
            &ws,
            json!([modify(
                "workspace",
                "merge",
                json!({"workspaceRoots": ["/b"]})
            )]),
        ),
        json!({"effective": {"workspace": {"cwd": "/a", "workspaceRoots": ["/b"]}}}),
    );
}

#[test]
fn a_return_must_be_allowed_and_of_the_slot_shape() {
    let mr = request(
        "model.request.before",
        json!({"model": {"id": "m"}, "items": [msg("p", "user", "q")]}),
        json!({"effects": ["deny", "modify", "message", "return"], "modify": {"request": {"replace": true, "merge": true}}}),
        None,
    );
    assert_rejected(
        &run(
            &mr,
            json!([note("m"), {"type": "return", "value": [part("t", "x")]}]),
        ),
        "return value",
    );
    assert_rejected(
        &run(&mr, json!([{"type": "return", "value": {"text": "x"}}])),
        "return value",
    );
    let answer = json!([msg("a", "assistant", "answer")]);
    assert_has(
        &run(&mr, json!([{"type": "return", "value": answer}])),
        json!({"result": answer, "executed": false, "decision": "allow"}),
    );
    // tool.before: any JSON, falsy values too
    for v in [
        json!(0),
        json!(""),
        json!(false),
        json!(null),
        json!([]),
        json!({}),
    ] {
        let o = run(
            &tb(json!({"path": "a"}), None),
            json!([{"type": "return", "value": v}]),
        );
        assert_has(&o, json!({"result": v, "executed": false}));
    }
}

/// The spec's content schema asks an attachment media type only to be a
/// non-empty string that is no text or JSON type, parameters included: no
/// `type/subtype` form.
#[test]
fn attachment_media_types_are_anything_but_text_or_json() {
    let mr = request(
        "model.request.before",
        json!({"model": {"id": "m"}, "items": [msg("p", "user", "q")]}),
        json!({"effects": ["message", "return"]}),
        None,
    );
    let answer = |media_type: &str| {
        json!([{"id": "a", "role": "assistant", "parts": [{"id": "x", "kind": "attachment",
            "mediaType": media_type, "selection": "body", "body": {"ref": "ref-1"}}]}])
    };
    for good in ["png", "image/png; q=1", "IMAGE/PNG"] {
        assert_has(
            &run(&mr, json!([{"type": "return", "value": answer(good)}])),
            json!({"result": answer(good), "executed": false, "decision": "allow"}),
        );
    }
    for bad in [
        "",
        "Text/HTML",
        "application/JSON",
        "application/json; charset=utf-8",
        "application/ld+json;x=1",
        "image/x+json",
    ] {
        let o = run(
            &mr,
            json!([note("m"), {"type": "return", "value": answer(bad)}]),
        );
        assert!(rejected(&o), "{bad:?} accepted: {}", o.actual);
    }
}

#[test]
fn a_whole_list_replace_over_withheld_content_is_rejected() {
    let withheld = [
        json!({"id": "p", "kind": "text", "mediaType": "text/plain", "selection": "metadata"}),
        json!({"id": "p", "kind": "text", "mediaType": "text/plain", "selection": "omit"}),
        json!({"id": "p", "kind": "text", "mediaType": "text/plain", "selection": "body", "gap": {"reason": "too large"}}),
    ];
    for p in withheld {
        let items = json!([{"id": "o", "role": "tool", "parts": [p]}]);
        let req = tool_after(items.clone(), list_caps("output"), None);
        let o = run(
            &req,
            json!([
                note("m"),
                modify("output", "replace", json!([msg("n", "tool", "x")]))
            ]),
        );
        assert_rejected(&o, "withheld");
        // a merge keeps the withheld content, and is fine
        let o = run(
            &req,
            json!([modify("output", "merge", json!([msg("n", "tool", "x")]))]),
        );
        assert_has(&o, json!({"messages": []}));
    }
    // the staged value counts: a replace after a replace that removed the withheld part is fine
    let text_parts =
        json!([{"id": "i", "kind": "text", "mediaType": "text/plain", "selection": "omit"}]);
    let cb = request(
        "context.compact.before",
        json!({"instructions": text_parts}),
        json!({"effects": ["modify"], "modify": {"instructions": {"replace": true, "merge": true}}}),
        None,
    );
    assert_rejected(
        &run(
            &cb,
            json!([modify("instructions", "replace", json!([part("n", "x")]))]),
        ),
        "withheld",
    );
    let o = run(
        &cb,
        json!([
            modify("instructions", "merge", json!([part("n", "x")])),
            modify("instructions", "replace", json!([part("m", "y")]))
        ]),
    );
    assert_rejected(&o, "withheld");
}

fn elicitation(mode: &str, action: &str, result: Value) -> Value {
    request(
        "user.elicitation.result",
        json!({"parentEventId": "e-0", "elicitation": {"server": "cal", "mode": mode, "action": action, "result": result}}),
        json!({"effects": ["modify", "message"], "modify": {"content": {"replace": true, "merge": true}}}),
        None,
    )
}

fn carried(text: &str) -> Value {
    json!({"id": "r", "kind": "text", "mediaType": "text/plain", "selection": "body", "text": text})
}

#[test]
fn elicitation_content_edits_need_an_accepted_form_result_with_its_body() {
    let answer = r#"{"action":"accept","content":{"slot":"09:30","n":3}}"#;
    let accepted = elicitation("form", "accept", carried(answer));
    let o = run(
        &accepted,
        json!([modify("content", "merge", json!({"slot": "10:00"}))]),
    );
    assert_has(
        &o,
        json!({"effective": {"content": {"slot": "10:00", "n": 3}}, "executed": false, "decision": "allow"}),
    );
    assert_absent(&o, &["permission"]);
    // nested values, null and lists are not flat answers
    for v in [
        json!({"a": {"b": 1}}),
        json!({"a": null}),
        json!({"a": [1]}),
    ] {
        assert_rejected(
            &run(&accepted, json!([modify("content", "replace", v)])),
            "answerContent",
        );
    }
    assert!(rejected(&run(
        &accepted,
        json!([modify("content", "replace", json!(["x"]))])
    )));
    // no edit on anything else; no edit, no problem
    for req in [
        elicitation("form", "decline", carried(r#"{"action":"decline"}"#)),
        elicitation("form", "cancel", carried(r#"{"action":"cancel"}"#)),
        elicitation("url", "accept", carried(r#"{"action":"accept"}"#)),
        elicitation(
            "form",
            "accept",
            json!({"id": "r", "kind": "text", "mediaType": "text/plain", "selection": "metadata"}),
        ),
        elicitation(
            "form",
            "accept",
            carried(r#"{"action":"decline","content":{"a":"b"}}"#),
        ),
    ] {
        assert!(rejected(&run(
            &req,
            json!([note("m"), modify("content", "merge", json!({"a": "b"}))])
        )));
        assert_has(&run(&req, json!([note("m")])), json!({"messages": ["m"]}));
    }
}

// ---- phase 1, item 5, and flow

fn tf(caps_flow: Value, st: Option<Value>) -> Value {
    request(
        "turn.finish.before",
        json!({"items": [msg("a", "assistant", "done")]}),
        json!({"effects": ["modify", "message", "flow"], "modify": {"response": {"replace": true, "merge": true}},
               "flow": caps_flow}),
        st,
    )
}

fn cont(instruction: Option<&str>) -> Value {
    match instruction {
        Some(i) => json!({"type": "flow", "operation": "continue", "instruction": i}),
        None => json!({"type": "flow", "operation": "continue"}),
    }
}

fn stop() -> Value {
    json!({"type": "flow", "operation": "stop", "reason": "enough"})
}

fn allowance(n: i64) -> Value {
    json!({"operations": ["stop", "continue"], "remainingContinuations": n})
}

#[test]
fn continues_accumulate_instructions_and_consume_one_allowance() {
    let o = run(
        &tf(allowance(2), None),
        json!([cont(Some("a")), cont(None), cont(Some("b"))]),
    );
    assert_has(
        &o,
        json!({"flow": "continue", "continuationInstructions": ["a", "b"], "continuationRemaining": 1}),
    );
    // nothing happens: the keys still show the allowance
    let o = run(&tf(allowance(2), None), json!([]));
    assert_has(
        &o,
        json!({"continuationInstructions": [], "continuationRemaining": 2}),
    );
    assert_absent(&o, &["flow"]);
    // without continue advertised there are no continuation keys
    let o = run(&tf(json!({"operations": ["stop"]}), None), json!([stop()]));
    assert_has(&o, json!({"flow": "stop"}));
    assert_absent(&o, &["continuationInstructions", "continuationRemaining"]);
}

#[test]
fn stop_wins_over_continue_in_any_order() {
    for effects in [
        json!([cont(Some("x")), stop()]),
        json!([stop(), cont(Some("x"))]),
    ] {
        let o = run(&tf(allowance(1), None), effects);
        assert_has(
            &o,
            json!({"flow": "stop", "continuationInstructions": ["x"], "continuationRemaining": 1}),
        );
    }
    // an incoming stop is a stop
    let o = run(
        &tf(
            allowance(1),
            Some(json!({"permission": "none", "candidate": null, "flow": "stop"})),
        ),
        json!([cont(None)]),
    );
    assert_has(&o, json!({"flow": "stop", "continuationRemaining": 1}));
}

#[test]
fn a_continue_with_no_allowance_left_rejects_even_beside_a_stop() {
    assert_rejected(
        &run(&tf(allowance(0), None), json!([note("m"), cont(Some("x"))])),
        "allowance",
    );
    assert_rejected(
        &run(&tf(allowance(0), None), json!([stop(), cont(None)])),
        "allowance",
    );
    assert_has(
        &run(&tf(allowance(0), None), json!([stop()])),
        json!({"flow": "stop", "continuationRemaining": 0}),
    );
}

#[test]
fn an_incoming_continue_shares_the_one_allowance() {
    let incoming =
        |flow: &str| Some(json!({"permission": "none", "candidate": null, "flow": flow}));
    let o = run(&tf(allowance(1), incoming("continue")), json!([]));
    assert_has(
        &o,
        json!({"flow": "continue", "continuationInstructions": [], "continuationRemaining": 0}),
    );
    let o = run(
        &tf(allowance(1), incoming("continue")),
        json!([cont(Some("more"))]),
    );
    assert_has(
        &o,
        json!({"flow": "continue", "continuationInstructions": ["more"], "continuationRemaining": 0}),
    );
    let o = run(&tf(allowance(1), incoming("continue")), json!([stop()]));
    assert_has(&o, json!({"flow": "stop", "continuationRemaining": 1}));
    let o = run(&tf(allowance(1), incoming("none")), json!([]));
    assert_absent(&o, &["flow"]);
    assert_has(&o, json!({"continuationRemaining": 1}));
}

// ---- phase 1, item 6: the host rule

fn task(input: Value) -> Value {
    request(
        "tool.before",
        tool("task", input),
        all_tool_caps(),
        state("none", Value::Null),
    )
}

#[test]
fn the_task_tool_needs_a_positive_integer_task_on_the_final_staged_input() {
    for bad in [
        json!(0),
        json!(-1),
        json!(1.5),
        json!(true),
        json!("1"),
        json!(null),
    ] {
        let o = run(
            &task(json!({"task": 1})),
            json!([
                note("queued"),
                modify("input", "merge", json!({"task": bad}))
            ]),
        );
        assert_rejected(&o, "host rule");
    }
    assert_rejected(
        &run(
            &task(json!({"task": 1})),
            json!([modify("input", "replace", json!({"q": 1}))]),
        ),
        "host rule",
    );
    // the final value counts: a later modify rescues an earlier invalid one
    let o = run(
        &task(json!({"task": 1})),
        json!([
            modify("input", "merge", json!({"task": 0})),
            modify("input", "merge", json!({"task": 2}))
        ]),
    );
    assert_has(&o, json!({"input": {"task": 2}, "executed": true}));
    // 2.0 is an integer by value; an invalid original with no edit is rejected too
    assert_has(
        &run(
            &task(json!({"task": 1})),
            json!([modify("input", "merge", json!({"task": 2.0}))]),
        ),
        json!({"executed": true}),
    );
    assert_rejected(&run(&task(json!({"task": 0})), json!([])), "host rule");
    // other tools have no rule; without the host rule nothing is checked
    assert_has(
        &run(&tb(json!({"task": 0}), None), json!([])),
        json!({"executed": true}),
    );
    let no_rule = apply_with(
        schemas(),
        &task(json!({"task": 0})),
        &response(json!([])),
        Options { host_rule: false },
    );
    assert_has(&no_rule.outcome, json!({"executed": true}));
}

// ---- phase 2: modification

#[test]
fn replace_and_merge_apply_in_response_order() {
    let input = json!({"path": "a", "range": {"start": 1, "end": 2}, "keep": true});
    let o = run(
        &tb(input.clone(), None),
        json!([
            modify(
                "input",
                "merge",
                json!({"range": {"start": 5}, "note": null})
            ),
            modify("input", "merge", json!({"path": "b"})),
        ]),
    );
    // shallow: the nested value is replaced whole; null is a value
    let want = json!({"path": "b", "range": {"start": 5}, "keep": true, "note": null});
    assert_has(&o, json!({"input": want, "effective": {"input": want}}));
    // replace drops omitted keys; a merge after it applies to the replaced value
    let o = run(
        &tb(input, None),
        json!([
            modify("input", "replace", json!({"x": 1})),
            modify("input", "merge", json!({"y": 2}))
        ]),
    );
    assert_has(&o, json!({"input": {"x": 1, "y": 2}}));
    // list merge appends in order, keeping duplicates
    let one = msg("o", "tool", "out");
    let o = run(
        &tool_after(json!([one]), list_caps("output"), None),
        json!([
            modify("output", "merge", json!([one])),
            modify("output", "merge", json!([one]))
        ]),
    );
    assert_has(&o, json!({"effective": {"output": [one, one, one]}}));
}

#[test]
fn absent_targets_start_from_their_defaults() {
    let cb = request(
        "context.compact.before",
        json!({}),
        json!({"effects": ["modify", "return"], "modify": {"instructions": {"replace": true, "merge": true}}}),
        None,
    );
    assert_has(
        &run(&cb, json!([])),
        json!({"effective": {"instructions": []}, "executed": true}),
    );
    let o = run(
        &cb,
        json!([modify(
            "instructions",
            "merge",
            json!([part("i", "keep it short")])
        )]),
    );
    assert_has(
        &o,
        json!({"effective": {"instructions": [part("i", "keep it short")]}}),
    );
}

// ---- phase 2: permission

#[test]
fn the_strongest_permission_wins() {
    let input = json!({"path": "a"});
    let deny = json!({"type": "deny", "reason": "no"});
    let ask = json!({"type": "ask"});
    let allow = json!({"type": "allow"});
    let cases = [
        (None, json!([]), "none", "allow", true),
        (
            state("none", Value::Null),
            json!([allow]),
            "allow",
            "allow",
            true,
        ),
        (
            state("none", Value::Null),
            json!([allow, ask]),
            "ask",
            "ask",
            false,
        ),
        (
            state("none", Value::Null),
            json!([deny, ask, allow]),
            "deny",
            "deny",
            false,
        ),
        (
            state("deny", Value::Null),
            json!([allow]),
            "deny",
            "deny",
            false,
        ),
        (state("ask", Value::Null), json!([]), "ask", "ask", false),
        (
            state("allow", Value::Null),
            json!([]),
            "allow",
            "allow",
            true,
        ),
        (
            state("allow", Value::Null),
            json!([deny]),
            "deny",
            "deny",
            false,
        ),
    ];
    for (st, effects, permission, decision, executed) in cases {
        let o = run(&tb(input.clone(), st.clone()), effects.clone());
        assert_has(
            &o,
            json!({"permission": permission, "decision": decision, "executed": executed}),
        );
    }
}

#[test]
fn an_allow_does_not_survive_a_changed_value() {
    let input = json!({"path": "a"});
    let change = modify("input", "merge", json!({"path": "b"}));
    // incoming allow, changed input
    let o = run(
        &tb(input.clone(), state("allow", Value::Null)),
        json!([change]),
    );
    assert_has(
        &o,
        json!({"permission": "none", "decision": "allow", "executed": true}),
    );
    // this response's own allow, too
    let o = run(&tb(input.clone(), None), json!([change, {"type": "allow"}]));
    assert_has(&o, json!({"permission": "none", "decision": "allow"}));
    // restored exactly (key order ignored): kept
    let o = run(
        &tb(json!({"path": "a", "n": 1}), state("allow", Value::Null)),
        json!([
            change,
            modify("input", "replace", json!({"n": 1.0, "path": "a"}))
        ]),
    );
    assert_has(&o, json!({"permission": "allow"}));
    // ask and deny are never invalidated
    let o = run(
        &tb(input.clone(), state("ask", Value::Null)),
        json!([change]),
    );
    assert_has(
        &o,
        json!({"permission": "ask", "decision": "ask", "executed": false}),
    );
    let o = run(
        &tb(input, state("allow", Value::Null)),
        json!([change, {"type": "deny", "reason": "no"}]),
    );
    assert_has(&o, json!({"permission": "deny", "decision": "deny"}));
}

#[test]
fn boundaries_without_permission_semantics_always_allow() {
    let o = run(
        &tool_after(
            json!([msg("o", "tool", "x")]),
            list_caps("output"),
            state("deny", Value::Null),
        ),
        json!([note("m")]),
    );
    assert_has(
        &o,
        json!({"decision": "allow", "executed": false, "messages": ["m"]}),
    );
    assert_absent(&o, &["permission", "result"]);
}

// ---- phase 2: candidate

#[test]
fn a_supplied_result_replaces_the_operation_unless_denied_or_stopped() {
    let input = json!({"path": "a"});
    let give = json!({"type": "return", "value": {"content": "cached"}});
    let o = run(&tb(input.clone(), None), json!([give]));
    assert_has(
        &o,
        json!({"result": {"content": "cached"}, "executed": false, "decision": "allow"}),
    );
    let o = run(
        &tb(input.clone(), None),
        json!([give, {"type": "deny", "reason": "no"}]),
    );
    assert_has(&o, json!({"executed": false, "decision": "deny"}));
    assert_absent(&o, &["result"]);
    let o = run(&tb(input.clone(), None), json!([give, stop()]));
    assert_has(&o, json!({"executed": false, "flow": "stop"}));
    assert_absent(&o, &["result"]);
    let o = run(&tb(input.clone(), None), json!([give, {"type": "ask"}]));
    assert_absent(&o, &["result"]);
    // the later return binds; a return survives a modification in the same response
    let o = run(
        &tb(input, None),
        json!([{"type": "return", "value": 1}, modify("input", "merge", json!({"x": 1})), {"type": "return", "value": 2}]),
    );
    assert_has(&o, json!({"result": 2, "input": {"path": "a", "x": 1}}));
    let o = run(
        &tb(json!({"path": "a"}), None),
        json!([{"type": "return", "value": 1}, modify("input", "merge", json!({"x": 1}))]),
    );
    assert_has(&o, json!({"result": 1}));
}

#[test]
fn an_incoming_candidate_survives_only_an_unchanged_value() {
    let input = json!({"path": "a"});
    let cand = json!({"value": {"cached": true}});
    let o = run(&tb(input.clone(), state("none", cand.clone())), json!([]));
    assert_has(&o, json!({"result": {"cached": true}, "executed": false}));
    let o = run(
        &tb(input.clone(), state("none", cand.clone())),
        json!([modify("input", "merge", json!({"path": "b"}))]),
    );
    assert_has(&o, json!({"executed": true}));
    assert_absent(&o, &["result"]);
    let o = run(
        &tb(input.clone(), state("none", cand)),
        json!([
            modify("input", "merge", json!({"path": "b"})),
            modify("input", "merge", json!({"path": "a"}))
        ]),
    );
    assert_has(&o, json!({"result": {"cached": true}}));
    // a candidate whose value is null is a candidate; candidate null is none
    let o = run(
        &tb(input.clone(), state("none", json!({"value": null}))),
        json!([]),
    );
    assert_has(&o, json!({"result": null, "executed": false}));
    let o = run(&tb(input, state("none", Value::Null)), json!([]));
    assert_absent(&o, &["result"]);
    // only a boundary that allows return counts one
    let o = run(
        &tool_after(
            json!([msg("o", "tool", "x")]),
            list_caps("output"),
            state("none", json!({"value": 1})),
        ),
        json!([]),
    );
    assert_absent(&o, &["result"]);
}

// ---- phase 2: messages and injections

#[test]
fn messages_and_injections_are_published_in_order_also_on_deny() {
    let inject = |at: &str, text: &str| {
        json!({"type": "inject", "target": "context", "operation": "append", "deliverAt": at,
               "value": [msg("i", "user", text)]})
    };
    let effects = json!([note("one"), inject("now", "a"), {"type": "deny", "reason": "no"}, note("two"), inject("next_turn", "b")]);
    let o = run(&tb(json!({"path": "a"}), None), effects.clone());
    assert_has(
        &o,
        json!({"decision": "deny", "executed": false, "messages": ["one", "two"],
               "injections": [effects[1], effects[4]]}),
    );
    let o = run(&tb(json!({"path": "a"}), None), json!([note("x")]));
    assert_absent(&o, &["injections", "flow", "result", "rejected"]);
    // an inject value must be a message list
    let mut bad = inject("now", "a");
    bad["value"] = json!("text");
    assert!(rejected(&run(
        &tb(json!({"path": "a"}), None),
        json!([bad])
    )));
}

// ---- the state an accepted response leaves

#[test]
fn the_next_state() {
    let a = apply_with(
        schemas(),
        &tb(json!({"path": "a"}), state("allow", Value::Null)),
        &response(
            json!([modify("input", "merge", json!({"path": "b"})), {"type": "return", "value": 7}]),
        ),
        Options::default(),
    );
    assert!(equal(
        a.state.as_ref().unwrap(),
        &json!({"permission": "none", "candidate": {"value": 7}})
    ));
    let a = apply_with(
        schemas(),
        &tf(allowance(1), None),
        &response(json!([cont(None)])),
        Options::default(),
    );
    assert!(equal(
        a.state.as_ref().unwrap(),
        &json!({"permission": "none", "candidate": null, "flow": "continue"})
    ));
    let a = apply_with(
        schemas(),
        &tb(json!({}), None),
        &json!(null),
        Options::default(),
    );
    assert!(a.state.is_none());
}
