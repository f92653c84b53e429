//! The Markdown rendering of a report (`report.md`, `epic report --format md`).

use std::collections::BTreeSet;

use jiff::Timestamp;
use jiff::fmt::strtime;
use jiff::tz::Offset;

use crate::format::{format_duration, format_usd, round_half_away};
use crate::in_place::InPlace;
use crate::model::{EpicReport, OutcomeStatus, StoryOutcome};
use crate::timeline::Timeline;
use crate::tokens::CHARS_PER_TOKEN;
use crate::usage::UsageSource;

/// A missing cell (U+2014, an em dash).
const MISSING: &str = "—";

/// Renders `report` as Markdown.
///
/// In order, each part only when it has something to show:
///
/// - the title `# Epic report: <epic_id>` and a banner saying the token and cost figures are
///   estimates from character counts, not measurements; when some figures are the agents' own
///   reports, the tables gain a `Usage` column (`reported`, `estimated`, `mixed`), estimated
///   figures keep their `~`, reported ones lose it, and the banner only appears when something
///   is estimated;
/// - the epic branch, the counts by status and the critical path;
/// - a table of the stories in plan order: story, status, branch, estimated tokens (`~120`) and
///   cost (`~$0.01`), duration, and a note (the reason, else the judge's note, then the stories
///   proven together with it by one gate run, `proven together: a, b`); `—` marks a
///   missing cell, `|` is escaped and whitespace runs (newlines included) become one space; a
///   story found already in place starts its note with `already in place (evidence: <paths>)`;
/// - `## Already in place`, when a story merged nothing because its work was already on the
///   epic branch: each such story with the commit its evidence was checked on, and each file of
///   the evidence with the names it provides;
/// - `## Flaky gates`, when a gate command was red and then green when run again: each story's
///   such commands, how the first run ended, and the last lines of its output;
/// - `## Seats by story`, when a story's turns went to more than one seat: each such story's
///   seats with their turns and cost;
/// - the totals `- Estimated tokens: ~480` and `- Estimated cost: ~$0.04`; the cost total names
///   the stories it leaves out for want of a price;
/// - `## Usage by seat`, when the report carries it;
/// - `## Runs`, when the report lists its runs: one line per run, oldest first, with its start,
///   its finish and the stories whose outcome is from it, by status;
/// - `## Timeline`, when a story has a start and a finish: the makespan, the parallelism achieved
///   and a Mermaid `gantt` chart (times in UTC; critical-path stories marked `crit`).
///
/// Pure: the same report always renders the same text, ending with one newline.
///
/// ```
/// use epic_report::{EpicReport, StoryOutcome, OutcomeStatus, render_markdown};
///
/// let report = EpicReport::new("diamond", "epic/diamond").with_story(
///     StoryOutcome::new("a", "Story a", OutcomeStatus::Done)
///         .on_branch("story/diamond/a")
///         .with_estimate(120, Some(0.01))
///         .with_judge("judge cleared (round 1)"),
/// );
/// let markdown = render_markdown(&report);
/// assert!(markdown.starts_with("# Epic report: diamond\n"));
/// assert!(markdown.contains(
///     "| a | done | `story/diamond/a` | ~120 | ~$0.01 | — | judge cleared (round 1) |"
/// ));
/// assert!(markdown.contains("- Estimated tokens: ~120\n"));
/// ```
pub fn render_markdown(report: &EpicReport) -> String {
    let mut lines: Vec<String> = Vec::new();
    lines.push(format!("# Epic report: {}", inline(&report.epic_id)));
    lines.push(String::new());
    if !report.has_reported() {
        lines.push(format!(
            "> Token and cost figures are ESTIMATES from character counts (about {CHARS_PER_TOKEN} \
             characters a token),"
        ));
        lines.push(
            "> priced from a table: the agents report no usage. They are not measurements.".into(),
        );
        lines.push(String::new());
    } else if report.has_estimates() {
        lines.push(
            "> Token and cost figures are the agents' own reports where the Usage column says \
             `reported`;"
                .into(),
        );
        lines.push(format!(
            "> the rest are ESTIMATES (`~`) from character counts (about {CHARS_PER_TOKEN} \
             characters a token) priced from a table."
        ));
        lines.push(String::new());
    }

    lines.push(format!(
        "- Epic branch: {}",
        code_or_missing(&report.epic_branch)
    ));
    lines.push(format!(
        "- Stories: {} (done {}, failed {}, skipped {})",
        report.stories.len(),
        report.count(OutcomeStatus::Done),
        report.count(OutcomeStatus::Failed),
        report.count(OutcomeStatus::Skipped),
    ));
    if !report.critical_path.is_empty() {
        let path: Vec<String> = report.critical_path.iter().map(|id| inline(id)).collect();
        lines.push(format!("- Critical path: {}", path.join(" → ")));
    }
    lines.push(String::new());

    story_table(report, &mut lines);
    in_place(report, &mut lines);
    flaky_gates(report, &mut lines);
    inherited_tests(report, &mut lines);
    ended_turns(report, &mut lines);
    rejected_requests(report, &mut lines);
    story_seats(report, &mut lines);
    totals(report, &mut lines);
    seats(report, &mut lines);
    runs(report, &mut lines);
    landing(report, &mut lines);
    if let Some(timeline) = report.timeline() {
        timeline_section(report, &timeline, &mut lines);
    }

    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

fn story_table(report: &EpicReport, lines: &mut Vec<String>) {
    if report.stories.is_empty() {
        lines.push("No stories.".into());
        lines.push(String::new());
        return;
    }
    if report.has_reported() {
        story_usage_table(report, lines);
        return;
    }
    lines.push("| Story | Status | Branch | Est. tokens | Est. cost | Duration | Note |".into());
    lines.push("| --- | --- | --- | --- | --- | --- | --- |".into());
    for story in &report.stories {
        lines.push(format!(
            "| {} | {} | {} | {} | {} | {} | {} |",
            cell(&story.id),
            story.status,
            story
                .branch
                .as_deref()
                .map_or_else(|| MISSING.into(), code_or_missing),
            story
                .estimated_tokens
                .map_or_else(|| MISSING.into(), |tokens| format!("~{tokens}")),
            story.cost().map_or_else(|| MISSING.into(), money),
            story
                .duration()
                .map_or_else(|| MISSING.into(), format_duration),
            note(story),
        ));
    }
    lines.push(String::new());
}

/// A story's note cell: the reason, else the judge's note, then the stories proven together
/// with it, then its merge revisions.
fn note(story: &StoryOutcome) -> String {
    let in_place = story
        .in_place
        .as_ref()
        .map(|in_place| format!("already in place (evidence: {})", in_place.paths()));
    let together = (!story.proven_with.is_empty())
        .then(|| format!("proven together: {}", story.proven_with.join(", ")));
    let revisions =
        (story.merge_revisions > 0).then(|| format!("merge revisions: {}", story.merge_revisions));
    let people = (!story.commands.is_empty()).then(|| {
        let each: Vec<String> = story
            .commands
            .iter()
            .map(|command| {
                format!(
                    "{} by uid {} at {}",
                    command.action, command.uid, command.at
                )
            })
            .collect();
        format!("from people: {}", each.join(", "))
    });
    let parts: Vec<String> = [
        in_place,
        story.note().map(str::to_owned),
        together,
        revisions,
        people,
    ]
    .into_iter()
    .flatten()
    .collect();
    if parts.is_empty() {
        String::new()
    } else {
        cell(&parts.join("; "))
    }
}

/// `## Inherited failing tests`: each story's gate commands that failed only with tests already
/// red before it, or also with them: those tests were not charged to it.
fn inherited_tests(report: &EpicReport, lines: &mut Vec<String>) {
    if report
        .stories
        .iter()
        .all(|story| story.inherited_tests.is_empty())
    {
        return;
    }
    lines.push("## Inherited failing tests".into());
    lines.push(String::new());
    lines.push(
        "These tests were red on the epic head before the story (or on the baseline): \
         inherited, never charged to it."
            .into(),
    );
    lines.push(String::new());
    for story in &report.stories {
        for gate in &story.inherited_tests {
            let tests: Vec<String> = gate
                .tests
                .iter()
                .map(|test| code_or_missing(test))
                .collect();
            lines.push(format!(
                "- {}: {}: {}",
                inline(&story.id),
                code_or_missing(&gate.command),
                tests.join(", ")
            ));
        }
    }
    lines.push(String::new());
}

/// `## Stalled and looping turns`: each story's agent turns epic ended for printing nothing
/// (`--stall-timeout`) or for repeating one tool call.
fn ended_turns(report: &EpicReport, lines: &mut Vec<String>) {
    let counted: Vec<&StoryOutcome> = report
        .stories
        .iter()
        .filter(|story| story.stalled_turns > 0 || story.looping_turns > 0)
        .collect();
    if counted.is_empty() {
        return;
    }
    lines.push("## Stalled and looping turns".into());
    lines.push(String::new());
    lines.push(
        "Agent turns epic ended: stalled (nothing printed for `--stall-timeout`) or looping (the \
         same tool call five times in a row). Each request ran again once; a second time failed \
         its story."
            .into(),
    );
    lines.push(String::new());
    let turns = |count: u32| if count == 1 { "turn" } else { "turns" };
    for story in counted {
        let mut parts = Vec::new();
        if story.stalled_turns > 0 {
            parts.push(format!(
                "{} stalled {}",
                story.stalled_turns,
                turns(story.stalled_turns)
            ));
        }
        if story.looping_turns > 0 {
            parts.push(format!(
                "{} looping {}",
                story.looping_turns,
                turns(story.looping_turns)
            ));
        }
        lines.push(format!("- {}: {}", inline(&story.id), parts.join(", ")));
    }
    lines.push(String::new());
}

/// `## Rejected requests`: each story's requests of its ACP agents epic rejected.
fn rejected_requests(report: &EpicReport, lines: &mut Vec<String>) {
    let counted: Vec<&StoryOutcome> = report
        .stories
        .iter()
        .filter(|story| story.permission_rejections > 0)
        .collect();
    if counted.is_empty() {
        return;
    }
    lines.push("## Rejected requests".into());
    lines.push(String::new());
    lines.push(
        "Requests of ACP agents (`acp:` seats) epic rejected before anything was done: edits \
         outside a story's perimeter or of `.git`, edits and writing commands in read-only \
         turns. `permission_rejected` events name each one."
            .into(),
    );
    lines.push(String::new());
    for story in counted {
        let count = story.permission_rejections;
        let noun = if count == 1 { "request" } else { "requests" };
        lines.push(format!("- {}: {count} rejected {noun}", inline(&story.id)));
    }
    lines.push(String::new());
}

/// `## Seats by story`, when a story's turns went to more than one seat (a roster, or a judge of
/// its own): each such story's seats with their turns and cost.
fn story_seats(report: &EpicReport, lines: &mut Vec<String>) {
    let shared: Vec<&StoryOutcome> = report
        .stories
        .iter()
        .filter(|story| story.seats.len() > 1)
        .collect();
    if shared.is_empty() {
        return;
    }
    lines.push("## Seats by story".into());
    lines.push(String::new());
    for story in shared {
        let seats: Vec<String> = story
            .seats
            .iter()
            .map(|seat| {
                let summary = seat.summary();
                let turns = if seat.turns == 1 { "turn" } else { "turns" };
                let cost = match (summary.cost_usd, summary.source) {
                    (Some(cost), UsageSource::Reported) => format!("${}", format_usd(cost)),
                    (Some(cost), _) => money(cost),
                    (None, _) => MISSING.to_owned(),
                };
                format!("{} {} {turns} {cost}", inline(&seat.seat), seat.turns)
            })
            .collect();
        lines.push(format!("- {}: {}", inline(&story.id), seats.join(", ")));
    }
    lines.push(String::new());
}

/// How many lines of a flaky gate's first run the Markdown report shows (the JSON keeps its
/// whole tail).
const FLAKY_LINES: usize = 10;

/// `## Flaky gates`: each story's gate commands that were red, then green when run again, with
/// how the first run ended and the last lines of its output.
fn flaky_gates(report: &EpicReport, lines: &mut Vec<String>) {
    if report
        .stories
        .iter()
        .all(|story| story.flaky_gates.is_empty())
    {
        return;
    }
    lines.push("## Flaky gates".into());
    lines.push(String::new());
    lines.push(
        "These gate commands were red, then green when run again on the same tree: they counted \
         as passed (`--gate-reruns`). Their first run's output ends with:"
            .into(),
    );
    lines.push(String::new());
    for story in &report.stories {
        for gate in &story.flaky_gates {
            lines.push(format!(
                "- {}: {} red ({}), green on run {}",
                inline(&story.id),
                code_or_missing(&gate.command),
                gate.status,
                gate.runs
            ));
            let output: Vec<&str> = gate.output.trim_end().lines().collect();
            if output.is_empty() {
                continue;
            }
            lines.push(String::new());
            let start = output.len().saturating_sub(FLAKY_LINES);
            // An indented code block inside the list item: no fence the output could close.
            for line in &output[start..] {
                lines.push(format!("      {line}").trim_end().to_owned());
            }
            lines.push(String::new());
        }
    }
    lines.push(String::new());
}

/// `## Already in place`: each story that merged nothing because its work was already on the
/// epic branch, with the evidence epic checked and the commit it checked it on.
fn in_place(report: &EpicReport, lines: &mut Vec<String>) {
    let stories: Vec<(&StoryOutcome, &InPlace)> = report
        .stories
        .iter()
        .filter_map(|story| story.in_place.as_ref().map(|in_place| (story, in_place)))
        .collect();
    if stories.is_empty() {
        return;
    }
    lines.push("## Already in place".into());
    lines.push(String::new());
    lines.push(
        "These stories merged nothing: their work was already on the epic branch, as the judge \
         showed with evidence epic checked there."
            .into(),
    );
    lines.push(String::new());
    for (story, in_place) in stories {
        lines.push(format!(
            "- {}: checked on {}",
            inline(&story.id),
            code_or_missing(&in_place.commit)
        ));
        for evidence in &in_place.evidence {
            let provides: Vec<String> = evidence
                .provides
                .iter()
                .map(|name| code_or_missing(name))
                .collect();
            let path = code_or_missing(&evidence.path);
            lines.push(if provides.is_empty() {
                format!("  - {path}")
            } else {
                format!("  - {path}: provides {}", provides.join(", "))
            });
        }
    }
    lines.push(String::new());
}

/// The story table of a report with reported figures: tokens and cost with their source.
fn story_usage_table(report: &EpicReport, lines: &mut Vec<String>) {
    lines.push("| Story | Status | Branch | Tokens | Cost | Usage | Duration | Note |".into());
    lines.push("| --- | --- | --- | --- | --- | --- | --- | --- |".into());
    for story in &report.stories {
        let source = story.usage_source();
        let has_figures = story.estimated_tokens.is_some();
        lines.push(format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            cell(&story.id),
            story.status,
            story
                .branch
                .as_deref()
                .map_or_else(|| MISSING.into(), code_or_missing),
            story.estimated_tokens.map_or_else(
                || MISSING.into(),
                |tokens| figure(&tokens.to_string(), source)
            ),
            story
                .cost()
                .map_or_else(|| MISSING.into(), |cost| figure(&dollars(cost), source)),
            if has_figures {
                source.as_str()
            } else {
                MISSING
            },
            story
                .duration()
                .map_or_else(|| MISSING.into(), format_duration),
            note(story),
        ));
    }
    lines.push(String::new());
}

/// A figure as the tables show it: bare when reported, `~` before it when (partly) estimated.
fn figure(text: &str, source: UsageSource) -> String {
    match source {
        UsageSource::Reported => text.to_owned(),
        UsageSource::Estimated | UsageSource::Mixed => format!("~{text}"),
    }
}

/// Dollars to the cent, `<$0.01` for a cost too small to show (no `~`).
fn dollars(cost: f64) -> String {
    money(cost).trim_start_matches('~').to_owned()
}

fn totals(report: &EpicReport, lines: &mut Vec<String>) {
    if report.has_reported() {
        reported_totals(report, lines);
        return;
    }
    let tokens = report.estimated_tokens();
    let cost = report.estimated_cost_usd();
    if let Some(tokens) = tokens {
        lines.push(format!("- Estimated tokens: ~{tokens}"));
    }
    let unpriced: Vec<String> = report
        .unpriced_stories()
        .map(|story| inline(&story.id))
        .collect();
    match cost {
        Some(cost) if unpriced.is_empty() => {
            lines.push(format!("- Estimated cost: {}", money(cost)));
        }
        Some(cost) => lines.push(format!(
            "- Estimated cost: {} (partial: no known price for {})",
            money(cost),
            unpriced.join(", ")
        )),
        None if !unpriced.is_empty() => lines.push(format!(
            "- Estimated cost: unknown (no known price for {})",
            unpriced.join(", ")
        )),
        None => {}
    }
    if tokens.is_some() || cost.is_some() {
        lines.push(String::new());
    }
}

/// The totals of a report with reported figures, with their source.
fn reported_totals(report: &EpicReport, lines: &mut Vec<String>) {
    let source = report
        .stories
        .iter()
        .filter(|story| story.estimated_tokens.is_some())
        .map(StoryOutcome::usage_source)
        .reduce(UsageSource::and)
        .unwrap_or(UsageSource::Estimated);
    if let Some(tokens) = report.estimated_tokens() {
        lines.push(format!(
            "- Tokens: {} ({})",
            figure(&tokens.to_string(), source),
            source.as_str()
        ));
    }
    if let Some(cost) = report.estimated_cost_usd() {
        let unpriced: Vec<String> = report
            .unpriced_stories()
            .map(|story| inline(&story.id))
            .collect();
        let partial = if unpriced.is_empty() {
            String::new()
        } else {
            format!("; partial: no known price for {}", unpriced.join(", "))
        };
        lines.push(format!(
            "- Cost: {} ({}{partial})",
            figure(&dollars(cost), source),
            source.as_str()
        ));
    }
    lines.push(String::new());
}

fn seats(report: &EpicReport, lines: &mut Vec<String>) {
    if report.seats.is_empty() {
        return;
    }
    if report.has_reported() {
        lines.push("## Usage by seat".into());
        lines.push(String::new());
        lines
            .push("| Seat | Turns | Prompt tokens | Reply tokens | Tokens | Cost | Usage |".into());
        lines.push("| --- | --- | --- | --- | --- | --- | --- |".into());
        for seat in &report.seats {
            let usage = seat.summary();
            let source = usage.source;
            lines.push(format!(
                "| {} | {} | {} | {} | {} | {} | {} |",
                cell(&seat.seat),
                seat.turns,
                figure(&usage.input_tokens.to_string(), source),
                figure(&usage.output_tokens.to_string(), source),
                figure(&usage.total_tokens().to_string(), source),
                usage
                    .cost_usd
                    .filter(|cost| cost.is_finite())
                    .map_or_else(|| MISSING.into(), |cost| figure(&dollars(cost), source)),
                source.as_str(),
            ));
        }
        lines.push(String::new());
        return;
    }
    lines.push("## Usage by seat".into());
    lines.push(String::new());
    lines.push(
        "| Seat | Turns | Est. prompt tokens | Est. reply tokens | Est. tokens | Est. cost |"
            .into(),
    );
    lines.push("| --- | --- | --- | --- | --- | --- |".into());
    for seat in &report.seats {
        let cost = match seat.estimated_cost_usd.filter(|cost| cost.is_finite()) {
            Some(cost) => money(cost),
            None if seat.unpriced_turns > 0 => format!(
                "{MISSING} (no known price for {} of {} turns)",
                seat.unpriced_turns, seat.turns
            ),
            None => MISSING.into(),
        };
        lines.push(format!(
            "| {} | {} | ~{} | ~{} | ~{} | {} |",
            cell(&seat.seat),
            seat.turns,
            seat.prompt_tokens,
            seat.completion_tokens,
            seat.estimated_tokens,
            cost,
        ));
    }
    lines.push(String::new());
}

fn runs(report: &EpicReport, lines: &mut Vec<String>) {
    if report.runs.is_empty() {
        return;
    }
    lines.push("## Runs".into());
    lines.push(String::new());
    for run in &report.runs {
        let finished = run.finished_at.map_or_else(
            || "not finished".to_owned(),
            |at| format!("finished {}", inline(&at.to_string())),
        );
        let mut settled = Vec::new();
        for status in [
            OutcomeStatus::Done,
            OutcomeStatus::Failed,
            OutcomeStatus::Skipped,
        ] {
            let ids: Vec<String> = report
                .stories
                .iter()
                .filter(|story| story.run == Some(run.number) && story.status == status)
                .map(|story| inline(&story.id))
                .collect();
            if !ids.is_empty() {
                settled.push(format!("{status}: {}", ids.join(", ")));
            }
        }
        let settled = if settled.is_empty() {
            "no story".to_owned()
        } else {
            settled.join("; ")
        };
        lines.push(format!(
            "- Run {}: started {}, {finished}; {settled}",
            run.number,
            inline(&run.started_at.to_string()),
        ));
    }
    lines.push(String::new());
}

fn timeline_section(report: &EpicReport, timeline: &Timeline<'_>, lines: &mut Vec<String>) {
    lines.push("## Timeline".into());
    lines.push(String::new());
    let makespan = timeline.makespan();
    lines.push(format!(
        "- Makespan: {} (from {} to {})",
        format_duration(makespan),
        inline(&timeline.start().to_string()),
        inline(&timeline.finish().to_string()),
    ));
    if let Some(parallelism) = timeline.parallelism() {
        lines.push(format!(
            "- Parallelism: {}× ({} of story time in {})",
            round_half_away(parallelism, 1),
            format_duration(timeline.busy()),
            format_duration(makespan),
        ));
    }
    lines.push(String::new());

    let critical: BTreeSet<&str> = report.critical_path.iter().map(String::as_str).collect();
    let bars: Vec<String> = timeline
        .spans()
        .iter()
        .filter_map(|span| {
            let (start, finish) = (mermaid_utc(span.start)?, mermaid_utc(span.finish)?);
            let mut tags = Vec::new();
            if span.story.status == OutcomeStatus::Done {
                tags.push("done");
            }
            if critical.contains(span.story.id.as_str()) {
                tags.push("crit");
            }
            tags.push(&start);
            tags.push(&finish);
            Some(format!(
                "    {} :{}",
                gantt_text(span.story),
                tags.join(", ")
            ))
        })
        .collect();
    if bars.is_empty() {
        return;
    }
    let axis = if makespan.as_secs() < 10 * 60 {
        "%H:%M:%S"
    } else if makespan.as_secs() < 24 * 3600 {
        "%H:%M"
    } else {
        "%Y-%m-%d %H:%M"
    };
    lines.push("```mermaid".into());
    lines.push("gantt".into());
    lines.push("    dateFormat YYYY-MM-DD HH:mm:ss.SSS".into());
    lines.push(format!("    axisFormat {axis}"));
    lines.extend(bars);
    lines.push("```".into());
    lines.push(String::new());
}

/// The instant in UTC as Mermaid's `YYYY-MM-DD HH:mm:ss.SSS` (milliseconds truncated), or `None`
/// before year 0, which that format cannot write.
fn mermaid_utc(at: Timestamp) -> Option<String> {
    let utc = Offset::UTC.to_datetime(at);
    if utc.year() < 0 {
        return None;
    }
    strtime::format("%Y-%m-%d %H:%M:%S%.3f", utc).ok()
}

fn money(cost: f64) -> String {
    format!("~${}", format_usd(cost))
}

/// `text` on one line: every whitespace run (newlines included) becomes one space, trimmed.
/// The `## Landing` section, once `epic land` landed the epic: target, merge commit, the
/// conflicts and who resolved them, rounds, cost, the stories left out, and what lander turns
/// changed outside their perimeter (put back).
fn landing(report: &EpicReport, lines: &mut Vec<String>) {
    let Some(landing) = &report.landing else {
        return;
    };
    lines.push("## Landing".into());
    lines.push(String::new());
    lines.push(format!(
        "- Landed on {} by {} (from {}) at {}",
        inline(&landing.target),
        inline(&landing.commit),
        inline(&landing.from),
        landing.landed_at
    ));
    if landing.conflicts.is_empty() {
        lines.push("- Conflicts: none".into());
    } else {
        lines.push("- Conflicts:".into());
        for conflict in &landing.conflicts {
            let by = conflict.story.as_deref().map_or_else(
                || "the final turn (no story owns it)".to_owned(),
                |story| format!("story {}", inline(story)),
            );
            lines.push(format!("  - {} resolved by {by}", inline(&conflict.path)));
        }
    }
    lines.push(format!("- Gate rounds after the merge: {}", landing.rounds));
    lines.push(format!(
        "- Landing turns' cost: {}",
        crate::format_usd(landing.cost_usd)
    ));
    if !landing.left_out.is_empty() {
        let left: Vec<String> = landing.left_out.iter().map(|id| inline(id)).collect();
        lines.push(format!("- Left out (not merged): {}", left.join(", ")));
    }
    if !landing.put_back.is_empty() {
        lines.push("- Put back (changed outside the lander's perimeter):".into());
        for put in &landing.put_back {
            let mut what: Vec<String> = put.paths.iter().map(|path| inline(path)).collect();
            if put.moved_head {
                what.push("its own commits or branch move".into());
            }
            lines.push(format!("  - {}: {}", inline(&put.turn()), what.join(", ")));
        }
    }
    lines.push(String::new());
}

fn inline(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` as a table cell: on one line, with `|` escaped so it cannot end the cell.
fn cell(text: &str) -> String {
    inline(text).replace('|', "\\|")
}

/// `text` as inline code in a table cell, or `—` when empty. The fence is one backtick longer
/// than the longest run inside, so a backtick in a branch name cannot end it early; `|` is
/// escaped, which GitHub-flavoured tables honour inside code too.
fn code_or_missing(text: &str) -> String {
    let text = cell(text);
    if text.is_empty() {
        return MISSING.into();
    }
    let longest_run = text
        .split(|c| c != '`')
        .map(str::len)
        .max()
        .unwrap_or_default();
    let fence = "`".repeat(longest_run + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// Words Mermaid's gantt lexer reads as a statement when a line starts with them.
const GANTT_KEYWORDS: &[&str] = &[
    "gantt",
    "dateformat",
    "inclusiveenddates",
    "topaxis",
    "axisformat",
    "tickinterval",
    "includes",
    "excludes",
    "todaymarker",
    "weekday",
    "weekend",
    "title",
    "acctitle",
    "accdescr",
    "section",
    "click",
];

/// A story's title as the text of a gantt bar: on one line, without the `:` that ends the text,
/// the `#` and `;` that end the bar's data, or `%%` comments; falls back to the id when empty, and
/// starts with `Story ` when it would otherwise start like a statement or a date.
fn gantt_text(story: &StoryOutcome) -> String {
    let clean = |text: &str| {
        let replaced: String = text
            .chars()
            .map(|c| match c {
                ':' | '#' | ';' | '%' | '`' => ' ',
                c if c.is_control() => ' ',
                c => c,
            })
            .collect();
        inline(&replaced)
    };
    let mut text = clean(&story.title);
    if text.is_empty() {
        text = clean(&story.id);
    }
    let lower = text.to_lowercase();
    let risky = text.is_empty()
        || text.starts_with(|c: char| c.is_ascii_digit())
        || GANTT_KEYWORDS.iter().any(|word| lower.starts_with(word));
    if risky {
        text.insert_str(0, "Story ");
        let trimmed = text.trim_end().len();
        text.truncate(trimmed);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inherited_tests_are_listed_per_story_and_command() {
        use crate::model::InheritedTests;

        let report = EpicReport::new("e", "epic/e")
            .with_story(
                StoryOutcome::new("a", "A", OutcomeStatus::Done).with_inherited_tests(vec![
                    InheritedTests::new("pytest", vec!["tests/test_x.py::test_old".into()]),
                ]),
            )
            .with_story(StoryOutcome::new("b", "B", OutcomeStatus::Done));
        let markdown = render_markdown(&report);
        assert!(
            markdown.contains(
                "## Inherited failing tests\n\nThese tests were red on the epic head before the \
                 story (or on the baseline): inherited, never charged to it.\n\n- a: `pytest`: \
                 `tests/test_x.py::test_old`\n"
            ),
            "{markdown}"
        );
        let json = serde_json::to_string(&report.stories[0]).expect("json");
        assert!(
            json.contains(
                r#""inherited_tests":[{"command":"pytest","tests":["tests/test_x.py::test_old"]}]"#
            ),
            "{json}"
        );
        assert!(
            !serde_json::to_string(&report.stories[1])
                .expect("json")
                .contains("inherited_tests")
        );
        assert!(!render_markdown(&EpicReport::new("e", "epic/e")).contains("Inherited"));
    }

    #[test]
    fn a_storys_merge_revisions_are_in_its_note_and_its_json() {
        let report = EpicReport::new("e", "epic/e")
            .with_story(StoryOutcome::new("a", "A", OutcomeStatus::Done).with_merge_revisions(2))
            .with_story(StoryOutcome::new("b", "B", OutcomeStatus::Done));
        let markdown = render_markdown(&report);
        assert!(
            markdown.contains("| a | done | — | — | — | — | merge revisions: 2 |"),
            "{markdown}"
        );
        assert!(
            !markdown.contains("| b | done | — | — | — | — | merge"),
            "{markdown}"
        );
        let json = serde_json::to_string(&report.stories).expect("json");
        assert!(json.contains(r#""merge_revisions":2"#), "{json}");
        assert_eq!(
            json.matches("merge_revisions").count(),
            1,
            "left out at 0: {json}"
        );
    }

    #[test]
    fn flaky_gates_are_named_with_their_first_runs_output() {
        use crate::model::FlakyGate;

        let report = EpicReport::new("e", "epic/e")
            .with_story(
                StoryOutcome::new("a", "A", OutcomeStatus::Done).with_flaky_gates(vec![
                    FlakyGate::new("pytest", 2, "exit code 1", "collected 3\n\nport in use\n"),
                ]),
            )
            .with_story(StoryOutcome::new("b", "B", OutcomeStatus::Done));
        let markdown = render_markdown(&report);
        assert!(
            markdown.contains(
                "## Flaky gates\n\nThese gate commands were red, then green when run again on \
                 the same tree: they counted as passed (`--gate-reruns`). Their first run's \
                 output ends with:\n\n- a: `pytest` red (exit code 1), green on run 2\n\n      \
                 collected 3\n\n      port in use\n"
            ),
            "{markdown}"
        );
        let json = serde_json::to_string(&report.stories[0]).expect("json");
        assert!(
            json.contains(
                r#""flaky_gates":[{"command":"pytest","runs":2,"status":"exit code 1","output":"collected 3\n\nport in use\n"}]"#
            ),
            "{json}"
        );
        assert!(
            !serde_json::to_string(&report.stories[1])
                .expect("json")
                .contains("flaky_gates")
        );
        let plain = render_markdown(&EpicReport::new("e", "epic/e"));
        assert!(!plain.contains("Flaky"));
    }

    #[test]
    fn stalled_and_looping_turns_are_counted_per_story() {
        let report = EpicReport::new("e", "epic/e")
            .with_story(StoryOutcome::new("a", "A", OutcomeStatus::Done).with_ended_turns(1, 0))
            .with_story(StoryOutcome::new("b", "B", OutcomeStatus::Failed).with_ended_turns(2, 1))
            .with_story(StoryOutcome::new("c", "C", OutcomeStatus::Done));
        let markdown = render_markdown(&report);
        assert!(
            markdown.contains(
                "## Stalled and looping turns\n\nAgent turns epic ended: stalled (nothing \
                 printed for `--stall-timeout`) or looping (the same tool call five times in a \
                 row). Each request ran again once; a second time failed its story.\n\n- a: 1 \
                 stalled turn\n- b: 2 stalled turns, 1 looping turn\n"
            ),
            "{markdown}"
        );
        let json = |index: usize| serde_json::to_string(&report.stories[index]).expect("json");
        assert!(
            json(1).contains(r#""stalled_turns":2,"looping_turns":1"#),
            "{}",
            json(1)
        );
        assert!(!json(0).contains("looping_turns"), "{}", json(0));
        assert!(!json(2).contains("stalled_turns"), "{}", json(2));
        assert!(!render_markdown(&EpicReport::new("e", "epic/e")).contains("Stalled"));
    }

    #[test]
    fn a_story_already_in_place_says_so_with_its_evidence() {
        use crate::in_place::Evidence;

        let report = EpicReport::new("e", "epic/e")
            .with_story(
                StoryOutcome::new("a", "A", OutcomeStatus::Done)
                    .with_judge("judge confirmed it (round 1)")
                    .already_in_place(InPlace::new(
                        "0123abcd",
                        vec![
                            Evidence::new("src/a/cart.rs", ["cart::Cart"]),
                            Evidence::new("src/a/mod.rs", Vec::<String>::new()),
                        ],
                    )),
            )
            .with_story(StoryOutcome::new("b", "B", OutcomeStatus::Done));
        let markdown = render_markdown(&report);
        assert!(
            markdown.contains(
                "| a | done | — | — | — | — | already in place (evidence: src/a/cart.rs, \
                 src/a/mod.rs); judge confirmed it (round 1) |"
            ),
            "{markdown}"
        );
        assert!(
            markdown.contains("| b | done | — | — | — | — |  |"),
            "{markdown}"
        );
        assert!(
            markdown.contains(
                "## Already in place\n\nThese stories merged nothing: their work was already on \
                 the epic branch, as the judge showed with evidence epic checked there.\n\n- a: \
                 checked on `0123abcd`\n  - `src/a/cart.rs`: provides `cart::Cart`\n  - \
                 `src/a/mod.rs`\n"
            ),
            "{markdown}"
        );
        let json = serde_json::to_string(&report.stories[0]).expect("json");
        assert!(json.contains(
            r#""in_place":{"commit":"0123abcd","evidence":[{"path":"src/a/cart.rs","provides":["cart::Cart"]},{"path":"src/a/mod.rs"}]}"#
        ), "{json}");
        assert!(
            !serde_json::to_string(&report.stories[1])
                .expect("json")
                .contains("in_place")
        );
    }

    #[test]
    fn cells_escape_pipes_and_collapse_whitespace() {
        assert_eq!(cell("a | b\n\n  c\t|"), "a \\| b c \\|");
        assert_eq!(cell("  \n "), "");
    }

    #[test]
    fn code_spans_survive_backticks() {
        assert_eq!(code_or_missing("story/e/a"), "`story/e/a`");
        assert_eq!(code_or_missing("a`b"), "``a`b``");
        assert_eq!(code_or_missing("`a``"), "``` `a`` ```");
        assert_eq!(code_or_missing("a|b"), "`a\\|b`");
        assert_eq!(code_or_missing(" \n"), "—");
    }

    #[test]
    fn mermaid_form_is_utc_with_milliseconds() {
        let at = |text: &str| text.parse::<Timestamp>().unwrap();
        assert_eq!(
            mermaid_utc(at("2026-03-01T10:30:00.123999+01:00")).as_deref(),
            Some("2026-03-01 09:30:00.123")
        );
        assert_eq!(
            mermaid_utc(at("2026-03-01T09:30:00Z")).as_deref(),
            Some("2026-03-01 09:30:00.000")
        );
        assert_eq!(mermaid_utc(at("0000-01-01T00:00:00+01:00")), None);
    }

    #[test]
    fn gantt_text_is_safe() {
        let story = |title: &str| StoryOutcome::new("the-id", title, OutcomeStatus::Done);
        assert_eq!(gantt_text(&story("Cart: API #1; done")), "Cart API 1 done");
        assert_eq!(gantt_text(&story("a\nb %% c")), "a b c");
        assert_eq!(gantt_text(&story("  ")), "the-id");
        assert_eq!(gantt_text(&story("Section two")), "Story Section two");
        assert_eq!(
            gantt_text(&story("2026-01-01 release")),
            "Story 2026-01-01 release"
        );
        assert_eq!(gantt_text(&story("gantt")), "Story gantt");
        assert_eq!(gantt_text(&story("Über straße ✓")), "Über straße ✓");
        let no_id = StoryOutcome::new(":", "#", OutcomeStatus::Done);
        assert_eq!(gantt_text(&no_id), "Story");
    }
}
