//! Planning: an unreadable task list asked again once, then one task; stray tasks re-planned.

use epic_events::Event;

use crate::support::{Events, Fixture, Run, task_list};

/// A coder whose planner replies are `replies` in turn (the last one repeats), and whose coder
/// turns write `src/<task>.txt`.
fn planner_coder(fixture: &Fixture, replies: &[&str]) -> std::sync::Arc<dyn epic_agents::Seat> {
    for (n, reply) in replies.iter().enumerate() {
        std::fs::write(fixture.root.join(format!("plan-{n}")), reply).expect("reply");
    }
    fixture.agent(
        "coder",
        &format!(
            r#"prompt=$(cat)
case "$EPIC_ROLE" in
planner)
  n=$(cat "$ROOT/planner-count" 2>/dev/null || echo 0)
  printf '%s' "$prompt" > "$ROOT/planner-prompt-$n"
  echo $((n + 1)) > "$ROOT/planner-count"
  [ -f "$ROOT/plan-$n" ] || n={last}
  cat "$ROOT/plan-$n" ;;
*) mkdir -p src; echo x > "src/$(echo "$EPIC_TASK" | tr ' /' '__').txt"; echo ok ;;
esac
"#,
            last = replies.len() - 1
        ),
    )
}

fn planner_turns(fixture: &Fixture) -> usize {
    std::fs::read_to_string(fixture.root.join("planner-count"))
        .expect("count")
        .trim()
        .parse()
        .expect("number")
}

#[tokio::test]
async fn an_unreadable_task_list_is_asked_again_once() {
    let fixture = Fixture::new();
    let coder = planner_coder(
        &fixture,
        &[
            "Sure! I will do it.",
            &format!("```json\n{}\n```", task_list(&["one"])),
        ],
    );
    let events = Events::default();
    let done = Run::new(coder)
        .on(&fixture, &events)
        .await
        .result
        .expect("done");
    assert_eq!(done.committed, ["one"]);
    assert_eq!(planner_turns(&fixture), 2);
    let second = std::fs::read_to_string(fixture.root.join("planner-prompt-1")).expect("prompt");
    assert!(
        second.contains("could not be read as the task list"),
        "{second}"
    );
    assert!(
        second.contains("Sure! I will do it."),
        "the chat's history is in the prompt"
    );
}

#[tokio::test]
async fn a_second_unreadable_task_list_plans_the_whole_story_as_one_task() {
    let fixture = Fixture::new();
    let coder = planner_coder(&fixture, &["{\"tasks\": oops", "still not json"]);
    let events = Events::default();
    let done = Run::new(coder)
        .on(&fixture, &events)
        .await
        .result
        .expect("done");
    assert_eq!(planner_turns(&fixture), 2);
    assert_eq!(done.committed, ["The story"]);
    assert_eq!(fixture.story_commits(), ["s: The story"]);
    assert!(
        events.steps().iter().any(
            |event| matches!(event, Event::Note { message, .. } if message.contains("one task"))
        )
    );
}

#[tokio::test]
async fn stray_tasks_are_sent_back_once_and_foreign_ones_dropped() {
    let fixture = Fixture::new();
    let stray = r#"{"tasks":[{"title":"one","description":"in src/one.rs"},{"title":"wire","description":"register it in lib/registry.rs"}]}"#;
    let coder = planner_coder(&fixture, &[stray, stray]);
    let events = Events::default();
    let done = Run::new(coder)
        .on(&fixture, &events)
        .await
        .result
        .expect("done");
    assert_eq!(planner_turns(&fixture), 2);
    let second = std::fs::read_to_string(fixture.root.join("planner-prompt-1")).expect("prompt");
    assert!(second.contains("\"wire\": lib/registry.rs"), "{second}");
    assert_eq!(
        done.committed,
        ["one"],
        "the task owned by another story was dropped"
    );
    let checkpoint = fixture.checkpoint().expect("checkpoint");
    assert!(!checkpoint.contains("wire"), "{checkpoint}");
}

/// The roles of the turns of a run, in order.
fn roles(steps: &[Event]) -> Vec<epic_agents::Role> {
    steps
        .iter()
        .filter_map(|event| match event {
            Event::TurnStarted { role, .. } => Some(*role),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_planner_auto_a_small_story_is_one_task_with_no_planner_turn() {
    use epic_agents::Role;
    use epic_executor::{PlannerPolicy, SMALL_STORY};

    let ep = crate::epic_support::EpicFixture::new();
    let mut stories = crate::epic_support::plan(&[("a", &[]), ("b", &[])])
        .plan()
        .clone();
    // Story a is small; story b's description is one character past the limit.
    stories.stories[0].description = "Write the story file.".into();
    stories.stories[1].description = "x".repeat(SMALL_STORY + 1);
    let plan = stories.validate().expect("valid");
    let mut config = ep.config();
    config.planner = PlannerPolicy::Auto;
    let events = Events::default();
    let outcome = ep.run(&plan, config, &events).await.expect("run");
    assert_eq!(
        crate::epic_support::statuses(&outcome),
        ["a:done", "b:done"]
    );
    let steps = events.steps();
    let of = |id: &str| -> Vec<Role> {
        let story: Vec<Event> = steps
            .iter()
            .filter(|event| matches!(event, Event::TurnStarted { story, .. } if story == id))
            .cloned()
            .collect();
        roles(&story)
    };
    assert_eq!(of("a"), [Role::Coder], "{steps:#?}");
    assert_eq!(of("b"), [Role::Planner, Role::Coder], "{steps:#?}");
    let planned: Vec<(String, bool, usize)> = steps
        .iter()
        .filter_map(|event| match event {
            Event::TasksPlanned {
                story,
                planner,
                tasks,
                ..
            } => Some((story.clone(), *planner, tasks.len())),
            _ => None,
        })
        .collect();
    assert!(planned.contains(&("a".into(), false, 1)), "{planned:?}");
    assert!(planned.contains(&("b".into(), true, 1)), "{planned:?}");
    // The small story's one task is the story: its title.
    let titles: Vec<&str> = steps
        .iter()
        .filter_map(|event| match event {
            Event::TaskStarted { story, task, .. } if story == "a" => Some(task.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(titles, ["Story a"]);
}
