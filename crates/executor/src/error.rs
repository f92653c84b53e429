//! Why a story's task loop failed.

use std::error::Error;
use std::fmt::Write as _;
use std::path::PathBuf;

use epic_perimeter::Issue;

use epic_process::chain;

use epic_agents::{Role, SeatError};

/// The error of [`TaskLoop::run`](crate::TaskLoop::run): why the story cannot go on.
///
/// `Display` is a one-line summary; [`reason`](Self::reason) is the paragraph a person reads in
/// the report, saying what happened and what to do about it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoryError {
    /// The coder ended a reply with `BLOCKED_ON: <need>`, and the claim stood: the plan could
    /// not settle it (or the coder claimed again after its one pushback), and no verifier
    /// found the need was not missing. The story needs work that is not its own and not in its
    /// worktree.
    #[error("story '{story}' is blocked on unplanned work: {need}")]
    Blocked {
        /// The story.
        story: String,
        /// What it needs, in the coder's words.
        need: String,
        /// The verifier's reason, when a verifier (`--verifier`) confirmed the claim.
        verifier: Option<String>,
    },
    /// A task's gates were still red when its review rounds ran out.
    #[error(
        "task \"{task}\": {gate} is still failing after {rounds} round(s); nothing was committed"
    )]
    GateNeverGreen {
        /// The task.
        task: String,
        /// The first red gate (`gate failed: cargo test`, `perimeter`).
        gate: String,
        /// How many rounds were run.
        rounds: u32,
        /// Every issue of the last round.
        issues: Vec<Issue>,
    },
    /// An agent turn failed: the agent could not start, crashed (after retries if transient),
    /// timed out, or misbehaved.
    #[error("the {role} turn{} failed", task.as_ref().map(|task| format!(" of task \"{task}\"")).unwrap_or_default())]
    Agent {
        /// The turn's role.
        role: Role,
        /// The task, for coder turns.
        task: Option<String>,
        /// What went wrong.
        #[source]
        source: SeatError,
    },
    /// A task changed nothing and the coder did not confirm it was already satisfied.
    #[error(
        "task \"{task}\" produced no changes and the coder did not confirm it was already satisfied"
    )]
    NoopNotConfirmed {
        /// The task.
        task: String,
    },
    /// The worktree is no longer on the story branch: the agent switched branches.
    #[error("the worktree `{}` is on {} instead of the story branch `{expected}`", worktree.display(), found.as_ref().map_or_else(|| "a detached head".to_owned(), |found| format!("branch `{found}`")))]
    BranchSwitched {
        /// The worktree.
        worktree: PathBuf,
        /// The story branch.
        expected: String,
        /// The branch checked out instead, `None` for a detached head.
        found: Option<String>,
    },
    /// The worktree's `.git` names another worktree's registration (an agent rewrote it): git
    /// run there would act on that worktree, so none was run.
    #[error("the worktree `{}` is linked to the worktree `{}`: its `.git` names that worktree's administrative directory", worktree.display(), other.display())]
    LinkedElsewhere {
        /// The story's worktree.
        worktree: PathBuf,
        /// The worktree whose registration its `.git` names.
        other: PathBuf,
    },
    /// The checkpoint could not be read, parsed or written.
    #[error("the task checkpoint `{}` {problem}", path.display())]
    Checkpoint {
        /// The checkpoint file.
        path: PathBuf,
        /// What went wrong (`cannot be read: …`, `is malformed: line 3: …`).
        problem: String,
    },
    /// A git operation failed.
    #[error("git failed to {action}")]
    Git {
        /// What was being done (`read the status of the worktree`).
        action: String,
        /// The git-ops error.
        #[source]
        source: Box<dyn Error + Send + Sync>,
    },
    /// The planner planned more tasks than a story may have (`max_tasks`), and its one re-plan
    /// was not within the cap either.
    #[error(
        "the planner planned {planned} tasks, and a story may have at most {cap} (max_tasks); \
         {}",
        replanned.map_or_else(
            || "its re-plan could not be read".to_owned(),
            |n| format!("its re-plan still had {n}")
        )
    )]
    TooManyTasks {
        /// The tasks of the first plan.
        planned: usize,
        /// The tasks of the re-plan; `None` when it could not be read.
        replanned: Option<usize>,
        /// The cap.
        cap: usize,
    },
    /// The story was cancelled from outside.
    #[error("the story was cancelled")]
    Cancelled,
}

impl StoryError {
    /// A one-paragraph account for the report: what happened, with the details that matter,
    /// and what to do.
    pub fn reason(&self) -> String {
        match self {
            Self::Blocked { verifier, .. } => format!(
                "{self}.{} The coder stopped because the story needs something that another \
                 story should provide and that is not in its worktree. Plan that work (a story \
                 this one depends on) or describe where it already is, then rerun.",
                verifier
                    .as_ref()
                    .map(|reason| format!(
                        " The verifier confirmed it: {}.",
                        reason.trim_end_matches('.')
                    ))
                    .unwrap_or_default()
            ),
            Self::GateNeverGreen { issues, .. } => {
                let mut text = format!("{self}.");
                for issue in issues {
                    let _ = write!(
                        text,
                        "\n- [{}] {}: {}",
                        issue.severity, issue.title, issue.description
                    );
                }
                text.push_str(
                    "\nFix the cause in the story's worktree or raise --max-rounds, then rerun: \
                     the task starts again from its checkpoint.",
                );
                text
            }
            Self::Agent {
                source: source @ SeatError::Refs { .. },
                ..
            } => format!(
                "{self}: {}. A turn may move only its own story's branch; the refs are epic's. \
                 Check what the agent ran (its transcript), then rerun: finished tasks are kept.",
                chain(source)
            ),
            Self::Agent { source, .. } => format!(
                "{self}: {}. Check that the agent runs non-interactively in the worktree, then \
                 rerun: finished tasks are kept.",
                chain(source)
            ),
            Self::NoopNotConfirmed { .. } => format!(
                "{self} (by replying with exactly TASK_ALREADY_SATISFIED). Rerun, or tick the task \
                 in the checkpoint if it really needs no change."
            ),
            Self::BranchSwitched { .. } => format!(
                "{self}. The agent switched branches, which epic forbids; nothing of this task \
                 was committed. Check out the story branch in the worktree again and rerun."
            ),
            Self::LinkedElsewhere { .. } => format!(
                "{self}. An agent rewrote it: every git command there would act on the other \
                 worktree, so epic ran none and nothing of this task was committed. Rerun: the \
                 rerun points the `.git` back at the story's own registration."
            ),
            Self::Checkpoint { .. } => {
                format!("{self}. Fix it by hand, or delete it to plan the story's tasks again.")
            }
            Self::Git { source, .. } => format!("{self}: {}.", chain(source.as_ref())),
            Self::TooManyTasks { .. } => format!(
                "{self}. A story that needs more tasks than that is too big for one story: split \
                 it in the plan, or raise the cap (`max_tasks` in epic.toml, `--max-tasks N`), \
                 then rerun."
            ),
            Self::Cancelled => {
                "The run was interrupted; rerun to continue at the first open task.".to_owned()
            }
        }
    }
}

impl From<epic_claims::ClaimError> for StoryError {
    fn from(error: epic_claims::ClaimError) -> Self {
        match error {
            epic_claims::ClaimError::Blocked {
                story,
                need,
                verifier,
            } => Self::Blocked {
                story,
                need,
                verifier,
            },
            epic_claims::ClaimError::Cancelled => Self::Cancelled,
            epic_claims::ClaimError::Agent { role, task, source } => {
                Self::Agent { role, task, source }
            }
        }
    }
}
