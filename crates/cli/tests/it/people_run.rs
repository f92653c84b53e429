//! A person in the loop of a running epic, end to end: `epic run` in a process of its own with
//! a scripted agent (`exec:`), and the test, another process, giving `epic answer`, `tell`,
//! `stop` and `retry` while it runs or between runs. What each proves is read from the run's
//! event log, its report, the epic branch and the agent's own records; the test waits on those
//! files, never on time.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::util::{RUN_PATIENCE, Repo, TestClock, file_plan, wait_for, wait_until};

/// How long an agent waits at a pipe for the test to release it before it gives up (twice
/// [`RUN_PATIENCE`], in seconds), so a test that died leaves no agent behind.
const AGENT_PATIENCE: &str = "600";

/// Shell lines that wait, when `pipe` (a shell word naming a path) is a named pipe the test made
/// ([`hold_at`]), until the test writes into it ([`release`]): a wait on the test, not on time.
fn wait_on(pipe: &str) -> String {
    format!("if [ -p {pipe} ]; then timeout {AGENT_PATIENCE} sh -c 'read _ < \"$0\"' {pipe}; fi")
}

/// Holds the agent that will wait on `path` ([`wait_on`]): the named pipe it waits at.
fn hold_at(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(made.success(), "mkfifo {}", path.display());
}

/// Lets the agent held at `path` go, once it waits there: a line into the pipe (opened without
/// blocking, which fails until the agent has it open), then the pipe removed.
fn release(path: &Path) {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let nonblock = i32::try_from(rustix::fs::OFlags::NONBLOCK.bits()).expect("a flag");
    let mut pipe = wait_for("the held agent at its pipe", RUN_PATIENCE, || {
        std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(nonblock)
            .open(path)
            .ok()
    });
    writeln!(pipe).expect("release the agent");
    drop(pipe);
    std::fs::remove_file(path).expect("remove the pipe");
}

/// A scripted agent in `<temp>/agent.sh`, as `--coder exec:sh …`: plans `tasks` (a JSON list)
/// as planner (having left `<temp>/planning-<story>`, once released when the test holds it at
/// `<temp>/hold-planner-<story>`: [`hold_at`]), clears everything as judge or reviewer, and runs `coder` (shell lines; the
/// prompt is in `$prompt`) as coder, after keeping each coder prompt in
/// `<temp>/prompts/<story>.<n>`.
fn agent(repo: &Repo, tasks: &str, coder: &str) -> String {
    let dir = repo.temp().display().to_string();
    std::fs::create_dir_all(repo.temp().join("prompts")).expect("the prompts' directory");
    let wait = wait_on("\"$dir/hold-planner-$EPIC_STORY\"");
    let script = format!(
        "#!/bin/sh\n\
         prompt=$(cat)\n\
         dir='{dir}'\n\
         case \"$EPIC_ROLE\" in\n\
         planner)\n\
           touch \"$dir/planning-$EPIC_STORY\"\n\
           {wait}\n\
           echo '{{\"tasks\":{tasks}}}' ;;\n\
         coder)\n\
           n=$(ls \"$dir/prompts\" | grep -c \"^$EPIC_STORY\\.\")\n\
           printf '%s' \"$prompt\" > \"$dir/prompts/$EPIC_STORY.$((n+1))\"\n\
           {coder}\n\
           ;;\n\
         *) echo '{{\"clean\":true,\"issues\":[]}}' ;;\n\
         esac\n"
    );
    let path = repo.temp().join("agent.sh");
    std::fs::write(&path, script).expect("write the agent");
    format!("exec:sh {}", path.display())
}

/// One task for the planner.
const ONE_TASK: &str = r#"[{"title":"write it","description":"the file"}]"#;

/// The coder's lines that write the story's file, as the plan asks.
const WRITE: &str = "mkdir -p \"$EPIC_STORY\" && echo done > \"$EPIC_STORY/$EPIC_STORY.txt\" \
                     && echo \"wrote $EPIC_STORY\"";

/// `epic run plan.json --coder AGENT …`, `extra` last.
fn run_args<'a>(agent: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "plan.json",
        "--coder",
        agent,
        "--planner",
        "always",
        "--no-progress",
        "--gate",
        "true",
    ];
    args.extend_from_slice(extra);
    args
}

/// `epic run` going on in a child process, its output in files; killed if the test fails
/// before it ends.
struct Running {
    child: Option<Child>,
    out: PathBuf,
    err: PathBuf,
}

/// How a run ended: its exit code and what it printed.
struct Ended {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl std::fmt::Display for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {:?}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

impl Running {
    fn start(repo: &Repo, args: &[&str]) -> Self {
        Self::start_with(repo, args, |_| {})
    }

    fn start_with(
        repo: &Repo,
        args: &[&str],
        with: impl FnOnce(&mut std::process::Command),
    ) -> Self {
        let runs = std::fs::read_dir(repo.temp())
            .expect("the temporary directory")
            .filter(|entry| {
                entry
                    .as_ref()
                    .is_ok_and(|entry| entry.file_name().to_string_lossy().starts_with("run-"))
            })
            .count();
        let out = repo.temp().join(format!("run-{runs}.out"));
        let err = repo.temp().join(format!("run-{runs}.err"));
        let mut command = repo.command(args);
        with(&mut command);
        let child = command
            .stdout(Stdio::from(
                std::fs::File::create(&out).expect("stdout file"),
            ))
            .stderr(Stdio::from(
                std::fs::File::create(&err).expect("stderr file"),
            ))
            .spawn()
            .expect("start `epic run`");
        Self {
            child: Some(child),
            out,
            err,
        }
    }

    /// Whether the run is still going.
    fn going(&mut self) -> bool {
        let child = self.child.as_mut().expect("not waited for");
        child.try_wait().expect("look at the run").is_none()
    }

    /// Waits for the run's end, within [`RUN_PATIENCE`].
    fn end(mut self) -> Ended {
        let mut child = self.child.take().expect("not waited for");
        let status = wait_for("`epic run` ends", RUN_PATIENCE, || {
            child.try_wait().expect("look at the run")
        });
        Ended {
            code: status.code(),
            stdout: std::fs::read_to_string(&self.out).unwrap_or_default(),
            stderr: std::fs::read_to_string(&self.err).unwrap_or_default(),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            child.kill().ok();
            child.wait().ok();
        }
    }
}

/// The events of epic `shop`'s log, parsed (none before the first run).
fn events(repo: &Repo) -> Vec<Value> {
    std::fs::read_to_string(repo.epic("shop").events())
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// The events of `kind` (for `story`, when given).
fn of_kind(repo: &Repo, kind: &str, story: Option<&str>) -> Vec<Value> {
    events(repo)
        .into_iter()
        .filter(|event| event["kind"] == kind)
        .filter(|event| story.is_none_or(|story| event["story"] == story))
        .collect()
}

/// Waits until the log has an event of `kind` (for `story`, when given); fails the test with
/// the run's output if the run ends first.
fn wait_event(repo: &Repo, run: &mut Running, kind: &str, story: Option<&str>) -> Value {
    wait_for(
        &format!("event `{kind}` for {story:?}"),
        RUN_PATIENCE,
        || {
            if let Some(event) = of_kind(repo, kind, story).into_iter().next() {
                return Some(event);
            }
            assert!(
                run.going(),
                "the run ended before `{kind}`:\n{}\n{}",
                std::fs::read_to_string(&run.err).unwrap_or_default(),
                std::fs::read_to_string(repo.epic("shop").events()).unwrap_or_default()
            );
            None
        },
    )
}

/// Story `id`'s outcome status in the report of the last run.
fn outcome(repo: &Repo, id: &str) -> String {
    let text = std::fs::read_to_string(repo.epic("shop").report_json()).expect("report.json");
    let report: Value = serde_json::from_str(&text).expect("report.json is JSON");
    let stories = report["data"]["stories"].as_array().expect("stories");
    let story = stories
        .iter()
        .find(|story| story["id"] == id)
        .unwrap_or_else(|| panic!("story {id} in the report: {report}"));
    story["status"].as_str().expect("a status").to_owned()
}

/// The coder prompts story `id` was given, in order.
fn prompts(repo: &Repo, id: &str) -> Vec<String> {
    let mut prompts = Vec::new();
    for n in 1.. {
        match std::fs::read_to_string(repo.temp().join(format!("prompts/{id}.{n}"))) {
            Ok(prompt) => prompts.push(prompt),
            Err(_) => return prompts,
        }
    }
    prompts
}

/// Story `id`'s state (its state file's `data`).
fn state(repo: &Repo, id: &str) -> Value {
    let path = repo.epic("shop").story_state(id).expect("a safe id");
    let document: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("a state file")).expect("JSON");
    document["data"].clone()
}

/// The files in the epic's inbox (not those held for a coder).
fn inbox_files(repo: &Repo) -> Vec<PathBuf> {
    std::fs::read_dir(repo.epic("shop").inbox())
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.is_file())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether process `pid` is alive (a zombie is not).
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'))
    })
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()))
        .trim()
        .to_owned()
}

/// The coder asks which port, unless its prompt carries the answer: with `--on-blocked ask`
/// the story waits (its state and the log say so) while the other story merges and the run
/// goes on; `epic answer` sends it on, its coder's next turn reads the answer, and the port
/// it was told is what merges.
#[test]
fn an_answer_lets_a_waiting_story_finish() {
    let repo = Repo::new();
    repo.write(
        "plan.json",
        file_plan(&[("a", &[], "alpha"), ("b", &[], "beta")]),
    );
    let agent = agent(&repo, ONE_TASK, &asking_coder());
    let mut run = Running::start(
        &repo,
        &run_args(
            &agent,
            &[
                "--on-blocked",
                "ask",
                "--sandbox",
                "off",
                "--concurrency",
                "2",
            ],
        ),
    );
    let waiting = wait_event(&repo, &mut run, "story_waiting", Some("a"));
    assert_eq!(
        waiting["question"],
        "which port should the service listen on?"
    );
    // The other story goes on and merges; the run does not end while a waits.
    wait_event(&repo, &mut run, "story_merged", Some("b"));
    assert!(run.going(), "the run waits for the answer");
    let hold = &state(&repo, "a")["hold"];
    assert_eq!(hold["hold"], "waiting", "{hold}");
    assert_eq!(hold["question"], "which port should the service listen on?");
    let status = repo.run(&["status", "shop"]);
    status.assert_code(0);
    assert!(
        status.stdout.contains(
            "\nheld for a person:\na: waiting for an answer since 2\
             "
        ) && status
            .stdout
            .contains(": which port should the service listen on? (`epic answer a TEXT`)\n"),
        "{status}"
    );
    let json = repo.run(&["status", "shop", "--format", "json"]).json();
    let stories = json["stories"].as_array().expect("stories");
    let a = stories.iter().find(|story| story["id"] == "a").expect("a");
    assert_eq!(a["hold"]["hold"], "waiting", "{json}");
    assert_eq!(
        a["hold"]["question"],
        "which port should the service listen on?"
    );

    let answer = repo.run(&["answer", "a", "8080"]);
    answer.assert_code(0);
    assert!(
        answer
            .stdout
            .contains("the running epic takes it within a second"),
        "{answer}"
    );
    let ended = run.end();
    assert_eq!(ended.code, Some(0), "{ended}");
    assert_eq!(repo.git_output(&["show", "epic/shop:a/port.txt"]), "8080\n");
    assert_eq!(repo.git_output(&["show", "epic/shop:b/b.txt"]), "done\n");
    let answered = of_kind(&repo, "answered", Some("a"));
    assert_eq!(answered.len(), 1, "{answered:?}");
    let read = of_kind(&repo, "notes_read", Some("a"));
    assert_eq!(read.len(), 1, "{read:?}");
    assert_eq!(read[0]["commands"][0], answered[0]["command"]);
    let prompts = prompts(&repo, "a");
    assert_eq!(prompts.len(), 2, "the coder asked, then was answered");
    assert!(!prompts[0].contains("The person running this epic"));
    assert!(
        prompts[1].contains("The person running this epic wrote to you")
            && prompts[1].contains("Their answer to the question you stopped on (BLOCKED_ON)")
            && prompts[1].contains("> 8080"),
        "{}",
        prompts[1]
    );
    assert_eq!(outcome(&repo, "a"), "done");
    assert!(state(&repo, "a").get("hold").is_none_or(Value::is_null));
    assert!(inbox_files(&repo).is_empty(), "{:?}", inbox_files(&repo));
}

/// A stopped coder turn's processes are killed, the story is `stopped`, its dependent skipped
/// and the independent one done; the next run keeps it stopped, even though its coder would now
/// succeed, until `epic retry`, which waits in the inbox for the run after.
#[test]
fn stop_ends_one_story_and_skips_its_dependents_while_others_go_on() {
    let repo = Repo::new();
    repo.write(
        "plan.json",
        file_plan(&[
            ("a", &[], "alpha"),
            ("b", &["a"], "beta"),
            ("c", &[], "gamma"),
        ]),
    );
    let dir = repo.temp().display().to_string();
    let coder = format!(
        "if [ \"$EPIC_STORY\" = a ] && [ ! -e '{dir}/a-may-finish' ]; then\n\
           sleep 1000 &\n\
           echo $! > '{dir}/a-sleep.pid'\n\
           echo $$ > '{dir}/a.pid'\n\
           wait\n\
           exit 1\n\
         fi\n\
         {WRITE}"
    );
    let agent = agent(&repo, ONE_TASK, &coder);
    let args = run_args(&agent, &["--sandbox", "off", "--concurrency", "2"]);
    let mut run = Running::start(&repo, &args);
    wait_event(&repo, &mut run, "story_merged", Some("c"));
    wait_until("a's coder turn is under way", || {
        std::fs::read_to_string(repo.temp().join("a.pid")).is_ok_and(|pid| pid.ends_with('\n'))
    });
    let (shell, sleep) = (
        read(&repo.temp().join("a.pid")),
        read(&repo.temp().join("a-sleep.pid")),
    );
    assert!(alive(&shell) && alive(&sleep));
    repo.run(&["stop", "a"]).assert_code(0);
    let ended = run.end();
    assert_eq!(ended.code, Some(1), "{ended}");
    assert!(
        ended
            .stdout
            .contains("1/3 done, 0 failed, 1 skipped, 1 stopped")
            && ended
                .stdout
                .contains("\nstopped:\n  a: stopped by a person (uid "),
        "{ended}"
    );
    assert!(!alive(&shell), "the coder's shell is gone");
    assert!(!alive(&sleep), "what the coder started is gone");
    assert_eq!(of_kind(&repo, "stopped", Some("a")).len(), 1);
    assert_eq!(of_kind(&repo, "story_stopped", Some("a")).len(), 1);
    assert_eq!(outcome(&repo, "a"), "stopped");
    assert_eq!(outcome(&repo, "b"), "skipped");
    assert_eq!(outcome(&repo, "c"), "done");
    assert_eq!(state(&repo, "a")["hold"]["hold"], "stopped");
    assert_eq!(prompts(&repo, "a").len(), 1);
    let status = repo.run(&["status", "shop"]);
    assert!(
        status
            .stdout
            .contains("last report: 1 done, 0 failed, 1 skipped, 1 stopped on epic/shop"),
        "{status}"
    );
    let json = repo.run(&["status", "shop", "--format", "json"]).json();
    assert_eq!(json["report"]["stopped"], 1, "{json}");

    // The next run keeps a stopped: its coder, which would now finish, is not asked.
    std::fs::write(repo.temp().join("a-may-finish"), "").expect("the marker");
    let rerun = Running::start(&repo, &args).end();
    assert_eq!(rerun.code, Some(1), "{rerun}");
    assert_eq!(outcome(&repo, "a"), "stopped");
    assert_eq!(outcome(&repo, "b"), "skipped");
    assert_eq!(
        prompts(&repo, "a").len(),
        1,
        "a's coder was not asked again"
    );
    assert!(of_kind(&repo, "story_started", Some("b")).is_empty());

    // A retry given with no run going waits in the inbox for the next run.
    let retry = repo.run(&["retry", "a"]);
    retry.assert_code(0);
    assert!(retry.stdout.contains("no run is going"), "{retry}");
    assert_eq!(inbox_files(&repo).len(), 1);
    let last = Running::start(&repo, &args).end();
    assert_eq!(last.code, Some(0), "{last}");
    assert_eq!(of_kind(&repo, "retried", Some("a")).len(), 1);
    assert_eq!(outcome(&repo, "a"), "done");
    assert_eq!(outcome(&repo, "b"), "done");
    assert_eq!(repo.git_output(&["show", "epic/shop:a/a.txt"]), "done\n");
    assert_eq!(repo.git_output(&["show", "epic/shop:b/b.txt"]), "done\n");
    assert!(state(&repo, "a").get("hold").is_none_or(Value::is_null));
    assert!(inbox_files(&repo).is_empty());
}

/// A note given while the story's planner works is in the first coder turn's prompt, marked as
/// the person's words, and not in the second's: each note is read once.
#[test]
fn a_note_reaches_the_next_coder_turn_once() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let tasks = r#"[{"title":"first part","description":"one"},{"title":"second part","description":"two"}]"#;
    let coder = "mkdir -p a && echo \"$EPIC_TASK\" >> a/a.txt && echo \"did $EPIC_TASK\"";
    let agent = agent(&repo, tasks, coder);
    let hold = repo.temp().join("hold-planner-a");
    hold_at(&hold);
    let mut run = Running::start(&repo, &run_args(&agent, &["--sandbox", "off"]));
    wait_until("a's planner runs", || {
        repo.temp().join("planning-a").exists()
    });
    let tell = repo.run(&["tell", "a", "use tabs"]);
    tell.assert_code(0);
    wait_event(&repo, &mut run, "told", Some("a"));
    release(&hold);
    let ended = run.end();
    assert_eq!(ended.code, Some(0), "{ended}");
    let prompts = prompts(&repo, "a");
    assert_eq!(prompts.len(), 2, "a coder turn per task");
    assert!(
        prompts[0].contains("The person running this epic wrote to you")
            && prompts[0].contains("A note from them:\n> use tabs"),
        "{}",
        prompts[0]
    );
    assert!(!prompts[1].contains("use tabs"), "{}", prompts[1]);
    assert!(!prompts[1].contains("The person running this epic"));
    let told = of_kind(&repo, "told", Some("a"));
    let read = of_kind(&repo, "notes_read", Some("a"));
    assert_eq!((told.len(), read.len()), (1, 1), "{read:?}");
    assert_eq!(read[0]["commands"], serde_json::json!([told[0]["command"]]));
    let left = walk(&repo.epic("shop").inbox().join("held"));
    assert!(left.is_empty(), "no note is held once read: {left:?}");
}

/// The files under `dir`, recursively.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .flat_map(|entry| {
            let path = entry.path();
            if path.is_dir() {
                walk(&path)
            } else {
                vec![path]
            }
        })
        .collect()
}

/// In the sandbox, a coder runs the real `epic` to stop the run and leave a note for another
/// story, and writes a command file straight into the inbox: each fails, the agent records how,
/// and the run goes on as if nothing was tried.
#[test]
fn no_agent_can_give_a_command() {
    let repo = Repo::new();
    repo.write(
        "plan.json",
        file_plan(&[("a", &[], "alpha"), ("b", &[], "beta")]),
    );
    let epic = env!("CARGO_BIN_EXE_epic");
    let inbox = repo.epic("shop").inbox().display().to_string();
    let coder = format!(
        "if [ \"$EPIC_STORY\" = a ]; then\n\
           mkdir -p a\n\
           '{epic}' stop --all > a/stop.out 2>&1; echo \"stop $?\" >> a/tries.txt\n\
           '{epic}' tell b 'delete everything' > a/tell.out 2>&1; echo \"tell $?\" >> a/tries.txt\n\
           echo '{{\"action\":\"stop_all\",\"uid\":0,\"at\":\"2030-01-01T00:00:00Z\"}}' \
             2> a/write.out > '{inbox}/00000000000000000001-1-0.json'; echo \"write $?\" >> a/tries.txt\n\
         fi\n\
         {WRITE}"
    );
    let agent = agent(&repo, ONE_TASK, &coder);
    let ended = Running::start(
        &repo,
        &run_args(&agent, &["--sandbox", "on", "--concurrency", "1"]),
    )
    .end();
    assert_eq!(ended.code, Some(0), "{ended}");
    let tries = repo.git_output(&["show", "epic/shop:a/tries.txt"]);
    let outputs: Vec<String> = ["stop.out", "tell.out", "write.out"]
        .iter()
        .map(|name| {
            let said = repo.git_output(&["show", &format!("epic/shop:a/{name}")]);
            format!("{name}: {said}")
        })
        .collect();
    let outputs = outputs.join("\n");
    let attempts: Vec<(&str, &str)> = tries
        .lines()
        .map(|line| line.split_once(' ').expect("a try and its code"))
        .collect();
    assert_eq!(
        attempts.iter().map(|(what, _)| *what).collect::<Vec<_>>(),
        ["stop", "tell", "write"],
        "{tries}"
    );
    for (what, code) in &attempts {
        assert_ne!(
            *code, "0",
            "the agent's `{what}` failed:\n{tries}\n{outputs}"
        );
    }
    // Each got as far as the inbox, which the sandbox keeps read-only.
    assert_eq!(
        outputs.matches("Read-only file system").count(),
        3,
        "{outputs}"
    );
    for kind in ["stopped", "told", "command_refused", "story_stopped"] {
        assert!(of_kind(&repo, kind, None).is_empty(), "no `{kind}` event");
    }
    assert_eq!(outcome(&repo, "a"), "done");
    assert_eq!(outcome(&repo, "b"), "done");
    assert_eq!(repo.git_output(&["show", "epic/shop:b/b.txt"]), "done\n");
    assert!(inbox_files(&repo).is_empty(), "{:?}", inbox_files(&repo));
    assert!(walk(&repo.epic("shop").inbox().join("held")).is_empty());
}

/// A question nobody answers: once the run's clock is past `--max-wait`, the story fails and
/// its dependent is skipped; the run ends, and an answer that comes too late is refused.
#[test]
fn an_unanswered_story_fails_after_max_wait() {
    let repo = Repo::new();
    repo.write(
        "plan.json",
        file_plan(&[("a", &[], "alpha"), ("b", &["a"], "beta")]),
    );
    let coder = "echo 'BLOCKED_ON: which port should the service listen on?'";
    let agent = agent(&repo, ONE_TASK, coder);
    let clock = TestClock::new(repo.temp(), "2030-01-01T09:00:00Z".parse().unwrap());
    let args = run_args(
        &agent,
        &[
            "--on-blocked",
            "ask",
            "--max-wait",
            "1h",
            "--sandbox",
            "off",
        ],
    );
    let mut run = Running::start_with(&repo, &args, |command| {
        command.env("EPIC_TEST_CLOCK", repo.temp().join("clock"));
    });
    wait_event(&repo, &mut run, "story_waiting", Some("a"));
    assert!(run.going(), "the run waits for the answer");
    // The wait's timer starts as the loop comes round after the event: each look moves the
    // clock an hour on, so one of them is past `--max-wait` whenever it started.
    let failed = wait_for("a fails unanswered", RUN_PATIENCE, || {
        clock.advance(Duration::from_hours(1));
        of_kind(&repo, "story_failed", Some("a")).into_iter().next()
    });
    let reason = failed["reason"].as_str().expect("a reason");
    assert!(
        reason.contains("which port should the service listen on?"),
        "{reason}"
    );
    let ended = run.end();
    assert_eq!(ended.code, Some(1), "{ended}");
    assert_eq!(outcome(&repo, "a"), "failed");
    assert_eq!(outcome(&repo, "b"), "skipped");
    let state = state(&repo, "a");
    assert_eq!(state["status"], "failed", "{state}");
    assert!(state.get("hold").is_none_or(Value::is_null), "{state}");
    let late = repo.run(&["answer", "a", "8080"]);
    late.assert_code(2);
    assert!(late.stderr.contains("it is failed"), "{late}");
    assert!(inbox_files(&repo).is_empty());
}

/// A story that failed runs again in the running epic once a person retries it, while another
/// story keeps the run going; its dependent, skipped, runs too.
#[test]
fn retry_in_a_running_epic() {
    let repo = Repo::new();
    repo.write(
        "plan.json",
        file_plan(&[
            ("a", &[], "alpha"),
            ("b", &["a"], "beta"),
            ("c", &[], "gamma"),
        ]),
    );
    let dir = repo.temp().display().to_string();
    let coder = format!(
        "if [ \"$EPIC_STORY\" = a ] && [ ! -e '{dir}/a-may-finish' ]; then\n\
           echo 'BLOCKED_ON: a key nobody gave'\n\
           exit 0\n\
         fi\n\
         {WRITE}"
    );
    let agent = agent(&repo, ONE_TASK, &coder);
    let hold = repo.temp().join("hold-planner-c");
    hold_at(&hold);
    let mut run = Running::start(
        &repo,
        &run_args(&agent, &["--sandbox", "off", "--concurrency", "2"]),
    );
    wait_event(&repo, &mut run, "story_failed", Some("a"));
    wait_event(&repo, &mut run, "story_skipped", Some("b"));
    std::fs::write(repo.temp().join("a-may-finish"), "").expect("the marker");
    let retry = repo.run(&["retry", "a"]);
    retry.assert_code(0);
    assert!(
        retry
            .stdout
            .contains("the running epic takes it within a second"),
        "{retry}"
    );
    wait_event(&repo, &mut run, "retried", Some("a"));
    wait_event(&repo, &mut run, "story_merged", Some("b"));
    release(&hold);
    let ended = run.end();
    assert_eq!(ended.code, Some(0), "{ended}");
    for story in ["a", "b", "c"] {
        assert_eq!(outcome(&repo, story), "done", "{story}");
        assert_eq!(
            repo.git_output(&["show", &format!("epic/shop:{story}/{story}.txt")]),
            "done\n"
        );
    }
    assert_eq!(prompts(&repo, "a").len(), 2, "a's coder ran again");
    assert!(inbox_files(&repo).is_empty());
}

/// The coder's lines for story `a` that ask which port unless the prompt says 8080, and write
/// the port then; every other story writes its file.
fn asking_coder() -> String {
    format!(
        "case \"$EPIC_STORY\" in\n\
         a) if printf '%s' \"$prompt\" | grep -q 8080; then\n\
              mkdir -p a && echo 8080 > a/port.txt && echo 'wrote a/port.txt'\n\
            else\n\
              echo 'BLOCKED_ON: which port should the service listen on?'\n\
            fi ;;\n\
         *) {WRITE} ;;\n\
         esac"
    )
}

/// `epic stop --all` while a story waits ends the run as an interrupt (exit 130) with the wait
/// kept; an answer given with no run going waits in the inbox, and the next run, the story
/// waiting again, takes it and finishes.
#[test]
fn stop_all_keeps_a_waiting_story_waiting_for_the_next_runs_answer() {
    let repo = Repo::new();
    repo.write(
        "plan.json",
        file_plan(&[("a", &[], "alpha"), ("c", &[], "gamma")]),
    );
    let agent = agent(&repo, ONE_TASK, &asking_coder());
    let args = run_args(
        &agent,
        &[
            "--on-blocked",
            "ask",
            "--sandbox",
            "off",
            "--concurrency",
            "2",
        ],
    );
    let mut run = Running::start(&repo, &args);
    wait_event(&repo, &mut run, "story_waiting", Some("a"));
    wait_event(&repo, &mut run, "story_merged", Some("c"));
    repo.run(&["stop", "--all"]).assert_code(0);
    let ended = run.end();
    assert_eq!(ended.code, Some(130), "{ended}");
    let stopped = of_kind(&repo, "stopped", None);
    assert_eq!(stopped.len(), 1, "{stopped:?}");
    assert!(stopped[0].get("story").is_none(), "{:?}", stopped[0]);
    assert!(of_kind(&repo, "story_stopped", None).is_empty());
    assert_eq!(state(&repo, "a")["hold"]["hold"], "waiting");
    assert!(inbox_files(&repo).is_empty(), "{:?}", inbox_files(&repo));
    repo.run(&["stop", "--all"]).assert_code(2);

    let answer = repo.run(&["answer", "a", "8080"]);
    answer.assert_code(0);
    assert!(answer.stdout.contains("no run is going"), "{answer}");
    let rerun = Running::start(&repo, &args).end();
    assert_eq!(rerun.code, Some(0), "{rerun}");
    assert_eq!(repo.git_output(&["show", "epic/shop:a/port.txt"]), "8080\n");
    assert_eq!(of_kind(&repo, "answered", Some("a")).len(), 1);
    assert_eq!(of_kind(&repo, "notes_read", Some("a")).len(), 1);
    assert!(of_kind(&repo, "command_refused", None).is_empty());
    let prompts = prompts(&repo, "a");
    assert_eq!(prompts.len(), 2, "asked once, then answered");
    assert!(prompts[1].contains("> 8080"), "{}", prompts[1]);
    assert!(inbox_files(&repo).is_empty());
}

/// A story waiting on an answer can be stopped: it ends stopped at once, its dependent skipped,
/// and an answer that comes after is refused; a retry runs it again, asking anew.
#[test]
fn a_waiting_story_can_be_stopped() {
    let repo = Repo::new();
    repo.write(
        "plan.json",
        file_plan(&[("a", &[], "alpha"), ("b", &["a"], "beta")]),
    );
    let agent = agent(&repo, ONE_TASK, &asking_coder());
    let args = run_args(&agent, &["--on-blocked", "ask", "--sandbox", "off"]);
    let mut run = Running::start(&repo, &args);
    wait_event(&repo, &mut run, "story_waiting", Some("a"));
    repo.run(&["stop", "a"]).assert_code(0);
    let ended = run.end();
    assert_eq!(ended.code, Some(1), "{ended}");
    assert_eq!(of_kind(&repo, "story_stopped", Some("a")).len(), 1);
    assert_eq!(outcome(&repo, "a"), "stopped");
    assert_eq!(outcome(&repo, "b"), "skipped");
    assert_eq!(state(&repo, "a")["hold"]["hold"], "stopped");
    let status = repo.run(&["status", "shop"]);
    assert!(
        status.stdout.contains("\na: stopped by a person (uid ")
            && status.stdout.contains("(`epic retry a` runs it again)\n"),
        "{status}"
    );
    let late = repo.run(&["answer", "a", "8080"]);
    late.assert_code(2);
    assert!(late.stderr.contains("stopped"), "{late}");
    assert!(inbox_files(&repo).is_empty());

    repo.run(&["retry", "a"]).assert_code(0);
    let mut rerun = Running::start(&repo, &args);
    wait_event(&repo, &mut rerun, "retried", Some("a"));
    wait_for("a asks again", RUN_PATIENCE, || {
        (of_kind(&repo, "story_waiting", Some("a")).len() == 2).then_some(())
    });
    repo.run(&["answer", "a", "8080"]).assert_code(0);
    let ended = rerun.end();
    assert_eq!(ended.code, Some(0), "{ended}");
    assert_eq!(outcome(&repo, "a"), "done");
    assert_eq!(outcome(&repo, "b"), "done");
    assert_eq!(repo.git_output(&["show", "epic/shop:a/port.txt"]), "8080\n");
    assert_eq!(prompts(&repo, "a").len(), 3, "asked, asked again, answered");
}

/// The coder's lines for story `s` that leave `<temp>/coding-s` and, held at
/// `<temp>/hold-coder-s` ([`hold_at`]), wait until the test releases them, then write the story's
/// file.
fn held_coder(repo: &Repo) -> String {
    let dir = repo.temp().display().to_string();
    let wait = wait_on(&format!("'{dir}/hold-coder-'\"$EPIC_STORY\""));
    format!(
        "touch '{dir}/coding-'\"$EPIC_STORY\"\n\
         {wait}\n\
         {WRITE}"
    )
}

/// A note given while the story's last coder turn runs is not in that turn's prompt; the story
/// merges with no turn left to read it, and the note is not left held for a turn that never
/// comes.
#[test]
fn a_note_given_during_the_last_turn_is_not_left_behind() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let agent = agent(&repo, ONE_TASK, &held_coder(&repo));
    let hold = repo.temp().join("hold-coder-a");
    hold_at(&hold);
    let mut run = Running::start(&repo, &run_args(&agent, &["--sandbox", "off"]));
    wait_until("a's coder runs", || repo.temp().join("coding-a").exists());
    repo.run(&["tell", "a", "late note"]).assert_code(0);
    wait_event(&repo, &mut run, "told", Some("a"));
    release(&hold);
    let ended = run.end();
    assert_eq!(ended.code, Some(0), "{ended}");
    let prompts = prompts(&repo, "a");
    assert_eq!(prompts.len(), 1);
    assert!(!prompts[0].contains("late note"));
    assert!(of_kind(&repo, "notes_read", None).is_empty());
    let told = &of_kind(&repo, "told", Some("a"))[0]["command"];
    let told = told.as_str().expect("a command id");
    let said = of_kind(&repo, "note", Some("a")).into_iter().any(|note| {
        note["message"]
            .as_str()
            .is_some_and(|text| text.contains(told))
    });
    assert!(
        said,
        "the log says the note was not read: {:?}",
        events(&repo)
    );
    let left = walk(&repo.epic("shop").inbox().join("held"));
    assert!(left.is_empty(), "{left:?}");
}

/// A story not started yet can be stopped while the story it depends on runs, and retried in
/// the same run: it then runs once that story merged.
#[test]
fn a_story_not_started_is_stopped_and_retried_in_the_running_epic() {
    let repo = Repo::new();
    repo.write(
        "plan.json",
        file_plan(&[("a", &[], "alpha"), ("b", &["a"], "beta")]),
    );
    let agent = agent(&repo, ONE_TASK, &held_coder(&repo));
    let hold = repo.temp().join("hold-coder-a");
    hold_at(&hold);
    let mut run = Running::start(&repo, &run_args(&agent, &["--sandbox", "off"]));
    wait_until("a's coder runs", || repo.temp().join("coding-a").exists());
    repo.run(&["stop", "b"]).assert_code(0);
    wait_event(&repo, &mut run, "story_stopped", Some("b"));
    assert_eq!(state(&repo, "b")["hold"]["hold"], "stopped");
    repo.run(&["retry", "b"]).assert_code(0);
    wait_event(&repo, &mut run, "retried", Some("b"));
    release(&hold);
    let ended = run.end();
    assert_eq!(ended.code, Some(0), "{ended}");
    assert_eq!(outcome(&repo, "a"), "done");
    assert_eq!(outcome(&repo, "b"), "done");
    assert_eq!(repo.git_output(&["show", "epic/shop:b/b.txt"]), "done\n");
    assert!(of_kind(&repo, "command_refused", None).is_empty());
}

/// A note given while the story waits comes before the answer given after it, each marked as
/// what it is, in the one coder turn that reads them both.
#[test]
fn notes_and_an_answer_are_read_in_the_order_given() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let agent = agent(&repo, ONE_TASK, &asking_coder());
    let mut run = Running::start(
        &repo,
        &run_args(&agent, &["--on-blocked", "ask", "--sandbox", "off"]),
    );
    wait_event(&repo, &mut run, "story_waiting", Some("a"));
    repo.run(&["tell", "a", "keep it small"]).assert_code(0);
    wait_event(&repo, &mut run, "told", Some("a"));
    repo.run(&["answer", "a", "8080"]).assert_code(0);
    let ended = run.end();
    assert_eq!(ended.code, Some(0), "{ended}");
    let prompts = prompts(&repo, "a");
    assert_eq!(
        prompts.len(),
        2,
        "a note alone does not send a waiting story on"
    );
    let note = prompts[1].find("A note from them:\n> keep it small");
    let answer =
        prompts[1].find("Their answer to the question you stopped on (BLOCKED_ON):\n> 8080");
    assert!(
        note.zip(answer).is_some_and(|(note, answer)| note < answer),
        "{}",
        prompts[1]
    );
    let told = &of_kind(&repo, "told", Some("a"))[0]["command"];
    let answered = &of_kind(&repo, "answered", Some("a"))[0]["command"];
    let read = of_kind(&repo, "notes_read", Some("a"));
    assert_eq!(read.len(), 1, "{read:?}");
    assert_eq!(read[0]["commands"], serde_json::json!([told, answered]));
}

/// `epic stop --all` while a coder turn runs ends the turn's processes and the run (exit 130),
/// the story kept as it was, not stopped: the next run resumes and finishes it.
#[test]
fn stop_all_ends_a_running_turn_and_a_rerun_resumes() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let dir = repo.temp().display().to_string();
    let coder = format!(
        "if [ ! -e '{dir}/a-may-finish' ]; then\n\
           sleep 1000 &\n\
           echo $! > '{dir}/a-sleep.pid'\n\
           echo $$ > '{dir}/a.pid'\n\
           wait\n\
           exit 1\n\
         fi\n\
         {WRITE}"
    );
    let agent = agent(&repo, ONE_TASK, &coder);
    let args = run_args(&agent, &["--sandbox", "off"]);
    let run = Running::start(&repo, &args);
    wait_until("a's coder turn is under way", || {
        std::fs::read_to_string(repo.temp().join("a.pid")).is_ok_and(|pid| pid.ends_with('\n'))
    });
    let (shell, sleep) = (
        read(&repo.temp().join("a.pid")),
        read(&repo.temp().join("a-sleep.pid")),
    );
    repo.run(&["stop", "--all"]).assert_code(0);
    let ended = run.end();
    assert_eq!(ended.code, Some(130), "{ended}");
    assert!(
        !alive(&shell) && !alive(&sleep),
        "the turn's processes are gone"
    );
    assert!(of_kind(&repo, "story_stopped", None).is_empty());
    assert!(state(&repo, "a").get("hold").is_none_or(Value::is_null));
    std::fs::write(repo.temp().join("a-may-finish"), "").expect("the marker");
    let rerun = Running::start(&repo, &args).end();
    assert_eq!(rerun.code, Some(0), "{rerun}");
    assert_eq!(outcome(&repo, "a"), "done");
    assert_eq!(repo.git_output(&["show", "epic/shop:a/a.txt"]), "done\n");
}

/// Writes `text` as `name` in the epic's inbox whole, as `epic` writes a command (a temporary
/// file, then a rename).
fn drop_in_inbox(repo: &Repo, name: &str, text: &str) {
    let inbox = repo.epic("shop").inbox();
    let temp = inbox.join(format!(".{name}.tmp"));
    std::fs::write(&temp, text).expect("write the command");
    std::fs::rename(&temp, inbox.join(name)).expect("move the command in");
}

/// What the run cannot apply, a command for a story the plan does not have and a file that is
/// no command, is refused in the log and removed; the run goes on unaffected.
#[test]
fn a_command_the_run_cannot_apply_is_refused_and_removed() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let agent = agent(&repo, ONE_TASK, WRITE);
    let hold = repo.temp().join("hold-planner-a");
    hold_at(&hold);
    let run = Running::start(&repo, &run_args(&agent, &["--sandbox", "off"]));
    wait_until("a's planner runs", || {
        repo.temp().join("planning-a").exists()
    });
    let command = serde_json::json!({"version": 1, "data": {
        "action": "tell", "story": "zzz", "text": "hi", "uid": 0, "at": "2030-01-01T00:00:00Z"
    }});
    drop_in_inbox(&repo, "00000000000000000001-1-0.json", &command.to_string());
    drop_in_inbox(&repo, "00000000000000000002-1-0.json", "not a command");
    wait_for("both refused", RUN_PATIENCE, || {
        let refused = of_kind(&repo, "command_refused", None);
        (refused.len() == 2).then_some(refused)
    });
    release(&hold);
    let ended = run.end();
    assert_eq!(ended.code, Some(0), "{ended}");
    let refused = of_kind(&repo, "command_refused", None);
    assert_eq!(refused[0]["command"], "00000000000000000001-1-0");
    assert!(
        refused[0]["reason"]
            .as_str()
            .is_some_and(|reason| reason.contains("the plan has no story `zzz`")),
        "{refused:?}"
    );
    assert_eq!(refused[1]["command"], "00000000000000000002-1-0.json");
    assert!(of_kind(&repo, "told", None).is_empty());
    assert!(inbox_files(&repo).is_empty(), "{:?}", inbox_files(&repo));
    assert_eq!(outcome(&repo, "a"), "done");
}

/// A note read by a coder attempt that failed (a transient error, tried again after its backoff
/// on the run's clock) is read again by the attempt that replies, and only then taken as read.
#[test]
fn a_note_survives_an_attempt_that_failed() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let dir = repo.temp().display().to_string();
    let coder = format!(
        "if [ ! -e '{dir}/failed-once' ]; then\n\
           touch '{dir}/failed-once'\n\
           echo 'error: connection reset by peer' >&2\n\
           exit 1\n\
         fi\n\
         {WRITE}"
    );
    let agent = agent(&repo, ONE_TASK, &coder);
    let clock = TestClock::new(repo.temp(), "2030-01-01T09:00:00Z".parse().unwrap());
    let hold = repo.temp().join("hold-planner-a");
    hold_at(&hold);
    let mut run = Running::start_with(&repo, &run_args(&agent, &["--sandbox", "off"]), |c| {
        c.env("EPIC_TEST_CLOCK", repo.temp().join("clock"));
    });
    wait_until("a's planner runs", || {
        repo.temp().join("planning-a").exists()
    });
    repo.run(&["tell", "a", "use tabs"]).assert_code(0);
    wait_event(&repo, &mut run, "told", Some("a"));
    release(&hold);
    wait_event(&repo, &mut run, "turn_retried", Some("a"));
    // The backoff is timed on the run's clock: move it on until the attempt after it runs.
    wait_for("the coder is asked again", RUN_PATIENCE, || {
        clock.advance(Duration::from_mins(1));
        (prompts(&repo, "a").len() == 2).then_some(())
    });
    let ended = run.end();
    assert_eq!(ended.code, Some(0), "{ended}");
    let prompts = prompts(&repo, "a");
    for prompt in &prompts {
        assert!(prompt.contains("A note from them:\n> use tabs"), "{prompt}");
    }
    let read = of_kind(&repo, "notes_read", Some("a"));
    assert_eq!(read.len(), 1, "{read:?}");
    assert!(walk(&repo.epic("shop").inbox().join("held")).is_empty());
}

/// A stop that comes while the story's merge is gated on the epic branch (no turn of it is
/// going) undoes the merge: the story is stopped, the epic branch without its work, and no
/// command is left in the inbox for the next run.
#[test]
fn a_stop_during_the_merge_leaves_nothing_behind() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let agent = agent(&repo, ONE_TASK, WRITE);
    let dir = repo.temp().display().to_string();
    let wait = wait_on(&format!("'{dir}/hold-gate'"));
    let gate = format!(
        "case \"$PWD\" in *_epic) if [ \"$EPIC_STORY\" = a ]; then touch '{dir}/merging-a'; \
         {wait}; fi ;; esac; true"
    );
    hold_at(&repo.temp().join("hold-gate"));
    let mut args = run_args(&agent, &["--sandbox", "off"]);
    let at = args
        .iter()
        .position(|arg| *arg == "true")
        .expect("the gate");
    args[at] = &gate;
    let mut run = Running::start(&repo, &args);
    wait_until("a's merge is gated", || {
        repo.temp().join("merging-a").exists()
    });
    repo.run(&["stop", "a"]).assert_code(0);
    wait_for("the stop is taken", RUN_PATIENCE, || {
        let taken = !of_kind(&repo, "stopped", Some("a")).is_empty();
        assert!(run.going() || taken, "the run ended before the stop");
        taken.then_some(())
    });
    // The stop ends the gate that held a's lone merge: nothing waits at the pipe any more.
    std::fs::remove_file(repo.temp().join("hold-gate")).expect("remove the pipe");
    let ended = run.end();
    assert_eq!(ended.code, Some(1), "{ended}");
    let rolled_back = of_kind(&repo, "story_rolled_back", Some("a"));
    assert_eq!(rolled_back.len(), 1);
    assert!(
        ended
            .stderr
            .contains("merge undone: the run was interrupted, or the story stopped, before"),
        "{ended}"
    );
    assert_eq!(of_kind(&repo, "story_stopped", Some("a")).len(), 1);
    assert!(of_kind(&repo, "story_merged", Some("a")).is_empty());
    assert_eq!(outcome(&repo, "a"), "stopped");
    assert_eq!(state(&repo, "a")["hold"]["hold"], "stopped");
    assert!(
        repo.git_output(&["ls-tree", "-r", "--name-only", "epic/shop"])
            .lines()
            .all(|path| !path.starts_with("a/")),
        "the epic branch holds none of a's work"
    );
    assert!(inbox_files(&repo).is_empty(), "{:?}", inbox_files(&repo));
}

/// Stops `stopped` while its merge is proven in a batch with another story's: the batch is not
/// the stopped story's to cancel, whichever story's task drives it: every story merges, and the
/// stop is refused in the log and removed, not left in the inbox for the next run. The batch is
/// made by holding the gate of a first story's merge (`c`) until `b`, then `a`, wait to merge:
/// b, first in line for the merge lock, drives the batch of both.
fn stop_during_a_merge_batch(stopped: &str) {
    let repo = Repo::new();
    repo.write(
        "plan.json",
        file_plan(&[("c", &[], "gamma"), ("a", &[], "alpha"), ("b", &[], "beta")]),
    );
    let dir = repo.temp().display().to_string();
    // c codes at once; b is held until c's merge is gated, a until b waits to merge.
    let coder = format!(
        "case \"$EPIC_STORY\" in a|b) {} ;; esac\n{WRITE}",
        wait_on(&format!("'{dir}/hold-coder-'\"$EPIC_STORY\""))
    );
    let agent = agent(&repo, ONE_TASK, &coder);
    // The gate on the epic worktree: its n-th run leaves `gate-n` and, held at `hold-gate-n`,
    // waits to be released.
    let gate = format!(
        "case \"$PWD\" in *_epic) n=$(( $(cat '{dir}/gates' 2>/dev/null || echo 0) + 1 )); \
         echo $n > '{dir}/gates'; touch '{dir}/gate-'$n; {} ;; esac; true",
        wait_on(&format!("'{dir}/hold-gate-'$n"))
    );
    let mut args = run_args(
        &agent,
        &[
            "--sandbox",
            "off",
            "--concurrency",
            "3",
            "--merge-batch",
            "2",
        ],
    );
    let at = args
        .iter()
        .position(|arg| *arg == "true")
        .expect("the gate");
    args[at] = &gate;
    // The baseline runs the gate on the epic worktree first: c's merge is the second, a's and
    // b's together the third.
    for held in ["hold-gate-2", "hold-gate-3", "hold-coder-a", "hold-coder-b"] {
        hold_at(&repo.temp().join(held));
    }
    let mut run = Running::start(&repo, &args);
    wait_until("c's merge is gated", || repo.temp().join("gate-2").exists());
    release(&repo.temp().join("hold-coder-b"));
    wait_event(&repo, &mut run, "merge_queued", Some("b"));
    release(&repo.temp().join("hold-coder-a"));
    wait_event(&repo, &mut run, "merge_queued", Some("a"));
    release(&repo.temp().join("hold-gate-2"));
    wait_until("a's and b's merge is gated", || {
        repo.temp().join("gate-3").exists()
    });
    let batch = of_kind(&repo, "merge_batch", None);
    assert!(
        batch.iter().any(|batch| {
            let mut stories: Vec<&str> = batch["stories"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            stories.sort_unstable();
            stories == ["a", "b"]
        }),
        "a and b are proven together: {batch:?}"
    );
    repo.run(&["stop", stopped]).assert_code(0);
    wait_event(&repo, &mut run, "stopped", Some(stopped));
    release(&repo.temp().join("hold-gate-3"));
    let ended = run.end();
    assert_eq!(ended.code, Some(0), "{ended}");
    for story in ["a", "b", "c"] {
        assert_eq!(outcome(&repo, story), "done", "{story}");
    }
    assert_eq!(repo.git_output(&["show", "epic/shop:a/a.txt"]), "done\n");
    assert!(of_kind(&repo, "story_stopped", None).is_empty());
    let refused = of_kind(&repo, "command_refused", None);
    let stop = &of_kind(&repo, "stopped", Some(stopped))[0];
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(refused[0]["command"], stop["command"]);
    assert_eq!(
        refused[0]["reason"],
        format!("story `{stopped}` merged before the stop could end it: nothing to stop")
    );
    assert!(state(&repo, stopped).get("hold").is_none_or(Value::is_null));
    assert!(inbox_files(&repo).is_empty(), "{:?}", inbox_files(&repo));
}

#[test]
fn a_stop_too_late_for_a_merge_batch_is_refused() {
    stop_during_a_merge_batch("a");
}

/// The reproduced hole: the batch was cancelled by the token of the story whose task drove
/// it, so stopping that story undid the merge of every story in the batch, each ended as
/// "interrupted" and skipped though the run went on.
#[test]
fn stopping_the_story_that_drives_a_merge_batch_undoes_no_other_merge() {
    stop_during_a_merge_batch("b");
}
