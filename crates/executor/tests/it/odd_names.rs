//! File names git allows and people rarely mean: a newline in a name, bytes that are not UTF-8.
//! epic never merges them (they are refused like a path outside the perimeter, named the way git
//! quotes them, so the coder and the user can find them), puts them back in the last round like
//! any stray, and a story that left them in its worktree on an earlier run recovers on the rerun.

use crate::epic_support::{EpicFixture, epic_files, plan, reason, statuses};
use crate::support::Events;
use epic_events::Event;

/// The hook that writes both odd names under `dir`.
fn odd_names_under(dir: &str) -> String {
    format!(
        "mkdir -p {dir}; printf x > \"{dir}/two\nlines.txt\"; printf y > \"$(printf '{dir}/raw\\377.txt')\"\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn odd_file_names_are_named_as_git_quotes_them_and_put_back() {
    let ep = EpicFixture::new();
    ep.hook("a", &odd_names_under("src/a"));
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[])]), ep.config(), &events)
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:done"], "{}", reason(&outcome, 0));
    assert_eq!(epic_files(&ep), ["README.md", "src/a/done.txt"]);
    let restored: Vec<String> = events
        .steps()
        .iter()
        .filter_map(|event| match event {
            Event::PerimeterRestored { paths, .. } => Some(paths.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(
        restored,
        [r#""src/a/raw\377.txt""#, r#""src/a/two\nlines.txt""#],
        "both are put back, named as git quotes them"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn odd_file_names_left_by_an_earlier_run_do_not_stick_the_rerun() {
    let ep = EpicFixture::new();
    // The first run's coder writes the names and then fails: they stay in a's worktree.
    ep.hook("a", &format!("{}exit 1\n", odd_names_under("src/b")));
    let plan = plan(&[("a", &[])]);
    let outcome = ep
        .run(&plan, ep.config(), &Events::default())
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:failed"]);
    let worktree = ep.fx.root.join("repo.worktrees/e/a");
    // The failed task's worktree went back to its checkpoint, the names kept in its patch;
    // a run killed in the turn (or an epic before the patch) leaves them in the worktree.
    assert!(!worktree.join("src/b/two\nlines.txt").exists());
    let patch = std::fs::read(ep.dir().rejected_patch("a").expect("path")).expect("the patch");
    assert!(
        String::from_utf8_lossy(&patch).contains(r#""b/src/b/two\nlines.txt""#),
        "{}",
        String::from_utf8_lossy(&patch)
    );
    ep.fx.git_in(
        &worktree,
        &[
            "apply",
            ep.dir()
                .rejected_patch("a")
                .expect("path")
                .to_str()
                .expect("utf-8"),
        ],
    );
    assert!(worktree.join("src/b/two\nlines.txt").exists());

    std::fs::remove_file(ep.fx.root.join("hooks").join("a.sh")).expect("remove a's hook");
    let rerun = ep
        .run(&plan, ep.config(), &Events::default())
        .await
        .expect("rerun");
    assert_eq!(statuses(&rerun), ["a:done"], "{}", reason(&rerun, 0));
    assert_eq!(epic_files(&ep), ["README.md", "src/a/done.txt"]);
}
