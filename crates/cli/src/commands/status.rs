//! `epic status [EPIC]`: each story's state, whether a run is going on, and the last report's
//! outcomes.
//!
//! It only reads `<git-common-dir>/epic/<epic>/`: state files are replaced atomically and the lock
//! is probed without being taken, so it is safe (and live) while a run is going.
//!
//! `--format json` prints [`StatusJson`]; without EPIC, when several epics have run, it prints
//! [`EpicsJson`] instead (and exits 0).

use std::fmt::{self, Write as _};
use std::path::PathBuf;

use epic_state_store::{EpicDir, EpicLock, Holder, LockError, StoryStage, StoryState};
use serde::Serialize;

use crate::args::{Format, GlobalArgs, StatusArgs};
use crate::commands::{json, render};
use crate::epics::{self, Selected};
use crate::error::{CommandError, Kind};
use crate::output::{self, Output};
use crate::plan_file::count;
use crate::repo;

/// `epic status --format json`: one epic.
#[derive(Debug, Serialize)]
struct StatusJson {
    /// The epic's id.
    epic_id: String,
    /// Whether a run holds the epic's lock right now.
    running: bool,
    /// Who holds it (`pid`, `host`, `started_at`, `command`); `null` when no run does, or the
    /// holder has not recorded itself.
    holder: Option<Holder>,
    /// Every story with a state file or in the last report: the report's (plan) order first,
    /// then the others by id.
    stories: Vec<StoryJson>,
    /// The last report's totals, when there is a report.
    report: Option<ReportJson>,
    /// The seats the running run has paused (a usage limit, an outage), per its events; left
    /// out when there are none (no run going, or no seat paused).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    paused: Vec<PausedJson>,
    /// What the agents of the running run are doing, per its events (the last tool call of each
    /// story's turn still going, from a preset that streams); left out when there is nothing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    doing: Vec<DoingJson>,
    /// Every seat of the running run's rosters with its state (`working`, `paused`, `idle`),
    /// per its events; left out when no run is going on.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    seats: Vec<SeatJson>,
    /// Where and by which commit `epic land` landed the epic, per its report; left out until
    /// it landed.
    #[serde(skip_serializing_if = "Option::is_none")]
    landed: Option<LandedJson>,
}

/// The landing in [`StatusJson`].
#[derive(Debug, Clone, Serialize)]
struct LandedJson {
    /// The branch it landed on.
    target: String,
    /// The landing commit.
    commit: String,
}

/// A paused seat in [`StatusJson`].
#[derive(Debug, Clone, Serialize)]
struct PausedJson {
    /// The seat's name.
    seat: String,
    /// When turns on it start again (RFC 3339): a limit's reset, an outage's next probe.
    until: String,
    /// When the pause began (RFC 3339): for an outage, since when its service is unreachable.
    #[serde(skip_serializing_if = "String::is_empty")]
    since: String,
    /// `usage limit` or `outage`.
    reason: String,
    /// The story whose turn met it.
    story: String,
}

impl fmt::Display for PausedJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pause =
            crate::progress::paused_until(&self.seat, &self.since, &self.until, &self.reason);
        write!(f, "{pause} (met by story {})", self.story)
    }
}

/// One seat of the running run, in [`StatusJson`].
#[derive(Debug, Clone, Serialize)]
struct SeatJson {
    /// The seat's name.
    seat: String,
    /// `working` (a turn of it is going on), `paused` (a usage limit or an outage, until
    /// `until`) or `idle`.
    state: &'static str,
    /// How many of its turns are going on.
    #[serde(skip_serializing_if = "is_zero")]
    turns: u32,
    /// Until when it is paused (RFC 3339), when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    until: Option<String>,
}

impl fmt::Display for SeatJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.until, self.turns) {
            (Some(until), _) => write!(
                f,
                "{} paused until {}",
                self.seat,
                crate::progress::local(until)
            ),
            (None, 0) => write!(f, "{} {}", self.seat, self.state),
            (None, 1) => write!(f, "{} working (1 turn)", self.seat),
            (None, turns) => write!(f, "{} working ({turns} turns)", self.seat),
        }
    }
}

/// What one story's agent is doing, in [`StatusJson`].
#[derive(Debug, Clone, Serialize)]
struct DoingJson {
    /// The story.
    story: String,
    /// The turn's role (`coder`, `judge`, …).
    role: String,
    /// What it does: ``running `cargo test` ``, `editing src/lib.rs`.
    doing: String,
}

impl fmt::Display for DoingJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "story {}: {} {}", self.story, self.role, self.doing)
    }
}

/// One story in [`StatusJson`].
#[derive(Debug, Serialize)]
struct StoryJson {
    id: String,
    /// `started`, `merged` or `failed` from the story's state file; `null` when it has none
    /// (never started).
    status: Option<StoryStage>,
    /// The story branch (from the state file, else the report).
    branch: Option<String>,
    /// The story's worktree (from the state file), when it still exists.
    worktree: Option<PathBuf>,
    /// `done`, `failed` or `skipped` in the last report; `null` when not in one.
    outcome: Option<epic_report::OutcomeStatus>,
    /// Why the story failed or was skipped, per the last report.
    reason: Option<String>,
    /// Set when the story is done with nothing merged because its work was already on the epic
    /// branch, per the last report: the commit its evidence was checked on and the evidence
    /// (`{"commit","evidence":[{"path","provides"}]}`). Left out otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    in_place: Option<epic_report::InPlace>,
    /// How many of its turns epic ended as stalled, per the last report; left out when none.
    #[serde(skip_serializing_if = "is_zero")]
    stalled_turns: u32,
    /// How many of its turns epic ended as looping, per the last report; left out when none.
    #[serde(skip_serializing_if = "is_zero")]
    looping_turns: u32,
    /// How many times its merge was red on the epic head and it went back to its coder
    /// (`--merge-revisions`), per its revisions file (so while a run goes on too). Left out when
    /// never.
    #[serde(skip_serializing_if = "is_zero")]
    merge_revisions: u32,
}

/// Whether a count is zero (left out of the JSON).
#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's `skip_serializing_if` passes a reference"
)]
fn is_zero(count: &u32) -> bool {
    *count == 0
}

/// The last report's totals in [`StatusJson`].
#[derive(Debug, Serialize)]
struct ReportJson {
    epic_branch: String,
    done: usize,
    failed: usize,
    skipped: usize,
}

/// `epic status --format json` without EPIC when several epics have run.
#[derive(Debug, Serialize)]
struct EpicsJson {
    epics: Vec<EpicSummary>,
}

/// One epic in [`EpicsJson`].
#[derive(Debug, Serialize)]
struct EpicSummary {
    epic_id: String,
    running: bool,
}

/// Runs `epic status`.
pub(crate) fn run(global: &GlobalArgs, args: &StatusArgs, out: Output) -> Result<(), CommandError> {
    let format = global.format_for("status", &[Format::Text, Format::Json])?;
    let plan = args
        .plan
        .as_deref()
        .map(|path| crate::plan_file::load(path, out))
        .transpose()?;
    let repo = repo::discover(global.repo.as_deref())?;
    let epic = args
        .epic
        .clone()
        .or_else(|| plan.as_ref().map(|plan| plan.epic_id.clone()));
    let selected = match (&plan, &epic) {
        // The plan's epic, run or not: its stories are listed either way.
        (Some(_), Some(epic)) => Selected::One(
            EpicDir::new(&repo.common_dir, epic)
                .map_err(|error| CommandError::new(Kind::Input, error))?,
        ),
        _ => epics::select(&repo, epic.as_deref())?,
    };
    match selected {
        Selected::One(dir) => {
            let mut status = status(&dir)?;
            if let Some(plan) = &plan {
                in_plan_order(&mut status, plan);
            }
            let text = match format {
                Format::Json => json(&status),
                _ => text(&status, out),
            };
            output::data(&text)
        }
        Selected::Several(ids) => {
            let mut epics = Vec::with_capacity(ids.len());
            for id in ids {
                let dir = EpicDir::new(&repo.common_dir, &id)
                    .map_err(|error| CommandError::new(Kind::Repository, error))?;
                let (running, _) = lock_holder(&dir)?;
                epics.push(EpicSummary {
                    epic_id: id,
                    running,
                });
            }
            let hint = epics.first().map(|first| {
                format!(
                    "several epics have run here; name one: `epic status {}`",
                    first.epic_id
                )
            });
            let text = match format {
                Format::Json => json(&EpicsJson { epics }),
                _ => several_text(&epics),
            };
            output::data(&text)?;
            if let Some(hint) = hint {
                out.hint(&hint);
            }
            Ok(())
        }
    }
}

/// Puts `status`'s stories in `plan`'s order, adding the plan's stories no run has started (no
/// state, no outcome); stories the plan no longer has follow, as they were.
fn in_plan_order(status: &mut StatusJson, plan: &epic_story_plan::StoryPlan) {
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

/// Whether a run holds `dir`'s lock, and who.
fn lock_holder(dir: &EpicDir) -> Result<(bool, Option<Holder>), CommandError> {
    match EpicLock::holder(dir) {
        Ok(holder) => Ok((holder.is_some(), holder)),
        Err(LockError::Held { holder, .. }) => Ok((true, holder)),
        Err(error) => Err(CommandError::new(Kind::Repository, error)),
    }
}

/// Reads everything `epic status` shows about one epic.
fn status(dir: &EpicDir) -> Result<StatusJson, CommandError> {
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
    let (status, branch, worktree) = match state {
        // A merged story's worktree is removed after its merge: only one still there is shown.
        Some(state) => (
            Some(state.status),
            Some(state.branch),
            Some(state.worktree).filter(|worktree| worktree.exists()),
        ),
        None => (None, None, None),
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
    }
}

fn outcome_name(status: epic_report::OutcomeStatus) -> &'static str {
    match status {
        epic_report::OutcomeStatus::Done => "done",
        epic_report::OutcomeStatus::Failed => "failed",
        epic_report::OutcomeStatus::Skipped => "skipped",
    }
}

/// One line on the run, a table of the stories, reasons, and (unless `-q`) totals.
fn text(status: &StatusJson, out: Output) -> String {
    render(|w| {
        header_text(w, status)?;
        if status.stories.is_empty() {
            writeln!(w, "\nno story has started yet")?;
            return Ok(());
        }
        let with_report = status.report.is_some();
        let mut rows = vec![vec![
            "STORY".to_owned(),
            "STATUS".to_owned(),
            if with_report { "LAST REPORT" } else { "" }.to_owned(),
            "BRANCH".to_owned(),
        ]];
        for story in &status.stories {
            rows.push(vec![
                story.id.clone(),
                story
                    .status
                    .map_or_else(|| "-".to_owned(), |status| status.to_string()),
                match (story.outcome, &story.in_place) {
                    (Some(_), Some(_)) => "done (in place)",
                    (Some(outcome), None) => outcome_name(outcome),
                    (None, _) if with_report => "-",
                    (None, _) => "",
                }
                .to_owned(),
                story.branch.clone().unwrap_or_else(|| "-".to_owned()),
            ]);
        }
        writeln!(w)?;
        table(w, &rows)?;
        let reasons: Vec<&StoryJson> = status
            .stories
            .iter()
            .filter(|story| story.reason.is_some())
            .collect();
        if !reasons.is_empty() {
            writeln!(w)?;
            for story in reasons {
                let reason = story.reason.as_deref().unwrap_or_default();
                writeln!(w, "{}: {}", story.id, one_line(reason))?;
            }
        }
        ended_turns_text(w, status)?;
        in_place_text(w, status)?;
        revisions_text(w, status)?;
        if out.verbose() > 0 {
            writeln!(w, "\nworktrees:")?;
            for story in &status.stories {
                if let Some(worktree) = &story.worktree {
                    writeln!(w, "  {}: {}", story.id, worktree.display())?;
                }
            }
        }
        if !out.quiet() {
            let mut tally = Vec::new();
            for name in [StoryStage::Merged, StoryStage::Started, StoryStage::Failed] {
                let n = status
                    .stories
                    .iter()
                    .filter(|story| story.status == Some(name))
                    .count();
                if n > 0 {
                    tally.push(format!("{n} {name}"));
                }
            }
            let started = status.stories.iter().filter(|s| s.status.is_some()).count();
            writeln!(
                w,
                "\n{} with state{}",
                count(started, "story", "stories"),
                if tally.is_empty() {
                    String::new()
                } else {
                    format!(": {}", tally.join(", "))
                }
            )?;
            if let Some(report) = &status.report {
                writeln!(
                    w,
                    "last report: {} done, {} failed, {} skipped on {} (`epic report {}` prints it)",
                    report.done, report.failed, report.skipped, report.epic_branch, status.epic_id
                )?;
            }
        }
        Ok(())
    })
}

/// The stories whose merge was red on the epic head and went back to their coder, with how many
/// times; nothing when there are none.
fn revisions_text(w: &mut String, status: &StatusJson) -> std::fmt::Result {
    let revised: Vec<String> = status
        .stories
        .iter()
        .filter(|story| story.merge_revisions > 0)
        .map(|story| format!("{} {}", story.id, story.merge_revisions))
        .collect();
    if revised.is_empty() {
        return Ok(());
    }
    writeln!(
        w,
        "\nmerge revisions (red on the epic head, back to the coder): {}",
        revised.join(", ")
    )
}

/// The stories some of whose turns epic ended as stalled or looping, per the last report;
/// nothing when there are none.
fn ended_turns_text(w: &mut String, status: &StatusJson) -> std::fmt::Result {
    let ended: Vec<&StoryJson> = status
        .stories
        .iter()
        .filter(|story| story.stalled_turns > 0 || story.looping_turns > 0)
        .collect();
    if ended.is_empty() {
        return Ok(());
    }
    writeln!(
        w,
        "
turns ended by epic (stalled: printed nothing for --stall-timeout; looping: the same \
         tool call five times in a row):"
    )?;
    for story in ended {
        let mut parts = Vec::new();
        if story.stalled_turns > 0 {
            parts.push(format!(
                "{} stalled",
                count(widen(story.stalled_turns), "turn", "turns")
            ));
        }
        if story.looping_turns > 0 {
            parts.push(format!(
                "{} looping",
                count(widen(story.looping_turns), "turn", "turns")
            ));
        }
        writeln!(w, "{}: {}", story.id, parts.join(", "))?;
    }
    Ok(())
}

/// Whether a run is going on (and whose), where the epic landed, the seats paused and what the
/// agents are doing.
fn header_text(w: &mut String, status: &StatusJson) -> std::fmt::Result {
    let epic = &status.epic_id;
    match (&status.holder, status.running) {
        (Some(holder), _) => writeln!(w, "epic {epic}: running, {holder}")?,
        (None, true) => writeln!(
            w,
            "epic {epic}: running (its process has not recorded who it is)"
        )?,
        (None, false) => writeln!(w, "epic {epic}: not running")?,
    }
    if let Some(landed) = &status.landed {
        writeln!(w, "landed on `{}` ({})", landed.target, landed.commit)?;
    }
    for pause in &status.paused {
        writeln!(w, "{pause}")?;
    }
    for doing in &status.doing {
        writeln!(w, "{doing}")?;
    }
    if !status.seats.is_empty() {
        let seats: Vec<String> = status.seats.iter().map(ToString::to_string).collect();
        writeln!(w, "seats: {}", seats.join(", "))?;
    }
    Ok(())
}

/// A count as `count` takes it.
fn widen(n: u32) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// The stories done with nothing merged because their work was already on the epic branch,
/// each with its evidence; nothing when there are none.
fn in_place_text(w: &mut String, status: &StatusJson) -> std::fmt::Result {
    let in_place: Vec<(&StoryJson, &epic_report::InPlace)> = status
        .stories
        .iter()
        .filter_map(|story| story.in_place.as_ref().map(|in_place| (story, in_place)))
        .collect();
    if in_place.is_empty() {
        return Ok(());
    }
    writeln!(
        w,
        "\nalready in place (nothing merged; evidence checked on the epic branch):"
    )?;
    for (story, in_place) in in_place {
        writeln!(
            w,
            "{}: {}",
            story.id,
            crate::commands::run::evidence_text(in_place)
        )?;
    }
    Ok(())
}

/// Several epics, one line each.
fn several_text(epics: &[EpicSummary]) -> String {
    let rows: Vec<Vec<String>> = epics
        .iter()
        .map(|epic| {
            vec![
                epic.epic_id.clone(),
                if epic.running {
                    "running"
                } else {
                    "not running"
                }
                .to_owned(),
            ]
        })
        .collect();
    render(|w| table(w, &rows))
}

/// Rows as left-aligned columns two spaces apart; empty columns are dropped, and trailing spaces
/// trimmed.
fn table(w: &mut String, rows: &[Vec<String>]) -> std::fmt::Result {
    let columns = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .map(|row| row.get(c).map_or(0, |cell| cell.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in rows {
        let mut line = String::new();
        for (cell, &width) in row.iter().zip(&widths) {
            if width == 0 {
                continue;
            }
            write!(line, "{cell:width$}  ")?;
        }
        writeln!(w, "{}", line.trim_end())?;
    }
    Ok(())
}

/// Text on one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
