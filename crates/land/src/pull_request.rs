//! `epic land --pr`: the epic branch, green with the target in it, pushed to the target's remote
//! and proposed as a pull request with GitHub's `gh` ([`check_gh`], [`open_pull_request`]).
//!
//! `gh` runs in the main checkout (it finds the repository from its remotes), outside the
//! sandbox: it is epic's own step, like git's, not an agent's. Each call has a deadline and
//! its process group dies with it. The flags used are those of gh's manual: `gh auth status`;
//! `gh pr view <branch> --json url --jq .url` (exit 0 and the URL when the branch has a pull
//! request); `gh pr create --base <target> --head <branch> --title <t> --body <b> [--draft]`;
//! `gh pr edit <branch> --title <t> --body <b>`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use epic_git_ops::Git;
use tokio_util::sync::CancellationToken;

use epic_process::offload;
use epic_process::{self as process, Ending, Limits, Spec};

/// How long one `gh` call may take.
const GH_DEADLINE: Duration = Duration::from_mins(2);

/// The pull request to open: where, with what.
#[derive(Debug, Clone)]
pub struct PullRequest {
    /// The `gh` program (`gh`, looked up on `PATH`).
    pub gh: OsString,
    /// The main checkout, where `gh` and the push run.
    pub checkout: PathBuf,
    /// The remote to push to (`--remote`); none: the target's upstream remote, else `origin`.
    pub remote: Option<String>,
    /// The branch pushed and proposed (the epic branch).
    pub branch: String,
    /// The branch the pull request merges into (the target).
    pub base: String,
    /// Its title.
    pub title: String,
    /// Its body (Markdown: the report and the verify result).
    pub body: String,
    /// Open it as a draft (`--draft`).
    pub draft: bool,
}

/// The pull request opened or updated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequestOpened {
    /// Its URL, as `gh` printed it.
    pub url: String,
    /// Whether it existed already and was updated (`gh pr edit`) rather than created.
    pub updated: bool,
    /// The remote the branch was pushed to.
    pub remote: String,
}

/// Why the pull request could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PullRequestError {
    /// `gh` is not installed (not on `PATH`).
    #[error("`{}` is not installed (not on PATH); install GitHub's CLI: https://cli.github.com", program.to_string_lossy())]
    GhMissing {
        /// The program.
        program: OsString,
    },
    /// `gh auth status` failed: not logged in.
    #[error("`gh` is not logged in (`gh auth status` failed: {detail}); run `gh auth login`")]
    NotLoggedIn {
        /// What it said.
        detail: String,
    },
    /// The push failed.
    #[error("failed to push `{branch}` to `{remote}`")]
    Push {
        /// The branch.
        branch: String,
        /// The remote.
        remote: String,
        /// git's error.
        #[source]
        source: offload::BoxError,
    },
    /// A `gh` command failed.
    #[error("`{command}` failed: {detail}")]
    Gh {
        /// The command.
        command: String,
        /// What it said.
        detail: String,
    },
}

/// What a `gh` call printed.
struct GhOutput {
    success: bool,
    stdout: String,
    stderr: String,
}

async fn gh(
    program: &OsString,
    checkout: &Path,
    args: &[&str],
) -> Result<GhOutput, PullRequestError> {
    let spec = Spec {
        program: program.clone(),
        args: args.iter().map(OsString::from).collect(),
        cwd: checkout.to_path_buf(),
        env: vec![("GH_PROMPT_DISABLED".into(), Some("1".into()))],
        stdin: None,
    };
    let limits = Limits {
        stdout_head: 64 * 1024,
        stdout_tail: 64 * 1024,
        stderr_tail: 16 * 1024,
    };
    let deadline = tokio::time::Instant::now() + GH_DEADLINE;
    let cancel = CancellationToken::new();
    let command = format!("gh {}", args.first().copied().unwrap_or_default());
    let mut finished = match process::run(&spec, deadline, &cancel, limits, &|_| {}).await {
        Ok(finished) => finished,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Err(PullRequestError::GhMissing {
                program: program.clone(),
            });
        }
        Err(error) => {
            return Err(PullRequestError::Gh {
                command,
                detail: error.to_string(),
            });
        }
    };
    let success = match finished.ending {
        Ending::Exited(status) => status.success(),
        Ending::TimedOut | Ending::Cancelled | Ending::Stalled => false,
    };
    Ok(GhOutput {
        success,
        stdout: finished.stdout.text().trim().to_owned(),
        stderr: finished.stderr.text().trim().to_owned(),
    })
}

/// Checks that `gh` is installed and logged in (`gh auth status`), before anything is pushed.
pub async fn check_gh(program: &OsString, checkout: &Path) -> Result<(), PullRequestError> {
    let out = gh(program, checkout, &["auth", "status"]).await?;
    if out.success {
        return Ok(());
    }
    let detail = if out.stderr.is_empty() {
        out.stdout
    } else {
        out.stderr
    };
    Err(PullRequestError::NotLoggedIn {
        detail: detail.lines().next().unwrap_or_default().to_owned(),
    })
}

/// Pushes the branch to the remote and opens its pull request, or updates the one it has.
pub async fn open_pull_request(
    git: Arc<dyn Git>,
    request: PullRequest,
) -> Result<PullRequestOpened, PullRequestError> {
    check_gh(&request.gh, &request.checkout).await?;
    let remote = push(&git, &request).await?;
    propose(&request, remote).await
}

/// Pushes the branch to `--remote`, else the target's upstream remote, else `origin`: the
/// remote.
async fn push(git: &Arc<dyn Git>, request: &PullRequest) -> Result<String, PullRequestError> {
    let remote = match &request.remote {
        Some(remote) => remote.clone(),
        None => {
            let (checkout, base) = (request.checkout.clone(), request.base.clone());
            offload::git(git, "read the target's remote", move |git| {
                git.upstream_remote(&checkout, &base)
            })
            .await
            .ok()
            .flatten()
            .unwrap_or_else(|| "origin".to_owned())
        }
    };
    let (checkout, push_remote, refspec) = (
        request.checkout.clone(),
        remote.clone(),
        format!("refs/heads/{0}:refs/heads/{0}", request.branch),
    );
    offload::git(git, "push the epic branch", move |git| {
        git.push(&checkout, &push_remote, &refspec)
    })
    .await
    .map_err(|error| PullRequestError::Push {
        branch: request.branch.clone(),
        remote: remote.clone(),
        source: Box::new(error),
    })?;
    Ok(remote)
}

/// Opens the pull request of the pushed branch, or updates the one it has.
async fn propose(
    request: &PullRequest,
    remote: String,
) -> Result<PullRequestOpened, PullRequestError> {
    let (program, checkout) = (&request.gh, request.checkout.as_path());
    let existing = gh(
        program,
        checkout,
        &[
            "pr",
            "view",
            &request.branch,
            "--json",
            "url",
            "--jq",
            ".url",
        ],
    )
    .await?;
    let failed = |command: &str, out: GhOutput| PullRequestError::Gh {
        command: command.to_owned(),
        detail: if out.stderr.is_empty() {
            out.stdout
        } else {
            out.stderr
        },
    };
    if existing.success && !existing.stdout.is_empty() {
        let edited = gh(
            program,
            checkout,
            &[
                "pr",
                "edit",
                &request.branch,
                "--title",
                &request.title,
                "--body",
                &request.body,
            ],
        )
        .await?;
        if !edited.success {
            return Err(failed("gh pr edit", edited));
        }
        return Ok(PullRequestOpened {
            url: existing.stdout,
            updated: true,
            remote,
        });
    }
    let mut args = vec![
        "pr",
        "create",
        "--base",
        &request.base,
        "--head",
        &request.branch,
        "--title",
        &request.title,
        "--body",
        &request.body,
    ];
    if request.draft {
        args.push("--draft");
    }
    let created = gh(program, checkout, &args).await?;
    if !created.success {
        return Err(failed("gh pr create", created));
    }
    Ok(PullRequestOpened {
        url: created.stdout.lines().last().unwrap_or_default().to_owned(),
        updated: false,
        remote,
    })
}
