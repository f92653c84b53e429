//! `--rules FILE` and `--board-hook CMD` through the real binary: the house rules' text reaches
//! the prompt of every agent (a scripted one that keeps what it was asked), a rules file that
//! is not there stops the run before it starts (exit 2, naming it), and the board hook gets
//! every move of every story as JSON on its standard input.

use crate::util::{Repo, file_plan};

/// An `exec:` agent that keeps each prompt it is given in `<temp>/prompt-<role>.txt`: plans one
/// task, writes `a/a.txt` as coder, clears everything as judge or reviewer.
fn recording_agent(repo: &Repo) -> String {
    let script = format!(
        "#!/bin/sh\n\
         cat > '{dir}/prompt-'\"$EPIC_ROLE\"'.txt'\n\
         case \"$EPIC_ROLE\" in\n\
         planner) echo '{{\"tasks\":[{{\"title\":\"write it\",\"description\":\"the file\"}}]}}' ;;\n\
         coder) mkdir -p a && echo done > a/a.txt && echo wrote a ;;\n\
         *) echo '{{\"clean\":true,\"issues\":[]}}' ;;\n\
         esac\n",
        dir = repo.temp().display(),
    );
    let path = repo.temp().join("agent.sh");
    std::fs::write(&path, script).expect("write the agent");
    format!("exec:sh {}", path.display())
}

#[test]
fn house_rules_reach_every_agents_prompt() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "x")]));
    repo.write(
        "CONTRIBUTING.md",
        "# Contributing\n\nName every variable in Esperanto.\n",
    );
    repo.write("docs/STYLE.md", "Indent with three spaces.\n");
    let agent = recording_agent(&repo);
    let run = repo.run(&[
        "run",
        "plan.json",
        "--planner",
        "always",
        "--sandbox",
        "off",
        "--coder",
        &agent,
        "--judge",
        &agent,
        "--reviewer",
        &agent,
        "--rules",
        "CONTRIBUTING.md",
        "--rules",
        "docs/STYLE.md",
        "--no-progress",
    ]);
    run.assert_code(0);
    for role in ["planner", "coder", "reviewer", "judge"] {
        let prompt = std::fs::read_to_string(repo.temp().join(format!("prompt-{role}.txt")))
            .unwrap_or_else(|error| panic!("the {role} ran: {error}"));
        assert!(
            prompt.contains("# House rules")
                && prompt.contains("## CONTRIBUTING.md")
                && prompt.contains("Name every variable in Esperanto.")
                && prompt.contains("## docs/STYLE.md")
                && prompt.contains("Indent with three spaces."),
            "the {role}'s prompt carries the house rules:\n{prompt}"
        );
    }
}

#[test]
fn house_rules_from_epic_toml_and_a_missing_file_stops_the_run() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "x")]));
    repo.write("epic.toml", "rules = [\"RULES.md\"]\n");
    let agent = recording_agent(&repo);
    let args = [
        "run",
        "plan.json",
        "--sandbox",
        "off",
        "--coder",
        &agent,
        "--no-progress",
    ];
    let missing = repo.run(&args);
    missing.assert_code(2);
    assert!(
        missing
            .stderr
            .contains("failed to read rules file `[REPO]/RULES.md`"),
        "{}",
        missing.stderr
    );
    assert!(
        !repo.temp().join("prompt-planner.txt").exists(),
        "nothing ran"
    );

    repo.write("RULES.md", "Never use unsafe.\n");
    repo.run(&args).assert_code(0);
    let prompt =
        std::fs::read_to_string(repo.temp().join("prompt-coder.txt")).expect("the coder ran");
    assert!(
        prompt.contains("## RULES.md") && prompt.contains("Never use unsafe."),
        "{prompt}"
    );
}

#[test]
fn the_board_hook_gets_every_move_as_json() {
    let repo = Repo::new();
    repo.write(
        "plan.json",
        file_plan(&[("a", &[], "alpha"), ("b", &["a"], "beta")]),
    );
    let moves = repo.temp().join("moves.jsonl");
    let hook = format!(
        "{{ cat; printf ' %s\\n' \"$EPIC_BOARD_STATUS\"; }} >> '{}'",
        moves.display()
    );
    repo.run(&[
        "run",
        "plan.json",
        "--coder",
        "script",
        "--concurrency",
        "1",
        "--board-hook",
        &hook,
        "--no-progress",
    ])
    .assert_code(0);
    let text = std::fs::read_to_string(&moves).expect("the hook ran");
    let moves: Vec<(serde_json::Value, String)> = text
        .lines()
        .map(|line| {
            let (json, status) = line.rsplit_once(' ').expect("a card and its status");
            (
                serde_json::from_str(json).expect("a card is JSON"),
                status.to_owned(),
            )
        })
        .collect();
    let of = |story: &str| -> Vec<&str> {
        moves
            .iter()
            .filter(|(card, _)| card["story"] == story)
            .map(|(card, status)| {
                assert_eq!(
                    card["status"],
                    status.as_str(),
                    "EPIC_BOARD_STATUS is the card's"
                );
                assert_eq!(card["epic"], "shop");
                status.as_str()
            })
            .collect()
    };
    assert_eq!(of("a"), ["planned", "active", "done"], "{text}");
    assert_eq!(of("b"), ["planned", "active", "done"], "{text}");
    let done = moves
        .iter()
        .find(|(card, status)| card["story"] == "b" && status == "done")
        .expect("b done");
    assert_eq!(done.0["title"], "Story b");
    assert_eq!(done.0["wave"], 2, "waves count from 1");
    assert_eq!(done.0["branch"], "story/shop/b");
}
