//! `epic plan`: scripted architects (shell scripts, `exec:`) that reply with garbage, with an
//! invalid plan, then with a valid one; the plan written runs end to end with `epic run` to a
//! merged epic branch. Exit codes: 0 written, 1 still invalid after the rounds, 2 bad usage or
//! an existing file.

use std::path::{Path, PathBuf};

use epic_story_plan::{PlanFormat, StoryPlan};

use crate::util::{Repo, file_plan};

/// A plan breaking two rules: `b` owns a path under `a`'s, and depends on a story not in it.
const INVALID: &str = r#"{"epic_id": "shop", "stories": [
  {"id": "a", "title": "A", "owned": ["a"]},
  {"id": "b", "title": "B", "owned": ["a/b"], "depends_on": ["zzz"]}
]}"#;

/// The valid plan the architect ends with: `a`, then `b`, each writing its file.
fn valid() -> String {
    file_plan(&[("a", &[], "alpha"), ("b", &["a"], "beta")])
}

/// An architect seat: a script that keeps each round's prompt (`prompt-N.txt`), environment
/// (`env-N.txt`) and working directory in the temporary directory, tries to write into its
/// working directory (the repository, which the sandbox keeps read-only), and replies in round
/// N with `replies[N-1]` (the last one for later rounds). Each reply is a file it `cat`s.
fn architect(repo: &Repo, replies: &[&str]) -> String {
    let dir = repo.temp().display().to_string();
    for (n, reply) in replies.iter().enumerate() {
        std::fs::write(repo.temp().join(format!("reply-{}.txt", n + 1)), reply)
            .expect("write a reply");
    }
    let last = replies.len();
    let script = format!(
        "d='{dir}'\n\
         n=$(cat \"$d/rounds\" 2>/dev/null || echo 0)\n\
         n=$((n + 1))\n\
         echo $n > \"$d/rounds\"\n\
         cat > \"$d/prompt-$n.txt\"\n\
         env | grep '^EPIC_' | sort > \"$d/env-$n.txt\"\n\
         pwd > \"$d/pwd\"\n\
         touch architect-was-here 2>/dev/null\n\
         r=$n; [ $r -gt {last} ] && r={last}\n\
         cat \"$d/reply-$r.txt\"\n"
    );
    let path = repo.temp().join("architect.sh");
    std::fs::write(&path, script).expect("write the architect");
    format!("exec:sh {}", path.display())
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|_| panic!("read {}", path.display()))
}

fn rounds(repo: &Repo) -> String {
    std::fs::read_to_string(repo.temp().join("rounds"))
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// The record directories `epic plan` made under `<git-dir>/epic-plans/`.
fn records(repo: &Repo) -> Vec<PathBuf> {
    let dir = repo.common_dir().join("epic-plans");
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.map(|entry| entry.expect("entry").path()).collect())
        .unwrap_or_default();
    found.sort();
    found
}

#[test]
fn garbage_then_an_invalid_plan_then_a_valid_one_is_written_and_runs_to_a_merged_epic() {
    let repo = Repo::new();
    let fenced = format!("Here is the plan.\n\n```json\n{}\n```\n", valid());
    let seat = architect(
        &repo,
        &["Sure! I will think about it first.", INVALID, &fenced],
    );
    let run = repo.run(&[
        "plan",
        "Greet in two files, alpha then beta.",
        "--architect",
        &seat,
    ]);
    run.assert_code(0);
    assert_eq!(rounds(&repo), "3");
    let stdout = &run.stdout;
    assert!(
        stdout.contains("wrote [REPO]/epic-plan.md (3 rounds"),
        "{stdout}"
    );
    assert!(stdout.contains("wave 1: a\nwave 2: b\n"), "{stdout}");
    assert!(stdout.contains("critical path: a -> b"), "{stdout}");
    assert!(
        stdout.contains("next: epic run [REPO]/epic-plan.md"),
        "{stdout}"
    );

    // Round 1 had the brief; round 2 why the garbage was no plan; round 3 every violation.
    let first = read(&repo.temp().join("prompt-1.txt"));
    assert!(first.contains("Greet in two files, alpha then beta."));
    assert!(first.contains("README.md\n"), "the tracked files: {first}");
    assert!(first.contains("# shop"), "the README's head");
    assert!(first.contains("\"$schema\""), "the plan's JSON Schema");
    let second = read(&repo.temp().join("prompt-2.txt"));
    assert!(second.contains("round 1 of 3"), "{second}");
    assert!(second.contains("It could not be read"), "{second}");
    let third = read(&repo.temp().join("prompt-3.txt"));
    assert!(third.contains("round 2 of 3"), "{third}");
    assert!(third.contains("`owned_overlap`"), "{third}");
    assert!(third.contains("(stories: a, b)"), "{third}");
    assert!(third.contains("(paths: a, a/b)"), "{third}");
    assert!(third.contains("`unknown_dependency`"), "{third}");
    assert!(third.contains("zzz"), "{third}");

    // The architect runs in the root, as the architect; the sandbox keeps the root read-only.
    let env = read(&repo.temp().join("env-1.txt"));
    assert!(env.contains("EPIC_ROLE=architect\n"), "{env}");
    assert_eq!(
        read(&repo.temp().join("pwd")).trim(),
        repo.path().display().to_string()
    );
    if !run.stderr.contains("without the sandbox") {
        assert!(
            !repo.path().join("architect-was-here").exists(),
            "the repository is read-only to the architect"
        );
    }

    // The plan is Markdown with its block, the epic text filled in.
    let written = repo.read("epic-plan.md");
    let plan = StoryPlan::parse(&written, PlanFormat::Markdown).expect("the plan parses");
    assert_eq!(plan.epic, "Greet in two files, alpha then beta.");
    assert_eq!(plan.stories.len(), 2);

    // Each turn a transcript, and the usage beside them.
    let [record] = records(&repo).try_into().expect("one record directory");
    for turn in [
        "0001-architect.md",
        "0002-architect.md",
        "0003-architect.md",
    ] {
        assert!(
            record.join(turn).is_file(),
            "{turn} in {}",
            record.display()
        );
    }
    let usage: serde_json::Value =
        serde_json::from_str(&read(&record.join("usage.json"))).expect("usage.json is JSON");
    assert_eq!(usage["version"], 1);
    assert_eq!(usage["data"]["rounds"], 3);
    assert_eq!(usage["data"]["valid"], true);
    assert_eq!(usage["data"]["seats"][0]["turns"], 3);
    // Not an epic.
    let status = repo.run(&["status"]);
    status.assert_code(2);

    // An existing plan is not overwritten: exit 2 before any turn.
    let again = repo.run(&["plan", "Something else.", "--architect", &seat]);
    again.assert_code(2);
    assert!(again.stderr.contains("already exists"), "{}", again.stderr);
    assert!(again.stderr.contains("--force"), "{}", again.stderr);
    assert_eq!(rounds(&repo), "3");
    assert_eq!(repo.read("epic-plan.md"), written);

    // The plan runs end to end with scripted coders.
    let run = repo.run(&[
        "run",
        "epic-plan.md",
        "--coder",
        "script",
        "--concurrency",
        "1",
        "--no-progress",
    ]);
    run.assert_code(0);
    assert_eq!(repo.git_output(&["show", "epic/shop:a/a.txt"]), "alpha\n");
    assert_eq!(repo.git_output(&["show", "epic/shop:b/b.txt"]), "beta\n");
    assert_eq!(
        repo.git_output(&["log", "--merges", "--format=%s", "epic/shop"]),
        "shop: merge story b\nshop: merge story a\n"
    );
}

#[test]
fn still_invalid_after_the_rounds_is_exit_1_with_the_violations_and_nothing_written() {
    let repo = Repo::new();
    let seat = architect(&repo, &[INVALID]);
    let run = repo.run(&["plan", "Greet.", "--architect", &seat, "--rounds", "2"]);
    run.assert_code(1);
    assert_eq!(rounds(&repo), "2");
    assert!(
        run.stdout.contains("error[owned_overlap]"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("error[unknown_dependency]"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr
            .contains("still invalid after 2 rounds; nothing was written"),
        "{}",
        run.stderr
    );
    assert!(!repo.path().join("epic-plan.md").exists());
    let [record] = records(&repo).try_into().expect("one record directory");
    let usage = read(&record.join("usage.json"));
    assert!(usage.contains("\"valid\": false"), "{usage}");

    // Garbage to the end: the reason it could not be read, in JSON too.
    let repo = Repo::new();
    let seat = architect(&repo, &["no plan today"]);
    let run = repo.run(&[
        "plan",
        "Greet.",
        "--architect",
        &seat,
        "--rounds",
        "1",
        "--format",
        "json",
    ]);
    run.assert_code(1);
    let json = run.json();
    assert_eq!(json["written"], serde_json::Value::Null);
    assert_eq!(json["rounds"], 1);
    assert!(
        json["unreadable"]
            .as_str()
            .is_some_and(|reason| reason.contains("no JSON")),
        "{json}"
    );
}

#[test]
fn the_brief_from_a_file_the_architect_from_epic_toml_and_the_format_from_the_extension() {
    let repo = Repo::new();
    let seat = architect(&repo, &[&valid()]);
    repo.write("epic.toml", format!("architect = \"{seat}\"\n"));
    std::fs::write(repo.temp().join("brief.md"), "Greet, at length.\n").expect("brief");
    let brief = repo.temp().join("brief.md").display().to_string();

    let run = repo.run(&["plan", "--from", &brief, "-o", "plans.json", "-q"]);
    run.assert_code(0);
    let json = StoryPlan::parse(&repo.read("plans.json"), PlanFormat::Json).expect("JSON");
    assert_eq!(json.epic, "Greet, at length.");
    assert!(read(&repo.temp().join("prompt-1.txt")).contains("Greet, at length."));

    let run = repo.run(&["plan", "Greet.", "-o", "plan.toml", "--format", "json"]);
    run.assert_code(0);
    assert_eq!(run.json()["critical_path"], serde_json::json!(["a", "b"]));
    let toml = StoryPlan::parse(&repo.read("plan.toml"), PlanFormat::Toml).expect("TOML");
    assert_eq!(toml.stories, json.stories);

    // --force overwrites.
    repo.write("plan.toml", "old");
    repo.run(&["plan", "Greet.", "-o", "plan.toml", "--force"])
        .assert_code(0);
    assert!(repo.read("plan.toml").contains("epic_id = \"shop\""));
}

#[test]
fn bad_usage_and_an_architect_that_cannot_run_are_exit_2() {
    let repo = Repo::new();
    let seat = architect(&repo, &[&valid()]);
    // No seat anywhere.
    let run = repo.run(&["plan", "Greet."]);
    run.assert_code(2);
    assert!(run.stderr.contains("no architect seat"), "{}", run.stderr);
    // An extension that is no plan format.
    let run = repo.run(&["plan", "Greet.", "--architect", &seat, "-o", "plan.txt"]);
    run.assert_code(2);
    assert!(run.stderr.contains(".md, .json or .toml"), "{}", run.stderr);
    // Both the text and a file; neither; a blank epic.
    repo.run(&["plan", "Greet.", "--from", "x.md", "--architect", &seat])
        .assert_code(2);
    repo.run(&["plan", "--architect", &seat]).assert_code(2);
    repo.run(&["plan", "  ", "--architect", &seat])
        .assert_code(2);
    // Zero rounds.
    repo.run(&["plan", "Greet.", "--architect", &seat, "--rounds", "0"])
        .assert_code(2);
    assert_eq!(rounds(&repo), "", "no turn was taken");
    // An architect that cannot run: exit 2, the turn's failure said, nothing written.
    let run = repo.run(&[
        "plan",
        "Greet.",
        "--architect",
        "exec:echo broken >&2; exit 3",
    ]);
    run.assert_code(2);
    assert!(
        run.stderr.contains("the architect's turn 1 failed") && run.stderr.contains("broken"),
        "{}",
        run.stderr
    );
    let run = repo.run(&["plan", "Greet.", "--architect", "script"]);
    run.assert_code(2);
    assert!(run.stderr.contains("runs no model"), "{}", run.stderr);
    assert!(!repo.path().join("epic-plan.md").exists());
    // The coder is the architect's default.
    repo.write("epic.toml", format!("coder = \"{seat}\"\n"));
    repo.run(&["plan", "Greet.", "-q"]).assert_code(0);
    assert_eq!(rounds(&repo), "1");
}

#[test]
fn an_architect_roster_goes_on_with_its_second_seat_when_the_first_is_at_its_limit() {
    let repo = Repo::new();
    let second = architect(&repo, &[&valid()]);
    let limited = repo.temp().join("limited.sh");
    std::fs::write(
        &limited,
        "cat > /dev/null\necho \"Claude AI usage limit reached|$(( $(date +%s) + 10800 ))\"\nexit 1\n",
    )
    .expect("write the limited architect");
    repo.write(
        "epic.toml",
        format!(
            "architect = [\"first\", \"second\"]\nmax_wait = \"1h\"\n\n[seats.first]\nseat = \"exec:sh {}\"\n\n[seats.second]\nseat = \"{second}\"\n",
            limited.display()
        ),
    );
    // The first seat's limit resets in 3 hours, past --max-wait: the second seat plans.
    let run = repo.run(&["plan", "Greet.", "-o", "plan.json"]);
    run.assert_code(0);
    assert_eq!(rounds(&repo), "1");
    assert!(StoryPlan::parse(&repo.read("plan.json"), PlanFormat::Json).is_ok());

    // With the first seat alone, the plan stops on its limit, past --max-wait: nothing written.
    repo.write(
        "epic.toml",
        format!(
            "architect = \"first\"\nmax_wait = \"1h\"\n\n[seats.first]\nseat = \"exec:sh {}\"\n",
            limited.display()
        ),
    );
    let run = repo.run(&["plan", "Greet.", "-o", "other.json"]);
    run.assert_code(130);
    assert!(run.stderr.contains("--max-wait 1h"), "{run}");
    assert!(!repo.path().join("other.json").exists());
}
