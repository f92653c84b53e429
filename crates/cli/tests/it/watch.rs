//! `epic watch`: piped, it prints the table once; `--format json` prints the board; on a
//! terminal (tmux, 100×30) it shows the stories of a run going on, draws again at 80×24,
//! shows the last run once the run ends, moves with `j`, lists the keys with `?`, queues a
//! stop in the epic's inbox with `s` and Enter, and leaves with `q`. The epic's
//! state is written by the test, as a run writes it.

use std::path::{Path, PathBuf};
use std::process::Command;

use epic_state_store::{EpicDir, EpicLock, Hold, StoryStage, StoryState};
use epic_test_support::wait_until;
use serde_json::json;

use crate::util::{Repo, checkout_report};

/// Epic `checkout`: the report's `cart-api` done, `payments` failed, `cart-ui` skipped, and
/// two stories of the run's plan beside them: `coding` started, `asking` waiting on an
/// answer; with an event log of `coding`'s turn going on.
fn checkout() -> (Repo, EpicDir) {
    let repo = Repo::new();
    let epic = repo.epic("checkout");
    repo.report(&epic, &checkout_report(), false);
    repo.story(&epic, "cart-api", StoryStage::Merged);
    repo.story(&epic, "payments", StoryStage::Failed);
    repo.story(&epic, "coding", StoryStage::Started);
    repo.story(&epic, "asking", StoryStage::Started);
    let path = epic.story_state("asking").expect("a safe id");
    let mut state: StoryState = epic_state_store::load(&path)
        .expect("readable")
        .expect("saved");
    state.hold = Some(Hold::Waiting {
        question: "which port?".into(),
        since: "2030-01-01T09:00:00Z".into(),
    });
    epic_state_store::save(&path, &state).expect("saved");
    let stories: Vec<serde_json::Value> = ["cart-api", "payments", "cart-ui", "coding", "asking"]
        .iter()
        .map(|id| json!({"id": id, "title": id, "owned": [id]}))
        .collect();
    let plan = json!({"version": 1, "data": {"plan": {"epic_id": "checkout", "stories": stories}}});
    std::fs::write(epic.run_plan(), plan.to_string()).expect("write plan.json");
    let events = [
        json!({"at": "2030-01-01T09:00:00Z", "kind": "run_started", "epic": "checkout",
            "epic_branch": "epic/checkout", "epic_worktree": "/w", "stories": 5,
            "concurrency": 2, "seats": ["claude"]}),
        json!({"at": "2030-01-01T09:00:01Z", "kind": "story_started", "story": "coding",
            "slot": 0}),
        json!({"at": "2030-01-01T09:00:02Z", "kind": "turn_started", "story": "coding",
            "role": "coder", "seat": "claude", "turn": 1}),
    ];
    let log: Vec<String> = events.iter().map(ToString::to_string).collect();
    let log = log.join("\n") + "\n";
    std::fs::write(epic.events(), log).expect("write events.jsonl");
    (repo, epic)
}

#[test]
fn piped_it_prints_the_table_once() {
    let (repo, _epic) = checkout();
    let run = repo.run(&["watch", "checkout"]);
    run.assert_code(0);
    let out = &run.stdout;
    assert!(
        out.starts_with("epic checkout · no run going: the last run · 1/5 done"),
        "{run}"
    );
    let lines: Vec<&str> = out.lines().collect();
    let at = |id: &str| {
        lines
            .iter()
            .position(|line| line.split_whitespace().any(|word| word == id))
            .unwrap_or_else(|| panic!("no line for {id}:\n{out}"))
    };
    // Those that need a person first, marked.
    assert!(lines[at("asking")].starts_with("! asking"), "{out}");
    assert!(lines[at("payments")].starts_with("! payments"), "{out}");
    assert!(
        at("asking") < at("cart-api") && at("payments") < at("cart-api"),
        "{out}"
    );
    assert!(lines[at("cart-api")].contains("done"), "{out}");
    assert!(lines[at("cart-ui")].contains("skipped"), "{out}");
    assert!(lines[at("coding")].contains("started"), "{out}");
    assert!(lines[at("asking")].contains("which port?"), "{out}");
}

#[test]
fn format_json_prints_the_board() {
    let (repo, _epic) = checkout();
    let run = repo.run(&["watch", "checkout", "--format", "json"]);
    run.assert_code(0);
    let board = run.json();
    assert_eq!(board["epic_id"], "checkout");
    assert_eq!(board["running"], false);
    assert_eq!(
        (board["done"].as_u64(), board["total"].as_u64()),
        (Some(1), Some(5))
    );
    let statuses: Vec<(&str, &str)> = board["stories"]
        .as_array()
        .expect("stories")
        .iter()
        .map(|story| {
            (
                story["id"].as_str().expect("an id"),
                story["status"].as_str().expect("a status"),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("payments", "failed"),
            ("asking", "waiting"),
            ("cart-api", "done"),
            ("cart-ui", "skipped"),
            ("coding", "started"),
        ]
    );
    assert_eq!(board["seats"][0]["seat"], "claude");
}

/// A tmux server of the test's own (its socket in the test's directory), killed when dropped.
struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    /// A server with one session of `width`×`height` running `command`; fails the test saying
    /// to install tmux where it is missing.
    fn start(dir: &Path, width: u16, height: u16, command: &str) -> Self {
        assert!(
            Command::new("tmux").arg("-V").output().is_ok(),
            "tmux is not installed: `apt-get install tmux` (CI installs it)"
        );
        let tmux = Self {
            socket: dir.join("tmux.sock"),
        };
        let status = tmux
            .command()
            .args(["new-session", "-d", "-s", "watch", "-x"])
            .arg(width.to_string())
            .arg("-y")
            .arg(height.to_string())
            .arg(command)
            .status()
            .expect("start tmux");
        assert!(status.success(), "tmux new-session failed");
        tmux
    }

    fn command(&self) -> Command {
        let mut command = Command::new("tmux");
        command.arg("-S").arg(&self.socket);
        command
    }

    /// The screen, as text.
    fn screen(&self) -> String {
        let output = self
            .command()
            .args(["capture-pane", "-p", "-t", "watch"])
            .output()
            .expect("capture the pane");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Waits until the screen shows `text`; returns it.
    #[track_caller]
    fn until(&self, text: &str) -> String {
        let mut last = String::new();
        wait_until(&format!("the screen shows {text:?}"), || {
            last = self.screen();
            last.contains(text)
        });
        last
    }

    fn keys(&self, keys: &[&str]) {
        let status = self
            .command()
            .args(["send-keys", "-t", "watch"])
            .args(keys)
            .status()
            .expect("send keys");
        assert!(status.success());
    }

    /// The window made `width`×`height`.
    fn resize(&self, width: u16, height: u16) {
        let status = self
            .command()
            .args(["resize-window", "-t", "watch", "-x"])
            .arg(width.to_string())
            .arg("-y")
            .arg(height.to_string())
            .status()
            .expect("resize the window");
        assert!(status.success());
    }

    /// Whether the session is still there.
    fn alive(&self) -> bool {
        self.command()
            .args(["has-session", "-t", "watch"])
            .output()
            .is_ok_and(|output| output.status.success())
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.command().arg("kill-server").output().ok();
    }
}

#[test]
fn on_a_terminal_it_follows_keys_and_queues_a_stop() {
    let (repo, epic) = checkout();
    let binary = assert_cmd::cargo::cargo_bin("epic");
    let command = format!(
        "cd '{}' && NO_COLOR=1 GIT_CEILING_DIRECTORIES='{}' exec '{}' watch checkout",
        repo.path().display(),
        repo.temp().display(),
        binary.display()
    );
    // A run holds the lock: the view shows it running, `coding`'s turn and its seat.
    let lock = EpicLock::acquire(&epic).expect("take the epic's lock");
    let tmux = Tmux::start(repo.temp(), 100, 30, &command);
    let screen = tmux.until("cart-ui");
    assert!(screen.contains("epic checkout · running"), "{screen}");
    assert!(screen.contains("!payments"), "{screen}");
    assert!(screen.contains("coder@claude"), "{screen}");
    assert!(screen.contains("claude working (1)"), "{screen}");
    // A smaller terminal draws again, the stories still there.
    tmux.resize(80, 24);
    tmux.until("claude working (1)");
    // The run ends while watched: the view says so and shows the last run.
    drop(lock);
    let screen = tmux.until("no run going: the last run");
    assert!(!screen.contains("coder@claude"), "{screen}");
    // The selection starts on the first row (`payments`); `j` moves it to `asking`, whose
    // question the detail pane shows.
    tmux.keys(&["j"]);
    tmux.until("question: which port?");
    tmux.keys(&["?"]);
    tmux.until("leave the view (the run goes on)");
    tmux.keys(&["?"]);
    // Down to `coding` (started), then `s` and Enter: a stop queued as `epic stop` queues it.
    tmux.keys(&["j", "j", "j"]);
    tmux.until(" coding ─");
    tmux.keys(&["s"]);
    tmux.until("stop story coding? Enter sends, Esc cancels");
    tmux.keys(&["Enter"]);
    let screen = tmux.until("queued a stop of story `coding`");
    let inbox = epic.inbox();
    let files: Vec<PathBuf> = std::fs::read_dir(&inbox)
        .unwrap_or_else(|error| panic!("no inbox {}: {error}\n{screen}", inbox.display()))
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.is_file())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let command: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&files[0]).expect("read the command"))
            .expect("JSON");
    assert_eq!(command["data"]["story"], "coding", "{command}");
    assert_eq!(command["data"]["action"], "stop", "{command}");
    tmux.keys(&["q"]);
    wait_until("the view leaves on q", || !tmux.alive());
}
