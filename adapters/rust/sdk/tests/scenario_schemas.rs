//! Every scenario file of `schemas/scenario-files.json` against its format's
//! schema. The index (written by the harness from the suites' declarations)
//! names each scenario file, relative to the repository root, and the file of
//! `schemas/scenarios/` its format is. Every adapter validates the same files
//! against the same schemas, each with its own validator: here the SDK's
//! [`Schemas`] over `schemas/scenarios/` (every schema a `boon` resource under
//! its `$id`, so `common.schema.json#/$defs/...` resolves against
//! `https://interop.ahp.test/schemas/scenarios/common.schema.json` and nothing
//! is loaded from elsewhere; Draft 2020-12, formats asserted) gives the
//! verdict. Its problem is one line of at most 400 characters, so a refused
//! document is validated again by `boon`, set up as [`Schemas`] sets it up, to
//! list every innermost error with its row and field.

mod common;

use ahp_sdk::json;
use ahp_sdk::schemas::Schemas;
use boon::InstanceToken;
use serde_json::{json, Value};
use std::path::PathBuf;

/// Problems listed per file.
const SHOWN: usize = 20;

fn scenario_schema_dir() -> PathBuf {
    common::root().join("schemas/scenarios")
}

fn scenario_schemas() -> Schemas {
    let dir = scenario_schema_dir();
    Schemas::load(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

/// `expected.states["a:b"].flow`, `steps[3]`: instance tokens below the row.
fn dotted(tokens: &[InstanceToken<'_>]) -> String {
    let mut out = String::new();
    for token in tokens {
        match token {
            InstanceToken::Item(i) => out.push_str(&format!("[{i}]")),
            InstanceToken::Prop(key)
                if !key.is_empty()
                    && !key.starts_with(|c: char| c.is_ascii_digit())
                    && key
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_$-".contains(c)) =>
            {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            InstanceToken::Prop(key) => out.push_str(&format!("[{}]", json!(key))),
        }
    }
    out
}

/// `<file>: scenarios[3] (id "x"): expected: <what>`: the file, the row, the field.
fn describe(file: &str, doc: &Value, leaf: &boon::ValidationError<'_, '_>) -> String {
    let mut tokens = leaf.instance_location.tokens.as_slice();
    let mut parts = vec![file.to_string()];
    let mut field = "(root)";
    if let [InstanceToken::Prop(top), InstanceToken::Item(row), rest @ ..] = tokens {
        if top == "scenarios" {
            let mut place = format!("scenarios[{row}]");
            if let Some(id) = doc["scenarios"][*row]["id"]
                .as_str()
                .filter(|id| !id.is_empty())
            {
                place.push_str(&format!(" (id {})", json!(id)));
            }
            parts.push(place);
            tokens = rest;
            field = "(the row)";
        }
    }
    let path = dotted(tokens);
    parts.push(if path.is_empty() {
        field.to_string()
    } else {
        path
    });
    parts.push(leaf.kind.to_string());
    parts.join(": ")
}

fn leaves<'a>(
    e: &'a boon::ValidationError<'a, 'a>,
    out: &mut Vec<&'a boon::ValidationError<'a, 'a>>,
) {
    if e.causes.is_empty() {
        out.push(e);
    }
    for cause in &e.causes {
        leaves(cause, out);
    }
}

/// Every innermost error of `doc` against `schema` (a file of
/// `schemas/scenarios/`), by `boon` compiled as [`Schemas`] compiles: every
/// file of the set a resource under the `$id` the set registered it by.
fn every_problem(schemas: &Schemas, schema: &str, file: &str, doc: &Value) -> Vec<String> {
    let mut compiler = boon::Compiler::new();
    compiler.set_default_draft(boon::Draft::V2020_12);
    compiler.enable_format_assertions();
    for name in schemas.names() {
        let path = scenario_schema_dir().join(name);
        let document = json::parse(&std::fs::read(&path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let id = schemas.id_of(name).unwrap();
        compiler.add_resource(id, document).unwrap();
    }
    let mut compiled = boon::Schemas::new();
    let index = compiler
        .compile(schemas.id_of(schema).unwrap(), &mut compiled)
        .unwrap_or_else(|e| panic!("compiling {schema}: {e:#}"));
    match compiled.validate(doc, index) {
        Ok(()) => Vec::new(),
        Err(e) => {
            let mut found = Vec::new();
            leaves(&e, &mut found);
            found.iter().map(|leaf| describe(file, doc, leaf)).collect()
        }
    }
}

/// The SDK's verdict on `doc`; when it refuses, every problem (never empty).
fn problems(schemas: &Schemas, schema: &str, file: &str, doc: &Value) -> Vec<String> {
    match schemas.check(schema, doc) {
        None => Vec::new(),
        Some(verdict) => {
            let found = every_problem(schemas, schema, file, doc);
            if found.is_empty() {
                vec![format!("{file}: {verdict}")]
            } else {
                found
            }
        }
    }
}

#[test]
fn every_indexed_scenario_file_fits_its_schema() {
    let index_path = common::root().join("schemas/scenario-files.json");
    assert!(
        index_path.is_file(),
        "{} is gone: the scenario files' index moved?",
        index_path.display()
    );
    let index = common::load("schemas/scenario-files.json");
    let files = index["files"].as_array().cloned().unwrap_or_default();
    assert!(
        !files.is_empty(),
        "{} lists no scenario files",
        index_path.display()
    );
    let schemas = scenario_schemas();
    assert!(schemas.has("common.schema.json"));
    let mut failed = Vec::new();
    for entry in &files {
        let (Some(file), Some(schema)) = (entry["file"].as_str(), entry["schema"].as_str()) else {
            panic!("an index entry without file and schema: {entry}");
        };
        assert!(
            schemas.has(schema),
            "{file}: no schema {schema} in schemas/scenarios/"
        );
        let doc = common::load(file);
        let found = problems(&schemas, schema, file, &doc);
        if found.is_empty() {
            let rows = doc["scenarios"].as_array().map_or(0, Vec::len);
            eprintln!("{file}: {rows} rows fit {schema}");
            continue;
        }
        failed.push(format!(
            "{file} breaks {schema} ({} problems):",
            found.len()
        ));
        failed.extend(found.iter().take(SHOWN).map(|line| format!("  {line}")));
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn a_misspelt_key_in_a_row_is_refused() {
    let schemas = scenario_schemas();
    let document = |expected: Value| {
        json!({"version": 1, "scenarios": [
            {"id": "typo-1", "request": {}, "response": null, "tags": [], "expected": expected}
        ]})
    };
    let good = document(json!({"decision": "deny"}));
    assert_eq!(
        problems(&schemas, "core.schema.json", "good.json", &good),
        Vec::<String>::new()
    );
    let bad = document(json!({"decison": "deny"}));
    let found = problems(&schemas, "core.schema.json", "typo.json", &bad);
    eprintln!("refused: {}", found.join("; "));
    assert!(!found.is_empty(), "a misspelt key was accepted");
    assert!(
        found[0].starts_with(r#"typo.json: scenarios[0] (id "typo-1"): expected: "#)
            && found[0].contains("decison"),
        "{found:?}"
    );
}
