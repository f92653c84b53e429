//! Running one child process (an agent turn, a gate) in its own process group, under a deadline
//! and a cancellation token, with its output streamed and kept in bounded memory.
//!
//! Every process starts as the leader of a new process group (`process_group(0)`), and the whole
//! group is sent `SIGKILL` when the run ends, however it ends: at the deadline, on cancellation,
//! when the future is dropped ([`GroupGuard`]), and also after a normal exit, so a background
//! child the agent forked (`sleep 1000 &`) dies with the turn.
//!
//! A process that leaves the group (`setsid`, as a daemonising dev server does) is found by the
//! tag every process of the run inherits in its environment, [`TAG_VARIABLE`]: when the group is
//! killed, every process whose environment carries the run's tag is killed too (read from
//! `/proc`, so on Linux). Only a process that also clears its environment escapes that; a PID
//! namespace (the sandbox) is what stops it, and without the sandbox a run adopts orphans
//! ([`adopt_orphans`]) and kills those that escaped ([`kill_orphans`]). Reading the output of an
//! escaped process is given up after a short grace period, so it cannot hold a turn open.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::process::{Pid, Signal, kill_process, kill_process_group};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::process::Command;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use epic_git_ops::MAINTENANCE_OFF;

use crate::bounded::{BoundedText, Utf8Decoder};
use crate::clock::Clock;

/// How long output is still read after the process exited and its group was killed: only a
/// process that left the group can hold the pipes open that long.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// What to run.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The program: a path, or a name looked up on `PATH` (the child's, if `env` sets it).
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Its working directory.
    pub cwd: PathBuf,
    /// Variables set (`Some`) or removed (`None`) on top of this process's environment.
    pub env: Vec<(OsString, Option<OsString>)>,
    /// Written to its standard input, which is then closed; `None`: standard input is null.
    pub stdin: Option<Vec<u8>>,
}

/// How much output is kept in memory: head and tail bytes of each stream.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub stdout_head: usize,
    pub stdout_tail: usize,
    pub stderr_tail: usize,
}

/// How the run ended.
#[derive(Debug, Clone, Copy)]
pub enum Ending {
    /// The process exited by itself.
    Exited(ExitStatus),
    /// The deadline passed; the group was killed.
    TimedOut,
    /// The token was cancelled; the group was killed.
    Cancelled,
    /// The process printed nothing, on standard output or standard error, for the
    /// [`Watchdog`]'s silence; the group was killed.
    Stalled,
}

/// Ends a run that prints nothing for `silence` ([`Ending::Stalled`]), as its deadline ends it:
/// an agent whose tool hangs or whose model stopped answering mid-stream, which would otherwise
/// hold its turn until the deadline.
///
/// The silence is measured on `clock`, so that a test moves a
/// [`ManualClock`](crate::ManualClock) past it instead of waiting; any bytes on either stream
/// start it again.
#[derive(Debug, Clone)]
pub struct Watchdog {
    /// How long the process may print nothing.
    pub silence: Duration,
    /// What the silence is measured on.
    pub clock: Clock,
}

impl Watchdog {
    /// When a process that prints nothing from now on has been silent too long (never without
    /// a watchdog). Taken before a process starts, so that a test that sees it run and moves a
    /// manual clock moves it past this time.
    #[must_use]
    pub fn silent_at(watchdog: Option<&Self>) -> jiff::Timestamp {
        watchdog
            .and_then(|watchdog| {
                let silence = jiff::SignedDuration::try_from(watchdog.silence).ok()?;
                watchdog.clock.now().checked_add(silence).ok()
            })
            .unwrap_or(jiff::Timestamp::MAX)
    }
}

/// A finished run.
#[derive(Debug)]
pub struct Finished {
    pub ending: Ending,
    pub stdout: BoundedText,
    pub stderr: BoundedText,
}

/// The variable that tags every process of one run (a turn, a gate): its value is unique to the
/// run, and every process the run starts inherits it, also one that leaves the process group.
pub const TAG_VARIABLE: &str = "EPIC_PROCESS_TAG";

/// How many times the processes tagged with a run's tag are looked for and killed: a process
/// found alive may fork once more between a look and its kill; its child is found by the next.
const TAG_SWEEPS: usize = 4;

/// Kills a process group, and every process tagged as the run's, when told to, and when dropped
/// if not told yet.
#[derive(Debug)]
pub(crate) struct GroupGuard {
    pub(crate) group: Option<Pid>,
    /// `EPIC_PROCESS_TAG=<tag>`, as it appears in `/proc/<pid>/environ`; `None` once swept.
    pub(crate) tag: Option<Vec<u8>>,
}

impl GroupGuard {
    /// The guard of `child`'s process group (it leads one), its processes marked with `tag`.
    pub(crate) fn of(child: &tokio::process::Child, tag: &str) -> Self {
        Self {
            group: child
                .id()
                .and_then(|id| i32::try_from(id).ok())
                .and_then(Pid::from_raw),
            tag: Some(format!("{TAG_VARIABLE}={tag}").into_bytes()),
        }
    }

    pub(crate) fn kill(&mut self) {
        if let Some(pgid) = self.group.take() {
            // ESRCH (the group is already gone) is the normal case after a clean exit.
            let _ = kill_process_group(pgid, Signal::KILL);
        }
        if let Some(tag) = self.tag.take() {
            kill_tagged(&tag);
        }
    }
}

/// A tag no other run of any process shares: this process's id, the time to the nanosecond,
/// and the address of the run's spec (distinct among the runs alive at once in this process).
pub(crate) fn new_tag(spec: &Spec) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    format!(
        "{}-{nanos}-{:x}",
        std::process::id(),
        std::ptr::from_ref(spec).addr()
    )
}

/// Kills every process whose environment holds `entry` (`EPIC_PROCESS_TAG=<tag>`), with its
/// process group, looking again until a look finds none (at most [`TAG_SWEEPS`] times).
fn kill_tagged(entry: &[u8]) {
    let me = std::process::id();
    for _ in 0..TAG_SWEEPS {
        let tagged = tagged_processes(Path::new("/proc"), entry, me);
        if tagged.is_empty() {
            return;
        }
        for pid in tagged {
            if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
                let _ = kill_process_group(pid, Signal::KILL);
                let _ = kill_process(pid, Signal::KILL);
            }
        }
    }
}

/// The processes under `proc` (other than `me`) whose environment holds `entry` as one of its
/// NUL-separated variables. Processes of other users cannot be read and are not ours.
#[expect(
    clippy::disallowed_methods,
    reason = "reads /proc to find a run's processes; neither the state directory nor a repository"
)]
fn tagged_processes(proc: &Path, entry: &[u8], me: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir(proc) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            std::fs::read(proc.join(pid.to_string()).join("environ"))
                .is_ok_and(|environ| environ.split(|&byte| byte == 0).any(|var| var == entry))
        })
        .collect()
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Runs `spec` until it exits, `deadline` passes or `cancel` fires; each decoded chunk of its
/// standard output goes to `on_stdout` as it arrives. [`run_watched`] without a watchdog.
///
/// # Cancel safety
///
/// Dropping the future kills the whole process group (and `kill_on_drop` reaps the leader).
pub async fn run(
    spec: &Spec,
    deadline: Instant,
    cancel: &CancellationToken,
    limits: Limits,
    on_stdout: &(dyn Fn(&str) + Send + Sync),
) -> io::Result<Finished> {
    run_watched(spec, deadline, cancel, limits, None, on_stdout).await
}

/// Runs `spec` until it exits, `deadline` passes, `cancel` fires or, with a `watchdog`, it
/// prints nothing for the watchdog's silence; each decoded chunk of its standard output goes to
/// `on_stdout` as it arrives.
///
/// Only a failure to start the process is an error. Standard input is written concurrently with
/// reading the output, so an agent that never reads its prompt cannot deadlock the turn (the
/// write fails or waits until the process ends).
///
/// # Cancel safety
///
/// Dropping the future kills the whole process group (and `kill_on_drop` reaps the leader).
pub async fn run_watched(
    spec: &Spec,
    deadline: Instant,
    cancel: &CancellationToken,
    limits: Limits,
    watchdog: Option<&Watchdog>,
    on_stdout: &(dyn Fn(&str) + Send + Sync),
) -> io::Result<Finished> {
    let tag = new_tag(spec);
    // The silence starts when the process does: read before it can print (or a test, seeing it
    // run, can move a manual clock).
    let silent_at = Watchdog::silent_at(watchdog);
    let mut child = command(spec).env(TAG_VARIABLE, &tag).spawn()?;
    let mut group = GroupGuard::of(&child, &tag);
    let missing = || io::Error::other("a piped stream of the child is missing");
    let mut stdout = child.stdout.take().ok_or_else(missing)?;
    let mut stderr = child.stderr.take().ok_or_else(missing)?;
    let stdin = child.stdin.take();
    let input = spec.stdin.as_deref().unwrap_or_default();
    let writer = async move {
        if let Some(mut stdin) = stdin {
            // A child that exits without reading makes this fail with a broken pipe: fine.
            drop(stdin.write_all(input).await);
            drop(stdin.shutdown().await);
        }
    };
    let mut writer = std::pin::pin!(writer);

    let mut out = BoundedText::new(limits.stdout_head, limits.stdout_tail);
    let mut err = BoundedText::new(0, limits.stderr_tail);
    let mut out_decoder = Utf8Decoder::default();
    let mut err_decoder = Utf8Decoder::default();
    let mut out_buf = vec![0_u8; 16 * 1024];
    let mut err_buf = vec![0_u8; 4 * 1024];
    let (mut writing, mut out_open, mut err_open) = (true, true, true);
    let mut status: Option<ExitStatus> = None;
    let timeout = tokio::time::sleep_until(deadline);
    let mut timeout = std::pin::pin!(timeout);
    // Reset when the process exits; only polled after that.
    let drain = tokio::time::sleep_until(deadline);
    let mut drain = std::pin::pin!(drain);
    // Without a watchdog the silence is never polled (its branch is disabled).
    let quiet_clock = watchdog.map_or_else(Clock::system, |watchdog| watchdog.clock.clone());
    let mut silence = std::pin::pin!(quiet_clock.wait_until(silent_at));

    let ending = loop {
        if let Some(status) = status
            && !out_open
            && !err_open
        {
            break Ending::Exited(status);
        }
        // Set when the process is ended from outside: its group is killed, then it is reaped.
        let mut killed = None;
        tokio::select! {
            () = &mut writer, if writing => writing = false,
            read = stdout.read(&mut out_buf), if out_open => match read {
                Ok(0) | Err(_) => out_open = false,
                Ok(n) => {
                    // Output starts the silence again, from the clock's time now (which a manual
                    // clock keeps until a test moves it).
                    silence.set(quiet_clock.wait_until(Watchdog::silent_at(watchdog)));
                    let text = out_decoder.decode(&out_buf[..n]);
                    if !text.is_empty() {
                        on_stdout(&text);
                        out.push(&text);
                    }
                }
            },
            read = stderr.read(&mut err_buf), if err_open => match read {
                Ok(0) | Err(_) => err_open = false,
                Ok(n) => {
                    silence.set(quiet_clock.wait_until(Watchdog::silent_at(watchdog)));
                    err.push(&err_decoder.decode(&err_buf[..n]));
                }
            },
            waited = child.wait(), if status.is_none() => {
                status = Some(waited?);
                // The leader is gone: kill whatever it left behind in its group, which also
                // closes the pipes those children held.
                group.kill();
                drain.as_mut().reset(Instant::now() + DRAIN_GRACE);
            }
            () = &mut drain, if status.is_some() => {
                if let Some(status) = status {
                    break Ending::Exited(status);
                }
            }
            () = &mut timeout, if status.is_none() => killed = Some(Ending::TimedOut),
            () = cancel.cancelled(), if status.is_none() => killed = Some(Ending::Cancelled),
            () = &mut silence, if status.is_none() && watchdog.is_some() => {
                killed = Some(Ending::Stalled);
            }
        }
        if let Some(ending) = killed {
            group.kill();
            drop(child.wait().await);
            break ending;
        }
    };
    let tail = out_decoder.finish();
    if !tail.is_empty() {
        on_stdout(&tail);
        out.push(&tail);
    }
    err.push(&err_decoder.finish());
    group.kill();
    Ok(Finished {
        ending,
        stdout: out,
        stderr: err,
    })
}

/// The command of `spec`: piped stdio, its own process group, killed if dropped.
pub(crate) fn command(spec: &Spec) -> Command {
    let mut command = Command::new(&spec.program);
    command
        .args(&spec.args)
        .current_dir(&spec.cwd)
        .stdin(if spec.stdin.is_some() {
            std::process::Stdio::piped()
        } else {
            std::process::Stdio::null()
        })
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .process_group(0);
    for (key, value) in &spec.env {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    let inherited = |key: &str| {
        spec.env
            .iter()
            .find(|(name, _)| name == key)
            .map_or_else(|| std::env::var_os(key), |(_, value)| value.clone())
    };
    command.envs(no_git_maintenance(inherited("GIT_CONFIG_COUNT").as_deref()));
    command
}

/// The variables that turn git's automatic maintenance off ([`epic_git_ops::MAINTENANCE_OFF`])
/// for a process epic starts, as epic's own git has it: added through `GIT_CONFIG_COUNT` (which
/// beats every configuration file) after the `count` settings the environment already has,
/// keeping those; nothing when `count` is not a number (git then refuses the environment's
/// configuration anyway, and says why).
///
/// An agent's `git commit`, or a gate's, would otherwise start `git gc --auto` in a repository
/// past git's threshold, in the background by default: a repack of the user's repository while
/// other stories' turns and epic's own git work in it. epic packs at the end of a run instead
/// ([`epic_git_ops::Git::maintain`]), when no turn runs.
fn no_git_maintenance(count: Option<&std::ffi::OsStr>) -> Vec<(String, String)> {
    let Some(first) = count.map_or(Some(0), |count| {
        count.to_str()?.trim().parse::<usize>().ok()
    }) else {
        return Vec::new();
    };
    let mut env = vec![(
        "GIT_CONFIG_COUNT".to_owned(),
        (first + MAINTENANCE_OFF.len()).to_string(),
    )];
    for (at, (key, value)) in MAINTENANCE_OFF.iter().enumerate() {
        env.push((format!("GIT_CONFIG_KEY_{}", first + at), (*key).to_owned()));
        env.push((
            format!("GIT_CONFIG_VALUE_{}", first + at),
            (*value).to_owned(),
        ));
    }
    env
}

/// A process that outlived its turn: found adopted by epic (its parent died) in a session of its
/// own, without any run's tag (it cleared its environment), and killed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Orphan {
    /// Its process id.
    pub pid: u32,
    /// Its command line, arguments joined by spaces.
    pub command: String,
}

/// Makes this process the child subreaper of what it starts (`PR_SET_CHILD_SUBREAPER`): a
/// process whose parent dies is then re-parented to it rather than to init, so that
/// [`kill_orphans`] can find a daemon that left its turn's process group and cleared its
/// environment (and with it the tag). Only a run without the sandbox needs it: in the sandbox,
/// such a daemon dies with its turn's PID namespace.
pub fn adopt_orphans() -> io::Result<()> {
    rustix::process::set_child_subreaper(Some(rustix::process::getpid())).map_err(io::Error::from)
}

/// Kills (and reaps) every process adopted by this one ([`adopt_orphans`]) that runs in a session
/// of its own and carries no run's tag: a daemon that escaped both the process-group kill and
/// the tag sweep of its turn. Also reaps the adopted ones already dead (the killed members of
/// a turn's process group whose leader was gone), which nothing else would.
///
/// Never touches what this process started itself: a [`run`]'s process leads its own group in
/// this process's session (a group leader cannot start a session), and the git processes of
/// `epic-git-ops` are in this process's own group. A tagged process belongs to a turn, whose
/// own kill sweeps it. Blocking (it reads `/proc` and waits for the killed to die): call it off
/// the async workers.
pub fn kill_orphans() -> Vec<Orphan> {
    let me = std::process::id();
    // From `/proc`, as the adopted are read: where this process's session or group leader lives
    // outside its PID namespace (a container), both read 0 there, and `getsid` would fail.
    let Some(mine) = proc_stat(&Path::new("/proc").join(me.to_string())) else {
        return Vec::new();
    };
    let (my_session, my_group) = (mine.session, mine.group);
    let mut killed = Vec::new();
    for adopted in adopted_processes(Path::new("/proc"), me) {
        let other_session = adopted.session != my_session;
        let group_member = adopted.group != adopted.pid && adopted.group != my_group;
        if !(other_session || group_member) {
            continue;
        }
        let Some(pid) = i32::try_from(adopted.pid).ok().and_then(Pid::from_raw) else {
            continue;
        };
        if adopted.zombie {
            let _ = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::NOHANG);
        } else if other_session && !adopted.tagged {
            // With its group: what it started since (its `sleep`) goes with it.
            let _ = kill_process_group(pid, Signal::KILL);
            if kill_process(pid, Signal::KILL).is_ok() {
                let _ = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty());
            }
            killed.push(Orphan {
                pid: adopted.pid,
                command: adopted.command,
            });
        }
    }
    killed
}

/// Kills every process a dead run of this epic left behind: one that carries a run's tag
/// ([`TAG_VARIABLE`]: epic started it, for an agent turn, a gate or a setup command) and works
/// under `root` (the epic's worktrees), with its process group. Call it under the epic's lock,
/// before anything starts: no live run of the epic then has a process there, and a person's own
/// shell or editor in a worktree carries no tag. Returns what was killed. Blocking (it reads
/// `/proc`): call it off the async workers.
pub fn end_leftovers(root: &Path) -> Vec<Orphan> {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let me = std::process::id();
    let mut killed: Vec<Orphan> = Vec::new();
    for _ in 0..TAG_SWEEPS {
        let found = left_under(Path::new("/proc"), &root, me);
        if found.is_empty() {
            break;
        }
        for orphan in found {
            if let Some(pid) = i32::try_from(orphan.pid).ok().and_then(Pid::from_raw) {
                let _ = kill_process_group(pid, Signal::KILL);
                let _ = kill_process(pid, Signal::KILL);
            }
            if !killed.iter().any(|known| known.pid == orphan.pid) {
                killed.push(orphan);
            }
        }
    }
    killed
}

/// The live processes under `proc` (other than `me`) that carry a run's tag and whose working
/// directory is `root` or under it.
#[expect(
    clippy::disallowed_methods,
    reason = "reads /proc to find what a dead run left; neither the state directory nor a \
              repository"
)]
fn left_under(proc: &Path, root: &Path, me: u32) -> Vec<Orphan> {
    let Ok(entries) = std::fs::read_dir(proc) else {
        return Vec::new();
    };
    let tag = format!("{TAG_VARIABLE}=");
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me)
        .filter_map(|pid| {
            let dir = proc.join(pid.to_string());
            let cwd = std::fs::read_link(dir.join("cwd")).ok()?;
            if !cwd.starts_with(root) {
                return None;
            }
            if proc_stat(&dir)?.state == 'Z' {
                return None;
            }
            let environ = std::fs::read(dir.join("environ")).ok()?;
            if !environ
                .split(|&byte| byte == 0)
                .any(|var| var.starts_with(tag.as_bytes()))
            {
                return None;
            }
            let command = command_line(&dir);
            Some(Orphan { pid, command })
        })
        .collect()
}

/// The command line of the process whose `/proc` directory is `dir`, arguments joined by
/// spaces; empty when it cannot be read.
#[expect(
    clippy::disallowed_methods,
    reason = "reads /proc; neither the state directory nor a repository"
)]
fn command_line(dir: &Path) -> String {
    std::fs::read(dir.join("cmdline"))
        .map(|line| {
            String::from_utf8_lossy(&line)
                .split('\0')
                .filter(|arg| !arg.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

/// A child of this process as `/proc` shows it.
#[derive(Debug)]
struct Adopted {
    pid: u32,
    group: u32,
    session: u32,
    zombie: bool,
    /// Whether its environment holds a run's tag ([`TAG_VARIABLE`]).
    tagged: bool,
    command: String,
}

/// The processes under `proc` whose parent is `me`.
#[expect(
    clippy::disallowed_methods,
    reason = "reads /proc to find the processes epic adopted; neither the state directory nor a \
              repository"
)]
fn adopted_processes(proc: &Path, me: u32) -> Vec<Adopted> {
    let Ok(entries) = std::fs::read_dir(proc) else {
        return Vec::new();
    };
    let tag = format!("{TAG_VARIABLE}=");
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let dir = proc.join(pid.to_string());
            let Stat {
                state,
                parent,
                group,
                session,
            } = proc_stat(&dir)?;
            if parent != me {
                return None;
            }
            let tagged = std::fs::read(dir.join("environ")).is_ok_and(|environ| {
                environ
                    .split(|&byte| byte == 0)
                    .any(|var| var.starts_with(tag.as_bytes()))
            });
            let command = command_line(&dir);
            Some(Adopted {
                pid,
                group,
                session,
                zombie: state == 'Z',
                tagged,
                command,
            })
        })
        .collect()
}

/// The fields of `/proc/<pid>/stat` that tell a process's state and family.
struct Stat {
    state: char,
    parent: u32,
    group: u32,
    /// 0 where the session's leader is outside this PID namespace.
    session: u32,
}

/// Reads the `stat` file of the process whose `/proc` directory is `dir`.
#[expect(
    clippy::disallowed_methods,
    reason = "reads /proc; neither the state directory nor a repository"
)]
fn proc_stat(dir: &Path) -> Option<Stat> {
    let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
    // `pid (comm) state ppid pgrp session …`; comm may hold spaces and parentheses.
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    Some(Stat {
        state: fields.next()?.chars().next()?,
        parent: fields.next()?.parse().ok()?,
        group: fields.next()?.parse().ok()?,
        session: fields.next()?.parse().ok()?,
    })
}

/// The human form of an exit status: `exit code 3`, `killed by signal 9`.
pub fn describe_status(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => "an unknown exit status".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;

    /// Waits until the earliest time something waits for on `manual` is `until`: the watchdog
    /// read the output that started its silence again.
    async fn watchdog_waits_for(manual: &ManualClock, until: jiff::Timestamp) {
        while manual.waiter().await != until {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    #[expect(
        clippy::disallowed_methods,
        reason = "the test makes the pipe its stand-in waits on"
    )]
    async fn a_silent_process_is_ended_as_stalled_on_the_watchdogs_clock() {
        let dir = tempfile::tempdir().expect("dir");
        let tick = dir.path().join("tick");
        let made = std::process::Command::new("mkfifo")
            .arg(&tick)
            .status()
            .expect("mkfifo");
        assert!(made.success());
        // Read and write: the open of a pipe that does not wait for a reader.
        let mut ticks = std::fs::File::options()
            .read(true)
            .write(true)
            .open(&tick)
            .expect("open the pipe");
        let mut tick_once = || std::io::Write::write_all(&mut ticks, b"\n").expect("tick");
        let spec = Spec {
            program: "sh".into(),
            args: vec![
                "-c".into(),
                "echo started; read l < tick; echo again >&2; read l < tick; echo still here; \
                 exec sleep 1000"
                    .into(),
            ],
            cwd: dir.path().to_path_buf(),
            env: Vec::new(),
            stdin: None,
        };
        let start: jiff::Timestamp = "2030-01-01T00:00:00Z".parse().expect("time");
        let minutes = |n: u64| Duration::from_secs(60 * n);
        let at = |n: u64| start + minutes(n);
        let manual = ManualClock::new(start);
        let watchdog = Watchdog {
            silence: minutes(10),
            clock: manual.clock(),
        };
        let (said, mut heard) = tokio::sync::mpsc::unbounded_channel::<String>();
        let limits = Limits {
            stdout_head: 1024,
            stdout_tail: 1024,
            stderr_tail: 1024,
        };
        let running = tokio::spawn(async move {
            let on_stdout = move |text: &str| drop(said.send(text.to_owned()));
            let deadline = Instant::now() + Duration::from_hours(1);
            run_watched(
                &spec,
                deadline,
                &CancellationToken::new(),
                limits,
                Some(&watchdog),
                &on_stdout,
            )
            .await
        });
        assert_eq!(heard.recv().await.as_deref(), Some("started\n"));
        assert_eq!(manual.waiter().await, at(10));
        manual.advance(minutes(9));
        assert_eq!(manual.waiter().await, at(10), "not silent long enough yet");
        // A line on standard error starts the silence again.
        tick_once();
        watchdog_waits_for(&manual, at(19)).await;
        manual.advance(minutes(9));
        // So does one on standard output.
        tick_once();
        watchdog_waits_for(&manual, at(28)).await;
        assert!(!running.is_finished());
        manual.advance(minutes(10));
        let mut finished = running.await.expect("joined").expect("ran");
        assert!(
            matches!(finished.ending, Ending::Stalled),
            "{:?}",
            finished.ending
        );
        assert_eq!(finished.stdout.text(), "started\nstill here\n");
        assert_eq!(finished.stderr.text(), "again\n");
    }

    #[tokio::test]
    async fn a_process_that_exits_is_not_stalled() {
        let manual = ManualClock::new("2030-01-01T00:00:00Z".parse().expect("time"));
        let spec = Spec {
            program: "sh".into(),
            args: vec!["-c".into(), "echo done".into()],
            cwd: std::env::temp_dir(),
            env: Vec::new(),
            stdin: None,
        };
        let watchdog = Watchdog {
            silence: Duration::from_secs(1),
            clock: manual.clock(),
        };
        let limits = Limits {
            stdout_head: 64,
            stdout_tail: 64,
            stderr_tail: 64,
        };
        let deadline = Instant::now() + Duration::from_hours(1);
        let finished = run_watched(
            &spec,
            deadline,
            &CancellationToken::new(),
            limits,
            Some(&watchdog),
            &|_| {},
        )
        .await
        .expect("ran");
        assert!(matches!(finished.ending, Ending::Exited(status) if status.success()));
    }

    fn settings(count: Option<&str>) -> Vec<(String, String)> {
        no_git_maintenance(count.map(std::ffi::OsStr::new))
    }

    #[test]
    fn maintenance_is_turned_off_after_the_settings_the_environment_has() {
        let pairs = |list: &[(&str, &str)]| {
            list.iter()
                .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
                .collect::<Vec<_>>()
        };
        let first = pairs(&[
            ("GIT_CONFIG_COUNT", "2"),
            ("GIT_CONFIG_KEY_0", "maintenance.auto"),
            ("GIT_CONFIG_VALUE_0", "false"),
            ("GIT_CONFIG_KEY_1", "gc.auto"),
            ("GIT_CONFIG_VALUE_1", "0"),
        ]);
        assert_eq!(settings(None), first);
        assert_eq!(settings(Some("0")), first);
        let after_three = settings(Some("3"));
        assert_eq!(after_three[0], ("GIT_CONFIG_COUNT".into(), "5".into()));
        assert_eq!(
            after_three[1],
            ("GIT_CONFIG_KEY_3".into(), "maintenance.auto".into())
        );
        assert_eq!(after_three[4], ("GIT_CONFIG_VALUE_4".into(), "0".into()));
        assert!(settings(Some("many")).is_empty());
    }
}
