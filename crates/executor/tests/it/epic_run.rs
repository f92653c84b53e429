//! Whole runs that go well: the diamond and three waves in dependency order, at most
//! `concurrency` coders at once, the files a run leaves, a rerun that does nothing, and a changed
//! plan entry that restarts only its story.

use epic_events::{Event, ReportDocument};
use epic_schedule::Policy;
use epic_story_plan::{Story, StoryPlan};

use crate::epic_support::{EpicFixture, diamond, merged, plan, position, started, statuses};
use crate::support::Events;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diamond_runs_in_dependency_order_within_the_concurrency() {
    let ep = EpicFixture::new();
    // a and b wait for each other: they must run at once.
    ep.rendezvous("a", "b");
    let mut config = ep.config();
    config.concurrency = 2;
    config.gates = vec!["test -f README.md".into()];
    config.board_hook = Some(format!(
        "cat >> '{}'; echo >> '{}'",
        ep.fx.root.join("hook.log").display(),
        ep.fx.root.join("hook.log").display()
    ));
    let events = Events::default();
    let outcome = ep.run(&diamond(), config, &events).await.expect("run");

    assert_eq!(statuses(&outcome), ["a:done", "b:done", "c:done", "d:done"]);
    assert!(outcome.all_done());
    let steps = events.steps();
    assert!(started(&steps, "c") > merged(&steps, "a"));
    assert!(started(&steps, "d") > merged(&steps, "b"));
    assert!(started(&steps, "d") > merged(&steps, "c"));
    assert!(ep.met("a", "b"), "a and b ran at once: {:?}", ep.turns());
    assert!(ep.max_overlap() <= 2, "{:?}", ep.turns());
    assert_eq!(ep.max_overlap(), 2, "a and b overlap: {:?}", ep.turns());

    // The epic branch has one merge per story, and each story's work.
    let log = ep.epic_log();
    for id in ["a", "b", "c", "d"] {
        assert!(log.contains(&format!("e: merge story {id}")), "{log:?}");
        assert!(
            ep.epic_worktree()
                .join(format!("src/{id}/done.txt"))
                .is_file()
        );
        // Merged worktrees are removed; branches stay.
        assert!(!ep.fx.root.join(format!("repo.worktrees/e/{id}")).exists());
        ep.rev(&format!("story/e/{id}"));
    }
    // The user's checkout is untouched.
    assert_eq!(
        ep.fx
            .git_in(&ep.fx.repo, &["branch", "--show-current"])
            .trim(),
        "main"
    );
    assert!(!ep.fx.repo.join("src").exists());

    // The files a run leaves.
    let dir = ep.dir();
    let report = epic_state_store::load::<ReportDocument>(dir.report_json())
        .expect("report")
        .expect("written")
        .0;
    assert_eq!(report.stories.len(), 4);
    assert_eq!(report.stories[0].branch.as_deref(), Some("story/e/a"));
    assert!(report.stories[0].estimated_tokens.is_some());
    assert!(report.stories[0].started_at.is_some());
    let markdown = std::fs::read_to_string(dir.report_md()).expect("report.md");
    assert!(markdown.contains("ESTIMATES"), "{markdown}");
    let board = std::fs::read_to_string(dir.board()).expect("board.md");
    assert!(board.contains("done: 4"), "{board}");
    assert!(board.contains("- **d** — Story d (wave: 3)"), "{board}");
    let lines = std::fs::read_to_string(dir.events()).expect("events.jsonl");
    let first: serde_json::Value =
        serde_json::from_str(lines.lines().next().expect("a line")).expect("json");
    assert_eq!(first["kind"], "run_started");
    assert!(first["at"].as_str().expect("at").ends_with('Z'));
    assert!(lines.contains(r#""kind":"story_merged""#));
    assert!(!lines.contains(r#""kind":"turn_output""#));
    let hook = std::fs::read_to_string(ep.fx.root.join("hook.log")).expect("hook ran");
    let done = hook
        .lines()
        .filter(|line| line.contains(r#""status":"done""#))
        .count();
    assert_eq!(done, 4, "{hook}");
    // Slots are 0 and 1 only.
    let agents = std::fs::read_to_string(ep.fx.root.join("agents.log")).expect("log");
    assert!(
        agents.lines().all(|line| line.ends_with("slot=0")
            || line.ends_with("slot=1")
            || line.starts_with("end")),
        "{agents}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn critical_path_follows_plan_order_where_the_estimates_say_it_is_faster() {
    // Two slots; estimated a 1s, b 2s, c 3s, d 2s, and d after a. Longest chain first would start
    // a and c (chains of 3 s) and finish at 5 s; plan order starts a and b and finishes at 4 s.
    let plan = |estimated: bool| {
        let story = |id: &str, time: &str| {
            let story = Story::new(id, format!("Story {id}"), [format!("src/{id}")]);
            if estimated {
                story.estimated(time)
            } else {
                story
            }
        };
        StoryPlan {
            epic_id: "e".into(),
            epic: String::new(),
            stories: vec![
                story("a", "1s"),
                story("b", "2s"),
                story("c", "3s"),
                story("d", "2s").depending_on(["a"]),
            ],
        }
        .validate()
        .expect("valid plan")
    };
    // Without estimates every story weighs the same: a heads the longest chain, b is next in
    // plan order, and both orders tie, so no note.
    for estimated in [true, false] {
        let ep = EpicFixture::new();
        let mut config = ep.config();
        config.concurrency = 2;
        config.schedule = Policy::CriticalPath;
        let events = Events::default();
        let outcome = ep
            .run(&plan(estimated), config, &events)
            .await
            .expect("run");
        assert!(outcome.all_done(), "{:?}", statuses(&outcome));
        let steps = events.steps();
        let note = steps.iter().any(|event| {
            matches!(event, Event::RunNote { message } if message.contains("plan order finishes sooner"))
        });
        assert_eq!(note, estimated, "{steps:?}");
        let mut starts: Vec<(usize, &str)> = ["a", "b", "c", "d"]
            .map(|id| (started(&steps, id), id))
            .to_vec();
        starts.sort_unstable();
        assert_eq!([starts[0].1, starts[1].1], ["a", "b"], "{starts:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_waves_wait_for_the_previous_wave() {
    let ep = EpicFixture::new();
    let plan = plan(&[
        ("a", &[]),
        ("b", &[]),
        ("c", &["a"]),
        ("e", &["b"]),
        ("d", &["c"]),
    ]);
    // b works until a has merged, so a scheduler that started c at a's merge would do so while
    // b still runs (b gives up waiting after 25 s, inside its turn's deadline).
    ep.hook(
        "b",
        r#"n=0
until git -C "$ROOT/repo" log --format=%s epic/e | grep -q 'merge story a' || [ $n -ge 500 ]; do sleep 0.05; n=$((n+1)); done
"#,
    );
    let mut config = ep.config();
    config.concurrency = 3;
    config.schedule = Policy::Waves;
    let events = Events::default();
    let outcome = ep.run(&plan, config, &events).await.expect("run");
    assert!(outcome.all_done(), "{:?}", statuses(&outcome));
    let steps = events.steps();
    // Wave 2 waits for all of wave 1 (c for b too), wave 3 for all of wave 2.
    for later in ["c", "e"] {
        for earlier in ["a", "b"] {
            assert!(started(&steps, later) > merged(&steps, earlier));
        }
    }
    assert!(started(&steps, "d") > merged(&steps, "c"));
    assert!(started(&steps, "d") > merged(&steps, "e"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dependent_starts_before_its_dependencys_worktree_is_removed() {
    let ep = EpicFixture::new();
    let plan = plan(&[("a", &[]), ("b", &["a"])]);
    let events = Events::default();
    // Fresh worktrees: a merged story's own worktree is removed (a warm slot stays).
    let outcome = ep
        .run(&plan, ep.fresh_config(), &events)
        .await
        .expect("run");
    assert!(outcome.all_done(), "{:?}", statuses(&outcome));
    let steps = events.steps();
    let removed = |id: &str| {
        position(
            &steps,
            |event| matches!(event, Event::WorktreeRemoved { story, .. } if story == id),
        )
    };
    let prepared = |id: &str| {
        position(
            &steps,
            |event| matches!(event, Event::StoryPrepared { story, .. } if story == id),
        )
    };
    // b starts at a's merge, and a's worktree goes only once b has its own.
    assert!(started(&steps, "b") > merged(&steps, "a"));
    assert!(removed("a") > prepared("b"), "{steps:#?}");
    // The run waits for every removal before it finishes.
    let finished = position(&steps, |event| matches!(event, Event::RunFinished { .. }));
    assert!(removed("b") < finished);
    for id in ["a", "b"] {
        assert!(!ep.fx.root.join(format!("repo.worktrees/e/{id}")).exists());
    }
    let list = ep
        .fx
        .git_in(&ep.fx.repo, &["worktree", "list", "--porcelain"]);
    assert!(!list.contains("repo.worktrees/e/a"), "{list}");

    // With keep_worktrees, nothing is removed.
    let ep = EpicFixture::new();
    let mut config = ep.fresh_config();
    config.keep_worktrees = true;
    let events = Events::default();
    let outcome = ep.run(&plan, config, &events).await.expect("run");
    assert!(outcome.all_done(), "{:?}", statuses(&outcome));
    assert!(
        !events
            .steps()
            .iter()
            .any(|event| matches!(event, Event::WorktreeRemoved { .. }))
    );
    for id in ["a", "b"] {
        assert!(
            ep.fx
                .root
                .join(format!("repo.worktrees/e/{id}/.git"))
                .exists()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rerun_after_success_does_nothing() {
    let ep = EpicFixture::new();
    let plan = plan(&[("a", &[]), ("b", &["a"])]);
    let events = Events::default();
    let first = ep.run(&plan, ep.config(), &events).await.expect("run");
    assert!(first.all_done());
    let head = ep.rev("epic/e");
    let turns = ep.turns().len();

    let events = Events::default();
    let second = ep.run(&plan, ep.config(), &events).await.expect("rerun");
    assert!(second.all_done());
    assert_eq!(ep.rev("epic/e"), head, "no new commit");
    assert_eq!(ep.turns().len(), turns, "no agent ran");
    assert_eq!(
        second.report.stories, first.report.stories,
        "each story as the first run merged it"
    );
    assert_eq!(second.report.stories[0].judge, None, "no judge ran");
    let steps = events.steps();
    assert!(
        steps
            .iter()
            .any(|event| matches!(event, Event::BaselineChecked { cached: true, .. }))
            || ep.config().gates.is_empty()
    );
    assert!(
        !steps
            .iter()
            .any(|event| matches!(event, Event::StoryStarted { .. }))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_plan_entry_restarts_only_that_story() {
    let ep = EpicFixture::new();
    let first = plan(&[("a", &[]), ("b", &[])]);
    let events = Events::default();
    assert!(
        ep.run(&first, ep.config(), &events)
            .await
            .expect("run")
            .all_done()
    );
    let old_b = ep.rev("story/e/b");

    let mut changed = first.plan().clone();
    changed.stories[1].description = "Now with more detail.".into();
    let changed = changed.validate().expect("valid");
    let before = ep.turns().len();
    let events = Events::default();
    let outcome = ep.run(&changed, ep.config(), &events).await.expect("rerun");
    assert!(outcome.all_done(), "{:?}", statuses(&outcome));
    let turns = ep.turns();
    let new: Vec<&str> = turns[before..].iter().map(|turn| turn.0.as_str()).collect();
    assert_eq!(new, ["b"], "only b ran again");
    let steps = events.steps();
    assert!(steps.iter().any(|event| matches!(
        event,
        Event::StoryPrepared { story, how, .. } if story == "b" && how == "restarted"
    )));
    assert!(
        steps
            .iter()
            .any(|event| matches!(event, Event::StoryAlreadyMerged { story, .. } if story == "a"))
    );
    assert_ne!(ep.rev("story/e/b"), old_b, "a new branch");
    let checkpoint =
        std::fs::read_to_string(ep.dir().story_plan("b").expect("path")).expect("checkpoint");
    assert!(checkpoint.contains("- [x] build"), "{checkpoint}");
}
