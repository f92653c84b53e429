//! What gates and setup commands leave behind (`__pycache__/`, `test-results.xml`, a log):
//! removed after each command, named in an event, never the story's work. Before, a Python
//! gate's `__pycache__` failed every story on its perimeter, three rounds each.

use epic_events::Event;

use crate::epic_support::{EpicFixture, epic_files, plan, statuses};
use crate::support::Events;

/// A gate that leaves a byte-code cache, a test report and an ignored cache file, and passes.
const LITTERING_GATE: &str = "mkdir -p __pycache__ && echo x > __pycache__/m.pyc \
                              && echo r > test-results.xml && echo k > cache.keep";

/// The files a gate or setup command left, by where it ran (`None`: the epic worktree).
fn leftovers(events: &[Event]) -> Vec<(Option<String>, String, Vec<String>)> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::GateLeftovers {
                story,
                command,
                paths,
            } => Some((story.clone(), command.clone(), paths.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_gates_and_setup_leave_behind_is_removed_and_named_not_merged() {
    let ep = EpicFixture::new();
    // The project ignores `*.keep`: an ignored file is the project's business and stays.
    crate::epic_support::commit_on_main(&ep, &[(".gitignore", "*.keep\n")]);
    let mut config = ep.config();
    config.gates = vec![LITTERING_GATE.to_owned()];
    config.setup = vec!["echo ran > setup.log".to_owned()];
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &events)
        .await
        .expect("run");

    assert_eq!(
        statuses(&outcome),
        ["a:done"],
        "{}",
        crate::epic_support::reason(&outcome, 0)
    );
    let files = epic_files(&ep);
    assert!(files.contains(&"src/a/done.txt".to_owned()), "{files:?}");
    for litter in [
        "__pycache__/m.pyc",
        "test-results.xml",
        "setup.log",
        "cache.keep",
    ] {
        assert!(
            !files.contains(&litter.to_owned()),
            "{litter} merged: {files:?}"
        );
    }
    let left = leftovers(&events.steps());
    let gate_litter = vec![
        "__pycache__/m.pyc".to_owned(),
        "test-results.xml".to_owned(),
    ];
    // On the epic worktree before any story (the baseline), in the story's worktree, and on
    // the epic worktree again after the merge.
    assert!(
        left.contains(&(None, LITTERING_GATE.to_owned(), gate_litter.clone())),
        "{left:?}"
    );
    assert!(
        left.contains(&(Some("a".to_owned()), LITTERING_GATE.to_owned(), gate_litter)),
        "{left:?}"
    );
    assert!(
        left.contains(&(
            Some("a".to_owned()),
            "echo ran > setup.log".to_owned(),
            vec!["setup.log".to_owned()]
        )),
        "{left:?}"
    );
    let epic = ep.epic_worktree();
    assert!(!epic.join("__pycache__/m.pyc").exists());
    assert!(!epic.join("test-results.xml").exists());
    assert!(epic.join("cache.keep").exists(), "an ignored file stays");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_there_before_the_gate_are_not_its_leftovers() {
    let ep = EpicFixture::new();
    // The coder leaves an untracked file of its own, not committed when the gates run: its
    // work, kept and merged.
    ep.hook("a", "mkdir -p src/a && echo draft > src/a/notes.txt\n");
    let mut config = ep.config();
    config.gates = vec!["echo r > report.xml".to_owned()];
    let events = Events::default();
    let outcome = ep
        .run(&plan(&[("a", &[])]), config, &events)
        .await
        .expect("run");
    assert_eq!(statuses(&outcome), ["a:done"]);
    let files = epic_files(&ep);
    assert!(files.contains(&"src/a/notes.txt".to_owned()), "{files:?}");
    assert!(!files.contains(&"report.xml".to_owned()), "{files:?}");
    let left = leftovers(&events.steps());
    assert!(!left.is_empty());
    assert!(
        left.iter()
            .all(|(_, _, paths)| paths == &["report.xml".to_owned()]),
        "{left:?}"
    );
}
