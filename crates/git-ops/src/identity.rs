//! Who commits: the identity epic falls back to where git's configuration names none, the
//! variables through which a person names one, and whether a program that asks git would find
//! one. Plain facts, below both the pin (`pin`), which writes the fallback in, and the commits.

use std::path::Path;

/// The name epic commits as where no identity is configured.
pub const FALLBACK_NAME: &str = "epic";
/// The email epic commits as where no identity is configured.
pub const FALLBACK_EMAIL: &str = "epic@localhost";

/// The first of `user.name` and `user.email` that `git config --get`, run in `dir` with `env`
/// over this process's environment (a variable set or, with `None`, removed), finds in no
/// configuration: what a program that asks git for the identity would miss (aider then writes
/// one into the repository's configuration). `None` when both are set, or when git cannot say.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// std::process::Command::new("git").arg("init").arg("-q").arg(dir.path()).status()?;
/// let env = [
///     ("HOME".into(), Some(dir.path().as_os_str().to_owned())),
///     ("GIT_CONFIG_NOSYSTEM".into(), Some("1".into())),
///     ("GIT_CONFIG_GLOBAL".into(), None),
/// ];
/// assert_eq!(epic_git_ops::missing_identity(dir.path(), &env), Some("user.name"));
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn missing_identity(
    dir: &Path,
    env: &[(std::ffi::OsString, Option<std::ffi::OsString>)],
) -> Option<&'static str> {
    ["user.name", "user.email"].into_iter().find(|key| {
        let mut command = std::process::Command::new("git");
        command
            .args(["config", "--get", key])
            .current_dir(dir)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        for (name, value) in env {
            match value {
                Some(value) => command.env(name, value),
                None => command.env_remove(name),
            };
        }
        // `git config --get` exits 1 when the key is set nowhere.
        command
            .status()
            .is_ok_and(|status| status.code() == Some(1))
    })
}

/// The environment variables through which a person names who commits, and when. Where one is
/// set, epic's commits go through `git commit-tree`, which reads it.
pub const IDENTITY_VARIABLES: [&str; 6] = [
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
];
