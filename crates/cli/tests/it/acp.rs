//! `acp:` seats through the binary: a stand-in agent that speaks the Agent Client Protocol
//! (`acp_agent.py`, a real process on its stdio, in a real repository), well behaved and
//! hostile. epic answers its permission requests from the story's perimeter, writes only inside
//! it for the agent, and ends an agent that floods, stays mute or breaks the protocol as a clear
//! turn failure. The tests wait on the agent's log and epic's events, never on the wall clock.

use std::path::{Path, PathBuf};
use std::time::Duration;

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
