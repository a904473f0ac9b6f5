//! The lifecycle suite (docs/LIFECYCLE.md): the server's held intercepts,
//! response sequences, scripted faults and observations; the blind client's
//! steps and chains. All of it is the contract's step engine
//! (`ahp_contract::steps`) under the lifecycle config; this module is its
//! entry. The isolation suite (docs/ISOLATION.md) runs it unchanged.

use ahp_contract::registry::Suite;
use ahp_contract::steps;
use ahp_contract::suite_config::{SuiteSpec, LIFECYCLE};
use ahp_sdk::schemas::{
    CONTENT_UPLOAD_RECEIPT, INTERCEPT_REQUEST, INTERCEPT_RESPONSE, OBSERVE_NOTIFICATION,
};

/// The lifecycle suite's entry in the registry (`suites::SUITES`).
pub const SUITE: Suite = Suite {
    spec: SuiteSpec {
        name: LIFECYCLE,
        upload_auth: true,
        upload: true,
        content_sources: true,
    },
    schemas: &[
        INTERCEPT_REQUEST,
        INTERCEPT_RESPONSE,
        OBSERVE_NOTIFICATION,
        CONTENT_UPLOAD_RECEIPT,
    ],
    server: steps::server::new,
    client: steps::rows,
};
