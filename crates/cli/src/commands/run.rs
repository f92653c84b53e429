//! `epic run PLAN`: execute an epic, with live progress, Ctrl-C handling and the exit codes of
//! docs/contract.md.
//!
//! The order: the repository, `epic.toml`, the plan (parsed and validated: a bad plan is exit 2
//! with every violation listed), the options (the flags over `epic.toml` over the options the
//! epic's last run recorded, [`config::resolve_rerun`]; this run's are recorded in turn, and the
//! lines saying what was reused or changed, or that no gate proves a merge, go to stderr before
//! anything runs), then the run on a multi-thread tokio
//! runtime (the executor runs git in `spawn_blocking` and agents concurrently). SIGINT and
//! SIGTERM cancel the run: it stops launching, ends every agent's process group, writes the
//! report and exits 130; a second one exits at once (the executor's writes are atomic, so the
//! state is still consistent and a rerun resumes).
//!
//! Progress goes to stderr ([`crate::progress`]); the summary at the end to stdout
//! (with `--format json`, the report's JSON instead).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use epic_branch::RunError;
use epic_chat::SeatStop;
use epic_executor::{RunConfig, RunOutcome};
use epic_land::RunPlan;
use epic_report::{EpicReport, OutcomeStatus};
use epic_state_store::{EpicDir, EpicLock};
use epic_story_plan::ValidPlan;
use tokio_util::sync::CancellationToken;

use crate::args::{Format, GlobalArgs, RunArgs};
use crate::commands::{SKIP_PREFLIGHT, render, violations_text};
use crate::config::{self, LastRun, RunOptions};
use crate::error::{CommandError, Kind, Message};
use crate::output::{self, Output};
use crate::plan_file;
use crate::progress::{self, Mode, ProgressDisplay};
use crate::repo::{self, Repo};
use epic_agents::shell_quote;

/// Runs `epic run`.
pub(crate) fn run(global: &GlobalArgs, args: &RunArgs, out: Output) -> Result<(), CommandError> {
    let format = global.format_for("run", &[Format::Text, Format::Json])?;
    let repo = repo::discover(global.repo.as_deref())?;
    let file = RunOptions::load(&repo.root)?.map(|(_, file)| file);
    let plan = load_valid(&args.plan, out)?;
    let state = EpicDir::new(&repo.common_dir, &plan.plan().epic_id)
        .map_err(|error| CommandError::new(Kind::Input, error))?;
    let last = epic_state_store::load::<LastRun>(state.run_options())
        .map_err(|error| CommandError::new(Kind::Repository, error))?;
    let rerun = config::resolve_rerun(
        &file.unwrap_or_default(),
        &args.options.options,
        last.as_ref().map(|last| &last.0),
    )?;
    // The house rules are read before anything is recorded or started: a missing file is a bad
    // config (exit 2) naming it.
    let rules = config::house_rules(
        &repo.root,
        rerun.resolved.options.rules.as_deref().unwrap_or_default(),
    )?;
    if !out.quiet() {
        for line in &rerun.lines {
            output::diagnostic(&format!("{line}\n"));
        }
    }
    record(&state, rerun.record)?;
    record_plan(
        &repo,
        &state,
        plan.plan(),
        &rerun.resolved.run_config().base,
    );
    let mut config = rerun.resolved.run_config();
    config.extra_rules = rules;
    config.guarded_files = guarded_files(&repo, &args.plan);
    let mode = Mode::choose(global.no_progress, out.quiet());
    let outcome = execute(&repo, plan, config, mode, out)?;
    let rerun = rerun_command(global.repo.as_deref(), &args.plan);
    if format == Format::Json {
        output::data(&epic_report::to_json(&outcome.report))?;
    } else if !out.quiet() {
        output::data(&summary(&outcome, Some(&rerun)))?;
    }
    verdict(&outcome)
}

/// Records `options` as the options of the epic's last run, for the next one to reuse; nothing
/// while another run may hold the epic's lock (this run then stops with exit 3, and the options
/// of the run that holds it stay), which the executor tells apart.
fn record(state: &EpicDir, options: RunOptions) -> Result<(), CommandError> {
    if !matches!(EpicLock::holder(state), Ok(None)) {
        return Ok(());
    }
    epic_state_store::save(state.run_options(), &LastRun(options))
        .map_err(|error| CommandError::new(Kind::Repository, error))
}

/// Records the plan, and the branch the epic was started from when none is recorded yet, for
/// `epic land` ([`RunPlan`]): the branch `base` names, or the branch checked out when `base` is
/// `HEAD`. Best effort, and nothing while another run may hold the epic's lock.
fn record_plan(repo: &Repo, state: &EpicDir, plan: &epic_story_plan::StoryPlan, base: &str) {
    use epic_git_ops::Git as _;
    if !matches!(EpicLock::holder(state), Ok(None)) {
        return;
    }
    let earlier = epic_state_store::load::<RunPlan>(state.run_plan())
        .ok()
        .flatten()
        .and_then(|recorded| recorded.started_from);
    let started_from = earlier.or_else(|| {
        if base == "HEAD" {
            repo.git.current_branch(&repo.root).ok().flatten()
        } else {
            let name = base.strip_prefix("refs/heads/").unwrap_or(base);
            repo.git
                .branch_exists(name)
                .ok()
                .filter(|exists| *exists)
                .map(|_| name.to_owned())
        }
    });
    let record = RunPlan {
        plan: plan.clone(),
        started_from,
    };
    epic_state_store::save(state.run_plan(), &record).ok();
}

/// The command that reruns the epic as printed: `epic run PLAN`, with `--repo DIR` when the
/// repository was given, each quoted for a POSIX shell (the options come from the last run).
fn rerun_command(repo: Option<&Path>, plan: &Path) -> String {
    let mut command = format!("epic run {}", shell_quote(&plan.display().to_string()));
    if let Some(repo) = repo {
        command.push_str(" --repo ");
        command.push_str(&shell_quote(&repo.display().to_string()));
    }
    command
}

/// The files of the user's checkout an agent turn may not change: `epic.toml` at the repository
/// root and the plan file (an agent that wrote `epic.toml` could give the next run its setup
/// commands).
pub(crate) fn guarded_files(repo: &Repo, plan: &Path) -> Vec<PathBuf> {
    let plan = std::path::absolute(plan).unwrap_or_else(|_| plan.to_path_buf());
    vec![repo.root.join(config::FILE_NAME), plan]
}

/// The plan at `path`, validated: violations are exit 2 (a bad plan), listed on stderr.
pub(crate) fn load_valid(path: &Path, out: Output) -> Result<ValidPlan, CommandError> {
    let plan = plan_file::load(path, out)?;
    plan.validate().map_err(|errors| {
        output::diagnostic(&violations_text(errors.violations(), path));
        CommandError::new(
            Kind::Input,
            Message::new(format!(
                "the plan `{}` is not valid; nothing was run",
                path.display()
            )),
        )
        .hint("fix the violations listed above; `epic validate PLAN` checks a plan on its own")
    })
}

/// Runs the epic with progress shown as `mode`: the outcome, or why the run could not start.
pub(crate) fn execute(
    repo: &Repo,
    plan: ValidPlan,
    mut config: RunConfig,
    mode: Mode,
    out: Output,
) -> Result<RunOutcome, CommandError> {
    let runtime = super::runtime("epic-run")?;
    config.clock = super::clock(&runtime)?;
    let epic = plan.plan().epic_id.clone();
    let progress = ProgressDisplay::start(&plan, mode, out.verbose() > 0);
    let events = progress.sink();
    let say = progress.liner();
    let git: std::sync::Arc<dyn epic_git_ops::Git> = repo.git.clone();
    let result = runtime.block_on(async move {
        let cancel = CancellationToken::new();
        let signals = tokio::spawn(watch_signals(cancel.clone(), say));
        let result = epic_executor::run_epic(git, plan, config, events, cancel).await;
        signals.abort();
        result
    });
    progress.finish();
    // A git call still blocking a thread must not hold the exit.
    runtime.shutdown_timeout(Duration::from_secs(5));
    result.map_err(|error| run_error(error, &epic))
}

/// Cancels `cancel` at the first SIGINT or SIGTERM; exits at once at the second.
pub(crate) async fn watch_signals(cancel: CancellationToken, say: impl Fn(String)) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut interrupt), Ok(mut terminate)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        // No handlers: the default action (the process dies) still applies, and a rerun resumes.
        return;
    };
    tokio::select! {
        _ = interrupt.recv() => {}
        _ = terminate.recv() => {}
    }
    cancel.cancel();
    say(
        "interrupted: stopping every agent and writing the report (press Ctrl-C again to exit \
         at once)"
            .to_owned(),
    );
    tokio::select! {
        _ = interrupt.recv() => {}
        _ = terminate.recv() => {}
    }
    output::diagnostic(
        "\nerror: interrupted twice: exiting at once; the state is consistent and a rerun \
         resumes\n",
    );
    #[expect(
        clippy::exit,
        reason = "a second Ctrl-C means now: every state write is atomic, so nothing is torn"
    )]
    std::process::exit(i32::from(crate::error::exit_code::INTERRUPTED));
}

/// A run that could not start: exit 3 when another run holds the lock, else 2.
fn run_error(error: RunError, epic: &str) -> CommandError {
    if let RunError::Locked { holder, .. } = &error {
        let by = holder.as_ref().map_or_else(
            || "a process that has not recorded who it is".to_owned(),
            ToString::to_string,
        );
        return CommandError::new(
            Kind::LockHeld,
            Message::new(format!(
                "epic `{epic}` is already running: its lock is held by {by}"
            )),
        )
        .hint(format!(
            "`epic status {epic}` shows the run; wait for it to end, or stop it (Ctrl-C in \
                 its terminal, or `kill PID`): it keeps its state and a rerun resumes"
        ))
        .hint("a run that died released the lock with it: then just run again");
    }
    let hint = match &error {
        RunError::RedBaseline { .. } | RunError::Sandbox(_) => None,
        RunError::Base { .. } => Some("--base names the commit the epic branch starts from".into()),
        RunError::Bare { .. } => Some("run epic in a repository with a working tree".into()),
        RunError::SeatsNotReady(_) => Some(format!("nothing was started; {SKIP_PREFLIGHT}")),
        _ => Some("fix the cause above, then run again: the epic's state is kept".into()),
    };
    let error = CommandError::new(Kind::Repository, error);
    match hint {
        Some(hint) => error.hint(hint),
        None => error,
    }
}

/// Exit 0 every story done, 130 interrupted (a pause past `--max-wait` too, with its reason), 2
/// a seat not logged in (with the command that logs it in), 1 otherwise (a story failed or was
/// skipped).
pub(crate) fn verdict(outcome: &RunOutcome) -> Result<(), CommandError> {
    match &outcome.stopped {
        Some(SeatStop::NotLoggedIn { seat, message, fix }) => {
            return Err(CommandError::new(
                Kind::SeatUnusable,
                Message::new(format!(
                    "the run stopped: `{seat}` is not logged in ({message})"
                )),
            )
            .hint(format!(
                "{fix}, then rerun: the stories not finished resume"
            )));
        }
        Some(stop) => {
            return Err(CommandError::new(
                Kind::Interrupted,
                Message::new(format!("the run stopped: {stop}")),
            )
            .hint(
                "raise --max-wait to wait for it, or rerun once the seat is available: the \
                 state is kept",
            ));
        }
        None => {}
    }
    if outcome.interrupted {
        Err(CommandError::reported(Kind::Interrupted))
    } else if outcome.all_done() {
        Ok(())
    } else {
        Err(CommandError::reported(Kind::NotDone))
    }
}

/// The end of a run for people: counts, each story found already in place with its evidence,
/// each failed and skipped story with its reason, the critical path, and where the report is.
///
/// `rerun` is the command that resumes the run; `None` when the repository does not outlive the
/// command (a throwaway demo), so there is no report to open and nothing to rerun.
pub(crate) fn summary(outcome: &RunOutcome, rerun: Option<&str>) -> String {
    let report = &outcome.report;
    render(|w| {
        writeln!(w)?;
        let (done, failed, skipped) = counts(report);
        let total = report.stories.len();
        let verb = if outcome.interrupted {
            "interrupted"
        } else {
            "finished"
        };
        write!(
            w,
            "epic {} {verb}: {done}/{total} done, {failed} failed, {skipped} skipped",
            report.epic_id
        )?;
        // A story a person stopped (`epic stop`) is none of the three.
        let stopped = report.count(OutcomeStatus::Stopped);
        if stopped > 0 {
            write!(w, ", {stopped} stopped")?;
        }
        if let Some(tokens) = report.latest_run_estimated_tokens() {
            // The agents' own figures where they reported them (`report.md` says which).
            let (about, source) = match (report.has_reported(), report.has_estimates()) {
                (false, _) => ("~", "estimated"),
                (true, true) => ("~", "partly reported"),
                (true, false) => ("", "reported"),
            };
            write!(
                w,
                " ({about}{} tokens, {source})",
                progress::thousands(u64::try_from(tokens).unwrap_or(u64::MAX))
            )?;
        }
        writeln!(w)?;
        if report.all_done() && report.latest_run_settled_nothing() {
            writeln!(w, "nothing to do: every story merged on a previous run")?;
        }
        let in_place: Vec<_> = report
            .stories
            .iter()
            .filter_map(|story| story.in_place.as_ref().map(|in_place| (story, in_place)))
            .collect();
        if !in_place.is_empty() {
            writeln!(
                w,
                "\nalready in place (done, nothing merged: the judge showed the work on the epic \
                 branch, and epic checked the evidence):"
            )?;
            for (story, in_place) in in_place {
                writeln!(w, "  {}: {}", story.id, evidence_text(in_place))?;
            }
        }
        reasons_text(w, report)?;
        if !report.critical_path.is_empty() {
            writeln!(w, "\ncritical path: {}", report.critical_path.join(" -> "))?;
        }
        writeln!(w, "epic branch: {}", report.epic_branch)?;
        let Some(rerun) = rerun else {
            return Ok(());
        };
        writeln!(
            w,
            "full report: `epic report {}` ({})",
            report.epic_id,
            outcome.state_dir.join("report.md").display()
        )?;
        if outcome.interrupted {
            writeln!(
                w,
                "the state is kept: rerun `{rerun}` to resume (merged stories are skipped, started \
                 ones continue at their first open task)"
            )?;
        } else if failed + skipped > 0 {
            writeln!(
                w,
                "fix the causes, then rerun `{rerun}`: merged stories are skipped, the others \
                 resume"
            )?;
        }
        Ok(())
    })
}

/// The stories that failed, were stopped or were skipped, by status, each with its reason
/// (the first line, then up to eight more).
fn reasons_text(w: &mut String, report: &EpicReport) -> std::fmt::Result {
    for status in [
        OutcomeStatus::Failed,
        OutcomeStatus::Stopped,
        OutcomeStatus::Skipped,
    ] {
        let stories: Vec<_> = report
            .stories
            .iter()
            .filter(|story| story.status == status)
            .collect();
        if stories.is_empty() {
            continue;
        }
        writeln!(w, "\n{}:", status.as_str())?;
        for story in stories {
            let reason = story.reason.as_deref().unwrap_or("no reason recorded");
            let mut lines = reason.trim().lines();
            writeln!(w, "  {}: {}", story.id, lines.next().unwrap_or_default())?;
            let rest: Vec<&str> = lines.collect();
            for line in rest.iter().take(8) {
                writeln!(w, "    {}", line.trim_end())?;
            }
            if rest.len() > 8 {
                writeln!(w, "    … ({} more lines in the report)", rest.len() - 8)?;
            }
        }
    }
    Ok(())
}

/// A story's evidence on one line: each file, with the names it provides in parentheses.
pub(crate) fn evidence_text(in_place: &epic_report::InPlace) -> String {
    in_place
        .evidence
        .iter()
        .map(|evidence| {
            if evidence.provides.is_empty() {
                evidence.path.clone()
            } else {
                format!("{} ({})", evidence.path, evidence.provides.join(", "))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Done, failed and skipped stories of `report`.
pub(crate) fn counts(report: &EpicReport) -> (usize, usize, usize) {
    (
        report.count(OutcomeStatus::Done),
        report.count(OutcomeStatus::Failed),
        report.count(OutcomeStatus::Skipped),
    )
}
