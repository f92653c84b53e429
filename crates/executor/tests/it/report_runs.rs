//! The report is the epic's, across runs: a story keeps the times, usage and judge note of the
//! run that settled it, each outcome names its run, and the report lists the runs. A rerun with
//! nothing to do, a rerun after a failure, a resume after an interrupt and a run interrupted
//! before any story each leave one report that covers the whole epic.

use std::time::Duration;

use epic_events::ReportDocument;
use epic_executor::RunOutcome;
use epic_report::{EpicReport, OutcomeStatus, StoryOutcome};

use crate::epic_support::{EpicFixture, cancelled_once, plan, statuses};
use crate::support::Events;

/// `report.json` as the run left it.
fn report_on_disk(ep: &EpicFixture) -> EpicReport {
    epic_state_store::load::<ReportDocument>(ep.dir().report_json())
        .expect("report.json loads")
        .expect("report.json written")
        .0
}

/// The outcome of story `id`.
fn story<'a>(outcome: &'a RunOutcome, id: &str) -> &'a StoryOutcome {
    outcome.report.story(id).expect("story in the report")
}

/// Asserts that `story` has the figures of a story that ran: a start, a finish, estimated tokens.
fn assert_ran(story: &StoryOutcome) {
    assert!(
        story.started_at.is_some() && story.finished_at.is_some(),
        "{story:?}"
    );
    assert!(
        story.estimated_tokens.is_some_and(|tokens| tokens > 0),
        "{story:?}"
    );
}

/// The numbers of the runs the report lists, and whether each has a finish.
fn runs(report: &EpicReport) -> Vec<(u32, bool)> {
    report
        .runs
        .iter()
        .map(|run| (run.number, run.finished_at.is_some()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rerun_with_nothing_to_do_keeps_every_storys_figures_and_judge_note() {
    let ep = EpicFixture::new();
    let plan = plan(&[("a", &[]), ("b", &["a"])]);
    let mut config = ep.config();
    config.judge = Some(ep.agent().into());
    config.gates = vec!["test -f README.md".into()];
    let first = ep
        .run(&plan, config.clone(), &Events::default())
        .await
        .expect("run");
    assert!(first.all_done());
    for id in ["a", "b"] {
        assert_ran(story(&first, id));
        assert_eq!(
            story(&first, id).judge.as_deref(),
            Some("judge cleared (round 1)")
        );
        assert_eq!(story(&first, id).run, Some(1));
    }

    let second = ep
        .run(&plan, config, &Events::default())
        .await
        .expect("rerun");
    assert!(second.all_done());
    assert_eq!(
        second.report.stories, first.report.stories,
        "every story keeps the figures, judge note and run of the run that merged it"
    );
    assert!(second.report.latest_run_settled_nothing());
    assert_eq!(runs(&second.report), [(1, true), (2, true)]);
    assert_eq!(
        second.report.runs[0], first.report.runs[0],
        "the first run as it was listed"
    );
    assert_eq!(second.report.seats, first.report.seats, "no turn ran");
    let on_disk = report_on_disk(&ep);
    assert_eq!(on_disk.stories, first.report.stories);
    assert_eq!(runs(&on_disk), [(1, true), (2, true)]);
    let markdown = std::fs::read_to_string(ep.dir().report_md()).expect("report.md");
    assert!(!markdown.contains("merged on a previous run"), "{markdown}");
    assert!(markdown.contains("- Run 1: started "), "{markdown}");
    assert!(markdown.contains("; done: a, b\n"), "{markdown}");
    assert!(markdown.contains("- Run 2: started "), "{markdown}");
    assert!(markdown.contains("; no story\n"), "{markdown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rerun_after_a_failure_reports_both_runs_stories_with_their_own_times() {
    let ep = EpicFixture::new();
    let plan = plan(&[("a", &[]), ("b", &[])]);
    // b's coder fails its first turn, and only that one.
    ep.hook(
        "b",
        "if [ ! -f \"$ROOT/b-once\" ]; then touch \"$ROOT/b-once\"; exit 1; fi\n",
    );
    let mut config = ep.config();
    config.judge = Some(ep.agent().into());
    let first = ep
        .run(&plan, config.clone(), &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&first), ["a:done", "b:failed"]);
    let a = story(&first, "a").clone();
    assert_ran(&a);
    assert_eq!(story(&first, "b").run, Some(1));

    let second = ep
        .run(&plan, config, &Events::default())
        .await
        .expect("rerun");
    assert_eq!(statuses(&second), ["a:done", "b:done"]);
    assert_eq!(
        story(&second, "a"),
        &a,
        "a keeps what the first run recorded"
    );
    let b = story(&second, "b");
    assert_ran(b);
    assert_eq!(b.run, Some(2));
    assert_eq!(b.reason, None, "the first run's failure is settled");
    assert_eq!(b.judge.as_deref(), Some("judge cleared (round 1)"));
    assert!(
        b.started_at >= a.finished_at,
        "b's times are the second run's: {b:?} after {a:?}"
    );
    assert!(!second.report.latest_run_settled_nothing());
    assert_eq!(runs(&second.report), [(1, true), (2, true)]);
    assert!(
        second.report.runs[1].started_at >= a.finished_at.expect("finished"),
        "{:?}",
        second.report.runs
    );
    // The seats count every turn: the failed attempt's too.
    let turns = |report: &EpicReport| report.seats.iter().map(|seat| seat.turns).sum::<u64>();
    assert!(turns(&second.report) > turns(&first.report));
    let on_disk = report_on_disk(&ep);
    assert_eq!(on_disk.stories, second.report.stories);
    assert_eq!(on_disk.runs, second.report.runs);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_run_and_its_resume_leave_one_report_of_the_whole_epic() {
    let ep = EpicFixture::new();
    let plan = plan(&[("a", &[]), ("b", &["a"])]);
    ep.hook(
        "b",
        r#"if [ ! -f "$ROOT/b-once" ]; then touch "$ROOT/b-once" "$ROOT/b-started"; sleep 1000; fi
"#,
    );
    let mut config = ep.config();
    config.turn_timeout = Duration::from_mins(2);
    let marker = ep.fx.root.join("b-started");
    let cancel = cancelled_once(marker);
    let first = ep
        .run_with(&plan, config, &Events::default(), cancel)
        .await
        .expect("run");
    assert!(first.interrupted);
    assert_eq!(statuses(&first), ["a:done", "b:skipped"]);
    let a = story(&first, "a").clone();
    assert_ran(&a);
    assert_eq!(a.run, Some(1));

    let second = ep
        .run(&plan, ep.config(), &Events::default())
        .await
        .expect("resume");
    assert!(second.all_done(), "{:?}", statuses(&second));
    assert_eq!(
        story(&second, "a"),
        &a,
        "a as the interrupted run merged it"
    );
    let b = story(&second, "b");
    assert_ran(b);
    assert_eq!(b.run, Some(2));
    assert_eq!(b.status, OutcomeStatus::Done);
    assert_eq!(runs(&second.report), [(1, true), (2, true)]);
    let on_disk = report_on_disk(&ep);
    assert_eq!(on_disk.stories, second.report.stories);
    assert!(on_disk.timeline().is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_interrupted_before_any_story_keeps_the_stories_merged_before() {
    let ep = EpicFixture::new();
    let plan = plan(&[("a", &[]), ("b", &["a"])]);
    // b fails on the first run; a merges.
    ep.hook("b", "exit 1\n");
    let first = ep
        .run(&plan, ep.config(), &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&first), ["a:done", "b:failed"]);
    let a = story(&first, "a").clone();
    assert_ran(&a);

    // The second run is interrupted while its new gate's baseline runs: no story starts.
    let marker = ep.fx.root.join("baseline-started");
    let mut config = ep.config();
    config.gates = vec![format!("touch '{}'; sleep 100", marker.display())];
    let cancel = cancelled_once(marker);
    let second = ep
        .run_with(&plan, config, &Events::default(), cancel)
        .await
        .expect("interrupted run");
    assert!(second.interrupted);
    assert_eq!(statuses(&second), ["a:done", "b:skipped"]);
    assert_eq!(story(&second, "a"), &a, "a as the first run merged it");
    assert_eq!(story(&second, "b").run, Some(2));
    assert_eq!(runs(&second.report), [(1, true), (2, true)]);
    assert_eq!(report_on_disk(&ep).stories, second.report.stories);
}
