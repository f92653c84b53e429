//! `epic run`: real runs on real repositories in temporary directories, with the built-in script
//! seat or agents that are shell scripts (`exec:`), and docs/contract.md's exit codes.

use std::path::Path;
use std::process::{Child, Stdio};

use epic_state_store::EpicLock;
use insta::assert_snapshot;
use serde_json::json;

use crate::util::{PATIENCE, Repo, file_plan, poll, wait_until};

/// The options of a quick, deterministic run: the script seat, one story at a time, plain lines.
const QUICK: &[&str] = &[
    "--coder",
    "script",
    "--concurrency",
    "1",
    "--no-progress",
    "--gate",
    "test ! -e b/broken.txt",
];

fn run_args<'a>(plan: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["run", plan];
    args.extend_from_slice(QUICK);
    args.extend_from_slice(extra);
    args
}

#[test]
fn a_small_plan_runs_then_has_nothing_left_to_do() {
    let repo = Repo::new();
    repo.write(
        "plan.json",
        file_plan(&[
            ("a", &[], "alpha"),
            ("b", &["a"], "beta"),
            ("c", &[], "gamma"),
        ]),
    );
    let run = repo.run(&run_args("plan.json", &[])).masked();
    run.assert_code(0);
    assert_snapshot!("small_plan", run);
    // The epic branch has every story's work; the user's checkout is untouched.
    assert_eq!(repo.git_output(&["show", "epic/shop:b/b.txt"]), "beta\n");
    assert_eq!(
        repo.git_output(&["log", "--merges", "--format=%s", "epic/shop"]),
        "shop: merge story c\nshop: merge story b\nshop: merge story a\n"
    );
    assert!(!repo.path().join("a").exists());

    let rerun = repo.run(&run_args("plan.json", &[])).masked();
    rerun.assert_code(0);
    assert_snapshot!("small_plan_rerun", rerun);

    let status = repo.run(&["status", "--format", "json"]).json();
    assert_eq!(status["running"], false);
    assert_eq!(status["report"]["done"], 3);
}

#[test]
fn estimated_times_weigh_the_critical_path() {
    // Unweighted, b heads the longer chain (b -> c) and goes first; with a estimated at an hour
    // and b and c at a minute each, a's chain is the heavier one.
    let plan = |estimates: bool| {
        let mut plan: serde_json::Value = serde_json::from_str(&file_plan(&[
            ("a", &[], "alpha"),
            ("b", &[], "beta"),
            ("c", &["b"], "gamma"),
        ]))
        .expect("a plan");
        if estimates {
            for (story, time) in plan["stories"]
                .as_array_mut()
                .expect("stories")
                .iter_mut()
                .zip(["1h", "1m", "1m"])
            {
                story["estimated_time"] = json!(time);
            }
        }
        plan.to_string()
    };
    // Newest merge first.
    for (estimates, merges) in [(false, ["c", "a", "b"]), (true, ["c", "b", "a"])] {
        let repo = Repo::new();
        repo.write("plan.json", plan(estimates));
        repo.run(&run_args("plan.json", &[])).assert_code(0);
        let expected = merges
            .map(|id| format!("shop: merge story {id}\n"))
            .concat();
        assert_eq!(
            repo.git_output(&["log", "--merges", "--format=%s", "epic/shop"]),
            expected,
            "estimates: {estimates}"
        );
    }
}

#[test]
fn a_branch_in_the_way_of_the_branches_epic_creates_is_exit_2_before_any_story() {
    for (blocker, wanted) in [
        ("story", "the story branches `story/shop/<id>`"),
        ("story/shop", "the story branches `story/shop/<id>`"),
        ("story/shop/a/old", "the branch `story/shop/a` of story 'a'"),
        ("epic", "the epic branch `epic/shop`"),
        ("epic/shop/old", "the epic branch `epic/shop`"),
    ] {
        let repo = Repo::new();
        repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
        repo.git(&["branch", blocker]);
        let run = repo.run(&run_args("plan.json", &[]));
        run.assert_code(2);
        assert!(
            run.stderr.contains(&format!(
                "error: the branch `{blocker}` exists, so git cannot create {wanted}"
            )),
            "{run}"
        );
        assert!(
            run.stderr.contains(&format!(
                "`git branch -m {blocker} {}-old`",
                blocker.replace('/', "-")
            )),
            "{run}"
        );
        assert!(!run.stderr.contains("story a: started"), "{run}");
        // Renamed out of the way, the same run goes through.
        repo.git(&["branch", "-m", blocker, "old-blocker"]);
        repo.run(&run_args("plan.json", &[])).assert_code(0);
    }
}

#[test]
fn an_owned_path_under_a_symlink_on_the_base_is_exit_2_before_any_story() {
    let repo = Repo::new();
    // `lib` on main is a link to a directory outside the repository; story a owns `lib/a`.
    let outside = repo.temp().join("outside");
    std::fs::create_dir(&outside).expect("mkdir");
    std::os::unix::fs::symlink(&outside, repo.path().join("lib")).expect("symlink");
    repo.git(&["add", "lib"]);
    repo.git(&[
        "-c",
        "user.name=Test",
        "-c",
        "user.email=test@example.com",
        "commit",
        "--quiet",
        "-m",
        "lib is a link",
    ]);
    let plan = json!({
        "epic_id": "shop",
        "stories": [{
            "id": "a",
            "title": "Story a",
            "description": "Write the file.\n\n```file lib/a/a.txt\nalpha\n```\n",
            "owned": ["lib/a"],
        }],
    });
    repo.write("plan.json", plan.to_string());
    let run = repo.run(&run_args("plan.json", &[]));
    run.assert_code(2);
    assert!(
        run.stderr.contains(&format!(
            "story `a` owns `lib/a`, which lies under the symbolic link `lib` -> `{}`",
            outside.display()
        )),
        "{run}"
    );
    assert!(!run.stderr.contains("story a: started"), "{run}");
    assert_eq!(
        std::fs::read_dir(&outside).expect("read").count(),
        0,
        "nothing was written through the link"
    );
}

#[test]
fn a_failing_story_is_exit_1_and_its_dependent_is_skipped() {
    let repo = Repo::new();
    // b's file trips the gate: its task never turns green.
    let mut plan: serde_json::Value = serde_json::from_str(&file_plan(&[
        ("a", &[], "alpha"),
        ("b", &["a"], "beta"),
        ("d", &["b"], "delta"),
    ]))
    .unwrap();
    plan["stories"][1]["description"] =
        json!("Break the gate.\n\n```file b/broken.txt\nbroken\n```\n");
    repo.write("plan.json", plan.to_string());
    let run = repo
        .run(&run_args("plan.json", &["--max-rounds", "1"]))
        .masked();
    run.assert_code(1);
    assert_snapshot!("failing_story", run);

    let report = repo.run(&["report", "--format", "json"]);
    report.assert_code(0);
    let report = report.json();
    let statuses: Vec<&str> = report["stories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|story| story["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["done", "failed", "skipped"]);
    // Nothing of b reached the epic branch.
    assert!(
        !repo
            .git_output(&["ls-tree", "-r", "--name-only", "epic/shop"])
            .contains("broken")
    );
}

#[test]
fn a_bad_plan_is_exit_2_with_every_violation() {
    let repo = Repo::new();
    repo.write(
        "plan.json",
        file_plan(&[("a", &["b"], "x"), ("b", &["a"], "y"), ("c", &["zz"], "z")]),
    );
    let run = repo.run(&run_args("plan.json", &[]));
    run.assert_code(2);
    assert_snapshot!("bad_plan", run);
    // Nothing ran: no state, no epic branch.
    assert!(!repo.common_dir().join("epic").exists());
}

#[test]
fn the_coder_is_required() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "x")]));
    let run = repo.run(&["run", "plan.json"]);
    run.assert_code(2);
    assert!(run.stderr.contains("no coder seat"), "{run}");
}

#[test]
fn a_run_holding_the_lock_is_exit_3() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "x")]));
    let lock = EpicLock::acquire(&repo.epic("shop")).unwrap();
    let holder = lock.holder_record().clone();
    let pid = holder.pid.to_string();
    let command = holder.command.join(" ");
    let run = repo.run(&run_args("plan.json", &[])).redact(&[
        (pid.as_str(), "[PID]"),
        (holder.host.as_str(), "[HOST]"),
        (holder.started_at.as_str(), "[TIME]"),
        (command.as_str(), "[COMMAND]"),
    ]);
    run.assert_code(3);
    assert_snapshot!("locked", run);
    drop(lock);
    repo.run(&run_args("plan.json", &[])).assert_code(0);
}

#[test]
fn json_prints_the_report() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "x")]));
    let run = repo.run(&run_args("plan.json", &["--format", "json", "-q"]));
    run.assert_code(0);
    assert_eq!(run.json()["stories"][0]["status"], "done");
    assert_eq!(run.stderr, "", "-q prints no progress");
}

/// An agent that plans one task, then (as coder) waits for `release` to exist in `dir` before
/// writing its story's file, printing a line as it goes.
fn waiting_agent(repo: &Repo) -> String {
    let dir = repo.temp().display().to_string();
    let script = format!(
        "#!/bin/sh\n\
         cat > /dev/null\n\
         case \"$EPIC_ROLE\" in\n\
         planner) echo '{{\"tasks\":[{{\"title\":\"write it\",\"description\":\"the file\"}}]}}' ;;\n\
         coder)\n\
           echo \"working on $EPIC_STORY\"\n\
           n=0\n\
           while [ ! -e '{dir}/release' ] && [ $n -lt 1200 ]; do sleep 0.1; n=$((n + 1)); done\n\
           mkdir -p \"$EPIC_STORY\" && echo done > \"$EPIC_STORY/$EPIC_STORY.txt\"\n\
           echo \"wrote $EPIC_STORY\" ;;\n\
         *) echo '{{\"clean\":true,\"issues\":[]}}' ;;\n\
         esac\n"
    );
    let path = repo.temp().join("agent.sh");
    std::fs::write(&path, script).expect("write the agent");
    format!("exec:sh {}", path.display())
}

fn spawn(repo: &Repo, args: &[&str]) -> Child {
    repo.command(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn epic run")
}

/// Looks at `epic status --format json` until `ready` holds for it (at most [`PATIENCE`]).
fn wait_for_status(repo: &Repo, ready: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
    let mut last = None;
    poll(PATIENCE, || {
        let run = repo.run(&["status", "--format", "json"]);
        let status = (run.code == Some(0)).then(|| run.json());
        last = Some(run);
        status.filter(|status| ready(status))
    })
    .unwrap_or_else(|| panic!("status never got there: {}", last.expect("a look")))
}

fn release(repo: &Repo) {
    std::fs::write(repo.temp().join("release"), "").expect("write the release file");
}

fn finish(child: Child) -> (Option<i32>, String, String) {
    let output = child.wait_with_output().expect("wait for epic run");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn is_running(status: &serde_json::Value, story: &str) -> bool {
    status["running"] == true
        && status["stories"]
            .as_array()
            .is_some_and(|stories| stories.iter().any(|s| s["id"] == story))
}

#[test]
fn status_shows_a_run_in_progress() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "x")]));
    let agent = waiting_agent(&repo);
    let child = spawn(
        &repo,
        &["run", "plan.json", "--coder", &agent, "--no-progress", "-v"],
    );
    let status = wait_for_status(&repo, |status| is_running(status, "a"));
    assert_eq!(status["stories"][0]["status"], "started");
    assert_eq!(status["holder"]["pid"], child.id());
    let text = repo.run(&["status"]);
    assert!(text.stdout.starts_with("epic shop: running"), "{text}");
    release(&repo);
    let (code, _, stderr) = finish(child);
    assert_eq!(code, Some(0), "{stderr}");
    // -v streams the agent's output, prefixed by the story.
    assert!(stderr.contains("a | working on a"), "{stderr}");
    assert!(stderr.contains("a | wrote a"), "{stderr}");
    let status = repo.run(&["status", "--format", "json"]).json();
    assert_eq!(status["running"], false);
    assert_eq!(status["stories"][0]["status"], "merged");
}

#[test]
fn ctrl_c_is_exit_130_and_a_rerun_finishes() {
    let repo = Repo::new();
    repo.write(
        "plan.json",
        file_plan(&[("a", &[], "x"), ("b", &["a"], "y")]),
    );
    let agent = waiting_agent(&repo);
    let args = ["run", "plan.json", "--coder", &agent, "--no-progress"];
    let child = spawn(&repo, &args);
    wait_for_status(&repo, |status| is_running(status, "a"));
    // Let the agent's turn begin before interrupting it.
    wait_for_event(
        &repo.common_dir().join("epic/shop/events.jsonl"),
        "turn_started",
    );
    let pid = child.id().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    let (code, stdout, stderr) = finish(child);
    assert_eq!(code, Some(130), "{stdout}\n{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(
        stdout.contains("rerun `epic run plan.json` to resume"),
        "{stdout}"
    );
    // The state is kept and the lock released.
    let status = repo.run(&["status", "--format", "json"]).json();
    assert_eq!(status["running"], false);
    assert_eq!(status["stories"][0]["status"], "started");

    release(&repo);
    let rerun = repo.run(&args);
    rerun.assert_code(0);
    assert!(rerun.stderr.contains("story a: resumed"), "{rerun}");
    assert_eq!(repo.git_output(&["show", "epic/shop:b/b.txt"]), "done\n");
}

fn wait_for_event(log: &Path, kind: &str) {
    let needle = format!("\"kind\":\"{kind}\"");
    wait_until(&format!("a {kind} event"), || {
        std::fs::read_to_string(log).is_ok_and(|text| text.contains(&needle))
    });
}
