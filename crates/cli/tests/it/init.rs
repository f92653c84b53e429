//! `epic init`: a commented epic.toml that parses and an example plan that validates, never
//! overwriting either.

use insta::assert_snapshot;

use crate::util::{Dir, Repo};

#[test]
fn writes_a_config_and_a_plan() {
    let repo = Repo::new();
    let run = repo.run(&["init"]);
    run.assert_code(0);
    assert_snapshot!("written", run);
    assert_snapshot!("epic_toml", repo.read("epic.toml"));
    assert_snapshot!("epic_plan_md", repo.read("epic-plan.md"));

    // Everything is commented out: the defaults, and the coder still to choose.
    let config = repo.run(&["config", "--coder", "claude", "--format", "json"]);
    config.assert_code(0);
    assert_eq!(config.json()["config_file"], "[REPO]/epic.toml");
    assert!(
        config.json()["sources"]
            .as_object()
            .unwrap()
            .values()
            .all(|source| source == "default" || source == "flag"),
        "{config}"
    );

    let validate = repo.run(&["validate", "epic-plan.md"]);
    validate.assert_code(0);
    assert_eq!(
        validate.stdout,
        "epic-plan.md: valid — 3 stories in 2 waves\n"
    );
}

#[test]
fn every_option_line_parses_once_uncommented() {
    let repo = Repo::new();
    repo.run(&["init"]).assert_code(0);
    let uncommented: String = repo
        .read("epic.toml")
        .lines()
        .map(|line| match line.strip_prefix("# ") {
            Some(rest)
                if rest.starts_with('[')
                    || rest
                        .split_once(" = ")
                        .is_some_and(|(key, _)| !key.contains(' ')) =>
            {
                format!("{rest}\n")
            }
            _ => format!("{line}\n"),
        })
        .collect();
    repo.write("epic.toml", uncommented);
    let run = repo.run(&["config", "--format", "json"]);
    run.assert_code(0);
    let sources = run.json()["sources"].clone();
    assert!(
        sources
            .as_object()
            .unwrap()
            .values()
            .all(|source| source == "epic.toml"),
        "{run}"
    );
}

#[test]
fn refuses_to_overwrite() {
    let repo = Repo::new();
    repo.run(&["init"]).assert_code(0);
    let config = repo.read("epic.toml");
    repo.write("epic-plan.md", "my own plan\n");
    let run = repo.run(&["init"]);
    run.assert_code(2);
    assert_snapshot!("exists", run);
    assert_eq!(repo.read("epic.toml"), config);
    assert_eq!(repo.read("epic-plan.md"), "my own plan\n");
}

#[test]
fn writes_neither_file_when_one_exists() {
    let repo = Repo::new();
    repo.write("epic-plan.md", "my own plan\n");
    let run = repo.run(&["init"]);
    run.assert_code(2);
    assert!(
        run.stderr
            .starts_with("error: `epic-plan.md` already exists"),
        "{run}"
    );
    assert!(!repo.path().join("epic.toml").exists());
}

#[test]
fn writes_at_the_repository_root_from_a_subdirectory() {
    let repo = Repo::new();
    repo.run_in("src", &["init", "-q"]).assert_code(0);
    assert!(repo.path().join("epic.toml").is_file());
    assert!(repo.path().join("epic-plan.md").is_file());
    assert!(!repo.path().join("src/epic.toml").exists());
}

#[test]
fn not_a_repository() {
    let dir = Dir::new();
    let run = dir.run(&["init"]);
    run.assert_code(2);
    assert!(run.stderr.contains("is not in a git repository"), "{run}");
    assert!(!dir.path().join("epic.toml").exists());
}
