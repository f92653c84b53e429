//! Containment: what an agent does after the checks, or writes into epic's own records, never
//! reaches the epic branch. A commit made on the story branch during the judge turn fails the
//! story (the merge takes the commit that was checked, never the branch's tip); a forged merge
//! journal never moves the epic branch; a story state edited to say "merged" does not make the
//! story merged.

use epic_executor::Event;

use crate::epic_support::{EpicFixture, plan, statuses};
use crate::support::Events;

/// The paths of the epic branch's tree.
fn epic_files(ep: &EpicFixture) -> Vec<String> {
    ep.fx
        .git_in(&ep.fx.repo, &["ls-tree", "-r", "--name-only", "epic/e"])
        .lines()
        .map(str::to_owned)
        .collect()
}

fn reason(outcome: &epic_executor::RunOutcome, index: usize) -> String {
    outcome.report.stories[index]
        .reason
        .clone()
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_made_on_the_story_branch_during_the_judge_turn_is_never_merged() {
    let ep = EpicFixture::new();
    // The judge commits a file outside a's perimeter on a's branch, then clears the story: the
    // diff it was shown was clean, the branch's tip is not.
    std::fs::write(
        ep.fx.root.join("hooks").join("a.judge.sh"),
        "mkdir -p src/b; echo sneaked > src/b/judge.txt; git add -A; git commit -qm sneak\n",
    )
    .expect("write the judge hook");
    let mut config = ep.config();
    config.judge = Some(ep.agent());
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed"], "{:?}", outcome.report);
    let why = reason(&outcome, 0);
    let found = ep.rev("story/e/a");
    let checked = ep.rev("story/e/a~1");
    assert!(
        why.contains("moved after") && why.contains(&found) && why.contains(&checked),
        "{why}"
    );
    assert_eq!(epic_files(&ep), ["README.md"], "nothing of a was merged");
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
    let outcome = ep
        .run(&plan, ep.config(), &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:done", "b:failed"]);
    let forged = ep.rev("story/e/b");
    assert!(ep.dir().merge_journal().exists(), "the forged journal is left");
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
            .git_in(&ep.fx.repo, &["merge-base", "--is-ancestor", &proven, "epic/e"])
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_story_state_edited_to_merged_runs_again_and_its_dependent_gets_its_work() {
    let ep = EpicFixture::new();
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

    // A hostile process between the runs: a's state says merged, its branch and worktree gone.
    let state = ep.dir().story_state("a").expect("state path");
    let text = std::fs::read_to_string(&state).expect("a's state");
    assert!(text.contains("\"failed\""), "{text}");
    std::fs::write(&state, text.replace("\"failed\"", "\"merged\"")).expect("forge a's state");
    let worktree = ep.fx.root.join("repo.worktrees/e/a");
    ep.fx.git_in(
        &ep.fx.repo,
        &["worktree", "remove", "--force", &worktree.display().to_string()],
    );
    ep.fx.git_in(&ep.fx.repo, &["branch", "-D", "story/e/a"]);

    let events = Events::default();
    let rerun = ep.run(&plan, ep.config(), &events).await.expect("rerun");
    assert_eq!(statuses(&rerun), ["a:done", "b:done"]);
    let files = epic_files(&ep);
    assert!(files.iter().any(|file| file == "src/a/done.txt"), "{files:?}");
    assert!(
        ep.fx
            .git_in(&ep.fx.repo, &["ls-tree", "-r", "--name-only", "story/e/b"])
            .contains("src/a/done.txt"),
        "b was built on a's work"
    );
    assert!(
        events.steps().iter().any(|event| matches!(
            event,
            Event::RunNote { message } if message.contains("story 'a'") && message.contains("merge commit")
        )),
        "a run note says why a runs again"
    );
}
