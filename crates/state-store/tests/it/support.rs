//! Shared helpers: sample documents, temp files, and re-running this binary as a child process.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use epic_state_store::{Document, StoryStage, StoryState};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A story state as a run would write it.
pub(crate) fn story(id: &str, status: StoryStage) -> StoryState {
    StoryState {
        id: id.to_owned(),
        hash: "5e3c0f6a9b1d2e47".to_owned(),
        branch: format!("story/checkout/{id}"),
        worktree: PathBuf::from(format!("/src/shop.worktrees/checkout/{id}")),
        status,
        merge: None,
        hold: None,
    }
}

/// A document whose every byte depends on its counter, so a torn or mixed file cannot pass for a
/// whole one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Counter {
    pub(crate) n: u64,
    pub(crate) payload: String,
}

impl Counter {
    /// Counter `n`, with about 4 KiB of payload (several pages, so a write is rarely one step).
    pub(crate) fn new(n: u64) -> Self {
        Self {
            n,
            payload: format!("{n:016x}").repeat(256),
        }
    }
}

impl Document for Counter {
    const NAME: &'static str = "counter";
    const VERSION: u32 = 3;
}

/// The temp files of `target` in its directory.
pub(crate) fn temp_files(target: &Path) -> Vec<String> {
    let name = target.file_name().expect("a file name").to_string_lossy();
    let prefix = format!(".{name}.");
    let dir = target.parent().expect("a directory");
    let mut temps: Vec<String> = std::fs::read_dir(dir)
        .expect("list the directory")
        .map(|entry| entry.expect("a directory entry").file_name())
        .filter(|entry| Path::new(entry).extension().is_some_and(|ext| ext == "tmp"))
        .map(|entry| entry.to_string_lossy().into_owned())
        .filter(|entry| entry.starts_with(&prefix))
        .collect();
    temps.sort();
    temps
}

/// How long a test waits for a helper process to get somewhere before it fails (the shared
/// bound of every crate's tests).
pub(crate) use epic_test_support::PATIENCE;

/// Runs the ignored helper test `name` (a full path such as `atomic::writer_child`) of this
/// test binary in a child process, with `env` telling it what to do.
///
/// Works under `cargo test` and `cargo nextest run` alike: both run the same libtest binary,
/// which accepts the filter and flags below. `--ignored --exact` runs exactly that helper; a
/// name that matches none runs nothing and exits at once, which [`wait_for`] reports. The
/// helper's standard input is a pipe the returned [`Child`] holds open: it ends when the parent
/// drops the handle or dies, and [`until_parent_is_gone`] waits for that.
pub(crate) fn spawn_helper(name: &str, env: &[(&str, &OsStr)]) -> Child {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut command = Command::new(exe);
    command
        .args([name, "--exact", "--ignored", "--nocapture"])
        .args(["--test-threads", "1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    command.spawn().expect("spawn the test binary as a helper")
}

/// In a helper: the variable `key` its parent set; panics when it is unset (the helper was run
/// on its own, not by its parent).
pub(crate) fn helper_env(key: &str) -> std::ffi::OsString {
    std::env::var_os(key).unwrap_or_else(|| {
        panic!("{key} is unset: this helper runs only as a child of its parent test")
    })
}

/// In a helper: blocks until the parent that [spawned](spawn_helper) it drops its handle or dies
/// (the end of standard input), so no helper outlives its test.
pub(crate) fn until_parent_is_gone() {
    std::io::Read::read_to_end(&mut std::io::stdin(), &mut Vec::new()).ok();
}

/// Polls `probe` until it returns `Some`, failing the test after `limit`; kills `child` first so
/// a failure leaves no process behind.
pub(crate) fn wait_for<T>(
    child: &mut Child,
    limit: Duration,
    mut probe: impl FnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(found) = probe() {
            return found;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("helper process exited early with {status}");
        }
        if Instant::now() > deadline {
            child.kill().ok();
            child.wait().ok();
            panic!("helper process did not get ready within {limit:?}");
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// The seeded generator of every crate's tests: the kill instants of a run are replayed with
/// `STATE_STORE_SEED` (see [`seeded`]).
pub(crate) use epic_test_support::Rng;

/// The generator of the kill instants: seeded from `STATE_STORE_SEED` when set, else with a fixed
/// seed, so a failure replays on any machine; failures name the seed ([`Rng::seed`]).
pub(crate) fn seeded() -> Rng {
    Rng::from_env("STATE_STORE_SEED", 0x5eed_57a7_e570_4e01)
}
