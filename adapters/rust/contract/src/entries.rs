//! The receipt entries of a suite server past core (docs/LIFECYCLE.md): one
//! ordered log under one lock, counted by kind and id, with bounded waits.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

// Entry kinds a suite server records itself.
pub const RECEIVED: &str = "received";
pub const REPLIED: &str = "replied";
pub const UPLOAD: &str = "upload";
pub const OBSERVED: &str = "observed";
pub const EMITTED: &str = "emitted";
/// A held observer: the client's mark, and the lifecycle server's own
/// `{kind, id: event id}` just before the notification's `observed` entry.
pub const OBSERVER_BLOCKED: &str = "observer-blocked";
/// the catalogue suite's
pub const DISCOVERY: &str = "discovery";
pub const REJECTED: &str = "rejected";

/// The entry kinds `POST /mark` accepts (the lifecycle suite's, and
/// `row-start` of the elicitation suite).
pub const MARKS: &[&str] = &[
    "acquired",
    "accepted",
    "cancelled",
    "discarded",
    "chain-settled",
    "observer-blocked",
    "row-start",
];

/// A control wait gives up after this (then 408).
pub const WAIT_LIMIT: Duration = Duration::from_secs(30);

#[derive(Default)]
struct Inner {
    entries: Vec<Value>,
    counts: HashMap<(String, String), usize>,
    closed: bool,
}

/// The key an id is counted under (its compact JSON; absent is `null`).
fn id_key(v: Option<&Value>) -> String {
    v.map(ahp_sdk::json::encode)
        .unwrap_or_else(|| "null".into())
}

/// One ordered receipt log; `GET /receipts` answers `{"entries": [...]}`.
#[derive(Default)]
pub struct EntryLog {
    inner: Mutex<Inner>,
    changed: Condvar,
}

impl EntryLog {
    pub fn new() -> EntryLog {
        EntryLog::default()
    }

    /// Appends `entry` (an object with a `kind`); returns how many entries of
    /// its kind name the same value under `key` (`id`, `eventId` for
    /// observations, `ref` for uploads), this one included.
    pub fn record(&self, entry: Value, key: &str) -> usize {
        self.record_after(None, entry, key)
    }

    /// `record` with `before` (counted under `id`) appended just before
    /// `entry` under the same lock, so nothing comes between them.
    pub fn record_after(&self, before: Option<Value>, entry: Value, key: &str) -> usize {
        let kind_of = |e: &Value| {
            e.get("kind")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let k = (kind_of(&entry), id_key(entry.get(key)));
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(before) = before {
            let b = (kind_of(&before), id_key(before.get("id")));
            g.entries.push(before);
            *g.counts.entry(b).or_insert(0) += 1;
        }
        g.entries.push(entry);
        let n = g.counts.entry(k).or_insert(0);
        *n += 1;
        let n = *n;
        self.changed.notify_all();
        n
    }

    /// How many entries of `kind` name `id`.
    pub fn count(&self, kind: &str, id: &Value) -> usize {
        let g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        g.counts
            .get(&(kind.to_string(), id_key(Some(id))))
            .copied()
            .unwrap_or(0)
    }

    /// The `GET /receipts` answer: every entry in the order recorded.
    pub fn snapshot(&self) -> Value {
        let g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        json!({"entries": g.entries})
    }

    /// Blocks until `count` entries of `kind` name `id` (true), or until
    /// `limit` passes or the log is closed (false).
    pub fn wait(&self, kind: &str, id: &Value, count: usize, limit: Duration) -> bool {
        self.wait_any(&[kind], id, count, limit)
    }

    /// `wait` counting the entries of every kind of `kinds` together.
    pub fn wait_any(&self, kinds: &[&str], id: &Value, count: usize, limit: Duration) -> bool {
        let until = Instant::now() + limit;
        let name = id_key(Some(id));
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            let n: usize = kinds
                .iter()
                .map(|k| {
                    g.counts
                        .get(&(k.to_string(), name.clone()))
                        .copied()
                        .unwrap_or(0)
                })
                .sum();
            if n >= count {
                return true;
            }
            let left = until.saturating_duration_since(Instant::now());
            if g.closed || left.is_zero() {
                return false;
            }
            g = self
                .changed
                .wait_timeout(g, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Ends every wait (at shutdown); entries are still recorded.
    pub fn close(&self) {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        g.closed = true;
        self.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn counts_and_waits() {
        let log = Arc::new(EntryLog::new());
        assert_eq!(log.record(json!({"kind": RECEIVED, "id": "a"}), "id"), 1);
        assert_eq!(log.record(json!({"kind": RECEIVED, "id": "a"}), "id"), 2);
        assert_eq!(log.count(RECEIVED, &json!("a")), 2);
        assert_eq!(log.count(REPLIED, &json!("a")), 0);
        assert!(log.wait(RECEIVED, &json!("a"), 2, Duration::from_millis(1)));
        assert!(!log.wait(RECEIVED, &json!("a"), 3, Duration::from_millis(20)));
        let l = log.clone();
        let t = std::thread::spawn(move || l.wait(OBSERVED, &json!("e"), 1, WAIT_LIMIT));
        std::thread::sleep(Duration::from_millis(20));
        log.record(json!({"kind": OBSERVED, "eventId": "e"}), "eventId");
        assert!(t.join().unwrap());
        let l = log.clone();
        let t = std::thread::spawn(move || l.wait(OBSERVED, &json!("x"), 1, WAIT_LIMIT));
        std::thread::sleep(Duration::from_millis(20));
        log.close();
        assert!(!t.join().unwrap());
        assert_eq!(log.snapshot()["entries"].as_array().unwrap().len(), 3);
    }
}
