//! Where an epic's durable files live: `<git-common-dir>/epic/<epic_id>/`.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The name of the directory under the git common dir that holds every epic.
const EPICS: &str = "epic";

/// The state directory of one epic, `<git-common-dir>/epic/<epic_id>/`, and the paths of the
/// files in it.
///
/// It only computes paths; nothing is created until something is written. Ids are checked to
/// name a single path component ([`UnsafeId`]), so no id, however hostile, yields a path outside
/// the epic's directory. (Plan validation checks the stricter kebab-case form; this is the last
/// line of defence, not the rule.)
///
/// ```
/// use std::path::Path;
/// use epic_state_store::EpicDir;
///
/// let dir = EpicDir::new("/src/shop/.git", "checkout")?;
/// assert_eq!(dir.root(), Path::new("/src/shop/.git/epic/checkout"));
/// assert_eq!(dir.story_state("cart-api")?, Path::new("/src/shop/.git/epic/checkout/stories/cart-api.json"));
/// assert_eq!(dir.lock(), Path::new("/src/shop/.git/epic/checkout/lock"));
/// assert!(dir.story_state("../../hooks/pre-commit").is_err());
/// # Ok::<(), epic_state_store::UnsafeId>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EpicDir {
    root: PathBuf,
    epic_id: String,
}

impl EpicDir {
    /// The state directory of epic `epic_id` in the repository whose git common dir (`git
    /// rev-parse --git-common-dir`, shared by all its worktrees) is `git_common_dir`.
    pub fn new(git_common_dir: impl AsRef<Path>, epic_id: &str) -> Result<Self, UnsafeId> {
        check_id(IdKind::Epic, epic_id)?;
        Ok(Self {
            root: git_common_dir.as_ref().join(EPICS).join(epic_id),
            epic_id: epic_id.to_owned(),
        })
    }

    /// The epic's id.
    pub fn epic_id(&self) -> &str {
        &self.epic_id
    }

    /// `<git-common-dir>/epic/<epic_id>`.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `stories/`, which holds each story's state and task checkpoint.
    pub fn stories_dir(&self) -> PathBuf {
        self.root.join("stories")
    }

    /// `stories/<id>.json`, the story's [`StoryState`](crate::StoryState).
    pub fn story_state(&self, story_id: &str) -> Result<PathBuf, UnsafeId> {
        self.story_file(story_id, ".json")
    }

    /// `stories/<id>.plan.md`, the story's task checkpoint.
    pub fn story_plan(&self, story_id: &str) -> Result<PathBuf, UnsafeId> {
        self.story_file(story_id, ".plan.md")
    }

    /// `stories/<id>.rejected.patch`, the changes of the story's last failed task, kept when
    /// its worktree went back to the task's checkpoint (`git apply` it there to look at them).
    pub fn rejected_patch(&self, story_id: &str) -> Result<PathBuf, UnsafeId> {
        self.story_file(story_id, ".rejected.patch")
    }

    /// `revisions/<id>.json`, the story's merge revisions: each time its merge was red on the
    /// proven epic head and it went back to its coder (`--merge-revisions`). Beside `stories/`,
    /// not in it, where every `.json` file is a story's state.
    pub fn story_revisions(&self, story_id: &str) -> Result<PathBuf, UnsafeId> {
        check_id(IdKind::Story, story_id)?;
        Ok(self.root.join("revisions").join(format!("{story_id}.json")))
    }

    /// `transcripts/`.
    pub fn transcripts_dir(&self) -> PathBuf {
        self.root.join("transcripts")
    }

    /// `transcripts/<id>/`, the story's agent transcripts.
    pub fn transcripts(&self, story_id: &str) -> Result<PathBuf, UnsafeId> {
        check_id(IdKind::Story, story_id)?;
        Ok(self.transcripts_dir().join(story_id))
    }

    /// `events.jsonl`, the run's event log ([`EventLog`](crate::EventLog)).
    pub fn events(&self) -> PathBuf {
        self.root.join("events.jsonl")
    }

    /// `board.md`, the local board.
    pub fn board(&self) -> PathBuf {
        self.root.join("board.md")
    }

    /// `report.json`, the last run's report.
    pub fn report_json(&self) -> PathBuf {
        self.root.join("report.json")
    }

    /// `report.md`, the last run's report for people.
    pub fn report_md(&self) -> PathBuf {
        self.root.join("report.md")
    }

    /// `report.html`, the report as one HTML page with pictures: written by `epic report
    /// --open`, which opens it in the browser (a run does not write it).
    pub fn report_html(&self) -> PathBuf {
        self.root.join("report.html")
    }

    /// `merging.json`, the journal of the merge being proven: written before a story is merged
    /// into the epic branch, removed once the merge is proven or undone.
    pub fn merge_journal(&self) -> PathBuf {
        self.root.join("merging.json")
    }

    /// `proven.json`, the last epic head a run proved (its merge's gates green, or the head a
    /// run started from): the one commit a merge left unproven by a run that died may be undone
    /// to.
    pub fn proven_head(&self) -> PathBuf {
        self.root.join("proven.json")
    }

    /// `options.json`, the options the last run was given (the command line over `epic.toml`
    /// over the run before), which a rerun given none reuses.
    pub fn run_options(&self) -> PathBuf {
        self.root.join("options.json")
    }

    /// `attestations/`, the copies of the attestations the epic's merges carry as git notes.
    pub fn attestations_dir(&self) -> PathBuf {
        self.root.join("attestations")
    }

    /// `attestations/<commit>.json`, the attestation of the epic branch's commit `commit` (its
    /// full hexadecimal id), as written beside its git note; `None` when `commit` is not a
    /// full hexadecimal id (40 or 64 digits).
    pub fn attestation(&self, commit: &str) -> Option<PathBuf> {
        let full =
            matches!(commit.len(), 40 | 64) && commit.bytes().all(|byte| byte.is_ascii_hexdigit());
        full.then(|| self.attestations_dir().join(format!("{commit}.json")))
    }

    /// `origin.json`, where the epic branch started: the commit it was created at, and the
    /// branch that commit was taken from. Written when a run creates the epic branch.
    pub fn origin(&self) -> PathBuf {
        self.root.join("origin.json")
    }

    /// `plan.json`, the plan and the branch the epic was started from, as its last run recorded
    /// them: what `epic land` reads to know each story's paths, and where to land by default.
    pub fn run_plan(&self) -> PathBuf {
        self.root.join("plan.json")
    }

    /// `landing.json`, the journal of a landing under way (`epic land`): written before the
    /// target is merged into the epic branch, updated with the landing commit before the target
    /// moves, removed once the landing is recorded or undone.
    pub fn landing_journal(&self) -> PathBuf {
        self.root.join("landing.json")
    }

    /// `landed.json`, the record of the epic's landing: target, merge commit, conflicts, rounds.
    pub fn landed(&self) -> PathBuf {
        self.root.join("landed.json")
    }

    /// `lock`, the file [`EpicLock`](crate::EpicLock) locks.
    pub fn lock(&self) -> PathBuf {
        self.root.join("lock")
    }

    /// The ids of the stories that have a state file, sorted; none when the epic has no state
    /// yet. Files whose name is not a safe id are left out.
    pub fn story_ids(&self) -> Result<Vec<String>, ListError> {
        let dir = self.stories_dir();
        let mut ids = list(&dir, |name| {
            let id = name.to_str()?.strip_suffix(".json")?;
            check_id(IdKind::Story, id).ok()?;
            Some(id.to_owned())
        })?;
        ids.sort();
        Ok(ids)
    }

    /// The ids of the epics that have a state directory in the repository whose git common dir
    /// is `git_common_dir`, sorted; none when there is none.
    pub fn epic_ids(git_common_dir: impl AsRef<Path>) -> Result<Vec<String>, ListError> {
        let dir = git_common_dir.as_ref().join(EPICS);
        let mut ids = list(&dir, |name| {
            let id = name.to_str()?;
            check_id(IdKind::Epic, id).ok()?;
            dir.join(id).is_dir().then(|| id.to_owned())
        })?;
        ids.sort();
        Ok(ids)
    }

    fn story_file(&self, story_id: &str, suffix: &str) -> Result<PathBuf, UnsafeId> {
        check_id(IdKind::Story, story_id)?;
        Ok(self.stories_dir().join(format!("{story_id}{suffix}")))
    }
}

/// The names in `dir` that `keep` maps to `Some`; a missing directory has none.
fn list(
    dir: &Path,
    mut keep: impl FnMut(&OsStr) -> Option<String>,
) -> Result<Vec<String>, ListError> {
    let to_error = |source| ListError {
        dir: dir.to_path_buf(),
        source,
    };
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(to_error(error)),
    };
    let mut names = Vec::new();
    for entry in entries {
        if let Some(name) = keep(&entry.map_err(to_error)?.file_name()) {
            names.push(name);
        }
    }
    Ok(names)
}

/// An error returned by [`EpicDir::story_ids`] and [`EpicDir::epic_ids`].
#[derive(Debug, thiserror::Error)]
#[error("failed to list directory `{}`", dir.display())]
pub struct ListError {
    /// The directory.
    pub dir: PathBuf,
    /// The OS error.
    #[source]
    pub source: io::Error,
}

/// Which kind of id an [`UnsafeId`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdKind {
    /// An epic id.
    Epic,
    /// A story id.
    Story,
}

impl IdKind {
    fn as_str(self) -> &'static str {
        match self {
            Self::Epic => "epic",
            Self::Story => "story",
        }
    }
}

/// An id that cannot name a file in the epic's directory: it would be empty, leave the
/// directory, or hide a control character. Returned by [`EpicDir`]'s constructor and paths.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UnsafeId {
    /// The id is empty.
    #[error("{} id is empty", kind.as_str())]
    Empty {
        /// Epic or story.
        kind: IdKind,
    },
    /// The id is `.` or `..`.
    #[error("{} id `{id}` names a directory, not a file in the epic's directory", kind.as_str())]
    Dots {
        /// Epic or story.
        kind: IdKind,
        /// The id.
        id: String,
    },
    /// The id contains `/` or `\` (which would reach into or out of another directory) or `:`
    /// (a drive prefix on Windows).
    #[error("{} id `{id}` contains a path separator or drive colon", kind.as_str())]
    Separator {
        /// Epic or story.
        kind: IdKind,
        /// The id.
        id: String,
    },
    /// The id contains a control character (NUL, newline, …).
    #[error("{} id {id:?} contains a control character", kind.as_str())]
    Control {
        /// Epic or story.
        kind: IdKind,
        /// The id.
        id: String,
    },
}

pub(crate) fn check_id(kind: IdKind, id: &str) -> Result<(), UnsafeId> {
    let owned = || id.to_owned();
    if id.is_empty() {
        Err(UnsafeId::Empty { kind })
    } else if id == "." || id == ".." {
        Err(UnsafeId::Dots { kind, id: owned() })
    } else if id.contains(['/', '\\', ':']) {
        Err(UnsafeId::Separator { kind, id: owned() })
    } else if id.chars().any(char::is_control) {
        Err(UnsafeId::Control { kind, id: owned() })
    } else {
        Ok(())
    }
}
