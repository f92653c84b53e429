//! `epic land [EPIC]`: a finished epic landed on its target, proven; the exit codes of
//! docs/contract.md (0 landed, already landed or dry run; 1 not landed, the target untouched; 2
//! bad usage or repository; 3 the epic's lock is held).
//!
//! The order: the repository, the epic, its plan (the one its last run recorded, `plan.json`, or
//! `--plan`), the target (`--target`, else the branch the epic was started from, else the
//! current branch), the options (the flags over `epic.toml` over the epic's last run's, as `epic
//! run` resolves them, never recorded), then [`epic_land::land_epic`] on a tokio runtime.
//! With `--pr`, `gh` is checked first (installed, logged in), the landing stops once the epic
//! branch is green with the target in it, and the epic branch is pushed and a pull request
//! opened or updated.

use std::fmt::Write as _;
use std::time::Duration;

use epic_chat::SeatStop;
use epic_events::{Event, EventSink};
use epic_executor::RunConfig;
use epic_git_ops::Git as _;
use epic_land::LandConfig;
use epic_land::{
    DryRun, LandError, LandJob, LandOutcome, PullRequest, PullRequestError, PullRequestOpened,
    RunPlan,
};
use epic_report::{Landing, PutBack};
use epic_state_store::EpicDir;
use epic_story_plan::StoryPlan;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::args::{Format, GlobalArgs, LandArgs};
use crate::commands::{SKIP_PREFLIGHT, json, render};
use crate::config::{self, ForLanding, LastRun, RunOptions};
use crate::epics;
use crate::error::{CommandError, Kind, Message};
use crate::output::{self, Output};
use crate::repo::{self, Repo};

/// Runs `epic land`.
pub(crate) fn run(global: &GlobalArgs, args: &LandArgs, out: Output) -> Result<(), CommandError> {
    let format = global.format_for("land", &[Format::Text, Format::Json])?;
    let repo = repo::discover(global.repo.as_deref())?;
    let dir = epics::select_one(&repo, args.epic.as_deref(), "land")?;
    let recorded = epic_state_store::load::<RunPlan>(dir.run_plan())
        .map_err(|error| CommandError::new(Kind::Repository, error))?;
    let plan = the_plan(args, &dir, recorded.as_ref().map(|r| &r.plan), out)?;
    let target = the_target(
        &repo,
        args.target.as_deref(),
        recorded.and_then(|r| r.started_from),
    )?;
    let config = options(&repo, &dir, args, out)?;
    let job = LandJob {
        plan,
        target,
        partial: args.partial,
        dry_run: args.dry_run,
        keep: args.keep,
        allow_unattested: args.allow_unattested,
        stop_before_target: args.pr,
    };
    let pull_request = args
        .pr
        .then(|| pull_request(&repo, &dir, args, &job))
        .transpose()?;
    let (outcome, opened) = execute(&repo, job, config, pull_request, out)?;
    if let Some(opened) = &opened {
        if format == Format::Json {
            output::data(&json(&json!({
                "outcome": "pull_request",
                "url": opened.url,
                "updated": opened.updated,
                "remote": opened.remote,
            })))?;
        } else if !out.quiet() {
            output::data(&format!(
                "pull request {}: {} (pushed to `{}`)\n",
                if opened.updated { "updated" } else { "opened" },
                opened.url,
                opened.remote
            ))?;
        }
        return Ok(());
    }
    report(&outcome, format, out)
}

/// The pull request `--pr` opens: the epic branch onto the target, titled from the epic, its
/// body the report in Markdown and the verify result.
fn pull_request(
    repo: &Repo,
    dir: &EpicDir,
    args: &LandArgs,
    job: &LandJob,
) -> Result<PullRequest, CommandError> {
    let last = epic_state_store::load::<LastRun>(dir.run_options())
        .map_err(|error| CommandError::new(Kind::Repository, error))?;
    let branch = args
        .options
        .options
        .epic_branch
        .as_ref()
        .or_else(|| last.as_ref().and_then(|last| last.0.epic_branch.as_ref()))
        .map_or_else(|| format!("epic/{}", dir.epic_id()), ToString::to_string);
    let summary = job.plan.epic.lines().find(|line| !line.trim().is_empty());
    let title = match summary {
        Some(line) => format!("{}: {}", dir.epic_id(), line.trim()),
        None => format!("epic {}", dir.epic_id()),
    };
    let report = epics::load_report(dir)?
        .map(|report| epic_report::render_markdown(&report))
        .unwrap_or_default();
    let body =
        format!("{report}\n## Verify\n\nEvery commit of `{branch}` is attested (`epic verify`).\n");
    Ok(PullRequest {
        gh: std::ffi::OsString::from("gh"),
        checkout: repo.root.clone(),
        remote: args.remote.clone(),
        branch,
        base: job.target.clone(),
        title,
        body,
        draft: args.draft,
    })
}

/// The epic's plan: `--plan`, else the one its last run recorded.
fn the_plan(
    args: &LandArgs,
    dir: &EpicDir,
    recorded: Option<&StoryPlan>,
    out: Output,
) -> Result<StoryPlan, CommandError> {
    let plan = match (&args.plan, recorded) {
        (Some(path), _) => super::run::load_valid(path, out)?.plan().clone(),
        (None, Some(plan)) => plan.clone(),
        (None, None) => {
            return Err(CommandError::new(
                Kind::Repository,
                Message::new(format!(
                    "the plan of epic `{}` is not recorded (its last run predates `epic land`)",
                    dir.epic_id()
                )),
            )
            .hint("name it: `epic land --plan PLAN`"));
        }
    };
    if plan.epic_id != dir.epic_id() {
        return Err(CommandError::new(
            Kind::Usage,
            Message::new(format!(
                "the plan is epic `{}`, not `{}`",
                plan.epic_id,
                dir.epic_id()
            )),
        ));
    }
    Ok(plan)
}

/// `--target`, else the branch the epic was started from, else the current branch.
fn the_target(
    repo: &Repo,
    given: Option<&str>,
    started_from: Option<String>,
) -> Result<String, CommandError> {
    if let Some(target) = given {
        return Ok(target
            .strip_prefix("refs/heads/")
            .unwrap_or(target)
            .to_owned());
    }
    if let Some(branch) = started_from {
        return Ok(branch);
    }
    match repo.git.current_branch(&repo.root) {
        Ok(Some(branch)) => Ok(branch),
        _ => Err(CommandError::new(
            Kind::Usage,
            Message::new("no target: the epic recorded no branch it started from, and your checkout has no branch checked out"),
        )
        .hint("name it: `epic land --target BRANCH`")),
    }
}

/// The run options of the landing: the flags over `epic.toml` over the epic's last run's, of
/// each only the options landing reads ([`ForLanding`]; the others would be named in the lines
/// about the last run's options and what changed since, and change nothing).
fn options(
    repo: &Repo,
    dir: &EpicDir,
    args: &LandArgs,
    out: Output,
) -> Result<LandConfig, CommandError> {
    let reads = &ForLanding::KEYS;
    let file = RunOptions::load(&repo.root)?.map(|(_, file)| file.only(reads));
    let last = epic_state_store::load::<LastRun>(dir.run_options())
        .map_err(|error| CommandError::new(Kind::Repository, error))?
        .map(|last| last.0.only(reads));
    let rerun = config::resolve_rerun(
        &file.unwrap_or_default(),
        &args.options.options,
        last.as_ref(),
    )?;
    let rules = config::house_rules(
        &repo.root,
        rerun.resolved.options.rules.as_deref().unwrap_or_default(),
    )?;
    if !out.quiet() && !args.dry_run {
        for line in &rerun.lines {
            output::diagnostic(&format!("{line}\n"));
        }
    }
    let mut config = rerun.resolved.run_config();
    config.extra_rules = rules;
    config.guarded_files = vec![repo.root.join(config::FILE_NAME)];
    Ok(land_config(config))
}

/// Of the resolved run options, those a landing reads.
fn land_config(run: RunConfig) -> LandConfig {
    LandConfig {
        epic_branch: run.epic_branch,
        lander: run.coder,
        max_rounds: run.max_rounds,
        turn_timeout: run.turn_timeout,
        extra_rules: run.extra_rules,
        preflight: run.preflight,
        gates: run.gates,
        gate_timeout: run.gate_timeout,
        gate_reruns: run.gate_reruns,
        test_patterns: run.test_patterns,
        sandbox: run.sandbox,
        home: run.home,
        expose: run.expose,
        guarded_files: run.guarded_files,
        budget_usd: run.budget_usd,
        prices: run.prices,
        max_wait: run.max_wait,
        outage_wait: run.outage_wait,
        stall_timeout: run.stall_timeout,
        clock: run.clock,
    }
}

/// Runs the landing, its events as lines on stderr (not with `-q`).
fn execute(
    repo: &Repo,
    job: LandJob,
    mut config: LandConfig,
    pull_request: Option<PullRequest>,
    out: Output,
) -> Result<(LandOutcome, Option<PullRequestOpened>), CommandError> {
    let runtime = super::runtime("epic-land")?;
    config.clock = super::clock(&runtime)?;
    let epic = job.plan.epic_id.clone();
    let (quiet, verbose) = (out.quiet(), out.verbose() > 0);
    let events: EventSink = std::sync::Arc::new(move |event: Event| {
        if let Some(line) = line(&event, quiet, verbose) {
            output::diagnostic(&line);
        }
    });
    let git: std::sync::Arc<dyn epic_git_ops::Git> = repo.git.clone();
    let result = runtime.block_on(async move {
        let cancel = CancellationToken::new();
        let say = |text: String| output::diagnostic(&format!("{text}\n"));
        let signals = tokio::spawn(super::run::watch_signals(cancel.clone(), say));
        let result = land_and_propose(git, job, config, events, cancel, pull_request).await;
        signals.abort();
        result
    });
    runtime.shutdown_timeout(Duration::from_secs(5));
    result.map_err(|error| match error {
        Failed::Land(error) => land_error(error, &epic),
        Failed::PullRequest(error) => CommandError::new(Kind::SeatUnusable, error),
    })
}

/// Why [`land_and_propose`] failed.
enum Failed {
    Land(LandError),
    PullRequest(PullRequestError),
}

/// The landing; with `pull_request`, `gh` checked first, and once the epic branch is ready the
/// branch pushed and the pull request opened.
async fn land_and_propose(
    git: std::sync::Arc<dyn epic_git_ops::Git>,
    job: LandJob,
    config: LandConfig,
    events: EventSink,
    cancel: CancellationToken,
    pull_request: Option<PullRequest>,
) -> Result<(LandOutcome, Option<PullRequestOpened>), Failed> {
    if let Some(request) = &pull_request {
        epic_land::check_gh(&request.gh, &request.checkout)
            .await
            .map_err(Failed::PullRequest)?;
    }
    let outcome = epic_land::land_epic(std::sync::Arc::clone(&git), job, config, events, cancel)
        .await
        .map_err(Failed::Land)?;
    let (Some(request), LandOutcome::Ready { .. }) = (pull_request, &outcome) else {
        return Ok((outcome, None));
    };
    let opened = epic_land::open_pull_request(git, request)
        .await
        .map_err(Failed::PullRequest)?;
    Ok((outcome, Some(opened)))
}

/// The line an event of the landing shows on stderr, if any.
fn line(event: &Event, quiet: bool, verbose: bool) -> Option<String> {
    match event {
        _ if quiet => None,
        Event::TurnStarted { role, seat, .. } => Some(format!("land: {role} turn ({seat})\n")),
        Event::TurnOutput { text, .. } if verbose => Some(text.clone()),
        Event::EpicGate {
            command, status, ..
        } => Some(format!("land: gate `{command}`: {status}\n")),
        Event::GateFlaky {
            command,
            runs,
            status,
            output,
            ..
        } => Some(format!(
            "land: {}\n",
            crate::progress::flaky(command, *runs, status, output)
        )),
        Event::RunNote { message } | Event::Note { message, .. } => {
            Some(format!("land: {message}\n"))
        }
        Event::TurnStalled {
            role,
            silent_secs,
            again,
            ..
        } => Some(format!(
            "land: {role} turn printed nothing for {silent_secs}s; ended as stalled{}\n",
            if *again { ", running it again" } else { "" }
        )),
        Event::TurnLooping {
            role,
            tool,
            times,
            again,
            ..
        } => Some(format!(
            "land: {role} turn called `{tool}` with the same input {times} times in a row; ended \
             as looping{}\n",
            if *again {
                ", running it again with a note"
            } else {
                ""
            }
        )),
        _ => None,
    }
}

/// A landing that could not be attempted: exit 3 when the lock is held, else 2.
fn land_error(error: LandError, epic: &str) -> CommandError {
    if error.is_locked() {
        return CommandError::new(Kind::LockHeld, error).hint(format!(
            "`epic status {epic}` shows the run holding it; land once it ended"
        ));
    }
    if let LandError::Stopped(stop) = &error {
        return match stop {
            SeatStop::NotLoggedIn { fix, .. } => {
                let fix = fix.clone();
                CommandError::new(Kind::Config, error).hint(fix).hint(
                    "nothing landed: the epic branch was put back and the target is untouched",
                )
            }
            _ => CommandError::new(
                Kind::Interrupted,
                Message::new(format!(
                    "stopped: {stop}; nothing landed: the epic branch was put back and the \
                     target is untouched"
                )),
            )
            .hint("run `epic land` again once a seat's limit has reset, or raise --max-wait"),
        };
    }
    if matches!(error, LandError::SeatsNotReady(_)) {
        return CommandError::new(Kind::Config, error)
            .hint("nothing landed: the epic branch was put back and the target is untouched")
            .hint(format!(
                "fix the seat, then run `epic land` again; {SKIP_PREFLIGHT}"
            ));
    }
    CommandError::new(Kind::Repository, error)
}

/// Prints the outcome and picks the exit code.
fn report(outcome: &LandOutcome, format: Format, out: Output) -> Result<(), CommandError> {
    if format == Format::Json {
        output::data(&json(&outcome_json(outcome)))?;
    } else if !out.quiet() {
        let text = match outcome {
            LandOutcome::Landed(landing) => landed_text(landing),
            LandOutcome::AlreadyLanded { target, commit } => format!(
                "already landed on `{target}`{}: nothing to do\n",
                commit
                    .as_ref()
                    .map_or_else(String::new, |commit| format!(" ({commit})"))
            ),
            LandOutcome::DryRun(dry) => dry_run_text(dry),
            LandOutcome::Ready {
                epic_branch,
                target,
                head,
                put_back,
                ..
            } => render(|w| {
                writeln!(
                    w,
                    "`{epic_branch}` is green with `{target}` merged in ({head})"
                )?;
                put_back_text(w, put_back)
            }),
            LandOutcome::NotLanded(_) | LandOutcome::Interrupted => String::new(),
        };
        if !text.is_empty() {
            output::data(&text)?;
        }
    }
    match outcome {
        LandOutcome::NotLanded(why) => Err(CommandError::new(
            Kind::NotLanded,
            Message::new(format!("not landed: {why}")),
        )),
        LandOutcome::Interrupted => Err(CommandError::new(
            Kind::Interrupted,
            Message::new("interrupted: the epic branch is back where it was, the target untouched"),
        )),
        _ => Ok(()),
    }
}

fn landed_text(landing: &Landing) -> String {
    render(|w| {
        writeln!(
            w,
            "landed on `{}`: {} (from {})",
            landing.target, landing.commit, landing.from
        )?;
        for conflict in &landing.conflicts {
            let by = conflict.story.as_deref().map_or_else(
                || "the final turn".to_owned(),
                |story| format!("story {story}"),
            );
            writeln!(w, "  conflict {} resolved by {by}", conflict.path)?;
        }
        if landing.rounds > 0 {
            writeln!(w, "gate rounds after the merge: {}", landing.rounds)?;
        }
        if !landing.left_out.is_empty() {
            writeln!(w, "left out (not merged): {}", landing.left_out.join(", "))?;
        }
        put_back_text(w, &landing.put_back)
    })
}

/// What lander turns changed outside their perimeter, one line per turn.
fn put_back_text(w: &mut String, put_back: &[PutBack]) -> std::fmt::Result {
    for put in put_back {
        let mut what = put.paths.clone();
        if put.moved_head {
            what.push("its own commits or branch move".to_owned());
        }
        writeln!(
            w,
            "put back (outside the lander's perimeter) from {}: {}",
            put.turn(),
            what.join(", ")
        )?;
    }
    Ok(())
}

fn dry_run_text(dry: &DryRun) -> String {
    render(|w| {
        writeln!(w, "dry run: nothing was changed")?;
        if dry.target_moved {
            writeln!(
                w,
                "`{}` moved since the epic branch last held it",
                dry.target
            )?;
        } else {
            writeln!(
                w,
                "`{}` has not moved: the epic branch holds it",
                dry.target
            )?;
        }
        if dry.conflicts.is_empty() {
            writeln!(w, "conflicts: none")?;
        } else {
            writeln!(w, "conflicts:")?;
            for conflict in &dry.conflicts {
                let owner = conflict
                    .story
                    .as_deref()
                    .map_or_else(|| "no story".to_owned(), |story| format!("story {story}"));
                writeln!(w, "  {} (owned by {owner})", conflict.path)?;
            }
        }
        if !dry.unmerged.is_empty() {
            let list: Vec<String> = dry
                .unmerged
                .iter()
                .map(|u| format!("{} ({})", u.story, u.status))
                .collect();
            writeln!(w, "not merged: {}", list.join(", "))?;
        }
        if dry.unattested.is_empty() {
            writeln!(w, "verify: every commit attested")?;
        } else {
            writeln!(w, "verify: unattested {}", dry.unattested.join(", "))?;
        }
        Ok(())
    })
}

/// `epic land --format json`.
fn outcome_json(outcome: &LandOutcome) -> serde_json::Value {
    match outcome {
        LandOutcome::Landed(landing) => json!({"outcome": "landed", "landing": landing}),
        LandOutcome::AlreadyLanded { target, commit } => {
            json!({"outcome": "already_landed", "target": target, "commit": commit})
        }
        LandOutcome::DryRun(dry) => json!({
            "outcome": "dry_run",
            "target": dry.target,
            "target_moved": dry.target_moved,
            "conflicts": dry.conflicts,
            "unmerged": dry.unmerged.iter().map(|u| json!({"story": u.story, "status": u.status})).collect::<Vec<_>>(),
            "unattested": dry.unattested,
        }),
        LandOutcome::Ready {
            epic_branch,
            target,
            head,
            conflicts,
            rounds,
            put_back,
        } => {
            let mut ready = json!({
                "outcome": "ready",
                "epic_branch": epic_branch,
                "target": target,
                "head": head,
                "conflicts": conflicts,
                "rounds": rounds,
            });
            if !put_back.is_empty() {
                ready["put_back"] = json!(put_back);
            }
            ready
        }
        LandOutcome::NotLanded(why) => json!({"outcome": "not_landed", "reason": why.to_string()}),
        LandOutcome::Interrupted => json!({"outcome": "interrupted"}),
    }
}
