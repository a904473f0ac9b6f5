//! A suite client's channel to a backend, with several requests in flight
//! (docs/LIFECYCLE.md): over HTTP every exchange has its own connection
//! (idle keep-alive ones are reused), so a held reply blocks nothing else;
//! over stdio replies are routed by id to the call waiting for them, and
//! every other frame goes to a hook. Notifications never wait for their answer.

use std::collections::{HashMap, VecDeque};
use std::io::{BufReader, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rustls::ClientConfig;
use serde_json::Value;

use crate::config::{ClientSettings, ConfigError, MTLS, NONE, OAUTH, STRICT};
use crate::http::{self, Url, MAX_RESPONSE};
use crate::peer::id_key;
use crate::{log, process};

/// Why a call gave no usable reply.
#[derive(Debug, Clone, PartialEq)]
pub enum CallError {
    /// no reply could be had (connection, status, deadline, a closed channel)
    Transport(String),
    /// a reply arrived but is not strict JSON
    Malformed(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Transport(s) | CallError::Malformed(s) => f.write_str(s),
        }
    }
}

type Undo = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct CallState {
    outcome: Option<Result<Value, CallError>>,
    undo: Option<Undo>,
    gone: bool,
}

/// One request in flight. The first outcome wins: a reply, a failure, or
/// abandonment at the deadline (which undoes what the channel registered,
/// so a late reply is a stray frame).
#[derive(Default)]
pub struct Call {
    state: Mutex<CallState>,
    done: Condvar,
}

impl Call {
    pub fn new() -> Arc<Call> {
        Arc::new(Call::default())
    }

    fn settle(&self, outcome: Result<Value, CallError>) {
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if g.outcome.is_none() {
            g.outcome = Some(outcome);
            self.done.notify_all();
        }
    }

    /// Settles the call with a parsed reply.
    pub fn resolve(&self, v: Value) {
        self.settle(Ok(v));
    }

    /// Settles the call with a failure.
    pub fn fail(&self, e: CallError) {
        self.settle(Err(e));
    }

    /// A call that failed already.
    pub fn failed(e: CallError) -> Arc<Call> {
        let c = Call::new();
        c.fail(e);
        c
    }

    /// Whether an outcome is there.
    pub fn is_done(&self) -> bool {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .outcome
            .is_some()
    }

    /// What to undo when the call is abandoned (at once if it already was).
    pub fn on_abandon(&self, undo: impl FnOnce() + Send + 'static) {
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if g.gone {
            drop(g);
            undo();
        } else {
            g.undo = Some(Box::new(undo));
        }
    }

    /// Stops waiting: the call fails unless it already ended.
    pub fn abandon(&self, reason: &str) {
        self.settle(Err(CallError::Transport(reason.to_string())));
        let undo = {
            let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
            g.gone = true;
            g.undo.take()
        };
        if let Some(u) = undo {
            u();
        }
    }

    /// Waits up to `timeout` for the outcome (then abandons the call).
    pub fn result(&self, timeout: Duration) -> Result<Value, CallError> {
        let until = Instant::now() + timeout;
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        while g.outcome.is_none() {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                drop(g);
                self.abandon(&format!("no reply within {} ms", timeout.as_millis()));
                g = self.state.lock().unwrap_or_else(|p| p.into_inner());
                break;
            }
            g = self
                .done
                .wait_timeout(g, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        g.outcome
            .clone()
            .unwrap_or_else(|| Err(CallError::Transport("no outcome".into())))
    }
}

/// Carries requests to one backend, several in flight.
pub trait Channel: Send + Sync {
    /// Sends through the pending-request bookkeeping; `timeout` bounds the exchange.
    fn call(&self, msg: &Value, timeout: Duration) -> Arc<Call>;
    /// Sends the same bytes again outside that bookkeeping (a deliberate replay).
    fn replay(&self, msg: &Value, timeout: Duration) -> Arc<Call>;
    /// Sends a notification and never waits for its answer.
    fn notify(&self, msg: &Value) -> Result<(), String>;
    /// Ends the channel (a spawned server is reaped).
    fn close(&self);
}

/// Fails everything alike.
pub struct BrokenChannel(pub String);

impl Channel for BrokenChannel {
    fn call(&self, _: &Value, _: Duration) -> Arc<Call> {
        Call::failed(CallError::Transport(self.0.clone()))
    }
    fn replay(&self, msg: &Value, t: Duration) -> Arc<Call> {
        self.call(msg, t)
    }
    fn notify(&self, _: &Value) -> Result<(), String> {
        Err(self.0.clone())
    }
    fn close(&self) {}
}

/// What a client's HTTP exchanges need: the endpoint's TLS config and the
/// bearer token (OAuth: fetched once); `broken` says why no exchange can be had.
#[derive(Clone, Default)]
pub struct HttpTarget {
    pub tls: Option<Arc<ClientConfig>>,
    pub token: Option<String>,
    pub broken: Option<String>,
}

fn header_safe(v: &str) -> bool {
    !v.is_empty() && v.bytes().all(|b| (0x21..0x7f).contains(&b))
}

/// The credentials and trust for `endpoint` under the config's auth; an
/// OAuth token is fetched unless `fetched` gives the run's.
pub fn client_http_target(
    c: &ClientSettings,
    endpoint: &str,
    fetched: Option<&str>,
) -> Result<HttpTarget, ConfigError> {
    let broken = |why: String| HttpTarget {
        broken: Some(why),
        ..HttpTarget::default()
    };
    let url = match Url::parse(endpoint) {
        Ok(u) => u,
        Err(e) => return Ok(broken(e)),
    };
    let a = &c.auth;
    if a.profile == STRICT && a.mode != NONE && !url.https {
        return Ok(broken(format!(
            "profile strict refuses auth mode {} over plain HTTP",
            a.mode
        )));
    }
    if a.mode == MTLS && !url.https {
        return Ok(broken("auth mode mtls needs an https endpoint".into()));
    }
    let tls = if url.https || a.mode == OAUTH {
        Some(
            crate::tls::client_config(&a.tls)
                .map_err(|e| ConfigError::new(&c.file, &a.tls.field, e))?,
        )
    } else {
        None
    };
    let token = if a.mode == OAUTH {
        match fetched {
            Some(t) => Some(t.to_string()),
            None => {
                match crate::peer::fetch_token(a, tls.clone(), Duration::from_millis(c.timeout_ms))
                {
                    Ok(t) => Some(t),
                    Err(e) => return Ok(broken(format!("authentication failed: {e}"))),
                }
            }
        }
    } else {
        a.token.clone()
    };
    if let Some(t) = &token {
        if !header_safe(t) {
            return Ok(broken("the credential cannot be sent in a header".into()));
        }
    }
    Ok(HttpTarget {
        tls,
        token,
        broken: None,
    })
}

/// The channel of an HTTP target: broken when the target is.
pub fn http_channel(endpoint: &str, target: &HttpTarget) -> Box<dyn Channel> {
    if let Some(why) = &target.broken {
        return Box::new(BrokenChannel(why.clone()));
    }
    match HttpChannel::new(endpoint, target.token.clone(), target.tls.clone()) {
        Ok(c) => Box::new(c),
        Err(e) => Box::new(BrokenChannel(e)),
    }
}

/// How long a notification's answer is waited for in the background (then
/// its connection is dropped; the answer is never used).
pub const NOTIFY_LIMIT: Duration = Duration::from_secs(60);
const IDLE_CLIENTS: usize = 8;

/// POSTs JSON-RPC to one endpoint; each exchange in flight has its own
/// connection. Notifications go to the base URL's `/observe`.
pub struct HttpChannel {
    url: Url,
    observe: Url,
    token: Option<String>,
    tls: Option<Arc<ClientConfig>>,
    idle: Arc<Mutex<Vec<http::Client>>>,
    closed: Arc<AtomicBool>,
}

impl HttpChannel {
    /// A channel to `endpoint`'s intercept URL.
    pub fn new(
        endpoint: &str,
        token: Option<String>,
        tls: Option<Arc<ClientConfig>>,
    ) -> Result<HttpChannel, String> {
        let url = Url::parse(endpoint)?.intercept();
        let observe = url.with_path(&route_path(&url, "observe"));
        Ok(HttpChannel {
            url,
            observe,
            token,
            tls,
            idle: Arc::new(Mutex::new(Vec::new())),
            closed: Arc::new(AtomicBool::new(false)),
        })
    }

    /// The intercept URL.
    pub fn url(&self) -> &Url {
        &self.url
    }

    fn client(&self, timeout: Duration) -> http::Client {
        let mut c = self
            .idle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop()
            .unwrap_or_else(|| http::Client::new(&self.url, self.tls.clone(), timeout));
        c.timeout = timeout;
        c
    }

    fn give_back(idle: &Mutex<Vec<http::Client>>, closed: &AtomicBool, mut c: http::Client) {
        let mut g = idle.lock().unwrap_or_else(|p| p.into_inner());
        if closed.load(Ordering::SeqCst) || g.len() >= IDLE_CLIENTS {
            drop(g);
            c.close();
        } else {
            g.push(c);
        }
    }

    fn headers(&self) -> Vec<(String, String)> {
        let mut h = vec![
            ("Content-Type".to_string(), "application/json".to_string()),
            ("Accept".to_string(), "application/json".to_string()),
        ];
        if let Some(t) = &self.token {
            h.push(("Authorization".into(), format!("Bearer {t}")));
        }
        h
    }

    /// One POST of `msg` to a route of the endpoint's base (the endpoint
    /// without `/intercept`): `"capabilities"`, `"observe"`, or `""` for the
    /// endpoint itself. The status and the body, whatever the status.
    pub fn exchange_at(
        &self,
        route: &str,
        msg: &Value,
        timeout: Duration,
    ) -> Result<(u16, Vec<u8>), String> {
        let url = if route.is_empty() {
            self.url.clone()
        } else {
            self.url.with_path(&route_path(&self.url, route))
        };
        let mut c = self.client(timeout);
        let headers = self.headers();
        let h: Vec<(&str, &str)> = headers
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let answer = c.request("POST", &url, &h, ahp_sdk::json::encode(msg).as_bytes());
        HttpChannel::give_back(&self.idle, &self.closed, c);
        let a = answer.map_err(|e| format!("HTTP exchange failed: {e}"))?;
        Ok((a.status, a.body))
    }

    fn spawn_call(&self, msg: &Value, timeout: Duration) -> Arc<Call> {
        let call = Call::new();
        let mut c = self.client(timeout);
        let (url, headers) = (self.url.clone(), self.headers());
        let body = ahp_sdk::json::encode(msg).into_bytes();
        let (idle, closed, k) = (self.idle.clone(), self.closed.clone(), call.clone());
        let spawned = std::thread::Builder::new()
            .stack_size(4 << 20)
            .spawn(move || {
                let h: Vec<(&str, &str)> = headers
                    .iter()
                    .map(|(a, b)| (a.as_str(), b.as_str()))
                    .collect();
                let answer = c.request("POST", &url, &h, &body);
                HttpChannel::give_back(&idle, &closed, c);
                match answer {
                    Err(e) => k.fail(CallError::Transport(format!("HTTP exchange failed: {e}"))),
                    Ok(a) if a.status != 200 => {
                        k.fail(CallError::Transport(format!("HTTP status {}", a.status)))
                    }
                    Ok(a) => match ahp_sdk::json::parse(&a.body) {
                        Ok(v) => k.resolve(v),
                        Err(e) => k.fail(CallError::Malformed(format!(
                            "the response body is not strict JSON: {e}"
                        ))),
                    },
                }
            });
        if let Err(e) = spawned {
            call.fail(CallError::Transport(format!(
                "cannot start an exchange: {e}"
            )));
        }
        call
    }
}

/// The path of a route beside the intercept URL's.
fn route_path(url: &Url, route: &str) -> String {
    let (path, query) = match url.path.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (url.path.as_str(), None),
    };
    let base = path.strip_suffix("/intercept").unwrap_or(path);
    let mut p = format!("{}/{route}", base.trim_end_matches('/'));
    if let Some(q) = query {
        p = format!("{p}?{q}");
    }
    p
}

impl Channel for HttpChannel {
    fn call(&self, msg: &Value, timeout: Duration) -> Arc<Call> {
        self.spawn_call(msg, timeout)
    }

    /// Over HTTP every POST has its own answer: a replay is a call.
    fn replay(&self, msg: &Value, timeout: Duration) -> Arc<Call> {
        self.spawn_call(msg, timeout)
    }

    /// POSTs `msg` to `/observe`; whatever comes back, whenever, is dropped.
    fn notify(&self, msg: &Value) -> Result<(), String> {
        let mut c = http::Client::new(&self.observe, self.tls.clone(), NOTIFY_LIMIT);
        let (url, headers) = (self.observe.clone(), self.headers());
        let body = ahp_sdk::json::encode(msg).into_bytes();
        let closed = self.closed.clone();
        std::thread::Builder::new()
            .stack_size(4 << 20)
            .spawn(move || {
                let h: Vec<(&str, &str)> = headers
                    .iter()
                    .map(|(a, b)| (a.as_str(), b.as_str()))
                    .collect();
                match c.request("POST", &url, &h, &body) {
                    Ok(a) if [200, 202, 204].contains(&a.status) => {}
                    Ok(a) => log(
                        "client",
                        &format!("a notification was answered HTTP {} (ignored)", a.status),
                    ),
                    Err(e) if !closed.load(Ordering::SeqCst) => log(
                        "client",
                        &format!("a notification got no answer ({e}; ignored)"),
                    ),
                    Err(_) => {}
                }
                c.close();
            })
            .map(|_| ())
            .map_err(|e| format!("cannot send a notification: {e}"))
    }

    /// Drops the idle connections (exchanges in flight end at their deadline
    /// or with the process).
    fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let idle = std::mem::take(&mut *self.idle.lock().unwrap_or_else(|p| p.into_inner()));
        for mut c in idle {
            c.close();
        }
    }
}

/// Receives every frame no call waits for.
pub type Unsolicited = Box<dyn Fn(Value) + Send + Sync>;

#[derive(Default)]
struct Routes {
    pending: HashMap<String, Arc<Call>>,
    replays: HashMap<String, VecDeque<Arc<Call>>>,
    closed: Option<String>,
}

/// A spawned server speaking NDJSON in its own process group. Replies are
/// routed by id: to the pending call with that id, else to a replay of it,
/// else to the unsolicited hook. A line that is not strict JSON fails the
/// one pending call when there is exactly one, else it is dropped.
pub struct StdioChannel {
    child: Mutex<Child>,
    pgid: i32,
    stdin: Mutex<Option<ChildStdin>>,
    routes: Arc<Mutex<Routes>>,
    unsolicited: Arc<Mutex<Unsolicited>>,
    reader: Mutex<Option<JoinHandle<()>>>,
    closed: AtomicBool,
}

fn drop_stray(frame: Value) {
    let shown: String = ahp_sdk::json::encode(&frame).chars().take(200).collect();
    log(
        "client",
        &format!("dropped a frame no request waits for: {shown}"),
    );
}

impl StdioChannel {
    /// Spawns argv in dir in its own process group (stderr is inherited).
    pub fn start(argv: &[String], dir: &str) -> std::io::Result<StdioChannel> {
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| std::io::Error::other("an empty command"))?;
        let mut child = Command::new(program)
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .process_group(0)
            .spawn()?;
        let pgid = child.id() as i32;
        process::register(pgid);
        let stdout = child.stdout.take().expect("piped");
        let stdin = child.stdin.take();
        let routes: Arc<Mutex<Routes>> = Arc::default();
        let unsolicited: Arc<Mutex<Unsolicited>> = Arc::new(Mutex::new(Box::new(drop_stray)));
        let (r, u) = (routes.clone(), unsolicited.clone());
        let reader = std::thread::spawn(move || {
            let mut input = BufReader::with_capacity(64 << 10, stdout);
            loop {
                match crate::server::read_line(&mut input, MAX_RESPONSE) {
                    Ok(Some(Ok(l))) if l.iter().all(u8::is_ascii_whitespace) => {}
                    Ok(Some(Ok(l))) => {
                        route(&r, &u, ahp_sdk::json::parse(&l).map_err(|e| e.to_string()))
                    }
                    Ok(Some(Err(()))) => route(&r, &u, Err("the line is too long".into())),
                    Ok(None) | Err(_) => break,
                }
            }
            shut(&r, "the stdio server closed its stdout");
        });
        Ok(StdioChannel {
            child: Mutex::new(child),
            pgid,
            stdin: Mutex::new(stdin),
            routes,
            unsolicited,
            reader: Mutex::new(Some(reader)),
            closed: AtomicBool::new(false),
        })
    }

    /// The spawned server's process id (its group's id).
    pub fn pid(&self) -> i32 {
        self.pgid
    }

    /// Sets the hook every frame no call waits for goes to.
    pub fn set_unsolicited(&self, hook: Unsolicited) {
        *self.unsolicited.lock().unwrap_or_else(|p| p.into_inner()) = hook;
    }

    /// Whether the spawned server has exited (it stays unreaped until close).
    pub fn exited(&self) -> bool {
        // SAFETY: waitid with WNOWAIT only inspects the child's state.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let rc = libc::waitid(
                libc::P_PID,
                self.pgid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            );
            rc == 0 && info.si_pid() != 0
        }
    }

    fn write(&self, msg: &Value) -> Result<(), String> {
        let mut line = ahp_sdk::json::encode(msg).into_bytes();
        line.push(b'\n');
        let mut g = self.stdin.lock().unwrap_or_else(|p| p.into_inner());
        match g.as_mut() {
            Some(w) => w
                .write_all(&line)
                .and_then(|_| w.flush())
                .map_err(|_| "the server process is not reading its stdin".to_string()),
            None => Err("the channel is closed".into()),
        }
    }

    fn register(&self, msg: &Value, replay: bool) -> Arc<Call> {
        let call = Call::new();
        let key = id_key(msg.get("id"));
        {
            let mut r = self.routes.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(why) = &r.closed {
                call.fail(CallError::Transport(why.clone()));
            } else if key.is_empty() {
                call.fail(CallError::Transport(
                    "a request needs a string or number id".into(),
                ));
            } else if replay {
                r.replays
                    .entry(key.clone())
                    .or_default()
                    .push_back(call.clone());
            } else if r.pending.contains_key(&key) {
                call.fail(CallError::Transport(format!(
                    "a request with id {key} is already pending"
                )));
            } else {
                r.pending.insert(key.clone(), call.clone());
            }
        }
        if call.is_done() {
            return call;
        }
        let (routes, k, c) = (self.routes.clone(), key.clone(), Arc::downgrade(&call));
        call.on_abandon(move || {
            if let Some(c) = c.upgrade() {
                forget(&routes, &k, &c);
            }
        });
        if let Err(e) = self.write(msg) {
            forget(&self.routes, &key, &call);
            call.fail(CallError::Transport(e));
        }
        call
    }
}

fn forget(routes: &Mutex<Routes>, key: &str, call: &Arc<Call>) {
    let mut r = routes.lock().unwrap_or_else(|p| p.into_inner());
    if r.pending.get(key).is_some_and(|c| Arc::ptr_eq(c, call)) {
        r.pending.remove(key);
    }
    if let Some(q) = r.replays.get_mut(key) {
        q.retain(|c| !Arc::ptr_eq(c, call));
    }
}

fn route(routes: &Mutex<Routes>, hook: &Mutex<Unsolicited>, parsed: Result<Value, String>) {
    let frame = match parsed {
        Ok(v) => v,
        Err(e) => {
            let only = {
                let mut r = routes.lock().unwrap_or_else(|p| p.into_inner());
                if r.pending.len() == 1 {
                    let k = r.pending.keys().next().cloned().unwrap_or_default();
                    r.pending.remove(&k)
                } else {
                    None
                }
            };
            match only {
                Some(c) => {
                    log(
                        "client",
                        &format!(
                            "a line that is not strict JSON, taken as the one pending call's: {e}"
                        ),
                    );
                    c.fail(CallError::Malformed(format!(
                        "the response line is not strict JSON: {e}"
                    )));
                }
                None => log(
                    "client",
                    &format!("dropped a line that is not strict JSON: {e}"),
                ),
            }
            return;
        }
    };
    let key = id_key(frame.get("id"));
    let call = {
        let mut r = routes.lock().unwrap_or_else(|p| p.into_inner());
        if key.is_empty() {
            None
        } else if let Some(c) = r.pending.remove(&key) {
            Some(c)
        } else {
            r.replays.get_mut(&key).and_then(VecDeque::pop_front)
        }
    };
    match call {
        Some(c) => c.resolve(frame),
        None => (hook.lock().unwrap_or_else(|p| p.into_inner()))(frame),
    }
}

fn shut(routes: &Mutex<Routes>, reason: &str) {
    let waiting: Vec<Arc<Call>> = {
        let mut r = routes.lock().unwrap_or_else(|p| p.into_inner());
        r.closed = Some(reason.to_string());
        let mut w: Vec<Arc<Call>> = r.pending.drain().map(|(_, c)| c).collect();
        for (_, q) in r.replays.drain() {
            w.extend(q);
        }
        w
    };
    for c in waiting {
        c.fail(CallError::Transport(reason.to_string()));
    }
}

impl Channel for StdioChannel {
    /// Registers the id as pending and writes the line (the deadline is the caller's wait).
    fn call(&self, msg: &Value, _: Duration) -> Arc<Call> {
        self.register(msg, false)
    }

    /// Writes the line again, its reply queued apart.
    fn replay(&self, msg: &Value, _: Duration) -> Arc<Call> {
        self.register(msg, true)
    }

    fn notify(&self, msg: &Value) -> Result<(), String> {
        self.write(msg)
    }

    /// Closes stdin, waits briefly, then kills the whole process group and reaps it.
    fn close(&self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        drop(self.stdin.lock().unwrap_or_else(|p| p.into_inner()).take());
        let until = Instant::now() + Duration::from_secs(2);
        while !self.exited() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        process::kill_group(self.pgid);
        let _ = self.child.lock().unwrap_or_else(|p| p.into_inner()).wait();
        process::unregister(self.pgid);
        if let Some(h) = self.reader.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let until = Instant::now() + Duration::from_secs(2);
            while !h.is_finished() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(5));
            }
            if h.is_finished() {
                let _ = h.join();
            }
        }
    }
}

impl Drop for StdioChannel {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_first_outcome_wins_and_a_deadline_abandons() {
        let c = Call::new();
        c.resolve(json!(1));
        c.fail(CallError::Transport("late".into()));
        assert_eq!(c.result(Duration::from_millis(1)), Ok(json!(1)));
        let c = Call::new();
        let undone = Arc::new(AtomicBool::new(false));
        let u = undone.clone();
        c.on_abandon(move || u.store(true, Ordering::SeqCst));
        assert!(matches!(
            c.result(Duration::from_millis(10)),
            Err(CallError::Transport(_))
        ));
        assert!(undone.load(Ordering::SeqCst));
        c.resolve(json!(2));
        assert!(c.result(Duration::from_millis(1)).is_err());
    }

    #[test]
    fn routes_beside_the_intercept_url() {
        let u = Url::parse("http://127.0.0.1:1/intercept").unwrap();
        assert_eq!(route_path(&u, "observe"), "/observe");
        let u = Url::parse("http://127.0.0.1:1/base").unwrap().intercept();
        assert_eq!(route_path(&u, "capabilities"), "/base/capabilities");
    }
}
