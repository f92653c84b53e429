//! Symbolic links a story adds or changes: where they point, against the plan's perimeters.

use std::fmt;

use epic_story_plan::path::{LinkEscape, is_safe, normalize, overlaps_normalized, resolve_link};
use epic_story_plan::{Story, StoryPlan};

use crate::escaped::Escaped;
use crate::placement::{Placement, classify};

/// Why a symbolic link is refused: see [`check_links`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LinkProblem {
    /// Its target lies outside the repository or in `.git`.
    Escapes(LinkEscape),
    /// Its target lies in, or holds, the owned paths of another story (its id).
    IntoStory(String),
    /// Its target lies in, or holds, a shared read-only path (as the plan writes it).
    IntoShared(String),
}

impl fmt::Display for LinkProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Escapes(escape) => write!(f, "{escape}"),
            Self::IntoStory(id) => {
                write!(
                    f,
                    "its target lies in the owned paths of story `{}`",
                    Escaped(id)
                )
            }
            Self::IntoShared(path) => write!(
                f,
                "its target lies in the shared read-only path `{}`",
                Escaped(path)
            ),
        }
    }
}

/// A symbolic link a story may not have; see [`check_links`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LinkViolation {
    /// The link's path, as passed in.
    pub link: String,
    /// Its target, as passed in.
    pub target: String,
    /// Why it is refused.
    pub problem: LinkProblem,
}

impl fmt::Display for LinkViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} -> {} (a symbolic link: {})",
            Escaped(&self.link),
            Escaped(&self.target),
            self.problem
        )
    }
}

/// Checks the symbolic links a story added or changed, each given as its repo-relative path and
/// its target (the link's content, as git stores it), against the plan.
///
/// Only links inside the story's owned paths are judged here: any other changed path is already
/// outside the story's perimeter for [`check()`](crate::check()). Such a link is refused when its
/// target, resolved against the link's own directory ([`resolve_link`], lexically), lies outside
/// the repository or in `.git`; or, unless it lies in the story's own owned paths, when it lies
/// in or holds the owned paths of another story of `plan`, or a shared read-only path of any
/// story (a link to the directory above a sibling's opens the sibling's files as much as a link
/// to one of them). A link to a path nobody owns is fine. The violations come in input order.
///
/// ```
/// use epic_perimeter::{LinkProblem, check_links};
/// use epic_story_plan::path::LinkEscape;
/// use epic_story_plan::{Story, StoryPlan};
///
/// let plan = StoryPlan {
///     epic_id: "shop".into(),
///     epic: String::new(),
///     stories: vec![
///         Story::new("cart", "Cart", ["src/cart"]).sharing(["src/kit"]),
///         Story::new("home", "Home", ["src/home"]),
///     ],
/// };
/// let cart = &plan.stories[0];
/// let found = check_links(
///     [
///         ("src/cart/passwd", "/etc/passwd"),
///         ("src/cart/home", "../home/page.tsx"),
///         ("src/cart/kit", "../kit"),
///         ("src/cart/item", "./item.rs"),
///         ("src/cart/readme", "../../README.md"),
///     ],
///     cart,
///     &plan,
/// );
/// let problems: Vec<_> = found.iter().map(|found| found.problem.clone()).collect();
/// assert_eq!(
///     problems,
///     [
///         LinkProblem::Escapes(LinkEscape::Absolute),
///         LinkProblem::IntoStory("home".into()),
///         LinkProblem::IntoShared("src/kit".into()),
///     ]
/// );
/// assert_eq!(
///     found[1].to_string(),
///     "src/cart/home -> ../home/page.tsx (a symbolic link: its target lies in the owned paths \
///      of story `home`)"
/// );
/// ```
pub fn check_links<I, L, T>(links: I, story: &Story, plan: &StoryPlan) -> Vec<LinkViolation>
where
    I: IntoIterator<Item = (L, T)>,
    L: AsRef<str>,
    T: AsRef<str>,
{
    let mut found = Vec::new();
    for (link, target) in links {
        let (link, target) = (link.as_ref(), target.as_ref());
        if classify(link, story) != Placement::Owned {
            continue;
        }
        // `classify` said the link's path is safe; resolve its normalised spelling.
        if let Some(problem) = problem(&normalize(link), target, story, plan) {
            found.push(LinkViolation {
                link: link.to_owned(),
                target: target.to_owned(),
                problem,
            });
        }
    }
    found
}

/// What is wrong with the link at the normalised `link` of `story` to `target`, if anything.
fn problem(link: &str, target: &str, story: &Story, plan: &StoryPlan) -> Option<LinkProblem> {
    let resolved = match resolve_link(link, target) {
        Ok(resolved) => resolved,
        Err(escape) => return Some(LinkProblem::Escapes(escape)),
    };
    if classify(&resolved, story) == Placement::Owned {
        return None;
    }
    let overlapping =
        |prefix: &&String| is_safe(prefix) && overlaps_normalized(&resolved, &normalize(prefix));
    if let Some(other) = plan
        .stories
        .iter()
        .filter(|other| other.id != story.id)
        .find(|other| other.owned.iter().any(|prefix| overlapping(&prefix)))
    {
        return Some(LinkProblem::IntoStory(other.id.clone()));
    }
    plan.stories
        .iter()
        .chain(std::iter::once(story))
        .flat_map(|story| &story.shared_read_only)
        .find(overlapping)
        .map(|prefix| LinkProblem::IntoShared(prefix.clone()))
}
