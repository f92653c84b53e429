//! The sandbox (`--sandbox on`), with real bubblewrap: what an agent writes outside its own
//! worktree (a sibling's worktree, the epic worktree, the main checkout and its branch, the
//! epic's state, the repository's config and hooks) fails and reaches nothing, while its own
//! work, a commit it makes itself included, merges; and a daemon that cleared its environment
//! and left the turn's process group dies with the turn's PID namespace.
//!
//! These tests need `bwrap` and fail, saying so, where it is missing: CI installs it.

use std::fmt::Write as _;

use epic_events::Event;
use epic_executor::{RunConfig, WorktreeMode};
use epic_process::sandbox::SandboxMode;
use epic_test_support::poll;

use crate::epic_support::{EpicFixture, merges, plan, statuses};
use crate::support::{Events, PATIENCE};

/// Fails the test, naming what to install, when `bwrap` cannot make a sandbox here.
fn require_bwrap() {
    let works = std::process::Command::new("bwrap")
        .args([
            "--dev-bind",
            "/",
            "/",
            "--unshare-pid",
            "--proc",
            "/proc",
            "--",
            "true",
        ])
        .status()
        .is_ok_and(|status| status.success());
    assert!(
        works,
        "this test needs a working bubblewrap (`bwrap`): apt-get install bubblewrap"
    );
}

/// The fixture's configuration with the sandbox required.
fn sandboxed(ep: &EpicFixture) -> RunConfig {
    require_bwrap();
    let mut config = ep.config();
    config.sandbox = SandboxMode::On;
    config
}

/// [`sandboxed`] with a new worktree per story (`--worktrees fresh`): for attempts that name
/// another story's own worktree.
fn sandboxed_fresh(ep: &EpicFixture) -> RunConfig {
    let mut config = sandboxed(ep);
    config.worktrees = WorktreeMode::Fresh;
    config
}

/// Each write `a`'s coder tries outside its worktree: a name, and a shell command that succeeds
/// only when the write landed.
const ATTEMPTS: &[(&str, &str)] = &[
    (
        "sibling",
        r#"mkdir -p "$ROOT/repo.worktrees/e/b/src/b" && echo evil > "$ROOT/repo.worktrees/e/b/src/b/evil.txt""#,
    ),
    (
        "epic-worktree",
        r#"echo evil > "$ROOT/repo.worktrees/e/_epic/stray.txt""#,
    ),
    ("checkout", r#"echo evil > "$ROOT/repo/evil.txt""#),
    (
        "main-commit",
        r#"git -C "$ROOT/repo" commit -q --allow-empty -m evil-on-main"#,
    ),
    (
        "story-state",
        r#"echo forged > "$ROOT/repo/.git/epic/e/stories/b.json""#,
    ),
    (
        "merge-journal",
        r#"echo '{"version":1,"data":{"story":"a","checkpoint":"0000000000000000000000000000000000000000"}}' > "$ROOT/repo/.git/epic/e/merging.json""#,
    ),
    ("lock", r#"rm "$ROOT/repo/.git/epic/e/lock""#),
    (
        "config",
        r#"git config --file "$ROOT/repo/.git/config" core.fsmonitor "touch $ROOT/fsmonitor-ran""#,
    ),
    (
        "hooks",
        r#"printf '#!/bin/sh\ntouch "$ROOT/hook-ran"\n' > "$ROOT/repo/.git/hooks/post-commit" && chmod +x "$ROOT/repo/.git/hooks/post-commit""#,
    ),
];

/// A sandboxed coder tries every write of [`ATTEMPTS`] while its sibling runs, then does its
/// own work and commits it itself; a gate and a setup command try to write into the main
/// checkout. Every attempt fails, none of it reaches the epic branch, `main` or the
/// repository's files, and both stories merge, the coder's own commit with them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandboxed_writes_outside_the_own_worktree_fail_and_the_story_merges() {
    let ep = EpicFixture::new();
    std::fs::create_dir_all(ep.fx.root.join("landed")).expect("landed dir");
    let mut attempts = String::from(
        // b is working (its worktree and state exist) before a tries anything; a gives up
        // waiting after 25 s, inside its turn's 30 s deadline.
        "n=0; while [ ! -e \"$ROOT/b-working\" ] && [ $n -lt 500 ]; do sleep 0.05; n=$((n+1)); done\n",
    );
    // What the attempts aim at exists (else a failed attempt would prove nothing).
    attempts.push_str(
        "test -e \"$ROOT/repo/.git/epic/e/lock\" && test -e \"$ROOT/repo/.git/epic/e/stories/b.json\" \
         && test -d \"$ROOT/repo.worktrees/e/b\" && touch \"$ROOT/targets-exist\"\n",
    );
    for (name, command) in ATTEMPTS {
        writeln!(
            attempts,
            "if ( {command} ) 2>/dev/null; then touch \"$ROOT/landed/{name}\"; fi"
        )
        .expect("write to a string");
    }
    attempts.push_str(
        "touch \"$ROOT/a-tried\"\n\
         mkdir -p src/a && echo mine > src/a/own.txt && git add -A && git commit -qm 'a commits on its own' && touch \"$ROOT/a-committed\"\n",
    );
    ep.hook("a", &attempts);
    ep.hook(
        "b",
        "touch \"$ROOT/b-working\"\n\
         n=0; while [ ! -e \"$ROOT/a-tried\" ] && [ $n -lt 500 ]; do sleep 0.05; n=$((n+1)); done\n",
    );
    let mut config = sandboxed_fresh(&ep);
    config.concurrency = 2;
    // A gate and a setup command are sandboxed too: their writes into the main checkout fail,
    // while git in their own worktree (which refreshes its index) works.
    let (repo, landed) = (ep.fx.repo.display(), root_landed(&ep));
    for (kind, list) in [("gate", &mut config.gates), ("setup", &mut config.setup)] {
        list.push(format!(
            "git status --porcelain > /dev/null && \
             if (echo evil > '{repo}/{kind}-evil.txt') 2>/dev/null; then touch '{landed}/{kind}'; fi"
        ));
    }
    let main_before = ep.rev("main");
    let config_before = std::fs::read_to_string(ep.fx.repo.join(".git/config")).expect("config");
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[]), ("b", &[])]), config, &events)
        .await
        .expect("run");

    let root = &ep.fx.root;
    assert!(root.join("a-tried").exists(), "a's hook ran its attempts");
    assert!(
        root.join("targets-exist").exists(),
        "b's worktree, its state and the lock existed when a tried"
    );
    let landed: Vec<String> = std::fs::read_dir(root.join("landed"))
        .expect("landed")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert!(landed.is_empty(), "writes that landed: {landed:?}");
    assert!(
        root.join("a-committed").exists(),
        "a's own commit in its sandbox failed"
    );
    assert!(outcome.all_done(), "{:?}", statuses(&outcome));
    let mut merged = merges(&ep);
    merged.sort();
    assert_eq!(merged, ["e: merge story a", "e: merge story b"]);
    let log = ep.fx.git_in(&ep.fx.repo, &["log", "--format=%s", "epic/e"]);
    assert!(
        log.lines().any(|subject| subject == "a commits on its own"),
        "{log}"
    );
    assert!(!log.contains("evil"), "{log}");
    assert_eq!(ep.rev("main"), main_before, "nothing committed on main");
    let epic_files = ep
        .fx
        .git_in(&ep.fx.repo, &["ls-tree", "-r", "--name-only", "epic/e"]);
    assert!(
        !epic_files.contains("evil") && !epic_files.contains("stray"),
        "{epic_files}"
    );
    assert!(!ep.fx.repo.join("evil.txt").exists());
    assert!(!ep.epic_worktree().join("stray.txt").exists());
    assert_eq!(
        std::fs::read_to_string(ep.fx.repo.join(".git/config")).expect("config"),
        config_before
    );
    assert!(!ep.fx.repo.join(".git/hooks/post-commit").exists());
    assert!(!root.join("hook-ran").exists() && !root.join("fsmonitor-ran").exists());
    assert!(!ep.dir().merge_journal().exists());
    let b_state = std::fs::read_to_string(ep.dir().story_state("b").expect("b's state path"))
        .expect("b's state");
    assert!(!b_state.contains("forged"), "{b_state}");
    assert!(
        !events.steps().iter().any(|event| matches!(
            event,
            Event::RunNote { message } if message.contains("sandbox")
        )),
        "a sandboxed run says nothing about the sandbox"
    );
}

/// Where the attempts that landed are marked, as a shell word's text.
fn root_landed(ep: &EpicFixture) -> String {
    ep.fx.root.join("landed").display().to_string()
}

/// The processes whose command line holds `marker`.
fn processes_with(marker: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                cmdline
                    .windows(marker.len())
                    .any(|window| window == marker.as_bytes())
            })
        })
        .collect()
}

/// Waits (up to [`PATIENCE`]) until no process's command line holds `marker`; those left.
fn wait_none_with(marker: &str) -> Vec<u32> {
    let mut left = Vec::new();
    poll(PATIENCE, || {
        left = processes_with(marker);
        left.is_empty().then_some(())
    });
    left
}

/// The hook of a coder that starts a daemon with an empty environment (no tag) in a session of
/// its own (out of the turn's process group), `marker` in its command line, and waits until it
/// runs.
fn daemon_hook(marker: &str) -> String {
    format!(
        "env -i setsid sh -c 'touch \"$1\"; sleep 1000; : {marker}' daemon \"$ROOT/daemon-up\" \
         > /dev/null 2>&1 < /dev/null &\n\
         n=0; while [ ! -e \"$ROOT/daemon-up\" ] && [ $n -lt 500 ]; do sleep 0.05; n=$((n+1)); done\n"
    )
}

/// A unique marker for one test's daemon.
fn marker(test: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    format!("epic-daemon-{test}-{}-{nanos}", std::process::id())
}

/// Kills what is left of a daemon (so a failing test leaks nothing), and says which.
fn kill_left(left: &[u32]) -> String {
    for pid in left {
        drop(
            std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status(),
        );
    }
    format!("{left:?}")
}

/// A daemon that cleared its environment (so it carries no tag) and left the process group
/// (`env -i setsid`) is dead once the turn ends: it lived in the turn's PID namespace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_env_cleared_daemon_dies_with_the_turns_namespace() {
    let ep = EpicFixture::new();
    let marker = marker("sandboxed");
    ep.hook("a", &daemon_hook(&marker));
    let config = sandboxed(&ep);
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &Events::default())
        .await
        .expect("run");
    assert!(
        ep.fx.root.join("daemon-up").exists(),
        "the daemon never started"
    );
    let left = wait_none_with(&marker);
    assert!(
        left.is_empty(),
        "the daemon outlived its turn: {}",
        kill_left(&left)
    );
    assert!(outcome.all_done(), "{:?}", statuses(&outcome));
}

/// Without the sandbox, the same daemon is found when its turn ends (epic adopts orphans: it is
/// their subreaper), killed, and reported with its pid and command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_sandbox_an_env_cleared_daemon_is_killed_and_reported() {
    let ep = EpicFixture::new();
    let marker = marker("unsandboxed");
    ep.hook("a", &daemon_hook(&marker));
    let mut config = ep.config();
    config.sandbox = SandboxMode::Off;
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &events)
        .await
        .expect("run");
    assert!(
        ep.fx.root.join("daemon-up").exists(),
        "the daemon never started"
    );
    let left = wait_none_with(&marker);
    assert!(
        left.is_empty(),
        "the daemon outlived its turn: {}",
        kill_left(&left)
    );
    assert!(outcome.all_done(), "{:?}", statuses(&outcome));
    let reported: Vec<String> = events
        .steps()
        .iter()
        .filter_map(|event| match event {
            Event::Note { story, message }
                if story == "a" && message.starts_with("a process outlived its turn") =>
            {
                Some(message.clone())
            }
            _ => None,
        })
        .collect();
    assert!(
        reported.iter().any(|message| message.contains(&marker)),
        "the daemon was reported: {reported:?}"
    );
    let off = events
        .steps()
        .iter()
        .filter(|event| {
            matches!(event, Event::RunNote { message } if message.starts_with("the sandbox is off"))
        })
        .count();
    assert_eq!(off, 1, "the run says once that agents are not contained");
}
