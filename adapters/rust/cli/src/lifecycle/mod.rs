//! The lifecycle suite (docs/LIFECYCLE.md): the server's held intercepts,
//! response sequences, scripted faults and observations; the blind client's
//! steps and chains. The isolation suite (docs/ISOLATION.md) runs it unchanged.

pub(crate) mod chain; // its chain driver serves the compaction suite too
pub(crate) mod server; // its scripted faults too
mod steps;

use ahp_contract::config::Scenario;
use ahp_contract::suite_client::{failed, unsupported, RowError, SuiteClient, SuiteRows};
use ahp_contract::suite_config::{SuiteSpec, LIFECYCLE};
use ahp_sdk::boundaries::boundary_for;
use ahp_sdk::schemas::{
    CONTENT_UPLOAD_RECEIPT, INTERCEPT_REQUEST, INTERCEPT_RESPONSE, OBSERVE_NOTIFICATION,
};
use serde_json::Value;

use crate::suites::Suite;

/// The lifecycle suite's entry in `crate::suites::SUITES`.
pub const SUITE: Suite = Suite {
    spec: SuiteSpec {
        name: LIFECYCLE,
        upload_auth: true,
        upload: true,
        content_sources: true,
    },
    schemas: &[
        INTERCEPT_REQUEST,
        INTERCEPT_RESPONSE,
        OBSERVE_NOTIFICATION,
        CONTENT_UPLOAD_RECEIPT,
    ],
    server: server::new,
    client: rows,
};

fn rows() -> Box<dyn SuiteRows> {
    Box::new(Rows)
}

/// The step ops this client runs.
pub const OPS: &[&str] = &[
    "send", "wait", "release", "receive", "accept", "cancel", "failOpen", "observe", "upload",
    "emit",
];

struct Rows;

impl SuiteRows for Rows {
    fn row(&mut self, client: &mut SuiteClient, row: &Scenario) -> Result<Value, RowError> {
        unsupported_in(row)?;
        if row.raw.contains_key("chain") {
            chain::run(client, row)
        } else {
            steps::StepRun::new(row).run(client)
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
