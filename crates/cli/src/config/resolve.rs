//! The layers resolved: the flags over `epic.toml` over the defaults ([`resolve`]), or, for a run
//! that may follow another, over the options the last run recorded too ([`resolve_rerun`]), and
//! what the executor runs with ([`Resolved::run_config`]); the lines that tell the user which
//! options came from the last run, as shell-quoted flags.

use std::path::PathBuf;

use epic_agents::shell_quote;
use epic_executor::RunConfig;
use epic_process::sandbox::UserHome;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    Count, FILE_NAME, GateJunit, NamedSeats, NonBlank, PriceOverride, Reruns, RosterSpec,
    RunOptions, Seconds, Silence, Wait,
};
use crate::error::{CommandError, Kind};

/// Every `epic run` option resolved ([`resolve`]): the flags over `epic.toml` over the defaults.
/// What `epic run` hands to the executor ([`run_config`](Self::run_config)); `epic config`
/// prints it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Resolved {
    /// The coder, the option without a default.
    pub(crate) coder: RosterSpec,
    /// Every option, each set but those without a default (`epic_branch`, `judge`, `verifier`); serialised
    /// (for `epic config --format json`) with the config file's keys, timeouts in seconds.
    pub(crate) options: RunOptions,
}

/// `flags` over `file` over the defaults, the coder perhaps still unset.
pub(crate) fn merged(file: &RunOptions, flags: &RunOptions) -> RunOptions {
    flags.dropping(flags.given().over(&file.over(&RunOptions::defaults())))
}

/// The options `epic run` uses: `flags` over `file` over the defaults.
///
/// The only option without a default is the coder; without one this fails (exit 2) with a hint
/// naming both places to set it.
pub(crate) fn resolve(file: &RunOptions, flags: &RunOptions) -> Result<Resolved, CommandError> {
    let options = merged(file, flags);
    if options
        .expose
        .as_ref()
        .is_some_and(|stores| !stores.is_empty())
    {
        exposed(&options, user_home().as_ref())?;
    }
    let Some(coder) = options.coder.clone() else {
        return Err(CommandError::new(
            Kind::Config,
            crate::error::Message::new("no coder seat: `epic run` needs one"),
        )
        .hint(
            "pass `--coder SEAT` (claude, codex, gemini, aider, opencode, script or exec:COMMAND)",
        )
        .hint(format!(
            "or set `coder = \"claude\"` in {FILE_NAME} at the repository root"
        )));
    };
    check_seats(&options)?;
    Ok(Resolved { coder, options })
}

/// Checks the named seats of `options` and that every seat its rosters name is a preset,
/// `script`, `exec:COMMAND` or one of them: a config error (exit 2) naming the seat otherwise.
pub(crate) fn check_seats(options: &RunOptions) -> Result<(), CommandError> {
    let named = options.seats.clone().unwrap_or_default();
    super::seats::check_named(&named).map_err(|error| {
        CommandError::new(Kind::Config, crate::error::Message::new(error.to_string()))
            .hint(format!("fix the seat in {FILE_NAME}"))
    })?;
    let rosters = [
        ("coder", &options.coder),
        ("judge", &options.judge),
        ("architect", &options.architect),
        ("verifier", &options.verifier),
    ]
    .into_iter()
    .filter_map(|(key, roster)| roster.as_ref().map(|roster| (key, roster)))
    .chain(
        options
            .reviewer
            .iter()
            .flatten()
            .map(|roster| ("reviewer", roster)),
    );
    for (key, roster) in rosters {
        roster.to_roster(&named).map_err(|error| {
            CommandError::new(
                Kind::Config,
                crate::error::Message::new(format!("`{key}`: {error}")),
            )
        })?;
    }
    Ok(())
}

/// The user's home as the environment names it when the command starts (`HOME`, and
/// `XDG_CONFIG_HOME` where it is set): the sandbox hides the credential stores in it. None
/// where `HOME` is unset or not an absolute path: then nothing is hidden.
pub(crate) fn user_home() -> Option<UserHome> {
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|path| path.is_absolute())
    };
    Some(UserHome {
        home: absolute("HOME")?,
        config_home: absolute("XDG_CONFIG_HOME"),
    })
}

/// The credential stores `options` exposes (`expose`), as absolute paths, each checked to be
/// one the sandbox hides under `home`: a path that is not (a typo, a file inside a store, a
/// path the agents see anyway) is a config error (exit 2) listing the stores.
pub(crate) fn exposed(
    options: &RunOptions,
    home: Option<&UserHome>,
) -> Result<Vec<PathBuf>, CommandError> {
    let stores = home.map(UserHome::credential_stores).unwrap_or_default();
    let mut paths = Vec::new();
    for store in options.expose.iter().flatten() {
        let Some(path) = store.path(home) else {
            return Err(CommandError::new(
                Kind::Config,
                crate::error::Message::new(format!(
                    "`expose` names `{store}`, but HOME is not set: there is no home to \
                     read `~` as"
                )),
            )
            .hint("write the store's absolute path, or run with HOME set"));
        };
        if !stores.contains(&path) {
            let shown: Vec<String> = stores
                .iter()
                .map(|store| match home {
                    Some(home) => match store.strip_prefix(&home.home) {
                        Ok(rest) => format!("~/{}", rest.display()),
                        Err(_) => store.display().to_string(),
                    },
                    None => store.display().to_string(),
                })
                .collect();
            return Err(CommandError::new(
                Kind::Config,
                crate::error::Message::new(format!(
                    "`expose` names `{store}` (`{}`), which is not a credential store the \
                     sandbox hides",
                    path.display()
                )),
            )
            .hint(format!(
                "the stores it hides, each of which `--expose` (or `expose` in {FILE_NAME}) can \
                 show: {}",
                if shown.is_empty() {
                    "none (HOME is not set)".to_owned()
                } else {
                    shown.join(", ")
                }
            ))
            .hint("every other path is visible to the agents as it is"));
        }
        paths.push(path);
    }
    Ok(paths)
}

/// The options a run was given, kept in the epic's state ([`EpicDir::run_options`]) for the next
/// run: the flags over `epic.toml` over the run before's, not the defaults (a newer build's
/// defaults apply to a rerun), and never the architect (`epic run` does not read it) nor the
/// prices (only `epic.toml` sets them, and they change no outcome: a rerun would keep prices
/// removed from the file without a flag to show them by).
///
/// [`EpicDir::run_options`]: epic_state_store::EpicDir::run_options
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub(crate) struct LastRun(pub(crate) RunOptions);

impl epic_state_store::Document for LastRun {
    const NAME: &'static str = "run options";
    const VERSION: u32 = 1;
    const REMEDY: &'static str =
        "remove it, and give the run its options again (the next run records them)";
}

/// The options of a run that may follow another ([`resolve_rerun`]): what it runs with, what it
/// records for the next one, and what to tell the user about them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rerun {
    /// What the run uses.
    pub(crate) resolved: Resolved,
    /// What the run records ([`LastRun`]).
    pub(crate) record: RunOptions,
    /// Lines for stderr, before the run: the options taken from the last run, each seat or gate
    /// list that changed since it, and a warning when no gate proves a merge.
    pub(crate) lines: Vec<String>,
}

/// The options that decide what proves a merge and who works, with how a message names them.
const WATCHED: [(&str, &str); 5] = [
    ("coder", "the coder"),
    ("judge", "the judge"),
    ("reviewer", "the reviewers"),
    ("verifier", "the verifier"),
    ("gate", "the gates"),
];

/// The options `epic run` uses: `flags` over `file` over `last` (the options the last run of the
/// epic recorded, if any) over the defaults.
///
/// Fails like [`resolve`] without a coder in any layer.
pub(crate) fn resolve_rerun(
    file: &RunOptions,
    flags: &RunOptions,
    last: Option<&RunOptions>,
) -> Result<Rerun, CommandError> {
    let given = flags.given().over(file);
    let mut record = flags.dropping(given.over(last.unwrap_or(&RunOptions::default())));
    record.architect = None;
    // Prices and named seats (whose variables may hold a key) come from the file alone: the
    // record keeps neither.
    record.prices.clone_from(&file.prices);
    record.seats.clone_from(&file.seats);
    let resolved = resolve(&record, &RunOptions::default())?;
    record.prices = None;
    record.seats = None;
    let mut lines = Vec::new();
    if let Some(last) = last {
        let set = given.values();
        let dropped = flags.dropped();
        let reused: Vec<&str> = last
            .keys_set()
            .into_iter()
            .filter(|key| !set.contains_key(*key) && !dropped.contains(key) && has_flag(key))
            .collect();
        if !reused.is_empty() {
            lines.push(format!(
                "using the options of the last run: {}",
                last.as_flags(&reused)
            ));
        }
        let defaults = RunOptions::defaults();
        let (before, now) = (last.over(&defaults), record.over(&defaults));
        let (before_values, now_values) = (before.values(), now.values());
        for (key, what) in WATCHED {
            if before_values.get(key) != now_values.get(key) {
                lines.push(format!(
                    "{what} changed since the last run: was {}, now {}",
                    before.as_flags_or_none(key),
                    now.as_flags_or_none(key)
                ));
            }
        }
    }
    if resolved.options.gate.as_ref().is_none_or(Vec::is_empty) {
        lines.push(format!(
            "warning: no gate: nothing proves a merge (a story merges on its agents' word \
             alone); pass `--gate CMD` or set `gate` in {FILE_NAME}"
        ));
    }
    Ok(Rerun {
        resolved,
        record,
        lines,
    })
}

/// Whether option `key` has a flag of the same name (`prices` and `architect` are set only in
/// `epic.toml`).
fn has_flag(key: &str) -> bool {
    !matches!(key, "prices" | "architect")
}

impl RunOptions {
    /// The options `keys` as `epic run` flags, each value quoted for a POSIX shell where it needs
    /// it: `--coder exec:./agent.sh --gate 'cargo test'`. An empty list reads as its negation
    /// where it has one (`--no-reviewer`), else `no --gate`.
    pub(crate) fn as_flags(&self, keys: &[&str]) -> String {
        use serde_json::Value;
        let values = self.values();
        let mut words = Vec::new();
        for key in keys {
            let Some(value) = values.get(*key) else {
                continue;
            };
            let flag = format!("--{}", key.replace('_', "-"));
            let text = |value: &Value| match value {
                Value::String(text) => shell_quote(text),
                other => shell_quote(&other.to_string()),
            };
            match value {
                Value::Bool(true) => words.push(flag),
                Value::Bool(false) => words.push(format!("--no-{}", &flag[2..])),
                Value::Array(items) if items.is_empty() && *key == "reviewer" => {
                    words.push(format!("--no-{}", &flag[2..]));
                }
                Value::Array(items) if items.is_empty() => words.push(format!("no {flag}")),
                Value::Array(items) => {
                    for item in items {
                        words.push(format!("{flag} {}", text(item)));
                    }
                }
                other => words.push(format!("{flag} {}", text(other))),
            }
        }
        words.join(" ")
    }

    /// Option `key` as flags ([`as_flags`](Self::as_flags)), or `none` when it is unset or an
    /// empty list.
    fn as_flags_or_none(&self, key: &str) -> String {
        match self.values().get(key) {
            None => "none".to_owned(),
            Some(serde_json::Value::Array(items)) if items.is_empty() => "none".to_owned(),
            Some(_) => self.as_flags(&[key]),
        }
    }
}

impl Resolved {
    /// The executor's roster of `roster`, a roster of these options (its named seats from
    /// `[seats]`, checked by [`resolve`] or [`check_seats`]).
    pub(crate) fn roster(&self, roster: &RosterSpec) -> epic_agents::Roster {
        let named: NamedSeats = self.options.seats.clone().unwrap_or_default();
        roster
            .to_roster(&named)
            .expect("every roster was checked when the options were resolved")
    }

    /// What the executor runs with: [`RunConfig::new`] with each option set here, each seat made
    /// a running agent, the config's price overrides over the executor's prices.
    #[expect(
        clippy::too_many_lines,
        reason = "a statement per option: the one place every option reaches the executor"
    )]
    pub(crate) fn run_config(&self) -> RunConfig {
        /// `value`, if set, in `slot`.
        fn set<T>(slot: &mut T, value: Option<T>) {
            if let Some(value) = value {
                *slot = value;
            }
        }
        let texts = |texts: &Option<Vec<NonBlank>>| {
            texts
                .as_ref()
                .map(|t| t.iter().map(NonBlank::to_string).collect())
        };
        let options = &self.options;
        let roster = |roster: &RosterSpec| self.roster(roster);
        let mut config = RunConfig::new(roster(&self.coder));
        set(
            &mut config.base,
            options.base.as_ref().map(NonBlank::to_string),
        );
        set(
            &mut config.epic_branch,
            options
                .epic_branch
                .as_ref()
                .map(|branch| Some(branch.to_string())),
        );
        set(
            &mut config.concurrency,
            options.concurrency.map(Count::size),
        );
        set(&mut config.fail_fast, options.fail_fast);
        set(
            &mut config.judge,
            options.judge.as_ref().map(|judge| Some(roster(judge))),
        );
        set(
            &mut config.reviewers,
            options
                .reviewer
                .as_ref()
                .map(|rosters| rosters.iter().map(roster).collect()),
        );
        set(&mut config.gates, texts(&options.gate));
        set(
            &mut config.judge_rounds,
            options.judge_rounds.map(Count::get),
        );
        set(&mut config.max_rounds, options.max_rounds.map(Count::get));
        set(&mut config.max_tasks, options.max_tasks.map(Count::size));
        set(
            &mut config.turn_timeout,
            options.turn_timeout.map(Seconds::duration),
        );
        set(
            &mut config.gate_timeout,
            options.gate_timeout.map(Seconds::duration),
        );
        set(
            &mut config.gate_reruns,
            options.gate_reruns.map(Reruns::get),
        );
        config.gate_junit =
            GateJunit::by_command(options.gate_junit.as_deref().unwrap_or_default());
        set(&mut config.setup, texts(&options.setup));
        set(&mut config.keep_worktrees, options.keep_worktrees);
        set(&mut config.allow_red_baseline, options.allow_red_baseline);
        set(&mut config.preflight, options.preflight);
        set(&mut config.schedule, options.schedule);
        set(
            &mut config.merge_batch,
            options.merge_batch.map(Count::size),
        );
        set(
            &mut config.merge_revisions,
            options.merge_revisions.map(Reruns::get),
        );
        set(&mut config.test_patterns, texts(&options.test_pattern));
        set(&mut config.sandbox, options.sandbox);
        config.home = user_home();
        set(&mut config.expose, self.expose_paths(config.home.as_ref()));
        set(
            &mut config.budget_usd,
            options.budget_usd.map(|usd| Some(usd.get())),
        );
        set(&mut config.noop, options.noop);
        set(&mut config.planner, options.planner);
        set(
            &mut config.verifier,
            options
                .verifier
                .as_ref()
                .map(|verifier| Some(roster(verifier))),
        );
        set(
            &mut config.board_hook,
            options
                .board_hook
                .as_ref()
                .map(|command| Some(command.to_string())),
        );
        set(&mut config.on_blocked, options.on_blocked);
        set(
            &mut config.notify,
            options
                .notify
                .as_ref()
                .map(|command| Some(command.to_string())),
        );
        set(&mut config.max_wait, options.max_wait.map(Wait::duration));
        set(
            &mut config.outage_wait,
            options.outage_wait.map(Wait::duration),
        );
        let stall_timeout = options.stall_timeout.map(Silence::duration);
        set(&mut config.stall_timeout, stall_timeout);
        set(&mut config.worktrees, options.worktrees);
        config.prices = config.prices.clone().merge(self.price_overrides());
        config
    }

    /// The stores `expose` names, as paths from `home` (each checked when the options were
    /// resolved: [`exposed`]).
    fn expose_paths(&self, home: Option<&UserHome>) -> Option<Vec<PathBuf>> {
        let stores = self.options.expose.as_ref()?;
        Some(stores.iter().filter_map(|store| store.path(home)).collect())
    }

    /// The config's price overrides as a table, the most specific prefix first.
    fn price_overrides(&self) -> epic_report::PriceTable {
        let mut overrides: Vec<(&String, &PriceOverride)> =
            self.options.prices.iter().flatten().collect();
        // A table tries its rates in order; the most specific prefix must come first.
        overrides.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(b.0)));
        overrides.into_iter().fold(
            epic_report::PriceTable::empty(),
            |table, (prefix, price)| table.with(prefix.clone(), price.price()),
        )
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use std::time::Duration;

    use epic_process::sandbox::UserHome;
    use epic_schedule::Policy;

    use epic_report::Price;

    use super::*;
    use crate::config::StorePath;
    use crate::config::test_support::{FULL, flags, seat, texts};

    #[test]
    fn a_rerun_takes_flags_then_the_file_then_the_last_run() {
        let last = flags(&[
            "--coder",
            "script",
            "--gate",
            "make test",
            "--max-rounds",
            "1",
            "--fail-fast",
        ]);
        let file = RunOptions::parse("max_rounds = 4\narchitect = \"claude\"\n").unwrap();
        let rerun = resolve_rerun(&file, &flags(&["--no-fail-fast"]), Some(&last)).unwrap();
        let options = &rerun.resolved.options;
        assert_eq!(rerun.resolved.coder, seat("script"));
        assert_eq!(options.gate, Some(texts(&["make test"])));
        assert_eq!(options.max_rounds, Count::new(4));
        assert_eq!(options.fail_fast, Some(false));
        // What is recorded: no defaults, no architect.
        assert_eq!(rerun.record.architect, None);
        assert_eq!(rerun.record.concurrency, None);
        let priced = RunOptions {
            prices: Some(BTreeMap::new()),
            ..last.clone()
        };
        let file = RunOptions::parse("[prices.claude]\ninput = 1.0\noutput = 2.0\n").unwrap();
        let rerun_priced = resolve_rerun(&file, &flags(&[]), Some(&priced)).unwrap();
        assert_eq!(rerun_priced.record.prices, None);
        assert_eq!(rerun_priced.resolved.options.prices, file.prices);
        assert_eq!(
            rerun.lines,
            ["using the options of the last run: --coder script --gate 'make test'"]
        );
    }

    #[test]
    fn a_first_run_records_what_it_was_given_and_warns_without_a_gate() {
        let rerun = resolve_rerun(
            &RunOptions::default(),
            &flags(&["--coder", "script", "--setup", "npm ci"]),
            None,
        )
        .unwrap();
        assert_eq!(rerun.record.setup, Some(texts(&["npm ci"])));
        assert_eq!(rerun.lines.len(), 1);
        assert!(
            rerun.lines[0].starts_with("warning: no gate: nothing proves a merge"),
            "{:?}",
            rerun.lines
        );
    }

    #[test]
    fn a_rerun_says_which_seats_and_gates_changed() {
        let last = flags(&[
            "--coder",
            "script",
            "--judge",
            "codex",
            "--verifier",
            "gemini",
            "--gate",
            "true",
        ]);
        let now = flags(&[
            "--coder",
            "claude",
            "--verifier",
            "codex",
            "--gate",
            "true",
            "--gate",
            "false",
        ]);
        let file = RunOptions::parse("judge = \"codex\"\n").unwrap();
        let rerun = resolve_rerun(&file, &now, Some(&last)).unwrap();
        assert_eq!(
            rerun.lines,
            [
                "the coder changed since the last run: was --coder script, now --coder claude",
                "the verifier changed since the last run: was --verifier gemini, now --verifier \
                 codex",
                "the gates changed since the last run: was --gate true, now --gate true --gate \
                 false",
            ]
        );
    }

    #[test]
    fn no_judge_no_verifier_and_no_reviewer_drop_what_the_file_or_the_last_run_named() {
        let last = flags(&[
            "--coder",
            "script",
            "--judge",
            "codex",
            "--verifier",
            "gemini",
            "--reviewer",
            "claude",
            "--gate",
            "true",
        ]);
        let file = RunOptions::parse("judge = \"claude\"\n").unwrap();
        let now = flags(&["--no-judge", "--no-verifier", "--no-reviewer"]);
        let rerun = resolve_rerun(&file, &now, Some(&last)).unwrap();
        let options = &rerun.resolved.options;
        assert_eq!(options.judge, None);
        assert_eq!(options.verifier, None);
        assert_eq!(options.reviewer, Some(Vec::new()));
        // Recorded so: the next rerun has none either.
        assert_eq!(rerun.record.judge, None);
        assert_eq!(rerun.record.verifier, None);
        assert_eq!(rerun.record.reviewer, Some(Vec::new()));
        assert_eq!(
            rerun.lines,
            [
                "using the options of the last run: --coder script --gate true",
                "the judge changed since the last run: was --judge codex, now none",
                "the reviewers changed since the last run: was --reviewer claude, now none",
                "the verifier changed since the last run: was --verifier gemini, now none",
            ]
        );
        // The last of a seat and its negation wins, as for the on/off options.
        let merged = |args: &[&str]| merged(&file, &flags(args)).judge;
        assert_eq!(
            merged(&["--no-judge", "--judge", "codex"]),
            Some(seat("codex"))
        );
        assert_eq!(merged(&["--judge", "codex", "--no-judge"]), None);
        assert_eq!(merged(&[]), Some(seat("claude")));
    }

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_quote("plan.json"), "plan.json");
        assert_eq!(shell_quote("exec:./agent.sh"), "exec:./agent.sh");
        assert_eq!(shell_quote("my plan.md"), "'my plan.md'");
        assert_eq!(shell_quote("it's"), "\"it's\"");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn an_exposed_path_must_be_a_hidden_store() {
        let home = UserHome {
            home: "/home/ann".into(),
            config_home: Some("/xdg".into()),
        };
        let exposing = |paths: &[&str]| {
            let mut args = vec!["--coder", "script"];
            for path in paths {
                args.extend(["--expose", path]);
            }
            exposed(&flags(&args).given(), Some(&home))
        };
        assert_eq!(
            exposing(&["~/.ssh", "/xdg/gh", "/home/ann/.config/gh/"]).unwrap(),
            [
                PathBuf::from("/home/ann/.ssh"),
                PathBuf::from("/xdg/gh"),
                PathBuf::from("/home/ann/.config/gh")
            ]
        );
        for wrong in ["~/.sshh", "~/.ssh/id_ed25519", "~/.codex", "/etc"] {
            let error = exposing(&[wrong]).unwrap_err();
            assert_eq!(error.exit_code(), 2);
            let text = format!("{}\n{}", error.cause().unwrap(), error.hints().join("\n"));
            assert!(
                text.contains(&format!("`{wrong}`"))
                    && text.contains("not a credential store")
                    && text.contains("~/.ssh, ~/.gnupg"),
                "{text}"
            );
        }
        let error = exposed(&flags(&["--expose", "~/.ssh"]), None).unwrap_err();
        assert!(error.cause().unwrap().contains("HOME is not set"));
        // The form is checked where it is written, by a flag or in the file.
        assert!("ssh".parse::<StorePath>().is_err() && "~/".parse::<StorePath>().is_err());
        assert!(RunOptions::parse("expose = [\".ssh\"]").is_err());
        let run = flags(&["--coder", "script", "--expose", "~/.aws"]).given();
        let config = Resolved {
            coder: seat("script"),
            options: run,
        }
        .run_config();
        let home = user_home().expect("the tests run with HOME set");
        assert_eq!(config.expose, [home.home.join(".aws")]);
        assert_eq!(config.home, Some(home));
    }

    #[test]
    fn the_coder_is_required() {
        let error = resolve(&RunOptions::default(), &flags(&[])).unwrap_err();
        assert_eq!(error.exit_code(), 2);
        assert!(error.cause().unwrap().contains("no coder seat"));
    }

    #[test]
    fn the_longest_price_prefix_wins() {
        let file = RunOptions::parse(
            "[prices]\nclaude = { input = 1, output = 2 }\n\"claude-x\" = { input = 7, output = 8 }\n",
        )
        .unwrap();
        let prices = resolve(&file, &flags(&["--coder", "script"]))
            .unwrap()
            .run_config()
            .prices;
        assert_eq!(
            prices.price_of("claude-x1"),
            Some(Price::new(7.0, 8.0).unwrap())
        );
        assert_eq!(
            prices.price_of("claude"),
            Some(Price::new(1.0, 2.0).unwrap())
        );
    }

    #[test]
    fn flags_win_over_the_config() {
        let file = RunOptions::parse(FULL).unwrap();
        let resolved = resolve(
            &file,
            &flags(&[
                "--base",
                "v2",
                "--concurrency",
                "1",
                "--no-fail-fast",
                "--coder",
                "claude",
                "--reviewer",
                "aider",
                "--gate",
                "make check",
                "--turn-timeout",
                "60",
                "--schedule",
                "plan-order",
                "--no-keep-worktrees",
            ]),
        )
        .unwrap();
        assert_eq!(resolved.coder, seat("claude"));
        // A list flag replaces the whole list.
        assert_eq!(resolved.options.reviewer, Some(vec![seat("aider")]));
        // Not given as a flag: the config's.
        assert_eq!(resolved.options.judge, Some(seat("codex")));
        let config = resolved.run_config();
        assert_eq!(config.base, "v2");
        assert_eq!(config.concurrency, 1);
        assert!(!config.fail_fast && !config.keep_worktrees);
        assert_eq!(config.gates, ["make check"]);
        assert_eq!(config.turn_timeout, Duration::from_mins(1));
        assert_eq!(config.schedule, Policy::PlanOrder);
        // Not given as flags: the config's.
        assert_eq!(config.setup, ["npm ci"]);
        assert_eq!(config.gate_timeout, Duration::from_mins(5));
        assert!(config.allow_red_baseline);
    }

    #[test]
    fn a_boolean_flag_turns_on_what_the_config_leaves_off() {
        let config = resolve(
            &RunOptions::parse("fail_fast = false").unwrap(),
            &flags(&[
                "--coder",
                "claude",
                "--fail-fast",
                "--keep-worktrees",
                "--allow-red-baseline",
            ]),
        )
        .unwrap()
        .run_config();
        assert!(config.fail_fast && config.keep_worktrees && config.allow_red_baseline);
    }

    #[test]
    fn the_last_of_a_flag_and_its_negation_wins() {
        let given = |args: &[&str]| flags(args).given().fail_fast;
        assert_eq!(given(&[]), None, "neither: not set");
        assert_eq!(given(&["--fail-fast"]), Some(true));
        assert_eq!(given(&["--no-fail-fast"]), Some(false));
        assert_eq!(given(&["--fail-fast", "--no-fail-fast"]), Some(false));
        assert_eq!(given(&["--no-fail-fast", "--fail-fast"]), Some(true));
        assert_eq!(flags(&["--no-fail-fast"]).given().keys_set(), ["fail_fast"]);
    }
}
