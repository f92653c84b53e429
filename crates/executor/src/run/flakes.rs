//! The flaky gates and inherited failing tests of a run's stories, gathered from the
//! `gate_flaky` and `gate_tests` events as they pass, for the report: each story's outcome
//! names the gate commands that were red, then green when run again
//! ([`epic_report::FlakyGate`]), and the failing tests it was not charged with
//! ([`epic_report::InheritedTests`]).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use epic_report::{FlakyGate, InheritedTests};

use crate::event::{Event, EventSink};
use crate::gate_tests::Inherited;

/// The flaky gates seen so far, by story (and the inherited tests, beside them).
#[derive(Debug, Clone, Default)]
pub(super) struct Flakes(
    Arc<Mutex<BTreeMap<String, Vec<FlakyGate>>>>,
    Arc<Mutex<BTreeMap<String, Inherited>>>,
);

impl Flakes {
    /// `events`, noting each `gate_flaky` of a story on its way through.
    pub(super) fn recording(&self, events: EventSink) -> EventSink {
        let flakes = Arc::clone(&self.0);
        let inherited = Arc::clone(&self.1);
        Arc::new(move |event: Event| {
            if let Event::GateTests {
                story: Some(story),
                command,
                inherited: tests,
                ..
            } = &event
                && !tests.is_empty()
            {
                inherited
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .entry(story.clone())
                    .or_default()
                    .entry(command.clone())
                    .or_default()
                    .extend(tests.iter().cloned());
            }
            if let Event::GateFlaky {
                story: Some(story),
                command,
                runs,
                status,
                output,
            } = &event
            {
                flakes
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .entry(story.clone())
                    .or_default()
                    .push(FlakyGate::new(command, *runs, status, output));
            }
            events(event);
        })
    }

    /// The flaky gates of `story`, in the order they happened; none are kept after.
    pub(super) fn take(&self, story: &str) -> Vec<FlakyGate> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(story)
            .unwrap_or_default()
    }

    /// The failing tests `story` inherited, by command (each test once however many runs named
    /// it); none are kept after.
    pub(super) fn take_inherited(&self, story: &str) -> Vec<InheritedTests> {
        self.1
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(story)
            .unwrap_or_default()
            .into_iter()
            .map(|(command, tests)| InheritedTests::new(command, tests.into_iter().collect()))
            .collect()
    }
}
