//! The served cases of the `acp:` seats: real agents speaking the Agent Client Protocol to epic,
//! against the scripted model server.
//!
//! Gemini CLI speaks it itself (`gemini --experimental-acp`, the `gemini-acp` preset); Claude
//! Code and Codex through Zed's adapters (`claude-agent-acp` and `codex-acp`, npm
//! `@zed-industries/…`, the `claude-acp` and `codex-acp` presets), pinned in
//! `xtask/agents.txt`. Each case runs the served cases' epic of three stories (`b` after `a`,
//! each a file to write) in epic's sandbox:
//!
//! - **coder, an edit outside the perimeter rejected at the request** (Gemini CLI, Claude
//!   Code: both ask before every edit): the server answers story
//!   `a`'s first coding request with two writes by the agent's own file tool, its own file and
//!   `src/b/b.txt`, which story `b` owns. The agent asks epic's permission for each
//!   (`session/request_permission`); epic allows the first and rejects the second, before
//!   anything is written (`permission_rejected`, naming the path and the story that owns it).
//!   Every story is done; each file on the epic branch is its own story's (`src/b/b.txt` holds
//!   `bravo`, never the intruder's words); the report counts the rejection; the coder's tool
//!   calls reached epic while the turn ran (`turn_activity`).
//! - **coder** (Codex, whose adapter asks before nothing inside the worktree once in its `auto`
//!   mode, which epic sets for a coder): every story done, each file written by its shell tool,
//!   its tool calls streamed.
//! - **judge**: the built-in `script` coder does the work, the ACP agent judges each story (its
//!   session read-only); every story cleared in its first round.

use std::path::Path;

use serde_json::json;

use crate::Result;
use crate::cases::run_with_deadline;
use crate::json::{Report, Request, read_events, requests, steps};
use crate::scratch::{FILES, epic_run, served_scratch, show};
use crate::served::{CASE_DEADLINE, Reports, Served, Tools, check_stories, check_usage};

/// The ACP presets proven: each with the API its agent speaks (as the server logs it), the
/// tools it writes files with, whether it asks epic before each edit, and what it reports of
/// its usage over ACP (Claude Code's adapter: the prompt's tokens and the session's cost; Gemini
/// CLI its tokens only in its own `_meta`, Codex's adapter none: estimated).
const PRESETS: [(&str, &str, &[&str], bool, Reports); 3] = [
    (
        "gemini-acp",
        "gemini",
        &["write_file"],
        true,
        Reports::Nothing,
    ),
    (
        "claude-acp",
        "anthropic",
        &["Write"],
        true,
        Reports::TokensAndCost,
    ),
    (
        "codex-acp",
        "responses",
        &["exec_command", "shell"],
        false,
        Reports::Nothing,
    ),
];

/// What story `a`'s coder is answered with: its own file, then one story `b` owns.
const INTRUDER: (&str, &str) = ("src/b/b.txt", "intruder\n");

/// What a case plays.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Play {
    /// The preset as coder; one of its edits is outside the perimeter.
    Rejected,
    /// The preset as coder.
    Coder,
    /// The preset as judge.
    Judge,
}

/// One case: a preset in a role.
pub(crate) struct Case {
    name: String,
    preset: &'static str,
    api: &'static str,
    file_tools: &'static [&'static str],
    reports: Reports,
    play: Play,
}

/// The cases of this module.
pub(crate) fn cases() -> Vec<Case> {
    PRESETS
        .iter()
        .flat_map(|&(preset, api, file_tools, asks, reports)| {
            let coder = if asks {
                (
                    Play::Rejected,
                    format!("served: {preset} as coder, an edit outside the perimeter rejected"),
                )
            } else {
                (Play::Coder, format!("served: {preset} as coder"))
            };
            [coder, (Play::Judge, format!("served: {preset} as judge"))]
                .into_iter()
                .map(move |(play, name)| Case {
                    name,
                    preset,
                    api,
                    file_tools,
                    reports,
                    play,
                })
        })
        .collect()
}

impl Served for Case {
    fn name(&self) -> &str {
        &self.name
    }

    fn preset(&self) -> &'static str {
        self.preset
    }

    fn run(&self, tools: &Tools<'_>, dir: &Path) -> Result {
        let steps = match self.play {
            Play::Rejected => steps(&[json!({
                "when": "code",
                "prompt_contains": FILES[0].0,
                "do": "write",
                "files": {FILES[0].0: FILES[0].1, INTRUDER.0: INTRUDER.1},
                // One request a file: the second's call is the intruder's.
                "times": 2,
            })]),
            Play::Coder | Play::Judge => String::new(),
        };
        let (server, repo, home) = served_scratch(tools.server, "", &steps, tools.bins, dir)?;
        let mut command = epic_run(tools.epic, &repo, &home, tools.bins, &server)?;
        match self.play {
            Play::Rejected | Play::Coder => command.args(["--coder", self.preset]),
            Play::Judge => command.args(["--coder", "script", "--judge", self.preset]),
        };
        let (code, printed) = run_with_deadline(command, CASE_DEADLINE)?;
        let logged = requests(&server.logged());
        drop(server);
        let failed = |why: String| {
            Err(format!(
                "{why}\n--- the run printed (exit {code:?}):\n{printed}\n--- the server logged {} request(s)",
                logged.len()
            ))
        };
        if code != Some(0) {
            return failed("expected every story done (exit 0)".into());
        }
        let report = Report::read(&repo.join(".git/epic/e/report.json"));
        let checked = check_stories(&repo, &home, &report).and_then(|()| match self.play {
            Play::Rejected | Play::Coder => self.check_coder(&repo, &home, &report, &logged),
            Play::Judge => self.check_judge(&report, &logged),
        });
        match checked {
            Ok(()) => Ok(()),
            Err(why) => failed(why),
        }
    }
}

impl Case {
    /// The coder's edit outside the perimeter rejected at the request, every file its own
    /// story's, each written by the agent's own tool, its tool calls streamed.
    fn check_coder(&self, repo: &Path, home: &Path, report: &Report, logged: &[Request]) -> Result {
        let events = read_events(&repo.join(".git/epic/e/events.jsonl"));
        let rejected = self.play != Play::Rejected
            || events.iter().any(|event| {
                event.is("permission_rejected")
                    && event.text("story") == Some("a")
                    && event.mentions(INTRUDER.0)
            });
        if !rejected {
            return Err(format!(
                "no `permission_rejected` event of story a naming {}",
                INTRUDER.0
            ));
        }
        let counted = report
            .stories
            .iter()
            .find(|story| story.id == "a")
            .map_or(0, |story| story.permission_rejections);
        if self.play == Play::Rejected && counted == 0 {
            return Err("the report counts no rejected request of story a".into());
        }
        let shown = show(repo, home, &format!("epic/e:{}", INTRUDER.0))?;
        if shown == INTRUDER.1 {
            return Err(format!(
                "the intruder's {} reached the epic branch",
                INTRUDER.0
            ));
        }
        let active = events
            .iter()
            .any(|event| event.is("turn_activity") && event.text("role") == Some("coder"));
        if !active {
            return Err("no `turn_activity` event of the coder: its stream was not read".into());
        }
        let ours: Vec<&Request> = logged
            .iter()
            .filter(|request| request.of_api(self.api))
            .collect();
        let intruder = (self.play == Play::Rejected).then_some(&INTRUDER);
        for (path, _) in FILES.iter().chain(intruder) {
            let called = ours.iter().any(|request| {
                request.calls_mention(path) && request.called_one_of(self.file_tools)
            });
            if !called {
                return Err(format!(
                    "the server's log shows no call of {} writing {path}",
                    self.file_tools.join(" or ")
                ));
            }
        }
        // What the agent reported of its usage over ACP is what the report holds.
        check_usage(self.preset, self.reports, &ours, report)
    }

    /// Every story cleared by the agent in its first round, the agent asked for each verdict.
    fn check_judge(&self, report: &Report, logged: &[Request]) -> Result {
        let cleared = report
            .stories
            .iter()
            .filter(|story| story.judge.as_deref() == Some("judge cleared (round 1)"))
            .count();
        if cleared != FILES.len() {
            return Err(format!("the judge cleared {cleared} stories in round 1"));
        }
        let asked = logged
            .iter()
            .filter(|request| request.of_api(self.api) && request.is("judge"))
            .count();
        if asked < FILES.len() {
            return Err(format!(
                "the agent asked the server {asked} time(s) for `judge`"
            ));
        }
        Ok(())
    }
}
