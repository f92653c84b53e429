//! SIGKILL inside a slot worktree's switch (`--worktrees warm`): a `git` wrapper on `PATH` stops
//! the run at one step of the first switch (before its checkout, after it, after its clean),
//! the test kills the run's whole process group there, and a rerun must merge every story, with
//! the slot proven clean and nothing of a half-done switch on the epic branch.

use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::util::{Repo, file_plan};

/// The steps of a switch a kill lands on: its checkout, and the first git process after it
/// (the story's first commit: the switch's proof, in process, and the state saved came between;
/// a clean slot needs no `git clean`, `executor`'s `warm` tests hold the dirty one).
const STEPS: [&str; 3] = ["before-checkout", "after-checkout", "before-update-index"];

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

/// Writes `<dir>/git`: the real git, except that at `step` of the first switch (or, for
/// `update-index`, the first commit after a switch) it touches `mark` and sleeps until killed.
fn wrapper(dir: &Path, step: &str, mark: &Path) {
    std::fs::create_dir_all(dir).expect("bin");
    let (git, mark) = (real_git().display().to_string(), mark.display().to_string());
    let script = format!(
        r#"#!/bin/sh
case " $* " in
*" checkout --force "*) step=checkout; touch '{mark}.switched' ;;
*" clean -f -f -d "*) step=clean ;;
*" update-index "*) step=update-index; [ -e '{mark}.switched' ] || exec '{git}' "$@" ;;
*) exec '{git}' "$@" ;;
esac
if [ ! -e '{mark}' ] && [ "before-$step" = '{step}' ]; then touch '{mark}'; sleep 600; fi
'{git}' "$@"
rc=$?
if [ ! -e '{mark}' ] && [ "after-$step" = '{step}' ]; then touch '{mark}'; sleep 600; fi
exit $rc
"#
    );
    let path = dir.join("git");
    std::fs::write(&path, script).expect("wrapper");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
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
        let args = [
            "run",
            "plan.json",
            "--coder",
            "script",
            "--concurrency",
            "1",
            "--no-progress",
            "-q",
        ];
        let (bin, mark) = (repo.temp().join("bin"), repo.temp().join("stopped"));
        wrapper(&bin, step, &mark);
        let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )))
        .expect("PATH");
        let mut child = repo
            .command(&args)
            .env("PATH", path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("spawn epic run");
        let start = Instant::now();
        while !mark.exists() {
            assert!(
                child.try_wait().expect("poll").is_none(),
                "{step}: the run ended before its first switch"
            );
            assert!(
                start.elapsed() < Duration::from_mins(2),
                "{step}: no switch"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
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
    std::fs::write(
        &path,
        format!("#!/bin/sh\necho \"$*\" >> '{log}'\nexec '{git}' \"$@\"\n"),
    )
    .expect("wrapper");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// The git processes a run of `stories` stories (the script seat, one at a time) starts, each
/// command line without the options every call carries.
fn git_processes(mode: &str, stories: usize) -> Vec<String> {
    let repo = Repo::new();
    let plan: Vec<(String, Vec<&str>, &str)> = (0..stories)
        .map(|i| (format!("s{i}"), Vec::new(), "x"))
        .collect();
    let plan: Vec<(&str, &[&str], &str)> = plan
        .iter()
        .map(|(id, deps, text)| (id.as_str(), deps.as_slice(), *text))
        .collect();
    repo.write("plan.json", file_plan(&plan));
    let (bin, log) = (repo.temp().join("bin"), repo.temp().join("git.log"));
    logging_wrapper(&bin, &log);
    let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    let status = repo
        .command(&[
            "run",
            "plan.json",
            "--coder",
            "script",
            "--concurrency",
            "1",
            "--worktrees",
            mode,
            "--no-progress",
            "-q",
        ])
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

/// The git processes of a story: warm, nine (the switch's `checkout`, the commit's four plumbing
/// commands, the merge's three — `commit-tree`, `read-tree -m -u` of what differs, `update-ref`,
/// cheaper together than a `git merge` that refreshes every file of the epic worktree's index —
/// and the merge's attestation note) and no whole-tree `git clean` when the slot is clean; fresh,
/// ten (a whole checkout to add the worktree, a whole tree to delete with it).
/// Beside them, six for the run (the pinned configuration read twice, the epic branch, a prune, a
/// list, the epic's worktree); the first story adds its slot instead of switching it.
#[test]
fn a_story_costs_nine_git_processes_warm_and_ten_fresh() {
    const STORIES: usize = 4;
    let count =
        |lines: &[String], head: &str| lines.iter().filter(|line| line.starts_with(head)).count();
    let warm = git_processes("warm", STORIES);
    assert_eq!(warm.len(), 6 + 9 * STORIES, "{warm:#?}");
    assert_eq!(count(&warm, "merge"), 0, "{warm:#?}");
    assert_eq!(count(&warm, "read-tree -m -u"), STORIES, "{warm:#?}");
    assert_eq!(count(&warm, "notes"), STORIES, "{warm:#?}");
    assert_eq!(count(&warm, "checkout --force"), STORIES - 1, "{warm:#?}");
    assert_eq!(count(&warm, "clean"), 0, "{warm:#?}");
    assert_eq!(count(&warm, "worktree add"), 2, "{warm:#?}");
    assert_eq!(count(&warm, "worktree remove"), 0, "{warm:#?}");
    let fresh = git_processes("fresh", STORIES);
    assert_eq!(fresh.len(), 6 + 10 * STORIES, "{fresh:#?}");
    assert_eq!(count(&fresh, "worktree add"), 1 + STORIES, "{fresh:#?}");
    assert_eq!(count(&fresh, "worktree remove"), STORIES, "{fresh:#?}");
}
