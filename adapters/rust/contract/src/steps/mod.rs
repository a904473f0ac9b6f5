//! The step engine (docs/LIFECYCLE.md): what drives a step-driven suite run,
//! knowing no individual suite. The lifecycle suite is this engine under its
//! config (and the isolation suite runs it unchanged); the compaction suite
//! drives its boundaries with `chain` and scripts its faults as `server`.
//!
//! - `ops`: a step scenario, per request key a state (pending, staged,
//!   published, cancelled; or failed), per slot the call whose reply binds
//!   to it; the step ops in order, with their marks and uploads.
//! - `chain`: a chain, `requests.a` through serial subscriptions against the
//!   run's server (and the reserved `unreachable` backend), driven by
//!   `ahp_sdk::chain::Chain`; here are the I/O, the releases, the marks and
//!   the deadlines.
//! - `server`: the step server's AHP side: held intercepts answered from
//!   response sequences, scripted faults **[ext]**, recorded observations.
//!
//! The process model around them is `suite_client`'s and `suite_server`'s.

pub mod chain;
pub mod ops;
pub mod server;

use ahp_sdk::boundaries::boundary_for;
use serde_json::Value;

use crate::config::Scenario;
use crate::suite_client::{failed, unsupported, RowError, SuiteClient, SuiteRows};

/// The step ops this client runs.
pub const OPS: &[&str] = &[
    "send", "wait", "release", "receive", "accept", "cancel", "failOpen", "observe", "upload",
    "emit",
];

/// The rows of a step-driven client: each a chain (`chain`) or steps (`steps`).
pub fn rows() -> Box<dyn SuiteRows> {
    Box::new(Rows)
}

struct Rows;

impl SuiteRows for Rows {
    fn row(&mut self, client: &mut SuiteClient, row: &Scenario) -> Result<Value, RowError> {
        unsupported_in(row)?;
        if row.raw.contains_key("chain") {
            chain::run(client, row)
        } else {
            ops::StepRun::new(row).run(client)
        }
    }
}

/// What of the row this client cannot run, checked before anything is sent.
fn unsupported_in(row: &Scenario) -> Result<(), RowError> {
    let Some(Value::Object(requests)) = row.raw.get("requests") else {
        return Err(unsupported("the scenario has no requests object"));
    };
    let steps = match row.raw.get("steps") {
        None => &[][..],
        Some(Value::Array(s)) => s.as_slice(),
        Some(_) => return Err(unsupported("the scenario's steps are not an array")),
    };
    for step in steps {
        let op = step.get("op");
        if !op.and_then(Value::as_str).is_some_and(|o| OPS.contains(&o)) {
            return Err(unsupported(format!(
                "step op {} is not implemented by ahp-rust",
                op.map(ahp_sdk::json::encode)
                    .unwrap_or_else(|| "none".into())
            )));
        }
    }
    for request in requests.values() {
        let t = ahp_sdk::json::path(request, &["params", "event", "type"]);
        if !t
            .and_then(Value::as_str)
            .is_some_and(|t| boundary_for(t).is_some())
        {
            return Err(unsupported(format!(
                "event type {} is not implemented by ahp-rust",
                t.map(ahp_sdk::json::encode)
                    .unwrap_or_else(|| "none".into())
            )));
        }
    }
    if row.raw.contains_key("chain") && !requests.contains_key("a") {
        return Err(failed("a chain needs requests.a"));
    }
    Ok(())
}
