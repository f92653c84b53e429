//! Hand-built models of `epic status` for the unit tests: one with every field filled, one with
//! none of those that may be left out.

use std::path::PathBuf;

use epic_report::{Evidence, InPlace, OutcomeStatus};
use epic_state_store::{Hold, Holder, StoryStage};

use super::model::{
    DoingJson, EpicSummary, EpicsJson, LandedJson, PausedJson, ReportJson, SeatJson, StatusJson,
    StoryJson,
};

/// When the paused seat's outage began (RFC 3339; shown in local time).
pub(super) const SINCE: &str = "2030-01-02T03:04:05Z";

/// When the paused seat is probed again (RFC 3339; shown in local time).
pub(super) const UNTIL: &str = "2030-01-02T04:05:06Z";

/// A story with an id and nothing else: no state file, in no report.
pub(super) fn story(id: &str) -> StoryJson {
    StoryJson {
        id: id.to_owned(),
        status: None,
        branch: None,
        worktree: None,
        outcome: None,
        reason: None,
        in_place: None,
        stalled_turns: 0,
        looping_turns: 0,
        permission_rejections: 0,
        merge_revisions: 0,
        hold: None,
    }
}

/// Epic `checkout` while a run goes on, with every field filled: its holder, a report (a story
/// done in place and revised once, one failed with stalled and looping turns, one skipped, one
/// waiting for an answer, one stopped), a
/// seat paused by an outage, an agent at work, the seats of the rosters, a landing.
pub(super) fn full() -> StatusJson {
    StatusJson {
        epic_id: "checkout".to_owned(),
        running: true,
        holder: Some(Holder {
            pid: 4242,
            host: "build-1".to_owned(),
            started_at: "2026-12-07T09:30:00Z".to_owned(),
            command: ["epic", "run", "plan.md"].map(String::from).to_vec(),
        }),
        stories: vec![
            StoryJson {
                status: Some(StoryStage::Merged),
                branch: Some("story/checkout/cart-api".to_owned()),
                outcome: Some(OutcomeStatus::Done),
                in_place: Some(InPlace::new(
                    "0123456789abcdef0123456789abcdef01234567",
                    vec![
                        Evidence::new("src/cart.rs", ["cart-api"]),
                        Evidence::new("src/lib.rs", [] as [&str; 0]),
                    ],
                )),
                merge_revisions: 1,
                ..story("cart-api")
            },
            StoryJson {
                status: Some(StoryStage::Started),
                branch: Some("story/checkout/payments".to_owned()),
                worktree: Some(PathBuf::from("/repo.worktrees/checkout/payments")),
                outcome: Some(OutcomeStatus::Failed),
                reason: Some("gates red:\n  pytest    exit code 1".to_owned()),
                stalled_turns: 1,
                looping_turns: 2,
                permission_rejections: 3,
                hold: Some(Hold::Waiting {
                    question: "which currency do prices use?".to_owned(),
                    since: SINCE.to_owned(),
                }),
                ..story("payments")
            },
            StoryJson {
                outcome: Some(OutcomeStatus::Skipped),
                reason: Some("a dependency failed: payments".to_owned()),
                hold: Some(Hold::Stopped {
                    uid: 1000,
                    at: SINCE.to_owned(),
                }),
                ..story("search")
            },
        ],
        report: Some(ReportJson {
            epic_branch: "epic/checkout".to_owned(),
            done: 1,
            failed: 1,
            skipped: 1,
            stopped: 1,
        }),
        paused: vec![PausedJson {
            seat: "codex".to_owned(),
            until: UNTIL.to_owned(),
            since: SINCE.to_owned(),
            reason: "outage".to_owned(),
            story: "payments".to_owned(),
        }],
        doing: vec![DoingJson {
            story: "payments".to_owned(),
            role: "coder".to_owned(),
            doing: "running `cargo test`".to_owned(),
        }],
        seats: vec![
            SeatJson {
                seat: "claude".to_owned(),
                state: "working",
                turns: 2,
                until: None,
            },
            SeatJson {
                seat: "codex".to_owned(),
                state: "paused",
                turns: 0,
                until: Some(UNTIL.to_owned()),
            },
            SeatJson {
                seat: "aider".to_owned(),
                state: "working",
                turns: 1,
                until: None,
            },
            SeatJson {
                seat: "gemini".to_owned(),
                state: "idle",
                turns: 0,
                until: None,
            },
        ],
        landed: Some(LandedJson {
            target: "main".to_owned(),
            commit: "fedcba9876543210fedcba9876543210fedcba98".to_owned(),
        }),
    }
}

/// Epic `checkout` with no run going and no report: a story merged, one never started, and
/// nothing of what may be left out.
pub(super) fn bare() -> StatusJson {
    StatusJson {
        epic_id: "checkout".to_owned(),
        running: false,
        holder: None,
        stories: vec![
            StoryJson {
                status: Some(StoryStage::Merged),
                branch: Some("story/checkout/cart-api".to_owned()),
                ..story("cart-api")
            },
            story("search"),
        ],
        report: None,
        paused: Vec::new(),
        doing: Vec::new(),
        seats: Vec::new(),
        landed: None,
    }
}

/// Two epics, one of them running.
pub(super) fn several() -> EpicsJson {
    EpicsJson {
        epics: vec![
            EpicSummary {
                epic_id: "checkout".to_owned(),
                running: true,
            },
            EpicSummary {
                epic_id: "search".to_owned(),
                running: false,
            },
        ],
    }
}
