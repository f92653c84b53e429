//! `--sandbox` through the real binary, on a machine without `bwrap` (a `PATH` holding the
//! tools a run needs but not it): `on` refuses to run (exit 2, before anything starts, saying
//! what to install), `auto` runs unsandboxed and says so once.

use std::path::{Path, PathBuf};

use crate::util::{Repo, file_plan};

/// A directory of links to the programs a run with the script seat needs (`sh` for gates,
/// `git`), and none to `bwrap`: a `PATH` of a machine without bubblewrap.
fn path_without_bwrap(repo: &Repo) -> PathBuf {
    let bin = repo.temp().join("bin-without-bwrap");
    std::fs::create_dir_all(&bin).expect("bin dir");
    for tool in ["sh", "git", "cat", "env", "mkdir", "rm", "test"] {
        let found = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|dir| dir.join(tool))
            .find(|path| path.is_file());
        if let Some(found) = found {
            std::os::unix::fs::symlink(found, bin.join(tool)).expect("link a tool");
        }
    }
    assert!(!bin.join("bwrap").exists());
    bin
}

fn run(repo: &Repo, path: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let mut args = vec!["run", "plan.json", "--coder", "script", "--no-progress"];
    args.extend_from_slice(extra);
    let output = repo
        .command(&args)
        .env("PATH", path)
        .output()
        .expect("run epic");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn sandbox_on_without_bwrap_is_exit_2_before_anything_starts() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let path = path_without_bwrap(&repo);
    let (code, stderr) = run(&repo, &path, &["--sandbox", "on"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("`bwrap` is not installed")
            && stderr.contains("apt-get install bubblewrap"),
        "{stderr}"
    );
    assert!(
        !repo.temp().join("shop.worktrees").exists(),
        "no worktree was made"
    );
    assert!(
        !repo
            .common_dir()
            .join("epic")
            .join("shop")
            .join("events.jsonl")
            .exists(),
        "no run started"
    );
}

#[test]
fn sandbox_auto_without_bwrap_runs_and_says_so_once() {
    let repo = Repo::new();
    repo.write(
        "plan.json",
        file_plan(&[("a", &[], "alpha"), ("b", &[], "beta")]),
    );
    let path = path_without_bwrap(&repo);
    let (code, stderr) = run(&repo, &path, &["--sandbox", "auto", "--gate", "true"]);
    assert_eq!(code, Some(0), "{stderr}");
    let warning = "run without the sandbox: `bwrap` is not installed";
    assert_eq!(stderr.matches(warning).count(), 1, "{stderr}");
    assert!(stderr.contains("apt-get install bubblewrap"), "{stderr}");
    let events = std::fs::read_to_string(
        repo.common_dir()
            .join("epic")
            .join("shop")
            .join("events.jsonl"),
    )
    .expect("events");
    assert_eq!(events.matches(warning).count(), 1, "{events}");
}
