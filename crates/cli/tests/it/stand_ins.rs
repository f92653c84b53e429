//! The stand-ins for the real agent CLIs (`claude`, `codex`, `gemini`) are `epic-test-support`'s
//! (its `StandIns` docs say what they do and how a test chooses their behaviour); this adds
//! running `epic` with them first on `PATH`.

use crate::util::{Repo, Run};

pub(crate) use epic_test_support::{AGENTS, AgentError, Behaviour};

/// The shared stand-ins, and `epic` run with them ([`run`](Self::run)); everything else is the
/// shared type's, through `Deref`.
pub(crate) struct StandIns {
    inner: epic_test_support::StandIns,
}

impl std::ops::Deref for StandIns {
    type Target = epic_test_support::StandIns;

    fn deref(&self) -> &Self::Target {
        &self.inner
    }
}

impl StandIns {
    /// Writes `claude`, `codex` and `gemini` into a `bin` directory of their own.
    pub(crate) fn new() -> Self {
        Self {
            inner: epic_test_support::StandIns::new(),
        }
    }

    /// Runs `epic ARGS` at `repo`'s root with the stand-ins first on `PATH`.
    pub(crate) fn run(&self, repo: &Repo, args: &[&str]) -> Run {
        let mut command = repo.command(args);
        let output = self
            .inner
            .apply(&mut command)
            .env("COLUMNS", "100")
            .output()
            .expect("run `epic`");
        Run {
            stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
            stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
            code: output.status.code(),
        }
    }
}
