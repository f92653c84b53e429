//! `epic run` with agents that answer as real ones do: a `BLOCKED_ON` the plan (or a verifier)
//! refutes gets one pushback turn; a prose "already done" is completed or failed by `--noop`; a
//! story that changed nothing is done only when a judge shows, with evidence epic checks, that its
//! work is already there.

use std::path::Path;

use serde_json::json;

use epic_test_support::RoleAgent;

use crate::util::{Repo, file_plan};

/// An agent script in the temporary directory, as an `exec:` seat: it keeps each coder prompt
/// in `prompts.log` there, and runs `body` as a `case "$EPIC_ROLE"` arm list after `planner`
/// (one task per story, unless `planner` is in `body`).
fn agent(repo: &Repo, name: &str, body: &str) -> String {
    let dir = repo.temp().display().to_string();
    let path = repo.temp().join(name);
    RoleAgent::new()
        .prelude(&format!("prompt=$(cat)\nlog='{dir}/prompts.log'"))
        .arms(body)
        .write(&path);
    format!("exec:sh {}", path.display())
}

fn run(repo: &Repo, coder: &str, extra: &[&str]) -> crate::util::Run {
    let mut args = vec![
        "run",
        "plan.json",
        "--coder",
        coder,
        "--concurrency",
        "1",
        "--no-progress",
        "--sandbox",
        "off",
        // The replies tested are the planner's too.
        "--planner",
        "always",
    ];
    args.extend_from_slice(extra);
    repo.run(&args)
}

/// The events of the run, as JSON values.
fn events(repo: &Repo) -> Vec<serde_json::Value> {
    let path = repo.common_dir().join("epic/shop/events.jsonl");
    std::fs::read_to_string(path)
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

fn prompts(repo: &Repo) -> String {
    std::fs::read_to_string(repo.temp().join("prompts.log")).unwrap_or_default()
}

fn report(repo: &Repo) -> serde_json::Value {
    let report = repo.run(&["report", "--format", "json"]);
    report.assert_code(0);
    report.json()
}

/// A coder that claims `BLOCKED_ON: <need>` in story `story` until its prompt holds
/// `That claim was checked`, and else writes `<story>/<story>.txt`.
fn claiming(repo: &Repo, story: &str, need: &str) -> String {
    agent(
        repo,
        "coder.sh",
        &format!(
            "coder)\n\
               printf '%s\\n=====\\n' \"$prompt\" >> \"$log\"\n\
               if [ \"$EPIC_STORY\" = {story} ] && ! printf '%s' \"$prompt\" | grep -q 'That claim was checked'; then\n\
                 printf 'I cannot go on.\\n\\nBLOCKED_ON: {need}\\n'\n\
               else mkdir -p \"$EPIC_STORY\" && echo done > \"$EPIC_STORY/$EPIC_STORY.txt\" && echo wrote; fi ;;"
        ),
    )
}

#[test]
fn a_coder_blocked_on_its_own_path_is_pushed_back_and_its_story_ends_done() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let coder = claiming(&repo, "a", "a/a.txt, which another story should write");
    run(&repo, &coder, &[]).assert_code(0);
    let events = events(&repo);
    let rejected = of_kind(&events, "blocked_rejected");
    assert_eq!(rejected.len(), 1, "{events:?}");
    assert_eq!(rejected[0]["by"], "plan");
    assert!(
        rejected[0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("`a/a.txt` is under your own owned paths (a)")
    );
    assert_eq!(repo.git_output(&["show", "epic/shop:a/a.txt"]), "done\n");
}

#[test]
fn a_claim_on_a_merged_dependency_is_told_what_it_provides() {
    let repo = Repo::new();
    let mut plan: serde_json::Value =
        serde_json::from_str(&file_plan(&[("a", &[], "alpha"), ("b", &["a"], "beta")])).unwrap();
    plan["stories"][0]["provides"] = json!(["the alpha file a/a.txt"]);
    repo.write("plan.json", plan.to_string());
    let coder = claiming(&repo, "b", "a/a.txt from story a");
    run(&repo, &coder, &[]).assert_code(0);
    let prompts = prompts(&repo);
    assert!(
        prompts.contains(
            "`a/a.txt` belongs to story 'a' (\"Story a\"), a dependency of this story: it was \
             merged into the epic branch before you started"
        ) && prompts.contains("That story provides: the alpha file a/a.txt."),
        "{prompts}"
    );
    let report = report(&repo);
    let statuses: Vec<&str> = report["stories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|story| story["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["done", "done"]);
}

#[test]
fn an_unsettled_claim_the_verifier_answers_not_blocked_gets_a_pushback() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let coder = claiming(&repo, "a", "the payments SDK");
    let verifier = agent(
        &repo,
        "verifier.sh",
        "verifier) echo '{\"blocked\": false, \"reason\": \"No SDK is needed: write the file.\"}' ;;",
    );
    run(&repo, &coder, &["--verifier", &verifier]).assert_code(0);
    let events = events(&repo);
    let rejected = of_kind(&events, "blocked_rejected");
    assert_eq!(rejected.len(), 1, "{events:?}");
    assert_eq!(rejected[0]["by"], "verifier");
    assert_eq!(rejected[0]["reason"], "No SDK is needed: write the file.");
    assert!(prompts(&repo).contains(
        "That claim was checked by a verifier, who found that what you need is not missing:\nNo \
         SDK is needed: write the file."
    ));

    // Without the verifier the same claim fails the story as a missing dependency.
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let coder = claiming(&repo, "a", "the payments SDK");
    run(&repo, &coder, &[]).assert_code(1);
    let reason = report(&repo)["stories"][0]["reason"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        reason.contains("is blocked on unplanned work: the payments SDK"),
        "{reason}"
    );
}

/// A coder that plans two tasks: `write it` writes `<story>/<story>.txt`, `check it` changes
/// nothing and answers in prose, even when asked for `TASK_ALREADY_SATISFIED`.
fn prose_coder(repo: &Repo) -> String {
    agent(
        repo,
        "coder.sh",
        "planner) echo '{\"tasks\":[{\"title\":\"write it\",\"description\":\"the file\"},{\"title\":\"check it\",\"description\":\"nothing\"}]}' ;;\n\
         coder)\n\
           if [ \"$EPIC_TASK\" = 'write it' ]; then mkdir -p \"$EPIC_STORY\" && echo done > \"$EPIC_STORY/$EPIC_STORY.txt\"; echo wrote\n\
           else echo 'This is already done: the file is there.'; fi ;;",
    )
}

#[test]
fn a_prose_already_done_with_green_gates_completes_with_a_warning_or_fails_under_noop_fail() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let coder = prose_coder(&repo);
    let run_complete = run(&repo, &coder, &["--gate", "true"]);
    run_complete.assert_code(0);
    let events = events(&repo);
    let warned = of_kind(&events, "task_noop_unconfirmed");
    assert_eq!(warned.len(), 1, "{events:?}");
    assert_eq!(warned[0]["task"], "check it");
    assert_eq!(repo.git_output(&["show", "epic/shop:a/a.txt"]), "done\n");

    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let coder = prose_coder(&repo);
    run(&repo, &coder, &["--gate", "true", "--noop", "fail"]).assert_code(1);
    let reason = report(&repo)["stories"][0]["reason"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        reason.contains(
            "task \"check it\" produced no changes and the coder did not confirm it was already \
             satisfied"
        ),
        "{reason}"
    );
}

/// A coder that changes nothing and says so in prose; as judge, it logs its prompt and answers
/// `verdict`.
fn idle_with_judge(repo: &Repo, verdict: &str) -> String {
    agent(
        repo,
        "coder.sh",
        &format!(
            "coder) echo 'Nothing to do: it is all there already.' ;;\n\
             judge) printf '%s\\n' \"$prompt\" >> \"$log\"; echo '{verdict}' ;;"
        ),
    )
}

/// Commits `path` with `text` on `main`, before any run.
fn commit_on_main(repo: &Repo, path: &str, text: &str) {
    repo.write(path, text);
    repo.git(&["add", path]);
    repo.git(&[
        "-c",
        "user.name=Test",
        "-c",
        "user.email=test@example.com",
        "-c",
        "commit.gpgsign=false",
        "commit",
        "--quiet",
        "-m",
        "already there",
    ]);
}

#[test]
fn a_story_that_changed_nothing_fails_without_a_judge_or_on_a_bare_confirmation() {
    // Without a judge: it fails.
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let coder = idle_with_judge(&repo, r#"{"clean":true,"issues":[]}"#);
    run(&repo, &coder, &[]).assert_code(1);
    let reason = report(&repo)["stories"][0]["reason"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        reason.starts_with(
            "nothing was changed and no judge confirmed the work is already on the epic branch"
        ),
        "{reason}"
    );

    // A coder that commits its work and throws it away, and a judge that clears everything
    // with a bare "clean": no evidence, the story fails and its dependent never starts.
    let repo = Repo::new();
    repo.write(
        "plan.json",
        file_plan(&[("a", &[], "alpha"), ("b", &["a"], "beta")]),
    );
    let coder = agent(
        &repo,
        "coder.sh",
        "coder) mkdir -p \"$EPIC_STORY\" && echo done > \"$EPIC_STORY/$EPIC_STORY.txt\" && \
         git add -A && git -c user.name=T -c user.email=t@example.com commit -q -m work && \
         git reset -q --hard HEAD~1; echo 'Done.' ;;",
    );
    let failed = run(&repo, &coder, &["--judge", &coder]);
    failed.assert_code(1);
    let report_json = report(&repo);
    let a = &report_json["stories"][0];
    assert_eq!(a["status"], "failed");
    let reason = a["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(
            "the judge confirmed the story's work is already on the epic branch, but its \
             confirmation did not hold"
        ) && reason.contains("- the confirmation names no evidence"),
        "{reason}"
    );
    assert!(a.get("in_place").is_none());
    assert_eq!(report_json["stories"][1]["status"], "skipped");
    assert!(!epic_has(&repo, "a/a.txt"));
    assert!(
        of_kind(&events(&repo), "story_started")
            .iter()
            .all(|event| event["story"] != "b")
    );
    assert!(
        failed.stdout.contains("confirmation did not hold"),
        "{failed}"
    );
}

#[test]
fn a_story_whose_work_is_already_there_is_done_in_place_only_on_evidence() {
    // The work on main, and a judge that names it: done, already in place, with its evidence.
    let repo = Repo::new();
    commit_on_main(&repo, "a/a.txt", "alpha\n");
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let coder = idle_with_judge(
        &repo,
        r#"{"clean":true,"issues":[],"evidence":[{"path":"a/a.txt"}]}"#,
    );
    let done = run(&repo, &coder, &["--judge", &coder]);
    done.assert_code(0);
    assert!(
        done.stdout.contains(
            "already in place (done, nothing merged: the judge showed the work on the epic \
             branch, and epic checked the evidence):\n  a: a/a.txt\n"
        ),
        "{done}"
    );
    assert!(
        done.stderr
            .contains("story a: already in place, nothing merged (evidence: a/a.txt)"),
        "{done}"
    );
    let story = &report(&repo)["stories"][0];
    assert_eq!(story["status"], "done");
    assert_eq!(
        story["judge"],
        "judge confirmed the work is already on the epic branch, with evidence epic checked \
         (round 1): nothing to merge"
    );
    assert_eq!(story["in_place"]["evidence"], json!([{"path": "a/a.txt"}]));
    let main = repo.git_output(&["rev-parse", "main"]);
    assert_eq!(story["in_place"]["commit"], main.trim());
    assert!(prompts(&repo).contains("The story's branch has no changes against the epic branch"));
    let markdown = repo.run(&["report", "--format", "md"]);
    markdown.assert_code(0);
    assert!(
        markdown
            .stdout
            .contains("already in place (evidence: a/a.txt)")
            && markdown.stdout.contains("## Already in place"),
        "{markdown}"
    );
    let status = repo.run(&["status", "shop", "--format", "json"]);
    status.assert_code(0);
    assert_eq!(
        status.json()["stories"][0]["in_place"]["evidence"],
        json!([{"path": "a/a.txt"}])
    );
    let status = repo.run(&["status", "shop"]);
    status.assert_code(0);
    assert!(
        status.stdout.contains("done (in place)")
            && status.stdout.contains("already in place (nothing merged; evidence checked on the epic branch):\na: a/a.txt"),
        "{status}"
    );

    // A judge that does not confirm: its issues are the reason.
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let coder = idle_with_judge(
        &repo,
        r#"{"clean":false,"issues":[{"severity":"major","title":"a/a.txt is missing","description":"write it"}]}"#,
    );
    run(&repo, &coder, &["--judge", &coder, "--judge-rounds", "1"]).assert_code(1);
    let reason = report(&repo)["stories"][0]["reason"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(reason.contains("a/a.txt is missing"), "{reason}");
}

fn epic_has(repo: &Repo, path: &str) -> bool {
    repo.git_output(&["ls-tree", "-r", "--name-only", "epic/shop"])
        .lines()
        .any(|line| Path::new(line) == Path::new(path))
}
