//! The step engine's chains (docs/LIFECYCLE.md, "Chains" and "Operational
//! failures"): `requests.a` through serial subscriptions against the run's
//! server (and the reserved `unreachable` backend), driven by
//! `ahp_sdk::chain::Chain`; here are the I/O, the releases, the marks and
//! the deadlines.

use std::sync::Arc;
use std::time::Duration;

use ahp_sdk::chain::{Call, Chain, Subscription, SubscriptionError};
use ahp_sdk::schemas::{INTERCEPT_REQUEST, OBSERVE_NOTIFICATION};
use serde_json::{json, Value};

use crate::channel::Channel;
use crate::config::Scenario;
use crate::log;
use crate::suite_client::{failed, unsupported, RowError, SuiteClient};

use super::ops::{take, Reply};

/// The row's `actual`: `{called, failures, observations, input}`.
pub fn run(c: &mut SuiteClient, row: &Scenario) -> Result<Value, RowError> {
    let spec = row.raw.get("chain").cloned().unwrap_or(Value::Null);
    let subscriptions = Subscription::parse_list(spec.get("subscriptions").unwrap_or(&Value::Null))
        .map_err(|e| match e {
            SubscriptionError::Invalid(s) => failed(s),
            SubscriptionError::Unsupported(s) => unsupported(s),
        })?;
    let interrupt = spec.get("interrupt") == Some(&Value::Bool(true));
    let hold = spec.get("holdObservers") == Some(&Value::Bool(true));
    let raw = row.raw["requests"]["a"].clone();
    let request = c.prepare(&raw)?;
    let request = c.checked(request, INTERCEPT_REQUEST)?;
    let rid = request
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let mut chain = Chain::new(request, subscriptions).map_err(unsupported)?;
    let interrupt = interrupt && chain.has_intercepts();
    let mark = |c: &SuiteClient, kind: &str| c.mark(&row.id, kind, &rid);
    // replies are held by the server: released (sticky) before the first call
    if chain.has_intercepts() && !interrupt {
        c.post("/release", json!({"id": rid}))?;
    }
    if interrupt {
        if let Some(call) = chain.next_call().map_err(unsupported)? {
            let (pending, deadline, at_server) = send_call(c, &chain, call)?;
            interrupted(c, &mut chain, at_server, &rid)?;
            mark(c, "cancelled")?;
            mark(c, "chain-settled")?;
            c.post("/release", json!({"id": rid}))?;
            if let Err(e) = pending.result(deadline) {
                log("client", &format!("{}: the interrupted call: {e}", row.id));
            }
            return Ok(chain.settlement().actual());
        }
    }
    call_all(c, &row.id, &mut chain)?;
    settle(c, &row.id, &rid, &chain, hold)?;
    Ok(chain.settlement().actual())
}

/// Sends one call of a chain (checked against the canonical schema) to its
/// subscription's backend: the call in flight, its deadline (the
/// subscription's `timeoutMs`, else the config's), and whether it went to
/// the run's server.
fn send_call(
    c: &mut SuiteClient,
    chain: &Chain,
    call: Call,
) -> Result<(Arc<crate::channel::Call>, Duration, bool), RowError> {
    let sub = &chain.subscriptions()[call.index];
    let msg = c.checked(call.message, INTERCEPT_REQUEST)?;
    let deadline = sub
        .timeout_ms
        .map(Duration::from_millis)
        .unwrap_or_else(|| c.timeout());
    let ch = c.channel_for(sub.backend.as_deref().unwrap_or(""));
    let pending = c.send(&msg, false, deadline, ch.as_ref());
    Ok((pending, deadline, ch.is_none()))
}

/// Runs a chain's calls in turn, each answered before the next is sent,
/// until it settles (a failed call is an operational failure the chain's
/// policies decide). Shared by every suite whose boundaries are chains.
pub fn call_all(c: &mut SuiteClient, sid: &str, chain: &mut Chain) -> Result<(), RowError> {
    while let Some(call) = chain.next_call().map_err(unsupported)? {
        let sub = chain.subscriptions()[call.index].id.clone();
        let (pending, deadline, _) = send_call(c, chain, call)?;
        let outcome = match take(&pending, deadline, sid) {
            Ok(Reply::Parsed(v)) => chain.answer(&c.schemas, Ok(&v)),
            Ok(Reply::Malformed(why)) => chain.answer(&c.schemas, Err(&why)),
            Err(why) => chain.answer(&c.schemas, Err(&why)),
        };
        if let Some(why) = outcome.reason.or(outcome.unsupported) {
            log("client", &format!("{sid}: {sub} failed: {why}"));
        }
    }
    Ok(())
}

/// Once a chain settled: marks `chain-settled` (scenario `sid`, id `rid`),
/// then sends every notification in subscription order, each followed by
/// `/wait-observed` (`hold`: each preceded by an `observer-blocked` mark).
pub fn settle(
    c: &mut SuiteClient,
    sid: &str,
    rid: &str,
    chain: &Chain,
    hold: bool,
) -> Result<(), RowError> {
    c.mark(sid, "chain-settled", rid)?;
    let notifications = chain.notifications().map_err(unsupported)?;
    for n in notifications {
        if hold {
            c.mark(sid, "observer-blocked", rid)?;
        }
        let sub = &chain.subscriptions()[n.index];
        let note = c.prepare(&n.message)?;
        let note = c.checked(note, OBSERVE_NOTIFICATION)?;
        let ch: Option<Arc<dyn Channel>> = c.channel_for(sub.backend.as_deref().unwrap_or(""));
        c.notify(&note, ch.as_ref())?;
    }
    Ok(())
}

/// Interrupts the boundary while its first call is in flight: once the
/// server has received it (a call to another backend leaves it nothing to
/// wait for), the chain settles with the original value.
fn interrupted(
    c: &mut SuiteClient,
    chain: &mut Chain,
    at_server: bool,
    rid: &str,
) -> Result<(), RowError> {
    if at_server {
        let count = c.sent(&json!(rid));
        c.post("/wait", json!({"id": rid, "count": count}))?;
    }
    chain.interrupt().map_err(failed)
}
