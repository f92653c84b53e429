//! Agents that break the rules: committing on their own, switching branches.

use epic_events::Event;
use epic_executor::StoryError;

use crate::support::{Events, Fixture, Run, task_list};

#[tokio::test]
async fn an_agent_that_commits_on_its_own_is_tolerated() {
    let fixture = Fixture::new();
    let coder = fixture.agent(
        "coder",
        &format!(
            "cat >/dev/null\ncase \"$EPIC_ROLE\" in\nplanner) echo '{}' ;;\n*) mkdir -p src; echo x > \"src/$EPIC_TASK.txt\"; git add -A && git commit -q -m \"agent commit $EPIC_TASK\"; echo committed ;;\nesac\n",
            task_list(&["one", "two"])
        ),
    );
    let events = Events::default();
    let done = Run::new(coder)
        .on(&fixture, &events)
        .await
        .result
        .expect("done");
    assert_eq!(done.committed, ["one", "two"]);
    assert_eq!(
        fixture.story_commits(),
        ["agent commit one", "agent commit two"]
    );
    assert!(
        fixture
            .checkpoint()
            .expect("checkpoint")
            .contains("- [x] two")
    );
    let commits: Vec<Option<String>> = events
        .steps()
        .iter()
        .filter_map(|event| match event {
            Event::TaskCommitted { commit, .. } => Some(commit.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(commits, [None, None], "nothing was left to commit");
}

#[tokio::test]
async fn an_agent_that_switches_branches_fails_the_story_and_nothing_is_committed() {
    let fixture = Fixture::new();
    let coder = fixture.agent(
        "coder",
        &format!(
            "cat >/dev/null\ncase \"$EPIC_ROLE\" in\nplanner) echo '{}' ;;\n*) git checkout -q -b elsewhere; mkdir -p src; echo x > src/one.txt; echo switched ;;\nesac\n",
            task_list(&["one"])
        ),
    );
    let error = Run::new(coder)
        .on(&fixture, &Events::default())
        .await
        .result
        .expect_err("fails");
    let StoryError::BranchSwitched {
        expected, found, ..
    } = &error
    else {
        panic!("{error:?}");
    };
    assert_eq!(expected, "story/e/s");
    assert_eq!(found.as_deref(), Some("elsewhere"));
    assert!(
        error
            .reason()
            .contains("nothing of this task was committed")
    );
    assert!(fixture.story_commits().is_empty());
    let elsewhere = fixture.git_in(&fixture.repo, &["rev-parse", "elsewhere"]);
    let epic = fixture.git_in(&fixture.repo, &["rev-parse", "epic/e"]);
    assert_eq!(
        elsewhere, epic,
        "nothing was committed on the other branch either"
    );
}
