//! The step engine's step scenario (docs/LIFECYCLE.md, "Client: the
//! steps"): per request key a state (pending, staged, published, cancelled;
//! or failed, when its reply was rejected at acceptance), per slot the call
//! whose reply binds to it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use ahp_sdk::boundaries::{boundary_for, Boundary};
use ahp_sdk::chain::{observation, settled_event};
use ahp_sdk::engine::{apply_with, Options};
use ahp_sdk::json::encode;
use ahp_sdk::schemas::{INTERCEPT_REQUEST, INTERCEPT_RESPONSE, OBSERVE_NOTIFICATION};
use serde_json::{json, Map, Value};

use crate::channel::{Call, CallError};
use crate::config::Scenario;
use crate::suite_client::{failed, unsupported, RowError, SuiteClient};
use crate::suite_config::step_upload_route;
use crate::upload::base64_decode;
use crate::{log, path};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Pending,
    Staged,
    Published,
    Cancelled,
    /// its reply was rejected at acceptance: an operational failure
    Failed,
}

/// A reply as taken: parsed, or a line or body that was not strict JSON
/// (rejected when evaluated).
#[derive(Debug, Clone)]
pub enum Reply {
    Parsed(Value),
    Malformed(String),
}

/// The state keys of the core rules a published state carries.
const STATE_KEYS: &[&str] = &[
    "decision", "executed", "input", "messages", "flow", "result",
];

pub struct StepRun {
    sid: String,
    requests: Map<String, Value>,
    steps: Vec<Value>,
    state: HashMap<String, State>,
    staged: HashMap<String, Reply>,
    /// key -> the request as sent (body refs rebound)
    sent: HashMap<String, Value>,
    /// key -> the effective value published
    settled: HashMap<String, Value>,
    slots: HashMap<String, (String, Arc<Call>)>,
    published: Vec<Value>,
    cancelled: Vec<Value>,
    ignored: Vec<Value>,
    states: Map<String, Value>,
    observations: Vec<Value>,
    upload_statuses: Vec<Value>,
}

fn str_field<'a>(step: &'a Value, name: &str) -> Result<&'a str, RowError> {
    step.get(name).and_then(Value::as_str).ok_or_else(|| {
        failed(format!(
            "step {}: {name} must be a string",
            step.get("op").map(encode).unwrap_or_default()
        ))
    })
}

/// Waits for a call's reply: a malformed one is `Reply::Malformed`, no reply an error.
pub fn take(call: &Call, timeout: Duration, what: &str) -> Result<Reply, String> {
    match call.result(timeout) {
        Ok(v) => Ok(Reply::Parsed(v)),
        Err(CallError::Malformed(why)) => {
            log("client", &format!("{what}: {why}"));
            Ok(Reply::Malformed(why))
        }
        Err(CallError::Transport(why)) => Err(why),
    }
}

fn boundary_of(request: &Value) -> Option<&'static Boundary> {
    path(request, &["params", "event", "type"])
        .and_then(Value::as_str)
        .and_then(boundary_for)
}

impl StepRun {
    pub fn new(row: &Scenario) -> StepRun {
        StepRun {
            sid: row.id.clone(),
            requests: row
                .raw
                .get("requests")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            steps: row
                .raw
                .get("steps")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            state: HashMap::new(),
            staged: HashMap::new(),
            sent: HashMap::new(),
            settled: HashMap::new(),
            slots: HashMap::new(),
            published: vec![],
            cancelled: vec![],
            ignored: vec![],
            states: Map::new(),
            observations: vec![],
            upload_statuses: vec![],
        }
    }

    /// Runs every step in order; the row's `actual`.
    pub fn run(mut self, c: &mut SuiteClient) -> Result<Value, RowError> {
        let steps = std::mem::take(&mut self.steps);
        for (i, step) in steps.iter().enumerate() {
            let op = step.get("op").and_then(Value::as_str).unwrap_or("");
            let done = match op {
                "send" => self.send(c, step),
                "wait" => self.wait(c, step),
                "release" => self.release(c, step),
                "receive" => self.receive(c, step),
                "accept" => self.accept(c, step),
                "cancel" => self.cancel(c, step),
                "failOpen" => self.fail_open(c, step),
                "observe" => self.observe(c, step),
                "upload" => self.upload(c, step),
                "emit" => self.emit(c, step),
                other => Err(unsupported(format!(
                    "step op {} is not implemented by ahp-rust",
                    encode(&Value::String(other.into()))
                ))),
            };
            if let Err(RowError::Failed(why)) = done {
                return Err(failed(format!("steps[{i}] ({op}): {why}")));
            }
            done?;
        }
        Ok(json!({
            "published": self.published, "cancelled": self.cancelled, "ignored": self.ignored,
            "states": self.states, "observations": self.observations,
            "uploadStatuses": self.upload_statuses,
        }))
    }

    fn key(&self, step: &Value) -> Result<String, RowError> {
        match step.get("key").and_then(Value::as_str) {
            Some(k) if self.requests.contains_key(k) => Ok(k.to_string()),
            _ => Err(failed(format!(
                "unknown request key {}",
                step.get("key").map(encode).unwrap_or_else(|| "none".into())
            ))),
        }
    }

    /// The request id of a key (as a string).
    fn rid(&self, key: &str) -> String {
        match self.requests[key].get("id") {
            Some(Value::String(s)) => s.clone(),
            Some(v) => encode(v),
            None => String::new(),
        }
    }

    /// The request as sent (else as it would be sent: prepared and validated).
    fn request(&mut self, c: &mut SuiteClient, key: &str) -> Result<Value, RowError> {
        if let Some(m) = self.sent.get(key) {
            return Ok(m.clone());
        }
        let prepared = c.prepare(&self.requests[key])?;
        let prepared = c.checked(prepared, INTERCEPT_REQUEST)?;
        self.sent.insert(key.to_string(), prepared.clone());
        Ok(prepared)
    }

    fn mark(&self, c: &SuiteClient, kind: &str, key: &str) -> Result<(), RowError> {
        c.mark(&self.sid, kind, &self.rid(key))
    }

    fn is(&self, key: &str, states: &[State]) -> bool {
        self.state.get(key).is_some_and(|s| states.contains(s))
    }

    fn send(&mut self, c: &mut SuiteClient, step: &Value) -> Result<(), RowError> {
        let key = self.key(step)?;
        let slot = str_field(step, "slot")?.to_string();
        let msg = self.request(c, &key)?;
        let bypass = step.get("bypassSDK") == Some(&Value::Bool(true));
        let timeout = c.timeout();
        let call = c.send(&msg, bypass, timeout, None);
        self.slots.insert(slot, (key.clone(), call));
        if !bypass {
            self.state.entry(key).or_insert(State::Pending);
        }
        Ok(())
    }

    fn wait(&mut self, c: &mut SuiteClient, step: &Value) -> Result<(), RowError> {
        let key = self.key(step)?;
        let count = step.get("count").cloned().unwrap_or(json!(1));
        c.post("/wait", json!({"id": self.rid(&key), "count": count}))
    }

    fn release(&mut self, c: &mut SuiteClient, step: &Value) -> Result<(), RowError> {
        let key = self.key(step)?;
        c.post("/release", json!({"id": self.rid(&key)}))
    }

    fn receive(&mut self, c: &mut SuiteClient, step: &Value) -> Result<(), RowError> {
        let slot = str_field(step, "slot")?.to_string();
        let Some((key, call)) = self.slots.get(&slot).cloned() else {
            return Err(failed(format!(
                "slot {} was never sent",
                encode(&Value::String(slot))
            )));
        };
        let what = format!("{}: slot {slot}", self.sid);
        let reply =
            take(&call, c.timeout(), &what).map_err(|e| failed(format!("slot {slot}: {e}")))?;
        if self.is(&key, &[State::Cancelled, State::Staged, State::Published]) {
            self.ignored.push(json!(slot));
            return Ok(());
        }
        if let Reply::Parsed(v) = &reply {
            if let Some(p) = c.schemas.check(INTERCEPT_RESPONSE, v) {
                log(
                    "client",
                    &format!("{what}: staged a reply the schema refuses: {p}"),
                );
            }
        }
        self.state.insert(key.clone(), State::Staged);
        self.staged.insert(key.clone(), reply);
        self.mark(c, "acquired", &key)
    }

    fn publish(
        &mut self,
        c: &SuiteClient,
        key: &str,
        state: Value,
        value: Value,
    ) -> Result<(), RowError> {
        let rid = self.rid(key);
        self.published.push(json!(rid));
        self.states.insert(rid, state);
        self.settled.insert(key.to_string(), value);
        self.state.insert(key.to_string(), State::Published);
        self.mark(c, "accepted", key)
    }

    fn accept(&mut self, c: &mut SuiteClient, step: &Value) -> Result<(), RowError> {
        let key = self.key(step)?;
        if !self.is(&key, &[State::Staged]) {
            return Ok(());
        }
        let request = self.request(c, &key)?;
        let reply = self.staged.remove(&key).expect("a staged reply");
        let applied = match &reply {
            Reply::Parsed(v) => apply_with(&c.schemas, &request, v, Options { host_rule: false }),
            Reply::Malformed(_) => {
                log(
                    "client",
                    &format!(
                        "{}: {}: the reply is not strict JSON: rejected",
                        self.sid,
                        self.rid(&key)
                    ),
                );
                self.state.insert(key, State::Failed);
                return Ok(());
            }
        };
        let out = applied.outcome;
        if let Some(why) = out.unsupported {
            return Err(unsupported(why));
        }
        if let Some(why) = out.reason {
            // an operational failure: nothing is published; a later failOpen may publish
            log(
                "client",
                &format!("{}: {}: reply rejected: {why}", self.sid, self.rid(&key)),
            );
            self.state.insert(key, State::Failed);
            return Ok(());
        }
        let mut state = Map::new();
        for k in STATE_KEYS {
            if let Some(v) = out.actual.get(*k) {
                state.insert((*k).to_string(), v.clone());
            }
        }
        let b = boundary_of(&request).expect("a supported boundary");
        let value = path(&out.actual, &["effective", b.target])
            .cloned()
            .unwrap_or(Value::Null);
        self.publish(c, &key, Value::Object(state), value)
    }

    fn cancel(&mut self, c: &mut SuiteClient, step: &Value) -> Result<(), RowError> {
        let key = self.key(step)?;
        if self.is(&key, &[State::Cancelled]) {
            return Ok(());
        }
        self.mark(c, "cancelled", &key)?;
        self.cancelled.push(json!(self.rid(&key)));
        self.staged.remove(&key);
        self.state.insert(key, State::Cancelled);
        Ok(())
    }

    fn fail_open(&mut self, c: &mut SuiteClient, step: &Value) -> Result<(), RowError> {
        let key = self.key(step)?;
        if self.is(&key, &[State::Cancelled, State::Staged, State::Published]) {
            return Ok(());
        }
        let request = &self.requests[&key];
        let b = boundary_of(request).expect("a supported boundary");
        let original = b.original(path(request, &["params", "event"]).unwrap_or(&Value::Null));
        let mut state = json!({"decision": "allow", "executed": b.gated, "messages": []});
        if b.target == "input" {
            state["input"] = original.clone();
        }
        self.publish(c, &key, state, original)
    }

    fn observe(&mut self, c: &mut SuiteClient, step: &Value) -> Result<(), RowError> {
        let key = self.key(step)?;
        let subscription = str_field(step, "subscription")?.to_string();
        let request = self.requests[&key].clone();
        let b = boundary_of(&request).expect("a supported boundary");
        let event = path(&request, &["params", "event"])
            .cloned()
            .unwrap_or(Value::Null);
        let value = match self.settled.get(&key) {
            Some(v) => v.clone(),
            None => b.original(&event),
        };
        let mut event = settled_event(b, &event, &value).ok_or_else(|| {
            unsupported(format!(
                "setting the value of {} is not implemented by ahp-rust",
                b.event
            ))
        })?;
        if let (Some(items), Some(e)) = (step.get("items"), event.as_object_mut()) {
            e.insert("items".into(), items.clone());
        }
        let event_id = event.get("id").cloned().unwrap_or(Value::Null);
        let version = path(&request, &["params", "protocolVersion"])
            .cloned()
            .unwrap_or(Value::Null);
        let msg = c.prepare(&observation(&version, event))?;
        let msg = c.checked(msg, OBSERVE_NOTIFICATION)?;
        c.notify(&msg, None)?;
        self.observations.push(json!({
            "eventId": event_id, "subscription": subscription, "input": value,
        }));
        Ok(())
    }

    fn upload(&mut self, c: &mut SuiteClient, step: &Value) -> Result<(), RowError> {
        let alias = str_field(step, "ref")?.to_string();
        let sha = str_field(step, "sha256")?.to_string();
        let size = step
            .get("size")
            .and_then(Value::as_u64)
            .ok_or_else(|| failed("upload size must be a non-negative integer"))?;
        let data = base64_decode(str_field(step, "bodyBase64")?)
            .map_err(|_| failed("bodyBase64 is not base64"))?;
        let config = c
            .settings
            .upload
            .clone()
            .ok_or_else(|| failed("the config has no upload block"))?;
        let route = match step.get("upload") {
            Some(block) => {
                step_upload_route(block, &self.sid, &config).map_err(|e| failed(e.to_string()))?
            }
            None => config,
        };
        let (status, receipt) = c.upload(&route, &data, size, &sha)?;
        self.upload_statuses.push(json!(status));
        if let Some(r) = receipt {
            let to = r["ref"].as_str().unwrap_or_default().to_string();
            c.aliases.insert(alias, to);
        }
        Ok(())
    }

    fn emit(&mut self, c: &mut SuiteClient, step: &Value) -> Result<(), RowError> {
        if !c.stdio {
            return Err(failed("emit needs the stdio transport"));
        }
        let frame = step.get("response").cloned().unwrap_or(Value::Null);
        let id = frame.get("id").cloned().unwrap_or(Value::Null);
        let arrived = c.strays.expect(&id);
        c.post("/emit", json!({"response": frame}))?;
        if arrived.recv_timeout(c.timeout()).is_err() {
            return Err(failed(format!(
                "the emitted frame {} never reached the reader",
                encode(&id)
            )));
        }
        let shown = match &id {
            Value::String(s) => s.clone(),
            v => encode(v),
        };
        c.mark(&self.sid, "discarded", &shown)?;
        self.ignored.push(json!(format!("unsolicited:{shown}")));
        Ok(())
    }
}
