//! The happy path: several tasks planned, each committed in order, the checkpoint all ticked,
//! transcripts and usage recorded.

use epic_events::Event;

use crate::support::{Events, Fixture, Run, task_list};

/// A coder that plans `one`, `two`, `three` and writes `src/<task>.txt` for each, logging its
/// turns to `$ROOT/turns.log`.
pub(crate) fn writer_body(titles: &[&str]) -> String {
    format!(
        r#"prompt=$(cat)
echo "$EPIC_ROLE $EPIC_TASK slot=$EPIC_SLOT story=$EPIC_STORY epic=$EPIC_EPIC wt=$EPIC_WORKTREE" >> "$ROOT/turns.log"
case "$EPIC_ROLE" in
planner) echo '{}' ;;
coder) mkdir -p src; echo "$EPIC_TASK" > "src/$EPIC_TASK.txt"; echo "did $EPIC_TASK" ;;
*) echo '{{"clean":true,"issues":[]}}' ;;
esac
"#,
        task_list(titles)
    )
}

#[tokio::test]
async fn several_tasks_are_committed_in_order_and_ticked() {
    let fixture = Fixture::new();
    let coder = fixture.agent("coder", &writer_body(&["one", "two", "three"]));
    let events = Events::default();
    let run = Run::new(coder)
        .gates(&["test -f src/one.txt"])
        .on(&fixture, &events)
        .await;

    let done = run.result.expect("story done");
    assert_eq!(done.committed, ["one", "two", "three"]);
    assert_eq!(done.already_done, 0);
    assert_eq!(fixture.story_commits(), ["s: one", "s: two", "s: three"]);
    let checkpoint = fixture.checkpoint().expect("checkpoint");
    assert!(checkpoint.starts_with("# Plan: s\n"), "{checkpoint}");
    for title in ["one", "two", "three"] {
        assert!(
            checkpoint.contains(&format!("- [x] {title}\n")),
            "{checkpoint}"
        );
    }
    assert!(!checkpoint.contains("- [ ]"));

    // Every turn saw docs/contract.md's environment.
    let log = std::fs::read_to_string(fixture.root.join("turns.log")).expect("log");
    let wt = fixture.worktree.display().to_string();
    assert_eq!(
        log.lines().collect::<Vec<_>>(),
        [
            format!("planner  slot=0 story=s epic=e wt={wt}"),
            format!("coder one slot=0 story=s epic=e wt={wt}"),
            format!("coder two slot=0 story=s epic=e wt={wt}"),
            format!("coder three slot=0 story=s epic=e wt={wt}"),
        ]
    );

    // One transcript per turn, numbered, role in the name; the prompt and the reply inside.
    assert_eq!(
        fixture.transcripts(),
        [
            "0001-planner.md",
            "0002-coder.md",
            "0003-coder.md",
            "0004-coder.md"
        ]
    );
    let dir = fixture.epic_dir().transcripts("s").expect("dir");
    let second = std::fs::read_to_string(dir.join("0002-coder.md")).expect("transcript");
    assert!(second.contains("Task 1 of 3: one"), "{second}");
    assert!(
        second.contains("BLOCKED_ON:"),
        "the rules are in the prompt"
    );
    assert!(second.contains("## Reply\n\ndid one"), "{second}");

    // Usage per seat, estimated.
    let seat = run.usage.seats().next().expect("a seat").0.to_owned();
    assert!(seat.starts_with("exec:"), "{seat}");
    assert_eq!(run.usage.totals().turns, 4);

    let steps = events.steps();
    let committed: Vec<&str> = steps
        .iter()
        .filter_map(|event| match event {
            Event::TaskCommitted { task, commit, .. } => {
                assert!(commit.is_some());
                Some(task.as_str())
            }
            _ => None,
        })
        .collect();
    assert_eq!(committed, ["one", "two", "three"]);
    assert!(steps.iter().any(|event| matches!(event, Event::GatePassed { command, .. } if command == "test -f src/one.txt")));
    assert!(steps.iter().any(
        |event| matches!(event, Event::TasksPlanned { tasks, resumed: false, .. } if tasks.len() == 3)
    ));
}

#[tokio::test]
async fn an_existing_checkpoint_wins_over_the_planner() {
    let fixture = Fixture::new();
    let path = fixture.epic_dir().story_plan("s").expect("path");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
    std::fs::write(
        &path,
        "# Plan: s\n\n- [x] one\n\n- [ ] two\n  write src/two.txt\n",
    )
    .expect("write");
    let coder = fixture.agent("coder", &writer_body(&["never", "planned"]));
    let events = Events::default();
    let done = Run::new(coder)
        .on(&fixture, &events)
        .await
        .result
        .expect("done");
    assert_eq!(done.committed, ["two"]);
    assert_eq!(done.already_done, 1);
    assert_eq!(fixture.story_commits(), ["s: two"]);
    let log = std::fs::read_to_string(fixture.root.join("turns.log")).expect("log");
    assert!(!log.contains("planner"), "{log}");
    assert!(events.steps().iter().any(|event| matches!(
        event,
        Event::TasksPlanned {
            resumed: true,
            done: 1,
            ..
        }
    )));
}
