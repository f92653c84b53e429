//! A task that fails leaves its worktree at the task's checkpoint and keeps its rejected
//! changes as a patch beside the story's state: a rerun starts the task afresh instead of
//! committing them as work in progress.

use crate::epic_support::{EpicFixture, commit_on_main, plan, reason, statuses};
use crate::support::Events;

/// Until `$ROOT/fixed` exists, the coder breaks the line the gate checks (and adds a file of
/// its own, as every turn does): the gate goes red for every round.
const BREAKS_THE_LINE: &str = "if [ ! -f \"$ROOT/fixed\" ]; then echo broken > src/a/lib.txt; \
                               printf 'scratch\\0\\377\\n' > src/a/scratch.bin; fi\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_tasks_rejected_edits_are_kept_as_a_patch_and_never_merged() {
    let ep = EpicFixture::new();
    commit_on_main(&ep, &[("src/a/lib.txt", "good\n")]);
    ep.hook("a", BREAKS_THE_LINE);
    let only_a = plan(&[("a", &[])]);
    let mut config = ep.config();
    config.gates = vec!["grep -qx good src/a/lib.txt".into()];

    let outcome = ep
        .run(&only_a, config.clone(), &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed"]);
    let patch = ep.dir().rejected_patch("a").expect("patch path");
    let failed = reason(&outcome, 0);
    assert!(
        failed.contains("still failing after 3 round(s)"),
        "{failed}"
    );
    assert!(
        failed.contains(&format!(
            "The rejected changes are kept in {path}: `git apply {path}` in the worktree to look \
             at them.",
            path = patch.display()
        )),
        "{failed}"
    );

    // The worktree is back at the task's checkpoint: the story branch has no commit of the
    // task, and nothing of it is left uncommitted.
    let worktree = ep.fx.root.join("repo.worktrees/e/a");
    let git = |args: &[&str]| ep.fx.git_in(&worktree, args);
    assert_eq!(git(&["rev-parse", "HEAD"]).trim(), ep.rev("epic/e"));
    assert_eq!(git(&["status", "--porcelain", "--untracked-files=all"]), "");
    assert_eq!(
        std::fs::read_to_string(worktree.join("src/a/lib.txt")).expect("read"),
        "good\n"
    );
    // The patch holds the rejected edit and the new files, binary ones too, and applies to
    // the checkpoint.
    let text =
        String::from_utf8_lossy(&std::fs::read(&patch).expect("the patch is kept")).into_owned();
    assert!(text.contains("-good\n+broken\n"), "{text}");
    assert!(text.contains("src/a/done.txt"), "{text}");
    assert!(text.contains("GIT binary patch"), "{text}");
    let kept = patch.to_str().expect("utf-8 path");
    git(&["apply", "--check", kept]);
    git(&["apply", kept]);
    assert_eq!(
        std::fs::read_to_string(worktree.join("src/a/lib.txt")).expect("read"),
        "broken\n"
    );
    git(&["checkout", "--", "."]);
    git(&["clean", "-f", "-d", "-q"]);

    // The agent is fixed; a plain rerun finishes the epic without the broken line.
    std::fs::write(ep.fx.root.join("fixed"), "").expect("fix the agent");
    let events = Events::default();
    let rerun = ep.run(&only_a, config, &events).await.expect("rerun");
    assert!(
        rerun.all_done(),
        "{:?} {}",
        statuses(&rerun),
        reason(&rerun, 0)
    );
    let merged = ep.fx.git_in(&ep.fx.repo, &["show", "epic/e:src/a/lib.txt"]);
    assert_eq!(merged, "good\n");
    let log = ep.fx.git_in(&ep.fx.repo, &["log", "--format=%s", "epic/e"]);
    assert!(!log.contains("work in progress"), "{log}");
    let files = ep
        .fx
        .git_in(&ep.fx.repo, &["ls-tree", "-r", "--name-only", "epic/e"]);
    assert!(files.contains("src/a/done.txt"), "{files}");
    assert!(!files.contains("scratch.bin"), "{files}");
}
