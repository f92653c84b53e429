//! The report of an epic run: what happened to each story and what it cost, as the agents
//! reported it or estimated.
//!
//! # Using it alone
//!
//! `epic-report` depends on no other crate of epic and does no I/O: build an [`EpicReport`] from
//! whatever your own runner knows (each story's outcome, branch, times and turns), and render it
//! as Markdown for people or as JSON for scripts. Write the text wherever you like.
//!
//! ```
//! use epic_report::{EpicReport, PriceTable, StoryOutcome, OutcomeStatus, UsageMeter, render_markdown};
//!
//! let mut meter = UsageMeter::new(PriceTable::default());
//! meter.record("claude", 4_000, 800); // one turn: 4000 characters of prompt, 800 of reply
//!
//! let report = EpicReport::new("checkout", "epic/checkout")
//!     .with_story(
//!         StoryOutcome::new("cart-api", "Cart API", OutcomeStatus::Done)
//!             .on_branch("story/checkout/cart-api")
//!             .with_usage(&meter.totals())
//!             .started("2026-03-01T09:00:00Z".parse()?)
//!             .finished("2026-03-01T09:12:30Z".parse()?),
//!     )
//!     .with_story(
//!         StoryOutcome::new("cart-ui", "Cart page", OutcomeStatus::Skipped)
//!             .with_reason("depends on cart-api, which failed"),
//!     )
//!     .with_critical_path(["cart-api", "cart-ui"])
//!     .with_seats(meter.seat_usage());
//!
//! let markdown = render_markdown(&report);
//! println!("{markdown}");
//! assert!(markdown.contains("| cart-api | done | `story/checkout/cart-api` | ~1200 | ~$0.01 | 12m 30s |  |"));
//! assert!(markdown.contains("ESTIMATES"));
//!
//! let json = epic_report::to_json(&report);
//! assert!(json.contains(r#""estimated": true"#));
//! assert_eq!(serde_json::from_str::<EpicReport>(&json)?, report);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What it holds
//!
//! An [`EpicReport`] lists every story of the plan in plan order with its outcome ([`done`,
//! `failed` or `skipped`](OutcomeStatus)), branch, reason or judge note, estimated tokens and cost,
//! and start and finish times. It renders three ways:
//!
//! - [`render_markdown`]: `report.md`, for people: a table of the stories, totals, usage by seat
//!   and a timeline (makespan, parallelism, a Mermaid gantt chart);
//! - [`render_html`]: one self-contained page for people, with pictures (the dependency graph
//!   coloured by outcome, the timeline of turns, gates, merges and pauses from the caller's
//!   [`Pictures`], tokens and cost as bars) and the same text as the Markdown;
//! - [`to_json`]: `report.json`'s data, for scripts; [`report_schema`] is its JSON Schema and
//!   [`REPORT_VERSION`] the version its envelope carries (the envelope itself is written by
//!   `epic-state-store`).
//!
//! Token and cost figures are the agents' own where they report them (a [`ReportedUsage`] per
//! turn, recorded with [`UsageMeter::record_reported`]) and **estimates** where not
//! ([`estimate_tokens`]: about four characters a token, priced from a [`PriceTable`]); each
//! story and seat says which ([`UsageSummary::source`]: `reported`, `estimated` or `mixed`), and
//! the Markdown shows its estimates banner only when something is estimated. A [`UsageMeter`]
//! adds up a story's turns by seat; a cost is only reported when every turn had a reported cost
//! or a known price.
//!
//! The crate is pure: no I/O and no clock. Times are [`Timestamp`]s (jiff's) the caller passes
//! in, and the critical path is the caller's too (`epic-story-plan`'s
//! `ValidPlan::critical_path`).

#![warn(missing_docs)]

mod bars;
mod format;
mod gantt;
mod graph;
mod html;
mod in_place;
mod json;
mod markdown;
mod markup;
mod model;
mod pictures;
mod price;
mod timeline;
mod tokens;
mod usage;

pub use format::{format_usd, round_half_away};
pub use html::render_html;
pub use in_place::{Evidence, InPlace};
pub use json::{REPORT_VERSION, report_schema, to_json};
pub use markdown::render_markdown;
pub use model::{
    EpicReport, Estimated, FlakyGate, GivenCommand, InheritedTests, LandedConflict, Landing,
    OutcomeStatus, PutBack, RunRecord, SeatUsage, StoryOutcome, UsageSummary,
};
pub use pictures::{Activity, ActivityKind, Lane, Node, Pictures};
pub use price::{PRICES_AS_OF, Price, PriceError, PriceTable, Rate};
pub use timeline::{Span, Timeline};
pub use tokens::{Usage, count_chars, estimate_tokens};
pub use usage::{Estimate, ReportedUsage, UsageMeter, UsageSource, UsageTotals};

/// The instant type of a story's start and finish: [`jiff::Timestamp`], re-exported so callers
/// name it without depending on jiff themselves.
///
/// It parses RFC 3339 text with any offset (`"2026-03-01T10:30:00+01:00".parse()`), and prints
/// and serialises in UTC (`2026-03-01T09:30:00Z`, a fraction only when there is one).
pub use jiff::Timestamp;
