//! Serial chains (docs/LIFECYCLE.md, "Chains" and "Operational failures"):
//! a test per rule, then every chain row of the lifecycle sets replayed
//! against a simulated server (the row's scripted replies and faults),
//! judged as the harness judges them: `actual` equal to `expected`, the calls
//! the server receives equal to `chainProof.requests` (an `omit` projection
//! may send `items: []`), the notifications `chainProof.observations` as a
//! multiset.

mod common;

use ahp_sdk::boundaries::boundary_for;
use ahp_sdk::chain::*;
use ahp_sdk::engine::Outcome;
use ahp_sdk::json::{self, equal};
use ahp_sdk::schemas::{INTERCEPT_REQUEST, OBSERVE_NOTIFICATION};
use common::{report, rows, same_multiset, schemas, text};
use serde_json::{json, Value};
use std::collections::HashMap;

fn tool_request(input: Value, items: Option<Value>) -> Value {
    let mut event = json!({"id": "c:a", "source": "urn:test", "type": "tool.before",
        "time": "2026-03-02T08:15:00Z", "session": {"id": "s"}, "call": {"id": "c1"},
        "path": "native", "tool": {"origin": "native", "name": "task", "kind": "task", "input": input}});
    if let Some(items) = items {
        event["items"] = items;
    }
    json!({"jsonrpc": "2.0", "id": "c:a", "method": "hooks/intercept", "params": {
        "protocolVersion": "draft", "event": event,
        "capabilities": {"effects": ["allow", "deny", "ask", "modify", "flow"],
                         "modify": {"input": {"replace": true, "merge": true}},
                         "flow": {"operations": ["stop"]}},
        "state": {"permission": "none", "candidate": null}}})
}

fn item() -> Value {
    json!([{"id": "i1", "kind": "text", "mediaType": "text/plain", "selection": "metadata"}])
}

fn compact_request(instructions: Option<Value>) -> Value {
    let mut event = json!({"id": "k:before", "source": "urn:test", "type": "context.compact.before",
        "time": "2026-03-02T08:15:00Z", "trigger": "manual",
        "items": [{"id": "m1", "role": "user", "parts": [
            {"id": "p1", "kind": "text", "mediaType": "text/plain", "selection": "body", "text": "hi"}]}]});
    if let Some(i) = instructions {
        event["instructions"] = i;
    }
    json!({"jsonrpc": "2.0", "id": "k:before", "method": "hooks/intercept", "params": {
        "protocolVersion": "draft", "event": event,
        "capabilities": {"effects": ["deny", "modify", "return"],
                         "modify": {"instructions": {"replace": true, "merge": false}}}}})
}

fn reply(id: &str, effects: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": "draft", "effects": effects}})
}

fn sub(id: &str, mode: &str, policy: &str, content: &str) -> Subscription {
    Subscription::parse(
        &json!({"id": id, "mode": mode, "failurePolicy": policy, "content": content}),
    )
    .unwrap()
}

fn modify_input(v: Value) -> Value {
    json!([{"type": "modify", "target": "input", "operation": "replace", "value": v}])
}

#[test]
fn omit_withholds_every_item_and_keeps_absent_items_absent() {
    let with = tool_request(json!({}), Some(item()));
    let event = &with["params"]["event"];
    assert_eq!(project(event, true)["items"], json!([]));
    assert!(equal(&project(event, false), event));
    let without = tool_request(json!({}), None);
    assert!(project(&without["params"]["event"], true)
        .get("items")
        .is_none());
}

#[test]
fn an_absent_target_stays_absent_while_the_value_is_its_default() {
    let b = boundary_for("context.compact.before").unwrap();
    let event = &compact_request(None)["params"]["event"];
    let same = settled_event(b, event, &json!([])).unwrap();
    assert!(same.get("instructions").is_none());
    let parts = json!([{"id": "x", "kind": "text", "mediaType": "text/plain", "selection": "body", "text": "t"}]);
    assert_eq!(
        settled_event(b, event, &parts).unwrap()["instructions"],
        parts
    );
    let tb = boundary_for("tool.before").unwrap();
    let event = &tool_request(json!({"value": "a"}), None)["params"]["event"];
    assert_eq!(
        settled_event(tb, event, &json!({"value": "b"})).unwrap()["tool"]["input"],
        json!({"value": "b"})
    );
    // the elicitation answer lives inside a serialized text: no plain field
    let er = boundary_for("user.elicitation.result").unwrap();
    assert!(settled_event(er, event, &json!({})).is_none());
}

#[test]
fn a_chain_request_carries_the_value_the_state_and_the_projection() {
    let b = boundary_for("tool.before").unwrap();
    let request = tool_request(json!({"value": "a"}), Some(item()));
    let state = json!({"permission": "ask", "candidate": null});
    let msg = chain_request(&request, b, &json!({"value": "b"}), Some(&state), true).unwrap();
    assert_eq!(
        msg["params"]["event"]["tool"]["input"],
        json!({"value": "b"})
    );
    assert_eq!(msg["params"]["state"], state);
    assert_eq!(msg["params"]["event"]["items"], json!([]));
    assert!(schemas().check(INTERCEPT_REQUEST, &msg).is_none());
    // None: the request's own state
    let own = chain_request(&request, b, &json!({"value": "a"}), None, false).unwrap();
    assert!(equal(&own, &request));
    assert!(chain_request(&json!({"id": 1}), b, &json!({}), None, false).is_err());
}

#[test]
fn a_chain_observation_is_the_canonical_notification_of_the_settled_event() {
    let b = boundary_for("tool.before").unwrap();
    let request = tool_request(json!({"value": "a"}), Some(item()));
    let note = chain_observation(&request, b, &json!({"value": "z"}), true).unwrap();
    assert_eq!(note["method"], "hooks/observe");
    assert!(note.get("id").is_none());
    assert_eq!(note["params"]["protocolVersion"], "draft");
    assert_eq!(
        note["params"]["event"]["tool"]["input"],
        json!({"value": "z"})
    );
    assert_eq!(note["params"]["event"]["items"], json!([]));
    assert!(note["params"].get("state").is_none() && note["params"].get("capabilities").is_none());
    assert!(schemas().check(OBSERVE_NOTIFICATION, &note).is_none());
    assert_eq!(
        observation(&json!("draft"), json!({"id": "e"})),
        json!({"jsonrpc": "2.0", "method": "hooks/observe", "params": {"protocolVersion": "draft", "event": {"id": "e"}}})
    );
}

#[test]
fn short_circuits_on_deny_and_stop_only() {
    let out = |actual: Value| Outcome {
        actual,
        unsupported: None,
        reason: None,
    };
    assert!(short_circuits(&out(
        json!({"decision": "deny", "permission": "deny"})
    )));
    assert!(short_circuits(&out(
        json!({"decision": "allow", "permission": "deny"})
    )));
    assert!(short_circuits(&out(
        json!({"decision": "allow", "flow": "stop"})
    )));
    assert!(!short_circuits(&out(
        json!({"decision": "ask", "permission": "ask"})
    )));
    assert!(!short_circuits(&out(
        json!({"decision": "allow", "flow": "continue"})
    )));
    let b = boundary_for("tool.before").unwrap();
    assert_eq!(
        effective_value(b, &out(json!({"effective": {"input": {"v": 1}}}))),
        Some(json!({"v": 1}))
    );
    assert_eq!(effective_value(b, &out(json!({"rejected": true}))), None);
    assert!(has_return(&reply(
        "x",
        json!([{"type": "message", "text": "t"}, {"type": "return", "value": 1}])
    )));
    assert!(!has_return(&reply("x", json!([]))));
}

#[test]
fn body_refs_are_read_from_items_and_message_parts() {
    let items = text(
        r#"[{"id": "a", "kind": "file", "body": {"ref": "r1"}},
            {"id": "m", "role": "user", "parts": [{"id": "p", "kind": "file", "body": {"ref": "r2"}},
                                                 {"id": "q", "kind": "text", "text": "t"}]},
            {"id": "b", "kind": "file", "body": {"ref": 7}}, 3]"#,
    );
    assert_eq!(body_refs(&items), vec!["r1".to_string(), "r2".to_string()]);
    assert!(body_refs(&json!({"body": {"ref": "x"}})).is_empty());
    let refs: HashMap<String, String> = [("r1".to_string(), "urn:uuid:1".to_string())].into();
    let rebound = rebind_refs(
        &json!({"items": items, "deep": [{"body": {"ref": "r1", "size": 3}}]}),
        &refs,
    );
    assert_eq!(rebound["items"][0]["body"]["ref"], "urn:uuid:1");
    assert_eq!(rebound["items"][1]["parts"][0]["body"]["ref"], "r2"); // not an alias: unchanged
    assert_eq!(
        rebound["deep"][0]["body"],
        json!({"ref": "urn:uuid:1", "size": 3})
    );
}

#[test]
fn subscriptions_are_read_strictly() {
    let s = Subscription::parse(
        &json!({"id": "s", "mode": "intercept", "failurePolicy": "fail-closed",
        "content": "omit", "backend": "b", "timeoutMs": 500}),
    )
    .unwrap();
    assert_eq!(
        (
            s.mode,
            s.fail_closed,
            s.omit,
            s.backend.as_deref(),
            s.timeout_ms
        ),
        (Mode::Intercept, true, true, Some("b"), Some(500))
    );
    let o = Subscription::parse(&json!({"id": "o", "mode": "observe", "timeoutMs": 0})).unwrap();
    assert_eq!(
        (o.mode, o.fail_closed, o.omit, o.timeout_ms),
        (Mode::Observe, false, false, None)
    );
    assert!(matches!(
        Subscription::parse(&json!({"mode": "observe"})),
        Err(SubscriptionError::Invalid(_))
    ));
    assert!(matches!(
        Subscription::parse(&json!({"id": "x", "mode": "tap"})),
        Err(SubscriptionError::Unsupported(_))
    ));
    for bad in [json!(0), json!(1.5), json!("5"), json!(true)] {
        assert!(matches!(
            Subscription::parse(&json!({"id": "x", "mode": "intercept", "timeoutMs": bad})),
            Err(SubscriptionError::Invalid(_))
        ));
    }
    assert!(Subscription::parse_list(&json!({})).is_err());
    assert_eq!(
        Subscription::parse_list(&json!([{"id": "a", "mode": "observe"}]))
            .unwrap()
            .len(),
        1
    );
}

/// Runs `chain` with the replies in order (Err: an operational failure).
fn drive(chain: &mut Chain, replies: Vec<Result<Value, String>>) -> Vec<Value> {
    let mut replies = replies.into_iter();
    let mut sent = Vec::new();
    while let Some(call) = chain.next_call().unwrap() {
        sent.push(call.message.clone());
        let r = replies.next().expect("a reply for every call");
        chain.answer(schemas(), r.as_ref().map_err(String::as_str));
    }
    sent
}

#[test]
fn fail_open_goes_on_and_fail_closed_ends_with_the_original_value() {
    let request = tool_request(json!({"value": "a"}), None);
    let subs = vec![
        sub("one", "intercept", "fail-open", "metadata"),
        sub("two", "intercept", "fail-open", "metadata"),
        sub("three", "intercept", "fail-closed", "metadata"),
        sub("four", "intercept", "fail-open", "metadata"),
        sub("watch", "observe", "fail-open", "metadata"),
    ];
    let mut chain = Chain::new(request, subs).unwrap();
    let sent = drive(
        &mut chain,
        vec![
            Ok(reply("c:a", modify_input(json!({"value": "b"})))),
            Err("connection refused".into()),
            Ok(reply("other-id", json!([]))),
        ],
    );
    assert_eq!(sent.len(), 3);
    assert_eq!(
        sent[1]["params"]["event"]["tool"]["input"],
        json!({"value": "b"})
    );
    assert!(chain.is_settled());
    let s = chain.settlement();
    assert_eq!(s.called, ["one", "two", "three"]);
    assert_eq!(s.failures, ["two", "three"]);
    assert_eq!(s.observations, ["four", "watch"]);
    assert!(s.failed_closed);
    assert_eq!(s.value, json!({"value": "a"}));
    let notes = chain.notifications().unwrap();
    assert_eq!(notes.iter().map(|n| n.index).collect::<Vec<_>>(), [3, 4]);
    assert_eq!(
        notes[0].message["params"]["event"]["tool"]["input"],
        json!({"value": "a"})
    );
    assert_eq!(
        s.actual(),
        json!({"called": ["one", "two", "three"], "failures": ["two", "three"],
               "observations": ["four", "watch"], "input": {"value": "a"}})
    );
}

#[test]
fn a_deny_short_circuits_and_the_state_is_carried_forward() {
    let request = tool_request(json!({"value": "a"}), Some(item()));
    let subs = vec![
        sub("gate", "intercept", "fail-open", "metadata"),
        sub("review", "intercept", "fail-open", "omit"),
        sub("final", "intercept", "fail-open", "metadata"),
    ];
    let mut chain = Chain::new(request, subs).unwrap();
    let sent = drive(
        &mut chain,
        vec![
            Ok(reply("c:a", json!([{"type": "ask"}]))),
            Ok(reply("c:a", json!([{"type": "deny", "reason": "no"}]))),
        ],
    );
    assert_eq!(
        sent[1]["params"]["state"],
        json!({"permission": "ask", "candidate": null})
    );
    assert_eq!(sent[1]["params"]["event"]["items"], json!([]));
    let s = chain.settlement();
    assert_eq!(
        (s.called.len(), s.observations.clone()),
        (2, vec!["final".to_string()])
    );
    assert_eq!(s.state.unwrap()["permission"], "deny");
    // nothing more is handed out once settled
    assert!(chain.next_call().unwrap().is_none());
}

#[test]
fn an_allow_does_not_survive_a_changed_value() {
    let request = tool_request(json!({"value": "a"}), None);
    let subs = vec![
        sub("one", "intercept", "fail-open", "metadata"),
        sub("two", "intercept", "fail-open", "metadata"),
    ];
    let mut chain = Chain::new(request, subs).unwrap();
    let sent = drive(
        &mut chain,
        vec![
            Ok(reply("c:a", json!([{"type": "allow"}]))),
            Ok(reply("c:a", modify_input(json!({"value": "b"})))),
        ],
    );
    assert_eq!(sent[1]["params"]["state"]["permission"], "allow");
    assert_eq!(chain.settlement().state.unwrap()["permission"], "none");
}

#[test]
fn an_interrupted_chain_settles_with_the_original_value_and_observes_nothing() {
    let request = tool_request(json!({"value": "a"}), None);
    let subs = vec![
        sub("one", "intercept", "fail-open", "metadata"),
        sub("w", "observe", "fail-open", "metadata"),
    ];
    let mut chain = Chain::new(request, subs).unwrap();
    assert!(chain.interrupt().is_err(), "nothing in flight yet");
    let call = chain.next_call().unwrap().unwrap();
    assert_eq!(call.index, 0);
    assert!(chain.next_call().unwrap().is_none(), "one call at a time");
    chain.interrupt().unwrap();
    assert!(chain.is_settled() && chain.notifications().unwrap().is_empty());
    let s = chain.settlement();
    assert_eq!(
        (s.called, s.failures, s.observations),
        (vec!["one".to_string()], vec![], vec![])
    );
    assert!(s.interrupted && s.state.is_none());
    // a late answer changes nothing
    assert!(chain
        .answer(schemas(), Ok(&reply("c:a", json!([]))))
        .reason
        .is_some());
}

#[test]
fn observers_only_call_nothing() {
    let request = tool_request(json!({"value": "a"}), Some(item()));
    let subs = vec![
        sub("w", "observe", "fail-open", "metadata"),
        sub("l", "observe", "fail-open", "omit"),
    ];
    let mut chain = Chain::new(request, subs).unwrap();
    assert!(!chain.has_intercepts());
    assert!(chain.next_call().unwrap().is_none() && chain.is_settled());
    let notes = chain.notifications().unwrap();
    assert_eq!(notes.len(), 2);
    assert_eq!(notes[1].message["params"]["event"]["items"], json!([]));
    assert!(chain.settlement().called.is_empty());
}

#[test]
fn the_supplier_is_the_return_that_bound_the_carried_candidate() {
    let parts = |t: &str| json!([{"id": "s", "kind": "text", "mediaType": "text/plain", "selection": "body", "text": t}]);
    let subs = vec![
        sub("supply", "intercept", "fail-open", "metadata"),
        sub("again", "intercept", "fail-open", "metadata"),
        sub("edit", "intercept", "fail-open", "metadata"),
    ];
    let mut chain = Chain::new(compact_request(None), subs.clone()).unwrap();
    drive(
        &mut chain,
        vec![
            Ok(reply(
                "k:before",
                json!([{"type": "return", "value": parts("S")}]),
            )),
            Ok(reply("k:before", json!([]))),
            Ok(reply("k:before", json!([]))),
        ],
    );
    assert_eq!(chain.settlement().supplier.as_deref(), Some("supply"));
    // a later changed value drops the candidate, and with it the supplier
    let mut chain = Chain::new(compact_request(None), subs).unwrap();
    drive(
        &mut chain,
        vec![
            Ok(reply(
                "k:before",
                json!([{"type": "return", "value": parts("S")}]),
            )),
            Ok(reply(
                "k:before",
                json!([{"type": "modify", "target": "instructions", "operation": "replace", "value": parts("I")}]),
            )),
            Ok(reply("k:before", json!([]))),
        ],
    );
    let s = chain.settlement();
    assert_eq!(
        (s.supplier, s.state.unwrap()["candidate"].clone()),
        (None, Value::Null)
    );
}

#[test]
fn a_boundary_without_a_plain_target_is_not_a_chain() {
    let mut request = tool_request(json!({}), None);
    request["params"]["event"]["type"] = json!("user.elicitation.result");
    assert!(Chain::new(request.clone(), vec![]).is_err());
    request["params"]["event"]["type"] = json!("turn.end");
    assert!(Chain::new(request, vec![]).is_err());
}

// ------------------------------------------------------------------ the sets

/// The verifier's comparison of a received message with a proof message: an
/// `omit` projection may also send the items with `selection: omit`.
fn proof_matches(got: &Value, want: &Value) -> bool {
    if equal(got, want) {
        return true;
    }
    let items = json::path(got, &["params", "event", "items"]);
    let wanted = json::path(want, &["params", "event", "items"]);
    match (items, wanted) {
        (Some(Value::Array(list)), Some(Value::Array(w))) if w.is_empty() => {
            let withheld = list.iter().all(|i| {
                i.get("selection").and_then(Value::as_str) == Some("omit")
                    && i.get("body").is_none()
                    && i.get("gap").is_none()
            });
            let mut copy = got.clone();
            copy["params"]["event"]["items"] = json!([]);
            withheld && equal(&copy, want)
        }
        _ => false,
    }
}

/// The lifecycle server's answer to the n-th receipt (1-based) of the
/// boundary's id: `responseSequences.a[n]` (the last again past its end),
/// else `responses.a`; a scripted fault is an operational failure (a
/// `server-error` is its JSON-RPC error, which the core rules reject).
fn scripted(row: &Value, n: usize) -> Result<Value, String> {
    let entry = match row.pointer("/responseSequences/a") {
        Some(Value::Array(seq)) if !seq.is_empty() => seq[n.min(seq.len()) - 1].clone(),
        _ => row["responses"]["a"].clone(),
    };
    match entry.get("fault").and_then(Value::as_str) {
        None => Ok(entry),
        Some("server-error") => Ok(json!({"jsonrpc": "2.0", "id": row["requests"]["a"]["id"],
                                          "error": {"code": -32603, "message": "scripted server error"}})),
        Some("malformed") => Err("the reply is not JSON".into()),
        Some("timeout") => Err("the deadline passed".into()),
        Some(other) => panic!("unknown fault {other}"),
    }
}

/// One chain row: None when it passes, else what differs.
fn run_chain_row(row: &Value) -> Option<String> {
    let subs = match Subscription::parse_list(&row["chain"]["subscriptions"]) {
        Ok(s) => s,
        Err(e) => return Some(format!("subscriptions: {e}")),
    };
    let request = row["requests"]["a"].clone();
    if let Some(p) = schemas().check(INTERCEPT_REQUEST, &request) {
        return Some(format!("requests.a: {p}"));
    }
    let mut chain = match Chain::new(request, subs) {
        Ok(c) => c,
        Err(e) => return Some(e),
    };
    let interrupt = row["chain"]["interrupt"] == json!(true) && chain.has_intercepts();
    let mut received = Vec::new();
    loop {
        let call = match chain.next_call() {
            Ok(Some(c)) => c,
            Ok(None) => break,
            Err(e) => return Some(e),
        };
        if let Some(p) = schemas().check(INTERCEPT_REQUEST, &call.message) {
            return Some(format!("a call is invalid: {p}"));
        }
        let unreachable =
            chain.subscriptions()[call.index].backend.as_deref() == Some("unreachable");
        if unreachable {
            chain.answer(schemas(), Err("connection refused"));
            continue;
        }
        received.push(call.message.clone());
        if interrupt {
            if let Err(e) = chain.interrupt() {
                return Some(e);
            }
            break;
        }
        let answer = scripted(row, received.len());
        chain.answer(schemas(), answer.as_ref().map_err(String::as_str));
    }
    let notes: Vec<Value> = match chain.notifications() {
        Ok(n) => n.into_iter().map(|n| n.message).collect(),
        Err(e) => return Some(e),
    };
    for n in &notes {
        if let Some(p) = schemas().check(OBSERVE_NOTIFICATION, n) {
            return Some(format!("a notification is invalid: {p}"));
        }
    }
    let actual = chain.settlement().actual();
    if !equal(&actual, &row["expected"]) {
        return Some(format!(
            "actual {} != expected {}",
            json::encode(&actual),
            json::encode(&row["expected"])
        ));
    }
    let proof = row["chainProof"]["requests"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if received.len() != proof.len()
        || !received
            .iter()
            .zip(&proof)
            .all(|(g, w)| proof_matches(g, w))
    {
        return Some(format!(
            "received {} calls, the proof has {}, or a call differs: {}",
            received.len(),
            proof.len(),
            received
                .iter()
                .map(json::encode)
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    let observations = row["chainProof"]["observations"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if !same_multiset(&notes, &observations, proof_matches) {
        return Some(format!(
            "notifications {} are not the proof's",
            notes
                .iter()
                .map(json::encode)
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    None
}

fn replay(file: &str) -> usize {
    let chains: Vec<Value> = rows(file)
        .into_iter()
        .filter(|r| r.get("chain").is_some())
        .collect();
    assert!(!chains.is_empty(), "{file} has chain rows");
    let problems: Vec<String> = chains
        .iter()
        .filter_map(|r| run_chain_row(r).map(|p| format!("{}: {p}", r["id"])))
        .collect();
    report(file, chains.len(), &problems);
    chains.len()
}

#[test]
fn every_chain_row_of_our_lifecycle_set() {
    assert_eq!(replay("scenarios/lifecycle.json"), 22);
}

#[test]
fn every_chain_row_of_the_upstream_lifecycle_vectors() {
    assert_eq!(replay("scenarios/upstream/lifecycle-scenarios.json"), 9);
}

#[test]
fn every_row_of_the_upstream_observation_chains() {
    assert_eq!(
        replay("scenarios/upstream/observation-chain-scenarios.json"),
        9
    );
}
