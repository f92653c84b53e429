//! One landing at work ([`Lander`]), the context every step of a landing takes, with what its
//! agent turns run with ([`Turns`]) and the epic branch once proven ([`Proven`]); which story
//! owns a path ([`owner`]).

use std::path::PathBuf;
use std::sync::Arc;

use crate::config::LandConfig;
use epic_chat::{Recorder, SeatPauses};
use epic_events::{Event, EventSink};
use epic_gates::Gates;
use epic_git_ops::{CommitId, Git};
use epic_guard::TurnGuard;
use epic_process::offload::{self, BoxError, GitFailed};
use epic_process::sandbox::Sandbox;
use epic_report::{LandedConflict, PutBack};
use epic_state_store::EpicDir;
use epic_story_plan::{Story, StoryPlan};
use tokio_util::sync::CancellationToken;

/// Which story owns `path`, if one does.
pub(crate) fn owner<'a>(plan: &'a StoryPlan, path: &str) -> Option<&'a Story> {
    plan.stories.iter().find(|story| {
        story
            .owned
            .iter()
            .any(|owned| epic_story_plan::path::within(path, owned))
    })
}

/// One landing at work.
pub(crate) struct Lander {
    pub(crate) git: Arc<dyn Git>,
    pub(crate) dir: EpicDir,
    pub(crate) plan: StoryPlan,
    pub(crate) config: LandConfig,
    pub(crate) epic_branch: String,
    pub(crate) epic_worktree: PathBuf,
    pub(crate) worktree_root: PathBuf,
    pub(crate) main: PathBuf,
    pub(crate) target: String,
    pub(crate) target_ref: String,
    pub(crate) events: EventSink,
    pub(crate) cancel: CancellationToken,
}

/// What an agent turn runs with during a landing.
pub(crate) struct Turns {
    pub(crate) recorder: Arc<Recorder>,
    pub(crate) guard: Arc<TurnGuard>,
    pub(crate) sandbox: Sandbox,
    pub(crate) gates: Gates,
    /// Whether the lander's seats were checked: once, before the landing's first turn.
    pub(crate) seats_checked: std::sync::atomic::AtomicBool,
    /// The seats' pauses: why a turn they stopped was cancelled.
    pub(crate) pauses: Arc<SeatPauses>,
}

/// The epic branch proven with the target in it.
pub(crate) struct Proven {
    pub(crate) head: CommitId,
    pub(crate) from: CommitId,
    pub(crate) conflicts: Vec<LandedConflict>,
    pub(crate) rounds: u32,
    /// The gates' results on the proven head, for the attestation of the landing's commits
    /// ([`Lander::attest_landing`]).
    pub(crate) gates: Vec<epic_attest::AttestedGate>,
    /// The tree the gates passed on (the proven head's).
    pub(crate) tree: String,
    /// What the lander's turns changed outside their perimeter, put back.
    pub(crate) put_back: Vec<PutBack>,
}

impl Lander {
    pub(crate) fn note(&self, message: impl Into<String>) {
        (self.events)(Event::RunNote {
            message: message.into(),
        });
    }

    pub(crate) async fn git_op<T: Send + 'static, E: Into<BoxError> + Send + 'static>(
        &self,
        action: &str,
        op: impl FnOnce(&dyn Git) -> Result<T, E> + Send + 'static,
    ) -> Result<T, GitFailed> {
        offload::git(&self.git, action, op).await
    }

    pub(crate) async fn rev(&self, name: &str) -> Result<CommitId, GitFailed> {
        let (main, name) = (self.main.clone(), name.to_owned());
        self.git_op("resolve a branch", move |git| git.rev_parse(&main, &name))
            .await
    }

    pub(crate) async fn is_ancestor(
        &self,
        ancestor: &str,
        descendant: &str,
    ) -> Result<bool, GitFailed> {
        let (main, a, d) = (
            self.main.clone(),
            ancestor.to_owned(),
            descendant.to_owned(),
        );
        self.git_op("compare commits", move |git| git.is_ancestor(&main, &a, &d))
            .await
    }

    pub(crate) fn owned(&self, paths: Vec<String>) -> Vec<LandedConflict> {
        paths
            .into_iter()
            .map(|path| LandedConflict {
                story: owner(&self.plan, &path).map(|story| story.id.clone()),
                path,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_belongs_to_the_story_that_owns_it() {
        let plan = StoryPlan {
            epic_id: "e".into(),
            epic: String::new(),
            stories: vec![
                Story::new("a", "A", ["src/a"]),
                Story::new("b", "B", ["src/b.rs"]),
            ],
        };
        assert_eq!(owner(&plan, "src/a/x.rs").map(|s| s.id.as_str()), Some("a"));
        assert_eq!(owner(&plan, "src/b.rs").map(|s| s.id.as_str()), Some("b"));
        assert!(owner(&plan, "src/ab.rs").is_none());
        assert!(owner(&plan, "README.md").is_none());
    }
}
