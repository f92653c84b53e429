//! Real repositories in temporary directories, agents as shell scripts, and a story fixture.
//!
//! The repository is `epic-test-support`'s; every git process here (the tests' own, those of the
//! `GixGit` handles and of the agents) is isolated from the machine by its `Isolation`: `HOME` is
//! an empty directory of the test's own and the system configuration is off, so no test depends
//! on `~/.gitconfig`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use epic_agents::{CommandSeat, RetryPolicy, Seat};
use epic_events::{Event, EventSink};
use epic_executor::{LoopConfig, NoopPolicy, PlannerPolicy, Seats, StoryJob, StoryRun, TaskLoop};
use epic_gates::Gates;
use epic_git_ops::GixGit;
use epic_state_store::EpicDir;
use epic_story_plan::{Story, StoryPlan};
use epic_test_support::Isolation;
use tokio_util::sync::CancellationToken;

/// The epic of every fixture.
pub(crate) const EPIC: &str = "e";
/// The story of every fixture.
pub(crate) const STORY: &str = "s";

/// A repository with an epic branch and one story worktree, beside an isolated home and a
/// directory for agent scripts.
pub(crate) struct Fixture {
    pub(crate) root: PathBuf,
    pub(crate) repo: PathBuf,
    pub(crate) worktree: PathBuf,
    pub(crate) home: PathBuf,
    pub(crate) bin: PathBuf,
    /// The repository that owns the temporary directory (none for a fixture laid out under a
    /// directory a parent process owns, [`at`](Self::at)).
    temp: Option<epic_test_support::Repo>,
}

impl Fixture {
    /// A fresh repository with only `main` and its `README.md` (no epic branch yet):
    /// `epic-test-support`'s, with a `bin` directory for agent scripts beside it.
    pub(crate) fn bare_main() -> Self {
        let repo = epic_test_support::Repo::builder()
            .prefix("executor-")
            .build();
        let mut fixture = Self::at(repo.root());
        assert_eq!(
            fixture.repo,
            repo.path(),
            "the fixture's layout is the builder's"
        );
        assert_eq!(
            fixture.home,
            repo.home(),
            "the fixture's layout is the builder's"
        );
        assert_eq!(fixture.worktree, repo.beside(STORY));
        std::fs::create_dir_all(&fixture.bin).expect("bin");
        fixture.temp = Some(repo);
        fixture
    }

    /// A fresh repository: `main` with `README.md`, `epic/e` at it, and the worktree of story
    /// `s` on `story/e/s`.
    pub(crate) fn new() -> Self {
        let fixture = Self::bare_main();
        let repo = fixture.repo.clone();
        fixture.git_in(&repo, &["branch", "epic/e"]);
        let worktree = fixture.worktree.display().to_string();
        fixture.git_in(
            &repo,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "story/e/s",
                &worktree,
                "epic/e",
            ],
        );
        fixture
    }

    /// The fixture laid out under `root`, which already exists (for a child process).
    pub(crate) fn at(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
            repo: root.join("repo"),
            worktree: root.join("worktrees").join(STORY),
            home: root.join("home"),
            bin: root.join("bin"),
            temp: None,
        }
    }

    /// Runs git in `dir`; panics unless it succeeds. Returns stdout.
    #[track_caller]
    pub(crate) fn git_in(&self, dir: &Path, args: &[&str]) -> String {
        self.isolation().run(dir, args)
    }

    /// How the tests' git, `GixGit` handles and seats are isolated: `HOME` is the fixture's.
    pub(crate) fn isolation(&self) -> Isolation {
        Isolation::new(&self.home)
    }

    /// The subjects of the story branch's commits since the epic branch, oldest first.
    pub(crate) fn story_commits(&self) -> Vec<String> {
        self.git_in(
            &self.repo,
            &["log", "--reverse", "--format=%s", "epic/e..story/e/s"],
        )
        .lines()
        .map(str::to_owned)
        .collect()
    }

    /// A `GixGit` on the repository, isolated like the tests' own git.
    pub(crate) fn git(&self) -> GixGit {
        let mut git = GixGit::discover(&self.repo).expect("discover");
        for (key, value) in self.isolation().variables() {
            git = git.with_env(key, value);
        }
        git
    }

    /// The epic's state directory.
    pub(crate) fn epic_dir(&self) -> EpicDir {
        EpicDir::new(self.repo.join(".git"), EPIC).expect("epic dir")
    }

    /// Writes an executable script `bin/<name>` with this body (after `#!/bin/sh`).
    pub(crate) fn script(&self, name: &str, body: &str) -> PathBuf {
        let path = self.bin.join(name);
        epic_test_support::script(&path, body);
        path
    }

    /// An exec seat running script `bin/<name>` with `ROOT` set to the fixture's root; fast
    /// retries, and git isolated like the tests' own (for agents that run git).
    pub(crate) fn agent(&self, name: &str, body: &str) -> Arc<dyn Seat> {
        let path = self.script(name, body);
        Arc::new(self.seat_for(&path.display().to_string()))
    }

    /// An exec seat running `command`, set up like [`agent`](Self::agent).
    pub(crate) fn seat_for(&self, command: &str) -> CommandSeat {
        let mut seat = CommandSeat::shell(command)
            .with_env("ROOT", &self.root)
            .with_retry(RetryPolicy {
                attempts: 3,
                first_delay: Duration::from_millis(10),
                max_delay: Duration::from_millis(50),
            });
        for (key, value) in self.isolation().variables() {
            seat = match value {
                Some(value) => seat.with_env(key, value),
                None => seat.without_env(key),
            };
        }
        seat
    }

    /// The story's task checkpoint, if written.
    pub(crate) fn checkpoint(&self) -> Option<String> {
        std::fs::read_to_string(self.epic_dir().story_plan(STORY).expect("path")).ok()
    }

    /// The story's transcript files, sorted by name.
    pub(crate) fn transcripts(&self) -> Vec<String> {
        let dir = self.epic_dir().transcripts(STORY).expect("path");
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .map(|entry| entry.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }
}

/// The plan of every fixture: story `s` owning `src`, a story `other` owning `lib`.
pub(crate) fn plan(description: &str) -> StoryPlan {
    let mut story = Story::new(STORY, "The story", ["src"]);
    description.clone_into(&mut story.description);
    StoryPlan {
        epic_id: EPIC.into(),
        epic: String::new(),
        stories: vec![story, Story::new("other", "Other", ["lib"])],
    }
}

/// Events collected by a test, which may wait for one ([`until`](Self::until)).
#[derive(Clone)]
pub(crate) struct Events {
    seen: Arc<Mutex<Vec<Event>>>,
    /// How many have come: changes with each.
    count: Arc<tokio::sync::watch::Sender<usize>>,
}

impl Default for Events {
    fn default() -> Self {
        Self {
            seen: Arc::default(),
            count: Arc::new(tokio::sync::watch::Sender::new(0)),
        }
    }
}

impl Events {
    pub(crate) fn sink(&self) -> EventSink {
        let (seen, count) = (Arc::clone(&self.seen), Arc::clone(&self.count));
        Arc::new(move |event| {
            seen.lock().expect("events").push(event);
            count.send_modify(|count| *count += 1);
        })
    }

    /// Every event but the chunks of output.
    pub(crate) fn steps(&self) -> Vec<Event> {
        self.seen
            .lock()
            .expect("events")
            .iter()
            .filter(|event| !matches!(event, Event::TurnOutput { .. }))
            .cloned()
            .collect()
    }

    /// Waits for the first event, chunks of output included, that `wanted` accepts (at once if
    /// one already came); fails the test when none comes within [`PATIENCE`].
    pub(crate) async fn until(&self, what: &str, wanted: impl Fn(&Event) -> bool) -> Event {
        self.until_nth(what, 1, wanted).await
    }

    /// [`until`](Self::until) the `nth` event (from 1) that `wanted` accepts.
    pub(crate) async fn until_nth(
        &self,
        what: &str,
        nth: usize,
        wanted: impl Fn(&Event) -> bool,
    ) -> Event {
        let mut count = self.count.subscribe();
        let found = tokio::time::timeout(PATIENCE, async {
            loop {
                let found = self
                    .seen
                    .lock()
                    .expect("events")
                    .iter()
                    .filter(|event| wanted(event))
                    .nth(nth - 1)
                    .cloned();
                if let Some(event) = found {
                    return event;
                }
                count.changed().await.expect("the sender lives in self");
            }
        })
        .await;
        found.unwrap_or_else(|_| panic!("no {what} within {PATIENCE:?}: {:#?}", self.steps()))
    }
}

/// How a test runs the loop.
pub(crate) struct Run {
    pub(crate) coder: Arc<dyn Seat>,
    pub(crate) reviewers: Vec<Arc<dyn Seat>>,
    pub(crate) gates: Vec<String>,
    pub(crate) max_rounds: u32,
    pub(crate) turn_timeout: Duration,
    pub(crate) description: String,
    pub(crate) verifier: Option<Arc<dyn Seat>>,
    pub(crate) noop: NoopPolicy,
    /// The plan, when not the fixture's [`plan`]; its first story is the one run.
    pub(crate) plan: Option<StoryPlan>,
}

impl Run {
    pub(crate) fn new(coder: Arc<dyn Seat>) -> Self {
        Self {
            coder,
            reviewers: Vec::new(),
            gates: Vec::new(),
            max_rounds: 3,
            turn_timeout: Duration::from_secs(20),
            description: String::new(),
            verifier: None,
            noop: NoopPolicy::Complete,
            plan: None,
        }
    }

    /// Runs the first story of `plan` (whose id must be the fixture's, `s`).
    pub(crate) fn plan(mut self, plan: StoryPlan) -> Self {
        self.plan = Some(plan);
        self
    }

    pub(crate) fn noop(mut self, noop: NoopPolicy) -> Self {
        self.noop = noop;
        self
    }

    pub(crate) fn verifier(mut self, verifier: Arc<dyn Seat>) -> Self {
        self.verifier = Some(verifier);
        self
    }

    pub(crate) fn gates(mut self, gates: &[&str]) -> Self {
        self.gates = gates.iter().map(|gate| (*gate).to_owned()).collect();
        self
    }

    /// Runs the loop on the fixture's story.
    pub(crate) async fn on(self, fixture: &Fixture, events: &Events) -> StoryRun {
        let plan = Arc::new(self.plan.unwrap_or_else(|| plan(&self.description)));
        let story = Arc::new(plan.stories[0].clone());
        let job = StoryJob::new(
            &fixture.epic_dir(),
            plan,
            story,
            fixture.worktree.clone(),
            "epic/e",
            0,
        )
        .expect("job");
        let tasks = TaskLoop::new(
            Arc::new(fixture.git()),
            Gates::new(self.gates, Duration::from_secs(20)),
            Seats {
                coder: self.coder.into(),
                reviewers: self.reviewers.into_iter().map(Into::into).collect(),
                verifier: self.verifier.map(Into::into),
            },
            LoopConfig {
                max_rounds: self.max_rounds,
                turn_timeout: self.turn_timeout,
                noop: self.noop,
                // The tests' stories are small; these tests are of the planned loop.
                planner: PlannerPolicy::Always,
                ..LoopConfig::default()
            },
            events.sink(),
        );
        tasks.run(&job, &CancellationToken::new()).await
    }
}

/// A planner reply with these task titles (each description says which file to write).
pub(crate) fn task_list(titles: &[&str]) -> String {
    let tasks: Vec<String> = titles
        .iter()
        .map(|title| format!(r#"{{"title":"{title}","description":"write src/{title}.txt"}}"#))
        .collect();
    format!(r#"{{"tasks":[{}]}}"#, tasks.join(","))
}

pub(crate) use crate::processes::{PATIENCE, pid_written, wait_dead, wait_for_pid};
