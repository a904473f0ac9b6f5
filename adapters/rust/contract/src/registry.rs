//! What a suite registers, and the one routing of the lifecycle commands over
//! a registry. The registry itself (the table naming every suite) is the
//! binary's; this module knows no individual suite.
//!
//! Every suite past core runs through one command pair (`lifecycle-client`,
//! `lifecycle-server`); the config's `suite` says which (docs/CONTRACT.md).
//! Each suite registers its config spec, the canonical schemas it needs, its
//! server's dispatcher and its client's rows; the process model around them
//! is `suite_server`'s and `suite_client`'s.

use std::sync::Arc;

use ahp_sdk::schemas::Schemas;

use crate::suite_client::{report_other, run_suite_client, SuiteRows};
use crate::suite_config::{
    load_suite_client, load_suite_server, require_suite, SuiteClientConfig, SuiteSpec,
};
use crate::suite_server::{SuiteDispatcher, SuiteServer};
use crate::{config, Failure};

/// A command of the adapter contract: its config path in, its exit code out.
pub type Command = fn(&str) -> Result<i32, Failure>;

/// The core suite's entry: its own three commands (its configs carry no `suite`).
pub struct CoreSuite {
    pub client: Command,
    pub server: Command,
    pub replay: Command,
}

/// Makes a suite server's AHP side (its dispatcher) for the process; it may
/// also set the process's `observed_kinds` and `control_calls`.
pub type ServerFactory =
    fn(&mut SuiteServer, Arc<Schemas>) -> Result<Arc<dyn SuiteDispatcher>, Failure>;

/// One suite past core.
pub struct Suite {
    /// the config's `suite` and the blocks its configs carry
    pub spec: SuiteSpec,
    /// canonical schemas compiled at start by both roles (a `schemaDir`
    /// without them exits 2)
    pub schemas: &'static [&'static str],
    /// the server's AHP side; the process around it (listeners, control,
    /// uploads, readiness) is `SuiteServer::run`'s
    pub server: ServerFactory,
    /// the client's rows; the process around them (connection, control,
    /// uploads, report) is `run_suite_client`'s
    pub client: fn() -> Box<dyn SuiteRows>,
}

fn specs(suites: &[Suite]) -> Vec<SuiteSpec> {
    suites.iter().map(|s| s.spec).collect()
}

fn suite<'a>(suites: &'a [Suite], name: &str) -> &'a Suite {
    suites
        .iter()
        .find(|s| s.spec.name == name)
        .expect("a suite the specs name")
}

/// The canonical schemas, each of the suite's compiled once (else exit 2 naming `schemaDir`).
fn schemas(file: &str, dir: Option<&str>, names: &[&str]) -> Result<Schemas, Failure> {
    let schemas = config::load_schemas(file, dir)?;
    for name in names {
        if let Err(e) = schemas.compile(name) {
            return Err(Failure::Config(config::ConfigError::new(
                file,
                "schemaDir",
                e,
            )));
        }
    }
    Ok(schemas)
}

/// `lifecycle-client` over `suites`: a suite it does not implement has every
/// row reported `unsupported`, naming it.
pub fn client(suites: &[Suite], config_path: &str) -> Result<i32, Failure> {
    let settings = match load_suite_client(config_path, &specs(suites))? {
        SuiteClientConfig::Other(other) => return report_other(&other),
        SuiteClientConfig::Implemented(s) => *s,
    };
    let suite = suite(suites, &settings.suite);
    let schemas = schemas(
        &settings.base.file,
        settings.base.schema_dir.as_deref(),
        suite.schemas,
    )?;
    let mut rows = (suite.client)();
    run_suite_client(settings, schemas, rows.as_mut())
}

/// `lifecycle-server` over `suites`: a suite it does not implement exits 2
/// naming the `suite` field.
pub fn server(suites: &[Suite], config_path: &str) -> Result<i32, Failure> {
    let specs = specs(suites);
    let spec = require_suite(config_path, &specs)?;
    let settings = load_suite_server(config_path, spec)?;
    let suite = suite(suites, spec.name);
    let schemas = Arc::new(schemas(
        &settings.base.file,
        settings.base.schema_dir.as_deref(),
        suite.schemas,
    )?);
    let mut process = SuiteServer::new(settings);
    let backend = (suite.server)(&mut process, schemas)?;
    process.run(backend)
}
