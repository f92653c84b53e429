//! Usage estimation: tokens from characters, totals by seat, costs only when known.

use epic_report::{
    EpicReport, Estimate, OutcomeStatus, PriceTable, StoryOutcome, Usage, UsageMeter, UsageTotals,
    count_chars, estimate_tokens, to_json,
};

#[test]
fn about_four_characters_a_token_rounded_up() {
    let usage = estimate_tokens(400, 100);
    assert_eq!(
        usage,
        Usage {
            prompt: 100,
            completion: 25,
            total: 125
        }
    );
    assert_eq!(estimate_tokens(0, 0), Usage::default());
    assert_eq!(
        estimate_tokens(1, 5),
        Usage {
            prompt: 1,
            completion: 2,
            total: 3
        }
    );
    assert_eq!(
        estimate_tokens(u64::MAX, u64::MAX),
        Usage {
            prompt: u64::MAX / 4 + 1,
            completion: u64::MAX / 4 + 1,
            total: u64::MAX / 2 + 1
        }
    );
}

#[test]
fn characters_are_unicode_scalar_values() {
    assert_eq!(count_chars(""), 0);
    assert_eq!(count_chars("abcd"), 4);
    assert_eq!(count_chars("ééé"), 3, "not bytes");
    assert_eq!(count_chars("🦀🦀"), 2, "not UTF-16 units");
    assert_eq!(
        Usage::of_text("a 40-character history, written out here", "hello world").total,
        10 + 3
    );
}

#[test]
fn the_meter_prices_each_turn_by_its_seat() {
    let mut meter = UsageMeter::new(PriceTable::default());
    let turn = meter.record("claude", 4_000_000, 400_000);
    // 1M prompt tokens at $3 + 100k reply tokens at $15.
    assert_eq!(turn.cost_usd, Some(4.5));
    let turn = meter.record("codex", 4_000_000, 4_000_000);
    assert_eq!(turn.cost_usd, Some(35.0));
    let turn = meter.record("script", 4_000, 4_000);
    assert_eq!(turn.cost_usd, Some(0.0));
    let totals = meter.totals();
    assert_eq!(totals.turns, 3);
    assert_eq!(totals.usage.total, 1_100_000 + 2_000_000 + 2_000);
    assert_eq!(totals.cost_usd(), Some(39.5));
    assert!(!totals.is_cost_partial());
}

#[test]
#[expect(clippy::float_cmp, reason = "whole-dollar costs add up exactly")]
fn an_unknown_price_makes_the_cost_unknown_not_smaller() {
    let mut meter = UsageMeter::new(PriceTable::default());
    meter.record("claude", 4_000_000, 0);
    let turn = meter.record("aider", 4_000, 4_000);
    assert_eq!(turn.cost_usd, None);
    meter.record("exec:./agent.sh", 4, 4);
    let totals = meter.totals();
    assert_eq!(totals.cost_usd(), None);
    assert_eq!(totals.priced_cost_usd, 3.0);
    assert_eq!(totals.unpriced_turns, 2);
    assert!(totals.is_cost_partial());

    let story = StoryOutcome::new("a", "A", OutcomeStatus::Done).with_usage(&totals);
    assert_eq!(story.estimated_tokens, Some(1_000_000 + 2_000 + 2));
    assert_eq!(story.estimated_cost_usd, None);
    let json = to_json(&EpicReport::new("e", "epic/e").with_story(story));
    assert!(!json.contains("estimated_cost_usd"), "{json}");
}

#[test]
fn no_turns_cost_nothing_and_are_not_partial() {
    let totals = UsageTotals::default();
    assert_eq!(totals.cost_usd(), Some(0.0));
    assert!(!totals.is_cost_partial());
    let mut all_unpriced = UsageTotals::default();
    all_unpriced.add(Estimate {
        usage: estimate_tokens(4, 4),
        cost_usd: None,
    });
    assert!(
        !all_unpriced.is_cost_partial(),
        "nothing priced: unknown, not partial"
    );
    assert_eq!(all_unpriced.cost_usd(), None);
}

#[test]
fn seats_are_kept_apart_and_absorbed_into_a_run_total() {
    let mut story_a = UsageMeter::new(PriceTable::default());
    story_a.record("claude", 400, 100);
    story_a.record("claude", 400, 100);
    let mut story_b = UsageMeter::new(PriceTable::default());
    story_b.record("claude", 400, 100);
    story_b.record("gemini", 400, 100);

    let mut run = UsageMeter::new(PriceTable::default());
    run.absorb(&story_a);
    run.absorb(&story_b);
    let seats: Vec<(&str, u64, u64)> = run
        .seats()
        .map(|(seat, totals)| (seat, totals.turns, totals.usage.total))
        .collect();
    assert_eq!(seats, [("claude", 3, 375), ("gemini", 1, 125)]);
    let (run_totals, sum) = (run.totals(), story_a.totals() + story_b.totals());
    assert_eq!(run_totals.usage, sum.usage);
    assert!((run_totals.priced_cost_usd - sum.priced_cost_usd).abs() < 1e-15);
    assert_eq!(run.seat("codex"), None);

    let usage = run.seat_usage();
    assert_eq!(usage[0].seat, "claude");
    assert_eq!(usage[0].prompt_tokens, 300);
    assert_eq!(usage[0].completion_tokens, 75);
    assert_eq!(usage[0].estimated_tokens, 375);
    assert_eq!(usage[0].unpriced_turns, 0);
}

#[test]
#[expect(clippy::float_cmp, reason = "whole-dollar costs add up exactly")]
fn totals_add_up_and_saturate() {
    let big = UsageTotals {
        turns: u64::MAX,
        usage: Usage {
            prompt: u64::MAX,
            completion: 1,
            total: u64::MAX,
        },
        priced_cost_usd: 1.0,
        unpriced_turns: 0,
        ..UsageTotals::default()
    };
    let sum: UsageTotals = [big, big].into_iter().sum();
    assert_eq!(sum.turns, u64::MAX);
    assert_eq!(
        sum.usage,
        Usage {
            prompt: u64::MAX,
            completion: 2,
            total: u64::MAX
        }
    );
    assert_eq!(sum.priced_cost_usd, 2.0);
}

#[test]
fn seat_usage_in_the_report_json() {
    let mut meter = UsageMeter::new(PriceTable::default());
    meter.record("aider", 40, 40);
    meter.record("claude", 40, 40);
    let json = to_json(&EpicReport::new("e", "epic/e").with_seats(meter.seat_usage()));
    assert!(
        json.contains("\"seat\": \"aider\",\n      \"turns\": 1,"),
        "{json}"
    );
    assert!(json.contains("\"unpriced_turns\": 1"), "{json}");
    assert_eq!(
        json.matches("unpriced_turns").count(),
        1,
        "left out when zero"
    );
    assert_eq!(
        json.matches("estimated_cost_usd").count(),
        1,
        "aider's is unknown"
    );
}

#[test]
fn reported_usage_is_taken_as_reported_and_says_so() {
    use epic_report::{
        EpicReport, OutcomeStatus, ReportedUsage, StoryOutcome, UsageSource, render_markdown,
    };

    let mut claude = UsageMeter::new(PriceTable::default());
    claude.record_reported(
        "claude",
        &ReportedUsage {
            input_tokens: 1200,
            output_tokens: 300,
            cost_usd: Some(0.42),
        },
    );
    let mut codex = UsageMeter::new(PriceTable::default());
    codex.record_reported(
        "codex",
        &ReportedUsage {
            input_tokens: 1_000_000,
            output_tokens: 0,
            cost_usd: None,
        },
    );
    let mut mixed = UsageMeter::new(PriceTable::default());
    mixed.absorb(&claude);
    mixed.record_text("claude", "a prompt of some length", "ok");
    assert_eq!(claude.totals().source(), UsageSource::Reported);
    assert_eq!(
        codex.totals().source(),
        UsageSource::Mixed,
        "tokens reported, cost priced"
    );
    assert_eq!(codex.totals().cost_usd(), Some(5.0));
    assert_eq!(mixed.totals().source(), UsageSource::Mixed);

    let report = EpicReport::new("e", "epic/e")
        .with_story(StoryOutcome::new("a", "A", OutcomeStatus::Done).with_usage(&claude.totals()));
    let json = epic_report::to_json(&report);
    assert!(
        json.contains(
            r#""usage": {
        "input_tokens": 1200,
        "output_tokens": 300,
        "cost_usd": 0.42,
        "source": "reported"
      }"#
        ),
        "{json}"
    );
    assert!(
        json.contains(r#""estimated_tokens": 1500"#),
        "old readers keep their field"
    );
    let markdown = render_markdown(&report);
    assert!(
        !markdown.contains("ESTIMATES"),
        "nothing is estimated:\n{markdown}"
    );
    assert!(
        markdown.contains("| a | done | — | 1500 | $0.42 | reported | — |  |"),
        "{markdown}"
    );
    assert!(markdown.contains("- Cost: $0.42 (reported)"), "{markdown}");

    let report = report
        .with_story(StoryOutcome::new("b", "B", OutcomeStatus::Done).with_usage(&codex.totals()));
    let markdown = render_markdown(&report);
    assert!(
        markdown.contains("ESTIMATES"),
        "the codex cost is estimated:\n{markdown}"
    );
    assert!(
        markdown.contains("| b | done | — | ~1000000 | ~$5.00 | mixed |"),
        "{markdown}"
    );
}

#[test]
fn a_seat_adds_up_across_runs_with_its_source() {
    use epic_report::{ReportedUsage, UsageSource};

    let mut first = UsageMeter::new(PriceTable::default());
    first.record_text("claude", "prompt", "reply");
    let mut second = UsageMeter::new(PriceTable::default());
    second.record_reported(
        "claude",
        &ReportedUsage {
            input_tokens: 10,
            output_tokens: 5,
            cost_usd: Some(1.5),
        },
    );
    let before = &first.seat_usage()[0];
    let now = &second.seat_usage()[0];
    assert_eq!(now.summary().source, UsageSource::Reported);
    let both = before.plus(now).summary();
    assert_eq!(both.source, UsageSource::Mixed);
    assert_eq!(both.output_tokens, 5 + 2);
    // An old report's seat (no `usage`) counts as estimated.
    let mut old = before.clone();
    old.usage = None;
    assert_eq!(old.plus(now).summary().source, UsageSource::Mixed);
    assert_eq!(old.summary().source, UsageSource::Estimated);
}
