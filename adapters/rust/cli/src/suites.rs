//! The registry: the one place that names every suite, and the commands'
//! routing through it (`main` routes on the command only here). Each suite
//! module exports its entry (`SUITE`) and refers to no other suite module
//! nor to this one; the machinery they share is `ahp_contract`'s (the step
//! engine `steps`, the suite process model `suite_server` / `suite_client`,
//! the routing on the config's `suite` in `registry`). `tests/layering.rs`
//! checks that.

use ahp_contract::registry::{self, Command, CoreSuite, Suite};
use ahp_contract::Failure;

use crate::{catalogue, compaction, core, elicitation, lifecycle};

/// The core suite: the `client`, `server` and `replay` commands.
pub static CORE: CoreSuite = core::SUITE;

/// Every suite the lifecycle commands run (the config's `suite` says which).
/// A new suite adds its entry here and its module beside `lifecycle`. The
/// isolation suite runs `lifecycle` unchanged.
pub static SUITES: &[Suite] = &[
    lifecycle::SUITE,
    catalogue::SUITE,
    compaction::SUITE,
    elicitation::SUITE,
];

/// The command of a role name, if it is one.
pub fn command(name: &str) -> Option<Command> {
    Some(match name {
        "client" => CORE.client,
        "server" => CORE.server,
        "replay" => CORE.replay,
        // every suite past core; the config's suite says which
        "lifecycle-client" => client,
        "lifecycle-server" => server,
        _ => return None,
    })
}

/// `lifecycle-client`: a suite it does not implement has every row reported
/// `unsupported`, naming it.
fn client(config_path: &str) -> Result<i32, Failure> {
    registry::client(SUITES, config_path)
}

/// `lifecycle-server`: a suite it does not implement exits 2 naming the `suite` field.
fn server(config_path: &str) -> Result<i32, Failure> {
    registry::server(SUITES, config_path)
}
