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

    /// `epic ARGS` at `repo`'s root with the stand-ins first on `PATH`, ready to spawn.
    pub(crate) fn command(&self, repo: &Repo, args: &[&str]) -> std::process::Command {
        let mut command = repo.command(args);
        self.inner.apply(&mut command).env("COLUMNS", "100");
        command
    }

    /// Runs `epic ARGS` at `repo`'s root with the stand-ins first on `PATH`.
    pub(crate) fn run(&self, repo: &Repo, args: &[&str]) -> Run {
        Run::of(self.command(repo, args).output().expect("run `epic`"))
    }
}
