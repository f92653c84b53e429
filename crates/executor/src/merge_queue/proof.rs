//! A batch's proof: the gates run once on a candidate, their verdict (strict, or with a red
//! baseline allowed, only a regression counts), and a green verdict cached as the baseline.

use std::sync::Arc;

use epic_git_ops::CommitId;
use epic_process::chain;

use super::batch::{Batch, Entry};
use super::journal::names;
use crate::failure::{Failure, Stop};
use epic_events::Event;
use epic_gates::{GateBaseline, GateVerdict};
use epic_gates::{GateResult, millis};

impl Batch<'_> {
    /// Runs the gates on the candidate `segment` ends in. Strict: every gate must pass. With a
    /// red baseline allowed: only a gate that passed on the proven head may not fail. Green, the
    /// gate results; the verdict becomes the new baseline.
    pub(super) async fn gate(&mut self, segment: &[Entry]) -> Result<Vec<GateResult>, Stop> {
        let Some(last) = segment.last() else {
            return Ok(Vec::new());
        };
        let tip = last.tip;
        if tip == self.base {
            // Nothing to prove: every story of it was already on the proven head.
            return Ok(Vec::new());
        }
        let shared = self.shared;
        let stories: Vec<String> = segment.iter().map(|entry| entry.id().to_owned()).collect();
        let candidate = format!("{}: merge {}", shared.dir.epic_id(), names(&stories));
        self.reset_to(tip, candidate).await?;
        let story = last.id().to_owned();
        let results = Arc::new(std::sync::Mutex::new(Vec::new()));
        let events = Arc::clone(&shared.events);
        let on_result = {
            let results = Arc::clone(&results);
            let story = story.clone();
            move |result: &GateResult| {
                events(Event::EpicGate {
                    story: Some(story.clone()),
                    command: result.command.clone(),
                    passed: result.passed,
                    duration_ms: millis(result),
                    status: result.status.clone(),
                });
                if let Some(event) = result.flaky_event(Some(&story)) {
                    events(event);
                }
                if let Some(event) = result.tests_event(Some(&story)) {
                    events(event);
                }
                if let Some(event) = result.leftovers_event(Some(&story)) {
                    events(event);
                }
                results
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(result.clone());
            }
        };
        let env = vec![
            ("EPIC_EPIC".to_owned(), shared.dir.epic_id().to_owned()),
            ("EPIC_STORY".to_owned(), story.clone()),
            (
                "EPIC_WORKTREE".to_owned(),
                shared.epic_worktree.display().to_string(),
            ),
        ];
        let verdict = self.verdict(&env, &on_result, tip).await;
        if self.several {
            self.emit(Event::BatchGated {
                batch: self.number,
                step: self.steps,
                stories: segment.iter().map(|entry| entry.id().to_owned()).collect(),
                commit: tip.to_hex(),
                passed: verdict.is_ok(),
            });
            self.steps += 1;
        }
        verdict?;
        let results = std::mem::take(
            &mut *results
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        Ok(results)
    }

    /// The gates' verdict on the epic worktree at `tip`; green, cached as the baseline.
    pub(super) async fn verdict(
        &mut self,
        env: &[(String, String)],
        on_result: &(dyn Fn(&GateResult) + Send + Sync),
        tip: CommitId,
    ) -> Result<(), Stop> {
        let shared = self.shared;
        let results = if shared.config.allow_red_baseline {
            // Not charged with the tests red on the proven head (`gate_tests.rs`).
            shared
                .epic_gates
                .clone()
                .with_inherited(self.head.inherited.clone())
                .run_each(&shared.epic_worktree, env, self.cancel, on_result)
                .await
                .map_err(|_| Stop::Cancelled)?
        } else {
            let review = shared
                .epic_gates
                .run(&shared.epic_worktree, env, self.cancel, on_result)
                .await
                .map_err(|_| Stop::Cancelled)?;
            if !review.clean {
                return Err(Failure::EpicGatesRed(review).into());
            }
            Vec::new()
        };
        // A command red on the proven head counts when its failing tests were named there: red
        // now, it named one more (or could not be read test by test).
        let regressions: Vec<_> = results
            .iter()
            .filter(|(result, _)| {
                !result.passed
                    && (self.head.green.contains(&result.command)
                        || self.head.inherited.contains_key(&result.command))
            })
            .filter_map(|(_, issue)| issue.clone())
            .collect();
        if !regressions.is_empty() {
            return Err(Failure::EpicGatesRegressed(regressions).into());
        }
        let baseline = GateBaseline {
            commit: tip.to_hex(),
            gates: shared
                .epic_gates
                .commands()
                .iter()
                .map(|command| {
                    let result = results
                        .iter()
                        .find(|(result, _)| result.command == *command);
                    match result {
                        Some((result, _)) => GateVerdict::of(result),
                        // Strict: every gate ran and passed.
                        None => GateVerdict {
                            command: command.clone(),
                            passed: !shared.config.allow_red_baseline,
                            failing: None,
                        },
                    }
                })
                .collect(),
        };
        self.head.green = baseline.passed();
        self.head.inherited = baseline.inherited();
        let dir = shared.dir.clone();
        let saved = shared
            .write(GateBaseline::path(&dir), move |_| {
                baseline.save(&dir).map_err(|error| chain(&error))
            })
            .await
            .unwrap_or_else(|error| Err(error.to_string()));
        if let Err(error) = saved {
            self.emit(Event::RunNote {
                message: format!("the gate baseline could not be cached: {error}"),
            });
        }
        Ok(())
    }
}
