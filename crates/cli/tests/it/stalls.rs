//! Stalled and looping turns through the binary, with the stand-ins speaking each agent's real
//! stream: `--stall-timeout` ends a coder that stops printing and runs its request again; a
//! coder whose stream repeats one tool call is ended and asked again with a note naming the
//! call; the live lines, the report and `epic status` say so; a turn run again is told what the
//! ended one left uncommitted.

use std::time::Duration;

use serde_json::Value;

use crate::stand_ins::{AGENTS, Behaviour, StandIns};
use crate::util::{Repo, Run, TestClock, file_plan, wait_until};

/// A coder's script: writes the story's file, as the plan asks.
const WRITE: &str =
    r#"mkdir -p "$EPIC_STORY" && echo "$EPIC_STORY" > "$EPIC_STORY/$EPIC_STORY.txt""#;

/// `epic run plan.json --coder AGENT`, one story at a time, then `extra`.
fn run_args<'a>(agent: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "plan.json",
        "--coder",
        agent,
        "--concurrency",
        "1",
        "--no-progress",
        "--gate",
        "true",
        // The stand-ins' call counts include the planner's.
        "--planner",
        "always",
    ];
    args.extend_from_slice(extra);
    args
}

/// The first story of the epic's `report.json`.
fn first_story(repo: &Repo) -> Value {
    let text = std::fs::read_to_string(repo.epic("shop").report_json()).expect("report.json");
    let document: Value = serde_json::from_str(&text).expect("report.json is JSON");
    document["data"]["stories"][0].clone()
}

/// Waits until epic has read the stalling stand-in's hung `npm test` call (its `turn_activity`
/// event): all the turn prints is read by then, so its silence is measured from the clock's
/// time now, and moving the clock ten minutes on is a stall. (Waiting only for the turn to start
/// raced the stream's first lines: read after the clock moved, they started the silence again
/// from the later time, and the run waited for a stall that never came.)
fn wait_for_the_hung_call(repo: &Repo) {
    let events = repo.epic("shop").events();
    wait_until("epic reads the coder's hung `npm test`", || {
        std::fs::read_to_string(&events).is_ok_and(|text| {
            text.lines()
                .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                .any(|event| {
                    event["kind"] == "turn_activity"
                        && event["doing"]
                            .as_str()
                            .is_some_and(|doing| doing.contains("npm test"))
                })
        })
    });
}

/// The binary runs on a clock the test moves (`EPIC_TEST_CLOCK`): the silence is ten minutes
/// once the test says so, and never while the second turn runs, however slow the machine.
#[test]
fn a_silent_coder_is_ended_as_stalled_runs_again_and_the_report_counts_it() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let agents = StandIns::new();
    agents.set("claude", "coder.1", &Behaviour::default().stalls());
    agents.set(
        "claude",
        "coder",
        &Behaviour::reply("Wrote a/a.txt.").runs(WRITE),
    );
    let clock = TestClock::new(repo.temp(), "2030-01-01T09:00:00Z".parse().unwrap());
    let mut command = agents.command(&repo, &run_args("claude", &["--stall-timeout", "10m"]));
    let child = clock.spawn(&mut command);
    wait_for_the_hung_call(&repo);
    clock.advance(Duration::from_mins(10));
    let run = Run::of(child.wait_with_output().expect("`epic` ends"));
    run.assert_code(0);
    assert!(
        run.stderr.contains(
            "story a: coder turn 2 (claude) printed nothing for 10m; ended as stalled, running \
             it again"
        ),
        "{run}"
    );
    assert_eq!(repo.git_output(&["show", "epic/shop:a/a.txt"]), "a\n");
    let coders = agents
        .calls("claude")
        .iter()
        .filter(|call| call.role == "coder")
        .count();
    assert_eq!(coders, 2);
    let story = first_story(&repo);
    assert_eq!(story["status"], "done");
    assert_eq!(story["stalled_turns"], 1, "{story}");
    assert!(story.get("looping_turns").is_none(), "{story}");
    let markdown = std::fs::read_to_string(repo.epic("shop").report_md()).expect("report.md");
    assert!(
        markdown.contains("## Stalled and looping turns")
            && markdown.contains("- a: 1 stalled turn"),
        "{markdown}"
    );
    let status = repo.run(&["status", "shop"]);
    status.assert_code(0);
    assert!(status.stdout.contains("\na: 1 turn stalled\n"), "{status}");
    let json = repo.run(&["status", "shop", "--format", "json"]).json();
    assert_eq!(json["stories"][0]["stalled_turns"], 1, "{json}");
}

/// The reproduced hole: a coder wrote half a file and went silent; run again with the same
/// prompt, in the worktree as the silent one left it, the next turn was not told of the half
/// file, and its "done" committed it. Now the turn run again is told (its prompt names the
/// file) and the file that merges is the one it finished.
#[test]
fn the_turn_run_again_after_a_stall_is_told_the_half_file_the_silent_one_left() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let agents = StandIns::new();
    agents.set(
        "claude",
        "coder.1",
        &Behaviour::default()
            .runs("mkdir -p a && printf 'hal' > a/a.txt")
            .stalls(),
    );
    agents.set(
        "claude",
        "coder",
        &Behaviour::reply("Wrote a/a.txt.").runs(WRITE),
    );
    let clock = TestClock::new(repo.temp(), "2030-01-01T09:00:00Z".parse().unwrap());
    let mut command = agents.command(&repo, &run_args("claude", &["--stall-timeout", "10m"]));
    let child = clock.spawn(&mut command);
    // The stand-in writes the half file, starts a command that hangs and goes silent.
    wait_for_the_hung_call(&repo);
    clock.advance(Duration::from_mins(10));
    let run = Run::of(child.wait_with_output().expect("`epic` ends"));
    run.assert_code(0);
    let prompts: Vec<String> = agents
        .calls("claude")
        .iter()
        .zip(agents.prompts("claude"))
        .filter(|(call, _)| call.role == "coder")
        .map(|(_, prompt)| prompt)
        .collect();
    assert_eq!(prompts.len(), 2);
    let note = "Note: an earlier attempt at this work was stopped before it replied";
    assert!(!prompts[0].contains(note), "{}", prompts[0]);
    assert!(
        prompts[1].contains(note) && prompts[1].contains("- added `a/a.txt`\n"),
        "{}",
        prompts[1]
    );
    assert_eq!(repo.git_output(&["show", "epic/shop:a/a.txt"]), "a\n");
}

#[test]
fn a_looping_coder_of_each_preset_is_asked_again_with_a_note_naming_the_call() {
    for agent in AGENTS {
        let repo = Repo::new();
        repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
        let agents = StandIns::new();
        agents.set(agent, "coder.1", &Behaviour::default().loops("npm test"));
        agents.set(
            agent,
            "coder",
            &Behaviour::reply("Wrote a/a.txt.").runs(WRITE),
        );
        let run = agents.run(&repo, &run_args(agent, &["-v"]));
        run.assert_code(0);
        let tool = match agent {
            "claude" => "Bash",
            "codex" => "command_execution",
            _ => "run_shell_command",
        };
        assert!(
            run.stderr.contains(&format!(
                "story a: coder turn 2 ({agent}) called `{tool}` with the same input 5 times in a \
                 row; ended as looping, running it again with a note"
            )),
            "{agent}: {run}"
        );
        // What the agent was doing, read from its stream (`-v` shows each step).
        assert!(
            run.stderr.contains("story a: coder running `") && run.stderr.contains("npm test"),
            "{agent}: {run}"
        );
        let prompts: Vec<String> = agents
            .calls(agent)
            .iter()
            .zip(agents.prompts(agent))
            .filter(|(call, _)| call.role == "coder")
            .map(|(_, prompt)| prompt)
            .collect();
        assert_eq!(prompts.len(), 2, "{agent}");
        assert!(
            !prompts[0].contains("Note: your previous attempt"),
            "{agent}"
        );
        assert!(
            prompts[1].contains(&format!(
                "Note: your previous attempt at this request was stopped because it called \
                 `{tool}` with `"
            )) && prompts[1].contains("npm test"),
            "{agent}: {}",
            prompts[1]
        );
        let story = first_story(&repo);
        assert_eq!(story["status"], "done", "{agent}");
        assert_eq!(story["looping_turns"], 1, "{agent}: {story}");
        let status = repo.run(&["status", "shop"]);
        assert!(
            status.stdout.contains("\na: 1 turn looping\n"),
            "{agent}: {status}"
        );
    }
}
