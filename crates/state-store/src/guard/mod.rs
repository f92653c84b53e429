//! Snapshots of files a program guards against other processes, and their restoration: what a
//! set of watched files and directory trees holds (each entry's type, mode, contents or link
//! target), what changed since, and a change undone.
//!
//! epic takes one of the repository's configuration, hooks and worktree registrations, of its own
//! state directory and of the plan files before agent turns, and after each turn puts back what
//! the agent changed there. The files are small (configuration, hooks, JSON documents), so a
//! snapshot keeps their contents whole: a restored file is byte for byte what was read.
//!
//! It knows nothing of git or of epic's layout: the caller says which paths to watch
//! ([`Watch`]) and, for a tree, which of its paths count ([`Watch::Tree`]'s `keep`).
//!
//! ```
//! use epic_state_store::{ChangeKind, Snapshot, Watch};
//!
//! let dir = tempfile::tempdir()?;
//! let config = dir.path().join("config");
//! std::fs::write(&config, "[core]\n")?;
//! let watches = [Watch::File(config.clone()), Watch::Tree { root: dir.path().join("hooks"), keep: |_| true }];
//! let snapshot = Snapshot::take(&watches)?;
//!
//! std::fs::write(&config, "[core]\n\tfsmonitor = evil\n")?;
//! std::fs::create_dir(dir.path().join("hooks"))?;
//! std::fs::write(dir.path().join("hooks/pre-commit"), "#!/bin/sh\n")?;
//! let now = Snapshot::take(&watches)?;
//! let changes = snapshot.changes(&now);
//! assert_eq!(changes.len(), 3); // config modified, hooks/ and hooks/pre-commit added
//! assert_eq!(changes[0].kind, ChangeKind::Modified);
//! for change in &changes {
//!     snapshot.restore(&change.path)?;
//! }
//! assert_eq!(std::fs::read_to_string(&config)?, "[core]\n");
//! assert!(!dir.path().join("hooks").exists());
//! assert!(snapshot.changes(&Snapshot::take(&watches)?).is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod changes;
mod error;
mod model;
mod notifier;
mod platform;
mod read;
mod restore;
mod stamp;
mod take;

pub use changes::{Change, ChangeKind};
pub use error::GuardError;
pub use model::{Entry, LARGEST, Snapshot, Watch};
pub use notifier::{Notifier, SWEEP};
pub use read::resolved;
