//! [`land_epic`], on top of the landing's steps: the repository and branches checked, the
//! stories not merged found, then a dry run, or the landing under the epic's lock with its
//! events logged.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::LandConfig;
use epic_branch::{EPIC_WORKTREE_NAME, RunError, worktrees_root};
use epic_events::EventSink;
use epic_git_ops::Git;
use epic_process::offload::{self, BoxError};
use epic_state_store::{EpicDir, StoryStage, StoryState};
use epic_story_plan::StoryPlan;
use tokio_util::sync::CancellationToken;

use crate::error::LandError;
use crate::job::LandJob;
use crate::lander::Lander;
use crate::outcome::{LandOutcome, Unmerged};

/// Lands the epic of `job.plan` on `job.target` with `config`'s seats, gates, sandbox, budget
/// and rounds; the landing's events go to `events` and `events.jsonl`.
///
/// # Cancel safety
///
/// Cancel `cancel` rather than dropping the future: the turn or gate in flight is killed, the
/// epic branch put back and [`LandOutcome::Interrupted`] returned. Dropping the future leaves
/// the journal; the next `epic land` finishes or undoes what it finds.
pub async fn land_epic(
    git: Arc<dyn Git>,
    job: LandJob,
    config: LandConfig,
    events: EventSink,
    cancel: CancellationToken,
) -> Result<LandOutcome, LandError> {
    let Some(main) = git.main_worktree().map(Path::to_path_buf) else {
        return Err(LandError::Bare {
            common_dir: git.common_dir().to_path_buf(),
        });
    };
    let epic = job.plan.epic_id.clone();
    let dir = EpicDir::new(git.common_dir(), &epic).map_err(RunError::EpicId)?;
    let epic_branch = config
        .epic_branch
        .clone()
        .unwrap_or_else(|| format!("epic/{epic}"));
    if epic_branch == job.target {
        return Err(LandError::TargetIsEpicBranch { target: job.target });
    }
    let worktree_root = worktrees_root(&main, &epic);
    let epic_worktree = worktree_root.join(EPIC_WORKTREE_NAME);
    let target_ref = format!("refs/heads/{}", job.target);
    let epic_ref = format!("refs/heads/{epic_branch}");
    let resolve = |name: String| {
        let main = main.clone();
        offload::git(&git, "resolve a branch", move |git| {
            Ok::<_, BoxError>(git.rev_parse(&main, &name).ok())
        })
    };
    if resolve(target_ref.clone()).await?.is_none() {
        return Err(LandError::NoTarget { target: job.target });
    }
    let Some(epic_head) = resolve(epic_ref.clone()).await? else {
        return Err(LandError::NoEpicBranch {
            branch: epic_branch,
        });
    };
    let unmerged = unmerged_stories(&dir, &job.plan).await;
    let lander = Lander {
        git: Arc::clone(&git),
        dir,
        plan: job.plan.clone(),
        config,
        epic_branch,
        epic_worktree,
        worktree_root,
        main,
        target: job.target.clone(),
        target_ref,
        events,
        cancel,
    };
    if job.dry_run {
        return lander
            .dry_run(epic_head, unmerged)
            .await
            .map(LandOutcome::DryRun);
    }
    let lock = epic_branch::take_lock(&lander.dir).await?;
    let log = epic_branch::open_log(&lander.dir).await?;
    let lander = Lander {
        events: epic_events::logging_sink(log, Arc::clone(&lander.events)),
        ..lander
    };
    let outcome = lander.land(&job, unmerged).await;
    drop(lock);
    outcome
}

/// The stories of `plan` whose state does not say merged, in plan order.
async fn unmerged_stories(dir: &EpicDir, plan: &StoryPlan) -> Vec<Unmerged> {
    let stories: Vec<(String, Option<PathBuf>)> = plan
        .stories
        .iter()
        .map(|story| (story.id.clone(), dir.story_state(&story.id).ok()))
        .collect();
    offload::blocking(move || {
        stories
            .into_iter()
            .filter_map(|(id, path)| {
                let found =
                    path.and_then(|path| epic_state_store::load::<StoryState>(path).ok().flatten());
                let status = match found.map(|found| found.status) {
                    Some(StoryStage::Merged) => return None,
                    Some(other) => other.as_str().to_owned(),
                    None => "not started".to_owned(),
                };
                Some(Unmerged { story: id, status })
            })
            .collect()
    })
    .await
    .unwrap_or_default()
}
