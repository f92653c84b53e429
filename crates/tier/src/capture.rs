//! `cargo xtask agents capture [CLI]`: what each real agent CLI prints when the scripted model
//! server (`crates/model-server`) plays each failure it can, kept as fixtures of epic's
//! classifier.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cases::{KEYS, run_captured};
use crate::scratch::{path_with, scratch_repo};
use crate::served::PRESETS;
use crate::server::ModelServer;
use crate::{Result, say};

/// The failures `capture` records, each a server step for every request, and how long the CLI
/// may take (a silent stream is held until the deadline kills the CLI: exit 124, as
/// `timeout` reports it).
const FAILURES: [(&str, &str, Duration); 6] = [
    (
        "429",
        r#"{"do": "status", "status": 429}"#,
        Duration::from_mins(3),
    ),
    (
        "529",
        r#"{"do": "status", "status": 529}"#,
        Duration::from_mins(3),
    ),
    (
        "500",
        r#"{"do": "status", "status": 500}"#,
        Duration::from_mins(3),
    ),
    (
        "401",
        r#"{"do": "status", "status": 401}"#,
        Duration::from_mins(3),
    ),
    ("cut", r#"{"do": "cut"}"#, Duration::from_mins(3)),
    ("silent", r#"{"do": "silent"}"#, Duration::from_secs(30)),
];

/// What a capture records: every CLI, or `cli`; every failure of [`FAILURES`], or `failure`.
pub(crate) struct Only<'a> {
    /// A preset's name, or empty for all.
    pub(crate) cli: &'a str,
    /// A failure's name (`429`, `cut`, …), or empty for all.
    pub(crate) failure: &'a str,
}

/// Where the CLIs' programs are: the npm install's `.bin` and the PyPI virtual environment's.
pub(crate) struct Bins<'a> {
    /// Claude Code, Codex, Gemini CLI, opencode.
    pub(crate) npm: &'a Path,
    /// aider.
    pub(crate) pypi: &'a Path,
}

/// Where the captures go, from the workspace root: a directory per CLI and version.
const FIXTURES: &str = "crates/agents/tests/fixtures/served";

/// The coder's prompt of a capture: a task of epic's, writing one file.
const CAPTURE_PROMPT: &str = "Your working directory is WORKDIR, the story's own worktree.\n\n\
    ```file src/a/a.txt\nalpha\n```\n\nTask 1 of 1: Write a\n\nDo this task only, then stop: \
    your work is checked and committed for you.\n";

/// `cargo xtask agents capture [CLI [FAILURE]]`: each real CLI (or `only.cli`), run with its
/// preset's coder command line
/// against the server playing each of [`FAILURES`] (or `only.failure`), its standard output, standard error and
/// exit status written to `FIXTURES/<cli>-<version>/<failure>.*`, the case's directory shown
/// as `/work/case`, the CLIs' install directory as `/cache` and the server's address as
/// `127.0.0.1:PORT`. Claude Code's and Codex's own
/// retries are turned off (`CLAUDE_CODE_MAX_RETRIES`, the provider's `request_max_retries` and
/// `stream_max_retries`), so their captures show what they render of the failure itself, in
/// seconds; Gemini CLI has no such switch and tries five times, a minute or two a failure, and
/// aider (from [`Bins::pypi`]) tries for about a minute.
pub(crate) fn capture(
    packages: &[String],
    only: &Only<'_>,
    server: &Path,
    bins: &Bins<'_>,
    scratch: &Path,
) -> Result {
    let bin = bins.npm;
    let root = crate::root();
    // The CLIs' install directory, `/cache` in the captures (its name is a hash of versions).
    let cache = bin
        .parent()
        .and_then(Path::parent)
        .map_or_else(String::new, |cache| cache.display().to_string());
    let chosen = |preset: &str| only.cli.is_empty() || preset == only.cli;
    for &(preset, _, _, _) in PRESETS.iter().filter(|(preset, ..)| chosen(preset)) {
        // aider is a PyPI package, in a virtual environment of its own beside the npm install.
        let program = if preset == "aider" {
            bins.pypi.join("aider")
        } else {
            bin.join(preset)
        };
        if !program.is_file() {
            say(&format!("{preset}: not installed here, not captured"));
            continue;
        }
        let version = packages
            .iter()
            .find_map(|package| {
                if let Some(version) = package.strip_prefix("pypi:aider-chat==") {
                    return (preset == "aider").then(|| version.to_owned());
                }
                let (name, version) = package.rsplit_once('@')?;
                let cli = match name {
                    "@anthropic-ai/claude-code" => "claude",
                    "@openai/codex" => "codex",
                    "@google/gemini-cli" => "gemini",
                    "opencode-ai" => "opencode",
                    _ => return None,
                };
                (cli == preset).then(|| version.to_owned())
            })
            .ok_or_else(|| format!("no version of {preset} in xtask/agents.txt"))?;
        let out = root.join(FIXTURES).join(format!("{preset}-{version}"));
        fs::create_dir_all(&out).map_err(|error| error.to_string())?;
        for (failure, steps, deadline) in FAILURES
            .into_iter()
            .filter(|(failure, ..)| only.failure.is_empty() || *failure == only.failure)
        {
            let dir = scratch.join(format!("capture-{preset}-{failure}"));
            fs::remove_dir_all(&dir).ok();
            fs::create_dir_all(&dir).map_err(|error| error.to_string())?;
            let started = Instant::now();
            let server = ModelServer::start(server, &dir, steps)?;
            let (repo, home) = scratch_repo(&dir, &server.home_files())?;
            let prompt = CAPTURE_PROMPT.replace("WORKDIR", &repo.display().to_string());
            let mut command = Command::new(&program);
            command.args(preset_args(preset));
            // aider reads its prompt from a file and logs its model's replies beside it, as its
            // preset runs it; the others read it on stdin.
            let stdin = if preset == "aider" {
                let file = dir.join("prompt.md");
                fs::write(&file, &prompt).map_err(|error| error.to_string())?;
                command
                    .arg("--message-file")
                    .arg(&file)
                    .arg("--llm-history-file")
                    .arg(dir.join("replies.log"))
                    .stdin(Stdio::null());
                None
            } else {
                command.stdin(Stdio::piped());
                Some(prompt.as_str())
            };
            command
                .current_dir(&repo)
                .env("HOME", &home)
                .env("PATH", path_with(&[bin.to_path_buf()])?)
                .env("NO_COLOR", "1")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            for key in KEYS {
                command.env_remove(key);
            }
            command.envs(server.env());
            // A group of its own, so that a CLI killed at the deadline takes its children
            // (which hold its pipes) with it.
            std::os::unix::process::CommandExt::process_group(&mut command, 0);
            let (code, stdout, stderr) = run_captured(command, stdin, deadline)?;
            let shown = |text: &str| {
                text.replace(&dir.display().to_string(), "/work/case")
                    .replace(&server.addr, "127.0.0.1:PORT")
                    .replace(&cache, "/cache")
            };
            for (extension, text) in [
                ("stdout", shown(&stdout)),
                ("stderr", shown(&stderr)),
                ("exit", format!("{}\n", code.unwrap_or(124))),
            ] {
                let path = out.join(format!("{failure}.{extension}"));
                fs::write(&path, text)
                    .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
            }
            say(&format!(
                "captured {preset}-{version}/{failure}: exit {} ({:.0} s, {} request(s))",
                code.map_or_else(|| "124 (killed)".to_owned(), |code| code.to_string()),
                started.elapsed().as_secs_f64(),
                server.logged().lines().count()
            ));
        }
    }
    Ok(())
}

/// The coder's command line of `preset`, as `crates/agents/src/preset.rs` has it.
fn preset_args(preset: &str) -> &'static [&'static str] {
    match preset {
        "claude" => &[
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            "Bash",
        ],
        "codex" => &["exec", "--json", "--sandbox", "workspace-write", "-"],
        "opencode" => &["run"],
        // Its prompt file and reply log follow ([`capture`]).
        "aider" => &[
            "--yes-always",
            "--no-auto-commits",
            "--no-gitignore",
            "--no-detect-urls",
            "--no-check-update",
            "--no-pretty",
            "--chat-history-file",
            "/dev/null",
            "--input-history-file",
            "/dev/null",
        ],
        _ => &[
            "--skip-trust",
            "--approval-mode",
            "yolo",
            "--output-format",
            "stream-json",
            "--prompt",
            "Carry out the request above.",
        ],
    }
}
