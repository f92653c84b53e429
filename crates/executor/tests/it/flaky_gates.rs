//! Flaky gates (`--gate-reruns`): a gate command red once and green when run again on the same
//! tree is flaky, passed and named in a `gate_flaky` event with its first run, wherever gates
//! run (a story's task loop, the epic head after a merge, the baseline); red on every run is
//! red; with no reruns a red run decides, as before.

use std::path::Path;

use epic_events::Event;

use crate::epic_support::{EpicFixture, epic_files, plan, reason, statuses};
use crate::support::Events;

/// In a story's worktree.
const IN_STORY: &str = "[ -n \"${EPIC_STORY:-}\" ] && [ \"$(basename \"$(pwd)\")\" != _epic ]";
/// On the epic worktree after a merge.
const AFTER_MERGE: &str = "[ -n \"${EPIC_STORY:-}\" ] && [ \"$(basename \"$(pwd)\")\" = _epic ]";
/// On the epic worktree before any story.
const AT_BASELINE: &str = "[ -z \"${EPIC_STORY:-}\" ]";

/// A gate that, where the shell test `place` holds, is red until its `green_at`th run there
/// (saying a port is in use), counting those runs in `<root>/runs`, outside the repository; it
/// passes everywhere else.
fn red_until(root: &Path, place: &str, green_at: u32) -> String {
    format!(
        "if {place}; then c='{root}/runs'; n=$(($(cat \"$c\" 2>/dev/null || echo 0) + 1)); \
         echo $n > \"$c\"; if [ $n -lt {green_at} ]; then echo \"port 8080 in use (run $n)\"; \
         exit 1; fi; fi",
        root = root.display()
    )
}

/// How many times the gate ran where it counts.
fn runs(ep: &EpicFixture) -> String {
    std::fs::read_to_string(ep.fx.root.join("runs"))
        .expect("the gate ran where it counts")
        .trim()
        .to_owned()
}

/// The `gate_flaky` events: the story, the runs, the first run's status and output.
fn flaky(events: &[Event]) -> Vec<(Option<String>, u32, String, String)> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::GateFlaky {
                story,
                runs,
                status,
                output,
                ..
            } => Some((story.clone(), *runs, status.clone(), output.clone())),
            _ => None,
        })
        .collect()
}

/// The one flaky event expected: where, and its first run's failing output.
fn the_flake(story: Option<&str>) -> Vec<(Option<String>, u32, String, String)> {
    vec![(
        story.map(str::to_owned),
        2,
        "exit code 1".to_owned(),
        "port 8080 in use (run 1)".to_owned(),
    )]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_story_gate_red_once_is_flaky_and_the_story_merges() {
    let ep = EpicFixture::new();
    let mut config = ep.config();
    config.gates = vec![red_until(&ep.fx.root, IN_STORY, 2)];
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &events)
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:done"], "{}", reason(&outcome, 0));
    let steps = events.steps();
    assert_eq!(flaky(&steps), the_flake(Some("a")));
    assert!(
        !steps
            .iter()
            .any(|event| matches!(event, Event::GateFailed { .. })),
        "the story is not charged with the red run"
    );
    assert_eq!(
        runs(&ep),
        "2",
        "run once more, then green on every later run"
    );
    let gates = &outcome.report.stories[0].flaky_gates;
    assert_eq!(gates.len(), 1, "the report names it: {gates:?}");
    assert_eq!(
        (
            gates[0].runs,
            gates[0].status.as_str(),
            gates[0].output.as_str()
        ),
        (2, "exit code 1", "port 8080 in use (run 1)")
    );
    assert!(epic_files(&ep).contains(&"src/a/done.txt".to_owned()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_epic_gate_red_once_after_a_merge_keeps_the_merge() {
    let ep = EpicFixture::new();
    let mut config = ep.config();
    config.gates = vec![red_until(&ep.fx.root, AFTER_MERGE, 2)];
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &events)
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:done"], "{}", reason(&outcome, 0));
    let steps = events.steps();
    assert_eq!(flaky(&steps), the_flake(Some("a")));
    assert!(
        !steps
            .iter()
            .any(|event| matches!(event, Event::StoryRolledBack { .. })),
        "the merge is kept"
    );
    assert!(steps.iter().any(|event| matches!(
        event,
        Event::EpicGate { story: Some(story), passed: true, .. } if story == "a"
    )));
    assert!(epic_files(&ep).contains(&"src/a/done.txt".to_owned()));
    assert_eq!(outcome.report.stories[0].flaky_gates.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_baseline_gate_red_once_lets_the_run_start() {
    let ep = EpicFixture::new();
    let mut config = ep.config();
    config.gates = vec![red_until(&ep.fx.root, AT_BASELINE, 2)];
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &events)
        .await
        .expect("a flaky baseline is green: the run starts");
    assert_eq!(statuses(&outcome), ["a:done"], "{}", reason(&outcome, 0));
    let steps = events.steps();
    assert_eq!(flaky(&steps), the_flake(None));
    assert!(
        outcome.report.stories[0].flaky_gates.is_empty(),
        "the baseline is no story's"
    );
    assert!(steps.iter().any(|event| matches!(
        event,
        Event::BaselineChecked { failed, cached: false, .. } if failed.is_empty()
    )));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_epic_gate_red_on_every_run_undoes_the_merge() {
    let ep = EpicFixture::new();
    let mut config = ep.config();
    config.gates = vec![red_until(&ep.fx.root, AFTER_MERGE, 3)];
    // Red twice is red: the merge is undone and, without a merge revision, the story fails.
    config.merge_revisions = 0;
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &events)
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed"]);
    let steps = events.steps();
    assert!(flaky(&steps).is_empty());
    assert!(steps.iter().any(|event| matches!(
        event,
        Event::StoryRolledBack { story, .. } if story == "a"
    )));
    assert_eq!(runs(&ep), "2", "the first run and one rerun, both red");
    assert!(!epic_files(&ep).contains(&"src/a/done.txt".to_owned()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_reruns_a_red_run_undoes_the_merge_as_before() {
    let ep = EpicFixture::new();
    let mut config = ep.config();
    config.gates = vec![red_until(&ep.fx.root, AFTER_MERGE, 2)];
    config.gate_reruns = 0;
    config.merge_revisions = 0;
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &events)
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed"]);
    let steps = events.steps();
    assert!(flaky(&steps).is_empty());
    assert!(steps.iter().any(|event| matches!(
        event,
        Event::StoryRolledBack { story, .. } if story == "a"
    )));
    assert_eq!(runs(&ep), "1", "run once");
}
