//! What every case of `cargo xtask agents` needs, offline ([`crate::agents`]) or served
//! ([`crate::served`]): the variables that would sign an agent in, the credential stores planted
//! in each case's home, git in a scratch repository, a command run under a deadline.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::Result;

/// Variables that would let an agent log in: removed, so every case runs logged out.
pub(crate) const KEYS: [&str; 9] = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "OPENAI_API_KEY",
    "CODEX_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_GENAI_USE_GCA",
];

/// Fake keys in the credential stores the sandbox hides, planted in every case's home.
pub(crate) const PLANTED_STORES: [(&str, &str); 5] = [
    (".ssh/id_ed25519", "FAKE-KEY\n"),
    (
        ".aws/credentials",
        "[default]\naws_secret_access_key = FAKE-KEY\n",
    ),
    (
        ".config/gh/hosts.yml",
        "github.com:\n  oauth_token: FAKE-KEY\n",
    ),
    (".netrc", "machine example.com password FAKE-KEY\n"),
    (".git-credentials", "https://u:FAKE-KEY@example.com\n"),
];

/// Runs `git ARGS` in `dir` with `home` as its `HOME`.
pub(crate) fn git(dir: &Path, home: &Path, args: &[&str]) -> Result {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "epic agents")
        .env("GIT_AUTHOR_EMAIL", "agents@epic.invalid")
        .env("GIT_COMMITTER_NAME", "epic agents")
        .env("GIT_COMMITTER_EMAIL", "agents@epic.invalid")
        .status()
        .map_err(|error| format!("cannot start git: {error}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`git {}` failed ({status})", args.join(" ")))
    }
}

/// Runs `command` until it exits or `deadline` passes (then it is killed): its exit code and
/// its standard output and error, in that order.
pub(crate) fn run_with_deadline(
    command: Command,
    deadline: Duration,
) -> Result<(Option<i32>, String)> {
    let (code, out, err) = run_captured(command, None, deadline)?;
    Ok((code, format!("{out}{err}")))
}

/// Runs `command`, with `stdin` written to its standard input when given, until it exits or
/// `deadline` passes: then it is killed (`None` for its exit code), with its process group when
/// it leads one (a caller that wants a CLI's children, which hold its pipes, to die with it
/// gives the command a group of its own). Its exit code, standard output and standard error.
pub(crate) fn run_captured(
    mut command: Command,
    stdin: Option<&str>,
    deadline: Duration,
) -> Result<(Option<i32>, String, String)> {
    let program = command.get_program().to_string_lossy().into_owned();
    let mut child = command
        .spawn()
        .map_err(|error| format!("cannot start {program}: {error}"))?;
    if let Some(text) = stdin {
        let mut pipe = child.stdin.take().ok_or("no stdin")?;
        std::io::Write::write_all(&mut pipe, text.as_bytes()).map_err(|error| error.to_string())?;
    }
    // Read both pipes on threads so a full pipe cannot stall the child.
    let mut stdout = child.stdout.take().ok_or("no stdout")?;
    let mut stderr = child.stderr.take().ok_or("no stderr")?;
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut text).ok();
        text
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut text).ok();
        text
    });
    let started = Instant::now();
    let code = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status.code(),
            Ok(None) if started.elapsed() < deadline => {
                std::thread::sleep(Duration::from_millis(100));
            }
            Ok(None) => {
                // The group, when the child leads one; the child itself either way.
                Command::new("kill")
                    .args(["-KILL", "--", &format!("-{}", child.id())])
                    .stderr(std::process::Stdio::null())
                    .status()
                    .ok();
                child.kill().ok();
                child.wait().ok();
                break None;
            }
            Err(error) => return Err(format!("cannot wait for {program}: {error}")),
        }
    };
    Ok((
        code,
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
    ))
}

/// Every file under `dir`, recursively (none when it does not exist).
pub(crate) fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        let Ok(entries) = fs::read_dir(&next) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// `text` indented by four spaces, line by line.
pub(crate) fn indent(text: &str) -> String {
    text.lines()
        .map(|line| format!("    {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}
