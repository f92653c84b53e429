//! [`Pictures`]: what the HTML page draws beyond the report itself, gathered by the caller from
//! the plan (the dependencies) and the event log (the turns, gates, batches, pauses and waits).

use jiff::Timestamp;

/// What [`render_html`](crate::render_html) draws beside the report: the plan's dependency
/// graph and the activities of the timeline. Both may be empty: the graph then shows the
/// report's stories without edges, the timeline only each story's span.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pictures {
    /// The plan's stories in plan order, each with the stories it depends on.
    pub graph: Vec<Node>,
    /// What happened when, each on a lane of the timeline.
    pub activities: Vec<Activity>,
}

/// One story of the dependency graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// The story's id.
    pub id: String,
    /// The ids of the stories it depends on.
    pub depends_on: Vec<String>,
}

impl Node {
    /// A story depending on `depends_on`.
    pub fn new(
        id: impl Into<String>,
        depends_on: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self {
            id: id.into(),
            depends_on: depends_on.into_iter().map(Into::into).collect(),
        }
    }
}

/// Something that took time (or happened at an instant: `start == finish`) on a lane of the
/// timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct Activity {
    /// The row it is drawn on.
    pub lane: Lane,
    /// What it was.
    pub kind: ActivityKind,
    /// When it began.
    pub start: Timestamp,
    /// When it ended; the same as `start` for an instant.
    pub finish: Timestamp,
    /// A few words shown on hover (the gate's command, the batch's stories, the pause's reason).
    pub label: String,
}

/// The row of the timeline an [`Activity`] is drawn on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lane {
    /// A story's row (under its span).
    Story(String),
    /// The merge queue's row: the batches.
    Merge,
    /// A seat's row: its pauses.
    Seat(String),
}

/// What an [`Activity`] was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActivityKind {
    /// An agent turn, by its role (`coder`, `judge`, `reviewer`, `planner`, …).
    Turn {
        /// The turn's role.
        role: String,
    },
    /// A gate command's run.
    Gate {
        /// Whether it passed.
        passed: bool,
    },
    /// A story's merge into the epic branch, from its start to its end.
    Merge {
        /// Whether it was proven.
        merged: bool,
    },
    /// A batch of the merge queue, from when it was taken to its last gate run.
    Batch {
        /// Whether it (or part of it) was proven.
        proven: bool,
    },
    /// A merge revision began (an instant).
    Revision,
    /// A seat paused by a usage limit or an outage.
    Pause,
    /// A story waiting for a person's answer.
    Waiting,
}

impl ActivityKind {
    /// The CSS class that colours it.
    pub(crate) fn class(&self) -> String {
        match self {
            Self::Turn { role } => {
                let role: String = role.chars().filter(char::is_ascii_alphanumeric).collect();
                format!("turn turn-{}", role.to_ascii_lowercase())
            }
            Self::Gate { passed: true } => "gate gate-ok".to_owned(),
            Self::Gate { passed: false } => "gate gate-red".to_owned(),
            Self::Merge { merged: true } | Self::Batch { proven: true } => {
                "merge merge-ok".to_owned()
            }
            Self::Merge { merged: false } | Self::Batch { proven: false } => {
                "merge merge-red".to_owned()
            }
            Self::Revision => "revision".to_owned(),
            Self::Pause => "pause".to_owned(),
            Self::Waiting => "waiting".to_owned(),
        }
    }

    /// Its name, for the hover text.
    pub(crate) fn name(&self) -> String {
        match self {
            Self::Turn { role } => format!("{role} turn"),
            Self::Gate { passed: true } => "gate passed".to_owned(),
            Self::Gate { passed: false } => "gate failed".to_owned(),
            Self::Merge { merged: true } => "merge".to_owned(),
            Self::Merge { merged: false } => "merge undone".to_owned(),
            Self::Batch { proven: true } => "batch proven".to_owned(),
            Self::Batch { proven: false } => "batch red".to_owned(),
            Self::Revision => "merge revision".to_owned(),
            Self::Pause => "seat paused".to_owned(),
            Self::Waiting => "waiting for an answer".to_owned(),
        }
    }
}

/// `text` with `&`, `<`, `>`, `"` and `'` escaped: safe in HTML and SVG text and attributes.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters other than whitespace are not allowed in XML text.
            c if c.is_control() && !matches!(c, '\n' | '\t') => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}
