//! The flaky gates of a run's stories, gathered from the `gate_flaky` events as they pass, for
//! the report: each story's outcome names the gate commands that were red, then green when run
//! again ([`epic_report::FlakyGate`]).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use epic_report::FlakyGate;

use crate::event::{Event, EventSink};

/// The flaky gates seen so far, by story.
#[derive(Debug, Clone, Default)]
pub(super) struct Flakes(Arc<Mutex<BTreeMap<String, Vec<FlakyGate>>>>);

impl Flakes {
    /// `events`, noting each `gate_flaky` of a story on its way through.
    pub(super) fn recording(&self, events: EventSink) -> EventSink {
        let flakes = Arc::clone(&self.0);
        Arc::new(move |event: Event| {
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
}
