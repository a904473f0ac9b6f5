//! The suites past core: one command pair (`lifecycle-client`,
//! `lifecycle-server`) for all of them; the config's `suite` says which
//! (docs/CONTRACT.md). Each suite registers itself in [`SUITES`] with its
//! config spec, the canonical schemas it needs, its server's dispatcher and
//! its client's rows; the process model around them is `ahp_contract`'s
//! (`suite_server`, `suite_client`).

use std::sync::Arc;

use ahp_contract::suite_client::{report_other, run_suite_client, SuiteRows};
use ahp_contract::suite_config::{
    load_suite_client, load_suite_server, require_suite, SuiteClientConfig, SuiteSpec,
};
use ahp_contract::suite_server::{SuiteDispatcher, SuiteServer};
use ahp_contract::{config, Failure};
use ahp_sdk::schemas::Schemas;

use crate::{catalogue, compaction, elicitation, lifecycle};

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

/// Every suite the lifecycle commands run. A new suite adds its entry here
/// (and its module beside `lifecycle`).
pub static SUITES: &[Suite] = &[
    lifecycle::SUITE,
    catalogue::SUITE,
    compaction::SUITE,
    elicitation::SUITE,
];

fn specs() -> Vec<SuiteSpec> {
    SUITES.iter().map(|s| s.spec).collect()
}

fn suite(name: &str) -> &'static Suite {
    SUITES
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

/// `lifecycle-client`: a suite it does not implement has every row reported
/// `unsupported`, naming it.
pub fn client(config_path: &str) -> Result<i32, Failure> {
    let settings = match load_suite_client(config_path, &specs())? {
        SuiteClientConfig::Other(other) => return report_other(&other),
        SuiteClientConfig::Implemented(s) => *s,
    };
    let suite = suite(&settings.suite);
    let schemas = schemas(
        &settings.base.file,
        settings.base.schema_dir.as_deref(),
        suite.schemas,
    )?;
    let mut rows = (suite.client)();
    run_suite_client(settings, schemas, rows.as_mut())
}

/// `lifecycle-server`: a suite it does not implement exits 2 naming the `suite` field.
pub fn server(config_path: &str) -> Result<i32, Failure> {
    let specs = specs();
    let spec = require_suite(config_path, &specs)?;
    let settings = load_suite_server(config_path, spec)?;
    let suite = suite(spec.name);
    let schemas = Arc::new(schemas(
        &settings.base.file,
        settings.base.schema_dir.as_deref(),
        suite.schemas,
    )?);
    let mut process = SuiteServer::new(settings);
    let backend = (suite.server)(&mut process, schemas)?;
    process.run(backend)
}
