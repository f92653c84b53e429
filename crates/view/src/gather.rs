//! The [`Board`] and a story's [`Detail`] read from an epic's state directory
//! (`<git-common-dir>/epic/<epic>/`): the story states (with their holds), the report, the
//! event log, each story's checkpoint, transcripts and rejected patch. Read-only and lock-free,
//! as `epic status` reads it: every document is replaced atomically and the lock is only
//! probed, so it is safe while a run goes on.

use std::collections::{HashMap, HashSet};

use epic_report::{EpicReport, OutcomeStatus, StoryOutcome};
use epic_state_store::{EpicDir, EpicLock, Hold, LockError, StoryStage, StoryState};
use epic_story_plan::StoryPlan;
use jiff::Timestamp;

use crate::events::{Folded, LogTail, StoryEvents};
#[cfg(test)]
use crate::fixtures;
use crate::model::{Board, Detail, Row, Seat, SeatState, Status};

/// What the caller knows beside the state directory: the run's recorded plan (for the order,
/// the waves and the stories not started), its `--budget-usd`, and the time now.
#[derive(Debug, Clone, Copy)]
pub struct Known<'a> {
    /// The plan the last run recorded, if any.
    pub plan: Option<&'a StoryPlan>,
    /// The last run's `--budget-usd`, if it had one.
    pub budget_usd: Option<f64>,
    /// The time elapsed times run to.
    pub now: Timestamp,
}

/// An error reading the epic's state: a document that cannot be read or is not epic's.
#[derive(Debug, thiserror::Error)]
#[error("cannot read the state of epic `{epic}`")]
pub struct ReadError {
    epic: String,
    #[source]
    source: Box<dyn std::error::Error + Send + Sync>,
}

impl ReadError {
    fn of(dir: &EpicDir, source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self {
            epic: dir.epic_id().to_owned(),
            source: source.into(),
        }
    }
}

/// The board of the epic `dir`, as its state says now; `log` holds what was read of its event
/// log before (a new [`LogTail`] for the first read), and takes in what was added since.
pub fn read_board(dir: &EpicDir, known: Known<'_>, log: &mut LogTail) -> Result<Board, ReadError> {
    let running = match EpicLock::holder(dir) {
        Ok(holder) => holder.is_some(),
        Err(LockError::Held { .. }) => true,
        Err(error) => return Err(ReadError::of(dir, error)),
    };
    let report = epic_state_store::load::<epic_events::ReportDocument>(dir.report_json())
        .map_err(|error| ReadError::of(dir, error))?
        .map(|document| document.0);
    let mut states = Vec::new();
    for id in dir.story_ids().map_err(|error| ReadError::of(dir, error))? {
        let path = dir
            .story_state(&id)
            .map_err(|error| ReadError::of(dir, error))?;
        // A state file removed between listing and reading (`epic clean`) is no longer there.
        if let Some(state) = epic_state_store::load::<StoryState>(&path)
            .map_err(|error| ReadError::of(dir, error))?
        {
            states.push(state);
        }
    }
    Ok(board(
        dir.epic_id(),
        running,
        &states,
        report.as_ref(),
        log.update(&dir.events()),
        known,
    ))
}

/// The board from what was read: pure, so tests build it from hand-made state.
pub(crate) fn board(
    epic_id: &str,
    running: bool,
    states: &[StoryState],
    report: Option<&EpicReport>,
    folded: &Folded,
    known: Known<'_>,
) -> Board {
    // Looked up by id: a board of 10,000 stories searched lists for each row took seconds.
    let mut ids: Vec<&str> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    let planned = known.plan.iter().flat_map(|plan| &plan.stories);
    let reported = report.iter().flat_map(|report| &report.stories);
    for id in planned
        .map(|story| story.id.as_str())
        .chain(reported.map(|story| story.id.as_str()))
        .chain(states.iter().map(|state| state.id.as_str()))
    {
        if seen.insert(id) {
            ids.push(id);
        }
    }
    let states: HashMap<&str, &StoryState> = states
        .iter()
        .map(|state| (state.id.as_str(), state))
        .collect();
    // The first outcome of an id, as a search from the front finds it.
    let mut outcomes: HashMap<&str, &StoryOutcome> = HashMap::new();
    for outcome in report.iter().flat_map(|report| &report.stories) {
        outcomes.entry(outcome.id.as_str()).or_insert(outcome);
    }
    let waves: HashMap<String, _> = known
        .plan
        .and_then(|plan| plan.clone().validate().ok())
        .map(|valid| {
            let numbers = valid.wave_numbers();
            valid
                .plan()
                .stories
                .iter()
                .map(|story| story.id.clone())
                .zip(numbers)
                .collect()
        })
        .unwrap_or_default();
    let empty = StoryEvents::default();
    let mut stories: Vec<Row> = ids
        .iter()
        .map(|&id| {
            let state = states.get(id).copied();
            let outcome = outcomes.get(id).copied();
            let events = folded.stories.get(id).unwrap_or(&empty);
            let wave = waves.get(id).copied();
            row(id, wave, state, outcome, events, folded, running, known.now)
        })
        .collect();
    // Stable: plan order within each group.
    stories.sort_by_key(|row| !row.status.needs_person());
    let working = folded.working();
    let now = known.now;
    let seats = folded
        .roster
        .iter()
        .map(|seat| {
            let pause = folded.pause(seat, now);
            let turns = if running {
                working.get(seat.as_str()).copied().unwrap_or(0)
            } else {
                0
            };
            Seat {
                seat: seat.clone(),
                state: match (pause, turns) {
                    (Some(_), _) if running => SeatState::Paused,
                    (_, 0) => SeatState::Idle,
                    _ => SeatState::Working,
                },
                turns,
                until: pause.filter(|_| running).map(|pause| pause.until.clone()),
                reason: pause.filter(|_| running).map(|pause| pause.reason.clone()),
            }
        })
        .collect();
    Board {
        epic_id: epic_id.to_owned(),
        running,
        done: stories
            .iter()
            .filter(|row| row.status == Status::Done)
            .count(),
        total: stories.len(),
        merging: folded.merging.clone().filter(|_| running),
        seats,
        // `+ 0.0`: a sum of nothing is -0.0, which would print as `$-0.00`.
        spent_usd: report.map_or(0.0, EpicReport::spent_usd) + 0.0,
        budget_usd: known
            .budget_usd
            .or_else(|| folded.budget.as_ref().map(|(_, budget)| *budget)),
        budget_reached: folded.budget.as_ref().map(|(message, _)| message.clone()),
        stories,
    }
}

/// One story's row.
#[expect(
    clippy::too_many_arguments,
    reason = "each is one source the row is read from"
)]
fn row(
    id: &str,
    wave: Option<usize>,
    state: Option<&StoryState>,
    outcome: Option<&StoryOutcome>,
    events: &StoryEvents,
    folded: &Folded,
    running: bool,
    now: Timestamp,
) -> Row {
    let status = status(id, now, state, outcome, events, folded, running);
    let live = matches!(status, Status::Running | Status::Paused);
    let turn = events.turn.as_ref().filter(|_| live);
    let started = events
        .started_at
        .or_else(|| outcome.and_then(|outcome| outcome.started_at));
    let ended = if live {
        Some(now)
    } else {
        events
            .ended_at
            .filter(|_| events.started_at.is_some())
            .or_else(|| outcome.and_then(|outcome| outcome.finished_at))
    };
    let elapsed_secs = match (started, ended) {
        (Some(started), Some(ended)) => u64::try_from(ended.as_second() - started.as_second()).ok(),
        _ => None,
    };
    // A story of the report that no run has started since keeps the report's figures.
    let from_report = !live && outcome.is_some();
    let reason = match state.and_then(|state| state.hold.as_ref()) {
        Some(Hold::Waiting { question, .. }) if status == Status::Waiting => Some(question.clone()),
        _ if matches!(status, Status::Failed | Status::Skipped) => outcome
            .and_then(|outcome| outcome.reason.clone())
            .or_else(|| events.reason.clone()),
        _ => None,
    };
    Row {
        id: id.to_owned(),
        status,
        wave,
        seat: turn.map(|(_, seat, _)| seat.clone()),
        role: turn.map(|(_, _, role)| role.clone()),
        elapsed_secs,
        doing: events.doing.clone().filter(|_| live),
        rounds: events.rounds,
        revisions: events
            .revisions
            .max(outcome.map_or(0, |outcome| outcome.merge_revisions)),
        tokens: if from_report {
            outcome
                .and_then(|outcome| outcome.estimated_tokens)
                .unwrap_or(events.tokens)
        } else {
            events.tokens
        },
        cost_usd: outcome
            .filter(|_| from_report)
            .and_then(|outcome| outcome.estimated_cost_usd),
        reason,
    }
}

/// Where story `id` is at `now`: its state file first (a person's hold, merged, failed), then
/// the report, then the events of the run going on.
fn status(
    id: &str,
    now: Timestamp,
    state: Option<&StoryState>,
    outcome: Option<&StoryOutcome>,
    events: &StoryEvents,
    folded: &Folded,
    running: bool,
) -> Status {
    if let Some(state) = state {
        return match (state.status, &state.hold) {
            (StoryStage::Merged, _) => Status::Done,
            (_, Some(Hold::Waiting { .. })) => Status::Waiting,
            (_, Some(Hold::Stopped { .. })) => Status::Stopped,
            (StoryStage::Failed, None) => Status::Failed,
            (StoryStage::Started, None) if !running => Status::Started,
            (StoryStage::Started, None) => {
                // Its turn's seat is paused, or, between turns, a seat its last turn paused.
                let paused = match &events.turn {
                    Some((_, seat, _)) => folded.pause(seat, now).is_some(),
                    None => folded.paused.iter().any(|(seat, pause)| {
                        pause.story == id && folded.pause(seat, now).is_some()
                    }),
                };
                if paused {
                    Status::Paused
                } else {
                    Status::Running
                }
            }
        };
    }
    match outcome.map(|outcome| outcome.status) {
        Some(OutcomeStatus::Done) => Status::Done,
        Some(OutcomeStatus::Failed) => Status::Failed,
        Some(OutcomeStatus::Skipped) => Status::Skipped,
        _ if events.reason.is_some() && events.ended_at.is_some() => Status::Skipped,
        _ if running && events.started_at.is_some() => Status::Running,
        _ => Status::NotStarted,
    }
}

/// How many lines of the latest transcript the detail pane keeps.
const TRANSCRIPT_TAIL: usize = 40;

/// The detail of story `id` of the epic `dir`: what its files say, and its events as `log`
/// (the board's last read) folded them. What cannot be read is left out (the pane shows what
/// there is).
pub fn read_detail(dir: &EpicDir, id: &str, log: &LogTail) -> Detail {
    let events = log.folded().stories.get(id).cloned().unwrap_or_default();
    let checkpoint = dir
        .story_plan(id)
        .ok()
        .and_then(|path| epic_state_store::read_if_exists(path).ok().flatten())
        .unwrap_or_default();
    let transcript = dir.transcripts(id).ok().and_then(|transcripts| {
        let last = epic_state_store::last_transcript_number(&transcripts);
        let prefix = format!("{last:04}-");
        let name = std::fs::read_dir(&transcripts)
            .ok()?
            .filter_map(Result::ok)
            .filter_map(|entry| entry.file_name().into_string().ok())
            .filter(|name| name.starts_with(&prefix))
            .max()?;
        let text = epic_state_store::read_if_exists(transcripts.join(&name))
            .ok()
            .flatten()?;
        Some((name, tail(&text, TRANSCRIPT_TAIL)))
    });
    let rejected_patch = dir
        .rejected_patch(id)
        .ok()
        .filter(|path| path.is_file())
        .map(|path| path.display().to_string());
    detail(&checkpoint, transcript, &events, rejected_patch)
}

/// The detail from what was read: pure.
pub(crate) fn detail(
    checkpoint: &str,
    transcript: Option<(String, Vec<String>)>,
    events: &StoryEvents,
    rejected_patch: Option<String>,
) -> Detail {
    let tasks = checkpoint
        .lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("- [")?;
            let (mark, title) = rest.split_once("] ")?;
            Some((mark.eq_ignore_ascii_case("x"), title.trim().to_owned()))
        })
        .collect();
    Detail {
        tasks,
        transcript,
        gate_failure: events.gate_failure.clone(),
        judge_issues: events.judge_issues.clone(),
        rejected_patch,
    }
}

/// The last `count` lines of `text` that are not blank.
fn tail(text: &str, count: usize) -> Vec<String> {
    let lines: Vec<&str> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .collect();
    lines[lines.len().saturating_sub(count)..]
        .iter()
        .map(|line| (*line).to_owned())
        .collect()
}

/// The board of the fixtures, a run going on (`running`) or not.
#[cfg(test)]
pub(crate) fn fixture_board(running: bool) -> Board {
    let plan = fixtures::plan();
    board(
        "shop",
        running,
        &fixtures::states(),
        Some(&fixtures::report()),
        &Folded::of(fixtures::EVENTS),
        Known {
            plan: Some(&plan),
            budget_usd: Some(20.0),
            now: fixtures::now(),
        },
    )
}

/// The detail of `cart` in the fixtures.
#[cfg(test)]
pub(crate) fn cart_detail() -> Detail {
    let folded = Folded::of(fixtures::EVENTS);
    detail(
        "# cart\n\n- [x] Add the cart model\n  The model.\n- [ ] Add the cart routes\n",
        Some((
            "0002-coder.md".to_owned(),
            vec!["## reply".to_owned(), "Running the tests now.".to_owned()],
        )),
        &folded.stories["cart"],
        Some("/repo/.git/epic/shop/stories/cart.rejected.patch".to_owned()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Status;

    #[test]
    fn every_story_state_from_hand_made_state() {
        let board = fixture_board(true);
        let statuses: Vec<(&str, Status)> = board
            .stories
            .iter()
            .map(|row| (row.id.as_str(), row.status))
            .collect();
        assert_eq!(
            statuses,
            [
                ("search", Status::Waiting),
                ("billing", Status::Failed),
                ("audit", Status::Stopped),
                ("models", Status::Done),
                ("cart", Status::Running),
                ("docs", Status::Skipped),
                ("emails", Status::NotStarted),
            ]
        );
        assert_eq!((board.done, board.total), (1, 7));
        let cart = &board.stories[4];
        assert_eq!(cart.seat.as_deref(), Some("claude"));
        assert_eq!(cart.role.as_deref(), Some("coder"));
        assert_eq!(cart.doing.as_deref(), Some("running `cargo test -p cart`"));
        assert_eq!((cart.rounds, cart.tokens), (1, 15_300));
        assert_eq!(cart.elapsed_secs, Some(140));
        assert_eq!(
            board
                .seats
                .iter()
                .map(|seat| seat.state)
                .collect::<Vec<_>>(),
            [SeatState::Working, SeatState::Paused]
        );
        assert_eq!(board.merging.as_ref().map(|batch| batch.batch), Some(2));
        assert_eq!(board.budget_usd, Some(20.0));
        assert!(board.spent_usd.to_bits() == 0.0_f64.to_bits(), "not -0.0");
    }

    #[test]
    fn a_story_whose_seat_is_paused_is_paused_until_it_resumes() {
        let plan = fixtures::plan();
        let known = Known {
            plan: Some(&plan),
            budget_usd: None,
            now: fixtures::now(),
        };
        let cart = |log: &str| {
            let board = board(
                "shop",
                true,
                &fixtures::states(),
                Some(&fixtures::report()),
                &Folded::of(log),
                known,
            );
            board
                .stories
                .into_iter()
                .find(|row| row.id == "cart")
                .expect("cart")
                .status
        };
        let ended = r#"{"at":"2026-12-07T10:06:20Z","kind":"turn_ended","story":"cart","role":"coder","turn":2,"ok":false,"estimated_tokens":0,"reported":true}"#;
        let paused = r#"{"at":"2026-12-07T10:06:21Z","kind":"seat_paused","seat":"claude","story":"cart","until":"2026-12-07T11:00:00Z","since":"2026-12-07T10:06:21Z","reason":"usage limit","message":"limit"}"#;
        let resumed = r#"{"at":"2026-12-07T10:06:50Z","kind":"seat_resumed","seat":"claude"}"#;
        let log = format!("{}{ended}\n{paused}\n", fixtures::EVENTS);
        assert_eq!(cart(&log), Status::Paused);
        assert_eq!(cart(&format!("{log}{resumed}\n")), Status::Running);
    }

    #[test]
    fn the_last_run_shows_no_turn_and_no_queue() {
        let board = fixture_board(false);
        let cart = board
            .stories
            .iter()
            .find(|row| row.id == "cart")
            .expect("cart");
        assert_eq!(cart.status, Status::Started);
        assert_eq!((cart.seat.as_ref(), cart.doing.as_ref()), (None, None));
        assert!(board.merging.is_none());
        assert!(board.seats.iter().all(|seat| seat.state == SeatState::Idle));
    }

    #[test]
    fn the_detail_of_a_story() {
        let detail = cart_detail();
        assert_eq!(
            detail.tasks,
            [
                (true, "Add the cart model".to_owned()),
                (false, "Add the cart routes".to_owned())
            ]
        );
        assert_eq!(
            detail.gate_failure.as_deref(),
            Some("`cargo test`: exit code 101")
        );
        assert_eq!(detail.judge_issues, ["the cart total ignores discounts"]);
    }

    #[test]
    fn a_tail_keeps_the_last_lines_that_say_something() {
        assert_eq!(tail("a\n\nb\nc\n", 2), ["b", "c"]);
        assert!(tail("", 3).is_empty());
    }
}
