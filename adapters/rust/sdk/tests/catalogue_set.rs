//! The catalogue sets replayed as one client run against one receiver per
//! file (docs/CATALOGUE.md): every row in file order, `notify` validated by
//! the SDK and sent only when valid, `rawNotify` sent as it is, `register`
//! evaluated against the catalogue manifest; judged against the hand-written
//! `expected.sent`, `expected.registrations` (`rule` compared where the row
//! names one) and `expected.deliveries` (the receiver's verdicts, in order,
//! with one lineage state for the whole file).

mod common;

use ahp_sdk::json::{self, equal};
use ahp_sdk::lineage::Lineage;
use ahp_sdk::manifest::catalogue_manifest;
use ahp_sdk::registration::evaluate;
use ahp_sdk::schemas::OBSERVE_NOTIFICATION;
use common::{report, rows, schemas};
use serde_json::{json, Value};

/// `(sent, registrations, deliveries)` of one row.
type RowResult = (Vec<Value>, Vec<Value>, Vec<Value>);

/// What the client reports and the receiver decides for one row.
fn run_row(receiver: &mut Lineage, manifest: &Value, row: &Value) -> Result<RowResult, String> {
    let (mut sent, mut registrations, mut deliveries) = (Vec::new(), Vec::new(), Vec::new());
    for step in row["steps"].as_array().ok_or("no steps")? {
        match step["op"].as_str() {
            Some("notify") => {
                if schemas()
                    .check(OBSERVE_NOTIFICATION, &step["message"])
                    .is_some()
                {
                    continue; // invalid: not sent
                }
                sent.push(step["message"].clone());
                deliveries.push(receiver.deliver(schemas(), &step["message"]).to_value());
            }
            Some("rawNotify") => {
                sent.push(step["message"].clone());
                deliveries.push(receiver.deliver(schemas(), &step["message"]).to_value());
            }
            Some("register") => {
                let requirements = step["requirements"]
                    .as_array()
                    .ok_or("requirements is not a list")?;
                let context = step["context"]
                    .as_object()
                    .ok_or("context is not an object")?;
                let v = evaluate(
                    schemas(),
                    &step["registration"],
                    manifest,
                    requirements,
                    context,
                );
                registrations.push(v.entry());
            }
            other => return Err(format!("unknown op {other:?}")),
        }
    }
    Ok((sent, registrations, deliveries))
}

/// `registrations` compared as the harness does: `accepted` always, `rule`
/// where the expectation names one.
fn registrations_match(got: &[Value], want: &[Value]) -> bool {
    got.len() == want.len()
        && got.iter().zip(want).all(|(g, w)| {
            g["accepted"] == w["accepted"]
                && (w.get("rule").is_none() || g.get("rule") == w.get("rule"))
        })
}

fn replay(file: &str) -> (usize, usize) {
    let manifest = catalogue_manifest();
    let mut receiver = Lineage::new();
    let all = rows(file);
    let mut problems = Vec::new();
    let mut named_rules = 0;
    for row in &all {
        let id = &row["id"];
        let expected = &row["expected"];
        named_rules += expected["registrations"]
            .as_array()
            .map_or(0, |r| r.iter().filter(|e| e.get("rule").is_some()).count());
        match run_row(&mut receiver, &manifest, row) {
            Err(e) => problems.push(format!("{id}: {e}")),
            Ok((sent, registrations, deliveries)) => {
                if !equal(&json!(sent), &expected["sent"]) {
                    problems.push(format!("{id}: sent {}", json::encode(&json!(sent))));
                } else if !registrations_match(
                    &registrations,
                    expected["registrations"].as_array().unwrap(),
                ) {
                    problems.push(format!(
                        "{id}: registrations {}",
                        json::encode(&json!(registrations))
                    ));
                } else if !equal(&json!(deliveries), &expected["deliveries"]) {
                    problems.push(format!(
                        "{id}: deliveries {} (expected {})",
                        json::encode(&json!(deliveries)),
                        json::encode(&expected["deliveries"])
                    ));
                }
            }
        }
    }
    report(file, all.len(), &problems);
    (all.len(), named_rules)
}

#[test]
fn our_catalogue_set_in_file_order_with_one_receiver() {
    let (rows, rules) = replay("scenarios/catalogue.json");
    assert!(
        rows >= 269,
        "{rows} rows: our set only grows (a settled reading adds a row)"
    );
    assert!(rules >= 50, "{rules} registrations name their rule");
}

#[test]
fn the_upstream_catalogue_vector_in_file_order_with_one_receiver() {
    let (rows, _) = replay("scenarios/upstream/catalogue-scenarios.json");
    assert_eq!(rows, 47);
}
