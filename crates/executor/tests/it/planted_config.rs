//! Whole runs whose agents plant git configuration during their turn (issue 18, item 4) or
//! `git replace` a commit (item 12): epic's own git (its commits, merges, resets, statuses,
//! worktree checkouts) never runs what was planted, commits with the identity the run started
//! with, stores the bytes the stories wrote, reads no replaced object, and the run ends with a
//! note naming the changed keys. What was configured at the start keeps working.
//!
//! The planting is the agent's own `git config` (the sandbox, when on, makes the repository's
//! configuration read-only to agents, so these runs are the case it does not prevent).

use std::path::Path;
use std::time::Duration;

use epic_process::sandbox::SandboxMode;

use crate::epic_support::{EpicFixture, commit_on_main, merges, plan, statuses};
use crate::support::Events;

/// The marks planted programs leave in `$ROOT/marks` when they run, sorted.
fn marks(ep: &EpicFixture) -> Vec<String> {
    let dir = ep.fx.root.join("marks");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|entry| {
                    entry
                        .expect("entry")
                        .file_name()
                        .to_string_lossy()
                        .into_owned()
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// `git --no-replace-objects <args>` in the main repository: what is really stored.
fn stored(ep: &EpicFixture, args: &[&str]) -> String {
    let mut all = vec!["--no-replace-objects"];
    all.extend_from_slice(args);
    ep.fx.git_in(&ep.fx.repo, &all)
}

/// A coder hook that plants, from its story worktree, a program in every place git takes one
/// (each leaves its mark in `$ROOT/marks` when run), a filter and a merge driver named for
/// every path through `info/attributes` that rewrite `good` to `EVIL`, and another identity.
const PLANT: &str = r#"mkdir -p "$ROOT/marks" "$ROOT/planted/hooks"
program() {
  printf '#!/bin/sh\ntouch "%s/marks/%s"\n%s\n' "$ROOT" "$1" "$2" > "$ROOT/planted/$1"
  chmod +x "$ROOT/planted/$1"
}
program fsmonitor 'exit 1'
program gpg 'exit 1'
program clean 'sed s/good/EVIL/'
program smudge 'sed s/good/EVIL/'
program process 'exit 1'
program merge 'echo EVIL > "$1"'
program textconv 'cat "$1"'
for hook in pre-commit post-commit post-merge post-checkout reference-transaction; do
  program "$hook" 'exit 0'; cp "$ROOT/planted/$hook" "$ROOT/planted/hooks/$hook"
done
git config core.fsmonitor "$ROOT/planted/fsmonitor"
git config gpg.program "$ROOT/planted/gpg"
git config commit.gpgSign true
git config filter.evil.clean "$ROOT/planted/clean"
git config filter.evil.smudge "$ROOT/planted/smudge"
git config filter.evil.process "$ROOT/planted/process"
git config filter.evil.required true
git config merge.evil.driver "$ROOT/planted/merge %A"
git config diff.evil.textconv "$ROOT/planted/textconv"
git config core.hooksPath "$ROOT/planted/hooks"
git config user.name Mallory
git config user.email mallory@example.com
echo '* filter=evil merge=evil diff=evil' > "$(git rev-parse --git-common-dir)/info/attributes"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configuration_planted_by_an_agent_does_not_run_in_epics_git() {
    let ep = EpicFixture::new();
    // A sibling's file, committed before the run, that the planted filter would rewrite.
    commit_on_main(&ep, &[("src/b/keep.txt", "good\n")]);
    // a plants only once b's agent turns are over: the guard fails whichever turn ends first
    // after a change to the configuration, so a turn of b ending after the planting would fail
    // b (rightly), not a. b's gate runs once its coder turn has ended and been checked; it marks
    // that and waits for the planting. a waits for the mark, plants, then keeps its turn open
    // until b has merged: b's task commit, its merge and the epic worktree's checkout all run
    // under the planted configuration. (When a's turn ends, the guard puts the configuration
    // back and fails a: `guarded_files.rs`.) No step depends on how fast either story is; the
    // bounds only end a run whose marks never come.
    ep.hook(
        "a",
        &format!(
            "n=0; while [ ! -e \"$ROOT/b-gating\" ] && [ $n -lt 2000 ]; do sleep 0.05; n=$((n+1)); done
{PLANT}touch \"$ROOT/planted-done\"
n=0; while ! git log --format=%s epic/e | grep -q 'merge story b' && [ $n -lt 2000 ]; do sleep 0.05; n=$((n+1)); done
"
        ),
    );
    ep.hook("b", "echo good > src/b/new.txt\n");
    let plan = plan(&[("a", &[]), ("b", &[])]);
    // Sandbox off: with it on, the agent cannot write the repository's configuration at all
    // (sandbox.rs); this is what epic's own git does when the write lands.
    let mut config = ep.config();
    config.sandbox = SandboxMode::Off;
    // Room for a loaded machine: a's turn lasts through b's whole story.
    config.turn_timeout = Duration::from_mins(2);
    config.gate_timeout = Duration::from_mins(2);
    // b's gate (told by its branch: slots are shared), after its coder turn and before its
    // task commit, marks that b's turn is over and waits for the planting (a gate running while a turn runs is not checked by the
    // guard; a turn would be).
    let root = ep.fx.root.display();
    config.gates = vec![format!(
        r#"case "$(git symbolic-ref --short HEAD)" in story/e/b) touch "{root}/b-gating"; while [ ! -e "{root}/planted-done" ]; do sleep 0.05; done ;; esac"#
    )];
    let events = Events::default();
    let outcome = ep.run(&plan, config, &events).await.expect("run");
    assert_eq!(
        statuses(&outcome),
        ["a:failed", "b:done"],
        "{:?}",
        outcome.report
    );
    let why = outcome.report.stories[0].reason.clone().unwrap_or_default();
    assert!(why.contains(".git/config"), "{why}");
    assert_eq!(merges(&ep).len(), 1);
    assert_eq!(marks(&ep), Vec::<String>::new(), "planted programs ran");
    // The bytes the stories wrote, on the epic branch and in the epic worktree.
    assert_eq!(
        stored(&ep, &["cat-file", "blob", "epic/e:src/b/keep.txt"]),
        "good\n"
    );
    assert_eq!(
        stored(&ep, &["cat-file", "blob", "epic/e:src/b/new.txt"]),
        "good\n"
    );
    assert_eq!(
        std::fs::read_to_string(ep.epic_worktree().join("src/b/keep.txt")).expect("read"),
        "good\n"
    );
    // Every commit epic made since the start carries the start identity, unsigned.
    let who = stored(
        &ep,
        &["log", "--format=%an <%ae>|%cn <%ce>|%G?", "main..epic/e"],
    );
    assert!(!who.is_empty());
    for line in who.lines() {
        assert_eq!(
            line, "Test Person <test@example.com>|Test Person <test@example.com>|N",
            "{who}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configuration_there_at_the_start_keeps_working() {
    let ep = EpicFixture::new();
    let marks_dir = ep.fx.root.join("marks");
    std::fs::create_dir_all(&marks_dir).expect("marks");
    let cat = ep.fx.script(
        "cat-filter",
        &format!("touch '{}/cat'\ncat\n", marks_dir.display()),
    );
    let cat = cat.display().to_string();
    ep.fx
        .git_in(&ep.fx.repo, &["config", "filter.cat.clean", &cat]);
    ep.fx
        .git_in(&ep.fx.repo, &["config", "commit.gpgSign", "false"]);
    commit_on_main(&ep, &[(".gitattributes", "*.txt filter=cat\n")]);
    std::fs::remove_file(marks_dir.join("cat")).ok();
    // Sandbox off: with it on, the agent cannot write the repository's configuration at all
    // (sandbox.rs); this is what epic's own git does when the write lands.
    let mut config = ep.config();
    config.sandbox = SandboxMode::Off;
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:done"], "{:?}", outcome.report);
    assert_eq!(
        marks(&ep),
        ["cat"],
        "the start filter ran for epic's commit"
    );
    assert_eq!(
        stored(&ep, &["log", "-1", "--format=%an <%ae>", "epic/e"]).trim(),
        "Test Person <test@example.com>"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replaced_story_commit_merges_as_it_really_is_and_the_rerun_works() {
    let ep = EpicFixture::new();
    // a commits its work itself, then puts a hostile commit in its place with `git replace`:
    // same parent, the work plus a payload and an edit outside its perimeter.
    ep.hook(
        "a",
        r#"mkdir -p src/a; echo "a $(date +%s%N)" > src/a/done.txt
git add -A; git commit -qm 'a work'
work=$(git rev-parse HEAD)
echo 'rm -rf /' > payload.sh; echo hacked > README.md
git add -A
hostile=$(git commit-tree -p "$(git rev-parse HEAD^)" -m hostile "$(git write-tree)")
git reset -q --hard "$work"
git replace "$work" "$hostile"
echo done
exit 0
"#,
    );
    // Sandbox off: with it on, the agent cannot write the repository's configuration at all
    // (sandbox.rs); this is what epic's own git does when the write lands.
    let mut config = ep.config();
    config.sandbox = SandboxMode::Off;
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:done"], "{:?}", outcome.report);
    let files = |ep: &EpicFixture| -> Vec<String> {
        stored(ep, &["ls-tree", "-r", "--name-only", "epic/e"])
            .lines()
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(files(&ep), ["README.md", "src/a/done.txt"]);
    assert_eq!(
        stored(&ep, &["cat-file", "blob", "epic/e:README.md"]),
        "hello\n"
    );
    assert!(!ep.epic_worktree().join("payload.sh").exists());

    // The replacement is still there; a rerun with a well-behaved story works past it.
    let again = plan(&[("a", &[]), ("b", &[])]);
    // Sandbox off: with it on, the agent cannot write the repository's configuration at all
    // (sandbox.rs); this is what epic's own git does when the write lands.
    let mut config = ep.config();
    config.sandbox = SandboxMode::Off;
    let outcome = ep
        .run(&again, config, &Events::default())
        .await
        .expect("rerun");
    assert_eq!(
        statuses(&outcome),
        ["a:done", "b:done"],
        "{:?}",
        outcome.report
    );
    assert_eq!(
        files(&ep),
        ["README.md", "src/a/done.txt", "src/b/done.txt"]
    );
    assert!(!Path::new(&ep.epic_worktree().join("payload.sh")).exists());
}
