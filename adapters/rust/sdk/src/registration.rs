//! Registration documents (docs/CATALOGUE.md, "Registration" and "Readings
//! settled"): whether a host-side SDK could enforce one, against a
//! discovered manifest, the caller's requirements (`[{event, mode, effects?,
//! modify?}]`) and its context (`{interactive, environment}`). The rules run
//! in [`RULES`] order, each over the whole document (every backend, every
//! subscription, every requirement) before the next; the first that fails
//! rejects the document and is named. No I/O.

use crate::json::{self, path};
use crate::schemas::{Schemas, REGISTRATION};
use serde_json::{json, Map, Value};
use std::cmp::Ordering;

pub const RULE_SCHEMA: &str = "schema";
pub const RULE_DUPLICATE_BACKEND: &str = "duplicate-backend";
pub const RULE_TRANSPORT: &str = "transport";
pub const RULE_AUTHENTICATION: &str = "authentication";
pub const RULE_CREDENTIAL: &str = "credential";
pub const RULE_EVENT: &str = "event";
pub const RULE_SCOPE: &str = "scope";
pub const RULE_TIMEOUT: &str = "timeout";
pub const RULE_REQUIREMENT: &str = "requirement";
pub const RULE_INTERACTIVE: &str = "interactive";

/// The rules, in the order they are checked.
pub const RULES: [&str; 10] = [
    RULE_SCHEMA,
    RULE_DUPLICATE_BACKEND,
    RULE_TRANSPORT,
    RULE_AUTHENTICATION,
    RULE_CREDENTIAL,
    RULE_EVENT,
    RULE_SCOPE,
    RULE_TIMEOUT,
    RULE_REQUIREMENT,
    RULE_INTERACTIVE,
];

/// Accepted, or the first rule that fails and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistrationVerdict {
    Accepted,
    Rejected { rule: &'static str, reason: String },
}

impl RegistrationVerdict {
    pub fn accepted(&self) -> bool {
        matches!(self, RegistrationVerdict::Accepted)
    }

    /// The failing rule (one of [`RULES`]) of a rejection.
    pub fn rule(&self) -> Option<&'static str> {
        match self {
            RegistrationVerdict::Rejected { rule, .. } => Some(rule),
            RegistrationVerdict::Accepted => None,
        }
    }

    /// The report's form: `{"accepted": true}` or `{"accepted": false, "rule"}`.
    pub fn entry(&self) -> Value {
        match self {
            RegistrationVerdict::Accepted => json!({"accepted": true}),
            RegistrationVerdict::Rejected { rule, .. } => json!({"accepted": false, "rule": rule}),
        }
    }
}

/// `"*"` or `"family.*"`.
pub fn is_wildcard(pattern: &Value) -> bool {
    matches!(pattern, Value::String(s) if s == "*" || s.ends_with(".*"))
}

/// A subscription's event pattern names `event_type` exactly, by `"*"`
/// (every type), or by `"family.*"` (the types starting with `"family."`).
pub fn pattern_matches(pattern: &Value, event_type: &Value) -> bool {
    let (Value::String(p), Value::String(e)) = (pattern, event_type) else {
        return false;
    };
    if p == "*" {
        return true;
    }
    match p.strip_suffix('*') {
        Some(prefix) if p.ends_with(".*") => e.starts_with(prefix),
        _ => p == e,
    }
}

fn array(v: Option<&Value>) -> &[Value] {
    match v {
        Some(Value::Array(a)) => a,
        _ => &[],
    }
}

fn member(list: &[Value], v: Option<&Value>) -> bool {
    v.is_some_and(|v| list.iter().any(|item| json::equal(item, v)))
}

fn shown(v: Option<&Value>) -> String {
    v.map(json::encode).unwrap_or_else(|| "none".into())
}

/// What the rules read of a discovery manifest.
struct Offered<'a> {
    /// entries with a string `event`
    events: Vec<&'a Map<String, Value>>,
    transports: &'a [Value],
    authentication: &'a [Value],
    scopes: &'a [Value],
    /// `managedPolicy.disableable` is true: the harness lets its user disable
    /// hooks, so it cannot enforce a subscription that must not be disabled.
    disableable: bool,
    /// None: not stated (a limit that is not a number), not checked
    min_timeout: Option<&'a serde_json::Number>,
    max_timeout: Option<&'a serde_json::Number>,
}

impl<'a> Offered<'a> {
    fn read(manifest: &'a Value) -> Offered<'a> {
        let number = |k: &str| match path(manifest, &["limits", k]) {
            Some(Value::Number(n)) => Some(n),
            _ => None,
        };
        Offered {
            events: array(manifest.get("events"))
                .iter()
                .filter_map(Value::as_object)
                .filter(|e| e.get("event").is_some_and(Value::is_string))
                .collect(),
            transports: array(manifest.get("transports")),
            authentication: array(manifest.get("authentication")),
            scopes: array(path(manifest, &["managedPolicy", "scopes"])),
            disableable: path(manifest, &["managedPolicy", "disableable"])
                == Some(&Value::Bool(true)),
            min_timeout: number("minTimeoutMs"),
            max_timeout: number("maxTimeoutMs"),
        }
    }

    /// The entry for `event_type` listing `mode` among its modes.
    fn entry(
        &self,
        event_type: Option<&Value>,
        mode: Option<&Value>,
    ) -> Option<&'a Map<String, Value>> {
        let event_type = event_type?;
        self.events.iter().copied().find(|e| {
            e.get("event").is_some_and(|t| json::equal(t, event_type))
                && member(array(e.get("modes")), mode)
        })
    }

    /// Some listed event with `mode` is named by `pattern` (a wildcard must
    /// match at least one; anything else is an exact type).
    fn offers(&self, pattern: &Value, mode: Option<&Value>) -> bool {
        if !is_wildcard(pattern) {
            return self.entry(Some(pattern), mode).is_some();
        }
        self.events.iter().any(|e| {
            e.get("event").is_some_and(|t| pattern_matches(pattern, t))
                && member(array(e.get("modes")), mode)
        })
    }
}

/// The document's backends and subscriptions (objects only).
struct Document<'a> {
    backends: Vec<&'a Map<String, Value>>,
    subscriptions: Vec<&'a Map<String, Value>>,
}

impl<'a> Document<'a> {
    fn read(document: &'a Map<String, Value>) -> Document<'a> {
        let backends: Vec<_> = array(document.get("hooks"))
            .iter()
            .filter_map(Value::as_object)
            .collect();
        let subscriptions = backends
            .iter()
            .flat_map(|b| {
                array(b.get("subscriptions"))
                    .iter()
                    .filter_map(Value::as_object)
            })
            .collect();
        Document {
            backends,
            subscriptions,
        }
    }

    fn duplicate_backend(&self) -> Option<String> {
        let mut seen = Vec::new();
        for b in &self.backends {
            let id = shown(b.get("id"));
            if seen.contains(&id) {
                return Some(format!("two backends share the id {id}"));
            }
            seen.push(id);
        }
        None
    }

    fn transport(&self, o: &Offered) -> Option<String> {
        self.backends.iter().find_map(|b| {
            let kind = path_in(b, &["transport", "type"]);
            (!member(o.transports, kind)).then(|| {
                format!(
                    "backend {}: transport {} is not offered",
                    shown(b.get("id")),
                    shown(kind)
                )
            })
        })
    }

    fn authentication(&self, o: &Offered) -> Option<String> {
        self.backends.iter().find_map(|b| {
            let auth = b.get("authentication")?;
            let kind = auth.get("type");
            (!member(o.authentication, kind)).then(|| {
                format!(
                    "backend {}: authentication {} is not offered",
                    shown(b.get("id")),
                    shown(kind)
                )
            })
        })
    }

    fn credential(&self, context: &Map<String, Value>) -> Option<String> {
        let environment = context.get("environment").and_then(Value::as_object);
        self.backends.iter().find_map(|b| {
            let auth = b.get("authentication")?.as_object()?;
            if auth.get("type").and_then(Value::as_str) != Some("bearer") {
                return None;
            }
            if auth.contains_key("tokenRef") {
                return Some(format!(
                    "backend {}: tokenRef has no reference store here",
                    shown(b.get("id"))
                ));
            }
            let value = match auth.get("tokenEnv") {
                Some(Value::String(name)) => environment.and_then(|e| e.get(name)),
                _ => None,
            };
            match value {
                Some(Value::String(v)) if !v.is_empty() => None,
                _ => Some(format!(
                    "backend {}: tokenEnv {} has no non-empty string value in the environment",
                    shown(b.get("id")),
                    shown(auth.get("tokenEnv"))
                )),
            }
        })
    }

    fn event(&self, o: &Offered) -> Option<String> {
        self.subscriptions.iter().find_map(|s| {
            let mode = s.get("mode");
            array(s.get("events")).iter().find_map(|pattern| {
                (!o.offers(pattern, mode)).then(|| {
                    format!(
                        "{} is not offered with mode {}",
                        json::encode(pattern),
                        shown(mode)
                    )
                })
            })
        })
    }

    fn scope(&self, o: &Offered) -> Option<String> {
        self.subscriptions.iter().find_map(|s| {
            if let Some(scope) = s.get("scope") {
                if !member(o.scopes, Some(scope)) {
                    return Some(format!("scope {} is not offered", json::encode(scope)));
                }
            }
            (s.get("disableable") == Some(&Value::Bool(false)) && o.disableable).then(|| {
                "disableable false cannot be enforced: managedPolicy.disableable is true".into()
            })
        })
    }

    fn timeout(&self, o: &Offered) -> Option<String> {
        self.subscriptions.iter().find_map(|s| {
            if s.get("mode").and_then(Value::as_str) != Some("intercept") {
                return None;
            }
            let Some(Value::Number(t)) = s.get("timeoutMs") else {
                return None;
            };
            if let Some(min) = o.min_timeout {
                if json::number_cmp(t, min) == Some(Ordering::Less) {
                    return Some(format!("timeoutMs {t} is below minTimeoutMs {min}"));
                }
            }
            if let Some(max) = o.max_timeout {
                if json::number_cmp(t, max) == Some(Ordering::Greater) {
                    return Some(format!("timeoutMs {t} is above maxTimeoutMs {max}"));
                }
            }
            None
        })
    }

    /// A subscription with `mode` names `event_type` (exactly or by wildcard).
    fn covered(&self, event_type: Option<&Value>, mode: Option<&Value>) -> bool {
        let (Some(event_type), Some(mode)) = (event_type, mode) else {
            return false;
        };
        self.subscriptions.iter().any(|s| {
            s.get("mode").is_some_and(|m| json::equal(m, mode))
                && array(s.get("events"))
                    .iter()
                    .any(|p| pattern_matches(p, event_type))
        })
    }

    fn requirement(&self, o: &Offered, requirements: &[Value]) -> Option<String> {
        requirements
            .iter()
            .enumerate()
            .find_map(|(i, r)| self.one_requirement(o, &format!("requirements[{i}]"), r))
    }

    fn one_requirement(&self, o: &Offered, at: &str, requirement: &Value) -> Option<String> {
        let Value::Object(req) = requirement else {
            return Some(format!("{at} is not an object"));
        };
        let (event, mode) = (req.get("event"), req.get("mode"));
        let Some(effects) = required_effects(req) else {
            return Some(format!("{at}: effects is not a list"));
        };
        if !self.covered(event, mode) {
            return Some(format!(
                "{at}: no subscription with mode {} matches {}",
                shown(mode),
                shown(event)
            ));
        }
        let Some(entry) = o.entry(event, mode) else {
            return Some(format!(
                "{at}: the manifest does not list {} with mode {}",
                shown(event),
                shown(mode)
            ));
        };
        match mode.and_then(Value::as_str) {
            Some("observe") => {
                return (!effects.is_empty())
                    .then(|| format!("{at}: an observer enforces no effect"));
            }
            Some("intercept") => {}
            _ => return Some(format!("{at}: mode {}", shown(mode))),
        }
        let capabilities = entry.get("capabilities");
        let offered_effects = array(capabilities.and_then(|c| c.get("effects")));
        if let Some(effect) = effects.iter().find(|e| !member(offered_effects, Some(e))) {
            return Some(format!(
                "{at}: effect {} is not offered at {}",
                json::encode(effect),
                shown(event)
            ));
        }
        let wanted = req.get("modify")?; // no modify block: nothing more to cover
        let Value::Object(targets) = wanted else {
            return Some(format!("{at}: modify is not an object"));
        };
        let offered_targets = capabilities.and_then(|c| c.get("modify"));
        for (target, operations) in targets {
            let Some(offered_ops) = offered_targets.and_then(|t| t.get(target)) else {
                return Some(format!(
                    "{at}: modify target {} is not offered at {}",
                    json::encode(&Value::String(target.clone())),
                    shown(event)
                ));
            };
            let Value::Object(ops) = operations else {
                return Some(format!("{at}: modify.{target} is not an object"));
            };
            for (op, set) in ops {
                if set == &Value::Bool(true) && offered_ops.get(op) != Some(&Value::Bool(true)) {
                    return Some(format!(
                        "{at}: modify.{target}.{op} is not offered at {}",
                        shown(event)
                    ));
                }
            }
        }
        None
    }
}

fn path_in<'a>(obj: &'a Map<String, Value>, keys: &[&str]) -> Option<&'a Value> {
    let (first, rest) = keys.split_first()?;
    path(obj.get(*first)?, rest)
}

/// A requirement's `effects` (none when absent), or None when it is present
/// and not a list (not covered: the `requirement` rule).
fn required_effects(req: &Map<String, Value>) -> Option<&[Value]> {
    match req.get("effects") {
        None => Some(&[]),
        Some(Value::Array(list)) => Some(list),
        Some(_) => None,
    }
}

fn interactive(requirements: &[Value], context: &Map<String, Value>) -> Option<String> {
    if context.get("interactive") == Some(&Value::Bool(true)) {
        return None;
    }
    requirements.iter().enumerate().find_map(|(i, r)| {
        let asks = r
            .as_object()
            .and_then(required_effects)
            .is_some_and(|effects| effects.iter().any(|e| e.as_str() == Some("ask")));
        asks.then(|| format!("requirements[{i}] needs ask, and the context is not interactive"))
    })
}

/// The verdict on `document` against `manifest`, `requirements` and
/// `context`; the `schema` rule is the canonical `registration` schema.
pub fn evaluate(
    schemas: &Schemas,
    document: &Value,
    manifest: &Value,
    requirements: &[Value],
    context: &Map<String, Value>,
) -> RegistrationVerdict {
    evaluate_with(document, manifest, requirements, context, |d| {
        schemas.check(REGISTRATION, d)
    })
}

/// [`evaluate`] with the caller's schema check (None: valid).
pub fn evaluate_with(
    document: &Value,
    manifest: &Value,
    requirements: &[Value],
    context: &Map<String, Value>,
    schema_problem: impl Fn(&Value) -> Option<String>,
) -> RegistrationVerdict {
    let problem = schema_problem(document);
    let doc = match (problem, document) {
        (Some(problem), _) => {
            return RegistrationVerdict::Rejected {
                rule: RULE_SCHEMA,
                reason: problem,
            }
        }
        (None, Value::Object(doc)) => doc,
        (None, _) => {
            return RegistrationVerdict::Rejected {
                rule: RULE_SCHEMA,
                reason: "the document is not an object".into(),
            }
        }
    };
    let d = Document::read(doc);
    let o = Offered::read(manifest);
    let checks: [(&'static str, &dyn Fn() -> Option<String>); 9] = [
        (RULE_DUPLICATE_BACKEND, &|| d.duplicate_backend()),
        (RULE_TRANSPORT, &|| d.transport(&o)),
        (RULE_AUTHENTICATION, &|| d.authentication(&o)),
        (RULE_CREDENTIAL, &|| d.credential(context)),
        (RULE_EVENT, &|| d.event(&o)),
        (RULE_SCOPE, &|| d.scope(&o)),
        (RULE_TIMEOUT, &|| d.timeout(&o)),
        (RULE_REQUIREMENT, &|| d.requirement(&o, requirements)),
        (RULE_INTERACTIVE, &|| interactive(requirements, context)),
    ];
    for (rule, check) in checks {
        if let Some(reason) = check() {
            return RegistrationVerdict::Rejected { rule, reason };
        }
    }
    RegistrationVerdict::Accepted
}
