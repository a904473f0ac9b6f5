//! The suites past core (docs/LIFECYCLE.md and the others): not implemented
//! yet. The client reports every row `unsupported` naming the suite; the
//! server exits 2 naming the `suite` field.

use ahp_contract::config::{ConfigError, Fields};
use ahp_contract::files::write_json_atomic;
use ahp_contract::Failure;
use serde_json::{json, Value};

fn suite(f: &Fields) -> Result<String, ConfigError> {
    f.str("suite")
}

/// Every row of every scenario file named is `unsupported`, naming the suite.
pub fn client(config_path: &str) -> Result<i32, Failure> {
    let f = Fields::load(config_path)?;
    let name = suite(&f)?;
    let report = f.path("reportFile")?;
    let language = f
        .opt_str("language")?
        .unwrap_or_else(|| ahp_contract::config::DEFAULT_LANGUAGE.into());
    let why = format!("suite {name:?} is not implemented by ahp-rust");
    let mut results = Vec::new();
    if f.has("scenarioFile") {
        let (_, rows) = f.scenarios("scenarioFile")?;
        for row in rows {
            results.push(json!({"id": row.id, "status": "unsupported", "error": why}));
        }
    }
    write_json_atomic(&report, &json!({"language": language, "results": results}))
        .map_err(Failure::Other)?;
    Ok(0)
}

/// Exits 2 naming the `suite` field.
pub fn server(config_path: &str) -> Result<i32, Failure> {
    let f = Fields::load(config_path)?;
    let name = suite(&f)?;
    Err(Failure::Config(f.err(
        "suite",
        format!("{} is not implemented by ahp-rust", Value::String(name)),
    )))
}
