//! The epic branch in its own worktree before a run's first story: stale worktree
//! registrations pruned, the branch created from `--base` when absent (where it starts recorded
//! in `origin.json`), its worktree made sure of, and no branch in the way of the story branches.

use std::path::Path;
use std::sync::Arc;

use epic_git_ops::{CommitId, Git};
use epic_state_store::EpicDir;
use epic_story_plan::ValidPlan;

use crate::error::RunError;
use epic_attest::EpicOrigin;
use epic_process::offload::{self};

/// Fails when an existing branch keeps git from creating the story branches
/// `story/<epic>/<id>`.
pub async fn check_story_branches(
    git: &Arc<dyn Git>,
    plan: &ValidPlan,
    epic: &str,
) -> Result<(), RunError> {
    // Every story branch is `story/<epic>/<id>`: a branch `story` or `story/<epic>` blocks them
    // all, and one under `story/<epic>/<id>/` blocks that story; better said once, here, than by
    // every story's worktree add.
    if let Some(blocker) = blocking_branch(git, &format!("story/{epic}/")).await? {
        return Err(RunError::BranchBlocked {
            wanted: format!("the story branches `story/{epic}/<id>`"),
            blocker,
        });
    }
    let under = offload::git(git, "list the story branches", {
        let directory = format!("story/{epic}");
        move |git| git.branches_under(&directory)
    })
    .await?;
    let prefix = format!("story/{epic}/");
    for blocker in under {
        let Some((id, _)) = blocker
            .strip_prefix(&prefix)
            .and_then(|rest| rest.split_once('/'))
        else {
            continue;
        };
        if plan.index_of(id).is_some() {
            return Err(RunError::BranchBlocked {
                wanted: format!("the branch `story/{epic}/{id}` of story '{id}'"),
                blocker,
            });
        }
    }
    Ok(())
}
/// The existing branch, if any, that keeps git from creating the branch `name`: one named like
/// one of its directories (`story` and `story/e` for `story/e/a`), or one under it (`story/e/a/x`).
/// A trailing `/` makes `name` a directory: only the branches above it count.
pub async fn blocking_branch(git: &Arc<dyn Git>, name: &str) -> Result<Option<String>, RunError> {
    let directories: Vec<String> = name
        .match_indices('/')
        .map(|(at, _)| name[..at].to_owned())
        .collect();
    let own = (!name.ends_with('/')).then(|| name.to_owned());
    Ok(offload::git(
        git,
        "look up the branches in the way of a new one",
        move |git| {
            for directory in directories {
                if git.branch_exists(&directory)? {
                    return Ok(Some(directory));
                }
            }
            match own {
                Some(name) => Ok(git.branches_under(&name)?.into_iter().next()),
                None => Ok::<_, epic_git_ops::BranchError>(None),
            }
        },
    )
    .await?)
}

/// Records where the epic branch starts ([`EpicOrigin`], `origin.json`), before the branch is
/// created: `start`, the commit `base` names, and the branch it names (the main checkout's for
/// `HEAD`).
pub async fn record_origin(
    git: &Arc<dyn Git>,
    main: &Path,
    dir: &EpicDir,
    base: &str,
    branch: &str,
    start: CommitId,
) -> Result<(), RunError> {
    let started_from = if base == "HEAD" || base == "@" {
        let (git, main) = (Arc::clone(git), main.to_path_buf());
        offload::blocking(move || git.current_branch(&main).ok().flatten())
            .await
            .ok()
            .flatten()
    } else {
        let name = base.strip_prefix("refs/heads/").unwrap_or(base).to_owned();
        let exists = offload::git(git, "look up the base branch", {
            let name = name.clone();
            move |git| git.branch_exists(&name)
        })
        .await
        .unwrap_or(false);
        exists.then_some(name)
    };
    let origin = EpicOrigin {
        branch: branch.to_owned(),
        base: start.to_hex(),
        started_from,
    };
    let path = dir.origin();
    let failed = |source: Box<dyn std::error::Error + Send + Sync>| RunError::State {
        action: "record where the epic branch starts".to_owned(),
        source,
    };
    offload::blocking(move || epic_state_store::save(&path, &origin))
        .await
        .map_err(|error| failed(Box::new(error)))?
        .map_err(|error| failed(Box::new(error)))
}

/// Prunes stale worktree registrations (the run's one prune: a story's worktree add prunes
/// again only when it fails), creates the epic branch from `base` when absent, and makes sure
/// `path` is its worktree.
pub async fn prepare_epic_worktree(
    git: &Arc<dyn Git>,
    dir: &EpicDir,
    main: &Path,
    base: &str,
    branch: &str,
    path: &Path,
) -> Result<(), RunError> {
    let exists = offload::git(git, "look up the epic branch", {
        let branch = branch.to_owned();
        move |git| git.branch_exists(&branch)
    })
    .await?;
    if !exists {
        if let Some(blocker) = blocking_branch(git, branch).await? {
            return Err(RunError::BranchBlocked {
                wanted: format!("the epic branch `{branch}`"),
                blocker,
            });
        }
        let start = {
            let (git, main, base) = (Arc::clone(git), main.to_path_buf(), base.to_owned());
            offload::blocking(move || git.rev_parse(&main, &base))
                .await
                .map_err(|error| RunError::git("resolve the base", error))?
        };
        let start = start.map_err(|source| RunError::Base {
            base: base.to_owned(),
            source,
        })?;
        record_origin(git, main, dir, base, branch, start).await?;
        offload::git(git, "create the epic branch", {
            let branch = branch.to_owned();
            move |git| git.create_branch(&branch, &start)
        })
        .await?;
    }
    offload::git(git, "prune stale worktree registrations", |git| {
        git.prune_worktrees()
    })
    .await?;
    // An add of the epic worktree killed half way (its "initializing" lock still there) left
    // a partial checkout that no run has used: removed here, it is added again below.
    if epic_git_ops::add_interrupted(path) {
        let path = path.to_path_buf();
        offload::git(
            git,
            "remove the epic worktree an add left half made",
            move |git| git.remove_worktree(&path),
        )
        .await?;
    }
    let worktrees = offload::git(git, "list the worktrees", |git| git.worktrees()).await?;
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut registered = false;
    for info in &worktrees {
        let here = same_path(&info.path, &absolute);
        let holds_branch = info.branch.as_deref() == Some(branch);
        if info.is_main && holds_branch {
            return Err(RunError::EpicBranchCheckedOut {
                branch: branch.to_owned(),
                checkout: info.path.clone(),
            });
        }
        if here {
            if info.prunable {
                continue;
            }
            if !holds_branch {
                return Err(RunError::EpicWorktree {
                    path: absolute,
                    found: info.branch.as_ref().map_or_else(
                        || "it has a detached head".to_owned(),
                        |found| format!("it has branch `{found}` checked out"),
                    ),
                });
            }
            registered = true;
        } else if holds_branch && !info.prunable {
            return Err(RunError::EpicWorktree {
                path: absolute,
                found: format!(
                    "the epic branch is checked out in `{}` instead",
                    info.path.display()
                ),
            });
        }
    }
    if !registered {
        if absolute.exists() {
            return Err(RunError::EpicWorktree {
                path: absolute,
                found: "it exists and is not a worktree of this repository".to_owned(),
            });
        }
        offload::git(git, "add the epic branch's worktree", {
            let (path, branch) = (absolute.clone(), branch.to_owned());
            move |git| git.add_worktree(&path, &branch)
        })
        .await?;
    }
    Ok(())
}

/// Whether two paths name the same directory (canonically, when both exist).
pub fn same_path(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}
