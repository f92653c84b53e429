//! The run's own events: its start and end, its notes, the budget, the seats paused and resumed.

use std::fmt::Write as _;

use epic_events::Event;

use crate::plan_file::count;
use crate::progress::words::{first_line, paused_until};

/// The line an event of this family is shown as, if it is shown (`-v` shows the minor
/// steps); `None` for the events of the other families.
pub(super) fn line(event: &Event, verbose: bool) -> Option<String> {
    let line = match event {
        Event::RunStarted {
            epic,
            epic_branch,
            stories,
            concurrency,
            epic_worktree,
            ..
        } => {
            let mut line = format!(
                "epic {epic}: {} into {epic_branch}, {concurrency} at once",
                count(*stories, "story", "stories")
            );
            if verbose {
                write!(line, " (epic worktree {epic_worktree})").ok();
            }
            line
        }
        Event::SeatPaused {
            seat,
            story,
            until,
            since,
            reason,
            message,
        } => format!(
            "story {story}: {}: {}",
            paused_until(seat, since, until, reason),
            first_line(message)
        ),
        Event::SeatResumed { seat } => format!("seat {seat}: resumed"),
        Event::RunNote { message } => format!("note: {}", first_line(message)),
        Event::BudgetReached { message, .. } => {
            format!(
                "{message}: no new agent turn starts; a rerun with a larger --budget-usd carries on"
            )
        }
        Event::RunFinished {
            done,
            failed,
            skipped,
            interrupted,
        } => format!(
            "{}: {done} done, {failed} failed, {skipped} skipped",
            if *interrupted {
                "interrupted"
            } else {
                "finished"
            }
        ),
        _ => return None,
    };
    Some(line)
}
