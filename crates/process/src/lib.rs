//! Processes that die with their turn and stay in their sandbox: what epic runs every agent turn,
//! gate and setup command with.
//!
//! - [`run`] starts one child process as the leader of its own process group, under a deadline
//!   and a cancellation token, with its output streamed and kept in bounded memory
//!   ([`bounded`]), and kills the whole group (and every process carrying the run's tag) when
//!   it ends, however it ends; [`run_watched`] also ends one that prints nothing for a while
//!   ([`Watchdog`]), timed on a [`Clock`] a test can move ([`ManualClock`]).
//! - [`spawn_interactive`]: the same process group and tag around a child whose stdio the
//!   caller speaks a protocol over ([`Interactive`]).
//! - [`sandbox`]: the bubblewrap sandbox a process runs in, which keeps the repository, the other
//!   worktrees and epic's state read-only and hides the user's credential stores.
//! - [`offload`]: the one way blocking work (git, file I/O) leaves the async workers; [`chain`]
//!   renders an error with its sources for a person.
//!
//! Linux only: process groups, `/proc` (the tags of escaped processes), `prctl`'s child
//! subreaper, bubblewrap.
//!
//! ```
//! use std::time::Duration;
//!
//! use epic_process::{Ending, Limits, Spec};
//! use tokio_util::sync::CancellationToken;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
//! let spec = Spec {
//!     program: "sh".into(),
//!     args: vec!["-c".into(), "echo hello; sleep 1000 &".into()],
//!     cwd: std::env::temp_dir(),
//!     env: Vec::new(),
//!     stdin: None,
//! };
//! let limits = Limits { stdout_head: 1024, stdout_tail: 1024, stderr_tail: 1024 };
//! let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
//! let mut finished =
//!     epic_process::run(&spec, deadline, &CancellationToken::new(), limits, &|_| {}).await?;
//! assert!(matches!(finished.ending, Ending::Exited(status) if status.success()));
//! assert_eq!(finished.stdout.text(), "hello\n");
//! // The `sleep` it left in the background died with its process group.
//! # Ok::<(), std::io::Error>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod bounded;
mod clock;
mod error;
mod interactive;
pub mod offload;
mod process;
pub mod sandbox;

pub use clock::{Clock, ManualClock};
pub use error::chain;
pub use interactive::{Group, Interactive, spawn_interactive};
pub use process::{
    Ending, Finished, Limits, Orphan, Spec, TAG_VARIABLE, Watchdog, adopt_orphans, describe_status,
    end_leftovers, kill_orphans, run, run_watched,
};
