//! Everything a run does before its first story: the epic's lock and event log, the lock files
//! a dead run left on the epic worktree, stale worktree registrations pruned, the epic branch
//! (created from `--base` when absent) in its own worktree, a merge left unproven undone (back to
//! the proven head epic recorded, never where the journal alone says), the stories merged on
//! earlier runs found (each believed only while its merge commit is on the epic branch's
//! first-parent line), a clean epic worktree, no story path that is or lies under a symbolic
//! link, its head recorded as the proven head, and then the gates' baseline on its head. The
//! epic branch and its worktree are `epic_branch.rs`'s, what earlier runs left `recover.rs`'s.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use epic_branch::{EPIC_WORKTREE_NAME, open_log, take_lock, worktrees_root};
use epic_git_ops::{CommitId, Git};
use epic_state_store::{EpicDir, EpicLock};
use epic_story_plan::ValidPlan;
use epic_story_plan::path::{normalize, within_normalized};
use tokio_util::sync::CancellationToken;

use super::recover::{
    check_merged_stories, check_proven_head, merged_on_earlier_runs, recover_merge,
};
use crate::config::RunConfig;
use epic_branch::ProvenHead;
use epic_branch::RunError;
use epic_branch::{check_story_branches, prepare_epic_worktree};
use epic_events::{Event, EventSink};
use epic_gates::{GateBaseline, GateVerdict};
use epic_gates::{GateResult, Gates};

use epic_attest::NOTES_REF;
use epic_process::chain;
use epic_process::offload::{self};
use epic_process::sandbox::{self, Layout, Sandbox};

/// `events`, with `--notify`'s command started for every event that calls for a person, in
/// `sandbox`, in the epic worktree.
fn notifying(
    config: &RunConfig,
    epic: &str,
    epic_worktree: &Path,
    sandbox: &Sandbox,
    events: EventSink,
) -> EventSink {
    match &config.notify {
        Some(command) => epic_events::notifying(
            epic_events::Notify {
                command: command.clone(),
                epic: epic.to_owned(),
                cwd: epic_worktree.to_path_buf(),
                sandbox: sandbox.clone(),
                timeout: config.hook_timeout,
                rosters: std::iter::once(&config.coder)
                    .chain(config.judge.as_ref())
                    .chain(&config.reviewers)
                    .chain(config.verifier.as_ref())
                    .map(|roster| roster.names().into_iter().map(str::to_owned).collect())
                    .collect(),
            },
            events,
        ),
        None => events,
    }
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

/// Ends what a dead run of the epic left running in its worktrees (a gate, a setup command or an
/// agent of a run killed with SIGKILL without the sandbox), saying so in a run note.
pub(super) async fn end_leftovers(worktree_root: &Path, events: &EventSink) {
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
/// judge, the reviewers, the verifier, every seat of each roster; fails with every seat that
/// cannot run.
pub(super) async fn check_seats(config: &RunConfig, dir: &Path) -> Result<(), RunError> {
    Ok(epic_agents::check_seats(config.seats(), dir).await?)
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
    let events = epic_events::logging_sink(open_log(&dir).await?, events);
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
        seats: config.seats().map(|seat| seat.name().to_owned()).collect(),
    });
    end_leftovers(&worktree_root, &events).await;
    let sandbox = start_sandbox(git, sandbox, &events).await?;
    let events = notifying(config, epic, &epic_worktree, &sandbox, events);

    let cleared = {
        let (common, worktree, branch) = (
            git.common_dir().to_path_buf(),
            epic_worktree.clone(),
            epic_branch.clone(),
        );
        // The notes ref too: a run killed while it moved it would leave every later
        // attestation unwritten.
        offload::blocking(move || {
            let mut cleared = epic_git_ops::clear_stale_locks(&common, &worktree, &branch);
            cleared.extend(epic_git_ops::clear_stale_ref_locks(&common, &[NOTES_REF]));
            cleared
        })
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
pub(super) async fn start_sandbox(
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
pub(super) async fn check_symlinked_paths(
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
pub(super) async fn record_proven(dir: &EpicDir, head: CommitId) -> Result<(), RunError> {
    ProvenHead::record(dir, head, None)
        .await
        .map_err(|source| RunError::State {
            action: "record the proven epic head".to_owned(),
            source,
        })
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
        if let Some(event) = result.flaky_event(None) {
            sink(event);
        }
        if let Some(event) = result.tests_event(None) {
            sink(event);
        }
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
            .map(|(result, _)| GateVerdict::of(result))
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
