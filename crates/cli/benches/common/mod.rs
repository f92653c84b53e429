//! What the `epic` benchmarks share: the release `epic` binary cargo built for them, git run in
//! an isolated environment, and median/percentile helpers. Files, scripts and the seeded
//! generator are `epic-test-support`'s (`write`, `executable`, `Rng`).

#![allow(
    dead_code,
    reason = "each benchmark uses part of the shared helpers; unused ones are not an error"
)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

use epic_test_support::Isolation;

/// The `epic` binary: cargo builds it with the bench profile (the release settings) for every
/// bench target of this package and names it here.
pub(crate) fn epic_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_epic"))
}

/// The environment every git and `epic` process of a benchmark runs in: `epic-test-support`'s
/// isolation, with a `~/.gitconfig` of its own naming a fixed identity.
#[derive(Debug)]
pub(crate) struct Env {
    home: tempfile::TempDir,
}

impl Env {
    pub(crate) fn new() -> Self {
        let home = tempfile::tempdir().expect("temporary home");
        std::fs::write(
            home.path().join(".gitconfig"),
            "[user]\n\tname = Bench\n\temail = bench@example.com\n[init]\n\tdefaultBranch = main\n",
        )
        .expect("write .gitconfig");
        Self { home }
    }

    /// `program` with the isolated environment, in `dir`.
    pub(crate) fn command(&self, program: impl AsRef<std::ffi::OsStr>, dir: &Path) -> Command {
        let mut command = Command::new(program);
        Isolation::new(self.home.path())
            .apply(&mut command)
            .env("LC_ALL", "C")
            .current_dir(dir);
        command
    }

    /// Runs git in `dir`; panics unless it succeeds.
    pub(crate) fn git(&self, dir: &Path, args: &[&str]) -> String {
        let output = self
            .command("git", dir)
            .args(args)
            .output()
            .expect("run git");
        assert!(
            output.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// A new repository at `dir` with `files` committed on `main`.
    pub(crate) fn repo(&self, dir: &Path, files: &[(String, String)]) {
        std::fs::create_dir_all(dir).expect("mkdir repo");
        self.git(dir, &["init", "-q", "-b", "main"]);
        for (path, content) in files {
            epic_test_support::write(&dir.join(path), content);
        }
        self.git(dir, &["add", "-A"]);
        self.git(dir, &["commit", "-q", "-m", "initial"]);
    }
}

/// The median of `values` (the upper one of an even count); 0 when empty.
pub(crate) fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or_default()
}

/// The smallest of `values`; infinity when empty.
pub(crate) fn min(values: &[f64]) -> f64 {
    values.iter().copied().fold(f64::INFINITY, f64::min)
}

/// The largest of `values`; 0 when empty.
pub(crate) fn max(values: &[f64]) -> f64 {
    values.iter().copied().fold(0.0, f64::max)
}

/// The file system type of `path` as `stat -f` names it (`tmpfs`, `ext2/ext3`, …).
pub(crate) fn fs_type(path: &Path) -> String {
    Command::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(path)
        .output()
        .ok()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

/// The places to measure on disk: tmpfs (`/dev/shm`) when there is one, and the system's
/// temporary directory.
pub(crate) fn places() -> Vec<(&'static str, PathBuf)> {
    let mut places = Vec::new();
    if Path::new("/dev/shm").is_dir() {
        places.push(("tmpfs", PathBuf::from("/dev/shm")));
    }
    places.push(("disk", std::env::temp_dir()));
    places
}

/// The `VmHWM` of process `pid` in KiB, while it exists.
fn high_water_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
}

/// The peak resident set of `child` alone (its `VmHWM`, not its children's) in KiB, polled
/// every 5 ms until it exits; its exit status is left for `wait`.
pub(crate) fn peak_until_exit(child: &mut Child) -> u64 {
    let mut peak = 0;
    loop {
        if let Some(kib) = high_water_kib(child.id()) {
            peak = peak.max(kib);
        }
        if child.try_wait().expect("wait for epic").is_some() {
            return peak;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}
