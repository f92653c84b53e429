//! Where a path falls relative to a story's perimeter ([`classify`]), and the containment tests
//! every check of this crate goes through: a path made safe and normalised first
//! ([`safe_normalized`]), then tested against a story's prefixes ([`under_any`]).

use epic_story_plan::Story;
use epic_story_plan::path::{is_safe, normalize, within_normalized};

/// Where one changed path falls relative to a story's perimeter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Placement {
    /// Inside one of the story's owned prefixes: the story may change it.
    Owned,
    /// Not owned, but inside one of the story's shared read-only prefixes: the story may read it
    /// and must not change it. The worse offence, since another story relies on it as it is.
    SharedReadOnly,
    /// Neither owned nor shared: the story has no business changing it.
    Outside,
}

/// Places one changed path relative to `story`'s perimeter.
///
/// The path is normalised first ([`normalize`]). A path that is not safe
/// ([`check_safe`](epic_story_plan::path::check_safe)) is [`Outside`](Placement::Outside) whatever it starts
/// with, and so is anything under an unsafe owned or shared prefix.
///
/// ```
/// use epic_perimeter::{Placement, classify};
/// use epic_story_plan::Story;
///
/// let story = Story::new("cart-api", "Cart API", ["src/cart"]).sharing(["src/lib.rs"]);
/// assert_eq!(classify("./src/cart/mod.rs", &story), Placement::Owned);
/// assert_eq!(classify("src/lib.rs", &story), Placement::SharedReadOnly);
/// assert_eq!(classify("src/cart-old/mod.rs", &story), Placement::Outside);
/// assert_eq!(classify("src/cart/../../etc/passwd", &story), Placement::Outside);
/// ```
pub fn classify(path: &str, story: &Story) -> Placement {
    let Some(path) = safe_normalized(path) else {
        return Placement::Outside;
    };
    if under_any(&path, &story.owned) {
        Placement::Owned
    } else if under_any(&path, &story.shared_read_only) {
        Placement::SharedReadOnly
    } else {
        Placement::Outside
    }
}

/// The normalised form of `path`, or `None` when it is not a safe repo-relative path.
///
/// Every containment test of this crate goes through here first: [`within_normalized`] alone
/// would count `src/a/../../etc` as inside `src/a`.
pub(crate) fn safe_normalized(path: &str) -> Option<String> {
    is_safe(path).then(|| normalize(path))
}

/// Whether the normalised `path` lies within any of the (raw) `prefixes`.
///
/// A prefix that is not safe grants nothing: a validated plan has none, and an unvalidated one
/// must not widen a perimeter to the whole repository through an empty or `/` prefix.
pub(crate) fn under_any(path: &str, prefixes: &[String]) -> bool {
    prefixes
        .iter()
        .filter(|prefix| is_safe(prefix))
        .any(|prefix| within_normalized(path, &normalize(prefix)))
}
