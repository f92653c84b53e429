//! A named seat's secrets (`env` of `[seats.NAME]` in `epic.toml`): a variable whose name says it
//! holds a key, token, password or credential is never written out in the file, only referenced
//! from the environment epic runs in (`"${WORK_KEY}"`); the seat's processes get the value, and
//! neither `epic config` nor an error ever shows it. The agent is the `claude` stand-in on `PATH`.

use std::process::Command;

use crate::stand_ins::{Behaviour, StandIns};
use crate::util::{Repo, Run, file_plan};

/// A key no output may hold.
const SECRET: &str = "sk-ant-api03-do-not-print-me";

/// A seat `work` of the `claude` preset, its key and configuration directory referenced from the
/// environment, as the coder.
const REFERENCED: &str = r#"coder = "work"

[seats.work]
seat = "claude"
env = { ANTHROPIC_API_KEY = "${WORK_KEY}", CLAUDE_CONFIG_DIR = "/accounts/${WHO}" }
"#;

/// `command` run to its end, with `WORK_KEY` holding [`SECRET`] and `WHO` set.
fn with_key(command: &mut Command) -> Run {
    Run::of(
        command
            .env("WORK_KEY", SECRET)
            .env("WHO", "work")
            .output()
            .expect("run `epic`"),
    )
}

/// Asserts that nothing `run` printed holds [`SECRET`].
#[track_caller]
fn assert_unseen(run: &Run) {
    assert!(
        !run.stdout.contains(SECRET) && !run.stderr.contains(SECRET),
        "the key was printed:\n{run}"
    );
}

#[test]
fn a_secret_written_out_in_a_seats_env_is_refused_without_showing_it() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "x")]));
    repo.write(
        "epic.toml",
        format!(
            "coder = \"work\"\n\n[seats.work]\nseat = \"claude\"\nenv = {{ \
             CLAUDE_CONFIG_DIR = \"/accounts/work\", ANTHROPIC_API_KEY = \"{SECRET}\" }}\n"
        ),
    );
    let agents = StandIns::new();
    for args in [
        &["config"][..],
        &["config", "--format", "json"],
        &["run", "plan.json", "--no-progress"],
    ] {
        let run = agents.run(&repo, args);
        run.assert_code(2);
        assert_unseen(&run);
        for named in [
            "epic.toml",
            "line 5",
            "key `seats.work.env.ANTHROPIC_API_KEY`",
            "write `ANTHROPIC_API_KEY = \"${ANTHROPIC_API_KEY}\"` and set ANTHROPIC_API_KEY in \
             that environment",
        ] {
            assert!(run.stderr.contains(named), "{args:?}: no {named:?}:\n{run}");
        }
    }
    assert!(agents.calls("claude").is_empty(), "an agent ran");
    assert!(!repo.epic("shop").root().exists(), "the run started");

    // Text around a reference is written out too.
    repo.write(
        "epic.toml",
        "[seats.work]\nseat = \"claude\"\nenv = { GITHUB_TOKEN = \"ghp_${SUFFIX}\" }\n",
    );
    let run = repo.run(&["config"]);
    run.assert_code(2);
    assert!(
        run.stderr.contains("key `seats.work.env.GITHUB_TOKEN`") && !run.stderr.contains("ghp_"),
        "{run}"
    );
}

#[test]
fn a_referenced_secret_reaches_the_seat_and_an_unset_one_stops_the_run() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "x")]));
    repo.write("epic.toml", REFERENCED);
    let agents = StandIns::new();
    agents.set(
        "claude",
        "coder",
        &Behaviour::reply("done").runs(
            r#"mkdir -p "$EPIC_STORY" && printf '%s\n' "$ANTHROPIC_API_KEY" "$CLAUDE_CONFIG_DIR" > "$EPIC_STORY/$EPIC_STORY.txt""#,
        ),
    );
    let args = ["run", "plan.json", "--no-progress"];

    // Without the variable, nothing starts: the seat says what to set.
    let run = Run::of(
        agents
            .command(&repo, &args)
            .env_remove("WORK_KEY")
            .env("WHO", "work")
            .output()
            .expect("run `epic`"),
    );
    run.assert_code(2);
    assert!(
        run.stderr.contains(
            "[seats.work]: `ANTHROPIC_API_KEY` references `${WORK_KEY}`, which is not set in \
             the environment epic runs in"
        ),
        "{run}"
    );
    assert!(agents.calls("claude").is_empty(), "an agent ran");

    let run = with_key(&mut agents.command(&repo, &args));
    run.assert_code(0);
    assert_unseen(&run);
    assert_eq!(
        repo.git_output(&["show", "epic/shop:a/a.txt"]),
        format!("{SECRET}\n/accounts/work\n")
    );
    // Nothing epic keeps (options, events, transcripts, report) holds the key.
    let mut dirs = vec![repo.epic("shop").root().to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("read the state directory") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                let bytes = std::fs::read(&path).expect("read a state file");
                assert!(
                    !String::from_utf8_lossy(&bytes).contains(SECRET),
                    "{} holds the key",
                    path.display()
                );
            }
        }
    }
    assert!(repo.epic("shop").run_options().exists());
}

#[test]
fn epic_config_shows_a_secrets_reference_never_its_value() {
    let repo = Repo::new();
    repo.write("epic.toml", REFERENCED);
    let text = with_key(&mut repo.command(&["config"]));
    text.assert_code(0);
    assert_unseen(&text);
    assert!(
        text.stdout
            .contains("work = claude with ANTHROPIC_API_KEY CLAUDE_CONFIG_DIR"),
        "{text}"
    );

    let json = with_key(&mut repo.command(&["config", "--format", "json"]));
    json.assert_code(0);
    assert_unseen(&json);
    let env = &json.json()["options"]["seats"]["work"]["env"];
    assert_eq!(env["ANTHROPIC_API_KEY"], "${WORK_KEY}", "{json}");
    assert_eq!(env["CLAUDE_CONFIG_DIR"], "/accounts/${WHO}", "{json}");
}
