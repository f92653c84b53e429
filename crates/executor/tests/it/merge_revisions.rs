//! Merge revisions (`--merge-revisions`): a story whose merge is red on the proven epic head
//! goes back to its coder instead of failing, is repaired and merges; without revisions, or when
//! they stay red, it fails as before with every revision's gate output; a revision whose fix
//! belongs in another story's files fails with that; two culprits of one batch are each revised;
//! a revision recorded by a run killed before its task was appended is resumed by the rerun.
//!
//! The collision: story a renames an API (`src/a/api-v2`, and `src/a/api-v1` gone), story b
//! calls the old one (`src/b/uses-v1`). The gate is red only when both are on one tree and
//! nothing bridges them, so each story is green alone and red together. A revised b calls the
//! new API (`src/b/uses-v2`); a revised a keeps the old name beside the new (`src/a/api-v1`).
//! Which story merges first is set by the judge hooks, synchronised on files the run's events
//! write (never on time): the later story's judge waits until the earlier one merged, and the
//! earlier one's judge until the later one is being judged (so it caught up before the merge).

use std::path::Path;
use std::sync::Arc;

use epic_events::{Event, EventSink};
use epic_executor::{RunConfig, RunOutcome, run_epic};
use tokio_util::sync::CancellationToken;

use crate::epic_support::{EpicFixture, epic_files, plan, reason, statuses};
use crate::support::Events;

/// Red only when src/b calls v1 and src/a has v2 without v1: each story alone is green.
const GATE: &str = "if [ -e src/a/api-v2 ] && [ -e src/b/uses-v1 ] && [ ! -e src/a/api-v1 ]; \
                    then echo 'src/b calls api v1, which src/a renamed to v2'; exit 1; fi";

/// Waits (up to 25 s) for `$ROOT/<file>`.
fn wait_for(root: &Path, file: &str) -> String {
    format!(
        "n=0; while [ ! -e '{root}/{file}' ] && [ $n -lt 500 ]; do sleep 0.05; n=$((n+1)); done\n",
        root = root.display()
    )
}

/// Whether the coder's prompt is a merge revision's task (the hooks see it as `$prompt`).
const IN_REVISION: &str =
    "case \"$prompt\" in *'Merge revision'*) revising=1 ;; *) revising= ;; esac\n";

/// The hooks of the collision: `a`'s and `b`'s work, and what each does when revised
/// (`a_fix`, `b_fix`: shell run in a revision turn, after which the turn goes on as usual);
/// `first` merges before the other. Every revision prompt is kept in `$ROOT/<story>.revision`.
fn collide(ep: &EpicFixture, first: &str, a_fix: &str, b_fix: &str) {
    let root = ep.fx.root.clone();
    let keep = "if [ -n \"$revising\" ]; then printf '%s' \"$prompt\" > \"$ROOT/$EPIC_STORY.revision\"; fi\n";
    ep.hook(
        "a",
        &format!(
            "{IN_REVISION}{keep}mkdir -p src/a\nif [ -n \"$revising\" ]; then {a_fix}\nelse touch src/a/api-v2; fi\n"
        ),
    );
    ep.hook(
        "b",
        &format!(
            "{IN_REVISION}{keep}mkdir -p src/b\nif [ -n \"$revising\" ]; then {b_fix}\nelse touch src/b/uses-v1; fi\n"
        ),
    );
    let second = if first == "a" { "b" } else { "a" };
    ep.hook(
        &format!("{first}.judge"),
        &wait_for(&root, &format!("judging-{second}")),
    );
    ep.hook(
        &format!("{second}.judge"),
        &format!(
            "touch '{root}/judging-{second}'\n{}",
            wait_for(&root, &format!("merged-{first}")),
            root = root.display()
        ),
    );
}

/// The collision's configuration: a judge (whose hooks order the merges), both stories at once,
/// one merge at a time, the gate everywhere.
fn config(ep: &EpicFixture, revisions: u32) -> RunConfig {
    let mut config = ep.config();
    config.judge = Some(ep.agent().into());
    config.concurrency = 2;
    config.merge_batch = 1;
    config.merge_revisions = revisions;
    config.gates = vec![GATE.to_owned()];
    config
}

/// `events`' sink, also marking each merged story with `$ROOT/merged-<story>`.
fn marking(root: &Path, events: &Events) -> EventSink {
    let sink = events.sink();
    let root = root.to_path_buf();
    Arc::new(move |event: Event| {
        if let Event::StoryMerged { story, .. } = &event {
            std::fs::write(root.join(format!("merged-{story}")), "").expect("mark");
        }
        sink(event);
    })
}

async fn run(ep: &EpicFixture, config: RunConfig, events: &Events) -> RunOutcome {
    run_epic(
        Arc::new(ep.fx.git()),
        plan(&[("a", &[]), ("b", &[])]),
        config,
        marking(&ep.fx.root, events),
        CancellationToken::new(),
    )
    .await
    .expect("run")
}

/// The `merge_revision` events: (story, revision, of, met).
fn revisions(events: &[Event]) -> Vec<(String, u32, u32, Vec<String>)> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::MergeRevision {
                story,
                revision,
                of,
                met,
                ..
            } => Some((story.clone(), *revision, *of, met.clone())),
            _ => None,
        })
        .collect()
}

fn rolled_back(events: &[Event], id: &str) -> usize {
    events
        .iter()
        .filter(|event| matches!(event, Event::StoryRolledBack { story, .. } if story == id))
        .count()
}

const B_CALLS_V2: &str = "rm -f src/b/uses-v1; touch src/b/uses-v2";
const A_KEEPS_V1: &str = "touch src/a/api-v1";

/// Both orders: the later story is red on the epic head with the earlier one's work, goes back
/// to its coder once (told the gate output, the story it meets and what that story changed, its
/// perimeter), repairs it in its own paths, passes its checks again and merges.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stories_red_only_together_are_repaired_in_one_revision_in_either_order() {
    for (first, later) in [("a", "b"), ("b", "a")] {
        let ep = EpicFixture::new();
        collide(&ep, first, A_KEEPS_V1, B_CALLS_V2);
        let events = Events::default();
        let outcome = run(&ep, config(&ep, 1), &events).await;
        let events = events.steps();
        assert_eq!(
            statuses(&outcome),
            ["a:done", "b:done"],
            "{first} first: {:?}",
            outcome.report.stories
        );
        assert_eq!(
            revisions(&events),
            [(later.to_owned(), 1, 1, vec![first.to_owned()])],
            "{first} first"
        );
        assert_eq!(rolled_back(&events, later), 1, "its red merge was undone");
        assert_eq!(rolled_back(&events, first), 0);
        let index = usize::from(later == "b");
        assert_eq!(outcome.report.stories[index].merge_revisions, 1);
        assert_eq!(outcome.report.stories[1 - index].merge_revisions, 0);
        assert!(
            epic_report::render_markdown(&outcome.report).contains("merge revisions: 1"),
            "{}",
            epic_report::render_markdown(&outcome.report)
        );
        // The repair is on the epic branch, and the gate passes on it.
        let files = epic_files(&ep);
        if later == "b" {
            assert!(files.contains(&"src/b/uses-v2".to_owned()), "{files:?}");
            assert!(!files.contains(&"src/b/uses-v1".to_owned()), "{files:?}");
        } else {
            assert!(files.contains(&"src/a/api-v1".to_owned()), "{files:?}");
            assert!(files.contains(&"src/b/uses-v1".to_owned()), "{files:?}");
        }
        // What the coder was told: the gate's output on the combined tree, the story it meets
        // with the paths that story changed, and its perimeter.
        let prompt = std::fs::read_to_string(ep.fx.root.join(format!("{later}.revision")))
            .expect("the revision's coder turn ran");
        for part in [
            "Merge revision 1 of at most 1. On the combined tree",
            "src/b calls api v1, which src/a renamed to v2",
            &format!("- '{first}' (\"Story {first}\")"),
            &format!("changed src/{first}/"),
            &format!("Your perimeter: you may change src/{later} only"),
        ] {
            assert!(prompt.contains(part), "{part:?} in:\n{prompt}");
        }
        assert!(!ep.fx.root.join(format!("{first}.revision")).exists());
        // The revision is a task of the story's checkpoint, ticked.
        let checkpoint =
            std::fs::read_to_string(ep.dir().story_plan(later).expect("path")).expect("checkpoint");
        assert!(
            checkpoint.contains("- [x] Merge revision 1: make the epic gates green"),
            "{checkpoint}"
        );
    }
}

/// Without revisions (`--merge-revisions 0`) the later story fails as it always did; with one
/// that does not repair the collision, it fails after it, its reason carrying the gate output
/// each revision was given and the last red merge's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_revisions_or_with_one_that_stays_red_the_later_story_fails() {
    let ep = EpicFixture::new();
    collide(&ep, "a", A_KEEPS_V1, B_CALLS_V2);
    let events = Events::default();
    let outcome = run(&ep, config(&ep, 0), &events).await;
    assert_eq!(statuses(&outcome), ["a:done", "b:failed"]);
    assert!(revisions(&events.steps()).is_empty());
    assert!(
        !ep.fx.root.join("b.revision").exists(),
        "no coder went back"
    );
    let text = reason(&outcome, 1);
    assert!(
        text.starts_with("epic gates failed after merging; merge undone:")
            && text.contains("src/b calls api v1")
            && !text.contains("revision"),
        "{text}"
    );
    assert_eq!(outcome.report.stories[1].merge_revisions, 0);

    let ep = EpicFixture::new();
    // The revision's coder changes only its own marker: the collision stays. The gate runs on
    // the epic head only, so that the revision passes its own checks and merges again.
    collide(&ep, "a", A_KEEPS_V1, "touch src/b/tried");
    let mut config = config(&ep, 1);
    config.gates = vec![format!(
        "case \"$(pwd)\" in */_epic) ;; *) exit 0 ;; esac\n{GATE}"
    )];
    let events = Events::default();
    let outcome = run(&ep, config, &events).await;
    let events = events.steps();
    assert_eq!(statuses(&outcome), ["a:done", "b:failed"]);
    assert_eq!(
        revisions(&events),
        [("b".to_owned(), 1, 1, vec!["a".to_owned()])]
    );
    assert_eq!(rolled_back(&events, "b"), 2, "each red merge was undone");
    let text = reason(&outcome, 1);
    assert!(
        text.starts_with("epic gates failed after merging; merge undone:")
            && text.contains(
                "The epic gates stayed red on the combined tree after 1 merge revision(s)"
            )
            && text.contains("revision 1:\n    - ")
            && text.matches("failed (exit code 1)").count() == 2,
        "{text}"
    );
    assert_eq!(outcome.report.stories[1].merge_revisions, 1);
    assert!(!epic_files(&ep).iter().any(|path| path.starts_with("src/b")));
}

/// With the gate in the story's worktree too, a revision that cannot repair the collision never
/// gets its own gates green on the combined tree: that revision is spent red, the next one
/// begins (the spent task ticked, a new one appended), and after the last the story fails with
/// each revision's gate output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revisions_whose_own_gates_stay_red_are_spent_one_after_another() {
    let ep = EpicFixture::new();
    collide(&ep, "a", A_KEEPS_V1, "touch src/b/tried");
    let mut config = config(&ep, 2);
    config.max_rounds = 1;
    let events = Events::default();
    let outcome = run(&ep, config, &events).await;
    let events = events.steps();
    assert_eq!(statuses(&outcome), ["a:done", "b:failed"]);
    let revised: Vec<(String, u32)> = revisions(&events)
        .into_iter()
        .map(|(story, revision, _, _)| (story, revision))
        .collect();
    assert_eq!(revised, [("b".to_owned(), 1), ("b".to_owned(), 2)]);
    assert_eq!(
        rolled_back(&events, "b"),
        1,
        "one red merge; then its own gates were red"
    );
    assert_eq!(outcome.report.stories[1].merge_revisions, 2);
    let text = reason(&outcome, 1);
    assert!(
        text.starts_with("task \"Merge revision 2: make the epic gates green")
            && text.contains(
                "The epic gates stayed red on the combined tree after 2 merge revision(s)"
            )
            && text.contains("revision 1:\n    - ")
            && text.contains("revision 2:\n    - ")
            && text
                .matches("src/b calls api v1, which src/a renamed to v2")
                .count()
                >= 3,
        "{text}"
    );
    let checkpoint =
        std::fs::read_to_string(ep.dir().story_plan("b").expect("path")).expect("checkpoint");
    assert!(
        checkpoint.contains("- [x] Merge revision 1: ")
            && checkpoint.contains("- [ ] Merge revision 2: "),
        "{checkpoint}"
    );
}

/// A revision whose coder finds the fix belongs in the other story's files says so with
/// `BLOCKED_ON:`: the story fails with that typed reason, naming the owner, not with red gates.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revision_blocked_on_another_storys_files_fails_with_that_reason() {
    let ep = EpicFixture::new();
    collide(
        &ep,
        "a",
        A_KEEPS_V1,
        "echo 'BLOCKED_ON: src/a/api-v1 must come back, and src/a is story a'\"'\"'s'; exit 0",
    );
    let events = Events::default();
    let outcome = run(&ep, config(&ep, 2), &events).await;
    let events = events.steps();
    assert_eq!(statuses(&outcome), ["a:done", "b:failed"]);
    assert_eq!(revisions(&events).len(), 1, "one revision, then the claim");
    let text = reason(&outcome, 1);
    assert!(
        text.starts_with(
            "merge revision 1: the coder found that the fix for the red epic gates belongs \
             outside this story's paths: src/a/api-v1 must come back"
        ) && text.contains("What it names is owned by story 'a'.")
            && text.contains("src/b calls api v1")
            && !text.contains("missing dependency"),
        "{text}"
    );
    assert!(!epic_files(&ep).iter().any(|path| path.starts_with("src/b")));
}

/// Two culprits in one batch (`--merge-batch` 4): a, b and c queue together while w's merge is
/// gated; b and c each call what a renamed. Bisection pins b, then c, each alone on the proven
/// head with a; each goes back to its coder, repairs itself, and every story merges.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_culprits_of_one_batch_are_each_revised() {
    let ep = EpicFixture::new();
    let root = ep.fx.root.clone();
    let gate = format!(
        "case \"$(pwd)\" in */_epic) ;; *) exit 0 ;; esac\n\
         if [ \"$EPIC_STORY\" = w ]; then touch '{root}/gating-w'; {wait}fi\n\
         for s in b c; do if [ -e src/a/api-v2 ] && [ -e src/$s/uses-v1 ]; then \
         echo \"src/$s calls api v1, which src/a renamed\"; exit 1; fi; done",
        root = root.display(),
        wait = wait_for(&root, "queued-c"),
    );
    ep.hook("a", "mkdir -p src/a; touch src/a/api-v2\n");
    for story in ["b", "c"] {
        ep.hook(
            story,
            &format!(
                "{IN_REVISION}mkdir -p src/{story}\nif [ -n \"$revising\" ]; then \
                 rm -f src/{story}/uses-v1; touch src/{story}/uses-v2; \
                 else touch src/{story}/uses-v1; fi\n"
            ),
        );
    }
    ep.hook("a.judge", &wait_for(&root, "gating-w"));
    ep.hook("b.judge", &wait_for(&root, "queued-a"));
    ep.hook("c.judge", &wait_for(&root, "queued-b"));
    let mut config = ep.config();
    config.judge = Some(ep.agent().into());
    config.concurrency = 4;
    config.merge_batch = 4;
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
    let outcome = run_epic(
        Arc::new(ep.fx.git()),
        plan(&[("w", &[]), ("a", &[]), ("b", &[]), ("c", &[])]),
        config,
        sink,
        CancellationToken::new(),
    )
    .await
    .expect("run");
    let events = events.steps();
    assert_eq!(
        statuses(&outcome),
        ["w:done", "a:done", "b:done", "c:done"],
        "{:?}",
        outcome.report.stories
    );
    assert!(
        events.iter().any(|event| matches!(
            event,
            Event::MergeBatch { stories, .. } if *stories == ["a", "b", "c"]
        )),
        "a, b and c were one batch: {events:#?}"
    );
    let pinned: Vec<&str> = events
        .iter()
        .filter_map(|event| match event {
            Event::CulpritPinned { story, .. } => Some(story.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(pinned, ["b", "c"]);
    let revised: Vec<(String, u32)> = revisions(&events)
        .into_iter()
        .map(|(story, revision, _, met)| {
            // Neither had caught up with w, still being gated when they did.
            assert_eq!(met, ["w", "a"], "{story} meets w's and a's work");
            (story, revision)
        })
        .collect();
    assert_eq!(revised, [("b".to_owned(), 1), ("c".to_owned(), 1)]);
    let counts: Vec<u32> = outcome
        .report
        .stories
        .iter()
        .map(|story| story.merge_revisions)
        .collect();
    assert_eq!(counts, [0, 0, 1, 1]);
    let files = epic_files(&ep);
    for path in ["src/a/api-v2", "src/b/uses-v2", "src/c/uses-v2"] {
        assert!(files.contains(&path.to_owned()), "{path} in {files:?}");
    }
}

/// A run killed after a revision was recorded and before its task reached the checkpoint (the
/// two writes of a revision, in that order): the rerun appends the task from the record and
/// the coder revises with what it records, without counting another revision.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revision_recorded_without_its_task_gets_it_on_the_rerun() {
    let ep = EpicFixture::new();
    collide(&ep, "a", A_KEEPS_V1, B_CALLS_V2);
    // A first run without revisions leaves b failed, its tasks done.
    let outcome = run(&ep, config(&ep, 0), &Events::default()).await;
    assert_eq!(statuses(&outcome), ["a:done", "b:failed"]);
    let checkpoint = ep.dir().story_plan("b").expect("path");
    let before = std::fs::read_to_string(&checkpoint).expect("checkpoint");
    assert!(!before.contains("Merge revision"), "{before}");
    // What the killed run left: revision 1 recorded, its task not appended.
    let head = ep.rev("epic/e");
    let task = "Merge revision 1: make the epic gates green with the work merged meanwhile";
    let record = serde_json::json!({"version": 1, "data": {"revisions": [{
        "number": 1,
        "red": "- gate: recorded red output",
        "head": head,
        "met": [{"id": "a", "title": "Story a", "provides": [], "paths": ["src/a/api-v2"]}],
        "task": task,
    }]}});
    let path = ep.dir().story_revisions("b").expect("path");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(&path, record.to_string()).expect("write the record");

    let events = Events::default();
    let outcome = run(&ep, config(&ep, 1), &events).await;
    assert_eq!(
        statuses(&outcome),
        ["a:done", "b:done"],
        "{}",
        reason(&outcome, 1)
    );
    assert!(revisions(&events.steps()).is_empty(), "no new revision");
    assert_eq!(outcome.report.stories[1].merge_revisions, 1);
    let prompt = std::fs::read_to_string(ep.fx.root.join("b.revision")).expect("revised");
    assert!(
        prompt.contains("recorded red output") && prompt.contains("changed src/a/api-v2"),
        "{prompt}"
    );
    let after = std::fs::read_to_string(&checkpoint).expect("checkpoint");
    assert!(after.contains(&format!("- [x] {task}")), "{after}");
    assert!(epic_files(&ep).contains(&"src/b/uses-v2".to_owned()));
}
