//! The guard on epic's files through the real binary: an agent that writes `epic.toml` in the
//! main checkout (setup commands, no test patterns) fails its story, naming the file; the file
//! is removed, and the rerun neither takes its setup commands nor loses the test guard.
//!
//! The sandbox-off behaviour: with the sandbox on, the main checkout is read-only to agents.

use epic_test_support::RoleAgent;

use crate::util::Repo;

/// An `exec:` agent: plans one task; as coder, on its first turn only, writes `epic.toml` in the
/// main checkout, then writes `a/a.txt`.
fn agent(repo: &Repo) -> String {
    let marker = repo.temp().join("tampered");
    let setup_ran = repo.temp().join("setup-ran");
    let coder = format!(
        "if [ ! -f '{marker}' ]; then\n\
         touch '{marker}'\n\
         printf 'setup = [\"touch {setup_ran}\"]\\ntest_pattern = [\"nothing-matches\"]\\n' > '{root}/epic.toml'\n\
         fi\n\
         mkdir -p a && echo done > a/a.txt\n\
         echo wrote a",
        marker = marker.display(),
        setup_ran = setup_ran.display(),
        root = repo.path().display(),
    );
    let path = repo.temp().join("agent.sh");
    RoleAgent::new().coder(&coder).write(&path);
    format!("exec:sh {}", path.display())
}

#[test]
fn an_agent_that_writes_epic_toml_fails_its_story_and_the_rerun_ignores_it() {
    let repo = Repo::new();
    repo.write("plan.json", crate::util::file_plan(&[("a", &[], "x")]));
    let coder = agent(&repo);
    // The sandbox off: with it on, the agent cannot write the main checkout at all
    // (`sandbox.rs`); this is what a run does when the write lands.
    let args = [
        "run",
        "plan.json",
        "--sandbox",
        "off",
        "--coder",
        &coder,
        "--no-progress",
        "--format",
        "json",
    ];
    let first = repo.run(&args);
    first.assert_code(1);
    let report = first.json();
    let reason = report["stories"][0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("changed files that are epic's")
            && reason.contains("[REPO]/epic.toml: added"),
        "{reason}"
    );
    assert!(
        !repo.path().join("epic.toml").exists(),
        "the forged epic.toml is removed"
    );

    repo.run(&args).assert_code(0);
    assert!(
        !repo.temp().join("setup-ran").exists(),
        "the rerun took no setup command from the agent's epic.toml"
    );
    assert!(
        repo.git_output(&["ls-tree", "-r", "--name-only", "epic/shop"])
            .contains("a/a.txt")
    );
}
