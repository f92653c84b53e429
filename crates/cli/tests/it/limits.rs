//! `epic run` against an agent's usage limit and login: a limit pauses its seat, which `epic
//! status` shows, and fails no story; a reset past `--max-wait` is exit 130 with the state kept
//! (a rerun finishes); a seat not logged in is exit 2 with the fix; a transient failure is
//! retried after its backoff.
//!
//! These tests wait on what the run says (its stderr, its transcripts, its exit); those that see
//! a pause end or an outage found run the binary on a clock they move (`EPIC_TEST_CLOCK`). Every way a pause is timed is the
//! executor's tests, on a clock they move (`crates/executor/tests/it/limits.rs`).

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::Stdio;

use crate::util::{PATIENCE, Repo, Run, TestClock, file_plan, wait_until};

/// An agent that plans one task; as coder, its first turn ever (it leaves `limited` in the temp
/// dir) prints `line`, with `RESET` replaced by the epoch `ahead` seconds from now, and exits 1;
/// later turns write the story's file.
fn limited_agent(repo: &Repo, line: &str, ahead: u64) -> String {
    let dir = repo.temp().display().to_string();
    let line = line.replace("RESET", &format!("$(( $(date +%s) + {ahead} ))"));
    let script = format!(
        "#!/bin/sh\n\
         cat > /dev/null\n\
         case \"$EPIC_ROLE\" in\n\
         planner) echo '{{\"tasks\":[{{\"title\":\"write it\",\"description\":\"the file\"}}]}}' ;;\n\
         coder)\n\
           if [ ! -e '{dir}/limited' ]; then touch '{dir}/limited'; echo \"{line}\"; exit 1; fi\n\
           mkdir -p \"$EPIC_STORY\" && echo done > \"$EPIC_STORY/$EPIC_STORY.txt\"\n\
           echo \"wrote $EPIC_STORY\" ;;\n\
         *) echo '{{\"clean\":true,\"issues\":[]}}' ;;\n\
         esac\n"
    );
    let path = repo.temp().join("agent.sh");
    std::fs::write(&path, script).expect("write the agent");
    format!("exec:sh {}", path.display())
}

/// The events of the epic's log, parsed.
fn events(repo: &Repo) -> Vec<serde_json::Value> {
    std::fs::read_to_string(repo.common_dir().join("epic/shop/events.jsonl"))
        .expect("events")
        .lines()
        .map(|line| serde_json::from_str(line).expect("an event"))
        .collect()
}

fn of_kind<'a>(events: &'a [serde_json::Value], kind: &str) -> Vec<&'a serde_json::Value> {
    events
        .iter()
        .filter(|event| event["kind"] == kind)
        .collect()
}

fn failed_turns(events: &[serde_json::Value]) -> usize {
    of_kind(events, "turn_ended")
        .iter()
        .filter(|event| event["ok"] == false)
        .count()
}

#[test]
fn a_reset_past_max_wait_is_exit_130_and_a_rerun_finishes() {
    let repo = Repo::new();
    repo.write(
        "plan.json",
        file_plan(&[("a", &[], "x"), ("b", &["a"], "y")]),
    );
    let agent = limited_agent(&repo, "Claude AI usage limit reached|RESET", 3 * 3600);
    let args = [
        "run",
        "plan.json",
        "--coder",
        &agent,
        "--no-progress",
        "--max-wait",
        "1h",
    ];
    let run = repo.run(&args);
    run.assert_code(130);
    assert!(run.stderr.contains("--max-wait 1h"), "{run}");
    assert!(run.stdout.contains("to resume"), "{run}");
    let status = repo.run(&["status", "--format", "json"]).json();
    assert_eq!(status["running"], false);
    assert_eq!(status["stories"][0]["status"], "started");
    assert_eq!(failed_turns(&events(&repo)), 1);

    // The limit is spent: the rerun finishes.
    let rerun = repo.run(&args);
    rerun.assert_code(0);
    assert_eq!(repo.git_output(&["show", "epic/shop:b/b.txt"]), "done\n");
}

#[test]
fn a_seat_not_logged_in_is_exit_2_with_the_fix_and_no_story_fails() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "x")]));
    let agent = limited_agent(&repo, "Not logged in · Please run /login", 0);
    let args = ["run", "plan.json", "--coder", &agent, "--no-progress"];
    let run = repo.run(&args);
    run.assert_code(2);
    assert!(run.stderr.contains("is not logged in"), "{run}");
    assert!(run.stderr.contains("hint: log"), "{run}");
    let status = repo.run(&["status", "--format", "json"]).json();
    assert_eq!(status["stories"][0]["status"], "started");
    assert_eq!(status["stories"][0]["outcome"], "skipped");

    let rerun = repo.run(&args);
    rerun.assert_code(0);
}

/// `epic run`'s stderr, read line by line on a thread of its own: [`until`](Self::until) a line
/// says something, then [`rest`](Self::rest) once the run ended.
struct Stderr {
    lines: std::sync::mpsc::Receiver<String>,
    read: String,
}

impl Stderr {
    fn of(child: &mut std::process::Child) -> Self {
        let stderr = child.stderr.take().expect("a piped stderr");
        let (send, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            lines,
            read: String::new(),
        }
    }

    /// Waits for a line that contains `text`: fails the test when the run's stderr ends without
    /// one, or none comes within [`PATIENCE`].
    fn until(&mut self, text: &str) {
        loop {
            match self.lines.recv_timeout(PATIENCE) {
                Ok(line) => {
                    self.read.push_str(&line);
                    self.read.push('\n');
                    if line.contains(text) {
                        return;
                    }
                }
                Err(error) => panic!("no line with {text:?} ({error}): {}", self.read),
            }
        }
    }

    /// Everything it said, once the run ended.
    fn rest(mut self) -> String {
        self.read.extend(self.lines.iter().map(|line| line + "\n"));
        self.read
    }
}

#[test]
fn a_usage_limit_pauses_the_seat_status_shows_it_and_no_story_fails() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "x")]));
    let agent = limited_agent(
        &repo,
        "You've hit your limit · resets 3am (Europe/Lisbon)",
        0,
    );
    let mut child = repo
        // The reset is up to a day ahead.
        .command(&[
            "run",
            "plan.json",
            "--coder",
            &agent,
            "--no-progress",
            "--max-wait",
            "2d",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn epic run");
    // The run says so once the pause is in its log, which `epic status` reads.
    let mut stderr = Stderr::of(&mut child);
    stderr.until("paused until");
    let status = repo.run(&["status", "--format", "json"]).json();
    assert_eq!(status["paused"][0]["reason"], "usage limit");
    assert_eq!(status["paused"][0]["story"], "a");
    let until: jiff::Timestamp = status["paused"][0]["until"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let lisbon = until.to_zoned_datetime(jiff::tz::TimeZone::get("Europe/Lisbon").unwrap());
    assert_eq!((lisbon.hour(), lisbon.minute()), (3, 0));
    let text = repo.run(&["status"]);
    assert!(text.stdout.contains("paused until"), "{text}");
    assert!(
        text.stdout.contains(": usage limit) (met by story a)"),
        "{text}"
    );

    // Ctrl-C ends the pause's wait like any turn: exit 130, and a rerun finishes.
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let output = child.wait_with_output().expect("wait for epic run");
    assert_eq!(output.status.code(), Some(130), "{}", stderr.rest());
    let events = events(&repo);
    let paused = of_kind(&events, "seat_paused");
    assert_eq!(paused.len(), 1, "{events:#?}");
    assert_eq!(paused[0]["story"], "a");
    assert_eq!(paused[0]["reason"], "usage limit");
    assert_eq!(failed_turns(&events), 1);
    assert!(of_kind(&events, "story_failed").is_empty());
    let rerun = repo.run(&["run", "plan.json", "--coder", &agent, "--no-progress"]);
    rerun.assert_code(0);
    assert!(Path::new(&repo.temp().join("limited")).exists());
    assert_eq!(repo.git_output(&["show", "epic/shop:a/a.txt"]), "done\n");
    let report = repo.run(&["report", "--format", "json"]).json();
    assert_eq!(report["stories"][0]["status"], "done");
}

/// On a clock the test moves (`EPIC_TEST_CLOCK`), the binary's pause lasts until the reset
/// the agent named: once the clock reads it, the turn runs again and the story is done.
#[test]
fn a_pause_ends_at_the_reset_on_the_runs_clock_and_the_story_is_done() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "x")]));
    let start: jiff::Timestamp = "2030-01-01T09:00:00Z".parse().unwrap();
    let reset = start + jiff::SignedDuration::from_hours(3);
    let agent = limited_agent(
        &repo,
        &format!("Claude AI usage limit reached|{}", reset.as_second()),
        0,
    );
    let clock = TestClock::new(repo.temp(), start);
    let mut command = repo.command(&[
        "run",
        "plan.json",
        "--coder",
        &agent,
        "--no-progress",
        "--max-wait",
        "6h",
    ]);
    let mut child = clock.spawn(&mut command);
    let mut stderr = Stderr::of(&mut child);
    stderr.until("paused until");
    let status = repo.run(&["status", "--format", "json"]).json();
    assert_eq!(status["paused"][0]["until"], reset.to_string(), "{status}");
    clock.advance(std::time::Duration::from_hours(3));
    let output = child.wait_with_output().expect("wait for epic run");
    assert_eq!(output.status.code(), Some(0), "{}", stderr.rest());
    assert_eq!(repo.git_output(&["show", "epic/shop:a/a.txt"]), "done\n");
    let events = events(&repo);
    assert_eq!(of_kind(&events, "seat_paused").len(), 1, "{events:#?}");
    assert_eq!(of_kind(&events, "seat_resumed").len(), 1, "{events:#?}");
    assert_eq!(failed_turns(&events), 1);
}

/// On a clock the test moves, a transient failure (a 503 standing alone) is retried once the
/// backoff has passed on the run's clock: the coder's second attempt waits for the clock, not
/// for the machine, and the story is done without a pause.
#[test]
fn a_transient_failure_is_retried_once_the_runs_clock_passes_the_backoff() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "x")]));
    let agent = limited_agent(&repo, "503 Service Unavailable", 0);
    let clock = TestClock::new(repo.temp(), "2030-01-01T09:00:00Z".parse().unwrap());
    let mut command = repo.command(&["run", "plan.json", "--coder", &agent, "--no-progress"]);
    let mut child = clock.spawn(&mut command);
    let mut stderr = Stderr::of(&mut child);
    stderr.until("attempt 1 failed, retrying in");
    // The default backoff is at most 5 s before the first retry.
    clock.advance(std::time::Duration::from_secs(5));
    let output = child.wait_with_output().expect("wait for epic run");
    let said = stderr.rest();
    assert_eq!(output.status.code(), Some(0), "{said}");
    assert!(said.contains("503 Service Unavailable"), "{said}");
    assert_eq!(repo.git_output(&["show", "epic/shop:a/a.txt"]), "done\n");
    let events = events(&repo);
    assert_eq!(of_kind(&events, "turn_retried").len(), 1, "{events:#?}");
    assert!(of_kind(&events, "seat_paused").is_empty(), "{events:#?}");
    assert_eq!(
        failed_turns(&events),
        0,
        "a retried attempt is not a failed turn"
    );
}

/// On a clock the test moves: once the coder's transcript shows its first "reconnecting" line
/// (the outage watch has read it), the clock moves past `--outage-wait`, and the next line ends
/// the turn as an outage. Its seat's first probe is further off than `--max-wait`, so the run
/// stops. An outage's probes after it are the executor's tests, on a clock they move.
#[test]
fn an_agent_that_only_reconnects_stops_the_run_on_its_outage() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "x")]));
    // Codex without a network: the same line again and again, never an exit.
    let script = "#!/bin/sh\n\
         cat > /dev/null\n\
         case \"$EPIC_ROLE\" in\n\
         planner) echo '{\"tasks\":[{\"title\":\"write it\",\"description\":\"the file\"}]}' ;;\n\
         *) n=0; while [ $n -lt 1200 ]; do echo 'Reconnecting... waiting for network'; sleep 0.1; n=$((n + 1)); done ;;\n\
         esac\n";
    let path = repo.temp().join("offline.sh");
    std::fs::write(&path, script).expect("write the agent");
    let agent = format!("exec:sh {}", path.display());
    let clock = TestClock::new(repo.temp(), "2030-01-01T09:00:00Z".parse().unwrap());
    let mut command = repo.command(&[
        "run",
        "plan.json",
        "--coder",
        &agent,
        "--no-progress",
        "--outage-wait",
        "2m",
        "--max-wait",
        "10s",
    ]);
    let child = clock.spawn(&mut command);
    let transcripts = repo.common_dir().join("epic/shop/transcripts/a");
    wait_until("the coder's transcript shows a reconnecting line", || {
        std::fs::read_dir(&transcripts)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|entry| entry.file_name().to_string_lossy().ends_with("-coder.md"))
            .any(|entry| {
                std::fs::read_to_string(entry.path())
                    .is_ok_and(|text| text.contains("Reconnecting..."))
            })
    });
    clock.advance(std::time::Duration::from_secs(121));
    let run = Run::of(child.wait_with_output().expect("wait for epic run"));
    run.assert_code(130);
    assert!(run.stderr.contains("(outage)"), "{run}");
    assert!(
        run.stderr.contains("no connection to its service for 2m"),
        "{run}"
    );
}

#[test]
fn a_test_clock_that_holds_no_time_is_bad_input_and_nothing_runs() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "x")]));
    let file = repo.temp().join("clock");
    std::fs::write(&file, "tomorrow").unwrap();
    let output = repo
        .command(&["run", "plan.json", "--coder", "script", "--no-progress"])
        .env("EPIC_TEST_CLOCK", &file)
        .output()
        .expect("run epic");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "EPIC_TEST_CLOCK names {}, which does not hold a time",
            file.display()
        )),
        "{stderr}"
    );
    assert!(!repo.common_dir().join("epic/shop/events.jsonl").exists());
}
