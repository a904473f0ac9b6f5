//! The core scenario sets replayed through the engine, judged as the harness
//! judges a blind client's report (docs/CONTRACT.md, "Replay" and
//! "Host-layer rejections"; interop/suites/core/verify.py): every expected
//! key deep-equal under strict JSON typing, no semantic key the row does not
//! expect, and `{"rejected": true}` for `expectError` rows (our clients
//! enforce the host rule inside the transaction, so `hostExpected` rows are
//! rejections too).

use ahp_sdk::engine::apply;
use ahp_sdk::json::{self, equal};
use ahp_sdk::schemas::{Schemas, INTERCEPT_REQUEST};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const SEMANTIC_KEYS: [&str; 6] = [
    "result",
    "flow",
    "injections",
    "continuationInstructions",
    "continuationRemaining",
    "rejected",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

fn schemas() -> Schemas {
    Schemas::load(&root().join("schemas/draft")).expect("the canonical schemas load")
}

/// Every file in the core format: `scenarios/core*.json` and the files of
/// `scenarios/upstream/` whose rows all have `request` and `response`.
fn core_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in ["scenarios", "scenarios/upstream"] {
        let mut found: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .expect("the scenario directory")
            .map(|e| e.expect("an entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        found.sort();
        for path in found {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if dir == "scenarios" && !name.starts_with("core") {
                continue;
            }
            let doc = load(&path);
            let rows = doc["scenarios"].as_array().cloned().unwrap_or_default();
            let core_format = !rows.is_empty()
                && rows
                    .iter()
                    .all(|r| r.get("request").is_some() && r.get("response").is_some());
            if core_format {
                files.push(path);
            }
        }
    }
    files
}

fn load(path: &Path) -> Value {
    let bytes = std::fs::read(path).expect("the scenario file reads");
    json::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// None when `actual` shows the row's expectation, else the first difference.
fn judge(row: &Value, actual: &Value) -> Option<String> {
    if row.get("expectError") == Some(&Value::Bool(true)) {
        return (!equal(actual, &json!({"rejected": true})))
            .then(|| format!("expected a rejection, got {}", json::encode(actual)));
    }
    let expected = row["expected"].as_object()?;
    for (key, want) in expected {
        match actual.get(key) {
            None => {
                return Some(format!(
                    "$.{key}: missing (expected {})",
                    json::encode(want)
                ))
            }
            Some(got) if !equal(want, got) => {
                return Some(format!(
                    "$.{key}: expected {}, got {}",
                    json::encode(want),
                    json::encode(got)
                ))
            }
            _ => {}
        }
    }
    for key in SEMANTIC_KEYS {
        if let Some(got) = actual.get(key) {
            if !expected.contains_key(key) {
                return Some(format!(
                    "$.{key}: not expected here, got {}",
                    json::encode(got)
                ));
            }
        }
    }
    None
}

#[test]
fn every_core_row_passes() {
    let schemas = schemas();
    let files = core_files();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.strip_prefix(root()).unwrap_or(p).display().to_string())
        .collect();
    assert!(
        names.iter().any(|n| n.ends_with("scenarios/core.json"))
            && names.iter().any(|n| n.ends_with("upstream/scenarios.json")),
        "the core sets were not found: {names:?}"
    );
    let mut failures = Vec::new();
    for (path, name) in files.iter().zip(&names) {
        let doc = load(path);
        let rows = doc["scenarios"].as_array().unwrap();
        let mut passed = 0;
        for row in rows {
            let id = row["id"].as_str().unwrap_or("?");
            // the client validates each request before sending it
            if let Some(problem) = schemas.check(INTERCEPT_REQUEST, &row["request"]) {
                failures.push(format!("{name}/{id}: invalid request: {problem}"));
                continue;
            }
            let outcome = apply(&schemas, &row["request"], &row["response"]);
            if let Some(why) = &outcome.unsupported {
                failures.push(format!("{name}/{id}: unsupported: {why}"));
                continue;
            }
            match judge(row, &outcome.actual) {
                None => passed += 1,
                Some(diff) => failures.push(format!(
                    "{name}/{id}: {diff} (reason: {})",
                    outcome.reason.as_deref().unwrap_or("-")
                )),
            }
        }
        eprintln!("{name}: {passed}/{} passed", rows.len());
    }
    assert!(
        failures.is_empty(),
        "{} failing rows:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The `schema-invalid` tag is exact both ways: tagged responses fail the
/// canonical `intercept-response` schema, every other response passes it
/// (what tools/check_conformance.py --scenarios checks).
#[test]
fn schema_invalid_tags_match_the_canonical_schema() {
    let schemas = schemas();
    let doc = load(&root().join("scenarios/core.json"));
    let mut wrong = Vec::new();
    for row in doc["scenarios"].as_array().unwrap() {
        let tagged = row["tags"]
            .as_array()
            .is_some_and(|t| t.iter().any(|x| x == "schema-invalid"));
        let invalid = schemas
            .check(ahp_sdk::schemas::INTERCEPT_RESPONSE, &row["response"])
            .is_some();
        if tagged != invalid {
            wrong.push(format!(
                "{} (tagged {tagged}, invalid {invalid})",
                row["id"]
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
