//! ahp-sdk: the AHP implementation under test. No I/O, no knowledge of the interop contract.

pub mod auth;
pub mod boundaries;
pub mod chain;
pub mod compaction;
pub mod elicitation;
pub mod engine;
pub mod json;
pub mod lineage;
pub mod manifest;
pub mod registration;
pub mod schemas;
