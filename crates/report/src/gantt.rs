//! The timeline of the HTML page: one time axis, a row per story (its span, its turns, gate
//! runs, merges, revisions and waits), a row for the merge queue's batches and one per paused
//! seat, as inline SVG.

use std::fmt::Write as _;

use jiff::Timestamp;

use crate::graph::{shorten, status_name};
use crate::model::EpicReport;
use crate::pictures::{Activity, Lane, escape};

const WIDTH: i64 = 1000;
const LABEL_W: i64 = 170;
const ROW_H: i64 = 26;
const AXIS_H: i64 = 26;
const TICKS: i64 = 5;
/// The width of the plot, right of the labels.
const PLOT: i64 = WIDTH - LABEL_W - 10;

/// One row: its label, its lane, and the story's span when it is a story's.
struct Row<'a> {
    label: String,
    lane: Lane,
    span: Option<(Timestamp, Timestamp, &'static str, &'a str)>,
}

/// The timeline's `<svg id="timeline">`, or a paragraph saying nothing has times yet.
pub(crate) fn render(report: &EpicReport, activities: &[Activity]) -> String {
    let rows = rows(report, activities);
    let instants = rows
        .iter()
        .filter_map(|row| row.span.map(|(start, finish, ..)| [start, finish]))
        .flatten()
        .chain(
            activities
                .iter()
                .flat_map(|activity| [activity.start, activity.finish]),
        );
    let (Some(first), Some(last)) = (instants.clone().min(), instants.max()) else {
        return "<p id=\"timeline\">No story has a start and a finish yet.</p>\n".to_owned();
    };
    let axis = Axis {
        origin: first.as_millisecond(),
        total: (last.as_millisecond() - first.as_millisecond()).max(1),
    };
    let height = AXIS_H + i64::try_from(rows.len()).unwrap_or(0) * ROW_H + 8;
    let mut svg = format!(
        "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {height}\" \
         width=\"100%\" role=\"img\" aria-label=\"timeline\">\n"
    );
    for tick in 0..=TICKS {
        let at_ms = axis.origin + axis.total * tick / TICKS;
        let tx = LABEL_W + PLOT * tick / TICKS;
        let anchor = match tick {
            0 => "start",
            TICKS => "end",
            _ => "middle",
        };
        let _ = writeln!(
            svg,
            "<line class=\"tick\" x1=\"{tx}\" y1=\"{AXIS_H}\" x2=\"{tx}\" y2=\"{height}\"/>\
             <text class=\"axis\" x=\"{tx}\" y=\"16\" text-anchor=\"{anchor}\">{}</text>",
            if tick == 0 {
                clock(at_ms)
            } else {
                since(at_ms - axis.origin, axis.total)
            }
        );
    }
    for (n, row) in rows.iter().enumerate() {
        let top = AXIS_H + i64::try_from(n).unwrap_or(0) * ROW_H;
        draw_row(&mut svg, &axis, top, row, activities);
    }
    svg.push_str("</svg>\n");
    svg
}

/// The time axis: where it starts and how long it is, in milliseconds.
struct Axis {
    origin: i64,
    total: i64,
}

impl Axis {
    /// The horizontal position of `at`.
    fn x(&self, at: Timestamp) -> i64 {
        LABEL_W + (at.as_millisecond() - self.origin) * PLOT / self.total
    }
}

/// A row per story of the report, in plan order, then one per other lane of `activities`, in
/// their order.
fn rows<'a>(report: &'a EpicReport, activities: &[Activity]) -> Vec<Row<'a>> {
    let mut rows: Vec<Row<'a>> = report
        .stories
        .iter()
        .map(|story| Row {
            label: story.id.clone(),
            lane: Lane::Story(story.id.clone()),
            span: story
                .started_at
                .zip(story.finished_at)
                .filter(|(start, finish)| start <= finish)
                .map(|(start, finish)| {
                    (
                        start,
                        finish,
                        status_name(story.status),
                        story.title.as_str(),
                    )
                }),
        })
        .collect();
    for activity in activities {
        let known = rows.iter().any(|row| row.lane == activity.lane);
        if !known {
            let label = match &activity.lane {
                Lane::Story(id) => id.clone(),
                Lane::Merge => "merge queue".to_owned(),
                Lane::Seat(seat) => format!("seat {seat}"),
            };
            rows.push(Row {
                label,
                lane: activity.lane.clone(),
                span: None,
            });
        }
    }
    rows
}

/// One row at `top`: its label, its span, its activities.
fn draw_row(svg: &mut String, axis: &Axis, top: i64, row: &Row<'_>, activities: &[Activity]) {
    let _ = writeln!(
        svg,
        "<text class=\"lane\" x=\"4\" y=\"{}\">{}</text>",
        top + ROW_H / 2 + 4,
        escape(&shorten(&row.label, 22))
    );
    if let Some((start, finish, status, title)) = row.span {
        let _ = writeln!(
            svg,
            "<rect class=\"span {status}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"3\">\
             <title>{}: {} ({status}, {start} to {finish})</title></rect>",
            axis.x(start),
            top + 3,
            (axis.x(finish) - axis.x(start)).max(2),
            ROW_H - 6,
            escape(&row.label),
            escape(title),
        );
    }
    for activity in activities
        .iter()
        .filter(|activity| activity.lane == row.lane)
    {
        let tip = format!(
            "{}{}{} ({} to {})",
            activity.kind.name(),
            if activity.label.is_empty() { "" } else { ": " },
            activity.label,
            activity.start,
            activity.finish
        );
        let class = activity.kind.class();
        if activity.start == activity.finish {
            let _ = writeln!(
                svg,
                "<path class=\"{class}\" d=\"M{} {} l5 6 l-5 6 l-5 -6 z\"><title>{}</title></path>",
                axis.x(activity.start),
                top + 7,
                escape(&tip)
            );
        } else {
            let _ = writeln!(
                svg,
                "<rect class=\"{class}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}</title></rect>",
                axis.x(activity.start),
                top + 8,
                (axis.x(activity.finish) - axis.x(activity.start)).max(1),
                ROW_H - 16,
                escape(&tip)
            );
        }
    }
}

/// `elapsed` milliseconds since the axis's start as its tick says it, to a precision that
/// tells the ticks of an axis of `total` milliseconds apart: `+0.25s`, `+42s`, `+3m20s`,
/// `+1h05m`.
fn since(elapsed: i64, total: i64) -> String {
    let seconds = elapsed / 1000;
    if total < 10_000 {
        format!("+{}.{:02}s", seconds, elapsed % 1000 / 10)
    } else if total < 100_000 {
        format!("+{seconds}s")
    } else if total < 6_000_000 {
        format!("+{}m{:02}s", seconds / 60, seconds % 60)
    } else {
        format!("+{}h{:02}m", seconds / 3600, seconds / 60 % 60)
    }
}

/// `HH:MM:SS` (UTC) of a millisecond since the epoch.
fn clock(millisecond: i64) -> String {
    let seconds = millisecond.div_euclid(1000).rem_euclid(86_400);
    format!(
        "{:02}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_is_utc_time_of_day() {
        let at: Timestamp = "2026-03-01T09:04:05.678Z".parse().expect("a time");
        assert_eq!(clock(at.as_millisecond()), "09:04:05");
    }

    #[test]
    fn ticks_after_the_first_say_the_time_since_it() {
        assert_eq!(since(250, 1_000), "+0.25s");
        assert_eq!(since(42_300, 60_000), "+42s");
        assert_eq!(since(200_000, 600_000), "+3m20s");
        assert_eq!(since(3_900_000, 7_200_000), "+1h05m");
    }
}
