//! ahp-contract: the adapter contract of docs/CONTRACT.md, knowing nothing of AHP
//! effects: config files (errors name the file and the field; exit 2), HTTP/1.1
//! client and server over TCP and rustls, stdio NDJSON, the spawned server's
//! process group, the control listener, readiness, receipts, OAuth token
//! acquisition; the process model of every suite past core (suite
//! configs, the suite server with its entries, control, uploads and held
//! replies, the suite client with its channels, rows and report); what a
//! suite registers and the routing on the config's `suite` (`registry`); and
//! the step engine those suites share (`steps`: step ops, chains, the step
//! server), which drives `ahp_sdk`'s engine and chains. It knows no
//! individual suite: the suites and their registry are the binary's.

pub mod backend;
pub mod channel;
pub mod config;
pub mod entries;
pub mod files;
pub mod http;
pub mod peer;
pub mod process;
pub mod registry;
pub mod server;
pub mod steps;
pub mod suite_client;
pub mod suite_config;
pub mod suite_control;
pub mod suite_server;
pub mod tls;
pub mod upload;

pub use serde_json::{Map, Value};

/// What a role's run ends with when it did not do its job.
#[derive(Debug)]
pub enum Failure {
    /// The config is unusable: exit 2, one stderr line naming the file and the field.
    Config(config::ConfigError),
    /// Any other failure: exit 1.
    Other(String),
}

impl Failure {
    pub fn exit_code(&self) -> i32 {
        match self {
            Failure::Config(_) => 2,
            Failure::Other(_) => 1,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Config(e) => e.fmt(f),
            Failure::Other(s) => f.write_str(s),
        }
    }
}

impl From<config::ConfigError> for Failure {
    fn from(e: config::ConfigError) -> Self {
        Failure::Config(e)
    }
}

/// One diagnostic line on stderr (stdout carries only what the contract says).
pub fn log(role: &str, message: &str) {
    let one_line: Vec<&str> = message.split_whitespace().collect();
    eprintln!("ahp-rust {role}: {}", one_line.join(" "));
}

/// The value at a path of object keys, if every step is an object holding the key.
pub fn path<'a>(v: &'a Value, keys: &[&str]) -> Option<&'a Value> {
    let mut at = v;
    for k in keys {
        at = at.as_object()?.get(*k)?;
    }
    Some(at)
}
