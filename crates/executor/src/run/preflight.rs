//! Everything a run does before its first story: the epic's lock and event log, the lock files
//! a dead run left on the epic worktree, stale worktree registrations pruned, the epic branch
//! (created from `--base` when absent) in its own worktree, a merge left unproven undone (back to
//! the proven head epic recorded, never where the journal alone says), the stories merged on
//! earlier runs found (each believed only while its merge commit is on the epic branch's
//! first-parent line), a clean epic worktree, no story path that is or lies under a symbolic
//! link, its head recorded as the proven head, and then the gates' baseline on its head.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use epic_git_ops::{CommitId, Git};
use epic_state_store::{EpicDir, EpicLock, EventLog, LockError, StoryStage, StoryState};
use epic_story_plan::ValidPlan;
use epic_story_plan::path::{normalize, within_normalized};
use tokio_util::sync::CancellationToken;

use super::config::{RunConfig, RunError};
use crate::attest::EpicOrigin;
use crate::baseline::{GateBaseline, GateVerdict};
use crate::event::{Event, EventSink};
use crate::gates::{GateResult, Gates};
use crate::merge_queue::{MergeJournal, ProvenCandidate, ProvenHead};
use crate::record;
use epic_process::chain;
use epic_process::offload::{self, BoxError};
use epic_process::sandbox::{self, Layout, Sandbox};

/// The directory under which the epic branch's own worktree lives, beside the story worktrees.
pub const EPIC_WORKTREE_NAME: &str = "_epic";

/// Where the worktrees of epic `epic` live, for a repository whose main worktree is `main`:
/// `<repo-parent>/<repo-name>.worktrees/<epic>` (docs/contract.md). Each story's worktree is the
/// story id under it, the epic branch's is [`EPIC_WORKTREE_NAME`].
///
/// ```
/// use std::path::Path;
///
/// let root = epic_executor::worktrees_root(Path::new("/src/shop"), "checkout");
/// assert_eq!(root, Path::new("/src/shop.worktrees/checkout"));
/// ```
pub fn worktrees_root(main: &Path, epic: &str) -> PathBuf {
    let name = main.file_name().map_or_else(
        || "repo".to_owned(),
        |name| name.to_string_lossy().into_owned(),
    );
    main.parent()
        .unwrap_or(main)
        .join(format!("{name}.worktrees"))
        .join(epic)
}

/// What the preflight leaves ready.
pub(super) struct Ready {
    pub(super) dir: EpicDir,
    pub(super) lock: EpicLock,
    pub(super) events: EventSink,
    pub(super) epic_branch: String,
    pub(super) worktree_root: PathBuf,
    pub(super) epic_worktree: PathBuf,
    /// The sandbox every story process runs in.
    pub(super) sandbox: Sandbox,
    pub(super) head: CommitId,
    /// The stories merged on an earlier run under their current plan entry: plan index and
    /// branch, in plan order.
    pub(super) merged: Vec<(usize, String)>,
}

/// The epic's event log, opened for appending.
pub async fn open_log(dir: &EpicDir) -> Result<EventLog, RunError> {
    let path = dir.events();
    let failed = |source: Box<dyn std::error::Error + Send + Sync>| RunError::State {
        action: "open the event log".to_owned(),
        source,
    };
    offload::blocking(move || EventLog::open(path))
        .await
        .map_err(|error| failed(Box::new(error)))?
        .map_err(|error| failed(Box::new(error)))
}

/// Ends what a dead run of the epic left running in its worktrees (a gate, a setup command or an
/// agent of a run killed with SIGKILL without the sandbox), saying so in a run note.
async fn end_leftovers(worktree_root: &Path, events: &EventSink) {
    let root = worktree_root.to_path_buf();
    let killed = offload::blocking(move || epic_process::end_leftovers(&root))
        .await
        .unwrap_or_default();
    if !killed.is_empty() {
        events(Event::RunNote {
            message: format!(
                "ended {} process(es) a run that died left running in the epic's worktrees: {}",
                killed.len(),
                killed
                    .iter()
                    .map(|orphan| format!("pid {} (`{}`)", orphan.pid, orphan.command))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
}

/// Checks each seat in use once (a seat in several roles, once), in role order: the coder, the
/// judge, the reviewers, the verifier.
async fn check_seats(config: &RunConfig, dir: &Path) -> Result<(), RunError> {
    let seats = std::iter::once(&config.coder)
        .chain(config.judge.as_ref())
        .chain(&config.reviewers)
        .chain(config.verifier.as_ref());
    let mut checked = std::collections::BTreeSet::new();
    for seat in seats {
        if checked.insert(seat.name().to_owned()) {
            seat.ready(dir).await?;
        }
    }
    Ok(())
}

/// Everything before the baseline: the lock, the event log, stale worktree registrations
/// pruned, the epic branch and its worktree, an unproven merge undone, every merged story still
/// on the epic branch, a clean epic worktree, and its head, where no owned or shared read-only
/// path of a story still to run is or lies under a symbolic link.
pub(super) async fn preflight(
    git: &Arc<dyn Git>,
    plan: &ValidPlan,
    config: &RunConfig,
    events: EventSink,
) -> Result<Ready, RunError> {
    let Some(main) = git.main_worktree().map(Path::to_path_buf) else {
        return Err(RunError::Bare {
            common_dir: git.common_dir().to_path_buf(),
        });
    };
    let epic = plan.plan().epic_id.as_str();
    let dir = EpicDir::new(git.common_dir(), epic).map_err(RunError::EpicId)?;
    let worktree_root = worktrees_root(&main, epic);
    // First: `--sandbox on` without a working sandbox refuses before anything is touched.
    let layout = Layout::new(&main, git.common_dir(), &worktree_root);
    let sandbox = sandbox::resolve(config.sandbox, layout, config.credentials()).await?;
    if config.preflight {
        check_seats(config, &main).await?;
    }
    let lock = take_lock(&dir).await?;
    let events = record::logging_sink(open_log(&dir).await?, events);
    let epic_branch = config
        .epic_branch
        .clone()
        .unwrap_or_else(|| format!("epic/{epic}"));
    let epic_worktree = worktree_root.join(EPIC_WORKTREE_NAME);
    // First in the log: every note of the run (the sandbox's, what a dead run left) follows it.
    events(Event::RunStarted {
        epic: epic.to_owned(),
        epic_branch: epic_branch.clone(),
        epic_worktree: epic_worktree.display().to_string(),
        stories: plan.plan().stories.len(),
        concurrency: config.concurrency.max(1),
    });
    end_leftovers(&worktree_root, &events).await;
    let sandbox = start_sandbox(git, sandbox, &events).await?;

    let cleared = {
        let (common, worktree, branch) = (
            git.common_dir().to_path_buf(),
            epic_worktree.clone(),
            epic_branch.clone(),
        );
        offload::blocking(move || epic_git_ops::clear_stale_locks(&common, &worktree, &branch))
            .await
            .unwrap_or_default()
    };
    for path in cleared {
        events(Event::RunNote {
            message: format!(
                "removed {}, left by a git process of a run that died",
                path.display()
            ),
        });
    }
    prepare_epic_worktree(git, &dir, &main, &config.base, &epic_branch, &epic_worktree).await?;
    // Slot worktrees a killed run left holding a story's work leave the rotation before any
    // story takes a slot (`--worktrees warm`; whatever this run's mode, such slots may exist).
    crate::story::retire_slots(git, &dir, &worktree_root, &events).await;
    check_story_branches(git, plan, epic).await?;
    recover_merge(git, &dir, &epic_worktree, &epic_branch, &events).await?;
    let candidates = merged_on_earlier_runs(plan, &dir).await;
    check_proven_head(git, &dir, &candidates, &epic_worktree, &epic_branch).await?;
    // Before the status: a moved epic branch also leaves its worktree looking dirty, and the
    // lost stories are what the user must hear about.
    let merged = check_merged_stories(
        git,
        plan,
        &dir,
        candidates,
        &epic_worktree,
        &epic_branch,
        &events,
    )
    .await?;
    let status = offload::git(git, "read the status of the epic worktree", {
        let epic_worktree = epic_worktree.clone();
        move |git| git.status(&epic_worktree, &[])
    })
    .await?;
    if status.is_dirty() {
        return Err(RunError::DirtyEpicWorktree {
            worktree: epic_worktree,
            paths: status.paths,
        });
    }
    let head = offload::git(git, "read the epic head", {
        let epic_worktree = epic_worktree.clone();
        move |git| git.checkpoint(&epic_worktree)
    })
    .await?;
    check_symlinked_paths(git, plan, &merged, &epic_worktree, &head).await?;
    record_proven(&dir, head).await?;
    Ok(Ready {
        dir,
        lock,
        events,
        epic_branch,
        worktree_root,
        epic_worktree,
        sandbox,
        head,
        merged,
    })
}

/// Says once what the run's sandbox is not (off, or unavailable), and readies the run for it:
/// without the sandbox, this process adopts orphans (so daemons that escape their turn are found
/// and killed); with it, the repository gets its `logs` directory (a commit in a sandboxed
/// worktree appends to its branch's reflog, and the sandbox keeps the git directory read-only
/// but for `objects`, `refs` and `logs`).
async fn start_sandbox(
    git: &Arc<dyn Git>,
    resolved: sandbox::Resolved,
    events: &EventSink,
) -> Result<Sandbox, RunError> {
    if let Some(message) = resolved.note {
        events(Event::RunNote { message });
    }
    if !resolved.sandbox.is_on() {
        // Without a PID namespace per turn, a daemon that leaves its group and clears its
        // environment is found only as an orphan this process adopts.
        return Ok(match epic_process::adopt_orphans() {
            Ok(()) => resolved.sandbox.adopting(),
            Err(error) => {
                events(Event::RunNote {
                    message: format!(
                        "processes that escape their turn cannot be looked for (epic could not \
                         become their subreaper: {error})"
                    ),
                });
                resolved.sandbox
            }
        });
    }
    {
        let common = git.common_dir().to_path_buf();
        offload::blocking(move || epic_git_ops::ensure_logs_dir(&common))
            .await
            .map_err(|error| RunError::git("create the reflog directory", error))?
            .map_err(|error| RunError::git("create the reflog directory", error))?;
    }
    Ok(resolved.sandbox)
}

/// Fails when an owned or shared read-only path of a story still to run is a symbolic link, or
/// lies under one, in the tree of the epic head: the story's work would land where the link
/// points, outside the repository or in another story's paths, and its diff would show nothing
/// of it. One read of the tree along the stories' paths, in process.
async fn check_symlinked_paths(
    git: &Arc<dyn Git>,
    plan: &ValidPlan,
    merged: &[(usize, String)],
    epic_worktree: &Path,
    head: &CommitId,
) -> Result<(), RunError> {
    // (story, path, shared), in plan order; stories merged on an earlier run do not run again.
    let paths: Vec<(String, String, bool)> = plan
        .plan()
        .stories
        .iter()
        .enumerate()
        .filter(|(index, _)| !merged.iter().any(|(merged, _)| merged == index))
        .flat_map(|(_, story)| {
            let owned = story.owned.iter().map(|path| (path, false));
            let shared = story.shared_read_only.iter().map(|path| (path, true));
            owned
                .chain(shared)
                .map(|(path, shared)| (story.id.clone(), normalize(path), shared))
        })
        .collect();
    if paths.is_empty() {
        return Ok(());
    }
    let links = offload::git(git, "read the epic head's tree", {
        let (epic_worktree, head) = (epic_worktree.to_path_buf(), head.to_hex());
        let paths: Vec<String> = paths.iter().map(|(_, path, _)| path.clone()).collect();
        move |git| {
            let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
            git.symlinks_along(&epic_worktree, &head, &paths)
        }
    })
    .await?;
    for (story, path, shared) in paths {
        if let Some(link) = links
            .iter()
            .find(|link| within_normalized(&path, &link.path))
        {
            return Err(RunError::SymlinkedPath {
                story,
                path,
                shared,
                link: link.path.clone(),
                target: link.target.clone(),
            });
        }
    }
    Ok(())
}

/// Records `head`, the head this run builds on, as the proven head ([`ProvenHead`]) a merge the
/// run leaves unproven goes back to.
async fn record_proven(dir: &EpicDir, head: CommitId) -> Result<(), RunError> {
    ProvenHead::record(dir, head, None)
        .await
        .map_err(|source| RunError::State {
            action: "record the proven epic head".to_owned(),
            source,
        })
}

/// Fails when an existing branch keeps git from creating the story branches
/// `story/<epic>/<id>`.
async fn check_story_branches(
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

/// The stories whose state says merged under their current plan entry (a story whose entry
/// changed since starts over): plan index and state, in plan order. A state that cannot be
/// read counts as not merged; what the states say is checked against the epic branch by
/// [`check_merged_stories`].
async fn merged_on_earlier_runs(plan: &ValidPlan, dir: &EpicDir) -> Vec<(usize, StoryState)> {
    let stories: Vec<(String, Option<PathBuf>)> = plan
        .plan()
        .stories
        .iter()
        .map(|story| {
            (
                epic_story_plan::story_hash(story),
                dir.story_state(&story.id).ok(),
            )
        })
        .collect();
    offload::blocking(move || {
        stories
            .into_iter()
            .enumerate()
            .filter_map(|(index, (hash, path))| {
                let state = epic_state_store::load::<StoryState>(path?).ok().flatten()?;
                (state.status == StoryStage::Merged && state.hash == hash).then_some((index, state))
            })
            .collect()
    })
    .await
    .unwrap_or_default()
}

/// Refuses an epic branch that is not where epic left it: at the proven head it recorded, or at
/// the recorded merge commit of a story whose merge was proven but whose proven head a killed
/// run did not get to record. Without a record (an epic begun before epic kept one) the branch is
/// taken as it is.
async fn check_proven_head(
    git: &Arc<dyn Git>,
    dir: &EpicDir,
    candidates: &[(usize, StoryState)],
    epic_worktree: &Path,
    epic_branch: &str,
) -> Result<(), RunError> {
    let proven_file = dir.proven_head();
    let recorded = {
        let path = proven_file.clone();
        offload::blocking(move || epic_state_store::load::<ProvenHead>(path))
            .await
            .map_err(|error| RunError::State {
                action: "read the proven epic head".to_owned(),
                source: Box::new(error),
            })?
            .map_err(|error| RunError::State {
                action: "read the proven epic head".to_owned(),
                source: Box::new(error),
            })?
    };
    let Some(proven) = recorded.and_then(|record| record.commit.parse::<CommitId>().ok()) else {
        return Ok(());
    };
    let merges: Vec<CommitId> = candidates
        .iter()
        .filter_map(|(_, state)| state.merge.as_deref()?.parse().ok())
        .collect();
    let (worktree, tip) = (
        epic_worktree.to_path_buf(),
        format!("refs/heads/{epic_branch}"),
    );
    let head = offload::git(git, "read the epic branch", move |git| {
        let head = git.rev_parse(&worktree, &tip)?;
        let explained = head == proven
            || (merges.contains(&head) && git.is_ancestor(&worktree, &proven.to_hex(), &tip)?);
        Ok::<_, BoxError>((!explained).then_some(head))
    })
    .await?;
    match head {
        None => Ok(()),
        Some(head) => Err(RunError::EpicBranchMoved {
            epic_branch: epic_branch.to_owned(),
            head: head.to_hex(),
            proven: proven.to_hex(),
            epic_worktree: epic_worktree.to_path_buf(),
            proven_file,
        }),
    }
}

/// Why a state that says merged is not believed.
enum Unproven {
    /// It records no merge commit (an older file, or one edited).
    NoCommit,
    /// Its merge commit is not on the epic branch's first-parent line.
    OffTheLine(String),
}

/// The one place a run decides which stories an earlier run merged: of the `candidates` (states
/// that say merged), those whose recorded merge commit is on the epic branch's first-parent
/// line, as plan index and branch, in plan order. Fails when a story recorded with a merge
/// commit is not on the epic branch while its story branch, not contained in it, still exists:
/// something moved or reset the branch. Any other state that says merged without the epic
/// branch showing it is not believed: it is set back to `started`, so the story runs again, and
/// a run note says why.
async fn check_merged_stories(
    git: &Arc<dyn Git>,
    plan: &ValidPlan,
    dir: &EpicDir,
    candidates: Vec<(usize, StoryState)>,
    epic_worktree: &Path,
    epic_branch: &str,
    events: &EventSink,
) -> Result<Vec<(usize, String)>, RunError> {
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    let judged = offload::git(git, "check the merged stories are on the epic branch", {
        let (epic_worktree, epic_branch) = (epic_worktree.to_path_buf(), epic_branch.to_owned());
        move |git| {
            let tip = format!("refs/heads/{epic_branch}");
            let mut judged = Vec::new();
            for (index, state) in candidates {
                let Some(commit) = state
                    .merge
                    .as_deref()
                    .and_then(|merge| merge.parse::<CommitId>().ok())
                else {
                    judged.push((index, state, Err(Unproven::NoCommit)));
                    continue;
                };
                if git.branch_exists(&state.branch)?
                    && !git.is_ancestor(
                        &epic_worktree,
                        &format!("refs/heads/{}", state.branch),
                        &tip,
                    )?
                {
                    judged.push((index, state, Ok(false)));
                } else if git.on_first_parent_line(&epic_worktree, &commit, &tip)? {
                    judged.push((index, state, Ok(true)));
                } else {
                    judged.push((index, state, Err(Unproven::OffTheLine(commit.to_hex()))));
                }
            }
            Ok::<_, BoxError>(judged)
        }
    })
    .await?;
    let missing: Vec<String> = judged
        .iter()
        .filter(|(_, _, on)| matches!(on, Ok(false)))
        .map(|(index, _, _)| plan.plan().stories[*index].id.clone())
        .collect();
    if !missing.is_empty() {
        return Err(RunError::MergedStoriesMissing {
            epic_branch: epic_branch.to_owned(),
            stories: missing,
        });
    }
    let mut merged = Vec::new();
    for (index, state, on) in judged {
        let why = match on {
            Ok(_) => {
                merged.push((index, state.branch));
                continue;
            }
            Err(Unproven::NoCommit) => "records no merge commit".to_owned(),
            Err(Unproven::OffTheLine(commit)) => format!(
                "its merge commit {commit} is not on the first-parent line of the epic branch \
                 `{epic_branch}`"
            ),
        };
        let id = state.id.clone();
        let path = dir.story_state(&id).map_err(RunError::EpicId)?;
        let reset = StoryState {
            status: StoryStage::Started,
            merge: None,
            ..state
        };
        let saved = offload::blocking(move || epic_state_store::save(&path, &reset))
            .await
            .map_err(|error| RunError::State {
                action: format!("set story '{id}' back to started"),
                source: Box::new(error),
            })?;
        saved.map_err(|error| RunError::State {
            action: format!("set story '{id}' back to started"),
            source: Box::new(error),
        })?;
        events(Event::RunNote {
            message: format!(
                "the state of story '{id}' says it merged, but {why}; it is not counted as \
                 merged and runs again"
            ),
        });
    }
    Ok(merged)
}

/// Takes the epic's lock (another run or landing holding it: [`RunError::Locked`]).
pub async fn take_lock(dir: &EpicDir) -> Result<EpicLock, RunError> {
    let dir = dir.clone();
    let taken = offload::blocking(move || EpicLock::acquire(&dir))
        .await
        .map_err(|error| RunError::State {
            action: "take the epic's lock".to_owned(),
            source: Box::new(error),
        })?;
    taken.map_err(|error| match error {
        LockError::Held { ref holder, .. } => RunError::Locked {
            holder: holder.clone(),
            source: error,
        },
        error => RunError::Lock(error),
    })
}

/// The existing branch, if any, that keeps git from creating the branch `name`: one named like
/// one of its directories (`story` and `story/e` for `story/e/a`), or one under it (`story/e/a/x`).
/// A trailing `/` makes `name` a directory: only the branches above it count.
async fn blocking_branch(git: &Arc<dyn Git>, name: &str) -> Result<Option<String>, RunError> {
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
async fn record_origin(
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
fn same_path(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// Undoes the merges a previous run left unproven (it died while gating a batch), unless every
/// story the journal names says it merged. The journal is evidence of a crash, not an order: the
/// epic branch goes back only to the last proven head epic recorded ([`ProvenHead`]), only when
/// the journal's checkpoint is that head and the branch descends from it. A journal that names
/// another checkpoint, with the branch at the proven head, merged nothing and is dropped with a
/// note; otherwise it is refused and the branch is not moved. A journal that records a proven
/// candidate (the run died while recording its stories merged) is finished instead: when the
/// epic branch is at that candidate's head and the recorded proven head is the journal's
/// checkpoint or that head, the stories are recorded merged and the head proven.
#[expect(
    clippy::too_many_lines,
    reason = "one decision over the journal, the recorded proven head and the branch, read once"
)]
async fn recover_merge(
    git: &Arc<dyn Git>,
    dir: &EpicDir,
    epic_worktree: &Path,
    epic_branch: &str,
    events: &EventSink,
) -> Result<(), RunError> {
    let path = dir.merge_journal();
    let state_error = |action: &str, source: BoxError| RunError::State {
        action: action.to_owned(),
        source,
    };
    let found = {
        let (path, dir) = (path.clone(), dir.clone());
        offload::blocking(move || {
            let journal = epic_state_store::load::<MergeJournal>(&path)?;
            let merged = journal.as_ref().is_some_and(|journal| {
                !journal.stories.is_empty()
                    && journal.stories.iter().all(|story| {
                        dir.story_state(story)
                            .ok()
                            .and_then(|state| {
                                epic_state_store::load::<StoryState>(state).ok().flatten()
                            })
                            .is_some_and(|state| state.status == StoryStage::Merged)
                    })
            });
            // Unreadable, the record proves nothing: the journal is then refused.
            let proven = epic_state_store::load::<ProvenHead>(dir.proven_head())
                .ok()
                .flatten()
                .and_then(|record| record.commit.parse::<CommitId>().ok());
            Ok::<_, epic_state_store::LoadError>(journal.map(|journal| (journal, merged, proven)))
        })
        .await
    };
    let (journal, merged, proven) = match found {
        Ok(Ok(Some(found))) => found,
        Ok(Ok(None)) => return Ok(()),
        Ok(Err(error)) => return Err(state_error("read the merge journal", Box::new(error))),
        Err(error) => return Err(state_error("read the merge journal", Box::new(error))),
    };
    let checkpoint = journal.checkpoint.parse::<CommitId>().ok();
    let candidate = journal
        .proven
        .as_ref()
        .and_then(|candidate| candidate.head.parse::<CommitId>().ok());
    let (head, descends) = offload::git(git, "read the epic branch", {
        let (epic_worktree, tip) = (
            epic_worktree.to_path_buf(),
            format!("refs/heads/{epic_branch}"),
        );
        move |git| {
            let head = git.rev_parse(&epic_worktree, &tip)?;
            let descends = match proven {
                Some(proven) => git.is_ancestor(&epic_worktree, &proven.to_hex(), &tip)?,
                None => false,
            };
            Ok::<_, BoxError>((head, descends))
        }
    })
    .await?;
    let refused = |journal: MergeJournal| RunError::MergeJournalRefused {
        journal: path.clone(),
        story: journal.stories.join("', '"),
        checkpoint: journal.checkpoint,
        proven: proven.map(|proven| proven.to_hex()),
        epic_branch: epic_branch.to_owned(),
        head: head.to_hex(),
        epic_worktree: epic_worktree.to_path_buf(),
    };
    if let (Some(candidate), Some(recorded)) = (candidate, journal.proven.as_ref()) {
        let explained = head == candidate
            && proven.is_some_and(|proven| Some(proven) == checkpoint || proven == candidate)
            && descends;
        if !explained {
            return Err(refused(journal));
        }
        finish_proven(dir, recorded, candidate).await?;
        let stories: Vec<String> = recorded
            .merges
            .iter()
            .map(|merge| merge.story.clone())
            .collect();
        events(Event::RunNote {
            message: format!(
                "a previous run stopped while recording the proven merge of {}; it is \
                 recorded (the epic branch stays at {candidate})",
                crate::merge_queue::names(&stories)
            ),
        });
    } else if !merged {
        match proven {
            Some(proven) if checkpoint == Some(proven) && descends => {
                let epic_worktree = epic_worktree.to_path_buf();
                offload::git(
                    git,
                    "undo the unproven merge of an interrupted run",
                    move |git| git.rollback(&epic_worktree, &proven),
                )
                .await?;
                events(Event::RunNote {
                    message: format!(
                        "a previous run stopped while proving the merge of {}; the merge \
                         was undone (the epic branch is back at {})",
                        journal.names(),
                        journal.checkpoint
                    ),
                });
            }
            Some(proven) if head == proven => events(Event::RunNote {
                message: format!(
                    "ignored the merge journal `{}`: it names {} and checkpoint {}, \
                     which is not the last proven epic head ({proven}), and the epic branch is \
                     at that proven head, so no merge was left unproven; the branch was not \
                     moved",
                    path.display(),
                    journal.names(),
                    journal.checkpoint
                ),
            }),
            _ => return Err(refused(journal)),
        }
    }
    match offload::blocking(move || epic_state_store::remove(&path)).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(error)) => Err(state_error("remove the merge journal", Box::new(error))),
        Err(error) => Err(state_error("remove the merge journal", Box::new(error))),
    }
}

/// Finishes recording the proven candidate `recorded` (head `head`) a killed run left: each of
/// its stories' states says merged, with its merge commit, and `head` is the proven head.
async fn finish_proven(
    dir: &EpicDir,
    recorded: &ProvenCandidate,
    head: CommitId,
) -> Result<(), RunError> {
    let (dir, recorded) = (dir.clone(), recorded.clone());
    let finished = offload::blocking(move || {
        for merge in &recorded.merges {
            let path = dir.story_state(&merge.story)?;
            let Some(mut state) = epic_state_store::load::<StoryState>(&path)? else {
                continue;
            };
            if state.status != StoryStage::Merged || state.merge.as_deref() != Some(&merge.commit) {
                state.status = StoryStage::Merged;
                state.merge = Some(merge.commit.clone());
                epic_state_store::save(&path, &state)?;
            }
        }
        epic_state_store::save(
            dir.proven_head(),
            &ProvenHead {
                commit: head.to_hex(),
            },
        )?;
        Ok::<_, BoxError>(())
    })
    .await;
    match finished {
        Ok(Ok(())) => Ok(()),
        Ok(Err(source)) => Err(RunError::State {
            action: "record the proven merges of an interrupted run".to_owned(),
            source,
        }),
        Err(error) => Err(RunError::State {
            action: "record the proven merges of an interrupted run".to_owned(),
            source: Box::new(error),
        }),
    }
}

/// The gates' verdict on the epic head, per command, from the cache or by running them;
/// `None` when cancelled.
pub(super) async fn check_baseline(
    dir: &EpicDir,
    gates: &Gates,
    epic_worktree: &Path,
    head: CommitId,
    events: &EventSink,
    cancel: &CancellationToken,
) -> Option<GateBaseline> {
    let commit = head.to_hex();
    let cached = {
        let (dir, commit, commands) = (dir.clone(), commit.clone(), gates.commands().to_vec());
        offload::blocking(move || GateBaseline::cached(&dir, &commit, &commands))
            .await
            .ok()
            .flatten()
    };
    if let Some(cached) = cached {
        events(Event::BaselineChecked {
            commit,
            passed: cached.passed().into_iter().collect(),
            failed: cached.failed(),
            cached: true,
        });
        return Some(cached);
    }
    let sink = Arc::clone(events);
    let on_result = move |result: &GateResult| {
        sink(Event::EpicGate {
            story: None,
            command: result.command.clone(),
            passed: result.passed,
            duration_ms: u64::try_from(result.duration.as_millis()).unwrap_or(u64::MAX),
            status: result.status.clone(),
        });
        if let Some(event) = result.leftovers_event(None) {
            sink(event);
        }
    };
    let env = vec![
        ("EPIC_EPIC".to_owned(), dir.epic_id().to_owned()),
        (
            "EPIC_WORKTREE".to_owned(),
            epic_worktree.display().to_string(),
        ),
    ];
    let results = gates
        .run_each(epic_worktree, &env, cancel, &on_result)
        .await
        .ok()?;
    let baseline = GateBaseline {
        commit: commit.clone(),
        gates: results
            .iter()
            .map(|(result, _)| GateVerdict {
                command: result.command.clone(),
                passed: result.passed,
            })
            .collect(),
    };
    let saved = {
        let (dir, baseline) = (dir.clone(), baseline.clone());
        offload::blocking(move || baseline.save(&dir).map_err(|error| chain(&error)))
            .await
            .unwrap_or_else(|error| Err(error.to_string()))
    };
    if let Err(error) = saved {
        events(Event::RunNote {
            message: format!("the gate baseline could not be cached: {error}"),
        });
    }
    events(Event::BaselineChecked {
        commit,
        passed: baseline.passed().into_iter().collect(),
        failed: baseline.failed(),
        cached: false,
    });
    Some(baseline)
}
