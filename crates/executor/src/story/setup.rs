//! Step 3 of a story: the setup commands (`--setup`), run in its worktree when it was just
//! created or has just caught up, each an event; one that fails fails the story.

use std::sync::Arc;

use super::work::Work;
use crate::failure::{Failure, Stop};
use epic_events::Event;
use epic_gates::millis;
use epic_gates::{GateResult, Gates};

impl Work {
    /// Runs the setup commands in the story's worktree; the first that fails fails the story.
    pub(super) async fn setup(&self) -> Result<(), Stop> {
        let commands = &self.shared.config.setup;
        if commands.is_empty() {
            return Ok(());
        }
        let setup = Gates::new(commands.iter().cloned(), self.shared.config.gate_timeout)
            .with_sandbox(self.shared.sandbox.clone())
            .with_guard(Arc::clone(&self.shared.guard))
            .with_tidying(Arc::clone(&self.shared.git));
        let story = self.id().to_owned();
        let events = Arc::clone(&self.shared.events);
        let on_result = move |result: &GateResult| {
            events(Event::SetupRan {
                story: story.clone(),
                command: result.command.clone(),
                passed: result.passed,
                duration_ms: millis(result),
                status: result.status.clone(),
            });
            if let Some(event) = result.leftovers_event(Some(&story)) {
                events(event);
            }
        };
        let review = setup
            .run(&self.worktree, &self.env(), &self.cancel, &on_result)
            .await
            .map_err(|_| Stop::Cancelled)?;
        if review.clean {
            Ok(())
        } else {
            Err(Failure::Setup(review).into())
        }
    }
}
