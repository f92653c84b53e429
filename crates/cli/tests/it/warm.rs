//! SIGKILL around and inside a slot worktree's switch (`--worktrees warm`): a `git` wrapper on
//! `PATH` stops the run at the switch's one git process (`update-ref --stdin`, which sets the
//! branch and attaches the head once the files and the index were moved in process), before it
//! and after it, for the second story's switch and the third's; the test kills the run's whole
//! process group there, and a rerun must merge every story, with the slot proven clean and
//! nothing of a half-done switch on the epic branch. A story's other steps run no git process
//! (commits, merges and notes are written in process); what a kill inside the in-process move
//! leaves, git-ops' `switch` tests rebuild state by state, and the crash harness (`crash.rs`)
//! kills runs at seeded points counted in their events.

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::util::{RUN_PATIENCE, Repo, file_plan, wait_for};

/// Where a kill lands: `<before|after>-<command>-<nth call of it in the run>`.
const STEPS: [&str; 4] = [
    "before-switch-1",
    "after-switch-1",
    "before-switch-2",
    "after-switch-2",
];

/// `epic run plan.json` with the script seat, one story at a time, quietly.
const ONE_AT_A_TIME: [&str; 8] = [
    "run",
    "plan.json",
    "--coder",
    "script",
    "--concurrency",
    "1",
    "--no-progress",
    "-q",
];

/// `PATH` with `bin` first: its `git` wrapper before the real one.
fn path_first(bin: PathBuf) -> std::ffi::OsString {
    std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH")
}

/// The real `git`, found on `PATH`.
fn real_git() -> PathBuf {
    std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|dir| dir.join("git"))
        .find(|git| git.is_file())
        .expect("git on PATH")
}

/// Writes `<dir>/git`: the real git, except that at `step` (see [`STEPS`]) it touches `mark`
/// and sleeps until killed.
fn wrapper(dir: &Path, step: &str, mark: &Path) {
    std::fs::create_dir_all(dir).expect("bin");
    let (git, mark) = (real_git().display().to_string(), mark.display().to_string());
    let script = format!(
        r#"#!/bin/sh
case " $* " in
*" update-ref "*" --stdin "*) step=switch ;;
*) exec '{git}' "$@" ;;
esac
n=$(( $(cat '{mark}.'$step 2>/dev/null || echo 0) + 1 ))
echo $n > '{mark}.'$step
if [ ! -e '{mark}' ] && [ "before-$step-$n" = '{step}' ]; then touch '{mark}'; sleep 600; fi
'{git}' "$@"
rc=$?
if [ ! -e '{mark}' ] && [ "after-$step-$n" = '{step}' ]; then touch '{mark}'; sleep 600; fi
exit $rc
"#
    );
    let path = dir.join("git");
    epic_test_support::executable(&path, &script);
}

fn kill_group(pid: u32) {
    // A failure means the group is gone already.
    std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pid}")])
        .stderr(Stdio::null())
        .status()
        .expect("run kill");
}

#[test]
fn sigkill_at_each_step_of_a_switch_and_a_rerun_lose_nothing() {
    for step in STEPS {
        let repo = Repo::new();
        repo.write(
            "plan.json",
            file_plan(&[("a", &[], "A"), ("b", &["a"], "B"), ("c", &["b"], "C")]),
        );
        let args = ONE_AT_A_TIME;
        let (bin, mark) = (repo.temp().join("bin"), repo.temp().join("stopped"));
        wrapper(&bin, step, &mark);
        let path = path_first(bin);
        let mut child = repo
            .command(&args)
            .env("PATH", path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("spawn epic run");
        wait_for(&format!("{step}: a switch"), RUN_PATIENCE, || {
            if mark.exists() {
                return Some(());
            }
            assert!(
                child.try_wait().expect("poll").is_none(),
                "{step}: the run ended before its first switch"
            );
            None
        });
        kill_group(child.id());
        child.wait().expect("killed");

        let rerun = repo.run(&args);
        rerun.assert_code(0);
        for (id, text) in [("a", "A"), ("b", "B"), ("c", "C")] {
            assert_eq!(
                repo.git_output(&["show", &format!("epic/shop:{id}/{id}.txt")]),
                format!("{text}\n"),
                "{step}"
            );
        }
        let merges = repo.git_output(&["log", "--first-parent", "--format=%s", "epic/shop"]);
        assert_eq!(
            merges
                .lines()
                .filter(|line| line.contains("merge story"))
                .count(),
            3,
            "{step}: {merges}"
        );
        let slot = repo.temp().join("shop.worktrees/shop/_slot-0");
        let status = std::process::Command::new("git")
            .args(["status", "--porcelain"])
            .current_dir(&slot)
            .output()
            .expect("status");
        assert!(
            status.status.success() && status.stdout.is_empty(),
            "{step}: the slot is clean"
        );
        let list = repo.git_output(&["worktree", "list", "--porcelain"]);
        assert!(!list.contains("prunable"), "{step}: {list}");
        assert_eq!(
            list.matches("worktree ").count(),
            3,
            "{step}: main, _epic, _slot-0: {list}"
        );
    }
}

/// Writes `<dir>/git`: the real git, logging each command line to `log` first.
fn logging_wrapper(dir: &Path, log: &Path) {
    std::fs::create_dir_all(dir).expect("bin");
    let (git, log) = (real_git().display().to_string(), log.display().to_string());
    let path = dir.join("git");
    epic_test_support::script(
        &path,
        &format!("echo \"$*\" >> '{log}'\nexec '{git}' \"$@\"\n"),
    );
}

/// A plan of `stories` independent stories `s0`, `s1`, …, each writing its one file.
fn independent_plan(stories: usize) -> String {
    let ids: Vec<String> = (0..stories).map(|i| format!("s{i}")).collect();
    let plan: Vec<(&str, &[&str], &str)> =
        ids.iter().map(|id| (id.as_str(), &[][..], "x")).collect();
    file_plan(&plan)
}

/// The git processes a run of `stories` stories (the script seat, one at a time) starts, each
/// command line without the options every call carries.
fn git_processes(mode: &str, stories: usize, author: Option<&str>) -> Vec<String> {
    let repo = Repo::new();
    repo.write("plan.json", independent_plan(stories));
    let (bin, log) = (repo.temp().join("bin"), repo.temp().join("git.log"));
    logging_wrapper(&bin, &log);
    let path = path_first(bin);
    let mut command = repo.command(&[&ONE_AT_A_TIME[..], &["--worktrees", mode]].concat());
    // The identity from the configuration alone, unless the test names an author (CI, for one,
    // sets these variables for the tests' own commits).
    for variable in epic_git_ops::IDENTITY_VARIABLES {
        command.env_remove(variable);
    }
    if let Some(author) = author {
        command.env("GIT_AUTHOR_NAME", author);
    }
    let status = command
        .env("PATH", path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run");
    assert!(status.success(), "{mode}");
    std::fs::read_to_string(&log)
        .expect("log")
        .lines()
        .map(|line| {
            line.replace(
                "-c core.hooksPath=/dev/null -c maintenance.auto=false -c gc.auto=0 ",
                "",
            )
            // Carried in every linked worktree.
            .replace("-c index.skipHash=true ", "")
        })
        .collect()
}

/// The git processes of a story: warm, one (the switch's `update-ref --stdin`, which sets the
/// branch and attaches the head once gix moved the slot's files and index to the epic head; the
/// first story adds its slot instead). Everything else is in process: the commit (gix stages
/// its paths, writes its tree and commit, and moves the branch), the merge (gix writes the
/// merge commit, brings the epic worktree to it and moves the epic branch), the attestation
/// note (gix edits the notes tree). No whole-tree `git checkout` or `git clean` when the slot
/// is clean. Fresh, two (a whole checkout to add the worktree, a whole tree to delete with it).
/// Beside them, six for the run (the pinned configuration read twice, the epic branch, a prune,
/// a list, the epic's worktree). With an author named in the environment, six a story warm:
/// git writes the commit and the merge objects, moves both branches and adds the note.
#[test]
fn a_story_costs_one_git_process_warm_and_two_fresh() {
    const STORIES: usize = 4;
    let count =
        |lines: &[String], head: &str| lines.iter().filter(|line| line.starts_with(head)).count();
    let warm = git_processes("warm", STORIES, None);
    assert_eq!(warm.len(), 6 + STORIES, "{warm:#?}");
    assert_eq!(
        count(&warm, "update-ref --no-deref -m epic: switch"),
        STORIES - 1,
        "{warm:#?}"
    );
    assert_eq!(count(&warm, "worktree add"), 2, "{warm:#?}");
    let fresh = git_processes("fresh", STORIES, None);
    assert_eq!(fresh.len(), 6 + 2 * STORIES, "{fresh:#?}");
    assert_eq!(count(&fresh, "worktree add"), 1 + STORIES, "{fresh:#?}");
    assert_eq!(count(&fresh, "worktree remove"), STORIES, "{fresh:#?}");
    // An author named in the environment: git writes the commits and merges, as it reads it,
    // moves the branches and adds the notes.
    let named = git_processes("warm", STORIES, Some("Named Author"));
    assert_eq!(count(&named, "commit-tree"), 2 * STORIES, "{named:#?}");
    assert_eq!(
        count(&named, "update-ref -m commit: "),
        STORIES,
        "{named:#?}"
    );
    assert_eq!(
        count(&named, "update-ref -m shop: merge story "),
        STORIES,
        "{named:#?}"
    );
    assert_eq!(count(&named, "notes"), STORIES, "{named:#?}");
    assert_eq!(named.len(), 6 + 6 * STORIES, "{named:#?}");
}

/// Seven stories one after the other in one slot, six switches, then a rerun: every story
/// branch still names its own commit (a switch attaches the slot's head to the new branch, never
/// makes the branch it leaves a link to the new one: a chain of such links fails every later
/// read of the first branch), and the rerun, which reads them all, finds the epic done.
#[test]
fn switch_after_switch_every_story_branch_keeps_its_own_commit() {
    let repo = Repo::new();
    repo.write("plan.json", independent_plan(7));
    repo.run(&ONE_AT_A_TIME).assert_code(0);
    let links = repo.git_output(&[
        "for-each-ref",
        "--format=%(refname) %(symref)",
        "refs/heads/story/",
    ]);
    assert_eq!(links.lines().count(), 7, "{links}");
    for line in links.lines() {
        assert!(line.ends_with(' '), "a story branch became a link: {line}");
    }
    repo.run(&ONE_AT_A_TIME).assert_code(0);
}
