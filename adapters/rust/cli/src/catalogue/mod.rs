//! The catalogue suite (docs/CATALOGUE.md): discovery of the catalogue
//! manifest, a receiver that judges every `hooks/observe` by its schema and
//! then by source-local lineage (`ahp_sdk::lineage`), and a host that
//! evaluates registration documents against the discovered manifest
//! (`ahp_sdk::registration`). No uploads, nothing held, no marks.

mod client;
mod server;

use ahp_contract::registry::Suite;
use ahp_contract::suite_config::{SuiteSpec, CATALOGUE};
use ahp_sdk::schemas::{
    CAPABILITIES_REQUEST, CAPABILITIES_RESPONSE, OBSERVE_NOTIFICATION, REGISTRATION,
};

/// The catalogue suite's entry in the registry (`suites::SUITES`).
pub const SUITE: Suite = Suite {
    spec: SuiteSpec {
        name: CATALOGUE,
        // `uploadAuth` may be present and is unused; the client has no upload block
        upload_auth: false,
        upload: false,
        content_sources: false,
    },
    schemas: &[
        CAPABILITIES_REQUEST,
        CAPABILITIES_RESPONSE,
        OBSERVE_NOTIFICATION,
        REGISTRATION,
    ],
    server: server::new,
    client: client::rows,
};
