//! [`run()`]: the command the arguments name, run.

use crate::args::{Cli, Command};
use crate::error::CommandError;
use crate::output::Output;

use super::{
    clean, completions, config, demo, graph, init, land, people, plan, report, schema, status,
    validate, verify, watch,
};

/// Runs the command `cli` names.
pub(crate) fn run(cli: &Cli, out: Output) -> Result<(), CommandError> {
    match &cli.command {
        Command::Validate(args) => validate::run(&cli.global, args, out),
        Command::Graph(args) => graph::run(&cli.global, args, out),
        Command::Schema(args) => schema::run(&cli.global, args),
        Command::Run(args) => super::run::run(&cli.global, args, out),
        Command::Clean(args) => clean::run(&cli.global, args, out),
        Command::Demo(args) => demo::run(&cli.global, args, out),
        Command::Status(args) => status::run(&cli.global, args, out),
        Command::Watch(args) => watch::run(&cli.global, args, out),
        Command::Report(args) => report::run(&cli.global, args, out),
        Command::Verify(args) => verify::run(&cli.global, args, out),
        Command::Config(args) => config::run(&cli.global, args, out),
        Command::Plan(args) => plan::run(&cli.global, args, out),
        Command::Land(args) => land::run(&cli.global, args, out),
        Command::Answer(args) => people::answer(&cli.global, args, out),
        Command::Tell(args) => people::tell(&cli.global, args, out),
        Command::Stop(args) => people::stop(&cli.global, args, out),
        Command::Retry(args) => people::retry(&cli.global, args, out),
        Command::Init => init::run(&cli.global, out),
        Command::Completions(args) => completions::run(&cli.global, args),
    }
}
