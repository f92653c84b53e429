//! The unit tests' hand-made epic: a plan of seven stories, their state files, a report and
//! an event log, one story in each state the view tells apart (not started, running,
//! waiting, failed, stopped, skipped, done); `gather.rs` builds the board and a detail of them.

use epic_report::{EpicReport, OutcomeStatus, StoryOutcome};
use epic_state_store::{Hold, StoryStage, StoryState};
use epic_story_plan::StoryPlan;
use jiff::Timestamp;

/// The plan: `models` first, the rest on it, `docs` on `cart`.
pub(crate) fn plan() -> StoryPlan {
    let story = |id: &str, depends: &[&str]| {
        serde_json::json!({"id": id, "title": id, "owned": [format!("src/{id}/")],
            "depends_on": depends})
    };
    serde_json::from_value(serde_json::json!({
        "epic_id": "shop",
        "stories": [
            story("models", &[]),
            story("cart", &["models"]),
            story("search", &["models"]),
            story("billing", &["models"]),
            story("audit", &["models"]),
            story("docs", &["cart"]),
            story("emails", &["models"]),
        ],
    }))
    .expect("the plan")
}

fn state(id: &str, status: StoryStage, hold: Option<Hold>) -> StoryState {
    StoryState {
        id: id.to_owned(),
        hash: "h".to_owned(),
        branch: format!("story/shop/{id}"),
        worktree: format!("/nowhere/{id}").into(),
        status,
        merge: None,
        hold,
    }
}

/// The story states: `models` merged, `cart` running, `search` waiting, `billing` failed,
/// `audit` stopped; `docs` skipped (in the report only), `emails` never started.
pub(crate) fn states() -> Vec<StoryState> {
    vec![
        state("models", StoryStage::Merged, None),
        state("cart", StoryStage::Started, None),
        state(
            "search",
            StoryStage::Started,
            Some(Hold::Waiting {
                question: "Which index backs the search, Postgres or Tantivy?".to_owned(),
                since: "2026-12-07T10:05:00Z".to_owned(),
            }),
        ),
        state("billing", StoryStage::Failed, None),
        state(
            "audit",
            StoryStage::Started,
            Some(Hold::Stopped {
                uid: 1000,
                at: "2026-12-07T10:06:00Z".to_owned(),
            }),
        ),
    ]
}

/// The report of the run so far.
pub(crate) fn report() -> EpicReport {
    let at = |text: &str| text.parse::<Timestamp>().expect("a time");
    let mut models = StoryOutcome::new("models", "models", OutcomeStatus::Done);
    models.estimated_tokens = Some(48_200);
    models.estimated_cost_usd = Some(0.61);
    models.started_at = Some(at("2026-12-07T10:00:01Z"));
    models.finished_at = Some(at("2026-12-07T10:04:31Z"));
    let mut billing = StoryOutcome::new("billing", "billing", OutcomeStatus::Failed);
    billing.reason = Some("gate `cargo test` red after 3 rounds".to_owned());
    billing.estimated_tokens = Some(91_000);
    billing.estimated_cost_usd = Some(1.32);
    let mut docs = StoryOutcome::new("docs", "docs", OutcomeStatus::Skipped);
    docs.reason = Some("depends on `cart`, which has not merged".to_owned());
    EpicReport::new("shop", "epic/shop")
        .with_story(models)
        .with_story(billing)
        .with_story(docs)
}

/// The event log of the run going on.
pub(crate) const EVENTS: &str = r#"{"at":"2026-12-07T10:00:00Z","kind":"run_started","epic":"shop","epic_branch":"epic/shop","epic_worktree":"/w","stories":7,"concurrency":3,"seats":["claude","codex"]}
{"at":"2026-12-07T10:00:01Z","kind":"story_started","story":"models","slot":0}
{"at":"2026-12-07T10:04:31Z","kind":"story_merged","story":"models","commit":"abc"}
{"at":"2026-12-07T10:04:40Z","kind":"story_started","story":"cart","slot":0}
{"at":"2026-12-07T10:04:41Z","kind":"turn_started","story":"cart","role":"coder","seat":"claude","turn":1,"task":"Add the cart model"}
{"at":"2026-12-07T10:04:50Z","kind":"turn_ended","story":"cart","role":"coder","turn":1,"ok":true,"estimated_tokens":15300,"reported":true}
{"at":"2026-12-07T10:05:00Z","kind":"gate_failed","story":"cart","command":"cargo test","duration_ms":3000,"status":"exit code 101"}
{"at":"2026-12-07T10:05:10Z","kind":"story_judged","story":"cart","round":1,"cleared":false,"issues":["the cart total ignores discounts"]}
{"at":"2026-12-07T10:05:20Z","kind":"turn_started","story":"cart","role":"coder","seat":"claude","turn":2}
{"at":"2026-12-07T10:05:21Z","kind":"turn_activity","story":"cart","role":"coder","turn":2,"tool":"Bash","doing":"running `cargo test -p cart`"}
{"at":"2026-12-07T10:04:40Z","kind":"story_started","story":"search","slot":1}
{"at":"2026-12-07T10:05:00Z","kind":"story_waiting","story":"search","question":"Which index?"}
{"at":"2026-12-07T10:04:40Z","kind":"story_started","story":"billing","slot":2}
{"at":"2026-12-07T10:06:00Z","kind":"story_failed","story":"billing","reason":"gate `cargo test` red after 3 rounds"}
{"at":"2026-12-07T10:06:00Z","kind":"seat_paused","seat":"codex","story":"billing","until":"2026-12-07T11:00:00Z","since":"2026-12-07T10:06:00Z","reason":"usage limit","message":"limit"}
{"at":"2026-12-07T10:06:10Z","kind":"merge_batch","batch":2,"stories":["cart"],"checkpoint":"c"}
"#;

/// The time the fixtures are seen at.
pub(crate) fn now() -> Timestamp {
    "2026-12-07T10:07:00Z".parse().expect("a time")
}
