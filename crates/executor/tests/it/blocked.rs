//! `BLOCKED_ON:` ends the story as a missing dependency.

use epic_executor::{Event, StoryError};

use crate::support::{Events, Fixture, Run, task_list};

#[tokio::test]
async fn a_reply_ending_blocked_on_fails_the_story_naming_the_need() {
    let fixture = Fixture::new();
    let coder = fixture.agent(
        "coder",
        &format!(
            "cat >/dev/null\ncase \"$EPIC_ROLE\" in\nplanner) echo '{}' ;;\n*) printf 'I need the API.\\n\\n`BLOCKED_ON: lib/api.rs from story other`\\n' ;;\nesac\n",
            task_list(&["one", "two"])
        ),
    );
    let events = Events::default();
    let error = Run::new(coder)
        .on(&fixture, &events)
        .await
        .result
        .expect_err("blocked");
    let StoryError::Blocked { need, .. } = &error else {
        panic!("{error:?}");
    };
    assert_eq!(need, "lib/api.rs from story other");
    assert!(
        error
            .to_string()
            .contains("blocked on unplanned work: lib/api.rs from story other")
    );
    assert!(events.steps().iter().any(
        |event| matches!(event, Event::Blocked { need, .. } if need.starts_with("lib/api.rs"))
    ));
    assert!(fixture.story_commits().is_empty());
    // The story stopped at once: task two never started.
    assert!(
        !events
            .steps()
            .iter()
            .any(|event| matches!(event, Event::TaskStarted { task, .. } if task == "two"))
    );
}

#[tokio::test]
async fn a_mention_that_is_not_last_does_not_block() {
    let fixture = Fixture::new();
    let coder = fixture.agent(
        "coder",
        &format!(
            "cat >/dev/null\ncase \"$EPIC_ROLE\" in\nplanner) echo '{}' ;;\n*) mkdir -p src; echo x > src/one.txt; printf 'BLOCKED_ON: a tool\\nCarried on without it.\\n' ;;\nesac\n",
            task_list(&["one"])
        ),
    );
    let done = Run::new(coder)
        .on(&fixture, &Events::default())
        .await
        .result
        .expect("done");
    assert_eq!(done.committed, ["one"]);
}
