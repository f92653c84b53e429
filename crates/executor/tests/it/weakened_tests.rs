//! Whole runs whose coder weakens a test without deleting it or adding a skip marker: renamed to
//! a name that still matches a test pattern but no runner takes (`a_test.sh` to
//! `a_test.sh.off`), replaced by a symbolic link, emptied, or left with only comments. Each fails
//! the story, naming the file, unless its plan entry sets `tests_change`; then it merges.

use epic_story_plan::ValidPlan;

use crate::epic_support::{EpicFixture, commit_on_main, merges, plan, reason, statuses};
use crate::support::Events;

/// A plan of story `a` owning `src/a`, which holds a test and another script on `main`.
fn tested(ep: &EpicFixture, tests_change: bool) -> ValidPlan {
    commit_on_main(
        ep,
        &[
            ("src/a/tests/a_test.sh", "test 1 -eq 1\n"),
            ("src/a/checks/extra.sh", "true\n"),
        ],
    );
    let mut plan = plan(&[("a", &[])]).into_plan();
    plan.stories[0].tests_change = tests_change;
    plan.validate().expect("valid")
}

/// Runs story `a` with a coder that runs `hook`: without `tests_change` it fails with a reason
/// holding `found` and nothing merges; with it, it merges.
async fn fails_unless_allowed(hook: &str, found: &str) {
    let ep = EpicFixture::new();
    let plan = tested(&ep, false);
    ep.hook("a", hook);
    let outcome = ep
        .run(&plan, ep.config(), &Events::default())
        .await
        .expect("run");
    let why = reason(&outcome, 0);
    assert_eq!(statuses(&outcome), ["a:failed"], "{hook}: {why}");
    assert!(why.contains(found) && why.contains("tests_change"), "{why}");
    assert!(merges(&ep).is_empty(), "{:?}", ep.epic_log());
    assert_eq!(
        ep.fx
            .git_in(&ep.fx.repo, &["show", "epic/e:src/a/tests/a_test.sh"]),
        "test 1 -eq 1\n",
        "the test is on the epic branch as it was"
    );

    let ep = EpicFixture::new();
    let plan = tested(&ep, true);
    ep.hook("a", hook);
    let outcome = ep
        .run(&plan, ep.config(), &Events::default())
        .await
        .expect("run");
    assert_eq!(
        statuses(&outcome),
        ["a:done"],
        "{hook}: {:?}",
        outcome.report
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_renamed_to_a_name_no_runner_takes_fails_the_story() {
    fails_unless_allowed(
        "mv src/a/tests/a_test.sh src/a/tests/a_test.sh.off\n",
        "src/a/tests/a_test.sh: test file renamed to src/a/tests/a_test.sh.off",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_replaced_by_a_symlink_fails_the_story() {
    fails_unless_allowed(
        "rm -f src/a/tests/a_test.sh; ln -s ../checks/extra.sh src/a/tests/a_test.sh\n",
        "src/a/tests/a_test.sh: test file replaced by a symbolic link",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_emptied_fails_the_story() {
    fails_unless_allowed(
        ": > src/a/tests/a_test.sh\n",
        "src/a/tests/a_test.sh: test file emptied",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_reduced_to_comments_fails_the_story() {
    fails_unless_allowed(
        "printf '#!/bin/sh\\n# test 1 -eq 1\\n\\n' > src/a/tests/a_test.sh\n",
        "src/a/tests/a_test.sh: test file emptied",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_renamed_within_its_file_type_still_merges() {
    let ep = EpicFixture::new();
    let plan = tested(&ep, false);
    ep.hook(
        "a",
        "if [ -f src/a/tests/a_test.sh ]; then mv src/a/tests/a_test.sh src/a/tests/b_test.sh; fi\n",
    );
    let outcome = ep
        .run(&plan, ep.config(), &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:done"], "{:?}", outcome.report);
}
