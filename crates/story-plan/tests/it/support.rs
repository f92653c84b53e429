//! Plans shared by the tests.

use epic_story_plan::{Story, StoryPlan, ViolationKind};

pub(crate) fn plan(epic_id: &str, stories: Vec<Story>) -> StoryPlan {
    StoryPlan {
        epic_id: epic_id.into(),
        epic: String::new(),
        stories,
    }
}

/// The reference's demo epic: two contracts and a kit field, two features on top, a home page
/// on top of those.
pub(crate) fn demo() -> StoryPlan {
    let mut demo = plan(
        "conto-bonifico",
        vec![
            Story::new(
                "accounts-contract",
                "Accounts contract",
                ["src/contracts/accounts.ts"],
            ),
            Story::new(
                "payments-contract",
                "Payments contract",
                ["src/contracts/payments.ts"],
            ),
            Story::new("iban-field", "IBAN field", ["src/kit/iban"]),
            Story::new(
                "conto-overview",
                "Account overview",
                ["src/features/conto/overview"],
            )
            .depending_on(["accounts-contract"])
            .sharing(["src/kit"]),
            Story::new("bonifico-form", "Transfer form", ["src/features/bonifico"])
                .depending_on(["payments-contract", "iban-field"])
                .sharing(["src/kit"]),
            Story::new("home", "Home page", ["src/App.tsx"])
                .depending_on(["conto-overview", "bonifico-form"]),
        ],
    );
    demo.epic = "Show the account overview and let the user send a transfer.".into();
    demo.stories[3].provides = vec!["route /conto".into()];
    demo.stories[4].acceptance = vec!["an invalid IBAN is refused".into()];
    demo
}

/// The kinds of the plan's violations, in order.
pub(crate) fn kinds(plan: &StoryPlan) -> Vec<ViolationKind> {
    plan.violations().iter().map(|v| v.kind).collect()
}
