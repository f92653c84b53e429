//! `epic answer`, `epic tell`, `epic stop` and `epic retry`: each queues its command in the
//! epic's inbox as the contract writes it, and every refusal is exit 2 with one line, nothing
//! written. The epics' states are written with state-store, as a run writes them.

use std::path::PathBuf;

use epic_state_store::{EpicDir, EpicLock, Hold, StoryStage, StoryState};
use serde_json::{Value, json};

use crate::util::{Repo, Run};

/// Epic `checkout` with a story in each state: `asking` waits on an answer, `coding` is
/// started, `broken` failed, `halted` was stopped, `cart` is merged; its last run's plan also
/// has `later`, which no run has started.
fn checkout() -> (Repo, EpicDir) {
    let repo = Repo::new();
    let epic = repo.epic("checkout");
    repo.story(&epic, "asking", StoryStage::Started);
    hold(
        &epic,
        "asking",
        Hold::Waiting {
            question: "which port?".into(),
            since: "2030-01-01T09:00:00Z".into(),
        },
    );
    repo.story(&epic, "coding", StoryStage::Started);
    repo.story(&epic, "broken", StoryStage::Failed);
    repo.story(&epic, "halted", StoryStage::Started);
    hold(
        &epic,
        "halted",
        Hold::Stopped {
            uid: 1000,
            at: "2030-01-01T09:00:00Z".into(),
        },
    );
    repo.story(&epic, "cart", StoryStage::Merged);
    let stories: Vec<Value> = ["asking", "coding", "broken", "halted", "cart", "later"]
        .iter()
        .map(|id| json!({"id": id, "title": id, "owned": [id]}))
        .collect();
    let plan = json!({"version": 1, "data": {"plan": {"epic_id": "checkout", "stories": stories}}});
    std::fs::write(epic.run_plan(), plan.to_string()).expect("write plan.json");
    (repo, epic)
}

/// Sets `story`'s hold in its state file.
fn hold(epic: &EpicDir, story: &str, hold: Hold) {
    let path = epic.story_state(story).expect("a safe id");
    let mut state: StoryState = epic_state_store::load(&path)
        .expect("readable")
        .expect("saved");
    state.hold = Some(hold);
    epic_state_store::save(&path, &state).expect("saved");
}

/// The inbox's command files, sorted.
fn inbox(epic: &EpicDir) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(epic.inbox()) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    files
}

/// Asserts `run` queued one command, the inbox's only file, and returns its `data` (removing
/// the file), checking its `uid` and `at` and that stdout, unless quiet, names its id.
#[track_caller]
fn queued(epic: &EpicDir, run: &Run) -> Value {
    run.assert_code(0);
    let files = inbox(epic);
    assert_eq!(files.len(), 1, "{files:?}\n{run}");
    let id = files[0]
        .file_stem()
        .and_then(|stem| stem.to_str())
        .expect("a command id");
    assert!(run.stdout.is_empty() || run.stdout.contains(id), "{run}");
    let text = std::fs::read_to_string(&files[0]).expect("readable");
    let document: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(document["version"], 1);
    let mut data = document["data"].clone();
    assert_eq!(data["uid"], rustix::process::getuid().as_raw());
    let at = data["at"].as_str().expect("a time");
    assert!(at.ends_with('Z') && at.starts_with("20"), "{at}");
    let fields = data.as_object_mut().expect("an object");
    fields.remove("uid");
    fields.remove("at");
    std::fs::remove_file(&files[0]).expect("removed");
    data
}

/// Asserts `run` was refused with exit 2 and `line` in its one error line, nothing queued.
#[track_caller]
fn refused(epic: &EpicDir, run: &Run, line: &str) {
    run.assert_code(2);
    assert!(run.stdout.is_empty(), "{run}");
    let error = run.stderr.lines().next().unwrap_or_default();
    assert!(
        error.starts_with("error: ") && error.contains(line),
        "{run}"
    );
    assert!(inbox(epic).is_empty(), "{run}");
}

#[test]
fn each_command_queues_its_file_with_no_run_going() {
    let (repo, epic) = checkout();
    let run = repo.run(&["answer", "asking", "port 8080"]);
    assert_eq!(
        queued(&epic, &run),
        json!({"action": "answer", "story": "asking", "text": "port 8080"})
    );
    assert!(
        run.stdout
            .starts_with("queued an answer for story `asking` of epic `checkout` (command ")
            && run
                .stdout
                .ends_with("); no run is going: the next `epic run` takes it\n"),
        "{run}"
    );

    let run = repo.run(&[
        "tell",
        "coding",
        "prices are in cents",
        "--epic",
        "checkout",
    ]);
    assert_eq!(
        queued(&epic, &run),
        json!({"action": "tell", "story": "coding", "text": "prices are in cents"})
    );
    // A note waits for the next coder turn of a story not started yet, too.
    let run = repo.run(&["tell", "later", "reuse the cart"]);
    assert_eq!(
        queued(&epic, &run),
        json!({"action": "tell", "story": "later", "text": "reuse the cart"})
    );

    let run = repo.run(&["stop", "coding"]);
    assert_eq!(
        queued(&epic, &run),
        json!({"action": "stop", "story": "coding"})
    );
    assert!(
        run.stdout.starts_with("queued a stop of story `coding`"),
        "{run}"
    );

    let run = repo.run(&["retry", "broken"]);
    assert_eq!(
        queued(&epic, &run),
        json!({"action": "retry", "story": "broken", "fresh": false})
    );
    let run = repo.run(&["retry", "halted", "--fresh"]);
    assert_eq!(
        queued(&epic, &run),
        json!({"action": "retry", "story": "halted", "fresh": true})
    );
    assert!(run.stdout.starts_with("queued a fresh retry"), "{run}");
}

#[test]
fn from_a_subdirectory_quietly_or_as_json() {
    let (repo, epic) = checkout();
    let run = repo.run_in("src/deep", &["tell", "coding", "x", "-q"]);
    assert_eq!(run.stdout, "", "{run}");
    queued(&epic, &run);

    let run = repo.run(&["stop", "coding", "--format", "json"]);
    let printed = run.json();
    let data = queued(&epic, &run);
    assert_eq!(data["action"], "stop");
    assert_eq!(printed["epic"], "checkout");
    assert_eq!(printed["story"], "coding");
    assert_eq!(printed["action"], "stop");
    assert_eq!(printed["running"], false);
}

#[test]
fn while_a_run_holds_the_lock() {
    let (repo, epic) = checkout();
    // This test process plays the run: it holds the epic's lock while the commands are given.
    let lock = EpicLock::acquire(&epic).expect("the lock");
    let run = repo.run(&["stop", "--all"]);
    assert_eq!(queued(&epic, &run), json!({"action": "stop_all"}));
    assert!(
        run.stdout
            .starts_with("queued a stop of the whole run of epic `checkout`")
            && run
                .stdout
                .ends_with("; the running epic takes it within a second\n"),
        "{run}"
    );
    let run = repo.run(&["answer", "asking", "yes"]);
    queued(&epic, &run);
    refused(
        &epic,
        &repo.run(&["answer", "coding", "yes"]),
        "story `coding` waits on no answer: it is running; `epic tell coding TEXT` leaves a \
         note for its next coder turn",
    );
    drop(lock);
}

#[test]
fn an_answer_only_to_a_story_waiting_on_one() {
    let (repo, epic) = checkout();
    for (story, doing) in [
        (
            "coding",
            "it is started, with no run going; `epic tell coding TEXT`",
        ),
        ("later", "it is not started; `epic tell later TEXT`"),
        ("broken", "it is failed; `epic retry broken` runs it again"),
        ("halted", "it is stopped; `epic retry halted` runs it again"),
        ("cart", "it is merged, nothing is left to tell it"),
    ] {
        let run = repo.run(&["answer", story, "8080"]);
        refused(
            &epic,
            &run,
            &format!("story `{story}` waits on no answer: {doing}"),
        );
    }
}

#[test]
fn refusals_of_tell_stop_and_retry() {
    let (repo, epic) = checkout();
    let cases: [(&[&str], &str); 8] = [
        (
            &["tell", "cart", "x"],
            "story `cart` is merged: no coder turn of it is left to read a note",
        ),
        (&["stop", "cart"], "story `cart` is merged: nothing to stop"),
        (
            &["stop", "halted"],
            "story `halted` is already stopped; `epic retry halted` runs it again",
        ),
        (
            &["stop", "broken"],
            "story `broken` failed: nothing to stop; `epic retry broken` runs it again",
        ),
        (
            &["stop", "--all"],
            "no run of epic `checkout` is going: nothing to stop",
        ),
        (
            &["retry", "coding"],
            "story `coding` is started, with no run going, neither failed nor stopped",
        ),
        (
            &["retry", "cart"],
            "story `cart` is merged, neither failed nor stopped",
        ),
        (
            &["retry", "asking"],
            "story `asking` is waiting on an answer, neither failed nor stopped: `epic answer \
             asking TEXT` answers it",
        ),
    ];
    for (args, line) in cases {
        refused(&epic, &repo.run(args), line);
    }
    refused(
        &epic,
        &repo.run(&["retry", "later"]),
        "story `later` is not started, neither failed nor stopped: nothing to retry",
    );
    // A story or --all, not both, not neither: clap's usage errors.
    let run = repo.run(&["stop"]);
    run.assert_code(2);
    assert!(run.stderr.contains("<STORY>"), "{run}");
    repo.run(&["stop", "coding", "--all"]).assert_code(2);
    assert!(inbox(&epic).is_empty());
}

#[test]
fn unknown_stories_and_epics_and_empty_words() {
    let (repo, epic) = checkout();
    refused(
        &epic,
        &repo.run(&["tell", "nope", "x"]),
        "epic `checkout` has no story `nope`; its stories: asking, coding, broken, halted, \
         cart, later",
    );
    refused(
        &epic,
        &repo.run(&["answer", "asking", "  \n\t"]),
        "the text is empty: `epic answer asking TEXT` needs the words for the coder",
    );
    refused(
        &epic,
        &repo.run(&["tell", "coding", ""]),
        "the text is empty",
    );
    refused(
        &epic,
        &repo.run(&["stop", "coding", "--epic", "shop"]),
        "no epic `shop` has run in this repository",
    );

    // Without plan.json the stories are those with a state file.
    std::fs::remove_file(epic.run_plan()).expect("removed");
    refused(
        &epic,
        &repo.run(&["tell", "later", "x"]),
        "epic `checkout` has no story `later`; its stories: asking, broken, cart, coding, halted",
    );

    // Two epics and no --epic: name one.
    let other = repo.epic("shop");
    repo.story(&other, "cart", StoryStage::Started);
    let run = repo.run(&["tell", "coding", "x"]);
    refused(
        &epic,
        &run,
        "several epics have run in this repository: checkout, shop",
    );
    assert!(
        run.stderr
            .contains("hint: name one: `epic tell --epic checkout`"),
        "{run}"
    );
    assert!(inbox(&other).is_empty());
}
