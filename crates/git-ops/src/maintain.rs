//! Packing the repository at a moment epic chooses, instead of whenever git's automatic
//! maintenance would.
//!
//! Every git epic runs has automatic maintenance off (`cli`'s `MAINTENANCE_OFF`), and so have
//! the agents, gates and setup commands it starts: a `git gc --auto` set off by one of dozens of
//! commits would repack the user's repository in the background while turns run. But every
//! story's commits, merges and notes add loose objects, and a long epic (or many epics) would grow
//! them without bound. So epic makes git's own check itself, once, where nothing else of its
//! runs, in process (no git process in the common case, a repository below the threshold), and
//! past the repository's threshold (`gc.auto`, 6,700 loose objects unless configured; `gc.auto=0`
//! turns it off here too) runs `git gc --auto` in the foreground.

use std::ffi::OsStr;
use std::path::Path;

use crate::error::GitCommandError;
use crate::types::Packed;
use crate::{Git as _, GixGit};

/// git's `gc.auto` when the configuration does not set it.
const DEFAULT_GC_AUTO: i64 = 6_700;

/// `git gc --auto` in the foreground, with the loose objects counted before and after, where
/// git's own estimate puts the repository past its `gc.auto` threshold; `None` (and no git
/// process at all, the common case) where it does not.
///
/// The estimate is git's (`too_many_loose_objects` in `builtin/gc.c`): the loose objects in
/// `objects/17/` against `gc.auto` / 256, rounded up. git's other reason to pack, more packs than
/// `gc.autoPackLimit`, is not epic's doing (epic writes loose objects only) and is left to the
/// user's git.
pub(crate) fn maintain(git: &GixGit) -> Result<Option<Packed>, GitCommandError> {
    let threshold = git
        .main_repo()
        .config_snapshot()
        .integer("gc.auto")
        .unwrap_or(DEFAULT_GC_AUTO);
    let objects = git.common_dir().join("objects");
    if threshold <= 0 || loose_in(&objects.join("17")) <= threshold.unsigned_abs().div_ceil(256) {
        return Ok(None);
    }
    let dir = git.main_worktree().unwrap_or(git.common_dir());
    let before = loose(&objects);
    let args = [
        "-c",
        "gc.autoDetach=false",
        "-c",
        "maintenance.autoDetach=false",
        "gc",
        "--auto",
        "--quiet",
    ]
    .map(OsStr::new);
    git.cli.run_maintenance(dir, &args)?;
    Ok(Some(Packed {
        loose_before: before,
        loose_after: loose(&objects),
    }))
}

/// The loose objects under `objects`: those of its 256 fan-out directories.
fn loose(objects: &Path) -> u64 {
    (0..=255u8)
        .map(|byte| loose_in(&objects.join(format!("{byte:02x}"))))
        .sum()
}

/// The loose objects in one fan-out directory: its entries named by the 38 hex digits of the
/// rest of an object id (git's count skips anything else, such as a temporary file); 0 where
/// it cannot be read.
fn loose_in(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map_or(0, |entries| {
            entries
                .filter_map(Result::ok)
                .filter(|entry| {
                    let name = entry.file_name();
                    let name = name.as_encoded_bytes();
                    name.len() == 38 && name.iter().all(u8::is_ascii_hexdigit)
                })
                .count()
        })
        .try_into()
        .unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::{loose, loose_in};

    #[test]
    fn loose_objects_are_the_object_named_files_of_the_fan_out_directories() {
        let objects = tempfile::tempdir().expect("a temporary directory");
        let seventeen = objects.path().join("17");
        std::fs::create_dir_all(&seventeen).expect("objects/17");
        std::fs::create_dir_all(objects.path().join("ab")).expect("objects/ab");
        for name in [
            "0123456789abcdef0123456789abcdef012345",
            "fedcba9876543210fedcba9876543210fedcba",
        ] {
            std::fs::write(seventeen.join(name), "").expect("a loose object");
        }
        std::fs::write(seventeen.join("tmp_obj_XXXX"), "").expect("a temporary file");
        std::fs::write(
            objects
                .path()
                .join("ab/0123456789abcdef0123456789abcdef012345"),
            "",
        )
        .expect("another loose object");
        assert_eq!(loose_in(&seventeen), 2);
        assert_eq!(loose_in(&objects.path().join("cd")), 0);
        assert_eq!(loose(objects.path()), 3);
    }
}
