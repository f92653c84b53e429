//! `epic status`: each story's state, the run holding the lock (if any) and the last report's
//! outcomes, read from real state directories written with state-store.

use epic_state_store::{EpicLock, StoryStage};
use insta::assert_snapshot;
use serde_json::json;

use crate::util::{Repo, checkout_report};

/// A repository where epic `checkout` has run: two stories with state, no report.
fn checkout() -> (Repo, epic_state_store::EpicDir) {
    let repo = Repo::new();
    let epic = repo.epic("checkout");
    repo.story(&epic, "cart-api", StoryStage::Merged);
    repo.story(&epic, "payments", StoryStage::Started);
    (repo, epic)
}

#[test]
fn no_epic_has_run() {
    let repo = Repo::new();
    let run = repo.run(&["status"]);
    run.assert_code(2);
    assert_snapshot!("none", run);
    let run = repo.run(&["status", "checkout"]);
    run.assert_code(2);
    assert!(
        run.stderr.starts_with("error: no epic `checkout` has run"),
        "{run}"
    );
}

#[test]
fn the_only_epic_without_a_run_going() {
    let (repo, _epic) = checkout();
    let run = repo.run(&["status"]);
    run.assert_code(0);
    assert_eq!(run.stdout, repo.run(&["status", "checkout"]).stdout);
    assert_snapshot!("one", run);
    assert_snapshot!("one_verbose", repo.run(&["status", "-v"]));

    let run = repo.run(&["status", "--format", "json"]);
    run.assert_code(0);
    assert_eq!(
        run.json(),
        json!({
            "epic_id": "checkout",
            "running": false,
            "holder": null,
            "stories": [
                {
                    "id": "cart-api",
                    "status": "merged",
                    "branch": "story/checkout/cart-api",
                    // Merged: its worktree was removed after the merge.
                    "worktree": null,
                    "outcome": null,
                    "reason": null
                },
                {
                    "id": "payments",
                    "status": "started",
                    "branch": "story/checkout/payments",
                    "worktree": "[REPO].worktrees/checkout/payments",
                    "outcome": null,
                    "reason": null
                }
            ],
            "report": null
        })
    );
}

#[test]
fn a_run_holding_the_lock() {
    let (repo, epic) = checkout();
    // This test process plays the run: it holds the epic's lock while `epic status` looks.
    let lock = EpicLock::acquire(&epic).unwrap();
    let holder = lock.holder_record().clone();
    let pid = holder.pid.to_string();
    let command = holder.command.join(" ");
    let redactions = [
        (pid.as_str(), "[PID]"),
        (holder.host.as_str(), "[HOST]"),
        (holder.started_at.as_str(), "[TIME]"),
        (command.as_str(), "[COMMAND]"),
    ];

    let run = repo.run(&["status"]).redact(&redactions);
    run.assert_code(0);
    assert_snapshot!("running", run);

    let run = repo.run(&["status", "--format", "json"]);
    run.assert_code(0);
    let status = run.json();
    assert_eq!(status["running"], true);
    assert_eq!(status["holder"]["pid"], holder.pid);
    assert_eq!(status["holder"]["host"], holder.host.as_str());
    assert_eq!(status["holder"]["started_at"], holder.started_at.as_str());
    assert_eq!(status["holder"]["command"], json!(holder.command));
    // Redacted in the document (the command line is a list of however many arguments).
    let mut redacted = status.clone();
    redacted["holder"] = json!({
        "pid": "[PID]",
        "host": "[HOST]",
        "started_at": "[TIME]",
        "command": ["[COMMAND]"],
    });
    assert_snapshot!(
        "running_json",
        serde_json::to_string_pretty(&redacted).unwrap()
    );

    drop(lock);
    let run = repo.run(&["status", "--format", "json"]);
    assert_eq!(run.json()["running"], false);
    assert_eq!(run.json()["holder"], json!(null));
}

#[test]
fn the_last_report_outcomes() {
    let (repo, epic) = checkout();
    repo.story(&epic, "payments", StoryStage::Failed);
    repo.report(&epic, &checkout_report(), true);
    let run = repo.run(&["status"]);
    run.assert_code(0);
    assert_snapshot!("with_report", run);

    let run = repo.run(&["status", "--format", "json"]);
    run.assert_code(0);
    let status = run.json();
    assert_eq!(
        status["report"],
        json!({"epic_branch": "epic/checkout", "done": 1, "failed": 1, "skipped": 1})
    );
    // Plan order from the report; the skipped story never had state.
    assert_eq!(
        status["stories"][2],
        json!({
            "id": "cart-ui",
            "status": null,
            "branch": null,
            "worktree": null,
            "outcome": "skipped",
            "reason": "depends on payments, which failed"
        })
    );
    assert_snapshot!("with_report_json", run);
}

#[test]
fn several_epics_are_listed() {
    let (repo, _checkout) = checkout();
    let search = repo.epic("search");
    repo.story(&search, "index", StoryStage::Started);
    let _lock = EpicLock::acquire(&search).unwrap();

    let run = repo.run(&["status"]);
    run.assert_code(0);
    assert_snapshot!("several", run);

    let run = repo.run(&["status", "--format", "json"]);
    run.assert_code(0);
    assert_eq!(
        run.json(),
        json!({"epics": [
            {"epic_id": "checkout", "running": false},
            {"epic_id": "search", "running": true}
        ]})
    );

    let run = repo.run(&["status", "search", "-q"]);
    run.assert_code(0);
    assert!(
        run.stdout.starts_with("epic search: running, pid "),
        "{run}"
    );

    let run = repo.run(&["status", "shipping"]);
    run.assert_code(2);
    assert_snapshot!("unknown_epic", run);
}

#[test]
fn an_epic_with_no_story_yet() {
    let repo = Repo::new();
    std::fs::create_dir_all(repo.epic("checkout").root()).unwrap();
    let run = repo.run(&["status"]);
    run.assert_code(0);
    assert_snapshot!("empty", run);
}

#[test]
fn a_corrupt_state_file_is_named() {
    let (repo, epic) = checkout();
    std::fs::write(epic.story_state("payments").unwrap(), "{\"version\":1,").unwrap();
    let run = repo.run(&["status"]);
    run.assert_code(2);
    assert_snapshot!("corrupt_state", run);
}

#[test]
fn another_directory_with_repo() {
    let (repo, _epic) = checkout();
    let elsewhere = crate::util::Dir::new();
    let root = repo.path().display().to_string();
    let run = elsewhere
        .run(&["status", "--repo", &root, "--format", "json"])
        .redact(&[(&root, "[REPO]")]);
    run.assert_code(0);
    assert_eq!(run.json()["epic_id"], "checkout");
}

#[test]
fn formats_status_cannot_print() {
    let (repo, _epic) = checkout();
    let run = repo.run(&["status", "--format", "md"]);
    run.assert_code(2);
    assert!(
        run.stderr
            .starts_with("error: `epic status` cannot print --format md\n"),
        "{run}"
    );
}

#[test]
fn with_the_plan_every_story_is_listed_in_plan_order() {
    let (repo, epic) = checkout();
    repo.write(
        "plan.json",
        r#"{"epic_id":"checkout","stories":[
            {"id":"receipts","title":"Receipts","owned":["src/receipts"],"depends_on":["payments"]},
            {"id":"payments","title":"Payments","owned":["src/payments"]},
            {"id":"cart-api","title":"Cart API","owned":["src/cart"]}]}"#,
    );
    let run = repo.run(&["status", "--plan", "plan.json", "--format", "json"]);
    run.assert_code(0);
    let status = run.json();
    let listed: Vec<(&str, &serde_json::Value)> = status["stories"]
        .as_array()
        .expect("stories")
        .iter()
        .map(|story| (story["id"].as_str().unwrap_or_default(), &story["status"]))
        .collect();
    assert_eq!(
        listed,
        [
            ("receipts", &json!(null)),
            ("payments", &json!("started")),
            ("cart-api", &json!("merged"))
        ],
        "{status}"
    );
    // Without the plan, only the stories with state.
    let run = repo.run(&["status", "--format", "json"]);
    assert_eq!(run.json()["stories"].as_array().map(Vec::len), Some(2));
    // The epic is the plan's, even before any run of it.
    let other = Repo::new();
    other.write(
        "plan.json",
        r#"{"epic_id":"fresh","stories":[{"id":"a","title":"A","owned":["a"]}]}"#,
    );
    let run = other.run(&["status", "--plan", "plan.json", "--format", "json"]);
    run.assert_code(0);
    assert_eq!(run.json()["stories"][0]["id"], "a");
    assert_eq!(run.json()["running"], false);
    drop(epic);
}

#[test]
fn what_each_agent_of_the_running_run_is_doing() {
    let (repo, epic) = checkout();
    // This test process plays the run: it holds the lock and wrote these events.
    let _lock = EpicLock::acquire(&epic).unwrap();
    let lines = [
        r#"{"at":"2026-12-01T09:00:00.000Z","kind":"turn_activity","story":"cart","role":"coder","turn":1,"tool":"Bash","doing":"running `make`"}"#,
        r#"{"at":"2026-12-01T10:00:00.000Z","kind":"run_started","epic":"checkout","epic_branch":"epic/checkout","stories":3,"concurrency":2,"epic_worktree":"/w"}"#,
        r#"{"at":"2026-12-01T10:00:01.000Z","kind":"turn_activity","story":"cart","role":"coder","turn":2,"tool":"Bash","doing":"running `cargo test`"}"#,
        r#"{"at":"2026-12-01T10:00:02.000Z","kind":"turn_activity","story":"payments","role":"coder","turn":2,"tool":"Edit","doing":"editing src/pay.rs"}"#,
        r#"{"at":"2026-12-01T10:00:03.000Z","kind":"turn_activity","story":"payments","role":"judge","turn":3,"tool":"Read","doing":"reading src/pay.rs"}"#,
        r#"{"at":"2026-12-01T10:00:04.000Z","kind":"turn_ended","story":"payments","role":"judge","turn":3,"ok":true,"estimated_tokens":10}"#,
        r#"{"at":"2026-12-01T10:00:05.000Z","kind":"turn_activity","story":"cart","role":"coder","turn":2,"tool":"Edit","doing":"editing src/cart.rs"}"#,
    ];
    std::fs::write(epic.events(), lines.join("\n") + "\n").unwrap();
    let run = repo.run(&["status"]);
    run.assert_code(0);
    // The last step of each turn still going; none of a turn that ended, or of an earlier run.
    assert!(
        run.stdout
            .contains("\nstory cart: coder editing src/cart.rs\n"),
        "{run}"
    );
    assert!(!run.stdout.contains("payments: judge"), "{run}");
    assert!(!run.stdout.contains("make"), "{run}");
    let status = repo.run(&["status", "--format", "json"]).json();
    assert_eq!(
        status["doing"],
        json!([{"story": "cart", "role": "coder", "doing": "editing src/cart.rs"}])
    );
}
