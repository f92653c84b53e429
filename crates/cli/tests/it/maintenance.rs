//! Git's own maintenance and epic (issue: a repository past git's gc threshold failed a good
//! story, its turn blamed for the `info/refs` a background `git gc` wrote):
//!
//! - on a repository past its `gc.auto` threshold, warm and fresh, with the sandbox on and off,
//!   agents and gates that commit and read git's configuration see automatic maintenance off,
//!   every story merges, and epic packs the loose objects once, at the end of the run;
//! - an agent whose turn runs a whole `git gc` (what a background gc the user's own git started
//!   does while a turn runs: repack, `info/refs`, packed refs) is not blamed for it: its story
//!   merges and the epic verifies.

use epic_test_support::RoleAgent;

use crate::util::{Repo, file_plan};

/// The repository's own threshold in these tests (`gc.auto`): far lower than git's 6,700, so a
/// small repository is past it.
const THRESHOLD: u64 = 256;

/// The files of the base commit: their blobs put more than `THRESHOLD / 256` loose objects in
/// `objects/17/`, which is what `git gc --auto` counts to estimate the loose objects.
const BASE_FILES: u64 = 600;

/// An `exec:` agent: plans one task; as coder, writes its story's file with the `gc.auto` its
/// own git sees, commits it itself (`git commit`, which runs `gc --auto` past the threshold
/// unless maintenance is off), and, where `gc` is set, runs a whole `git gc` in the repository
/// first; as judge, clears.
fn agent(repo: &Repo, gc: bool) -> String {
    let coder = format!(
        "{gc}\
         mkdir -p \"$EPIC_STORY\"\n\
         echo \"gc.auto=$(git config --get gc.auto)\" > \"$EPIC_STORY/$EPIC_STORY.txt\"\n\
         git add -A && git -c user.name=Agent -c user.email=agent@example.com commit -q -m work\n\
         echo wrote it",
        gc = if gc { "git gc --quiet || exit 1\n" } else { "" },
    );
    let path = repo
        .temp()
        .join(if gc { "gc-agent.sh" } else { "agent.sh" });
    RoleAgent::new().coder(&coder).write(&path);
    format!("exec:sh {}", path.display())
}

/// The loose objects of `repo` (`git count-objects -v`).
fn loose(repo: &Repo) -> u64 {
    repo.git_output(&["count-objects", "-v"])
        .lines()
        .find_map(|line| line.strip_prefix("count: "))
        .and_then(|count| count.trim().parse().ok())
        .expect("count-objects prints the loose objects")
}

/// A repository configured with a low `gc.auto` (gc in the foreground, so that a gc set off
/// during a turn would run inside it), holding more loose objects than that.
fn past_threshold() -> Repo {
    let repo = Repo::new();
    repo.git(&["config", "gc.auto", &THRESHOLD.to_string()]);
    repo.git(&["config", "gc.autoDetach", "false"]);
    repo.git(&["config", "maintenance.autoDetach", "false"]);
    for n in 0..BASE_FILES {
        repo.write(&format!("base/{n}.txt"), format!("{n}\n"));
    }
    repo.git(&["add", "base"]);
    repo.git(&[
        "-c",
        "gc.auto=0",
        "-c",
        "user.name=Test",
        "-c",
        "user.email=test@example.com",
        "commit",
        "--quiet",
        "-m",
        "base",
    ]);
    let sampled = std::fs::read_dir(repo.common_dir().join("objects/17"))
        .expect("objects/17")
        .count();
    assert!(
        sampled as u64 > THRESHOLD.div_ceil(256),
        "the repository is past its threshold as git estimates it"
    );
    repo
}

#[test]
fn past_gcs_threshold_every_story_merges_and_the_run_packs_once_at_its_end() {
    for (worktrees, sandbox) in [("warm", "auto"), ("fresh", "auto"), ("fresh", "off")] {
        let repo = past_threshold();
        repo.write(
            "plan.json",
            file_plan(&[("a", &[], "A"), ("b", &[], "B"), ("c", &["a"], "C")]),
        );
        let coder = agent(&repo, false);
        let run = repo.run(&[
            "run",
            "plan.json",
            "--coder",
            &coder,
            "--gate",
            "test \"$(git config --get gc.auto)\" = 0",
            "--worktrees",
            worktrees,
            "--sandbox",
            sandbox,
            "--concurrency",
            "2",
            "--no-progress",
            "--format",
            "json",
        ]);
        run.assert_code(0);
        for story in ["a", "b", "c"] {
            assert_eq!(
                repo.git_output(&["show", &format!("epic/shop:{story}/{story}.txt")]),
                "gc.auto=0\n",
                "{worktrees}, sandbox {sandbox}: the agent's git runs with maintenance off"
            );
        }
        assert!(
            loose(&repo) < THRESHOLD,
            "{worktrees}, sandbox {sandbox}: the run packed the loose objects at its end \
             ({} left)",
            loose(&repo)
        );
        let events = std::fs::read_to_string(repo.common_dir().join("epic/shop/events.jsonl"))
            .expect("the event log");
        assert!(
            events.contains("git's automatic maintenance packed the repository"),
            "{events}"
        );
        repo.run(&["verify", "shop"]).assert_code(0);
        repo.git(&["fsck", "--no-progress"]);
    }
}

#[test]
fn a_gc_while_a_turn_runs_is_not_blamed_on_the_turn() {
    let repo = past_threshold();
    repo.write(
        "plan.json",
        file_plan(&[("a", &[], "A"), ("b", &["a"], "B")]),
    );
    let coder = agent(&repo, true);
    // The sandbox off: in it the repository's `info/` and `packed-refs` are read-only, and
    // the gc fails; this is what a gc outside any sandbox (the user's own, in the background)
    // does to the files the guard watches.
    let run = repo.run(&[
        "run",
        "plan.json",
        "--coder",
        &coder,
        "--sandbox",
        "off",
        "--no-progress",
        "--format",
        "json",
    ]);
    run.assert_code(0);
    assert!(
        repo.common_dir().join("info/refs").exists(),
        "the agent's gc wrote info/refs, as every repack does"
    );
    repo.run(&["verify", "shop"]).assert_code(0);
    assert_eq!(
        repo.git_output(&["show", "epic/shop:b/b.txt"]),
        "gc.auto=0\n"
    );
}
