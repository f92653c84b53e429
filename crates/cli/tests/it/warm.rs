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

/// The steps of a switch a kill lands on.
const STEPS: [&str; 4] = [
    "before-checkout",
    "after-checkout",
    "before-clean",
    "after-clean",
];

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

/// Writes `<dir>/git`: the real git, except that the first switch's `step` touches `mark` and
/// sleeps (until the test kills it).
fn wrapper(dir: &Path, step: &str, mark: &Path) {
    std::fs::create_dir_all(dir).expect("bin");
    let (git, mark) = (real_git().display().to_string(), mark.display().to_string());
    let script = format!(
        r#"#!/bin/sh
case " $* " in
*" checkout --force "*) step=checkout ;;
*" clean -f -f -d "*) step=clean ;;
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
                start.elapsed() < Duration::from_secs(120),
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
