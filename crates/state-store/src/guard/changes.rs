//! Comparing snapshots: every path that differs between two ([`Snapshot::changes`], each a
//! [`Change`]), and a path's difference taken in, so that it no longer counts as a change
//! ([`Snapshot::absorb`], [`Snapshot::absorb_tree`]).

use std::path::{Path, PathBuf};

use super::model::{Held, Key, Snapshot, bytes_of, normalized};

/// How a path differs from its snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// It was not there.
    Added,
    /// It is no longer there.
    Removed,
    /// Its contents, mode, link target or type changed.
    Modified,
}

impl ChangeKind {
    /// `added`, `removed`, `modified`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "added",
            Self::Removed => "removed",
            Self::Modified => "modified",
        }
    }
}

/// One path that differs between two snapshots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The path.
    pub path: PathBuf,
    /// How it differs.
    pub kind: ChangeKind,
}

impl Snapshot {
    /// Every path that differs between this snapshot and `now`, in order. Where `now` was read
    /// again only in part (by [`take_notified`](Snapshot::take_notified)), only those parts are
    /// compared.
    pub fn changes(&self, now: &Self) -> Vec<Change> {
        let Some(roots) = now.roots() else {
            return compare(self.entries.iter(), now.entries.iter());
        };
        let mut changes = Vec::new();
        for root in roots {
            changes.extend(compare(self.range_of(&root), now.range_of(&root)));
        }
        changes
    }

    /// The roots of a partial snapshot's ranges in order, none under another; `None` for a
    /// whole one.
    fn roots(&self) -> Option<Vec<PathBuf>> {
        let mut roots = self.partial.clone()?;
        roots.sort_by(|a, b| bytes_of(a).cmp(bytes_of(b)));
        let mut kept: Vec<PathBuf> = Vec::with_capacity(roots.len());
        for root in roots {
            if !kept.last().is_some_and(|last| root.starts_with(last)) {
                kept.push(root);
            }
        }
        Some(kept)
    }

    /// `path` and everything under it, in order.
    fn range_of<'a>(&'a self, path: &Path) -> impl Iterator<Item = (&'a Key, &'a Held)> {
        let own = self.entries.get_key_value(bytes_of(path));
        own.into_iter().chain(self.range_under(path))
    }

    /// Whether `now` read `path` (normalized) again: a whole snapshot, or `path` is in one of
    /// its parts.
    fn covers(&self, path: &Path) -> bool {
        self.partial
            .as_ref()
            .is_none_or(|roots| roots.iter().any(|root| path.starts_with(root)))
    }

    /// Takes `now`, a snapshot taken again from this one, as this one: all of it, or, for a
    /// partial one, the parts it read again (everything else is as this one holds it).
    pub fn take_in(&mut self, now: Self) {
        let Some(roots) = now.roots() else {
            *self = now;
            return;
        };
        for root in &roots {
            self.forget(root);
        }
        self.entries.extend(now.entries);
    }

    /// Takes into this snapshot what `now` holds for `path` (there or not): how a caller records
    /// its own write of a path, so that it does not count as a change. Nothing, where `now`
    /// did not read `path` again.
    pub fn absorb(&mut self, now: &Self, path: &Path) {
        let path = normalized(path);
        if !now.covers(&path) {
            return;
        }
        match now.entries.get(bytes_of(&path)) {
            Some(held) => {
                self.entries.insert(Key(path), held.clone());
            }
            None => {
                self.entries.remove(bytes_of(&path));
            }
        }
    }

    /// Takes into this snapshot what `now` holds for `dir` and everything under it (of a
    /// partial `now`, the parts of it that it read again).
    pub fn absorb_tree(&mut self, now: &Self, dir: &Path) {
        let dir = normalized(dir);
        if !now.covers(&dir) {
            for root in now.roots().unwrap_or_default() {
                if root.starts_with(&dir) {
                    self.absorb_tree(now, &root);
                }
            }
            return;
        }
        self.forget(&dir);
        self.absorb(now, &dir);
        for (key, held) in now.range_under(&dir) {
            self.entries.insert(key.clone(), held.clone());
        }
    }
}

/// Every path that differs between `before` and `after` (each in order), in order.
fn compare<'a>(
    before: impl Iterator<Item = (&'a Key, &'a Held)>,
    after: impl Iterator<Item = (&'a Key, &'a Held)>,
) -> Vec<Change> {
    let mut changes = Vec::new();
    let mut before = before.peekable();
    let mut after = after.peekable();
    loop {
        let (key, kind) = match (before.peek(), after.peek()) {
            (None, None) => break,
            (Some((key, _)), None) => {
                let change = (*key, ChangeKind::Removed);
                before.next();
                change
            }
            (None, Some((key, _))) => {
                let change = (*key, ChangeKind::Added);
                after.next();
                change
            }
            (Some((old_key, old)), Some((new_key, new))) => match old_key.cmp(new_key) {
                std::cmp::Ordering::Less => {
                    let change = (*old_key, ChangeKind::Removed);
                    before.next();
                    change
                }
                std::cmp::Ordering::Greater => {
                    let change = (*new_key, ChangeKind::Added);
                    after.next();
                    change
                }
                std::cmp::Ordering::Equal => {
                    let (key, same) = (*old_key, old.entry == new.entry);
                    before.next();
                    after.next();
                    if same {
                        continue;
                    }
                    (key, ChangeKind::Modified)
                }
            },
        };
        changes.push(Change {
            path: key.0.clone(),
            kind,
        });
    }
    changes
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::guard::model::Watch;

    #[test]
    fn absorb_takes_only_the_selected_paths() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        let watches = [Watch::File(a.clone()), Watch::File(b.clone())];
        let mut snapshot = Snapshot::take(&watches).unwrap();
        fs::write(&a, "1").unwrap();
        fs::write(&b, "2").unwrap();
        let now = Snapshot::take(&watches).unwrap();
        // Spelled otherwise, the same path.
        snapshot.absorb(&now, &dir.path().join(".//a"));
        let changes = snapshot.changes(&now);
        assert_eq!(
            changes,
            [Change {
                path: b,
                kind: ChangeKind::Added
            }]
        );
        assert!(snapshot.get(&a).is_some());
    }

    /// Everything under a directory is one range of keys, whatever sorts between the directory
    /// and its first child (`d-x`, `d.x` come before `d/` byte for byte).
    #[test]
    fn absorb_tree_takes_a_directory_and_all_under_it_and_nothing_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        fs::create_dir_all(root.join("d/e")).unwrap();
        fs::write(root.join("d-x"), "beside").unwrap();
        fs::write(root.join("d.x"), "beside").unwrap();
        fs::write(root.join("d/e/f"), "under").unwrap();
        let watches = [Watch::Tree {
            root: root.clone(),
            keep: |_| true,
        }];
        let mut snapshot = Snapshot::take(&watches).unwrap();
        fs::write(root.join("d-x"), "changed").unwrap();
        fs::write(root.join("d.x"), "changed").unwrap();
        fs::remove_file(root.join("d/e/f")).unwrap();
        fs::write(root.join("d/g"), "added").unwrap();
        fs::write(root.join("d0"), "added").unwrap();
        let now = Snapshot::take(&watches).unwrap();
        assert_eq!(
            now.paths_under(&root.join("d"))
                .map(|path| path.strip_prefix(&root).unwrap().to_owned())
                .collect::<Vec<_>>(),
            [PathBuf::from("d/e"), PathBuf::from("d/g")]
        );
        snapshot.absorb_tree(&now, &root.join("d"));
        let changed: Vec<PathBuf> = snapshot
            .changes(&now)
            .into_iter()
            .map(|change| change.path.strip_prefix(&root).unwrap().to_owned())
            .collect();
        assert_eq!(
            changed,
            [
                PathBuf::from("d-x"),
                PathBuf::from("d.x"),
                PathBuf::from("d0")
            ]
        );
    }
}
