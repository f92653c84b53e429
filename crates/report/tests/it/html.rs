//! The HTML page: well-formed, self-contained, every story in each picture and the text,
//! every piece of text escaped, and a snapshot of a small page.

use epic_report::{
    Activity, ActivityKind, EpicReport, Lane, Node, OutcomeStatus, Pictures, PriceTable,
    StoryOutcome, UsageMeter, render_html,
};
use quick_xml::Reader;
use quick_xml::events::Event;

use crate::support::{diamond_with_failure, nine};

/// The diamond's dependencies: a, then b and c, then d on both.
fn diamond_graph() -> Vec<Node> {
    vec![
        Node::new("a", Vec::<String>::new()),
        Node::new("b", ["a"]),
        Node::new("c", ["a"]),
        Node::new("d", ["b", "c"]),
    ]
}

/// What the event log of the diamond with a failure would give.
fn activities() -> Vec<Activity> {
    let story = |id: &str| Lane::Story(id.to_owned());
    let turn = |role: &str| ActivityKind::Turn {
        role: role.to_owned(),
    };
    vec![
        Activity {
            lane: story("a"),
            kind: turn("coder"),
            start: nine(0, 5),
            finish: nine(2, 0),
            label: String::new(),
        },
        Activity {
            lane: story("a"),
            kind: ActivityKind::Gate { passed: true },
            start: nine(2, 0),
            finish: nine(2, 30),
            label: "cargo test".to_owned(),
        },
        Activity {
            lane: story("b"),
            kind: turn("judge"),
            start: nine(9, 0),
            finish: nine(10, 0),
            label: String::new(),
        },
        Activity {
            lane: story("b"),
            kind: ActivityKind::Revision,
            start: nine(12, 0),
            finish: nine(12, 0),
            label: "revision 1 of 2".to_owned(),
        },
        Activity {
            lane: Lane::Merge,
            kind: ActivityKind::Batch { proven: true },
            start: nine(3, 30),
            finish: nine(4, 0),
            label: "batch 1: a".to_owned(),
        },
        Activity {
            lane: Lane::Seat("claude".to_owned()),
            kind: ActivityKind::Pause,
            start: nine(5, 0),
            finish: nine(7, 0),
            label: "usage limit".to_owned(),
        },
        Activity {
            lane: story("c"),
            kind: ActivityKind::Waiting,
            start: nine(5, 0),
            finish: nine(6, 0),
            label: "which database?".to_owned(),
        },
    ]
}

fn page() -> String {
    let mut meter = UsageMeter::new(PriceTable::default());
    meter.record("claude", 4_000, 800);
    let report = diamond_with_failure().with_seats(meter.seat_usage());
    render_html(
        &report,
        &Pictures {
            graph: diamond_graph(),
            activities: activities(),
        },
    )
}

/// Parses `page` as XML: every tag closed in order, every entity known. The depth of elements
/// at the end.
fn check_well_formed(page: &str) {
    let mut reader = Reader::from_str(page);
    let mut depth = 0_i32;
    let mut elements = 0;
    loop {
        match reader.read_event() {
            Ok(Event::Start(_)) => {
                depth += 1;
                elements += 1;
            }
            Ok(Event::End(_)) => depth -= 1,
            Ok(Event::Empty(_)) => elements += 1,
            Ok(Event::Text(text)) => {
                assert!(!text.xml10_content().contains(char::from(0)));
            }
            Ok(Event::GeneralRef(entity)) => {
                let name = entity.xml10_content();
                assert!(
                    ["amp", "lt", "gt", "quot", "#39"].contains(&name.as_ref()),
                    "unknown entity &{name};"
                );
            }
            Ok(Event::Eof) => break,
            Ok(_) => {}
            Err(error) => panic!(
                "not well-formed at {}: {error}\n{page}",
                reader.buffer_position()
            ),
        }
        assert!(depth >= 0, "an end tag without its start");
    }
    assert_eq!(depth, 0, "every element closed");
    assert!(elements > 20, "a page of {elements} elements");
}

/// The part of `page` from `<svg id="ID"` to its `</svg>`.
fn svg<'a>(page: &'a str, id: &str) -> &'a str {
    let start = page
        .find(&format!("<svg id=\"{id}\""))
        .unwrap_or_else(|| panic!("no svg `{id}`"));
    let end = page[start..].find("</svg>").expect("closed") + start;
    &page[start..end]
}

#[test]
fn the_page_is_well_formed() {
    check_well_formed(&page());
}

#[test]
fn every_story_is_in_the_graph_the_timeline_and_the_text() {
    let page = page();
    let graph = svg(&page, "graph");
    let timeline = svg(&page, "timeline");
    let text = &page[page.find("<section id=\"report\">").expect("the text")..];
    for id in ["a", "b", "c", "d"] {
        assert!(
            graph.contains(&format!("data-story=\"{id}\"")),
            "{id} in {graph}"
        );
        assert!(
            timeline.contains(&format!(">{id}</text>")),
            "{id} in {timeline}"
        );
        assert!(text.contains(&format!("<td>{id}</td>")), "{id} in {text}");
    }
    assert!(graph.contains("class=\"node failed critical\""), "{graph}");
    assert!(graph.contains("class=\"node skipped critical\""), "{graph}");
    assert_eq!(
        graph.matches("class=\"edge critical\"").count(),
        2,
        "{graph}"
    );
    assert!(timeline.contains(">merge queue</text>"), "{timeline}");
    assert!(timeline.contains(">seat claude</text>"), "{timeline}");
    assert!(timeline.contains("class=\"turn turn-judge\""), "{timeline}");
    assert!(timeline.contains("class=\"revision\""), "{timeline}");
    let usage = svg(&page, "usage");
    assert!(usage.contains("Cost per seat (USD)"), "{usage}");
    assert!(usage.contains("$0.13"), "b's cost: {usage}");
}

#[test]
fn nothing_outside_the_page_is_referenced() {
    let page = page();
    // The SVG namespace is a name, not a place the page loads anything from.
    let page = page.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    for reference in [
        "http:", "https:", "src=", "<script", "@import", "url(", "href=",
    ] {
        assert!(!page.contains(reference), "`{reference}` in the page");
    }
}

#[test]
fn text_is_escaped() {
    let report = EpicReport::new("e", "epic/e").with_story(
        StoryOutcome::new(
            "x",
            "<script>alert('x') & \"y\"</script>",
            OutcomeStatus::Failed,
        )
        .with_reason("gate `<b>` failed: <img src=x>")
        .started(nine(0, 0))
        .finished(nine(1, 0)),
    );
    let pictures = Pictures {
        graph: vec![Node::new("x", Vec::<String>::new())],
        activities: vec![Activity {
            lane: Lane::Story("x".to_owned()),
            kind: ActivityKind::Waiting,
            start: nine(0, 10),
            finish: nine(0, 20),
            label: "</title><script>".to_owned(),
        }],
    };
    let page = render_html(&report, &pictures);
    check_well_formed(&page);
    assert!(!page.contains("<script"), "{page}");
    assert!(!page.contains("<img"), "{page}");
    assert!(
        page.contains("&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;"),
        "{page}"
    );
    assert!(page.contains("<code>&lt;b&gt;</code>"), "{page}");
}

#[test]
fn a_report_without_times_or_usage_still_makes_a_page() {
    let report = EpicReport::new("e", "epic/e").with_story(StoryOutcome::new(
        "x",
        "X",
        OutcomeStatus::Skipped,
    ));
    let page = render_html(&report, &Pictures::default());
    check_well_formed(&page);
    assert!(
        svg(&page, "graph").contains("class=\"node skipped\""),
        "{page}"
    );
    assert!(page.contains("<p id=\"timeline\">"), "{page}");
    assert!(page.contains("<p id=\"usage\">"), "{page}");
}

#[test]
fn snapshot_small_page() {
    insta::assert_snapshot!(page());
}
