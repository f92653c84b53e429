//! The dependency graph of the HTML page: the stories in columns by wave, coloured by outcome,
//! the critical path marked, as inline SVG.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::model::{EpicReport, OutcomeStatus};
use crate::pictures::{Node, escape};

const BOX_W: u32 = 150;
const BOX_H: u32 = 36;
const COL_GAP: u32 = 60;
const ROW_GAP: u32 = 16;
const MARGIN: u32 = 12;

/// The graph's `<svg id="graph">`: `nodes` (the report's stories when empty) in waves, each
/// box coloured by the story's outcome in `report`, the critical path's boxes and edges thick.
pub(crate) fn render(report: &EpicReport, nodes: &[Node]) -> String {
    let fallback: Vec<Node>;
    let nodes = if nodes.is_empty() {
        fallback = report
            .stories
            .iter()
            .map(|story| Node::new(story.id.clone(), Vec::<String>::new()))
            .collect();
        &fallback
    } else {
        nodes
    };
    let waves = waves(nodes);
    let mut columns: Vec<Vec<&Node>> = Vec::new();
    for node in nodes {
        let wave = waves.get(node.id.as_str()).copied().unwrap_or(0);
        if columns.len() <= wave {
            columns.resize_with(wave + 1, Vec::new);
        }
        columns[wave].push(node);
    }
    let rows = columns.iter().map(Vec::len).max().unwrap_or(0).max(1);
    let width =
        MARGIN * 2 + u32::try_from(columns.len().max(1)).unwrap_or(1) * (BOX_W + COL_GAP) - COL_GAP;
    let height = MARGIN * 2 + u32::try_from(rows).unwrap_or(1) * (BOX_H + ROW_GAP) - ROW_GAP;
    let mut at: BTreeMap<&str, (u32, u32)> = BTreeMap::new();
    for (c, column) in columns.iter().enumerate() {
        for (r, node) in column.iter().enumerate() {
            let x = MARGIN + u32::try_from(c).unwrap_or(0) * (BOX_W + COL_GAP);
            let y = MARGIN + u32::try_from(r).unwrap_or(0) * (BOX_H + ROW_GAP);
            at.insert(node.id.as_str(), (x, y));
        }
    }
    let critical: Vec<(&str, &str)> = report
        .critical_path
        .windows(2)
        .map(|pair| (pair[0].as_str(), pair[1].as_str()))
        .collect();
    let mut svg = format!(
        "<svg id=\"graph\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width} {height}\" \
         width=\"100%\" style=\"max-width:{width}px\" role=\"img\" aria-label=\"dependency graph\">\n"
    );
    for node in nodes {
        let Some(&(x, y)) = at.get(node.id.as_str()) else {
            continue;
        };
        for dependency in &node.depends_on {
            let Some(&(dx, dy)) = at.get(dependency.as_str()) else {
                continue;
            };
            let class = if critical.contains(&(dependency.as_str(), node.id.as_str())) {
                "edge critical"
            } else {
                "edge"
            };
            let (x1, y1, x2, y2) = (dx + BOX_W, dy + BOX_H / 2, x, y + BOX_H / 2);
            let mid = x1.midpoint(x2);
            let _ = writeln!(
                svg,
                "<path class=\"{class}\" d=\"M{x1} {y1} C{mid} {y1} {mid} {y2} {x2} {y2}\"/>"
            );
        }
    }
    for node in nodes {
        let Some(&(x, y)) = at.get(node.id.as_str()) else {
            continue;
        };
        let story = report.stories.iter().find(|story| story.id == node.id);
        let status = story.map_or("not-run", |story| status_name(story.status));
        let on_path = report.critical_path.contains(&node.id);
        let title = story.map_or(String::new(), |story| format!(": {}", story.title));
        let _ = writeln!(
            svg,
            "<g class=\"node {status}{crit}\" data-story=\"{id}\"><title>{id}{title} ({shown})</title>\
             <rect x=\"{x}\" y=\"{y}\" width=\"{BOX_W}\" height=\"{BOX_H}\" rx=\"6\"/>\
             <text x=\"{tx}\" y=\"{ty}\">{label}</text></g>",
            crit = if on_path { " critical" } else { "" },
            id = escape(&node.id),
            title = escape(&title),
            shown = status.replace('-', " "),
            tx = x + BOX_W / 2,
            ty = y + BOX_H / 2 + 5,
            label = escape(&shorten(&node.id, 20)),
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// The CSS class of an outcome.
pub(crate) fn status_name(status: OutcomeStatus) -> &'static str {
    match status {
        OutcomeStatus::Done => "done",
        OutcomeStatus::Failed => "failed",
        OutcomeStatus::Skipped => "skipped",
        OutcomeStatus::Stopped => "stopped",
    }
}

/// `text`, cut to `most` characters with an ellipsis.
pub(crate) fn shorten(text: &str, most: usize) -> String {
    if text.chars().count() <= most {
        text.to_owned()
    } else {
        let mut cut: String = text.chars().take(most.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// Each node's wave: 0 without dependencies, else one more than its latest dependency's.
/// Dependencies on unknown stories are ignored; a cycle (which a valid plan never has) stops
/// growing after as many rounds as there are nodes.
fn waves(nodes: &[Node]) -> BTreeMap<&str, usize> {
    let mut wave: BTreeMap<&str, usize> = nodes.iter().map(|node| (node.id.as_str(), 0)).collect();
    for _ in 0..nodes.len() {
        let mut changed = false;
        for node in nodes {
            let deepest = node
                .depends_on
                .iter()
                .filter_map(|dependency| wave.get(dependency.as_str()))
                .map(|depth| depth + 1)
                .max()
                .unwrap_or(0);
            if wave.get(node.id.as_str()).is_some_and(|&now| deepest > now) {
                wave.insert(node.id.as_str(), deepest);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    wave
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waves_follow_the_longest_chain() {
        let nodes = [
            Node::new("a", Vec::<String>::new()),
            Node::new("b", ["a"]),
            Node::new("c", ["a", "b"]),
            Node::new("d", ["missing"]),
        ];
        let wave = waves(&nodes);
        assert_eq!(wave["a"], 0);
        assert_eq!(wave["b"], 1);
        assert_eq!(wave["c"], 2);
        assert_eq!(wave["d"], 0);
    }

    #[test]
    fn a_cycle_ends() {
        let nodes = [Node::new("a", ["b"]), Node::new("b", ["a"])];
        assert_eq!(waves(&nodes).len(), 2);
    }
}
