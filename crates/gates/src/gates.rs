//! The project's checks: shell commands run in a directory, in order, each under a deadline.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use epic_git_ops::Git;
use epic_perimeter::{Issue, Review, Severity};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use epic_git_ops::FileHead;
use epic_guard::{Tampered, TurnGuard};

use crate::charged::GateTests;
use crate::charged::{Inherited, JunitFile, TestsUnread, failing_tests};
use epic_process::offload;
use epic_process::sandbox::{Access, Sandbox};
use epic_process::{self as process, Ending, Limits, Spec};

/// How much of a red gate's output its issue carries.
const GATE_TAIL: usize = 4000;

/// How much of a red gate's output is kept to read its failing tests from: runners print their
/// summary at the end, and a longer output is read only where the runner's count confirms it.
const PARSE_TAIL: usize = 256 * 1024;

/// The largest JUnit file read; a larger one leaves the command judged whole.
const JUNIT_LIMIT: usize = 16 * 1024 * 1024;

/// What happened to one gate command, as [`Gates::run`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateResult {
    /// The command.
    pub command: String,
    /// Whether it passed.
    pub passed: bool,
    /// How long it ran.
    pub duration: Duration,
    /// What happened, in words: `passed`, `exit code 1`, `timed out after 30s`, `could not
    /// start: …`.
    pub status: String,
    /// The files it left behind, removed since: untracked, not ignored, not there before it
    /// ran (`__pycache__/…`, `test-results.xml`, a `.snap.new`), sorted.
    pub leftovers: Vec<String>,
    /// Set when the command was red and then green when run again on the same tree (a flaky
    /// test, a port still in use): it counts as passed, and this keeps its first red run.
    pub flaky: Option<Flake>,
    /// Set when the command was red and named its failing tests (its output, or its JUnit
    /// file): those the story turned red and those already red before it. With none charged,
    /// the command counts as passed (`passed`).
    pub tests: Option<GateTests>,
}

/// The first, red run of a command that passed when run again ([`GateResult::flaky`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flake {
    /// How that run ended, in words (`exit code 1`, `timed out after 30s`).
    pub status: String,
    /// The end of its output (at most 4000 bytes), trimmed.
    pub output: String,
    /// How many runs it took to pass, the first included (2 with one rerun).
    pub runs: u32,
}

impl GateResult {
    /// The event telling that this command left files behind (removed since), if it did.
    pub fn leftovers_event(&self, story: Option<&str>) -> Option<epic_events::Event> {
        (!self.leftovers.is_empty()).then(|| epic_events::Event::GateLeftovers {
            story: story.map(str::to_owned),
            command: self.command.clone(),
            paths: self.leftovers.clone(),
        })
    }

    /// The event naming the failing tests of this red command, charged and inherited, if it
    /// named them: what each caller emits beside its passed or failed event, naming `story`
    /// when there is one.
    pub fn tests_event(&self, story: Option<&str>) -> Option<epic_events::Event> {
        self.tests
            .as_ref()
            .map(|tests| epic_events::Event::GateTests {
                story: story.map(str::to_owned),
                command: self.command.clone(),
                charged: tests.charged.clone(),
                inherited: tests.inherited.clone(),
            })
    }

    /// Whether it passed with every failing test inherited (red, but not charged).
    pub fn inherited_only(&self) -> bool {
        self.passed
            && self
                .tests
                .as_ref()
                .is_some_and(|tests| tests.charged.is_empty())
    }

    /// The gate as an attestation keeps it ([`epic_attest::AttestedGate`]): its command and exit
    /// code, flaky when it passed on a rerun (its runs and how the red one ended, not its
    /// output); `known_red` when the run allowed it to fail.
    pub fn attested(&self, known_red: bool) -> epic_attest::AttestedGate {
        epic_attest::AttestedGate {
            known_red,
            flaky: self.flaky.as_ref().map(|flake| epic_attest::AttestedFlake {
                runs: flake.runs,
                status: flake.status.clone(),
            }),
            ..epic_attest::AttestedGate::from_status(&self.command, &self.status, self.passed)
        }
    }

    /// The event telling that this command was red, then green when run again, if it was:
    /// what each caller emits beside its passed event, naming `story` when there is one.
    pub fn flaky_event(&self, story: Option<&str>) -> Option<epic_events::Event> {
        self.flaky
            .as_ref()
            .map(|flake| epic_events::Event::GateFlaky {
                story: story.map(str::to_owned),
                command: self.command.clone(),
                runs: flake.runs,
                status: flake.status.clone(),
                output: flake.output.clone(),
            })
    }
}

/// The gates were cancelled before they finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the gates were cancelled")]
pub struct GatesCancelled;

/// The project's gates: shell commands that must all pass for work to go on, which
/// the executor's task loop runs in a story's worktree each review round (and a run, on
/// the epic branch before it starts and after each merge).
///
/// Each runs as `sh -c COMMAND` in that directory, in its own process group, with standard
/// error merged into standard output, and is killed with its whole group at
/// the deadline. They run in order and stop at the first red one, which becomes the single
/// critical issue of the round's review: titled `gate failed: COMMAND`, described by the end of
/// its output (at most 4000 bytes; the output is never held whole in memory). No gates
/// configured is clean. In a run, each runs in the run's sandbox with only the directory it
/// runs in (and that worktree's administrative directory) writable ([`Sandbox`]).
///
/// ```
/// use epic_gates::Gates;
///
/// let gates = Gates::new(["cargo fmt --check", "cargo test"], std::time::Duration::from_secs(600));
/// assert_eq!(gates.commands(), ["cargo fmt --check", "cargo test"]);
/// ```
#[derive(Debug, Clone)]
pub struct Gates {
    commands: Vec<String>,
    timeout: Duration,
    sandbox: Sandbox,
    /// The guard on epic's files, checked after each command ([`TurnGuard::begin_command`]);
    /// none outside a run's stories.
    guard: Option<Arc<TurnGuard>>,
    /// The repository, to remove what each command leaves behind; none outside a run.
    git: Option<Tidy>,
    /// How many more times a red command runs on the same tree before it counts as red.
    reruns: u32,
    /// The JUnit file each command writes, by command (`gate_junit`): its failing tests are
    /// read from there rather than from its output.
    junit: Arc<BTreeMap<String, String>>,
    /// The tests red before, by command: a command red only with these counts as passed.
    inherited: Arc<Inherited>,
}

/// The repository through which [`Gates`] remove what a command left behind.
#[derive(Clone)]
struct Tidy(Arc<dyn Git>);

impl fmt::Debug for Tidy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Tidy")
    }
}

impl Gates {
    /// These commands, each with `timeout`.
    pub fn new(commands: impl IntoIterator<Item = impl Into<String>>, timeout: Duration) -> Self {
        Self {
            commands: commands.into_iter().map(Into::into).collect(),
            timeout,
            sandbox: Sandbox::off(),
            guard: None,
            git: None,
            reruns: 0,
            junit: Arc::default(),
            inherited: Arc::default(),
        }
    }

    /// These gates reading the failing tests of each command named in `junit` from the JUnit
    /// XML file it names (a path relative to the directory the command runs in), rather than
    /// from its output (`gate_junit`). A file not rewritten by the run, unreadable, or leading
    /// out of that directory leaves the command judged whole.
    #[must_use]
    pub fn with_junit(mut self, junit: BTreeMap<String, String>) -> Self {
        self.junit = Arc::new(junit);
        self
    }

    /// These gates not charging the tests in `inherited` (by command): a command red only with
    /// those passes, its result naming them ([`GateResult::tests`]).
    #[must_use]
    pub fn with_inherited(mut self, inherited: Inherited) -> Self {
        self.inherited = Arc::new(inherited);
        self
    }

    /// These gates running a red command up to `reruns` more times on the same tree before it
    /// counts as red (`--gate-reruns`; none by default): green on a rerun, it passed and its
    /// [`GateResult::flaky`] keeps the first run. A command that changed files epic guards is
    /// red at once, never rerun.
    #[must_use]
    pub fn with_reruns(mut self, reruns: u32) -> Self {
        self.reruns = reruns;
        self
    }

    /// These gates removing, after each command, the files it left behind in the directory it
    /// ran in: untracked, not ignored, and not there before it ran. They are never a story's
    /// work (never committed, never counted against its perimeter) and must not stand in the
    /// way of the next merge; each command's [`GateResult`] names them.
    #[must_use]
    pub fn with_tidying(mut self, git: Arc<dyn Git>) -> Self {
        self.git = Some(Tidy(git));
        self
    }

    /// These gates run in `sandbox`.
    #[must_use]
    pub fn with_sandbox(mut self, sandbox: Sandbox) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// These gates with `guard` checked after each command: a command that changed files epic
    /// guards is red, naming them (they are put back).
    #[must_use]
    pub fn with_guard(mut self, guard: Arc<TurnGuard>) -> Self {
        self.guard = Some(guard);
        self
    }

    /// No gates: every run is clean.
    pub fn none() -> Self {
        Self::new(Vec::<String>::new(), Duration::from_secs(1))
    }

    /// The commands, in order.
    pub fn commands(&self) -> &[String] {
        &self.commands
    }

    /// Runs the gates in `dir` with the extra environment `env` (a story's `EPIC_SLOT`, …);
    /// each command's result goes to `on_result` as it ends.
    ///
    /// # Cancel safety
    ///
    /// Cancelling `cancel` kills the running command's group and returns [`GatesCancelled`];
    /// dropping the future kills it as well.
    pub async fn run(
        &self,
        dir: &Path,
        env: &[(String, String)],
        cancel: &CancellationToken,
        on_result: &(dyn Fn(&GateResult) + Send + Sync),
    ) -> Result<Review, GatesCancelled> {
        for command in &self.commands {
            let (result, issue) = self.run_command(command, dir, env, cancel).await?;
            on_result(&result);
            if let Some(issue) = issue {
                return Ok(Review::failed(
                    format!("gate failed: {command}"),
                    vec![issue],
                ));
            }
        }
        Ok(Review::clean(if self.commands.is_empty() {
            "gates: none configured"
        } else {
            "gates: green"
        }))
    }

    /// Runs every gate in `dir`, red or not, and returns each one's result with its issue (for
    /// the red ones), in order: what a baseline needs, where [`run`](Self::run) stops at the
    /// first red gate.
    ///
    /// # Cancel safety
    ///
    /// As [`run`](Self::run).
    pub async fn run_each(
        &self,
        dir: &Path,
        env: &[(String, String)],
        cancel: &CancellationToken,
        on_result: &(dyn Fn(&GateResult) + Send + Sync),
    ) -> Result<Vec<(GateResult, Option<Issue>)>, GatesCancelled> {
        let mut results = Vec::with_capacity(self.commands.len());
        for command in &self.commands {
            let (result, issue) = self.run_command(command, dir, env, cancel).await?;
            on_result(&result);
            results.push((result, issue));
        }
        Ok(results)
    }

    /// This set of gates keeping only the commands `keep` accepts (the same timeout).
    #[must_use]
    pub fn only(&self, keep: impl Fn(&str) -> bool) -> Self {
        Self {
            commands: self
                .commands
                .iter()
                .filter(|command| keep(command))
                .cloned()
                .collect(),
            timeout: self.timeout,
            sandbox: self.sandbox.clone(),
            guard: self.guard.clone(),
            git: self.git.clone(),
            reruns: self.reruns,
            junit: Arc::clone(&self.junit),
            inherited: Arc::clone(&self.inherited),
        }
    }

    /// Runs one command, and again up to `reruns` times while it is red: its result (green if
    /// any run was, flaky if the first was not), and its issue when every run was red (the
    /// last run's). What each run left behind is removed after it; the result names them all.
    async fn run_command(
        &self,
        command: &str,
        dir: &Path,
        env: &[(String, String)],
        cancel: &CancellationToken,
    ) -> Result<(GateResult, Option<Issue>), GatesCancelled> {
        let first = self.run_once(command, dir, env, cancel).await?;
        if first.result.passed || !first.rerun {
            return Ok((first.result, first.issue));
        }
        let mut last = first.clone();
        let mut duration = first.result.duration;
        let mut leftovers = first.result.leftovers.clone();
        for run in 2..=self.reruns.saturating_add(1) {
            let again = self.run_once(command, dir, env, cancel).await?;
            duration += again.result.duration;
            leftovers.extend(again.result.leftovers.iter().cloned());
            leftovers.sort();
            leftovers.dedup();
            if again.result.passed {
                let result = GateResult {
                    duration,
                    leftovers,
                    flaky: Some(Flake {
                        status: first.result.status,
                        output: first.output,
                        runs: run,
                    }),
                    ..again.result
                };
                return Ok((result, None));
            }
            let rerun = again.rerun;
            last = again;
            if !rerun {
                break;
            }
        }
        last.result.duration = duration;
        last.result.leftovers = leftovers;
        Ok((last.result, last.issue))
    }

    /// Runs one command once.
    async fn run_once(
        &self,
        command: &str,
        dir: &Path,
        env: &[(String, String)],
        cancel: &CancellationToken,
    ) -> Result<Run, GatesCancelled> {
        let spec = Spec {
            program: "sh".into(),
            // `exec 2>&1` first: one interleaved stream, so the tail shows the error in
            // the context of what was printed before it.
            args: vec!["-c".into(), format!("exec 2>&1\n{command}").into()],
            cwd: dir.to_path_buf(),
            env: env
                .iter()
                .map(|(key, value)| (OsString::from(key), Some(OsString::from(value))))
                .collect(),
            stdin: None,
        };
        let spec = self.sandbox.wrap(spec, dir, Access::Worktree).await;
        let limits = Limits {
            stdout_head: 0,
            stdout_tail: PARSE_TAIL,
            stderr_tail: GATE_TAIL,
        };
        let junit = self.junit.get(command);
        let junit_before = match junit {
            Some(path) => Some(read_junit_file(dir, path).await),
            None => None,
        };
        let untracked = self.untracked(dir).await;
        let started = Instant::now();
        let session = self.guard.as_ref().map(TurnGuard::begin_command);
        let ran = process::run(&spec, started + self.timeout, cancel, limits, &|_: &str| {}).await;
        let duration = started.elapsed();
        // Read before the leftovers go: an untracked report is one of them.
        let junit_after = match (junit, &ran) {
            (Some(path), Ok(finished)) if matches!(finished.ending, Ending::Exited(status) if !status.success()) => {
                Some(read_junit_file(dir, path).await)
            }
            _ => None,
        };
        let leftovers = match untracked {
            Some(before) => self.remove_leftovers(dir, &before).await,
            None => Vec::new(),
        };
        if let Some(session) = session {
            let dir = dir.to_path_buf();
            let checked = offload::blocking(move || session.end(&dir)).await;
            let tampered = match checked {
                Ok(Ok(())) => None,
                Ok(Err(tampered)) => Some(tampered),
                Err(error) => Some(Box::new(Tampered {
                    unreadable: Some(error.to_string()),
                    ..Tampered::default()
                })),
            };
            if let Some(tampered) = tampered
                && !matches!(&ran, Ok(finished) if matches!(finished.ending, Ending::Cancelled))
            {
                return Ok(tampered_result(command, duration, &tampered, leftovers));
            }
        }
        let mut tests = None;
        let (status, output) = match ran {
            Err(error) => (format!("could not start: {error}"), String::new()),
            Ok(mut finished) => {
                if let Ending::Exited(status) = finished.ending
                    && !status.success()
                {
                    let junit = junit.zip(junit_before.as_ref()).zip(junit_after.as_ref());
                    let junit = junit.map(|((path, before), after)| (path.as_str(), before, after));
                    tests = Some(self.tests_of(command, &mut finished.stdout, junit));
                }
                let mut output = finished.stdout.last(GATE_TAIL);
                let err = finished.stderr.last(GATE_TAIL);
                if !err.trim().is_empty() {
                    output.push_str(&err);
                }
                match finished.ending {
                    Ending::Cancelled => return Err(GatesCancelled),
                    Ending::Exited(status) if status.success() => {
                        let result = GateResult {
                            command: command.to_owned(),
                            passed: true,
                            duration,
                            status: "passed".to_owned(),
                            leftovers,
                            flaky: None,
                            tests: None,
                        };
                        return Ok(Run {
                            result,
                            issue: None,
                            output: String::new(),
                            rerun: false,
                        });
                    }
                    Ending::Exited(status) => (process::describe_status(status), output),
                    // No watchdog on a gate: a stall would read as the time-out it stands for.
                    Ending::TimedOut | Ending::Stalled => (
                        format!("timed out after {}s", self.timeout.as_secs()),
                        output,
                    ),
                }
            }
        };
        Ok(self.red_run(command, status, output.trim(), tests, duration, leftovers))
    }

    /// The run of `command` that ended red with `status` and `output` (its end), `tests` the
    /// failing tests it named (`None` when it did not exit on its own): passed when each of
    /// them is inherited, else red with its issue naming the tests it turned red.
    fn red_run(
        &self,
        command: &str,
        status: String,
        output: &str,
        tests: Option<Result<GateTests, TestsUnread>>,
        duration: Duration,
        leftovers: Vec<String>,
    ) -> Run {
        let tests = match tests {
            Some(Ok(tests)) if tests.charged.is_empty() => {
                // Red only with tests red before: passed, never charged, never rerun.
                let result = GateResult {
                    command: command.to_owned(),
                    passed: true,
                    duration,
                    status: format!(
                        "{status}, only with tests already red before ({})",
                        tests.inherited.len()
                    ),
                    leftovers,
                    flaky: None,
                    tests: Some(tests),
                };
                return Run {
                    result,
                    issue: None,
                    output: String::new(),
                    rerun: false,
                };
            }
            Some(Ok(tests)) => Ok(tests),
            Some(Err(unread)) => Err(Some(unread)),
            None => Err(None),
        };
        let named = match &tests {
            Ok(tests) => format!("{}; ", tests.describe()),
            // Said only where it matters: tests were red on this command before.
            Err(Some(unread)) if self.inherited.contains_key(command) => {
                format!("judged whole, since {unread}; ")
            }
            Err(_) => String::new(),
        };
        let description = if output.is_empty() && named.is_empty() {
            format!("failed ({status}) without output.")
        } else if output.is_empty() {
            format!("failed ({status}); {named}no output.")
        } else {
            format!("failed ({status}); {named}its output ends with:\n{output}")
        };
        let result = GateResult {
            command: command.to_owned(),
            passed: false,
            duration,
            status,
            leftovers,
            flaky: None,
            tests: tests.ok(),
        };
        // The command once, in the title: the reason a person reads names it with the task.
        let issue = Issue::new(Severity::Critical, format!("gate `{command}`"), description);
        Run {
            result,
            issue: Some(issue),
            output: output.to_owned(),
            rerun: true,
        }
    }

    /// The failing tests of the red `command` whose output is `stdout` and JUnit file (when
    /// it has one) `junit`, charged against the tests red before.
    fn tests_of(
        &self,
        command: &str,
        stdout: &mut epic_process::bounded::BoundedText,
        junit: Option<(&str, &JunitFile, &JunitFile)>,
    ) -> Result<GateTests, TestsUnread> {
        let kept = stdout.text();
        let complete = stdout.total_chars() == kept.encode_utf16().count() as u64;
        let failing = failing_tests(&kept, complete, junit)?;
        Ok(GateTests::charge(failing, self.inherited.get(command)))
    }

    /// The untracked, not ignored files of `dir` before a command, when tidying (and the
    /// listing works: without it, nothing is removed).
    async fn untracked(&self, dir: &Path) -> Option<BTreeSet<String>> {
        let Tidy(git) = self.git.as_ref()?;
        let (git, dir) = (Arc::clone(git), dir.to_path_buf());
        let paths = offload::blocking(move || git.untracked_files(&dir)).await;
        Some(paths.ok()?.ok()?.into_iter().collect())
    }

    /// Removes the untracked, not ignored files of `dir` that are not in `before`: what the
    /// command just run left behind. Returns them (none when they could not be listed or
    /// removed: the perimeter then sees them as it sees any stray file).
    async fn remove_leftovers(&self, dir: &Path, before: &BTreeSet<String>) -> Vec<String> {
        let Some(Tidy(git)) = self.git.as_ref() else {
            return Vec::new();
        };
        let (git, dir) = (Arc::clone(git), dir.to_path_buf());
        let before = before.clone();
        offload::blocking(move || {
            let left: Vec<String> = git
                .untracked_files(&dir)
                .map_err(|error| error.to_string())?
                .into_iter()
                .filter(|path| !before.contains(path))
                .collect();
            if !left.is_empty() {
                let paths: Vec<&str> = left.iter().map(String::as_str).collect();
                git.restore_paths(&dir, "HEAD", &paths)
                    .map_err(|error| error.to_string())?;
            }
            Ok::<_, String>(left)
        })
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default()
    }
}

/// The JUnit file at `path` in `dir` (at most [`JUNIT_LIMIT`] bytes, never through a link
/// that leads out of `dir`), as [`failing_tests`] takes it.
async fn read_junit_file(dir: &Path, path: &str) -> JunitFile {
    let (dir, path) = (dir.to_path_buf(), path.to_owned());
    let read =
        offload::blocking(move || epic_git_ops::read_head(&dir, &path, JUNIT_LIMIT + 1)).await;
    match read {
        Ok(Ok(FileHead::Text { text, size })) if size <= JUNIT_LIMIT as u64 => {
            JunitFile::Text(text)
        }
        Ok(Ok(FileHead::Text { size, .. })) => JunitFile::Unreadable(format!(
            "{size} bytes, more than epic reads ({JUNIT_LIMIT})"
        )),
        Ok(Ok(FileHead::Missing)) => JunitFile::Missing,
        Ok(Ok(FileHead::Binary { .. })) => JunitFile::Unreadable("not UTF-8 text".to_owned()),
        Ok(Ok(FileHead::Directory)) => JunitFile::Unreadable("a directory".to_owned()),
        Ok(Ok(_)) => JunitFile::Unreadable(
            "it leads out of the directory the gate runs in, or is no plain file".to_owned(),
        ),
        Ok(Err(error)) => JunitFile::Unreadable(error.to_string()),
        Err(error) => JunitFile::Unreadable(error.to_string()),
    }
}

/// One run of one command.
#[derive(Clone)]
struct Run {
    result: GateResult,
    /// Its issue, when it was red.
    issue: Option<Issue>,
    /// The end of its output when it was red, trimmed (empty when green).
    output: String,
    /// Whether running it again may change the verdict: a red exit or deadline, not a change
    /// to epic's files.
    rerun: bool,
}

/// The red run of `command`, which changed files epic guards (put back since): never rerun,
/// since changing epic's files is not chance and running it again would only repeat it.
fn tampered_result(
    command: &str,
    duration: Duration,
    tampered: &Tampered,
    leftovers: Vec<String>,
) -> Run {
    let result = GateResult {
        command: command.to_owned(),
        passed: false,
        duration,
        status: "changed files that are epic's".to_owned(),
        leftovers,
        flaky: None,
        tests: None,
    };
    let concurrent = if tampered.concurrent {
        " An agent turn or another command ran at the same time, so the change may have been \
         its."
    } else {
        ""
    };
    let issue = Issue::new(
        Severity::Critical,
        format!("gate `{command}`"),
        format!(
            "changed files that are epic's, not the story's: {}. epic put them back. \
             The story's code (its tests, its build scripts) may not change the repository's \
             configuration, hooks or worktree registrations, epic's state or the plan \
             files.{concurrent}",
            tampered.paths()
        ),
    );
    Run {
        result,
        issue: Some(issue),
        output: String::new(),
        rerun: false,
    }
}

/// A gate run's duration in whole milliseconds, as events carry it.
pub fn millis(result: &GateResult) -> u64 {
    u64::try_from(result.duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    //! Gates on their own: order, the first red one, deadlines, output tails.

    use std::sync::{Arc, Mutex};
    use std::time::Instant;

    use super::*;
    use epic_test_support::{PATIENCE, pid_written, wait_dead, wait_for};

    fn passed(command: &str, flaky: Option<Flake>) -> GateResult {
        GateResult {
            command: command.to_owned(),
            passed: true,
            duration: Duration::from_millis(5),
            status: "passed".to_owned(),
            leftovers: Vec::new(),
            flaky,
            tests: None,
        }
    }

    #[test]
    fn a_gate_green_only_on_a_rerun_is_attested_flaky_without_its_output() {
        let first_run = Flake {
            status: "exit code 1".to_owned(),
            output: "port 8080 in use".to_owned(),
            runs: 2,
        };
        let flaky = passed("pytest", Some(first_run)).attested(false);
        let steady = passed("ruff check", None).attested(true);
        assert_eq!(
            serde_json::to_value([&flaky, &steady]).expect("JSON"),
            serde_json::json!([
                {"command": "pytest", "exit_code": 0,
                 "flaky": {"runs": 2, "status": "exit code 1"}},
                {"command": "ruff check", "exit_code": 0, "known_red": true},
            ])
        );
    }

    async fn run(gates: &Gates, dir: &Path) -> (Review, Vec<GateResult>) {
        let results = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&results);
        let review = gates
            .run(
                dir,
                &[("EPIC_SLOT".into(), "2".into())],
                &CancellationToken::new(),
                &move |result| {
                    sink.lock().expect("results").push(result.clone());
                },
            )
            .await
            .expect("not cancelled");
        let results = results.lock().expect("results").clone();
        (review, results)
    }

    #[tokio::test]
    async fn no_gates_is_clean() {
        let dir = tempfile::tempdir().expect("dir");
        let (review, results) = run(&Gates::none(), dir.path()).await;
        assert!(review.clean);
        assert!(results.is_empty());
    }

    #[tokio::test]
    async fn stops_at_the_first_red_gate_with_its_output_tail() {
        let dir = tempfile::tempdir().expect("dir");
        let gates = Gates::new(
            [
                "test \"$EPIC_SLOT\" = 2",
                "seq 1 100000; echo 'the real error' >&2; exit 3",
                "touch never-ran",
            ],
            Duration::from_secs(20),
        );
        let (review, results) = run(&gates, dir.path()).await;
        assert!(!review.clean);
        assert_eq!(review.issues.len(), 1);
        let issue = &review.issues[0];
        assert_eq!(issue.severity, Severity::Critical);
        assert!(issue.title.contains("exit 3"), "{}", issue.title);
        assert!(issue.description.contains("exit code 3"));
        assert!(
            issue.description.trim_end().ends_with("the real error"),
            "{}",
            issue.description
        );
        assert!(issue.description.len() < 5000, "the output is bounded");
        assert_eq!(results.len(), 2);
        assert!(results[0].passed && !results[1].passed);
        assert!(!dir.path().join("never-ran").exists());
    }

    #[tokio::test]
    async fn a_hanging_gate_is_killed_at_its_deadline() {
        let dir = tempfile::tempdir().expect("dir");
        // The gate says it started, then sleeps far longer than any test runs: only the kill at
        // the deadline ends it. The deadline only has to leave the shell time to print its line.
        let deadline = Duration::from_secs(3);
        let gates = Gates::new(
            ["echo $$ > gate.pid; echo started; exec sleep 1000"],
            deadline,
        );
        let started = Instant::now();
        let (review, results) = tokio::time::timeout(PATIENCE, run(&gates, dir.path()))
            .await
            .expect("the gate was stopped at its deadline, not left to sleep");
        assert!(started.elapsed() >= deadline, "not before its deadline");
        assert!(!review.clean);
        assert!(
            review.issues[0].description.contains("timed out"),
            "{}",
            review.issues[0].description
        );
        assert!(review.issues[0].description.contains("started"));
        assert_eq!(results.len(), 1);
        assert!(!results[0].passed);
        let pid = pid_written(&dir.path().join("gate.pid")).expect("the gate wrote its pid");
        assert!(wait_dead(pid), "the gate {pid} outlived its deadline");
    }

    #[tokio::test]
    async fn cancelling_stops_the_gates() {
        let dir = tempfile::tempdir().expect("dir");
        // A deadline no test reaches: only the cancellation can stop this gate.
        let gates = Gates::new(
            ["echo $$ > gate.pid; exec sleep 1000"],
            Duration::from_hours(1),
        );
        let cancel = CancellationToken::new();
        let trigger = cancel.clone();
        let pid_file = dir.path().join("gate.pid");
        // Cancel once the gate runs (it wrote its pid), not after a guess at how long it takes.
        let running = tokio::spawn(async move {
            let pid = tokio::task::spawn_blocking(move || {
                wait_for("the gate's pid", PATIENCE, || pid_written(&pid_file))
            })
            .await
            .expect("the wait");
            trigger.cancel();
            pid
        });
        let result = tokio::time::timeout(PATIENCE, gates.run(dir.path(), &[], &cancel, &|_| {}))
            .await
            .expect("the cancelled gate was stopped, not left to sleep");
        assert_eq!(result, Err(GatesCancelled));
        let pid = running.await.expect("the trigger");
        assert!(wait_dead(pid), "the gate {pid} outlived the cancellation");
    }

    /// A gate that is red until its `n`th run, counting its runs in `counter` (outside the
    /// directory it runs in).
    fn red_until(n: u32, counter: &Path) -> String {
        format!(
            "c={counter}; n=$(($(cat \"$c\" 2>/dev/null || echo 0) + 1)); echo $n > \"$c\"; \
             [ $n -ge {n} ] || {{ echo \"red run $n\"; exit 1; }}",
            counter = counter.display()
        )
    }

    /// The runs `counter` counted.
    #[expect(
        clippy::disallowed_methods,
        reason = "a test reads the counter its gate wrote in a temporary directory"
    )]
    fn runs_of(counter: &Path) -> String {
        std::fs::read_to_string(counter)
            .expect("runs")
            .trim()
            .to_owned()
    }

    #[tokio::test]
    async fn a_red_gate_green_on_its_rerun_passes_keeping_its_first_run() {
        let (dir, state) = (
            tempfile::tempdir().expect("dir"),
            tempfile::tempdir().expect("dir"),
        );
        let counter = state.path().join("runs");
        let gates = Gates::new(
            [red_until(2, &counter), "touch after".into()],
            Duration::from_secs(20),
        )
        .with_reruns(1);
        let (review, results) = run(&gates, dir.path()).await;
        assert!(review.clean, "{review:?}");
        assert_eq!(results.len(), 2, "one result per command, reruns included");
        let flake = results[0].flaky.as_ref().expect("flaky");
        assert!(results[0].passed);
        assert_eq!(
            (flake.status.as_str(), flake.output.as_str(), flake.runs),
            ("exit code 1", "red run 1", 2)
        );
        let event = results[0].flaky_event(Some("s")).expect("the flaky event");
        assert!(
            matches!(event, epic_events::Event::GateFlaky { ref story, runs: 2, .. } if story.as_deref() == Some("s"))
        );
        assert!(results[1].flaky.is_none() && results[1].flaky_event(None).is_none());
        assert!(dir.path().join("after").exists(), "the gates went on");
    }

    #[tokio::test]
    async fn a_gate_red_on_every_run_is_red() {
        let (dir, state) = (
            tempfile::tempdir().expect("dir"),
            tempfile::tempdir().expect("dir"),
        );
        let counter = state.path().join("runs");
        let gates = Gates::new([red_until(4, &counter)], Duration::from_secs(20)).with_reruns(2);
        let (review, results) = run(&gates, dir.path()).await;
        assert!(!review.clean);
        assert!(
            review.issues[0].description.contains("red run 3"),
            "the last run's output"
        );
        assert_eq!(results.len(), 1);
        assert!(!results[0].passed && results[0].flaky.is_none());
        assert_eq!(runs_of(&counter), "3");
    }

    #[tokio::test]
    async fn without_reruns_a_red_gate_runs_once() {
        let (dir, state) = (
            tempfile::tempdir().expect("dir"),
            tempfile::tempdir().expect("dir"),
        );
        let counter = state.path().join("runs");
        let gates = Gates::new([red_until(2, &counter)], Duration::from_secs(20));
        let (review, _) = run(&gates, dir.path()).await;
        assert!(!review.clean);
        assert_eq!(runs_of(&counter), "1");
    }

    fn is_send<T: Send>(_: &T) {}

    #[test]
    fn the_gates_future_is_send() {
        let dir = tempfile::tempdir().expect("dir");
        let cancel = CancellationToken::new();
        let gates = Gates::none();
        let future = gates.run(dir.path(), &[], &cancel, &|_| {});
        is_send(&future);
        drop(future);
    }
}
