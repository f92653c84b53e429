//! One ban list for clippy. clippy.toml files do not merge or include one another, so each crate
//! that bans methods (file I/O, `std::process::Command`) has a `clippy.toml` of its own, which
//! repeats the workspace root's settings: those files are written from the lists here by `cargo
//! xtask gen`, and tidy fails when one differs from what it would write ([`check`]). Edit a
//! list here, never a crate's `clippy.toml`.

use std::fmt::Write as _;
use std::path::Path;

/// One method clippy refuses, and why (what `disallowed-methods` prints).
struct Ban {
    path: &'static str,
    reason: &'static str,
}

/// A crate with a ban list: its directory under `crates/`, why it bans what it bans (the
/// comment above the list), and the list.
struct Banning {
    dir: &'static str,
    why: &'static str,
    bans: &'static [Ban],
}

/// No file I/O and no `std::process::Command`: the crates that reach files only through
/// epic-state-store and epic-git-ops (ARCHITECTURE.md), and spawn processes only in
/// `epic-process`.
const NO_IO: &[Ban] = &[
    Ban {
        path: "std::fs::canonicalize",
        reason: "file I/O belongs to epic-state-store (the state directory) or epic-git-ops (repositories)",
    },
    Ban {
        path: "std::fs::copy",
        reason: "file I/O belongs to epic-state-store (the state directory) or epic-git-ops (repositories)",
    },
    Ban {
        path: "std::fs::create_dir",
        reason: "file I/O belongs to epic-state-store (the state directory) or epic-git-ops (repositories)",
    },
    Ban {
        path: "std::fs::create_dir_all",
        reason: "file I/O belongs to epic-state-store (the state directory) or epic-git-ops (repositories)",
    },
    Ban {
        path: "std::fs::exists",
        reason: "file I/O belongs to epic-state-store (the state directory) or epic-git-ops (repositories)",
    },
    Ban {
        path: "std::fs::hard_link",
        reason: "file I/O belongs to epic-state-store (the state directory) or epic-git-ops (repositories)",
    },
    Ban {
        path: "std::fs::metadata",
        reason: "file I/O belongs to epic-state-store (the state directory) or epic-git-ops (repositories)",
    },
    Ban {
        path: "std::fs::read",
        reason: "file I/O belongs to epic-state-store (the state directory) or epic-git-ops (repositories)",
    },
    Ban {
        path: "std::fs::read_dir",
        reason: "file I/O belongs to epic-state-store (the state directory) or epic-git-ops (repositories)",
    },
    Ban {
        path: "std::fs::read_link",
        reason: "file I/O belongs to epic-state-store (the state directory) or epic-git-ops (repositories)",
    },
    Ban {
        path: "std::fs::read_to_string",
        reason: "file I/O belongs to epic-state-store (the state directory) or epic-git-ops (repositories)",
    },
    Ban {
        path: "std::fs::remove_dir",
        reason: "file I/O belongs to epic-state-store (the state directory) or epic-git-ops (repositories)",
    },
    Ban {
        path: "std::fs::remove_dir_all",
        reason: "file I/O belongs to epic-state-store (the state directory) or epic-git-ops (repositories)",
    },
    Ban {
        path: "std::fs::remove_file",
        reason: "file I/O belongs to epic-state-store (the state directory) or epic-git-ops (repositories)",
    },
    Ban {
        path: "std::fs::rename",
        reason: "file I/O belongs to epic-state-store (the state directory) or epic-git-ops (repositories)",
    },
    Ban {
        path: "std::fs::set_permissions",
        reason: "file I/O belongs to epic-state-store (the state directory) or epic-git-ops (repositories)",
    },
    Ban {
        path: "std::fs::symlink_metadata",
        reason: "file I/O belongs to epic-state-store (the state directory) or epic-git-ops (repositories)",
    },
    Ban {
        path: "std::fs::write",
        reason: "file I/O belongs to epic-state-store (the state directory) or epic-git-ops (repositories)",
    },
    Ban {
        path: "std::fs::File::create",
        reason: "file I/O belongs to epic-state-store (the state directory) or epic-git-ops (repositories)",
    },
    Ban {
        path: "std::fs::File::create_new",
        reason: "file I/O belongs to epic-state-store (the state directory) or epic-git-ops (repositories)",
    },
    Ban {
        path: "std::fs::File::open",
        reason: "file I/O belongs to epic-state-store (the state directory) or epic-git-ops (repositories)",
    },
    Ban {
        path: "std::fs::File::options",
        reason: "file I/O belongs to epic-state-store (the state directory) or epic-git-ops (repositories)",
    },
    Ban {
        path: "std::fs::OpenOptions::open",
        reason: "file I/O belongs to epic-state-store (the state directory) or epic-git-ops (repositories)",
    },
    Ban {
        path: "tokio::fs::canonicalize",
        reason: "file I/O belongs to epic-state-store or epic-git-ops, called through offload",
    },
    Ban {
        path: "tokio::fs::copy",
        reason: "file I/O belongs to epic-state-store or epic-git-ops, called through offload",
    },
    Ban {
        path: "tokio::fs::create_dir",
        reason: "file I/O belongs to epic-state-store or epic-git-ops, called through offload",
    },
    Ban {
        path: "tokio::fs::create_dir_all",
        reason: "file I/O belongs to epic-state-store or epic-git-ops, called through offload",
    },
    Ban {
        path: "tokio::fs::hard_link",
        reason: "file I/O belongs to epic-state-store or epic-git-ops, called through offload",
    },
    Ban {
        path: "tokio::fs::metadata",
        reason: "file I/O belongs to epic-state-store or epic-git-ops, called through offload",
    },
    Ban {
        path: "tokio::fs::read",
        reason: "file I/O belongs to epic-state-store or epic-git-ops, called through offload",
    },
    Ban {
        path: "tokio::fs::read_dir",
        reason: "file I/O belongs to epic-state-store or epic-git-ops, called through offload",
    },
    Ban {
        path: "tokio::fs::read_link",
        reason: "file I/O belongs to epic-state-store or epic-git-ops, called through offload",
    },
    Ban {
        path: "tokio::fs::read_to_string",
        reason: "file I/O belongs to epic-state-store or epic-git-ops, called through offload",
    },
    Ban {
        path: "tokio::fs::remove_dir",
        reason: "file I/O belongs to epic-state-store or epic-git-ops, called through offload",
    },
    Ban {
        path: "tokio::fs::remove_dir_all",
        reason: "file I/O belongs to epic-state-store or epic-git-ops, called through offload",
    },
    Ban {
        path: "tokio::fs::remove_file",
        reason: "file I/O belongs to epic-state-store or epic-git-ops, called through offload",
    },
    Ban {
        path: "tokio::fs::rename",
        reason: "file I/O belongs to epic-state-store or epic-git-ops, called through offload",
    },
    Ban {
        path: "tokio::fs::set_permissions",
        reason: "file I/O belongs to epic-state-store or epic-git-ops, called through offload",
    },
    Ban {
        path: "tokio::fs::symlink",
        reason: "file I/O belongs to epic-state-store or epic-git-ops, called through offload",
    },
    Ban {
        path: "tokio::fs::symlink_metadata",
        reason: "file I/O belongs to epic-state-store or epic-git-ops, called through offload",
    },
    Ban {
        path: "tokio::fs::try_exists",
        reason: "file I/O belongs to epic-state-store or epic-git-ops, called through offload",
    },
    Ban {
        path: "tokio::fs::write",
        reason: "file I/O belongs to epic-state-store or epic-git-ops, called through offload",
    },
    Ban {
        path: "tokio::fs::File::create",
        reason: "file I/O belongs to epic-state-store or epic-git-ops, called through offload",
    },
    Ban {
        path: "tokio::fs::File::create_new",
        reason: "file I/O belongs to epic-state-store or epic-git-ops, called through offload",
    },
    Ban {
        path: "tokio::fs::File::open",
        reason: "file I/O belongs to epic-state-store or epic-git-ops, called through offload",
    },
    Ban {
        path: "tokio::fs::File::options",
        reason: "file I/O belongs to epic-state-store or epic-git-ops, called through offload",
    },
    Ban {
        path: "tokio::fs::OpenOptions::open",
        reason: "file I/O belongs to epic-state-store or epic-git-ops, called through offload",
    },
    Ban {
        path: "std::process::Command::new",
        reason: "agents and gates run with tokio's Command in process.rs, in their own process group; git runs in epic-git-ops",
    },
];

/// No writes or removals and no `std::process::Command`: the CLI reads what the user gives
/// it, and writes through epic-state-store and epic-git-ops.
const NO_WRITES: &[Ban] = &[
    Ban {
        path: "std::fs::write",
        reason: "the state directory is written by epic-state-store, repositories by epic-git-ops",
    },
    Ban {
        path: "std::fs::remove_file",
        reason: "the state directory is written by epic-state-store, repositories by epic-git-ops",
    },
    Ban {
        path: "std::fs::remove_dir",
        reason: "the state directory is written by epic-state-store, repositories by epic-git-ops",
    },
    Ban {
        path: "std::fs::remove_dir_all",
        reason: "the state directory is written by epic-state-store, repositories by epic-git-ops",
    },
    Ban {
        path: "std::fs::create_dir",
        reason: "the state directory is written by epic-state-store, repositories by epic-git-ops",
    },
    Ban {
        path: "std::fs::create_dir_all",
        reason: "the state directory is written by epic-state-store, repositories by epic-git-ops",
    },
    Ban {
        path: "std::fs::rename",
        reason: "the state directory is written by epic-state-store, repositories by epic-git-ops",
    },
    Ban {
        path: "std::fs::copy",
        reason: "the state directory is written by epic-state-store, repositories by epic-git-ops",
    },
    Ban {
        path: "std::fs::hard_link",
        reason: "the state directory is written by epic-state-store, repositories by epic-git-ops",
    },
    Ban {
        path: "std::fs::set_permissions",
        reason: "the state directory is written by epic-state-store, repositories by epic-git-ops",
    },
    Ban {
        path: "std::fs::File::create",
        reason: "the state directory is written by epic-state-store, repositories by epic-git-ops",
    },
    Ban {
        path: "std::fs::File::create_new",
        reason: "the state directory is written by epic-state-store, repositories by epic-git-ops",
    },
    Ban {
        path: "std::fs::File::options",
        reason: "the state directory is written by epic-state-store, repositories by epic-git-ops",
    },
    Ban {
        path: "std::fs::OpenOptions::open",
        reason: "the state directory is written by epic-state-store, repositories by epic-git-ops",
    },
    Ban {
        path: "std::process::Command::new",
        reason: "git runs in epic-git-ops, agents and gates in epic-executor",
    },
];

/// Every crate with a ban list, in the order of `crates/`.
const BANNING: &[Banning] = &[
    Banning {
        dir: "acp",
        why: "ARCHITECTURE.md: only state-store writes the epic's state directory, and git-ops is the only crate that runs git (or touches a repository's files). The ACP client does no file I/O of its own but the agent's reads and writes of its worktree, which the permission policy has allowed, each under an `#[expect(clippy::disallowed_methods, reason = \"...\")]`.",
        bans: NO_IO,
    },
    Banning {
        dir: "agents",
        why: "ARCHITECTURE.md: only state-store writes the epic's state directory, and git-ops is the only crate that runs git (or touches a repository's files). The agents crate, like the executor that drives it, does no file I/O of its own but what each `#[expect(clippy::disallowed_methods, reason = \"...\")]` names (a seat's private prompt file, the script seat's writes of the agent's own work). Agents are spawned with tokio's Command (epic-process), never std's.",
        bans: NO_IO,
    },
    Banning {
        dir: "process",
        why: "ARCHITECTURE.md: only state-store writes the epic's state directory, and git-ops is the only crate that runs git (or touches a repository's files). The processes crate, like the executor that uses it, does no file I/O of its own but what each `#[expect(clippy::disallowed_methods, reason = \"...\")]` names (`/proc`, the sandbox's stand-ins for credential stores). Agents and gates are spawned with tokio's Command (process.rs), never std's.",
        bans: NO_IO,
    },
    Banning {
        dir: "chat",
        why: "ARCHITECTURE.md: only state-store writes the epic's state directory, and git-ops is the only crate that runs git (or touches a repository's files). A chat writes its transcripts through epic-state-store and does no other file I/O of its own, through `offload` off the async workers. Agents are spawned by epic-agents, never here.",
        bans: NO_IO,
    },
    Banning {
        dir: "events",
        why: "ARCHITECTURE.md: only state-store writes the epic's state directory, and git-ops is the only crate that runs git (or touches a repository's files). The event log, the report and the board are written through epic-state-store, off the async workers; the board hook is spawned with tokio's Command (epic-process), never std's.",
        bans: NO_IO,
    },
    Banning {
        dir: "executor",
        why: "ARCHITECTURE.md: only state-store writes the epic's state directory, and git-ops is the only crate that runs git (or touches a repository's files). So the executor does no file I/O of its own: it calls epic-state-store (documents, checkpoints, transcripts, removals) and epic-git-ops (lock files, leftover worktree directories), through `offload` off the async workers. What is the agent's own work in its worktree (the script seat's files) or a seat's private temp file says so with `#[expect(clippy::disallowed_methods, reason = \"...\")]`. Agents and gates are spawned with tokio's Command (process.rs), never std's.",
        bans: NO_IO,
    },
    Banning {
        dir: "land",
        why: "ARCHITECTURE.md: only state-store writes the epic's state directory, and git-ops is the only crate that runs git (or touches a repository's files). A landing, like the run it is built from, does no file I/O of its own: it calls epic-state-store (the landing journal, the report) and epic-git-ops (the merge, the target's move), through `offload` off the async workers. Lander turns are spawned with tokio's Command (epic-process), never std's.",
        bans: NO_IO,
    },
    Banning {
        dir: "gates",
        why: "ARCHITECTURE.md: only state-store writes the epic's state directory, and git-ops is the only crate that runs git (or touches a repository's files). The gates read a JUnit file and write the baseline through epic-state-store, put back what a gate left through epic-git-ops, and spawn gates with tokio's Command (epic-process), never std's.",
        bans: NO_IO,
    },
    Banning {
        dir: "guard",
        why: "ARCHITECTURE.md: only state-store writes the epic's state directory, and git-ops is the only crate that runs git (or touches a repository's files). The guard reads and restores epic's files through state-store's snapshots, never with file I/O of its own; its tests, which play the agents and git writing those files, say so with `#[expect(clippy::disallowed_methods, ...)]`.",
        bans: NO_IO,
    },
    Banning {
        dir: "attest",
        why: "ARCHITECTURE.md: only state-store writes the epic's state directory, and git-ops is the only crate that runs git (or touches a repository's files). An attestation's copy in the state is written and read through epic-state-store (through the turn guard), its note and the epic branch through epic-git-ops: the crate does no file I/O of its own.",
        bans: NO_IO,
    },
    Banning {
        dir: "cli",
        why: "ARCHITECTURE.md: only epic-state-store writes the epic's state directory, and only epic-git-ops runs git. The CLI reads what the user gives it (plans, epic.toml, report.md) but writes and removes nothing itself: state goes through epic-state-store, repositories and worktrees through epic-git-ops. The few writes that are the user's own files (`epic init`'s epic.toml, `epic demo`'s throwaway project) say so with `#[expect(clippy::disallowed_methods, reason = \"...\")]`.",
        bans: NO_WRITES,
    },
    Banning {
        dir: "view",
        why: "ARCHITECTURE.md: `epic watch` only reads the epic's state: it takes no lock and writes nothing, and the commands its keys give are queued by the CLI through epic-state-store's inbox.",
        bans: NO_WRITES,
    },
];

/// Rewrites every banning crate's `clippy.toml` (`cargo xtask gen`).
pub(crate) fn write(root: &Path) -> Result<(), String> {
    for banning in BANNING {
        let path = root.join("crates").join(banning.dir).join("clippy.toml");
        let text = expected(root, banning)?;
        std::fs::write(&path, text).map_err(|error| format!("{}: {error}", path.display()))?;
    }
    Ok(())
}

/// Adds a problem for each banning crate whose `clippy.toml` is not what [`write()`] would write.
pub(crate) fn check(root: &Path, problems: &mut Vec<String>) {
    for banning in BANNING {
        let path = root.join("crates").join(banning.dir).join("clippy.toml");
        let found = std::fs::read_to_string(&path).unwrap_or_default();
        match expected(root, banning) {
            Ok(text) if text == found => {}
            Ok(_) => problems.push(format!(
                "crates/{}/clippy.toml is not the one ban list's (xtask/src/lints.rs): run `cargo \
                 xtask gen`",
                banning.dir
            )),
            Err(error) => problems.push(error),
        }
    }
}

/// A banning crate's `clippy.toml`: a line saying where it comes from, the workspace root's
/// settings, then why the crate bans and its list.
fn expected(root: &Path, banning: &Banning) -> Result<String, String> {
    let base = std::fs::read_to_string(root.join("clippy.toml"))
        .map_err(|error| format!("clippy.toml: {error}"))?;
    let mut text = String::from(
        "# Written by `cargo xtask gen` from the one ban list in xtask/src/lints.rs: edit it \
         there.\n# clippy.toml files do not merge, so the workspace root's settings come first.\n",
    );
    text.push_str(base.trim_end());
    text.push_str("\n\n");
    for line in wrap(banning.why, 98) {
        text.push_str("# ");
        text.push_str(&line);
        text.push('\n');
    }
    text.push_str("disallowed-methods = [\n");
    for ban in banning.bans {
        // Writing to a String cannot fail.
        let _ = writeln!(
            text,
            "    {{ path = \"{}\", reason = \"{}\" }},",
            ban.path, ban.reason
        );
    }
    text.push_str("]\n");
    Ok(text)
}

/// `text` in lines of at most `width` characters, broken between words.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_wrap_within_the_width() {
        assert_eq!(wrap("a bb ccc dddd", 6), ["a bb", "ccc", "dddd"]);
        assert_eq!(wrap("", 6), Vec::<String>::new());
    }

    #[test]
    fn a_crate_file_holds_the_root_settings_and_every_ban_once() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let text = expected(&root, &BANNING[0]).expect("the root clippy.toml reads");
        assert!(text.contains("allow-unwrap-in-tests = true"), "{text}");
        for ban in BANNING[0].bans {
            assert_eq!(
                text.matches(&format!("path = \"{}\"", ban.path)).count(),
                1,
                "{}",
                ban.path
            );
        }
    }
}
