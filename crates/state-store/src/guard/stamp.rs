//! How a regular file looked when its contents were read ([`Stamp`]): a snapshot taken again
//! reuses the contents of a file whose stamp is unchanged. And when a snapshot reads ([`Read`]),
//! as the racy-file rule needs it.

use std::fs;

/// How a regular file looked (device, inode, size, mode, modification and change times) when
/// its contents were read. Any write, rename, `chmod` or `touch` moves the change time to the
/// current time, and no one but root can set it back; so a file whose stamp is unchanged holds
/// what was read. As git's racy-file rule has it, a file changed within [`RACY_NS`] of the read
/// gets no stamp (it could change again within the same clock tick, its stamp unchanged), and is
/// read every time until it is older.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stamp {
    pub(super) dev: u64,
    pub(super) ino: u64,
    pub(super) len: u64,
    pub(super) mode: u32,
    pub(super) mtime: i128,
    pub(super) ctime: i128,
}

/// How recent a change keeps a file from being stamped: 2 s, far above the coarsest clock tick
/// of file times.
pub(super) const RACY_NS: i128 = 2_000_000_000;

impl Stamp {
    /// The stamp of `metadata`, read at `read_at` (nanoseconds since the epoch); `None` when
    /// the file changed within `racy_ns` of it, too recently to trust one, or on a platform
    /// without change times.
    #[cfg(unix)]
    pub(super) fn of(metadata: &fs::Metadata, read_at: i128, racy_ns: i128) -> Option<Self> {
        use std::os::unix::fs::MetadataExt as _;
        let ns = |seconds: i64, nanos: i64| i128::from(seconds) * 1_000_000_000 + i128::from(nanos);
        let ctime = ns(metadata.ctime(), metadata.ctime_nsec());
        (ctime < read_at - racy_ns).then(|| Self {
            dev: metadata.dev(),
            ino: metadata.ino(),
            len: metadata.size(),
            mode: metadata.mode(),
            mtime: ns(metadata.mtime(), metadata.mtime_nsec()),
            ctime,
        })
    }

    #[cfg(not(unix))]
    pub(super) fn of(_metadata: &fs::Metadata, _read_at: i128, _racy_ns: i128) -> Option<Self> {
        None
    }
}

/// When a snapshot reads, and how recent a change keeps a file from being stamped.
#[derive(Debug, Clone, Copy)]
pub(super) struct Read {
    pub(super) at: i128,
    pub(super) racy_ns: i128,
}

/// Now, in nanoseconds since the epoch (0 for a clock before it: nothing is stamped then).
pub(super) fn now_ns() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| i128::try_from(since.as_nanos()).unwrap_or(0))
}
