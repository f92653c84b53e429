//! The Markdown rendering: the reference's example, each section, and file snapshots.

use epic_report::{
    EpicReport, OutcomeStatus, PriceTable, StoryOutcome, UsageMeter, render_markdown,
};

use crate::support::{at, diamond, diamond_with_failure, done, nine};

#[test]
fn the_reference_example() {
    let report = EpicReport::new("diamond", "epic/diamond")
        .with_story(done("a"))
        .with_story(done("b"))
        .with_story(done("c"))
        .with_story(done("d"));
    let markdown = render_markdown(&report);
    assert!(
        markdown.starts_with("# Epic report: diamond\n\n> "),
        "{markdown}"
    );
    assert!(
        markdown.contains(
            "| a | done | `story/diamond/a` | ~120 | ~$0.01 | — | judge cleared (round 1) |\n"
        ),
        "{markdown}"
    );
    assert!(markdown.contains("- Epic branch: `epic/diamond`\n"));
    assert!(markdown.contains("- Stories: 4 (done 4, failed 0, skipped 0)\n"));
    assert!(
        markdown.contains("\n- Estimated tokens: ~480\n"),
        "{markdown}"
    );
    assert!(
        markdown.contains("\n- Estimated cost: ~$0.04\n"),
        "{markdown}"
    );
    assert!(!markdown.contains("## Timeline"), "no times, no timeline");
    assert!(markdown.ends_with("~$0.04\n"), "{markdown}");
}

#[test]
fn the_banner_says_the_figures_are_estimates() {
    let markdown = render_markdown(&EpicReport::new("e", "epic/e"));
    assert!(markdown.contains("ESTIMATES from character counts"));
    assert!(markdown.contains("not measurements"));
}

#[test]
fn the_note_is_the_reason_else_the_judge() {
    let report = diamond_with_failure();
    let markdown = render_markdown(&report);
    assert!(
        markdown.contains("after merge; merge undone |\n"),
        "reason wins: {markdown}"
    );
    assert!(!markdown.contains("round 2"), "{markdown}");
    assert!(markdown.contains("| judge cleared (round 1) |\n"));
    assert!(
        markdown.contains("| d | skipped | — | — | — | — | depends on b, which failed |\n"),
        "{markdown}"
    );
}

#[test]
fn totals_appear_only_with_figures() {
    let bare =
        EpicReport::new("e", "epic/e").with_story(StoryOutcome::new("a", "A", OutcomeStatus::Done));
    let markdown = render_markdown(&bare);
    assert!(!markdown.contains("Estimated tokens"));
    assert!(!markdown.contains("Estimated cost"));
    assert!(
        markdown.ends_with("| a | done | — | — | — | — |  |\n"),
        "{markdown}"
    );
}

#[test]
fn the_cost_total_names_the_stories_it_leaves_out() {
    let report = EpicReport::new("e", "epic/e")
        .with_story(StoryOutcome::new("a", "A", OutcomeStatus::Done).with_estimate(100, Some(0.5)))
        .with_story(StoryOutcome::new("b", "B", OutcomeStatus::Done).with_estimate(50, None));
    let markdown = render_markdown(&report);
    assert!(
        markdown.contains("- Estimated tokens: ~150\n"),
        "{markdown}"
    );
    assert!(
        markdown.contains("- Estimated cost: ~$0.50 (partial: no known price for b)\n"),
        "{markdown}"
    );

    let unknown = EpicReport::new("e", "epic/e")
        .with_story(StoryOutcome::new("b", "B", OutcomeStatus::Done).with_estimate(50, None));
    assert!(
        render_markdown(&unknown).contains("- Estimated cost: unknown (no known price for b)\n")
    );
}

#[test]
fn timeline_has_makespan_parallelism_and_a_gantt_chart() {
    let markdown = render_markdown(&diamond());
    // a 4m, b 6m 30s, c 3m 48s, d 3m 10s = 17m 28s of story time in 14 minutes.
    assert!(
        markdown
            .contains("- Makespan: 14m 00s (from 2026-03-01T09:00:00Z to 2026-03-01T09:14:00Z)\n"),
        "{markdown}"
    );
    assert!(
        markdown.contains("- Parallelism: 1.2× (17m 28s of story time in 14m 00s)\n"),
        "{markdown}"
    );
    assert!(
        markdown.contains(
            "```mermaid\ngantt\n    dateFormat YYYY-MM-DD HH:mm:ss.SSS\n    axisFormat %H:%M\n"
        ),
        "{markdown}"
    );
    assert!(
        markdown.contains(
            "    Story a :done, crit, 2026-03-01 09:00:00.000, 2026-03-01 09:04:00.000\n"
        ),
        "{markdown}"
    );
    assert!(
        markdown.contains("    Story c :done, 2026-03-01 09:04:12.000, 2026-03-01 09:08:00.000\n"),
        "{markdown}"
    );
    assert!(markdown.contains("- Critical path: a → b → d\n"));
}

#[test]
fn timeline_converts_offsets_to_utc_and_skips_stories_without_both_times() {
    let report = EpicReport::new("e", "epic/e")
        .with_story(
            StoryOutcome::new("a", "A", OutcomeStatus::Done)
                .started(at("2026-03-01T10:00:00+01:00"))
                .finished(at("2026-03-01T09:00:30.5Z")),
        )
        .with_story(StoryOutcome::new("b", "B", OutcomeStatus::Failed).started(nine(0, 10)))
        .with_story(
            StoryOutcome::new("c", "C", OutcomeStatus::Failed)
                .started(nine(5, 0))
                .finished(nine(1, 0)),
        );
    let markdown = render_markdown(&report);
    assert!(
        markdown.contains("| a | done | — | — | — | 30s |  |\n"),
        "{markdown}"
    );
    assert!(
        markdown.contains("| c | failed | — | — | — | — |  |\n"),
        "finish before start"
    );
    assert!(markdown.contains("    axisFormat %H:%M:%S\n"));
    assert!(
        markdown.contains("    A :done, 2026-03-01 09:00:00.000, 2026-03-01 09:00:30.500\n"),
        "{markdown}"
    );
    assert!(!markdown.contains("    B :"));
    assert!(!markdown.contains("    C :"));
    assert!(markdown.contains("- Parallelism: 1.0×"), "{markdown}");
}

#[test]
fn a_timeline_of_one_instant_has_no_parallelism() {
    let report = EpicReport::new("e", "epic/e").with_story(
        StoryOutcome::new("a", "A", OutcomeStatus::Done)
            .started(nine(0, 0))
            .finished(nine(0, 0)),
    );
    let markdown = render_markdown(&report);
    assert!(markdown.contains("- Makespan: 0ms"), "{markdown}");
    assert!(!markdown.contains("Parallelism"));
}

#[test]
fn seat_usage_section() {
    let mut meter = UsageMeter::new(PriceTable::default());
    meter.record("claude", 4_000, 1_000);
    meter.record("claude", 8_000, 2_000);
    meter.record("aider", 400, 100);
    meter.record("script", 40, 4);
    let report = EpicReport::new("e", "epic/e").with_seats(meter.seat_usage());
    let markdown = render_markdown(&report);
    assert!(
        markdown.contains("## Usage by seat\n\n| Seat | Turns |"),
        "{markdown}"
    );
    assert!(
        markdown
            .contains("| aider | 1 | ~100 | ~25 | ~125 | — (no known price for 1 of 1 turns) |\n"),
        "{markdown}"
    );
    // 3000 prompt tokens at $3/M + 750 reply tokens at $15/M = $0.02025.
    assert!(
        markdown.contains("| claude | 2 | ~3000 | ~750 | ~3750 | ~$0.02 |\n"),
        "{markdown}"
    );
    assert!(
        markdown.contains("| script | 1 | ~10 | ~1 | ~11 | ~$0.00 |\n"),
        "{markdown}"
    );
}

#[test]
fn snapshot_empty_epic() {
    insta::assert_snapshot!(render_markdown(&EpicReport::new("empty", "epic/empty")));
}

#[test]
fn snapshot_all_done() {
    insta::assert_snapshot!(render_markdown(&diamond()));
}

#[test]
fn snapshot_failures_with_skipped_dependents() {
    insta::assert_snapshot!(render_markdown(&diamond_with_failure()));
}

#[test]
fn snapshot_pipes_and_newlines_in_notes() {
    let report = EpicReport::new("notes", "epic/notes")
        .with_story(
            StoryOutcome::new("pipes", "Pipes", OutcomeStatus::Failed)
                .on_branch("story/notes/pi|pes")
                .with_reason("gate `a | b` failed:\n\n  exit 1 |  stderr:\ttail\r\n"),
        )
        .with_story(
            StoryOutcome::new("judged", "Judged", OutcomeStatus::Done)
                .on_branch("story/notes/with`tick")
                .with_judge("cleared\nwith | notes\n- and a list"),
        )
        .with_story(
            StoryOutcome::new("blank", "Blank", OutcomeStatus::Skipped).with_reason("   \n\t "),
        )
        .with_story(
            StoryOutcome::new(
                "time-colon",
                "Fix: the #1 bug; then %% comment\nsection two",
                OutcomeStatus::Done,
            )
            .started(nine(0, 0))
            .finished(nine(1, 0)),
        )
        .with_story(
            StoryOutcome::new("keyword", "section: not a section", OutcomeStatus::Done)
                .started(nine(0, 30))
                .finished(nine(0, 45)),
        );
    insta::assert_snapshot!(render_markdown(&report));
}

#[test]
fn snapshot_unicode_titles() {
    let report = EpicReport::new("überweisung", "epic/überweisung")
        .with_story(
            StoryOutcome::new(
                "bonifico",
                "Bonifico — modulo di invio ✓",
                OutcomeStatus::Done,
            )
            .on_branch("story/überweisung/bonifico")
            .with_judge("approvato: «va bene» 👍")
            .with_estimate(4_321, Some(0.0642))
            .started(at("2026-03-01T10:00:00+01:00"))
            .finished(at("2026-03-01T10:45:00+01:00")),
        )
        .with_story(
            StoryOutcome::new(
                "zahlung",
                "Zahlungsübersicht (支付概览)",
                OutcomeStatus::Done,
            )
            .on_branch("story/überweisung/zahlung")
            .with_estimate(987, Some(0.015))
            .started(at("2026-03-01T09:05:00Z"))
            .finished(at("2026-03-01T09:50:00Z")),
        )
        .with_critical_path(["bonifico"]);
    insta::assert_snapshot!(render_markdown(&report));
}

#[test]
fn snapshot_very_large_figures() {
    let report = EpicReport::new("huge", "epic/huge")
        .with_story(
            StoryOutcome::new("max", "Max", OutcomeStatus::Done)
                .with_estimate(u64::MAX, Some(1e15 + 0.125))
                .started(at("0001-01-01T00:00:00Z"))
                .finished(at("9999-12-30T22:00:00.999Z")), // near jiff's last instant
        )
        .with_story(
            StoryOutcome::new("also-max", "Also max", OutcomeStatus::Done)
                .with_estimate(u64::MAX, Some(123_456_789_012.345)),
        )
        .with_story(
            StoryOutcome::new("not-a-number", "NaN", OutcomeStatus::Failed)
                .with_estimate(0, Some(f64::NAN)),
        );
    insta::assert_snapshot!(render_markdown(&report));
}

#[test]
fn snapshot_missing_optional_fields() {
    let report = EpicReport::new("bare", "")
        .with_story(StoryOutcome::new("done", "", OutcomeStatus::Done))
        .with_story(StoryOutcome::new("failed", "Failed", OutcomeStatus::Failed))
        .with_story(StoryOutcome::new(
            "skipped",
            "Skipped",
            OutcomeStatus::Skipped,
        ))
        .with_story(
            StoryOutcome::new("only-start", "Only start", OutcomeStatus::Failed)
                .started(nine(0, 0)),
        )
        .with_story(
            StoryOutcome::new("only-tokens", "Only tokens", OutcomeStatus::Done)
                .with_estimate(42, None),
        );
    insta::assert_snapshot!(render_markdown(&report));
}

#[test]
fn snapshot_with_seats_and_critical_path() {
    let mut meter = UsageMeter::new(PriceTable::default());
    meter.record("claude", 40_000, 9_000);
    meter.record("codex", 120_000, 30_000);
    meter.record("exec:./my-agent.sh", 1_000, 200);
    let report = diamond().with_seats(meter.seat_usage());
    insta::assert_snapshot!(render_markdown(&report));
}

#[test]
fn the_runs_section_says_which_run_settled_which_story() {
    let report = EpicReport::new("e", "epic/e")
        .with_run(
            epic_report::RunRecord::new(1, at("2026-03-01T09:00:00Z"))
                .finished(at("2026-03-01T09:30:00Z")),
        )
        .with_run(epic_report::RunRecord::new(2, at("2026-03-02T09:00:00Z")))
        .with_story(StoryOutcome::new("a", "A", OutcomeStatus::Done).in_run(1))
        .with_story(StoryOutcome::new("b", "B", OutcomeStatus::Done).in_run(2))
        .with_story(StoryOutcome::new("c", "C", OutcomeStatus::Failed).in_run(2))
        .with_story(StoryOutcome::new("d", "D", OutcomeStatus::Done));
    let markdown = render_markdown(&report);
    assert!(
        markdown.contains(
            "## Runs\n\n\
             - Run 1: started 2026-03-01T09:00:00Z, finished 2026-03-01T09:30:00Z; done: a\n\
             - Run 2: started 2026-03-02T09:00:00Z, not finished; done: b; failed: c\n"
        ),
        "{markdown}"
    );
    assert!(!render_markdown(&diamond()).contains("## Runs"));
}

#[test]
fn seat_usage_adds_up_over_runs() {
    let mut first = UsageMeter::new(PriceTable::default());
    first.record("claude", 4_000, 1_000);
    let mut second = UsageMeter::new(PriceTable::default());
    second.record("claude", 8_000, 2_000);
    let (a, b) = (&first.seat_usage()[0], &second.seat_usage()[0]);
    let sum = a.plus(b);
    assert_eq!(sum.turns, 2);
    assert_eq!(
        sum.estimated_tokens,
        a.estimated_tokens + b.estimated_tokens
    );
    assert_eq!(sum.prompt_tokens, 3_000);
    assert!(sum.estimated_cost_usd.is_some());
    let mut unpriced = UsageMeter::new(PriceTable::default());
    unpriced.record("aider", 400, 100);
    let unpriced = &unpriced.seat_usage()[0];
    let mixed = unpriced.plus(unpriced);
    assert_eq!((mixed.turns, mixed.unpriced_turns), (2, 2));
    assert_eq!(mixed.estimated_cost_usd, None);
}
