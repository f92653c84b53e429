//! Helpers: a temporary directory of plan files and a run of `epic` in it, rendered for
//! snapshots.

use std::fmt;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use tempfile::TempDir;

/// How long a test waits for an event a child `epic` process must soon write before it fails
/// (the shared bound of every crate's tests; [`RUN_PATIENCE`] for a whole run). Agents that wait
/// for the test to release them give up after twice as long, so a test that died does not leave
/// them behind for good. A test waits with [`wait_until`] (or [`wait_for`], [`poll`]): a look
/// every few milliseconds, never a sleep.
pub(crate) use epic_test_support::{PATIENCE, RUN_PATIENCE, poll, wait_for, wait_until};

/// The clock an `epic` process times its pauses and stall watchdog on, set with
/// `EPIC_TEST_CLOCK` ([`spawn`](Self::spawn)): a file holding a time that the test moves.
pub(crate) struct TestClock {
    file: PathBuf,
    now: std::cell::Cell<jiff::Timestamp>,
}

impl TestClock {
    /// A clock in `dir` reading `start`.
    pub(crate) fn new(dir: &Path, start: jiff::Timestamp) -> Self {
        let clock = Self {
            file: dir.join("clock"),
            now: std::cell::Cell::new(start),
        };
        clock.write();
        clock
    }

    /// Starts `command` on this clock, its standard output and error piped.
    pub(crate) fn spawn(&self, command: &mut std::process::Command) -> std::process::Child {
        command
            .env("EPIC_TEST_CLOCK", &self.file)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start `epic`")
    }

    /// Moves the clock `by` later; the `epic` process sees it within milliseconds.
    pub(crate) fn advance(&self, by: std::time::Duration) {
        let by = jiff::SignedDuration::try_from(by).expect("a short duration");
        self.now
            .set(self.now.get().checked_add(by).expect("a time in range"));
        self.write();
    }

    /// Writes the time whole, so that `epic` never reads half of it.
    fn write(&self) {
        let next = self.file.with_extension("next");
        std::fs::write(&next, self.now.get().to_string()).expect("write the clock");
        std::fs::rename(&next, &self.file).expect("move the clock");
    }
}

/// A temporary working directory to write plan files into and run `epic` in.
pub(crate) struct Dir {
    dir: TempDir,
}

impl Dir {
    pub(crate) fn new() -> Self {
        Self {
            dir: TempDir::new().expect("create a temporary directory"),
        }
    }

    /// A directory holding one file.
    pub(crate) fn with(name: &str, contents: impl AsRef<[u8]>) -> Self {
        let dir = Self::new();
        dir.write(name, contents);
        dir
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn write(&self, name: &str, contents: impl AsRef<[u8]>) {
        std::fs::write(self.dir.path().join(name), contents).expect("write a plan file");
    }

    /// Runs `epic ARGS` with this directory as the current directory.
    pub(crate) fn run(&self, args: &[&str]) -> Run {
        run_in(self.dir.path(), args)
    }
}

/// The workspace root, where `examples/` lives.
pub(crate) fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `epic ARGS` in `dir`, with a fixed environment (no colours, a wide terminal).
pub(crate) fn run_in(dir: &Path, args: &[&str]) -> Run {
    let output = Command::cargo_bin("epic")
        .expect("the `epic` binary is built")
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .env_remove("CLICOLOR_FORCE")
        // Repository discovery stops at the temporary directory: a test outside a repository
        // stays outside one even when the temporary directory lies inside a checkout.
        .env("GIT_CEILING_DIRECTORIES", std::env::temp_dir())
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .expect("run `epic`");
    Run {
        stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
        code: output.status.code(),
    }
}

/// What one run of `epic` printed and how it exited.
///
/// Displays as the snapshot layout: stdout, `[EOF]`, a `------- stderr -------` line, stderr,
/// `[EOF]`, and `[exit status: N]`. `[EOF]` right after text shows a missing final newline.
pub(crate) struct Run {
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) code: Option<i32>,
}

impl Run {
    /// What a finished `epic` printed and how it exited.
    pub(crate) fn of(output: std::process::Output) -> Self {
        Self {
            stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
            stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
            code: output.status.code(),
        }
    }

    /// Stdout parsed as JSON.
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|error| panic!("stdout is not JSON ({error}):\n{self}"))
    }

    /// Asserts the exit code and that nothing panicked.
    #[track_caller]
    pub(crate) fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, Some(code), "unexpected exit status:\n{self}");
        assert!(!self.stderr.contains("panicked"), "panicked:\n{self}");
        self
    }
}

impl Run {
    /// This run with every `from` in its output replaced by `to` (temporary paths, pids, hosts,
    /// times), longest `from` first so a path is replaced before a prefix of it.
    #[must_use]
    pub(crate) fn redact(mut self, replacements: &[(&str, &str)]) -> Self {
        let mut replacements: Vec<&(&str, &str)> = replacements
            .iter()
            .filter(|(from, _)| !from.is_empty())
            .collect();
        replacements.sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
        for (from, to) in replacements {
            self.stdout = self.stdout.replace(from, to);
            self.stderr = self.stderr.replace(from, to);
        }
        self
    }
}

impl fmt::Display for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[EOF]\n------- stderr -------\n", self.stdout)?;
        writeln!(f, "{}[EOF]", self.stderr)?;
        match self.code {
            Some(code) => write!(f, "[exit status: {code}]"),
            None => write!(f, "[killed by a signal]"),
        }
    }
}

/// A valid plan of three stories in two waves, as JSON.
pub(crate) const SHOP_JSON: &str = r#"{
  "epic_id": "shop",
  "epic": "A small shop.",
  "stories": [
    {
      "id": "cart-api",
      "title": "Cart API",
      "owned": ["src/cart"],
      "provides": ["cart::Cart"]
    },
    {
      "id": "cart-ui",
      "title": "Cart page",
      "depends_on": ["cart-api"],
      "owned": ["web/cart"],
      "shared_read_only": ["src/cart"]
    },
    {
      "id": "docs",
      "title": "Docs",
      "owned": ["docs"]
    }
  ]
}
"#;

/// [`SHOP_JSON`] as TOML.
pub(crate) const SHOP_TOML: &str = r#"epic_id = "shop"
epic = "A small shop."

[[stories]]
id = "cart-api"
title = "Cart API"
owned = ["src/cart"]
provides = ["cart::Cart"]

[[stories]]
id = "cart-ui"
title = "Cart page"
depends_on = ["cart-api"]
owned = ["web/cart"]
shared_read_only = ["src/cart"]

[[stories]]
id = "docs"
title = "Docs"
owned = ["docs"]
"#;

/// [`SHOP_JSON`] in a Markdown document.
pub(crate) fn shop_markdown() -> String {
    format!("# Shop\n\nSome prose first.\n\n```json storyplan\n{SHOP_JSON}```\n\nMore prose.\n")
}

/// A git repository in a temporary directory, with one commit, to run `epic` in:
/// `epic-test-support`'s, with no identity configured (as on a machine without
/// `~/.gitconfig`), its main worktree `shop` (`[REPO]` in the output), and the ways to run `epic`
/// in it. What the shared builder offers (`path`, `write`, `read`, `common_dir`, `rev`, …) comes
/// through `Deref`.
pub(crate) struct Repo {
    inner: epic_test_support::Repo,
}

impl std::ops::Deref for Repo {
    type Target = epic_test_support::Repo;

    fn deref(&self) -> &Self::Target {
        &self.inner
    }
}

impl Repo {
    /// `main` with `README.md` (`# shop`) committed as `first`. The repository is a directory
    /// inside the temporary one, so that its worktrees (`<repo-parent>/<repo-name>.worktrees`)
    /// are inside it too and go with it; its path is resolved, as git reports it.
    pub(crate) fn new() -> Self {
        let inner = epic_test_support::Repo::builder()
            .prefix("cli-")
            .dir("shop")
            .identity(epic_test_support::Identity::Unconfigured)
            .files(&[("README.md", "# shop\n")])
            .message("first")
            .build();
        Self { inner }
    }

    /// Runs `git ARGS` at the root and returns its stdout.
    pub(crate) fn git_output(&self, args: &[&str]) -> String {
        self.inner.git(args)
    }

    /// Runs `git ARGS` at the root; panics unless it succeeds.
    pub(crate) fn git(&self, args: &[&str]) {
        self.inner.git(args);
    }

    /// The temporary directory holding the repository (and its worktrees).
    pub(crate) fn temp(&self) -> &Path {
        self.inner.root()
    }

    /// `epic ARGS` at the root, ready to spawn (for runs that tests watch or interrupt).
    pub(crate) fn command(&self, args: &[&str]) -> std::process::Command {
        let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("epic"));
        command
            .args(args)
            .current_dir(self.path())
            .env("NO_COLOR", "1")
            .env("GIT_CEILING_DIRECTORIES", std::env::temp_dir())
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE");
        command
    }

    /// Runs `epic ARGS` at the repository root; its path reads `[REPO]` in the output.
    pub(crate) fn run(&self, args: &[&str]) -> Run {
        self.run_in("", args)
    }

    /// Runs `epic ARGS` in the subdirectory `sub` (created if needed).
    pub(crate) fn run_in(&self, sub: &str, args: &[&str]) -> Run {
        let dir = self.path().join(sub);
        std::fs::create_dir_all(&dir).expect("create the directory");
        let root = self.path().display().to_string();
        run_in(&dir, args).redact(&[(&root, "[REPO]")])
    }
}

impl Repo {
    /// The state directory of epic `id` (nothing is created).
    pub(crate) fn epic(&self, id: &str) -> epic_state_store::EpicDir {
        epic_state_store::EpicDir::new(self.common_dir(), id).expect("a safe epic id")
    }

    /// Where story `id` of `epic` has its worktree: `<repo>.worktrees/<epic>/<id>`, which
    /// reads `[REPO].worktrees/…` in the output.
    pub(crate) fn worktree_of(
        &self,
        epic: &epic_state_store::EpicDir,
        id: &str,
    ) -> std::path::PathBuf {
        std::path::PathBuf::from(format!(
            "{}.worktrees/{}/{id}",
            self.path().display(),
            epic.epic_id()
        ))
    }

    /// Saves story `id`'s state file in `epic`, as a run does.
    pub(crate) fn story(
        &self,
        epic: &epic_state_store::EpicDir,
        id: &str,
        status: epic_state_store::StoryStage,
    ) {
        assert!(
            epic.root().starts_with(self.common_dir()),
            "an epic of this repository"
        );
        let state = epic_state_store::StoryState {
            id: id.to_owned(),
            hash: "9f86d081884c7d65".to_owned(),
            branch: format!("story/{}/{id}", epic.epic_id()),
            worktree: self.worktree_of(epic, id),
            status,
            merge: None,
            hold: None,
        };
        if status == epic_state_store::StoryStage::Started {
            // A started story's worktree is there; a merged one's was removed after its merge.
            std::fs::create_dir_all(self.worktree_of(epic, id)).expect("the story's worktree");
        }
        epic_state_store::save(epic.story_state(id).expect("a safe story id"), &state)
            .expect("save a story state");
    }

    /// Saves `report` as the epic's `report.json`, and `report.md` beside it when `markdown`.
    pub(crate) fn report(
        &self,
        epic: &epic_state_store::EpicDir,
        report: &epic_report::EpicReport,
        markdown: bool,
    ) {
        assert!(
            epic.root().starts_with(self.common_dir()),
            "an epic of this repository"
        );
        epic_state_store::save(
            epic.report_json(),
            &epic_events::ReportDocument(report.clone()),
        )
        .expect("save report.json");
        if markdown {
            epic_state_store::write_atomic(
                epic.report_md(),
                epic_report::render_markdown(report).as_bytes(),
            )
            .expect("write report.md");
        }
    }
}

/// The report of a run of epic `checkout`: one story done, one failed, one skipped.
pub(crate) fn checkout_report() -> epic_report::EpicReport {
    use epic_report::{EpicReport, OutcomeStatus, StoryOutcome, Timestamp};
    let at = |text: &str| text.parse::<Timestamp>().expect("an RFC 3339 time");
    EpicReport::new("checkout", "epic/checkout")
        .with_story(
            StoryOutcome::new("cart-api", "Cart API", OutcomeStatus::Done)
                .on_branch("story/checkout/cart-api")
                .started(at("2026-03-01T09:00:00Z"))
                .finished(at("2026-03-01T09:12:30Z")),
        )
        .with_story(
            StoryOutcome::new("payments", "Payments", OutcomeStatus::Failed)
                .on_branch("story/checkout/payments")
                .with_reason("gate `cargo test` failed after 3 review rounds")
                .started(at("2026-03-01T09:00:00Z"))
                .finished(at("2026-03-01T09:20:00Z")),
        )
        .with_story(
            StoryOutcome::new("cart-ui", "Cart page", OutcomeStatus::Skipped)
                .with_reason("depends on payments, which failed"),
        )
        .with_critical_path(["cart-api", "cart-ui"])
}

/// `text` with what changes from run to run masked: the `HH:MM:SS` that starts a progress line,
/// commit ids (10 or 40 hex digits), and estimated token counts (`~1.2k tokens`).
pub(crate) fn mask_volatile(text: &str) -> String {
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        let mut line = line.to_owned();
        let bytes = line.as_bytes();
        if bytes.len() >= 9
            && bytes[2] == b':'
            && bytes[5] == b':'
            && bytes[8] == b' '
            && [0, 1, 3, 4, 6, 7]
                .iter()
                .all(|&i| bytes[i].is_ascii_digit())
        {
            line.replace_range(..8, "[TIME]");
        }
        let words: Vec<String> = line
            .split(' ')
            .map(|word| {
                let core = word.trim_end_matches(['\n', ')', ',', ':']);
                let hex = (core.len() == 10 || core.len() == 40)
                    && core.chars().all(|c| c.is_ascii_hexdigit())
                    && core.chars().any(|c| c.is_ascii_digit());
                if hex {
                    word.replacen(core, "[COMMIT]", 1)
                } else if let Some(n) = core.strip_prefix("(~").or_else(|| core.strip_prefix('~'))
                    && n.chars().next().is_some_and(|c| c.is_ascii_digit())
                {
                    word.replacen(n, "[N]", 1)
                } else {
                    word.to_owned()
                }
            })
            .collect();
        out.push_str(&words.join(" "));
    }
    out
}

impl Run {
    /// This run with [`mask_volatile`] applied to both streams.
    #[must_use]
    pub(crate) fn masked(mut self) -> Self {
        self.stdout = mask_volatile(&self.stdout);
        self.stderr = mask_volatile(&self.stderr);
        self
    }
}

/// A plan of epic `shop` as JSON: each story `(id, depends_on, content)` owns `<id>/` and its
/// description has a `file <id>/<id>.txt` block with `content`, which the script seat writes.
pub(crate) fn file_plan(stories: &[(&str, &[&str], &str)]) -> String {
    let stories: Vec<serde_json::Value> = stories
        .iter()
        .map(|(id, depends_on, content)| {
            serde_json::json!({
                "id": id,
                "title": format!("Story {id}"),
                "description": format!("Write the file.\n\n```file {id}/{id}.txt\n{content}\n```\n"),
                "depends_on": depends_on,
                "owned": [id],
            })
        })
        .collect();
    serde_json::to_string_pretty(&serde_json::json!({"epic_id": "shop", "stories": stories}))
        .expect("a plan serialises")
}
