//! Rosters through `epic run`: two named seats of one preset (`[seats.NAME]` in `epic.toml`, each
//! with a `CLAUDE_CONFIG_DIR` of its own, as two Claude Code accounts would be) rotate: the first
//! at its usage limit hands the story to the second without waiting; `epic status` shows each
//! seat's state; a run killed mid-roster is resumed by a rerun; the report names each story's
//! seats. The agents are the `claude` stand-in on `PATH`.

use std::process::Stdio;

use crate::stand_ins::{Behaviour, StandIns};
use crate::util::{Repo, file_plan, wait_until};

/// The two accounts of `claude`, and a roster of them as the coder.
const CONFIG: &str = r#"coder = ["claude-a", "claude-b"]

[seats.claude-a]
seat = "claude"
env = { CLAUDE_CONFIG_DIR = "/accounts/a" }

[seats.claude-b]
seat = "claude"
env = { CLAUDE_CONFIG_DIR = "/accounts/b" }
"#;

/// The coder's behaviour: on account `a`, Claude Code's usage limit, reset in 5 hours; on `b`,
/// its first turn says so in `MARK` and then hangs until killed; later turns write the story's
/// file with the account that wrote it.
fn coder(mark: &str) -> Behaviour {
    Behaviour::reply("done").runs(format!(
        r#"case "$CLAUDE_CONFIG_DIR" in
  */a) echo "Claude AI usage limit reached|$(( $(date +%s) + 18000 ))" > "$ERROR_TO" ;;
  *)
    if [ ! -e '{mark}' ]; then touch '{mark}'; exec sleep 1000; fi
    mkdir -p "$EPIC_STORY" && echo "$CLAUDE_CONFIG_DIR" > "$EPIC_STORY/$EPIC_STORY.txt" ;;
esac
"#
    ))
}

#[test]
fn two_accounts_of_one_cli_rotate_and_a_run_killed_mid_roster_resumes() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "x")]));
    repo.write("epic.toml", CONFIG);
    let mark = repo.temp().join("hung");
    let agents = StandIns::new();
    agents.set("claude", "coder", &coder(&mark.display().to_string()));
    let args = ["run", "plan.json", "--no-progress", "--max-wait", "1h"];

    let mut command = repo.command(&args);
    agents.apply(&mut command);
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn epic run");
    wait_until("the second account's turn begins", || {
        assert!(child.try_wait().expect("poll").is_none(), "the run ended");
        mark.exists()
    });
    // Account a is paused past --max-wait, yet the run goes on with account b.
    let status = repo.run(&["status", "--format", "json"]).json();
    let seats = &status["seats"];
    assert_eq!(seats[0]["seat"], "claude-a", "{status:#}");
    assert_eq!(seats[0]["state"], "paused", "{status:#}");
    assert_eq!(seats[1]["seat"], "claude-b", "{status:#}");
    assert_eq!(seats[1]["state"], "working", "{status:#}");
    let text = repo.run(&["status"]);
    assert!(
        text.stdout.contains("seats: claude-a paused until "),
        "{text}"
    );
    assert!(text.stdout.contains("claude-b working (1 turn)"), "{text}");

    // Killed mid-roster: the rerun picks the story up and finishes it on account b.
    child.kill().expect("kill -9 the run");
    child.wait().expect("reap the run");
    let rerun = agents.run(&repo, &args);
    rerun.assert_code(0);
    assert_eq!(
        repo.git_output(&["show", "epic/shop:a/a.txt"]),
        "/accounts/b\n"
    );
    let report = repo.run(&["report", "--format", "json"]).json();
    let story = &report["stories"][0];
    assert_eq!(story["status"], "done");
    let names: Vec<&str> = story["seats"]
        .as_array()
        .expect("the story's seats")
        .iter()
        .map(|seat| seat["seat"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"claude-a") && names.contains(&"claude-b"),
        "{story:#}"
    );
    let calls = agents.calls("claude");
    assert!(calls.iter().any(|call| call.role == "coder"), "{calls:?}");
}

#[test]
fn a_roster_names_only_seats_that_exist() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "x")]));
    let run = repo.run(&["run", "plan.json", "--coder", "claude,claude-work"]);
    run.assert_code(2);
    assert!(run.stderr.contains("unknown seat `claude-work`"), "{run}");
    assert!(run.stderr.contains("[seats.claude-work]"), "{run}");

    repo.write("epic.toml", "[seats.claude]\nseat = \"codex\"\n");
    let run = repo.run(&["config"]);
    run.assert_code(2);
    assert!(run.stderr.contains("already a preset's name"), "{run}");

    repo.write(
        "epic.toml",
        "coder = \"claude,exec:./agent.sh a,b\"\n[seats.work]\nseat = \"claude\"\n",
    );
    let config = repo.run(&["config", "--format", "json"]).json();
    assert_eq!(config["options"]["coder"], "claude,exec:./agent.sh a,b");
    assert_eq!(config["options"]["seats"]["work"]["seat"], "claude");
    let text = repo.run(&["config"]);
    assert!(text.stdout.contains("work = claude"), "{text}");
}
