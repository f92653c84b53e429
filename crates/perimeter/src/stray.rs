//! Planned tasks that name paths outside their story.

use epic_story_plan::path::{is_safe, normalize, within_normalized};
use epic_story_plan::{Story, StoryPlan};
use serde::{Deserialize, Serialize};

use crate::named::looks_like_file;
use crate::named::paths_named_in;
use crate::placement::{safe_normalized, under_any};

/// One task of a story's task plan, as [`stray_tasks`] reads it.
///
/// Its JSON form is an element of the planner's reply, `{"title":"…","description":"…"}`;
/// `description` and `completed` may be left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    /// A one-line title.
    pub title: String,
    /// What to do, in prose.
    #[serde(default)]
    pub description: String,
    /// Whether the task is done (ticked in the story's checkpoint). Done tasks are not checked.
    #[serde(default)]
    pub completed: bool,
}

impl Task {
    /// An open task.
    pub fn new(title: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            description: description.into(),
            completed: false,
        }
    }

    /// This task, ticked.
    #[must_use]
    pub fn done(mut self) -> Self {
        self.completed = true;
        self
    }
}

/// An open task whose prose names paths its story may not touch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StrayTask {
    /// The task's title.
    pub title: String,
    /// The paths it names that the story may not touch, normalised, in first-seen order.
    pub paths: Vec<String>,
    /// Whether another story of the plan owns one of those paths: the task is that story's
    /// work, not this one's.
    pub foreign: bool,
}

/// The open tasks of `story` whose title or description names paths outside the story.
///
/// The paths are those [`paths_named_in`] finds in the title and description. A path is allowed
/// when it is safe and lies within one of the story's owned or shared prefixes, or when it is a
/// directory (it does not [look like a file](paths_named_in)) above one of its owned prefixes,
/// as in "inside src/features". Completed tasks are skipped. A guess from prose: use it to
/// re-plan, not to fail a story.
///
/// ```
/// use epic_perimeter::{Task, stray_tasks};
/// use epic_story_plan::{Story, StoryPlan};
///
/// let plan = StoryPlan {
///     epic_id: "bank".into(),
///     epic: String::new(),
///     stories: vec![
///         Story::new("overview", "Overview", ["src/features/overview"]).sharing(["src/kit"]),
///         Story::new("home", "Home page", ["src/App.tsx"]),
///     ],
/// };
/// let tasks = [
///     Task::new("Build the page", "in src/features/overview, with src/kit/table.tsx"),
///     Task::new("Register the route in App.tsx", ""),
/// ];
/// let stray = stray_tasks(&plan, &plan.stories[0], &tasks);
/// assert_eq!(stray.len(), 1);
/// assert_eq!(stray[0].title, "Register the route in App.tsx");
/// assert_eq!(stray[0].paths, ["src/App.tsx"]);
/// assert!(stray[0].foreign);
/// ```
pub fn stray_tasks(plan: &StoryPlan, story: &Story, tasks: &[Task]) -> Vec<StrayTask> {
    let owned: Vec<String> = story
        .owned
        .iter()
        .filter(|path| is_safe(path))
        .map(|path| normalize(path))
        .collect();
    let allowed = |path: &str| {
        let Some(path) = safe_normalized(path) else {
            return false;
        };
        under_any(&path, &story.owned)
            || under_any(&path, &story.shared_read_only)
            || (!looks_like_file(&path) && owned.iter().any(|own| within_normalized(own, &path)))
    };
    let owned_elsewhere = |path: &str| {
        safe_normalized(path).is_some_and(|path| {
            plan.stories
                .iter()
                .any(|other| other.id != story.id && under_any(&path, &other.owned))
        })
    };

    tasks
        .iter()
        .filter(|task| !task.completed)
        .filter_map(|task| {
            let text = format!("{}\n{}", task.title, task.description);
            let paths: Vec<String> = paths_named_in(plan, &text)
                .into_iter()
                .filter(|path| !allowed(path))
                .collect();
            (!paths.is_empty()).then(|| StrayTask {
                title: task.title.clone(),
                foreign: paths.iter().any(|path| owned_elsewhere(path)),
                paths,
            })
        })
        .collect()
}
