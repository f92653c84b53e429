//! The line an event is shown as, if it is shown: each family of events is asked in turn, and
//! an event belongs to one family alone.

use epic_events::Event;

use super::{gate, merge, people, run, story, task, turn, worktree};

/// The line an event is shown as, if it is shown (`-v` shows the minor steps).
pub(in crate::progress) fn describe(event: &Event, verbose: bool) -> Option<String> {
    run::line(event, verbose)
        .or_else(|| gate::line(event, verbose))
        .or_else(|| story::line(event))
        .or_else(|| people::line(event))
        .or_else(|| worktree::line(event, verbose))
        .or_else(|| task::line(event, verbose))
        .or_else(|| turn::line(event, verbose))
        .or_else(|| merge::line(event, verbose))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_its_bisection_and_its_culprit_read_as_lines() {
        let stories = vec!["a".to_owned(), "b".to_owned()];
        let line = |event: Event| describe(&event, false).unwrap();
        assert_eq!(
            line(Event::MergeBatch {
                batch: 2,
                stories: stories.clone(),
                checkpoint: "0123456789abcdef".into(),
            }),
            "merge batch 2: 2 stories merged together on 0123456789: a, b"
        );
        assert_eq!(
            line(Event::BatchGated {
                batch: 2,
                step: 0,
                stories: stories.clone(),
                commit: "fedcba9876543210".into(),
                passed: false,
            }),
            "merge batch 2: gates red on fedcba9876"
        );
        assert_eq!(
            line(Event::BatchGated {
                batch: 2,
                step: 1,
                stories: vec!["a".to_owned()],
                commit: "fedcba9876543210".into(),
                passed: true,
            }),
            "merge batch 2: bisection step 1: gates green on fedcba9876 with a"
        );
        assert_eq!(
            line(Event::BatchProven {
                batch: 2,
                stories: vec!["a".to_owned()],
                commit: "fedcba9876543210".into(),
            }),
            "merge batch 2: proven together on fedcba9876: a"
        );
        assert_eq!(
            line(Event::CulpritPinned {
                batch: 2,
                story: "b".into(),
                commit: "fedcba9876543210".into(),
            }),
            "merge batch 2: the red gates are pinned on story b"
        );
        assert!(describe(&Event::MergeQueued { story: "a".into() }, false).is_none());
    }

    #[test]
    fn task_titles_are_quoted_with_their_quotes_escaped() {
        let line = describe(
            &Event::TaskCommitted {
                story: "a".into(),
                task: r#"use "compose""#.into(),
                commit: None,
            },
            false,
        );
        assert_eq!(
            line.as_deref(),
            Some(r#"story a: committed "use \"compose\"""#)
        );
    }

    #[test]
    fn a_turn_says_whether_its_tokens_were_reported_or_estimated() {
        let ended = |reported| Event::TurnEnded {
            story: "a".into(),
            role: epic_agents::Role::Coder,
            turn: 2,
            ok: true,
            estimated_tokens: 1234,
            reported,
            error: None,
        };
        assert_eq!(
            describe(&ended(true), true).as_deref(),
            Some("story a: coder turn 2 ended (1.2k tokens, reported)")
        );
        assert_eq!(
            describe(&ended(false), true).as_deref(),
            Some("story a: coder turn 2 ended (~1.2k tokens, est.)")
        );
    }

    #[test]
    fn a_flaky_gate_is_named_with_its_first_run() {
        let flaky = |story: Option<&str>| Event::GateFlaky {
            story: story.map(String::from),
            command: "pytest".into(),
            runs: 2,
            status: "exit code 1".into(),
            output: "collected 3 items\n\nFAILED test_port.py::test_bind\n".into(),
        };
        assert_eq!(
            describe(&flaky(Some("a")), false).as_deref(),
            Some(
                "story a: gate `pytest` is flaky: red (exit code 1: FAILED \
                 test_port.py::test_bind), green on run 2; passed"
            )
        );
        assert!(
            describe(&flaky(None), false)
                .is_some_and(|line| line.starts_with("epic: gate `pytest` is flaky"))
        );
    }

    #[test]
    fn leftovers_are_named_with_the_way_to_keep_them() {
        let line = describe(
            &Event::GateLeftovers {
                story: Some("a".into()),
                command: "pytest".into(),
                paths: ["a.pyc", "b.pyc", "c.pyc", "report.xml", "x"]
                    .map(String::from)
                    .to_vec(),
            },
            false,
        );
        assert_eq!(
            line.as_deref(),
            Some(
                "story a: `pytest` left a.pyc, b.pyc, c.pyc and 2 more; removed (not the \
                 story's work: add them to .gitignore to keep them)"
            )
        );
    }
}
