//! The orchestration of one story's lifecycle: [`run_story`] takes it through its steps in
//! order (`Work::run`: each step an `impl Work` block in the step's own file) and says how it
//! ended ([`StoryEnd`]).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use epic_report::{Timestamp, UsageMeter};
use epic_state_store::Hold;
use tokio_util::sync::CancellationToken;

use super::end::{Ending, StoryEnd};
use super::integrate::Integrated;
use super::judge::Judgement;
use super::prepare::Prepared;
#[cfg(doc)]
use super::revise;
use super::slot;
use super::work::Work;
use crate::config::OnBlocked;
use crate::failure::{Failure, Stop};
use crate::shared::{PreparingGuard, Shared};
use crate::task_loop::StoryJob;
use epic_protocol::prompts::Briefing;

/// Runs story `index` of the plan in concurrency slot `slot` to its end: right after its merge
/// is proven and recorded, so that its dependents can start; the removal of its worktree is left
/// to the caller ([`StoryEnd::merged_worktree`]). `preparing` counts the story in
/// [`Shared::preparing`] until its worktree is ready.
///
/// # Cancel safety
///
/// Meant to run to completion: cancel `cancel` and await it. Cancelled, it kills the running
/// agent or gate, undoes a merge whose gates had not finished, and leaves the state resumable.
/// Dropping it mid-merge could leave an unproven merge on the epic branch until the next run
/// undoes it (from `merging.json`).
pub(crate) async fn run_story(
    shared: Arc<Shared>,
    index: usize,
    slot: usize,
    preparing: PreparingGuard,
    cancel: CancellationToken,
    batches: CancellationToken,
) -> StoryEnd {
    let started_at = Timestamp::now();
    let story = Arc::new(shared.plan.stories[index].clone());
    let branch = format!("story/{}/{}", shared.dir.epic_id(), story.id);
    let mut work = Work {
        shared: Arc::clone(&shared),
        story: Arc::clone(&story),
        branch: branch.clone(),
        worktree: shared.worktree_root.join(&story.id),
        slot,
        cancel,
        batches,
        usage: UsageMeter::new(shared.config.prices.clone()),
        has_state: false,
        merged: false,
        preparing: Some(preparing),
        base: shared.proven().to_hex(),
        briefing: Arc::new(Briefing::bare(shared.worktree_root.join(&story.id))),
        pushed_back: AtomicBool::new(false),
        ready: false,
        revisions: 0,
        revision: None,
    };
    let result = work.run().await;
    let ending = match result {
        Ok(integrated) => Ending::Merged {
            judge: integrated.judge,
            proven_with: integrated.proven_with,
            in_place: integrated.in_place,
        },
        Err(Stop::Cancelled) => Ending::Cancelled,
        Err(Stop::Failed(Failure::Blocked { need, .. }))
            if shared.config.on_blocked == OnBlocked::Ask && work.has_state =>
        {
            Ending::Waiting { question: need }
        }
        Err(Stop::Failed(failure)) => Ending::Failed(failure),
    };
    // Before the state says `failed`: a slot taken out of the rotation records its new place.
    work.leave_slot(&ending).await;
    if matches!(ending, Ending::Failed(_)) && work.has_state {
        work.mark_failed().await;
    }
    if let Ending::Waiting { question } = &ending {
        let since = epic_state_store::rfc3339(std::time::SystemTime::now());
        work.mark_hold(Some(Hold::Waiting {
            question: question.clone(),
            since,
        }))
        .await;
    }
    shared.sweep_orphans(Some(&story.id)).await;
    // A slot worktree stays for the next story in its slot.
    let merged_worktree = (work.merged
        && !shared.config.keep_worktrees
        && !slot::is_slot(&shared.worktree_root, &work.worktree))
    .then(|| work.worktree.clone());
    StoryEnd {
        ending,
        branch: work.has_state.then_some(branch),
        merged_worktree,
        usage: work.usage,
        revisions: work.revisions,
        started_at,
        finished_at: Timestamp::now(),
    }
}

impl Work {
    /// The steps, in order: the story's judge note once it merged, and the stories proven with
    /// it. A merge red on the proven epic head goes back to the coder and through steps 2 to 7
    /// again while merge revisions are left ([`revise`]).
    pub(super) async fn run(&mut self) -> Result<Integrated, Stop> {
        let prepared = self.prepare().await;
        // The worktree is ready (or never will be): removals of merged ones may go on.
        drop(self.preparing.take());
        let fresh = match prepared? {
            // No judge spoke in this run: the report keeps what the run that merged it said.
            Prepared::Merged => return Ok(Integrated::default()),
            Prepared::Ready { fresh } => fresh,
        };
        self.ready = true;
        let mut fresh = fresh;
        loop {
            self.check_cancel()?;
            let judgement = match self.checked(fresh).await {
                // A revision whose own gates stayed red on the combined tree is spent red:
                // the next revision, while any are left.
                Err(Stop::Failed(failure))
                    if self.revision.is_some() && failure.is_gates_never_green() =>
                {
                    fresh = false;
                    self.revise(failure).await?;
                    continue;
                }
                checked => checked?,
            };
            fresh = false;
            self.check_cancel()?;
            match self.integrate(judgement).await {
                // Red on the proven epic head: back to the coder while revisions are left.
                Err(Stop::Failed(failure)) if failure.is_red_merge() => {
                    self.revise(failure).await?;
                }
                integrated => return integrated,
            }
        }
    }

    /// Steps 2 to 6: the story caught up, set up, its open tasks done (a merge revision's
    /// among them), its perimeter enforced, its tests guarded and the judge rounds; the
    /// commit the judge cleared. `fresh`: its worktree was just made (setup must run).
    async fn checked(&mut self, fresh: bool) -> Result<Judgement, Stop> {
        let caught_up = self.catch_up().await?;
        if fresh || caught_up {
            self.setup().await?;
        }
        self.check_cancel()?;
        self.briefing = self.gather_briefing().await;
        self.resume_revision().await?;
        let job = StoryJob::new(
            &self.shared.dir,
            Arc::clone(&self.shared.plan),
            Arc::clone(&self.story),
            self.worktree.clone(),
            // The proven head the story caught up with, not the branch: the branch's tip may be
            // a merge still being proven, or moved by something outside epic.
            self.base.clone(),
            self.slot,
        )
        .map_err(Failure::UnsafeId)?
        .with_briefing(Arc::clone(&self.briefing))
        .with_notes(self.shared.dir.clone());
        let run = self.shared.tasks.run(&job, &self.cancel).await;
        self.usage.absorb(&run.usage);
        match run.result {
            Ok(done) => self.pushed_back = AtomicBool::new(done.pushed_back),
            Err(error) => {
                return Err(match Stop::from(error) {
                    Stop::Failed(failure) => {
                        Stop::Failed(self.revision_failure(failure.rejected(run.rejected)))
                    }
                    Stop::Cancelled => Stop::Cancelled,
                });
            }
        }
        self.check_cancel()?;
        self.catch_up().await?;
        if self.repair_perimeter().await? {
            self.commit(format!(
                "{}: put paths outside the perimeter back",
                self.id()
            ))
            .await?;
        }
        // From here on every check, and the merge, takes the commit the perimeter checked:
        // the branch may still move (a commit in the judge turn, a process an agent left), and
        // what moved it is never merged unchecked.
        let checked = self.enforce_perimeter().await?;
        self.guard_tests(&checked).await?;
        let judgement = self.judge(checked).await?;
        if judgement.note.is_some() && judgement.cleared != checked {
            // A judge round's feedback turn may have touched the tests too.
            self.guard_tests(&judgement.cleared).await?;
        }
        Ok(judgement)
    }
}
