//! What epic answers an ACP agent that asks before it acts (`session/request_permission`) or
//! asks epic to write a file for it (`fs/write_text_file`): a pure function of the turn's
//! [`Access`], the story's perimeter and the request ([`decide`], [`decide_write`]), so every
//! answer is tested without an agent.
//!
//! The rule, for a turn that may edit ([`Access::Edit`]: a coder, a lander): an edit of a path
//! inside the story's owned paths is allowed once; one outside them, of `.git`, of a path epic
//! cannot place inside the worktree, or of a path it cannot tell at all is rejected, with the
//! reason the agent is shown; commands are allowed (the sandbox still holds them). For a
//! read-only turn ([`Access::ReadOnly`]: planner, judge, reviewer, architect, verifier) every
//! edit is rejected, and so is every command that is not plainly read-only ([`read_only`]).
//! Reads, searches, fetches and thinking are allowed for everyone. Nothing is ever answered
//! "always": each request is decided on its own.

use std::path::{Component, Path, PathBuf};

use epic_perimeter::{Placement, classify};
use epic_story_plan::Story;
use epic_story_plan::path::{UnsafePath, check_safe};
use serde_json::Value;

/// What a turn's agent may do to the worktree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Edit inside the story's owned paths and run commands: a coder's or a lander's turn.
    Edit,
    /// Read and run read-only commands: every other role's turn.
    ReadOnly,
}

/// What an agent asks permission for, read from its request's tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ask {
    /// The kind the agent gave the call (`edit`, `delete`, `move`, `execute`, `read`, `search`,
    /// `think`, `fetch`, `other`), `other` when it gave none.
    pub kind: String,
    /// Its title, as the agent wrote it (`Write src/lib.rs`, `Run cargo test`).
    pub title: String,
    /// The paths it names: its locations and the path-like fields of its raw input.
    pub paths: Vec<PathBuf>,
    /// The command it runs, for an `execute` call whose raw input names one.
    pub command: Option<String>,
}

impl Ask {
    /// The request of a tool call of `kind` (`None`: the agent gave none), `title`, the paths of
    /// its `locations` and its `raw_input`.
    pub fn new(
        kind: Option<&str>,
        title: Option<&str>,
        locations: impl IntoIterator<Item = PathBuf>,
        raw_input: Option<&Value>,
    ) -> Self {
        let mut paths: Vec<PathBuf> = locations.into_iter().collect();
        if let Some(Value::Object(input)) = raw_input {
            let mut named: Vec<&str> = PATH_KEYS
                .iter()
                .filter_map(|key| input.get(*key)?.as_str())
                .collect();
            // A patch's changes (Codex's `apply_patch`): keyed by path, or a list of `path`s.
            match input.get("changes") {
                Some(Value::Object(changes)) => named.extend(changes.keys().map(String::as_str)),
                Some(Value::Array(changes)) => named.extend(
                    changes
                        .iter()
                        .filter_map(|change| change.get("path")?.as_str()),
                ),
                _ => {}
            }
            for path in named.into_iter().map(PathBuf::from) {
                if !paths.contains(&path) {
                    paths.push(path);
                }
            }
        }
        let command = raw_input.and_then(|input| match input.get("command")? {
            Value::String(command) => Some(command.clone()),
            Value::Array(words) => Some(
                words
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            _ => None,
        });
        Self {
            kind: kind.unwrap_or("other").to_owned(),
            title: title.unwrap_or_default().to_owned(),
            paths,
            command,
        }
    }

    /// What the request is about, for an event: its first path (relative to `worktree` when
    /// inside it), else its command, else its title, else its kind.
    pub fn subject(&self, worktree: &Path) -> String {
        if let Some(path) = self.paths.first() {
            return shown(worktree, path);
        }
        if let Some(command) = &self.command {
            return command.clone();
        }
        if self.title.is_empty() {
            self.kind.clone()
        } else {
            self.title.clone()
        }
    }
}

/// `path` as an event shows it: relative to `worktree` when it lies inside, as given otherwise.
pub fn shown(worktree: &Path, path: &Path) -> String {
    match inside(worktree, path) {
        Ok(relative) if !relative.is_empty() => relative,
        _ => path.display().to_string(),
    }
}

/// The fields of a tool call's raw input that name a file it acts on, as the agents spell them
/// (Claude Code's `file_path`, Gemini CLI's `file_path` and `absolute_path`, Codex's `path`, a
/// move's `destination` or `new_path`).
const PATH_KEYS: &[&str] = &[
    "path",
    "file_path",
    "filePath",
    "absolute_path",
    "abs_path",
    "notebook_path",
    "destination",
    "new_path",
    "target",
];

/// epic's answer to one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Allowed, once.
    Allow,
    /// Rejected, once, for this reason (the agent is shown it where the protocol can carry it).
    Reject(String),
}

impl Decision {
    /// Whether it allows.
    pub fn allows(&self) -> bool {
        matches!(self, Self::Allow)
    }
}

/// Whether a call of `kind` changes files.
fn edits(kind: &str) -> bool {
    matches!(kind, "edit" | "delete" | "move")
}

/// Whether a call of `kind` only looks.
fn looks(kind: &str) -> bool {
    matches!(kind, "read" | "search" | "think" | "fetch")
}

/// epic's answer to a permission request `ask` in a turn with `access` on `story`, whose agent
/// works in `worktree`.
///
/// ```
/// use epic_acp::{Access, Ask, Decision, decide};
/// use epic_story_plan::Story;
///
/// let story = Story::new("cart", "Cart", ["src/cart"]);
/// let worktree = std::path::Path::new("/work/cart");
/// let edit = |path: &str| Ask::new(Some("edit"), None, [path.into()], None);
/// assert_eq!(decide(Access::Edit, &story, worktree, &edit("src/cart/mod.rs")), Decision::Allow);
/// assert_eq!(decide(Access::Edit, &story, worktree, &edit("/work/cart/src/cart/a.rs")), Decision::Allow);
/// let Decision::Reject(reason) = decide(Access::Edit, &story, worktree, &edit("src/lib.rs")) else {
///     panic!("allowed outside the perimeter");
/// };
/// assert!(reason.contains("`src/lib.rs`") && reason.contains("BLOCKED_ON:"), "{reason}");
/// assert!(!decide(Access::ReadOnly, &story, worktree, &edit("src/cart/mod.rs")).allows());
/// ```
pub fn decide(access: Access, story: &Story, worktree: &Path, ask: &Ask) -> Decision {
    let kind = ask.kind.as_str();
    if looks(kind) {
        return Decision::Allow;
    }
    if kind == "execute" {
        return match (access, &ask.command) {
            (Access::Edit, _) => Decision::Allow,
            (Access::ReadOnly, Some(command)) if read_only(command) => Decision::Allow,
            (Access::ReadOnly, Some(command)) => Decision::Reject(format!(
                "this turn is read-only: `{command}` may change files, and only commands that \
                 only read (ls, cat, grep, rg, find, git status/log/diff/show, …) are allowed"
            )),
            (Access::ReadOnly, None) => Decision::Reject(
                "this turn is read-only: epic could not tell which command this runs".to_owned(),
            ),
        };
    }
    if access == Access::ReadOnly {
        return Decision::Reject(format!(
            "this turn is read-only: it may read and reply, not change files ({})",
            if ask.title.is_empty() {
                kind
            } else {
                &ask.title
            }
        ));
    }
    if ask.paths.is_empty() {
        return if edits(kind) {
            Decision::Reject(
                "epic could not tell which file this changes; name the file, or write it \
                 through fs/write_text_file"
                    .to_owned(),
            )
        } else {
            // A call of no known kind that names no file: the sandbox holds it, and the
            // perimeter check after the turn proves what it changed.
            Decision::Allow
        };
    }
    for path in &ask.paths {
        if let Err(reason) = writable(story, worktree, path) {
            return Decision::Reject(reason);
        }
    }
    Decision::Allow
}

/// epic's answer to an `fs/write_text_file` of `path` in a turn with `access` on `story`: the
/// same rule as an edit's permission ([`decide`]), and on `Ok` the path to write (absolute,
/// inside `worktree`; whether it leads out through a link is for the caller, which sees the
/// disk, to check).
pub fn decide_write(
    access: Access,
    story: &Story,
    worktree: &Path,
    path: &Path,
) -> Result<PathBuf, String> {
    if access == Access::ReadOnly {
        return Err(format!(
            "this turn is read-only: epic writes no file for it (`{}`)",
            path.display()
        ));
    }
    let relative = writable(story, worktree, path)?;
    Ok(worktree.join(relative))
}

/// Where a read of `path` lands: inside `worktree` (absolute, or relative to it), with no `..`
/// that climbs out of it; whether a link leads out is for the caller to check on disk.
pub fn readable(worktree: &Path, path: &Path) -> Result<PathBuf, String> {
    let relative = inside(worktree, path)?;
    Ok(worktree.join(relative))
}

/// The worktree-relative spelling of `path` (absolute or relative to `worktree`), resolving
/// `.` and `..` lexically; an error naming the path when it does not lie inside.
pub fn inside(worktree: &Path, path: &Path) -> Result<String, String> {
    let outside = || {
        format!(
            "`{}` is outside the story's worktree; epic reads and writes only inside it",
            path.display()
        )
    };
    let relative = if path.is_absolute() {
        path.strip_prefix(worktree).map_err(|_| outside())?
    } else {
        path
    };
    let mut parts: Vec<String> = Vec::new();
    for component in relative.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_str().ok_or_else(outside)?.to_owned()),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop().ok_or_else(outside)?;
            }
            Component::RootDir | Component::Prefix(_) => return Err(outside()),
        }
    }
    Ok(parts.join("/"))
}

/// The worktree-relative path of `path` when a turn that may edit may write it; else the reason.
fn writable(story: &Story, worktree: &Path, path: &Path) -> Result<String, String> {
    let relative = inside(worktree, path)?;
    // The workspace's one safety check of a repository path: `.git` in any letter case (a
    // case-insensitive file system opens `.GIT/config` as `.git/config`), control characters.
    match check_safe(&relative) {
        Ok(()) => {}
        Err(UnsafePath::Empty) => {
            return Err("the worktree itself is not a file to write".to_owned());
        }
        Err(UnsafePath::GitDir) => {
            return Err(format!(
                "`{relative}` is git's own; epic commits for the story, and no turn writes in .git"
            ));
        }
        Err(other) => return Err(format!("`{relative}`: {other}")),
    }
    let owned = || {
        story
            .owned
            .iter()
            .map(|prefix| format!("`{prefix}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match classify(&relative, story) {
        Placement::Owned => Ok(relative),
        Placement::SharedReadOnly => Err(format!(
            "`{relative}` is shared read-only with story `{}`: it may be read, not changed; say \
             BLOCKED_ON: if you need it changed",
            story.id
        )),
        Placement::Outside => Err(format!(
            "`{relative}` is outside story `{}`'s owned paths ({}); say BLOCKED_ON: if you need \
             it changed",
            story.id,
            owned()
        )),
    }
}

/// Whether `command` plainly only reads: each of its pipeline's commands one that reads (a
/// short list, and git's reading subcommands), no output redirection, no command substitution,
/// no `find -delete`/`-exec`, no `sed -i`. Conservative: anything else counts as writing.
///
/// ```
/// use epic_acp::read_only;
///
/// assert!(read_only("git diff main -- src | head -50"));
/// assert!(read_only("rg -n 'fn main' src && ls -la"));
/// assert!(!read_only("cargo test"));
/// assert!(!read_only("cat a > b"));
/// assert!(!read_only("sed -i s/a/b/ src/lib.rs"));
/// assert!(!read_only("git commit -am wip"));
/// assert!(!read_only("ls $(rm -rf src)"));
/// ```
pub fn read_only(command: &str) -> bool {
    const READERS: &[&str] = &[
        "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "find", "fd", "tree",
        "pwd", "echo", "printf", "stat", "file", "du", "df", "which", "sort", "uniq", "cut", "tr",
        "diff", "cmp", "sed", "awk", "jq", "less", "more", "nl", "true", "basename", "dirname",
        "realpath", "readlink", "env", "date", "git",
    ];
    const GIT_READERS: &[&str] = &[
        "status",
        "log",
        "diff",
        "show",
        "blame",
        "grep",
        "ls-files",
        "ls-tree",
        "rev-parse",
        "cat-file",
        "branch",
        "describe",
        "shortlog",
    ];
    if command.contains(['>', '`']) || command.contains("$(") || command.contains("<(") {
        return false;
    }
    command
        .split(['|', ';', '&', '\n'])
        .map(str::trim)
        .filter(|segment| !segment.is_empty())
        .all(|segment| {
            let words: Vec<&str> = segment.split_whitespace().collect();
            let Some(program) = words.first() else {
                return true;
            };
            let program = program.rsplit('/').next().unwrap_or(program);
            if !READERS.contains(&program) {
                return false;
            }
            let args = &words[1..];
            match program {
                "git" => {
                    args.iter()
                        .find(|arg| !arg.starts_with('-'))
                        .is_some_and(|sub| GIT_READERS.contains(sub))
                        && !args.iter().any(|arg| {
                            matches!(*arg, "-d" | "-D" | "-m" | "-M" | "--delete" | "--output")
                                || arg.starts_with("--output=")
                        })
                }
                "find" => !args.iter().any(|arg| {
                    matches!(
                        *arg,
                        "-delete" | "-exec" | "-execdir" | "-ok" | "-fprint" | "-fprintf"
                    )
                }),
                "sed" => !args
                    .iter()
                    .any(|arg| arg.starts_with("-i") || *arg == "--in-place"),
                "awk" | "env" => args.is_empty(),
                _ => true,
            }
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn story() -> Story {
        Story::new("cart", "Cart", ["src/cart"]).sharing(["src/lib.rs"])
    }

    const WORKTREE: &str = "/w/cart";

    fn check(access: Access, kind: &str, paths: &[&str], input: Option<&Value>) -> Decision {
        let ask = Ask::new(
            Some(kind),
            Some("a call"),
            paths.iter().map(PathBuf::from),
            input,
        );
        decide(access, &story(), Path::new(WORKTREE), &ask)
    }

    fn reason(decision: Decision) -> String {
        match decision {
            Decision::Reject(reason) => reason,
            Decision::Allow => panic!("allowed"),
        }
    }

    #[test]
    fn a_coder_edits_its_owned_paths_and_nothing_else() {
        assert!(check(Access::Edit, "edit", &["src/cart/a.rs"], None).allows());
        assert!(check(Access::Edit, "edit", &["/w/cart/src/cart/a.rs"], None).allows());
        assert!(check(Access::Edit, "delete", &["./src/cart/old.rs"], None).allows());
        let outside = reason(check(Access::Edit, "edit", &["src/other.rs"], None));
        assert!(
            outside.contains("`src/other.rs` is outside story `cart`'s owned paths (`src/cart`)")
                && outside.contains("BLOCKED_ON:"),
            "{outside}"
        );
        let shared = reason(check(Access::Edit, "edit", &["src/lib.rs"], None));
        assert!(shared.contains("shared read-only"), "{shared}");
        // A move names both ends: the destination must be owned too.
        let moved = check(
            Access::Edit,
            "move",
            &["src/cart/a.rs"],
            Some(&json!({"destination": "src/b.rs"})),
        );
        assert!(reason(moved).contains("`src/b.rs`"));
    }

    #[test]
    fn git_the_worktree_s_outside_and_climbs_are_rejected() {
        for path in [
            ".git/config",
            "/w/cart/.git/hooks/pre-commit",
            "src/cart/.git/x",
            "src/cart/.GIT/config",
        ] {
            let why = reason(check(Access::Edit, "edit", &[path], None));
            assert!(why.contains("git's own"), "{path}: {why}");
        }
        for path in [
            "/w/other/src/cart/a.rs",
            "../other/src/cart/a.rs",
            "src/cart/../../../x",
            "/etc/passwd",
        ] {
            let why = reason(check(Access::Edit, "edit", &[path], None));
            assert!(
                why.contains("outside the story's worktree"),
                "{path}: {why}"
            );
        }
        // `..` that stays inside is the path it names.
        assert!(check(Access::Edit, "edit", &["src/x/../cart/a.rs"], None).allows());
    }

    #[test]
    fn an_edit_naming_no_file_is_rejected_and_paths_come_from_the_raw_input() {
        assert!(reason(check(Access::Edit, "edit", &[], None)).contains("which file"));
        assert!(
            check(
                Access::Edit,
                "edit",
                &[],
                Some(&json!({"file_path": "/w/cart/src/cart/a.rs"}))
            )
            .allows()
        );
        assert!(
            !check(
                Access::Edit,
                "other",
                &[],
                Some(&json!({"path": "src/else.rs"}))
            )
            .allows()
        );
        assert!(check(Access::Edit, "other", &[], None).allows());
        // Codex's patch names its files as the keys of `changes`: each must be owned.
        let patch = |changes: Value| {
            check(
                Access::Edit,
                "edit",
                &[],
                Some(&json!({"changes": changes})),
            )
        };
        assert!(patch(json!({"/w/cart/src/cart/a.rs": {"add": {"content": "x"}}})).allows());
        assert!(!patch(json!({"/w/cart/src/cart/a.rs": {}, "/w/cart/src/b.rs": {}})).allows());
        assert!(!patch(json!([{"path": "src/b.rs"}])).allows());
    }

    #[test]
    fn a_coder_runs_commands_and_a_read_only_turn_only_reading_ones() {
        let run = |access, command: &str| {
            check(access, "execute", &[], Some(&json!({"command": command})))
        };
        assert!(run(Access::Edit, "cargo test").allows());
        assert!(run(Access::ReadOnly, "git log --oneline | head").allows());
        assert!(reason(run(Access::ReadOnly, "cargo test")).contains("read-only"));
        assert!(!run(Access::ReadOnly, "echo x > src/cart/a.rs").allows());
        assert!(
            check(
                Access::ReadOnly,
                "execute",
                &[],
                Some(&json!({"command": ["git", "status"]}))
            )
            .allows()
        );
        assert!(!check(Access::ReadOnly, "execute", &[], None).allows());
    }

    #[test]
    fn a_read_only_turn_edits_nothing_and_everyone_reads() {
        for kind in ["edit", "delete", "move", "other"] {
            let why = reason(check(Access::ReadOnly, kind, &["src/cart/a.rs"], None));
            assert!(why.contains("read-only"), "{kind}: {why}");
        }
        for access in [Access::Edit, Access::ReadOnly] {
            for kind in ["read", "search", "think", "fetch"] {
                assert!(check(access, kind, &["src/other.rs"], None).allows());
            }
        }
    }

    #[test]
    fn a_write_lands_inside_the_perimeter_or_not_at_all() {
        let story = story();
        let worktree = Path::new(WORKTREE);
        assert_eq!(
            decide_write(Access::Edit, &story, worktree, Path::new("src/cart/a.rs")),
            Ok(PathBuf::from("/w/cart/src/cart/a.rs"))
        );
        assert!(decide_write(Access::Edit, &story, worktree, Path::new("src/b.rs")).is_err());
        assert!(
            decide_write(
                Access::ReadOnly,
                &story,
                worktree,
                Path::new("src/cart/a.rs")
            )
            .is_err()
        );
        assert_eq!(
            readable(worktree, Path::new("/w/cart/src/lib.rs")),
            Ok(PathBuf::from("/w/cart/src/lib.rs"))
        );
        assert!(readable(worktree, Path::new("/w/cart/../secret")).is_err());
        assert!(readable(worktree, Path::new("/home/u/.ssh/id_rsa")).is_err());
    }
}
