//! A child process epic talks to while it runs ([`spawn_interactive`]): the same process group,
//! run tag and killing as [`run`](crate::run), with its standard input, output and error left to
//! the caller, for an agent that speaks a protocol over its stdio (an `acp:` seat).

use std::io;

use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};

use crate::process::{GroupGuard, Spec, TAG_VARIABLE, command, new_tag};

/// A running child in its own process group, its pipes for the caller to take. Its whole group,
/// and every process carrying its run's tag, is killed by [`Group::kill`] or when the
/// [`group`](Self::group) is dropped, however the conversation with it ended.
#[derive(Debug)]
pub struct Interactive {
    /// The child (the group's leader): wait on it for its exit status.
    pub child: Child,
    /// Its standard input.
    pub stdin: ChildStdin,
    /// Its standard output.
    pub stdout: ChildStdout,
    /// Its standard error.
    pub stderr: ChildStderr,
    /// Kills the group when told or dropped.
    pub group: Group,
}

/// The process group of an [`Interactive`] child: killed, with every process tagged as its
/// run's, by [`kill`](Self::kill) or when dropped.
#[derive(Debug)]
#[must_use = "the process group dies when this is dropped"]
pub struct Group(GroupGuard);

impl Group {
    /// Kills the process group and every process tagged as this run's (again: a no-op).
    pub fn kill(&mut self) {
        self.0.kill();
    }
}

/// Starts `spec` as the leader of a new process group with all three standard streams piped
/// (`spec.stdin` is not written: the caller writes what it wants), tagged as one run
/// ([`TAG_VARIABLE`]) so that what leaves the group dies with it too.
///
/// # Errors
///
/// The process could not be started, or a pipe is missing.
pub fn spawn_interactive(spec: &Spec) -> io::Result<Interactive> {
    let tag = new_tag(spec);
    let mut child = command(spec)
        .stdin(std::process::Stdio::piped())
        .env(TAG_VARIABLE, &tag)
        .spawn()?;
    let group = Group(GroupGuard::of(&child, &tag));
    let missing = || io::Error::other("a piped stream of the child is missing");
    let stdin = child.stdin.take().ok_or_else(missing)?;
    let stdout = child.stdout.take().ok_or_else(missing)?;
    let stderr = child.stderr.take().ok_or_else(missing)?;
    Ok(Interactive {
        child,
        stdin,
        stdout,
        stderr,
        group,
    })
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt as _;

    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

    use super::*;

    #[tokio::test]
    async fn a_child_answers_line_by_line_and_dies_with_its_group() {
        let spec = Spec {
            program: "sh".into(),
            args: vec![
                "-c".into(),
                "while read line; do echo \"got $line\"; done; sleep 1000".into(),
            ],
            cwd: std::env::temp_dir(),
            env: Vec::new(),
            stdin: None,
        };
        let mut child = spawn_interactive(&spec).expect("starts");
        child.stdin.write_all(b"one\n").await.expect("writes");
        let mut lines = BufReader::new(&mut child.stdout).lines();
        let line = lines.next_line().await.expect("reads");
        assert_eq!(line.as_deref(), Some("got one"));
        child.group.kill();
        let status = child.child.wait().await.expect("reaped");
        assert_eq!(status.signal(), Some(9), "{status:?}");
    }
}
