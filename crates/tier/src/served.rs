//! `cargo xtask agents`' served cases: the real agent CLIs doing real stories against the
//! scripted model server (`crates/model-server`) on 127.0.0.1.
//!
//! Each case starts `epic-model-server` with the case's steps, points every CLI at it (Claude
//! Code with `ANTHROPIC_BASE_URL` and a key, Codex with a model provider of its own in
//! `~/.codex/config.toml`, Gemini CLI with `GOOGLE_GEMINI_BASE_URL`, a key and its auth type,
//! opencode with its Anthropic provider's `baseURL` in `~/.config/opencode/opencode.json`),
//! and runs `epic run` on an epic of three stories (one depending on another), in epic's
//! sandbox (`--sandbox on`) with the seat check on:
//!
//! - **success, per preset and role** (coder, judge, reviewer; the built-in `script` coder does
//!   the work where the preset takes another role): every story done; as coder, each story's
//!   file was written by the CLI's own tool (the server's log shows the call naming the file, and
//!   the file is on the epic branch); as judge or reviewer, the CLI was asked for its verdict;
//!   the preset's tokens in the report are exactly what the server reported to the CLI (so the
//!   CLI's own figures reached the report), and Claude Code's cost is its own (`reported`);
//!   opencode's `run` reports none, and its figures are estimates.
//! - **a 429, a 500**: the server answers every request with Anthropic's rate limit (Claude
//!   Code) or OpenAI's server error (Codex); the turn fails as the CLI renders it, is retried,
//!   and the seat is paused, which stops the run (`--max-wait` is short). Gemini CLI is not
//!   played a short rate limit end to end: it retries for minutes (in plan mode it falls back
//!   to another model and tries that too, past four minutes), so only its capture is
//!   classified; a quota hours away it does not retry (the roster case below).
//! - **a silent stream**: the coder's reply opens and says nothing; epic's stall watchdog
//!   (`--stall-timeout 10m`, on a clock the case moves: [`StallClock`]) ends the turn, twice,
//!   and the story fails saying so.
//! - **streaming**: as coder, Claude Code's, Codex's and Gemini CLI's tool calls reach epic as
//!   `turn_activity` events while the turn runs.
//! - **stalled once** (Claude Code, Codex, Gemini CLI): the first coding request held silent;
//!   the turn ends as stalled (`turn_stalled`, run again), the next request is answered, every
//!   story done.
//! - **looping once** (Claude Code, Codex): the coder answered with the same `ls` five times;
//!   the turn ends as looping (`turn_looping`), the request after it holds epic's note (the
//!   server logs it), every story done. Gemini CLI stops such a loop itself (it neither runs
//!   nor prints the fifth call), so epic never sees one: the tier asserts that much.
//! - **a roster** (`--coder claude,codex`, `--max-wait 1h`): every Anthropic request answered
//!   with a usage limit three hours away; Claude Code's seat paused (`seat_paused`, a usage
//!   limit), every story done by Codex, and the run never waits on the reset. The same with
//!   `--coder gemini,claude` and Gemini's quota (a retry hours away is final to Gemini CLI).
//! - **a roster past a stall** (`--coder claude,codex`): Claude Code held silent on every
//!   coding request; each story's turn ended as stalled and run again on Codex, which does
//!   every story.
//!
//! - **more rosters** (two accounts of one CLI as named seats, every seat paused, a run killed
//!   mid-roster), in [`crate::rosters`].
//! - **the architect and the lander** (every preset): `epic plan` and `epic land` through the
//!   real CLI, in [`crate::roles`].
//! - **a person in the loop** (Claude Code as coder, `--on-blocked ask`): the coder's
//!   `BLOCKED_ON:` question waits for `epic answer`, and the answer reaches its next request,
//!   in [`crate::person`].
//! - **ACP seats** (`gemini-acp`, `claude-acp`, `codex-acp`): the agents spoken to over the
//!   Agent Client Protocol as coder and judge, an edit outside the perimeter rejected at the
//!   agent's permission request, in [`crate::acp`].
//!
//! `cargo xtask agents capture` records what each real CLI prints for each failure the server
//! can play (see [`crate::capture`]).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::cases::{files_under, indent, run_with_deadline};
use crate::json::{Event, Report, Request, read_events, requests, steps, steps_do};
use crate::scratch::{FILES, epic_run, served_scratch, show};
use crate::server::StallClock;
use crate::{Result, say};

/// The presets served: each with the API its CLI speaks (as the server logs it, a prefix:
/// Gemini CLI's side requests are `gemini`, its turns `gemini-stream`), the tools it may write
/// a file with, and what it reports of its usage.
pub(crate) const PRESETS: [(&str, &str, &[&str], Reports); 5] = [
    (
        "claude",
        "anthropic",
        &["Write", "Bash"],
        Reports::TokensAndCost,
    ),
    (
        "codex",
        "responses",
        &["exec_command", "shell"],
        Reports::Tokens,
    ),
    (
        "gemini",
        "gemini",
        &["write_file", "run_shell_command"],
        Reports::Tokens,
    ),
    (
        "opencode",
        "anthropic",
        &["write", "bash"],
        Reports::Nothing,
    ),
    // aider calls no tool: its own editor applies the whole files of the reply.
    ("aider", "anthropic", &[], Reports::Nothing),
];

/// The presets whose output epic reads as a stream of events while the turn runs.
const STREAMING: [&str; 3] = ["claude", "codex", "gemini"];

/// What a CLI reports of its usage, which the report must then hold.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reports {
    /// Its tokens and cost: the report's figures are `reported`, its tokens the server's.
    TokensAndCost,
    /// Its tokens: the cost is priced (`mixed`), its tokens the server's.
    Tokens,
    /// Nothing epic reads (opencode's `run` prints text): the figures are `estimated`.
    Nothing,
}

/// How long one served case may take.
pub(crate) const CASE_DEADLINE: Duration = Duration::from_mins(5);

/// What a served case must show.
#[derive(Clone, Copy)]
enum Expect {
    /// Every story done, the preset in this role.
    Done(Role),
    /// The seat paused on the server's failure: the run stops (exit 130) saying so, and the
    /// CLI's own words for the failure (these) reach the run.
    Paused(&'static str),
    /// Every request answered 401: the run stops as for a lost login (exit 2, "is not logged
    /// in" with the CLI's own words, these), and no story failed.
    KeyRefused(&'static str),
    /// The coder's turns ended by the stall watchdog: the stories fail saying so (exit 1).
    Stalled,
    /// The first coding request's stream cut half way, and every story done: the CLI asked
    /// again itself within the turn (`by_cli`), or failed the turn and epic tried it again
    /// (`turn_retried`).
    CutOnce { by_cli: bool },
    /// The first coding request held silent: the turn ended as stalled (`turn_stalled`), run
    /// again, answered, and every story done.
    StalledOnce,
    /// The first coding requests answered with the same tool call: the turn ended as looping
    /// (`turn_looping`), run again with epic's note (the server saw it), every story done.
    LoopedOnce,
    /// The same loop played to Gemini CLI, which catches it first: it does not run (nor
    /// print) the fifth identical call and goes on, so epic sees four and never ends the turn;
    /// every story done, no `turn_looping`.
    LoopCaughtByCli,
    /// A roster, `FIRST,PRESET`, whose first seat is at its usage limit (every request of its
    /// API a 429 with a reset hours away): the seat paused (`seat_paused`, a usage limit),
    /// every story done by the case's preset, and no wait on the reset.
    Rostered { first: &'static str },
    /// A roster, `FIRST,PRESET`, whose first seat goes silent on every coding request: each
    /// story's turn ended as stalled and run again on the case's preset, which does every
    /// story.
    StalledOver { first: &'static str },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Coder,
    Judge,
    Reviewer,
}

/// One served case.
pub(crate) struct Case {
    pub(crate) name: String,
    pub(crate) preset: &'static str,
    args: Vec<String>,
    /// The server's steps file.
    steps: String,
    expect: Expect,
}

/// The served cases: the success path of each preset in each role, then the failures.
pub(crate) fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for (preset, _, _, _) in PRESETS {
        for (role, words) in [
            (Role::Coder, vec!["--coder", preset]),
            (Role::Judge, vec!["--coder", "script", "--judge", preset]),
            (
                Role::Reviewer,
                vec!["--coder", "script", "--reviewer", preset],
            ),
        ] {
            let name = match role {
                Role::Coder => "coder",
                Role::Judge => "judge",
                Role::Reviewer => "reviewer",
            };
            cases.push(Case {
                name: format!("served: {preset} as {name} does three stories"),
                preset,
                args: words.into_iter().map(str::to_owned).collect(),
                steps: String::new(),
                expect: Expect::Done(role),
            });
        }
    }
    cases.extend(failures());
    cases
}

/// The served cases of failures the run goes past or stops on: limits, stalls, loops, rosters.
fn failures() -> Vec<Case> {
    let mut cases = Vec::new();
    // Each failure in the CLI's own words: Claude Code's for a 429 and Anthropic's overloaded
    // error, Codex's for a 500 from its provider.
    cases.push(paused("claude", 429, "429"));
    cases.push(paused("codex", 500, "high demand"));
    cases.push(paused("claude", 529, "529 Overloaded"));
    // A key the API refuses, as each CLI renders the 401.
    for (preset, words) in [
        ("claude", "Invalid API key"),
        ("codex", "Incorrect API key"),
        ("gemini", "API key not valid"),
        ("opencode", "invalid x-api-key"),
        ("aider", "not able to authenticate"),
    ] {
        cases.push(Case {
            name: format!(
                "served: {preset} with its key refused (401) stops the run, no story failed"
            ),
            preset,
            args: ["--coder", preset].map(str::to_owned).to_vec(),
            steps: steps(&[json!({"do": "status", "status": 401})]),
            expect: Expect::KeyRefused(words),
        });
    }
    for preset in ["claude", "codex", "gemini"] {
        cases.push(Case {
            name: format!("served: {preset} on a stream cut once is retried and done"),
            preset,
            args: ["--coder", preset].map(str::to_owned).to_vec(),
            steps: steps(&[json!({"when": "code", "do": "cut", "times": 1})]),
            // Claude Code asks again itself (even with no retries of its own configured for
            // errors); Codex and Gemini CLI fail the turn, and epic runs it again.
            expect: Expect::CutOnce {
                by_cli: preset == "claude",
            },
        });
        cases.push(Case {
            name: format!("served: {preset} stalls once, is run again and done"),
            preset,
            args: stalling(preset),
            steps: steps(&[json!({"when": "code", "do": "silent", "times": 1})]),
            expect: Expect::StalledOnce,
        });
        cases.push(Case {
            name: if preset == "gemini" {
                "served: gemini catches its own loop before epic does".into()
            } else {
                format!("served: {preset} loops once, is run again with the note and done")
            },
            preset,
            // One story at a time, so the repeated calls all fall in one turn.
            args: ["--coder", preset, "--concurrency", "1"]
                .map(str::to_owned)
                .to_vec(),
            // The coder's first requests the same shell call, as many as make a loop
            // (`epic_agents`' `LOOP_REPEATS`), then the success path.
            steps: steps(&[json!({"when": "code", "do": "repeat", "times": 5})]),
            expect: if preset == "gemini" {
                Expect::LoopCaughtByCli
            } else {
                Expect::LoopedOnce
            },
        });
    }
    cases.push(Case {
        name: "served: claude on a silent stream is ended as stalled".into(),
        preset: "claude",
        args: stalling("claude"),
        steps: steps(&[json!({"when": "code", "do": "silent"})]),
        expect: Expect::Stalled,
    });
    cases.extend(rosters());
    cases
}

/// `--coder PRESET` with every request answered with `status`: the seat paused, the CLI's
/// `words` for the failure reaching the run.
fn paused(preset: &'static str, status: u16, words: &'static str) -> Case {
    Case {
        name: format!("served: {preset} on a {status} pauses its seat"),
        preset,
        args: ["--coder", preset, "--max-wait", "20s"]
            .map(str::to_owned)
            .to_vec(),
        steps: steps(&[json!({"do": "status", "status": status})]),
        expect: Expect::Paused(words),
    }
}

/// `--coder FIRST,SECOND` with every request of `api` (FIRST's) answered with a usage limit
/// three hours away: every story done by SECOND.
fn at_limit(first: &'static str, second: &'static str, api: &str) -> Case {
    Case {
        name: format!("served: {first} at its usage limit, every story done by {second}"),
        preset: second,
        args: vec![
            "--coder".into(),
            format!("{first},{second}"),
            "--max-wait".into(),
            "1h".into(),
        ],
        steps: steps(&[json!({"api": api, "do": "limit", "hours": 3})]),
        expect: Expect::Rostered { first },
    }
}

/// The served cases of a roster whose first seat is at its limit or stalls.
fn rosters() -> Vec<Case> {
    vec![
        at_limit("claude", "codex", "anthropic"),
        at_limit("gemini", "claude", "gemini"),
        Case {
            name: "served: claude stalls on every story, codex takes each turn over".into(),
            preset: "codex",
            args: stalling("claude,codex"),
            steps: steps(&[json!({"api": "anthropic", "when": "code", "do": "silent"})]),
            expect: Expect::StalledOver { first: "claude" },
        },
    ]
}

/// The stall cases' `--stall-timeout`, in minutes. The run's clock is a file the case moves
/// (`EPIC_TEST_CLOCK`, [`StallClock`]), so a CLI slow to start on a loaded machine is never
/// taken for a stalled one.
const STALL_MINUTES: u64 = 10;

/// The options of a stall case with `coder`: the stall timeout, and one turn at a time, since
/// the clock the stall is timed on is the run's, moved for every turn.
fn stalling(coder: &str) -> Vec<String> {
    vec![
        "--coder".into(),
        coder.into(),
        "--stall-timeout".into(),
        format!("{STALL_MINUTES}m"),
        "--concurrency".into(),
        "1".into(),
    ]
}

/// How long a roster case may take at most: far less than a pause of `--max-wait`.
pub(crate) const NO_WAIT: Duration = Duration::from_mins(4);

/// The binaries and directories the served cases use.
pub(crate) struct Tools<'a> {
    pub(crate) epic: &'a Path,
    pub(crate) server: &'a Path,
    /// Where the agent CLIs' programs are: npm's `node_modules/.bin`, the PyPI ones' links.
    pub(crate) bins: &'a [PathBuf],
    /// Where each case gets a directory: not under `/tmp`, where Codex refuses to set up its
    /// sandbox helper.
    pub(crate) scratch: &'a Path,
}

/// A served case: run in a scratch directory of its own, against a model server of its own.
pub(crate) trait Served {
    /// What the tier calls it (a filter picks cases by it).
    fn name(&self) -> &str;
    /// The preset whose CLI it runs.
    fn preset(&self) -> &'static str;
    /// Runs it in `dir`: why it failed, if it did.
    fn run(&self, tools: &Tools<'_>, dir: &Path) -> Result;
}

impl Served for Case {
    fn name(&self) -> &str {
        &self.name
    }

    fn preset(&self) -> &'static str {
        self.preset
    }

    fn run(&self, tools: &Tools<'_>, dir: &Path) -> Result {
        run_case(self, tools, dir)
    }
}

/// Runs `cases`, saying each one's outcome; the names of those that failed.
pub(crate) fn run(cases: &[Box<dyn Served>], tools: &Tools<'_>) -> Vec<String> {
    let mut failed = Vec::new();
    for (n, case) in cases.iter().enumerate() {
        let dir = tools.scratch.join(format!("served-{n}"));
        fs::remove_dir_all(&dir).ok();
        let started = Instant::now();
        let outcome = case.run(tools, &dir);
        say(&format!(
            "{} {} ({:.0} s)",
            if outcome.is_ok() { "ok  " } else { "FAIL" },
            case.name(),
            started.elapsed().as_secs_f64()
        ));
        match outcome {
            Ok(()) => {
                fs::remove_dir_all(&dir).ok();
            }
            Err(why) => {
                say(&indent(&format!("{why}\n(kept in {})", dir.display())));
                failed.push(case.name().to_owned());
            }
        }
    }
    failed
}

fn run_case(case: &Case, tools: &Tools<'_>, dir: &Path) -> Result {
    let (server, repo, home) =
        served_scratch(tools.server, case.preset, &case.steps, tools.bins, dir)?;
    let mut command = epic_run(tools.epic, &repo, &home, tools.bins, &server)?;
    command.args(&case.args);
    // A case that holds a stream silent runs on a clock it moves once the server holds one.
    let clock = if steps_do(&case.steps, "silent") {
        let clock = StallClock::start(
            dir,
            &server.log,
            &repo.join(".git/epic/e/events.jsonl"),
            STALL_MINUTES + 1,
        )?;
        command.env("EPIC_TEST_CLOCK", &clock.file);
        Some(clock)
    } else {
        None
    };
    let started = Instant::now();
    let (code, printed) = run_with_deadline(command, CASE_DEADLINE)?;
    let took = started.elapsed();
    drop(clock);
    let logged = requests(&server.logged());
    drop(server);
    let failed = |why: String| {
        Err(format!(
            "{why}\n--- the run printed (exit {code:?}):\n{printed}\n--- the server logged {} request(s)",
            logged.len()
        ))
    };
    let report = Report::read(&repo.join(".git/epic/e/report.json"));
    match case.expect {
        Expect::Done(role) => {
            if code != Some(0) {
                return failed("expected every story done (exit 0)".into());
            }
            if let Err(why) = check_done(case, role, &repo, &home, &logged, &report) {
                return failed(why);
            }
        }
        Expect::Paused(words) => {
            let mut everything = printed.clone();
            for file in files_under(&repo.join(".git").join("epic")) {
                everything.push_str(&fs::read_to_string(file).unwrap_or_default());
            }
            if code != Some(130) || !printed.contains("would be paused") {
                return failed("expected the seat paused and the run stopped (exit 130)".into());
            }
            if !everything.contains(words) {
                return failed(format!(
                    "the CLI's words for the failure (`{words}`) did not reach the run"
                ));
            }
        }
        Expect::KeyRefused(words) => {
            if code != Some(2) || !printed.contains("is not logged in") || !printed.contains(words)
            {
                return failed(format!(
                    "expected the run stopped as not logged in (exit 2) with `{words}`"
                ));
            }
            if report.stories_with("failed") > 0 {
                return failed("a story failed on a refused key".into());
            }
        }
        Expect::CutOnce { .. }
        | Expect::StalledOnce
        | Expect::LoopedOnce
        | Expect::LoopCaughtByCli
        | Expect::Rostered { .. }
        | Expect::StalledOver { .. } => {
            if code != Some(0) {
                return failed("expected every story done (exit 0)".into());
            }
            if let Err(why) = check_recovered(case, &repo, &home, &report, &logged, took) {
                return failed(why);
            }
        }
        Expect::Stalled => {
            if code != Some(1) || !printed.contains("ended as stalled") {
                return failed("expected the stories failed as stalled (exit 1)".into());
            }
            if !logged.iter().any(|request| request.answer == "silent") {
                return failed("the server never went silent".into());
            }
        }
    }
    Ok(())
}

/// What must hold of a successful case: see the module's docs.
fn check_done(
    case: &Case,
    role: Role,
    repo: &Path,
    home: &Path,
    logged: &[Request],
    report: &Report,
) -> Result {
    let (_, api, file_tools, reports) = PRESETS
        .iter()
        .find(|(preset, _, _, _)| *preset == case.preset)
        .ok_or("an unknown preset")?;
    check_stories(repo, home, report)?;
    // Every verdict the CLI gave was read: none fell back to "unreadable verdict", and a judge
    // cleared each story in its first round.
    let events = read_events(&repo.join(".git/epic/e/events.jsonl"));
    // The coder's stream was read as it went: its tool calls are `turn_activity` events (the
    // streaming presets; opencode's `run` and aider print text, read when the turn ends).
    if role == Role::Coder && STREAMING.contains(&case.preset) {
        let active = events
            .iter()
            .any(|event| event.is("turn_activity") && event.text("role") == Some("coder"));
        if !active {
            return Err("no `turn_activity` event of the coder: its stream was not read".into());
        }
    }
    if events
        .iter()
        .any(|event| event.mentions("unreadable verdict"))
    {
        return Err("a verdict of the CLI was unreadable (events.jsonl)".into());
    }
    let cleared = report
        .stories
        .iter()
        .filter(|story| story.judge.as_deref() == Some("judge cleared (round 1)"))
        .count();
    if role == Role::Judge && cleared != FILES.len() {
        return Err(format!("the judge cleared {cleared} stories in round 1"));
    }
    let ours: Vec<&Request> = logged
        .iter()
        .filter(|request| request.of_api(api))
        .collect();
    match role {
        Role::Coder if file_tools.is_empty() => {
            // aider: a coding request per story answered with the files (on the epic branch,
            // checked above, as aider's editor wrote them).
            let written = ours
                .iter()
                .filter(|request| request.is("code") && request.answer == "write")
                .count();
            if written < FILES.len() {
                return Err(format!(
                    "the server answered {written} coding request(s) with the files"
                ));
            }
        }
        Role::Coder => {
            for (path, _) in FILES {
                let called = ours.iter().any(|request| {
                    request.calls_mention(path) && request.called_one_of(file_tools)
                });
                if !called {
                    return Err(format!(
                        "the server's log shows no call of {} writing {path}",
                        file_tools.join(" or ")
                    ));
                }
            }
        }
        Role::Judge | Role::Reviewer => {
            let kind = if role == Role::Judge {
                "judge"
            } else {
                "review"
            };
            let asked = ours.iter().filter(|request| request.is(kind)).count();
            if asked < FILES.len() {
                return Err(format!(
                    "the CLI asked the server {asked} time(s) for `{kind}`"
                ));
            }
        }
    }
    check_usage(case.preset, *reports, &ours, report)
}

/// What must hold of a run that met a stall, a loop or a seat's limit and went on: every
/// story done, and what the case plays shown in the events and the server's log.
fn check_recovered(
    case: &Case,
    repo: &Path,
    home: &Path,
    report: &Report,
    logged: &[Request],
    took: Duration,
) -> Result {
    check_stories(repo, home, report)?;
    let events = read_events(&repo.join(".git/epic/e/events.jsonl"));
    match case.expect {
        Expect::CutOnce { by_cli } => check_cut_once(by_cli, &events, logged),
        Expect::StalledOnce => check_stalled_once(&events, logged),
        Expect::LoopedOnce => check_looped_once(case.preset, &events, logged),
        Expect::LoopCaughtByCli => check_loop_caught(&events, logged),
        Expect::Rostered { first } => check_rostered(first, case.preset, &events, logged, took),
        Expect::StalledOver { first } => check_stalled_over(first, case.preset, &events, logged),
        Expect::Done(_) | Expect::Paused(_) | Expect::KeyRefused(_) | Expect::Stalled => Ok(()),
    }
}

/// Every story done in `report`, and each one's file on the epic branch.
pub(crate) fn check_stories(repo: &Path, home: &Path, report: &Report) -> Result {
    let done = report.stories_with("done");
    if done != FILES.len() {
        return Err(format!(
            "{done} of {} stories done in the report",
            FILES.len()
        ));
    }
    for (path, contents) in FILES {
        let shown = show(repo, home, &format!("epic/e:{path}"))?;
        if shown != contents {
            return Err(format!("{path} on the epic branch holds {shown:?}"));
        }
    }
    Ok(())
}

/// A cut stream, then the story done: the server cut one stream, and the turn it broke was
/// tried again by the CLI itself (`by_cli`: the request after the cut one is the same request
/// again, with as many tool results, and epic saw no failure) or by epic (`turn_retried`).
fn check_cut_once(by_cli: bool, events: &[Event], logged: &[Request]) -> Result {
    let cut = logged
        .iter()
        .position(|request| request.answer == "cut")
        .ok_or("the server never cut a stream")?;
    let asked_again = logged[cut + 1..]
        .iter()
        .find(|request| request.is("code"))
        .is_some_and(|next| next.tool_results == logged[cut].tool_results);
    let retried = events.iter().any(|event| event.is("turn_retried"));
    match (by_cli, asked_again, retried) {
        (true, true, false) | (false, _, true) => Ok(()),
        (true, _, _) => Err(format!(
            "expected the CLI to ask again itself (asked again: {asked_again}, epic retried: \
             {retried})"
        )),
        (false, _, false) => {
            Err("no `turn_retried` event: epic did not try the broken turn again".into())
        }
    }
}

/// A stall, then the story done: the server went silent once, epic said `turn_stalled` and
/// ran the request again (`"again": true`).
fn check_stalled_once(events: &[Event], logged: &[Request]) -> Result {
    if !logged.iter().any(|request| request.answer == "silent") {
        return Err("the server never went silent".into());
    }
    let stalled: Vec<&Event> = events
        .iter()
        .filter(|event| event.is("turn_stalled"))
        .collect();
    if stalled.len() != 1 || !stalled[0].flag("again") {
        return Err(format!(
            "expected one `turn_stalled` event, run again; events.jsonl has {}",
            stalled.len()
        ));
    }
    Ok(())
}

/// A loop, then the story done: the server answered the same call five times, epic said
/// `turn_looping` and asked again, and the request after it held epic's note.
fn check_looped_once(preset: &str, events: &[Event], logged: &[Request]) -> Result {
    let looping: Vec<&Event> = events
        .iter()
        .filter(|event| event.is("turn_looping"))
        .collect();
    if looping.len() != 1 || !looping[0].flag("again") {
        return Err(format!(
            "expected one `turn_looping` event, run again; events.jsonl has {} ({preset})",
            looping.len()
        ));
    }
    let last_repeat = logged
        .iter()
        .rposition(|request| request.answer == "repeat")
        .ok_or("the server never repeated a call")?;
    let noted = logged[last_repeat + 1..]
        .iter()
        .find(|request| request.is("code"))
        .and_then(|request| request.note.as_deref())
        .is_some_and(|note| note.starts_with("Note: your previous attempt"));
    if !noted {
        return Err("the coding request after the loop did not hold epic's note".into());
    }
    Ok(())
}

/// Gemini CLI's own loop detection: the server repeated the call five times, epic never saw
/// a loop (the CLI did not print the fifth call), and the turn ended on its own.
fn check_loop_caught(events: &[Event], logged: &[Request]) -> Result {
    let repeated = logged
        .iter()
        .filter(|request| request.answer == "repeat")
        .count();
    if repeated != 5 {
        return Err(format!(
            "the server repeated the call {repeated} times, not 5"
        ));
    }
    if events.iter().any(|event| event.is("turn_looping")) {
        return Err(
            "epic ended a turn as looping: Gemini CLI no longer stops its own loop first \
             (then it is proven like the others: move it to `LoopedOnce`)"
                .into(),
        );
    }
    Ok(())
}

/// The API `preset`'s CLI speaks, as the server logs it (a prefix).
pub(crate) fn api_of(preset: &str) -> &'static str {
    PRESETS
        .iter()
        .find(|(name, ..)| *name == preset)
        .map_or("", |(_, api, ..)| api)
}

/// Every story's file written by `second`'s CLI (its API's log shows the call naming it),
/// and no tool call ever answered to `first`'s.
pub(crate) fn check_written_by(first: &str, second: &str, logged: &[Request]) -> Result {
    let called = |api: &str, request: &Request| request.of_api(api) && request.called();
    for (path, _) in FILES {
        let written = logged
            .iter()
            .any(|request| called(api_of(second), request) && request.calls_mention(path));
        if !written {
            return Err(format!("{second} was not seen writing {path}"));
        }
    }
    if logged.iter().any(|request| called(api_of(first), request)) {
        return Err(format!("{first} was answered with a tool call"));
    }
    Ok(())
}

/// Whether `events` show `seat` paused for a usage limit.
pub(crate) fn paused_for_limit(events: &[Event], seat: &str) -> bool {
    events.iter().any(|event| {
        event.is("seat_paused")
            && event.text("seat") == Some(seat)
            && event.text("reason") == Some("usage limit")
    })
}

/// The roster: `first`'s seat paused for its usage limit, every coding request it made
/// answered with the limit, `second`'s with the files, and the run never waited on the reset.
fn check_rostered(
    first: &str,
    second: &str,
    events: &[Event],
    logged: &[Request],
    took: Duration,
) -> Result {
    if !paused_for_limit(events, first) {
        return Err(format!(
            "no `seat_paused` event of `{first}` for a usage limit"
        ));
    }
    check_written_by(first, second, logged)?;
    if took > NO_WAIT {
        return Err(format!(
            "the run took {:.0} s: it waited on the paused seat",
            took.as_secs_f64()
        ));
    }
    Ok(())
}

/// The roster past a stall: each story's coding turn on `first` held silent, ended as stalled
/// and run again (`turn_stalled`, `"again": true`, one per story), and `second` wrote every
/// file.
fn check_stalled_over(first: &str, second: &str, events: &[Event], logged: &[Request]) -> Result {
    let stalled: Vec<&Event> = events
        .iter()
        .filter(|event| event.is("turn_stalled"))
        .collect();
    if stalled.len() != FILES.len() || !stalled.iter().all(|event| event.flag("again")) {
        return Err(format!(
            "expected one `turn_stalled` event per story, each run again; events.jsonl has {}",
            stalled.len()
        ));
    }
    check_written_by(first, second, logged)
}

/// The usage of `preset` in `report` against the server's log of its requests (`ours`): see
/// the module's docs.
pub(crate) fn check_usage(
    preset: &str,
    reports: Reports,
    ours: &[&Request],
    report: &Report,
) -> Result {
    // The server's usage, summed, is what the CLI reported to epic, and what the report holds.
    let (input, output) = ours
        .iter()
        .filter_map(|request| request.usage.as_ref())
        .fold((0, 0), |(input, output), usage| {
            (input + usage.input, output + usage.output)
        });
    let seat = report
        .seat_usage(preset)
        .ok_or_else(|| format!("the report has no usage of the seat `{preset}`"))?;
    if reports == Reports::Nothing {
        return if seat.source == "estimated" {
            Ok(())
        } else {
            Err(format!(
                "the report's usage of `{}` is `{}`; it reports none",
                preset, seat.source
            ))
        };
    }
    if seat.input_tokens != input || seat.output_tokens != output {
        return Err(format!(
            "the report's tokens for `{}` ({} in, {} out) are not the server's ({input} in, \
             {output} out): the CLI's figures did not reach it",
            preset, seat.input_tokens, seat.output_tokens
        ));
    }
    let cost_reported = reports == Reports::TokensAndCost;
    // Codex and Gemini CLI report tokens, not cost: the cost is priced. No cost where no price
    // is known (opencode's model): none, then.
    let cost = seat.cost_usd.unwrap_or(0.0);
    let expected_source = if cost_reported { "reported" } else { "mixed" };
    if seat.source != expected_source || (cost_reported && cost <= 0.0) {
        return Err(format!(
            "the report's usage of `{}` is `{}` at ${cost}; expected `{expected_source}`",
            preset, seat.source
        ));
    }
    Ok(())
}
