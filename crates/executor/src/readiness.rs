//! Seat preflight: before the first story, each seat in use is checked without spending a
//! token, so that a missing program or a logged-out CLI stops the run once, before anything
//! starts, instead of failing every ready story one after another.
//!
//! | preset | installed | logged in |
//! | --- | --- | --- |
//! | `claude` | `claude auth status` starts | it exits 0 and, where it prints JSON, says `"loggedIn": true` |
//! | `codex` | `codex login status` starts | it exits 0 |
//! | `gemini` | `gemini --version` starts | `GEMINI_API_KEY`, `GOOGLE_API_KEY`, `GOOGLE_GENAI_USE_VERTEXAI` or `GOOGLE_GENAI_USE_GCA` is set, or `~/.gemini/settings.json` names an auth type |
//! | `aider`, `opencode` | `PROGRAM --version` starts and exits 0 | not checked: they take keys many ways |
//!
//! A shell seat (`exec:`) and the built-in script seat are not checked: what they run is the
//! user's.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::preset::Preset;
use crate::process::{self, Ending, Limits, Spec};

/// How long a status command may take: they answer at once, but a CLI that updates itself may
/// not.
const CHECK_TIMEOUT: Duration = Duration::from_mins(1);

/// A seat that cannot take turns, found before the first story.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the seat `{seat}` cannot run: {problem}{}\nTo fix it: {fix}",
    said_line(said)
)]
pub struct NotReady {
    /// The seat's name (`claude`).
    pub seat: String,
    /// What is wrong, in words (`it is not logged in`).
    pub problem: String,
    /// What its CLI said, trimmed (empty when it said nothing or could not start).
    pub said: String,
    /// What fixes it: a command to run, a variable to set.
    pub fix: String,
}

/// `said` as the line the message shows, if there is anything to show.
fn said_line(said: &str) -> String {
    if said.is_empty() {
        String::new()
    } else {
        format!("; it said: {said}")
    }
}

/// How a preset is checked, and what fixes each way it can fail.
struct Check {
    /// The arguments of the check's command (after the program).
    args: &'static [&'static str],
    /// What installs the program.
    install: &'static str,
    /// What logs it in (empty where epic does not check the login).
    login: &'static str,
}

impl Preset {
    /// How this preset is checked, and what fixes it.
    fn check(self) -> Check {
        match self {
            Self::Claude => Check {
                args: &["auth", "status"],
                install: "install Claude Code: `npm install -g @anthropic-ai/claude-code`",
                login: "run `claude`, then `/login` in it (or set ANTHROPIC_API_KEY)",
            },
            Self::Codex => Check {
                args: &["login", "status"],
                install: "install Codex: `npm install -g @openai/codex`",
                login: "run `codex login` (or `codex login --with-api-key` with a key on its \
                        standard input)",
            },
            Self::Gemini => Check {
                args: &["--version"],
                install: "install Gemini CLI: `npm install -g @google/gemini-cli`",
                login: "set GEMINI_API_KEY=… (or run `gemini` once and choose how to sign in)",
            },
            Self::Aider => Check {
                args: &["--version"],
                install: "install aider: `python -m pip install aider-install && aider-install`",
                login: "",
            },
            Self::Opencode => Check {
                args: &["--version"],
                install: "install opencode: `npm install -g opencode-ai`",
                login: "",
            },
        }
    }
}

/// Checks that `preset`'s program starts and, where the preset can tell, is logged in, with the
/// seat's environment `env` (on top of this process's) and `dir` as the working directory.
pub(crate) async fn check_preset(
    seat: &str,
    preset: Preset,
    env: &[(OsString, Option<OsString>)],
    dir: &Path,
) -> Result<(), NotReady> {
    let check = preset.check();
    let not_ready = |problem: String, said: String, fix: &str| NotReady {
        seat: seat.to_owned(),
        problem,
        said,
        fix: fix.to_owned(),
    };
    let command = format!("{} {}", preset.program(), check.args.join(" "));
    let ran = run_check(preset, &check, env, dir).await;
    let (status, stdout, said) = match ran {
        Ran::Exited(status, stdout, said) => (status, stdout, said),
        Ran::Cancelled => return Ok(()),
        Ran::Missing => {
            return Err(not_ready(
                format!(
                    "`{}` is not installed (not found on PATH)",
                    preset.program()
                ),
                String::new(),
                check.install,
            ));
        }
        Ran::Unstartable(error) => {
            return Err(not_ready(
                format!("`{command}` could not start: {error}"),
                String::new(),
                check.install,
            ));
        }
        Ran::TimedOut(said) => {
            return Err(not_ready(
                format!(
                    "`{command}` did not answer within {}s",
                    CHECK_TIMEOUT.as_secs()
                ),
                said,
                check.install,
            ));
        }
    };
    let logs_in = matches!(preset, Preset::Claude | Preset::Codex);
    if logs_in && (!status.success() || logged_out_json(&stdout)) {
        return Err(not_ready(
            format!("it is not logged in (`{command}`)"),
            said,
            check.login,
        ));
    }
    if !status.success() {
        return Err(not_ready(
            format!(
                "`{command}` failed with {}",
                process::describe_status(status)
            ),
            said,
            check.install,
        ));
    }
    if preset == Preset::Gemini && !gemini_has_auth(env) {
        return Err(not_ready(
            "it has no way to sign in: none of GEMINI_API_KEY, GOOGLE_API_KEY, \
             GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA is set, and \
             ~/.gemini/settings.json names no auth type"
                .to_owned(),
            String::new(),
            check.login,
        ));
    }
    Ok(())
}

/// How a check's command ended.
enum Ran {
    /// It exited: its status, its standard output, and what it said in all.
    Exited(std::process::ExitStatus, String, String),
    /// Its program is not on `PATH`.
    Missing,
    /// It could not start for another reason.
    Unstartable(std::io::Error),
    /// It did not answer in time; what it said.
    TimedOut(String),
    /// The check was cancelled.
    Cancelled,
}

/// Runs `check`'s command of `preset`.
async fn run_check(
    preset: Preset,
    check: &Check,
    env: &[(OsString, Option<OsString>)],
    dir: &Path,
) -> Ran {
    let spec = Spec {
        program: preset.program().into(),
        args: check.args.iter().map(OsString::from).collect(),
        cwd: dir.to_path_buf(),
        env: env.to_vec(),
        stdin: None,
    };
    let limits = Limits {
        stdout_head: 16 * 1024,
        stdout_tail: 16 * 1024,
        stderr_tail: 16 * 1024,
    };
    let cancel = CancellationToken::new();
    let deadline = Instant::now() + CHECK_TIMEOUT;
    let mut finished = match process::run(&spec, deadline, &cancel, limits, &|_| {}).await {
        Ok(finished) => finished,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ran::Missing,
        Err(error) => return Ran::Unstartable(error),
    };
    let stdout = finished.stdout.text();
    let said = said_text(&stdout, &finished.stderr.last(4000));
    match finished.ending {
        Ending::Exited(status) => Ran::Exited(status, stdout, said),
        Ending::TimedOut => Ran::TimedOut(said),
        Ending::Cancelled => Ran::Cancelled,
    }
}

/// What a check printed, in one trimmed piece (standard output first), at most 600 bytes.
fn said_text(stdout: &str, stderr: &str) -> String {
    let both = format!("{}\n{}", stdout.trim(), stderr.trim());
    let both = both.trim();
    match both.char_indices().nth(600) {
        Some((at, _)) => format!("{} …", &both[..at]),
        None => both.to_owned(),
    }
}

/// Whether `stdout` is JSON saying `"loggedIn": false` (Claude Code's `auth status`).
fn logged_out_json(stdout: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(stdout.trim())
        .ok()
        .and_then(|value| value.get("loggedIn").and_then(serde_json::Value::as_bool))
        == Some(false)
}

/// The variables that give Gemini CLI a way to sign in.
const GEMINI_AUTH_VARIABLES: [&str; 4] = [
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_GENAI_USE_GCA",
];

/// Whether Gemini CLI, with the seat's environment `env` over this process's, has a way to sign
/// in: one of [`GEMINI_AUTH_VARIABLES`] set and not empty, or an auth type in its settings
/// (`security.auth.selectedType`, or the older top-level `selectedAuthType`).
fn gemini_has_auth(env: &[(OsString, Option<OsString>)]) -> bool {
    let var = |key: &str| -> Option<OsString> {
        match env.iter().rev().find(|(name, _)| name == key) {
            Some((_, value)) => value.clone(),
            None => std::env::var_os(key),
        }
    };
    if GEMINI_AUTH_VARIABLES
        .iter()
        .any(|key| var(key).is_some_and(|value| !value.is_empty()))
    {
        return true;
    }
    let Some(home) = var("HOME").map(PathBuf::from) else {
        return false;
    };
    gemini_settings_name_auth(&home.join(".gemini").join("settings.json"))
}

/// Whether the Gemini CLI settings file at `path` names an auth type.
#[expect(
    clippy::disallowed_methods,
    reason = "reads Gemini CLI's own settings file: neither the state directory nor a repository"
)]
fn gemini_settings_name_auth(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    let Ok(settings) = serde_json::from_str::<serde_json::Value>(&text) else {
        return false;
    };
    let named = |value: Option<&serde_json::Value>| {
        value
            .and_then(serde_json::Value::as_str)
            .is_some_and(|text| !text.is_empty())
    };
    named(settings.pointer("/security/auth/selectedType"))
        || named(settings.get("selectedAuthType"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_claudes_auth_status() {
        assert!(logged_out_json(
            r#"{"loggedIn": false, "authMethod": "none", "apiProvider": "firstParty"}"#
        ));
        assert!(!logged_out_json(
            r#"{"loggedIn": true, "authMethod": "claude.ai"}"#
        ));
        assert!(!logged_out_json("Logged in as someone"));
        // What Claude Code 2.1.332 printed, logged out (tests/fixtures/agents).
        assert!(logged_out_json(include_str!(
            "../tests/fixtures/agents/claude-2.1.332/auth-status.stdout"
        )));
    }

    #[test]
    #[expect(
        clippy::disallowed_methods,
        reason = "the test writes a Gemini settings file in a throwaway home"
    )]
    fn gemini_auth_from_variables_or_settings() {
        let home = tempfile::tempdir().expect("home");
        let env = |extra: &[(&str, Option<&str>)]| -> Vec<(OsString, Option<OsString>)> {
            let mut env: Vec<(OsString, Option<OsString>)> = GEMINI_AUTH_VARIABLES
                .iter()
                .map(|key| (OsString::from(key), None))
                .collect();
            env.push(("HOME".into(), Some(home.path().into())));
            env.extend(
                extra
                    .iter()
                    .map(|(key, value)| (OsString::from(key), value.map(OsString::from))),
            );
            env
        };
        assert!(!gemini_has_auth(&env(&[])));
        assert!(!gemini_has_auth(&env(&[("GEMINI_API_KEY", Some(""))])));
        assert!(gemini_has_auth(&env(&[("GEMINI_API_KEY", Some("k"))])));
        let settings = home.path().join(".gemini");
        std::fs::create_dir_all(&settings).expect("dir");
        std::fs::write(settings.join("settings.json"), r#"{"ui": {}}"#).expect("write");
        assert!(!gemini_has_auth(&env(&[])));
        std::fs::write(
            settings.join("settings.json"),
            r#"{"security": {"auth": {"selectedType": "oauth-personal"}}}"#,
        )
        .expect("write");
        assert!(gemini_has_auth(&env(&[])));
    }

    #[test]
    fn the_message_names_the_seat_what_it_said_and_the_fix() {
        let error = NotReady {
            seat: "claude".into(),
            problem: "it is not logged in (`claude auth status`)".into(),
            said: r#"{"loggedIn": false}"#.into(),
            fix: Preset::Claude.check().login.into(),
        };
        assert_eq!(
            error.to_string(),
            "the seat `claude` cannot run: it is not logged in (`claude auth status`); it said: \
             {\"loggedIn\": false}\nTo fix it: run `claude`, then `/login` in it (or set \
             ANTHROPIC_API_KEY)"
        );
    }
}
