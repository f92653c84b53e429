//! Seat preflight: before the first story, each seat in use is checked without spending a
//! token, so that a missing program or a logged-out CLI stops the run once, before anything
//! starts, instead of failing every ready story one after another.
//!
//! | preset | installed | signed in |
//! | --- | --- | --- |
//! | `claude` | `claude auth status` starts | `ANTHROPIC_API_KEY` or `ANTHROPIC_AUTH_TOKEN` is set (with `ANTHROPIC_BASE_URL` or without), or `CLAUDE_CODE_USE_BEDROCK`, `CLAUDE_CODE_USE_VERTEX` or `CLAUDE_CODE_USE_FOUNDRY` is on; else the status exits 0 and, where it prints JSON, says `"loggedIn": true` |
//! | `codex` | `codex login status` starts | the model provider `$CODEX_HOME/config.toml` (`~/.codex/config.toml`) chooses is its own (`[model_providers.NAME]`): its `env_key` variable is set (empty or unset: the seat fails, naming it), or it has no key and does not ask for the `openai` login; or `CODEX_API_KEY` is set (`codex exec` reads it); else the status exits 0 |
//! | `gemini` | `gemini --version` starts | `GEMINI_API_KEY`, `GOOGLE_API_KEY`, `GOOGLE_GENAI_USE_VERTEXAI` or `GOOGLE_GENAI_USE_GCA` is set (with `GOOGLE_GEMINI_BASE_URL` or without), or `~/.gemini/settings.json` names an auth type |
//! | `aider`, `opencode` | `PROGRAM --version` starts and exits 0 | not checked: they take keys many ways; aider needs a git identity (`git config --get user.name` and `user.email` in the repository), which it would otherwise write into the repository's configuration |
//!
//! "Set" is set and not empty, in the seat's environment: the seat's own variables over this
//! process's. A shell seat (`exec:`) and the built-in script seat are not checked: what they
//! run is the user's.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::preset::Preset;
use epic_process::{self as process, Ending, Limits, Spec};

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
                        standard input, or set CODEX_API_KEY, or choose a model provider of your \
                        own in ~/.codex/config.toml with its key's variable as `env_key`)",
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
pub async fn check_preset(
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
    let vars = SeatVars(env);
    let signed_in = match preset {
        Preset::Claude => claude_signs_in(&vars).is_some(),
        Preset::Codex => codex_signs_in(seat, &vars)?,
        _ => false,
    };
    // The status command started and answered: the program is there. Its answer is about the
    // login, which another way of signing in makes moot.
    if signed_in {
        return Ok(());
    }
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
    if preset == Preset::Aider
        && let Some(key) = missing_identity(env, dir).await
    {
        return Err(not_ready(
            format!(
                "aider needs a git identity, and `{key}` is set in no git configuration: aider \
                 would write one into the repository's `.git/config`, which epic keeps from \
                 agents, and its turn would fail"
            ),
            String::new(),
            "git config --global user.name \"Your Name\" && git config --global user.email \
             you@example.com",
        ));
    }
    if preset == Preset::Gemini && !gemini_has_auth(&vars) {
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

/// Whether Codex signs in without its login (a provider of its own with its key, or none
/// needed; `CODEX_API_KEY`); a provider whose key variable is empty or unset is not ready,
/// naming the variable and the configuration file.
fn codex_signs_in(seat: &str, vars: &SeatVars<'_>) -> Result<bool, NotReady> {
    match codex_provider(vars) {
        Provider::Keyed { .. } | Provider::Keyless | Provider::ApiKey => Ok(true),
        Provider::OpenAi => Ok(false),
        Provider::MissingKey {
            provider,
            variable,
            config,
        } => Err(NotReady {
            seat: seat.to_owned(),
            problem: format!(
                "its model provider `{provider}` (`model_provider` in `{}`) takes its key from \
                 `{variable}`, which is empty or not set",
                config.display()
            ),
            said: String::new(),
            fix: format!(
                "set {variable} to the provider's key in the environment epic runs in (or change \
                 `env_key` in `{}`)",
                config.display()
            ),
        }),
    }
}

/// [`epic_git_ops::missing_identity`] for git run in `dir` with `env` as an agent's turn
/// runs it, off the async threads.
async fn missing_identity(
    env: &[(OsString, Option<OsString>)],
    dir: &Path,
) -> Option<&'static str> {
    let (env, dir) = (env.to_vec(), dir.to_path_buf());
    tokio::task::spawn_blocking(move || epic_git_ops::missing_identity(&dir, &env))
        .await
        .ok()
        .flatten()
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
        // No watchdog here: a stall would read as the time-out it stands for.
        Ending::TimedOut | Ending::Stalled => Ran::TimedOut(said),
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

/// A seat's environment: its own variables over this process's.
struct SeatVars<'a>(&'a [(OsString, Option<OsString>)]);

impl SeatVars<'_> {
    /// Variable `key`'s value, as the seat's process gets it.
    fn get(&self, key: &str) -> Option<OsString> {
        match self.0.iter().rev().find(|(name, _)| name == key) {
            Some((_, value)) => value.clone(),
            None => std::env::var_os(key),
        }
    }

    /// Whether variable `key` is set and not empty.
    fn set(&self, key: &str) -> bool {
        self.get(key).is_some_and(|value| !value.is_empty())
    }

    /// Whether variable `key` is set to something other than empty, `0` or `false` (a switch
    /// such as `CLAUDE_CODE_USE_BEDROCK=1`).
    fn on(&self, key: &str) -> bool {
        self.get(key).is_some_and(|value| {
            !value.is_empty() && value != "0" && !value.eq_ignore_ascii_case("false")
        })
    }

    /// The home directory (`HOME`), if set.
    fn home(&self) -> Option<PathBuf> {
        self.get("HOME")
            .filter(|home| !home.is_empty())
            .map(PathBuf::from)
    }
}

/// The variables that give Claude Code a key or a token of its own, each enough without a login
/// (`ANTHROPIC_BASE_URL` points either at another server).
const CLAUDE_KEY_VARIABLES: [&str; 2] = ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"];

/// The switches that send Claude Code to a cloud provider, which signs in its own way (AWS's,
/// Google Cloud's, Azure's credentials).
const CLAUDE_PROVIDER_SWITCHES: [&str; 3] = [
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_USE_FOUNDRY",
];

/// The variable by which Claude Code signs in without its own login, if one is set.
fn claude_signs_in(vars: &SeatVars<'_>) -> Option<&'static str> {
    CLAUDE_KEY_VARIABLES
        .into_iter()
        .find(|key| vars.set(key))
        .or_else(|| {
            CLAUDE_PROVIDER_SWITCHES
                .into_iter()
                .find(|key| vars.on(key))
        })
}

/// The model provider Codex uses, as its configuration and the seat's environment say.
#[derive(Debug, PartialEq, Eq)]
enum Provider {
    /// The built-in `openai` provider: the login decides (`codex login status`).
    OpenAi,
    /// `CODEX_API_KEY` is set: `codex exec` signs in with it.
    ApiKey,
    /// A provider of the configuration's own whose key variable is set.
    Keyed {
        /// The variable.
        variable: String,
    },
    /// A provider of the configuration's own that takes no key (a local server), or a
    /// built-in local one (`ollama`, `lmstudio`).
    Keyless,
    /// A provider of the configuration's own whose key variable is empty or not set.
    MissingKey {
        /// The provider's name.
        provider: String,
        /// The variable (`env_key`).
        variable: String,
        /// The configuration file that names it.
        config: PathBuf,
    },
}

/// Codex's built-in providers that run on this machine and take no key.
const CODEX_LOCAL_PROVIDERS: [&str; 3] = ["oss", "ollama", "lmstudio"];

/// The provider Codex signs in to, from `$CODEX_HOME/config.toml` (`~/.codex/config.toml`):
/// `model_provider` (or the default `profile`'s) naming a `[model_providers.NAME]` table with
/// `env_key`, `requires_openai_auth`. A file that cannot be read or parsed names no provider of
/// its own (Codex then says what is wrong with it).
fn codex_provider(vars: &SeatVars<'_>) -> Provider {
    let config = match vars.get("CODEX_HOME").filter(|home| !home.is_empty()) {
        Some(home) => PathBuf::from(home).join("config.toml"),
        None => match vars.home() {
            Some(home) => home.join(".codex").join("config.toml"),
            None => PathBuf::new(),
        },
    };
    let table = read_toml(&config).unwrap_or_default();
    let text = |value: Option<&toml::Value>| value.and_then(toml::Value::as_str).map(str::to_owned);
    let profile = text(table.get("profile")).and_then(|name| {
        table
            .get("profiles")
            .and_then(|profiles| profiles.get(&name))
            .and_then(|profile| text(profile.get("model_provider")))
    });
    let chosen = profile.or_else(|| text(table.get("model_provider")));
    let own = chosen.as_ref().and_then(|name| {
        table
            .get("model_providers")
            .and_then(|providers| providers.get(name))
    });
    match (chosen, own) {
        (Some(provider), Some(own)) => {
            if let Some(variable) = text(own.get("env_key")) {
                if vars.set(&variable) {
                    Provider::Keyed { variable }
                } else {
                    Provider::MissingKey {
                        provider,
                        variable,
                        config,
                    }
                }
            } else if own
                .get("requires_openai_auth")
                .and_then(toml::Value::as_bool)
                == Some(true)
            {
                codex_openai(vars)
            } else {
                Provider::Keyless
            }
        }
        (Some(provider), None) if CODEX_LOCAL_PROVIDERS.contains(&provider.as_str()) => {
            Provider::Keyless
        }
        _ => codex_openai(vars),
    }
}

/// The built-in `openai` provider: signed in by `CODEX_API_KEY`, else by the login.
fn codex_openai(vars: &SeatVars<'_>) -> Provider {
    if vars.set("CODEX_API_KEY") {
        Provider::ApiKey
    } else {
        Provider::OpenAi
    }
}

/// The TOML table in the file at `path`, if it can be read and parsed.
#[expect(
    clippy::disallowed_methods,
    reason = "reads Codex's own configuration file: neither the state directory nor a repository"
)]
fn read_toml(path: &Path) -> Option<toml::Table> {
    std::fs::read_to_string(path).ok()?.parse().ok()
}

/// Whether Gemini CLI, with the seat's environment, has a way to sign in: one of
/// [`GEMINI_AUTH_VARIABLES`] set and not empty (a key sent to `GOOGLE_GEMINI_BASE_URL` as
/// well), or an auth type in its settings (`security.auth.selectedType`, or the older
/// top-level `selectedAuthType`).
fn gemini_has_auth(vars: &SeatVars<'_>) -> bool {
    if GEMINI_AUTH_VARIABLES.iter().any(|key| vars.set(key)) {
        return true;
    }
    let Some(home) = vars.home() else {
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
        let has_auth = |pairs: &[(&str, Option<&str>)]| gemini_has_auth(&SeatVars(&env(pairs)));
        assert!(!has_auth(&[]));
        assert!(!has_auth(&[("GEMINI_API_KEY", Some(""))]));
        assert!(has_auth(&[("GEMINI_API_KEY", Some("k"))]));
        assert!(has_auth(&[
            ("GEMINI_API_KEY", Some("k")),
            ("GOOGLE_GEMINI_BASE_URL", Some("http://127.0.0.1:9"))
        ]));
        assert!(
            !has_auth(&[("GOOGLE_GEMINI_BASE_URL", Some("http://127.0.0.1:9"))]),
            "a server without a key"
        );
        let settings = home.path().join(".gemini");
        std::fs::create_dir_all(&settings).expect("dir");
        std::fs::write(settings.join("settings.json"), r#"{"ui": {}}"#).expect("write");
        assert!(!has_auth(&[]));
        std::fs::write(
            settings.join("settings.json"),
            r#"{"security": {"auth": {"selectedType": "oauth-personal"}}}"#,
        )
        .expect("write");
        assert!(has_auth(&[]));
    }

    /// A seat environment of `pairs` with every variable a check reads unset but those, and
    /// `HOME` at `home`.
    fn vars_of(home: &Path, pairs: &[(&str, &str)]) -> Vec<(OsString, Option<OsString>)> {
        let mut env: Vec<(OsString, Option<OsString>)> = CLAUDE_KEY_VARIABLES
            .iter()
            .chain(&CLAUDE_PROVIDER_SWITCHES)
            .chain(&GEMINI_AUTH_VARIABLES)
            .chain(&[
                "CODEX_HOME",
                "CODEX_API_KEY",
                "PROVIDER_KEY",
                "ANTHROPIC_BASE_URL",
            ])
            .map(|key| (OsString::from(key), None))
            .collect();
        env.push(("HOME".into(), Some(home.into())));
        env.extend(
            pairs
                .iter()
                .map(|(key, value)| (OsString::from(key), Some(OsString::from(value)))),
        );
        env
    }

    #[test]
    fn claude_signs_in_by_a_key_a_token_or_a_cloud_provider() {
        let home = tempfile::tempdir().expect("home");
        let signs_in =
            |pairs: &[(&str, &str)]| claude_signs_in(&SeatVars(&vars_of(home.path(), pairs)));
        assert_eq!(signs_in(&[]), None);
        assert_eq!(signs_in(&[("ANTHROPIC_API_KEY", "")]), None);
        assert_eq!(
            signs_in(&[("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")]),
            None,
            "a server without a token"
        );
        assert_eq!(
            signs_in(&[("ANTHROPIC_API_KEY", "k")]),
            Some("ANTHROPIC_API_KEY")
        );
        assert_eq!(
            signs_in(&[
                ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),
                ("ANTHROPIC_AUTH_TOKEN", "t")
            ]),
            Some("ANTHROPIC_AUTH_TOKEN")
        );
        assert_eq!(
            signs_in(&[("CLAUDE_CODE_USE_BEDROCK", "1")]),
            Some("CLAUDE_CODE_USE_BEDROCK")
        );
        assert_eq!(
            signs_in(&[("CLAUDE_CODE_USE_VERTEX", "true")]),
            Some("CLAUDE_CODE_USE_VERTEX")
        );
        assert_eq!(signs_in(&[("CLAUDE_CODE_USE_VERTEX", "0")]), None);
        assert_eq!(signs_in(&[("CLAUDE_CODE_USE_BEDROCK", "false")]), None);
    }

    #[test]
    #[expect(
        clippy::disallowed_methods,
        reason = "the test writes Codex configuration files in a throwaway home"
    )]
    fn codex_signs_in_to_its_configured_provider() {
        let home = tempfile::tempdir().expect("home");
        let config = home.path().join(".codex").join("config.toml");
        std::fs::create_dir_all(config.parent().expect("dir")).expect("dir");
        let provider = |text: &str, pairs: &[(&str, &str)]| {
            std::fs::write(&config, text).expect("write the config");
            codex_provider(&SeatVars(&vars_of(home.path(), pairs)))
        };
        let custom = "model_provider = \"local\"\n\
                      [model_providers.local]\n\
                      base_url = \"http://127.0.0.1:9/v1\"\n\
                      env_key = \"PROVIDER_KEY\"\n";
        assert_eq!(
            provider(custom, &[("PROVIDER_KEY", "k")]),
            Provider::Keyed {
                variable: "PROVIDER_KEY".into()
            }
        );
        for pairs in [&[][..], &[("PROVIDER_KEY", "")][..]] {
            assert_eq!(
                provider(custom, pairs),
                Provider::MissingKey {
                    provider: "local".into(),
                    variable: "PROVIDER_KEY".into(),
                    config: config.clone(),
                }
            );
        }
        // OpenAI's own, or a provider that asks for its login: the login decides, or
        // CODEX_API_KEY.
        assert_eq!(provider("model = \"gpt-5\"\n", &[]), Provider::OpenAi);
        assert_eq!(provider("", &[("CODEX_API_KEY", "k")]), Provider::ApiKey);
        assert_eq!(
            provider(
                "model_provider = \"proxy\"\n[model_providers.proxy]\nrequires_openai_auth = true\n",
                &[]
            ),
            Provider::OpenAi
        );
        // A local server without a key, a built-in local provider.
        assert_eq!(
            provider(
                "model_provider = \"mine\"\n[model_providers.mine]\nbase_url = \"http://127.0.0.1:9/v1\"\n",
                &[]
            ),
            Provider::Keyless
        );
        assert_eq!(
            provider("model_provider = \"ollama\"\n", &[]),
            Provider::Keyless
        );
        // The default profile's provider wins; a file that is not TOML names none.
        let profiled = format!(
            "profile = \"work\"\nmodel_provider = \"ollama\"\n[profiles.work]\nmodel_provider = \"local\"\n{}",
            custom.replace("model_provider = \"local\"\n", "")
        );
        assert!(matches!(
            provider(&profiled, &[]),
            Provider::MissingKey { .. }
        ));
        assert_eq!(provider("model_provider = [", &[]), Provider::OpenAi);
        // CODEX_HOME moves the file.
        let elsewhere = tempfile::tempdir().expect("codex home");
        std::fs::write(elsewhere.path().join("config.toml"), custom).expect("write");
        std::fs::write(&config, "").expect("empty the default one");
        let codex_home = elsewhere.path().to_str().expect("utf-8");
        assert!(matches!(
            codex_provider(&SeatVars(&vars_of(
                home.path(),
                &[("CODEX_HOME", codex_home)]
            ))),
            Provider::MissingKey { config, .. } if config == elsewhere.path().join("config.toml")
        ));
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
