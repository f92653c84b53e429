//! Undoing a change: a path put back as a snapshot has it ([`Snapshot::restore`]).

use std::fs;
use std::io;
use std::path::Path;

use super::error::GuardError;
use super::model::{Entry, Snapshot};
use super::platform::{set_mode, symlink};
use crate::atomic::{sync_dir, write_atomic};

impl Snapshot {
    /// Puts `path` back as this snapshot has it: a file's contents and mode (written
    /// atomically), a directory (with its mode), a symbolic link; a path the snapshot does not
    /// have is removed, with everything under it. Missing parent directories are created.
    pub fn restore(&self, path: &Path) -> Result<(), GuardError> {
        let fail = |source| GuardError::Restore {
            path: path.to_path_buf(),
            source,
        };
        let expected = self.get(path);
        if let Some(Entry::Large { len, .. }) = expected {
            return Err(fail(io::Error::other(format!(
                "it held {len} bytes, more than a snapshot keeps; left as it is"
            ))));
        }
        let current = fs::symlink_metadata(path);
        // Whatever is there and is not of the expected type goes first.
        if let Ok(metadata) = &current {
            let keep = match expected {
                Some(Entry::Dir { .. }) => metadata.is_dir(),
                Some(Entry::File { .. }) => metadata.is_file(),
                _ => false,
            };
            if !keep {
                if metadata.is_dir() {
                    fs::remove_dir_all(path).map_err(fail)?;
                } else {
                    fs::remove_file(path).map_err(fail)?;
                }
                if let Some(parent) = path.parent() {
                    sync_dir(parent).map_err(fail)?;
                }
            }
        }
        match expected {
            // A Large entry was refused above, before anything was touched.
            None | Some(Entry::Large { .. }) => Ok(()),
            Some(Entry::Dir { mode }) => {
                fs::create_dir_all(path).map_err(fail)?;
                set_mode(path, *mode).map_err(fail)
            }
            Some(Entry::File { mode, contents }) => {
                write_atomic(path, contents)
                    .map_err(|error| fail(io::Error::other(error.to_string())))?;
                set_mode(path, *mode).map_err(fail)
            }
            Some(Entry::Link { target }) => {
                if let Some(parent) = path.parent() {
                    fs::create_dir_all(parent).map_err(fail)?;
                }
                symlink(target, path).map_err(fail)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::guard::changes::ChangeKind;
    use crate::guard::model::{LARGEST, Watch};

    #[test]
    fn a_tree_is_restored_with_modes_links_and_removals() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("hooks");
        fs::create_dir(&root).unwrap();
        fs::write(root.join("post-commit"), "#!/bin/sh\n").unwrap();
        set_mode(&root.join("post-commit"), 0o755).unwrap();
        symlink(Path::new("post-commit"), &root.join("link")).unwrap();
        let watches = [Watch::Tree {
            root: root.clone(),
            keep: |path| path != Path::new("skipped"),
        }];
        let snapshot = Snapshot::take(&watches).unwrap();

        fs::write(root.join("post-commit"), "#!/bin/sh\nevil\n").unwrap();
        fs::remove_file(root.join("link")).unwrap();
        fs::create_dir(root.join("link")).unwrap();
        fs::create_dir_all(root.join("new/deeper")).unwrap();
        fs::write(root.join("skipped"), "not watched").unwrap();
        let now = Snapshot::take(&watches).unwrap();
        let changes = snapshot.changes(&now);
        let kinds: Vec<_> = changes
            .iter()
            .map(|change| {
                (
                    change.path.strip_prefix(&root).unwrap().to_owned(),
                    change.kind,
                )
            })
            .collect();
        assert_eq!(
            kinds,
            [
                (PathBuf::from("link"), ChangeKind::Modified),
                (PathBuf::from("new"), ChangeKind::Added),
                (PathBuf::from("new/deeper"), ChangeKind::Added),
                (PathBuf::from("post-commit"), ChangeKind::Modified),
            ]
        );
        for change in &changes {
            snapshot.restore(&change.path).unwrap();
        }
        assert_eq!(snapshot, Snapshot::take(&watches).unwrap());
        assert_eq!(
            fs::read_link(root.join("link")).unwrap(),
            Path::new("post-commit")
        );
        assert!(root.join("skipped").exists(), "not watched, not touched");
    }

    #[test]
    fn a_huge_file_is_not_read_and_its_removal_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big");
        let file = fs::File::create(&big).unwrap();
        file.set_len(LARGEST + 1).unwrap();
        let watches = [Watch::File(big.clone())];
        let snapshot = Snapshot::take(&watches).unwrap();
        assert!(
            matches!(snapshot.get(&big), Some(Entry::Large { len, .. }) if *len == LARGEST + 1)
        );
        fs::remove_file(&big).unwrap();
        let changes = snapshot.changes(&Snapshot::take(&watches).unwrap());
        assert_eq!(changes.len(), 1);
        assert!(snapshot.restore(&big).is_err());
    }
}
