//! `epic plan TEXT`: an architect seat splits an epic into a plan that validates, written to
//! `epic-plan.md` (or `-o PATH`), its waves and critical path printed.
//!
//! The order: the repository; the epic's text; the plan file's path and format, refused before
//! any turn when it exists without `--force` (exit 2); the architect (`--architect`, else
//! `architect` in `epic.toml`, else its `coder`) with the file's sandbox mode, turn timeout and
//! prices; the brief (the repository's tracked files, the head of its README); then the rounds,
//! run by the executor ([`epic_architect::plan_epic`]) on a tokio runtime, with SIGINT and
//! SIGTERM ending the turn in flight. A plan still invalid after the rounds prints its violations
//! and writes nothing (exit 1).
//!
//! The turns' transcripts and usage are kept under `<git-common-dir>/epic-plans/<time>-<pid>/`:
//! beside the epics' state (`<git-common-dir>/epic/`), not in it, where every directory is taken
//! for an epic (`epic status`) and an unfinished plan has no epic id yet.

use std::fmt::Write as _;
use std::fs::{self, OpenOptions};
use std::io::{self, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

use epic_agents::SeatError;
use epic_architect::{ArchitectBrief, ArchitectError, ArchitectJob, Rejection};
use epic_chat::SeatStop;
use epic_events::{Event, EventSink};
use epic_story_plan::{PlanFormat, StoryPlan, ValidPlan, Violation};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::args::{Format, GlobalArgs, PlanEpicArgs};
use crate::commands::{SKIP_PREFLIGHT, graph, json, render};
use crate::config::{self, Resolved, RunOptions};
use crate::error::{CommandError, Kind, Message, WithSource};
use crate::output::{self, Output};
use crate::plan_file::count;
use crate::repo::{self, Repo};

/// Where the plan goes by default, at the repository root (the name `epic init` uses too).
const DEFAULT_FILE: &str = super::init::PLAN_FILE;

/// The most of a README read: the prompt carries only its head.
const README_READ: u64 = 64 * 1024;

/// `epic plan --format json`.
#[derive(Debug, Serialize)]
struct PlanJson<'a> {
    /// The file written, or `null` when the plan is still invalid.
    written: Option<&'a Path>,
    /// The rounds taken.
    rounds: u32,
    /// The plan's waves (empty when invalid).
    waves: Vec<Vec<&'a str>>,
    /// The plan's critical path (empty when invalid).
    critical_path: Vec<&'a str>,
    /// Why the last reply was no plan: its violations, or why it could not be read.
    violations: &'a [Violation],
    /// Why the last reply could not be read, if it could not.
    unreadable: Option<&'a str>,
    /// Where the transcripts and `usage.json` are.
    transcripts: &'a Path,
}

/// Runs `epic plan`.
pub(crate) fn run(
    global: &GlobalArgs,
    args: &PlanEpicArgs,
    out: Output,
) -> Result<(), CommandError> {
    let format = global.format_for("plan", &[Format::Text, Format::Json])?;
    let repo = repo::discover(global.repo.as_deref())?;
    let epic = epic_text(args)?;
    let (path, plan_format) = target(&repo, args)?;
    let seat_options = options(&repo, args)?;
    let config = seat_options.run_config();
    let brief = ArchitectBrief {
        epic,
        files: repo.git.tracked_files(&repo.root).map_err(|error| {
            CommandError::new(Kind::Repository, error)
                .hint("epic plan shows the architect the repository's tracked files")
        })?,
        readme: readme(&repo.root),
    };
    let job = ArchitectJob {
        seat: seat_options.roster(&seat_options.coder),
        brief,
        repo_root: repo.root.clone(),
        common_dir: repo.common_dir.clone(),
        record_dir: record_dir(&repo),
        rounds: args.rounds.get(),
        turn_timeout: config.turn_timeout,
        sandbox: config.sandbox,
        home: config.home,
        expose: config.expose,
        prices: config.prices,
        max_wait: config.max_wait,
        outage_wait: config.outage_wait,
        stall_timeout: config.stall_timeout,
        clock: config.clock,
        preflight: config.preflight,
    };
    if !out.quiet() {
        output::diagnostic(&format!(
            "epic plan: {} splits the epic, at most {}\n",
            seat_options.coder,
            count(args.rounds.get() as usize, "round", "rounds")
        ));
    }
    let outcome = execute(job, args.rounds.get(), out)?;
    if let Some(note) = &outcome.sandbox_note
        && !out.quiet()
    {
        output::diagnostic(&format!("note: {note}\n"));
    }
    let tokens = outcome.usage.totals().usage.total;
    match &outcome.plan {
        Ok(plan) => {
            write_plan(&path, plan_format, plan.plan(), args.force)?;
            let text = if format == Format::Json {
                json(&PlanJson {
                    written: Some(&path),
                    rounds: outcome.rounds,
                    waves: plan.waves(),
                    critical_path: plan.critical_path().stories,
                    violations: &[],
                    unreadable: None,
                    transcripts: &outcome.record_dir,
                })
            } else {
                written_text(
                    &path,
                    plan,
                    outcome.rounds,
                    tokens,
                    &outcome.record_dir,
                    out,
                )
            };
            output::data(&text)
        }
        Err(rejection) => rejected(rejection, &outcome, format),
    }
}

/// A plan still invalid after the rounds: the last reply's violations (or why it could not be
/// read) as data, and exit 1 saying nothing was written.
fn rejected(
    rejection: &Rejection,
    outcome: &epic_architect::ArchitectOutcome,
    format: Format,
) -> Result<(), CommandError> {
    let (violations, unreadable) = match rejection {
        Rejection::Violations(violations) => (violations.as_slice(), None),
        Rejection::Unreadable(reason) => (&[][..], Some(reason.as_str())),
    };
    if format == Format::Json {
        output::data(&json(&PlanJson {
            written: None,
            rounds: outcome.rounds,
            waves: Vec::new(),
            critical_path: Vec::new(),
            violations,
            unreadable,
            transcripts: &outcome.record_dir,
        }))?;
    } else {
        output::data(&render(|w| {
            if let Some(reason) = unreadable {
                writeln!(w, "error[unreadable]: {reason}")?;
            }
            for violation in violations {
                writeln!(w, "error[{}]: {}", violation.kind, violation.message)?;
            }
            Ok(())
        }))?;
    }
    Err(CommandError::new(
        Kind::Violations,
        Message::new(format!(
            "the architect's plan is still invalid after {}; nothing was written",
            count(outcome.rounds as usize, "round", "rounds")
        )),
    )
    .hint(format!(
        "its turns are in `{}`; try more --rounds, a more precise epic, or another --architect",
        outcome.record_dir.display()
    )))
}

/// The epic's text: TEXT, or the file `--from` names; blank is a usage error.
fn epic_text(args: &PlanEpicArgs) -> Result<String, CommandError> {
    let text = match (&args.text, &args.from) {
        (_, Some(file)) => fs::read_to_string(file).map_err(|error| {
            CommandError::new(
                Kind::Input,
                WithSource {
                    message: format!("failed to read the epic from `{}`", file.display()),
                    source: error,
                },
            )
            .hint("--from names a UTF-8 text file holding the epic")
        })?,
        (Some(text), None) => text.clone(),
        (None, None) => String::new(),
    };
    if text.trim().is_empty() {
        return Err(CommandError::new(
            Kind::Usage,
            Message::new("the epic is empty: `epic plan` needs the epic to split"),
        )
        .hint("pass it as TEXT (`epic plan 'Add a shopping cart'`) or in a file with --from"));
    }
    Ok(text)
}

/// The plan file's path and format: `-o PATH` (relative to the current directory) or
/// `epic-plan.md` at the repository root. An extension that is no plan format is a usage
/// error, an existing file without `--force` exit 2, both before any turn.
fn target(repo: &Repo, args: &PlanEpicArgs) -> Result<(PathBuf, PlanFormat), CommandError> {
    let path = args
        .output
        .clone()
        .unwrap_or_else(|| repo.root.join(DEFAULT_FILE));
    let Some(format) = PlanFormat::from_path(&path) else {
        return Err(CommandError::new(
            Kind::Usage,
            Message::new(format!(
                "`{}` names no plan format: its extension must be .md, .json or .toml",
                path.display()
            )),
        )
        .hint("-o plan.md writes Markdown with a json storyplan block, -o plan.json JSON"));
    };
    // `symlink_metadata`: a dangling symlink exists too.
    if !args.force && fs::symlink_metadata(&path).is_ok() {
        return Err(exists(&path));
    }
    Ok((path, format))
}

fn exists(path: &Path) -> CommandError {
    CommandError::new(
        Kind::Repository,
        Message::new(format!("`{}` already exists", path.display())),
    )
    .hint("pass --force to overwrite it, or -o PATH to write the plan elsewhere")
}

/// The architect's options: its seat (`--architect`, else `architect` in `epic.toml`, else its
/// `coder`) as the seat of a [`Resolved`], and the file's other options (sandbox, turn timeout,
/// prices) with `--sandbox` over them.
fn options(repo: &Repo, args: &PlanEpicArgs) -> Result<Resolved, CommandError> {
    let file = RunOptions::load(&repo.root)?
        .map(|(_, file)| file)
        .unwrap_or_default();
    let options = args
        .options
        .options
        .given()
        .over(&file.over(&RunOptions::defaults()));
    config::exposed(&options, config::user_home().as_ref())?;
    let seat = options.architect.clone().or_else(|| options.coder.clone());
    let Some(seat) = seat else {
        return Err(CommandError::new(
            Kind::Config,
            Message::new("no architect seat: `epic plan` needs one"),
        )
        .hint("pass `--architect SEAT` (claude, codex, gemini, aider, opencode or exec:COMMAND)")
        .hint(format!(
            "or set `architect` (or `coder`, which it defaults to) in {} at the repository root",
            config::FILE_NAME
        )));
    };
    config::check_seats(&options)?;
    Ok(Resolved {
        coder: seat,
        options,
    })
}

/// The head of the repository's README (`README.md`, `README`, …), if it has a readable one.
fn readme(root: &Path) -> Option<String> {
    [
        "README.md",
        "README",
        "README.rst",
        "README.txt",
        "readme.md",
    ]
    .iter()
    .find_map(|name| {
        let file = fs::File::open(root.join(name)).ok()?;
        let mut bytes = Vec::new();
        file.take(README_READ).read_to_end(&mut bytes).ok()?;
        Some(String::from_utf8_lossy(&bytes).into_owned())
    })
}

/// `<git-common-dir>/epic-plans/<UTC time>-<pid>/`: a fresh directory per `epic plan`.
fn record_dir(repo: &Repo) -> PathBuf {
    let stamp = jiff::Timestamp::now().strftime("%Y%m%dT%H%M%SZ");
    repo.common_dir
        .join("epic-plans")
        .join(format!("{stamp}-{}", std::process::id()))
}

/// Runs the rounds on a tokio runtime; each turn said on stderr as it starts (not with `-q`),
/// SIGINT or SIGTERM ending the turn in flight (exit 130).
fn execute(
    mut job: ArchitectJob,
    rounds: u32,
    out: Output,
) -> Result<epic_architect::ArchitectOutcome, CommandError> {
    let runtime = super::runtime("epic-plan")?;
    job.clock = super::clock(&runtime)?;
    let quiet = out.quiet();
    let verbose = out.verbose() > 0;
    let events: EventSink = std::sync::Arc::new(move |event: Event| match event {
        Event::TurnStarted { turn, .. } if !quiet => {
            output::diagnostic(&format!("architect: round {turn} of {rounds}\n"));
        }
        Event::TurnOutput { text, .. } if verbose => output::diagnostic(&text),
        Event::Note { message, .. } if !quiet => {
            output::diagnostic(&format!("note: {message}\n"));
        }
        _ => {}
    });
    let result = runtime.block_on(async move {
        let cancel = CancellationToken::new();
        let signals = tokio::spawn(watch_signals(cancel.clone()));
        let result = epic_architect::plan_epic(job, events, cancel).await;
        signals.abort();
        result
    });
    runtime.shutdown_timeout(Duration::from_secs(5));
    result.map_err(|error| match error {
        ArchitectError::Turn {
            source: SeatError::Cancelled,
            ..
        } => CommandError::new(
            Kind::Interrupted,
            Message::new("interrupted: the architect was stopped; nothing was written"),
        ),
        ArchitectError::Stopped(stop) if stop.interrupts() => CommandError::new(
            Kind::Interrupted,
            Message::new(format!("stopped: {stop}; nothing was written")),
        )
        .hint("rerun `epic plan` once a seat's limit has reset, or raise --max-wait"),
        ArchitectError::Stopped(SeatStop::NotLoggedIn { ref fix, .. }) => {
            let fix = fix.clone();
            CommandError::new(Kind::Config, error).hint(fix)
        }
        ArchitectError::SeatsNotReady(_) => CommandError::new(Kind::Config, error)
            .hint(format!("nothing was started; {SKIP_PREFLIGHT}")),
        ArchitectError::Turn { .. } => CommandError::new(Kind::Config, error)
            .hint("check that the architect seat runs here: `epic config` shows the seats"),
        _ => CommandError::new(Kind::Config, error),
    })
}

/// Cancels `cancel` at the first SIGINT or SIGTERM: the turn's process group is killed.
async fn watch_signals(cancel: CancellationToken) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut interrupt), Ok(mut terminate)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return;
    };
    tokio::select! {
        _ = interrupt.recv() => {}
        _ = terminate.recv() => {}
    }
    cancel.cancel();
}

/// The plan in `format`: Markdown with its `json storyplan` block, JSON, or TOML.
fn plan_text(plan: &StoryPlan, format: PlanFormat) -> Result<String, CommandError> {
    let text = match format {
        PlanFormat::Markdown => plan.to_markdown(),
        PlanFormat::Json => json(plan),
        PlanFormat::Toml => toml::to_string_pretty(plan).map_err(|error| {
            CommandError::new(
                Kind::Output,
                WithSource {
                    message: "failed to write the plan as TOML".to_owned(),
                    source: error,
                },
            )
            .hint("-o plan.md or -o plan.json writes it in another format")
        })?,
    };
    Ok(text)
}

/// Writes the plan to `path`: a new file, or with `force` over the old one (atomically).
#[expect(
    clippy::disallowed_methods,
    reason = "`epic plan` writes the user's own plan file, not epic's state"
)]
fn write_plan(
    path: &Path,
    format: PlanFormat,
    plan: &StoryPlan,
    force: bool,
) -> Result<(), CommandError> {
    let text = plan_text(plan, format)?;
    if force {
        return epic_state_store::write_atomic(path, text.as_bytes())
            .map_err(|error| write_failed(path, error));
    }
    let written = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .and_then(|mut file| file.write_all(text.as_bytes()));
    match written {
        Ok(()) => Ok(()),
        // Made while the architect worked.
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => Err(exists(path)),
        Err(error) => Err(write_failed(path, error)),
    }
}

/// The plan file could not be written.
fn write_failed(
    path: &Path,
    error: impl std::error::Error + Send + Sync + 'static,
) -> CommandError {
    CommandError::new(
        Kind::Output,
        WithSource {
            message: format!("failed to write `{}`", path.display()),
            source: error,
        },
    )
    .hint("check that the directory exists and is writable")
}

/// What `epic plan` prints once the plan is written: where, in how many rounds, the waves and
/// critical path, where the transcripts are, and what to run next.
fn written_text(
    path: &Path,
    plan: &ValidPlan,
    rounds: u32,
    tokens: u64,
    record: &Path,
    out: Output,
) -> String {
    let mut text = render(|w| {
        if !out.quiet() {
            writeln!(
                w,
                "wrote {} ({}, ~{} tokens, estimated)\n",
                path.display(),
                count(rounds as usize, "round", "rounds"),
                crate::progress::thousands(tokens)
            )?;
        }
        Ok(())
    });
    text.push_str(&graph::text(plan, out));
    if !out.quiet() {
        text.push_str(&render(|w| {
            writeln!(w, "transcripts: {}", record.display())?;
            writeln!(w, "next: epic run {}", path.display())
        }));
    }
    text
}
