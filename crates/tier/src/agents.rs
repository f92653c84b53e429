//! `cargo xtask agents`: the presets proven against the real agent CLIs.
//!
//! The stand-ins of the test suite speak the agents' formats as documented; this tier runs the
//! real programs. It installs the CLIs pinned in `xtask/agents.txt` with npm into a cache
//! directory of their own (once per set of versions, reused after), builds `epic`, and drives
//! `epic run` with each preset in each role against them, each case in a fresh repository with
//! a throwaway `HOME` and no API key in the environment, so the real programs show what they do
//! offline and logged out:
//!
//! - **preflight**: the preset as the coder; the seat check stops the run (exit 2) naming the
//!   seat, before any story starts.
//! - **coder, judge, reviewer** (`--no-preflight`): the real program accepts the preset's
//!   command line for that role and gets as far as its login or network step (its own words
//!   for it appear in the run's output, transcripts or report), never a usage error.
//! - **trust**: no output of Gemini CLI holds "Approval mode overridden" (the preset trusts the
//!   worktree for the session).
//! - **signed in another way**: each CLI configured for a server of its own on 127.0.0.1 (a
//!   port nothing listens on): Codex with a model provider of its own in `~/.codex/config.toml`
//!   and its key in the variable `env_key` names, Claude Code with `ANTHROPIC_BASE_URL` and a
//!   token, Gemini CLI with a key, `GOOGLE_GEMINI_BASE_URL` and its auth type in
//!   `~/.gemini/settings.json`. The seat check passes (no exit 2, no "cannot run"), and the turn,
//!   in the sandbox, reads the CLI's own configuration and gets to the network; Codex's provider
//!   with its key variable empty is refused, naming the variable.
//!
//! First, needing no agent CLI, the HTML report drawn by headless Chromium
//! ([`crate::report_html`]); a filter that selects only it installs nothing. Then the served
//! cases ([`crate::served`]): the same CLIs, opencode and aider doing an epic of
//! three stories against the scripted model server, and the failures it plays.
//!
//! Every case's home holds fake keys in the credential stores the sandbox hides (`~/.ssh`,
//! `~/.aws`, `~/.config/gh`, `~/.netrc`, `~/.git-credentials`): the real CLIs run with them
//! hidden and their own configuration directories readable.
//!
//! Each case has a deadline; a case that fails prints what the run printed.

use std::collections::hash_map::DefaultHasher;
use std::fs;
use std::hash::{Hash as _, Hasher as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cases::{KEYS, files_under, indent, run_with_deadline};
use crate::scratch::{path_with, scratch_repo_with};
use crate::served::Served;
use crate::server::GEMINI_SETTINGS;
use crate::{Result, root, run_cargo, say};

/// The file naming the pinned versions, from the workspace root.
pub(crate) const VERSIONS: &str = "xtask/agents.txt";

/// The presets the tier proves, with the words each prints when it reached its login or network
/// step (any one of them will do), and how `epic run` then ends: a seat not logged in stops the
/// run (exit 2), an outage past `--max-wait` interrupts it (exit 130).
const PRESETS: [(&str, &[&str], i32); 3] = [
    (
        "claude",
        &[
            "Not logged in",
            "Please run /login",
            "Invalid API key",
            "Can't reach the API server",
        ],
        2,
    ),
    (
        "codex",
        &[
            "Reconnecting",
            "Not logged in",
            "401 Unauthorized",
            "error sending request",
            "stream disconnected",
        ],
        130,
    ),
    (
        "gemini",
        &[
            "GEMINI_API_KEY",
            "auth method",
            "Auth method",
            "fetch failed",
        ],
        2,
    ),
];

/// Words of a CLI refusing its command line: the preset's flags are wrong.
const USAGE_ERRORS: [&str; 7] = [
    "unknown option",
    "unexpected argument",
    "Unknown argument",
    "Unknown arguments",
    "unrecognized option",
    "error: invalid value",
    "Not enough arguments",
];

/// How long one case may take: a CLI that keeps retrying (Codex reconnects until killed) ends at
/// the turn deadline epic is given, well within it.
const CASE_DEADLINE: Duration = Duration::from_mins(5);

/// The deadline of one agent turn in the cases.
const TURN_TIMEOUT_SECS: &str = "120";

/// How long a turn may only print "cannot reach the service" before it counts as an outage.
const OUTAGE_WAIT: &str = "15s";

/// The longest pause: shorter than the first probe, so an outage stops the run (exit 130).
const MAX_WAIT: &str = "20s";

/// A plan of one story whose description holds a file block, so the built-in `script` coder can
/// do the work when the preset under test takes another role.
const PLAN: &str = r#"{
  "epic_id": "e",
  "epic": "Prove the presets against the real CLIs.",
  "stories": [
    {
      "id": "a",
      "title": "Write a",
      "description": "Write the file.\n\n```file src/a/a.txt\nalpha\n```\n",
      "owned": ["src/a"]
    }
  ]
}
"#;

/// One `epic run` of the tier and what must hold of it.
struct Case {
    name: String,
    preset: &'static str,
    args: Vec<String>,
    /// Variables set for the run (after the keys are removed).
    env: Vec<(&'static str, &'static str)>,
    /// Files written in the throwaway home first: a path from it, the contents.
    home: Vec<(&'static str, &'static str)>,
    /// The run's `--turn-timeout`, in seconds.
    turn_timeout: &'static str,
    expect: Expect,
}

enum Expect {
    /// Exit 2 before anything starts, naming the seat.
    Refused,
    /// Exit 2 before anything starts, naming the seat and these words (the variable).
    RefusedNaming(&'static str),
    /// Past the seat check (not exit 2, no "cannot run"), the program got this far: one of
    /// these words appears.
    Signed(&'static [&'static str]),
    /// The program ran in this role, reached its login or network step (one of these words),
    /// and the run ended with this exit code.
    Reached(&'static [&'static str], i32),
}

/// The cases: for each preset, the preflight, and each role with the preflight off.
fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for (preset, reached, code) in PRESETS {
        cases.push(Case {
            name: format!("{preset}: the preflight refuses a logged-out seat"),
            preset,
            args: vec!["--coder".into(), preset.into()],
            env: Vec::new(),
            home: Vec::new(),
            turn_timeout: TURN_TIMEOUT_SECS,
            expect: Expect::Refused,
        });
        for (role, args) in [
            ("coder", vec!["--coder", preset]),
            ("judge", vec!["--coder", "script", "--judge", preset]),
            ("reviewer", vec!["--coder", "script", "--reviewer", preset]),
        ] {
            let mut args: Vec<String> = args.into_iter().map(str::to_owned).collect();
            args.push("--no-preflight".into());
            cases.push(Case {
                name: format!("{preset} as {role}: its command line reaches the login step"),
                preset,
                args,
                env: Vec::new(),
                home: Vec::new(),
                turn_timeout: TURN_TIMEOUT_SECS,
                expect: Expect::Reached(reached, code),
            });
        }
    }
    cases.extend(signed_in_cases());
    cases
}

/// Codex's configuration with a model provider of its own on loopback, its key in
/// `EPIC_AGENTS_KEY`.
const CODEX_PROVIDER: &str = "model_provider = \"local\"\n\n[model_providers.local]\n\
    name = \"Local\"\nbase_url = \"http://127.0.0.1:9/v1\"\nwire_api = \"responses\"\n\
    env_key = \"EPIC_AGENTS_KEY\"\n";

/// What Codex prints when it reaches for a server that is not there.
const CODEX_NETWORK: &[&str] = &[
    "Reconnecting",
    "error sending request",
    "stream disconnected",
    "onnection refused",
];

/// The cases of CLIs signed in without their own login, each run in the sandbox.
fn signed_in_cases() -> Vec<Case> {
    let coder = |preset: &str| -> Vec<String> {
        ["--coder", preset, "--sandbox", "on"]
            .map(str::to_owned)
            .to_vec()
    };
    vec![
        Case {
            name: "codex with a provider of its own and its key: the seat check passes".into(),
            preset: "codex",
            args: coder("codex"),
            env: vec![("EPIC_AGENTS_KEY", "sk-local")],
            home: vec![(".codex/config.toml", CODEX_PROVIDER)],
            turn_timeout: TURN_TIMEOUT_SECS,
            expect: Expect::Signed(CODEX_NETWORK),
        },
        Case {
            name: "codex with a provider of its own and its key empty: refused naming it".into(),
            preset: "codex",
            args: coder("codex"),
            env: vec![("EPIC_AGENTS_KEY", "")],
            home: vec![(".codex/config.toml", CODEX_PROVIDER)],
            turn_timeout: TURN_TIMEOUT_SECS,
            expect: Expect::RefusedNaming("EPIC_AGENTS_KEY"),
        },
        Case {
            name: "claude with a base URL and a token: the seat check passes".into(),
            preset: "claude",
            args: coder("claude"),
            env: vec![
                ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),
                ("ANTHROPIC_AUTH_TOKEN", "sk-local"),
                ("CLAUDE_CODE_MAX_RETRIES", "0"),
                ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ],
            home: Vec::new(),
            turn_timeout: TURN_TIMEOUT_SECS,
            expect: Expect::Signed(&[
                "Can't reach the API server",
                "Connection error",
                "ECONNREFUSED",
                "Unable to connect",
                "API Error",
            ]),
        },
        Case {
            name: "gemini with a key and a base URL: the seat check passes".into(),
            preset: "gemini",
            args: coder("gemini"),
            env: vec![
                ("GEMINI_API_KEY", "local"),
                ("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9"),
            ],
            // Read in the sandbox: without it Gemini CLI exits 41 at once.
            home: vec![(".gemini/settings.json", GEMINI_SETTINGS)],
            // Gemini retries for minutes: a turn still trying at its deadline got past its
            // sign-in, which fails at once; a short deadline, so the case does not wait out
            // the default one.
            turn_timeout: "30",
            expect: Expect::Signed(&["fetch failed", "ECONNREFUSED", "did not finish within"]),
        },
    ]
}

/// `cargo xtask agents [FILTER]`: every case, or those whose name contains `FILTER`, the
/// offline ones and then the served ones ([`crate::served`]); `cargo xtask agents capture [CLI
/// [FAILURE]]`: the real CLIs' (or that one's) outputs of the server's failures (or that one)
/// recorded as fixtures ([`crate::capture::capture`]).
pub(crate) fn run(args: &[String]) -> Result {
    let (capture, filter, failure) = parse(args)?;
    let root = root();
    let packages = read_versions(&root.join(VERSIONS))?;
    let cache = cache_dir(&packages);
    // The HTML report's case needs no agent CLI: a filter that selects it alone installs none.
    let (html, clis) = selected(capture, filter);
    if clis {
        install(&cache, &packages)?;
    }
    // Two builds, not one: built together, the server's tokio features would reach `epic`'s
    // build and rebuild it unlike everyone else's.
    run_cargo(&["build", "--locked", "-p", "epic"])?;
    if clis {
        run_cargo(&["build", "--locked", "-p", "epic-model-server"])?;
    }
    let debug = target_dir(&root).join("debug");
    let epic = debug.join("epic");
    let model_server = debug.join("epic-model-server");
    let bin = cache.join("node_modules").join(".bin");
    // Under the target directory, not /tmp: Codex refuses to set up its sandbox helper under a
    // temporary directory, and its home is in here.
    let scratch = target_dir(&root).join(format!("epic-agents-{}", std::process::id()));
    if capture {
        let bins = crate::capture::Bins {
            npm: &bin,
            pypi: &pypi_bin(&cache),
        };
        let only = crate::capture::Only {
            cli: filter,
            failure,
        };
        let outcome = crate::capture::capture(&packages, &only, &model_server, &bins, &scratch);
        fs::remove_dir_all(&scratch).ok();
        return outcome;
    }
    let mut failed = Vec::new();
    if html {
        let keep = target_dir(&root).join("report-html.png");
        failed.extend(crate::report_html::case(&epic, &scratch, &keep));
    }
    if !clis {
        return finish(&failed, &scratch, &packages);
    }
    let cases: Vec<Case> = cases()
        .into_iter()
        .filter(|case| case.name.contains(filter))
        .collect();
    let pypi = pypi_bin(&cache);
    let served: Vec<Box<dyn Served>> = served_cases()
        .into_iter()
        .filter(|case| case.name().contains(filter))
        .filter(|case| {
            let installed = pypi.join(case.preset()).exists() || case.preset() != "aider";
            if !installed {
                say(&format!("skip {} (aider did not install)", case.name()));
            }
            installed
        })
        .collect();
    if cases.is_empty() && served.is_empty() && !html {
        return Err(format!("no case's name contains `{filter}`"));
    }
    for (n, case) in cases.iter().enumerate() {
        let dir = scratch.join(n.to_string());
        let started = Instant::now();
        let outcome = run_case(case, &epic, &bin, &dir);
        say(&format!(
            "{} {} ({:.0} s)",
            if outcome.is_ok() { "ok  " } else { "FAIL" },
            case.name,
            started.elapsed().as_secs_f64()
        ));
        if let Err(why) = outcome {
            say(&indent(&why));
            failed.push(case.name.clone());
        }
    }
    let tools = crate::served::Tools {
        epic: &epic,
        server: &model_server,
        bins: &[bin.clone(), pypi],
        scratch: &scratch,
    };
    failed.extend(crate::served::run(&served, &tools));
    finish(&failed, &scratch, &packages)
}

/// Whether `filter` selects the HTML report's case, and whether a case that needs the agent
/// CLIs (or `capture`, which always does).
fn selected(capture: bool, filter: &str) -> (bool, bool) {
    let html = !capture && crate::report_html::NAME.contains(filter);
    (html, capture || !html || selects_a_cli_case(filter))
}

/// Whether a case that needs the agent CLIs has a name containing `filter`.
fn selects_a_cli_case(filter: &str) -> bool {
    cases().iter().any(|case| case.name.contains(filter))
        || served_cases()
            .iter()
            .any(|case| case.name().contains(filter))
}

/// Every served case: against the model server, of every module.
fn served_cases() -> Vec<Box<dyn Served>> {
    fn boxed<C: Served + 'static>(cases: Vec<C>) -> impl Iterator<Item = Box<dyn Served>> {
        cases
            .into_iter()
            .map(|case| Box::new(case) as Box<dyn Served>)
    }
    boxed(crate::served::cases())
        .chain(boxed(crate::rosters::cases()))
        .chain(boxed(crate::roles::cases()))
        .chain(boxed(crate::person::cases()))
        .chain(boxed(crate::acp::cases()))
        .collect()
}

/// The tier's verdict: `Ok` (and the scratch directory removed) when no case `failed`.
fn finish(failed: &[String], scratch: &Path, packages: &[String]) -> Result {
    if failed.is_empty() {
        fs::remove_dir_all(scratch).ok();
        say(&format!(
            "xtask agents: every preset proven against {}",
            packages.join(", ")
        ));
        Ok(())
    } else {
        Err(format!(
            "{} case(s) failed against {}:\n  {}",
            failed.len(),
            packages.join(", "),
            failed.join("\n  ")
        ))
    }
}

/// The packages of the versions file: its lines but blank ones and comments.
pub(crate) fn read_versions(path: &Path) -> Result<Vec<String>> {
    let text = fs::read_to_string(path)
        .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    let packages: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_owned)
        .collect();
    if packages.is_empty() {
        return Err(format!("{} names no package", path.display()));
    }
    Ok(packages)
}

/// Where this set of versions is installed: `$XDG_CACHE_HOME/epic/agents/<hash>` (or under
/// `~/.cache`, or cargo's target directory without a home), one directory per set, so moving a
/// version installs afresh and going back reuses.
pub(crate) fn cache_dir(packages: &[String]) -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .unwrap_or_else(|| target_dir(&root()).join("cache"));
    let mut hasher = DefaultHasher::new();
    packages.hash(&mut hasher);
    base.join("epic")
        .join("agents")
        .join(format!("{:016x}", hasher.finish()))
}

/// Installs `packages` into `cache` with npm, unless an earlier install completed there.
pub(crate) fn install(cache: &Path, packages: &[String]) -> Result {
    let pypi: Vec<&str> = packages
        .iter()
        .filter_map(|package| package.strip_prefix("pypi:"))
        .collect();
    let packages: Vec<String> = packages
        .iter()
        .filter(|package| !package.starts_with("pypi:"))
        .cloned()
        .collect();
    install_npm(cache, &packages)?;
    install_pypi(cache, &pypi);
    Ok(())
}

/// The directory of the PyPI CLIs' programs (aider), on `PATH` beside npm's: links to the
/// programs of the virtual environment, not its `bin/`, whose `python3` and `pip` would come
/// first on `PATH`.
pub(crate) fn pypi_bin(cache: &Path) -> PathBuf {
    cache.join("pypi-bin")
}

/// Installs the PyPI packages into a virtual environment in `cache` with pip, unless an earlier
/// install completed there, and links their programs into [`pypi_bin`]. A failure is said and
/// leaves the directory empty: the cases of those CLIs are then skipped, not failed (aider
/// needs a Python that can build its dependencies, which a machine may lack).
fn install_pypi(cache: &Path, packages: &[&str]) {
    let stamp = cache.join("pypi-installed");
    if packages.is_empty() || stamp.is_file() {
        return;
    }
    let venv = cache.join("pypi");
    say(&format!(
        "$ python3 -m venv {0} && {0}/bin/pip install {1}",
        venv.display(),
        packages.join(" ")
    ));
    let installed = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .is_ok_and(|status| status.success())
        && Command::new(venv.join("bin").join("pip"))
            .args(["install", "--quiet", "--disable-pip-version-check"])
            .args(packages)
            .status()
            .is_ok_and(|status| status.success());
    if !installed {
        say("PyPI CLIs: the install failed; their cases are skipped");
        return;
    }
    let bin = pypi_bin(cache);
    fs::create_dir_all(&bin).ok();
    for package in packages {
        // `aider-chat==0.86.2` installs the program `aider`.
        let name = package.split(['=', '<', '>']).next().unwrap_or(package);
        let program = name.strip_suffix("-chat").unwrap_or(name);
        std::os::unix::fs::symlink(venv.join("bin").join(program), bin.join(program)).ok();
    }
    fs::write(&stamp, packages.join("\n")).ok();
}

/// Installs the npm `packages` into `cache`, unless an earlier install completed there.
fn install_npm(cache: &Path, packages: &[String]) -> Result {
    let stamp = cache.join("installed");
    if stamp.is_file() {
        say(&format!("agent CLIs: cached in {}", cache.display()));
        return Ok(());
    }
    fs::create_dir_all(cache)
        .map_err(|error| format!("cannot create {}: {error}", cache.display()))?;
    say(&format!(
        "$ npm install --prefix {} {}",
        cache.display(),
        packages.join(" ")
    ));
    let status = Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            "--prefix",
        ])
        .arg(cache)
        .args(packages)
        .status()
        .map_err(|error| format!("cannot start npm (is Node.js installed?): {error}"))?;
    if !status.success() {
        return Err(format!("npm install failed ({status})"));
    }
    fs::write(&stamp, packages.join("\n"))
        .map_err(|error| format!("cannot write {}: {error}", stamp.display()))
}

/// `cargo xtask agents`' arguments: whether to capture, the filter (or the CLI to capture), the
/// failure to capture.
fn parse(args: &[String]) -> Result<(bool, &str, &str)> {
    match args {
        [] => Ok((false, "", "")),
        [first, rest @ ..] if first == "capture" && rest.len() <= 2 => Ok((
            true,
            rest.first().map_or("", String::as_str),
            rest.get(1).map_or("", String::as_str),
        )),
        [filter] => Ok((false, filter.as_str(), "")),
        _ => Err("usage: cargo xtask agents [FILTER | capture [CLI [FAILURE]]]".into()),
    }
}

/// Cargo's target directory: `CARGO_TARGET_DIR`, else `target/` at the root.
pub(crate) fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from)
}

/// Runs `case` in `dir`: a fresh repository and home, `epic run` with the agent CLIs first on
/// `PATH`; `Err` says what did not hold, with what the run printed.
fn run_case(case: &Case, epic: &Path, bin: &Path, dir: &Path) -> Result {
    let (repo, home) = scratch_repo_with(dir, PLAN, &case.home)?;
    let path = path_with(&[bin.to_path_buf()])?;
    let mut command = Command::new(epic);
    command
        .args([
            "run",
            "plan.json",
            "--no-progress",
            "--turn-timeout",
            case.turn_timeout,
            // An agent that only reconnects (Codex offline) is an outage after this long, and
            // the pause that follows stops the run at once instead of probing for hours.
            "--outage-wait",
            OUTAGE_WAIT,
            "--max-wait",
            MAX_WAIT,
        ])
        .args(&case.args)
        .current_dir(&repo)
        .env("HOME", &home)
        .env("PATH", path)
        .env("GIT_AUTHOR_NAME", "epic agents")
        .env("GIT_AUTHOR_EMAIL", "agents@epic.invalid")
        .env("GIT_COMMITTER_NAME", "epic agents")
        .env("GIT_COMMITTER_EMAIL", "agents@epic.invalid")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for key in KEYS {
        command.env_remove(key);
    }
    for (key, value) in &case.env {
        command.env(key, value);
    }
    let (code, printed) = run_with_deadline(command, CASE_DEADLINE)?;
    let mut everything = printed.clone();
    for file in files_under(&repo.join(".git").join("epic")) {
        if let Ok(text) = fs::read_to_string(&file) {
            everything.push('\n');
            everything.push_str(&text);
        }
    }
    check(case, code, &printed, &everything)
}

/// What must hold of `case`'s run, which exited with `code` having printed `printed`
/// (`everything`: that and the epic's state files).
fn check(case: &Case, code: Option<i32>, printed: &str, everything: &str) -> Result {
    let failed = |why: String| {
        Err(format!(
            "{why}\n--- the run printed (exit {code:?}):\n{printed}"
        ))
    };
    if let Some(word) = USAGE_ERRORS.iter().find(|word| everything.contains(**word)) {
        return failed(format!("the CLI refused its command line (`{word}`)"));
    }
    if case.preset == "gemini" && everything.contains("Approval mode overridden") {
        return failed(
            "Gemini CLI did not trust the worktree: \"Approval mode overridden\"".into(),
        );
    }
    match case.expect {
        Expect::Refused => {
            let named = format!("the seat `{}` cannot run", case.preset);
            if code != Some(2) || !printed.contains(&named) {
                return failed(format!("expected exit 2 and \"{named}\""));
            }
        }
        Expect::RefusedNaming(name) => {
            let named = format!("the seat `{}` cannot run", case.preset);
            if code != Some(2) || !printed.contains(&named) || !printed.contains(name) {
                return failed(format!("expected exit 2, \"{named}\" and `{name}`"));
            }
        }
        Expect::Signed(words) => {
            if code == Some(2) || printed.contains("cannot run") {
                return failed("the seat check refused a CLI signed in another way".into());
            }
            if !words.iter().any(|word| everything.contains(*word)) {
                return failed(format!(
                    "none of its network words ({}) appeared",
                    words.join(", ")
                ));
            }
        }
        Expect::Reached(words, expected) => {
            if code != Some(expected) {
                return failed(format!("expected exit {expected}"));
            }
            if !words.iter().any(|word| everything.contains(*word)) {
                return failed(format!(
                    "none of its login or network words ({}) appeared",
                    words.join(", ")
                ));
            }
        }
    }
    Ok(())
}
