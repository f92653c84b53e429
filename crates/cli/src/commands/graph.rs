//! `epic graph PLAN`: a valid plan's waves and critical path, or its dependency graph drawn as a
//! Mermaid flowchart or a Graphviz digraph.
//!
//! Every rendering lists stories and edges in plan order, so the same plan always prints the same
//! text and a diff of two renderings shows only what changed. An invalid plan prints its
//! violations to stderr and exits 1, as `epic validate` would.

use std::collections::HashSet;
use std::fmt::{self, Write as _};

use epic_story_plan::{Story, ValidPlan};
use serde::Serialize;

use crate::args::{Format, GlobalArgs, PlanArgs};
use crate::commands::{json, render, violations_text};
use crate::error::{CommandError, Kind};
use crate::output::{self, Output};
use crate::plan_file::{self, count};

/// The JSON document `epic graph --format json` prints.
#[derive(Debug, Serialize)]
struct GraphJson<'a> {
    waves: Vec<Vec<&'a str>>,
    critical_path: Vec<&'a str>,
    /// Present when any story has an `estimated_time`.
    #[serde(skip_serializing_if = "Option::is_none")]
    estimated: Option<Estimated<'a>>,
}

/// What the plan's `estimated_time`s add up to. A story without one counts as the mean of those
/// with one, as the scheduler weighs it.
#[derive(Debug, Serialize)]
struct Estimated<'a> {
    /// How many stories have an estimate.
    stories: usize,
    /// All the work, in seconds.
    work_seconds: f64,
    /// The longest chain by estimated time, in seconds: no concurrency finishes sooner.
    longest_chain_seconds: f64,
    /// That chain's stories.
    longest_chain: Vec<&'a str>,
}

impl<'a> Estimated<'a> {
    fn of(plan: &'a ValidPlan) -> Option<Self> {
        let (weights, estimated) = plan.weights_by(Story::estimated_duration);
        if estimated == 0 {
            return None;
        }
        let chain =
            plan.critical_path_by(|story| plan.index_of(&story.id).map_or(0, |i| weights[i]));
        let work: u64 = weights.iter().sum();
        Some(Self {
            stories: estimated,
            work_seconds: millis_to_seconds(work),
            longest_chain_seconds: millis_to_seconds(chain.length),
            longest_chain: chain.stories,
        })
    }
}

#[expect(
    clippy::cast_precision_loss,
    reason = "milliseconds of estimates are far below 2^52"
)]
fn millis_to_seconds(millis: u64) -> f64 {
    millis as f64 / 1000.0
}

/// `seconds` for people: `2h 10m`, `45s`.
fn friendly(seconds: f64) -> String {
    let rounded = jiff::SignedDuration::from_secs_f64(seconds.round());
    format!("{rounded:#}")
}

/// Runs `epic graph`.
pub(crate) fn run(global: &GlobalArgs, args: &PlanArgs, out: Output) -> Result<(), CommandError> {
    let format = global.format_for(
        "graph",
        &[Format::Text, Format::Json, Format::Mermaid, Format::Dot],
    )?;
    let plan = match plan_file::load(&args.plan, out)?.validate() {
        Ok(plan) => plan,
        Err(errors) => {
            output::diagnostic(&violations_text(errors.violations(), &args.plan));
            return Err(CommandError::reported(Kind::Violations));
        }
    };
    let text = match format {
        Format::Text | Format::Md | Format::Html => text(&plan, out),
        Format::Json => json(&GraphJson {
            waves: plan.waves(),
            critical_path: plan.critical_path().stories,
            estimated: Estimated::of(&plan),
        }),
        Format::Mermaid => render(|w| mermaid(&plan, w)),
        Format::Dot => render(|w| dot(&plan, w)),
    };
    output::data(&text)
}

/// The waves, one line each, then the critical path; with `-v`, each story under its wave.
pub(crate) fn text(plan: &ValidPlan, out: Output) -> String {
    let waves = plan.waves();
    let critical = plan.critical_path().stories;
    render(|w| {
        if !out.quiet() {
            writeln!(
                w,
                "epic {}: {} in {}\n",
                plan.plan().epic_id,
                count(plan.plan().stories.len(), "story", "stories"),
                count(waves.len(), "wave", "waves"),
            )?;
        }
        let width = plan.plan().stories.iter().map(|s| s.id.len()).max();
        for (n, wave) in waves.iter().enumerate() {
            writeln!(w, "wave {}: {}", n + 1, wave.join(", "))?;
            if out.verbose() > 0 {
                for story in wave.iter().filter_map(|id| plan.story(id)) {
                    write!(
                        w,
                        "    {:width$}  {}",
                        story.id,
                        one_line(&story.title),
                        width = width.unwrap_or(0)
                    )?;
                    let mut after: Vec<&str> = Vec::new();
                    for dependency in &story.depends_on {
                        if !after.contains(&dependency.as_str()) {
                            after.push(dependency);
                        }
                    }
                    if !after.is_empty() {
                        write!(w, " (after {})", after.join(", "))?;
                    }
                    writeln!(w)?;
                }
            }
        }
        writeln!(
            w,
            "\ncritical path: {} ({})",
            critical.join(" -> "),
            count(critical.len(), "story", "stories")
        )?;
        if let Some(estimated) = Estimated::of(plan) {
            writeln!(
                w,
                "estimated: {} of work; the longest chain by time takes {} ({}), so no run is \
                 shorter",
                friendly(estimated.work_seconds),
                friendly(estimated.longest_chain_seconds),
                estimated.longest_chain.join(" -> "),
            )?;
            let total = plan.plan().stories.len();
            if estimated.stories < total {
                writeln!(
                    w,
                    "  {} of {total} stories estimated; the others count as their mean",
                    estimated.stories
                )?;
            }
        }
        Ok(())
    })
}

/// The critical path's stories and edges, as plan indices.
fn critical(plan: &ValidPlan) -> (HashSet<usize>, HashSet<(usize, usize)>) {
    let path: Vec<usize> = plan
        .critical_path()
        .stories
        .iter()
        .filter_map(|id| plan.index_of(id))
        .collect();
    let edges = path.windows(2).map(|pair| (pair[0], pair[1])).collect();
    (path.into_iter().collect(), edges)
}

/// A title on one line: line breaks and tabs become spaces.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `id: title`, the label of a story's node.
fn label(story: &Story) -> String {
    format!("{}: {}", story.id, one_line(&story.title))
}

/// A Mermaid `flowchart LR`: one subgraph per wave, nodes `s1`, `s2`, … in plan order (story ids
/// could collide with Mermaid keywords such as `end`), edges from dependency to dependent, the
/// critical path drawn thick.
fn mermaid(plan: &ValidPlan, w: &mut String) -> fmt::Result {
    let stories = &plan.plan().stories;
    let (critical_nodes, critical_edges) = critical(plan);
    writeln!(w, "flowchart LR")?;
    for (n, wave) in plan.wave_indices().iter().enumerate() {
        writeln!(w, "    subgraph wave{} [\"wave {}\"]", n + 1, n + 1)?;
        for &i in wave {
            writeln!(
                w,
                "        s{}[\"{}\"]",
                i + 1,
                mermaid_escape(&label(&stories[i]))
            )?;
        }
        writeln!(w, "    end")?;
    }
    let mut thick = Vec::new();
    for (n, &(from, to)) in plan.edges().iter().enumerate() {
        writeln!(w, "    s{} --> s{}", from + 1, to + 1)?;
        if critical_edges.contains(&(from, to)) {
            thick.push(n.to_string());
        }
    }
    writeln!(w, "    classDef critical stroke:#d9480f,stroke-width:3px")?;
    let mut nodes: Vec<usize> = critical_nodes.into_iter().collect();
    nodes.sort_unstable();
    let nodes: Vec<String> = nodes.iter().map(|i| format!("s{}", i + 1)).collect();
    writeln!(w, "    class {} critical", nodes.join(","))?;
    if !thick.is_empty() {
        writeln!(
            w,
            "    linkStyle {} stroke:#d9480f,stroke-width:3px",
            thick.join(",")
        )?;
    }
    Ok(())
}

/// Text safe inside a Mermaid `"…"` label: `#` and `"` as entity codes, `<` and `>` too so they
/// are not read as HTML.
fn mermaid_escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '#' => escaped.push_str("#35;"),
            '"' => escaped.push_str("#quot;"),
            '<' => escaped.push_str("#lt;"),
            '>' => escaped.push_str("#gt;"),
            _ => escaped.push(c),
        }
    }
    escaped
}

/// A Graphviz `digraph`: each wave a `rank=same` group, edges from dependency to dependent, the
/// critical path bold.
fn dot(plan: &ValidPlan, w: &mut String) -> fmt::Result {
    let stories = &plan.plan().stories;
    let (critical_nodes, critical_edges) = critical(plan);
    writeln!(w, "digraph {} {{", dot_quote(&plan.plan().epic_id))?;
    writeln!(w, "    rankdir=LR;")?;
    writeln!(w, "    node [shape=box, style=rounded];")?;
    for (n, wave) in plan.wave_indices().iter().enumerate() {
        writeln!(w, "\n    // wave {}", n + 1)?;
        writeln!(w, "    {{\n        rank=same;")?;
        for &i in wave {
            let style = if critical_nodes.contains(&i) {
                ", style=\"rounded,bold\", penwidth=2"
            } else {
                ""
            };
            writeln!(
                w,
                "        {} [label={}{style}];",
                dot_quote(&stories[i].id),
                dot_quote(&label(&stories[i]))
            )?;
        }
        writeln!(w, "    }}")?;
    }
    writeln!(w)?;
    for (from, to) in plan.edges() {
        let style = if critical_edges.contains(&(from, to)) {
            " [style=bold, penwidth=2]"
        } else {
            ""
        };
        writeln!(
            w,
            "    {} -> {}{style};",
            dot_quote(&stories[from].id),
            dot_quote(&stories[to].id)
        )?;
    }
    writeln!(w, "}}")
}

/// A DOT double-quoted string.
fn dot_quote(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('"');
    for c in text.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            _ => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_escaped() {
        assert_eq!(
            mermaid_escape(r#"Say "hi" #1 <b>"#),
            "Say #quot;hi#quot; #35;1 #lt;b#gt;"
        );
        assert_eq!(dot_quote(r#"a "b" \c"#), r#""a \"b\" \\c""#);
        assert_eq!(one_line("two\n  lines\t"), "two lines");
    }
}
