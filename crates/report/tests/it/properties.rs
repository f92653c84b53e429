//! Properties over generated reports: rendering never panics, every story gets exactly one row,
//! JSON round-trips and never holds `null`.

use std::collections::BTreeSet;

use epic_report::{
    EpicReport, OutcomeStatus, SeatUsage, StoryOutcome, Timestamp, UsageTotals, format_usd,
    render_markdown, round_half_away, to_json,
};
use proptest::prelude::*;

/// Any text, with the characters Markdown and Mermaid care about over-represented.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![any::<String>(), "[a-z|`:#;%\\\\ \t\n\r\u{2014}é🦀-]{0,24}",]
}

fn status() -> impl Strategy<Value = OutcomeStatus> {
    prop_oneof![
        Just(OutcomeStatus::Done),
        Just(OutcomeStatus::Failed),
        Just(OutcomeStatus::Skipped)
    ]
}

/// A timestamp anywhere RFC 3339 can write and jiff can hold (its last instant is late on
/// 9999-12-30), with any offset.
fn timestamp() -> impl Strategy<Value = Timestamp> {
    (
        0u32..=9998,
        1u32..=12,
        1u32..=28,
        0u32..24,
        0u32..60,
        0u32..=60,
        proptest::option::of(0u32..1_000_000_000),
        proptest::option::of((any::<bool>(), 0u32..24, 0u32..60)),
    )
        .prop_map(|(y, mo, d, h, mi, s, frac, offset)| {
            let frac = frac.map(|n| format!(".{n:09}")).unwrap_or_default();
            let offset = offset.map_or_else(
                || "Z".to_owned(),
                |(east, oh, om)| format!("{}{oh:02}:{om:02}", if east { '+' } else { '-' }),
            );
            let text = format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}{frac}{offset}");
            text.parse().expect("a generated RFC 3339 timestamp")
        })
}

/// Costs as they come: mostly ordinary, sometimes huge, negative or not a number.
fn cost() -> impl Strategy<Value = f64> {
    prop_oneof![0.0..1000.0f64, any::<f64>()]
}

fn story(finite_costs: bool) -> impl Strategy<Value = StoryOutcome> {
    let cost = if finite_costs {
        prop_oneof![0.0..1000.0f64, -1e300..1e300f64].boxed()
    } else {
        cost().boxed()
    };
    (
        text(),
        text(),
        status(),
        proptest::option::of(text()),
        proptest::option::of(text()),
        proptest::option::of(text()),
        proptest::option::of((any::<u64>(), proptest::option::of(cost))),
        proptest::option::of(timestamp()),
        proptest::option::of(timestamp()),
    )
        .prop_map(
            |(id, title, status, branch, reason, judge, estimate, start, finish)| {
                let mut story = StoryOutcome::new(id, title, status);
                story.branch = branch;
                story.reason = reason;
                story.judge = judge;
                if let Some((tokens, cost)) = estimate {
                    story = story.with_estimate(tokens, cost);
                }
                story.started_at = start;
                story.finished_at = finish;
                story
            },
        )
}

fn seat() -> impl Strategy<Value = SeatUsage> {
    (
        text(),
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        0.0..100.0f64,
        0u64..3,
    )
        .prop_map(|(name, turns, prompt, completion, cost, unpriced)| {
            let totals = UsageTotals {
                turns: turns.max(unpriced),
                usage: epic_report::Usage {
                    prompt,
                    completion,
                    total: prompt.saturating_add(completion),
                },
                priced_cost_usd: cost,
                unpriced_turns: unpriced,
                ..UsageTotals::default()
            };
            SeatUsage::new(name, &totals)
        })
}

fn report(finite_costs: bool) -> impl Strategy<Value = EpicReport> {
    (
        text(),
        text(),
        proptest::collection::vec(story(finite_costs), 0..8),
        proptest::collection::vec(text(), 0..4),
        proptest::collection::vec(seat(), 0..3),
    )
        .prop_map(|(epic_id, epic_branch, stories, path, seats)| {
            let mut report = EpicReport::new(epic_id, epic_branch)
                .with_critical_path(path)
                .with_seats(seats);
            report.stories = stories;
            report
        })
}

/// The table cell a story id renders as, computed independently of the crate.
fn id_cell(id: &str) -> String {
    id.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// The first cell of each row of the stories table.
fn first_cells(markdown: &str) -> Vec<String> {
    let mut lines = markdown
        .lines()
        .skip_while(|line| !line.starts_with("| Story | Status |"))
        .skip(2);
    let mut cells = Vec::new();
    for line in lines.by_ref() {
        if line.is_empty() {
            break;
        }
        let row = line.strip_prefix("| ").expect("a row starts with `| `");
        // The cell ends at the first `|` that is not escaped.
        let bytes = row.as_bytes();
        let end = (0..bytes.len())
            .find(|&i| bytes[i] == b'|' && (i == 0 || bytes[i - 1] != b'\\'))
            .expect("a row has cells");
        cells.push(
            row[..end]
                .strip_suffix(' ')
                .expect("space before `|`")
                .to_owned(),
        );
    }
    cells
}

proptest! {
    #[test]
    fn rendering_never_panics_and_ends_with_one_newline(report in report(false)) {
        let markdown = render_markdown(&report);
        prop_assert!(markdown.ends_with('\n'));
        prop_assert!(!markdown.ends_with("\n\n"));
        prop_assert!(markdown.contains("ESTIMATES"));
    }

    #[test]
    fn every_story_has_exactly_one_row(report in report(false)) {
        // Ids that render alike would be indistinguishable; the plan's ids are unique anyway.
        let cells: Vec<String> = report.stories.iter().map(|story| id_cell(&story.id)).collect();
        prop_assume!(cells.iter().collect::<BTreeSet<_>>().len() == cells.len());
        let markdown = render_markdown(&report);
        let rows = first_cells(&markdown);
        prop_assert_eq!(&rows, &cells, "{}", markdown);
    }

    #[test]
    fn table_rows_have_seven_cells(report in report(false)) {
        let markdown = render_markdown(&report);
        let rows = markdown
            .lines()
            .skip_while(|line| !line.starts_with("| Story | Status |"))
            .take_while(|line| !line.is_empty());
        for row in rows {
            let unescaped = row
                .char_indices()
                .filter(|&(i, c)| c == '|' && (i == 0 || row.as_bytes()[i - 1] != b'\\'))
                .count();
            prop_assert_eq!(unescaped, 8, "{}", row);
        }
    }

    #[test]
    fn json_round_trips(report in report(true)) {
        let json = to_json(&report);
        let back: EpicReport = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(&back, &report);
        prop_assert_eq!(to_json(&back), json);
    }

    #[test]
    fn json_never_holds_null(report in report(false)) {
        let value: serde_json::Value = serde_json::from_str(&to_json(&report)).unwrap();
        prop_assert!(!holds_null(&value), "{}", value);
    }

    #[test]
    fn money_agrees_with_rounding_to_even_except_on_exact_ties(value in -1e6..1e6f64) {
        let ours = format_usd(value);
        let std = format!("{value:.2}");
        let std = if std == "-0.00" { "0.00".to_owned() } else { std };
        if ours != std {
            // Only an exact tie may differ, and then ours is further from zero.
            let exact = format!("{:.60}", value.abs());
            let third_on = &exact[exact.find('.').unwrap() + 3..];
            prop_assert!(third_on.trim_end_matches('0') == "5", "{} vs {} for {:e}", ours, std, value);
            let ours: f64 = ours.parse().unwrap();
            let std: f64 = std.parse().unwrap();
            prop_assert!(ours.abs() > std.abs());
        }
    }

    #[test]
    fn rounding_is_never_more_than_half_a_unit_away(value in -1e9..1e9f64, places in 0usize..6) {
        let rounded: f64 = round_half_away(value, places).parse().unwrap();
        let unit = 10f64.powi(i32::try_from(places).unwrap());
        // Parsing the rounded text back into a float costs a few units in the last place.
        let slack = (value.abs() * f64::EPSILON * 4.0 + f64::MIN_POSITIVE) * unit;
        prop_assert!((rounded - value).abs() * unit <= 0.5 + slack, "{} -> {}", value, rounded);
    }
}

fn holds_null(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::Null => true,
        serde_json::Value::Array(items) => items.iter().any(holds_null),
        serde_json::Value::Object(map) => map.values().any(holds_null),
        _ => false,
    }
}
