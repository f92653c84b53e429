//! The plan model of docs/contract.md: [`StoryPlan`] and [`Story`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An epic split into stories: what `epic validate`, `epic graph` and `epic run` read.
///
/// Field names are `snake_case`; the camelCase names of the reference executor (`epicId`, …) are
/// accepted on input so its plan files run unchanged. Unknown keys are ignored, so a plan written
/// for a newer `epic` still loads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "StoryPlan")]
pub struct StoryPlan {
    /// The epic's id: kebab-case (`^[a-z0-9][a-z0-9-]*$`), at most 64 characters. Names the epic
    /// branch `epic/<epic_id>` and the state directory.
    #[serde(alias = "epicId")]
    pub epic_id: String,
    /// What the epic is, as the operator phrased it.
    #[serde(default)]
    pub epic: String,
    /// The stories, in plan order (the tie-breaker of every ordering).
    pub stories: Vec<Story>,
}

/// One story: a unit of work an agent implements in its own worktree and branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Story {
    /// Kebab-case (`^[a-z0-9][a-z0-9-]*$`), at most 64 characters, unique in the plan. Names the
    /// branch `story/<epic_id>/<id>` and the worktree directory.
    pub id: String,
    /// A one-line title.
    pub title: String,
    /// What to build, in prose; precise enough to implement alone.
    #[serde(default)]
    pub description: String,
    /// Ids of the stories that must be merged into the epic branch before this one starts.
    #[serde(default, alias = "dependsOn")]
    pub depends_on: Vec<String>,
    /// Repo-relative path prefixes (files or directories) the story may create or change.
    pub owned: Vec<String>,
    /// Path prefixes the story may read but must never change.
    #[serde(default, alias = "sharedReadOnly")]
    pub shared_read_only: Vec<String>,
    /// What dependents may rely on: routes, exports, contracts.
    #[serde(default)]
    pub provides: Vec<String>,
    /// "Done when" criteria.
    #[serde(default)]
    pub acceptance: Vec<String>,
    /// Paths the agent should read first.
    #[serde(default, alias = "readFirst")]
    pub read_first: Vec<String>,
    /// Whether the story may delete, skip or rewrite tests.
    #[serde(default, alias = "testsChange")]
    pub tests_change: bool,
    /// How long the story's work is expected to take: `20m`, `1h 30m`, `90s` or ISO 8601
    /// (`PT20M`). Only the scheduler reads it, to weigh the critical path on a run with no
    /// measured durations yet; it is not part of the story hash, so revising it restarts nothing.
    /// (Named apart from the `estimate` of story points other tools write, which stays ignored.)
    #[serde(
        default,
        alias = "estimatedTime",
        skip_serializing_if = "Option::is_none"
    )]
    pub estimated_time: Option<String>,
}

impl StoryPlan {
    /// The first story with this id, if any.
    pub fn story(&self, id: &str) -> Option<&Story> {
        self.stories.iter().find(|story| story.id == id)
    }
}

impl Story {
    /// A story with the required fields set and every other field at its default.
    ///
    /// ```
    /// let story = epic_story_plan::Story::new("cart-api", "Cart API", ["src/cart"]);
    /// assert!(story.depends_on.is_empty());
    /// ```
    pub fn new(
        id: impl Into<String>,
        title: impl Into<String>,
        owned: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self {
            id: id.into(),
            title: title.into(),
            description: String::new(),
            depends_on: Vec::new(),
            owned: owned.into_iter().map(Into::into).collect(),
            shared_read_only: Vec::new(),
            provides: Vec::new(),
            acceptance: Vec::new(),
            read_first: Vec::new(),
            tests_change: false,
            estimated_time: None,
        }
    }

    /// The [`estimated_time`](Self::estimated_time) as a duration; `None` when there is none or it does not
    /// parse as a positive duration (which validation reports as `invalid_estimate`).
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let story = epic_story_plan::Story::new("a", "A", ["a"]).estimated("1h 30m");
    /// assert_eq!(story.estimated_duration(), Some(Duration::from_secs(90 * 60)));
    /// ```
    pub fn estimated_duration(&self) -> Option<std::time::Duration> {
        parse_estimate(self.estimated_time.as_deref()?).ok()
    }

    /// This story with this [`estimated_time`](Self::estimated_time).
    #[must_use]
    pub fn estimated(mut self, time: impl Into<String>) -> Self {
        self.estimated_time = Some(time.into());
        self
    }

    /// This story with these dependencies.
    #[must_use]
    pub fn depending_on(mut self, ids: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.depends_on = ids.into_iter().map(Into::into).collect();
        self
    }

    /// This story with these shared read-only paths.
    #[must_use]
    pub fn sharing(mut self, paths: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.shared_read_only = paths.into_iter().map(Into::into).collect();
        self
    }
}

/// An estimate as a positive duration, or why it is not one.
pub(crate) fn parse_estimate(text: &str) -> Result<std::time::Duration, &'static str> {
    let duration: jiff::SignedDuration = text
        .trim()
        .parse()
        .map_err(|_| "is not a duration: write it like \"20m\", \"1h 30m\" or \"90s\"")?;
    if duration.is_negative() || duration.is_zero() {
        return Err("is not positive");
    }
    std::time::Duration::try_from(duration).map_err(|_| "is out of range")
}

/// The JSON Schema of the plan document (what `epic schema plan` prints).
pub fn plan_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(StoryPlan)).unwrap_or_default()
}
