//! The guard on epic's own files around every agent turn: an agent that changes the
//! repository's configuration, `info/`, a hook, another worktree's registration, epic's state
//! (a story's state, the merge journal, the proven head, the lock) or the plan files in the
//! main checkout fails its story, naming the file; the file is put back, and a rerun with a
//! well-behaved agent succeeds. Gates and setup commands (which run the story's code) are
//! checked too: one that changes those files is red, naming them.
//!
//! These are the sandbox-off behaviour: with the sandbox on, agents cannot write these places
//! at all (`sandbox.rs`). Each test builds its configuration with [`sandbox_off`].

use std::path::{Path, PathBuf};

use epic_events::Event;
use epic_executor::{RunConfig, RunOutcome};
use epic_process::sandbox::SandboxMode;

use crate::epic_support::{EpicFixture, merges, plan, reason, statuses};
use crate::support::Events;

/// `config` with the sandbox off: these tests are about what happens when the write lands.
fn sandbox_off(mut config: RunConfig) -> RunConfig {
    config.sandbox = SandboxMode::Off;
    config
}

/// Runs story `a` alone; its first coder turn runs `hostile` (sh, in its worktree, where `$GIT`
/// is the repository's git directory) before doing its work. The outcome.
async fn tamper_once(ep: &EpicFixture, config: RunConfig, hostile: &str) -> RunOutcome {
    ep.hook(
        "a",
        &format!(
            "if [ ! -f \"$ROOT/tampered\" ]; then\n  touch \"$ROOT/tampered\"\n  \
             GIT=\"$ROOT/repo/.git\"\n{hostile}\nfi\n"
        ),
    );
    ep.run(&plan(&[("a", &[])]), config, &Events::default())
        .await
        .expect("run")
}

/// Asserts that story `a` failed for changing `file` as `kind` (`modified`, `added`,
/// `removed`).
fn failed_naming(outcome: &RunOutcome, file: &Path, kind: &str) {
    assert_eq!(statuses(outcome), ["a:failed"], "{:?}", outcome.report);
    let reason = reason(outcome, 0);
    assert!(
        reason.contains("changed files that are epic's")
            && reason.contains(&format!("{}: {kind}", file.display())),
        "{reason}"
    );
    assert!(reason.contains("put each back"), "{reason}");
}

/// Reruns story `a` with the well-behaved agent (the hook runs once): it merges, with its work.
async fn rerun_succeeds(ep: &EpicFixture, config: RunConfig) {
    let rerun = ep
        .run(&plan(&[("a", &[])]), config, &Events::default())
        .await
        .expect("rerun");
    assert!(rerun.all_done(), "{:?}", rerun.report);
    assert_eq!(merges(ep), ["e: merge story a"]);
    let files = ep.fx.git_in(
        &ep.fx.repo,
        &["ls-tree", "-r", "--name-only", "epic/e", "src/a"],
    );
    assert!(files.contains("src/a/done.txt"), "{files}");
}

fn git_dir(ep: &EpicFixture) -> PathBuf {
    ep.fx.repo.join(".git")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_repository_config_is_put_back() {
    let ep = EpicFixture::new();
    let config_file = git_dir(&ep).join("config");
    let before = read(&config_file);
    let config = sandbox_off(ep.config());
    let outcome = tamper_once(
        &ep,
        config.clone(),
        "git config --file \"$GIT/config\" user.name Mallory; \
         git config --file \"$GIT/config\" core.fsmonitor \"touch $ROOT/fsmonitor-ran\"",
    )
    .await;
    failed_naming(&outcome, &config_file, "modified");
    assert_eq!(read(&config_file), before);
    rerun_succeeds(&ep, config).await;
    assert!(!ep.fx.root.join("fsmonitor-ran").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worktree_config_is_put_back() {
    let ep = EpicFixture::new();
    let worktree_config = git_dir(&ep).join("worktrees/a/config.worktree");
    // Fresh worktrees: the registration is named after the story.
    let config = sandbox_off(ep.fresh_config());
    let outcome = tamper_once(
        &ep,
        config.clone(),
        "printf '[user]\\n\\tname = Mallory\\n' > \"$(git rev-parse --git-dir)/config.worktree\"",
    )
    .await;
    failed_naming(&outcome, &worktree_config, "added");
    assert!(!worktree_config.exists());
    rerun_succeeds(&ep, config).await;
}

/// Item 12 of the containment issue too: owned paths hidden by `info/exclude` were never
/// committed, and every rerun failed the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn info_exclude_hiding_owned_paths_is_put_back() {
    let ep = EpicFixture::new();
    let exclude = git_dir(&ep).join("info/exclude");
    let before = std::fs::read(&exclude).ok();
    let config = sandbox_off(ep.config());
    let outcome = tamper_once(
        &ep,
        config.clone(),
        "mkdir -p \"$GIT/info\"; printf 'src/a/\\n' >> \"$GIT/info/exclude\"",
    )
    .await;
    let kind = if before.is_some() {
        "modified"
    } else {
        "added"
    };
    failed_naming(&outcome, &exclude, kind);
    assert_eq!(std::fs::read(&exclude).ok(), before);
    rerun_succeeds(&ep, config).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn info_attributes_are_put_back() {
    let ep = EpicFixture::new();
    let attributes = git_dir(&ep).join("info/attributes");
    let config = sandbox_off(ep.config());
    let outcome = tamper_once(
        &ep,
        config.clone(),
        "mkdir -p \"$GIT/info\"; printf '* filter=evil\\n' > \"$GIT/info/attributes\"; \
         git config --file \"$GIT/config\" filter.evil.clean \"sh -c 'touch $ROOT/filter-ran; cat'\"",
    )
    .await;
    failed_naming(&outcome, &attributes, "added");
    assert!(!attributes.exists());
    rerun_succeeds(&ep, config).await;
    assert!(!ep.fx.root.join("filter-ran").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_planted_hook_is_removed() {
    let ep = EpicFixture::new();
    let hook = git_dir(&ep).join("hooks/post-commit");
    let config = sandbox_off(ep.config());
    let outcome = tamper_once(
        &ep,
        config.clone(),
        "mkdir -p \"$GIT/hooks\"; printf '#!/bin/sh\\ntouch \"%s/hook-ran\"\\n' \"$ROOT\" > \
         \"$GIT/hooks/post-commit\"; chmod +x \"$GIT/hooks/post-commit\"",
    )
    .await;
    failed_naming(&outcome, &hook, "added");
    assert!(!hook.exists());
    rerun_succeeds(&ep, config).await;
    assert!(!ep.fx.root.join("hook-ran").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_worktrees_registration_is_put_back() {
    let ep = EpicFixture::new();
    let head = git_dir(&ep).join("worktrees/_epic/HEAD");
    let config = sandbox_off(ep.config());
    let outcome = tamper_once(
        &ep,
        config.clone(),
        "echo 'ref: refs/heads/main' > \"$GIT/worktrees/_epic/HEAD\"",
    )
    .await;
    failed_naming(&outcome, &head, "modified");
    assert_eq!(read(&head).trim(), "ref: refs/heads/epic/e");
    rerun_succeeds(&ep, config).await;
    assert_eq!(
        ep.fx
            .git_in(&ep.fx.repo, &["log", "--format=%s", "-1", "main"])
            .trim(),
        "initial",
        "nothing merged onto main"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_story_state_is_put_back() {
    let ep = EpicFixture::new();
    let state = ep.dir().story_state("a").expect("id");
    let config = sandbox_off(ep.config());
    let outcome = tamper_once(
        &ep,
        config.clone(),
        "sed -i 's/\"started\"/\"merged\"/' \"$GIT/epic/e/stories/a.json\"",
    )
    .await;
    failed_naming(&outcome, &state, "modified");
    assert!(read(&state).contains("\"failed\""), "{}", read(&state));
    rerun_succeeds(&ep, config).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_merge_journal_is_removed() {
    let ep = EpicFixture::new();
    let journal = ep.dir().merge_journal();
    let config = sandbox_off(ep.config());
    let outcome = tamper_once(
        &ep,
        config.clone(),
        "git commit -q --allow-empty -m forged; \
         printf '{\"version\":1,\"data\":{\"story\":\"a\",\"checkpoint\":\"%s\"}}' \
         \"$(git rev-parse HEAD)\" > \"$GIT/epic/e/merging.json\"",
    )
    .await;
    failed_naming(&outcome, &journal, "added");
    assert!(!journal.exists());
    rerun_succeeds(&ep, config).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_proven_head_is_put_back() {
    let ep = EpicFixture::new();
    let proven = ep.dir().proven_head();
    let config = sandbox_off(ep.config());
    let outcome = tamper_once(
        &ep,
        config.clone(),
        "git commit -q --allow-empty -m forged; git rev-parse HEAD > \"$ROOT/forged\"; \
         printf '{\"version\":1,\"data\":{\"commit\":\"%s\"}}' \"$(git rev-parse HEAD)\" \
         > \"$GIT/epic/e/proven.json\"",
    )
    .await;
    failed_naming(&outcome, &proven, "modified");
    let forged = read(&ep.fx.root.join("forged"));
    assert!(!read(&proven).contains(forged.trim()), "{}", read(&proven));
    assert!(read(&proven).contains(&ep.rev("epic/e")));
    rerun_succeeds(&ep, config).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_lock_is_put_back() {
    let ep = EpicFixture::new();
    let lock = ep.dir().lock();
    let config = sandbox_off(ep.config());
    let outcome = tamper_once(
        &ep,
        config.clone(),
        "rm -f \"$GIT/epic/e/lock\"; test -e \"$GIT/epic/e/lock\" && exit 3",
    )
    .await;
    failed_naming(&outcome, &lock, "removed");
    assert!(lock.exists());
    rerun_succeeds(&ep, config).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plan_file_and_epic_toml_in_the_main_checkout_are_put_back() {
    let ep = EpicFixture::new();
    let plan_file = ep.fx.repo.join("plan.md");
    let epic_toml = ep.fx.repo.join("epic.toml");
    std::fs::write(&plan_file, "# the plan\n").expect("write the plan file");
    let mut config = sandbox_off(ep.config());
    config.guarded_files = vec![plan_file.clone(), epic_toml.clone()];
    let outcome = tamper_once(
        &ep,
        config.clone(),
        "printf 'setup = [\"touch %s/setup-ran\"]\\n' \"$ROOT\" > \"$ROOT/repo/epic.toml\"; \
         echo '# rewritten' > \"$ROOT/repo/plan.md\"",
    )
    .await;
    failed_naming(&outcome, &epic_toml, "added");
    failed_naming(&outcome, &plan_file, "modified");
    assert!(!epic_toml.exists());
    assert_eq!(read(&plan_file), "# the plan\n");
    rerun_succeeds(&ep, config).await;
}

/// A reviewer's turn is guarded like a coder's, and the reviewer's failure is not left out of
/// its round as a reviewer that merely failed would be.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reviewer_that_changes_the_config_fails_the_story() {
    let ep = EpicFixture::new();
    let config_file = git_dir(&ep).join("config");
    let before = read(&config_file);
    let reviewer = ep.fx.agent(
        "reviewer",
        "cat > /dev/null\nif [ ! -f \"$ROOT/tampered\" ]; then touch \"$ROOT/tampered\"; \
         git config --file \"$ROOT/repo/.git/config\" user.name Mallory; fi\n\
         echo '{\"clean\":true,\"issues\":[]}'\n",
    );
    let mut config = sandbox_off(ep.config());
    config.reviewers = vec![reviewer.into()];
    let outcome = ep
        .run(&plan(&[("a", &[])]), config.clone(), &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed"], "{:?}", outcome.report);
    let reason = reason(&outcome, 0);
    assert!(
        reason.contains("a reviewer turn changed files")
            && reason.contains(&format!("{}: modified", config_file.display())),
        "{reason}"
    );
    assert_eq!(read(&config_file), before);
    rerun_succeeds(&ep, config).await;
}

/// Turns of several stories run at once, and the guard keeps one snapshot: a change is found
/// when the first turn ends after it and fails that turn's story, whose reason says that a
/// concurrent turn may have made it. Here b changes the configuration while a's turn runs and
/// waits until a's turn has ended and the change is undone: a fails, b is done.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_during_concurrent_turns_fails_the_turn_that_ends_first_and_says_so() {
    let ep = EpicFixture::new();
    let config_file = git_dir(&ep).join("config");
    let before = read(&config_file);
    ep.hook(
        "a",
        r#"if [ ! -f "$ROOT/a-once" ]; then
  touch "$ROOT/a-once" "$ROOT/a-started"
  n=0; while [ ! -e "$ROOT/b-tampered" ] && [ $n -lt 500 ]; do sleep 0.05; n=$((n+1)); done
fi
"#,
    );
    ep.hook(
        "b",
        r#"if [ ! -f "$ROOT/b-once" ]; then
  touch "$ROOT/b-once"
  n=0; while [ ! -e "$ROOT/a-started" ] && [ $n -lt 500 ]; do sleep 0.05; n=$((n+1)); done
  git config --file "$ROOT/repo/.git/config" user.name Mallory
  touch "$ROOT/b-tampered"
  n=0; while grep -q Mallory "$ROOT/repo/.git/config" && [ $n -lt 500 ]; do sleep 0.05; n=$((n+1)); done
fi
"#,
    );
    let mut config = sandbox_off(ep.config());
    config.concurrency = 2;
    let plan = plan(&[("a", &[]), ("b", &[])]);
    let outcome = ep
        .run(&plan, config.clone(), &Events::default())
        .await
        .expect("run");
    assert_eq!(
        statuses(&outcome),
        ["a:failed", "b:done"],
        "{:?}",
        outcome.report
    );
    let reason = reason(&outcome, 0);
    assert!(
        reason.contains(&format!("{}: modified", config_file.display()))
            && reason.contains("Another agent turn, gate or setup command ran at the same time"),
        "{reason}"
    );
    assert_eq!(read(&config_file), before);
    let rerun = ep
        .run(&plan, config, &Events::default())
        .await
        .expect("rerun");
    assert!(rerun.all_done(), "{:?}", rerun.report);
    let mut merged = merges(&ep);
    merged.sort();
    assert_eq!(merged, ["e: merge story a", "e: merge story b"]);
}

/// The judge's turn is guarded like the coder's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_that_plants_a_hook_fails_the_story() {
    let ep = EpicFixture::new();
    let hook = git_dir(&ep).join("hooks/pre-merge-commit");
    ep.hook(
        "a.judge",
        "if [ ! -f \"$ROOT/tampered\" ]; then touch \"$ROOT/tampered\"; \
         mkdir -p \"$ROOT/repo/.git/hooks\"; printf '#!/bin/sh\\nexit 1\\n' > \
         \"$ROOT/repo/.git/hooks/pre-merge-commit\"; chmod +x \"$ROOT/repo/.git/hooks/pre-merge-commit\"; fi\n",
    );
    let mut config = sandbox_off(ep.config());
    config.judge = Some(ep.agent().into());
    let outcome = ep
        .run(&plan(&[("a", &[])]), config.clone(), &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed"], "{:?}", outcome.report);
    let reason = reason(&outcome, 0);
    assert!(
        reason.contains("a judge turn changed files")
            && reason.contains(&format!("{}: added", hook.display())),
        "{reason}"
    );
    assert!(!hook.exists());
    rerun_succeeds(&ep, config).await;
}

/// A gate runs the story's code: code that changes epic's files makes the gate red, naming the
/// file, which is put back. Here the coder's first turn leaves a script the gate runs; on the
/// next round it removes it, the gate is green, and the story merges.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gate_running_code_that_changes_the_config_is_red_and_the_config_put_back() {
    let ep = EpicFixture::new();
    let config_file = git_dir(&ep).join("config");
    let before = read(&config_file);
    ep.hook(
        "a",
        r#"if [ ! -f "$ROOT/once" ]; then
  touch "$ROOT/once"; mkdir -p src/a; echo 'git config user.name Mallory' > src/a/evil.sh
else
  rm -f src/a/evil.sh
fi
"#,
    );
    let mut config = sandbox_off(ep.config());
    config.gates = vec!["if [ -f src/a/evil.sh ]; then sh src/a/evil.sh; fi".to_owned()];
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &events)
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:done"], "{:?}", outcome.report);
    assert_eq!(read(&config_file), before);
    assert!(
        events.steps().iter().any(|event| matches!(
            event,
            Event::GateFailed { status, .. } if status == "changed files that are epic's"
        )),
        "{:?}",
        events.steps()
    );
    let files = ep.fx.git_in(
        &ep.fx.repo,
        &["ls-tree", "-r", "--name-only", "epic/e", "src/a"],
    );
    assert!(!files.contains("evil.sh"), "{files}");
}

/// A setup command is checked like a gate: one that changes the repository's configuration
/// fails the story's setup, naming the file, which is put back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_setup_command_that_changes_the_config_fails_the_setup() {
    let ep = EpicFixture::new();
    let config_file = git_dir(&ep).join("config");
    let before = read(&config_file);
    let mut config = sandbox_off(ep.config());
    config.setup = vec!["git config core.hooksPath .husky".to_owned()];
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed"], "{:?}", outcome.report);
    let reason = reason(&outcome, 0);
    assert!(
        reason.starts_with("worktree setup failed")
            && reason.contains(&format!("`{}` (modified)", config_file.display())),
        "{reason}"
    );
    assert_eq!(read(&config_file), before);
}
