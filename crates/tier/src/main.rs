//! The real-CLI tier, which xtask runs (`cargo xtask agents`, `cargo xtask bench tokens`)
//! through `cargo run -p epic-tier`.
//!
//! - `epic-tier agents [FILTER | capture [CLI [FAILURE]]]`: the presets proven against the real
//!   agent CLIs, installed with npm and pip (see [`agents`]), offline and against the scripted
//!   model server (see [`served`]); `agents capture` records their outputs of the server's
//!   failures (see [`capture`]).
//! - `epic-tier tokens`: what a story costs in model requests through the real CLIs (see
//!   [`tokens`]); prints the `BENCHMARKS.md` section's figures, which `cargo xtask bench tokens`
//!   writes there.
//!
//! A crate of its own rather than part of xtask, which stays std only: what `epic` and the model
//! server write (the server's request log, the run's events and report) is read here typed with
//! `serde_json`, and the JSON it writes (the server's steps, plans, the CLIs' settings) is
//! written with it ([`json`]).

use std::env;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

mod acp;
mod agents;
mod capture;
mod cases;
mod json;
mod person;
mod report_html;
mod roles;
mod rosters;
mod scratch;
mod served;
mod server;
mod tokens;

type Result<T = (), E = String> = std::result::Result<T, E>;

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let outcome = match args.first().map(String::as_str) {
        Some("agents") => agents::run(&args[1..]),
        Some("tokens") if args.len() == 1 => tokens::run().map(|figures| {
            #[expect(
                clippy::print_stdout,
                reason = "the figures are the output, which xtask writes to BENCHMARKS.md"
            )]
            {
                println!("{}\n\n{}", figures.trim_end(), tokens::HOW);
            }
        }),
        _ => Err(
            "usage: epic-tier <agents [FILTER | capture [CLI [FAILURE]]] | tokens>\n  \
                  (run through `cargo xtask agents` and `cargo xtask bench tokens`)"
                .into(),
        ),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            #[expect(clippy::print_stderr, reason = "the tier reports to the terminal")]
            {
                eprintln!("xtask: {message}");
            }
            ExitCode::FAILURE
        }
    }
}

/// The workspace root (the tier lives at `crates/tier`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn cargo() -> OsString {
    env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// Runs `cargo ARGS` at the workspace root, failing on a non-zero exit.
fn run_cargo(args: &[&str]) -> Result {
    let started = Instant::now();
    say(&format!("$ cargo {}", args.join(" ")));
    let status = Command::new(cargo())
        .args(args)
        .current_dir(root())
        .status()
        .map_err(|error| format!("failed to start cargo: {error}"))?;
    say(&format!("  ({:.1} s)", started.elapsed().as_secs_f64()));
    if status.success() {
        Ok(())
    } else {
        Err(format!("`cargo {}` failed ({status})", args.join(" ")))
    }
}

fn say(line: &str) {
    #[expect(
        clippy::print_stderr,
        reason = "the tier reports progress to the terminal"
    )]
    {
        eprintln!("{line}");
    }
}
