//! A suite server process past core (docs/LIFECYCLE.md, "Server"): the
//! entry log, the replies held by id, the content store and its upload
//! listener, the control listener, the readiness file, and the AHP side over
//! HTTP (authenticated per `auth`) or stdio. What a message is answered with
//! is the suite's: a [`SuiteDispatcher`].

use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ahp_sdk::auth::Verifier;
use serde_json::Value;

use crate::backend::{rpc_error, INTERNAL_ERROR, PARSE_ERROR};
use crate::entries::EntryLog;
use crate::files::Barriers;
use crate::http::{self, Body, BodyError, Handler, Request, Response};
use crate::suite_config::SuiteServerSettings;
use crate::suite_control::{Emit, SuiteControl};
use crate::upload::{ContentStore, UploadHandler, UPLOAD_PATH};
use crate::{log, Failure};

/// Runs once, just before the answer is written (a `replied` entry, say).
pub type Before = Box<dyn FnOnce() + Send>;

/// What a suite server sends back for one message.
#[derive(Default)]
pub struct SuiteAnswer {
    /// the JSON answer (None with `raw` None: no body; HTTP 204 unless `status`)
    pub reply: Option<Value>,
    /// sent as they are instead of `reply` (not JSON on purpose)
    pub raw: Option<Vec<u8>>,
    /// the HTTP status (0: 200 with a body, 204 without)
    pub status: u16,
    /// held until `POST /release {"id": gate}` (sticky) or shutdown
    pub gate: Option<String>,
    /// runs just before the answer is written (not when it never is)
    pub before: Option<Before>,
    /// never answered: over HTTP the connection is closed without a word once
    /// the client leaves or the server shuts down; over stdio nothing is written
    pub never: bool,
}

impl SuiteAnswer {
    /// No answer body (HTTP 204; stdio: nothing).
    pub fn none() -> SuiteAnswer {
        SuiteAnswer::default()
    }
    pub fn reply(v: Value) -> SuiteAnswer {
        SuiteAnswer {
            reply: Some(v),
            ..SuiteAnswer::default()
        }
    }
    /// An HTTP status without a body (stdio: nothing is written).
    pub fn status(status: u16) -> SuiteAnswer {
        SuiteAnswer {
            status,
            ..SuiteAnswer::default()
        }
    }
    pub fn never() -> SuiteAnswer {
        SuiteAnswer {
            never: true,
            ..SuiteAnswer::default()
        }
    }
    pub fn with_status(mut self, status: u16) -> SuiteAnswer {
        self.status = status;
        self
    }
    pub fn with_gate(mut self, gate: impl Into<String>) -> SuiteAnswer {
        self.gate = Some(gate.into());
        self
    }
    pub fn with_before(mut self, before: impl FnOnce() + Send + 'static) -> SuiteAnswer {
        self.before = Some(Box::new(before));
        self
    }
}

/// Answers one parsed AHP message (any JSON value a client sent); the
/// suite's part of a suite server.
pub trait SuiteDispatcher: Send + Sync + 'static {
    fn dispatch(&self, msg: &Value) -> SuiteAnswer;
    /// The discovery manifest whose `tool.before` capabilities `GET
    /// /capabilities` answers over HTTP (the one `hooks/capabilities` is
    /// answered with); that answer is never dispatched, so never recorded.
    fn manifest(&self) -> Value;
}

/// What every part of a suite server shares.
pub struct SuiteShared {
    pub entries: Arc<EntryLog>,
    /// held replies by id (`POST /release {"id"}`, sticky)
    pub barriers: Barriers,
    pub store: Arc<ContentStore>,
    closing: AtomicBool,
    active: AtomicUsize,
}

impl SuiteShared {
    pub fn new() -> SuiteShared {
        SuiteShared {
            entries: Arc::new(EntryLog::new()),
            barriers: Barriers::new(),
            store: Arc::new(ContentStore::new()),
            closing: AtomicBool::new(false),
            active: AtomicUsize::new(0),
        }
    }

    /// Whether shutdown has begun (unanswered exchanges end).
    pub fn closing(&self) -> bool {
        self.closing.load(Ordering::SeqCst)
    }

    /// Releases every held reply, ends every control wait, ends every
    /// exchange that is never answered (idempotent).
    pub fn begin_shutdown(&self) {
        self.closing.store(true, Ordering::SeqCst);
        self.barriers.release_all();
        self.entries.close();
    }

    fn enter(&self) -> ActiveGuard<'_> {
        self.active.fetch_add(1, Ordering::SeqCst);
        ActiveGuard(self)
    }
}

impl Default for SuiteShared {
    fn default() -> Self {
        SuiteShared::new()
    }
}

struct ActiveGuard<'a>(&'a SuiteShared);
impl Drop for ActiveGuard<'_> {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A suite server process.
pub struct SuiteServer {
    pub settings: SuiteServerSettings,
    pub shared: Arc<SuiteShared>,
    /// the entry kinds `/wait-observed` counts (default `observed`)
    pub observed_kinds: Vec<String>,
    /// the POST control calls served besides `/shutdown` (None: every one)
    pub control_calls: Option<Vec<String>>,
}

/// Dispatches with a panic turned into a JSON-RPC internal error.
fn dispatch(backend: &dyn SuiteDispatcher, msg: &Value) -> SuiteAnswer {
    match catch_unwind(AssertUnwindSafe(|| backend.dispatch(msg))) {
        Ok(a) => a,
        Err(_) => {
            log("server", "internal error while answering a message");
            SuiteAnswer::reply(rpc_error(
                msg.get("id"),
                INTERNAL_ERROR,
                "internal error",
                None,
            ))
        }
    }
}

impl SuiteServer {
    pub fn new(settings: SuiteServerSettings) -> SuiteServer {
        SuiteServer {
            settings,
            shared: Arc::new(SuiteShared::new()),
            observed_kinds: vec![crate::entries::OBSERVED.into()],
            control_calls: None,
        }
    }

    /// Serves until `POST /shutdown`, EOF on stdin (stdio) or SIGTERM/SIGINT
    /// (`server::stop`); the exit code.
    pub fn run(self, backend: Arc<dyn SuiteDispatcher>) -> Result<i32, Failure> {
        let s = &self.settings.base;
        let shared = self.shared.clone();
        let listen = || http::listen().map_err(|e| Failure::Other(format!("cannot listen: {e}")));
        let control_listener = listen()?;
        let upload_listener = listen()?;
        let mut control = SuiteControl::new(shared.clone());
        control.observed = self.observed_kinds.clone();
        control.calls = self.control_calls.clone();
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
            let listener = listen()?;
            let scheme = if tls.is_some() { "https" } else { "http" };
            endpoint = Some(format!(
                "{scheme}://127.0.0.1:{}/intercept",
                crate::server::port(&listener)
            ));
            let handler = SuiteHttpHandler {
                shared: shared.clone(),
                backend: backend.clone(),
                verifier: auth.and_then(|a| a.verifier.clone()),
            };
            http::serve(listener, tls, Arc::new(handler), "ahp");
        } else {
            let out = Arc::new(LineWriter::new());
            let o = out.clone();
            let emit: Emit = Arc::new(move |frame: &Value| o.write(frame));
            control.emit = Some(emit);
            let (sh, b) = (shared.clone(), backend.clone());
            std::thread::Builder::new()
                .stack_size(8 << 20)
                .spawn(move || {
                    serve_stdio(&sh, b, &out);
                    crate::server::stop();
                })
                .map_err(|e| Failure::Other(format!("cannot start the stdin loop: {e}")))?;
        }
        let control_url = format!(
            "http://127.0.0.1:{}",
            crate::server::port(&control_listener)
        );
        let upload_url = format!(
            "http://127.0.0.1:{}{UPLOAD_PATH}",
            crate::server::port(&upload_listener)
        );
        http::serve(control_listener, None, Arc::new(control), "control");
        let uploads = UploadHandler {
            token: self.settings.upload_token.clone(),
            store: shared.store.clone(),
            entries: shared.entries.clone(),
        };
        http::serve(upload_listener, None, Arc::new(uploads), "upload");
        crate::files::write_readiness(
            &s.readiness_file,
            endpoint.as_deref(),
            &control_url,
            &[("uploadEndpoint", upload_url.as_str())],
        )
        .map_err(Failure::Other)?;
        crate::server::wait_stopped();
        shared.begin_shutdown();
        // let released replies go out
        let until = Instant::now() + Duration::from_secs(2);
        while shared.active.load(Ordering::SeqCst) > 0 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(0)
    }
}

/// The AHP listener of a suite server: POST of any JSON-RPC message on any
/// path, GET /capabilities; authentication from the headers before any body byte.
pub struct SuiteHttpHandler {
    pub shared: Arc<SuiteShared>,
    pub backend: Arc<dyn SuiteDispatcher>,
    /// None: no Authorization check (modes none and mtls)
    pub verifier: Option<Arc<Verifier>>,
}

impl SuiteHttpHandler {
    fn answer(&self, a: SuiteAnswer, body: &Body) -> Response {
        if a.never {
            while !self.shared.closing() {
                if body.peer_closed(Duration::from_millis(100)) {
                    break;
                }
            }
            return Response::hang_up();
        }
        if let Some(gate) = &a.gate {
            while !self
                .shared
                .barriers
                .wait_for(gate, Duration::from_millis(50))
            {
                if body.peer_closed(Duration::ZERO) {
                    return Response::hang_up(); // the client left: nothing is written
                }
            }
        }
        if let Some(before) = a.before {
            before();
        }
        if let Some(raw) = a.raw {
            let mut r = Response::new(if a.status == 0 { 200 } else { a.status });
            r.headers
                .push(("Content-Type".into(), "application/json".into()));
            r.body = raw;
            return r;
        }
        match a.reply {
            Some(v) => Response::json(if a.status == 0 { 200 } else { a.status }, &v),
            None => Response::new(if a.status == 0 { 204 } else { a.status }),
        }
    }
}

impl Handler for SuiteHttpHandler {
    fn handle(&self, req: &Request, body: &mut Body) -> Response {
        let _active = self.shared.enter();
        if let Some(v) = &self.verifier {
            if let Err(why) = v.verify(&req.headers.all("authorization")) {
                log(
                    "server",
                    &format!("refused {} {}: {why}", req.method, req.path),
                );
                return Response::new(401)
                    .header("WWW-Authenticate", "Bearer")
                    .closing();
            }
        }
        let a = match req.method.as_str() {
            "GET" if req.path == "/capabilities" => {
                return crate::server::capabilities_response(&self.backend.manifest());
            }
            "GET" => return Response::new(404),
            "POST" => {
                let data = match body.read() {
                    Ok(d) => d,
                    Err(BodyError::Status(s)) => return Response::new(s).closing(),
                    Err(BodyError::Close) => return Response::hang_up(),
                };
                match ahp_sdk::json::parse(&data) {
                    Ok(msg) => dispatch(&*self.backend, &msg),
                    Err(e) => {
                        log("server", &format!("malformed message: {e}"));
                        return Response::json(
                            400,
                            &rpc_error(None, PARSE_ERROR, "parse error", None),
                        );
                    }
                }
            }
            _ => return Response::new(405).header("Allow", "GET, POST"),
        };
        self.answer(a, body)
    }
}

/// Whole lines on stdout under one lock.
pub struct LineWriter {
    out: Mutex<std::io::Stdout>,
}

impl LineWriter {
    pub fn new() -> LineWriter {
        LineWriter {
            out: Mutex::new(std::io::stdout()),
        }
    }

    pub fn raw(&self, data: &[u8]) {
        let mut line = data.to_vec();
        line.push(b'\n');
        let mut o = self.out.lock().unwrap_or_else(|p| p.into_inner());
        if o.write_all(&line).and_then(|_| o.flush()).is_err() {
            log("server", "stdout is closed");
        }
    }

    pub fn write(&self, v: &Value) {
        self.raw(ahp_sdk::json::encode(v).as_bytes());
    }
}

impl Default for LineWriter {
    fn default() -> Self {
        LineWriter::new()
    }
}

fn send_line(a: SuiteAnswer, out: &LineWriter) {
    if let Some(before) = a.before {
        before();
    }
    if let Some(raw) = a.raw {
        out.raw(&raw);
    } else if let Some(v) = a.reply {
        out.write(&v);
    }
}

/// Answers one JSON-RPC object per stdin line until EOF; a held reply goes
/// out from its own thread while later lines are answered.
pub fn serve_stdio(
    shared: &Arc<SuiteShared>,
    backend: Arc<dyn SuiteDispatcher>,
    out: &Arc<LineWriter>,
) {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut held = Vec::new();
    loop {
        let line = match crate::server::read_line(&mut input, crate::server::MAX_LINE) {
            Ok(Some(l)) => l,
            Ok(None) => break,
            Err(e) => {
                log("server", &format!("stdin: {e}"));
                break;
            }
        };
        let msg = match line {
            Ok(l) if l.iter().all(u8::is_ascii_whitespace) => continue,
            Ok(l) => match ahp_sdk::json::parse(&l) {
                Ok(v) => v,
                Err(e) => {
                    log("server", &format!("malformed line: {e}"));
                    out.write(&rpc_error(None, PARSE_ERROR, "parse error", None));
                    continue;
                }
            },
            Err(()) => {
                out.write(&rpc_error(None, PARSE_ERROR, "line too long", None));
                continue;
            }
        };
        let a = dispatch(&*backend, &msg);
        if a.never {
            continue;
        }
        match a.gate.clone() {
            Some(gate) if !shared.barriers.is_open(&gate) => {
                let (sh, o) = (shared.clone(), out.clone());
                let spawned = std::thread::Builder::new()
                    .stack_size(8 << 20)
                    .spawn(move || {
                        let _active = sh.enter();
                        sh.barriers.wait(&gate);
                        send_line(a, &o);
                    });
                match spawned {
                    Ok(h) => held.push(h),
                    Err(e) => log("server", &format!("cannot hold a reply: {e}")),
                }
            }
            _ => send_line(a, out),
        }
    }
    shared.barriers.release_all();
    for h in held {
        let _ = h.join();
    }
}
