//! Fixtures for epic's tests and benchmarks, one copy for every crate: real git repositories in
//! temporary directories ([`Repo`], built with [`Builder`]), git processes cut off from the
//! machine ([`Isolation`]), the stand-in agents the tests write (a script answering by role,
//! [`RoleAgent`]; stand-ins for the agent CLIs the presets run, [`StandIns`]; any [`script`])
//! and one seeded generator ([`Rng`]); also the one way a test waits for what a child process
//! makes true ([`wait_until`], [`wait_for`], [`poll`]: a look every [`POLL`], bounded by
//! [`PATIENCE`] or [`RUN_PATIENCE`]) and whether a child process died ([`wait_dead`]). Dev-only: a
//! `[dev-dependencies]` entry of the crates whose tests use it, named by no crate's
//! `[dependencies]` (`cargo xtask tidy` holds that).
//!
//! ```
//! use epic_test_support::{Repo, RoleAgent, Rng};
//!
//! // `main` with README.md committed, an identity configured, HOME an empty directory.
//! let repo = Repo::new();
//! repo.commit_files(&[("src/lib.rs", "//! A crate.\n")], "add the crate");
//! assert_eq!(repo.subjects(&["main"]), ["add the crate", "initial"]);
//!
//! // A branch in a linked worktree beside the repository.
//! let worktree = repo.beside("story");
//! repo.worktree(&worktree, "story/e/s", "main");
//! repo.commit_file(&worktree, "src/story.txt", "done\n", "the story");
//! assert_eq!(repo.git(&["rev-list", "--count", "main..story/e/s"]).trim(), "1");
//!
//! // An agent script for `exec:` seats: plans one task, writes a file as coder, clears as judge.
//! let agent = repo.root().join("agent.sh");
//! RoleAgent::new().coder("echo done > out.txt").write(&agent);
//! assert!(std::fs::read_to_string(&agent).unwrap().contains("coder) echo done"));
//!
//! // The same numbers on every machine.
//! assert_eq!(Rng::new(1).next_u64(), Rng::new(1).next_u64());
//! ```
//!
//! # Why it runs git itself and does not depend on git-ops
//!
//! A fixture must not be built with the code it checks: a repository made through git-ops could
//! not catch a git-ops bug that also bends the repository. So [`Repo`] runs the git command line
//! through [`std::process::Command`], as the tests' builders always have, and the crate depends
//! on no epic crate. That also keeps git-ops' own tests single: were `epic-git-ops` a dependency
//! here, git-ops' unit tests would link two builds of it (the `cfg(test)` one under test and
//! this crate's ordinary one), whose `GixGit`s are different types. What needs an epic type (a
//! `GixGit` handle isolated like the test's git, an agent seat) stays in that crate's test
//! support and takes the isolation from [`Isolation::variables`].
//!
//! The crate has no `clippy.toml` of its own: the workspace root's bans no method, and writing
//! files and running git is all this crate is for. The crates whose `clippy.toml` bans file
//! writes and `Command::new` (cli, executor, …) keep those bans for their own code: calling this
//! crate is not calling the banned methods.

mod agent;
mod files;
mod isolation;
mod processes;
mod repo;
mod rng;
mod stand_ins;
mod wait;

pub use agent::{CLEAN, ONE_TASK, RoleAgent};
pub use files::{executable, script, sorted_lines, write, write_in};
pub use isolation::{CLEARED, EMAIL, IDENTITY_VARIABLES, Isolation, NAME};
pub use processes::{is_dead, pid_written, wait_dead};
pub use repo::{Builder, Identity, Repo};
pub use rng::Rng;
pub use stand_ins::{AGENTS, AgentError, Behaviour, Call, StandIns};
pub use wait::{PATIENCE, POLL, RUN_PATIENCE, poll, wait_for, wait_until};
