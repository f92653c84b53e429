//! What the report tells of each story's troubles, gathered from the events as they pass: the
//! gate commands that were red, then green when run again (`gate_flaky`,
//! [`epic_report::FlakyGate`]), the failing tests it was not charged with (`gate_tests`,
//! [`epic_report::InheritedTests`]), and the turns epic ended as stalled or looping
//! (`turn_stalled`, `turn_looping`), and the requests of its ACP agents epic rejected
//! (`permission_rejected`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use epic_report::{FlakyGate, InheritedTests};

use epic_events::{Event, EventSink};
use epic_gates::Inherited;

/// What the report tells of one story's troubles so far.
#[derive(Debug, Default)]
pub(super) struct Troubles {
    /// Its flaky gates, in order.
    pub(super) flaky_gates: Vec<FlakyGate>,
    /// The failing tests it inherited, by command (each test once however many runs named it).
    inherited: Inherited,
    /// Its turns ended as stalled.
    pub(super) stalled_turns: u32,
    /// Its turns ended as looping.
    pub(super) looping_turns: u32,
    /// The requests of its ACP agents epic rejected.
    pub(super) permission_rejections: u32,
}

impl Troubles {
    /// The failing tests it inherited, by command.
    pub(super) fn inherited_tests(&self) -> Vec<InheritedTests> {
        self.inherited
            .iter()
            .map(|(command, tests)| InheritedTests::new(command, tests.iter().cloned().collect()))
            .collect()
    }
}

/// The troubles seen so far, by story.
#[derive(Debug, Clone, Default)]
pub(super) struct Flakes(Arc<Mutex<BTreeMap<String, Troubles>>>);

impl Flakes {
    /// `events`, noting each `gate_flaky`, `gate_tests`, `turn_stalled` and `turn_looping` of a
    /// story on its way through.
    pub(super) fn recording(&self, events: EventSink) -> EventSink {
        let flakes = Arc::clone(&self.0);
        Arc::new(move |event: Event| {
            let note = |story: &str, note: &dyn Fn(&mut Troubles)| {
                note(
                    flakes
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .entry(story.to_owned())
                        .or_default(),
                );
            };
            match &event {
                Event::GateFlaky {
                    story: Some(story),
                    command,
                    runs,
                    status,
                    output,
                } => note(story, &|troubles| {
                    troubles
                        .flaky_gates
                        .push(FlakyGate::new(command, *runs, status, output));
                }),
                Event::GateTests {
                    story: Some(story),
                    command,
                    inherited: tests,
                    ..
                } if !tests.is_empty() => note(story, &|troubles| {
                    troubles
                        .inherited
                        .entry(command.clone())
                        .or_default()
                        .extend(tests.iter().cloned());
                }),
                Event::TurnStalled { story, .. } => {
                    note(story, &|troubles| troubles.stalled_turns += 1);
                }
                Event::TurnLooping { story, .. } => {
                    note(story, &|troubles| troubles.looping_turns += 1);
                }
                Event::PermissionRejected { story, .. } => {
                    note(story, &|troubles| troubles.permission_rejections += 1);
                }
                _ => {}
            }
            events(event);
        })
    }

    /// The troubles of `story`, flaky gates in the order they happened; none are kept after.
    pub(super) fn take(&self, story: &str) -> Troubles {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(story)
            .unwrap_or_default()
    }
}
