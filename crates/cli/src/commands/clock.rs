//! The clock a command's seat pauses and stall watchdog read and wait on: the system's, or,
//! where [`TEST_CLOCK`] names a file, the time that file holds, moved by rewriting it.
//!
//! The executor's own tests move a [`ManualClock`] in process; a test of the `epic` binary
//! cannot reach one. With `EPIC_TEST_CLOCK=FILE` the binary's clock is a manual clock set from
//! FILE (an RFC 3339 time) at the start and each time FILE holds another time, so that a test
//! ends a silent turn, or a usage limit's pause, by writing a later time instead of waiting for
//! it. Only what the executor times on its clock follows FILE (see `epic_process::Clock`): a
//! turn's and a gate's deadlines, and the times written to events and reports, stay the
//! system's.

use std::path::{Path, PathBuf};
use std::time::Duration;

use epic_process::{Clock, ManualClock};
use jiff::Timestamp;

use crate::error::{CommandError, Kind, Message};

/// The environment variable naming the file a test moves the clock with.
pub(crate) const TEST_CLOCK: &str = "EPIC_TEST_CLOCK";

/// How often the file is read again: a test waits this long at most for its move to be seen.
const FOLLOW_EVERY: Duration = Duration::from_millis(10);

/// The system's clock, or the test clock [`TEST_CLOCK`] names, followed by a task on
/// `runtime` for as long as the runtime runs.
///
/// # Errors
///
/// Bad input (exit 2) when [`TEST_CLOCK`] names a file that cannot be read or does not hold a
/// time.
pub(crate) fn clock(runtime: &tokio::runtime::Runtime) -> Result<Clock, CommandError> {
    let Some(file) = std::env::var_os(TEST_CLOCK).map(PathBuf::from) else {
        return Ok(Clock::system());
    };
    let (text, start) = read(&file).map_err(|problem| {
        CommandError::new(
            Kind::Input,
            Message::new(format!(
                "{TEST_CLOCK} names {}, which {problem}",
                file.display()
            )),
        )
        .hint(format!(
            "write a time such as 2030-01-01T00:00:00Z there, or unset {TEST_CLOCK} to run on \
             the system's clock"
        ))
    })?;
    let manual = ManualClock::new(start);
    let clock = manual.clock();
    runtime.spawn(follow(file, text, manual));
    Ok(clock)
}

/// Sets `manual` to each new time `file` holds; a read that fails or holds no time (a test
/// rewriting it) is skipped until the next.
async fn follow(file: PathBuf, mut seen: String, manual: ManualClock) {
    loop {
        tokio::time::sleep(FOLLOW_EVERY).await;
        if let Ok((text, time)) = read(&file)
            && text != seen
        {
            manual.set(time);
            seen = text;
        }
    }
}

/// What `file` holds and the time it is.
fn read(file: &Path) -> Result<(String, Timestamp), String> {
    let text = std::fs::read_to_string(file).map_err(|error| format!("cannot be read: {error}"))?;
    let time = text
        .trim()
        .parse::<Timestamp>()
        .map_err(|error| format!("does not hold a time: {error}"))?;
    Ok((text, time))
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "the tests write the clock's file, as a test of the binary does"
)]
mod tests {
    use super::*;

    #[test]
    fn the_file_holds_an_rfc_3339_time() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("clock");
        std::fs::write(&file, "2030-01-01T00:00:00Z\n").unwrap();
        let (_, time) = read(&file).unwrap();
        assert_eq!(time, "2030-01-01T00:00:00Z".parse().unwrap());
        std::fs::write(&file, "tomorrow").unwrap();
        assert!(read(&file).unwrap_err().starts_with("does not hold a time"));
        assert!(
            read(&dir.path().join("missing"))
                .unwrap_err()
                .starts_with("cannot be read")
        );
    }

    #[test]
    fn a_rewritten_file_moves_the_clock() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("clock");
        std::fs::write(&file, "2030-01-01T00:00:00Z").unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let manual = ManualClock::new("2030-01-01T00:00:00Z".parse().unwrap());
        let clock = manual.clock();
        let (text, _) = read(&file).unwrap();
        runtime.spawn(follow(file.clone(), text, manual));
        let later: Timestamp = "2030-01-01T05:00:00Z".parse().unwrap();
        runtime.block_on(async {
            let waiting = clock.wait_until(later);
            std::fs::write(&file, "2030-01-01T05:00:00Z").unwrap();
            tokio::time::timeout(Duration::from_mins(1), waiting)
                .await
                .expect("the clock follows its file");
        });
        assert_eq!(clock.now(), later);
    }
}
