//! The merge queue: stories ready at once are proven by one gate run, a red batch is bisected,
//! and the outcome (the epic tree, the failed stories) is the one integrating one at a time
//! gives, on a green batch, one culprit, two stories red only together; a dependent starts only
//! once its dependency's batch is proven; an interrupt inside a batch undoes it, and a rerun
//! merges it.
//!
//! Each scenario runs stories w, a, b, c (and d after a) with concurrency enough for all, so
//! that a, b and c queue while w's merge is gated: w's gate on the epic worktree waits until c
//! joined the queue, a's judge waits until w's gate began, b's until a joined the queue, c's
//! until b did. Batched, a, b and c are then one batch; with `--merge-batch 1`, one at a time.

use std::path::Path;
use std::sync::Arc;

use epic_events::{Event, EventSink};
use epic_executor::{RunOutcome, run_epic};
use tokio_util::sync::CancellationToken;

use crate::epic_support::{EpicFixture, epic_files, plan, position, started, statuses};
use crate::support::Events;

/// Waits (up to 25 s) for `$ROOT/<file>`.
fn wait_for(root: &Path, file: &str) -> String {
    format!(
        "n=0; while [ ! -e '{root}/{file}' ] && [ $n -lt 500 ]; do sleep 0.05; n=$((n+1)); done\n",
        root = root.display()
    )
}

/// What a run of the scenario left: its outcome, its events, the epic tree's paths, and the
/// epic branch's reflog (newest first).
type Queued = (RunOutcome, Vec<Event>, Vec<String>, Vec<String>);

/// Runs the scenario with `--merge-batch batch`; `check` is the gate's test on the epic
/// worktree (every gate passes in story worktrees).
async fn run_queue(batch: usize, check: &str) -> Queued {
    let ep = EpicFixture::new();
    let root = ep.fx.root.clone();
    ep.hook("a.judge", &wait_for(&root, "gating-w"));
    ep.hook("b.judge", &wait_for(&root, "queued-a"));
    ep.hook("c.judge", &wait_for(&root, "queued-b"));
    let gate = format!(
        "case \"$(pwd)\" in */_epic) ;; *) exit 0 ;; esac\n\
         if [ \"$EPIC_STORY\" = w ]; then touch '{root}/gating-w'; {wait}fi\n\
         {check}",
        root = root.display(),
        wait = wait_for(&root, "queued-c"),
    );
    let mut config = ep.config();
    config.judge = Some(ep.agent().into());
    config.concurrency = 5;
    config.merge_batch = batch;
    // The queue as it proves, bisects and fails; a culprit's revisions are
    // `merge_revisions.rs`'s.
    config.merge_revisions = 0;
    config.gates = vec![gate];
    let events = Events::default();
    let sink = events.sink();
    let marks = root.clone();
    let sink: EventSink = Arc::new(move |event: Event| {
        if let Event::MergeQueued { story } = &event {
            std::fs::write(marks.join(format!("queued-{story}")), "").expect("mark");
        }
        sink(event);
    });
    let plan = plan(&[
        ("w", &[]),
        ("a", &[]),
        ("b", &[]),
        ("c", &[]),
        ("d", &["a"]),
    ]);
    let outcome = run_epic(
        Arc::new(ep.fx.git()),
        plan,
        config,
        sink,
        CancellationToken::new(),
    )
    .await
    .expect("run");
    let files = epic_files(&ep);
    let reflog = ep
        .fx
        .git_in(&ep.fx.repo, &["reflog", "show", "--format=%gs", "epic/e"])
        .lines()
        .map(str::to_owned)
        .collect();
    (outcome, events.steps(), files, reflog)
}

/// Runs the scenario batched and one at a time; asserts both end the same (statuses, the epic
/// tree's paths) and returns the batched run's outcome, events and epic branch reflog, and the
/// statuses.
async fn same_both_ways(check: &str) -> Queued {
    let (batched, events, batched_files, reflog) = run_queue(4, check).await;
    let (single, single_events, single_files, _) = run_queue(1, check).await;
    assert_eq!(statuses(&batched), statuses(&single));
    assert_eq!(batched_files, single_files);
    assert!(
        !single_events.iter().any(|event| matches!(
            event,
            Event::MergeBatch { .. } | Event::BatchGated { .. } | Event::BatchProven { .. }
        )),
        "one at a time, no batch: {single_events:#?}"
    );
    assert!(
        events.iter().any(|event| matches!(
            event,
            Event::MergeBatch { stories, .. } if *stories == ["a", "b", "c"]
        )),
        "a, b and c were one batch: {events:#?}"
    );
    let statuses = statuses(&batched);
    (batched, events, statuses, reflog)
}

fn gated(events: &[Event]) -> Vec<(Vec<String>, bool)> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::BatchGated {
                stories, passed, ..
            } => Some((stories.clone(), *passed)),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_green_batch_is_proven_by_one_gate_run_and_its_dependent_starts_after() {
    let (outcome, events, statuses, reflog) = same_both_ways("true").await;
    assert_eq!(statuses, ["w:done", "a:done", "b:done", "c:done", "d:done"]);
    // The report says which stories were proven together.
    let together = ["a", "b", "c"];
    for index in 1..=3 {
        assert_eq!(outcome.report.stories[index].proven_with, together);
    }
    assert!(outcome.report.stories[0].proven_with.is_empty());
    assert!(
        epic_report::render_markdown(&outcome.report).contains("proven together: a, b, c"),
        "{}",
        epic_report::render_markdown(&outcome.report)
    );
    assert_eq!(
        gated(&events),
        [(vec!["a".to_owned(), "b".to_owned(), "c".to_owned()], true)]
    );
    let proven = position(
        &events,
        |event| matches!(event, Event::BatchProven { stories, .. } if *stories == ["a", "b", "c"]),
    );
    assert!(started(&events, "d") > proven, "d waited for a's batch");
    // The batch's merges were made in the objects and the epic branch moved once, to the
    // candidate its gates ran on.
    let merges = |entry: &str| reflog.iter().filter(|line| *line == entry).count();
    assert_eq!(merges("e: merge stories 'a', 'b', 'c'"), 1, "{reflog:#?}");
    for story in ["a", "b", "c"] {
        assert_eq!(
            merges(&format!("e: merge story '{story}'")),
            0,
            "{reflog:#?}"
        );
    }
    assert_eq!(merges("e: merge story 'w'"), 1, "{reflog:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_culprit_is_pinned_by_bisection_and_the_rest_merge() {
    let (outcome, events, statuses, _) = same_both_ways("test ! -e src/b").await;
    assert_eq!(
        statuses,
        ["w:done", "a:done", "b:failed", "c:done", "d:done"]
    );
    assert!(events.iter().any(|event| matches!(
        event,
        Event::CulpritPinned { story, .. } if story == "b"
    )));
    // The whole batch; a alone on the proven head (green); then b, c on it (the candidate
    // seen red): b alone (red, pinned), and c merged again without b.
    assert_eq!(
        gated(&events),
        [
            (vec!["a".to_owned(), "b".to_owned(), "c".to_owned()], false),
            (vec!["a".to_owned()], true),
            (vec!["b".to_owned()], false),
            (vec!["c".to_owned()], true),
        ]
    );
    let reason = outcome.report.stories[2].reason.clone().unwrap_or_default();
    assert!(
        reason.contains("bisection pinned") && reason.contains("epic gates failed"),
        "{reason}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_two_stories_red_only_together_the_later_fails() {
    let (_, events, statuses, _) = same_both_ways("! { [ -e src/a ] && [ -e src/b ]; }").await;
    assert_eq!(
        statuses,
        ["w:done", "a:done", "b:failed", "c:done", "d:done"]
    );
    assert!(events.iter().any(|event| matches!(
        event,
        Event::CulpritPinned { story, .. } if story == "b"
    )));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_inside_a_batch_undoes_it_and_a_rerun_merges_it() {
    let ep = EpicFixture::new();
    let root = ep.fx.root.clone();
    ep.hook("a.judge", &wait_for(&root, "gating-w"));
    ep.hook("b.judge", &wait_for(&root, "queued-a"));
    ep.hook("c.judge", &wait_for(&root, "queued-b"));
    std::fs::write(root.join("slow"), "").expect("slow");
    // The batch's gate would run for minutes while `slow` exists: the interrupt cuts it.
    let gate = format!(
        "case \"$(pwd)\" in */_epic) ;; *) exit 0 ;; esac\n\
         if [ \"$EPIC_STORY\" = w ]; then touch '{root}/gating-w'; {wait}\n\
         elif [ -n \"$EPIC_STORY\" ] && [ -e '{root}/slow' ]; then sleep 300; fi\n",
        root = root.display(),
        wait = wait_for(&root, "queued-c"),
    );
    let mut config = ep.config();
    config.judge = Some(ep.agent().into());
    config.concurrency = 4;
    config.gates = vec![gate];
    let plan = plan(&[("w", &[]), ("a", &[]), ("b", &[]), ("c", &[])]);
    let events = Events::default();
    let cancel = CancellationToken::new();
    let sink = events.sink();
    let (marks, interrupt) = (root.clone(), cancel.clone());
    let sink: EventSink = Arc::new(move |event: Event| {
        if let Event::MergeQueued { story } = &event {
            std::fs::write(marks.join(format!("queued-{story}")), "").expect("mark");
        }
        // The batch's last merge began: Ctrl-C, before or while its gate runs.
        if matches!(&event, Event::MergeStarted { story, .. } if story == "c") {
            interrupt.cancel();
        }
        sink(event);
    });
    let began = std::time::Instant::now();
    let outcome = run_epic(
        Arc::new(ep.fx.git()),
        plan.clone(),
        config.clone(),
        sink,
        cancel,
    )
    .await
    .expect("run");
    assert!(
        began.elapsed() < std::time::Duration::from_mins(2),
        "the gate was cut"
    );
    assert!(outcome.interrupted);
    assert!(events.steps().iter().any(|event| matches!(
        event,
        Event::MergeBatch { stories, .. } if *stories == ["a", "b", "c"]
    )));
    assert_eq!(statuses(&outcome)[0], "w:done");
    assert!(
        statuses(&outcome)[1..]
            .iter()
            .all(|status| !status.ends_with(":done")),
        "{:?}",
        statuses(&outcome)
    );
    // The epic branch is back at the proven head (w's merge), and no journal is left.
    let proven: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(ep.dir().proven_head()).expect("proven.json"),
    )
    .expect("json");
    assert_eq!(
        proven["data"]["commit"].as_str(),
        Some(ep.rev("epic/e").as_str())
    );
    assert!(!ep.dir().merge_journal().exists());
    assert!(
        ep.epic_log()
            .iter()
            .filter(|subject| subject.starts_with("e: merge story"))
            .all(|subject| subject == "e: merge story w"),
        "{:?}",
        ep.epic_log()
    );
    std::fs::remove_file(root.join("slow")).expect("fast again");
    let rerun = ep
        .run(&plan, config, &Events::default())
        .await
        .expect("rerun");
    assert!(rerun.all_done(), "{:?}", statuses(&rerun));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_killed_while_recording_its_proof_is_recorded_by_the_rerun() {
    let ep = EpicFixture::new();
    let plan = plan(&[("a", &[]), ("b", &[])]);
    let outcome = ep
        .run(&plan, ep.config(), &Events::default())
        .await
        .expect("run");
    assert!(outcome.all_done());
    // As a run killed right after journaling the proven candidate leaves it: the epic branch at
    // the candidate's head, b's state not yet saying merged, the proven head still a's merge.
    let head = ep.rev("epic/e");
    let before = ep.rev("epic/e^1");
    let path = ep.dir().story_state("b").expect("path");
    let mut state: epic_state_store::StoryState =
        epic_state_store::load(&path).expect("load").expect("state");
    state.status = epic_state_store::StoryStage::Started;
    state.merge = None;
    epic_state_store::save(&path, &state).expect("save");
    std::fs::write(
        ep.dir().proven_head(),
        format!(r#"{{"version":1,"data":{{"commit":"{before}"}}}}"#),
    )
    .expect("proven");
    std::fs::write(
        ep.dir().merge_journal(),
        format!(
            r#"{{"version":2,"data":{{"stories":["b"],"checkpoint":"{before}","proven":{{"head":"{head}","merges":[{{"story":"b","commit":"{head}"}}]}}}}}}"#
        ),
    )
    .expect("journal");
    let events = Events::default();
    let rerun = ep.run(&plan, ep.config(), &events).await.expect("rerun");
    assert!(rerun.all_done(), "{:?}", statuses(&rerun));
    assert_eq!(ep.rev("epic/e"), head, "the proven batch stays");
    assert!(!ep.dir().merge_journal().exists());
    let state: epic_state_store::StoryState =
        epic_state_store::load(&path).expect("load").expect("state");
    assert_eq!(state.status, epic_state_store::StoryStage::Merged);
    assert_eq!(state.merge.as_deref(), Some(head.as_str()));
    // Its attestation was written before the journal said proven: the merge is attested.
    assert!(
        ep.dir()
            .attestation(&head)
            .is_some_and(|path| path.is_file())
    );
    let steps = events.steps();
    assert!(
        !steps
            .iter()
            .any(|event| matches!(event, Event::StoryStarted { .. })),
        "nothing ran again: {steps:#?}"
    );
    assert!(steps.iter().any(|event| matches!(
        event,
        Event::RunNote { message } if message.contains("recording the proven merge of story 'b'")
    )));
}
