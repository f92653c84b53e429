//! Crash at any instant: `epic run` on a 12-story plan in three waves (scripted agents that take
//! a little time, a real gate), killed with SIGKILL (its whole process group, agents and gates
//! too, as a machine crash would) at 30 seeded points spread over the run's progress (counted in
//! the events it logs, never in time), rerun after each kill; then the epic branch must hold every story merged exactly once, the same tree as an
//! uninterrupted run, green gates at every merge, parseable state, and a clean repository.
//!
//! The seed is fixed; `EPIC_CRASH_SEED` picks another. Each kill's phase, read from the tail of
//! `events.jsonl`, is printed (`--nocapture` shows the log). With `EPIC_CRASH_KEEP=<dir>`, a
//! failing test copies its temporary directory (the repository with its reflogs, the worktrees,
//! the epic's state and events) to `<dir>` for a post-mortem.
//!
//! Inside the merge queue: six stories ready at once, one of them turning the gates red, batched
//! and killed at a red batch gate (mid-bisection), at a proven part of a batch, at a pinned
//! culprit, at a batch's start and at a batch gate, rerun after each kill; then the same stories
//! merged and failed, and the same tree, as an uninterrupted one-at-a-time run, the gates green at
//! every commit of the epic branch's first-parent history, and no journal left.

use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use epic_state_store::{StoryStage, StoryState};
use epic_test_support::Rng;

use crate::util::{PATIENCE, RUN_PATIENCE, Repo, wait_for};

const EPIC: &str = "crash";
const KILLS: usize = 30;
/// The events that mark progress a rerun keeps ([`PROGRESS`]) in an uninterrupted run: 24
/// tasks committed, 12 stories merged. A run crashed and rerun logs at least as many.
const PROGRESS_STEPS: usize = 36;
/// The events that mark progress a rerun keeps: a task committed, a story merged.
const PROGRESS: [&str; 2] = ["\"kind\":\"task_committed\"", "\"kind\":\"story_merged\""];

/// The agent: plans two tasks; each coder turn takes a moment, then writes `<story>/<task>.txt`.
const AGENT: &str = r#"#!/bin/sh
cat > /dev/null
case "$EPIC_ROLE" in
planner) sleep 0.1; echo '{"tasks":[{"title":"one","description":"first file"},{"title":"two","description":"second file"}]}' ;;
coder)
  sleep 0.25
  mkdir -p "$EPIC_STORY"
  echo "ok $EPIC_STORY $EPIC_TASK" > "$EPIC_STORY/$EPIC_TASK.txt"
  echo "wrote $EPIC_STORY/$EPIC_TASK.txt" ;;
*) echo '{"clean":true,"issues":[]}' ;;
esac
"#;

/// The gate: every story file says `ok`, and a story's second file needs its first.
const GATE: &str = r#"sleep 0.1
for f in */*.txt; do
  [ -e "$f" ] || continue
  grep -q '^ok ' "$f" || { echo "bad $f"; exit 1; }
done
for f in */two.txt; do
  [ -e "$f" ] || continue
  [ -e "$(dirname "$f")/one.txt" ] || { echo "$f without one.txt"; exit 1; }
done
"#;

/// Three waves of four: `s01`..`s04`, then `s05`..`s08` each after one of the first wave, then
/// `s09`..`s12` each after one of the second.
fn plan() -> String {
    let stories: Vec<serde_json::Value> = (1..=12)
        .map(|n| {
            let id = format!("s{n:02}");
            let depends_on: Vec<String> = if n > 4 {
                vec![format!("s{:02}", n - 4)]
            } else {
                vec![]
            };
            serde_json::json!({"id": id, "title": format!("Story {n}"), "owned": [id], "depends_on": depends_on})
        })
        .collect();
    serde_json::json!({"epic_id": EPIC, "stories": stories}).to_string()
}

/// A repository with the gate script committed, the plan and the agent beside it.
fn setup() -> (Repo, Vec<String>) {
    let repo = Repo::new();
    repo.write("gate.sh", GATE);
    repo.git(&["add", "gate.sh"]);
    repo.git(&[
        "-c",
        "user.name=Test",
        "-c",
        "user.email=test@example.com",
        "commit",
        "--quiet",
        "-m",
        "the gate",
    ]);
    // Outside the repository's tree (ignored files would do too): the plan and the agent.
    let plan = repo.temp().join("plan.json");
    std::fs::write(&plan, self::plan()).expect("write the plan");
    let agent = repo.temp().join("agent.sh");
    std::fs::write(&agent, AGENT).expect("write the agent");
    let args = vec![
        "run".to_owned(),
        plan.display().to_string(),
        "--coder".to_owned(),
        format!("exec:sh {}", agent.display()),
        "--gate".to_owned(),
        "sh gate.sh".to_owned(),
        "--concurrency".to_owned(),
        "3".to_owned(),
        "--no-progress".to_owned(),
        "-q".to_owned(),
        // The harness kills the run at each step of the planned loop, its planner's included.
        "--planner".to_owned(),
        "always".to_owned(),
    ];
    (repo, args)
}

pub(crate) fn spawn(repo: &Repo, args: &[String]) -> Child {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    repo.command(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        // Its own process group, so one kill takes the agents and gates with it.
        .process_group(0)
        .spawn()
        .expect("spawn epic run")
}

/// Waits for `child` to exit (`what`: the run ends, a killed run dies), failing the test after
/// `limit`: how it exited.
pub(crate) fn wait(child: &mut Child, what: &str, limit: Duration) -> ExitStatus {
    wait_for(what, limit, || child.try_wait().expect("poll"))
}

/// The events of the log at `path` (complete lines), none before it exists.
pub(crate) fn events(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .map(|text| text.lines().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// Whether `event` marks progress ([`PROGRESS`]).
fn progress(event: &str) -> bool {
    PROGRESS.iter().any(|kind| event.contains(kind))
}

/// Where a life ends: after `marks` progress events of its own and `then` more events of any
/// kind, or at its `marks + 1`-th progress event, whichever comes first.
#[derive(Clone, Copy)]
struct Stop {
    marks: usize,
    then: usize,
}

/// Waits until the run `child`, whose log at `log` held `before` events when it started, has
/// reached `stop`, or exits: how it exited, `None` while it still runs (then it has reached
/// `stop`). Looks every few milliseconds; the time limit only ends a run that makes no
/// progress.
fn wait_for_stop(child: &mut Child, log: &Path, before: usize, stop: Stop) -> Option<ExitStatus> {
    wait_for("the run reaches its stop or ends", RUN_PATIENCE, || {
        let exited = child.try_wait().expect("poll");
        let all = events(log);
        let new = &all[before.min(all.len())..];
        let marks: Vec<usize> = new
            .iter()
            .enumerate()
            .filter(|(_, event)| progress(event))
            .map(|(at, _)| at)
            .collect();
        let from = match stop.marks {
            0 => Some(0),
            n => marks.get(n - 1).map(|at| at + 1),
        };
        let reached =
            marks.len() > stop.marks || from.is_some_and(|from| new.len() >= from + stop.then);
        (exited.is_some() || reached).then_some(exited)
    })
}

fn run_to_end(repo: &Repo, args: &[String]) -> (Option<i32>, Duration) {
    let start = Instant::now();
    let mut child = spawn(repo, args);
    let code = wait(&mut child, "the run ends", RUN_PATIENCE).code();
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        std::io::Read::read_to_string(&mut pipe, &mut stderr).ok();
    }
    if code != Some(0) {
        let report = repo.run(&["report", EPIC]);
        panic!("the run ended {code:?}:\n{stderr}\n{}", report.stdout);
    }
    (code, start.elapsed())
}

/// What the run was doing when killed, from the last event in `events.jsonl`.
fn phase(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let Some(last) = text
        .lines()
        .rev()
        .find_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
    else {
        return "before the first event (preflight: lock, epic worktree)".to_owned();
    };
    let kind = last["kind"].as_str().unwrap_or("?");
    match kind {
        "run_started"
        | "baseline_checked"
        | "story_started"
        | "story_prepared"
        | "story_already_merged" => format!("preparing ({kind})"),
        "turn_started" => match last["role"].as_str() {
            Some("planner") => "planning (planner turn)".to_owned(),
            Some(role) => format!("a {role} turn"),
            None => "a turn".to_owned(),
        },
        "turn_ended" | "tasks_planned" | "task_started" => format!("between turns ({kind})"),
        "gate_passed" | "gate_failed" | "review_round" => format!("a story gate ({kind})"),
        "task_committed" => "a task commit / checkpoint write".to_owned(),
        "merge_started" | "merge_queued" | "merge_batch" => format!("a merge ({kind})"),
        "batch_gated" | "batch_proven" | "culprit_pinned" => {
            format!("a batch's bisection ({kind})")
        }
        "epic_gate" => "the gates of a merge being proven".to_owned(),
        "story_merged" | "worktree_removed" => format!("after a merge: state written ({kind})"),
        "story_rolled_back" => "a rollback".to_owned(),
        "run_note" => format!("a run note: {}", last["message"].as_str().unwrap_or("")),
        other => other.to_owned(),
    }
}

/// Copies the repository's temporary directory to `EPIC_CRASH_KEEP`, when set, if the test
/// fails (dropped while panicking, before the directory is deleted).
pub(crate) struct KeepOnFailure<'a>(pub(crate) &'a Repo);

impl Drop for KeepOnFailure<'_> {
    #[expect(
        clippy::print_stderr,
        reason = "where the copy went, beside the failure"
    )]
    fn drop(&mut self) {
        let Some(to) = std::env::var_os("EPIC_CRASH_KEEP") else {
            return;
        };
        if std::thread::panicking() {
            let copied = std::process::Command::new("cp")
                .arg("-a")
                .arg(self.0.temp())
                .arg(&to)
                .status();
            eprintln!(
                "kept {} in {}: {copied:?}",
                self.0.temp().display(),
                to.to_string_lossy()
            );
        }
    }
}

pub(crate) fn kill_group(child: &Child) {
    let group = format!("-{}", child.id());
    // A failure means the group is gone already: the run ended first.
    std::process::Command::new("kill")
        .args(["-KILL", "--", &group])
        .stderr(Stdio::null())
        .status()
        .expect("run kill");
}

fn first_parent_merges(repo: &Repo) -> Vec<(String, String)> {
    repo.git_output(&[
        "log",
        "--first-parent",
        "--merges",
        "--format=%H %s",
        &format!("epic/{EPIC}"),
    ])
    .lines()
    .map(|line| {
        let (sha, subject) = line.split_once(' ').expect("sha and subject");
        (sha.to_owned(), subject.to_owned())
    })
    .collect()
}

#[test]
fn sigkill_at_thirty_instants_loses_nothing_and_proves_everything() {
    // The reference: the same repository, built the same way, run without interruption. Its
    // log measures the run without a clock: so many events, so many steps of progress.
    let (reference, reference_args) = setup();
    let (_, duration) = run_to_end(&reference, &reference_args);
    let reference_tree = reference.git_output(&["rev-parse", &format!("epic/{EPIC}^{{tree}}")]);
    let reference_log = events(
        &reference
            .common_dir()
            .join(format!("epic/{EPIC}/events.jsonl")),
    );
    let reference_events = reference_log.len();
    assert_eq!(
        reference_log.iter().filter(|event| progress(event)).count(),
        PROGRESS_STEPS,
        "the steps of progress of an uninterrupted run"
    );

    let (repo, args) = setup();
    let _keep = KeepOnFailure(&repo);
    let mut rng = Rng::from_env("EPIC_CRASH_SEED", 0x5eed_cafe_f00d);
    let seed = rng.seed();
    let log = repo.common_dir().join(format!("epic/{EPIC}/events.jsonl"));
    let mut phases = Vec::new();
    let mut hit = 0;
    for kill in 1..=KILLS {
        // Spread over the run: each life lasts until the run has made no or one step of
        // progress of its own (a task committed, a story merged), then a random number of events
        // more, up to about four steps' worth, cut short at its next step; then it is killed, a few
        // milliseconds after its last event, in whatever the run does next. Lives are counted
        // in events, not time, so a loaded machine changes when a kill lands, never how far
        // each life gets: at two steps a life (a third only if it lands in those few
        // milliseconds), the run's 36 are not all made before the 16th kill, so at least half
        // of the kills hit a live run.
        let stop = Stop {
            marks: rng.index(2),
            then: rng.index(4 * reference_events / PROGRESS_STEPS + 1),
        };
        let before = events(&log).len();
        let mut child = spawn(&repo, &args);
        let ended = wait_for_stop(&mut child, &log, before, stop);
        match ended {
            Some(status) => {
                let code = status.code();
                let mut stderr = String::new();
                if let Some(mut pipe) = child.stderr.take() {
                    std::io::Read::read_to_string(&mut pipe, &mut stderr).ok();
                }
                assert_ne!(
                    code,
                    Some(3),
                    "kill {kill}: the lock was not free:\n{stderr}"
                );
                if code != Some(0) {
                    let report = repo.run(&["report", EPIC]).stdout;
                    panic!(
                        "kill {kill}: the run ended {code:?}:\n{stderr}\n{report}\n{}",
                        phases.join("\n")
                    );
                }
                phases.push(format!(
                    "kill {kill:2} after {} step(s) + {:2} events: the run had finished",
                    stop.marks, stop.then
                ));
            }
            None => {
                let phase = phase(&log);
                kill_group(&child);
                let code = wait(&mut child, "the killed run dies", PATIENCE).code();
                // `Some(0)`: the run finished between the look at its log and the kill.
                assert!(
                    matches!(code, None | Some(0)),
                    "kill {kill}: the run ended {code:?} before it was killed"
                );
                hit += 1;
                phases.push(format!(
                    "kill {kill:2} after {} step(s) + {:2} events: {phase}",
                    stop.marks, stop.then
                ));
            }
        }
    }
    println!(
        "seed {seed:#x}, reference run {duration:.3?}, {reference_events} events; {} of 12 \
         stories merged when the kills ended\n{}",
        first_parent_merges(&repo).len(),
        phases.join("\n")
    );
    assert!(
        hit >= KILLS / 2,
        "most kills hit a live run:\n{}",
        phases.join("\n")
    );

    // The last rerun, uninterrupted, finishes the epic.
    run_to_end(&repo, &args);
    assert_sound(&repo, &reference_tree, &phases);
}

/// Everything a finished epic must be after the crashes: each story merged once, the
/// reference tree, parseable state, green gates at each merge, a clean repository.
fn assert_sound(repo: &Repo, reference_tree: &str, phases: &[String]) {
    // Every story merged exactly once on the first-parent history.
    let merges = first_parent_merges(repo);
    let mut subjects: Vec<&str> = merges.iter().map(|(_, subject)| subject.as_str()).collect();
    subjects.sort_unstable();
    let expected: Vec<String> = (1..=12)
        .map(|n| format!("{EPIC}: merge story s{n:02}"))
        .collect();
    assert_eq!(subjects, expected, "{}", phases.join("\n"));

    // The same tree as the uninterrupted run.
    let tree = repo.git_output(&["rev-parse", &format!("epic/{EPIC}^{{tree}}")]);
    assert_eq!(tree, reference_tree, "{}", phases.join("\n"));

    // Every state file parses; nothing is left mid-merge.
    let dir = repo.epic(EPIC);
    for n in 1..=12 {
        let id = format!("s{n:02}");
        let state: StoryState = epic_state_store::load(dir.story_state(&id).expect("path"))
            .expect("the state parses")
            .expect("the state exists");
        assert_eq!(state.status, StoryStage::Merged, "{id}");
        // Its recorded merge commit is its own merge on the first-parent line.
        let merge = state.merge.expect("the merge commit is recorded");
        assert!(
            merges
                .iter()
                .any(|(sha, subject)| *sha == merge
                    && *subject == format!("{EPIC}: merge story {id}")),
            "{id}: {merge} is not its merge on the first-parent line"
        );
    }
    let report: epic_events::ReportDocument = epic_state_store::load(dir.report_json())
        .expect("the report parses")
        .expect("the report exists");
    assert!(report.0.all_done());
    assert!(!dir.root().join("merging.json").exists());
    // Every merge carries its attestation, whatever instant the kills hit.
    let verify = repo.run(&["verify", EPIC]);
    verify.assert_code(0);

    // The gates pass at every merge commit of the epic branch's first-parent history.
    let check = repo.temp().join("check");
    for (sha, subject) in &merges {
        let path = check.display().to_string();
        repo.git(&["worktree", "add", "--quiet", "--detach", &path, sha]);
        let gate = std::process::Command::new("sh")
            .arg("gate.sh")
            .current_dir(&check)
            .output()
            .expect("run the gate");
        assert!(
            gate.status.success(),
            "the gate fails at {sha} ({subject}): {}",
            String::from_utf8_lossy(&gate.stdout)
        );
        repo.git(&["worktree", "remove", "--force", &path]);
    }

    // `epic clean` leaves no stale worktree registration, and the repository is sound.
    repo.run(&["clean", EPIC]).assert_code(0);
    let worktrees = repo.git_output(&["worktree", "list", "--porcelain"]);
    assert_eq!(
        worktrees
            .lines()
            .filter(|line| line.starts_with("worktree "))
            .count(),
        1,
        "{worktrees}"
    );
    assert!(!worktrees.contains("prunable"), "{worktrees}");
    let fsck = std::process::Command::new("git")
        .args(["fsck", "--no-progress", "--no-dangling"])
        .current_dir(repo.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("run git fsck");
    assert!(
        fsck.status.success() && fsck.stdout.is_empty(),
        "git fsck: {}{}",
        String::from_utf8_lossy(&fsck.stdout),
        String::from_utf8_lossy(&fsck.stderr)
    );
}

/// `epic land` killed with SIGKILL after each of its events in turn (a merge, a lander turn, the
/// gates, the fix commit, the landing commit, the move of the target, the cleanup), rerun each
/// time: after every kill the target is either untouched or landed by exactly one landing merge,
/// and the last rerun lands it (or finds it landed).
#[test]
fn sigkill_during_a_landing_leaves_the_target_untouched_or_landed_once() {
    let repo = Repo::new();
    let _keep = KeepOnFailure(&repo);
    let gate = "sleep 0.05; test ! -f main.txt || test -f a/ok.txt";
    let plan = repo.temp().join("plan.json");
    std::fs::write(
        &plan,
        crate::util::file_plan(&[("a", &[], "alpha"), ("b", &[], "beta")]),
    )
    .expect("write the plan");
    repo.run(&[
        "run",
        &plan.display().to_string(),
        "--coder",
        "script",
        "--no-progress",
        "--gate",
        gate,
    ])
    .assert_code(0);
    repo.write("main.txt", "main moved\n");
    repo.git(&["add", "main.txt"]);
    repo.git(&[
        "-c",
        "user.name=Test",
        "-c",
        "user.email=test@example.com",
        "commit",
        "--quiet",
        "-m",
        "main moved",
    ]);
    let main = repo.git_output(&["rev-parse", "main"]).trim().to_owned();
    let lander = repo.temp().join("lander.sh");
    // The fix first (in a story's owned paths: a gate round may change nothing else), then a
    // moment: a kill lands in the turn, and what the killed turn's process (a survivor of the
    // kill, outside epic's process group) does after it is nothing.
    std::fs::write(&lander, "cat > /dev/null\ntouch a/ok.txt\nsleep 0.2\n").expect("write");
    let args: Vec<String> = [
        "land",
        "--coder",
        &format!("exec:sh {}", lander.display()),
        "--no-progress",
        "-q",
    ]
    .map(str::to_owned)
    .to_vec();
    let landings = |repo: &Repo| {
        repo.git_output(&["log", "--first-parent", "--format=%s", "main"])
            .lines()
            .filter(|line| line.contains("land epic/shop"))
            .count()
    };
    let log = repo.common_dir().join("epic/shop/events.jsonl");
    let mut landed_at = None;
    for kill in 0..14 {
        let before = events(&log).len();
        let mut child = spawn(&repo, &args);
        let ended = wait_for_events(&mut child, &log, before + kill);
        if ended.is_none() {
            kill_group(&child);
            wait(&mut child, "the killed landing dies", PATIENCE);
        }
        let now = repo.git_output(&["rev-parse", "main"]).trim().to_owned();
        if now == main {
            assert_eq!(landings(&repo), 0, "kill {kill}");
        } else {
            let parent = repo.git_output(&["rev-parse", "main^1"]).trim().to_owned();
            assert_eq!(
                parent, main,
                "kill {kill}: main moved by something but a landing"
            );
            assert_eq!(landings(&repo), 1, "kill {kill}: one landing merge");
            landed_at.get_or_insert(kill);
        }
    }
    let last = repo.run(&["land", "--no-progress"]);
    last.assert_code(0);
    assert_eq!(landings(&repo), 1);
    assert_eq!(repo.git_output(&["show", "main:a/a.txt"]), "alpha\n");
    repo.git_output(&["show", "main:a/ok.txt"]);
    assert!(landed_at.is_some(), "no life got as far as landing");
    // Whichever life landed it (or finished a landing that had moved the target), the report
    // has the whole landing: its one gate round included.
    let report = repo.run(&["report", "--format", "json"]).json();
    assert_eq!(report["landing"]["rounds"], 1);
    // The landing's commits on the epic branch carry their attestations like the merges.
    repo.run(&["verify"]).assert_code(0);
}

/// Waits until the log at `log` holds `count` events or `child` exits: how it exited, `None`
/// while it still runs.
fn wait_for_events(child: &mut Child, log: &Path, count: usize) -> Option<ExitStatus> {
    wait_for(
        &format!("the landing logs {count} events or ends"),
        RUN_PATIENCE,
        || {
            let exited = child.try_wait().expect("poll");
            (exited.is_some() || events(log).len() >= count).then_some(exited)
        },
    )
}

/// The batch scenario's agent: one task; the coder waits (up to 5 s: a fallback, the outcome
/// does not depend on it) until every story the run starts (`$BARRIER.n` of them) reached its
/// turn, so that they queue together; story `s03` writes a file the gate rejects.
const BATCH_AGENT: &str = r#"#!/bin/sh
cat > /dev/null
case "$EPIC_ROLE" in
planner) echo '{"tasks":[{"title":"one","description":"the file"}]}' ;;
coder)
  touch "$BARRIER/$EPIC_STORY"
  want=$(cat "$BARRIER.n")
  n=0; while [ "$(ls "$BARRIER" | wc -l)" -lt "$want" ] && [ $n -lt 100 ]; do sleep 0.05; n=$((n+1)); done
  mkdir -p "$EPIC_STORY"
  if [ "$EPIC_STORY" = s03 ]; then word=bad; else word=ok; fi
  echo "$word $EPIC_STORY" > "$EPIC_STORY/one.txt"
  echo "wrote $EPIC_STORY/one.txt" ;;
*) echo '{"clean":true,"issues":[]}' ;;
esac
"#;

/// The batch scenario's gate: slow enough for a kill to land inside it; red on a `bad` file,
/// only on the epic worktree (or with `ALWAYS` set), so that the culprit passes its own checks.
const BATCH_GATE: &str = r#"sleep 0.3
if [ -z "$ALWAYS" ]; then case "$(pwd)" in */_epic) ;; *) exit 0 ;; esac; fi
for f in */*.txt; do
  [ -e "$f" ] || continue
  grep -q '^ok ' "$f" || { echo "bad $f"; exit 1; }
done
"#;

/// Six independent stories ready at once, one of them (`s03`) turning the gates red, with
/// `--merge-batch batch`: the repository and the arguments of `epic run`.
fn batch_setup(batch: &str) -> (Repo, Vec<String>) {
    let repo = Repo::new();
    repo.write("gate.sh", BATCH_GATE);
    repo.git(&["add", "gate.sh"]);
    repo.git(&[
        "-c",
        "user.name=Test",
        "-c",
        "user.email=test@example.com",
        "commit",
        "--quiet",
        "-m",
        "the gate",
    ]);
    let stories: Vec<serde_json::Value> = (1..=6)
        .map(|n| {
            let id = format!("s{n:02}");
            serde_json::json!({"id": id, "title": format!("Story {n}"), "owned": [id]})
        })
        .collect();
    let plan = repo.temp().join("plan.json");
    std::fs::write(
        &plan,
        serde_json::json!({"epic_id": EPIC, "stories": stories}).to_string(),
    )
    .expect("write the plan");
    let barrier = repo.temp().join("barrier");
    std::fs::create_dir_all(&barrier).expect("the barrier");
    let agent = repo.temp().join("agent.sh");
    std::fs::write(&agent, BATCH_AGENT).expect("write the agent");
    let args = vec![
        "run".to_owned(),
        plan.display().to_string(),
        "--coder".to_owned(),
        format!(
            "exec:env BARRIER={} sh {}",
            barrier.display(),
            agent.display()
        ),
        "--gate".to_owned(),
        "sh gate.sh".to_owned(),
        "--concurrency".to_owned(),
        "6".to_owned(),
        "--merge-batch".to_owned(),
        batch.to_owned(),
        "--no-progress".to_owned(),
        "-q".to_owned(),
    ];
    (repo, args)
}

/// Clears the barrier of the batch scenario's agent for a run that starts the stories not
/// merged yet.
fn reset_barrier(repo: &Repo) {
    let barrier = repo.temp().join("barrier");
    std::fs::remove_dir_all(&barrier).ok();
    std::fs::create_dir_all(&barrier).expect("the barrier");
    let dir = repo.epic(EPIC);
    let running = (1..=6)
        .filter(|n| {
            let state: Option<StoryState> =
                epic_state_store::load(dir.story_state(&format!("s{n:02}")).expect("path"))
                    .expect("the state parses");
            state.is_none_or(|state| state.status != StoryStage::Merged)
        })
        .count();
    std::fs::write(repo.temp().join("barrier.n"), running.to_string()).expect("the count");
}

/// Runs `epic run` to its end: its exit code.
fn run_once(repo: &Repo, args: &[String]) -> Option<i32> {
    reset_barrier(repo);
    let mut child = spawn(repo, args);
    wait(&mut child, "the run ends", RUN_PATIENCE).code()
}

/// Each story's status in the epic's state.
fn stages(repo: &Repo) -> Vec<(String, StoryStage)> {
    let dir = repo.epic(EPIC);
    (1..=6)
        .map(|n| {
            let id = format!("s{n:02}");
            let state: StoryState = epic_state_store::load(dir.story_state(&id).expect("path"))
                .expect("the state parses")
                .expect("the state exists");
            (id, state.status)
        })
        .collect()
}

#[test]
fn sigkill_inside_a_batch_and_its_bisection_leaves_nothing_unproven() {
    // The reference: one at a time, uninterrupted.
    let (reference, reference_args) = batch_setup("1");
    assert_eq!(run_once(&reference, &reference_args), Some(1), "s03 fails");
    let reference_tree = reference.git_output(&["rev-parse", &format!("epic/{EPIC}^{{tree}}")]);
    let reference_stages = stages(&reference);

    // Batched, killed at each of these events of a life in turn (a few milliseconds after it,
    // in whatever the run does next), rerun after each kill.
    let (repo, args) = batch_setup("8");
    let _keep = KeepOnFailure(&repo);
    let log = repo.common_dir().join(format!("epic/{EPIC}/events.jsonl"));
    let kinds = [
        "\"passed\":false",
        "\"kind\":\"batch_proven\"",
        "\"kind\":\"culprit_pinned\"",
        "\"kind\":\"merge_batch\"",
        "\"kind\":\"batch_gated\"",
    ];
    let mut phases = Vec::new();
    for kind in kinds {
        let before = events(&log).len();
        reset_barrier(&repo);
        let mut child = spawn(&repo, &args);
        // `false`: the run ended first.
        let killed = wait_for(&format!("{kind} or the run's end"), RUN_PATIENCE, || {
            if child.try_wait().expect("poll").is_some() {
                return Some(false);
            }
            let all = events(&log);
            all[before.min(all.len())..]
                .iter()
                .any(|event| event.contains(kind))
                .then_some(true)
        });
        if killed {
            kill_group(&child);
            wait(&mut child, "the killed run dies", PATIENCE);
        }
        phases.push(format!("at {kind}: killed {killed}, then {}", phase(&log)));
    }
    // The last rerun, uninterrupted, finishes the epic: s03 fails again.
    assert_eq!(run_once(&repo, &args), Some(1), "{}", phases.join("\n"));
    println!("{}", phases.join("\n"));
    assert_eq!(stages(&repo), reference_stages, "{}", phases.join("\n"));
    let tree = repo.git_output(&["rev-parse", &format!("epic/{EPIC}^{{tree}}")]);
    assert_eq!(tree, reference_tree, "{}", phases.join("\n"));
    assert!(!repo.epic(EPIC).root().join("merging.json").exists());
    // Nothing unproven: the gates pass at every commit of the epic branch's first-parent
    // history, batched merges included.
    let commits = repo.git_output(&["rev-list", "--first-parent", &format!("HEAD^..epic/{EPIC}")]);
    let check = repo.temp().join("check");
    for sha in commits.lines() {
        let path = check.display().to_string();
        repo.git(&["worktree", "add", "--quiet", "--detach", &path, sha]);
        let gate = std::process::Command::new("sh")
            .arg("gate.sh")
            .current_dir(&check)
            .env("ALWAYS", "1")
            .output()
            .expect("run the gate");
        assert!(
            gate.status.success(),
            "the gate fails at {sha}: {}\n{}",
            String::from_utf8_lossy(&gate.stdout),
            phases.join("\n")
        );
        repo.git(&["worktree", "remove", "--force", &path]);
    }
    // Each merged story's recorded merge commit is its merge on the first-parent line.
    let merges = first_parent_merges(&repo);
    assert_eq!(merges.len(), 5, "{merges:?}");
    // And each carries its attestation: the batch's proof, written before any record of it.
    let verify = repo.run(&["verify", EPIC]);
    assert_eq!(verify.code, Some(0), "{verify}\n{}", phases.join("\n"));
}
