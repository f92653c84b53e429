//! Packing the repository at a moment epic chooses, instead of whenever git's automatic
//! maintenance would.
//!
//! Every git epic runs has automatic maintenance off (`cli`'s `MAINTENANCE_OFF`), and so have
//! the agents, gates and setup commands it starts: a `git gc --auto` set off by one of dozens of
//! commits would repack the user's repository in the background while turns run. But every
//! story's commits, merges and notes add loose objects, and a long epic (or many epics) would grow
//! them without bound. So epic runs git's own check itself, once, where nothing else of its runs:
//! `git gc --auto`, with the repository's thresholds (`gc.auto`, 6,700 loose objects unless
//! configured; `gc.auto=0` turns it off here too), in the foreground.

use std::ffi::OsStr;

use crate::error::GitCommandError;
use crate::types::Packed;
use crate::{Git as _, GixGit};

/// `git gc --auto` in the foreground, with the loose objects counted before and after.
pub(crate) fn maintain(git: &GixGit) -> Result<Packed, GitCommandError> {
    let dir = git.main_worktree().unwrap_or(git.common_dir());
    let loose = || -> Result<u64, GitCommandError> {
        let args = ["count-objects", "-v"].map(OsStr::new);
        let output = git.cli.run(dir, &args)?;
        Ok(loose_count(&String::from_utf8_lossy(&output.stdout)))
    };
    let before = loose()?;
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
    Ok(Packed {
        loose_before: before,
        loose_after: loose()?,
    })
}

/// The `count:` line of `git count-objects -v`: the loose objects (0 where it is missing).
fn loose_count(listing: &str) -> u64 {
    listing
        .lines()
        .find_map(|line| line.strip_prefix("count:"))
        .and_then(|count| count.trim().parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::loose_count;

    #[test]
    fn the_loose_objects_are_read_from_count_objects() {
        let listing = "count: 6712\nsize: 27000\nin-pack: 12\npacks: 1\nsize-pack: 3\n\
                       prune-packable: 0\ngarbage: 0\nsize-garbage: 0\n";
        assert_eq!(loose_count(listing), 6712);
        assert_eq!(loose_count(""), 0);
    }
}
