//! Registration documents (docs/CATALOGUE.md, "Registration"): a case per
//! rule (and per reading settled) against the catalogue manifest, and the
//! catalogue manifest itself against the schemas and the harness's copy.

mod common;

use ahp_sdk::json::{self, equal};
use ahp_sdk::manifest::{catalogue_discovery_result, catalogue_manifest, CATALOGUE_EVENT_TYPES};
use ahp_sdk::registration::*;
use ahp_sdk::schemas::CAPABILITIES_RESPONSE;
use common::{load, schemas, text};
use serde_json::{json, Map, Value};

/// One http backend with bearer authentication, an interceptor of
/// tool.before and an observer of turn.*.
const BASE: &str = r#"{"protocolVersion": "draft", "hooks": [{"id": "com.example.one",
    "transport": {"type": "http", "url": "https://policy.example.invalid/hooks"},
    "authentication": {"type": "bearer", "tokenEnv": "HOOK_TOKEN"},
    "subscriptions": [
        {"events": ["tool.before"], "mode": "intercept", "timeoutMs": 5000, "failurePolicy": "fail-closed",
         "content": {"default": "metadata"}},
        {"events": ["turn.*"], "mode": "observe", "content": {"default": "metadata"}}]}]}"#;

const INTERACTIVE: &str = r#"{"interactive": true, "environment": {"HOOK_TOKEN": "secret"}}"#;

struct Case {
    what: &'static str,
    edit: fn(&mut Value),
    requirements: &'static str,
    context: &'static str,
    rule: Option<&'static str>,
}

fn none(_: &mut Value) {}

fn case(what: &'static str, edit: fn(&mut Value), rule: Option<&'static str>) -> Case {
    Case {
        what,
        edit,
        requirements: "[]",
        context: INTERACTIVE,
        rule,
    }
}

fn needs(what: &'static str, requirements: &'static str, rule: Option<&'static str>) -> Case {
    Case {
        what,
        edit: none,
        requirements,
        context: INTERACTIVE,
        rule,
    }
}

fn sub(d: &mut Value, i: usize) -> &mut Value {
    &mut d["hooks"][0]["subscriptions"][i]
}

fn run(manifest: &Value, cases: Vec<Case>) {
    for c in cases {
        let mut doc = text(BASE);
        (c.edit)(&mut doc);
        let reqs = text(c.requirements);
        let ctx = text(c.context);
        let v = evaluate(
            schemas(),
            &doc,
            manifest,
            reqs.as_array().unwrap(),
            ctx.as_object().unwrap(),
        );
        assert_eq!(v.rule(), c.rule, "{}: {v:?}", c.what);
    }
}

fn stdio(d: &mut Value) {
    d["hooks"][0]["transport"] =
        json!({"type": "stdio", "command": "hook", "lifecycle": "persistent"});
    d["hooks"][0]
        .as_object_mut()
        .unwrap()
        .remove("authentication");
}

#[test]
fn each_rule_in_order() {
    use ahp_sdk::registration::{
        RULE_AUTHENTICATION as AUTH, RULE_CREDENTIAL as CRED, RULE_DUPLICATE_BACKEND as DUP,
        RULE_EVENT as EVENT, RULE_INTERACTIVE as INTER, RULE_REQUIREMENT as REQ,
        RULE_SCHEMA as SCHEMA, RULE_SCOPE as SCOPE, RULE_TIMEOUT as TIMEOUT,
        RULE_TRANSPORT as TRANSPORT,
    };
    let m = catalogue_manifest();
    run(
        &m,
        vec![
            case("the base document", none, None),
            case(
                "no failurePolicy",
                |d| {
                    sub(d, 0).as_object_mut().unwrap().remove("failurePolicy");
                },
                Some(SCHEMA),
            ),
            case(
                "an observer with a timeout",
                |d| sub(d, 1)["timeoutMs"] = json!(100),
                Some(SCHEMA),
            ),
            case(
                "mtls",
                |d| d["hooks"][0]["authentication"] = json!({"type": "mtls"}),
                Some(SCHEMA),
            ),
            case(
                "a managed scope that can be disabled",
                |d| sub(d, 0)["scope"] = json!("managed"),
                Some(SCHEMA),
            ),
            case(
                "an observe-only event intercepted",
                |d| sub(d, 0)["events"] = json!(["turn.end"]),
                Some(SCHEMA),
            ),
            case(
                "an event M only observes intercepted",
                |d| sub(d, 0)["events"] = json!(["session.start"]),
                Some(EVENT),
            ),
            case(
                "two backends with one id",
                |d| {
                    let mut second = d["hooks"][0].clone();
                    second["transport"] =
                        json!({"type": "stdio", "command": "hook", "lifecycle": "persistent"});
                    second.as_object_mut().unwrap().remove("authentication");
                    d["hooks"].as_array_mut().unwrap().push(second);
                },
                Some(DUP),
            ),
            case("a stdio backend", stdio, Some(TRANSPORT)),
            case(
                "oauth",
                |d| {
                    d["hooks"][0]["authentication"] = json!({"type": "oauth", "resource": "https://r.example",
            "issuer": "https://i.example", "clientId": "c", "flow": "client_credentials"})
                },
                Some(AUTH),
            ),
            case(
                "no authentication at all",
                |d| {
                    d["hooks"][0]
                        .as_object_mut()
                        .unwrap()
                        .remove("authentication");
                },
                None,
            ),
            Case {
                context: r#"{"interactive": true, "environment": {}}"#,
                ..case("a token variable not set", none, Some(CRED))
            },
            Case {
                context: r#"{"interactive": true, "environment": {"HOOK_TOKEN": ""}}"#,
                ..case("an empty token", none, Some(CRED))
            },
            Case {
                context: r#"{"interactive": true, "environment": {"HOOK_TOKEN": 7}}"#,
                ..case("a token that is no string", none, Some(CRED))
            },
            Case {
                context: r#"{"interactive": true, "environment": {"hook_token": "x"}}"#,
                ..case("another case of the name", none, Some(CRED))
            },
            Case {
                context: r#"{"interactive": true}"#,
                ..case("no environment", none, Some(CRED))
            },
            case(
                "a token reference",
                |d| {
                    d["hooks"][0]["authentication"] =
                        json!({"type": "bearer", "tokenRef": "vault:x"})
                },
                Some(CRED),
            ),
            case(
                "a wildcard matching nothing",
                |d| sub(d, 1)["events"] = json!(["nothing.*"]),
                Some(EVENT),
            ),
            case(
                "every event observed",
                |d| sub(d, 1)["events"] = json!(["*"]),
                None,
            ),
            case(
                "hook.failure observed",
                |d| sub(d, 1)["events"] = json!(["turn.end", "hook.failure"]),
                Some(EVENT),
            ),
            case(
                "an intercept wildcard",
                |d| sub(d, 0)["events"] = json!(["tool.*"]),
                None,
            ),
            case(
                "an intercept wildcard of observers only",
                |d| sub(d, 0)["events"] = json!(["model.*"]),
                Some(EVENT),
            ),
            case(
                "a project scope",
                |d| sub(d, 0)["scope"] = json!("project"),
                None,
            ),
            case(
                "a managed scope",
                |d| {
                    sub(d, 0)["scope"] = json!("managed");
                    sub(d, 0)["disableable"] = json!(false);
                },
                Some(SCOPE),
            ),
            // M.managedPolicy.disableable is true: it cannot enforce a subscription
            // that must not be disabled, whatever its scope.
            case(
                "a user scope that must not be disabled",
                |d| {
                    sub(d, 1)["scope"] = json!("user");
                    sub(d, 1)["disableable"] = json!(false);
                },
                Some(SCOPE),
            ),
            case(
                "no scope, must not be disabled",
                |d| sub(d, 0)["disableable"] = json!(false),
                Some(SCOPE),
            ),
            case(
                "a user scope that may be disabled",
                |d| {
                    sub(d, 0)["scope"] = json!("user");
                    sub(d, 0)["disableable"] = json!(true);
                },
                None,
            ),
            case(
                "the minimum timeout",
                |d| sub(d, 0)["timeoutMs"] = json!(100),
                None,
            ),
            case(
                "below the minimum",
                |d| sub(d, 0)["timeoutMs"] = json!(99),
                Some(TIMEOUT),
            ),
            case(
                "the maximum timeout",
                |d| sub(d, 0)["timeoutMs"] = json!(30000),
                None,
            ),
            case(
                "above the maximum",
                |d| sub(d, 0)["timeoutMs"] = json!(30001),
                Some(TIMEOUT),
            ),
            needs(
                "a covered intercept requirement",
                r#"[{"event": "tool.before", "mode": "intercept", "effects": ["deny", "ask"], "modify": {"input": {"replace": true, "merge": true}}}]"#,
                None,
            ),
            needs(
                "modify without modify in effects",
                r#"[{"event": "tool.before", "mode": "intercept", "modify": {"input": {"merge": true}}}]"#,
                None,
            ),
            Case {
                edit: |d| sub(d, 0)["events"] = json!(["tool.*"]),
                ..needs(
                    "an operation not set true needs nothing",
                    r#"[{"event": "tool.after", "mode": "intercept", "effects": [], "modify": {"output": {"merge": false}}}]"#,
                    None,
                )
            },
            Case {
                edit: |d| sub(d, 0)["events"] = json!(["tool.*"]),
                ..needs(
                    "merge at tool.after",
                    r#"[{"event": "tool.after", "mode": "intercept", "modify": {"output": {"merge": true}}}]"#,
                    Some(REQ),
                )
            },
            needs(
                "a modify target not offered",
                r#"[{"event": "tool.before", "mode": "intercept", "modify": {"output": {"replace": true}}}]"#,
                Some(REQ),
            ),
            needs(
                "a modify target that is no object",
                r#"[{"event": "tool.before", "mode": "intercept", "modify": {"input": true}}]"#,
                Some(REQ),
            ),
            needs(
                "a modify block that is no object",
                r#"[{"event": "tool.before", "mode": "intercept", "modify": []}]"#,
                Some(REQ),
            ),
            needs(
                "an effect not offered",
                r#"[{"event": "tool.before", "mode": "intercept", "effects": ["inject"]}]"#,
                Some(REQ),
            ),
            needs(
                "effects that are not a list",
                r#"[{"event": "tool.before", "mode": "intercept", "effects": "deny"}]"#,
                Some(REQ),
            ),
            needs(
                "effects null",
                r#"[{"event": "tool.before", "mode": "intercept", "effects": null}]"#,
                Some(REQ),
            ),
            needs(
                "no subscription for it",
                r#"[{"event": "tool.after", "mode": "intercept", "effects": []}]"#,
                Some(REQ),
            ),
            needs(
                "an observer requirement by wildcard",
                r#"[{"event": "turn.end", "mode": "observe", "effects": []}]"#,
                None,
            ),
            needs(
                "an observer requirement with effects",
                r#"[{"event": "turn.end", "mode": "observe", "effects": ["deny"]}]"#,
                Some(REQ),
            ),
            needs(
                "an intercept requirement of an observer",
                r#"[{"event": "turn.end", "mode": "intercept"}]"#,
                Some(REQ),
            ),
            needs(
                "a wildcard requirement",
                r#"[{"event": "turn.*", "mode": "observe"}]"#,
                Some(REQ),
            ),
            needs("a requirement that is no object", r#"[7]"#, Some(REQ)),
            needs(
                "an unknown mode",
                r#"[{"event": "turn.end", "mode": "tap"}]"#,
                Some(REQ),
            ),
            Case {
                context: r#"{"interactive": false, "environment": {"HOOK_TOKEN": "secret"}}"#,
                ..needs(
                    "ask, not interactive",
                    r#"[{"event": "tool.before", "mode": "intercept", "effects": ["ask"]}]"#,
                    Some(INTER),
                )
            },
            Case {
                context: r#"{"interactive": 1, "environment": {"HOOK_TOKEN": "secret"}}"#,
                ..needs(
                    "ask, interactive not true",
                    r#"[{"event": "tool.before", "mode": "intercept", "effects": ["ask"]}]"#,
                    Some(INTER),
                )
            },
            Case {
                context: r#"{"interactive": false, "environment": {"HOOK_TOKEN": "secret"}}"#,
                ..needs(
                    "no ask, not interactive",
                    r#"[{"event": "tool.before", "mode": "intercept", "effects": ["deny"]}]"#,
                    None,
                )
            },
            Case {
                context: r#"{"interactive": false, "environment": {}}"#,
                ..needs(
                    "the first failing rule wins",
                    r#"[{"event": "tool.before", "mode": "intercept", "effects": ["ask", "inject"]}]"#,
                    Some(CRED),
                )
            },
            Case {
                context: r#"{"interactive": false, "environment": {"HOOK_TOKEN": "secret"}}"#,
                ..needs(
                    "each rule over every requirement before the next",
                    r#"[{"event": "tool.before", "mode": "intercept", "effects": ["ask"]}, {"event": "tool.after", "mode": "intercept"}]"#,
                    Some(REQ),
                )
            },
            Case {
                edit: |d| {
                    stdio(d);
                    sub(d, 0)["events"] = json!(["session.start"]);
                },
                ..case(
                    "each rule over every backend before the next",
                    none,
                    Some(TRANSPORT),
                )
            },
        ],
    );
}

#[test]
fn other_manifests() {
    let mut m = catalogue_manifest();
    m.as_object_mut().unwrap().remove("limits");
    run(
        &m,
        vec![case(
            "no limits stated",
            |d| sub(d, 0)["timeoutMs"] = json!(1),
            None,
        )],
    );
    let mut m = catalogue_manifest();
    m["managedPolicy"] = json!({"scopes": ["user", "project"], "disableable": false});
    run(
        &m,
        vec![case(
            "must not be disabled, and M enforces it",
            |d| {
                sub(d, 0)["scope"] = json!("project");
                sub(d, 0)["disableable"] = json!(false);
            },
            None,
        )],
    );
    let mut m = catalogue_manifest();
    m["limits"] = json!({"minTimeoutMs": 100.5});
    run(
        &m,
        vec![
            case(
                "a fractional limit, below",
                |d| sub(d, 0)["timeoutMs"] = json!(100),
                Some(RULE_TIMEOUT),
            ),
            case(
                "a fractional limit, above",
                |d| sub(d, 0)["timeoutMs"] = json!(101),
                None,
            ),
        ],
    );
    run(
        &Value::Null,
        vec![case(
            "no manifest offers nothing",
            none,
            Some(RULE_TRANSPORT),
        )],
    );
    let v = evaluate_with(
        &Value::Null,
        &catalogue_manifest(),
        &[],
        &Map::new(),
        |_| None,
    );
    assert_eq!(v.rule(), Some(RULE_SCHEMA), "a document that is no object");
    let v = evaluate_with(&text(BASE), &catalogue_manifest(), &[], &Map::new(), |_| {
        Some("no".into())
    });
    assert_eq!(
        v,
        RegistrationVerdict::Rejected {
            rule: RULE_SCHEMA,
            reason: "no".into()
        }
    );
    assert_eq!(
        RegistrationVerdict::Accepted.entry(),
        json!({"accepted": true})
    );
    assert_eq!(
        RegistrationVerdict::Rejected {
            rule: RULE_SCOPE,
            reason: "x".into()
        }
        .entry(),
        json!({"accepted": false, "rule": "scope"})
    );
    assert_eq!(RULES.len(), 10);
    assert_eq!(RULES[0], RULE_SCHEMA);
    assert_eq!(RULES[9], RULE_INTERACTIVE);
}

#[test]
fn wildcards() {
    let m = |p: &str, e: &str| pattern_matches(&json!(p), &json!(e));
    assert!(m("*", "tool.before") && m("tool.*", "tool.before") && m("tool.before", "tool.before"));
    assert!(!m("tool.*", "toolbox.x") && !m("tool.*", "tool") && !m("tool.before", "tool.after"));
    assert!(!pattern_matches(&json!(1), &json!("tool.before")));
    assert!(
        is_wildcard(&json!("*"))
            && is_wildcard(&json!("task.*"))
            && !is_wildcard(&json!("task.change.before"))
    );
}

#[test]
fn the_catalogue_manifest() {
    let common = load("schemas/draft/common.schema.json");
    let types: Vec<&str> = common["$defs"]["eventType"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(types.len(), CATALOGUE_EVENT_TYPES.len() + 1);
    assert_eq!(types.last(), Some(&"hook.failure"));
    assert_eq!(
        &types[..CATALOGUE_EVENT_TYPES.len()],
        &CATALOGUE_EVENT_TYPES[..]
    );
    let response =
        json!({"jsonrpc": "2.0", "id": "discovery", "result": catalogue_discovery_result()});
    assert_eq!(schemas().check(CAPABILITIES_RESPONSE, &response), None);
    // the harness's own copy (never read by the adapter)
    let harness = load("interop/suites/catalogue/manifest.json");
    assert!(
        equal(&catalogue_manifest(), &harness),
        "{}",
        json::encode(&catalogue_manifest())
    );
    let intercepted = catalogue_manifest()["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["modes"].as_array().unwrap().len() == 2)
        .count();
    assert_eq!(intercepted, 3);
}
