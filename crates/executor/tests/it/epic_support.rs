//! Whole-epic runs on real repositories: a fixture with a `main` branch and no epic branch yet,
//! plans of stories each owning `src/<id>`, and a shell agent whose coder turns log their start
//! and end (in the order they happen, to count how many ran at once) and run a per-story hook
//! script the test writes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use epic_agents::Seat;
use epic_branch::RunError;
use epic_events::Event;
use epic_executor::{PlannerPolicy, RunConfig, RunOutcome, WorktreeMode, run_epic};
use epic_schedule::Policy;
use epic_state_store::EpicDir;
use epic_story_plan::{Story, StoryPlan, ValidPlan};
use epic_test_support::{CLEAN, RoleAgent};
use tokio_util::sync::CancellationToken;

use crate::support::{Events, Fixture};

/// The coder's standard behaviour: plan one task; as coder, log the turn, run
/// `$ROOT/hooks/<story>.sh` if there is one (sourced: it may `exit`), and write
/// `src/<story>/done.txt`; as judge or reviewer, run `$ROOT/hooks/<story>.judge.sh` if there is
/// one, else clear.
fn standard_agent() -> RoleAgent {
    RoleAgent::new()
        .prelude("prompt=$(cat)")
        .planner(r#"echo '{"tasks":[{"title":"build","description":"write the story file"}]}'"#)
        .coder(
            r#"  echo "start $EPIC_STORY slot=$EPIC_SLOT" >> "$ROOT/agents.log"
  if [ -f "$ROOT/hooks/$EPIC_STORY.sh" ]; then . "$ROOT/hooks/$EPIC_STORY.sh"; fi
  mkdir -p "src/$EPIC_STORY"
  echo "$EPIC_STORY $(date +%s%N)" > "src/$EPIC_STORY/done.txt"
  echo "end $EPIC_STORY" >> "$ROOT/agents.log"
  echo "done""#,
        )
        .otherwise(&format!(
            r#"  if [ -f "$ROOT/hooks/$EPIC_STORY.judge.sh" ]; then . "$ROOT/hooks/$EPIC_STORY.judge.sh"; fi
  echo '{CLEAN}'"#
        ))
}

/// The start of a hook that counts the coder turns (`$n`, from 1, across runs) and keeps each
/// one's prompt as `$ROOT/coder-prompt-$n` ([`EpicFixture::coder_prompt`]).
pub(crate) const KEEP_PROMPTS: &str = r#"n=$(( $(cat "$ROOT/coder-turns" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$ROOT/coder-turns"
printf '%s' "$prompt" > "$ROOT/coder-prompt-$n"
"#;

/// What a turn that takes up an attempt that never replied is told, up to the paths.
pub(crate) const LEFTOVERS_NOTE: &str = "Note: an earlier attempt at this work was stopped \
                                          before it replied, and the worktree still holds what \
                                          it left, not committed";

/// A repository for whole-epic runs.
pub(crate) struct EpicFixture {
    pub(crate) fx: Fixture,
}

impl EpicFixture {
    pub(crate) fn new() -> Self {
        let fx = Fixture::bare_main();
        std::fs::create_dir_all(fx.root.join("hooks")).expect("hooks dir");
        Self { fx }
    }

    /// The standard agent.
    pub(crate) fn agent(&self) -> Arc<dyn Seat> {
        let path = self.fx.bin.join("agent");
        standard_agent().write(&path);
        Arc::new(self.fx.seat_for(&path.display().to_string()))
    }

    /// Writes `hooks/<name>.sh`, sourced by the agent.
    pub(crate) fn hook(&self, name: &str, body: &str) {
        std::fs::write(self.fx.root.join("hooks").join(format!("{name}.sh")), body)
            .expect("write hook");
    }

    /// The prompt of the `n`th coder turn (from 1) of a story whose hook starts with
    /// [`KEEP_PROMPTS`].
    pub(crate) fn coder_prompt(&self, n: u32) -> String {
        std::fs::read_to_string(self.fx.root.join(format!("coder-prompt-{n}")))
            .unwrap_or_else(|_| panic!("no coder turn {n} kept its prompt"))
    }

    /// A run configuration with the standard agent and short deadlines.
    pub(crate) fn config(&self) -> RunConfig {
        let mut config = RunConfig::new(self.agent());
        config.turn_timeout = Duration::from_secs(30);
        config.gate_timeout = Duration::from_secs(30);
        config.schedule = Policy::PlanOrder;
        // The tests' stories are small, and most are of the planned loop: a test of the
        // planner-less path says so.
        config.planner = PlannerPolicy::Always;
        config
    }

    /// [`config`](Self::config) with a new worktree per story (`--worktrees fresh`), at
    /// `repo.worktrees/e/<story>`: for tests that name a story's own worktree.
    pub(crate) fn fresh_config(&self) -> RunConfig {
        let mut config = self.config();
        config.worktrees = WorktreeMode::Fresh;
        config
    }

    pub(crate) fn dir(&self) -> EpicDir {
        EpicDir::new(self.fx.repo.join(".git"), "e").expect("epic dir")
    }

    pub(crate) fn epic_worktree(&self) -> PathBuf {
        self.fx.root.join("repo.worktrees").join("e").join("_epic")
    }

    /// Runs a plan of story b alone, whose agent fails its first turn: b fails, keeping its
    /// worktree and branch. The plan and b's worktree.
    pub(crate) async fn fail_b_once(&self) -> (ValidPlan, PathBuf) {
        self.hook(
            "b",
            "if [ ! -f \"$ROOT/b-once\" ]; then touch \"$ROOT/b-once\"; exit 1; fi\n",
        );
        let only_b = plan(&[("b", &[])]);
        let outcome = self
            .run(&only_b, self.config(), &Events::default())
            .await
            .expect("run");
        assert_eq!(statuses(&outcome), ["b:failed"]);
        let worktree = self.fx.root.join("repo.worktrees/e/b");
        assert!(worktree.join(".git").exists());
        (only_b, worktree)
    }

    /// Runs the epic.
    pub(crate) async fn run(
        &self,
        plan: &ValidPlan,
        config: RunConfig,
        events: &Events,
    ) -> Result<RunOutcome, RunError> {
        self.run_with(plan, config, events, CancellationToken::new())
            .await
    }

    pub(crate) async fn run_with(
        &self,
        plan: &ValidPlan,
        config: RunConfig,
        events: &Events,
        cancel: CancellationToken,
    ) -> Result<RunOutcome, RunError> {
        run_epic(
            Arc::new(self.fx.git()),
            plan.clone(),
            config,
            events.sink(),
            cancel,
        )
        .await
    }

    /// `git rev-parse <rev>` in the main repository.
    pub(crate) fn rev(&self, rev: &str) -> String {
        self.fx
            .git_in(&self.fx.repo, &["rev-parse", rev])
            .trim()
            .to_owned()
    }

    /// The subjects of the epic branch's first-parent history, newest first.
    pub(crate) fn epic_log(&self) -> Vec<String> {
        self.fx
            .git_in(
                &self.fx.repo,
                &["log", "--first-parent", "--format=%s", "epic/e"],
            )
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// The coder turns so far as (story, line of its start, line of its end) in `agents.log`,
    /// ordered by start; a turn without an end (killed) ends at `usize::MAX`.
    ///
    /// Every turn appends its lines itself (`O_APPEND`), so their order in the log is the order
    /// in which they happened: no clock is read.
    pub(crate) fn turns(&self) -> Vec<(String, usize, usize)> {
        let log = std::fs::read_to_string(self.fx.root.join("agents.log")).unwrap_or_default();
        let mut open: BTreeMap<String, usize> = BTreeMap::new();
        let mut turns = Vec::new();
        for (at, line) in log.lines().enumerate() {
            let mut words = line.split_whitespace();
            let (Some(what), Some(story)) = (words.next(), words.next()) else {
                continue;
            };
            match what {
                "start" => {
                    open.insert(story.to_owned(), at);
                }
                _ => {
                    let start = open.remove(story).expect("started");
                    turns.push((story.to_owned(), start, at));
                }
            }
        }
        for (story, start) in open {
            turns.push((story, start, usize::MAX));
        }
        turns.sort_by_key(|turn| turn.1);
        turns
    }

    /// The most coder turns that were running at once: between a turn's start and end lines,
    /// every turn that started before and had not ended yet ran beside it.
    pub(crate) fn max_overlap(&self) -> usize {
        let mut edges: Vec<(usize, i32)> = Vec::new();
        for (_, start, end) in self.turns() {
            edges.push((start, 1));
            edges.push((end, -1));
        }
        edges.sort_unstable();
        let (mut now, mut max) = (0i32, 0i32);
        for (_, step) in edges {
            now += step;
            max = max.max(now);
        }
        usize::try_from(max).expect("non-negative")
    }

    /// Writes hooks that make the coder turns of `a` and `b` wait for each other: each marks its
    /// start, waits for the other's mark (giving up after 25 s, inside the turn's 30 s deadline)
    /// and notes whether it came. Two notes prove that the two turns ran at once, whatever the
    /// machine's speed: whichever started first was still running, waiting, when the other
    /// started. Turns kept apart leave at most the second's note: the first gave up.
    pub(crate) fn rendezvous(&self, a: &str, b: &str) {
        for (me, other) in [(a, b), (b, a)] {
            self.hook(
                me,
                &format!(
                    r#"touch "$ROOT/{me}.started"
n=0; while [ ! -e "$ROOT/{other}.started" ] && [ $n -lt 500 ]; do sleep 0.05; n=$((n+1)); done
if [ -e "$ROOT/{other}.started" ]; then touch "$ROOT/{me}.saw-{other}"; fi
"#
                ),
            );
        }
    }

    /// Whether the coder turns of `a` and `b` (set up with [`rendezvous`](Self::rendezvous))
    /// each saw the other running.
    pub(crate) fn met(&self, a: &str, b: &str) -> bool {
        let root = &self.fx.root;
        root.join(format!("{a}.saw-{b}")).exists() && root.join(format!("{b}.saw-{a}")).exists()
    }
}

/// Writes the lock a `git worktree add` of `worktree` holds until it is done ("initializing" in
/// its administrative directory): what an add killed half way leaves.
pub(crate) fn lock_as_if_adding(worktree: &Path) {
    let dotgit = std::fs::read_to_string(worktree.join(".git")).expect(".git");
    let admin = worktree.join(dotgit.trim().trim_start_matches("gitdir:").trim());
    std::fs::write(admin.join("locked"), "initializing\n").expect("lock");
}

/// A plan of epic `e`: `(id, depends_on)`, each story owning `src/<id>`.
pub(crate) fn plan(stories: &[(&str, &[&str])]) -> ValidPlan {
    StoryPlan {
        epic_id: "e".into(),
        epic: String::new(),
        stories: stories
            .iter()
            .map(|(id, deps)| {
                Story::new(*id, format!("Story {id}"), [format!("src/{id}")])
                    .depending_on(deps.iter().copied())
            })
            .collect(),
    }
    .validate()
    .expect("valid plan")
}

/// The diamond: a, b; c after a; d after b and c.
pub(crate) fn diamond() -> ValidPlan {
    plan(&[("a", &[]), ("b", &[]), ("c", &["a"]), ("d", &["b", "c"])])
}

/// The position of the first event matching `pred`.
pub(crate) fn position(events: &[Event], pred: impl Fn(&Event) -> bool) -> usize {
    events.iter().position(pred).expect("the event happened")
}

pub(crate) fn started(events: &[Event], id: &str) -> usize {
    position(
        events,
        |event| matches!(event, Event::StoryStarted { story, .. } if story == id),
    )
}

pub(crate) fn merged(events: &[Event], id: &str) -> usize {
    position(
        events,
        |event| matches!(event, Event::StoryMerged { story, .. } if story == id),
    )
}

/// The report's status of each story, in plan order, as `id:status`.
pub(crate) fn statuses(outcome: &RunOutcome) -> Vec<String> {
    outcome
        .report
        .stories
        .iter()
        .map(|story| format!("{}:{}", story.id, story.status.as_str()))
        .collect()
}

/// The merge commits of the epic branch's first-parent history, oldest first.
pub(crate) fn merges(ep: &EpicFixture) -> Vec<String> {
    let mut merges: Vec<String> = ep
        .epic_log()
        .into_iter()
        .filter(|line| line.starts_with("e: merge story"))
        .collect();
    merges.reverse();
    merges
}

/// The paths of the epic branch's tree.
pub(crate) fn epic_files(ep: &EpicFixture) -> Vec<String> {
    ep.fx
        .git_in(&ep.fx.repo, &["ls-tree", "-r", "--name-only", "epic/e"])
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The report's reason for story `index` (plan order), empty when it has none.
pub(crate) fn reason(outcome: &RunOutcome, index: usize) -> String {
    outcome.report.stories[index]
        .reason
        .clone()
        .unwrap_or_default()
}

/// Commits `files` on `main` (before the epic branch exists).
pub(crate) fn commit_on_main(ep: &EpicFixture, files: &[(&str, &str)]) {
    for (path, text) in files {
        let path = ep.fx.repo.join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    ep.fx.git_in(&ep.fx.repo, &["add", "-A"]);
    ep.fx
        .git_in(&ep.fx.repo, &["commit", "-q", "-m", "fixture files"]);
}

/// A token cancelled once `marker` exists (a file the run's agent or gate writes), as Ctrl-C
/// cancels a run at that point; never, if it does not come within `RUN_PATIENCE` (the test then
/// fails on the run not being interrupted). Watched from a thread of its own: `poll` sleeps
/// between looks, which no runtime worker may do.
pub(crate) fn cancelled_once(marker: PathBuf) -> CancellationToken {
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    std::thread::spawn(move || {
        if epic_test_support::poll(epic_test_support::RUN_PATIENCE, || {
            marker.exists().then_some(())
        })
        .is_some()
        {
            trigger.cancel();
        }
    });
    cancel
}
