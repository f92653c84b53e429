//! Why a step stopped a story ([`Stop`]: failed or cancelled), why a story failed, as a value
//! ([`Failure`]), and the one place that writes the reason a
//! person reads for it: in the report, on the board and in the `story_failed` event.

use std::fmt::Write as _;
use std::io;
use std::path::PathBuf;

use epic_git_ops::CommitId;
use epic_perimeter::{Issue, PerimeterViolation, Review};
use epic_state_store::{LoadError, SaveError, UnsafeId};

use crate::error::StoryError;
use epic_agents::{Role, SeatError};
use epic_claims::Problem;
use epic_guard::Tampered;
use epic_guard::Tampering;
use epic_process::chain;
use epic_process::offload::{BoxError, GitFailed};
use epic_protocol::prompts;

/// Why a step stopped the story.
#[derive(Debug)]
pub(crate) enum Stop {
    Failed(Failure),
    Cancelled,
}

impl From<Failure> for Stop {
    fn from(failure: Failure) -> Self {
        Self::Failed(failure)
    }
}

impl From<GitFailed> for Stop {
    fn from(error: GitFailed) -> Self {
        Self::Failed(Failure::Git(error))
    }
}

impl From<StoryError> for Stop {
    fn from(error: StoryError) -> Self {
        match error {
            StoryError::Cancelled => Self::Cancelled,
            StoryError::Blocked {
                story,
                need,
                verifier,
            } => Self::Failed(Failure::Blocked {
                story,
                need,
                verifier,
            }),
            StoryError::Agent {
                role,
                source: SeatError::GuardedFiles(tampered),
                ..
            } => Self::Failed(Failure::GuardedFiles { role, tampered }),
            error => Self::Failed(Failure::Tasks(error)),
        }
    }
}

/// Why a story failed. [`reason`](Self::reason) renders it; [`halts`](Self::halts) tells the
/// failures after which no new story may start.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The task loop, or a coder or judge turn of the judge rounds, failed (never
    /// [`StoryError::Cancelled`], a cancellation; nor [`StoryError::Blocked`], [`Self::Blocked`]).
    Tasks(StoryError),
    /// The coder ended a reply with `BLOCKED_ON:`, and the claim stood (see
    /// [`StoryError::Blocked`]): the story needs work no story provides.
    Blocked {
        /// The story.
        story: String,
        /// What it needs, in the coder's words.
        need: String,
        /// The verifier's reason, when a verifier confirmed the claim.
        verifier: Option<String>,
    },
    /// The story waited for a person's answer (`--on-blocked ask`) longer than `--max-wait`.
    Unanswered {
        /// The story.
        story: String,
        /// The question it asked.
        question: String,
        /// How long it waited.
        waited: std::time::Duration,
    },
    /// A git call failed.
    Git(GitFailed),
    /// The story's id cannot name a file of the state directory.
    UnsafeId(UnsafeId),
    /// The story's state could not be read.
    StateUnreadable(LoadError),
    /// The story's state could not be saved (`None`: the thread saving it died).
    StateNotSaved(Option<SaveError>),
    /// The task checkpoint (or the merge revisions) of a plan entry that changed could not be
    /// removed.
    CheckpointNotRemoved {
        /// The checkpoint.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A directory where the story's worktree goes could not be removed.
    InTheWay {
        /// The story's worktree.
        worktree: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Catching up with the proven epic head conflicted even with the epic side winning.
    CatchUpConflict {
        /// The epic branch.
        epic_branch: String,
        /// The conflicting paths.
        paths: Vec<String>,
        /// The story's worktree.
        worktree: PathBuf,
    },
    /// A setup command failed.
    Setup(Review),
    /// The story changed paths outside its perimeter that could not be put back, or a shared
    /// read-only path, or committed a symbolic link that points where it may not reach.
    Perimeter {
        /// The violation (`None` only for a clean check, which never fails).
        violation: Option<Box<PerimeterViolation>>,
        /// Whether a shared read-only path was changed.
        shared: bool,
        /// The story's worktree.
        worktree: PathBuf,
    },
    /// The story's diff deletes, disables or empties tests or adds skip markers, and its plan
    /// entry does not allow it.
    TestsTampered {
        /// The story.
        story: String,
        /// What it did to the tests (boxed: it is the largest failure).
        found: Box<Tampering>,
    },
    /// The story's tasks changed nothing (its branch has nothing against the epic head), and
    /// no judge confirmed the work is already on the epic branch (there is no judge).
    NothingChanged {
        /// The epic branch.
        epic_branch: String,
    },
    /// The story's tasks changed nothing, and the judge's confirmation that its work is
    /// already on the epic branch did not hold in its last round: it named no evidence, or
    /// evidence that is false on the proven epic head ([`epic_claims::check`]). Nothing was merged.
    InPlaceUnproven {
        /// The epic branch.
        epic_branch: String,
        /// The proven epic head the evidence was checked on.
        head: String,
        /// The judge round it ended in (the last).
        round: u32,
        /// What did not hold.
        problems: Vec<Problem>,
    },
    /// The judge did not clear the story in its last round.
    JudgeNotCleared {
        /// How many rounds ran.
        rounds: u32,
        /// The last verdict.
        verdict: Review,
    },
    /// The judge rounds ended without a round (never: at least one runs).
    JudgeNeverRan,
    /// The gates turned red while the coder addressed the judge's feedback.
    GatesBroke(Review),
    /// The epic worktree has uncommitted changes; no new story may start.
    EpicWorktreeDirty {
        /// The epic worktree.
        worktree: PathBuf,
        /// Its changed paths.
        paths: Vec<String>,
        /// The story that found it.
        story: String,
    },
    /// The story branch moved after its checks (the perimeter, the test guard, the gates, the
    /// judge) passed on `checked`: a commit made during the judge turn, or by a process the
    /// coder left behind. Nothing was merged.
    BranchMovedAfterChecks {
        /// The story branch.
        branch: String,
        /// The commit every check passed on.
        checked: CommitId,
        /// Where the branch was found at the merge.
        found: CommitId,
    },
    /// The merge journal could not be written; nothing was merged.
    JournalNotWritten(BoxError),
    /// Merging the story into the epic branch conflicted; the epic branch is as it was.
    MergeConflict {
        /// The story branch.
        branch: String,
        /// The epic branch.
        epic_branch: String,
        /// The conflicting paths.
        paths: Vec<String>,
    },
    /// The gates failed on the merged epic head; the merge was undone.
    EpicGatesRed(Review),
    /// Gates that passed on the epic head before the merge failed after it (a red baseline
    /// allowed); the merge was undone.
    EpicGatesRegressed(Vec<Issue>),
    /// The merge queue's batch `batch` turned the gates red and bisection pinned it on this
    /// story (`cause`: [`EpicGatesRed`](Self::EpicGatesRed) or
    /// [`EpicGatesRegressed`](Self::EpicGatesRegressed), the gate output of the smallest red
    /// candidate: the story alone on the proven epic head); its merge was undone.
    Culprit {
        /// The batch's number within the run.
        batch: u64,
        /// The red gates.
        cause: Box<Failure>,
    },
    /// The epic gates stayed red on the combined tree after every merge revision the story had
    /// (`--merge-revisions`): `last` is what ended it, a red merge
    /// ([`EpicGatesRed`](Self::EpicGatesRed), [`EpicGatesRegressed`](Self::EpicGatesRegressed)
    /// or [`Culprit`](Self::Culprit)), its merge undone, or the last revision's task whose gates
    /// never turned green in the story's caught-up worktree; `revisions` the red gates' output
    /// each revision was given, in order.
    RevisionsExhausted {
        /// The gates' output on the combined tree that sent the story back, per revision.
        revisions: Vec<String>,
        /// The last red merge.
        last: Box<Failure>,
    },
    /// In merge revision `revision`, the coder found that the fix for the red gates belongs in
    /// other stories' files and ended with `BLOCKED_ON:` naming them; the claim stood. The
    /// merge stays undone.
    RevisionBlocked {
        /// The revision, from 1.
        revision: u32,
        /// What it needs, in the coder's words.
        need: String,
        /// The stories that own the paths the need names (none when it names no path a story
        /// owns).
        owners: Vec<String>,
        /// The verifier's reason, when a verifier confirmed the claim.
        verifier: Option<String>,
        /// The gates' output on the combined tree the revision was given.
        red: String,
    },
    /// An agent turn of the story changed files epic guards (the repository's configuration,
    /// `info/`, hooks, other worktrees' registrations, epic's state, the plan files); epic put
    /// them back ([`epic_guard`]).
    GuardedFiles {
        /// The role of the turn.
        role: Role,
        /// What changed.
        tampered: Box<Tampered>,
    },
    /// A task failed (`failure`), and its worktree went back to the task's checkpoint: what the
    /// task changed is kept as a patch at `patch` ([`StoryJob::rejected`](crate::task_loop::StoryJob::rejected)).
    Rejected {
        /// Why the task failed.
        failure: Box<Failure>,
        /// The patch of its rejected changes.
        patch: PathBuf,
    },
    /// The story's task panicked.
    Panicked,
    /// The story's task ended without a result for another reason (it was aborted).
    TaskLost(String),
}

impl Failure {
    /// Whether no new story may start after it: the epic worktree is not as epic left it.
    pub(crate) fn halts(&self) -> bool {
        match self {
            Self::Rejected { failure, .. } => failure.halts(),
            failure => matches!(failure, Self::EpicWorktreeDirty { .. }),
        }
    }

    /// Whether this is a merge the gates turned red on the proven epic head (the story alone,
    /// or the culprit a bisection pinned), its merge undone: what a merge revision may repair.
    pub(crate) fn is_red_merge(&self) -> bool {
        matches!(
            self,
            Self::EpicGatesRed(_) | Self::EpicGatesRegressed(_) | Self::Culprit { .. }
        )
    }

    /// Whether this is a task whose gates were still red after its last round (its changes
    /// kept aside or not): in a merge revision, the revision spent red on the combined tree.
    pub(crate) fn is_gates_never_green(&self) -> bool {
        match self {
            Self::Tasks(StoryError::GateNeverGreen { .. }) => true,
            Self::Rejected { failure, .. } => failure.is_gates_never_green(),
            _ => false,
        }
    }

    /// The red gates' output of a red merge ([`is_red_merge`](Self::is_red_merge)) or of a task
    /// whose gates never turned green, one line per failed gate; else the reason.
    pub(crate) fn gate_output(&self) -> String {
        match self {
            Self::EpicGatesRed(review) => prompts::issue_lines(review),
            Self::EpicGatesRegressed(issues)
            | Self::Tasks(StoryError::GateNeverGreen { issues, .. }) => regressions(issues),
            Self::Culprit { cause, .. } => cause.gate_output(),
            Self::Rejected { failure, .. } => failure.gate_output(),
            failure => failure.reason(),
        }
    }

    /// This failure of a task whose rejected changes were kept at `patch`, if any.
    pub(crate) fn rejected(self, patch: Option<PathBuf>) -> Self {
        match patch {
            Some(patch) => Self::Rejected {
                failure: Box::new(self),
                patch,
            },
            None => self,
        }
    }

    /// The paragraph a person reads: what happened, with the details that matter, and what to
    /// do about it.
    #[expect(
        clippy::too_many_lines,
        reason = "one arm per failure: the one place a story's failure texts are written"
    )]
    pub(crate) fn reason(&self) -> String {
        match self {
            Self::Tasks(error) => error.reason(),
            Self::Unanswered {
                story,
                question,
                waited,
            } => format!(
                "no answer came: story '{story}' asked \"{question}\" and waited {} \
                 (--max-wait) for `epic answer {story} TEXT`. Put the answer in the story's \
                 description and rerun, or `epic retry {story}` and answer when it asks again",
                jiff::SignedDuration::try_from(*waited).map_or_else(
                    |_| format!("{}s", waited.as_secs()),
                    |span| format!("{span:#}")
                )
            ),
            Self::Blocked {
                story,
                need,
                verifier,
            } => format!(
                "missing dependency: story '{story}' is blocked on unplanned work: {need}.{} The \
                 coder stopped because the story needs something that another story should \
                 provide. Plan that work (a story this one depends on), then rerun.",
                verifier
                    .as_ref()
                    .map(|reason| format!(
                        " The verifier confirmed it: {}.",
                        reason.trim_end_matches('.')
                    ))
                    .unwrap_or_default()
            ),
            Self::Git(error) => git_reason(error),
            Self::UnsafeId(error) => format!("{error}."),
            Self::StateUnreadable(error) => {
                format!("the story's state cannot be read: {}.", chain(error))
            }
            Self::StateNotSaved(Some(error)) => {
                format!("the story's state could not be saved: {}.", chain(error))
            }
            Self::StateNotSaved(None) => "the story's state could not be saved.".to_owned(),
            Self::CheckpointNotRemoved { path, source } => format!(
                "the old task checkpoint `{}` cannot be removed: {source}.",
                path.display()
            ),
            Self::InTheWay { worktree, source } => format!(
                "`{}` is in the way of the story's worktree and cannot be removed: {source}.",
                worktree.display()
            ),
            Self::CatchUpConflict {
                epic_branch,
                paths,
                worktree,
            } => format!(
                "catching up with {epic_branch} conflicted on {} even with the epic side winning \
                 conflicting hunks (a file changed on one side and deleted on the other). \
                 Resolve it in the story's worktree `{}` (merge {epic_branch} and commit), then \
                 rerun.",
                paths.join(", "),
                worktree.display(),
            ),
            Self::Setup(review) => format!(
                "worktree setup failed:\n{}\nFix the setup command or what it needs, then rerun.",
                prompts::issue_lines(review)
            ),
            Self::Perimeter {
                violation,
                shared,
                worktree,
            } => {
                let links = violation
                    .as_ref()
                    .is_some_and(|violation| !violation.links.is_empty());
                let paths = violation.as_ref().is_some_and(|violation| {
                    !violation.outside.is_empty() || !violation.shared_read_only.is_empty()
                });
                let violation = violation
                    .as_ref()
                    .map_or_else(String::new, ToString::to_string);
                if links && !paths {
                    format!(
                        "{violation}\nA symbolic link may point only inside the repository, \
                         outside `.git`, and not into another story's owned paths or a shared \
                         read-only path: remove or repoint it in the story's worktree `{}`, then \
                         rerun.",
                        worktree.display()
                    )
                } else if *shared {
                    format!(
                        "{violation}\nShared read-only paths belong to no story: plan the change \
                         in a story that owns the path, then rerun."
                    )
                } else {
                    format!(
                        "{violation}\nThese paths could not be put back as the epic branch has \
                         them; revert them in the story's worktree `{}`, then rerun.",
                        worktree.display()
                    )
                }
            }
            Self::TestsTampered { story, found } => tampered(story, found),
            Self::NothingChanged { epic_branch } => format!(
                "nothing was changed and no judge confirmed the work is already on the epic \
                 branch: the story branch has no changes against {epic_branch}, so there is \
                 nothing to merge. Check the task checkpoint and the coder's transcripts (a coder \
                 may have claimed work it did not do), or set a judge (`--judge`) to confirm \
                 work that is already there, then rerun."
            ),
            Self::InPlaceUnproven {
                epic_branch,
                head,
                round,
                problems,
            } => {
                let mut text = format!(
                    "the judge confirmed the story's work is already on the epic branch, but its \
                     confirmation did not hold on {epic_branch} at {} (judge round {round}):",
                    head.get(..12).unwrap_or(head)
                );
                for problem in problems {
                    write!(text, "\n- {problem}").ok();
                }
                text.push_str(
                    "\nA story that changed nothing is done only on evidence epic checks: the \
                     files on the epic branch, inside the story's owned paths, that hold its work, \
                     and for each name the story provides, the file that provides it. Nothing was \
                     merged. Check the coder's transcripts (a coder may have claimed work it did \
                     not do, or undone its own) and the judge's, then rerun.",
                );
                text
            }
            Self::JudgeNotCleared { rounds, verdict } => format!(
                "judge not cleared after {rounds} round(s):\n{}",
                prompts::issue_lines(verdict)
            ),
            Self::JudgeNeverRan => "the judge never ran.".to_owned(),
            Self::GatesBroke(review) => format!(
                "gates broke while addressing judge feedback:\n{}",
                prompts::issue_lines(review)
            ),
            Self::EpicWorktreeDirty {
                worktree,
                paths,
                story,
            } => epic_branch::dirty_message(worktree, paths, Some(story)),
            Self::BranchMovedAfterChecks {
                branch,
                checked,
                found,
            } => format!(
                "the story branch {branch} moved after its checks: they passed on {checked}, \
                 but the branch was at {found} when it was to be merged (a commit made during \
                 the judge turn, or by a process an agent left running). Nothing was merged; \
                 rerun to check the story again."
            ),
            Self::JournalNotWritten(error) => format!(
                "the merge journal could not be written: {}.",
                chain(error.as_ref())
            ),
            Self::MergeConflict {
                branch,
                epic_branch,
                paths,
            } => format!(
                "merging {branch} into {epic_branch} conflicted on: {}. The epic branch is as it \
                 was. Another story changed these paths after this one caught up; rerun to catch \
                 up again (the epic side wins conflicting hunks) and retry the merge.",
                paths.join(", ")
            ),
            Self::EpicGatesRed(review) => format!(
                "epic gates failed after merging; merge undone:\n{}",
                prompts::issue_lines(review)
            ),
            Self::Culprit { batch, cause } => format!(
                "merge batch {batch} turned the epic gates red, and bisection pinned it on this \
                 story (gated alone on the proven epic head): {}",
                cause.reason()
            ),
            Self::EpicGatesRegressed(issues) => format!(
                "epic gates that passed before this merge failed after it; merge undone:\n{}",
                regressions(issues)
            ),
            Self::RevisionsExhausted { revisions, last } => exhausted(revisions, last),
            Self::RevisionBlocked {
                revision,
                need,
                owners,
                verifier,
                red,
            } => revision_blocked(*revision, need, owners, verifier.as_deref(), red),
            Self::GuardedFiles { role, tampered } => guarded(*role, tampered),
            Self::Rejected { failure, patch } => format!(
                "{}\nThe rejected changes are kept in {path}: `git apply {path}` in the worktree \
                 to look at them.",
                failure.reason(),
                path = patch.display()
            ),
            Self::Panicked => "the story's task panicked; this is a bug in epic. Rerun to \
                               resume the story."
                .to_owned(),
            Self::TaskLost(error) => format!("the story's task ended unexpectedly: {error}."),
        }
    }
}

impl From<GitFailed> for Failure {
    fn from(error: GitFailed) -> Self {
        Self::Git(error)
    }
}

/// A failed git call, as a story's notes and failures say it.
pub(crate) fn git_reason(error: &GitFailed) -> String {
    format!(
        "git failed to {}: {}.",
        error.action,
        chain(error.source.as_ref())
    )
}

/// The lines of gates that passed before a merge and failed after it.
fn regressions(issues: &[Issue]) -> String {
    issues
        .iter()
        .map(|issue| format!("- {}: {}", issue.title, issue.description))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The reason of [`Failure::RevisionsExhausted`]: the last red merge's, then what each revision
/// was given.
fn exhausted(revisions: &[String], last: &Failure) -> String {
    let count = revisions.len();
    let mut reason = format!(
        "{}\nThe epic gates stayed red on the combined tree after {count} merge revision(s) \
         (`--merge-revisions`): the story went back to its coder, caught up with the epic \
         branch, each time with the gates' output on the combined tree:",
        last.reason()
    );
    for (number, red) in revisions.iter().enumerate() {
        let _ = write!(reason, "\nrevision {}:", number + 1);
        for line in red.lines() {
            let _ = write!(reason, "\n    {line}");
        }
    }
    reason.push_str(
        "\nThe stories collide in a way the coder could not repair inside this story's paths: \
         make one story depend on the other in the plan, or fix it by hand in the story's \
         worktree, then rerun (or allow more revisions with `--merge-revisions`).",
    );
    reason
}

/// The reason of [`Failure::RevisionBlocked`].
fn revision_blocked(
    revision: u32,
    need: &str,
    owners: &[String],
    verifier: Option<&str>,
    red: &str,
) -> String {
    let mut reason = format!(
        "merge revision {revision}: the coder found that the fix for the red epic gates belongs \
         outside this story's paths: {need}."
    );
    if !owners.is_empty() {
        let quoted: Vec<String> = owners.iter().map(|owner| format!("'{owner}'")).collect();
        let _ = write!(
            reason,
            " What it names is owned by {} {}.",
            if owners.len() == 1 {
                "story"
            } else {
                "stories"
            },
            quoted.join(", ")
        );
    }
    if let Some(verifier) = verifier {
        let _ = write!(
            reason,
            " The verifier confirmed it: {}.",
            verifier.trim_end_matches('.')
        );
    }
    reason.push_str(" The merge stays undone. The gates' output on the combined tree was:");
    for line in red.lines() {
        let _ = write!(reason, "\n    {line}");
    }
    reason.push_str(
        "\nGive the fix to the story that owns those files (its plan entry), or make one story \
         depend on the other, then rerun.",
    );
    reason
}

/// The reason of [`Failure::GuardedFiles`].
fn guarded(role: Role, tampered: &Tampered) -> String {
    let mut reason = if let Some(error) = &tampered.unreadable {
        format!("the files epic guards could not be read after a {role} turn: {error}.")
    } else {
        format!("a {role} turn changed files that are epic's, not the agent's:")
    };
    for change in &tampered.changes {
        let _ = write!(
            reason,
            "\n- {}: {}",
            change.path.display(),
            change.kind.as_str()
        );
    }
    if tampered.unreadable.is_none() {
        if tampered.not_restored.is_empty() {
            reason.push_str("\nepic put each back as it was before the turn.");
        } else {
            reason.push_str("\nepic put back all but these:");
            for (path, error) in &tampered.not_restored {
                let _ = write!(reason, "\n- {}: {error}", path.display());
            }
            reason.push_str("\nRestore them by hand.");
        }
    }
    if tampered.concurrent {
        reason.push_str(
            " Another agent turn, gate or setup command ran at the same time, so the change may \
             have been its.",
        );
    }
    reason.push_str(
        " An agent may change its own worktree only: the repository's configuration, `info/`, \
         hooks and worktree registrations, epic's state directory and the plan files are \
         epic's. Check what the agent ran (its transcript), then rerun.",
    );
    reason
}

/// The reason of [`Failure::TestsTampered`].
fn tampered(story: &str, found: &Tampering) -> String {
    let mut reason = format!(
        "story '{story}' deletes or skips tests, and its plan entry does not allow it \
         (`tests_change`):"
    );
    for path in &found.deleted {
        let _ = write!(reason, "\n- {path}: test file deleted");
    }
    for (path, to) in &found.renamed {
        let _ = write!(
            reason,
            "\n- {path}: test file renamed to {to}, a file type no test runner takes"
        );
    }
    for path in &found.linked {
        let _ = write!(reason, "\n- {path}: test file replaced by a symbolic link");
    }
    for path in &found.emptied {
        let _ = write!(
            reason,
            "\n- {path}: test file emptied (nothing left but blank lines and comments)"
        );
    }
    for (path, marker) in &found.skipped {
        let _ = write!(reason, "\n- {path}: adds the skip marker `{marker}`");
    }
    reason.push_str(
        "\nA gate proves nothing once its tests are gone. Restore the tests in the story's \
         worktree, or set `\"tests_change\": true` in the story's plan entry if changing them is \
         the point, then rerun.",
    );
    reason
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// Each reason is exactly the text the story lifecycle wrote before failures were typed:
    /// the expected texts are those format strings, verbatim.
    #[test]
    fn reasons_keep_their_text() {
        let worktree = Path::new("/src/shop.worktrees/e/a");
        let paths = vec!["src/a.rs".to_owned(), "src/b.rs".to_owned()];
        let epic_branch = "epic/e";
        let catch_up = Failure::CatchUpConflict {
            epic_branch: epic_branch.to_owned(),
            paths: paths.clone(),
            worktree: worktree.to_path_buf(),
        };
        assert_eq!(
            catch_up.reason(),
            format!(
                "catching up with {} conflicted on {} even with the epic side winning \
                 conflicting hunks (a file changed on one side and deleted on the other). \
                 Resolve it in the story's worktree `{}` (merge {} and commit), then rerun.",
                epic_branch,
                paths.join(", "),
                worktree.display(),
                epic_branch
            )
        );
        let merge = Failure::MergeConflict {
            branch: "story/e/a".to_owned(),
            epic_branch: epic_branch.to_owned(),
            paths: paths.clone(),
        };
        assert_eq!(
            merge.reason(),
            format!(
                "merging {} into {} conflicted on: {}. The epic branch is as it was. \
                 Another story changed these paths after this one caught up; rerun to \
                 catch up again (the epic side wins conflicting hunks) and retry the merge.",
                "story/e/a",
                epic_branch,
                paths.join(", ")
            )
        );
        assert!(!catch_up.halts() && !merge.halts());
    }

    #[test]
    fn more_reasons_keep_their_text() {
        let worktree = Path::new("/src/shop.worktrees/e/a");
        let paths = vec!["src/a.rs".to_owned(), "src/b.rs".to_owned()];
        let epic_branch = "epic/e";
        assert_eq!(
            Failure::NothingChanged {
                epic_branch: epic_branch.to_owned()
            }
            .reason(),
            format!(
                "nothing was changed and no judge confirmed the work is already on the epic \
                 branch: the story branch has no changes against {epic_branch}, so there is \
                 nothing to merge. Check the task checkpoint and the coder's transcripts (a coder \
                 may have claimed work it did not do), or set a judge (`--judge`) to confirm \
                 work that is already there, then rerun."
            )
        );
        assert_eq!(
            Failure::Blocked {
                story: "a".to_owned(),
                need: "an API".to_owned(),
                verifier: None,
            }
            .reason(),
            format!(
                "missing dependency: story '{}' is blocked on unplanned work: {}. The \
                 coder stopped because the story needs something that another story should \
                 provide. Plan that work (a story this one depends on), then rerun.",
                "a", "an API"
            )
        );
        let found = Tampering {
            deleted: vec!["tests/a.rs".to_owned()],
            skipped: vec![("tests/b.rs".to_owned(), "#[ignore]".to_owned())],
            ..Tampering::default()
        };
        assert_eq!(
            Failure::TestsTampered {
                story: "a".to_owned(),
                found: Box::new(found)
            }
            .reason(),
            "story 'a' deletes or skips tests, and its plan entry does not allow it \
             (`tests_change`):\n- tests/a.rs: test file deleted\n- tests/b.rs: adds the skip \
             marker `#[ignore]`\nA gate proves nothing once its tests are gone. Restore the \
             tests in the story's worktree, or set `\"tests_change\": true` in the story's plan \
             entry if changing them is the point, then rerun."
        );
        let dirty = Failure::EpicWorktreeDirty {
            worktree: worktree.to_path_buf(),
            paths: paths.clone(),
            story: "a".to_owned(),
        };
        assert!(dirty.halts());
        assert_eq!(
            dirty.reason(),
            format!(
                "the epic worktree `{}` has uncommitted changes (found after story 'a' \
                 finished); something worked outside its own worktree:\n- src/a.rs\n- \
                 src/b.rs\nMove each change into the owning story's worktree or discard it, \
                 then rerun.",
                worktree.display()
            )
        );
        assert_eq!(
            Failure::Panicked.reason(),
            "the story's task panicked; this is a bug in epic. Rerun to resume the story."
        );
        let git = Failure::Git(GitFailed {
            action: "commit".to_owned(),
            source: "index.lock exists".into(),
        });
        assert_eq!(git.reason(), "git failed to commit: index.lock exists.");
    }

    /// A red merge is what a revision may repair; its gate output is the review's lines, a
    /// culprit's its cause's; the reasons after revisions carry each revision's output.
    #[test]
    fn red_merges_and_the_reasons_after_revisions() {
        let review = Review {
            clean: false,
            summary: "red".to_owned(),
            issues: vec![Issue {
                severity: epic_perimeter::Severity::Critical,
                title: "gate `make check`".to_owned(),
                description: "exit code 1".to_owned(),
            }],
        };
        let red = Failure::EpicGatesRed(review.clone());
        let culprit = Failure::Culprit {
            batch: 2,
            cause: Box::new(Failure::EpicGatesRed(review)),
        };
        assert!(red.is_red_merge() && culprit.is_red_merge());
        assert!(!Failure::Panicked.is_red_merge());
        assert_eq!(culprit.gate_output(), "- gate `make check`: exit code 1");
        let exhausted = Failure::RevisionsExhausted {
            revisions: vec![red.gate_output()],
            last: Box::new(culprit),
        };
        let text = exhausted.reason();
        assert!(
            text.starts_with("merge batch 2 turned the epic gates red")
                && text.contains(
                    "The epic gates stayed red on the combined tree after 1 merge revision(s) \
                     (`--merge-revisions`)"
                )
                && text.contains("\nrevision 1:\n    - gate `make check`: exit code 1\n"),
            "{text}"
        );
        let blocked = Failure::RevisionBlocked {
            revision: 1,
            need: "src/a/api.rs".to_owned(),
            owners: vec!["a".to_owned(), "c".to_owned()],
            verifier: None,
            red: "- gate `make check`: exit code 1".to_owned(),
        };
        assert!(!blocked.is_red_merge() && !blocked.halts());
        assert_eq!(
            blocked.reason(),
            "merge revision 1: the coder found that the fix for the red epic gates belongs \
             outside this story's paths: src/a/api.rs. What it names is owned by stories 'a', \
             'c'. The merge stays undone. The gates' output on the combined tree was:\n    - \
             gate `make check`: exit code 1\nGive the fix to the story that owns those files \
             (its plan entry), or make one story depend on the other, then rerun."
        );
    }

    #[test]
    fn an_unproven_in_place_story_names_each_problem() {
        let failure = Failure::InPlaceUnproven {
            epic_branch: "epic/e".to_owned(),
            head: "0123456789abcdef0123".to_owned(),
            round: 2,
            problems: vec![
                Problem::NoEvidence,
                Problem::Uncovered {
                    name: "cart::Cart".to_owned(),
                },
            ],
        };
        assert!(!failure.halts());
        assert_eq!(
            failure.reason(),
            "the judge confirmed the story's work is already on the epic branch, but its \
             confirmation did not hold on epic/e at 0123456789ab (judge round 2):\n- the \
             confirmation names no evidence: no file that holds the story's work (`evidence` is \
             empty or missing)\n- `cart::Cart`, which the story provides, is named by no file of \
             the evidence\nA story that changed nothing is done only on evidence epic checks: \
             the files on the epic branch, inside the story's owned paths, that hold its work, \
             and for each name the story provides, the file that provides it. Nothing was \
             merged. Check the coder's transcripts (a coder may have claimed work it did not do, \
             or undone its own) and the judge's, then rerun."
        );
    }

    /// A failed task's reason names the patch of its rejected changes after its own text.
    #[test]
    fn a_rejected_task_names_its_patch() {
        let patch = PathBuf::from("/src/shop/.git/epic/e/stories/a.rejected.patch");
        let blocked = Failure::Blocked {
            story: "a".to_owned(),
            need: "an API".to_owned(),
            verifier: None,
        };
        let text = blocked.reason();
        let rejected = blocked.rejected(Some(patch));
        assert!(!rejected.halts());
        assert_eq!(
            rejected.reason(),
            format!(
                "{text}\nThe rejected changes are kept in \
                 /src/shop/.git/epic/e/stories/a.rejected.patch: `git apply \
                 /src/shop/.git/epic/e/stories/a.rejected.patch` in the worktree to look at \
                 them."
            )
        );
        assert!(matches!(
            Failure::Panicked.rejected(None),
            Failure::Panicked
        ));
    }

    #[test]
    fn a_guarded_file_reason_names_each_file_and_a_concurrent_turn() {
        use epic_state_store::ChangeKind;

        use epic_guard::GuardedChange;

        let tampered = Tampered {
            changes: vec![
                GuardedChange {
                    path: "/src/shop/.git/config".into(),
                    kind: ChangeKind::Modified,
                },
                GuardedChange {
                    path: "/src/shop/.git/hooks/post-commit".into(),
                    kind: ChangeKind::Added,
                },
            ],
            concurrent: true,
            ..Tampered::default()
        };
        let failure = Failure::GuardedFiles {
            role: Role::Coder,
            tampered: Box::new(tampered.clone()),
        };
        assert!(!failure.halts());
        assert_eq!(
            failure.reason(),
            "a coder turn changed files that are epic's, not the agent's:\n- \
             /src/shop/.git/config: modified\n- /src/shop/.git/hooks/post-commit: added\nepic \
             put each back as it was before the turn. Another agent turn, gate or setup command \
             ran at the same time, so the change may have been its. An agent may change its own \
             worktree only: the repository's configuration, `info/`, hooks and worktree \
             registrations, epic's state directory and the plan files are epic's. Check what \
             the agent ran (its transcript), then rerun."
        );
        let stuck = Failure::GuardedFiles {
            role: Role::Judge,
            tampered: Box::new(Tampered {
                not_restored: vec![("/src/shop/.git/config".into(), "read-only".to_owned())],
                concurrent: false,
                ..tampered
            }),
        };
        assert!(
            stuck
                .reason()
                .contains("epic put back all but these:\n- /src/shop/.git/config: read-only\nRestore them by hand."),
            "{}",
            stuck.reason()
        );
    }
}
