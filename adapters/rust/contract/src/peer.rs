//! A client's peer: an HTTP endpoint with its credentials (one keep-alive
//! connection), or a stdio server it spawned in its own process group; and
//! OAuth token acquisition.

use std::collections::HashSet;
use std::io::{BufReader, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::ClientConfig;
use serde_json::Value;

use crate::config::{ClientAuth, ClientSettings, MTLS, NONE, OAUTH, STRICT};
use crate::http::{self, Url, MAX_RESPONSE};
use crate::{process, Failure};

/// Why an exchange gave no usable response.
#[derive(Debug, Clone, PartialEq)]
pub enum ExchangeError {
    /// no response could be had: the row failed
    Transport(String),
    /// a response arrived but is not strict JSON: a rejection
    Malformed(String),
}

/// Sends one request and returns its parsed response.
pub trait Peer {
    fn exchange(&mut self, request: &Value) -> Result<Value, ExchangeError>;
    fn close(&mut self);
}

/// Fails every exchange alike (no connection can be had).
pub struct BrokenPeer(pub String);

impl Peer for BrokenPeer {
    fn exchange(&mut self, _: &Value) -> Result<Value, ExchangeError> {
        Err(ExchangeError::Transport(self.0.clone()))
    }
    fn close(&mut self) {}
}

/// The peer a client config names. A peer that cannot be had fails every row
/// alike; unusable certificate material is a config error.
pub fn new_peer(c: &ClientSettings) -> Result<Box<dyn Peer>, Failure> {
    let timeout = Duration::from_millis(c.timeout_ms);
    if c.transport == "stdio" {
        let mut argv = c.server_command.clone();
        argv.push("--config".into());
        argv.push(c.server_config.clone().unwrap_or_default());
        return Ok(
            match StdioPeer::start(&argv, c.server_cwd.as_deref().unwrap_or("."), timeout) {
                Ok(p) => Box::new(p),
                Err(e) => Box::new(BrokenPeer(format!("cannot start the stdio server: {e}"))),
            },
        );
    }
    let endpoint = c.endpoint.as_deref().unwrap_or("");
    let url = Url::parse(endpoint)
        .map_err(|e| crate::config::ConfigError::new(&c.file, "endpoint", e))?
        .intercept();
    let a = &c.auth;
    if a.profile == STRICT && a.mode != NONE && !url.https {
        return Ok(Box::new(BrokenPeer(format!(
            "profile strict refuses auth mode {} over plain HTTP",
            a.mode
        ))));
    }
    if a.mode == MTLS && !url.https {
        return Ok(Box::new(BrokenPeer(
            "auth mode mtls needs an https endpoint".into(),
        )));
    }
    let tls = if url.https || a.mode == OAUTH {
        Some(
            crate::tls::client_config(&a.tls)
                .map_err(|e| crate::config::ConfigError::new(&c.file, &a.tls.field, e))?,
        )
    } else {
        None
    };
    let token = if a.mode == OAUTH {
        match fetch_token(a, tls.clone(), timeout) {
            Ok(t) => Some(t),
            Err(e) => return Ok(Box::new(BrokenPeer(format!("authentication failed: {e}")))),
        }
    } else {
        a.token.clone()
    };
    if let Some(t) = &token {
        if !header_safe(t) {
            return Ok(Box::new(BrokenPeer(
                "the credential cannot be sent in a header".into(),
            )));
        }
    }
    Ok(Box::new(HttpPeer {
        client: http::Client::new(&url, tls, timeout),
        url,
        token,
    }))
}

fn header_safe(v: &str) -> bool {
    !v.is_empty() && v.bytes().all(|b| (0x21..0x7f).contains(&b))
}

/// POSTs JSON-RPC to one endpoint over one keep-alive connection.
pub struct HttpPeer {
    client: http::Client,
    url: Url,
    token: Option<String>,
}

impl Peer for HttpPeer {
    fn exchange(&mut self, request: &Value) -> Result<Value, ExchangeError> {
        let body = ahp_sdk::json::encode(request);
        let bearer = self.token.as_ref().map(|t| format!("Bearer {t}"));
        let mut headers = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json"),
        ];
        if let Some(b) = &bearer {
            headers.push(("Authorization", b.as_str()));
        }
        let answer = self
            .client
            .request("POST", &self.url, &headers, body.as_bytes())
            .map_err(ExchangeError::Transport)?;
        if answer.status != 200 {
            return Err(ExchangeError::Transport(format!(
                "HTTP status {}",
                answer.status
            )));
        }
        ahp_sdk::json::parse(&answer.body).map_err(|e| {
            ExchangeError::Malformed(format!("the response body is not strict JSON: {e}"))
        })
    }

    fn close(&mut self) {
        self.client.close();
    }
}

/// The OAuth client-credentials grant, once: a form POST, redirects refused
/// (a 3xx is a failure), HTTPS required in profile strict.
pub fn fetch_token(
    a: &ClientAuth,
    tls: Option<Arc<ClientConfig>>,
    timeout: Duration,
) -> Result<String, String> {
    let endpoint = a.token_endpoint.as_deref().unwrap_or("");
    let url = Url::parse(endpoint)
        .map_err(|_| "auth.tokenEndpoint must be an http(s) URL".to_string())?;
    if a.profile == STRICT && !url.https {
        return Err("profile strict needs an https token endpoint".into());
    }
    let body = http::form(&[
        ("grant_type", "client_credentials"),
        ("client_id", &a.client_id),
        ("client_secret", &a.client_secret),
        ("audience", &a.audience),
    ]);
    let mut client = http::Client::new(&url, tls, timeout);
    let answer = client.request(
        "POST",
        &url,
        &[
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Accept", "application/json"),
        ],
        body.as_bytes(),
    );
    client.close();
    let answer = answer.map_err(|e| format!("token endpoint unreachable: {e}"))?;
    if (300..400).contains(&answer.status) {
        return Err(format!(
            "the token endpoint answered HTTP {} (redirects are never followed)",
            answer.status
        ));
    }
    if answer.status != 200 {
        return Err(format!(
            "the token endpoint answered HTTP {}",
            answer.status
        ));
    }
    let v = ahp_sdk::json::parse(&answer.body)
        .map_err(|_| "the token endpoint's answer is not strict JSON".to_string())?;
    let token = crate::path(&v, &["access_token"])
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = crate::path(&v, &["token_type"])
        .and_then(Value::as_str)
        .unwrap_or("");
    if token.is_empty() {
        return Err("the token endpoint's answer has no access_token".into());
    }
    if !kind.eq_ignore_ascii_case("bearer") {
        return Err("the token endpoint's answer is not a Bearer token".into());
    }
    Ok(token.to_string())
}

enum Line {
    Data(Result<Vec<u8>, ()>),
    End,
}

/// Talks NDJSON to a server it spawned in its own process group.
pub struct StdioPeer {
    child: Child,
    pgid: i32,
    stdin: Option<ChildStdin>,
    lines: Receiver<Line>,
    timeout: Duration,
    gone: bool,
    closed: bool,
    /// ids of requests given up at their deadline: a late reply is dropped
    abandoned: HashSet<String>,
}

/// A JSON-RPC id as a key ("" for one that is neither a string nor a number).
pub fn id_key(id: Option<&Value>) -> String {
    match id {
        Some(v @ (Value::String(_) | Value::Number(_))) => ahp_sdk::json::encode(v),
        _ => String::new(),
    }
}

impl StdioPeer {
    /// Spawns argv in dir in a new process group.
    pub fn start(argv: &[String], dir: &str, timeout: Duration) -> std::io::Result<StdioPeer> {
        let mut child = Command::new(&argv[0])
            .args(&argv[1..])
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
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::with_capacity(64 << 10, stdout);
            loop {
                match crate::server::read_line(&mut r, MAX_RESPONSE) {
                    Ok(Some(l)) => {
                        if tx.send(Line::Data(l)).is_err() {
                            return;
                        }
                    }
                    Ok(None) | Err(_) => {
                        let _ = tx.send(Line::End);
                        return;
                    }
                }
            }
        });
        Ok(StdioPeer {
            child,
            pgid,
            stdin,
            lines: rx,
            timeout,
            gone: false,
            closed: false,
            abandoned: HashSet::new(),
        })
    }

    /// The spawned server's process id (its group's id).
    pub fn pid(&self) -> i32 {
        self.pgid
    }

    fn exited(&self) -> bool {
        // SAFETY: waitid with WNOWAIT only inspects the child's state (it stays
        // unreaped, so its group id cannot be reused before the kill).
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
}

impl Peer for StdioPeer {
    fn exchange(&mut self, request: &Value) -> Result<Value, ExchangeError> {
        if self.gone {
            return Err(ExchangeError::Transport(
                "the stdio server closed its stdout".into(),
            ));
        }
        let key = id_key(request.get("id"));
        let mut line = ahp_sdk::json::encode(request).into_bytes();
        line.push(b'\n');
        let written = match self.stdin.as_mut() {
            Some(w) => w.write_all(&line).and_then(|_| w.flush()),
            None => Err(std::io::Error::other("stdin is closed")),
        };
        if let Err(e) = written {
            return Err(ExchangeError::Transport(format!(
                "writing to the stdio server failed: {e}"
            )));
        }
        let deadline = Instant::now() + self.timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(Line::Data(Ok(l))) => {
                    if l.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    let v = ahp_sdk::json::parse(&l).map_err(|e| {
                        ExchangeError::Malformed(format!(
                            "the response line is not strict JSON: {e}"
                        ))
                    })?;
                    let got = id_key(v.get("id"));
                    if got != key && self.abandoned.contains(&got) {
                        crate::log("client", &format!("dropped a late reply to {got}"));
                        continue;
                    }
                    return Ok(v);
                }
                Ok(Line::Data(Err(()))) => {
                    return Err(ExchangeError::Malformed(
                        "the response line is too long".into(),
                    ))
                }
                Ok(Line::End) | Err(RecvTimeoutError::Disconnected) => {
                    self.gone = true;
                    return Err(ExchangeError::Transport(
                        "the stdio server closed its stdout".into(),
                    ));
                }
                Err(RecvTimeoutError::Timeout) => {
                    self.abandoned.insert(key);
                    return Err(ExchangeError::Transport(format!(
                        "no response within {} ms",
                        self.timeout.as_millis()
                    )));
                }
            }
        }
    }

    /// Closes stdin, waits briefly, then kills the whole process group.
    fn close(&mut self) {
        if self.closed {
            return;
        }
        self.closed = true;
        drop(self.stdin.take());
        let until = Instant::now() + Duration::from_secs(2);
        while !self.exited() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        process::kill_group(self.pgid);
        let _ = self.child.wait();
        process::unregister(self.pgid);
    }
}

impl Drop for StdioPeer {
    fn drop(&mut self) {
        self.close();
    }
}
