//! What a served case runs beside `epic`: the scripted model server ([`ModelServer`]) and, for
//! a case that holds a stream silent, the clock the run is timed on ([`StallClock`]).

use std::fs;
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::Result;
use crate::json::{read_events, requests};

/// The clock of a stall case's run: a file holding a time (`EPIC_TEST_CLOCK`), moved by a
/// step longer than `--stall-timeout` while the server holds a request silent that epic has not yet ended as
/// stalled (more silent answers in the server's log than `turn_stalled` events), again every
/// [`STALL_CLOCK_AGAIN`] in case the CLI printed after a move (which starts its silence over).
/// With one turn at a time, the silent turn is the only one the move can end.
pub(crate) struct StallClock {
    /// The file named by `EPIC_TEST_CLOCK`.
    pub(crate) file: PathBuf,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    mover: Option<std::thread::JoinHandle<()>>,
}

/// How long the stall clock waits for epic to end a silent turn before moving again.
const STALL_CLOCK_AGAIN: Duration = Duration::from_secs(2);

impl StallClock {
    /// Writes the clock's first time in `dir` and moves it `minutes_each` minutes at a time as the
    /// server's `log` and epic's `events` say, until dropped.
    pub(crate) fn start(dir: &Path, log: &Path, events: &Path, minutes_each: u64) -> Result<Self> {
        let file = dir.join("clock");
        let write = |file: &Path, minutes: u64| -> Result {
            let next = file.with_extension("next");
            fs::write(&next, clock_time(minutes)).map_err(|error| error.to_string())?;
            fs::rename(&next, file).map_err(|error| error.to_string())
        };
        write(&file, 0)?;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mover = {
            let (file, log, events, stop) = (
                file.clone(),
                log.to_path_buf(),
                events.to_path_buf(),
                std::sync::Arc::clone(&stop),
            );
            std::thread::spawn(move || {
                let (mut minutes, mut moved): (u64, Option<Instant>) = (0, None);
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let silent = requests(&fs::read_to_string(&log).unwrap_or_default())
                        .iter()
                        .filter(|request| request.answer == "silent")
                        .count();
                    let stalled = read_events(&events)
                        .iter()
                        .filter(|event| event.is("turn_stalled"))
                        .count();
                    if stalled < silent {
                        if moved.is_none_or(|at| at.elapsed() >= STALL_CLOCK_AGAIN) {
                            minutes += minutes_each;
                            write(&file, minutes).ok();
                            moved = Some(Instant::now());
                        }
                    } else {
                        moved = None;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            })
        };
        Ok(Self {
            file,
            stop,
            mover: Some(mover),
        })
    }
}

impl Drop for StallClock {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(mover) = self.mover.take() {
            mover.join().ok();
        }
    }
}

/// The stall clock's time, `minutes` after 2030-01-01T00:00:00Z (RFC 3339; within January).
fn clock_time(minutes: u64) -> String {
    format!(
        "2030-01-{:02}T{:02}:{:02}:00Z",
        1 + minutes / 1440,
        minutes / 60 % 24,
        minutes % 60
    )
}

/// Gemini CLI's settings that sign it in with a key (`GEMINI_API_KEY`): without them it exits
/// 41 at once.
pub(crate) const GEMINI_SETTINGS: &str =
    r#"{"security": {"auth": {"selectedType": "gemini-api-key"}}}"#;

/// A running `epic-model-server`, killed when dropped.
pub(crate) struct ModelServer {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub(crate) addr: String,
    pub(crate) log: PathBuf,
}

impl ModelServer {
    /// Starts `server` with `steps` (written to `dir/steps.jsonl`), logging to `dir/log.jsonl`.
    pub(crate) fn start(server: &Path, dir: &Path, steps: &str) -> Result<Self> {
        let steps_file = dir.join("steps.jsonl");
        let log = dir.join("log.jsonl");
        fs::write(&steps_file, steps).map_err(|error| error.to_string())?;
        let mut child = Command::new(server)
            .arg("--steps")
            .arg(&steps_file)
            .arg("--log")
            .arg(&log)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|error| format!("cannot start {}: {error}", server.display()))?;
        let mut addr = String::new();
        let stdout = child.stdout.take().ok_or("no stdout")?;
        BufReader::new(stdout)
            .read_line(&mut addr)
            .map_err(|error| error.to_string())?;
        let addr = addr.trim().to_owned();
        if addr.is_empty() {
            child.kill().ok();
            child.wait().ok();
            return Err("the model server printed no address".into());
        }
        Ok(Self { child, addr, log })
    }

    /// What the server logged so far, a JSON line per request.
    pub(crate) fn logged(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The variables that point every CLI at the server (with the keys removed first).
    pub(crate) fn env(&self) -> Vec<(&'static str, String)> {
        let url = format!("http://{}", self.addr);
        vec![
            ("ANTHROPIC_BASE_URL", url.clone()),
            ("ANTHROPIC_API_KEY", "sk-local".into()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
            // Its own retries of a 429 or 5xx take minutes; epic's retry policy is under test.
            ("CLAUDE_CODE_MAX_RETRIES", "0".into()),
            ("EPIC_AGENTS_KEY", "sk-local".into()),
            ("GEMINI_API_KEY", "local".into()),
            ("GOOGLE_GEMINI_BASE_URL", url.clone()),
            // aider (through litellm): Anthropic at the server, whole files, nothing else
            // reached for (updates, analytics, the repository map's cache in the worktree).
            ("ANTHROPIC_API_BASE", url),
            ("AIDER_MODEL", "anthropic/claude-sonnet-4-5".into()),
            ("AIDER_EDIT_FORMAT", "whole".into()),
            ("AIDER_CHECK_UPDATE", "false".into()),
            ("AIDER_ANALYTICS_DISABLE", "true".into()),
            ("AIDER_SHOW_MODEL_WARNINGS", "false".into()),
            ("AIDER_MAP_TOKENS", "0".into()),
        ]
    }

    /// The files in a home that sign the CLIs in to the server: Codex's provider (no retries
    /// of its own), Gemini CLI's auth type, opencode's provider.
    pub(crate) fn home_files(&self) -> Vec<(&'static str, String)> {
        vec![
            (
                ".codex/config.toml",
                format!(
                    "model = \"gpt-5.5\"\nmodel_provider = \"local\"\n\n[model_providers.local]\n\
                     name = \"Local\"\nbase_url = \"http://{}/v1\"\nwire_api = \"responses\"\n\
                     env_key = \"EPIC_AGENTS_KEY\"\nrequest_max_retries = 0\nstream_max_retries = 0\n",
                    self.addr
                ),
            ),
            (".gemini/settings.json", GEMINI_SETTINGS.into()),
            // Who commits, as a user's machine has it: without one aider writes it into the
            // repository's `.git/config`, which epic's sandbox keeps read-only, and crashes.
            (
                ".gitconfig",
                "[user]\n\tname = epic agents\n\temail = agents@epic.invalid\n".into(),
            ),
            // opencode: its Anthropic provider pointed at the server, with a key.
            (
                ".config/opencode/opencode.json",
                format!(
                    "{}\n",
                    json!({
                        "model": "anthropic/claude-sonnet-4-5",
                        "provider": {"anthropic": {"options": {
                            "baseURL": format!("http://{}/v1", self.addr),
                            "apiKey": "sk-local",
                        }}},
                    })
                ),
            ),
        ]
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}
