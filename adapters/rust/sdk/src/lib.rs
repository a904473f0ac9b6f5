//! ahp-sdk: the AHP implementation under test. No I/O, no knowledge of the interop contract.

pub mod auth;
pub mod boundaries;
pub mod engine;
pub mod json;
pub mod manifest;
pub mod schemas;
