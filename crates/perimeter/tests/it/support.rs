//! The plans and stories the tests share.

use epic_story_plan::{Story, StoryPlan};

/// The reference's perimeter fixture: the account overview owns its feature folder and the
/// accounts contract, and may read the kit and the app shell.
pub(crate) fn conto_overview() -> Story {
    Story::new(
        "conto-overview",
        "Account overview",
        ["src/features/conto/overview", "src/contracts/accounts.ts"],
    )
    .sharing(["src/kit", "src/App.tsx"])
}

/// The "bank" plan of the stray-task and gate cases: the app shell belongs to `home`, so the
/// overview only shares the kit.
pub(crate) fn bank() -> StoryPlan {
    StoryPlan {
        epic_id: "bank".into(),
        epic: "Show the account overview and let the user send a transfer.".into(),
        stories: vec![
            Story::new(
                "conto-overview",
                "Account overview",
                ["src/features/conto/overview", "src/contracts/accounts.ts"],
            )
            .sharing(["src/kit"]),
            Story::new("bonifico-form", "Transfer form", ["src/features/bonifico"])
                .sharing(["src/kit"]),
            Story::new("home", "Home page", ["src/App.tsx"])
                .depending_on(["conto-overview", "bonifico-form"]),
        ],
    }
}

/// The story of `plan` with this id.
pub(crate) fn story<'p>(plan: &'p StoryPlan, id: &str) -> &'p Story {
    plan.story(id).expect("story in plan")
}
