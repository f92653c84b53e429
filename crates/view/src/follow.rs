//! Changes to an epic's state followed by kernel notification (`epic-watch`): the state
//! directory, its `stories/` and `transcripts/` and each story's transcripts, watched as they
//! appear, so the view reads the state again only when something changed.

use std::time::Duration;

use epic_state_store::EpicDir;
use epic_watch::{Change, Watcher};

/// The epic's state directory watched.
#[derive(Debug)]
pub struct Follow {
    watcher: Option<Watcher>,
    dir: EpicDir,
}

impl Follow {
    /// Follows the state of the epic `dir`. Without a watcher (another platform, no inotify
    /// instance left) [`Follow::wait`] waits out its limit and says something may have changed.
    pub fn new(dir: &EpicDir) -> Self {
        let follow = Self {
            watcher: Watcher::new(),
            dir: dir.clone(),
        };
        follow.watch_all();
        follow
    }

    /// Watches every directory the view reads (again: a watch is given once per directory).
    fn watch_all(&self) {
        let Some(watcher) = &self.watcher else {
            return;
        };
        let transcripts = self.dir.transcripts_dir();
        let mut dirs = vec![
            self.dir.root().to_path_buf(),
            self.dir.stories_dir(),
            transcripts.clone(),
        ];
        if let Ok(entries) = std::fs::read_dir(&transcripts) {
            dirs.extend(entries.filter_map(Result::ok).map(|entry| entry.path()));
        }
        for dir in dirs.iter().filter(|dir| dir.is_dir()) {
            watcher.watch(dir);
        }
    }

    /// Waits up to `limit` for a change; whether one came (or, without a watcher, may have).
    pub fn wait(&self, limit: Duration) -> bool {
        let Some(watcher) = &self.watcher else {
            std::thread::sleep(limit);
            return true;
        };
        if !watcher.wait(Some(limit)) {
            return false;
        }
        let events = watcher.drain();
        // A directory that appeared (the state's first `stories/`, a story's transcripts) is
        // watched from now on; an overflow or an unreadable queue counts as a change.
        if events.as_ref().is_none_or(|events| {
            events
                .iter()
                .any(|event| event.is_dir || matches!(event.change, Change::Overflow))
        }) {
            self.watch_all();
        }
        true
    }
}
