//! `--notify`: a command run whenever a story needs a person, so that a run nobody watches still
//! reaches them (`notify-send`, a chat webhook, a phone).
//!
//! [`notifying`] wraps a run's event sink: the events that call for a person ([`attention`]: a
//! story waiting for an answer, failed, stopped; every seat of a roster paused) each start the command, one at a
//! time in the order they came, off the run's path, in the run's sandbox with the epic worktree
//! read-only, under a deadline. Its environment names the epic (`EPIC_EPIC`), the story
//! (`EPIC_STORY`) and what happened (`EPIC_ATTENTION`: `waiting`, `failed`, `stopped`,
//! `paused`: every seat of a roster); the question or the reason is its standard input. A command that fails or runs
//! past its deadline is an event ([`Event::NotifyFailed`]), never a failed story.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use epic_process::Spec;
use epic_process::sandbox::{Access, Sandbox};
use tokio::sync::mpsc;

use crate::event::{Event, EventSink};
use crate::record::run_hook;

/// What calls for a person: the story, what happened, and the words they should read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attention {
    /// The story; for a paused seat, the story whose turn met the pause.
    pub story: String,
    /// `waiting`, `failed`, `stopped` or `paused`.
    pub kind: &'static str,
    /// The question, the reason, or the pause's message.
    pub text: String,
}

/// The attention `event` calls for, if any: a story waiting for an answer, failed or stopped.
/// A seat's pause calls for a person only once every seat of a roster is paused
/// ([`Pauses`]).
pub fn attention(event: &Event) -> Option<Attention> {
    let (story, kind, text) = match event {
        Event::StoryWaiting { story, question } => (story, "waiting", question.clone()),
        Event::StoryFailed { story, reason } => (story, "failed", reason.clone()),
        Event::StoryStopped { story } => (story, "stopped", format!("story `{story}` stopped")),
        _ => return None,
    };
    Some(Attention {
        story: story.clone(),
        kind,
        text,
    })
}

/// Which seats are paused, and the rosters they belong to: a roster whose every seat is paused
/// leaves its stories waiting, which calls for a person (`paused`).
#[derive(Debug, Default)]
pub struct Pauses {
    /// Each roster's seats, by name.
    rosters: Vec<Vec<String>>,
    /// The seats paused now, each with why.
    paused: BTreeMap<String, String>,
}

impl Pauses {
    /// Pauses over `rosters`, each a list of seat names.
    pub fn new(rosters: Vec<Vec<String>>) -> Self {
        Self {
            rosters,
            paused: BTreeMap::new(),
        }
    }

    /// Takes in `event`: the attention it calls for when it pauses the last seat of a roster
    /// not paused yet.
    pub fn take(&mut self, event: &Event) -> Option<Attention> {
        match event {
            Event::SeatResumed { seat } => {
                self.paused.remove(seat);
                None
            }
            Event::SeatPaused {
                seat,
                story,
                until,
                reason,
                message,
                ..
            } => {
                let was: Vec<Vec<String>> = self.stuck().into_iter().cloned().collect();
                self.paused.insert(
                    seat.clone(),
                    format!("`{seat}` is paused ({reason}) until {until}: {message}"),
                );
                let now = self.stuck();
                let newly: Vec<&Vec<String>> = now
                    .into_iter()
                    .filter(|roster| !was.contains(roster))
                    .collect();
                let roster = newly.first()?;
                let each: Vec<&str> = roster
                    .iter()
                    .filter_map(|seat| self.paused.get(seat).map(String::as_str))
                    .collect();
                Some(Attention {
                    story: story.clone(),
                    kind: "paused",
                    text: format!(
                        "every seat of the roster {} is paused: {}",
                        roster.join(","),
                        each.join("; ")
                    ),
                })
            }
            _ => None,
        }
    }

    /// The rosters whose every seat is paused.
    fn stuck(&self) -> Vec<&Vec<String>> {
        self.rosters
            .iter()
            .filter(|roster| {
                !roster.is_empty() && roster.iter().all(|seat| self.paused.contains_key(seat))
            })
            .collect()
    }
}

/// Where and how the notify command runs.
#[derive(Debug, Clone)]
pub struct Notify {
    /// The command, run with `sh -c`.
    pub command: String,
    /// The epic's id (`EPIC_EPIC`).
    pub epic: String,
    /// The directory it runs in: the epic worktree, read-only to it.
    pub cwd: PathBuf,
    /// The sandbox it runs in.
    pub sandbox: Sandbox,
    /// How long it may run.
    pub timeout: Duration,
    /// The run's rosters, each a list of seat names: a roster whose every seat is paused
    /// calls for a person.
    pub rosters: Vec<Vec<String>>,
}

/// `next`, with `notify`'s command started for each event that calls for a person; the
/// commands run on a task of their own, which ends once every sink is dropped.
pub fn notifying(notify: Notify, next: EventSink) -> EventSink {
    let (sender, attentions) = mpsc::unbounded_channel();
    let pauses = Mutex::new(Pauses::new(notify.rosters.clone()));
    tokio::spawn(run_notify(notify, attentions, Arc::clone(&next)));
    Arc::new(move |event: Event| {
        let stuck = pauses
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take(&event);
        if let Some(attention) = attention(&event).or(stuck) {
            sender.send(attention).ok();
        }
        next(event);
    })
}

/// Runs the command for each attention, in order.
async fn run_notify(
    notify: Notify,
    mut attentions: mpsc::UnboundedReceiver<Attention>,
    events: EventSink,
) {
    while let Some(attention) = attentions.recv().await {
        let spec = Spec {
            program: "sh".into(),
            args: vec!["-c".into(), notify.command.clone().into()],
            cwd: notify.cwd.clone(),
            env: vec![
                (
                    OsString::from("EPIC_EPIC"),
                    Some(notify.epic.clone().into()),
                ),
                (
                    OsString::from("EPIC_STORY"),
                    Some(attention.story.clone().into()),
                ),
                (
                    OsString::from("EPIC_ATTENTION"),
                    Some(attention.kind.into()),
                ),
            ],
            stdin: Some(format!("{}\n", attention.text).into_bytes()),
        };
        let spec = notify
            .sandbox
            .wrap(spec, &notify.cwd, Access::ReadOnly)
            .await;
        let status = run_hook(&spec, notify.timeout).await;
        if let Some(status) = status {
            events(Event::NotifyFailed {
                story: attention.story,
                attention: attention.kind.to_owned(),
                status,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_story_that_needs_a_person_calls_for_one() {
        let waiting = Event::StoryWaiting {
            story: "svc".into(),
            question: "which port?".into(),
        };
        assert_eq!(
            attention(&waiting),
            Some(Attention {
                story: "svc".into(),
                kind: "waiting",
                text: "which port?".into()
            })
        );
        let failed = Event::StoryFailed {
            story: "a".into(),
            reason: "gate red".into(),
        };
        assert_eq!(attention(&failed).map(|a| a.kind), Some("failed"));
        let stopped = Event::StoryStopped { story: "a".into() };
        assert_eq!(attention(&stopped).map(|a| a.kind), Some("stopped"));
        let merged = Event::TaskCommitted {
            story: "a".into(),
            task: "t".into(),
            commit: None,
        };
        assert_eq!(attention(&merged), None);
    }

    fn paused(seat: &str) -> Event {
        Event::SeatPaused {
            seat: seat.into(),
            story: "a".into(),
            until: "2030-01-01T10:00:00Z".into(),
            since: "2030-01-01T09:00:00Z".into(),
            reason: "usage limit".into(),
            message: "limit reached".into(),
        }
    }

    #[test]
    fn a_pause_calls_for_a_person_once_every_seat_of_a_roster_is_paused() {
        let mut pauses = Pauses::new(vec![
            vec!["claude".into(), "codex".into()],
            vec!["gemini".into()],
        ]);
        assert_eq!(pauses.take(&paused("claude")), None, "codex still works");
        let both = pauses.take(&paused("codex")).expect("the roster is stuck");
        assert_eq!(both.kind, "paused");
        assert!(
            both.text
                .starts_with("every seat of the roster claude,codex is paused: `claude`"),
            "{}",
            both.text
        );
        assert_eq!(pauses.take(&paused("codex")), None, "stuck already");
        assert_eq!(
            pauses.take(&Event::SeatResumed {
                seat: "claude".into()
            }),
            None
        );
        assert!(pauses.take(&paused("claude")).is_some(), "stuck again");
        assert!(pauses.take(&paused("gemini")).is_some(), "a roster of one");
    }
}
