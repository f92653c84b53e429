//! Reliability through the real binary: an agent printing 200 MB, two runs of one epic and of
//! two epics at once, `epic clean` during a run, and plans whose ids and paths try to escape.
//! RELIABILITY.md lists what each shows.

use std::path::Path;
use std::process::{Child, Stdio};

use epic_test_support::RoleAgent;

use crate::util::{PATIENCE, RUN_PATIENCE, Repo, file_plan, poll, wait_for, wait_until};

/// Writes an `exec:` agent script to the repository's temporary directory: plans one task and,
/// as coder, runs `coder` (shell, in the story's worktree) then writes `<story>/<story>.txt`.
fn agent(repo: &Repo, name: &str, coder: &str) -> String {
    let path = repo.temp().join(name);
    RoleAgent::new()
        .coder(&format!(
            "{coder}\n\
             mkdir -p \"$EPIC_STORY\" && echo done > \"$EPIC_STORY/$EPIC_STORY.txt\"\n\
             echo \"wrote $EPIC_STORY\""
        ))
        .write(&path);
    format!("exec:sh {}", path.display())
}

fn spawn(repo: &Repo, args: &[&str]) -> Child {
    repo.command(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn epic")
}

fn finish(child: Child) -> (Option<i32>, String, String) {
    let output = child.wait_with_output().expect("wait for epic");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The peak resident set of `pid` so far, in kB (`VmHWM`), if it is still there.
fn peak_rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
}

#[test]
fn an_agent_printing_200_mb_leaves_memory_bounded_and_the_transcript_truncated() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "x")]));
    let loud = agent(
        &repo,
        "loud.sh",
        "yes 'all work and no play makes jack a dull boy, all work and no play' | head -c 200000000",
    );
    let mut child = spawn(
        &repo,
        &["run", "plan.json", "--coder", &loud, "--no-progress", "-q"],
    );
    let pid = child.id();
    let mut peak = 0;
    // Sampled at every look until the run ends.
    wait_for("the loud run ends", RUN_PATIENCE, || {
        if let Some(kb) = peak_rss_kb(pid) {
            peak = peak.max(kb);
        }
        child.try_wait().expect("poll")
    });
    let (code, stdout, stderr) = finish(child);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(peak > 0, "the epic process was sampled");
    // 200 MB went through; the process never held more than a small part of it.
    assert!(peak < 64 * 1024, "peak RSS {peak} kB");
    let transcripts = repo.common_dir().join("epic/shop/transcripts/a");
    let mut noted = false;
    for entry in std::fs::read_dir(&transcripts).expect("transcripts") {
        let path = entry.expect("entry").path();
        let size = std::fs::metadata(&path).expect("metadata").len();
        assert!(
            size <= 9 * 1024 * 1024,
            "{} is {size} bytes",
            path.display()
        );
        noted |= std::fs::read_to_string(&path).is_ok_and(|text| text.contains("were not stored"));
    }
    assert!(noted, "the coder's transcript says it was truncated");
    let events = std::fs::read(repo.common_dir().join("epic/shop/events.jsonl")).expect("events");
    assert!(
        events.len() < 8 * 1024 * 1024,
        "events.jsonl is {} bytes",
        events.len()
    );
}

/// An agent whose coder turn waits for `release` in the temporary directory (at most twice
/// [`PATIENCE`]).
fn waiting(repo: &Repo, name: &str) -> String {
    let release = repo.temp().join("release").display().to_string();
    agent(
        repo,
        name,
        &format!(
            "n=0; while [ ! -e '{release}' ] && [ $n -lt 1200 ]; do sleep 0.1; n=$((n+1)); done"
        ),
    )
}

/// Whether `log` holds an event `kind`.
fn logged(log: &Path, kind: &str) -> bool {
    let needle = format!("\"kind\":\"{kind}\"");
    std::fs::read_to_string(log).is_ok_and(|text| text.contains(&needle))
}

/// Whether event `kind` appears in `log` within [`PATIENCE`].
fn appears(log: &Path, kind: &str) -> bool {
    poll(PATIENCE, || logged(log, kind).then_some(())).is_some()
}

fn wait_for_event(log: &Path, kind: &str) {
    wait_until(&format!("a {kind} event"), || logged(log, kind));
}

#[test]
fn a_second_run_of_the_same_epic_is_exit_3_and_clean_refuses_while_it_runs() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "x")]));
    let coder = waiting(&repo, "wait.sh");
    // Fresh worktrees: the story's worktree is `shop.worktrees/shop/a`.
    let args = [
        "run",
        "plan.json",
        "--coder",
        &coder,
        "--no-progress",
        "--worktrees",
        "fresh",
    ];
    let first = spawn(&repo, &args);
    wait_for_event(
        &repo.common_dir().join("epic/shop/events.jsonl"),
        "turn_started",
    );
    let second = repo.run(&args);
    second.assert_code(3);
    assert!(
        second
            .stderr
            .contains("is already running: its lock is held by pid")
            && second.stderr.contains(&first.id().to_string()),
        "the holder is named: {second}"
    );
    let clean = repo.run(&["clean", "shop"]);
    clean.assert_code(3);
    assert!(
        repo.temp().join("shop.worktrees/shop/a").is_dir(),
        "nothing removed"
    );

    std::fs::write(repo.temp().join("release"), "").expect("release");
    let (code, stdout, stderr) = finish(first);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert_eq!(repo.git_output(&["show", "epic/shop:a/a.txt"]), "done\n");
    repo.run(&["clean", "shop"]).assert_code(0);
}

/// An agent runs as the user: it can delete the lock file of the run that started it. The epic
/// stays locked all the same: `epic status` says it runs, a second run is exit 3. When the turn
/// ends, the guard on epic's files puts the lock file back and fails the story, naming it; a
/// rerun with a well-behaved agent merges it.
#[test]
fn a_run_whose_lock_file_an_agent_deleted_still_holds_the_epic() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "x")]));
    let release = repo.temp().join("release").display().to_string();
    let coder = agent(
        &repo,
        "unlock.sh",
        &format!(
            "rm -f \"$(git rev-parse --git-common-dir)/epic/$EPIC_EPIC/lock\"; \
             n=0; while [ ! -e '{release}' ] && [ $n -lt 1200 ]; do sleep 0.1; n=$((n+1)); done"
        ),
    );
    // With the sandbox off: in it, the state directory is read-only and the lock file cannot be
    // deleted (executor `sandbox::sandboxed_writes_outside_the_own_worktree_fail_and_the_story_merges`).
    // This holds the lock when the deletion lands.
    let args = [
        "run",
        "plan.json",
        "--coder",
        &coder,
        "--no-progress",
        "--sandbox",
        "off",
    ];
    let first = spawn(&repo, &args);
    let lock = repo.common_dir().join("epic/shop/lock");
    wait_for_event(
        &repo.common_dir().join("epic/shop/events.jsonl"),
        "turn_started",
    );
    wait_until("the agent deletes the lock file", || !lock.exists());
    let status = repo.run(&["status", "shop"]);
    status.assert_code(0);
    assert!(
        status.stdout.contains("epic shop: running"),
        "the epic still runs: {status}"
    );
    repo.run(&args).assert_code(3);
    repo.run(&["clean", "shop"]).assert_code(3);

    std::fs::write(repo.temp().join("release"), "").expect("release");
    let (code, stdout, stderr) = finish(first);
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(&format!("{}: removed", lock.display())),
        "{stdout}\n{stderr}"
    );
    assert!(lock.exists(), "the guard put the lock file back");
    let good = agent(&repo, "good.sh", "true");
    repo.run(&["run", "plan.json", "--coder", &good, "--no-progress"])
        .assert_code(0);
    assert_eq!(repo.git_output(&["show", "epic/shop:a/a.txt"]), "done\n");
}

#[test]
fn two_epics_on_one_repository_run_side_by_side() {
    let repo = Repo::new();
    let plan = |epic: &str, ids: &[&str]| {
        let mut plan: serde_json::Value = serde_json::from_str(&file_plan(
            &ids.iter().map(|id| (*id, &[][..], *id)).collect::<Vec<_>>(),
        ))
        .expect("plan");
        plan["epic_id"] = serde_json::json!(epic);
        plan.to_string()
    };
    repo.write("one.json", plan("one", &["a", "b"]));
    repo.write("two.json", plan("two", &["c", "d"]));
    let coder = waiting(&repo, "wait.sh");
    let one = spawn(
        &repo,
        &["run", "one.json", "--coder", &coder, "--no-progress"],
    );
    let two = spawn(
        &repo,
        &["run", "two.json", "--coder", &coder, "--no-progress"],
    );
    // Both are inside a coder turn at once before either may finish.
    let both = [
        repo.common_dir().join("epic/one/events.jsonl"),
        repo.common_dir().join("epic/two/events.jsonl"),
    ];
    let started = both.iter().all(|log| appears(log, "turn_started"));
    std::fs::write(repo.temp().join("release"), "").expect("release");
    let ended = [finish(one), finish(two)];
    assert!(
        started,
        "both epics were in a coder turn at once: {ended:#?}"
    );
    for (code, stdout, stderr) in ended {
        assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    }
    let tree = |branch: &str| repo.git_output(&["ls-tree", "-r", "--name-only", branch]);
    assert_eq!(tree("epic/one"), "README.md\na/a.txt\nb/b.txt\n");
    assert_eq!(tree("epic/two"), "README.md\nc/c.txt\nd/d.txt\n");
    let merges = |branch: &str| {
        repo.git_output(&["log", "--first-parent", "--merges", "--format=%s", branch])
            .lines()
            .count()
    };
    assert_eq!((merges("epic/one"), merges("epic/two")), (2, 2));
}

/// Plans whose ids or paths try to leave the repository or their root.
fn hostile_plans() -> Vec<(&'static str, String)> {
    let story = |id: &str, owned: &str| {
        serde_json::json!({"epic_id": "e", "stories": [
            {"id": id, "title": "t", "owned": [owned]}
        ]})
        .to_string()
    };
    vec![
        ("dotdot", story("a", "../x")),
        ("absolute", story("a", "/etc/passwd")),
        ("git hooks", story("a", ".git/hooks/pre-commit")),
        ("inner dotdot", story("a", "a/../../b")),
        ("drive letter", story("a", "C:\\x")),
        ("nul in a path", story("a", "src/a\u{0}b")),
        ("nul in an id", story("a\u{0}b", "src/a")),
        ("10 kB id", story(&"a".repeat(10 * 1024), "src/a")),
        ("look-alike id", story("\u{0430}pi", "src/a")),
        ("path id", story("../../escape", "src/a")),
        ("slash id", story("a/b", "src/a")),
        ("the epic worktree's name", story("_epic", "src/a")),
        (
            "upper case, colliding on a case-blind disk",
            story("A", "src/a"),
        ),
        (
            "epic id escapes",
            serde_json::json!({"epic_id": "../../x", "stories": [
                {"id": "a", "title": "t", "owned": ["src/a"]}
            ]})
            .to_string(),
        ),
    ]
}

/// Every file under `dir`, relative, sorted (`.git` left out).
fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(&next).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.file_name().is_some_and(|name| name == ".git") {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path.strip_prefix(dir).expect("under").display().to_string());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn hostile_ids_and_paths_are_refused_by_validate_and_run_creating_nothing() {
    let repo = Repo::new();
    let before = files(repo.temp());
    for (name, plan) in hostile_plans() {
        repo.write("plan.json", &plan);
        let validate = repo.run(&["validate", "plan.json", "--format", "json"]);
        validate.assert_code(1);
        let json = validate.json();
        assert_eq!(json["valid"], false, "{name}");
        let kinds: Vec<&str> = json["violations"]
            .as_array()
            .expect("violations")
            .iter()
            .filter_map(|v| v["kind"].as_str())
            .collect();
        assert!(
            kinds
                .iter()
                .all(|kind| ["invalid_id", "unsafe_path"].contains(kind))
                && !kinds.is_empty(),
            "{name}: {kinds:?}"
        );
        let run = repo.run(&["run", "plan.json", "--coder", "script", "--no-progress"]);
        run.assert_code(2);
        assert!(
            run.stderr.contains("invalid") || run.stderr.contains("unsafe"),
            "{name}: {run}"
        );
    }
    std::fs::remove_file(repo.path().join("plan.json")).expect("remove the plan");
    assert_eq!(files(repo.temp()), before, "nothing was created");
    assert!(!repo.common_dir().join("epic").exists());
    assert_eq!(
        repo.git_output(&["branch", "--format=%(refname:short)"]),
        "main\n"
    );
}
