//! `epic plan`'s architect: a seat splits an epic into a plan, round after round, until the plan
//! validates or the rounds run out ([`plan_epic`]).
//!
//! One chat of [`Role::Architect`] in the repository's root: the brief ([`ArchitectBrief`],
//! rendered by `prompts::architect`) is its standing instructions, and each round asks for the
//! plan. A reply is read strictly (`replies::parse_plan_reply`: one JSON object, alone or in one
//! fenced block) and validated by `epic-story-plan`; what is wrong (why it could not be read, or
//! every violation with its kind, stories and paths) goes back as the next round's prompt. Every
//! turn is a transcript (`NNNN-architect.md`) in the job's record directory, and the usage of
//! all the turns is written beside them (`usage.json`) through `epic-state-store`.
//!
//! The architect only reads: with the sandbox on, the repository (its checkout, its git
//! directory, every epic's worktrees) is read-only to it, its working directory included.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use epic_report::{PriceTable, SeatUsage, UsageMeter};
use epic_story_plan::{Story, ValidPlan, Violation};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use epic_agents::{Role, Roster, SeatError, SeatsNotReady};
use epic_branch::worktrees_root;
use epic_chat::{Chat, ChatContext, Recorder};
use epic_chat::{SeatPauses, SeatStop};
use epic_events::EventSink;
use epic_process::sandbox::{self, Credentials, Layout, SandboxMode, SandboxUnavailable, UserHome};
use epic_process::{Clock, offload};
use epic_protocol::prompts;
use epic_protocol::replies;

/// What the architect is told about the epic and the repository.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ArchitectBrief {
    /// The epic, as the user phrased it (`epic plan TEXT` or `--from FILE`).
    pub epic: String,
    /// The repository's tracked files, sorted, `/`-separated; summarised per directory beyond a
    /// cap in the prompt.
    pub files: Vec<String>,
    /// The README's text, if the repository has one; only its head goes into the prompt.
    pub readme: Option<String>,
}

impl ArchitectBrief {
    /// The brief as the architect reads it: the epic, the repository's files, the head of its
    /// README, the plan format with every field, every validation rule, what makes a split good,
    /// the plan's JSON Schema and the reply expected (the crate docs show one).
    pub fn prompt(&self) -> String {
        prompts::architect(&self.epic, &self.files, self.readme.as_deref())
    }
}

/// One `epic plan`: the seat, the brief, where it runs and what it may spend.
#[derive(Debug, Clone)]
pub struct ArchitectJob {
    /// The architect's seats.
    pub seat: Roster,
    /// What it is told.
    pub brief: ArchitectBrief,
    /// The repository's root: the architect's working directory (`EPIC_WORKTREE`).
    pub repo_root: PathBuf,
    /// The repository's git common directory, kept read-only by the sandbox.
    pub common_dir: PathBuf,
    /// Where the turns' transcripts and `usage.json` go (under the repository's epic state).
    pub record_dir: PathBuf,
    /// Rounds in all, at least 1: a reply that is not a valid plan gets another round while
    /// rounds are left.
    pub rounds: u32,
    /// How long one turn may take.
    pub turn_timeout: Duration,
    /// Whether the turns run in the sandbox.
    pub sandbox: SandboxMode,
    /// The user's home, whose credential stores the sandbox hides
    /// (`epic run`'s `--home`); none: nothing hidden.
    pub home: Option<UserHome>,
    /// Credential stores shown to the architect after all
    /// (`epic run`'s `--expose`).
    pub expose: Vec<PathBuf>,
    /// The prices usage is estimated at.
    pub prices: PriceTable,
    /// The longest a seat's pause may last (`--max-wait`): as in a run, a turn goes to the
    /// first seat of the roster not paused by a usage limit or an outage, and the plan waits
    /// only while every one is paused, stopping once each is paused past this.
    pub max_wait: Duration,
    /// How long a turn may stream only "cannot reach the service" (`--outage-wait`).
    pub outage_wait: Duration,
    /// How long a turn may print nothing before it is ended as stalled (`--stall-timeout`;
    /// zero: never).
    pub stall_timeout: Duration,
    /// What pauses and the stall watchdog are timed on ([`Clock::system`] but in tests).
    pub clock: Clock,
    /// Whether each seat of the roster is checked before the first round, as `epic run` checks
    /// its seats (`--no-preflight` turns it off).
    pub preflight: bool,
}

/// Why the last round's reply was not a valid plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// The reply held no plan that could be read: why.
    Unreadable(String),
    /// The plan breaks these rules.
    Violations(Vec<Violation>),
}

/// How an `epic plan` ended.
#[derive(Debug)]
pub struct ArchitectOutcome {
    /// The valid plan, or why the last round's reply was none.
    pub plan: Result<ValidPlan, Rejection>,
    /// How many rounds were taken.
    pub rounds: u32,
    /// The usage of every turn, by seat (estimated from character counts).
    pub usage: UsageMeter,
    /// What to say once about the sandbox: off, or not available here.
    pub sandbox_note: Option<String>,
    /// Where the transcripts and `usage.json` are.
    pub record_dir: PathBuf,
}

/// Why an `epic plan` could not go on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArchitectError {
    /// `--sandbox on` and no sandbox can be made here.
    #[error(transparent)]
    Sandbox(#[from] SandboxUnavailable),
    /// Seats of the roster cannot take turns (found by the seat check, before the first round).
    #[error(transparent)]
    SeatsNotReady(#[from] SeatsNotReady),
    /// A turn of the architect failed (the agent could not start, exited unsuccessfully, timed
    /// out, was cancelled).
    ///
    /// A turn the seat pauses stopped (every seat of the roster paused past `--max-wait`, a
    /// seat not logged in) is [`ArchitectError::Stopped`] instead.
    #[error("the architect's turn {round} failed")]
    Turn {
        /// The round, from 1.
        round: u32,
        /// Why.
        #[source]
        source: SeatError,
    },
    /// Every seat of the architect's roster is paused past `--max-wait`, or a seat is not
    /// logged in: nothing was written.
    #[error("{0}")]
    Stopped(SeatStop),
}

/// `usage.json`'s data: what the architect's turns cost, estimated.
#[derive(Debug, Serialize)]
struct UsageDocument<'a> {
    version: u32,
    data: UsageData<'a>,
}

/// The data of [`UsageDocument`].
#[derive(Debug, Serialize)]
struct UsageData<'a> {
    rounds: u32,
    valid: bool,
    estimated: bool,
    seats: &'a [SeatUsage],
}

/// Runs the architect's rounds: the valid plan of the first round whose reply is one, or the
/// last round's [`Rejection`]. A plan's empty `epic` is filled with the brief's epic text.
///
/// `events` receives each turn's events (the story named `architect`); `cancel` ends the turn
/// in flight (its process group killed) with [`ArchitectError::Turn`].
pub async fn plan_epic(
    job: ArchitectJob,
    events: EventSink,
    cancel: CancellationToken,
) -> Result<ArchitectOutcome, ArchitectError> {
    let layout = Layout {
        checkout: job.repo_root.clone(),
        common_dir: job.common_dir.clone(),
        worktrees: worktrees_root(&job.repo_root, "plan")
            .parent()
            .map_or_else(|| job.repo_root.clone(), PathBuf::from),
        story_branches: None,
    };
    let credentials = Credentials::new(job.home.as_ref(), &job.expose);
    let resolved = sandbox::resolve(job.sandbox, layout, credentials).await?;
    if job.preflight {
        epic_agents::check_seats(job.seat.seats(), &job.repo_root).await?;
    }
    let pauses = Arc::new(
        SeatPauses::new(
            job.max_wait,
            job.outage_wait,
            Arc::clone(&events),
            job.clock.clone(),
        )
        .with_stall_timeout(job.stall_timeout),
    );
    let recorder = Arc::new(
        Recorder::new("architect", &job.record_dir, job.prices.clone(), events)
            .with_pauses(Some(Arc::clone(&pauses))),
    );
    let mut chat = Chat::new(
        job.seat.clone(),
        Role::Architect,
        job.brief.prompt(),
        ChatContext {
            epic: String::new(),
            story: Arc::new(Story::new("", "", Vec::<String>::new())),
            task: None,
            worktree: job.repo_root.clone(),
            slot: 0,
            turn_timeout: job.turn_timeout,
            sandbox: resolved.sandbox,
            cancel,
        },
        Arc::clone(&recorder),
    );
    let rounds = job.rounds.max(1);
    let mut prompt = "Write the plan.".to_owned();
    let mut round = 0;
    let plan = loop {
        round += 1;
        let reply =
            chat.ask(prompt.as_str())
                .await
                .map_err(|source| match (&source, pauses.stop()) {
                    (SeatError::Cancelled, Some(stop)) => ArchitectError::Stopped(stop),
                    _ => ArchitectError::Turn { round, source },
                })?;
        let rejection = match replies::parse_plan_reply(&reply.text) {
            Ok(mut plan) => {
                if plan.epic.trim().is_empty() {
                    job.brief.epic.trim().clone_into(&mut plan.epic);
                }
                match plan.validate() {
                    Ok(valid) => break Ok(valid),
                    Err(errors) => Rejection::Violations(errors.violations().to_vec()),
                }
            }
            Err(reason) => Rejection::Unreadable(reason),
        };
        if round >= rounds {
            break Err(rejection);
        }
        prompt = match &rejection {
            Rejection::Unreadable(reason) => {
                prompts::architect_feedback(Some(reason), &[], round, rounds)
            }
            Rejection::Violations(violations) => {
                prompts::architect_feedback(None, violations, round, rounds)
            }
        };
    };
    let usage = recorder.usage();
    write_usage(&job.record_dir, round, plan.is_ok(), &usage, &recorder).await;
    Ok(ArchitectOutcome {
        plan,
        rounds: round,
        usage,
        sandbox_note: resolved.note,
        record_dir: job.record_dir,
    })
}

/// Writes `usage.json` into `dir`; a failure is a note, never the plan's failure.
async fn write_usage(
    dir: &std::path::Path,
    rounds: u32,
    valid: bool,
    usage: &UsageMeter,
    recorder: &Recorder,
) {
    let seats = usage.seat_usage();
    let document = UsageDocument {
        version: 1,
        data: UsageData {
            rounds,
            valid,
            estimated: true,
            seats: &seats,
        },
    };
    let Ok(mut text) = serde_json::to_string_pretty(&document) else {
        return;
    };
    text.push('\n');
    let path = dir.join("usage.json");
    let written = {
        let path = path.clone();
        offload::blocking(move || epic_state_store::write_atomic(&path, text.as_bytes())).await
    };
    match written {
        Ok(Ok(())) => {}
        Ok(Err(error)) => recorder.note(format!("{}: {error}", path.display())),
        Err(error) => recorder.note(format!("{}: {error}", path.display())),
    }
}
