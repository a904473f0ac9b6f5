//! Files of the contract: atomic writes (readiness, reports), receipts and their
//! log, barriers.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::{Condvar, Mutex};

use serde_json::{json, Value};

/// Writes `v` (compact, one line) through a temporary file in the same
/// directory and a rename, so a reader never sees half a file.
pub fn write_json_atomic(path: &str, v: &Value) -> Result<(), String> {
    let target = Path::new(path);
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let base = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{base}.{}.tmp", std::process::id()));
    let mut data = ahp_sdk::json::encode(v).into_bytes();
    data.push(b'\n');
    let written = (|| -> std::io::Result<()> {
        let mut f = File::create(&tmp)?;
        f.write_all(&data)?;
        f.sync_all()?;
        Ok(())
    })();
    if let Err(e) = written.and_then(|_| std::fs::rename(&tmp, target)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("cannot write {path}: {e}"));
    }
    Ok(())
}

/// Writes the readiness file `{"endpoint", "controlEndpoint", "pid"}` (endpoint null over stdio).
pub fn write_readiness(
    path: &str,
    endpoint: Option<&str>,
    control: &str,
    extra: &[(&str, &str)],
) -> Result<(), String> {
    let mut v =
        json!({"endpoint": endpoint, "controlEndpoint": control, "pid": std::process::id()});
    for (k, val) in extra {
        v[*k] = json!(val);
    }
    write_json_atomic(path, &v)
}

/// Receipt kinds.
pub const REQUEST: &str = "request";
pub const DISCOVERY: &str = "discovery";
pub const NOTIFICATION: &str = "notification";

/// The kind of a JSON-RPC message object: no `id` is a notification.
pub fn kind_of(msg: &serde_json::Map<String, Value>) -> &'static str {
    if !msg.contains_key("id") {
        NOTIFICATION
    } else if msg.get("method").and_then(Value::as_str) == Some("hooks/capabilities") {
        DISCOVERY
    } else {
        REQUEST
    }
}

#[derive(Default)]
struct Lists {
    requests: Vec<Value>,
    discovery: Vec<Value>,
    notifications: Vec<Value>,
    log: Option<File>,
}

/// Every AHP message a server received, by kind, in arrival order; with a log,
/// each receipt is appended as one line and written out before the reply.
/// `clear` never truncates the log.
#[derive(Default)]
pub struct Receipts {
    lists: Mutex<Lists>,
}

impl Receipts {
    /// Opens the receipt log (append-only) when a path is given.
    pub fn new(log: Option<&str>) -> Result<Receipts, String> {
        let mut lists = Lists::default();
        if let Some(path) = log {
            let f = OpenOptions::new()
                .append(true)
                .create(true)
                .open(path)
                .map_err(|e| format!("cannot open {path}: {e}"))?;
            lists.log = Some(f);
        }
        Ok(Receipts {
            lists: Mutex::new(lists),
        })
    }

    /// Stores one receipt and appends it to the log (flushed to the file before returning).
    pub fn record(&self, kind: &str, msg: &Value) {
        let mut l = self.lists.lock().unwrap_or_else(|p| p.into_inner());
        match kind {
            DISCOVERY => l.discovery.push(msg.clone()),
            NOTIFICATION => l.notifications.push(msg.clone()),
            _ => l.requests.push(msg.clone()),
        }
        if let Some(f) = l.log.as_mut() {
            let mut line =
                ahp_sdk::json::encode(&json!({"kind": kind, "message": msg})).into_bytes();
            line.push(b'\n');
            if let Err(e) = f.write_all(&line).and_then(|_| f.flush()) {
                crate::log("server", &format!("receipt log write failed: {e}"));
            }
        }
    }

    /// The GET /receipts answer.
    pub fn snapshot(&self) -> Value {
        let l = self.lists.lock().unwrap_or_else(|p| p.into_inner());
        json!({"requests": l.requests, "discovery": l.discovery, "notifications": l.notifications})
    }

    /// Empties the lists (not the log).
    pub fn clear(&self) {
        let mut l = self.lists.lock().unwrap_or_else(|p| p.into_inner());
        l.requests.clear();
        l.discovery.clear();
        l.notifications.clear();
    }
}

#[derive(Default)]
struct Gates {
    open: HashSet<String>,
    all: bool,
}

/// Named gates: a release is sticky until `reset`; `release_all` (at shutdown)
/// opens every gate, now and later.
#[derive(Default)]
pub struct Barriers {
    gates: Mutex<Gates>,
    changed: Condvar,
}

impl Barriers {
    pub fn new() -> Barriers {
        Barriers::default()
    }

    /// Blocks until the barrier is released (or everything is).
    pub fn wait(&self, name: &str) {
        let mut g = self.gates.lock().unwrap_or_else(|p| p.into_inner());
        while !(g.all || g.open.contains(name)) {
            g = self.changed.wait(g).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// `wait` for at most `limit`: whether the barrier is open.
    pub fn wait_for(&self, name: &str, limit: std::time::Duration) -> bool {
        let until = std::time::Instant::now() + limit;
        let mut g = self.gates.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if g.all || g.open.contains(name) {
                return true;
            }
            let left = until.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return false;
            }
            g = self
                .changed
                .wait_timeout(g, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Whether `wait(name)` would return at once.
    pub fn is_open(&self, name: &str) -> bool {
        let g = self.gates.lock().unwrap_or_else(|p| p.into_inner());
        g.all || g.open.contains(name)
    }

    /// Opens the barrier (sticky).
    pub fn release(&self, name: &str) {
        let mut g = self.gates.lock().unwrap_or_else(|p| p.into_inner());
        g.open.insert(name.to_string());
        self.changed.notify_all();
    }

    /// Opens every barrier, now and later.
    pub fn release_all(&self) {
        let mut g = self.gates.lock().unwrap_or_else(|p| p.into_inner());
        g.all = true;
        self.changed.notify_all();
    }

    /// Forgets every release (replies still held stay held).
    pub fn reset(&self) {
        let mut g = self.gates.lock().unwrap_or_else(|p| p.into_inner());
        g.open.clear();
    }
}
