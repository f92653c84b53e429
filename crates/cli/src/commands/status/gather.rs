//! What `epic status` reads of one epic, into its model: the lock and its holder, the last
//! report, each story's state file and merge revisions, and, while a run goes on, what its
//! events say it is at (the seats paused, what the agents are doing, each seat's state).
//!
//! It only reads `<git-common-dir>/epic/<epic>/`: state files are replaced atomically and the
//! lock is probed without being taken, so it is safe (and live) while a run is going.

use epic_state_store::{EpicDir, StoryStage, StoryState};

use crate::epics::{self, lock_holder};
use crate::error::{CommandError, Kind};

use super::model::{
    DoingJson, LandedJson, PausedJson, ReportJson, SeatJson, StatusJson, StoryJson,
};

/// Puts `status`'s stories in `plan`'s order, adding the plan's stories no run has started (no
/// state, no outcome); stories the plan no longer has follow, as they were.
pub(super) fn in_plan_order(status: &mut StatusJson, plan: &epic_story_plan::StoryPlan) {
    let mut known = std::mem::take(&mut status.stories);
    for planned in &plan.stories {
        let found = known.iter().position(|story| story.id == planned.id);
        status.stories.push(match found {
            Some(index) => known.remove(index),
            None => story(&planned.id, None, None),
        });
    }
    status.stories.append(&mut known);
}

/// Reads everything `epic status` shows about one epic.
pub(super) fn status(dir: &EpicDir) -> Result<StatusJson, CommandError> {
    let (running, holder) = lock_holder(dir)?;
    let report = epics::load_report(dir)?;
    let ids = dir
        .story_ids()
        .map_err(|error| CommandError::new(Kind::Repository, error))?;
    let mut states = Vec::with_capacity(ids.len());
    for id in ids {
        let path = dir
            .story_state(&id)
            .map_err(|error| CommandError::new(Kind::Repository, error))?;
        // A state file removed between listing and reading (`epic clean`) is no longer there.
        if let Some(state) = epic_state_store::load::<StoryState>(&path)
            .map_err(|error| CommandError::new(Kind::Repository, error))?
        {
            states.push((id, state));
        }
    }
    let mut stories = Vec::new();
    if let Some(report) = &report {
        for outcome in &report.stories {
            let state = states
                .iter()
                .position(|(id, _)| *id == outcome.id)
                .map(|i| states.remove(i).1);
            stories.push(story(&outcome.id, state, Some(outcome)));
        }
    }
    for (id, state) in states {
        stories.push(story(&id, Some(state), None));
    }
    for story in &mut stories {
        story.merge_revisions = epic_executor::Revisions::load(dir, &story.id)
            .map_err(|error| CommandError::new(Kind::Repository, error))?
            .count();
    }
    let Live {
        paused,
        doing,
        seats,
    } = if running { live(dir) } else { Live::default() };
    Ok(StatusJson {
        epic_id: dir.epic_id().to_owned(),
        running,
        holder,
        paused,
        doing,
        seats,
        stories,
        landed: report
            .as_ref()
            .and_then(|report| report.landing.as_ref())
            .map(|landing| LandedJson {
                target: landing.target.clone(),
                commit: landing.commit.clone(),
            }),
        report: report.map(|report| ReportJson {
            done: report.count(epic_report::OutcomeStatus::Done),
            failed: report.count(epic_report::OutcomeStatus::Failed),
            skipped: report.count(epic_report::OutcomeStatus::Skipped),
            stopped: report.count(epic_report::OutcomeStatus::Stopped),
            epic_branch: report.epic_branch,
        }),
    })
}

/// What the run going on is at ([`live`]).
#[derive(Debug, Default)]
struct Live {
    paused: Vec<PausedJson>,
    doing: Vec<DoingJson>,
    seats: Vec<SeatJson>,
}

/// What the run going on is at, from its events since its `run_started`: the seats paused now
/// (each seat's last `seat_paused` not followed by a `seat_resumed`, until a time still to
/// come), what each story's agent is doing (its last `turn_activity` not followed by the end
/// of its turn or of the story), and each seat of the run's rosters (`run_started`'s `seats`)
/// working (a `turn_started` on it whose turn has not ended), paused or idle. An events log
/// that cannot be read shows none of it.
fn live(dir: &EpicDir) -> Live {
    use std::collections::BTreeMap;
    use std::io::BufRead as _;
    let Ok(file) = std::fs::File::open(dir.events()) else {
        return Live::default();
    };
    let mut roster: Vec<String> = Vec::new();
    let mut seats: BTreeMap<String, PausedJson> = BTreeMap::new();
    let mut doing: BTreeMap<String, DoingJson> = BTreeMap::new();
    // The seat of each turn going on, by story and turn number.
    let mut turns: BTreeMap<(String, u64), String> = BTreeMap::new();
    for line in std::io::BufReader::new(file).lines().map_while(Result::ok) {
        // Most lines are other events: parse only these.
        if !(line.contains("\"seat_")
            || line.contains("\"run_started\"")
            || line.contains("\"turn_")
            || line.contains("\"story_"))
        {
            continue;
        }
        let Ok(event) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        let text = |key: &str| event[key].as_str().unwrap_or_default().to_owned();
        let turn = || (text("story"), event["turn"].as_u64().unwrap_or_default());
        match event["kind"].as_str() {
            Some("run_started") => {
                seats.clear();
                doing.clear();
                turns.clear();
                roster = event["seats"]
                    .as_array()
                    .map(|seats| {
                        seats
                            .iter()
                            .filter_map(|seat| seat.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default();
            }
            Some("turn_started") => {
                turns.insert(turn(), text("seat"));
            }
            Some("turn_activity") => {
                doing.insert(
                    text("story"),
                    DoingJson {
                        story: text("story"),
                        role: text("role"),
                        doing: text("doing"),
                    },
                );
            }
            Some("turn_ended" | "turn_stalled" | "turn_looping") => {
                turns.remove(&turn());
                doing.remove(&text("story"));
            }
            Some("story_merged" | "story_failed" | "story_skipped") => {
                let story = text("story");
                turns.retain(|(of, _), _| *of != story);
                doing.remove(&story);
            }
            Some("seat_paused") => {
                seats.insert(
                    text("seat"),
                    PausedJson {
                        seat: text("seat"),
                        until: text("until"),
                        since: text("since"),
                        reason: text("reason"),
                        story: text("story"),
                    },
                );
            }
            Some("seat_resumed") => {
                seats.remove(&text("seat"));
            }
            _ => {}
        }
    }
    let now = jiff::Timestamp::now();
    let paused: Vec<PausedJson> = seats
        .into_values()
        .filter(|pause| {
            pause
                .until
                .parse::<jiff::Timestamp>()
                .is_ok_and(|until| until > now)
        })
        .collect();
    Live {
        seats: seat_states(roster, &turns, &paused),
        paused,
        doing: doing.into_values().collect(),
    }
}

/// The state of each seat of `roster`: paused (in `paused`), working (the seat of one of the
/// `turns` going on) or idle.
fn seat_states(
    roster: Vec<String>,
    turns: &std::collections::BTreeMap<(String, u64), String>,
    paused: &[PausedJson],
) -> Vec<SeatJson> {
    roster
        .into_iter()
        .map(|seat| {
            let working = turns.values().filter(|of| **of == seat).count();
            let until = paused
                .iter()
                .find(|pause| pause.seat == seat)
                .map(|pause| pause.until.clone());
            let state = match (&until, working) {
                (Some(_), _) => "paused",
                (None, 0) => "idle",
                (None, _) => "working",
            };
            SeatJson {
                seat,
                state,
                turns: u32::try_from(working).unwrap_or(u32::MAX),
                until,
            }
        })
        .collect()
}

fn story(
    id: &str,
    state: Option<StoryState>,
    outcome: Option<&epic_report::StoryOutcome>,
) -> StoryJson {
    let (status, branch, worktree, hold) = match state {
        // A merged story's worktree is removed after its merge: only one still there is shown.
        Some(state) => (
            Some(state.status),
            Some(state.branch),
            Some(state.worktree).filter(|worktree| worktree.exists()),
            state.hold.filter(|_| state.status != StoryStage::Merged),
        ),
        None => (None, None, None, None),
    };
    StoryJson {
        id: id.to_owned(),
        status,
        branch: branch.or_else(|| outcome.and_then(|outcome| outcome.branch.clone())),
        worktree,
        outcome: outcome.map(|outcome| outcome.status),
        reason: outcome.and_then(|outcome| outcome.reason.clone()),
        in_place: outcome.and_then(|outcome| outcome.in_place.clone()),
        merge_revisions: 0,
        stalled_turns: outcome.map_or(0, |outcome| outcome.stalled_turns),
        looping_turns: outcome.map_or(0, |outcome| outcome.looping_turns),
        permission_rejections: outcome.map_or(0, |outcome| outcome.permission_rejections),
        hold,
    }
}
