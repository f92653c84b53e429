//! The perimeter check of the paths a story changed, and its failure as an error.

use std::fmt;

use epic_story_plan::{Story, StoryPlan};

use crate::escaped::Escaped;
use crate::links::LinkViolation;
use crate::placement::{Placement, classify};

/// The changed paths a story was not allowed to change, each list in the order the paths came in.
///
/// Paths are kept exactly as they were passed to [`check`], so they can be handed back to git.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PerimeterCheck {
    /// Changed paths under one of the story's shared read-only prefixes (and under none of its
    /// owned ones).
    pub shared_read_only: Vec<String>,
    /// Changed paths under none of the story's owned or shared prefixes, and unsafe paths.
    pub outside: Vec<String>,
    /// Symbolic links in the story's owned paths that point where the story may not reach:
    /// [`check()`] leaves it empty, [`with_links`](Self::with_links) fills it.
    pub links: Vec<LinkViolation>,
}

impl PerimeterCheck {
    /// Whether every changed path was inside the story's owned paths, and no symbolic link
    /// among them points where the story may not reach.
    pub fn is_clean(&self) -> bool {
        self.shared_read_only.is_empty() && self.outside.is_empty() && self.links.is_empty()
    }

    /// This check with the symbolic links the story added or changed judged too
    /// ([`check_links`](crate::check_links): `links` are their paths and targets, `plan` the
    /// plan whose other stories' paths they may not point into).
    ///
    /// ```
    /// use epic_perimeter::check;
    /// use epic_story_plan::{Story, StoryPlan};
    ///
    /// let story = Story::new("cart", "Cart", ["src/cart"]);
    /// let plan = StoryPlan { epic_id: "shop".into(), epic: String::new(), stories: vec![story.clone()] };
    /// let verdict = check(&["src/cart/passwd"], &story).with_links([("src/cart/passwd", "/etc/passwd")], &story, &plan);
    /// assert!(!verdict.is_clean());
    /// assert_eq!(
    ///     verdict.into_violation("cart").unwrap().to_string(),
    ///     "story `cart` changed paths outside its perimeter:\n\
    ///      - src/cart/passwd -> /etc/passwd (a symbolic link: its target is absolute, outside \
    ///      the repository)"
    /// );
    /// ```
    #[must_use]
    pub fn with_links<I, L, T>(mut self, links: I, story: &Story, plan: &StoryPlan) -> Self
    where
        I: IntoIterator<Item = (L, T)>,
        L: AsRef<str>,
        T: AsRef<str>,
    {
        self.links = crate::check_links(links, story, plan);
        self
    }

    /// Every offending path: the shared read-only ones first, then those outside.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.shared_read_only
            .iter()
            .chain(&self.outside)
            .map(String::as_str)
    }

    /// This check as the error of the story `story_id`, or `None` when it is clean.
    pub fn into_violation(self, story_id: &str) -> Option<PerimeterViolation> {
        (!self.is_clean()).then(|| PerimeterViolation {
            story: story_id.to_owned(),
            shared_read_only: self.shared_read_only,
            outside: self.outside,
            links: self.links,
        })
    }
}

/// Checks the paths a story changed against its perimeter.
///
/// `changed` holds repo-relative, `/`-separated paths, as `git diff --name-only` reports them
/// (they are normalised before comparison anyway). Each path is [classified](classify): owned
/// paths are accepted, the others land in [`PerimeterCheck::shared_read_only`] or
/// [`PerimeterCheck::outside`], in input order.
///
/// ```
/// use epic_perimeter::check;
/// use epic_story_plan::Story;
///
/// let story = Story::new("cart-api", "Cart API", ["src/cart"]).sharing(["src/lib.rs"]);
/// let verdict = check(&["src/lib.rs", "src/cart/mod.rs", "Cargo.toml"], &story);
/// assert_eq!(verdict.shared_read_only, ["src/lib.rs"]);
/// assert_eq!(verdict.outside, ["Cargo.toml"]);
/// assert!(!verdict.is_clean());
/// assert!(check(&["src/cart/mod.rs"], &story).is_clean());
/// ```
pub fn check<I>(changed: I, story: &Story) -> PerimeterCheck
where
    I: IntoIterator,
    I::Item: AsRef<str>,
{
    let mut verdict = PerimeterCheck::default();
    for path in changed {
        let path = path.as_ref();
        match classify(path, story) {
            Placement::Owned => {}
            Placement::SharedReadOnly => verdict.shared_read_only.push(path.to_owned()),
            Placement::Outside => verdict.outside.push(path.to_owned()),
        }
    }
    verdict
}

/// Checks the paths a story changed, failing when any lies outside its owned paths.
///
/// The error lists every offending path with what to do about it; see [`PerimeterViolation`].
///
/// ```
/// use epic_perimeter::enforce;
/// use epic_story_plan::Story;
///
/// let story = Story::new("cart-api", "Cart API", ["src/cart"]).sharing(["src/lib.rs"]);
/// assert!(enforce(&["src/cart/mod.rs"], &story).is_ok());
///
/// let err = enforce(&["README.md", "src/lib.rs"], &story).unwrap_err();
/// assert_eq!(err.story, "cart-api");
/// assert_eq!(
///     err.to_string(),
///     "story `cart-api` changed paths outside its perimeter:\n\
///      - src/lib.rs (shared read-only: revert it, or ask for it in a story of its own)\n\
///      - README.md (not in the story's owned paths)"
/// );
/// ```
pub fn enforce<I>(changed: I, story: &Story) -> Result<(), PerimeterViolation>
where
    I: IntoIterator,
    I::Item: AsRef<str>,
{
    match check(changed, story).into_violation(&story.id) {
        Some(violation) => Err(violation),
        None => Ok(()),
    }
}

/// A story changed paths outside its owned paths; returned by [`enforce`].
///
/// Its message names the story, then lists one path a line, shared read-only paths first, each
/// with what to do about it, then the symbolic links that point where the story may not reach,
/// each with its target and why. Control characters in a path are escaped, so a hostile file name
/// cannot add lines of its own.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub struct PerimeterViolation {
    /// The id of the story.
    pub story: String,
    /// Changed paths under the story's shared read-only prefixes, as passed in.
    pub shared_read_only: Vec<String>,
    /// Changed paths outside the story's owned and shared prefixes, as passed in.
    pub outside: Vec<String>,
    /// Symbolic links that point outside the repository, into `.git`, or into paths of other
    /// stories or shared read-only ones.
    pub links: Vec<LinkViolation>,
}

impl fmt::Display for PerimeterViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "story `{}` changed paths outside its perimeter:",
            Escaped(&self.story)
        )?;
        for path in &self.shared_read_only {
            write!(
                f,
                "\n- {} (shared read-only: revert it, or ask for it in a story of its own)",
                Escaped(path)
            )?;
        }
        for path in &self.outside {
            if odd_name(path) {
                write!(
                    f,
                    "\n- {} (a file name with a newline, a control character or bytes that \
                     are not UTF-8, which epic never merges: rename or delete it)",
                    Escaped(path)
                )?;
            } else {
                write!(f, "\n- {} (not in the story's owned paths)", Escaped(path))?;
            }
        }
        for link in &self.links {
            write!(f, "\n- {link}")?;
        }
        Ok(())
    }
}

/// Whether `path` is a file name git can only show quoted (epic-git-ops writes those in double
/// quotes, as git does) or one with a control character: never accepted, whatever its prefix.
fn odd_name(path: &str) -> bool {
    path.starts_with('"') || path.chars().any(char::is_control)
}
