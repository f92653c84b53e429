//! Whole runs of `epic` with the presets `claude`, `codex` and `gemini`, played by the stand-ins
//! ([`crate::stand_ins`]): each role's command line, the reply, usage and cost read from the
//! agents' structured output, the errors they report, and the budget.

use epic_agents::{Preset, Role};
use serde_json::Value;

use crate::stand_ins::{AGENTS, AgentError, Behaviour, StandIns};
use crate::util::{Repo, file_plan};

/// A coder's script: writes the story's file, as the plan asks.
const WRITE: &str =
    r#"mkdir -p "$EPIC_STORY" && echo "$EPIC_STORY" > "$EPIC_STORY/$EPIC_STORY.txt""#;

/// `epic run plan.json` with `agent` as coder (and judge when `judge`), one story at a time.
fn run_args<'a>(agent: &'a str, judge: bool, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "plan.json",
        "--coder",
        agent,
        "--concurrency",
        "1",
        "--schedule",
        "plan-order",
        "--no-progress",
        "--gate",
        "true",
        // The tests count each role's calls, the planner's included.
        "--planner",
        "always",
    ];
    if judge {
        args.extend(["--judge", agent]);
    }
    args.extend_from_slice(extra);
    args
}

/// The data of the epic's `report.json`.
fn report(repo: &Repo) -> Value {
    let text = std::fs::read_to_string(repo.epic("shop").report_json()).expect("report.json");
    let document: Value = serde_json::from_str(&text).expect("report.json is JSON");
    document["data"].clone()
}

fn float(value: &Value) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("not a number: {value}"))
}

#[test]
fn claude_as_coder_and_judge_reports_the_cost_it_reported() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let agents = StandIns::new();
    agents.set(
        "claude",
        "coder",
        &Behaviour::reply("Wrote a/a.txt.")
            .runs(WRITE)
            .usage(2000, 300, 0.25),
    );
    let run = agents.run(&repo, &run_args("claude", true, &[]));
    run.assert_code(0);
    assert!(run.stdout.contains(" tokens, reported)"), "{run}");
    assert_eq!(repo.git_output(&["show", "epic/shop:a/a.txt"]), "a\n");

    // Each role ran with its own command line: the coder may edit and run commands, the
    // planner and the judge are read-only.
    let calls = agents.calls("claude");
    let roles: Vec<&str> = calls.iter().map(|call| call.role.as_str()).collect();
    assert_eq!(roles, ["planner", "coder", "judge"], "{calls:?}");
    for call in &calls {
        let role = match call.role.as_str() {
            "planner" => Role::Planner,
            "coder" => Role::Coder,
            _ => Role::Judge,
        };
        assert_eq!(call.args, Preset::Claude.args(role).join(" "));
    }
    assert!(
        calls[1]
            .args
            .contains("--permission-mode acceptEdits --allowedTools Bash")
    );
    assert!(calls[2].args.contains("--permission-mode plan"));

    // The report has what Claude Code reported: planner and judge at the default $0.05 and
    // 1000 + 200 tokens, the coder at $0.25 and 2000 + 300.
    let report = report(&repo);
    let story = &report["stories"][0];
    assert_eq!(story["status"], "done");
    let usage = &story["usage"];
    assert_eq!(usage["source"], "reported", "{story}");
    assert_eq!(usage["input_tokens"], 4000);
    assert_eq!(usage["output_tokens"], 700);
    assert!((float(&usage["cost_usd"]) - 0.35).abs() < 1e-9, "{usage}");
    assert!((float(&story["estimated_cost_usd"]) - 0.35).abs() < 1e-9);
    let seat = &report["seats"][0];
    assert_eq!(seat["seat"], "claude");
    assert_eq!(seat["usage"]["source"], "reported");
    assert_eq!(seat["turns"], 3);

    let markdown = std::fs::read_to_string(repo.epic("shop").report_md()).expect("report.md");
    assert!(
        !markdown.contains("ESTIMATES"),
        "nothing is estimated:\n{markdown}"
    );
    assert!(
        markdown.contains("| 4700 | $0.35 | reported |"),
        "{markdown}"
    );
}

#[test]
fn codex_and_gemini_report_tokens_priced_from_the_table() {
    for agent in ["codex", "gemini"] {
        let repo = Repo::new();
        repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
        let agents = StandIns::new();
        agents.set(agent, "coder", &Behaviour::reply("Done.").runs(WRITE));
        let run = agents.run(&repo, &run_args(agent, true, &[]));
        run.assert_code(0);
        assert!(run.stdout.contains("tokens, partly reported)"), "{run}");
        let preset: Preset = agent.parse().expect("a preset");
        for call in agents.calls(agent) {
            let role = if call.role == "coder" {
                Role::Coder
            } else {
                Role::Judge
            };
            assert_eq!(call.args, preset.args(role).join(" "), "{agent}");
        }
        let report = report(&repo);
        let usage = &report["stories"][0]["usage"];
        // Three turns of 1000 + 200 tokens, reported; no cost reported, so priced: mixed.
        assert_eq!(usage["source"], "mixed", "{agent}: {usage}");
        assert_eq!(usage["input_tokens"], 3000, "{agent}");
        assert_eq!(usage["output_tokens"], 600, "{agent}");
        let (input, output) = if agent == "codex" {
            (5.0, 30.0)
        } else {
            (1.25, 10.0)
        };
        let priced = (3000.0 * input + 600.0 * output) / 1e6;
        assert!(
            (float(&usage["cost_usd"]) - priced).abs() < 1e-9,
            "{agent}: {usage}"
        );
        let markdown = std::fs::read_to_string(repo.epic("shop").report_md()).expect("report.md");
        assert!(markdown.contains("ESTIMATES"), "the cost is estimated");
        assert!(markdown.contains("| mixed |"), "{markdown}");
    }
}

#[test]
fn an_error_the_agent_reports_fails_the_turn_even_with_exit_0() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let agents = StandIns::new();
    // An error of the story's own (not a limit, an outage or a login, which pause or stop
    // the run: `limits.rs`), reported in the result object of a process that exits 0.
    let error = "Prompt is too long";
    agents.set(
        "claude",
        "coder",
        &Behaviour::fails(AgentError::Message(error.into())).exit(0),
    );
    let run = agents.run(&repo, &run_args("claude", false, &[]));
    run.assert_code(1);
    let report = report(&repo);
    let story = &report["stories"][0];
    assert_eq!(story["status"], "failed");
    let reason = story["reason"].as_str().expect("a reason");
    assert!(reason.contains(error), "{reason}");
}

#[test]
fn a_budget_stops_the_run_and_a_larger_one_carries_on() {
    let repo = Repo::new();
    repo.write(
        "plan.json",
        file_plan(&[("a", &[], "alpha"), ("b", &[], "beta"), ("c", &[], "gamma")]),
    );
    let agents = StandIns::new();
    agents.set(
        "claude",
        "planner",
        &Behaviour::default().usage(100, 10, 0.40),
    );
    agents.set(
        "claude",
        "coder",
        &Behaviour::reply("Done.").runs(WRITE).usage(100, 10, 0.40),
    );
    // a: planner and coder, $0.80; b: its planner takes the spend to $1.20, its coder turn
    // never starts; c never starts.
    let run = agents.run(&repo, &run_args("claude", false, &["--budget-usd", "1"]));
    run.assert_code(1);
    let report_1 = report(&repo);
    let stories = &report_1["stories"];
    assert_eq!(stories[0]["status"], "done", "{report_1}");
    assert_eq!(stories[1]["status"], "skipped");
    assert_eq!(
        stories[1]["reason"],
        "not finished: budget reached: $1.20 of $1.00; a rerun resumes it"
    );
    assert_eq!(stories[2]["status"], "skipped");
    assert_eq!(
        stories[2]["reason"],
        "not started: budget reached: $1.20 of $1.00"
    );
    let roles: Vec<String> = agents
        .calls("claude")
        .into_iter()
        .map(|call| call.role)
        .collect();
    assert_eq!(roles, ["planner", "coder", "planner"]);
    let events = std::fs::read_to_string(repo.epic("shop").events()).expect("events.jsonl");
    assert!(
        events.contains(r#""kind":"budget_reached""#),
        "the event says so"
    );
    assert!(
        run.stderr.contains("budget reached: $1.20 of $1.00"),
        "the progress says so:\n{}",
        run.stderr
    );

    // The earlier spend counts: $1.20 is spent, so a budget of $1.50 starts one turn only.
    let rerun = agents.run(&repo, &run_args("claude", false, &["--budget-usd", "1.5"]));
    rerun.assert_code(1);
    assert_eq!(agents.calls("claude").len(), 4);

    let rerun = agents.run(&repo, &run_args("claude", false, &["--budget-usd", "10"]));
    rerun.assert_code(0);
    let report_3 = report(&repo);
    for story in report_3["stories"].as_array().expect("stories") {
        assert_eq!(story["status"], "done", "{story}");
    }
    // The seat's cost adds up every turn of the three runs.
    let turns = agents.calls("claude").len();
    let seat = &report_3["seats"][0];
    assert_eq!(seat["turns"], turns);
    #[expect(clippy::cast_precision_loss, reason = "a handful of turns")]
    let spent = turns as f64 * 0.40;
    assert!(
        (float(&seat["usage"]["cost_usd"]) - spent).abs() < 1e-9,
        "{seat}"
    );
}

#[test]
fn the_stand_ins_take_every_preset_line_and_refuse_unknown_flags() {
    let repo = Repo::new();
    let agents = StandIns::new();
    for agent in AGENTS {
        let preset: Preset = agent.parse().expect("a preset");
        for role in [
            Role::Coder,
            Role::Planner,
            Role::Judge,
            Role::Reviewer,
            Role::Architect,
        ] {
            let output = agents.call(agent, preset.args(role), "Say hi.", repo.path());
            assert!(
                output.status.success(),
                "{agent} {role}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }
    let refusals = [
        (
            "claude",
            &["-p", "--bogus"][..],
            1,
            "error: unknown option '--bogus'",
        ),
        (
            "claude",
            &["-p", "--permission-mode", "yes"][..],
            1,
            "argument 'yes' is invalid",
        ),
        (
            "codex",
            &["exec", "--bogus", "-"][..],
            2,
            "error: unexpected argument '--bogus' found",
        ),
        (
            "codex",
            &["exec", "--sandbox", "all", "-"][..],
            2,
            "invalid value 'all'",
        ),
        (
            "gemini",
            &["--prompt", "x", "--bogus"][..],
            1,
            "Unknown arguments: bogus",
        ),
    ];
    for (agent, args, code, message) in refusals {
        let output = agents.call(agent, args, "Say hi.", repo.path());
        assert_eq!(output.status.code(), Some(code), "{agent} {args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(message), "{agent} {args:?}: {stderr}");
    }
    // The prompt is read from standard input; none is an error.
    let output = agents.call("claude", &["-p"], "", repo.path());
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn the_stand_ins_answer_in_each_format_and_fail_as_the_agents_do() {
    let repo = Repo::new();
    let agents = StandIns::new();
    let errors = [
        AgentError::UsageLimit,
        AgentError::ServerError,
        AgentError::NotLoggedIn,
        AgentError::Message("something broke".into()),
    ];
    for agent in AGENTS {
        let preset: Preset = agent.parse().expect("a preset");
        let args = preset.args(Role::Coder);
        for error in &errors {
            agents.set(agent, "coder", &Behaviour::fails(error.clone()));
            let output = agents.call(agent, args, "Say hi.", repo.path());
            assert_ne!(output.status.code(), Some(0), "{agent} {error:?}");
            // Claude Code and Codex report on stdout, as Gemini CLI does in its stream but when
            // not signed in (on stderr, before any event); all as JSON.
            let (stream, other) = if agent == "gemini" && *error == AgentError::NotLoggedIn {
                (&output.stderr, &output.stdout)
            } else {
                (&output.stdout, &output.stderr)
            };
            let text = String::from_utf8_lossy(stream);
            let message = serde_json::to_string(&error.message(agent)).expect("JSON");
            assert!(text.contains(&message), "{agent} {error:?}: {text}");
            assert!(other.is_empty(), "{agent} {error:?}");
        }
        agents.set(
            agent,
            "coder",
            &Behaviour::reply("I think it is done.").in_prose(),
        );
        let output = agents.call(agent, args, "Say hi.", repo.path());
        assert!(output.status.success());
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            "I think it is done."
        );
        let prompts = agents.prompts(agent);
        assert_eq!(prompts.len(), errors.len() + 1);
        assert!(prompts.iter().all(|prompt| prompt.starts_with("Say hi.")));
    }
}

/// The issue's own epic, with a stand-in `claude` that behaves the way the real one does: one
/// story plain; one whose coder claims `BLOCKED_ON` a path its merged dependency owns; one whose
/// coder answers a task in prose ("already implemented") changing nothing; one whose first turn
/// hits the usage limit. Before, three of the four failed and the report showed estimates; now
/// every story ends done and the report gives the cost the agent reported.
#[test]
fn the_epic_a_real_claude_failed_ends_done_and_reports_what_it_cost() {
    let repo = Repo::new();
    repo.write(
        "plan.json",
        file_plan(&[
            ("a", &[], "alpha"),
            ("b", &["a"], "beta"),
            ("c", &[], "gamma"),
            ("d", &[], "delta"),
        ]),
    );
    let counters = tempfile::TempDir::new().expect("a directory for the counters");
    let agents = StandIns::new();
    // c plans two tasks; the others one.
    agents.set(
        "claude",
        "planner",
        &Behaviour::default().runs(
            r#"[ "$EPIC_STORY" = c ] && echo '{"tasks":[{"title":"write c","description":"write c/c.txt"},{"title":"check c","description":"make sure c/c.txt is there"}]}' > "$REPLY_TO"; true"#,
        ),
    );
    let coder = format!(
        r#"C="{counters}/$EPIC_STORY"; N=$(( $(cat "$C" 2>/dev/null || echo 0) + 1 )); echo "$N" > "$C"
case "$EPIC_STORY.$N" in
  b.1) printf 'The catalogue is not there yet.\nBLOCKED_ON: a/a.txt from story a\n' > "$REPLY_TO" ;;
  c.1) mkdir -p c && echo gamma > c/c.txt ;;
  c.*) printf 'This is already implemented: c/c.txt exists, so there is nothing left to do.\n' > "$REPLY_TO" ;;
  d.1) printf 'Claude AI usage limit reached|%s' "$(( $(date +%s) + 1 ))" > "$ERROR_TO" ;;
  *) mkdir -p "$EPIC_STORY" && echo "$EPIC_STORY" > "$EPIC_STORY/$EPIC_STORY.txt" ;;
esac
"#,
        counters = counters.path().display()
    );
    agents.set(
        "claude",
        "coder",
        &Behaviour::reply("Done: the file is written.")
            .runs(coder)
            .usage(2000, 300, 0.02),
    );
    agents.set(
        "claude",
        "judge",
        &Behaviour::default().usage(1000, 100, 0.01),
    );
    let run = agents.run(&repo, &run_args("claude", true, &[]));
    run.assert_code(0);
    let report = report(&repo);
    let statuses: Vec<(&str, &str)> = report["stories"]
        .as_array()
        .expect("stories")
        .iter()
        .map(|story| {
            (
                story["id"].as_str().unwrap_or_default(),
                story["status"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [("a", "done"), ("b", "done"), ("c", "done"), ("d", "done")]
    );
    for story in ["a", "b", "c", "d"] {
        let file = format!("{story}/{story}.txt");
        assert_eq!(
            repo.git_output(&["show", &format!("epic/shop:{file}")])
                .trim(),
            if story == "c" { "gamma" } else { story },
            "{file} is on the epic branch"
        );
    }
    // b was told what its dependency provides, and went on.
    let events = std::fs::read_to_string(repo.common_dir().join("epic/shop/events.jsonl"))
        .expect("the event log");
    assert!(events.contains("blocked_rejected"), "{events}");
    // c's prose "already implemented" completed its task with a warning.
    assert!(events.contains("task_noop_unconfirmed"), "{events}");
    // d waited for the reset of its seat's usage limit and went on.
    assert!(
        events.contains("seat_paused") && events.contains("seat_resumed"),
        "{events}"
    );
    // The cost is what the agent reported, not an estimate.
    for story in report["stories"].as_array().expect("stories") {
        let usage = &story["usage"];
        assert_eq!(usage["source"], "reported", "{story}");
    }
    assert!(!run.stdout.contains("estimated"), "{}", run.stdout);
}
