//! A server process: the control listener, the AHP listener (HTTP) or the stdin
//! loop (stdio), the readiness file; it returns once shut down (POST
//! /shutdown, EOF on stdin, SIGTERM/SIGINT).

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use ahp_sdk::auth::Verifier;
use serde_json::{json, Value};

use crate::backend::{rpc_error, Backend, PARSE_ERROR};
use crate::config::ServerSettings;
use crate::http::{self, Body, BodyError, Handler, Request, Response};
use crate::Failure;

static STOPPED: Mutex<bool> = Mutex::new(false);
static STOPPING: Condvar = Condvar::new();
/// AHP exchanges in progress (a held reply among them).
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

/// Asks the server to shut down (idempotent; from any thread or signal watcher).
pub fn stop() {
    let mut s = STOPPED.lock().unwrap_or_else(|p| p.into_inner());
    *s = true;
    STOPPING.notify_all();
}

/// Blocks until `stop` was called.
pub fn wait_stopped() {
    let mut s = STOPPED.lock().unwrap_or_else(|p| p.into_inner());
    while !*s {
        s = STOPPING.wait(s).unwrap_or_else(|p| p.into_inner());
    }
}

struct Active;
impl Active {
    fn enter() -> Active {
        ACTIVE.fetch_add(1, Ordering::SeqCst);
        Active
    }
}
impl Drop for Active {
    fn drop(&mut self) {
        ACTIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The answer to `GET /capabilities`: 200 with the bare capabilities object
/// of `manifest`'s `tool.before` intercept entry (`get_capabilities`), never
/// a JSON-RPC envelope (upstream clients validate it against
/// `capabilities.schema.json`). It is no message: nothing is dispatched or
/// recorded.
pub fn capabilities_response(manifest: &Value) -> Response {
    match ahp_sdk::manifest::get_capabilities(manifest) {
        Some(caps) => Response::json(200, &caps),
        None => {
            crate::log("server", "the manifest has no intercept entry");
            Response::new(500)
        }
    }
}

/// The AHP endpoint: POST of any JSON-RPC message on any path, GET
/// /capabilities (the bare capabilities object, never a receipt);
/// authentication from the headers before any body byte.
pub struct AhpHandler {
    pub backend: Arc<Backend>,
    /// None: no authentication at all (stdio has no listener)
    pub verifier: Option<Arc<Verifier>>,
}

impl AhpHandler {
    fn send(&self, answer: crate::backend::Answer) -> Response {
        match self.backend.settle(answer) {
            None => Response::new(204),
            Some(v) => Response::json(200, &v),
        }
    }
}

impl Handler for AhpHandler {
    fn handle(&self, req: &Request, body: &mut Body) -> Response {
        let _active = Active::enter();
        if let Some(v) = &self.verifier {
            let values = req.headers.all("authorization");
            if let Err(why) = v.verify(&values) {
                crate::log(
                    "server",
                    &format!("refused {} {}: {why}", req.method, req.path),
                );
                return Response::new(401)
                    .header("WWW-Authenticate", "Bearer")
                    .closing();
            }
        }
        match req.method.as_str() {
            "GET" if req.path == "/capabilities" => capabilities_response(&self.backend.manifest()),
            "GET" => Response::new(404),
            "POST" => {
                let data = match body.read() {
                    Ok(d) => d,
                    Err(BodyError::Status(s)) => return Response::new(s).closing(),
                    Err(BodyError::Close) => return Response::hang_up(),
                };
                match ahp_sdk::json::parse(&data) {
                    Ok(msg) => self.send(self.backend.dispatch(&msg)),
                    Err(e) => {
                        crate::log("server", &format!("malformed request: {e}"));
                        Response::json(400, &rpc_error(None, PARSE_ERROR, "parse error", None))
                    }
                }
            }
            _ => Response::new(405).header("Allow", "GET, POST"),
        }
    }
}

/// The control listener: /health, /receipts, /release, /reset, /shutdown
/// (plain HTTP on loopback, no auth).
pub struct ControlHandler {
    pub backend: Arc<Backend>,
}

fn control_body(body: &mut Body) -> Result<serde_json::Map<String, Value>, Response> {
    let data = body.read().map_err(|e| match e {
        BodyError::Status(s) => Response::new(s).closing(),
        BodyError::Close => Response::hang_up(),
    })?;
    if data.iter().all(u8::is_ascii_whitespace) {
        return Ok(serde_json::Map::new());
    }
    match ahp_sdk::json::parse(&data) {
        Ok(Value::Object(m)) => Ok(m),
        _ => Err(Response::json(
            400,
            &json!({"error": "the body must be a JSON object"}),
        )),
    }
}

impl Handler for ControlHandler {
    fn handle(&self, req: &Request, body: &mut Body) -> Response {
        let b = &self.backend;
        match (req.method.as_str(), req.path.as_str()) {
            ("GET", "/health") => Response::json(200, &json!({"ready": true})),
            ("GET", "/receipts") => Response::json(200, &b.receipts.snapshot()),
            ("POST", "/release") => {
                let m = match control_body(body) {
                    Ok(m) => m,
                    Err(r) => return r,
                };
                match m.get("barrier").and_then(Value::as_str) {
                    Some(name) => {
                        b.barriers.release(name);
                        Response::json(200, &json!({"released": name}))
                    }
                    None => Response::json(400, &json!({"error": "barrier must be a string"})),
                }
            }
            ("POST", "/reset") => {
                let m = match control_body(body) {
                    Ok(m) => m,
                    Err(r) => return r,
                };
                let file = match m.get("scenarioFile") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(_) => {
                        return Response::json(
                            400,
                            &json!({"error": "scenarioFile must be a string"}),
                        )
                    }
                };
                match b.reset(file.as_deref()) {
                    Ok(()) => Response::json(200, &json!({"reset": true})),
                    Err(e) => Response::json(400, &json!({"error": e})),
                }
            }
            ("POST", "/shutdown") => {
                b.barriers.release_all();
                let mut r = Response::json(200, &json!({"shutdown": true})).closing();
                r.after_send = Some(stop);
                r
            }
            (_, "/health" | "/receipts" | "/release" | "/reset" | "/shutdown") => {
                Response::new(405)
            }
            _ => Response::new(404),
        }
    }
}

/// A stdio line over this is answered with a parse error.
pub const MAX_LINE: usize = 64 << 20;

/// Reads one line (without its LF and a CR before it); None at EOF. A line
/// longer than `max` is returned as Err(()) once read through.
pub fn read_line(r: &mut impl BufRead, max: usize) -> std::io::Result<Option<Result<Vec<u8>, ()>>> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            if line.is_empty() && !too_long {
                return Ok(None);
            }
            break;
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        if !too_long {
            line.extend_from_slice(&buf[..take]);
            if line.len() > max + 2 {
                too_long = true;
                line.clear();
            }
        }
        r.consume(take);
        if done {
            break;
        }
    }
    if too_long {
        return Ok(Some(Err(())));
    }
    if line.last() == Some(&b'\n') {
        line.pop();
        if line.last() == Some(&b'\r') {
            line.pop();
        }
    }
    Ok(Some(Ok(line)))
}

/// Answers one compact JSON-RPC object per line until EOF. A held reply goes
/// out from its own thread; other lines are answered meanwhile. Writes are
/// whole lines under one lock.
pub fn serve_stdio(backend: Arc<Backend>) {
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let write = |out: &Mutex<std::io::Stdout>, v: &Value| {
        let mut line = ahp_sdk::json::encode(v).into_bytes();
        line.push(b'\n');
        let mut o = out.lock().unwrap_or_else(|p| p.into_inner());
        if o.write_all(&line).and_then(|_| o.flush()).is_err() {
            crate::log("server", "stdout is closed");
        }
    };
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut held = Vec::new();
    loop {
        let line = match read_line(&mut input, MAX_LINE) {
            Ok(Some(l)) => l,
            Ok(None) => break,
            Err(e) => {
                crate::log("server", &format!("stdin: {e}"));
                break;
            }
        };
        let parsed = match line {
            Ok(l) if l.is_empty() => continue,
            Ok(l) => ahp_sdk::json::parse(&l).map_err(|e| e.to_string()),
            Err(()) => Err("line too long".into()),
        };
        match parsed {
            Err(e) => {
                crate::log("server", &format!("malformed request line: {e}"));
                write(&out, &rpc_error(None, PARSE_ERROR, "parse error", None));
            }
            Ok(msg) => {
                let answer = backend.dispatch(&msg);
                if answer.reply.is_none() {
                    continue;
                }
                match &answer.barrier {
                    Some(name) if !backend.barriers.is_open(name) => {
                        let (b, o) = (backend.clone(), out.clone());
                        let active = Active::enter();
                        let spawned =
                            std::thread::Builder::new()
                                .stack_size(8 << 20)
                                .spawn(move || {
                                    let _active = active;
                                    if let Some(v) = b.settle(answer) {
                                        write(&o, &v);
                                    }
                                });
                        match spawned {
                            Ok(h) => held.push(h),
                            Err(e) => crate::log("server", &format!("cannot hold a reply: {e}")),
                        }
                    }
                    _ => {
                        if let Some(v) = answer.reply {
                            write(&out, &v);
                        }
                    }
                }
            }
        }
    }
    backend.barriers.release_all();
    for h in held {
        let _ = h.join();
    }
}

/// Runs the server until it is shut down; the exit code.
pub fn run_server(s: &ServerSettings, backend: Arc<Backend>) -> Result<i32, Failure> {
    let control = http::listen().map_err(|e| Failure::Other(format!("cannot listen: {e}")))?;
    let control_url = format!("http://127.0.0.1:{}", port(&control));
    http::serve(
        control,
        None,
        Arc::new(ControlHandler {
            backend: backend.clone(),
        }),
        "control",
    );
    let mut endpoint = None;
    if s.transport == "http" {
        let auth = s.auth.as_ref();
        let tls = match auth.and_then(|a| a.tls.as_ref()) {
            Some(files) => Some(
                crate::tls::server_config(files)
                    .map_err(|e| crate::config::ConfigError::new(&s.file, &files.field, e))?,
            ),
            None => None,
        };
        let listener = http::listen().map_err(|e| Failure::Other(format!("cannot listen: {e}")))?;
        let scheme = if tls.is_some() { "https" } else { "http" };
        endpoint = Some(format!(
            "{scheme}://127.0.0.1:{}/intercept",
            port(&listener)
        ));
        let handler = AhpHandler {
            backend: backend.clone(),
            verifier: auth.and_then(|a| a.verifier.clone()),
        };
        http::serve(listener, tls, Arc::new(handler), "ahp");
    } else {
        let b = backend.clone();
        std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn(move || {
                serve_stdio(b);
                stop();
            })
            .map_err(|e| Failure::Other(format!("cannot start the stdin loop: {e}")))?;
    }
    crate::files::write_readiness(&s.readiness_file, endpoint.as_deref(), &control_url, &[])
        .map_err(Failure::Other)?;
    wait_stopped();
    backend.barriers.release_all();
    // let held replies go out
    let until = Instant::now() + Duration::from_secs(2);
    while ACTIVE.load(Ordering::SeqCst) > 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(0)
}

/// The port a listener is bound to.
pub fn port(l: &std::net::TcpListener) -> u16 {
    l.local_addr().map(|a| a.port()).unwrap_or(0)
}
