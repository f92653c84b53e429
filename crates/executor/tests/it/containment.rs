//! Containment: what an agent does after the checks, or writes into epic's own records, never
//! reaches the epic branch. A commit made on the story branch during the judge turn is put back
//! (the merge takes the commit that was checked, never the branch's tip); a forged merge
//! journal never moves the epic branch; a story state edited to say "merged" does not make the
//! story merged.

use epic_events::Event;
use epic_process::sandbox::SandboxMode;
use epic_state_store::{StoryStage, StoryState};

use crate::epic_support::{EpicFixture, epic_files, plan, reason, statuses};
use crate::support::Events;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_made_on_the_story_branch_during_the_judge_turn_is_never_merged() {
    let ep = EpicFixture::new();
    // The judge commits a file outside a's perimeter on a's branch, leaves another uncommitted,
    // then clears the story: the diff it was shown was clean, the branch's tip is not. A
    // judge only reads: everything its turn changed is put back, and the commit it cleared is
    // the one merged. (A branch that still moved after that, by a process outside any turn,
    // fails the story: `Failure::BranchMovedAfterChecks`.)
    std::fs::write(
        ep.fx.root.join("hooks").join("a.judge.sh"),
        "mkdir -p src/b; echo sneaked > src/b/judge.txt; git add -A; git commit -qm sneak\n\
         echo left > src/a/judge-notes.md\n",
    )
    .expect("write the judge hook");
    let mut config = ep.config();
    config.judge = Some(ep.agent().into());
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &events)
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:done"], "{}", reason(&outcome, 0));
    assert_eq!(epic_files(&ep), ["README.md", "src/a/done.txt"]);
    let notes: Vec<String> = events
        .steps()
        .into_iter()
        .filter_map(|event| match event {
            Event::Note { message, .. } if message.contains("discarded") => Some(message),
            _ => None,
        })
        .collect();
    assert_eq!(
        notes,
        [
            "the judge turn changed src/a/judge-notes.md, src/b/judge.txt; discarded: a judge \
          only reads the work it checks"
        ]
    );
    let log = ep.fx.git_in(&ep.fx.repo, &["log", "--format=%s", "epic/e"]);
    assert!(!log.contains("sneak"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_merge_journal_never_moves_the_epic_branch() {
    let ep = EpicFixture::new();
    // b's coder commits its own work and writes a merge journal naming that commit as the
    // checkpoint, then fails: its journal outlives the run.
    ep.hook(
        "b",
        r#"mkdir -p src/b; echo forged > src/b/forged.txt; git add -A; git commit -qm forged
printf '{"version":1,"data":{"story":"b","checkpoint":"%s"}}' "$(git rev-parse HEAD)" > "$ROOT/repo/.git/epic/e/merging.json"
exit 1
"#,
    );
    let plan = plan(&[("a", &[]), ("b", &["a"])]);
    // With the sandbox off: in it, the state directory is read-only and the journal is never
    // written (`sandbox::sandboxed_writes_outside_the_own_worktree_fail_and_the_story_merges`).
    // This holds what a run does with a journal that landed.
    let mut config = ep.config();
    config.sandbox = SandboxMode::Off;
    let outcome = ep
        .run(&plan, config, &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:done", "b:failed"]);
    // The failed task's worktree went back to its checkpoint; the agent's commit is the one
    // the story branch was at before.
    let forged = ep.rev("story/e/b@{1}");
    assert_eq!(
        ep.fx
            .git_in(&ep.fx.repo, &["log", "-1", "--format=%s", &forged])
            .trim(),
        "forged"
    );
    // The guard on epic's files undid the journal the turn wrote (guarded_files.rs); one
    // written outside any turn (by a process that outlived it, with the sandbox off) is what the
    // recovery itself must refuse.
    assert!(
        !ep.dir().merge_journal().exists(),
        "the guard removed the journal the agent wrote"
    );
    std::fs::write(
        ep.dir().merge_journal(),
        format!(r#"{{"version":1,"data":{{"story":"b","checkpoint":"{forged}"}}}}"#),
    )
    .expect("plant the forged journal");
    let proven = ep.rev("epic/e");

    std::fs::remove_file(ep.fx.root.join("hooks").join("b.sh")).expect("remove b's hook");
    let events = Events::default();
    let rerun = ep.run(&plan, ep.config(), &events).await.expect("rerun");
    assert!(rerun.all_done(), "{:?}", statuses(&rerun));
    assert_ne!(ep.rev("epic/e"), forged);
    assert!(
        !ep.epic_log().iter().any(|subject| subject == "forged"),
        "the forged commit never became the epic head: {:?}",
        ep.epic_log()
    );
    assert!(
        ep.fx
            .git_in(
                &ep.fx.repo,
                &["merge-base", "--is-ancestor", &proven, "epic/e"]
            )
            .is_empty(),
        "the epic branch kept a's merge"
    );
    assert!(
        events.steps().iter().any(|event| matches!(
            event,
            Event::RunNote { message } if message.contains("merge journal") && message.contains(&forged)
        )),
        "the ignored journal is reported"
    );
    assert!(!ep.dir().merge_journal().exists());
}

/// Runs a, then b after it, with a's first turn failing: a fails, b is skipped. Then, as a
/// hostile process between the runs would, edits a's state to say merged, recording `merge`
/// as its merge commit, and removes a's worktree and branch.
async fn forge_a_merged(ep: &EpicFixture, merge: Option<String>) -> epic_story_plan::ValidPlan {
    ep.hook(
        "a",
        "if [ ! -f \"$ROOT/a-once\" ]; then touch \"$ROOT/a-once\"; exit 1; fi\n",
    );
    let plan = plan(&[("a", &[]), ("b", &["a"])]);
    let outcome = ep
        .run(&plan, ep.config(), &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed", "b:skipped"]);
    let path = ep.dir().story_state("a").expect("state path");
    let mut state: StoryState = epic_state_store::load(&path)
        .expect("a's state parses")
        .expect("a's state exists");
    assert_eq!(state.status, StoryStage::Failed);
    state.status = StoryStage::Merged;
    state.merge = merge;
    epic_state_store::save(&path, &state).expect("forge a's state");
    let worktree = ep.fx.root.join("repo.worktrees/e/a");
    ep.fx.git_in(
        &ep.fx.repo,
        &[
            "worktree",
            "remove",
            "--force",
            &worktree.display().to_string(),
        ],
    );
    ep.fx.git_in(&ep.fx.repo, &["branch", "-D", "story/e/a"]);
    plan
}

/// Reruns the plan with well-behaved agents: a runs again (a note says why), merges, and b is
/// built on its work.
async fn rerun_runs_a_again(ep: &EpicFixture, plan: &epic_story_plan::ValidPlan, why: &str) {
    let events = Events::default();
    let rerun = ep.run(plan, ep.config(), &events).await.expect("rerun");
    assert_eq!(statuses(&rerun), ["a:done", "b:done"]);
    let files = epic_files(ep);
    assert!(
        files.iter().any(|file| file == "src/a/done.txt"),
        "{files:?}"
    );
    assert!(
        ep.fx
            .git_in(&ep.fx.repo, &["ls-tree", "-r", "--name-only", "story/e/b"])
            .contains("src/a/done.txt"),
        "b was built on a's work"
    );
    assert!(
        events.steps().iter().any(|event| matches!(
            event,
            Event::RunNote { message } if message.contains("story 'a'") && message.contains(why)
        )),
        "a run note says why a runs again"
    );
    let state: StoryState = epic_state_store::load(ep.dir().story_state("a").expect("path"))
        .expect("parses")
        .expect("exists");
    let merge = state.merge.expect("a's merge commit is recorded");
    assert!(ep.epic_log().contains(&"e: merge story a".to_owned()));
    assert_eq!(
        ep.fx
            .git_in(&ep.fx.repo, &["log", "-1", "--format=%s", &merge])
            .trim(),
        "e: merge story a"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_story_state_edited_to_merged_runs_again_and_its_dependent_gets_its_work() {
    let ep = EpicFixture::new();
    let plan = forge_a_merged(&ep, None).await;
    rerun_runs_a_again(&ep, &plan, "records no merge commit").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_story_state_naming_a_merge_commit_off_the_epic_branch_runs_again() {
    let ep = EpicFixture::new();
    // A commit of the hostile process's own, on no branch's first-parent line of the epic.
    let side = ep
        .fx
        .git_in(
            &ep.fx.repo,
            &["commit-tree", "main^{tree}", "-p", "main", "-m", "side"],
        )
        .trim()
        .to_owned();
    let plan = forge_a_merged(&ep, Some(side.clone())).await;
    rerun_runs_a_again(&ep, &plan, &side).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journal_epic_cannot_have_written_is_refused_and_the_branch_stays() {
    let ep = EpicFixture::new();
    let plan = plan(&[("a", &[])]);
    let outcome = ep
        .run(&plan, ep.config(), &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:done"]);
    // A commit on top of the proven head, and a journal naming another checkpoint: undoing it
    // would move the branch where nothing proved it belongs.
    let epic = ep.epic_worktree();
    std::fs::write(epic.join("extra.txt"), "extra\n").expect("write");
    ep.fx.git_in(&epic, &["add", "-A"]);
    ep.fx.git_in(&epic, &["commit", "-qm", "extra"]);
    let head = ep.rev("epic/e");
    let forged = ep.rev("main");
    std::fs::write(
        ep.dir().merge_journal(),
        format!(r#"{{"version":1,"data":{{"story":"a2","checkpoint":"{forged}"}}}}"#),
    )
    .expect("forge the journal");
    let error = ep
        .run(&plan, ep.config(), &Events::default())
        .await
        .expect_err("refused");
    let message = error.to_string();
    assert!(
        matches!(error, epic_branch::RunError::MergeJournalRefused { .. }),
        "{message}"
    );
    assert!(
        message.contains(&forged) && message.contains(&head) && message.contains("did not move"),
        "{message}"
    );
    assert_eq!(ep.rev("epic/e"), head, "the branch was not moved");
    assert!(
        ep.dir().merge_journal().exists(),
        "the journal is left for a person to check"
    );
}

/// The first-parent subjects of the epic branch, newest first.
fn first_parents(ep: &EpicFixture) -> Vec<String> {
    ep.fx
        .git_in(
            &ep.fx.repo,
            &["log", "--first-parent", "--format=%s", "epic/e"],
        )
        .lines()
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_epic_branch_moved_during_a_turn_is_put_back_and_the_run_goes_on() {
    let ep = EpicFixture::new();
    // a's coder points the epic branch at a commit of its own, on top of the proven head; b's
    // (the last story) amends the epic head after a's merge and then fails.
    ep.hook(
        "a",
        "mkdir -p src/a; echo unproven > src/a/wip.txt; git add -A; git commit -qm wip; \
         git update-ref refs/heads/epic/e HEAD\n",
    );
    ep.hook(
        "b",
        "git -C \"$ROOT/repo.worktrees/e/_epic\" commit -q --amend --allow-empty -m amended; exit 1\n",
    );
    let plan = plan(&[("a", &[]), ("b", &["a"])]);
    let events = Events::default();
    // Sandbox off: with it on, b cannot write the epic worktree (sandbox.rs); this is what epic
    // does when the amend lands, and a's `update-ref` (in it, refs are read-only to turns).
    let mut config = ep.config();
    config.sandbox = SandboxMode::Off;
    let outcome = ep.run(&plan, config, &events).await.expect("run");
    assert_eq!(statuses(&outcome), ["a:done", "b:failed"]);
    assert_eq!(first_parents(&ep), ["e: merge story a", "initial"]);
    let state: StoryState = epic_state_store::load(ep.dir().story_state("a").expect("path"))
        .expect("parses")
        .expect("exists");
    assert_eq!(
        Some(ep.rev("epic/e")),
        state.merge,
        "the head is a's proven merge"
    );
    let steps = events.steps();
    assert!(
        steps.iter().any(|event| matches!(
            event,
            Event::Note { story, message }
                if story == "a" && message.contains("found before merging story 'a'")
                    && message.contains("something other than epic moved it")
        )),
        "a note says the branch was put back before a's merge"
    );
    assert!(
        steps.iter().any(|event| matches!(
            event,
            Event::RunNote { message } if message.contains("found when the run ended")
        )),
        "a run note says the branch was put back at the end"
    );
    assert_eq!(
        ep.fx
            .git_in(&ep.epic_worktree(), &["status", "--porcelain"]),
        "",
        "the epic worktree is clean"
    );
    std::fs::remove_file(ep.fx.root.join("hooks").join("b.sh")).expect("remove b's hook");
    let rerun = ep.run(&plan, ep.config(), &Events::default()).await;
    assert!(rerun.expect("rerun").all_done());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_epic_branch_moved_between_runs_is_refused_with_what_to_run() {
    let ep = EpicFixture::new();
    let plan = plan(&[("a", &[]), ("b", &["a"])]);
    ep.hook("b", "exit 1\n");
    let outcome = ep
        .run(&plan, ep.config(), &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:done", "b:failed"]);
    let proven = ep.rev("epic/e");
    // Between runs, the head is amended with content nothing judged.
    let epic = ep.epic_worktree();
    std::fs::write(epic.join("README.md"), "amended\n").expect("write");
    ep.fx
        .git_in(&epic, &["commit", "-qam", "amended", "--amend"]);
    let amended = ep.rev("epic/e");
    std::fs::remove_file(ep.fx.root.join("hooks").join("b.sh")).expect("remove b's hook");

    let error = ep
        .run(&plan, ep.config(), &Events::default())
        .await
        .expect_err("refused");
    let message = error.to_string();
    assert!(
        matches!(error, epic_branch::RunError::EpicBranchMoved { .. }),
        "{message}"
    );
    let put_back = format!("git -C {} reset --hard {proven}", epic.display());
    assert!(
        message.contains(&amended)
            && message.contains(&put_back)
            && message.contains("proven.json"),
        "{message}"
    );
    assert_eq!(
        ep.rev("epic/e"),
        amended,
        "refused, the branch is not moved"
    );

    // As the message says.
    ep.fx.git_in(&epic, &["reset", "-q", "--hard", &proven]);
    let rerun = ep
        .run(&plan, ep.config(), &Events::default())
        .await
        .expect("rerun");
    assert!(rerun.all_done(), "{:?}", statuses(&rerun));
    assert_eq!(
        first_parents(&ep),
        ["e: merge story b", "e: merge story a", "initial"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_epic_branch_kept_as_moved_builds_on_it_once_the_record_is_removed() {
    let ep = EpicFixture::new();
    let plan = plan(&[("a", &[]), ("b", &["a"])]);
    ep.hook("b", "exit 1\n");
    let outcome = ep
        .run(&plan, ep.config(), &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:done", "b:failed"]);
    let epic = ep.epic_worktree();
    std::fs::write(epic.join("NOTES.md"), "mine\n").expect("write");
    ep.fx.git_in(&epic, &["add", "-A"]);
    ep.fx
        .git_in(&epic, &["commit", "-qm", "a person's own commit"]);
    std::fs::remove_file(ep.fx.root.join("hooks").join("b.sh")).expect("remove b's hook");
    ep.run(&plan, ep.config(), &Events::default())
        .await
        .expect_err("refused until the person says which");
    std::fs::remove_file(ep.dir().proven_head()).expect("remove proven.json");
    let rerun = ep
        .run(&plan, ep.config(), &Events::default())
        .await
        .expect("rerun");
    assert!(rerun.all_done(), "{:?}", statuses(&rerun));
    assert_eq!(
        first_parents(&ep),
        [
            "e: merge story b",
            "a person's own commit",
            "e: merge story a",
            "initial"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_that_redirects_the_git_file_leaves_the_epic_worktree_alone() {
    let ep = EpicFixture::new();
    // The judge points the story worktree's `.git` at the epic worktree's registration: putting
    // back what it changed would otherwise run git on the epic worktree's branch and index.
    std::fs::write(
        ep.fx.root.join("hooks").join("a.judge.sh"),
        "echo \"gitdir: $(git rev-parse --git-common-dir)/worktrees/_epic\" > \"$EPIC_WORKTREE/.git\"\n",
    )
    .expect("write the judge hook");
    let mut config = ep.config();
    config.judge = Some(ep.agent().into());
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed"], "{:?}", outcome.report);
    let why = reason(&outcome, 0);
    assert!(
        why.contains("is linked to the worktree") && why.contains("_epic"),
        "{why}"
    );
    let epic = ep.epic_worktree();
    assert_eq!(
        ep.fx
            .git_in(&epic, &["rev-parse", "--abbrev-ref", "HEAD"])
            .trim(),
        "epic/e",
        "the epic worktree is still on the epic branch"
    );
    assert_eq!(ep.fx.git_in(&epic, &["status", "--porcelain"]), "");
    assert_eq!(epic_files(&ep), ["README.md"]);
}
