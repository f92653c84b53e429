//! What `epic report --format html` draws beyond the report: the plan's dependencies from
//! `plan.json`, and the timeline's activities from `events.jsonl` (turns, gate runs in the
//! stories' worktrees and on the epic head, merges and batches, merge revisions, seat pauses,
//! waits for a person), each start paired with its end.

use std::collections::BTreeMap;

use epic_events::{Event, LoggedEvent};
use epic_land::RunPlan;
use epic_report::{Activity, ActivityKind, Lane, Node, Pictures, Timestamp};
use epic_state_store::EpicDir;

use crate::error::{CommandError, Kind};

/// The pictures of the epic in `dir`: no graph without `plan.json` (the page then draws the
/// report's stories alone), no activities without a log.
pub(super) fn gather(dir: &EpicDir) -> Result<Pictures, CommandError> {
    let repository = |error| CommandError::new(Kind::Repository, error);
    let graph = epic_state_store::load::<RunPlan>(dir.run_plan())
        .map_err(repository)?
        .map(|recorded| {
            recorded
                .plan
                .stories
                .into_iter()
                .map(|story| Node::new(story.id, story.depends_on))
                .collect()
        })
        .unwrap_or_default();
    let events = epic_state_store::read_all::<LoggedEvent>(dir.events())
        .map_err(|error| CommandError::new(Kind::Repository, error))?;
    Ok(Pictures {
        graph,
        activities: activities(&events.events),
    })
}

/// What was open when the log said where it began: a turn, a merge, a batch, a wait.
#[derive(Default)]
struct Open {
    turns: BTreeMap<(String, u32), (Timestamp, String)>,
    merges: BTreeMap<String, Timestamp>,
    batches: BTreeMap<u64, (Timestamp, Vec<String>, Option<Timestamp>, bool)>,
    waits: BTreeMap<String, (Timestamp, String)>,
}

/// The activities of a log, in the order they ended. A start the log never ends (a run killed
/// midway) is left out, but a wait, which ends at the last event; an event whose `at` does not
/// parse is skipped.
pub(super) fn activities(events: &[LoggedEvent]) -> Vec<Activity> {
    let mut open = Open::default();
    let mut out = Vec::new();
    let mut last = None;
    for logged in events {
        let Ok(at) = logged.at.parse::<Timestamp>() else {
            continue;
        };
        last = Some(at);
        take(&logged.event, at, &mut open, &mut out);
    }
    for (batch, (start, stories, finish, proven)) in open.batches {
        if let Some(finish) = finish {
            out.push(batch_activity(batch, start, &stories, finish, proven));
        }
    }
    if let Some(last) = last {
        for (story, (start, question)) in open.waits {
            out.push(activity(
                Lane::Story(story),
                ActivityKind::Waiting,
                start,
                last,
                question,
            ));
        }
    }
    out
}

fn activity(
    lane: Lane,
    kind: ActivityKind,
    start: Timestamp,
    finish: Timestamp,
    label: String,
) -> Activity {
    Activity {
        lane,
        kind,
        start,
        finish: finish.max(start),
        label,
    }
}

fn batch_activity(
    batch: u64,
    start: Timestamp,
    stories: &[String],
    finish: Timestamp,
    proven: bool,
) -> Activity {
    activity(
        Lane::Merge,
        ActivityKind::Batch { proven },
        start,
        finish,
        format!("batch {batch}: {}", stories.join(", ")),
    )
}

/// One event: a start remembered in `open`, an end (or a whole span) added to `out`.
fn take(event: &Event, at: Timestamp, open: &mut Open, out: &mut Vec<Activity>) {
    match event {
        Event::TurnStarted { .. }
        | Event::TurnEnded { .. }
        | Event::GatePassed { .. }
        | Event::GateFailed { .. }
        | Event::EpicGate { .. } => work(event, at, open, out),
        Event::MergeStarted { .. }
        | Event::StoryMerged { .. }
        | Event::StoryRolledBack { .. }
        | Event::MergeConflicted { .. }
        | Event::MergeBatch { .. }
        | Event::BatchGated { .. }
        | Event::BatchProven { .. }
        | Event::MergeRevision { .. } => merges(event, at, open, out),
        _ => waits(event, at, open, out),
    }
}

fn story_lane(story: &str) -> Lane {
    Lane::Story(story.to_owned())
}

/// When something that ended `at` after `duration_ms` began.
fn started(at: Timestamp, duration_ms: u64) -> Timestamp {
    let ran = jiff::SignedDuration::from_millis(i64::try_from(duration_ms).unwrap_or(i64::MAX));
    at.checked_sub(ran).unwrap_or(at)
}

/// A turn or a gate run (in a story's worktree, or on the epic head).
fn work(event: &Event, at: Timestamp, open: &mut Open, out: &mut Vec<Activity>) {
    match event {
        Event::TurnStarted {
            story, role, turn, ..
        } => {
            open.turns
                .insert((story.clone(), *turn), (at, role.as_str().to_owned()));
        }
        Event::TurnEnded { story, turn, .. } => {
            if let Some((start, role)) = open.turns.remove(&(story.clone(), *turn)) {
                let label = format!("turn {turn}");
                out.push(activity(
                    story_lane(story),
                    ActivityKind::Turn { role },
                    start,
                    at,
                    label,
                ));
            }
        }
        Event::GatePassed {
            story,
            command,
            duration_ms,
        }
        | Event::GateFailed {
            story,
            command,
            duration_ms,
            ..
        } => {
            let passed = matches!(event, Event::GatePassed { .. });
            let start = started(at, *duration_ms);
            let kind = ActivityKind::Gate { passed };
            out.push(activity(
                story_lane(story),
                kind,
                start,
                at,
                command.clone(),
            ));
        }
        Event::EpicGate {
            story,
            command,
            passed,
            duration_ms,
            ..
        } => {
            // On the epic head: the baseline, or after a story's merge. Drawn on the merge
            // queue's row, beside the batches.
            let label = match story {
                Some(story) => format!("{command} (after {story})"),
                None => format!("{command} (baseline)"),
            };
            let kind = ActivityKind::Gate { passed: *passed };
            out.push(activity(
                Lane::Merge,
                kind,
                started(at, *duration_ms),
                at,
                label,
            ));
        }
        _ => {}
    }
}

/// A story's merge, a batch of the merge queue, a merge revision.
fn merges(event: &Event, at: Timestamp, open: &mut Open, out: &mut Vec<Activity>) {
    match event {
        Event::MergeStarted { story, .. } => {
            open.merges.insert(story.clone(), at);
        }
        Event::StoryMerged { story, .. }
        | Event::StoryRolledBack { story, .. }
        | Event::MergeConflicted { story, .. } => {
            if let Some(start) = open.merges.remove(story) {
                let merged = matches!(event, Event::StoryMerged { .. });
                let kind = ActivityKind::Merge { merged };
                out.push(activity(story_lane(story), kind, start, at, String::new()));
            }
        }
        Event::MergeBatch { batch, stories, .. } => {
            open.batches
                .insert(*batch, (at, stories.clone(), None, false));
        }
        Event::BatchGated { batch, .. } | Event::BatchProven { batch, .. } => {
            if let Some(entry) = open.batches.get_mut(batch) {
                entry.2 = Some(at);
                entry.3 |= matches!(event, Event::BatchProven { .. });
            }
        }
        Event::MergeRevision {
            story,
            revision,
            of,
            ..
        } => {
            let label = format!("revision {revision} of {of}");
            out.push(activity(
                story_lane(story),
                ActivityKind::Revision,
                at,
                at,
                label,
            ));
        }
        _ => {}
    }
}

/// A seat's pause, a story waiting for a person and what ends the wait.
fn waits(event: &Event, at: Timestamp, open: &mut Open, out: &mut Vec<Activity>) {
    match event {
        Event::SeatPaused {
            seat,
            story,
            until,
            since,
            reason,
            ..
        } => {
            let start = since.parse::<Timestamp>().unwrap_or(at);
            let finish = until.parse::<Timestamp>().unwrap_or(at);
            let label = format!("{reason} (story {story})");
            out.push(activity(
                Lane::Seat(seat.clone()),
                ActivityKind::Pause,
                start,
                finish,
                label,
            ));
        }
        Event::StoryWaiting { story, question } => {
            open.waits.insert(story.clone(), (at, question.clone()));
        }
        Event::Answered { story, .. }
        | Event::StoryStopped { story }
        | Event::StoryFailed { story, .. }
        | Event::StorySkipped { story, .. } => {
            if let Some((start, question)) = open.waits.remove(story) {
                out.push(activity(
                    story_lane(story),
                    ActivityKind::Waiting,
                    start,
                    at,
                    question,
                ));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logged(at: &str, json: &str) -> LoggedEvent {
        let line = format!(r#"{{"at":"{at}",{}"#, &json[1..]);
        serde_json::from_str(&line).expect("an event")
    }

    #[test]
    fn starts_pair_with_their_ends() {
        let events = [
            logged(
                "2026-12-01T10:00:00.000Z",
                r#"{"kind":"turn_started","story":"a","role":"coder","seat":"claude","turn":1}"#,
            ),
            logged(
                "2026-12-01T10:00:30.000Z",
                r#"{"kind":"gate_passed","story":"a","command":"cargo test","duration_ms":10000}"#,
            ),
            logged(
                "2026-12-01T10:01:00.000Z",
                r#"{"kind":"turn_ended","story":"a","role":"coder","turn":1,"ok":true,"estimated_tokens":10}"#,
            ),
            logged(
                "2026-12-01T10:01:10.000Z",
                r#"{"kind":"merge_batch","batch":1,"stories":["a","b"],"checkpoint":"c0"}"#,
            ),
            logged(
                "2026-12-01T10:01:20.000Z",
                r#"{"kind":"batch_gated","batch":1,"step":0,"stories":["a","b"],"commit":"c1","passed":true}"#,
            ),
            logged(
                "2026-12-01T10:01:21.000Z",
                r#"{"kind":"batch_proven","batch":1,"stories":["a","b"],"commit":"c1"}"#,
            ),
            logged(
                "2026-12-01T10:01:30.000Z",
                r#"{"kind":"epic_gate","story":"b","command":"make","passed":false,"duration_ms":5000,"status":"exit code 2"}"#,
            ),
            logged(
                "2026-12-01T10:02:00.000Z",
                r#"{"kind":"story_waiting","story":"b","question":"which <db>?"}"#,
            ),
            logged(
                "2026-12-01T10:03:00.000Z",
                r#"{"kind":"seat_paused","seat":"claude","story":"b","until":"2026-12-01T10:05:00Z","since":"2026-12-01T10:02:30Z","reason":"usage limit","message":"limit"}"#,
            ),
            logged(
                "2026-12-01T10:04:00.000Z",
                r#"{"kind":"answered","story":"b","command":"1","uid":0,"given_at":"2026-12-01T10:04:00Z"}"#,
            ),
            logged(
                "2026-12-01T10:04:30.000Z",
                r#"{"kind":"turn_started","story":"b","role":"judge","seat":"claude","turn":2}"#,
            ),
        ];
        let activities = activities(&events);
        let kinds: Vec<(&Lane, &ActivityKind)> =
            activities.iter().map(|a| (&a.lane, &a.kind)).collect();
        let story = |id: &str| Lane::Story(id.to_owned());
        assert_eq!(
            kinds,
            [
                (&story("a"), &ActivityKind::Gate { passed: true }),
                (
                    &story("a"),
                    &ActivityKind::Turn {
                        role: "coder".into()
                    }
                ),
                (&Lane::Merge, &ActivityKind::Gate { passed: false }),
                (&Lane::Seat("claude".into()), &ActivityKind::Pause),
                (&story("b"), &ActivityKind::Waiting),
                (&Lane::Merge, &ActivityKind::Batch { proven: true }),
            ]
        );
        assert_eq!(activities[0].start.to_string(), "2026-12-01T10:00:20Z");
        assert_eq!(activities[2].label, "make (after b)");
        assert_eq!(activities[2].start.to_string(), "2026-12-01T10:01:25Z");
        assert_eq!(activities[3].start.to_string(), "2026-12-01T10:02:30Z");
        assert_eq!(activities[5].label, "batch 1: a, b");
        assert_eq!(activities[5].finish.to_string(), "2026-12-01T10:01:21Z");
    }
}
