//! ahp-rust: the Rust adapter of the AHP interop matrix.
//!
//!     ahp-rust client|server|replay|lifecycle-client|lifecycle-server --config PATH
fn main() {
    eprintln!("usage: ahp-rust client|server|replay|lifecycle-client|lifecycle-server --config PATH");
    std::process::exit(2);
}
