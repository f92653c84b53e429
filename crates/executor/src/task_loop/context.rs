//! One run of the loop on one story ([`Run`]), the context every step takes: the story's job,
//! the loop's parts, the chats' recorder; the git calls off the async workers, and the chats
//! each task's turns go through.

use std::collections::BTreeSet;
use std::error::Error;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use epic_git_ops::{CommitId, Git};
use tokio_util::sync::CancellationToken;

use crate::error::StoryError;
use epic_agents::{Reply, Role, SeatError};
use epic_chat::{Chat, ChatContext, Recorder};
use epic_claims::Claim;
use epic_events::Event;
use epic_process::offload;
use epic_protocol::prompts;

use super::job::StoryJob;
use super::parts::TaskLoop;

/// One run of the loop on one story.
pub(super) struct Run<'a> {
    pub(super) parts: &'a TaskLoop,
    pub(super) job: &'a StoryJob,
    pub(super) recorder: Arc<Recorder>,
    pub(super) cancel: CancellationToken,
    /// Where the failed task's rejected changes were kept ([`Run::reject`]).
    pub(super) rejected: Option<PathBuf>,
    /// Whether the one pushback turn after a rejected `BLOCKED_ON:` claim was used.
    pub(super) pushed_back: AtomicBool,
}

impl Run<'_> {
    pub(super) fn story_id(&self) -> String {
        self.job.story.id.clone()
    }

    pub(super) fn emit(&self, event: Event) {
        self.recorder.emit(event);
    }

    pub(super) fn check_cancel(&self) -> Result<(), StoryError> {
        if self.cancel.is_cancelled() {
            Err(StoryError::Cancelled)
        } else {
            Ok(())
        }
    }

    /// Runs a git-ops call on the story's worktree off the async workers ([`offload::git`]).
    pub(super) async fn git<T, E>(
        &self,
        action: &str,
        op: impl FnOnce(&dyn Git, &Path) -> Result<T, E> + Send + 'static,
    ) -> Result<T, StoryError>
    where
        T: Send + 'static,
        E: Error + Send + Sync + 'static,
    {
        let worktree = self.job.worktree.clone();
        // An agent may have pointed the worktree's `.git` at another worktree's registration:
        // git run there would act on that one (the epic worktree's index and branch).
        offload::git(
            &self.parts.git,
            action,
            move |git| match epic_git_ops::linked_elsewhere(&worktree) {
                Some(other) => Ok(Err(StoryError::LinkedElsewhere { worktree, other })),
                None => op(git, &worktree).map(Ok),
            },
        )
        .await
        .map_err(|error| StoryError::Git {
            action: error.action,
            source: error.source,
        })?
    }

    /// Fails unless the worktree is on the story branch.
    pub(super) async fn check_branch(&self) -> Result<(), StoryError> {
        let found = self
            .git("read the worktree's branch", |git, worktree| {
                git.current_branch(worktree)
            })
            .await?;
        if found.as_deref() == Some(self.job.branch.as_str()) {
            Ok(())
        } else {
            Err(StoryError::BranchSwitched {
                worktree: self.job.worktree.clone(),
                expected: self.job.branch.clone(),
                found,
            })
        }
    }

    pub(super) async fn head(&self) -> Result<CommitId, StoryError> {
        self.git("read the worktree's head", |git, worktree| {
            git.checkpoint(worktree)
        })
        .await
    }

    pub(super) async fn dirty_paths(&self) -> Result<Vec<String>, StoryError> {
        self.git("read the worktree's status", |git, worktree| {
            git.status(worktree, &[]).map(|status| status.paths)
        })
        .await
    }

    /// Whether the worktree changed since `head`: dirty paths, or new commits of the agent.
    pub(super) async fn changed_since(&self, head: &CommitId) -> Result<bool, StoryError> {
        Ok(!self.dirty_paths().await?.is_empty() || self.head().await? != *head)
    }

    /// Paths changed since `base` (a commit), committed or not.
    pub(super) async fn paths_changed_since(
        &self,
        base: String,
    ) -> Result<Vec<String>, StoryError> {
        let mut paths: BTreeSet<String> = self
            .git(
                "list the paths changed by the task",
                move |git, worktree| git.changed_paths_vs_base(worktree, &base, "HEAD"),
            )
            .await?
            .into_iter()
            .collect();
        paths.extend(self.dirty_paths().await?);
        Ok(paths.into_iter().collect())
    }

    pub(super) fn context(&self, task: Option<&str>) -> ChatContext {
        ChatContext {
            epic: self.job.epic.clone(),
            story: Arc::clone(&self.job.story),
            task: task.map(str::to_owned),
            worktree: self.job.worktree.clone(),
            slot: self.job.slot,
            turn_timeout: self.parts.config.turn_timeout,
            cancel: self.cancel.clone(),
            sandbox: self.parts.config.sandbox.clone(),
        }
    }

    /// What every role's standing instructions are built from.
    pub(super) fn prompt_context(&self) -> prompts::Context<'_> {
        prompts::Context {
            plan: &self.job.plan,
            story: &self.job.story,
            briefing: &self.job.briefing,
            rules: &self.parts.config.extra_rules,
        }
    }

    pub(super) fn rules(&self) -> String {
        prompts::story_rules(self.prompt_context())
    }

    /// Asks `chat`, turning a failed turn into the story's error.
    pub(super) async fn ask(
        &self,
        chat: &mut Chat,
        role: Role,
        task: Option<&str>,
        prompt: String,
    ) -> Result<Reply, StoryError> {
        chat.ask(prompt).await.map_err(|source| match source {
            SeatError::Cancelled => StoryError::Cancelled,
            source => StoryError::Agent {
                role,
                task: task.map(str::to_owned),
                source,
            },
        })
    }

    /// Asks the coder of task `task`. A reply ending with `BLOCKED_ON:` is checked
    /// ([`epic_claims::checked`]): rejected, and the story's one pushback not yet used, the coder is
    /// told why in the same chat and its reply to that is the turn's; else the story ends.
    pub(super) async fn ask_coder(
        &self,
        chat: &mut Chat,
        task: &str,
        prompt: String,
    ) -> Result<Reply, StoryError> {
        let reply = self.ask(chat, Role::Coder, Some(task), prompt).await?;
        let claim = Claim {
            plan: &self.job.plan,
            story: &self.job.story,
            task: Some(task),
            verifier: self.parts.seats.verifier.as_ref(),
            context: self.context(None),
            recorder: &self.recorder,
            pushed_back: &self.pushed_back,
        };
        epic_claims::checked(claim, chat, reply)
            .await
            .map_err(StoryError::from)
    }
}
