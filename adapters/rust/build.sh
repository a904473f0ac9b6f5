#!/bin/sh
# Builds the adapter once into build/target/release/ahp-rust (cargo is incremental).
# ./build.sh --test also checks rustfmt, runs clippy (warnings are errors) and the unit tests, in the
# same target folder and profile, so nothing is compiled twice.
set -eu
cd "$(dirname "$0")"
export CARGO_TARGET_DIR="$PWD/build/target"
cargo build --locked --release --quiet -p ahp-rust
if [ "${1:-}" = "--test" ]; then
	cargo fmt --all --check
	cargo clippy --locked --release --quiet --workspace --all-targets -- -D warnings
	cargo test --locked --release --quiet --workspace
fi
