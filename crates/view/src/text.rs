//! The board as plain text, for a pipe (`epic watch` when standard output is not a
//! terminal): the header's lines, then the table with a marker on the stories that need a
//! person. The full-screen view draws the same header lines.

use std::fmt::Write as _;

use crate::figures::{self, TITLES, cells};
use crate::model::{Board, SeatState};

/// The marker of a story that needs a person (waiting, failed, stopped), in the first column:
/// what colour says on a terminal, said without colour too.
pub const NEEDS_PERSON: char = '!';

/// The header's lines: the epic and its progress with the spend, the seats, the merge queue.
pub fn header(board: &Board) -> Vec<String> {
    let run = if board.running {
        "running"
    } else {
        "no run going: the last run"
    };
    let mut spend = format!("spent {}", figures::usd(board.spent_usd));
    if let Some(budget) = board.budget_usd {
        let _ = write!(spend, " of {}", figures::usd(budget));
    }
    let mut lines = vec![format!(
        "epic {} · {run} · {}/{} done · {spend}",
        board.epic_id, board.done, board.total
    )];
    if !board.seats.is_empty() {
        let seats: Vec<String> = board
            .seats
            .iter()
            .map(|seat| match seat.state {
                SeatState::Working => format!("{} working ({})", seat.seat, seat.turns),
                SeatState::Idle => format!("{} idle", seat.seat),
                SeatState::Paused => format!(
                    "{} paused until {} ({})",
                    seat.seat,
                    seat.until.as_deref().map_or_else(|| "?".to_owned(), clock),
                    seat.reason.as_deref().unwrap_or("paused")
                ),
            })
            .collect();
        lines.push(format!("seats: {}", seats.join(" · ")));
    }
    if let Some(batch) = &board.merging {
        lines.push(format!(
            "merging: batch {} ({})",
            batch.batch,
            batch.stories.join(", ")
        ));
    }
    if let Some(reached) = &board.budget_reached {
        lines.push(format!("budget reached: {reached}"));
    }
    lines
}

/// An RFC 3339 time as `HH:MM UTC`, short enough for the header; as it is when it does not
/// parse.
fn clock(time: &str) -> String {
    time.parse::<jiff::Timestamp>().map_or_else(
        |_| time.to_owned(),
        |at| at.strftime("%H:%M UTC").to_string(),
    )
}

/// The board as plain text: the header, a blank line, the table.
pub fn plain(board: &Board) -> String {
    let mut out = String::new();
    for line in header(board) {
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');
    let rows: Vec<(bool, [String; 9])> = board
        .stories
        .iter()
        .map(|row| (row.status.needs_person(), cells(row)))
        .collect();
    let mut widths = TITLES.map(str::len);
    for (_, cells) in &rows {
        for (width, cell) in widths.iter_mut().zip(cells) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |out: &mut String, marker: char, cells: &[&str]| {
        let mut text = format!("{marker} ");
        for (index, (cell, width)) in cells.iter().zip(widths).enumerate() {
            if index + 1 == cells.len() {
                text.push_str(cell);
            } else {
                let _ = write!(text, "{cell:width$}  ");
            }
        }
        let _ = writeln!(out, "{}", text.trim_end());
    };
    line(&mut out, ' ', &TITLES);
    for (needs, cells) in &rows {
        let cells: Vec<&str> = cells.iter().map(String::as_str).collect();
        line(&mut out, if *needs { NEEDS_PERSON } else { ' ' }, &cells);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gather::fixture_board;

    #[test]
    fn the_board_as_plain_text() {
        insta::assert_snapshot!(plain(&fixture_board(true)));
    }
}
