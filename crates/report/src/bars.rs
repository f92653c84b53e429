//! The usage bars of the HTML page: tokens and cost per story and per seat, as inline SVG.

use std::fmt::Write as _;

use crate::format::format_usd;
use crate::graph::shorten;
use crate::model::{EpicReport, StoryOutcome};
use crate::pictures::escape;
use crate::usage::UsageSource;

const WIDTH: u64 = 1000;
const LABEL_W: u64 = 170;
const ROW_H: u64 = 22;
const HEAD_H: u64 = 24;
/// The longest bar: the width but the labels' and 110 for the value shown after it.
const ROOM: f64 = 720.0;

/// One bar: its label, its value as drawn and as shown.
struct Bar {
    label: String,
    value: f64,
    shown: String,
}

/// The `<svg id="usage">` of the report's tokens and cost, per story then per seat; a paragraph
/// when nothing was counted.
pub(crate) fn render(report: &EpicReport) -> String {
    let charts = charts(report);
    if charts.is_empty() {
        return "<p id=\"usage\">No tokens or cost were counted.</p>\n".to_owned();
    }
    draw(&charts)
}

/// The charts with a bar longer than nothing: tokens and cost per story, then per seat.
fn charts(report: &EpicReport) -> Vec<(&'static str, Vec<Bar>)> {
    let tokens = |bars: &mut Vec<Bar>, label: String, value: u64, estimated: bool| {
        bars.push(Bar {
            label,
            // Precision lost past 2^53 tokens does not show on a bar.
            #[expect(clippy::cast_precision_loss, reason = "a bar's length")]
            value: value as f64,
            shown: format!("{}{value}", if estimated { "~" } else { "" }),
        });
    };
    let mut charts: Vec<(&'static str, Vec<Bar>)> = Vec::new();
    let mut story_tokens = Vec::new();
    let mut story_cost = Vec::new();
    for story in &report.stories {
        if let Some((value, estimated)) = story_tokens_of(story) {
            tokens(&mut story_tokens, story.id.clone(), value, estimated);
        }
        if let Some(cost) = story
            .usage
            .as_ref()
            .and_then(|usage| usage.cost_usd)
            .or(story.estimated_cost_usd)
        {
            story_cost.push(Bar {
                label: story.id.clone(),
                value: cost,
                shown: format!("${}", format_usd(cost)),
            });
        }
    }
    let mut seat_tokens = Vec::new();
    let mut seat_cost = Vec::new();
    for seat in &report.seats {
        let summary = seat.summary();
        tokens(
            &mut seat_tokens,
            seat.seat.clone(),
            summary.input_tokens.saturating_add(summary.output_tokens),
            summary.source != UsageSource::Reported,
        );
        if let Some(cost) = summary.cost_usd {
            seat_cost.push(Bar {
                label: seat.seat.clone(),
                value: cost,
                shown: format!("${}", format_usd(cost)),
            });
        }
    }
    charts.push(("Tokens per story", story_tokens));
    charts.push(("Cost per story (USD)", story_cost));
    charts.push(("Tokens per seat", seat_tokens));
    charts.push(("Cost per seat (USD)", seat_cost));
    charts.retain(|(_, bars)| bars.iter().any(|bar| bar.value > 0.0));
    charts
}

/// The `<svg id="usage">` of `charts`.
fn draw(charts: &[(&str, Vec<Bar>)]) -> String {
    let rows: u64 = charts
        .iter()
        .map(|(_, bars)| HEAD_H + ROW_H * bars.len() as u64)
        .sum();
    let height = rows + 8;
    let mut svg = format!(
        "<svg id=\"usage\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {height}\" \
         width=\"100%\" role=\"img\" aria-label=\"tokens and cost\">\n"
    );
    let mut top = 0;
    for (heading, bars) in charts {
        let _ = writeln!(
            svg,
            "<text class=\"chart\" x=\"4\" y=\"{}\">{heading}</text>",
            top + 17
        );
        top += HEAD_H;
        let most = bars
            .iter()
            .map(|bar| bar.value)
            .fold(0.0, f64::max)
            .max(f64::MIN_POSITIVE);
        for bar in bars {
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "a non-negative length within the chart"
            )]
            let length = (bar.value.max(0.0) / most * ROOM).round() as u64;
            let _ = writeln!(
                svg,
                "<text class=\"lane\" x=\"4\" y=\"{ty}\">{label}</text>\
                 <rect class=\"bar\" x=\"{LABEL_W}\" y=\"{y}\" width=\"{w}\" height=\"{h}\"><title>{full}: {shown}</title></rect>\
                 <text class=\"value\" x=\"{vx}\" y=\"{ty}\">{shown}</text>",
                ty = top + ROW_H / 2 + 4,
                label = escape(&shorten(&bar.label, 22)),
                y = top + 4,
                w = length.max(1),
                h = ROW_H - 8,
                full = escape(&bar.label),
                shown = escape(&bar.shown),
                vx = LABEL_W + length + 6,
            );
            top += ROW_H;
        }
    }
    svg.push_str("</svg>\n");
    svg
}

/// A story's tokens (prompt and reply) and whether they are an estimate.
fn story_tokens_of(story: &StoryOutcome) -> Option<(u64, bool)> {
    match &story.usage {
        Some(usage) => Some((
            usage.input_tokens.saturating_add(usage.output_tokens),
            usage.source != UsageSource::Reported,
        )),
        None => story.estimated_tokens.map(|tokens| (tokens, true)),
    }
}
