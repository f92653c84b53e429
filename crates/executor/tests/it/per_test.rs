//! Failures charged per test: with a red baseline allowed, a gate command whose output (or
//! JUnit file) names its failing tests stays a story's gate, and a story is charged only with
//! the tests it turned red: the inherited one is listed in its report, never a reason to fail
//! or undo it. Output that cannot be read test by test is judged whole.

use std::collections::BTreeMap;

use epic_events::Event;
use epic_executor::{RunConfig, RunOutcome};

use crate::epic_support::{EpicFixture, commit_on_main, epic_files, plan, reason, statuses};
use crate::support::Events;

/// The test red on `main` before the epic: the inherited one.
const LEGACY: &str = "tests/test_legacy.py::test_old";

/// A pytest-like gate: every test named in `tests/red.txt` and `src/*/red.txt` fails (and on
/// the epic worktree, those in `src/*/red-epic.txt` too), printed as pytest's short summary
/// and counted by its last line; a tree with a `src/*/crash` file crashes without naming a
/// test. With `junit`, the failing tests go to `report.xml` instead, and the output names none.
fn gate_script(ep: &EpicFixture, junit: bool) -> String {
    let report = if junit {
        r#"{ echo "<testsuite failures=\"$n\">"
  for t in $red; do echo "<testcase classname=\"${t%%::*}\" name=\"${t##*::}\"><failure/></testcase>"; done
  echo '<testcase classname="tests/test_ok.py" name="test_fine"/></testsuite>'; } > report.xml
echo "$n failed; the details are in report.xml""#
    } else {
        r#"for t in $red; do echo "FAILED $t - assert False"; done
echo "==================== $n failed, 3 passed in 0.02s ===================""#
    };
    let script = format!(
        r#"red=$(cat tests/red.txt src/*/red.txt 2>/dev/null)
if [ "$(basename "$(pwd)")" = _epic ]; then red="$red $(cat src/*/red-epic.txt 2>/dev/null)"; fi
if ls src/*/crash >/dev/null 2>&1; then echo "Fatal Python error: Segmentation fault"; exit 139; fi
n=0; for t in $red; do n=$((n + 1)); done
{report}
[ "$n" -eq 0 ]
"#
    );
    let path = ep
        .fx
        .root
        .join(if junit { "gate-junit.sh" } else { "gate.sh" });
    std::fs::write(&path, script).expect("gate script");
    format!("sh '{}'", path.display())
}

/// A fixture whose `main` has one red test, and a configuration holding stories to the gate
/// `junit` says, with a red baseline allowed and one review round per task.
fn red_baseline(junit: bool) -> (EpicFixture, RunConfig, String) {
    let ep = EpicFixture::new();
    commit_on_main(&ep, &[("tests/red.txt", &format!("{LEGACY}\n"))]);
    let gate = gate_script(&ep, junit);
    let mut config = ep.config();
    config.gates = vec![gate.clone()];
    config.allow_red_baseline = true;
    config.max_rounds = 1;
    config.judge_rounds = 1;
    if junit {
        config.gate_junit = BTreeMap::from([(gate.clone(), "report.xml".to_owned())]);
    }
    (ep, config, gate)
}

/// The `gate_tests` events of `story` (`None`: the baseline's): charged and inherited.
fn named(events: &[Event], of: Option<&str>) -> Vec<(Vec<String>, Vec<String>)> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::GateTests {
                story,
                charged,
                inherited,
                ..
            } if story.as_deref() == of => Some((charged.clone(), inherited.clone())),
            _ => None,
        })
        .collect()
}

fn index_of(outcome: &RunOutcome, id: &str) -> usize {
    outcome
        .report
        .stories
        .iter()
        .position(|story| story.id == id)
        .expect("the story is in the report")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_story_is_charged_only_with_the_test_it_turned_red() {
    let (ep, config, gate) = red_baseline(false);
    // b turns a test red in its own worktree; c one that is red only once merged.
    ep.hook(
        "b",
        "mkdir -p src/b; echo tests/test_b.py::test_new > src/b/red.txt\n",
    );
    ep.hook(
        "c",
        "mkdir -p src/c; echo tests/test_c.py::test_merged > src/c/red-epic.txt\n",
    );
    let events = Events::default();
    let outcome = ep
        .run(
            &plan(&[("a", &[]), ("b", &[]), ("c", &[])]),
            config,
            &events,
        )
        .await
        .expect("a red baseline is allowed");
    assert_eq!(
        statuses(&outcome),
        ["a:done", "b:failed", "c:failed"],
        "{}",
        reason(&outcome, 0)
    );
    let steps = events.steps();
    assert!(steps.iter().any(|event| matches!(
        event,
        Event::BaselineChecked { failed, .. } if *failed == [gate.clone()]
    )));
    assert_eq!(
        named(&steps, None),
        [(vec![LEGACY.to_owned()], vec![])],
        "the baseline names its red test"
    );

    // a: red only with the inherited test, so done; the report lists that test.
    let a = &outcome.report.stories[index_of(&outcome, "a")];
    assert_eq!(a.inherited_tests.len(), 1, "{:?}", a.inherited_tests);
    assert_eq!(
        (
            a.inherited_tests[0].command.as_str(),
            a.inherited_tests[0].tests.clone()
        ),
        (gate.as_str(), vec![LEGACY.to_owned()])
    );
    assert!(
        named(&steps, Some("a"))
            .iter()
            .all(|(charged, inherited)| charged.is_empty() && *inherited == [LEGACY]),
        "{:?}",
        named(&steps, Some("a"))
    );
    assert!(epic_files(&ep).contains(&"src/a/done.txt".to_owned()));

    // b: charged with its own test alone, in its worktree.
    let b = reason(&outcome, index_of(&outcome, "b"));
    assert!(
        b.contains("it turned 1 test red: tests/test_b.py::test_new"),
        "{b}"
    );
    assert!(b.contains(&format!("not charged: {LEGACY}")), "{b}");
    assert!(named(&steps, Some("b")).contains(&(
        vec!["tests/test_b.py::test_new".to_owned()],
        vec![LEGACY.to_owned()]
    )));

    // c: green in its worktree, red once merged: undone, naming its test alone.
    let c = reason(&outcome, index_of(&outcome, "c"));
    assert!(
        c.contains("it turned 1 test red: tests/test_c.py::test_merged"),
        "{c}"
    );
    // Merged alone, rolled back; gated in a batch with another story, pinned by bisection.
    assert!(steps.iter().any(|event| matches!(
        event,
        Event::StoryRolledBack { story, .. } | Event::CulpritPinned { story, .. } if story == "c"
    )));
    assert!(!epic_files(&ep).contains(&"src/c/done.txt".to_owned()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_that_cannot_be_read_test_by_test_is_judged_whole() {
    let (ep, config, _) = red_baseline(false);
    ep.hook("b", "mkdir -p src/b; touch src/b/crash\n");
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[]), ("b", &[])]), config, &events)
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:done", "b:failed"]);
    let b = reason(&outcome, 1);
    assert!(
        b.contains("judged whole, since its output cannot be read test by test"),
        "{b}"
    );
    assert!(b.contains("Segmentation fault"), "{b}");
    assert!(named(&events.steps(), Some("b")).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_junit_file_names_the_failing_tests() {
    let (ep, config, _) = red_baseline(true);
    ep.hook(
        "b",
        "mkdir -p src/b; echo tests/test_b.py::test_new > src/b/red.txt\n",
    );
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[]), ("b", &[])]), config, &events)
        .await
        .expect("run");
    assert_eq!(
        statuses(&outcome),
        ["a:done", "b:failed"],
        "{}",
        reason(&outcome, 0)
    );
    assert_eq!(
        named(&events.steps(), None),
        [(vec![LEGACY.to_owned()], vec![])]
    );
    assert_eq!(outcome.report.stories[0].inherited_tests[0].tests, [LEGACY]);
    let b = reason(&outcome, 1);
    assert!(
        b.contains("it turned 1 test red: tests/test_b.py::test_new"),
        "{b}"
    );
    // The report was the gate's leftover: read, then removed.
    assert!(!ep.epic_worktree().join("report.xml").exists());
}
