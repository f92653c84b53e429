//! The stand-in agent the executor's and the CLI's tests write: a POSIX shell script that reads
//! its prompt and answers by role (`EPIC_ROLE`), as a cooperative agent would unless the test
//! gives a role a body of its own.

use std::fmt::Write as _;
use std::path::Path;

use crate::files::executable;

/// A planner's reply with one task.
pub const ONE_TASK: &str = r#"{"tasks":[{"title":"write it","description":"the file"}]}"#;

/// A judge's or reviewer's reply that clears the story.
pub const CLEAN: &str = r#"{"clean":true,"issues":[]}"#;

/// One arm of the `case`: a pattern and its shell, or arms written out whole.
#[derive(Debug, Clone)]
enum Arm {
    Role(String, String),
    Raw(String),
}

/// A stand-in agent: `#!/bin/sh`, a first line that reads the prompt, then a `case` on
/// `$EPIC_ROLE` with an arm per role the test set, the planner planning [`ONE_TASK`] and every
/// other role answering [`CLEAN`] unless set.
///
/// ```
/// use epic_test_support::RoleAgent;
///
/// let text = RoleAgent::new()
///     .coder(r#"mkdir -p "$EPIC_STORY" && echo done > "$EPIC_STORY/$EPIC_STORY.txt""#)
///     .text();
/// assert!(text.starts_with("#!/bin/sh\ncat > /dev/null\ncase \"$EPIC_ROLE\" in\n"));
/// assert!(text.contains("\ncoder) mkdir -p"));
/// assert!(text.ends_with("*) echo '{\"clean\":true,\"issues\":[]}' ;;\nesac\n"));
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct RoleAgent {
    prelude: String,
    arms: Vec<Arm>,
    planner: String,
    otherwise: String,
}

impl Default for RoleAgent {
    fn default() -> Self {
        Self::new()
    }
}

impl RoleAgent {
    /// An agent that discards its prompt, plans one task and clears every story.
    pub fn new() -> Self {
        Self {
            prelude: "cat > /dev/null".to_owned(),
            arms: Vec::new(),
            planner: format!("echo '{ONE_TASK}'"),
            otherwise: format!("echo '{CLEAN}'"),
        }
    }

    /// Shell run before the `case` instead of `cat > /dev/null`; it must read the prompt (say
    /// `prompt=$(cat)` to keep it in `$prompt`).
    pub fn prelude(mut self, shell: &str) -> Self {
        shell.clone_into(&mut self.prelude);
        self
    }

    /// The planner runs `shell` (default: echoes [`ONE_TASK`]).
    pub fn planner(mut self, shell: &str) -> Self {
        shell.clone_into(&mut self.planner);
        self
    }

    /// The coder runs `shell` (default: prints nothing, changes nothing).
    pub fn coder(self, shell: &str) -> Self {
        self.role("coder", shell)
    }

    /// Roles matching `pattern` (a `case` pattern: `judge`, `judge|reviewer`) run `shell`, in
    /// the order set, before the planner's arm.
    pub fn role(mut self, pattern: &str, shell: &str) -> Self {
        self.arms
            .push(Arm::Role(pattern.to_owned(), shell.to_owned()));
        self
    }

    /// `case` arms written out whole (`coder) …;;` lines), in the order set among the others,
    /// before the planner's arm: for a test that composes its arms itself.
    pub fn arms(mut self, arms: &str) -> Self {
        self.arms.push(Arm::Raw(arms.to_owned()));
        self
    }

    /// Every role without an arm runs `shell` (default: echoes [`CLEAN`]).
    pub fn otherwise(mut self, shell: &str) -> Self {
        shell.clone_into(&mut self.otherwise);
        self
    }

    /// The script's text.
    pub fn text(&self) -> String {
        let mut text = format!("#!/bin/sh\n{}\ncase \"$EPIC_ROLE\" in\n", self.prelude);
        let planner = Arm::Role("planner".to_owned(), self.planner.clone());
        let otherwise = Arm::Role("*".to_owned(), self.otherwise.clone());
        for arm in self.arms.iter().chain([&planner, &otherwise]) {
            let (pattern, shell) = match arm {
                Arm::Raw(arms) => {
                    text.push_str(arms.trim_end());
                    text.push('\n');
                    continue;
                }
                Arm::Role(pattern, shell) => (pattern, shell.trim_end()),
            };
            // Writing to a `String` cannot fail.
            let _infallible = if shell.contains('\n') {
                writeln!(text, "{pattern})\n{shell}\n;;")
            } else {
                writeln!(text, "{pattern}) {shell} ;;")
            };
        }
        text.push_str("esac\n");
        text
    }

    /// Writes the script, executable, at `path`.
    pub fn write(&self, path: &Path) {
        executable(path, &self.text());
    }
}
