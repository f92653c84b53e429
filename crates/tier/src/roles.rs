//! The served cases of the roles beyond coder, judge and reviewer, through the real agent CLIs:
//! `epic plan`'s architect, `epic land`'s lander, and the verifier of a `BLOCKED_ON:` claim.
//!
//! - **architect** (every preset): `epic plan` in epic's sandbox, where the whole repository is
//!   read-only to the architect, with the preset's read-only command line; the server answers
//!   the architect's request with a plan of two stories (`epic_model_server::EPIC_PLAN`). The
//!   plan is written to `epic-plan.md`, the CLI left nothing else in the repository, and the
//!   plan runs: `epic run epic-plan.md` with the built-in `script` coder does both stories.
//! - **lander** (every preset): an epic run by the `script` coder, then `main` changed where a
//!   story wrote, so that `epic land` gives the conflict to the preset's lander turn; the server
//!   answers it with the resolved file, written by the CLI's own tool, and a file outside the
//!   lander's perimeter. The resolution lands on `main`, the stray file is put back (the
//!   landing says so) and never reaches `main`, and `epic verify` finds every commit attested.
//! - **verifier** (every preset): Claude Code as coder answers its first coding request with
//!   `BLOCKED_ON:` a need no story of the plan owns or provides; the preset, as verifier, reads
//!   the story's worktree read-only and is answered that nothing is missing
//!   (`epic_model_server::NOT_BLOCKED`): the claim is rejected by the verifier
//!   (`blocked_rejected`), the coder's pushback turn does the work, and every story is done.

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::Result;
use crate::cases::run_with_deadline;
use crate::json::{Report, Request, read_events, requests, steps};
use crate::scratch::{FILES, epic_command, epic_run, served_scratch, show};
use crate::served::{CASE_DEADLINE, PRESETS, Served, Tools, api_of, check_stories};
use crate::server::ModelServer;

/// The role a case's preset takes.
#[derive(Clone, Copy)]
enum Role {
    Architect,
    Lander,
    Verifier,
}

/// One case: a preset in a role.
pub(crate) struct Case {
    name: String,
    preset: &'static str,
    role: Role,
}

/// The architect, the lander and the verifier, for every preset.
pub(crate) fn cases() -> Vec<Case> {
    PRESETS
        .iter()
        .flat_map(|(preset, ..)| {
            [
                Case {
                    name: format!("served: {preset} as architect plans an epic that runs"),
                    preset,
                    role: Role::Architect,
                },
                Case {
                    name: format!(
                        "served: {preset} as lander resolves a conflict, its stray put back"
                    ),
                    preset,
                    role: Role::Lander,
                },
                Case {
                    name: format!(
                        "served: {preset} as verifier rejects a BLOCKED_ON claim, the story done"
                    ),
                    preset,
                    role: Role::Verifier,
                },
            ]
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
        match self.role {
            Role::Architect => planned(self.preset, tools, dir),
            Role::Lander => landed(self.preset, tools, dir),
            Role::Verifier => verified(self.preset, tools, dir),
        }
    }
}

/// The lander's answer: the conflicted file with both sides kept, and a file no lander may
/// write.
fn land_steps() -> String {
    steps(&[json!({
        "when": "land",
        "do": "write",
        "files": {
            "src/a/a.txt": "alpha\nalpha from main\n",
            "HOSTILE.txt": "not the lander's to write\n",
        },
    })])
}

/// What `main` says in the file story `a` wrote, so that landing conflicts there.
const ON_MAIN: &str = "alpha from main\n";

/// Runs `command` under the case's deadline: an error holding what it printed unless it exits
/// with `code`.
fn expect(command: Command, code: i32, what: &str) -> Result<String> {
    let (exit, printed) = run_with_deadline(command, CASE_DEADLINE)?;
    if exit == Some(code) {
        Ok(printed)
    } else {
        Err(format!(
            "{what}: expected exit {code}, got {exit:?}; it printed:\n{printed}"
        ))
    }
}

/// The requests of `preset`'s API the server logged of `kind`.
fn logged_of(server: &ModelServer, preset: &str, kind: &str) -> Vec<Request> {
    requests(&server.logged())
        .into_iter()
        .filter(|request| request.of_api(api_of(preset)) && request.is(kind))
        .collect()
}

/// `epic plan` with `preset` as architect, then the plan run: see the module's docs.
fn planned(preset: &str, tools: &Tools<'_>, dir: &Path) -> Result {
    let (server, repo, home) = served_scratch(tools.server, preset, "", tools.bins, dir)?;
    let mut plan = epic_command(tools.epic, &repo, &home, tools.bins, &server)?;
    plan.args([
        "plan",
        "Two small files, one after the other.",
        "--architect",
        preset,
        "--sandbox",
        "on",
        "--no-progress",
    ]);
    let printed = expect(plan, 0, "`epic plan`")?;
    if !repo.join("epic-plan.md").is_file() {
        return Err(format!(
            "no epic-plan.md was written; it printed:\n{printed}"
        ));
    }
    if logged_of(&server, preset, "architect").is_empty() {
        return Err(format!("{preset} never asked the server as the architect"));
    }
    // The architect's repository is read-only: it left nothing but the plan epic wrote.
    let status = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=all"])
        .current_dir(&repo)
        .env("HOME", &home)
        .output()
        .map_err(|error| format!("cannot start git: {error}"))?;
    let left: Vec<String> = String::from_utf8_lossy(&status.stdout)
        .lines()
        .filter(|line| !matches!(*line, "?? epic-plan.md" | "?? plan.json"))
        .map(str::to_owned)
        .collect();
    if !left.is_empty() {
        return Err(format!(
            "the architect's turn left {left:?} in the repository"
        ));
    }
    let mut run = epic_command(tools.epic, &repo, &home, tools.bins, &server)?;
    run.args([
        "run",
        "epic-plan.md",
        "--coder",
        "script",
        "--sandbox",
        "on",
        "--no-progress",
    ]);
    expect(run, 0, "`epic run epic-plan.md`")?;
    for (path, contents) in [("src/a/a.txt", "alpha\n"), ("src/b/b.txt", "bravo\n")] {
        let shown = show(&repo, &home, &format!("epic/planned:{path}"))?;
        if shown != contents {
            return Err(format!("{path} on epic/planned holds {shown:?}"));
        }
    }
    Ok(())
}

/// `epic land` with `preset` as the lander of a conflict: see the module's docs.
fn landed(preset: &str, tools: &Tools<'_>, dir: &Path) -> Result {
    let (server, repo, home) =
        served_scratch(tools.server, preset, &land_steps(), tools.bins, dir)?;
    let mut run = epic_run(tools.epic, &repo, &home, tools.bins, &server)?;
    run.args(["--coder", "script"]);
    expect(run, 0, "`epic run` with the script coder")?;
    fs::create_dir_all(repo.join("src/a")).map_err(|error| error.to_string())?;
    fs::write(repo.join("src/a/a.txt"), ON_MAIN).map_err(|error| error.to_string())?;
    crate::cases::git(&repo, &home, &["add", "src/a/a.txt"])?;
    crate::cases::git(&repo, &home, &["commit", "--quiet", "-m", "main writes a"])?;
    let mut land = epic_command(tools.epic, &repo, &home, tools.bins, &server)?;
    land.args([
        "land",
        "e",
        "--target",
        "main",
        "--coder",
        preset,
        "--sandbox",
        "on",
        "--turn-timeout",
        "120",
        "--no-progress",
    ]);
    let printed = expect(land, 0, "`epic land`")?;
    let resolved = show(&repo, &home, "main:src/a/a.txt")?;
    if resolved != "alpha\nalpha from main\n" {
        return Err(format!(
            "main's src/a/a.txt holds {resolved:?}; the landing printed:\n{printed}"
        ));
    }
    for (path, contents) in &FILES[1..] {
        let shown = show(&repo, &home, &format!("main:{path}"))?;
        if shown != *contents {
            return Err(format!("{path} on main holds {shown:?}"));
        }
    }
    if show(&repo, &home, "main:HOSTILE.txt").is_ok() {
        return Err("HOSTILE.txt, outside the lander's perimeter, reached main".into());
    }
    if !printed.contains("from story a's conflict turn: HOSTILE.txt") {
        return Err(format!(
            "the landing did not say HOSTILE.txt was put back; it printed:\n{printed}"
        ));
    }
    let asked = logged_of(&server, preset, "land");
    let (_, _, file_tools, _) = PRESETS
        .iter()
        .find(|(name, ..)| *name == preset)
        .ok_or("an unknown preset")?;
    let wrote = asked.iter().any(|request| {
        request.answer == "write"
            && (file_tools.is_empty()
                || (request.calls_mention("src/a/a.txt") && request.called_one_of(file_tools)))
    });
    if !wrote {
        return Err(format!(
            "the server's log shows no lander request of {preset} answered with the resolution"
        ));
    }
    let mut verify = epic_command(tools.epic, &repo, &home, tools.bins, &server)?;
    verify.args(["verify", "e"]);
    expect(verify, 0, "`epic verify`")?;
    Ok(())
}

/// The coder's first answer: a claim that the story is blocked on what no story of the plan
/// owns or provides, which only a verifier can settle.
fn blocked_steps() -> String {
    steps(&[json!({
        "when": "code",
        "do": "text",
        "text": "The story needs a configuration service that is not here.\n\
                 BLOCKED_ON: the configuration service",
        "times": 1,
    })])
}

/// `epic run` with Claude Code as coder and `preset` as verifier: see the module's docs.
fn verified(preset: &str, tools: &Tools<'_>, dir: &Path) -> Result {
    let (server, repo, home) =
        served_scratch(tools.server, preset, &blocked_steps(), tools.bins, dir)?;
    let mut run = epic_run(tools.epic, &repo, &home, tools.bins, &server)?;
    run.args([
        "--coder",
        "claude",
        "--verifier",
        preset,
        "--concurrency",
        "1",
    ]);
    let printed = expect(run, 0, "`epic run` with a verifier")?;
    let report = Report::read(&repo.join(".git/epic/e/report.json"));
    check_stories(&repo, &home, &report)?;
    let rejected = read_events(&repo.join(".git/epic/e/events.jsonl"))
        .iter()
        .any(|event| event.is("blocked_rejected") && event.text("by") == Some("verifier"));
    if !rejected {
        return Err(format!(
            "no `blocked_rejected` event by the verifier; the run printed:\n{printed}"
        ));
    }
    if logged_of(&server, preset, "verify").is_empty() {
        return Err(format!("{preset} never asked the server as the verifier"));
    }
    Ok(())
}
