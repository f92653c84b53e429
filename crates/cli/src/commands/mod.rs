//! The commands of `epic`, one module each; [`run()`] dispatches to them.

pub(crate) mod clean;
pub(crate) mod completions;
pub(crate) mod config;
pub(crate) mod demo;
pub(crate) mod graph;
pub(crate) mod init;
pub(crate) mod land;
pub(crate) mod plan;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod schema;
pub(crate) mod status;
pub(crate) mod validate;
pub(crate) mod verify;

use std::fmt::Write as _;

use epic_story_plan::Violation;

use crate::args::{Cli, Command};
use crate::error::CommandError;
use crate::output::Output;

/// Runs the command `cli` names.
pub(crate) fn run(cli: &Cli, out: Output) -> Result<(), CommandError> {
    match &cli.command {
        Command::Validate(args) => validate::run(&cli.global, args, out),
        Command::Graph(args) => graph::run(&cli.global, args, out),
        Command::Schema(args) => schema::run(&cli.global, args),
        Command::Run(args) => run::run(&cli.global, args, out),
        Command::Clean(args) => clean::run(&cli.global, args, out),
        Command::Demo(args) => demo::run(&cli.global, args, out),
        Command::Status(args) => status::run(&cli.global, args, out),
        Command::Report(args) => report::run(&cli.global, args, out),
        Command::Verify(args) => verify::run(&cli.global, args, out),
        Command::Config(args) => config::run(&cli.global, args, out),
        Command::Plan(args) => plan::run(&cli.global, args, out),
        Command::Land(args) => land::run(&cli.global, args, out),
        Command::Init => init::run(&cli.global, out),
        Command::Completions(args) => completions::run(&cli.global, args),
    }
}

/// Builds a `String` with `write!`; writing into a `String` cannot fail.
pub(crate) fn render(write: impl FnOnce(&mut String) -> std::fmt::Result) -> String {
    let mut text = String::new();
    write(&mut text).expect("writing into a String cannot fail");
    text
}

/// Violations as text: one `error[kind]: message` line each, then `N violations in FILE`.
pub(crate) fn violations_text(violations: &[Violation], file: &std::path::Path) -> String {
    render(|out| {
        for violation in violations {
            writeln!(out, "error[{}]: {}", violation.kind, violation.message)?;
        }
        writeln!(
            out,
            "{} in {}",
            crate::plan_file::count(violations.len(), "violation", "violations"),
            file.display()
        )
    })
}

/// A value as pretty JSON with a final newline.
/// The multi-thread tokio runtime a command that runs agents drives the executor on (it runs git
/// in `spawn_blocking` and agents concurrently), its threads named `name`.
pub(crate) fn runtime(name: &str) -> Result<tokio::runtime::Runtime, CommandError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(name)
        .enable_all()
        .build()
        .map_err(|error| {
            CommandError::new(
                crate::error::Kind::Repository,
                crate::error::WithSource {
                    message: "failed to start the runtime".to_owned(),
                    source: error,
                },
            )
        })
}

pub(crate) fn json(value: &impl serde::Serialize) -> String {
    let mut text = serde_json::to_string_pretty(value)
        .expect("the documents epic prints hold only strings, numbers, lists and maps");
    text.push('\n');
    text
}
