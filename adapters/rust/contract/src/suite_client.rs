//! A suite client process past core: the connection to the run's server
//! (over HTTP the endpoints the config gives; over stdio the server spawned
//! here, its pid in `childPidFile`, its readiness awaited), the control
//! calls and marks, uploads and content sources, notifications followed by
//! `/wait-observed`, other backends, the row loop and the report. What a row
//! does is the suite's: a [`SuiteRows`].

use std::collections::HashMap;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ahp_sdk::schemas::{Schemas, CONTENT_UPLOAD_RECEIPT};
use serde_json::{json, Map, Value};

use crate::channel::{
    client_http_target, http_channel, BrokenChannel, Call, Channel, HttpChannel, HttpTarget,
    StdioChannel,
};
use crate::config::{read_json, Scenario, TlsFiles};
use crate::files::write_json_atomic;
use crate::peer::id_key;
use crate::suite_config::{
    ContentSource, OtherSuite, SuiteClientSettings, UploadRoute, UNREACHABLE,
};
use crate::suite_control::ControlClient;
use crate::upload::send_upload;
use crate::{log, path, Failure};
use ahp_sdk::chain::{body_refs, rebind_refs};

/// How long a spawned stdio server may take to write its readiness file.
pub const READY_LIMIT: Duration = Duration::from_secs(30);

/// Why a row did not complete.
#[derive(Debug, Clone, PartialEq)]
pub enum RowError {
    /// the row could not run to its end: `failed` with the message
    Failed(String),
    /// the row needs what this client does not implement: `unsupported`
    Unsupported(String),
}

impl std::fmt::Display for RowError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RowError::Failed(s) | RowError::Unsupported(s) => f.write_str(s),
        }
    }
}

/// `RowError::Failed`.
pub fn failed(msg: impl Into<String>) -> RowError {
    RowError::Failed(msg.into())
}

/// `RowError::Unsupported`.
pub fn unsupported(msg: impl Into<String>) -> RowError {
    RowError::Unsupported(msg.into())
}

#[derive(Default)]
struct StrayState {
    expected: HashMap<String, Sender<()>>,
    current: Option<Sender<Value>>,
}

/// Frames no call waits for (stdio): an `emit` step announces the id it
/// expects; an exchange may take the next frame whatever it is; every other
/// stray frame is dropped with a note.
#[derive(Default)]
pub struct Strays {
    state: Mutex<StrayState>,
}

impl Strays {
    /// Signals once a frame with this id arrived (and was dropped).
    pub fn expect(&self, id: &Value) -> Receiver<()> {
        let (tx, rx) = mpsc::channel();
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .expected
            .insert(ahp_sdk::json::encode(id), tx);
        rx
    }

    /// The next stray frame, whatever its id.
    pub fn take_next(&self) -> Receiver<Value> {
        let (tx, rx) = mpsc::channel();
        self.state.lock().unwrap_or_else(|p| p.into_inner()).current = Some(tx);
        rx
    }

    /// Forgets a `take_next` that is no longer waited for.
    pub fn clear_next(&self) {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).current = None;
    }

    /// The channel's hook.
    pub fn frame(&self, frame: Value) {
        let key = frame
            .get("id")
            .map(ahp_sdk::json::encode)
            .unwrap_or_else(|| "null".into());
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(tx) = g.current.take() {
            drop(g);
            let _ = tx.send(frame);
            return;
        }
        match g.expected.remove(&key) {
            Some(tx) => {
                let _ = tx.send(());
            }
            None => log(
                "client",
                &format!("dropped an unsolicited frame (id {key})"),
            ),
        }
    }
}

/// The answer of [`SuiteClient::exchange_at`].
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// no body (over HTTP)
    Empty,
    Parsed(Value),
    /// a body or line that is not strict JSON
    Malformed(String),
}

/// One suite client run against one server.
pub struct SuiteClient {
    pub settings: SuiteClientSettings,
    pub schemas: Schemas,
    /// the run's server
    pub channel: Arc<dyn Channel>,
    /// the same channel when it is HTTP (for exchanges whose status matters)
    pub http: Option<Arc<HttpChannel>>,
    pub control: Option<ControlClient>,
    /// the config's `upload.endpoint`, else the readiness file's `uploadEndpoint`
    pub upload_url: Option<String>,
    /// why nothing can run: every row fails with it
    pub problem: Option<String>,
    pub stdio: bool,
    pub strays: Arc<Strays>,
    /// the run's HTTP credentials (other backends reuse them)
    pub target: HttpTarget,
    backends: HashMap<String, Arc<dyn Channel>>,
    /// upload alias -> receiver ref
    pub aliases: HashMap<String, String>,
    pub sources: HashMap<String, ContentSource>,
    /// the report's `contentUploads`
    pub content_uploads: Vec<Value>,
    /// intercepts sent per request id (its `id_key`) through the run's server
    pub sends: HashMap<String, usize>,
    /// notifications sent per event id through the run's server
    pub observed: HashMap<String, usize>,
}

impl SuiteClient {
    /// Connects to the run's server. A server that cannot be had leaves
    /// `problem` set (every row fails with it); unusable certificate material
    /// is a config error.
    pub fn open(settings: SuiteClientSettings, schemas: Schemas) -> Result<SuiteClient, Failure> {
        let sources = settings
            .content_sources
            .iter()
            .map(|s| (s.reference.clone(), s.clone()))
            .collect();
        let mut c = SuiteClient {
            upload_url: settings.upload.as_ref().and_then(|u| u.endpoint.clone()),
            stdio: settings.base.transport == "stdio",
            settings,
            schemas,
            channel: Arc::new(BrokenChannel("not connected".into())),
            http: None,
            control: None,
            problem: None,
            strays: Arc::default(),
            target: HttpTarget::default(),
            backends: HashMap::new(),
            aliases: HashMap::new(),
            sources,
            content_uploads: Vec::new(),
            sends: HashMap::new(),
            observed: HashMap::new(),
        };
        if c.stdio {
            c.open_stdio();
            return Ok(c);
        }
        let control = c.settings.control_endpoint.clone().unwrap_or_default();
        match ControlClient::new(&control) {
            Ok(cc) => c.control = Some(cc),
            Err(e) => c.problem = Some(e),
        }
        let endpoint = c.settings.base.endpoint.clone().unwrap_or_default();
        c.target = client_http_target(&c.settings.base, &endpoint, None)?;
        match &c.target.broken {
            Some(why) => c.channel = Arc::new(BrokenChannel(why.clone())),
            None => match HttpChannel::new(&endpoint, c.target.token.clone(), c.target.tls.clone())
            {
                Ok(h) => {
                    let h = Arc::new(h);
                    c.http = Some(h.clone());
                    c.channel = h;
                }
                Err(e) => c.channel = Arc::new(BrokenChannel(e)),
            },
        }
        Ok(c)
    }

    fn open_stdio(&mut self) {
        let base = &self.settings.base;
        let server_config = base.server_config.clone().unwrap_or_default();
        let ready_file = read_json(std::path::Path::new(&server_config))
            .ok()
            .and_then(|v| {
                v.get("readinessFile")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            });
        let Some(ready_file) = ready_file else {
            self.fail_all("serverConfig: the server config has no readinessFile");
            return;
        };
        let mut argv = base.server_command.clone();
        argv.push("--config".into());
        argv.push(server_config);
        let sc = match StdioChannel::start(&argv, base.server_cwd.as_deref().unwrap_or(".")) {
            Ok(sc) => sc,
            Err(e) => {
                self.fail_all(&format!("cannot start the stdio server: {e}"));
                return;
            }
        };
        let strays = self.strays.clone();
        sc.set_unsolicited(Box::new(move |f| strays.frame(f)));
        let pid = sc.pid();
        let sc = Arc::new(sc);
        self.channel = sc.clone();
        if let Err(e) = write_json_atomic(&self.settings.child_pid_file, &json!({"pid": pid})) {
            self.problem = Some(format!("childPidFile: {e}"));
            return;
        }
        let until = Instant::now() + READY_LIMIT;
        let mut ready = None;
        while Instant::now() < until {
            if let Ok(v) = read_json(std::path::Path::new(&ready_file)) {
                if v.get("controlEndpoint").and_then(Value::as_str).is_some() {
                    ready = Some(v);
                    break;
                }
            }
            if sc.exited() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let Some(ready) = ready else {
            self.problem =
                Some("the stdio server wrote no readiness file in time (or exited)".into());
            return;
        };
        if self.upload_url.is_none() {
            self.upload_url = ready
                .get("uploadEndpoint")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        let control = ready["controlEndpoint"].as_str().unwrap_or_default();
        match ControlClient::new(control) {
            Ok(cc) => self.control = Some(cc),
            Err(e) => self.problem = Some(e),
        }
    }

    fn fail_all(&mut self, why: &str) {
        self.problem = Some(why.to_string());
        self.channel = Arc::new(BrokenChannel(why.to_string()));
    }

    /// The config's `timeoutMs`.
    pub fn timeout(&self) -> Duration {
        self.settings.timeout()
    }

    /// A control call whose answer is `{"ok": true}`.
    pub fn post(&self, path: &str, body: Value) -> Result<(), RowError> {
        let Some(c) = &self.control else {
            return Err(failed("no control listener"));
        };
        c.post(path, &body).map_err(failed)
    }

    /// `POST /mark {scenario, kind, id}`.
    pub fn mark(&self, scenario: &str, kind: &str, id: &str) -> Result<(), RowError> {
        self.post(
            "/mark",
            json!({"scenario": scenario, "kind": kind, "id": id}),
        )
    }

    /// The server's `GET /receipts`.
    pub fn receipts(&self) -> Option<Value> {
        let c = self.control.as_ref()?;
        match c.call("GET", "/receipts", None) {
            Ok(v) => Some(v),
            Err(e) => {
                log("client", &format!("GET /receipts: {e}"));
                None
            }
        }
    }

    /// Uploads `data` declaring `size` and `sha` over `route`: the status,
    /// and the receiver's receipt on a 201 (checked against the bytes sent).
    pub fn upload(
        &self,
        route: &UploadRoute,
        data: &[u8],
        size: u64,
        sha: &str,
    ) -> Result<(u16, Option<Map<String, Value>>), RowError> {
        let endpoint = route
            .endpoint
            .clone()
            .or_else(|| self.upload_url.clone())
            .ok_or_else(|| failed("no upload endpoint (config upload.endpoint or readiness)"))?;
        let token = route.token_env.as_ref().and_then(|name| {
            let t = std::env::var(name).ok().filter(|t| !t.is_empty());
            if t.is_none() {
                log(
                    "client",
                    &format!("${name} is not set: uploading without a credential"),
                );
            }
            t
        });
        let tls = if endpoint.starts_with("https:") {
            let files = TlsFiles {
                ca_file: route.ca_file.clone(),
                field: "upload.tls".into(),
                ..TlsFiles::default()
            };
            Some(
                crate::tls::client_config(&files)
                    .map_err(|e| failed(format!("upload: tls.caFile: {e}")))?,
            )
        } else {
            None
        };
        let answer = send_upload(
            &endpoint,
            data,
            size,
            sha,
            token.as_deref(),
            route.timeout,
            tls,
        )
        .map_err(|e| failed(format!("upload: {e}")))?;
        if answer.status != 201 {
            return Ok((answer.status, None));
        }
        let receipt = answer
            .receipt()
            .filter(|r| {
                self.schemas
                    .check(CONTENT_UPLOAD_RECEIPT, &Value::Object(r.clone()))
                    .is_none()
            })
            .ok_or_else(|| failed("upload: a 201 without a valid {ref, size, sha256} receipt"))?;
        if receipt.get("size").and_then(Value::as_u64) != Some(data.len() as u64)
            || receipt.get("sha256").and_then(Value::as_str)
                != Some(crate::upload::sha256_hex(data).as_str())
        {
            return Err(failed(
                "upload: the receipt's size or sha256 is not the bytes sent",
            ));
        }
        Ok((201, Some(receipt)))
    }

    /// `msg` with its event's body refs rebound from upload aliases to the
    /// receiver's refs; a content source no step uploaded is uploaded first
    /// (and listed in `contentUploads`).
    pub fn prepare(&mut self, msg: &Value) -> Result<Value, RowError> {
        let mut out = msg.clone();
        let Some(items) = path(msg, &["params", "event", "items"]) else {
            return Ok(out);
        };
        for r in body_refs(items) {
            if self.aliases.contains_key(&r) {
                continue;
            }
            let Some(source) = self.sources.get(&r).cloned() else {
                continue;
            };
            let route = self
                .settings
                .upload
                .clone()
                .ok_or_else(|| failed("the config has no upload block for a content source"))?;
            let (status, receipt) =
                self.upload(&route, &source.data, source.size, &source.sha256)?;
            let Some(receipt) = receipt else {
                return Err(failed(format!(
                    "content source {}: upload answered {status}",
                    ahp_sdk::json::encode(&Value::String(r))
                )));
            };
            let to = receipt["ref"].as_str().unwrap_or_default().to_string();
            self.aliases.insert(r.clone(), to);
            self.content_uploads.push(json!({
                "sourceRef": r,
                "descriptor": receipt,
                "method": msg.get("method").cloned().unwrap_or(Value::Null),
                "eventId": path(msg, &["params", "event", "id"]).cloned().unwrap_or(Value::Null),
            }));
        }
        let rebound = rebind_refs(items, &self.aliases);
        if let Some(event) = out
            .get_mut("params")
            .and_then(|p| p.get_mut("event"))
            .and_then(Value::as_object_mut)
        {
            event.insert("items".into(), rebound);
        }
        Ok(out)
    }

    /// `msg` when it satisfies the canonical schema, else the row fails.
    pub fn checked(&self, msg: Value, schema: &str) -> Result<Value, RowError> {
        match self.schemas.check(schema, &msg) {
            None => Ok(msg),
            Some(p) => Err(failed(format!("the message to send is invalid: {p}"))),
        }
    }

    /// The channel of a backend name: None for the run's server (every name
    /// but `unreachable`, which the config's `backends` defines).
    pub fn channel_for(&mut self, backend: &str) -> Option<Arc<dyn Channel>> {
        if backend != UNREACHABLE {
            return None;
        }
        if let Some(ch) = self.backends.get(backend) {
            return Some(ch.clone());
        }
        let ch: Arc<dyn Channel> = match self.settings.backends.get(backend) {
            None => Arc::new(BrokenChannel(
                "the config names no backend unreachable (backends.unreachable)".into(),
            )),
            Some(b) if self.stdio => {
                if b.command.is_empty() {
                    Arc::new(BrokenChannel(
                        "the backend has no command (a stdio run needs one)".into(),
                    ))
                } else {
                    let dir = self
                        .settings
                        .base
                        .server_cwd
                        .clone()
                        .unwrap_or_else(|| ".".into());
                    match StdioChannel::start(&b.command, &dir) {
                        Ok(sc) => Arc::new(sc),
                        Err(e) => Arc::new(BrokenChannel(format!("backend {backend}: {e}"))),
                    }
                }
            }
            Some(b) => match &b.endpoint {
                None => Arc::new(BrokenChannel(
                    "the backend has no endpoint (an HTTP run needs one)".into(),
                )),
                Some(e) => {
                    match client_http_target(&self.settings.base, e, self.target.token.as_deref()) {
                        Ok(t) => Arc::from(http_channel(e, &t)),
                        Err(err) => Arc::new(BrokenChannel(format!("backend {backend}: {err}"))),
                    }
                }
            },
        };
        self.backends.insert(backend.to_string(), ch.clone());
        Some(ch)
    }

    /// Sends a request: through `ch` when given, else through the run's
    /// server (counted in `sends`); `bypass` replays it outside the
    /// pending-request bookkeeping.
    pub fn send(
        &mut self,
        msg: &Value,
        bypass: bool,
        timeout: Duration,
        ch: Option<&Arc<dyn Channel>>,
    ) -> Arc<Call> {
        if let Some(ch) = ch {
            return ch.call(msg, timeout);
        }
        *self.sends.entry(id_key(msg.get("id"))).or_default() += 1;
        if bypass {
            self.channel.replay(msg, timeout)
        } else {
            self.channel.call(msg, timeout)
        }
    }

    /// How many requests with this id went to the run's server.
    pub fn sent(&self, id: &Value) -> usize {
        self.sends.get(&id_key(Some(id))).copied().unwrap_or(0)
    }

    /// Sends a notification and never waits for its answer; through the
    /// run's server it is followed by `POST /wait-observed` (both
    /// transports), so its receipt precedes whatever comes next. Through
    /// another backend a failed send is only noted.
    pub fn notify(&mut self, msg: &Value, ch: Option<&Arc<dyn Channel>>) -> Result<(), RowError> {
        if let Some(ch) = ch {
            if let Err(e) = ch.notify(msg) {
                log(
                    "client",
                    &format!("a notification to another backend was not delivered: {e}"),
                );
            }
            return Ok(());
        }
        self.channel
            .notify(msg)
            .map_err(|e| failed(format!("notification: {e}")))?;
        let event_id = path(msg, &["params", "event", "id"])
            .cloned()
            .unwrap_or(Value::Null);
        let n = self.observed.entry(id_key(Some(&event_id))).or_default();
        *n += 1;
        let n = *n;
        self.post("/wait-observed", json!({"eventId": event_id, "count": n}))
    }

    /// Sends `msg` to the run's server outside the pending-request
    /// bookkeeping and takes what comes back: over HTTP one POST to `route`
    /// beside the endpoint (`""`: the endpoint itself; `"observe"`,
    /// `"capabilities"`) and its status and body, whatever the status; over
    /// stdio the line is written and the next frame no call waits for is the
    /// answer, whatever its id (status 0).
    pub fn exchange_at(
        &self,
        route: &str,
        msg: &Value,
        timeout: Duration,
    ) -> Result<(u16, Answer), RowError> {
        if let Some(h) = &self.http {
            let (status, body) = h.exchange_at(route, msg, timeout).map_err(failed)?;
            if body.is_empty() {
                return Ok((status, Answer::Empty));
            }
            return Ok((
                status,
                match ahp_sdk::json::parse(&body) {
                    Ok(v) => Answer::Parsed(v),
                    Err(e) => Answer::Malformed(e.to_string()),
                },
            ));
        }
        if !self.stdio {
            // a broken HTTP target: say why
            return match self.channel.notify(msg) {
                Err(e) => Err(failed(e)),
                Ok(()) => Err(failed("no HTTP channel to the server")),
            };
        }
        let next = self.strays.take_next();
        if let Err(e) = self.channel.notify(msg) {
            self.strays.clear_next();
            return Err(failed(e));
        }
        match next.recv_timeout(timeout) {
            Ok(v) => Ok((0, Answer::Parsed(v))),
            Err(_) => {
                self.strays.clear_next();
                Err(failed("no answer line in time"))
            }
        }
    }

    /// Closes the control connection, every backend and the run's channel.
    pub fn close(&mut self) {
        if let Some(c) = &self.control {
            c.close();
        }
        for ch in self.backends.values() {
            ch.close();
        }
        self.channel.close();
    }
}

/// A suite's client side: what one row does.
pub trait SuiteRows {
    /// Once, before the first row (a discovery, say).
    fn begin(&mut self, _client: &mut SuiteClient) {}
    /// The row's `actual`.
    fn row(&mut self, client: &mut SuiteClient, row: &Scenario) -> Result<Value, RowError>;
    /// The report's keys besides `language`, `results` and `receipts`
    /// (default: `contentUploads`).
    fn report_extra(&self, client: &SuiteClient, report: &mut Map<String, Value>) {
        report.insert(
            "contentUploads".into(),
            Value::Array(client.content_uploads.clone()),
        );
    }
}

/// A result entry.
pub fn result(id: &str, outcome: Result<Value, RowError>) -> Value {
    match outcome {
        Ok(actual) => json!({"id": id, "status": "completed", "actual": actual}),
        Err(RowError::Unsupported(why)) => json!({"id": id, "status": "unsupported", "error": why}),
        Err(RowError::Failed(why)) => json!({"id": id, "status": "failed", "error": why}),
    }
}

/// One row: a row restricted by `transports` to another transport is
/// unsupported, a client with a `problem` fails it, else the suite runs it.
pub fn run_row(client: &mut SuiteClient, rows: &mut dyn SuiteRows, row: &Scenario) -> Value {
    if let Some(Value::Array(ts)) = row.raw.get("transports") {
        let transport = client.settings.base.transport.as_str();
        if !ts.iter().any(|t| t.as_str() == Some(transport)) {
            let names: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
            return result(
                &row.id,
                Err(unsupported(format!(
                    "the scenario runs only over {}",
                    names.join(", ")
                ))),
            );
        }
    }
    if let Some(p) = &client.problem {
        return result(&row.id, Err(failed(p.clone())));
    }
    let outcome = rows.row(client, row);
    if let Err(RowError::Failed(why)) = &outcome {
        log("client", &format!("{}: {why}", row.id));
    }
    result(&row.id, outcome)
}

/// Writes a report `{"language", "results", ...extra}`.
pub fn write_report(
    file: &str,
    language: &str,
    results: Vec<Value>,
    extra: Map<String, Value>,
) -> Result<(), Failure> {
    let mut report = Map::new();
    report.insert("language".into(), json!(language));
    report.insert("results".into(), Value::Array(results));
    report.extend(extra);
    write_json_atomic(file, &Value::Object(report)).map_err(Failure::Other)
}

/// The whole client role of an implemented suite: connect, run every row in
/// file order, fetch the receipts before closing, write the report, exit 0.
pub fn run_suite_client(
    settings: SuiteClientSettings,
    schemas: Schemas,
    rows: &mut dyn SuiteRows,
) -> Result<i32, Failure> {
    let scenarios = settings.base.scenarios.clone();
    let (report_file, language) = (
        settings.base.report_file.clone(),
        settings.base.language.clone(),
    );
    let mut client = SuiteClient::open(settings, schemas)?;
    let mut results = Vec::with_capacity(scenarios.len());
    let mut extra = Map::new();
    if client.problem.is_none() {
        rows.begin(&mut client);
    }
    for row in &scenarios {
        results.push(run_row(&mut client, rows, row));
    }
    rows.report_extra(&client, &mut extra);
    if let Some(r) = client.receipts() {
        extra.insert("receipts".into(), r);
    }
    client.close();
    write_report(&report_file, &language, results, extra)?;
    Ok(0)
}

/// The client role for a suite this binary does not implement: every row
/// `unsupported`, naming the suite.
pub fn report_other(other: &OtherSuite) -> Result<i32, Failure> {
    let why = format!(
        "suite {} is not implemented by ahp-rust",
        ahp_sdk::json::encode(&Value::String(other.suite.clone()))
    );
    let results = other
        .scenarios
        .iter()
        .map(|row| result(&row.id, Err(unsupported(why.clone()))))
        .collect();
    let mut extra = Map::new();
    extra.insert("contentUploads".into(), json!([]));
    write_report(&other.report_file, &other.language, results, extra)?;
    Ok(0)
}
