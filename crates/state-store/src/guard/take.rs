//! Taking a snapshot: whole ([`Snapshot::take`]), again reusing the contents of the files that
//! did not change ([`Snapshot::take_again`]), or again reading only what the kernel reported a
//! change for ([`Snapshot::take_notified`]).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Instant;

use super::error::GuardError;
use super::model::{Snapshot, Watch, normalized};
use super::notifier::{Notifier, SWEEP};
use super::read::{Reader, read_watch};
use super::stamp::{RACY_NS, Read, now_ns};

impl Snapshot {
    /// What `watches` hold now. A watched path that is not there is simply absent from it.
    pub fn take(watches: &[Watch]) -> Result<Self, GuardError> {
        Self::take_with(watches, None, RACY_NS, None)
    }

    /// What `watches` hold now, as [`take`](Self::take) finds it, reading again only the files
    /// that changed since this snapshot read them: a file whose device, inode, size, mode,
    /// modification and change times are all as they were (and whose change was not recent when
    /// it was read) keeps the contents this snapshot has. What a guard checks after every turn
    /// costs what changed, not everything it guards.
    pub fn take_again(&self, watches: &[Watch]) -> Result<Self, GuardError> {
        Self::take_with(watches, Some(self), RACY_NS, None)
    }

    /// What `watches` hold now, as [`take`](Self::take) finds it, with `notifier` watching every
    /// directory read (and the directories that hold the watched paths) from before it is read:
    /// the first snapshot [`take_notified`](Self::take_notified) can build on.
    pub fn take_watched(watches: &[Watch], notifier: &mut Notifier) -> Result<Self, GuardError> {
        notifier.swept = Instant::now();
        Self::take_with(watches, None, RACY_NS, Some(notifier))
    }

    /// What `watches` hold now, reading only the paths `notifier` reported an event for since
    /// this snapshot (or the last one taken with it) was taken: a check costs what changed,
    /// however many files are guarded. The kernel queues an event for a change in the system
    /// call that makes it, so every change made before this call is among them. Taken whole
    /// ([`take_again`](Self::take_again)) when events were lost, and at least every
    /// [`SWEEP`] (or twenty times the last whole read, where that is longer): a write through a
    /// shared memory map of a file raises no event, only its times change. Otherwise the
    /// snapshot returned is partial: it holds what was read again, and
    /// [`changes`](Self::changes) and [`take_in`](Self::take_in) work on those parts alone.
    pub fn take_notified(
        &self,
        watches: &[Watch],
        notifier: &mut Notifier,
    ) -> Result<Self, GuardError> {
        let dirty = notifier.drain();
        let lost = std::mem::take(&mut notifier.lost);
        let due = notifier.swept.elapsed() >= notifier.sweep_every;
        let Some(dirty) = dirty.filter(|_| !lost && !due) else {
            // An event during the sweep is the next call's: the sweep may have read it already.
            let started = Instant::now();
            notifier.swept = started;
            let taken = Self::take_with(watches, Some(self), RACY_NS, Some(notifier));
            notifier.sweep_every = SWEEP.max(started.elapsed().saturating_mul(20));
            notifier.lost = taken.is_err();
            return taken;
        };
        let taken = self.take_paths(watches, dirty, notifier);
        notifier.lost = taken.is_err();
        taken
    }

    /// This snapshot with `dirty`, the paths events named, read again.
    pub(super) fn take_paths(
        &self,
        watches: &[Watch],
        dirty: BTreeSet<PathBuf>,
        notifier: &mut Notifier,
    ) -> Result<Self, GuardError> {
        let read_at = Read {
            at: now_ns(),
            racy_ns: RACY_NS,
        };
        let mut now = Self {
            entries: std::collections::BTreeMap::new(),
            partial: None,
        };
        let mut read_again: Vec<PathBuf> = Vec::new();
        let reader = Reader {
            previous: Some(self),
            read_at,
        };
        let (trusted, others): (Vec<_>, Vec<_>) = watches
            .iter()
            .map(|watch| (watch, watch.target()))
            .partition(|(_, target)| notifier.trusted.contains(target));
        for (watch, target) in &others {
            now.forget(target);
            read_watch(watch, target, reader, &mut now, None)?;
            read_again.push(target.clone());
        }
        // In order, so a directory comes before what it holds (read again with it).
        for path in dirty {
            // A directory on the way to a watched path (made, removed, moved): that watch whole.
            for (watch, target) in &trusted {
                if *target != path && target.starts_with(&path) {
                    now.forget(target);
                    notifier.watch_down_to(target);
                    read_watch(watch, target, reader, &mut now, Some(notifier))?;
                    read_again.push(target.clone());
                }
            }
            if let Some((watch, _)) = trusted
                .iter()
                .find(|(watch, target)| watch.covers_from(target, &path))
            {
                now.forget(&path);
                read_watch(watch, &path, reader, &mut now, Some(notifier))?;
                read_again.push(normalized(&path));
            }
        }
        now.partial = Some(read_again);
        Ok(now)
    }

    pub(super) fn take_with(
        watches: &[Watch],
        previous: Option<&Self>,
        racy_ns: i128,
        mut notifier: Option<&mut Notifier>,
    ) -> Result<Self, GuardError> {
        let mut taken = Self::default();
        let reader = Reader {
            previous,
            read_at: Read {
                at: now_ns(),
                racy_ns,
            },
        };
        for watch in watches {
            let target = watch.target();
            // Only the watches the notifier is trusted with are watched (the others are read at
            // every snapshot): from where the path appears, should it be missing now, or goes.
            let mut watching = notifier
                .as_deref_mut()
                .filter(|watcher| watcher.trusted.contains(&target));
            if let Some(watcher) = watching.as_deref_mut() {
                watcher.watch_down_to(&target);
            }
            read_watch(watch, &target, reader, &mut taken, watching)?;
        }
        Ok(taken)
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::Path;

    use super::*;
    use crate::guard::changes::ChangeKind;
    use crate::guard::model::{Entry, bytes_of};
    use crate::guard::platform::mode_of;

    /// Snapshots that stamp every file, however recent its change: what `take` and `take_again`
    /// do with files older than the racy margin, without waiting for one to be.
    fn stamping(watches: &[Watch], previous: Option<&Snapshot>) -> Snapshot {
        Snapshot::take_with(watches, previous, -1_000_000_000_000, None).unwrap()
    }

    #[test]
    fn an_unchanged_stamp_reuses_what_was_read_and_any_change_reads_again() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("state.json");
        fs::write(&file, "{\"a\":1}").unwrap();
        let watches = [Watch::File(file.clone())];
        let mut stored = stamping(&watches, None);
        assert!(stored.stamped(&file));
        // Unchanged on disk: the stored contents are taken as they are, not read again (a
        // stored entry that differs from the file shows which).
        let held = stored.entries.get_mut(bytes_of(&file)).unwrap();
        held.entry = Entry::File {
            mode: mode_of(&fs::metadata(&file).unwrap()),
            contents: b"as stored".as_slice().into(),
        };
        let again = stamping(&watches, Some(&stored));
        assert!(stored.changes(&again).is_empty());

        // Rewritten in place with the same size and its modification time put back, as an agent
        // hiding a change would, within the racy margin of the snapshot (so within one tick of
        // the file times' clock, where even the change time may not move): read again, found.
        let modified = fs::metadata(&file).unwrap().modified().unwrap();
        let stored = Snapshot::take(&watches).unwrap();
        fs::write(&file, "{\"a\":2}").unwrap();
        fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(modified)
            .unwrap();
        let changes = stored.changes(&stored.take_again(&watches).unwrap());
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert_eq!(changes[0].kind, ChangeKind::Modified);

        // Replaced by another file of the same size and times (a new inode): read again, found,
        // however old the stamp.
        let stored = stamping(&watches, None);
        let other = dir.path().join("other.json");
        fs::write(&other, "{\"a\":3}").unwrap();
        fs::File::options()
            .write(true)
            .open(&other)
            .unwrap()
            .set_modified(modified)
            .unwrap();
        fs::rename(&other, &file).unwrap();
        let changes = stored.changes(&stamping(&watches, Some(&stored)));
        assert_eq!(changes.len(), 1, "{changes:?}");
    }

    #[test]
    fn a_recent_change_is_never_stamped_and_is_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("state.json");
        fs::write(&file, "x").unwrap();
        let watches = [Watch::File(file.clone())];
        // Just written: within the racy margin, no stamp; read every time.
        let snapshot = Snapshot::take(&watches).unwrap();
        assert!(!snapshot.stamped(&file));
        let again = snapshot.take_again(&watches).unwrap();
        assert!(!again.stamped(&file));
        // Older than the margin: stamped.
        assert!(stamping(&watches, Some(&snapshot)).stamped(&file));
    }

    /// With a notifier, a check reads what events name: a same-size rewrite with its
    /// modification time put back (which stat data alone cannot tell within the racy margin), a
    /// file in a directory made since, a removal; nothing else changes the snapshot.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_notified_snapshot_reads_what_events_name() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("state");
        fs::create_dir_all(root.join("stories")).unwrap();
        let state = root.join("stories/a.json");
        fs::write(&state, "{\"a\":1}").unwrap();
        fs::write(root.join("gone"), "x").unwrap();
        let config = dir.path().join("config");
        fs::write(&config, "[core]\n").unwrap();
        let watches = [
            Watch::File(config.clone()),
            Watch::Tree {
                root: root.clone(),
                keep: |path| path != Path::new("skipped"),
            },
        ];
        let mut notifier = Notifier::new(std::slice::from_ref(&root)).expect("inotify");
        let mut snapshot = Snapshot::take_watched(&watches, &mut notifier).unwrap();
        let unchanged = snapshot.take_notified(&watches, &mut notifier).unwrap();
        assert!(snapshot.changes(&unchanged).is_empty());
        // In the trusted tree, a path no event named is not read at all (its stored entry, made
        // to differ from the file, stays), however recent its change; the configuration, not
        // trusted to events, is read every time.
        for path in [&state, &config] {
            let held = snapshot.entries.get_mut(bytes_of(path)).unwrap();
            held.entry = Entry::File {
                mode: mode_of(&fs::metadata(path).unwrap()),
                contents: b"as stored".as_slice().into(),
            };
        }
        let unread = snapshot.take_notified(&watches, &mut notifier).unwrap();
        // What was read again is all the partial snapshot holds: taken in, the rest stays.
        assert!(unread.get(&state).is_none() && unread.get(&config).is_some());
        let mut unread_in = snapshot.clone();
        unread_in.take_in(unread);
        let stored = |snapshot: &Snapshot, path: &Path| matches!(snapshot.get(path), Some(Entry::File { contents, .. }) if &contents[..] == b"as stored");
        assert!(stored(&unread_in, &state));
        assert!(!stored(&unread_in, &config));
        let snapshot = Snapshot::take_watched(&watches, &mut notifier).unwrap();

        let modified = fs::metadata(&state).unwrap().modified().unwrap();
        fs::write(&state, "{\"a\":2}").unwrap();
        fs::File::options()
            .write(true)
            .open(&state)
            .unwrap()
            .set_modified(modified)
            .unwrap();
        fs::create_dir_all(root.join("gates/deep")).unwrap();
        fs::write(root.join("gates/deep/new"), "n").unwrap();
        fs::remove_file(root.join("gone")).unwrap();
        fs::write(root.join("skipped"), "not watched").unwrap();
        fs::write(dir.path().join("beside-config"), "not watched").unwrap();
        let now = snapshot.take_notified(&watches, &mut notifier).unwrap();
        let changes: Vec<(PathBuf, ChangeKind)> = snapshot
            .changes(&now)
            .into_iter()
            .map(|change| (change.path, change.kind))
            .collect();
        assert_eq!(
            changes,
            [
                (root.join("gates"), ChangeKind::Added),
                (root.join("gates/deep"), ChangeKind::Added),
                (root.join("gates/deep/new"), ChangeKind::Added),
                (root.join("gone"), ChangeKind::Removed),
                (state.clone(), ChangeKind::Modified),
            ]
        );
        // Taken in, what a full read finds, and the events of the new directory are watched too.
        let mut now_in = snapshot.clone();
        now_in.take_in(now);
        let now = now_in;
        assert_eq!(now, Snapshot::take(&watches).unwrap());
        fs::write(root.join("gates/deep/new"), "changed").unwrap();
        let later = now.take_notified(&watches, &mut notifier).unwrap();
        assert_eq!(now.changes(&later).len(), 1);
        fs::write(&config, "[core]\n\tfsmonitor = evil\n").unwrap();
        let last = later.take_notified(&watches, &mut notifier).unwrap();
        assert_eq!(later.changes(&last)[0].path, config);
    }

    /// A tree whose root and the directories above it are made after the first snapshot: its
    /// files are found by the next notified snapshot, and later changes in it too.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_tree_made_after_the_first_snapshot_is_found_through_its_parents() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("epic/e");
        let watches = [Watch::Tree {
            root: root.clone(),
            keep: |_| true,
        }];
        let mut notifier = Notifier::new(std::slice::from_ref(&root)).expect("inotify");
        let snapshot = Snapshot::take_watched(&watches, &mut notifier).unwrap();
        assert_eq!(snapshot.paths().count(), 0);
        fs::create_dir_all(root.join("stories")).unwrap();
        fs::write(root.join("stories/a.json"), "{}").unwrap();
        let now = snapshot.take_notified(&watches, &mut notifier).unwrap();
        assert_eq!(now, Snapshot::take(&watches).unwrap());
        assert!(now.get(&root.join("stories/a.json")).is_some());
        fs::write(root.join("stories/a.json"), "forged").unwrap();
        let later = now.take_notified(&watches, &mut notifier).unwrap();
        assert_eq!(now.changes(&later).len(), 1);
    }
}
