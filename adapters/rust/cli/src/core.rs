//! The core suite: the blind client, the in-process replay, and the server's
//! hooks/intercept and hooks/capabilities (docs/CONTRACT.md).

use std::sync::Arc;

use ahp_contract::backend::{rpc_error, Answer, Backend, INVALID_PARAMS, UNSUPPORTED_VERSION};
use ahp_contract::config::{self, Scenario};
use ahp_contract::files::{write_json_atomic, Receipts};
use ahp_contract::peer::{new_peer, ExchangeError};
use ahp_contract::registry::CoreSuite;
use ahp_contract::{log, path, Failure};
use ahp_sdk::schemas::{Schemas, CAPABILITIES_REQUEST, INTERCEPT_REQUEST};
use serde_json::{json, Map, Value};

/// The core suite's entry in the registry (`suites::CORE`).
pub const SUITE: CoreSuite = CoreSuite {
    client,
    server,
    replay,
};

fn completed(id: &str, actual: Value) -> Value {
    json!({"id": id, "status": "completed", "actual": actual})
}

fn failed(id: &str, why: &str) -> Value {
    json!({"id": id, "status": "failed", "error": why})
}

fn unsupported(id: &str, why: &str) -> Value {
    json!({"id": id, "status": "unsupported", "error": why})
}

/// Validates the row's request, sends it once, and applies the response.
pub fn run_row(
    row: &Scenario,
    exchange: &mut dyn FnMut(&Value) -> Result<Value, ExchangeError>,
    schemas: &Schemas,
    role: &str,
) -> Value {
    let request = row.request();
    if !request.is_object() {
        return failed(&row.id, "request is invalid: not a JSON object");
    }
    if let Some(problem) = schemas.check(INTERCEPT_REQUEST, request) {
        return failed(&row.id, &format!("request is invalid: {problem}"));
    }
    let response = exchange(request);
    let event_type = path(request, &["params", "event", "type"])
        .and_then(Value::as_str)
        .unwrap_or("");
    if !ahp_sdk::engine::supports(event_type) {
        return unsupported(
            &row.id,
            &format!("event type {event_type:?} is not implemented by ahp-rust"),
        );
    }
    let response = match response {
        Ok(v) => v,
        Err(ExchangeError::Malformed(why)) => {
            log(role, &format!("{}: response rejected: {why}", row.id));
            return completed(&row.id, json!({"rejected": true}));
        }
        Err(ExchangeError::Transport(why)) => return failed(&row.id, &why),
    };
    let out = ahp_sdk::engine::apply(schemas, request, &response);
    if let Some(why) = out.unsupported {
        return unsupported(&row.id, &why);
    }
    if let Some(why) = &out.reason {
        log(role, &format!("{}: response rejected: {why}", row.id));
    }
    completed(&row.id, out.actual)
}

fn write_report(file: &str, language: &str, results: Vec<Value>) -> Result<(), Failure> {
    write_json_atomic(file, &json!({"language": language, "results": results}))
        .map_err(Failure::Other)
}

/// The core client role.
pub fn client(config_path: &str) -> Result<i32, Failure> {
    let settings = config::load_client(config_path)?;
    let schemas = config::load_schemas(&settings.file, settings.schema_dir.as_deref())?;
    let mut peer = new_peer(&settings)?;
    let mut results = Vec::with_capacity(settings.scenarios.len());
    for row in &settings.scenarios {
        results.push(run_row(row, &mut |r| peer.exchange(r), &schemas, "client"));
    }
    peer.close();
    write_report(&settings.report_file, &settings.language, results)?;
    Ok(0)
}

/// Applies each row's own response to its request in process.
pub fn replay(config_path: &str) -> Result<i32, Failure> {
    let settings = config::load_replay(config_path)?;
    let schemas = config::load_schemas(&settings.file, settings.schema_dir.as_deref())?;
    let results = settings
        .scenarios
        .iter()
        .map(|row| {
            let response = row.response().clone();
            run_row(row, &mut |_| Ok(response.clone()), &schemas, "replay")
        })
        .collect();
    write_report(&settings.report_file, &settings.language, results)?;
    Ok(0)
}

/// The core server role.
pub fn server(config_path: &str) -> Result<i32, Failure> {
    let settings = config::load_server(config_path)?;
    let dir = config::schema_dir(settings.schema_dir.as_deref());
    let schemas = Arc::new(config::load_schemas(
        &settings.file,
        settings.schema_dir.as_deref(),
    )?);
    let receipts = Receipts::new(settings.receipt_log.as_deref())
        .map_err(|e| config::ConfigError::new(&settings.file, "receiptLog", e))?;
    let mut backend = Backend::new(receipts, settings.scenarios.clone())
        .map_err(|e| config::ConfigError::new(&settings.file, "scenarioFile", e))?;
    let s = schemas.clone();
    backend.add_method(
        "hooks/intercept",
        Box::new(move |b, msg| intercept(&s, b, msg)),
    );
    let s = schemas.clone();
    let check_discovery = dir.join(CAPABILITIES_REQUEST).is_file();
    backend.add_method(
        "hooks/capabilities",
        Box::new(move |_, msg| discovery(&s, check_discovery, msg)),
    );
    // the manifest `discovery` answers with: GET /capabilities answers its
    // tool.before capabilities
    backend.set_manifest(ahp_sdk::manifest::manifest);
    ahp_contract::server::run_server(&settings, Arc::new(backend))
}

fn intercept(schemas: &Schemas, backend: &Backend, msg: &Map<String, Value>) -> Answer {
    let id = msg.get("id");
    let value = Value::Object(msg.clone());
    let mut problem = schemas.check(INTERCEPT_REQUEST, &value);
    if problem.is_none() {
        let event_id = path(&value, &["params", "event", "id"]);
        if !matches!((event_id, id), (Some(a), Some(b)) if ahp_sdk::json::equal(a, b)) {
            problem = Some("request id differs from params.event.id".into());
        }
    }
    if let Some(p) = problem {
        log("server", &format!("invalid intercept request: {p}"));
        return Answer::reply(rpc_error(
            id,
            INVALID_PARAMS,
            "invalid intercept request",
            None,
        ));
    }
    match backend.scenario(id) {
        Some(row) => backend.scripted(&row),
        None => {
            log(
                "server",
                &format!(
                    "no scenario for request id {}",
                    id.map(ahp_sdk::json::encode).unwrap_or_default()
                ),
            );
            Answer::reply(rpc_error(id, INVALID_PARAMS, "unknown scenario id", None))
        }
    }
}

fn discovery(schemas: &Schemas, check: bool, msg: &Map<String, Value>) -> Answer {
    let id = msg.get("id");
    let result = ahp_sdk::manifest::discovery_result();
    let ours = result
        .get("protocolVersion")
        .cloned()
        .unwrap_or(Value::Null);
    if let Some(Value::String(v)) = msg.get("params").and_then(|p| p.get("protocolVersion")) {
        if Some(v.as_str()) != ours.as_str() {
            return Answer::reply(rpc_error(
                id,
                UNSUPPORTED_VERSION,
                "unsupported_protocol_version",
                Some(json!({"supported": [ours]})),
            ));
        }
    }
    if check {
        if let Some(p) = schemas.check(CAPABILITIES_REQUEST, &Value::Object(msg.clone())) {
            log("server", &format!("invalid discovery request: {p}"));
            return Answer::reply(rpc_error(
                id,
                INVALID_PARAMS,
                "invalid capabilities request",
                None,
            ));
        }
    }
    Answer::reply(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}
