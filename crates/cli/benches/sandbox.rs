//! What the sandbox costs a process: spawning `true` as it is against spawning it in the
//! bubblewrap sandbox the executor builds for an agent's turn (`crates/executor/src/sandbox.rs`:
//! the whole file system bound as it is, the main checkout, the worktrees root and the git
//! directory read-only, the worktree, its administrative directory, `objects`, `refs` and `logs`
//! writable again, a PID namespace with its own `/proc`), on a real repository with a linked
//! worktree. Each side is spawned and waited for in turns; medians.
//!
//! Prints a Markdown section for `cargo xtask bench sandbox`; measures only under `--bench`;
//! `--quick` spawns 20 of each instead of 200.

#![expect(
    clippy::disallowed_methods,
    reason = "the crate's clippy.toml keeps the CLI from writing files and running git itself; \
              benchmarks are the user here: they build repositories and spawn processes"
)]
#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

mod common;

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use common::{Env, median};

/// The sandbox's command line around `true`, for a turn in `worktree`.
fn sandboxed(checkout: &Path, worktree: &Path) -> Command {
    let common = checkout.join(".git");
    let root = worktree.parent().expect("the worktrees root");
    let admin = common
        .join("worktrees")
        .join(worktree.file_name().expect("name"));
    let mut args: Vec<OsString> = vec!["--dev-bind".into(), "/".into(), "/".into()];
    let mut bind = |flag: &str, path: &Path| {
        args.extend([flag.into(), path.into(), path.into()]);
    };
    for path in [checkout, root, &common] {
        bind("--ro-bind-try", path);
    }
    for path in [
        worktree.to_path_buf(),
        admin,
        common.join("objects"),
        common.join("refs"),
        common.join("logs"),
    ] {
        bind("--bind-try", &path);
    }
    let mut command = Command::new("bwrap");
    command
        .args(args)
        .args([
            "--unshare-pid",
            "--die-with-parent",
            "--proc",
            "/proc",
            "--chdir",
        ])
        .arg(worktree)
        .args(["--", "true"]);
    command
}

/// Spawns `command` and waits for it: the wall time in milliseconds.
fn spawn_ms(command: &mut Command) -> f64 {
    let start = Instant::now();
    let status = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("spawn");
    let elapsed = start.elapsed().as_secs_f64() * 1000.0;
    assert!(status.success(), "{command:?} failed ({status})");
    elapsed
}

fn main() {
    if !std::env::args().any(|arg| arg == "--bench") {
        println!("sandbox: a benchmark; run it with `cargo xtask bench sandbox`");
        return;
    }
    let quick = std::env::args().any(|arg| arg == "--quick");
    let spawns = if quick { 20 } else { 200 };
    let env = Env::new();
    let dir = tempfile::tempdir().expect("temporary directory");
    let checkout = dir.path().join("repo");
    std::fs::create_dir_all(&checkout).expect("mkdir");
    std::fs::write(checkout.join("README.md"), "bench\n").expect("write");
    env.git(&checkout, &["init", "-q", "-b", "main"]);
    env.git(&checkout, &["add", "-A"]);
    env.git(&checkout, &["commit", "-q", "-m", "first"]);
    let worktree = dir.path().join("repo.worktrees/bench/story");
    env.git(
        &checkout,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "story",
            worktree.to_str().expect("UTF-8 path"),
        ],
    );
    let works = sandboxed(&checkout, &worktree)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    let mut out = String::from(
        "## The sandbox's cost per process\n\n\
         Spawning and waiting for `true`, as it is and in the bubblewrap sandbox an agent's turn \
         runs in (`--sandbox`: binds, a PID namespace with its own `/proc`), in turns; medians. \
         An agent turn, a gate and a setup command each pay it once: a story of one task with no \
         gates and no judge (the overhead benchmark's) pays it twice, its planner's and its \
         coder's turn, a few milliseconds of the hundreds `epic` spends on a story.\n\n",
    );
    if !works {
        out.push_str("`bwrap` does not work on this machine: nothing measured.\n");
        print!("{out}");
        return;
    }
    let (mut plain, mut boxed) = (Vec::new(), Vec::new());
    for _ in 0..spawns {
        plain.push(spawn_ms(&mut Command::new("true")));
        boxed.push(spawn_ms(&mut sandboxed(&checkout, &worktree)));
    }
    let (plain, boxed) = (median(&plain), median(&boxed));
    let _ = write!(
        out,
        "| spawns | `true` | `true` in the sandbox | difference | ratio |\n\
         | ---: | ---: | ---: | ---: | ---: |\n\
         | {spawns} | {plain:.2} ms | {boxed:.2} ms | {:.2} ms | {:.1} |\n",
        boxed - plain,
        boxed / plain
    );
    print!("{out}");
}
