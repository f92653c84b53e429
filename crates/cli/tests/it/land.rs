//! `epic land`: a finished epic landed on its target, on real repositories, with the script seat
//! for the run and shell-script landers (`exec:`) that resolve conflicts and fix gates.

use std::path::{Path, PathBuf};

use crate::util::{Repo, file_plan};

/// Runs the epic of `file_plan(a, b)` with the script seat; every story merges.
fn run_epic(repo: &Repo, gate: &str) {
    repo.write(
        "plan.json",
        file_plan(&[("a", &[], "alpha"), ("b", &[], "beta")]),
    );
    repo.git(&["add", "plan.json"]);
    commit(repo, "the plan");
    repo.run(&[
        "run",
        "plan.json",
        "--coder",
        "script",
        "--concurrency",
        "1",
        "--no-progress",
        "--gate",
        gate,
    ])
    .assert_code(0);
}

fn commit(repo: &Repo, message: &str) {
    repo.git(&[
        "-c",
        "user.name=Test",
        "-c",
        "user.email=test@example.com",
        "-c",
        "commit.gpgsign=false",
        "commit",
        "--quiet",
        "-m",
        message,
    ]);
}

/// Commits `contents` at `path` on `main`, the checked-out branch of the main checkout.
fn commit_on_main(repo: &Repo, path: &str, contents: &str) {
    repo.write(path, contents);
    repo.git(&["add", path]);
    commit(repo, &format!("main: {path}"));
}

fn rev(repo: &Repo, name: &str) -> String {
    repo.git_output(&["rev-parse", name]).trim().to_owned()
}

/// An executable lander script in the temporary directory (outside the repository): `body`
/// runs after the prompt is read from stdin.
fn lander(repo: &Repo, name: &str, body: &str) -> PathBuf {
    let path = repo.temp().join(name);
    epic_test_support::script(&path, &format!("cat > /dev/null\n{body}\n"));
    path
}

fn exec(path: &Path) -> String {
    format!("exec:{}", path.display())
}

fn landing_subjects(repo: &Repo) -> Vec<String> {
    repo.git_output(&["log", "--first-parent", "--format=%s", "main"])
        .lines()
        .filter(|line| line.contains("land epic/shop"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_target_that_moved_cleanly_lands_by_one_merge_commit() {
    let repo = Repo::new();
    run_epic(&repo, "true");
    commit_on_main(&repo, "main.txt", "main moved\n");
    let before = rev(&repo, "main");

    let land = repo.run(&["land", "--no-progress"]);
    land.assert_code(0);
    assert!(land.stdout.contains("landed on `main`"), "{land}");

    // One merge commit on main: first parent the old main, the epic's work in its tree.
    assert_eq!(landing_subjects(&repo), ["shop: land epic/shop"]);
    assert_eq!(rev(&repo, "main^1"), before);
    assert_eq!(repo.git_output(&["show", "main:a/a.txt"]), "alpha\n");
    assert_eq!(repo.git_output(&["show", "main:main.txt"]), "main moved\n");
    // The checkout followed, as `git merge --ff-only` would.
    assert_eq!(repo.read("b/b.txt"), "beta\n");
    assert_eq!(repo.git_output(&["status", "--porcelain"]), "");
    // Worktrees and the story branches the target holds are gone; the epic branch stays.
    assert!(!repo.temp().join("shop.worktrees/shop/_epic").exists());
    assert_eq!(repo.git_output(&["branch", "--list", "story/*"]), "");
    assert!(
        !repo
            .git_output(&["branch", "--list", "epic/shop"])
            .is_empty()
    );
    // The report and the status say so.
    let report = repo.run(&["report", "--format", "json"]).json();
    assert_eq!(report["landing"]["target"], "main");
    assert_eq!(
        report["landing"]["commit"].as_str(),
        Some(rev(&repo, "main").as_str())
    );
    let status = repo.run(&["status"]);
    assert!(status.stdout.contains("landed on `main`"), "{status}");
    let status = repo.run(&["status", "--format", "json"]).json();
    assert_eq!(status["landed"]["target"], "main");

    // A second landing says so and changes nothing.
    let again = repo.run(&["land", "--no-progress"]);
    again.assert_code(0);
    assert!(again.stdout.contains("already landed"), "{again}");
    assert_eq!(landing_subjects(&repo).len(), 1);

    // A run after the landing (nothing left to do) keeps the landing in the report.
    repo.run(&["run", "plan.json", "--no-progress"])
        .assert_code(0);
    let report = repo.run(&["report", "--format", "json"]).json();
    assert_eq!(report["landing"]["target"], "main");
}

#[test]
fn a_conflict_in_an_owned_file_goes_to_the_owning_storys_turn() {
    let repo = Repo::new();
    run_epic(&repo, "true");
    commit_on_main(&repo, "a/a.txt", "main's alpha\n");
    let script = lander(
        &repo,
        "lander.sh",
        "test \"$EPIC_ROLE\" = lander || exit 1\n\
         if test -n \"$EPIC_STORY\"; then printf 'resolved by %s\\n' \"$EPIC_STORY\" > a/a.txt; fi",
    );

    let land = repo.run(&["land", "--no-progress", "--coder", &exec(&script)]);
    land.assert_code(0);
    assert!(
        land.stdout.contains("a/a.txt resolved by story a"),
        "{land}"
    );
    assert_eq!(
        repo.git_output(&["show", "main:a/a.txt"]),
        "resolved by a\n"
    );
    assert_eq!(landing_subjects(&repo).len(), 1);
    let report = repo.run(&["report", "--format", "json"]).json();
    assert_eq!(report["landing"]["conflicts"][0]["path"], "a/a.txt");
    assert_eq!(report["landing"]["conflicts"][0]["story"], "a");
}

#[test]
fn a_conflict_nobody_resolves_is_rolled_back_and_the_target_untouched() {
    let repo = Repo::new();
    run_epic(&repo, "true");
    commit_on_main(&repo, "a/a.txt", "main's alpha\n");
    let (main, epic) = (rev(&repo, "main"), rev(&repo, "epic/shop"));
    let script = lander(&repo, "idle.sh", "true");

    let land = repo.run(&["land", "--no-progress", "--coder", &exec(&script)]);
    land.assert_code(1);
    assert!(land.stderr.contains("not landed"), "{land}");
    assert!(land.stderr.contains("a/a.txt"), "{land}");
    assert_eq!(rev(&repo, "main"), main);
    assert_eq!(rev(&repo, "epic/shop"), epic);
    let epic_worktree = repo.temp().join("shop.worktrees/shop/_epic");
    let status = std::process::Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(&epic_worktree)
        .output()
        .expect("git status");
    assert_eq!(String::from_utf8_lossy(&status.stdout), "");
    assert!(!repo.common_dir().join("epic/shop/landing.json").exists());
}

/// The lander is checked as a run's seats are, once a conflict needs it: a Claude Code that is
/// not logged in stops the landing with the fix (exit 2), the epic branch put back and the target
/// untouched; with `--no-preflight` its turn says so, and the landing stops the same way.
#[test]
fn a_lander_that_cannot_run_stops_the_landing_with_the_fix() {
    let repo = Repo::new();
    run_epic(&repo, "true");
    commit_on_main(&repo, "a/a.txt", "main's alpha\n");
    let (main, epic) = (rev(&repo, "main"), rev(&repo, "epic/shop"));
    let bin = repo.temp().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let marker = repo.temp().join("a-turn-ran");
    epic_test_support::script(
        &bin.join("claude"),
        &format!(
            "if [ \"$1 $2\" = \"auth status\" ]; then echo '{{\"loggedIn\": false}}'; exit 1; fi\n\
             touch '{}'\necho 'Not logged in' >&2\nexit 1\n",
            marker.display()
        ),
    );
    let mut paths = vec![bin];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let land = |extra: &[&str]| {
        let mut args = vec!["land", "--no-progress", "--coder", "claude"];
        args.extend_from_slice(extra);
        let mut command = repo.command(&args);
        command.env("PATH", std::env::join_paths(&paths).expect("a PATH"));
        for key in [
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "CLAUDE_CODE_USE_BEDROCK",
            "CLAUDE_CODE_USE_VERTEX",
            "CLAUDE_CODE_USE_FOUNDRY",
        ] {
            command.env_remove(key);
        }
        crate::util::Run::of(command.output().expect("run epic land"))
    };
    let refused = land(&[]);
    refused.assert_code(2);
    assert!(
        refused
            .stderr
            .contains("the seat `claude` cannot run: it is not logged in")
            && refused.stderr.contains("the target is untouched")
            && refused.stderr.contains("--no-preflight"),
        "{refused}"
    );
    assert!(!marker.exists(), "no lander turn ran");
    assert_eq!(rev(&repo, "main"), main);
    assert_eq!(rev(&repo, "epic/shop"), epic);
    assert!(!repo.common_dir().join("epic/shop/landing.json").exists());

    // Unchecked, the turn runs and says it is not logged in: the same exit and fix, not an
    // interruption.
    let unchecked = land(&["--no-preflight"]);
    unchecked.assert_code(2);
    assert!(marker.exists(), "the turn ran: {unchecked}");
    assert!(
        unchecked.stderr.contains("`claude` is not logged in")
            && unchecked.stderr.contains("/login")
            && !unchecked.stderr.contains("interrupted"),
        "{unchecked}"
    );
    assert_eq!(rev(&repo, "main"), main);
    assert_eq!(rev(&repo, "epic/shop"), epic);
}

#[test]
fn red_gates_after_the_merge_are_fixed_in_a_round() {
    let repo = Repo::new();
    // The fix lies in a story's owned paths: a red-gate round may change nothing else.
    let gate = "test ! -f main.txt || test -f a/ok.txt";
    run_epic(&repo, gate);
    commit_on_main(&repo, "main.txt", "main moved\n");
    let script = lander(&repo, "fixer.sh", "touch a/ok.txt");

    let land = repo.run(&["land", "--no-progress", "--coder", &exec(&script)]);
    land.assert_code(0);
    assert!(
        land.stdout.contains("gate rounds after the merge: 1"),
        "{land}"
    );
    repo.git_output(&["show", "main:a/ok.txt"]);
    let report = repo.run(&["report", "--format", "json"]).json();
    assert_eq!(report["landing"]["rounds"], 1);
    assert!(report["landing"].get("put_back").is_none(), "{report}");
    // The landing's own commits on the epic branch, the merge of the target and the fix, are
    // attested like the stories' merges: the whole branch still verifies.
    let verify = repo.run(&["verify", "--format", "json"]);
    verify.assert_code(0);
    let kinds: Vec<String> = verify.json()["commits"]
        .as_array()
        .expect("commits")
        .iter()
        .map(|commit| commit["kind"].as_str().unwrap_or("none").to_owned())
        .collect();
    assert_eq!(kinds, ["story", "story", "landing", "landing"]);
}

#[test]
fn a_commit_made_by_hand_on_the_epic_branch_is_refused_unless_allowed_and_then_named() {
    let repo = Repo::new();
    run_epic(&repo, "true");
    let epic = repo.temp().join("shop.worktrees/shop/_epic");
    std::fs::write(epic.join("hand.txt"), "by hand\n").expect("write");
    let epic = epic.display().to_string();
    repo.git(&["-C", &epic, "add", "hand.txt"]);
    repo.git(&[
        "-C",
        &epic,
        "-c",
        "user.name=Test",
        "-c",
        "user.email=test@example.com",
        "commit",
        "--quiet",
        "-m",
        "a change by hand",
    ]);
    let hand = rev(&repo, "epic/shop");
    let before = rev(&repo, "main");

    let land = repo.run(&["land", "--no-progress"]);
    land.assert_code(1);
    assert!(land.stderr.contains(&hand[..12]), "{land}");
    assert!(land.stderr.contains("a change by hand"), "{land}");
    assert_eq!(rev(&repo, "main"), before, "the target is untouched");
    let dry = repo.run(&["land", "--dry-run", "--no-progress"]);
    dry.assert_code(0);
    assert!(dry.stdout.contains(&hand[..12]), "{dry}");

    let land = repo.run(&["land", "--no-progress", "--allow-unattested"]);
    land.assert_code(0);
    let message = repo.git_output(&["log", "-1", "--format=%B", "main"]);
    assert!(
        message.contains("Landed without attestation:") && message.contains(&hand[..12]),
        "{message}"
    );
}

#[test]
fn a_target_that_moves_during_the_landing_is_merged_again() {
    let repo = Repo::new();
    let gate = "test ! -f main.txt || test -f a/ok.txt";
    run_epic(&repo, gate);
    commit_on_main(&repo, "main.txt", "main moved\n");
    // The fix turn also moves main, once: the compare-and-swap must see it.
    let root = repo.path().display().to_string();
    let script = lander(
        &repo,
        "mover.sh",
        &format!(
            "touch a/ok.txt\n\
             if ! git -C '{root}' log --format=%s main | grep -q '^moved$'; then\n\
               echo stray > STRAY.txt\n\
               c=$(git -C '{root}' -c user.name=T -c user.email=t@e commit-tree 'main^{{tree}}' -p main -m moved)\n\
               git -C '{root}' update-ref refs/heads/main \"$c\"\n\
             fi"
        ),
    );

    let land = repo.run(&[
        "land",
        "--no-progress",
        "--sandbox",
        "off",
        "--coder",
        &exec(&script),
    ]);
    land.assert_code(0);
    assert!(land.stderr.contains("moved during the landing"), "{land}");
    // One landing merge, on top of the commit that moved main.
    assert_eq!(landing_subjects(&repo).len(), 1);
    assert_eq!(
        repo.git_output(&["log", "-1", "--format=%s", "main^1"])
            .trim(),
        "moved"
    );
    // The commits merged from the moved target are named by the attestations: verify holds.
    repo.run(&["verify"]).assert_code(0);
    // What the first attempt's turn put back stays in the landing's record.
    let report = repo.run(&["report", "--format", "json"]).json();
    assert_eq!(
        report["landing"]["put_back"][0]["paths"],
        serde_json::json!(["STRAY.txt"]),
        "{report}"
    );
}

#[test]
fn a_dry_run_says_what_would_conflict_and_changes_nothing() {
    let repo = Repo::new();
    run_epic(&repo, "true");
    commit_on_main(&repo, "a/a.txt", "main's alpha\n");
    let refs = repo.git_output(&["for-each-ref"]);
    let state = repo.common_dir().join("epic/shop");
    let events = std::fs::read(state.join("events.jsonl")).expect("events");

    let dry = repo.run(&["land", "--dry-run", "--no-progress"]);
    dry.assert_code(0);
    assert!(dry.stdout.contains("`main` moved"), "{dry}");
    assert!(dry.stdout.contains("a/a.txt (owned by story a)"), "{dry}");
    assert_eq!(repo.git_output(&["for-each-ref"]), refs);
    assert_eq!(
        std::fs::read(state.join("events.jsonl")).expect("events"),
        events
    );
    assert!(!state.join("landing.json").exists());
    assert!(!state.join("landed.json").exists());
    assert_eq!(repo.git_output(&["status", "--porcelain"]), "");
}

#[test]
fn unmerged_stories_are_refused_unless_partial() {
    let repo = Repo::new();
    repo.write(
        "plan.json",
        file_plan(&[("a", &[], "alpha"), ("b", &[], "broken")]),
    );
    repo.run(&[
        "run",
        "plan.json",
        "--coder",
        "script",
        "--concurrency",
        "1",
        "--no-progress",
        "--gate",
        "! grep -rq broken b 2>/dev/null",
    ])
    .assert_code(1);
    let main = rev(&repo, "main");

    let land = repo.run(&["land", "--no-progress"]);
    land.assert_code(1);
    assert!(land.stderr.contains("b (failed)"), "{land}");
    assert_eq!(rev(&repo, "main"), main);

    let partial = repo.run(&["land", "--partial", "--no-progress"]);
    partial.assert_code(0);
    assert!(
        partial.stdout.contains("left out (not merged): b"),
        "{partial}"
    );
    assert_eq!(repo.git_output(&["show", "main:a/a.txt"]), "alpha\n");
    let report = repo.run(&["report", "--format", "json"]).json();
    assert_eq!(report["landing"]["left_out"][0], "b");
}

#[test]
fn a_checkout_dirty_where_the_landing_changes_is_refused_first() {
    let repo = Repo::new();
    run_epic(&repo, "true");
    repo.write("a/a.txt", "my own edit\n");
    let (main, epic) = (rev(&repo, "main"), rev(&repo, "epic/shop"));

    let land = repo.run(&["land", "--no-progress"]);
    land.assert_code(1);
    assert!(land.stderr.contains("a/a.txt"), "{land}");
    assert_eq!(rev(&repo, "main"), main);
    assert_eq!(rev(&repo, "epic/shop"), epic);
    assert_eq!(repo.read("a/a.txt"), "my own edit\n");
}

/// A stand-in `gh` on PATH: `auth status` as `$GH_AUTH` says, and `pr view`, `pr create` and
/// `pr edit` checked against the flags gh's manual documents for them (any other flag, or a
/// flag without its value, fails), each call logged to `gh.log`, the pull request kept in
/// `gh.pr`.
const GH: &str = r#"#!/bin/sh
dir=$(dirname "$0")
echo "$*" >> "$dir/gh.log"
case "$1 $2" in
"auth status") [ "${GH_AUTH:-ok}" = ok ] && exit 0; echo "You are not logged into any GitHub hosts" >&2; exit 1 ;;
"pr view")
  shift 2; branch=$1; shift
  [ "$*" = "--json url --jq .url" ] || { echo "bad view flags: $*" >&2; exit 2; }
  [ -f "$dir/gh.pr" ] || { echo "no pull requests found for branch \"$branch\"" >&2; exit 1; }
  cat "$dir/gh.pr"; exit 0 ;;
"pr create")
  shift 2
  while [ $# -gt 0 ]; do
    case "$1" in
    --base|-B|--head|-H|--title|-t|--body|-b) [ $# -ge 2 ] || { echo "$1 needs a value" >&2; exit 2; }; shift 2 ;;
    --draft|-d) shift ;;
    *) echo "unknown flag: $1" >&2; exit 2 ;;
    esac
  done
  echo "https://github.example/o/r/pull/1" > "$dir/gh.pr"
  echo "https://github.example/o/r/pull/1"; exit 0 ;;
"pr edit")
  shift 3
  while [ $# -gt 0 ]; do
    case "$1" in
    --title|-t|--body|-b|--base|-B) [ $# -ge 2 ] || { echo "$1 needs a value" >&2; exit 2; }; shift 2 ;;
    *) echo "unknown flag: $1" >&2; exit 2 ;;
    esac
  done
  exit 0 ;;
esac
echo "unknown command: $*" >&2; exit 2
"#;

/// A bare repository as `origin` holding `main`, and the stand-in `gh` in a directory of its
/// own: that directory.
fn remote_and_gh(repo: &Repo) -> PathBuf {
    let remote = repo.temp().join("remote.git");
    repo.git(&["init", "--quiet", "--bare", &remote.display().to_string()]);
    repo.git(&["remote", "add", "origin", &remote.display().to_string()]);
    repo.git(&["push", "--quiet", "origin", "main"]);
    let bin = repo.temp().join("bin");
    std::fs::create_dir(&bin).expect("mkdir");
    let gh = bin.join("gh");
    epic_test_support::executable(&gh, GH);
    bin
}

fn land_with_gh(repo: &Repo, bin: &Path, auth: &str, extra: &[&str]) -> std::process::Output {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut args = vec!["land", "--pr", "--no-progress"];
    args.extend_from_slice(extra);
    repo.command(&args)
        .env("PATH", path)
        .env("GH_AUTH", auth)
        .output()
        .expect("run epic land --pr")
}

#[test]
fn pr_pushes_the_epic_branch_and_opens_then_updates_one_pull_request() {
    let repo = Repo::new();
    run_epic(&repo, "true");
    let bin = remote_and_gh(&repo);
    commit_on_main(&repo, "main.txt", "main moved\n");
    let main = rev(&repo, "main");

    let first = land_with_gh(&repo, &bin, "ok", &["--draft"]);
    let stdout = String::from_utf8_lossy(&first.stdout);
    assert_eq!(
        first.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(
        stdout.contains("pull request opened: https://github.example/o/r/pull/1"),
        "{stdout}"
    );
    // The target is untouched; the remote has the epic branch, with the target merged in.
    assert_eq!(rev(&repo, "main"), main);
    let remote = repo.temp().join("remote.git").display().to_string();
    let pushed = repo.git_output(&["ls-remote", &remote, "refs/heads/epic/shop"]);
    assert!(pushed.starts_with(&rev(&repo, "epic/shop")), "{pushed}");
    repo.git_output(&["merge-base", "--is-ancestor", &main, "epic/shop"]);
    let log = std::fs::read_to_string(bin.join("gh.log")).expect("gh.log");
    assert!(log.contains("auth status"), "{log}");
    assert!(
        log.contains("pr create --base main --head epic/shop --title epic shop"),
        "{log}"
    );
    assert!(log.contains("--draft"), "{log}");

    let second = land_with_gh(&repo, &bin, "ok", &[]);
    assert_eq!(second.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&second.stdout).contains("pull request updated"));
    let log = std::fs::read_to_string(bin.join("gh.log")).expect("gh.log");
    assert_eq!(log.matches("pr create").count(), 1, "{log}");
    assert!(log.contains("pr edit epic/shop --title"), "{log}");
}

#[test]
fn pr_without_a_logged_in_gh_fails_before_anything_is_pushed() {
    let repo = Repo::new();
    run_epic(&repo, "true");
    let bin = remote_and_gh(&repo);
    commit_on_main(&repo, "main.txt", "main moved\n");
    let epic = rev(&repo, "epic/shop");

    let land = land_with_gh(&repo, &bin, "no", &[]);
    assert_eq!(land.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&land.stderr).contains("not logged in"));
    let remote = repo.temp().join("remote.git").display().to_string();
    assert_eq!(
        repo.git_output(&["ls-remote", &remote, "refs/heads/epic/shop"]),
        ""
    );
    assert_eq!(rev(&repo, "epic/shop"), epic);
}

#[test]
fn a_target_that_keeps_moving_is_given_up_after_two_retries() {
    let repo = Repo::new();
    run_epic(&repo, "true");
    commit_on_main(&repo, "main.txt", "main moved\n");
    let epic = rev(&repo, "epic/shop");
    // The gate moves main every time it runs: every compare-and-swap finds it moved.
    let root = repo.path().display().to_string();
    let gate = format!(
        "c=$(git -C '{root}' -c user.name=T -c user.email=t@e commit-tree 'main^{{tree}}' -p main -m moved) \
         && git -C '{root}' update-ref refs/heads/main \"$c\""
    );

    let land = repo.run(&["land", "--no-progress", "--sandbox", "off", "--gate", &gate]);
    land.assert_code(1);
    assert!(
        land.stderr.contains("moved during the landing 3 times"),
        "{land}"
    );
    assert_eq!(landing_subjects(&repo).len(), 0);
    assert_eq!(rev(&repo, "epic/shop"), epic);
}

/// The files of `rev`'s tree.
fn files_of(repo: &Repo, rev: &str) -> Vec<String> {
    repo.git_output(&["ls-tree", "-r", "--name-only", rev])
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The attestation epic noted on `rev` (a commit of the epic branch), as JSON.
fn attestation(repo: &Repo, rev: &str) -> serde_json::Value {
    serde_json::from_str(&repo.git_output(&["notes", "--ref", "refs/notes/epic", "show", rev]))
        .expect("an attestation is JSON")
}

/// Runs the epic with `gate` and the gate script `check.sh` committed beside the plan, then
/// moves `main` so that each of `conflicts` conflicts with the epic.
fn run_epic_with_gate_script(repo: &Repo, script: &str, gate: &str, conflicts: &[&str]) {
    repo.write("check.sh", script);
    repo.git(&["add", "check.sh"]);
    run_epic(repo, gate);
    for path in conflicts {
        commit_on_main(repo, path, "main's line\n");
    }
}

/// The issue's first finding: a lander turn that rewrote the gate script landed it and the
/// gate ran the rewrite. Now the rewrite is put back before the gates run (here the rewrite
/// would fail: the landing passes only because the original ran), and never reaches the target.
#[test]
fn a_lander_that_rewrites_the_gate_script_is_put_back_before_the_gates_run() {
    let repo = Repo::new();
    run_epic_with_gate_script(&repo, "true\n", "sh check.sh", &["a/a.txt"]);
    let script = lander(
        &repo,
        "rewriter.sh",
        "if test \"$EPIC_STORY\" = a; then\n\
           printf 'resolved\\n' > a/a.txt\n\
           printf 'exit 1\\n' > check.sh\n\
           chmod +x check.sh\n\
         fi",
    );

    let land = repo.run(&["land", "--no-progress", "--coder", &exec(&script)]);
    land.assert_code(0);
    assert!(
        land.stdout.contains(
            "put back (outside the lander's perimeter) from story a's conflict turn: check.sh"
        ),
        "{land}"
    );
    assert!(!land.stdout.contains("gate rounds"), "{land}");
    assert_eq!(repo.git_output(&["show", "main:a/a.txt"]), "resolved\n");
    assert_eq!(repo.git_output(&["show", "main:check.sh"]), "true\n");
    let report = repo.run(&["report", "--format", "json"]).json();
    assert_eq!(
        report["landing"]["put_back"],
        serde_json::json!([{"story": "a", "paths": ["check.sh"]}])
    );
    let markdown = repo.run(&["report", "--format", "md"]);
    assert!(
        markdown
            .stdout
            .contains("  - story a's conflict turn: check.sh"),
        "{markdown}"
    );
    // The merge commit's attestation says what the turns could change and what went back.
    let note = attestation(&repo, "epic/shop");
    assert_eq!(note["kind"], "landing");
    assert_eq!(note["perimeter"], "passed");
    assert_eq!(note["test_guard"], "passed");
    assert_eq!(note["lander"]["conflicts"], serde_json::json!(["a/a.txt"]));
    assert_eq!(note["lander"]["rounds"], serde_json::json!(["a", "b"]));
    assert_eq!(
        note["lander"]["put_back"][0]["paths"],
        serde_json::json!(["check.sh"])
    );
    let gated = note["gated_tree"].as_str().expect("a tree").to_owned();
    assert_eq!(
        repo.git_output(&["show", &format!("{gated}:check.sh")]),
        "true\n"
    );
    repo.run(&["verify"]).assert_code(0);
}

/// The hole: a lander turn wrote a commit on top of `main` (the gate script made `exit 0`, a file
/// of its own) and pointed `main` at it with `git update-ref`; epic took it for a target moved
/// by someone else, merged it and landed it. In the sandbox the target is read-only to every
/// turn: the move fails, the landing lands on `main` as it was, and `epic verify` holds.
#[test]
fn a_lander_cannot_move_the_target() {
    let repo = Repo::new();
    run_epic_with_gate_script(&repo, "true\n", "sh check.sh", &["a/a.txt"]);
    let before = rev(&repo, "main");
    let (root, log) = (repo.path().display(), repo.temp().join("mover.log"));
    let script = lander(
        &repo,
        "mover.sh",
        &format!(
            "printf 'resolved\\n' > a/a.txt\n\
             c=$(git -C '{root}' -c user.name=T -c user.email=t@e commit-tree 'main^{{tree}}' -p main -m planted)\n\
             if git -C '{root}' update-ref refs/heads/main \"$c\" 2>> '{log}'; then echo MOVED >> '{log}'; \
             else echo refused >> '{log}'; fi",
            log = log.display()
        ),
    );

    let land = repo.run(&[
        "land",
        "--no-progress",
        "--sandbox",
        "on",
        "--coder",
        &exec(&script),
    ]);
    land.assert_code(0);
    let log = std::fs::read_to_string(&log).expect("the lander's log");
    assert!(log.contains("refused") && !log.contains("MOVED"), "{log}");
    assert!(!land.stderr.contains("moved during the landing"), "{land}");
    assert_eq!(rev(&repo, "main^1"), before, "landed on main as it was");
    assert!(
        !repo
            .git_output(&["log", "--format=%s", "main"])
            .lines()
            .any(|subject| subject == "planted"),
        "the lander's commit reached main"
    );
    repo.run(&["verify"]).assert_code(0);
}

#[test]
fn a_file_a_lander_turn_adds_does_not_reach_the_target() {
    let repo = Repo::new();
    run_epic_with_gate_script(&repo, "true\n", "sh check.sh", &["a/a.txt"]);
    let script = lander(
        &repo,
        "adder.sh",
        "if test \"$EPIC_STORY\" = a; then\n\
           printf 'resolved\\n' > a/a.txt\n\
           printf 'planted\\n' > HOSTILE.txt\n\
           mkdir -p b/extra && printf 'planted\\n' > b/extra/more.txt\n\
         fi",
    );

    let land = repo.run(&["land", "--no-progress", "--coder", &exec(&script)]);
    land.assert_code(0);
    let files = files_of(&repo, "main");
    assert!(
        !files
            .iter()
            .any(|f| f == "HOSTILE.txt" || f.starts_with("b/extra")),
        "{files:?}"
    );
    assert_eq!(repo.git_output(&["show", "main:a/a.txt"]), "resolved\n");
    let report = repo.run(&["report", "--format", "json"]).json();
    assert_eq!(
        report["landing"]["put_back"][0]["paths"],
        serde_json::json!(["HOSTILE.txt", "b/extra/more.txt"])
    );
    let epic_worktree = repo.temp().join("shop.worktrees/shop/_epic");
    assert!(!epic_worktree.join("HOSTILE.txt").exists());
    let events =
        std::fs::read_to_string(repo.common_dir().join("epic/shop/events.jsonl")).expect("events");
    assert!(
        events.contains("changed what is outside its perimeter; put back: HOSTILE.txt"),
        "{events}"
    );
}

/// Story a's turn edits story b's conflicted file, stages everything and commits (concluding
/// the merge): its edit and its commit are put back, and story b's turn still finds the merge
/// open with its file unmerged, as git left it.
#[test]
fn a_lander_that_edits_another_storys_file_is_put_back_and_the_merge_stays_open() {
    let repo = Repo::new();
    run_epic_with_gate_script(&repo, "true\n", "sh check.sh", &["a/a.txt", "b/b.txt"]);
    let script = lander(
        &repo,
        "meddler.sh",
        "case \"$EPIC_STORY\" in\n\
         a)\n\
           printf 'resolved by a\\n' > a/a.txt\n\
           printf 'hijacked by a\\n' > b/b.txt\n\
           git add -A && git -c user.name=T -c user.email=t@e commit --quiet --no-verify -m 'lander a' || exit 1\n\
           ;;\n\
         b)\n\
           git rev-parse --quiet --verify MERGE_HEAD > /dev/null || { echo 'no merge in progress' >&2; exit 1; }\n\
           test -n \"$(git ls-files --unmerged -- b/b.txt)\" || { echo 'b/b.txt is not unmerged' >&2; exit 1; }\n\
           grep -q '^<<<<<<< ' b/b.txt || { echo 'b/b.txt lost its markers' >&2; exit 1; }\n\
           grep -q 'resolved by a' a/a.txt || { echo 'a/a.txt lost its resolution' >&2; exit 1; }\n\
           printf 'resolved by b\\n' > b/b.txt\n\
           ;;\n\
         esac",
    );

    let land = repo.run(&[
        "land",
        "--no-progress",
        "--sandbox",
        "off",
        "--coder",
        &exec(&script),
    ]);
    land.assert_code(0);
    assert_eq!(
        repo.git_output(&["show", "main:a/a.txt"]),
        "resolved by a\n"
    );
    assert_eq!(
        repo.git_output(&["show", "main:b/b.txt"]),
        "resolved by b\n"
    );
    // One merge of the target on the epic branch, with both parents: the lander's commit is gone.
    let epic_log = repo.git_output(&["log", "--format=%s", "epic/shop"]);
    assert!(!epic_log.contains("lander a"), "{epic_log}");
    let report = repo.run(&["report", "--format", "json"]).json();
    assert_eq!(
        report["landing"]["put_back"],
        serde_json::json!([{"story": "a", "paths": ["b/b.txt"], "moved_head": true}])
    );
    repo.run(&["verify"]).assert_code(0);
}

#[test]
fn a_red_gate_round_may_change_only_the_stories_paths() {
    let repo = Repo::new();
    run_epic_with_gate_script(
        &repo,
        "test ! -f main.txt || test -f a/ok.txt\n",
        "sh check.sh",
        &["main.txt"],
    );
    let plan = repo.git_output(&["show", "main:plan.json"]);
    let script = lander(
        &repo,
        "fixer.sh",
        "touch a/ok.txt\n\
         printf 'exit 0\\n' > check.sh\n\
         printf '{}' > plan.json\n\
         touch stray.txt",
    );

    let land = repo.run(&["land", "--no-progress", "--coder", &exec(&script)]);
    land.assert_code(0);
    assert!(
        land.stdout.contains("gate rounds after the merge: 1"),
        "{land}"
    );
    repo.git_output(&["show", "main:a/ok.txt"]);
    assert_eq!(
        repo.git_output(&["show", "main:check.sh"]),
        "test ! -f main.txt || test -f a/ok.txt\n"
    );
    assert_eq!(repo.git_output(&["show", "main:plan.json"]), plan);
    assert!(!files_of(&repo, "main").iter().any(|f| f == "stray.txt"));
    let report = repo.run(&["report", "--format", "json"]).json();
    assert_eq!(
        report["landing"]["put_back"],
        serde_json::json!([{"round": 1, "paths": ["check.sh", "plan.json", "stray.txt"]}])
    );
    // The fix's own commit is attested with the same perimeter.
    let note = attestation(&repo, "epic/shop");
    assert_eq!(note["lander"]["put_back"][0]["round"], 1);
    repo.run(&["verify"]).assert_code(0);
}

/// The test guard holds the conflict turns too: a resolution that empties a test both sides
/// had is refused, and the target is untouched.
#[test]
fn a_conflict_resolution_that_empties_a_test_is_refused() {
    let repo = Repo::new();
    let plan = serde_json::json!({
        "epic_id": "shop",
        "stories": [{
            "id": "a",
            "title": "Story a",
            "description": "Write the test.\n\n```file a/a_test.sh\ntest 1 = 1 # the epic's\n```\n",
            "owned": ["a"],
        }],
    });
    repo.write("plan.json", plan.to_string());
    repo.git(&["add", "plan.json"]);
    commit(&repo, "the plan");
    repo.run(&[
        "run",
        "plan.json",
        "--coder",
        "script",
        "--no-progress",
        "--gate",
        "true",
    ])
    .assert_code(0);
    commit_on_main(&repo, "a/a_test.sh", "test 2 = 2 # main's\n");
    let (main, epic) = (rev(&repo, "main"), rev(&repo, "epic/shop"));
    let script = lander(&repo, "emptier.sh", ": > a/a_test.sh");

    let land = repo.run(&["land", "--no-progress", "--coder", &exec(&script)]);
    land.assert_code(1);
    assert!(land.stderr.contains("emptied a/a_test.sh"), "{land}");
    assert_eq!(rev(&repo, "main"), main);
    assert_eq!(rev(&repo, "epic/shop"), epic);
}
