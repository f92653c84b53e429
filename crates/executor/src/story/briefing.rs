//! Between setup and the task loop: what the prompts of the story's agents carry beyond its
//! plan entry ([`Briefing`]), gathered once its worktree is ready. The checkouts that are off
//! limits (the main checkout, the epic's worktree, the other stories' worktrees), the head of
//! each `read_first` file as the worktree holds it (read through epic-git-ops, which refuses a
//! path that leads out of the worktree), and what each dependency merged: the paths its merge
//! commit changed on the epic branch, or its owned paths where there is no merge commit to read
//! (a story the epic head already held, an older state file).
//!
//! Gathering never fails the story: what cannot be read is named as such in the prompt.

use std::path::PathBuf;
use std::sync::Arc;

use epic_state_store::StoryState;

use super::work::Work;
use epic_process::offload::{self, BoxError};
use epic_protocol::prompts::{
    self, Briefing, Context, Dependency, READ_FIRST_FILE_CAP, ReadFirst, Shown,
};

/// How many other stories' worktrees a prompt names one by one; past it, their directory.
const SIBLINGS_NAMED: usize = 12;

impl Work {
    /// The story's briefing, gathered now.
    pub(super) async fn gather_briefing(&self) -> Arc<Briefing> {
        Arc::new(Briefing {
            worktree: self.worktree.clone(),
            off_limits: self.off_limits(),
            read_first: self.read_first().await,
            dependencies: self.dependencies().await,
        })
    }

    /// What every role's standing instructions are built from.
    pub(super) fn prompt_context(&self) -> Context<'_> {
        Context {
            plan: &self.shared.plan,
            story: &self.story,
            briefing: &self.briefing,
            rules: &self.shared.config.extra_rules,
        }
    }

    /// The main checkout, the epic's worktree, the other slot worktrees (`--worktrees warm`), and
    /// the other stories' own worktrees (the first [`SIBLINGS_NAMED`] by name, then their
    /// directory).
    fn off_limits(&self) -> Vec<(PathBuf, String)> {
        let mut out = Vec::new();
        if let Some(main) = self.shared.git.main_worktree() {
            out.push((
                main.to_path_buf(),
                "the main checkout: the user's own".to_owned(),
            ));
        }
        out.push((
            self.shared.epic_worktree.clone(),
            "the epic's worktree, where epic merges the stories".to_owned(),
        ));
        // Warm worktrees: the other stories work in the other slots.
        if self.shared.config.worktrees == crate::config::WorktreeMode::Warm {
            let slots =
                (0..self.shared.config.concurrency.max(1)).filter(|slot| *slot != self.slot);
            for slot in slots.take(SIBLINGS_NAMED) {
                out.push((
                    super::slot::slot_path(&self.shared.worktree_root, slot),
                    format!("slot worktree {slot}: another story's"),
                ));
            }
        }
        let others: Vec<&str> = self
            .shared
            .plan
            .stories
            .iter()
            .map(|story| story.id.as_str())
            .filter(|id| *id != self.id())
            .collect();
        for id in others.iter().take(SIBLINGS_NAMED) {
            out.push((
                self.shared.worktree_root.join(id),
                format!("story {id}'s worktree"),
            ));
        }
        if others.len() > SIBLINGS_NAMED {
            out.push((
                self.shared.worktree_root.clone(),
                format!(
                    "every other directory in it: the worktrees of {} more stories",
                    others.len() - SIBLINGS_NAMED
                ),
            ));
        }
        out
    }

    /// The story's `read_first` files as its worktree holds them, within the prompt's caps.
    async fn read_first(&self) -> Vec<ReadFirst> {
        let paths = self.story.read_first.clone();
        if paths.is_empty() {
            return Vec::new();
        }
        let worktree = self.worktree.clone();
        let listed = paths.clone();
        let heads = offload::blocking(move || {
            paths
                .into_iter()
                .map(|path| {
                    let head = epic_git_ops::read_head(&worktree, &path, READ_FIRST_FILE_CAP)
                        .map_err(|error| error.to_string());
                    (path, head)
                })
                .collect::<Vec<_>>()
        })
        .await;
        match heads {
            Ok(heads) => prompts::read_first(heads),
            Err(_) => listed
                .into_iter()
                .map(|path| ReadFirst {
                    path,
                    shown: Shown::Listed("could not be read".to_owned()),
                })
                .collect(),
        }
    }

    /// The story's direct dependencies, with the paths each merged.
    async fn dependencies(&self) -> Vec<Dependency> {
        let mut out = Vec::new();
        for id in &self.story.depends_on {
            let Some(dependency) = self.shared.plan.story(id) else {
                continue;
            };
            let merged = self.merged_paths(id).await;
            out.push(Dependency {
                id: dependency.id.clone(),
                title: dependency.title.clone(),
                provides: dependency.provides.clone(),
                merged: merged.is_some(),
                paths: merged.unwrap_or_else(|| dependency.owned.clone()),
            });
        }
        out
    }

    /// The paths story `id`'s merge commit changed on the epic branch (against its first
    /// parent); `None` without a recorded merge commit, or one that is not a merge.
    pub(super) async fn merged_paths(&self, id: &str) -> Option<Vec<String>> {
        let path = self.shared.dir.story_state(id).ok()?;
        let state = offload::blocking(move || epic_state_store::load::<StoryState>(&path))
            .await
            .ok()?
            .ok()??;
        let merge = state.merge?;
        let epic = self.shared.epic_worktree.clone();
        offload::git(
            &self.shared.git,
            "read the paths a dependency merged",
            move |git| {
                // Only a merge commit holds the story's changes alone against its first parent.
                git.rev_parse(&epic, &format!("{merge}^2"))?;
                Ok::<_, BoxError>(git.changed_paths_vs_base(
                    &epic,
                    &format!("{merge}^1"),
                    &merge,
                )?)
            },
        )
        .await
        .ok()
    }
}
