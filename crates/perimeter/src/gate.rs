//! The perimeter as one of the gates of a coder's round.

use epic_story_plan::Story;

use crate::escaped::Escaped;
use crate::{Issue, PerimeterCheck, Review, Severity, check};

/// Checks the paths a story changed and returns the verdict as a [`Review`].
///
/// Run beside the project's gates in every round of the task loop, so a coder learns about a
/// stray edit while it is still cheap to undo. Clean: summary `perimeter: clean`, no issues.
/// Otherwise the summary is `perimeter: violated` and there is one critical issue titled
/// `perimeter`, whose description is the [`PerimeterViolation`](crate::PerimeterViolation)
/// message followed by what to do: revert those paths and stay inside the owned ones, which it
/// names.
///
/// ```
/// use epic_perimeter::{Severity, gate};
/// use epic_story_plan::Story;
///
/// let story = Story::new("cart-api", "Cart API", ["src/cart"]);
/// assert_eq!(gate(&["src/cart/mod.rs"], &story).summary, "perimeter: clean");
///
/// let review = gate(&["README.md"], &story);
/// assert!(!review.clean);
/// assert_eq!(review.summary, "perimeter: violated");
/// assert_eq!(review.issues[0].severity, Severity::Critical);
/// assert!(review.issues[0].description.contains("README.md (not in the story's owned paths)"));
/// ```
pub fn gate<I>(changed: I, story: &Story) -> Review
where
    I: IntoIterator,
    I::Item: AsRef<str>,
{
    check(changed, story).into_review(story)
}

impl PerimeterCheck {
    /// This check of `story` as a [`Review`], as [`gate()`] makes it: for a check that judged
    /// symbolic links too ([`with_links`](Self::with_links)).
    ///
    /// ```
    /// use epic_perimeter::check;
    /// use epic_story_plan::{Story, StoryPlan};
    ///
    /// let story = Story::new("cart", "Cart", ["src/cart"]);
    /// let plan = StoryPlan { epic_id: "shop".into(), epic: String::new(), stories: vec![story.clone()] };
    /// let review = check(&["src/cart/up"], &story)
    ///     .with_links([("src/cart/up", "../../..")], &story, &plan)
    ///     .into_review(&story);
    /// assert_eq!(review.summary, "perimeter: violated");
    /// assert!(review.issues[0].description.contains("src/cart/up -> ../../.. (a symbolic link"));
    /// ```
    pub fn into_review(self, story: &Story) -> Review {
        review(self, story)
    }
}

fn review(check: PerimeterCheck, story: &Story) -> Review {
    let Some(violation) = check.into_violation(&story.id) else {
        return Review::clean("perimeter: clean");
    };
    let mut description = violation.to_string();
    description.push_str(
        "\nRevert these paths: restore a file you changed from the epic branch, delete a file \
         you created",
    );
    if !violation.links.is_empty() {
        description.push_str(
            ", and remove or repoint each symbolic link listed: a link may point only inside \
             the repository, outside `.git`, and not into another story's paths or a shared \
             read-only one",
        );
    }
    description.push_str(". Keep your work inside your owned paths");
    if !story.owned.is_empty() {
        let owned: Vec<String> = story
            .owned
            .iter()
            .map(|path| Escaped(path).to_string())
            .collect();
        description.push_str(": ");
        description.push_str(&owned.join(", "));
    }
    description.push('.');
    Review::failed(
        "perimeter: violated",
        vec![Issue::new(Severity::Critical, "perimeter", description)],
    )
}
