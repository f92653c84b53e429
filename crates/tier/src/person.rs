//! The served case of a person in the loop (`epic run --on-blocked ask`, `epic answer`),
//! through Claude Code as coder.
//!
//! - **asked and answered**: an epic of one story, whose description does not say what to write;
//!   the server answers the coder's first coding request with a question and no tool call, its
//!   last line `BLOCKED_ON: which port should the service listen on?`. The plan cannot settle it
//!   and no verifier is set, so the story waits (`story_waiting`) and the run goes on. The case,
//!   watching `events.jsonl` beside the run, then runs `epic answer p 8080` (another process);
//!   the story runs again from its checkpoint (`answered`), and the coder's next request holds
//!   the answer (the server logs it, and answers only such a request with the file written by
//!   Claude Code's own tool). The run ends 0, the story done, the file on the epic branch holding
//!   8080, the answer read (`notes_read`).

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::Result;
use crate::cases::run_with_deadline;
use crate::json::{Report, read_events, requests, steps};
use crate::scratch::{epic_command, epic_run, served_scratch_with, show};
use crate::served::{CASE_DEADLINE, Served, Tools};

/// The epic of one story whose description leaves the port to a person.
const PLAN: &str = r#"{
  "epic_id": "e",
  "epic": "A service's port, which only the person running the epic knows.",
  "stories": [
    {"id": "p", "title": "Write the port", "description": "Write the port the service listens on to src/port/port.txt, a line holding only the number.", "owned": ["src/port"]}
  ]
}
"#;

/// The file the story writes once answered, and what it holds.
const FILE: (&str, &str) = ("src/port/port.txt", "8080\n");

/// The question the coder stops on, and the person's answer.
const QUESTION: &str = "which port should the service listen on?";
const ANSWER: &str = "8080";

/// The words epic puts before the coder's request that carries a person's answer
/// (`epic_protocol::prompts::person_notes`).
const ANSWERED: &str = "Their answer to the question you stopped on (BLOCKED_ON)";

/// How long `epic answer` may take.
const ANSWER_DEADLINE: Duration = Duration::from_secs(30);

/// The case.
pub(crate) struct Case;

/// The cases of this module.
pub(crate) fn cases() -> Vec<Case> {
    vec![Case]
}

impl Served for Case {
    fn name(&self) -> &'static str {
        "served: claude asks a person (BLOCKED_ON), is answered and done"
    }

    fn preset(&self) -> &'static str {
        "claude"
    }

    fn run(&self, tools: &Tools<'_>, dir: &Path) -> Result {
        asked(tools, dir)
    }
}

/// The coder's request holding the answer gets the file written; the first coding request
/// before it, the question.
fn asked_steps() -> String {
    steps(&[
        json!({
            "when": "code",
            "prompt_contains": ANSWERED,
            "do": "write",
            "files": {FILE.0: FILE.1},
        }),
        json!({
            "when": "code",
            "do": "text",
            "text": format!("The story does not say which port to write.\nBLOCKED_ON: {QUESTION}"),
            "times": 1,
        }),
    ])
}

/// An error holding `why` and what the run printed.
fn failed(why: &str, code: Option<i32>, printed: &str) -> String {
    format!("{why}\n--- the run printed (exit {code:?}):\n{printed}")
}

fn asked(tools: &Tools<'_>, dir: &Path) -> Result {
    let (server, repo, home) = served_scratch_with(
        tools.server,
        "claude",
        &asked_steps(),
        tools.bins,
        dir,
        PLAN,
    )?;
    let mut run = epic_run(tools.epic, &repo, &home, tools.bins, &server)?;
    run.args(["--coder", "claude", "--on-blocked", "ask"]);
    let running = std::thread::spawn(move || run_with_deadline(run, CASE_DEADLINE));
    // The story waiting on its question, or the run over (or the case's time up) first.
    let events = repo.join(".git/epic/e/events.jsonl");
    let started = Instant::now();
    let waiting = loop {
        if read_events(&events)
            .iter()
            .any(|event| event.is("story_waiting") && event.text("story") == Some("p"))
        {
            break true;
        }
        if running.is_finished() || started.elapsed() > CASE_DEADLINE {
            break false;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let answered = if waiting {
        let mut answer = epic_command(tools.epic, &repo, &home, tools.bins, &server)?;
        answer.args(["answer", "p", ANSWER]);
        Some(run_with_deadline(answer, ANSWER_DEADLINE)?)
    } else {
        None
    };
    let (code, printed) = running
        .join()
        .map_err(|_| "the run's thread panicked".to_owned())??;
    let Some((answer_code, answer_printed)) = answered else {
        return Err(failed(
            "the story never waited (`story_waiting`)",
            code,
            &printed,
        ));
    };
    if answer_code != Some(0) {
        return Err(failed(
            &format!("`epic answer p {ANSWER}` exited {answer_code:?}:\n{answer_printed}"),
            code,
            &printed,
        ));
    }
    if code != Some(0) {
        return Err(failed("expected the story done (exit 0)", code, &printed));
    }
    check_answered(&repo, &home, &requests(&server.logged()))
        .map_err(|why| failed(&why, code, &printed))
}

/// What must hold once the run ended: see the module's docs.
fn check_answered(repo: &Path, home: &Path, logged: &[crate::json::Request]) -> Result {
    let report = Report::read(&repo.join(".git/epic/e/report.json"));
    if report.stories_with("done") != 1 {
        return Err("the story is not done in the report".into());
    }
    let shown = show(repo, home, &format!("epic/e:{}", FILE.0))?;
    if shown != FILE.1 {
        return Err(format!("{} on the epic branch holds {shown:?}", FILE.0));
    }
    let events = read_events(&repo.join(".git/epic/e/events.jsonl"));
    for kind in ["story_waiting", "answered", "notes_read"] {
        if !events
            .iter()
            .any(|event| event.is(kind) && event.text("story") == Some("p"))
        {
            return Err(format!("no `{kind}` event of the story"));
        }
    }
    let coding: Vec<_> = logged
        .iter()
        .filter(|request| request.of_api("anthropic") && request.is("code"))
        .collect();
    let asked = coding
        .iter()
        .position(|request| request.answer == "text")
        .ok_or("the server never answered a coding request with the question")?;
    if coding[..asked]
        .iter()
        .any(|request| request.person_answer.is_some())
    {
        return Err("a coding request held an answer before the question".into());
    }
    let wrote = coding[asked + 1..].iter().any(|request| {
        request.person_answer.as_deref() == Some(ANSWER)
            && request.calls_mention(FILE.0)
            && request.called_one_of(&["Write"])
    });
    if !wrote {
        return Err(format!(
            "no coding request after the question held the answer `{ANSWER}` and was \
             answered with Claude Code's Write of {}",
            FILE.0
        ));
    }
    Ok(())
}
