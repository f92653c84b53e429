//! Seat preflight through the real binary: a preset seat whose program is missing or not logged
//! in stops the run before anything starts (exit 2, the seat, what its CLI said, the fix), and
//! `--no-preflight` skips the check. The stand-ins answer the status commands as the real CLIs
//! do offline (as the agent CLIs document them): `claude auth status` prints its JSON with
//! `"loggedIn": false` and exits 1, `codex login status` prints `Not logged in` and exits 1.

use std::os::unix::fs::PermissionsExt as _;
use std::path::PathBuf;

use crate::util::{Repo, file_plan};

/// A directory `name` of the tools a run needs (`sh`, `git`, …) and of stand-ins written by the test;
/// no agent CLI of the machine is on it.
fn bin_with(repo: &Repo, name: &str, stand_ins: &[(&str, &str)]) -> PathBuf {
    let bin = repo.temp().join(name);
    std::fs::create_dir_all(&bin).expect("bin dir");
    for tool in [
        "sh", "git", "cat", "env", "mkdir", "rm", "test", "echo", "touch",
    ] {
        let found = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|dir| dir.join(tool))
            .find(|path| path.is_file());
        if let Some(found) = found {
            std::os::unix::fs::symlink(found, bin.join(tool)).expect("link a tool");
        }
    }
    for (name, body) in stand_ins {
        let path = bin.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}")).expect("write a stand-in");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    bin
}

/// `epic run plan.json ARGS` with `PATH` set to `bin`: its exit code and standard error.
fn run(repo: &Repo, bin: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let mut all = vec!["run", "plan.json", "--no-progress", "--sandbox", "off"];
    all.extend_from_slice(args);
    let output = repo
        .command(&all)
        .env("PATH", bin)
        .output()
        .expect("run epic");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A `claude` that is not logged in: its status says so, and a turn fails as the real one does.
const CLAUDE_LOGGED_OUT: &str = r#"if [ "$1 $2" = "auth status" ]; then
  printf '{\n  "loggedIn": false,\n  "authMethod": "none",\n  "apiProvider": "firstParty"\n}\n'
  exit 1
fi
touch "$MARKER"
echo '{"type":"result","subtype":"success","is_error":true,"result":"Not logged in · Please run /login"}'
exit 1
"#;

#[test]
fn a_logged_out_seat_stops_the_run_before_anything_starts() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let bin = bin_with(&repo, "bin", &[("claude", CLAUDE_LOGGED_OUT)]);
    let (code, stderr) = run(&repo, &bin, &["--coder", "claude"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("the seat `claude` cannot run: it is not logged in (`claude auth status`)")
            && stderr.contains("\"loggedIn\": false")
            && stderr.contains("run `claude`, then `/login` in it")
            && stderr.contains("--no-preflight"),
        "{stderr}"
    );
    assert!(
        !repo.temp().join("shop.worktrees").exists(),
        "no worktree was made"
    );
}

#[test]
fn no_preflight_skips_the_check() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let bin = bin_with(&repo, "bin", &[("claude", CLAUDE_LOGGED_OUT)]);
    let marker = repo.temp().join("a-turn-ran");
    let output = repo
        .command(&[
            "run",
            "plan.json",
            "--no-progress",
            "--sandbox",
            "off",
            "--coder",
            "claude",
            "--no-preflight",
        ])
        .env("PATH", &bin)
        .env("MARKER", &marker)
        .output()
        .expect("run epic");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(marker.exists(), "the turn ran: {stderr}");
    assert!(!stderr.contains("cannot run"), "{stderr}");
}

#[test]
fn a_missing_program_and_a_logged_out_judge_name_their_seat() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    // No codex at all: the coder's check says what installs it.
    let bin = bin_with(&repo, "bare", &[]);
    let (code, stderr) = run(&repo, &bin, &["--coder", "codex"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr
            .contains("the seat `codex` cannot run: `codex` is not installed (not found on PATH)")
            && stderr.contains("npm install -g @openai/codex"),
        "{stderr}"
    );
    // A script coder needs no check; a logged-out codex judge does.
    let bin = bin_with(
        &repo,
        "logged-out",
        &[(
            "codex",
            "if [ \"$1 $2\" = \"login status\" ]; then echo 'Not logged in' >&2; exit 1; fi\nexit 9\n",
        )],
    );
    let (code, stderr) = run(&repo, &bin, &["--coder", "script", "--judge", "codex"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("the seat `codex` cannot run: it is not logged in (`codex login status`); it said: Not logged in")
            && stderr.contains("codex login"),
        "{stderr}"
    );
}
