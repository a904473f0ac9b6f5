//! The control listener of a suite server (docs/LIFECYCLE.md, "Control"):
//! `/health`, `/receipts`, `/wait`, `/release {id}`, `/mark`,
//! `/wait-observed`, `/emit` (stdio) and `/shutdown`, each answered `{"ok":
//! true}`; a wait gives up after [`WAIT_LIMIT`] with 408. And the client of it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::entries::{EMITTED, MARKS, OBSERVED, RECEIVED, WAIT_LIMIT};
use crate::http::{self, Body, BodyError, Handler, Request, Response, Url};
use crate::suite_server::SuiteShared;

/// Writes one frame as a stdout line (a stdio server's `/emit`).
pub type Emit = Arc<dyn Fn(&Value) + Send + Sync>;

/// The control listener's handler.
pub struct SuiteControl {
    pub shared: Arc<SuiteShared>,
    /// None over HTTP: `/emit` is refused (409)
    pub emit: Option<Emit>,
    /// the entry kinds `/wait-observed` counts (default `observed`)
    pub observed: Vec<String>,
    /// the POST calls served besides `/shutdown` (None: every one)
    pub calls: Option<Vec<String>>,
}

fn fail(status: u16, why: impl Into<String>) -> Response {
    Response::json(status, &json!({"error": why.into()}))
}

fn ok() -> Response {
    Response::json(200, &json!({"ok": true}))
}

/// `count`: absent is 1, else a positive integer.
fn count(m: &Map<String, Value>) -> Option<usize> {
    match m.get("count") {
        None => Some(1),
        Some(v) => match ahp_sdk::json::integer_value(v) {
            Some(n) if n >= 1 => Some(n.min(usize::MAX as i128) as usize),
            _ => None,
        },
    }
}

impl SuiteControl {
    pub fn new(shared: Arc<SuiteShared>) -> SuiteControl {
        SuiteControl {
            shared,
            emit: None,
            observed: vec![OBSERVED.into()],
            calls: None,
        }
    }

    fn post(&self, path: &str, m: &Map<String, Value>) -> Response {
        let s = &self.shared;
        match path {
            "/wait" => {
                let (Some(id), Some(n)) = (m.get("id").filter(|v| v.is_string()), count(m)) else {
                    return fail(400, "/wait needs a string id and a positive integer count");
                };
                if !s.entries.wait(RECEIVED, id, n, WAIT_LIMIT) {
                    return fail(
                        408,
                        format!(
                            "{n} receipt(s) of {} did not arrive in time",
                            ahp_sdk::json::encode(id)
                        ),
                    );
                }
                ok()
            }
            "/wait-observed" => {
                let (Some(id), Some(n)) = (m.get("eventId").filter(|v| v.is_string()), count(m))
                else {
                    return fail(
                        400,
                        "/wait-observed needs a string eventId and a positive integer count",
                    );
                };
                let kinds: Vec<&str> = self.observed.iter().map(String::as_str).collect();
                if !s.entries.wait_any(&kinds, id, n, WAIT_LIMIT) {
                    return fail(
                        408,
                        format!(
                            "{n} observation(s) of {} did not arrive in time",
                            ahp_sdk::json::encode(id)
                        ),
                    );
                }
                ok()
            }
            "/release" => match m.get("id").and_then(Value::as_str) {
                Some(id) => {
                    s.barriers.release(id);
                    ok()
                }
                None => fail(400, "/release needs a string id"),
            },
            "/mark" => {
                let scenario = m.get("scenario").filter(|v| v.is_string());
                let id = m.get("id").filter(|v| v.is_string());
                let (Some(scenario), Some(id)) = (scenario, id) else {
                    return fail(400, "/mark needs a string scenario and a string id");
                };
                let kind = m.get("kind").and_then(Value::as_str).unwrap_or("");
                if !MARKS.contains(&kind) {
                    return fail(
                        400,
                        format!(
                            "/mark kind {} is not a mark",
                            m.get("kind").map(ahp_sdk::json::encode).unwrap_or_default()
                        ),
                    );
                }
                s.entries
                    .record(json!({"kind": kind, "id": id, "scenario": scenario}), "id");
                ok()
            }
            "/emit" => {
                let Some(emit) = &self.emit else {
                    return fail(409, "/emit is for a stdio server only");
                };
                let Some(frame) = m.get("response") else {
                    return fail(400, "/emit needs a response");
                };
                let id = frame.get("id").cloned().unwrap_or(Value::Null);
                s.entries.record(json!({"kind": EMITTED, "id": id}), "id");
                emit(frame);
                ok()
            }
            _ => Response::new(404),
        }
    }
}

impl Handler for SuiteControl {
    fn handle(&self, req: &Request, body: &mut Body) -> Response {
        match (req.method.as_str(), req.path.as_str()) {
            ("GET", "/health") => return Response::json(200, &json!({"ready": true})),
            ("GET", "/receipts") => return Response::json(200, &self.shared.entries.snapshot()),
            ("POST", _) => {}
            _ => return Response::new(404),
        }
        let path = req.path.as_str();
        if path != "/shutdown" {
            if let Some(calls) = &self.calls {
                if !calls.iter().any(|c| c == path) {
                    return Response::new(404);
                }
            }
        }
        let data = match body.read() {
            Ok(d) => d,
            Err(BodyError::Status(s)) => return Response::new(s).closing(),
            Err(BodyError::Close) => return Response::hang_up(),
        };
        let m = if data.iter().all(u8::is_ascii_whitespace) {
            Map::new()
        } else {
            match ahp_sdk::json::parse(&data) {
                Ok(Value::Object(m)) => m,
                Ok(_) => Map::new(),
                Err(e) => return fail(400, format!("the body is not strict JSON: {e}")),
            }
        };
        if path == "/shutdown" {
            self.shared.begin_shutdown();
            let mut r = ok().closing();
            r.after_send = Some(crate::server::stop);
            return r;
        }
        self.post(path, &m)
    }
}

/// JSON calls to a server's control listener (plain HTTP on loopback, one
/// keep-alive connection; usable from several threads, one call at a time).
pub struct ControlClient {
    base: Url,
    client: Mutex<http::Client>,
}

impl ControlClient {
    pub fn new(endpoint: &str) -> Result<ControlClient, String> {
        let base = Url::parse(endpoint).map_err(|e| format!("control endpoint: {e}"))?;
        let client = http::Client::new(&base, None, WAIT_LIMIT + Duration::from_secs(10));
        Ok(ControlClient {
            base,
            client: Mutex::new(client),
        })
    }

    /// The JSON answer of a 200, else an error naming the call.
    pub fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value, String> {
        let prefix = self.base.path.trim_end_matches('/');
        let url = self.base.with_path(&format!("{prefix}{path}"));
        let data = body.map(ahp_sdk::json::encode).unwrap_or_default();
        let mut headers = vec![("Accept", "application/json")];
        if body.is_some() {
            headers.push(("Content-Type", "application/json"));
        }
        let mut c = self.client.lock().unwrap_or_else(|p| p.into_inner());
        let answer = c
            .request(method, &url, &headers, data.as_bytes())
            .map_err(|e| format!("{method} {path} failed: {e}"))?;
        drop(c);
        if answer.status != 200 {
            let text = String::from_utf8_lossy(&answer.body);
            let text: String = text.chars().take(200).collect();
            return Err(format!(
                "{method} {path} answered HTTP {} {text}",
                answer.status
            ));
        }
        ahp_sdk::json::parse(&answer.body)
            .map_err(|e| format!("{method} {path}: the answer is not strict JSON: {e}"))
    }

    /// `call` with POST and a JSON body.
    pub fn post(&self, path: &str, body: &Value) -> Result<(), String> {
        self.call("POST", path, Some(body)).map(|_| ())
    }

    /// Closes the kept connection.
    pub fn close(&self) {
        self.client
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .close();
    }
}
