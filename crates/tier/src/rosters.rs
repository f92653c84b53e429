//! The served cases of rosters beyond one seat at its limit, through the real agent CLIs: two
//! accounts of one CLI as named seats, every seat of a roster paused, and a run killed
//! mid-roster and run again.
//!
//! - **two accounts** (`claude-work`, `claude-home`: named seats of the `claude` preset in
//!   `epic.toml`, each with its own `CLAUDE_CONFIG_DIR` and API key, the key referenced from
//!   epic's environment): the server answers every request signed with the first account's key
//!   with a usage limit hours away; that seat is paused, and every story is done by Claude Code
//!   signed in as the second account (the server's log shows its key on each call that wrote a
//!   story's file).
//! - **every seat paused** (`--coder claude,codex --max-wait 1h`, both APIs at their limits,
//!   resets three hours away): the run stops (exit 130) saying every seat of the roster is
//!   paused, both seats paused, no story failed.
//! - **killed mid-roster** (`--coder claude,codex`, Claude Code at its limit, one story at a
//!   time): `epic run` is killed (SIGKILL) once the first story merged, and run again: every
//!   story done by Codex, none merged twice.

use std::fs;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::Result;
use crate::cases::run_with_deadline;
use crate::json::{Event, Report, Request, read_events, requests, steps};
use crate::scratch::{FILES, epic_run, served_scratch};
use crate::served::{
    CASE_DEADLINE, NO_WAIT, Served, Tools, check_stories, check_written_by, paused_for_limit,
};

/// What a case plays.
#[derive(Clone, Copy)]
enum Play {
    Accounts,
    AllPaused,
    Killed,
}

/// One case.
pub(crate) struct Case {
    name: &'static str,
    preset: &'static str,
    play: Play,
}

/// The roster cases of this module.
pub(crate) fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "served: two claude accounts as named seats, the first at its limit",
            preset: "claude",
            play: Play::Accounts,
        },
        Case {
            name: "served: claude and codex both at their limits, the run stops at --max-wait",
            preset: "codex",
            play: Play::AllPaused,
        },
        Case {
            name: "served: a run killed mid-roster is run again and finishes on codex",
            preset: "codex",
            play: Play::Killed,
        },
    ]
}

impl Served for Case {
    fn name(&self) -> &str {
        self.name
    }

    fn preset(&self) -> &'static str {
        self.preset
    }

    fn run(&self, tools: &Tools<'_>, dir: &Path) -> Result {
        match self.play {
            Play::Accounts => accounts(tools, dir),
            Play::AllPaused => all_paused(tools, dir),
            Play::Killed => killed(tools, dir),
        }
    }
}

/// The two accounts' seats in `epic.toml`: each its own configuration directory and key, the
/// key referenced from epic's environment (`WORK_KEY`, `HOME_KEY`: epic.toml holds no secret).
const ACCOUNTS: &str = r#"coder = ["claude-work", "claude-home"]

[seats.claude-work]
seat = "claude"
env = { CLAUDE_CONFIG_DIR = "~/.claude-work", ANTHROPIC_API_KEY = "${WORK_KEY}" }

[seats.claude-home]
seat = "claude"
env = { CLAUDE_CONFIG_DIR = "~/.claude-home", ANTHROPIC_API_KEY = "${HOME_KEY}" }
"#;

/// The run's events and report.
fn state(repo: &Path) -> (Vec<Event>, Report) {
    let epic = repo.join(".git/epic/e");
    (
        read_events(&epic.join("events.jsonl")),
        Report::read(&epic.join("report.json")),
    )
}

/// An error holding `why` and what the run printed.
fn failed(why: &str, code: Option<i32>, printed: &str) -> String {
    format!("{why}\n--- the run printed (exit {code:?}):\n{printed}")
}

fn accounts(tools: &Tools<'_>, dir: &Path) -> Result {
    let (server, repo, home) = served_scratch(
        tools.server,
        "claude",
        &steps(&[json!({"key": "sk-work", "do": "limit", "hours": 3})]),
        tools.bins,
        dir,
    )?;
    fs::write(repo.join("epic.toml"), ACCOUNTS).map_err(|error| error.to_string())?;
    let mut command = epic_run(tools.epic, &repo, &home, tools.bins, &server)?;
    command
        .args(["--max-wait", "1h"])
        .env("WORK_KEY", "sk-work")
        .env("HOME_KEY", "sk-home");
    let started = Instant::now();
    let (code, printed) = run_with_deadline(command, CASE_DEADLINE)?;
    let took = started.elapsed();
    if code != Some(0) {
        return Err(failed("expected every story done (exit 0)", code, &printed));
    }
    let (events, report) = state(&repo);
    check_stories(&repo, &home, &report)?;
    if !paused_for_limit(&events, "claude-work") {
        return Err("no `seat_paused` event of `claude-work` for a usage limit".into());
    }
    let logged = requests(&server.logged());
    let signed = |key: &str, request: &Request| request.key.as_deref() == Some(key);
    let call = |key: &str, request: &Request| signed(key, request) && request.called();
    for (path, _) in FILES {
        if !logged
            .iter()
            .any(|request| call("sk-home", request) && request.calls_mention(path))
        {
            return Err(format!("the second account was not seen writing {path}"));
        }
    }
    if logged.iter().any(|request| call("sk-work", request)) {
        return Err("the first account, at its limit, was answered with a tool call".into());
    }
    if !logged.iter().any(|request| signed("sk-work", request)) {
        return Err("the first account never reached the server".into());
    }
    if took > NO_WAIT {
        return Err(format!(
            "the run took {:.0} s: it waited on the paused seat",
            took.as_secs_f64()
        ));
    }
    Ok(())
}

fn all_paused(tools: &Tools<'_>, dir: &Path) -> Result {
    let (server, repo, home) = served_scratch(
        tools.server,
        "claude,codex",
        &steps(&[
            json!({"api": "anthropic", "do": "limit", "hours": 3}),
            json!({"api": "responses", "do": "limit", "hours": 3}),
        ]),
        tools.bins,
        dir,
    )?;
    let mut command = epic_run(tools.epic, &repo, &home, tools.bins, &server)?;
    command.args(["--coder", "claude,codex", "--max-wait", "1h"]);
    let (code, printed) = run_with_deadline(command, CASE_DEADLINE)?;
    if code != Some(130) || !printed.contains("every seat of the roster claude,codex is paused") {
        return Err(failed(
            "expected the run stopped with every seat paused (exit 130)",
            code,
            &printed,
        ));
    }
    let (events, _) = state(&repo);
    for seat in ["claude", "codex"] {
        if !paused_for_limit(&events, seat) {
            return Err(format!(
                "no `seat_paused` event of `{seat}` for a usage limit"
            ));
        }
    }
    if events.iter().any(|event| event.is("story_failed")) {
        return Err("a story failed: a paused roster fails none".into());
    }
    Ok(())
}

fn killed(tools: &Tools<'_>, dir: &Path) -> Result {
    let (server, repo, home) = served_scratch(
        tools.server,
        "claude,codex",
        &steps(&[json!({"api": "anthropic", "do": "limit", "hours": 3})]),
        tools.bins,
        dir,
    )?;
    let args = [
        "--coder",
        "claude,codex",
        "--concurrency",
        "1",
        "--max-wait",
        "1h",
    ];
    let mut first = epic_run(tools.epic, &repo, &home, tools.bins, &server)?;
    first.args(args).stdout(Stdio::null()).stderr(Stdio::null());
    let mut child = first
        .spawn()
        .map_err(|error| format!("cannot start epic: {error}"))?;
    let events = repo.join(".git/epic/e/events.jsonl");
    let started = Instant::now();
    let merged = loop {
        if read_events(&events)
            .iter()
            .any(|event| event.is("story_merged"))
        {
            break true;
        }
        if started.elapsed() > CASE_DEADLINE
            || child
                .try_wait()
                .map_err(|error| error.to_string())?
                .is_some()
        {
            break false;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // SIGKILL, as a crash would end it: no cleanup of its own.
    child.kill().ok();
    child.wait().ok();
    if !merged {
        return Err("the first run merged no story before it ended".into());
    }
    let mut again = epic_run(tools.epic, &repo, &home, tools.bins, &server)?;
    again.args(args);
    let (code, printed) = run_with_deadline(again, CASE_DEADLINE)?;
    if code != Some(0) {
        return Err(failed(
            "expected the rerun to finish every story (exit 0)",
            code,
            &printed,
        ));
    }
    let (events, report) = state(&repo);
    check_stories(&repo, &home, &report)?;
    if events
        .iter()
        .filter(|event| event.is("run_started"))
        .count()
        != 2
    {
        return Err("expected two `run_started` events: the killed run and the rerun".into());
    }
    for story in ["a", "b", "c"] {
        let times = events
            .iter()
            .filter(|event| event.is("story_merged") && event.text("story") == Some(story))
            .count();
        if times != 1 {
            return Err(format!("story {story} merged {times} times"));
        }
    }
    check_written_by("claude", "codex", &requests(&server.logged()))
}
