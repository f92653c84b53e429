//! What can go wrong taking a snapshot or putting a path back ([`GuardError`]).

use std::io;
use std::path::PathBuf;

#[cfg(doc)]
use super::model::Snapshot;

/// An error returned by [`Snapshot::take`] and [`Snapshot::restore`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GuardError {
    /// A watched path could not be read.
    #[error("failed to read `{}`", path.display())]
    Read {
        /// The path.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// A path could not be put back as the snapshot has it.
    #[error("failed to restore `{}`", path.display())]
    Restore {
        /// The path.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}
