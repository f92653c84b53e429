//! [`render_html`]: the report as one self-contained HTML page with pictures: the dependency
//! graph, the timeline, the usage bars, then the report's text.

use std::fmt::Write as _;

use crate::markdown::render_markdown;
use crate::model::EpicReport;
use crate::pictures::{Pictures, escape};
use crate::{bars, gantt, graph, markup};

/// The report as one HTML page that needs nothing else: no script, no network, its style and
/// pictures (inline SVG) inside. It shows the dependency graph of `pictures.graph` coloured by
/// outcome with the critical path marked, the timeline (each story's span and
/// `pictures.activities`: turns, gate runs, merges, batches, revisions, pauses, waits), tokens
/// and cost per story and per seat as bars, then the same text as
/// [`render_markdown`]. Every piece of text is escaped.
///
/// ```
/// use epic_report::{EpicReport, Node, OutcomeStatus, Pictures, StoryOutcome, render_html};
///
/// let report = EpicReport::new("checkout", "epic/checkout")
///     .with_story(StoryOutcome::new("cart-api", "Cart <API>", OutcomeStatus::Done))
///     .with_story(StoryOutcome::new("cart-ui", "Cart page", OutcomeStatus::Skipped));
/// let pictures = Pictures {
///     graph: vec![Node::new("cart-api", Vec::<String>::new()), Node::new("cart-ui", ["cart-api"])],
///     activities: Vec::new(),
/// };
/// let page = render_html(&report, &pictures);
/// assert!(page.starts_with("<!DOCTYPE html>"));
/// assert!(page.contains(r#"<svg id="graph""#));
/// assert!(page.contains("Cart &lt;API&gt;"));
/// ```
pub fn render_html(report: &EpicReport, pictures: &Pictures) -> String {
    let title = format!("Epic report: {}", report.epic_id);
    let mut page =
        String::from("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n");
    page.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n");
    let _ = writeln!(
        page,
        "<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>",
        escape(&title)
    );
    let _ = writeln!(page, "<h1>{}</h1>", escape(&title));
    page.push_str("<section id=\"dependencies\"><h2>Dependencies</h2>\n");
    page.push_str(LEGEND);
    wide(&mut page, &graph::render(report, &pictures.graph));
    page.push_str("</section>\n<section id=\"when\"><h2>Timeline</h2>\n");
    page.push_str(TIMELINE_LEGEND);
    wide(&mut page, &gantt::render(report, &pictures.activities));
    page.push_str("</section>\n<section id=\"cost\"><h2>Tokens and cost</h2>\n");
    wide(&mut page, &bars::render(report));
    page.push_str("</section>\n<section id=\"report\">\n");
    // The page's own heading already says what the Markdown's first line does.
    let markdown = render_markdown(report);
    let text = match markdown.split_once('\n') {
        Some((first, rest)) if first.starts_with("# ") => rest,
        _ => &markdown,
    };
    page.push_str(&markup::to_html(text));
    page.push_str("</section>\n</body>\n</html>\n");
    page
}

/// `picture` in a box that scrolls sideways when the screen is too narrow to read it whole.
fn wide(page: &mut String, picture: &str) {
    page.push_str("<div class=\"wide\">\n");
    page.push_str(picture);
    page.push_str("</div>\n");
}

const LEGEND: &str = "<p class=\"legend\"><span class=\"key done\">done</span> \
<span class=\"key failed\">failed</span> <span class=\"key skipped\">skipped</span> \
<span class=\"key stopped\">stopped</span> <span class=\"key not-run\">not run</span> \
<span class=\"key critical\">critical path</span></p>\n";

const TIMELINE_LEGEND: &str = "<p class=\"legend\"><span class=\"key turn-coder\">coder</span> \
<span class=\"key turn-judge\">judge</span> <span class=\"key turn-reviewer\">reviewer</span> \
<span class=\"key turn-planner\">planner</span> <span class=\"key gate-ok\">gate passed</span> \
<span class=\"key gate-red\">gate failed</span> <span class=\"key merge-ok\">merge</span> \
<span class=\"key revision\">revision</span> <span class=\"key pause\">seat paused</span> \
<span class=\"key waiting\">waiting for a person</span></p>\n";

/// The page's style: readable on a phone (the pictures scale to the width, wide tables scroll).
const STYLE: &str = "
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;padding:0 12px 24px;max-width:1100px;color:#1f2328;background:#fff;line-height:1.45}
h1{font-size:1.5em}h2{font-size:1.25em;margin-top:1.5em}h3{font-size:1.1em}
svg{display:block;width:100%;height:auto;margin:8px 0}
svg text{font-size:13px;fill:#1f2328}
.table{overflow-x:auto}table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top;overflow-wrap:break-word}
th{background:#f6f8fa}code{font-family:ui-monospace,monospace;font-size:.9em;background:#f6f8fa;padding:0 3px;border-radius:3px}
pre{overflow-x:auto;background:#f6f8fa;padding:8px}blockquote{margin:8px 0;padding:4px 12px;border-left:4px solid #d4a72c;background:#fff8c5}
.legend{font-size:.85em}.key{display:inline-block;padding:0 6px;margin:2px 0;border-radius:3px;border:1px solid #8c959f}
.node rect{stroke:#57606a;stroke-width:1.5}.node text{text-anchor:middle}.node.critical rect{stroke:#cf222e;stroke-width:4}
.edge{fill:none;stroke:#8c959f;stroke-width:1.5}.edge.critical{stroke:#cf222e;stroke-width:3.5}
.done{fill:#aceebb;background:#aceebb}.failed{fill:#ffc1c0;background:#ffc1c0}.skipped{fill:#eaeef2;background:#eaeef2}
.stopped{fill:#ffd8b5;background:#ffd8b5}.not-run{fill:#fff;background:#fff}.key.critical{border:3px solid #cf222e}
.span{stroke:#57606a;stroke-width:1;opacity:.6}.tick{stroke:#eaeef2}.axis{font-size:11px}
.turn{fill:#0969da;background:#0969da}.turn-coder{fill:#0969da;background:#0969da}.turn-judge{fill:#8250df;background:#8250df}
.turn-reviewer{fill:#bf3989;background:#bf3989}.turn-planner{fill:#1b7c83;background:#1b7c83}
.gate-ok{fill:#1a7f37;background:#1a7f37}.gate-red{fill:#cf222e;background:#cf222e}
.merge-ok{fill:#9a6700;background:#9a6700}.merge-red{fill:#a40e26;background:#a40e26}
.revision{fill:#fb8f44;background:#fb8f44}.pause{fill:#6e7781;background:#6e7781}.waiting{fill:#d4a72c;background:#d4a72c}
.key.turn-coder,.key.turn-judge,.key.turn-reviewer,.key.turn-planner,.key.gate-ok,.key.gate-red,.key.merge-ok,.key.pause{color:#fff}
.bar{fill:#0969da}.chart{font-weight:600}
.wide{overflow-x:auto}
@media (max-width:600px){body{padding:0 6px 16px}svg#timeline,svg#usage{min-width:720px}th,td{padding:2px 4px;font-size:.85em}}
";
