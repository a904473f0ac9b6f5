//! Elicitation (docs/ELICITATION.md): the form schemas, the bodies, each
//! check of the receiver in order, the host's judgements at both
//! boundaries; then every row of `scenarios/elicitation.json` with one
//! receiver (and one upload store) for the whole file, as the server runs
//! it: wire rows judged against `expected.steps` and `expected.receipts`,
//! atomic rows against `expected.actual` and `expected.receipts`, the host's
//! events travelling through the receiver (a refusal is the reply's
//! JSON-RPC error).

mod common;

use ahp_sdk::chain::rebind_refs;
use ahp_sdk::elicitation::*;
use ahp_sdk::json::{self, equal};
use ahp_sdk::schemas::INTERCEPT_REQUEST;
use base64::Engine as _;
use common::{load, report, schemas, text};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

const FORM_BODY: &str = r#"{"mode":"form","message":"Seats?","requestedSchema":{"type":"object","properties":{"seats":{"type":"integer","minimum":1,"maximum":6},"note":{"type":"string","format":"email"}},"required":["seats"]}}"#;

fn request(id: &str, session: &str, body: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "hooks/intercept", "params": {"protocolVersion": "draft",
        "event": {"id": id, "source": "urn:x", "type": "user.elicitation.request", "time": "2026-01-01T00:00:00Z",
                  "session": {"id": session}, "elicitation": {"server": "srv", "mode": "form",
                  "request": {"id": format!("{id}:b"), "kind": "text", "mediaType": "text/plain", "selection": "body", "text": body}}},
        "capabilities": {"effects": ["deny", "return", "message"]}}})
}

fn result(id: &str, parent: &str, session: &str, action: &str, body: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "hooks/intercept", "params": {"protocolVersion": "draft",
        "event": {"id": id, "source": "urn:x", "type": "user.elicitation.result", "time": "2026-01-01T00:00:00Z",
                  "session": {"id": session}, "parentEventId": parent, "elicitation": {"server": "srv", "mode": "form",
                  "action": action, "result": {"id": format!("{id}:b"), "kind": "text", "mediaType": "text/plain",
                  "selection": "body", "text": body}}},
        "capabilities": {"effects": []}}})
}

fn nothing_stored(_: &str) -> bool {
    false
}

#[test]
fn form_schemas_are_draft_2020_12_without_format_assertions_compiled_once() {
    let forms = FormSchemas::new();
    let schema = text(
        r#"{"type": "object", "properties": {"e": {"type": "string", "format": "email"},
        "d": {"type": "string", "format": "date-time"}, "n": {"type": "integer", "minimum": 1}}, "required": ["n"]}"#,
    );
    assert_eq!(
        forms.problem(
            &schema,
            &json!({"n": 1, "e": "not an email", "d": "yesterday"})
        ),
        None
    );
    assert!(forms
        .problem(&schema, &json!({"n": 0}))
        .unwrap()
        .starts_with("the requested schema"));
    assert!(
        forms.problem(&schema, &json!({"e": "x"})).is_some(),
        "required"
    );
    assert!(
        forms.problem(&schema, &json!({"n": 1.5})).is_some(),
        "integer"
    );
    assert_eq!(
        forms.problem(&schema, &json!({"n": 2.0})),
        None,
        "2.0 is an integer"
    );
    assert_eq!(
        forms.problem(&schema, &json!({"n": 1, "extra": true})),
        None,
        "no additionalProperties"
    );
    // no default is filled in: validating leaves the instance as it was
    let defaults = text(
        r#"{"type": "object", "properties": {"n": {"type": "integer", "default": 3}}, "required": ["n"]}"#,
    );
    assert!(forms.problem(&defaults, &json!({})).is_some());
    assert_eq!(forms.len(), 2);
    // the same schema in another key order is the same schema
    let reordered = text(
        r#"{"required": ["n"], "properties": {"n": {"minimum": 1, "type": "integer"}, "e": {"format": "email", "type": "string"},
        "d": {"format": "date-time", "type": "string"}}, "type": "object"}"#,
    );
    assert_eq!(forms.problem(&reordered, &json!({"n": 1})), None);
    assert_eq!(forms.len(), 2);
    // a $schema naming another draft does not turn format assertions on
    let draft7 = text(
        r#"{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
        "properties": {"e": {"type": "string", "format": "email"}}}"#,
    );
    assert_eq!(forms.problem(&draft7, &json!({"e": "nope"})), None);
    // schemas that cannot be used
    for bad in [
        r#"{"type": "object", "properties": {"n": {"type": "nonsense"}}}"#,
        r#"{"$ref": "https://elsewhere.invalid/schema.json"}"#,
        r#"{"type": "object", "properties": {"n": {"type": "string", "pattern": "("}}}"#,
        r#"[]"#,
    ] {
        let why = forms.compile(&text(bad)).expect_err(bad);
        assert!(why.contains("requested schema"), "{bad}: {why}");
        assert!(forms.problem(&text(bad), &json!({})).is_some());
    }
    let local_ref = text(
        r##"{"type": "object", "$defs": {"n": {"type": "integer"}}, "properties": {"n": {"$ref": "#/$defs/n"}}}"##,
    );
    assert!(forms.problem(&local_ref, &json!({"n": "x"})).is_some());
    assert_eq!(forms.problem(&local_ref, &json!({"n": 1})), None);
}

#[test]
fn bodies_modes_and_requested_schemas() {
    assert!(parse_body(None).is_err());
    assert!(parse_body(Some(&json!(3))).is_err());
    assert!(parse_body(Some(&json!("[1]")))
        .unwrap_err()
        .contains("not a JSON object"));
    assert!(parse_body(Some(&json!(r#"{"a": 1, "a": 2}"#)))
        .unwrap_err()
        .contains("strict JSON"));
    let params = parse_body(Some(&json!(FORM_BODY))).unwrap();
    assert_eq!(request_mode(&params), json!("form"));
    assert!(requested_schema(Some(&params)).is_some());
    let mut no_mode = params.clone();
    no_mode.remove("mode");
    assert_eq!(request_mode(&no_mode), json!("form"), "absent: form");
    let url: Map<String, Value> = text(
        r#"{"mode": "url", "message": "m", "elicitationId": "e", "url": "https://x.example"}"#,
    )
    .as_object()
    .unwrap()
    .clone();
    assert_eq!(requested_schema(Some(&url)), None);
    assert_eq!(requested_schema(None), None);
    let event = &request("r", "s", FORM_BODY)["params"]["event"];
    assert!(body_of(event, "request").is_some());
    let mut gap = event.clone();
    gap["elicitation"]["request"]["gap"] = json!({"reason": "x"});
    assert!(body_of(&gap, "request").is_none());
    let mut metadata = event.clone();
    metadata["elicitation"]["request"]["selection"] = json!("metadata");
    assert!(body_of(&metadata, "request").is_none());
    assert!(request_form_schema(&request("r", "s", FORM_BODY)).is_some());
}

#[test]
fn an_answer_in_its_mode() {
    let forms = FormSchemas::new();
    let schema = requested_schema(Some(&parse_body(Some(&json!(FORM_BODY))).unwrap())).cloned();
    let form = Some(json!("form"));
    let url = Some(json!("url"));
    let p = |r: Value, mode: &Option<Value>, s: Option<&Value>| {
        result_problem(schemas(), &forms, &r, mode.as_ref(), s)
    };
    assert_eq!(
        p(
            json!({"action": "accept", "content": {"seats": 2}}),
            &form,
            schema.as_ref()
        ),
        None
    );
    assert!(p(
        json!({"action": "accept", "content": {"seats": 9}}),
        &form,
        schema.as_ref()
    )
    .is_some());
    assert!(
        p(json!({"action": "accept"}), &form, schema.as_ref()).is_some(),
        "absent content is {{}}, seats required"
    );
    assert_eq!(
        p(
            json!({"action": "accept", "content": {"seats": 9}}),
            &form,
            None
        ),
        None,
        "form schema unknown"
    );
    assert!(p(
        json!({"action": "decline", "content": {}}),
        &form,
        schema.as_ref()
    )
    .is_some());
    assert_eq!(p(json!({"action": "cancel"}), &form, schema.as_ref()), None);
    assert!(
        p(json!({"action": "accept", "content": {}}), &url, None).is_some(),
        "no content in url mode"
    );
    assert_eq!(p(json!({"action": "accept"}), &url, None), None);
    assert!(
        p(json!({"action": "maybe"}), &form, None).is_some(),
        "the MCP definition"
    );
    assert!(p(
        json!({"action": "accept", "content": {"a": {"nested": 1}}}),
        &form,
        None
    )
    .is_some());
}

#[test]
fn the_receivers_checks_in_order() {
    let r = Receiver::new("authenticated:test");
    let ok = |msg: &Value| r.accept(schemas(), msg, nothing_stored);
    let refused = |msg: &Value, status: u16, contains: &str| {
        let before = r.live_count();
        let e = r
            .accept(schemas(), msg, nothing_stored)
            .expect_err(contains);
        assert_eq!(e.status, status, "{contains}: {e:?}");
        assert!(e.message.contains(contains), "{contains}: {}", e.message);
        assert_eq!(r.live_count(), before, "a refusal changes nothing");
    };
    // 1. envelope, id, type
    refused(&json!({"jsonrpc": "2.0"}), 400, "invalid intercept request");
    let mut other_id = request("r0", "s1", FORM_BODY);
    other_id["id"] = json!("another");
    refused(&other_id, 400, "JSON-RPC id");
    // 2. stored content
    let mut with_item = request("r2", "s1", FORM_BODY);
    with_item["params"]["event"]["items"] = json!([{"id": "a", "kind": "attachment", "mediaType": "application/pdf", "selection": "body", "body": {"ref": "never-uploaded"}}]);
    refused(&with_item, 409, "never-uploaded");
    assert!(
        r.accept(schemas(), &with_item, |r| r == "never-uploaded")
            .is_ok(),
        "stored: accepted"
    );
    // 3. a selected gap fails closed
    let mut gap = request("r3", "s1", FORM_BODY);
    gap["params"]["event"]["elicitation"]["request"]["gap"] = json!({"reason": "withheld"});
    gap["params"]["event"]["elicitation"]["request"]
        .as_object_mut()
        .unwrap()
        .remove("text");
    assert_eq!(schemas().check(INTERCEPT_REQUEST, &gap), None);
    refused(&gap, 400, "gap");
    let mut no_session = request("r3", "s1", FORM_BODY);
    no_session["params"]["event"]
        .as_object_mut()
        .unwrap()
        .remove("session");
    refused(&no_session, 400, "session.id");
    // 4. a request
    let first = ok(&request("r1", "s1", FORM_BODY)).unwrap();
    assert_eq!(first.event_type, REQUEST_EVENT);
    assert_eq!(first.summary["request"]["message"], "Seats?");
    refused(&request("r1", "s1", FORM_BODY), 400, "already live");
    refused(&request("r1", "s9", FORM_BODY), 400, "already live"); // live for the whole server
    refused(
        &request("r4", "s1", r#"{"mode":"form","mode":"form"}"#),
        400,
        "strict JSON",
    );
    refused(
        &request(
            "r4",
            "s1",
            r#"{"mode":"url","message":"m","elicitationId":"e","url":"https://x.example"}"#,
        ),
        400,
        "mode",
    );
    let bad = r#"{"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{"n":{"type":"string","minLength":-1}}}}"#;
    refused(&request("r4", "s1", bad), 400, "");
    // 5. a result
    refused(
        &result(
            "x1",
            "nobody",
            "s1",
            "accept",
            r#"{"action":"accept","content":{"seats":2}}"#,
        ),
        400,
        "not a live request",
    );
    refused(
        &result(
            "x1",
            "r1",
            "s2",
            "accept",
            r#"{"action":"accept","content":{"seats":2}}"#,
        ),
        400,
        "session.id",
    );
    let mut other_source = result(
        "x1",
        "r1",
        "s1",
        "accept",
        r#"{"action":"accept","content":{"seats":2}}"#,
    );
    other_source["params"]["event"]["source"] = json!("urn:y");
    refused(&other_source, 400, "source");
    refused(
        &result(
            "x1",
            "r1",
            "s1",
            "accept",
            r#"{"action":"accept","content":{"seats":9}}"#,
        ),
        400,
        "requested schema",
    );
    refused(
        &result(
            "x1",
            "r1",
            "s1",
            "decline",
            r#"{"action":"decline","content":{"seats":2}}"#,
        ),
        400,
        "carries no content",
    );
    refused(
        &result("x1", "r1", "s1", "accept", r#"{"action":"decline"}"#),
        400,
        "action",
    );
    refused(
        &result(
            "x1",
            "r1",
            "s1",
            "accept",
            r#"{"action":"accept","action":"accept"}"#,
        ),
        400,
        "strict JSON",
    );
    let mut receipts = Vec::new();
    let done = r
        .accept_then(
            schemas(),
            &result(
                "x1",
                "r1",
                "s1",
                "accept",
                r#"{"action":"accept","content":{"seats":2,"note":"not an email"}}"#,
            ),
            nothing_stored,
            |a| receipts.push(a.entry()),
        )
        .unwrap();
    assert_eq!(receipts.len(), 1);
    assert_eq!(receipts[0]["kind"], "elicitation");
    assert_eq!(
        done.summary["provenance"],
        json!({"kind": "mcp", "authenticatedSource": "authenticated:test"})
    );
    assert_eq!(done.summary["externalCompletion"], false);
    refused(
        &result(
            "x2",
            "r1",
            "s1",
            "accept",
            r#"{"action":"accept","content":{"seats":2}}"#,
        ),
        400,
        "not a live request",
    );
    let e = Refusal {
        status: 409,
        message: "m".into(),
    };
    assert_eq!(
        e.answer(&json!({"id": "q"})),
        json!({"jsonrpc": "2.0", "id": "q", "error": {"code": -32602, "message": "m"}})
    );
    assert_eq!(e.answer(&json!(3))["id"], Value::Null);
}

/// An absent request / result part is the omit selection
/// (interaction-payloads.md, "MCP elicitation binding": "Omission has no
/// part"); a result without a part correlates to a request without one.
#[test]
fn an_absent_part_is_the_omit_selection() {
    let r = Receiver::new("authenticated:test");
    let without_part = |mut msg: Value, name: &str| {
        msg["params"]["event"]["elicitation"]
            .as_object_mut()
            .unwrap()
            .remove(name);
        msg
    };
    let mut no_session = without_part(request("r0", "s1", FORM_BODY), "request");
    no_session["params"]["event"]
        .as_object_mut()
        .unwrap()
        .remove("session");
    let e = r
        .accept(schemas(), &no_session, nothing_stored)
        .expect_err("no session");
    assert!(e.message.contains("session.id"), "{}", e.message);
    let omitted = r
        .accept(
            schemas(),
            &without_part(request("r1", "s1", FORM_BODY), "request"),
            nothing_stored,
        )
        .unwrap();
    assert_eq!(omitted.summary, json!({"selection": "omit"}));
    assert_eq!(r.live_count(), 1);
    let declined = r
        .accept(
            schemas(),
            &without_part(
                result("x1", "r1", "s1", "decline", r#"{"action":"decline"}"#),
                "result",
            ),
            nothing_stored,
        )
        .unwrap();
    assert_eq!(
        declined.summary,
        json!({"selection": {"request": "omit", "result": "omit"},
               "bodyValidation": "not-selected",
               "provenance": {"kind": "mcp", "authenticatedSource": "authenticated:test"},
               "externalCompletion": false})
    );
    assert_eq!(r.live_count(), 0);
    r.accept(schemas(), &request("r2", "s1", FORM_BODY), nothing_stored)
        .unwrap();
    let accepted = r
        .accept(
            schemas(),
            &without_part(
                result("x2", "r2", "s1", "accept", r#"{"action":"accept"}"#),
                "result",
            ),
            nothing_stored,
        )
        .unwrap();
    assert_eq!(
        accepted.summary["selection"],
        json!({"request": "body", "result": "omit"})
    );
}

fn reply(id: &str, effects: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": "draft", "effects": effects}})
}

#[test]
fn the_host_at_the_request_boundary() {
    let forms = FormSchemas::new();
    let req = request("a:request", "s", FORM_BODY);
    let judge = |r: Result<&Value, &str>| judge_request(schemas(), &forms, &req, r);
    let ret = |v: Value| reply("a:request", json!([{"type": "return", "value": v}]));
    assert_eq!(
        judge(Ok(&ret(
            json!({"action": "accept", "content": {"seats": 3}})
        ))),
        RequestVerdict::Allowed(Some(json!({"action": "accept", "content": {"seats": 3}})))
    );
    assert_eq!(
        judge(Ok(&reply("a:request", json!([])))),
        RequestVerdict::Allowed(None)
    );
    assert_eq!(
        judge(Ok(&reply(
            "a:request",
            json!([{"type": "message", "text": "hi"}])
        ))),
        RequestVerdict::Allowed(None)
    );
    assert!(matches!(
        judge(Ok(&ret(
            json!({"action": "accept", "content": {"seats": 0}})
        ))),
        RequestVerdict::Rejected(_)
    ));
    assert!(matches!(
        judge(Ok(&ret(json!({"action": "decline", "content": {}})))),
        RequestVerdict::Rejected(_)
    ));
    assert!(matches!(
        judge(Ok(&ret(json!({"action": "nope"})))),
        RequestVerdict::Rejected(_)
    ));
    assert_eq!(
        judge(Ok(&reply(
            "a:request",
            json!([{"type": "deny", "reason": "no"}])
        ))),
        RequestVerdict::Denied
    );
    // a bad return rejects the whole reply, even next to a deny
    let both = reply(
        "a:request",
        json!([{"type": "deny", "reason": "no"}, {"type": "return", "value": {"action": "accept", "content": {"seats": 0}}}]),
    );
    assert!(matches!(judge(Ok(&both)), RequestVerdict::Rejected(_)));
    assert!(matches!(
        judge(Ok(&reply("other", json!([])))),
        RequestVerdict::Rejected(_)
    ));
    assert!(matches!(
        judge(Err("not strict JSON")),
        RequestVerdict::Rejected(_)
    ));
    // only deny, return and message exist here, advertised or not
    let mut asks = req.clone();
    asks["params"]["capabilities"]["effects"] = json!(["deny", "return", "message", "ask"]);
    assert!(matches!(
        judge_request(
            schemas(),
            &forms,
            &asks,
            Ok(&reply("a:request", json!([{"type": "ask"}])))
        ),
        RequestVerdict::Rejected(_)
    ));
    let refused = json!({"jsonrpc": "2.0", "id": "a:request", "error": {"code": -32602, "message": "refused"}});
    assert_eq!(judge(Ok(&refused)).as_str(), "rejected");
    assert_eq!(RequestVerdict::Denied.as_str(), "denied");
    assert_eq!(RequestVerdict::Allowed(None).as_str(), "allowed");
}

#[test]
fn the_host_at_the_result_boundary() {
    let forms = FormSchemas::new();
    let req = request("a:request", "s", FORM_BODY);
    let event = &req["params"]["event"];
    let user = json!({"action": "accept", "content": {"seats": 1}});
    let caps = json!({"effects": ["modify", "message"], "modify": {"content": {"replace": true, "merge": true}}});
    let msg = result_request(event, &user, "a:result", "a:result-body", &caps);
    assert_eq!(schemas().check(INTERCEPT_REQUEST, &msg), None);
    let e = &msg["params"]["event"];
    assert_eq!(
        (e["parentEventId"].clone(), e["session"].clone()),
        (json!("a:request"), json!({"id": "s"}))
    );
    assert_eq!(e["elicitation"]["action"], "accept");
    assert!(equal(
        &json::parse_str(e["elicitation"]["result"]["text"].as_str().unwrap()).unwrap(),
        &user
    ));
    let schema = request_form_schema(&req);
    let judge = |r: &Value| judge_result(schemas(), &forms, &msg, &user, Ok(r), schema.as_ref());
    let merge = |v: Value| {
        reply(
            "a:result",
            json!([{"type": "modify", "target": "content", "operation": "merge", "value": v}]),
        )
    };
    let got = judge(&merge(json!({"seats": 4}))).unwrap();
    assert!(got.edited);
    assert_eq!(
        got.result,
        json!({"action": "accept", "content": {"seats": 4}})
    );
    assert!(
        judge(&merge(json!({"seats": 40}))).is_err(),
        "breaks the form schema"
    );
    let same = judge(&merge(json!({"seats": 1}))).unwrap();
    assert!(same.edited, "an edit that changes nothing is still an edit");
    let plain = judge(&reply("a:result", json!([]))).unwrap();
    assert_eq!((plain.result, plain.edited), (user.clone(), false));
    assert!(judge_result(
        schemas(),
        &forms,
        &msg,
        &user,
        Err("no reply"),
        schema.as_ref()
    )
    .is_err());
    assert!(judge(
        &json!({"jsonrpc": "2.0", "id": "a:result", "error": {"code": -32602, "message": "x"}})
    )
    .is_err());
    assert_eq!(no_effect_reply(&json!("q")), reply("q", json!([])));
}

// ------------------------------------------------------------------ the set

fn sha256_hex(data: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, data)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The upload listener, simulated: refs allocated per distinct bytes.
#[derive(Default)]
struct Store {
    refs: HashMap<String, String>, // sha256 -> ref
}

impl Store {
    fn upload(&mut self, step: &Value) -> (u16, Option<String>) {
        let data = base64::engine::general_purpose::STANDARD
            .decode(step["bodyBase64"].as_str().unwrap())
            .unwrap();
        if step["credential"] != "upload" {
            return (401, None);
        }
        let actual = sha256_hex(&data);
        if step
            .get("sha256")
            .is_some_and(|d| d.as_str() != Some(actual.as_str()))
        {
            return (400, None);
        }
        let n = self.refs.len() + 1;
        let r = self
            .refs
            .entry(actual)
            .or_insert_with(|| format!("urn:uuid:00000000-0000-4000-8000-{n:012}"))
            .clone();
        (201, Some(r))
    }

    fn has(&self, r: &str) -> bool {
        self.refs.values().any(|v| v == r)
    }
}

/// The server's answer to one message: `(status, answer)` over HTTP.
fn serve(
    receiver: &Receiver,
    store: &Store,
    responses: &HashMap<String, Value>,
    msg: &Value,
    receipts: &mut Vec<Value>,
) -> (u16, Value) {
    match receiver.accept_then(
        schemas(),
        msg,
        |r| store.has(r),
        |a| receipts.push(json!({"eventId": a.event_id, "summary": a.summary})),
    ) {
        Err(refusal) => (refusal.status, refusal.answer(msg)),
        Ok(a) => (
            200,
            responses
                .get(&a.event_id)
                .cloned()
                .unwrap_or_else(|| no_effect_reply(&msg["id"])),
        ),
    }
}

fn wire_row(
    row: &Value,
    receiver: &Receiver,
    store: &mut Store,
    receipts: &mut Vec<Value>,
) -> Result<(), String> {
    let mut aliases: HashMap<String, String> = HashMap::new();
    let mut outcomes = Vec::new();
    for step in row["steps"].as_array().ok_or("no steps")? {
        match step["op"].as_str() {
            Some("upload") => {
                let (status, r) = store.upload(step);
                if let Some(r) = r {
                    aliases.insert(step["alias"].as_str().unwrap().to_string(), r);
                }
                outcomes.push(json!({"op": "upload", "status": status}));
            }
            Some("send") => {
                let mut msg = step["message"].clone();
                if let Some(items) = msg.pointer("/params/event/items").cloned() {
                    msg["params"]["event"]["items"] = rebind_refs(&items, &aliases);
                }
                let (status, answer) = serve(receiver, store, &HashMap::new(), &msg, receipts);
                if status == 200 && !equal(&answer, &no_effect_reply(&msg["id"])) {
                    return Err(format!(
                        "an accepted send's answer {}",
                        json::encode(&answer)
                    ));
                }
                if status != 200 && answer["error"]["code"] != json!(INVALID_PARAMS) {
                    return Err(format!(
                        "a refusal without -32602: {}",
                        json::encode(&answer)
                    ));
                }
                let outcome = if status == 200 {
                    "accepted"
                } else {
                    "rejected"
                };
                outcomes.push(json!({"op": "send", "outcome": outcome, "status": status}));
            }
            other => return Err(format!("unknown op {other:?}")),
        }
    }
    if !equal(&json!(outcomes), &row["expected"]["steps"]) {
        return Err(format!(
            "steps {} (expected {})",
            json::encode(&json!(outcomes)),
            json::encode(&row["expected"]["steps"])
        ));
    }
    Ok(())
}

fn atomic_row(
    row: &Value,
    receiver: &Receiver,
    store: &Store,
    receipts: &mut Vec<Value>,
) -> Result<(), String> {
    let id = row["id"].as_str().unwrap();
    let atomic = &row["atomic"];
    let responses: HashMap<String, Value> = row["responses"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    let forms = FormSchemas::new();
    let request = atomic["request"].clone();
    if let Some(p) = schemas().check(INTERCEPT_REQUEST, &request) {
        return Err(format!("atomic.request: {p}"));
    }
    let mut actual =
        json!({"request": "rejected", "result": "not-sent", "published": null, "provenance": null});
    let (_, answer) = serve(receiver, store, &responses, &request, receipts);
    let verdict = judge_request(schemas(), &forms, &request, Ok(&answer));
    actual["request"] = json!(verdict.as_str());
    if let RequestVerdict::Allowed(returned) = verdict {
        let (effective, mut provenance) = match returned {
            Some(r) => (r, "hook"),
            None => (atomic["userResult"].clone(), "user"),
        };
        let event = &request["params"]["event"];
        let msg = result_request(
            event,
            &effective,
            &format!("{id}:result"),
            &format!("{id}:result-body"),
            &atomic["resultCapabilities"],
        );
        if let Some(p) = schemas().check(INTERCEPT_REQUEST, &msg) {
            return Err(format!("the result request: {p}"));
        }
        let (_, answer) = serve(receiver, store, &responses, &msg, receipts);
        match judge_result(
            schemas(),
            &forms,
            &msg,
            &effective,
            Ok(&answer),
            request_form_schema(&request).as_ref(),
        ) {
            Err(_) => actual["result"] = json!("rejected"),
            Ok(p) => {
                if p.edited {
                    provenance = "hook";
                }
                actual["result"] = json!("accepted");
                actual["published"] = p.result;
                actual["provenance"] = json!(provenance);
            }
        }
    }
    if !equal(&actual, &row["expected"]["actual"]) {
        return Err(format!(
            "actual {} (expected {})",
            json::encode(&actual),
            json::encode(&row["expected"]["actual"])
        ));
    }
    Ok(())
}

#[test]
fn every_row_of_our_elicitation_set_with_one_receiver() {
    let file = load("scenarios/elicitation.json");
    let source = file["authenticatedSource"].as_str().unwrap();
    let receiver = Receiver::new(source);
    let mut store = Store::default();
    let all = file["scenarios"].as_array().unwrap();
    let mut problems = Vec::new();
    let (mut wire, mut atomic) = (0, 0);
    for row in all {
        let mut receipts = Vec::new();
        let run = if row.get("atomic").is_some() {
            atomic += 1;
            atomic_row(row, &receiver, &store, &mut receipts)
        } else {
            wire += 1;
            wire_row(row, &receiver, &mut store, &mut receipts)
        };
        let run = run.and_then(|()| {
            if equal(&json!(receipts), &row["expected"]["receipts"]) {
                Ok(())
            } else {
                Err(format!(
                    "receipts {} (expected {})",
                    json::encode(&json!(receipts)),
                    json::encode(&row["expected"]["receipts"])
                ))
            }
        });
        if let Err(e) = run {
            problems.push(format!("{}: {e}", row["id"]));
        }
    }
    report("scenarios/elicitation.json", all.len(), &problems);
    assert!(
        all.len() >= 123 && wire >= 90 && atomic >= 33,
        "{} rows: {wire} wire, {atomic} atomic",
        all.len()
    );
    assert!(receiver.forms().len() >= 2);
}
