//! The backend of a server: scripted replies by scenario id, receipts and
//! barriers, shared by every transport of the server.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::RwLock;

use serde_json::{json, Map, Value};

use crate::config::{read_scenarios, Scenario};
use crate::files::{kind_of, Barriers, Receipts, NOTIFICATION};

// JSON-RPC error codes.
pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
pub const UNSUPPORTED_VERSION: i64 = -32001;

/// A JSON-RPC error response (an id that is neither a string nor a number becomes null).
pub fn rpc_error(id: Option<&Value>, code: i64, message: &str, data: Option<Value>) -> Value {
    let id = match id {
        Some(v @ (Value::String(_) | Value::Number(_))) => v.clone(),
        _ => Value::Null,
    };
    let mut body = json!({"code": code, "message": message});
    if let Some(d) = data {
        body["data"] = d;
    }
    json!({"jsonrpc": "2.0", "id": id, "error": body})
}

/// What a server sends back for one message.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// None: no reply (a notification)
    pub reply: Option<Value>,
    /// the reply is held until this barrier is released
    pub barrier: Option<String>,
}

impl Answer {
    pub fn reply(v: Value) -> Answer {
        Answer {
            reply: Some(v),
            barrier: None,
        }
    }
    pub fn none() -> Answer {
        Answer {
            reply: None,
            barrier: None,
        }
    }
}

/// Handles one JSON-RPC request (an object with an id) of a backend.
pub type Method = Box<dyn Fn(&Backend, &Map<String, Value>) -> Answer + Send + Sync>;

/// Scripted replies by scenario id, receipts and barriers.
pub struct Backend {
    pub receipts: Receipts,
    pub barriers: Barriers,
    methods: HashMap<String, Method>,
    scenarios: RwLock<HashMap<String, Scenario>>,
    /// The discovery manifest `hooks/capabilities` is answered with (default
    /// the core one); `GET /capabilities` answers its `tool.before`
    /// capabilities.
    manifest: fn() -> Value,
}

fn table(rows: Vec<Scenario>) -> Result<HashMap<String, Scenario>, String> {
    let mut t = HashMap::new();
    for row in rows {
        if t.contains_key(&row.id) {
            return Err(format!(
                "duplicate scenario id {}",
                ahp_sdk::json::encode(&Value::String(row.id))
            ));
        }
        t.insert(row.id.clone(), row);
    }
    Ok(t)
}

impl Backend {
    pub fn new(receipts: Receipts, rows: Vec<Scenario>) -> Result<Backend, String> {
        Ok(Backend {
            receipts,
            barriers: Barriers::new(),
            methods: HashMap::new(),
            scenarios: RwLock::new(table(rows)?),
            manifest: ahp_sdk::manifest::manifest,
        })
    }

    pub fn add_method(&mut self, name: &str, method: Method) {
        self.methods.insert(name.to_string(), method);
    }

    /// Sets the manifest `GET /capabilities` reads (the one the backend's
    /// `hooks/capabilities` method answers with).
    pub fn set_manifest(&mut self, manifest: fn() -> Value) {
        self.manifest = manifest;
    }

    /// The discovery manifest (a fresh copy).
    pub fn manifest(&self) -> Value {
        (self.manifest)()
    }

    /// Replaces the scenario table.
    pub fn load(&self, rows: Vec<Scenario>) -> Result<(), String> {
        let t = table(rows)?;
        *self.scenarios.write().unwrap_or_else(|p| p.into_inner()) = t;
        Ok(())
    }

    /// POST /reset: load the file if named (a bad one changes nothing), clear
    /// the receipt lists and every release.
    pub fn reset(&self, scenario_file: Option<&str>) -> Result<(), String> {
        if let Some(f) = scenario_file {
            self.load(read_scenarios(std::path::Path::new(f))?)?;
        }
        self.barriers.reset();
        self.receipts.clear();
        Ok(())
    }

    /// The row whose id is the request id.
    pub fn scenario(&self, id: Option<&Value>) -> Option<Scenario> {
        let id = id?.as_str()?;
        self.scenarios
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned()
    }

    /// The row's response unchanged, held at its barrier if it names one.
    pub fn scripted(&self, row: &Scenario) -> Answer {
        Answer {
            reply: Some(row.response().clone()),
            barrier: row.barrier().map(str::to_string),
        }
    }

    /// Records the receipt, then answers one parsed message.
    pub fn dispatch(&self, message: &Value) -> Answer {
        let msg = match message.as_object() {
            Some(m) => m,
            None => {
                return Answer::reply(rpc_error(
                    None,
                    INVALID_REQUEST,
                    "not a single JSON-RPC object",
                    None,
                ))
            }
        };
        let kind = kind_of(msg);
        self.receipts.record(kind, message);
        if kind == NOTIFICATION {
            return Answer::none();
        }
        let name = msg.get("method").and_then(Value::as_str).unwrap_or("");
        let method = match self.methods.get(name) {
            Some(m) => m,
            None => {
                return Answer::reply(rpc_error(
                    msg.get("id"),
                    METHOD_NOT_FOUND,
                    "method not found",
                    None,
                ))
            }
        };
        match catch_unwind(AssertUnwindSafe(|| method(self, msg))) {
            Ok(a) => a,
            Err(_) => {
                crate::log("server", "internal error while answering a request");
                Answer::reply(rpc_error(
                    msg.get("id"),
                    INTERNAL_ERROR,
                    "internal error",
                    None,
                ))
            }
        }
    }

    /// Waits at the answer's barrier, if any, and gives the reply.
    pub fn settle(&self, answer: Answer) -> Option<Value> {
        if let Some(b) = &answer.barrier {
            self.barriers.wait(b);
        }
        answer.reply
    }
}
