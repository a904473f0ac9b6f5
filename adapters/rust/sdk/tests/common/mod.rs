//! What the scenario-driven tests share: the repository root, the canonical
//! schemas (loaded once per test binary), strict scenario files.
#![allow(dead_code)]

use ahp_sdk::json;
use ahp_sdk::schemas::Schemas;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

pub fn schemas() -> &'static Schemas {
    static S: OnceLock<Schemas> = OnceLock::new();
    S.get_or_init(|| {
        Schemas::load(&root().join("schemas/draft")).expect("the canonical schemas load")
    })
}

/// A file of the repository, parsed strictly.
pub fn load(relative: &str) -> Value {
    let path = root().join(relative);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    json::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The rows of a scenario file.
pub fn rows(relative: &str) -> Vec<Value> {
    load(relative)["scenarios"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// JSON text in a test, parsed strictly.
pub fn text(s: &str) -> Value {
    json::parse_str(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

/// Fails with every problem found, one per line, after reporting the count.
pub fn report(what: &str, total: usize, problems: &[String]) {
    eprintln!("{what}: {} of {total} rows pass", total - problems.len());
    assert!(problems.is_empty(), "{what}:\n{}", problems.join("\n"));
}

/// Whether `got` equals every element of `want` once, in any order.
pub fn same_multiset(
    got: &[Value],
    want: &[Value],
    matches: impl Fn(&Value, &Value) -> bool,
) -> bool {
    let mut remaining: Vec<&Value> = want.iter().collect();
    for g in got {
        match remaining.iter().position(|w| matches(g, w)) {
            Some(i) => {
                remaining.remove(i);
            }
            None => return false,
        }
    }
    remaining.is_empty()
}
