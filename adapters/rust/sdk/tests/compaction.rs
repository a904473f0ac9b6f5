//! Context compaction (docs/COMPACTION.md): a test per rule of the host's
//! outcome, the synthetic summary, the after request and the receiver's
//! refusals; then every row of `scenarios/compaction.json` against a
//! simulated server (the row's scripted replies and faults), judged as the
//! harness judges it: `actual` equal to `expected`, the calls of each
//! boundary equal to `proof.before` / `proof.after`, the notifications
//! `proof.observations` as a multiset; every negative refused.

mod common;

use ahp_sdk::boundaries::boundary_for;
use ahp_sdk::chain::{Chain, Subscription};
use ahp_sdk::compaction::*;
use ahp_sdk::json::{self, equal};
use ahp_sdk::schemas::{INTERCEPT_REQUEST, OBSERVE_NOTIFICATION};
use common::{report, rows, same_multiset, schemas, text};
use serde_json::{json, Value};

fn part(id: &str, t: &str) -> Value {
    json!({"id": id, "kind": "text", "mediaType": "text/plain", "selection": "body", "text": t})
}

fn before_request(instructions: Option<Value>) -> Value {
    let mut event = json!({"id": "r:before", "source": "urn:x", "type": "context.compact.before",
        "time": "2026-01-01T00:00:00Z", "trigger": "manual",
        "items": [{"id": "m1", "role": "user", "parts": [part("p", "hi")]}, {"id": "m2", "role": "assistant", "parts": []}]});
    if let Some(i) = instructions {
        event["instructions"] = i;
    }
    json!({"jsonrpc": "2.0", "id": "r:before", "method": "hooks/intercept", "params": {
        "protocolVersion": "draft", "event": event,
        "capabilities": {"effects": ["deny", "modify", "return", "message"],
                         "modify": {"instructions": {"replace": true, "merge": false}}}}})
}

#[test]
fn the_synthetic_summary() {
    let cases = [
        ("null", "Summary of 3 items."),
        ("[]", "Summary of 3 items."),
        (r#"[{"text": ""}]"#, "Summary of 3 items."),
        (
            r#"[{"text": "a"}, {"text": ""}, {"text": "b"}]"#,
            "Summary of 3 items. Instructions: a  b",
        ),
        (
            r#"[{"text": "Grüße"}, {"id": "no text"}]"#,
            "Summary of 3 items. Instructions: Grüße",
        ),
    ];
    for (instructions, want) in cases {
        let got = synthetic_summary("r:summary", 3, &text(instructions));
        assert_eq!(got, json!([part("r:summary", want)]), "{instructions}");
    }
}

#[test]
fn the_host_outcome() {
    let supplied = json!([part("s", "S")]);
    let got = compact(
        Some(&json!({"decision": "allow", "executed": false, "result": supplied})),
        Some("sub"),
        "r:summary",
        1,
        &json!([]),
    );
    assert!(got.applied);
    assert_eq!(got.summary, Some(supplied.clone()));
    assert_eq!(
        got.provenance,
        Some(json!({"kind": "supplied", "supplier": "sub"}))
    );
    assert_eq!(
        got.execution,
        Some(json!({"status": "skipped", "reason": "supplied_result"}))
    );
    let got = compact(
        Some(&json!({"decision": "allow", "result": supplied})),
        None,
        "r:summary",
        1,
        &json!([]),
    );
    assert_eq!(
        got.provenance,
        Some(json!({"kind": "supplied", "supplier": null}))
    );
    let got = compact(
        Some(&json!({"decision": "allow", "executed": true})),
        None,
        "r:summary",
        2,
        &json!([part("i", "x")]),
    );
    assert_eq!(got.provenance, Some(json!({"kind": "generated"})));
    assert_eq!(got.execution, Some(json!({"status": "executed"})));
    assert_eq!(
        got.summary,
        Some(json!([part(
            "r:summary",
            "Summary of 2 items. Instructions: x"
        )]))
    );
    for result in [
        None,
        Some(json!({"decision": "deny", "executed": false})),
        Some(json!({"decision": "deny", "executed": false, "result": supplied})),
        Some(json!({"decision": "ask", "executed": false})),
        Some(json!({"decision": "allow", "executed": false, "flow": "stop", "result": supplied})),
    ] {
        assert_eq!(
            compact(result.as_ref(), Some("sub"), "r:summary", 1, &json!([])),
            Compaction::not_applied(),
            "{result:?}"
        );
    }
}

#[test]
fn the_settled_result_is_the_core_rules_with_no_further_effect() {
    let b = boundary_for(COMPACT_BEFORE).unwrap();
    let request = before_request(None);
    let own = settled_result(schemas(), &request, b, &json!([]), None).unwrap();
    assert_eq!(
        (own["decision"].clone(), own["executed"].clone()),
        (json!("allow"), json!(true))
    );
    let denied = settled_result(
        schemas(),
        &request,
        b,
        &json!([]),
        Some(&json!({"permission": "deny", "candidate": null})),
    )
    .unwrap();
    assert_eq!(
        (denied["decision"].clone(), denied["executed"].clone()),
        (json!("deny"), json!(false))
    );
    let candidate = json!({"permission": "none", "candidate": {"value": [part("s", "S")]}});
    let supplied = settled_result(schemas(), &request, b, &json!([]), Some(&candidate)).unwrap();
    assert_eq!(supplied["result"], json!([part("s", "S")]));
    assert!(settled_result(schemas(), &json!({}), b, &json!([]), None).is_err());
}

#[test]
fn the_after_request() {
    let request = before_request(None);
    let summary = synthetic_summary("r:summary", 2, &Value::Null);
    for observe_only in [false, true] {
        let msg = after_request(
            "r:after",
            &request,
            &summary,
            &json!({"status": "executed"}),
            observe_only,
        );
        assert_eq!(schemas().check(INTERCEPT_REQUEST, &msg), None);
        let event = &msg["params"]["event"];
        assert!(event.get("session").is_none(), "no session added");
        assert_eq!(event["removed"], json!([{"id": "m1"}, {"id": "m2"}]));
        assert_eq!(event["parentEventId"], "r:before");
        assert_eq!(
            (event["id"].clone(), msg["id"].clone()),
            (json!("r:after"), json!("r:after"))
        );
        assert_eq!(
            msg["params"]["capabilities"],
            after_capabilities(observe_only)
        );
    }
    let mut with_session = request.clone();
    with_session["params"]["event"]["session"] = json!({"id": "s"});
    let msg = after_request(
        "r:after",
        &with_session,
        &summary,
        &json!({"status": "executed"}),
        false,
    );
    assert_eq!(msg["params"]["event"]["session"], json!({"id": "s"}));
    assert_eq!(after_capabilities(true), json!({"effects": []}));
}

#[test]
fn text_parts_carrying_body_and_the_receivers_refusals() {
    assert!(carries_body(&text(
        r#"{"event": {"instructions": [{"kind": "text", "body": {"ref": "x"}}]}}"#
    )));
    assert!(!carries_body(&text(
        r#"{"event": {"items": [{"kind": "file", "body": {"ref": "x"}}, {"kind": "text", "text": "t"}]}}"#
    )));
    let request = before_request(None);
    let known = |id: &str| id == "r:before";
    assert_eq!(refusal(schemas(), &request, known), None);
    assert!(refusal(schemas(), &request, |_| false)
        .unwrap()
        .contains("boundary id"));
    assert!(refusal(schemas(), &json!({"jsonrpc": "2.0"}), known)
        .unwrap()
        .contains("invalid"));
    let mut with_body = request.clone();
    with_body["params"]["event"]["items"][0]["parts"][0] = json!({"id": "p", "kind": "text", "mediaType": "text/plain", "selection": "body", "body": {"ref": "r", "size": 1, "sha256": "0".repeat(64)}});
    let why = refusal(schemas(), &with_body, known).expect("a text part with body is refused");
    assert!(why.contains("body"), "{why}");
}

#[test]
fn a_fail_closed_before_chain_compacts_nothing() {
    let subs = vec![Subscription::parse(
        &json!({"id": "g", "mode": "intercept", "failurePolicy": "fail-closed"}),
    )
    .unwrap()];
    let mut chain = Chain::new(before_request(None), subs).unwrap();
    chain.next_call().unwrap().unwrap();
    chain.answer(schemas(), Err("timeout"));
    assert!(chain.is_settled());
    let host = host_outcome(schemas(), &chain, "r:summary").unwrap();
    assert_eq!(host, Compaction::not_applied());
    let actual = run_actual(&chain.settlement(), &host, None);
    assert_eq!(actual["applied"], false);
    assert_eq!(actual["instructions"], json!([]));
    assert_eq!(
        actual["after"],
        json!({"called": [], "failures": [], "observations": []})
    );
}

// ------------------------------------------------------------------ the set

/// The server's answer to the n-th call (1-based) of a boundary: the n-th
/// entry of `responseSequences.<phase>` (the last again past its end); a
/// scripted fault is an operational failure.
fn scripted(row: &Value, phase: &str, id: &Value, n: usize) -> Result<Value, String> {
    let seq = row["responseSequences"][phase]
        .as_array()
        .filter(|s| !s.is_empty())
        .ok_or("no responseSequences")?;
    let entry = seq[n.min(seq.len()) - 1].clone();
    match entry.get("fault").and_then(Value::as_str) {
        None => Ok(entry),
        Some("server-error") => Ok(
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": "scripted server error"}}),
        ),
        Some("malformed") => Err("the reply is not JSON".into()),
        Some("timeout") => Err("the deadline passed".into()),
        Some(other) => Err(format!("unknown fault {other}")),
    }
}

/// Runs one boundary's chain; returns the received calls and notifications.
fn run_boundary(
    row: &Value,
    phase: &str,
    chain: &mut Chain,
    boundary_ids: &[String],
) -> Result<(Vec<Value>, Vec<Value>), String> {
    let mut received = Vec::new();
    while let Some(call) = chain.next_call()? {
        if let Some(why) = refusal(schemas(), &call.message, |id| {
            boundary_ids.iter().any(|b| b == id)
        }) {
            return Err(format!("the server refuses a {phase} call: {why}"));
        }
        received.push(call.message.clone());
        let answer = scripted(row, phase, &call.message["id"], received.len());
        chain.answer(schemas(), answer.as_ref().map_err(String::as_str));
    }
    let notes: Vec<Value> = chain
        .notifications()?
        .into_iter()
        .map(|n| n.message)
        .collect();
    for n in &notes {
        if let Some(p) = schemas().check(OBSERVE_NOTIFICATION, n) {
            return Err(format!("a {phase} notification is invalid: {p}"));
        }
    }
    Ok((received, notes))
}

fn run_row(row: &Value, boundary_ids: &[String]) -> Result<(), String> {
    let id = row["id"].as_str().ok_or("no id")?;
    let before_subs = Subscription::parse_list(&row["before"]).map_err(|e| e.to_string())?;
    let after_subs = Subscription::parse_list(&row["after"]).map_err(|e| e.to_string())?;
    let request = row["request"].clone();
    if let Some(p) = schemas().check(INTERCEPT_REQUEST, &request) {
        return Err(format!("request: {p}"));
    }
    let mut before = Chain::new(request, before_subs)?;
    let (mut received, mut notes) = run_boundary(row, "before", &mut before, boundary_ids)?;
    let host = host_outcome(schemas(), &before, &format!("{id}:summary"))?;
    let mut after_received = Vec::new();
    let after = if host.applied {
        let msg = after_request(
            &format!("{id}:after"),
            before.request(),
            host.summary.as_ref().unwrap(),
            host.execution.as_ref().unwrap(),
            row["afterObserveOnly"] == json!(true),
        );
        if let Some(p) = schemas().check(INTERCEPT_REQUEST, &msg) {
            return Err(format!("the after request: {p}"));
        }
        let mut chain = Chain::new(msg, after_subs)?;
        let (r, n) = run_boundary(row, "after", &mut chain, boundary_ids)?;
        after_received = r;
        notes.extend(n);
        Some(chain.settlement())
    } else {
        None
    };
    let actual = run_actual(&before.settlement(), &host, after.as_ref());
    if !equal(&actual, &row["expected"]) {
        return Err(format!(
            "actual {} != expected {}",
            json::encode(&actual),
            json::encode(&row["expected"])
        ));
    }
    let proof = &row["proof"];
    for (phase, got) in [("before", &mut received), ("after", &mut after_received)] {
        if !equal(&json!(got), &proof[phase]) {
            return Err(format!(
                "the {phase} calls {} are not the proof's",
                json::encode(&json!(got))
            ));
        }
    }
    let observations = proof["observations"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if !same_multiset(&notes, &observations, equal) {
        return Err(format!(
            "notifications {} are not the proof's",
            json::encode(&json!(notes))
        ));
    }
    Ok(())
}

#[test]
fn every_row_of_our_compaction_set() {
    let all = rows("scenarios/compaction.json");
    let runs: Vec<&Value> = all.iter().filter(|r| r.get("negative").is_none()).collect();
    let boundary_ids: Vec<String> = runs
        .iter()
        .flat_map(|r| ["before", "after"].map(|p| format!("{}:{p}", r["id"].as_str().unwrap())))
        .collect();
    let mut problems = Vec::new();
    for row in &all {
        let result = match row.get("negative") {
            // refused on its own merits, even were its id a boundary id
            Some(negative) => match refusal(schemas(), negative, |_| true) {
                Some(_) if row["expected"] == json!({"error": -32602}) => Ok(()),
                Some(_) => Err(format!("expected {}", json::encode(&row["expected"]))),
                None => Err("the negative is not refused".into()),
            },
            None => run_row(row, &boundary_ids),
        };
        if let Err(e) = result {
            problems.push(format!("{}: {e}", row["id"]));
        }
    }
    report("scenarios/compaction.json", all.len(), &problems);
    assert!(
        all.len() >= 51 && runs.len() >= 47,
        "{} rows, {} runs",
        all.len(),
        runs.len()
    );
}
