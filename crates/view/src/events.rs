//! What the view reads of `events.jsonl`: each line folded, in order, into what the run is at
//! ([`Folded`]): each story's turn going on with its seat and role, its latest action, its
//! judge rounds, merge revisions and tokens, its last gate failure and judge issues; the
//! seats of the run and their pauses; the merge queue's batch being proven; the budget.
//!
//! Lines are read as JSON values, not as `epic_events::Event`, so that a kind this build does
//! not know, or a torn last line, is skipped rather than ending the fold. A [`LogTail`] folds
//! the log as it grows: each read takes only the whole lines appended since the last, so a
//! view that reads the state every second never reads a long run's log again.

use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::Path;

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde_json::Value;

use crate::model::Batch;

/// What one story's events say.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct StoryEvents {
    /// When its last `story_started` was logged.
    pub(crate) started_at: Option<Timestamp>,
    /// When it last ended (merged, failed, skipped, waiting, stopped) after that start.
    pub(crate) ended_at: Option<Timestamp>,
    /// The turn going on: its number, seat and role.
    pub(crate) turn: Option<(u64, String, String)>,
    /// The agent's latest action in the turn going on, or the latest step.
    pub(crate) doing: Option<String>,
    /// Judge rounds.
    pub(crate) rounds: u32,
    /// Merge revisions (the highest `revision` of its `merge_revision` events).
    pub(crate) revisions: u32,
    /// Tokens of its turns since its last start (`turn_ended`'s `estimated_tokens`).
    pub(crate) tokens: u64,
    /// The last gate that failed for it: the command, its status and the tests it charged
    /// (`gate_failed`, `epic_gate`, `gate_tests`), or the red gates a merge revision was for.
    pub(crate) gate_failure: Option<String>,
    /// The issues of its last judge round that did not clear it.
    pub(crate) judge_issues: Vec<String>,
    /// Why it failed or was skipped, per its last `story_failed` or `story_skipped`.
    pub(crate) reason: Option<String>,
}

/// A seat's pause, as its `seat_paused` said it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Pause {
    /// Until when (RFC 3339).
    pub(crate) until: String,
    /// Why: `usage limit`, `outage`.
    pub(crate) reason: String,
    /// The story whose turn met it.
    pub(crate) story: String,
}

/// The events folded.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Folded {
    /// Each story's.
    pub(crate) stories: BTreeMap<String, StoryEvents>,
    /// The seats of the last run's rosters (`run_started`'s `seats`).
    pub(crate) roster: Vec<String>,
    /// Each seat paused, by name (until a time that may have passed: see [`Folded::pause`]).
    pub(crate) paused: BTreeMap<String, Pause>,
    /// The batch of the merge queue being proven.
    pub(crate) merging: Option<Batch>,
    /// The last `budget_reached`'s message, and its budget.
    pub(crate) budget: Option<(String, f64)>,
}

impl Folded {
    /// The events of `log` (the text of `events.jsonl`) folded.
    #[cfg(test)]
    pub(crate) fn of(log: &str) -> Self {
        let mut folded = Self::default();
        for line in log.lines() {
            if let Ok(event) = serde_json::from_str::<Value>(line) {
                folded.take(&event);
            }
        }
        folded
    }

    /// The pause of `seat` that lasts past `now`, if it has one.
    pub(crate) fn pause(&self, seat: &str, now: Timestamp) -> Option<&Pause> {
        self.paused.get(seat).filter(|pause| {
            pause
                .until
                .parse::<Timestamp>()
                .is_ok_and(|until| until > now)
        })
    }

    /// The seats working: how many turns go on on each.
    pub(crate) fn working(&self) -> BTreeMap<&str, u32> {
        let mut working = BTreeMap::new();
        for story in self.stories.values() {
            if let Some((_, seat, _)) = &story.turn {
                *working.entry(seat.as_str()).or_insert(0) += 1;
            }
        }
        working
    }

    /// One event taken in.
    fn take(&mut self, event: &Value) {
        let text = |key: &str| event[key].as_str().unwrap_or_default().to_owned();
        let at = event["at"]
            .as_str()
            .and_then(|at| at.parse::<Timestamp>().ok());
        let kind = event["kind"].as_str().unwrap_or_default();
        if kind == "run_started" {
            self.paused.clear();
            self.merging = None;
            self.budget = None;
            self.roster = event["seats"]
                .as_array()
                .map(|seats| {
                    seats
                        .iter()
                        .filter_map(|seat| seat.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            for story in self.stories.values_mut() {
                story.turn = None;
                story.doing = None;
            }
            return;
        }
        match kind {
            "seat_paused" => {
                let pause = Pause {
                    until: text("until"),
                    reason: text("reason"),
                    story: text("story"),
                };
                self.paused.insert(text("seat"), pause);
            }
            "seat_resumed" => {
                self.paused.remove(&text("seat"));
            }
            "merge_batch" => {
                self.merging = Some(Batch {
                    batch: event["batch"].as_u64().unwrap_or_default(),
                    stories: strings(&event["stories"]),
                });
            }
            "batch_proven" | "run_finished" => {
                self.merging = None;
                if kind == "run_finished" {
                    for story in self.stories.values_mut() {
                        story.turn = None;
                    }
                }
            }
            "budget_reached" => {
                self.budget = Some((
                    text("message"),
                    event["budget_usd"].as_f64().unwrap_or_default(),
                ));
            }
            _ => {}
        }
        if let Some(id) = event["story"].as_str() {
            self.stories
                .entry(id.to_owned())
                .or_default()
                .take(kind, at, event);
        }
    }
}

impl StoryEvents {
    /// One event of the story's taken in: `kind` and `at` read from `event` already.
    fn take(&mut self, kind: &str, at: Option<Timestamp>, event: &Value) {
        let text = |key: &str| event[key].as_str().unwrap_or_default().to_owned();
        let story = self;
        let turn = event["turn"].as_u64().unwrap_or_default();
        match kind {
            "story_started" => {
                *story = StoryEvents {
                    started_at: at,
                    rounds: story.rounds,
                    revisions: story.revisions,
                    ..StoryEvents::default()
                };
                story.doing = Some("starting".to_owned());
            }
            "turn_started" => {
                story.turn = Some((turn, text("seat"), text("role")));
                story.doing = Some(match event["task"].as_str() {
                    Some(task) => format!("{} turn: {task}", text("role")),
                    None => format!("{} turn", text("role")),
                });
            }
            "turn_activity" => story.doing = Some(text("doing")),
            "turn_ended" | "turn_stalled" | "turn_looping" => {
                if story.turn.as_ref().is_some_and(|(of, ..)| *of == turn) {
                    story.turn = None;
                }
                story.tokens += event["estimated_tokens"].as_u64().unwrap_or_default();
            }
            "gate_failed" => {
                story.gate_failure = Some(format!("`{}`: {}", text("command"), text("status")));
                story.doing = Some(format!("gate `{}` red", text("command")));
            }
            "epic_gate" if !event["passed"].as_bool().unwrap_or(true) => {
                story.gate_failure = Some(format!(
                    "`{}` on the epic head after its merge: {}",
                    text("command"),
                    text("status")
                ));
            }
            "gate_tests" => {
                let charged = strings(&event["charged"]);
                let command = format!("`{}`", text("command"));
                if let Some(failure) = story
                    .gate_failure
                    .as_mut()
                    .filter(|failure| failure.starts_with(&command) && !charged.is_empty())
                {
                    failure.push_str("; failing: ");
                    failure.push_str(&charged.join(", "));
                }
            }
            "gate_passed" => story.doing = Some(format!("gate `{}` green", text("command"))),
            "story_judged" => {
                story.rounds += 1;
                story.judge_issues = if event["cleared"].as_bool().unwrap_or_default() {
                    Vec::new()
                } else {
                    strings(&event["issues"])
                };
            }
            "merge_revision" => {
                let revision = event["revision"].as_u64().unwrap_or_default();
                story.revisions = story
                    .revisions
                    .max(u32::try_from(revision).unwrap_or(u32::MAX));
                story.gate_failure = Some(text("reason"));
            }
            "merge_queued" => story.doing = Some("queued to merge".to_owned()),
            "task_started" => story.doing = Some(format!("task: {}", text("task"))),
            "story_merged" | "story_failed" | "story_skipped" | "story_waiting"
            | "story_stopped" => {
                story.turn = None;
                story.ended_at = at;
                story.doing = None;
                if matches!(kind, "story_failed" | "story_skipped") {
                    story.reason = Some(text("reason"));
                }
            }
            _ => {}
        }
    }
}

/// `events.jsonl` folded as it grows: what was read of it (through its last whole line) and
/// what that says.
#[derive(Debug, Clone, Default)]
pub struct LogTail {
    /// How many bytes of the log are folded: up to the end of its last whole line read.
    offset: u64,
    folded: Folded,
}

impl LogTail {
    /// The log at `path` read on from where the last read stopped, its new whole lines folded
    /// in; a log shorter than what was read (removed, started anew) is read from its start. A
    /// log that cannot be read is none.
    pub(crate) fn update(&mut self, path: &Path) -> &Folded {
        let Ok(mut file) = std::fs::File::open(path) else {
            *self = Self::default();
            return &self.folded;
        };
        let length = file.metadata().map_or(0, |metadata| metadata.len());
        if length < self.offset {
            *self = Self::default();
        }
        let mut bytes = Vec::new();
        if file.seek(SeekFrom::Start(self.offset)).is_err() || file.read_to_end(&mut bytes).is_err()
        {
            return &self.folded;
        }
        // A line still being written waits for its newline.
        let whole = bytes
            .iter()
            .rposition(|byte| *byte == b'\n')
            .map_or(0, |last| last + 1);
        for line in String::from_utf8_lossy(&bytes[..whole]).lines() {
            if let Ok(event) = serde_json::from_str::<Value>(line) {
                self.folded.take(&event);
            }
        }
        self.offset += whole as u64;
        &self.folded
    }

    /// What the log read so far says.
    pub(crate) fn folded(&self) -> &Folded {
        &self.folded
    }
}

/// The strings of a JSON array (none when it is not one).
fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|item| item.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_its_action_and_its_end() {
        let log = r#"{"at":"2026-12-07T10:00:00Z","kind":"run_started","seats":["claude","codex"]}
{"at":"2026-12-07T10:00:01Z","kind":"story_started","story":"a","slot":0}
{"at":"2026-12-07T10:00:02Z","kind":"turn_started","story":"a","role":"coder","seat":"claude","turn":1}
{"at":"2026-12-07T10:00:03Z","kind":"turn_activity","story":"a","role":"coder","turn":1,"tool":"Bash","doing":"running `cargo test`"}
{"at":"2026-12-07T10:00:04Z","kind":"seat_paused","seat":"codex","story":"b","until":"2026-12-07T11:00:00Z","reason":"usage limit"}
{"at":"2026-12-07T10:00:05Z","kind":"merge_batch","batch":3,"stories":["c","d"],"checkpoint":"x"}
{"torn"#;
        let folded = Folded::of(log);
        let a = &folded.stories["a"];
        assert_eq!(a.turn, Some((1, "claude".to_owned(), "coder".to_owned())));
        assert_eq!(a.doing.as_deref(), Some("running `cargo test`"));
        assert_eq!(folded.roster, ["claude", "codex"]);
        assert_eq!(folded.paused["codex"].reason, "usage limit");
        assert_eq!(folded.paused["codex"].story, "b");
        assert_eq!(folded.merging.as_ref().map(|batch| batch.batch), Some(3));
        assert_eq!(folded.working().get("claude"), Some(&1));

        let ended = format!(
            "{log}\n{}\n{}",
            r#"{"at":"2026-12-07T10:00:06Z","kind":"turn_ended","story":"a","role":"coder","turn":1,"ok":true,"estimated_tokens":1200,"reported":true}"#,
            r#"{"at":"2026-12-07T10:00:07Z","kind":"story_judged","story":"a","round":1,"cleared":false,"issues":["no test"]}"#
        );
        let folded = Folded::of(&ended);
        let a = &folded.stories["a"];
        assert_eq!(a.turn, None);
        assert_eq!(a.tokens, 1200);
        assert_eq!(a.rounds, 1);
        assert_eq!(a.judge_issues, ["no test"]);
    }

    #[test]
    #[expect(
        clippy::disallowed_methods,
        reason = "the test is the run here: it writes the log the view reads"
    )]
    fn a_tail_reads_only_whole_lines_and_starts_again_on_a_new_log() {
        let dir = tempfile::tempdir().expect("a directory");
        let path = dir.path().join("events.jsonl");
        let started =
            r#"{"at":"2026-12-07T10:00:01Z","kind":"story_started","story":"a","slot":0}"#;
        let turn = r#"{"at":"2026-12-07T10:00:02Z","kind":"turn_started","story":"a","role":"coder","seat":"claude","turn":1}"#;
        let mut tail = LogTail::default();
        assert!(tail.update(&path).stories.is_empty(), "no log yet");
        // The turn's line is half written: only the start is taken.
        std::fs::write(&path, format!("{started}\n{}", &turn[..20])).expect("write");
        assert_eq!(tail.update(&path).stories["a"].turn, None);
        std::fs::write(&path, format!("{started}\n{turn}\n")).expect("write");
        assert_eq!(
            tail.update(&path).stories["a"].turn,
            Some((1, "claude".to_owned(), "coder".to_owned()))
        );
        // Read again with nothing new: the same.
        assert!(tail.update(&path).stories["a"].turn.is_some());
        // A shorter log is a new one.
        std::fs::write(&path, format!("{started}\n")).expect("write");
        assert_eq!(tail.update(&path).stories["a"].turn, None);
    }

    #[test]
    fn a_gate_failure_with_the_tests_it_charged() {
        let log = r#"{"at":"2026-12-07T10:00:00Z","kind":"gate_failed","story":"a","command":"cargo test","duration_ms":5,"status":"exit code 101"}
{"at":"2026-12-07T10:00:01Z","kind":"gate_tests","story":"a","command":"cargo test","charged":["cart::total"],"inherited":[]}"#;
        let folded = Folded::of(log);
        assert_eq!(
            folded.stories["a"].gate_failure.as_deref(),
            Some("`cargo test`: exit code 101; failing: cart::total")
        );
        let later = format!(
            "{log}\n{}",
            r#"{"at":"2026-12-07T10:00:02Z","kind":"epic_gate","story":"a","command":"make lint","passed":false,"duration_ms":5,"status":"exit code 2"}"#
        );
        assert_eq!(
            Folded::of(&later).stories["a"].gate_failure.as_deref(),
            Some("`make lint` on the epic head after its merge: exit code 2")
        );
    }
}
