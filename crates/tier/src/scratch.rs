//! A served case's scratch: the epic it runs (three stories, each a file to write), a fresh
//! repository holding it and a home with the planted credential stores and the files that
//! point the CLIs at the model server, and `epic` run there against the server.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::Result;
use crate::cases::{KEYS, PLANTED_STORES, git};
use crate::server::ModelServer;

/// The epic of the served cases: three stories, `b` after `a`, each a file to write.
const PLAN: &str = r#"{
  "epic_id": "e",
  "epic": "Three small files, written by the agents' own tools.",
  "stories": [
    {"id": "a", "title": "Write a", "description": "Write the file.\n\n```file src/a/a.txt\nalpha\n```\n", "owned": ["src/a"]},
    {"id": "b", "title": "Write b", "description": "Write the file.\n\n```file src/b/b.txt\nbravo\n```\n", "owned": ["src/b"], "depends_on": ["a"]},
    {"id": "c", "title": "Write c", "description": "Write the file.\n\n```file src/c/c.txt\ncharlie\n```\n", "owned": ["src/c"]}
  ]
}
"#;

/// The files the stories write, with their contents.
pub(crate) const FILES: [(&str, &str); 3] = [
    ("src/a/a.txt", "alpha\n"),
    ("src/b/b.txt", "bravo\n"),
    ("src/c/c.txt", "charlie\n"),
];

/// A fresh repository holding [`PLAN`] in `dir/repo`, and a home in `dir/home` with the
/// planted credential stores and `files`.
pub(crate) fn scratch_repo(dir: &Path, files: &[(&str, String)]) -> Result<(PathBuf, PathBuf)> {
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(path, contents)| (*path, contents.as_str()))
        .collect();
    scratch_repo_with(dir, PLAN, &files)
}

/// A fresh repository holding `plan` (as `plan.json`, untracked; `README.md` committed on
/// `main`) in `dir/repo`, and a home in `dir/home` with the planted credential stores and
/// `files`.
pub(crate) fn scratch_repo_with(
    dir: &Path,
    plan: &str,
    files: &[(&str, &str)],
) -> Result<(PathBuf, PathBuf)> {
    let repo = dir.join("repo");
    let home = dir.join("home");
    for made in [&repo, &home] {
        fs::create_dir_all(made)
            .map_err(|error| format!("cannot create {}: {error}", made.display()))?;
    }
    git(&repo, &home, &["init", "--quiet", "--initial-branch=main"])?;
    fs::write(repo.join("README.md"), "# scratch\n").map_err(|error| error.to_string())?;
    fs::write(repo.join("plan.json"), plan).map_err(|error| error.to_string())?;
    git(&repo, &home, &["add", "README.md"])?;
    git(&repo, &home, &["commit", "--quiet", "-m", "first"])?;
    for (path, contents) in PLANTED_STORES.iter().chain(files) {
        let path = home.join(path);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|error| error.to_string())?;
        }
        fs::write(&path, contents).map_err(|error| error.to_string())?;
    }
    Ok((repo, home))
}

/// A served case's start in `dir`: the model server (`server_bin`) with `steps`, and the
/// scratch repository and home pointing the CLIs at it ([`scratch_repo`]), opencode's database
/// made first where opencode is one of the case's `presets` (comma-separated,
/// [`warm_opencode`]).
pub(crate) fn served_scratch(
    server_bin: &Path,
    presets: &str,
    steps: &str,
    bins: &[PathBuf],
    dir: &Path,
) -> Result<(ModelServer, PathBuf, PathBuf)> {
    served_scratch_with(server_bin, presets, steps, bins, dir, PLAN)
}

/// [`served_scratch`] with the repository holding `plan` rather than the served cases' epic.
pub(crate) fn served_scratch_with(
    server_bin: &Path,
    presets: &str,
    steps: &str,
    bins: &[PathBuf],
    dir: &Path,
    plan: &str,
) -> Result<(ModelServer, PathBuf, PathBuf)> {
    fs::create_dir_all(dir).map_err(|error| error.to_string())?;
    let server = ModelServer::start(server_bin, dir, steps)?;
    let home_files = server.home_files();
    let files: Vec<(&str, &str)> = home_files
        .iter()
        .map(|(path, contents)| (*path, contents.as_str()))
        .collect();
    let (repo, home) = scratch_repo_with(dir, plan, &files)?;
    if presets.split(',').any(|preset| preset == "opencode") {
        warm_opencode(&repo, &home, bins)?;
    }
    Ok((server, repo, home))
}

/// `PATH` with the agent CLIs' directories first.
pub(crate) fn path_with(bins: &[PathBuf]) -> Result<std::ffi::OsString> {
    std::env::join_paths(bins.iter().cloned().chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .map_err(|error| error.to_string())
}

/// Makes opencode's database once in `home`, as a user's first use does: two first runs at once
/// race on creating it ("Failed query: CREATE TABLE `workspace`").
pub(crate) fn warm_opencode(repo: &Path, home: &Path, bins: &[PathBuf]) -> Result {
    Command::new("opencode")
        .arg("stats")
        .current_dir(repo)
        .env("HOME", home)
        .env("PATH", path_with(bins)?)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|error| format!("cannot start opencode: {error}"))?;
    Ok(())
}

/// `epic run plan.json` in `repo` against `server`, as every served case runs it: in the
/// sandbox, a 120 s turn deadline, and as [`epic_command`] says; a caller adds its options.
pub(crate) fn epic_run(
    epic: &Path,
    repo: &Path,
    home: &Path,
    bins: &[PathBuf],
    server: &ModelServer,
) -> Result<Command> {
    let mut command = epic_command(epic, repo, home, bins, server)?;
    command.args([
        "run",
        "plan.json",
        "--no-progress",
        "--sandbox",
        "on",
        "--turn-timeout",
        "120",
    ]);
    Ok(command)
}

/// `epic` in `repo` against `server`, with no arguments yet: `home` as `HOME`, the CLIs of
/// `bins` first on `PATH`, no key of the machine's, a commit identity of its own, both outputs
/// piped.
pub(crate) fn epic_command(
    epic: &Path,
    repo: &Path,
    home: &Path,
    bins: &[PathBuf],
    server: &ModelServer,
) -> Result<Command> {
    let mut command = Command::new(epic);
    command
        .current_dir(repo)
        .env("HOME", home)
        .env("PATH", path_with(bins)?)
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
    command.envs(server.env());
    Ok(command)
}

/// `git show SPEC` in `repo`.
pub(crate) fn show(repo: &Path, home: &Path, spec: &str) -> Result<String> {
    let output = Command::new("git")
        .args(["show", spec])
        .current_dir(repo)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .map_err(|error| format!("cannot start git: {error}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(format!(
            "`git show {spec}` failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}
