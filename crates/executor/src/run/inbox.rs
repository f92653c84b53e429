//! The run's ear on the inbox: a thread that hands the loop every command people give the epic
//! (`epic answer`, `tell`, `stop`, `retry`) as it arrives, woken by the kernel's notification
//! of the new file (`epic-watch`), not by a timer. Each command goes to the loop once; the loop
//! removes or holds its file once its effect is recorded (`epic_state_store::inbox`).

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use epic_state_store::EpicDir;
use epic_state_store::inbox::{self, Sent, Unreadable};
use epic_watch::Watcher;
use tokio::sync::mpsc;

/// How long the thread waits for a notification before it looks whether the run ended: what
/// a run's end may take more, never how soon a command is seen. Where the platform has no
/// notifications, it is also how often the inbox is read.
const LISTEN: Duration = Duration::from_millis(250);

/// What the inbox gave: a command, or a file that is none.
#[derive(Debug)]
pub(super) enum Taken {
    /// A command, in the order given.
    Command(Sent),
    /// A file of the inbox that is not a command epic can read.
    Unreadable(Unreadable),
}

/// The thread reading the inbox, and what it hands on. Dropped, the thread ends within
/// [`LISTEN`].
#[derive(Debug)]
pub(super) struct InboxReader {
    taken: mpsc::UnboundedReceiver<Taken>,
    stop: Arc<AtomicBool>,
}

impl InboxReader {
    /// Starts reading `dir`'s inbox; the commands in `seen` (ids, or the paths of unreadable
    /// files) were handed on already and are not again.
    pub(super) fn start(dir: EpicDir, mut seen: HashSet<String>) -> Self {
        let (sender, taken) = mpsc::unbounded_channel();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let spawned = std::thread::Builder::new()
            .name("epic-inbox".to_owned())
            .spawn(move || {
                inbox::prepare(&dir).ok();
                let watcher = Watcher::new();
                let listening = watcher
                    .as_ref()
                    .and_then(|watcher| watcher.watch(&dir.inbox()))
                    .is_some();
                while !stopped.load(Ordering::Relaxed) && !sender.is_closed() {
                    for taken in new_commands(&dir, &mut seen) {
                        sender.send(taken).ok();
                    }
                    match watcher.as_ref().filter(|_| listening) {
                        Some(watcher) => {
                            if watcher.wait(Some(LISTEN)) {
                                watcher.drain();
                            }
                        }
                        None => std::thread::sleep(LISTEN),
                    }
                }
            });
        if spawned.is_err() {
            // No thread: commands wait in the inbox for the next run, which reads them first.
            stop.store(true, Ordering::Relaxed);
        }
        Self { taken, stop }
    }

    /// The next command; pending forever once the thread is gone.
    pub(super) async fn next(&mut self) -> Taken {
        match self.taken.recv().await {
            Some(taken) => taken,
            None => std::future::pending().await,
        }
    }
}

impl Drop for InboxReader {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The commands of `dir`'s inbox not in `seen`, which takes them in.
pub(super) fn new_commands(dir: &EpicDir, seen: &mut HashSet<String>) -> Vec<Taken> {
    let Ok(waiting) = inbox::waiting(dir) else {
        return Vec::new();
    };
    waiting
        .into_iter()
        .filter_map(|taken| match taken {
            Ok(sent) => seen.insert(sent.id.clone()).then_some(Taken::Command(sent)),
            Err(unreadable) => seen
                .insert(unreadable.path.display().to_string())
                .then_some(Taken::Unreadable(unreadable)),
        })
        .collect()
}
