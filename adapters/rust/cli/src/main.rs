//! ahp-rust: the Rust adapter of the AHP interop matrix.
//!
//!     ahp-rust client|server|replay|lifecycle-client|lifecycle-server --config PATH
//!
//! Exit codes: 0 the role did its job, 2 the config is unusable (one stderr line
//! names the file and the field), 1 any other failure.
//!
//! The command routes only through the registry (`suites`), which names
//! every suite module; no suite module refers to another (`tests/layering.rs`).

mod catalogue;
mod compaction;
mod core;
mod elicitation;
mod lifecycle;
mod suites;

use std::panic::{catch_unwind, AssertUnwindSafe};

use ahp_contract::{log, process};

const USAGE: &str =
    "usage: ahp-rust client|server|replay|lifecycle-client|lifecycle-server --config PATH";

fn config_arg(args: &[String]) -> Option<String> {
    match args {
        [flag, path] if flag == "--config" && !path.is_empty() => Some(path.clone()),
        [one] => one
            .strip_prefix("--config=")
            .filter(|p| !p.is_empty())
            .map(str::to_string),
        _ => None,
    }
}

fn on_client_signal(_: i32) {
    // a client's spawned stdio server dies with it, on every exit path
    process::kill_children();
    std::process::exit(1);
}

fn on_server_signal(_: i32) {
    ahp_contract::server::stop();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (name, run) = match args
        .get(1)
        .and_then(|n| suites::command(n).map(|r| (n.clone(), r)))
    {
        Some(x) => x,
        None => {
            eprintln!("{USAGE}");
            std::process::exit(2);
        }
    };
    let config = match config_arg(&args[2..]) {
        Some(c) => c,
        None => {
            eprintln!("{USAGE}");
            std::process::exit(2);
        }
    };
    let server = name.ends_with("server");
    process::watch_signals(if server {
        on_server_signal
    } else {
        on_client_signal
    });
    let outcome = catch_unwind(AssertUnwindSafe(|| run(&config)));
    process::kill_children();
    let code = match outcome {
        Ok(Ok(code)) => code,
        Ok(Err(failure)) => {
            log(&name, &failure.to_string());
            failure.exit_code()
        }
        Err(_) => {
            log(&name, "internal error (a panic)");
            1
        }
    };
    std::process::exit(code);
}
