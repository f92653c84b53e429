//! The verdict shape shared by gates, judges and reviewers.
//!
//! It lives here because the perimeter gate is its first producer and `perimeter` is the one
//! crate below the executor that every producer can depend on.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A verdict on a piece of work: whether it may go on, and what is wrong with it.
///
/// Its JSON form is docs/contract.md's judge and reviewer reply,
/// `{"clean":bool,"issues":[{"severity":"critical|major|minor","title":"…","description":"…"}]}`.
/// `summary` (a one-line account for logs and reports) and `issues` may be left out of the input.
///
/// ```
/// use epic_perimeter::{Review, Severity};
///
/// let review: Review = serde_json::from_str(
///     r#"{"clean":false,"issues":[{"severity":"major","title":"no test","description":"add one"}]}"#,
/// )?;
/// assert!(!review.clean);
/// assert_eq!(review.summary, "");
/// assert_eq!(review.issues[0].severity, Severity::Major);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Review {
    /// Whether the work may go on as it is. A clean review may still carry minor issues.
    pub clean: bool,
    /// A one-line account of the verdict, such as `perimeter: clean`.
    #[serde(default)]
    pub summary: String,
    /// What is wrong, most important first by convention.
    #[serde(default)]
    pub issues: Vec<Issue>,
}

impl Review {
    /// A clean review without issues.
    pub fn clean(summary: impl Into<String>) -> Self {
        Self {
            clean: true,
            summary: summary.into(),
            issues: Vec::new(),
        }
    }

    /// A review that is not clean, for these issues.
    pub fn failed(summary: impl Into<String>, issues: Vec<Issue>) -> Self {
        Self {
            clean: false,
            summary: summary.into(),
            issues,
        }
    }

    /// Both verdicts as one: clean only if both are, with the issues of both in order and the
    /// non-empty summaries joined by `; `. How the gates of a round and the perimeter gate make
    /// one verdict.
    ///
    /// ```
    /// use epic_perimeter::{Issue, Review, Severity};
    ///
    /// let tests = Review::clean("tests: green");
    /// let perimeter = Review::failed(
    ///     "perimeter: violated",
    ///     vec![Issue::new(Severity::Critical, "perimeter", "README.md changed")],
    /// );
    /// let round = tests.combine(perimeter);
    /// assert!(!round.clean);
    /// assert_eq!(round.summary, "tests: green; perimeter: violated");
    /// assert_eq!(round.issues.len(), 1);
    /// ```
    #[must_use]
    pub fn combine(mut self, other: Self) -> Self {
        self.clean &= other.clean;
        if self.summary.is_empty() {
            self.summary = other.summary;
        } else if !other.summary.is_empty() {
            self.summary.push_str("; ");
            self.summary.push_str(&other.summary);
        }
        self.issues.extend(other.issues);
        self
    }
}

/// One problem a review found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Issue {
    /// How much it matters.
    pub severity: Severity,
    /// A short name for the problem.
    pub title: String,
    /// What is wrong and what to do about it. May be left out of the input.
    #[serde(default)]
    pub description: String,
}

impl Issue {
    /// An issue of this severity.
    pub fn new(
        severity: Severity,
        title: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        Self {
            severity,
            title: title.into(),
            description: description.into(),
        }
    }
}

/// How much an [`Issue`] matters; written in lowercase in JSON.
///
/// The order runs from the most severe, so sorting issues by severity puts critical ones first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The work must not go on: broken, unsafe, or outside the story.
    #[serde(alias = "Critical", alias = "CRITICAL")]
    Critical,
    /// Must be fixed before the work is done.
    #[serde(alias = "Major", alias = "MAJOR")]
    Major,
    /// Worth fixing; does not block.
    #[serde(alias = "Minor", alias = "MINOR")]
    Minor,
}

impl Severity {
    /// The lowercase name, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Critical => "critical",
            Self::Major => "major",
            Self::Minor => "minor",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
