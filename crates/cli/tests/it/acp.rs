//! `acp:` seats through the binary: a stand-in agent that speaks the Agent Client Protocol
//! (`acp_agent.py`, a real process on its stdio, in a real repository), well behaved and
//! hostile. epic answers its permission requests from the story's perimeter, writes only inside
//! it for the agent, and ends an agent that floods, stays mute or breaks the protocol as a clear
//! turn failure. The tests wait on the agent's log and epic's events, never on the wall clock.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{Repo, Run, TestClock, file_plan, wait_until};

/// The stand-in ACP agent.
const AGENT: &str = include_str!("acp_agent.py");

/// The stand-in written to a directory of its own (outside the repository, so a sandboxed run
/// may write its log there), and what it logged.
struct Agent {
    dir: tempfile::TempDir,
}

impl Agent {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("a directory for the agent");
        std::fs::write(dir.path().join("acp_agent.py"), AGENT).expect("write the agent");
        Self { dir }
    }

    fn log_file(&self) -> PathBuf {
        self.dir.path().join("log.jsonl")
    }

    /// The seat that runs it in `mode`: `acp:python3 acp_agent.py MODE LOG`.
    fn seat(&self, mode: &str) -> String {
        // The system's Python: a version manager's shim may need a home the sandbox hides.
        let python = if Path::new("/usr/bin/python3").exists() {
            "/usr/bin/python3"
        } else {
            "python3"
        };
        format!(
            "acp:{python} {} {mode} {}",
            self.dir.path().join("acp_agent.py").display(),
            self.log_file().display()
        )
    }

    /// What it logged, a JSON object a line.
    fn log(&self) -> Vec<Value> {
        std::fs::read_to_string(self.log_file())
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).expect("the agent logs JSON"))
            .collect()
    }

    /// Its log lines of `event` by `role`.
    fn logged(&self, event: &str, role: &str) -> Vec<Value> {
        self.log()
            .into_iter()
            .filter(|line| line["event"] == event && line["role"] == role)
            .collect()
    }
}

/// `epic run plan.json` with `seat` as coder and judge, one story at a time, then `extra`.
fn command(repo: &Repo, seat: &str, extra: &[&str]) -> std::process::Command {
    let mut args = vec![
        "run",
        "plan.json",
        "--coder",
        seat,
        "--judge",
        seat,
        "--concurrency",
        "1",
        "--no-progress",
        "--gate",
        "true",
    ];
    args.extend_from_slice(extra);
    repo.command(&args)
}

fn run(repo: &Repo, seat: &str, extra: &[&str]) -> Run {
    Run::of(command(repo, seat, extra).output().expect("run `epic`"))
}

/// The events of the epic's log, of `kind`.
fn events(repo: &Repo, kind: &str) -> Vec<Value> {
    std::fs::read_to_string(repo.epic("shop").events())
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["kind"] == kind)
        .collect()
}

/// The first story of the epic's `report.json`.
fn first_story(repo: &Repo) -> Value {
    let text = std::fs::read_to_string(repo.epic("shop").report_json()).expect("report.json");
    let document: Value = serde_json::from_str(&text).expect("report.json is JSON");
    document["data"]["stories"][0].clone()
}

fn one_story(repo: &Repo) {
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
}

#[test]
fn a_well_behaved_acp_coder_asks_writes_through_epic_and_its_story_merges() {
    let repo = Repo::new();
    one_story(&repo);
    let agent = Agent::new();
    let run = run(&repo, &agent.seat("good"), &[]);
    run.assert_code(0);
    assert_eq!(repo.git_output(&["show", "epic/shop:a/a.txt"]), "a\n");
    let asked = agent.logged("permission", "coder");
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["chosen"], "yes", "allowed once, never always");
    let wrote = agent.logged("write", "coder");
    assert!(wrote[0]["error"].is_null(), "{wrote:?}");
    assert!(events(&repo, "permission_rejected").is_empty());
    let activity = events(&repo, "turn_activity");
    assert!(
        activity
            .iter()
            .any(|event| event["doing"] == "Write a/a.txt"),
        "{activity:?}"
    );
    let story = first_story(&repo);
    assert_eq!(story["status"], "done", "{story}");
    assert!(story.get("permission_rejections").is_none(), "{story}");
    let ended = events(&repo, "turn_ended");
    assert!(
        ended
            .iter()
            .any(|event| event["reported"] == true && event["estimated_tokens"] == 150),
        "the agent's own usage is the turn's: {ended:?}"
    );
}

#[test]
fn writes_outside_the_perimeter_and_into_git_are_refused_and_nothing_is_written() {
    let repo = Repo::new();
    one_story(&repo);
    let agent = Agent::new();
    let run = run(&repo, &agent.seat("outside"), &[]);
    run.assert_code(0);
    // The refused write's error carries the reason, for the agent to read.
    let writes = agent.logged("write", "coder");
    let refused = writes
        .iter()
        .find(|write| {
            write["path"]
                .as_str()
                .is_some_and(|path| path.ends_with("elsewhere/x.txt"))
        })
        .expect("the agent wrote outside");
    let message = refused["error"].as_str().expect("refused with a message");
    assert!(
        message.contains("`elsewhere/x.txt` is outside story `a`'s owned paths (`a`)")
            && message.contains("BLOCKED_ON:"),
        "{message}"
    );
    let asked = agent.logged("permission", "coder");
    let git = asked
        .iter()
        .find(|ask| ask["title"] == "Edit .git/config")
        .expect("it asked to edit .git/config");
    assert_eq!(git["chosen"], "no", "rejected once, never always: {git}");
    assert!(
        git["reason"]
            .as_str()
            .is_some_and(|reason| reason.contains("git's own")),
        "{git}"
    );
    // Nothing was written outside, and the story's own work merged.
    let worktrees = repo.worktree_of(&repo.epic("shop"), "a");
    assert!(!worktrees.join("elsewhere").exists());
    assert_eq!(repo.git_output(&["show", "epic/shop:a/a.txt"]), "a\n");
    let rejected = events(&repo, "permission_rejected");
    assert_eq!(rejected.len(), 2, "{rejected:?}");
    assert!(
        rejected.iter().all(|event| event["story"] == "a"
            && event["role"] == "coder"
            && event["seat"] == agent.seat("outside")),
        "{rejected:?}"
    );
    assert!(
        rejected[0]["subject"]
            .as_str()
            .is_some_and(|subject| subject.ends_with("elsewhere/x.txt"))
    );
    let story = first_story(&repo);
    assert_eq!(story["status"], "done", "{story}");
    assert_eq!(story["permission_rejections"], 2, "{story}");
    assert!(
        run.stderr.contains(
            "story a: coder turn 1 asked for .git/config; rejected: `.git/config` is git's own"
        ),
        "{run}"
    );
    let markdown = std::fs::read_to_string(repo.epic("shop").report_md()).expect("report.md");
    assert!(
        markdown.contains("## Rejected requests") && markdown.contains("- a: 2 rejected requests"),
        "{markdown}"
    );
}

/// The agent asks, is rejected, and writes the file with its own I/O anyway: the perimeter
/// check after each turn (the proof, whatever the agent was told) finds it, the coder is asked
/// again, and the path is put back before the story's commit.
#[test]
fn an_agent_that_ignores_a_rejection_is_caught_by_the_perimeter_check_and_put_back() {
    let repo = Repo::new();
    one_story(&repo);
    let agent = Agent::new();
    let run = run(&repo, &agent.seat("sneaky"), &[]);
    run.assert_code(0);
    let asked = agent.logged("permission", "coder");
    assert!(
        asked
            .iter()
            .any(|ask| ask["title"] == "Write elsewhere/x.txt" && ask["chosen"] == "no"),
        "{asked:?}"
    );
    assert!(
        run.stderr.contains("perimeter: violated")
            && run
                .stderr
                .contains("put back 1 path outside its perimeter: elsewhere/x.txt"),
        "{run}"
    );
    // What it wrote anyway never reaches the epic branch; its own work does.
    let tree = repo.git_output(&["ls-tree", "-r", "--name-only", "epic/shop"]);
    assert!(!tree.contains("elsewhere"), "{tree}\n{run}");
    assert_eq!(repo.git_output(&["show", "epic/shop:a/a.txt"]), "a\n");
    // Asked again after the perimeter check, the coder is told what was rejected and why: the
    // protocol carried no reason with the rejection.
    let prompted = agent.logged("prompted", "coder");
    assert!(
        prompted.len() >= 2 && prompted[0]["told_rejections"] == false,
        "{prompted:?}"
    );
    assert!(
        prompted[1..]
            .iter()
            .all(|prompt| prompt["told_rejections"] == true),
        "{prompted:?}"
    );
    let rejected = events(&repo, "permission_rejected").len();
    assert_eq!(
        first_story(&repo)["permission_rejections"],
        rejected,
        "{run}"
    );
    assert!(rejected >= 1);
    // `epic status` shows them from the report too.
    let status = repo.run(&["status", "--format", "json"]).json();
    assert_eq!(
        status["stories"][0]["permission_rejections"], rejected,
        "{status}"
    );
}

#[test]
fn a_flood_of_the_same_tool_call_is_ended_as_looping_and_told_to_cancel() {
    let repo = Repo::new();
    one_story(&repo);
    let agent = Agent::new();
    let run = run(&repo, &agent.seat("flood"), &[]);
    run.assert_code(1);
    let story = first_story(&repo);
    assert_eq!(story["status"], "failed", "{story}");
    assert_eq!(story["looping_turns"], 2, "{story}");
    // Told to stop with `session/cancel` before its group was killed.
    assert!(
        !agent.logged("cancelled", "coder").is_empty(),
        "{:?}",
        agent.log()
    );
}

/// The binary runs on a clock the test moves: a mute agent is ended once ten minutes of silence
/// have passed on it, its request runs again once, and the second silence fails the story.
#[test]
fn an_agent_that_never_answers_initialize_is_ended_as_stalled() {
    let repo = Repo::new();
    one_story(&repo);
    let agent = Agent::new();
    let clock = TestClock::new(repo.temp(), "2030-01-01T09:00:00Z".parse().unwrap());
    let mut command = command(&repo, &agent.seat("mute"), &["--stall-timeout", "10m"]);
    let child = clock.spawn(&mut command);
    let started = || agent.logged("started", "coder").len();
    wait_until("the mute coder starts", || started() == 1);
    clock.advance(std::time::Duration::from_mins(10));
    wait_until("the mute coder starts again", || started() == 2);
    clock.advance(std::time::Duration::from_mins(10));
    let run = Run::of(child.wait_with_output().expect("`epic` ends"));
    run.assert_code(1);
    let story = first_story(&repo);
    assert_eq!(story["status"], "failed", "{story}");
    assert_eq!(story["stalled_turns"], 2, "{story}");
}

#[test]
fn a_line_that_is_not_json_fails_the_turn_saying_so() {
    let repo = Repo::new();
    one_story(&repo);
    let agent = Agent::new();
    let run = run(&repo, &agent.seat("garbage"), &[]);
    run.assert_code(1);
    let story = first_story(&repo);
    assert_eq!(story["status"], "failed", "{story}");
    let reason = story["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains(
            "the agent broke the protocol: a line that is not a JSON object: `this is not json {`"
        ),
        "{story}\n{run}"
    );
}

#[test]
fn an_agent_that_exits_mid_turn_fails_it_with_its_status_and_words() {
    let repo = Repo::new();
    one_story(&repo);
    let agent = Agent::new();
    let run = run(&repo, &agent.seat("exit"), &[]);
    run.assert_code(1);
    let story = first_story(&repo);
    assert_eq!(story["status"], "failed", "{story}");
    let reason = story["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("failed with exit code 3")
            && reason.contains("the agent closed its output before it ended the turn")
            && reason.contains("the stand-in gives up: no model configured"),
        "{story}\n{run}"
    );
}

#[test]
fn an_agent_that_needs_a_login_stops_the_run_as_a_lost_login() {
    let repo = Repo::new();
    one_story(&repo);
    let agent = Agent::new();
    let run = run(&repo, &agent.seat("nologin"), &[]);
    assert!(
        run.stderr.contains("not logged in") && run.stderr.contains("stand-in-login"),
        "{run}"
    );
    assert_ne!(first_story(&repo)["status"], "done");
}

#[test]
fn a_read_only_judge_may_not_edit_or_run_writing_commands_but_may_read() {
    let repo = Repo::new();
    one_story(&repo);
    let agent = Agent::new();
    let run = run(&repo, &agent.seat("judge"), &[]);
    run.assert_code(0);
    let asked = agent.logged("permission", "judge");
    let chosen = |title: &str| {
        asked
            .iter()
            .find(|ask| ask["title"] == title)
            .map(|ask| ask["chosen"].clone())
    };
    assert_eq!(chosen("Edit the file"), Some("no".into()), "{asked:?}");
    assert_eq!(chosen("Run the tests"), Some("no".into()), "{asked:?}");
    assert_eq!(
        chosen("Look at the status"),
        Some("yes".into()),
        "{asked:?}"
    );
    let rejected = events(&repo, "permission_rejected");
    assert_eq!(rejected.len(), 2, "{rejected:?}");
    assert!(
        rejected.iter().all(|event| event["role"] == "judge"),
        "{rejected:?}"
    );
    assert!(
        rejected.iter().any(|event| event["subject"] == "cargo test"
            && event["reason"]
                .as_str()
                .is_some_and(|reason| reason.contains("read-only"))),
        "{rejected:?}"
    );
    assert_eq!(first_story(&repo)["status"], "done");
}

#[test]
fn an_acp_preset_whose_program_is_missing_stops_the_run_before_any_story() {
    let repo = Repo::new();
    one_story(&repo);
    let mut command = command(&repo, "claude-acp", &[]);
    let run = Run::of(
        command
            .env("PATH", "/usr/bin:/bin")
            .output()
            .expect("run `epic`"),
    );
    run.assert_code(2);
    assert!(
        run.stderr.contains("`claude-agent-acp` is not installed")
            && run
                .stderr
                .contains("npm install -g @zed-industries/claude-agent-acp"),
        "{run}"
    );
}
