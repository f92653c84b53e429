//! `epic status` as text, drawn from its model alone: a line on the run (who runs it, the
//! landing, the seats paused, what the agents are doing), a table of the stories, the reasons,
//! the turns epic ended, the stories found in place, the merge revisions and (unless `-q`) the
//! totals; several epics as a line each.

use std::fmt::{self, Write as _};

use epic_state_store::{Hold, StoryStage};

use crate::commands::render;
use crate::output::Output;
use crate::plan_file::count;

use super::model::{DoingJson, EpicSummary, PausedJson, SeatJson, StatusJson, StoryJson};

impl fmt::Display for PausedJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pause =
            crate::progress::paused_until(&self.seat, &self.since, &self.until, &self.reason);
        write!(f, "{pause} (met by story {})", self.story)
    }
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

impl fmt::Display for DoingJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "story {}: {} {}", self.story, self.role, self.doing)
    }
}

fn outcome_name(status: epic_report::OutcomeStatus) -> &'static str {
    status.as_str()
}

/// One line on the run, a table of the stories, reasons, and (unless `-q`) totals.
pub(super) fn text(status: &StatusJson, out: Output) -> String {
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
        holds_text(w, status)?;
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
                let stopped = if report.stopped > 0 {
                    format!(", {} stopped", report.stopped)
                } else {
                    String::new()
                };
                writeln!(
                    w,
                    "last report: {} done, {} failed, {} skipped{stopped} on {} (`epic report {}` \
                     prints it)",
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

/// The stories a person holds, per their state files: waiting on an answer (the question)
/// or stopped, each with what to run; nothing when there are none.
fn holds_text(w: &mut String, status: &StatusJson) -> std::fmt::Result {
    let held: Vec<(&StoryJson, &Hold)> = status
        .stories
        .iter()
        .filter_map(|story| Some((story, story.hold.as_ref()?)))
        .collect();
    if held.is_empty() {
        return Ok(());
    }
    writeln!(w, "\nheld for a person:")?;
    for (story, hold) in held {
        let id = &story.id;
        match hold {
            Hold::Waiting { question, since } => writeln!(
                w,
                "{id}: waiting for an answer since {since}: {} (`epic answer {id} TEXT`)",
                one_line(question)
            )?,
            Hold::Stopped { uid, at } => writeln!(
                w,
                "{id}: stopped by a person (uid {uid}, {at}) (`epic retry {id}` runs it again)"
            )?,
        }
    }
    Ok(())
}

/// The stories some of whose turns epic ended as stalled or looping, or some of whose ACP
/// agents' requests it rejected, per the last report; nothing when there are none.
fn ended_turns_text(w: &mut String, status: &StatusJson) -> std::fmt::Result {
    let ended: Vec<&StoryJson> = status
        .stories
        .iter()
        .filter(|story| {
            story.stalled_turns > 0 || story.looping_turns > 0 || story.permission_rejections > 0
        })
        .collect();
    if ended.is_empty() {
        return Ok(());
    }
    writeln!(
        w,
        "
turns ended by epic (stalled: printed nothing for --stall-timeout; looping: the same \
         tool call five times in a row), requests of ACP agents it rejected:"
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
        if story.permission_rejections > 0 {
            parts.push(format!(
                "{} rejected",
                count(widen(story.permission_rejections), "request", "requests")
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
pub(super) fn several_text(epics: &[EpicSummary]) -> String {
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

#[cfg(test)]
mod tests {
    use insta::assert_snapshot;

    use super::super::fixtures::{SINCE, UNTIL, bare, full, several, story};
    use super::*;
    use crate::progress::local;

    /// `status` as text, its local times named (they depend on the machine's time zone).
    fn shown(status: &StatusJson, out: Output) -> String {
        text(status, out)
            .replace(&local(UNTIL), "<until>")
            .replace(&local(SINCE), "<since>")
    }

    #[test]
    fn a_running_epic_with_everything() {
        assert_snapshot!("everything", shown(&full(), Output::default()));
    }

    #[test]
    fn verbose_adds_the_worktrees_and_quiet_drops_the_totals() {
        assert_snapshot!("everything_verbose", shown(&full(), Output::with(false, 1)));
        assert_snapshot!("everything_quiet", shown(&full(), Output::with(true, 0)));
    }

    #[test]
    fn without_a_report_the_table_has_no_report_column() {
        assert_snapshot!("bare", shown(&bare(), Output::default()));
    }

    #[test]
    fn a_run_that_has_not_said_who_it_is_and_no_story_yet() {
        let status = StatusJson {
            running: true,
            stories: Vec::new(),
            ..bare()
        };
        assert_eq!(
            shown(&status, Output::default()),
            "epic checkout: running (its process has not recorded who it is)\n\nno story has \
             started yet\n"
        );
    }

    #[test]
    fn a_reason_is_shown_on_one_line() {
        let status = StatusJson {
            stories: vec![StoryJson {
                reason: Some("gates red:\n  pytest\texit code 1\n".to_owned()),
                ..story("a")
            }],
            ..bare()
        };
        assert!(
            shown(&status, Output::with(true, 0)).contains("\na: gates red: pytest exit code 1\n"),
            "{}",
            shown(&status, Output::default())
        );
    }

    #[test]
    fn several_epics_are_a_line_each() {
        assert_snapshot!(
            several_text(&several().epics),
            @r"
        checkout  running
        search    not running
        "
        );
    }
}
