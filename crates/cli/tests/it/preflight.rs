//! Seat preflight through the real binary: a preset seat whose program is missing or not logged
//! in stops the run before anything starts (exit 2, every such seat, what its CLI said, the
//! fix), and `--no-preflight` skips the check; `epic plan` checks its architect's seats the same
//! way. The stand-ins answer the status commands as the real CLIs do offline (as the agent CLIs
//! document them): `claude auth status` prints its JSON with `"loggedIn": false` and exits 1,
//! `codex login status` prints `Not logged in` and exits 1.
//! Signed in another way (a Codex provider of its own with its key, Claude Code's key, token or
//! cloud switch), the logged-out status does not stop the run; a provider whose key variable is
//! empty does, naming the variable and the file.

use std::path::PathBuf;

use crate::util::{Repo, file_plan};

/// A directory `name` of the tools a run needs (`sh`, `git`, …) and of stand-ins written by the test;
/// no agent CLI of the machine is on it.
fn bin_with(repo: &Repo, name: &str, stand_ins: &[(&str, &str)]) -> PathBuf {
    let bin = repo.temp().join(name);
    std::fs::create_dir_all(&bin).expect("bin dir");
    for tool in [
        "sh", "git", "cat", "env", "mkdir", "rm", "test", "echo", "touch",
    ] {
        let found = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|dir| dir.join(tool))
            .find(|path| path.is_file());
        if let Some(found) = found {
            std::os::unix::fs::symlink(found, bin.join(tool)).expect("link a tool");
        }
    }
    for (name, body) in stand_ins {
        let path = bin.join(name);
        epic_test_support::script(&path, body);
    }
    bin
}

/// The variables by which a CLI signs in without its login, none of which a test inherits.
const SIGN_IN_VARIABLES: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_USE_FOUNDRY",
    "CODEX_HOME",
    "CODEX_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_GENAI_USE_GCA",
];

/// `epic run plan.json ARGS` with `PATH` set to `bin`, `HOME` a throwaway one in the temporary
/// directory (`home/`), no sign-in variable but those of `env`: its exit code and standard error.
fn run_with(
    repo: &Repo,
    bin: &std::path::Path,
    env: &[(&str, &str)],
    args: &[&str],
) -> (Option<i32>, String) {
    let mut all = vec!["run", "plan.json", "--no-progress", "--sandbox", "off"];
    all.extend_from_slice(args);
    let home = repo.temp().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let mut command = repo.command(&all);
    command.env("PATH", bin).env("HOME", &home);
    for name in SIGN_IN_VARIABLES {
        command.env_remove(name);
    }
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().expect("run epic");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// [`run_with`] and no sign-in variable.
fn run(repo: &Repo, bin: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    run_with(repo, bin, &[], args)
}

/// A `claude` that is not logged in: its status says so, and a turn fails as the real one does.
const CLAUDE_LOGGED_OUT: &str = r#"if [ "$1 $2" = "auth status" ]; then
  printf '{\n  "loggedIn": false,\n  "authMethod": "none",\n  "apiProvider": "firstParty"\n}\n'
  exit 1
fi
touch "$MARKER"
echo '{"type":"result","subtype":"success","is_error":true,"result":"Not logged in · Please run /login"}'
exit 1
"#;

#[test]
fn a_logged_out_seat_stops_the_run_before_anything_starts() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let bin = bin_with(&repo, "bin", &[("claude", CLAUDE_LOGGED_OUT)]);
    let (code, stderr) = run(&repo, &bin, &["--coder", "claude"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("the seat `claude` cannot run: it is not logged in (`claude auth status`)")
            && stderr.contains("\"loggedIn\": false")
            && stderr.contains("run `claude`, then `/login` in it")
            && stderr.contains("--no-preflight"),
        "{stderr}"
    );
    assert!(
        !repo.temp().join("shop.worktrees").exists(),
        "no worktree was made"
    );
}

#[test]
fn no_preflight_skips_the_check() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let bin = bin_with(&repo, "bin", &[("claude", CLAUDE_LOGGED_OUT)]);
    let marker = repo.temp().join("a-turn-ran");
    let output = repo
        .command(&[
            "run",
            "plan.json",
            "--no-progress",
            "--sandbox",
            "off",
            "--coder",
            "claude",
            "--no-preflight",
        ])
        .env("PATH", &bin)
        .env("MARKER", &marker)
        .output()
        .expect("run epic");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(marker.exists(), "the turn ran: {stderr}");
    assert!(!stderr.contains("cannot run"), "{stderr}");
}

#[test]
fn a_missing_program_and_a_logged_out_judge_name_their_seat() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    // No codex at all: the coder's check says what installs it.
    let bin = bin_with(&repo, "bare", &[]);
    let (code, stderr) = run(&repo, &bin, &["--coder", "codex"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr
            .contains("the seat `codex` cannot run: `codex` is not installed (not found on PATH)")
            && stderr.contains("npm install -g @openai/codex"),
        "{stderr}"
    );
    // A script coder needs no check; a logged-out codex judge does.
    let bin = bin_with(
        &repo,
        "logged-out",
        &[(
            "codex",
            "if [ \"$1 $2\" = \"login status\" ]; then echo 'Not logged in' >&2; exit 1; fi\nexit 9\n",
        )],
    );
    let (code, stderr) = run(&repo, &bin, &["--coder", "script", "--judge", "codex"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("the seat `codex` cannot run: it is not logged in (`codex login status`); it said: Not logged in")
            && stderr.contains("codex login"),
        "{stderr}"
    );
}

/// A `codex` whose `login status` says it is not logged in, as the real one does with a
/// provider of its own; a turn writes the story's file and answers.
const CODEX_LOGGED_OUT: &str = r#"if [ "$1 $2" = "login status" ]; then echo 'Not logged in' >&2; exit 1; fi
cat > /dev/null
case "$EPIC_ROLE" in
planner) echo '{"type":"item.completed","item":{"type":"agent_message","text":"{\"tasks\":[{\"title\":\"write it\",\"description\":\"the file\"}]}"}}' ;;
*) mkdir -p a && echo alpha > a/a.txt; echo '{"type":"item.completed","item":{"type":"agent_message","text":"wrote a"}}' ;;
esac
"#;

/// Writes Codex's configuration in the throwaway home: a provider of its own on loopback whose
/// key is in `PROVIDER_KEY`.
fn codex_provider_config(repo: &Repo) -> PathBuf {
    let config = repo.temp().join("home/.codex/config.toml");
    std::fs::create_dir_all(config.parent().expect("dir")).expect("codex dir");
    std::fs::write(
        &config,
        "model_provider = \"local\"\n\n[model_providers.local]\nname = \"Local\"\n\
         base_url = \"http://127.0.0.1:9/v1\"\nwire_api = \"responses\"\n\
         env_key = \"PROVIDER_KEY\"\n",
    )
    .expect("write the codex config");
    config
}

#[test]
fn a_codex_provider_of_its_own_with_its_key_passes_without_the_login() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let bin = bin_with(&repo, "bin", &[("codex", CODEX_LOGGED_OUT)]);
    codex_provider_config(&repo);
    let (code, stderr) = run_with(
        &repo,
        &bin,
        &[("PROVIDER_KEY", "sk-local")],
        &["--coder", "codex"],
    );
    assert!(!stderr.contains("cannot run"), "{stderr}");
    assert_eq!(code, Some(0), "the stand-in's turn did the story: {stderr}");
}

#[test]
fn a_codex_provider_whose_key_is_empty_stops_the_run_naming_it() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let bin = bin_with(&repo, "bin", &[("codex", CODEX_LOGGED_OUT)]);
    let config = codex_provider_config(&repo);
    for env in [&[("PROVIDER_KEY", "")][..], &[][..]] {
        let (code, stderr) = run_with(&repo, &bin, env, &["--coder", "codex"]);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.contains("the seat `codex` cannot run: its model provider `local`")
                && stderr.contains(&format!("`{}`", config.display()))
                && stderr.contains("takes its key from `PROVIDER_KEY`, which is empty or not set")
                && stderr.contains("set PROVIDER_KEY to the provider's key"),
            "{stderr}"
        );
        assert!(
            !repo.temp().join("shop.worktrees").exists(),
            "no worktree was made"
        );
    }
    // CODEX_HOME moves the configuration: the default one is not read then.
    let (code, stderr) = run_with(
        &repo,
        &bin,
        &[(
            "CODEX_HOME",
            repo.temp().join("elsewhere").to_str().expect("utf-8"),
        )],
        &["--coder", "codex"],
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("it is not logged in (`codex login status`)"),
        "{stderr}"
    );
}

#[test]
fn claude_signed_in_by_a_key_a_token_or_a_cloud_provider_passes() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let bin = bin_with(&repo, "bin", &[("claude", CLAUDE_LOGGED_OUT)]);
    let marker = repo.temp().join("a-turn-ran");
    let marker = marker.to_str().expect("utf-8");
    for env in [
        &[("ANTHROPIC_API_KEY", "sk-ant")][..],
        &[
            ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),
            ("ANTHROPIC_AUTH_TOKEN", "token"),
        ][..],
        &[("CLAUDE_CODE_USE_BEDROCK", "1")][..],
        &[("CLAUDE_CODE_USE_VERTEX", "1")][..],
    ] {
        let mut with_marker = env.to_vec();
        with_marker.push(("MARKER", marker));
        let (_, stderr) = run_with(&repo, &bin, &with_marker, &["--coder", "claude"]);
        assert!(
            !stderr.contains("(`claude auth status`)"),
            "{env:?}: {stderr}"
        );
        assert!(
            repo.temp().join("a-turn-ran").exists(),
            "{env:?}: a turn ran: {stderr}"
        );
        std::fs::remove_file(repo.temp().join("a-turn-ran")).expect("remove the marker");
    }
    // A base URL without a token is no way in.
    let (code, stderr) = run_with(
        &repo,
        &bin,
        &[("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")],
        &["--coder", "claude"],
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("it is not logged in"), "{stderr}");
}

#[test]
fn the_check_covers_every_seat_of_a_roster_and_names_each_that_cannot_run() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    // The roster's first seat is the built-in script, which needs no check; its second is a
    // Claude Code that is not logged in, and the judge's Codex is not installed: the run stops
    // before anything starts, naming both, so that one rerun is enough once both are fixed.
    let bin = bin_with(&repo, "bin", &[("claude", CLAUDE_LOGGED_OUT)]);
    let (code, stderr) = run(
        &repo,
        &bin,
        &["--coder", "script,claude", "--judge", "codex"],
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("the seat `claude` cannot run: it is not logged in")
            && stderr.contains("the seat `codex` cannot run: `codex` is not installed"),
        "{stderr}"
    );
    assert!(
        stderr.find("`claude` cannot run") < stderr.find("`codex` cannot run"),
        "in role order: {stderr}"
    );
    assert!(
        !repo.temp().join("shop.worktrees").exists(),
        "no worktree was made"
    );
}

/// `epic plan` checks its architect's seats as `epic run` checks its own: a logged-out
/// architect stops it before the first round, with the fix; `--no-preflight` skips the check.
#[test]
fn epic_plan_checks_the_architects_seats_first() {
    let repo = Repo::new();
    let bin = bin_with(&repo, "bin", &[("claude", CLAUDE_LOGGED_OUT)]);
    let marker = repo.temp().join("a-turn-ran");
    let plan = |extra: &[&str]| {
        let mut args = vec![
            "plan",
            "Greet.",
            "--architect",
            "claude,codex",
            "--sandbox",
            "off",
        ];
        args.extend_from_slice(extra);
        let output = repo
            .command(&args)
            .env("PATH", &bin)
            .env("HOME", repo.temp().join("home"))
            .env("MARKER", &marker)
            .output()
            .expect("run epic");
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (code, stderr) = plan(&[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("the seat `claude` cannot run: it is not logged in")
            && stderr.contains("the seat `codex` cannot run: `codex` is not installed")
            && stderr.contains("--no-preflight"),
        "{stderr}"
    );
    assert!(!marker.exists(), "no turn ran");
    assert!(
        !repo.path().join("epic-plan.md").exists(),
        "no plan written"
    );
    let (code, stderr) = plan(&["--no-preflight"]);
    assert!(
        marker.exists(),
        "with --no-preflight the turn ran: {stderr}"
    );
    assert!(!stderr.contains("cannot run"), "{stderr}");
    assert_ne!(code, Some(0), "{stderr}");
}

/// An `aider` that answers `--version`, and fails every turn without touching anything.
const AIDER: &str = r#"if [ "$1" = "--version" ]; then echo "aider 0.86.2"; exit 0; fi
echo "no model here" >&2
exit 1
"#;

/// aider writes a missing git identity into the repository's `.git/config`, which epic keeps
/// from agents: without one the seat check stops the run, naming the key and the fix; with one
/// it passes and the turns run.
#[test]
fn aider_without_a_git_identity_stops_the_run_naming_the_fix() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let bin = bin_with(&repo, "bin", &[("aider", AIDER)]);
    // The test's repository has no identity, and its HOME none either (epic commits as its
    // own fallback).
    let (code, stderr) = run(&repo, &bin, &["--coder", "aider"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "the seat `aider` cannot run: aider needs a git identity, and `user.name` is set \
             in no git configuration"
        ) && stderr.contains("git config --global user.name \"Your Name\""),
        "{stderr}"
    );
    assert!(
        !repo.temp().join("shop.worktrees").exists(),
        "no worktree was made"
    );

    repo.git(&["config", "user.name", "Someone"]);
    let (code, stderr) = run(&repo, &bin, &["--coder", "aider"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("`user.email` is set in no git configuration"),
        "{stderr}"
    );

    repo.git(&["config", "user.email", "someone@example.com"]);
    let (code, stderr) = run(&repo, &bin, &["--coder", "aider"]);
    assert_eq!(code, Some(1), "the turns ran and failed: {stderr}");
    assert!(!stderr.contains("cannot run"), "{stderr}");
}
