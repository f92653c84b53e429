//! Helpers: a temporary directory of plan files and a run of `epic` in it, rendered for
//! snapshots.

use std::fmt;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use tempfile::TempDir;

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
