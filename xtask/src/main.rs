//! Project automation, in Rust so it runs wherever cargo does.
//!
//! - `cargo xtask ci`: everything CI checks, in the order CI checks it: formatting, clippy with
//!   warnings denied, the tests (nextest with its `ci` profile from `.config/nextest.toml`: no
//!   retries, no fail-fast, hung tests ended by name; then doctests), the docs with warnings
//!   denied, and tidy.
//!   Benchmarks are linted but not run here: they take minutes, and `cargo xtask bench` runs them.
//! - `cargo xtask bench`: the benchmarks; rewrites the figures in `BENCHMARKS.md`. `cargo xtask
//!   bench tokens` (only when named) counts a story's model requests through the real CLIs
//!   (`crates/tier`, run as `cargo run -p epic-tier -- tokens`).
//! - `cargo xtask tidy`: the repository's own conventions (see [`tidy`]).
//! - `cargo xtask gen`: what is generated, which tidy holds the repository to: each banning
//!   crate's `clippy.toml` from the one ban list (see [`lints`]), and ARCHITECTURE.md's table of
//!   crates, their arrows and which are async, from the manifests (see [`architecture`]).
//! - `cargo xtask agents`: the presets proven against the real agent CLIs, installed with npm
//!   and pip, offline and against the scripted model server; `cargo xtask agents capture`
//!   records their outputs of the server's failures. The tier is a crate of its own,
//!   `crates/tier` (it reads JSON with `serde_json`), which this runs with `cargo run -p
//!   epic-tier -- agents ARGS` ([`tier`]).
//!
//! std only, so it builds in seconds on a fresh machine.

use std::env;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

mod architecture;
mod bench;
mod citations;
mod imports;
mod layers;
mod lints;
mod tidy;

type Result<T = (), E = String> = std::result::Result<T, E>;

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let outcome = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("bench") => bench::run(&args[1..]),
        Some("tidy") => tidy::check(&root()),
        Some("gen") => lints::write(&root()).and_then(|()| architecture::write(&root())),
        Some("agents") => tier("agents", &args[1..]),
        _ => Err(
            "usage: cargo xtask <ci | bench [--quick] | tidy | gen | agents>\n  ci      fmt, clippy, tests, doctests, docs, tidy\n  bench   run the benchmarks and rewrite BENCHMARKS.md (`bench tokens`: a story's model\n          requests through the real CLIs)\n  tidy    check the repository's conventions\n  gen     write what is generated: each crate's clippy.toml from the one ban list\n          (xtask/src/lints.rs), ARCHITECTURE.md's table of crates from the manifests\n  agents  prove the presets against the real agent CLIs (npm and pip install them);\n          `agents capture` records their outputs of the model server's failures"
                .into(),
        ),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            #[expect(clippy::print_stderr, reason = "xtask reports to the terminal")]
            {
                eprintln!("xtask: {message}");
            }
            ExitCode::FAILURE
        }
    }
}

/// The workspace root (xtask lives one level below it).
fn root() -> PathBuf {
    let manifest =
        env::var_os("CARGO_MANIFEST_DIR").map_or_else(|| PathBuf::from("xtask"), PathBuf::from);
    manifest
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn cargo() -> OsString {
    env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// Runs `cargo ARGS` at the workspace root with extra environment, failing on a non-zero exit.
fn run_cargo(args: &[&str], envs: &[(&str, &str)]) -> Result {
    let started = Instant::now();
    say(&format!("$ cargo {}", args.join(" ")));
    let status = Command::new(cargo())
        .args(args)
        .envs(envs.iter().copied())
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
        reason = "xtask reports progress to the terminal"
    )]
    {
        eprintln!("{line}");
    }
}

/// The cargo arguments that run the real-CLI tier (`crates/tier`) with its `command` and `args`:
/// built with the dev profile, as the `epic` it drives is.
fn tier_cargo_args<'a>(command: &'a str, args: &'a [String]) -> Vec<&'a str> {
    let mut cargo_args = vec![
        "run",
        "--quiet",
        "--locked",
        "-p",
        "epic-tier",
        "--",
        command,
    ];
    cargo_args.extend(args.iter().map(String::as_str));
    cargo_args
}

/// Runs the real-CLI tier's `command` with `args` (`cargo xtask agents`), its output the
/// terminal's.
fn tier(command: &str, args: &[String]) -> Result {
    run_cargo(&tier_cargo_args(command, args), &[])
}

fn has_nextest() -> bool {
    Command::new(cargo())
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|output| output.status.success())
}

fn ci() -> Result {
    run_cargo(&["fmt", "--all", "--check"], &[])?;
    run_cargo(
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
        &[],
    )?;
    if has_nextest() {
        run_cargo(
            &[
                "nextest",
                "run",
                "--profile",
                "ci",
                "--workspace",
                "--lib",
                "--bins",
                "--tests",
                "--examples",
                "--locked",
                "--no-fail-fast",
            ],
            &[],
        )?;
    } else {
        say("cargo-nextest is not installed: running the tests with cargo test");
        run_cargo(
            &[
                "test",
                "--workspace",
                "--lib",
                "--bins",
                "--tests",
                "--examples",
                "--locked",
                "--no-fail-fast",
            ],
            &[],
        )?;
    }
    run_cargo(&["test", "--workspace", "--doc", "--locked"], &[])?;
    run_cargo(
        &[
            "doc",
            "--workspace",
            "--no-deps",
            "--document-private-items",
            "--locked",
        ],
        &[("RUSTDOCFLAGS", "-D warnings")],
    )?;
    tidy::check(&root())?;
    say("xtask ci: all checks passed");
    Ok(())
}
