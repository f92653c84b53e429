//! The run options each command takes as flags: only those it reads ([`Reads`]: `epic run` and
//! `epic config` all but the architect, `epic land` what landing reads, `epic plan` the architect,
//! its seat check and its sandbox), each one [`RunOptions`]' own flag ([`OptionsOf`]).

use std::fmt;

use super::RunOptions;

/// The run options one command reads, by key: each command takes only the flags of those
/// ([`OptionsOf`]).
pub(crate) trait Reads:
    fmt::Debug + Clone + Default + PartialEq + Send + Sync + 'static
{
    /// Whether the command reads option `key`.
    fn reads(key: &str) -> bool;
    /// The heading of these options in the command's `--help`.
    const HEADING: &'static str;
}

/// The options `epic run` and `epic config` read: all but the architect, which only `epic plan`
/// reads.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ForRun;

impl Reads for ForRun {
    fn reads(key: &str) -> bool {
        key != "architect"
    }
    const HEADING: &'static str = "Run options (also settable in epic.toml; flags win)";
}

/// The options landing reads (`epic land`): the coder, who resolves conflicts and red gates, its
/// seat check, rounds and turns, the gates (their reruns), the test guard's patterns, the sandbox
/// and what it shows, the house rules, the budget, the seat pauses and the prices (`epic.toml`
/// only), and the epic branch.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ForLanding;

impl ForLanding {
    /// The keys, in [`keys`](super::keys) order.
    pub(crate) const KEYS: [&'static str; 17] = [
        "epic_branch",
        "coder",
        "gate",
        "max_rounds",
        "turn_timeout",
        "gate_timeout",
        "gate_reruns",
        "test_pattern",
        "sandbox",
        "expose",
        "budget_usd",
        "max_wait",
        "rules",
        "outage_wait",
        "stall_timeout",
        "preflight",
        "prices",
    ];
}

impl Reads for ForLanding {
    fn reads(key: &str) -> bool {
        Self::KEYS.contains(&key)
    }
    const HEADING: &'static str =
        "Run options (flags over epic.toml over the epic's last run's options)";
}

/// The options `epic plan` reads: the architect, its seat check and its sandbox (and from
/// `epic.toml` the coder, the turn timeout and the prices, which it has no flags for).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ForPlanning;

impl Reads for ForPlanning {
    fn reads(key: &str) -> bool {
        matches!(key, "architect" | "preflight" | "sandbox")
    }
    const HEADING: &'static str = "Architect options (also settable in epic.toml; flags win)";
}

/// The run options a command reads ([`Reads`]), as its flags: those of [`RunOptions`] (each
/// defined there once, with its help, value name and value parser) whose key it reads, the
/// others not accepted.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct OptionsOf<R> {
    /// The options given; those the command does not read are unset.
    pub(crate) options: RunOptions,
    reads: std::marker::PhantomData<R>,
}

impl<R: Reads> OptionsOf<R> {
    /// The flags of [`RunOptions`] this command takes (an option's `--no-…` negation with it).
    fn flags() -> impl Iterator<Item = clap::Arg> {
        let all = <RunOptions as clap::Args>::augment_args(clap::Command::new("epic"));
        all.get_arguments()
            .filter(|arg| {
                let id = arg.get_id().as_str();
                R::reads(id) || id.strip_prefix("no_").is_some_and(R::reads)
            })
            .cloned()
            .collect::<Vec<_>>()
            .into_iter()
    }
}

impl<R: Reads> clap::Args for OptionsOf<R> {
    fn augment_args(command: clap::Command) -> clap::Command {
        Self::flags().fold(command, |command, arg| {
            command.arg(arg.help_heading(R::HEADING))
        })
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        Self::augment_args(command)
    }
}

impl<R: Reads> clap::FromArgMatches for OptionsOf<R> {
    /// The options given, read by [`RunOptions`]' own parser: the flags given, as they were
    /// given, parsed again with every run option defined (so each value goes through the one
    /// definition of its type).
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let mut words = Vec::new();
        for arg in Self::flags() {
            let id = arg.get_id().as_str();
            if matches.value_source(id) != Some(clap::parser::ValueSource::CommandLine) {
                continue;
            }
            let Some(long) = arg.get_long() else {
                continue;
            };
            let takes_values = arg.get_action().takes_values()
                && arg.get_num_args().is_none_or(|n| n.max_values() > 0);
            if takes_values {
                for value in matches.get_raw(id).into_iter().flatten() {
                    let mut word = std::ffi::OsString::from(format!("--{long}="));
                    word.push(value);
                    words.push(word);
                }
            } else {
                words.push(format!("--{long}").into());
            }
        }
        let all = <RunOptions as clap::Args>::augment_args(
            clap::Command::new("epic").no_binary_name(true),
        );

        let options = <RunOptions as clap::FromArgMatches>::from_arg_matches(
            &all.try_get_matches_from(words)?,
        )?;
        Ok(Self {
            options,
            reads: std::marker::PhantomData,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {

    use clap::Parser as _;

    use super::*;
    use crate::config::keys;
    use crate::config::test_support::flags;

    /// The options a command that reads `R` takes from `args`.
    fn options_of<R: Reads>(args: &[&str]) -> Result<RunOptions, clap::Error> {
        #[derive(Debug, clap::Parser)]
        struct Only<R: Reads> {
            #[command(flatten)]
            options: OptionsOf<R>,
        }
        Only::<R>::try_parse_from(std::iter::once("epic").chain(args.iter().copied()))
            .map(|only| only.options.options)
    }

    #[test]
    fn a_command_reads_its_options_as_the_run_options_parse_them() {
        for args in [
            &[
                "--coder",
                "exec:./a.sh --x=1",
                "--gate=-x",
                "--gate=a=b",
                "--gate",
                "c d",
            ][..],
            &[
                "--fail-fast",
                "--no-fail-fast",
                "--concurrency",
                "4",
                "--max-wait",
                "1h30m",
            ],
            &[
                "--no-preflight",
                "--keep-worktrees",
                "--schedule",
                "waves",
                "--sandbox=off",
            ],
            &[
                "--expose",
                "~/.aws",
                "--budget-usd",
                "$2.5",
                "--rules",
                "a.md",
                "--rules",
                "b.md",
            ],
            &[],
        ] {
            assert_eq!(options_of::<ForRun>(args).unwrap(), flags(args), "{args:?}");
        }
        let land = [
            "--coder",
            "claude",
            "--gate=-x",
            "--sandbox",
            "on",
            "--max-rounds",
            "5",
        ];
        assert_eq!(options_of::<ForLanding>(&land).unwrap(), flags(&land));
        let plan = ["--architect", "codex", "--sandbox", "off", "--no-preflight"];
        assert_eq!(options_of::<ForPlanning>(&plan).unwrap(), flags(&plan));
        // A bad value is refused for the same reason as by `epic run`.
        let error = options_of::<ForLanding>(&["--max-rounds", "0"]).unwrap_err();
        assert!(error.to_string().contains("at least 1"), "{error}");
        // An option the command does not read is not a flag of it.
        for args in [
            &["--concurrency", "2"][..],
            &["--judge", "claude"],
            &["--no-judge"],
        ] {
            let error = options_of::<ForLanding>(args).unwrap_err();
            assert_eq!(
                error.kind(),
                clap::error::ErrorKind::UnknownArgument,
                "{args:?}"
            );
        }
        assert!(options_of::<ForRun>(&["--architect", "claude"]).is_err());
    }

    #[test]
    fn every_key_landing_reads_is_an_option() {
        for key in ForLanding::KEYS {
            assert!(keys().contains(&key), "{key}");
        }
    }
}
