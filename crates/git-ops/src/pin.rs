//! The repository's configuration as it was when epic started, pinned for epic's own git.
//!
//! An agent runs as the user and can write git's configuration (the repository's
//! `.git/config`, a worktree's `config.worktree`, `~/.gitconfig`, a file one of them includes).
//! Some settings run programs (`core.fsmonitor`, `gpg.program` with `commit.gpgSign`, filter and
//! merge drivers that `.gitattributes` or `.git/info/attributes` name, `diff.external`), some
//! change what epic commits (`user.name`, `core.autocrlf`) or sees (`core.excludesFile`,
//! `core.attributesFile`). Planted during a turn, they would run inside epic's own git, after
//! the turn and outside any deadline, on every story's files.
//!
//! So a [`GixGit`](crate::GixGit) reads the configuration once, with `git config --list` at its
//! first git command (which, in a run, comes before any agent starts), and from then on:
//!
//! - every git command gets the settings of [`PINNED`] through `GIT_CONFIG_COUNT` /
//!   `GIT_CONFIG_KEY_<n>` / `GIT_CONFIG_VALUE_<n>` (command-line scope, which beats every file),
//!   each at its value at the start or, where it had none, at a neutral one (`core.fsmonitor=false`,
//!   `commit.gpgSign=false`, the identity epic committed with, …);
//! - the filter and merge drivers configured at the start keep their start values, key by key
//!   (a key the driver did not have is pinned empty); a driver a file names that was not
//!   configured at the start is found by a fresh read of the configuration files before each
//!   command (`fresh_driver_names`, in process, includes followed) and neutralised: its filter
//!   commands empty and not required (git then stores and checks out the bytes as they are),
//!   its merge driver git's own text merge (`git merge-file`);
//! - `diff.external` and textconv drivers never run: epic's `git diff` passes `--no-ext-diff
//!   --no-textconv` (a judge reads the committed bytes, not a program's rendering of them);
//! - replace refs are ignored (`GIT_NO_REPLACE_OBJECTS=1`, `core.useReplaceRefs=false`): a
//!   `git replace` of the epic head changes nothing epic reads;
//! - gix handles opened after the start (linked worktrees) drop every filter and merge driver
//!   section and get back the start drivers and the pinned paths (`pin_gix`); gix runs no
//!   fsmonitor, hook or signing program, and is opened without replace refs.
//!
//! A change made during the run is reported by [`Git::config_changes`](crate::Git::config_changes):
//! the keys whose values differ between the pin and a fresh `git config --list`.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use gix::bstr::ByteSlice;

use crate::identity::{FALLBACK_EMAIL, FALLBACK_NAME};

/// Settings pinned for every git command: each to its value at the start, else to the neutral
/// value given (`None`: left alone when absent at the start, git has no neutral value to give).
const PINNED: &[(&str, Option<&str>)] = &[
    // Programs git runs.
    ("core.fsmonitor", Some("false")),
    ("commit.gpgsign", Some("false")),
    ("tag.gpgsign", Some("false")),
    ("gpg.format", Some("openpgp")),
    ("gpg.program", Some("gpg")),
    ("gpg.openpgp.program", Some("gpg")),
    ("gpg.x509.program", Some("gpgsm")),
    ("gpg.ssh.program", Some("ssh-keygen")),
    ("gpg.ssh.defaultkeycommand", None),
    ("user.signingkey", None),
    ("core.sshcommand", Some("ssh -o BatchMode=yes")),
    ("core.askpass", None),
    // Which merge driver a path without a `merge` attribute gets.
    ("merge.default", Some("text")),
    // Recorded resolutions (`.git/rr-cache`, writable by an agent) applied to epic's merges.
    ("rerere.enabled", Some("false")),
    ("rerere.autoupdate", Some("false")),
    // What epic stores of a file.
    ("core.autocrlf", Some("false")),
    ("core.eol", None),
    ("core.safecrlf", None),
    ("core.symlinks", None),
    ("core.filemode", None),
    ("core.ignorecase", None),
    ("core.bigfilethreshold", None),
    // Replace refs (`git replace`) never change what epic reads.
    ("core.usereplacerefs", Some("false")),
];

/// The merge driver an unknown driver name gets: git's own three-way text merge, which writes
/// the result to `%A` and exits non-zero on a conflict, as git's built-in `text` driver.
pub(crate) const NEUTRAL_MERGE_DRIVER: &str = "git merge-file --quiet --marker-size=%L %A %O %B";

/// Keys of a filter driver that name a program. An empty `clean` or `smudge` is no filter for
/// that direction; an empty `process`, though, is no filter at all (git then ignores `clean`
/// and `smudge`), so `process` is pinned only where the driver had one at the start, or where
/// one turns up later (see [`Pin::settings`]).
const FILTER_KEYS: &[&str] = &["clean", "smudge"];

/// The configuration pinned at the start; see the module docs.
#[derive(Debug)]
pub(crate) struct Pin {
    /// Every key of the configuration at the start with its values in order, as `git config
    /// --list` names it (section and variable lower case, subsection as written).
    listing: BTreeMap<String, Vec<String>>,
    /// Each pinned key and the value every git command gets.
    pinned: Vec<(String, String)>,
    /// The filter drivers configured at the start.
    filters: BTreeSet<String>,
    /// Those of them that had a `process`.
    processes: BTreeSet<String>,
    /// The merge drivers configured at the start.
    merges: BTreeSet<String>,
    /// Whether epic's commits are signed (`commit.gpgSign` at the start).
    sign: bool,
    /// The values gix handles get on top of their files (see [`Pin::pin_gix`]).
    gix: Vec<(String, String)>,
}

/// The environment a git command reads configuration from: what [`Pin::from_listing`] needs beyond
/// `git config`'s output.
pub(crate) trait Env {
    /// The value the variable has for the git commands run.
    fn var(&self, key: &str) -> Option<OsString>;
}

impl Pin {
    /// Parses `git config -z --list --show-scope` output into a pin; `env` answers for `EMAIL`,
    /// `HOME` and `XDG_CONFIG_HOME`.
    pub(crate) fn from_listing(output: &[u8], env: &dyn Env) -> Self {
        let listing = parse_listing(output);
        let last = |key: &str| listing.get(key).and_then(|values| values.last()).cloned();
        let mut pinned: Vec<(String, String)> = Vec::new();
        for (key, neutral) in PINNED {
            match (last(key), neutral) {
                (Some(value), _) => pinned.push(((*key).to_owned(), value)),
                (None, Some(neutral)) => pinned.push(((*key).to_owned(), (*neutral).to_owned())),
                (None, None) => {}
            }
        }
        pinned.extend(identity(&last, env));
        // Files of attributes and ignore rules: the start ones, or the default file where it
        // existed at the start, else none.
        let mut gix = Vec::new();
        for (key, default) in [
            ("core.attributesfile", "attributes"),
            ("core.excludesfile", "ignore"),
        ] {
            let value = last(key).unwrap_or_else(|| {
                default_file(env, default)
                    .filter(|path| path.is_file())
                    .map_or_else(
                        || "/dev/null".to_owned(),
                        |path| path.to_string_lossy().into_owned(),
                    )
            });
            pinned.push((key.to_owned(), value.clone()));
            gix.push((key.to_owned(), value));
        }
        let drivers = |section: &str| -> BTreeSet<String> {
            listing
                .keys()
                .filter_map(|key| driver_of(key, section))
                .map(|(name, _)| name.to_owned())
                .collect()
        };
        let filters = drivers("filter");
        let merges = drivers("merge");
        let mut processes = BTreeSet::new();
        for name in &filters {
            for variable in FILTER_KEYS {
                let key = format!("filter.{name}.{variable}");
                let value = last(&key).unwrap_or_default();
                if !value.is_empty() {
                    gix.push((key.clone(), value.clone()));
                }
                pinned.push((key, value));
            }
            let key = format!("filter.{name}.process");
            if let Some(value) = last(&key) {
                processes.insert(name.clone());
                gix.push((key.clone(), value.clone()));
                pinned.push((key, value));
            }
            let key = format!("filter.{name}.required");
            let value = last(&key).unwrap_or_else(|| "false".to_owned());
            gix.push((key.clone(), value.clone()));
            pinned.push((key, value));
        }
        for name in &merges {
            for (variable, neutral) in [
                ("driver", NEUTRAL_MERGE_DRIVER.to_owned()),
                ("recursive", name.clone()),
            ] {
                let key = format!("merge.{name}.{variable}");
                match last(&key) {
                    Some(value) => {
                        gix.push((key.clone(), value.clone()));
                        pinned.push((key, value));
                    }
                    None => pinned.push((key, neutral)),
                }
            }
            let key = format!("merge.{name}.name");
            if let Some(value) = last(&key) {
                gix.push((key, value));
            }
        }
        for key in ["core.autocrlf", "merge.default"] {
            if let Some(value) = last(key) {
                gix.push((key.to_owned(), value));
            }
        }
        let sign = last("commit.gpgsign").is_some_and(|value| {
            matches!(
                value.trim().to_ascii_lowercase().as_str(),
                "true" | "yes" | "on" | "1"
            )
        });
        Self {
            listing,
            pinned,
            filters,
            processes,
            merges,
            sign,
            gix,
        }
    }

    /// Whether epic's commits are signed: `commit.gpgSign` as it was at the start.
    pub(crate) fn sign(&self) -> bool {
        self.sign
    }

    /// The value every git command gets for the pinned `key` (lower case, as [`PINNED`] and
    /// the identity keys name it), if it is pinned.
    pub(crate) fn pinned(&self, key: &str) -> Option<&str> {
        self.pinned
            .iter()
            .rev()
            .find(|(pinned, _)| pinned == key)
            .map(|(_, value)| value.as_str())
    }

    /// Whether the configuration at the start set `key` (as `git config --list` names it).
    pub(crate) fn had(&self, key: &str) -> bool {
        self.listing.contains_key(key)
    }

    /// The value the configuration at the start gave `key` (its last setting), if any.
    pub(crate) fn value(&self, key: &str) -> Option<&str> {
        self.listing
            .get(key)
            .and_then(|values| values.last())
            .map(String::as_str)
    }

    /// The settings every git command gets, with those that neutralise the drivers among
    /// `fresh` (names a fresh read of the configuration found) not configured at the start.
    pub(crate) fn settings(&self, fresh: &FreshDrivers) -> Vec<(String, String)> {
        let mut all = self.pinned.clone();
        for name in fresh.filters.difference(&self.filters) {
            for variable in FILTER_KEYS {
                all.push((format!("filter.{name}.{variable}"), String::new()));
            }
            all.push((format!("filter.{name}.process"), String::new()));
            all.push((format!("filter.{name}.required"), "false".to_owned()));
        }
        // A start driver that gained a `process`: git cannot be told to forget it, only to
        // run no process, which turns the whole driver off (files stored and checked out as
        // they are) rather than run what was planted.
        for name in fresh.processes.difference(&self.processes) {
            if self.filters.contains(name) {
                all.push((format!("filter.{name}.process"), String::new()));
            }
        }
        for name in fresh.merges.difference(&self.merges) {
            all.push((
                format!("merge.{name}.driver"),
                NEUTRAL_MERGE_DRIVER.to_owned(),
            ));
            all.push((format!("merge.{name}.recursive"), "text".to_owned()));
        }
        all
    }

    /// The keys whose values differ between the pin and `now` (`git config -z --list
    /// --show-scope` output), sorted: added, removed or changed since the start.
    pub(crate) fn changes(&self, now: &[u8]) -> Vec<String> {
        let now = parse_listing(now);
        let keys: BTreeSet<&String> = self.listing.keys().chain(now.keys()).collect();
        keys.into_iter()
            .filter(|key| self.listing.get(*key) != now.get(*key))
            .cloned()
            .collect()
    }

    /// Makes the configuration of a gix handle opened after the start what it was: every
    /// filter and merge driver section dropped, the start drivers and the pinned files of
    /// attributes and ignore rules put back.
    pub(crate) fn pin_gix(&self, repo: &mut gix::Repository) -> Result<(), gix::Error> {
        let mut config = repo.config_snapshot_mut();
        for section in ["filter", "merge"] {
            let ids: Vec<_> = config
                .sections_and_ids_by_name(section)
                .into_iter()
                .flatten()
                .filter(|(found, _)| found.header().subsection_name().is_some())
                .map(|(_, id)| id)
                .collect();
            for id in ids {
                config.remove_section_by_id(id);
            }
        }
        for (key, value) in &self.gix {
            let Some((section, rest)) = key.split_once('.') else {
                continue;
            };
            let (subsection, variable) = match rest.rsplit_once('.') {
                Some((subsection, variable)) => (Some(subsection.as_bytes().as_bstr()), variable),
                None => (None, rest),
            };
            config
                .set_raw_value_by(section, subsection, variable, value.as_str())
                .map_err(gix::Error::from_error)?;
        }
        config.commit().map_err(gix::Error::from_error)?;
        Ok(())
    }
}

/// The identity settings: the start identity, or the fallback where it had none (`EMAIL`
/// counts as an email, as in git). `author.*` and `committer.*` beat `user.*` in git, so
/// they are pinned too, to their start values or to the identity.
fn identity(last: &dyn Fn(&str) -> Option<String>, env: &dyn Env) -> Vec<(String, String)> {
    let nonempty = |key: &str| last(key).filter(|value| !value.trim().is_empty());
    let name = nonempty("user.name").unwrap_or_else(|| FALLBACK_NAME.to_owned());
    let email = nonempty("user.email").unwrap_or_else(|| {
        env.var("EMAIL")
            .filter(|email| !email.is_empty())
            .map_or_else(
                || FALLBACK_EMAIL.to_owned(),
                |email| email.to_string_lossy().into_owned(),
            )
    });
    [
        ("user.name", &name),
        ("user.email", &email),
        ("author.name", &name),
        ("author.email", &email),
        ("committer.name", &name),
        ("committer.email", &email),
    ]
    .into_iter()
    .map(|(key, fallback)| {
        (
            key.to_owned(),
            last(key).unwrap_or_else(|| fallback.clone()),
        )
    })
    .collect()
}

/// `name` and variable when `key` is `<section>.<name>.<variable>`.
fn driver_of<'a>(key: &'a str, section: &str) -> Option<(&'a str, &'a str)> {
    let rest = key.strip_prefix(section)?.strip_prefix('.')?;
    rest.rsplit_once('.')
}

/// `git config -z --list --show-scope` output as key → values, leaving out what the command
/// line set (epic's own `-c` options).
fn parse_listing(output: &[u8]) -> BTreeMap<String, Vec<String>> {
    let mut listing: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut fields = output.split(|byte| *byte == 0);
    while let (Some(scope), Some(entry)) = (fields.next(), fields.next()) {
        if scope == b"command" {
            continue;
        }
        let entry = String::from_utf8_lossy(entry);
        let (key, value) = entry.split_once('\n').unwrap_or((&entry, "true"));
        listing
            .entry(key.to_owned())
            .or_default()
            .push(value.to_owned());
    }
    listing
}

/// git's default file `name` under `$XDG_CONFIG_HOME/git` (or `~/.config/git`).
fn default_file(env: &dyn Env, name: &str) -> Option<PathBuf> {
    let base = match env.var("XDG_CONFIG_HOME").filter(|dir| !dir.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env.var("HOME")?).join(".config"),
    };
    Some(base.join("git").join(name))
}

/// The filter and merge driver names the configuration files define now.
#[derive(Debug, Default)]
pub(crate) struct FreshDrivers {
    filters: BTreeSet<String>,
    /// The filter drivers with a `process`.
    processes: BTreeSet<String>,
    merges: BTreeSet<String>,
}

/// How deep includes are followed (git stops at 10).
const INCLUDE_DEPTH: usize = 10;

/// The filter and merge driver names defined now in the files git reads configuration from
/// for the repository at `common_dir`: the system file (unless `GIT_CONFIG_NOSYSTEM`), the
/// global ones, the repository's, every worktree's `config.worktree`, and every file they
/// include, whatever the include's condition (a name found too many is neutralised for
/// nothing, one missed would run). In process: a few small files per git command.
pub(crate) fn fresh_driver_names(common_dir: &Path, env: &dyn Env) -> FreshDrivers {
    let mut files: Vec<PathBuf> = Vec::new();
    let truthy = |key: &str| {
        env.var(key).is_some_and(|value| {
            matches!(
                value.to_string_lossy().to_ascii_lowercase().as_str(),
                "1" | "true" | "yes" | "on"
            )
        })
    };
    if !truthy("GIT_CONFIG_NOSYSTEM") {
        files.push(
            env.var("GIT_CONFIG_SYSTEM")
                .map_or_else(|| PathBuf::from("/etc/gitconfig"), PathBuf::from),
        );
    }
    if let Some(global) = env.var("GIT_CONFIG_GLOBAL") {
        files.push(PathBuf::from(global));
    } else {
        files.extend(default_file(env, "config"));
        if let Some(home) = env.var("HOME") {
            files.push(PathBuf::from(home).join(".gitconfig"));
        }
    }
    files.push(common_dir.join("config"));
    files.push(common_dir.join("config.worktree"));
    if let Ok(entries) = std::fs::read_dir(common_dir.join("worktrees")) {
        let mut worktrees: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path().join("config.worktree"))
            .collect();
        worktrees.sort();
        files.extend(worktrees);
    }
    let mut found = FreshDrivers::default();
    let mut seen = BTreeSet::new();
    let home = env.var("HOME").map(PathBuf::from);
    for file in files {
        read_drivers(&file, home.as_deref(), 0, &mut seen, &mut found);
    }
    found
}

/// Adds the driver names `file` defines, and those of the files it includes, to `found`.
fn read_drivers(
    file: &Path,
    home: Option<&Path>,
    depth: usize,
    seen: &mut BTreeSet<PathBuf>,
    found: &mut FreshDrivers,
) {
    if depth > INCLUDE_DEPTH || !seen.insert(file.to_owned()) {
        return;
    }
    let Ok(bytes) = std::fs::read(file) else {
        return;
    };
    let meta = gix::config::file::Metadata::from(gix::config::Source::Local);
    let Ok(config) = gix::config::File::from_bytes_no_includes(
        &bytes,
        meta,
        gix::config::file::init::Options::default(),
    ) else {
        return;
    };
    let mut includes = Vec::new();
    for section in config.sections() {
        let header = section.header();
        let name = header.name().to_str_lossy().to_ascii_lowercase();
        let subsection = header
            .subsection_name()
            .map(|name| name.to_str_lossy().into_owned());
        match (name.as_str(), subsection) {
            ("filter", Some(driver)) => {
                if section.value("process").is_some() {
                    found.processes.insert(driver.clone());
                }
                found.filters.insert(driver);
            }
            ("merge", Some(driver)) => {
                found.merges.insert(driver);
            }
            ("include" | "includeif", _) => {
                includes.extend(
                    section
                        .values("path")
                        .into_iter()
                        .map(|path| path.to_str_lossy().into_owned()),
                );
            }
            _ => {}
        }
    }
    for include in includes {
        let path = if let Some(rest) = include.strip_prefix("~/") {
            match home {
                Some(home) => home.join(rest),
                None => continue,
            }
        } else {
            let path = PathBuf::from(&include);
            if path.is_absolute() {
                path
            } else {
                file.parent().unwrap_or(Path::new("/")).join(path)
            }
        };
        read_drivers(&path, home, depth + 1, seen, found);
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::{Env, Pin};

    struct NoEnv;

    impl Env for NoEnv {
        fn var(&self, _: &str) -> Option<OsString> {
            None
        }
    }

    fn listing(entries: &[(&str, &str)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (key, value) in entries {
            out.extend_from_slice(b"local\0");
            out.extend_from_slice(format!("{key}\n{value}\0").as_bytes());
        }
        out
    }

    #[test]
    fn absent_settings_get_neutral_values_and_present_ones_keep_theirs() {
        let pin = Pin::from_listing(
            &listing(&[
                ("user.name", "Ann"),
                ("commit.gpgsign", "true"),
                ("filter.cat.clean", "cat"),
            ]),
            &NoEnv,
        );
        let settings = pin.settings(&super::FreshDrivers::default());
        let get = |key: &str| {
            settings
                .iter()
                .rfind(|(name, _)| name == key)
                .map(|(_, value)| value.as_str())
        };
        assert_eq!(get("core.fsmonitor"), Some("false"));
        assert_eq!(get("commit.gpgsign"), Some("true"));
        assert!(pin.sign());
        assert_eq!(get("user.name"), Some("Ann"));
        assert_eq!(get("author.name"), Some("Ann"));
        assert_eq!(get("user.email"), Some("epic@localhost"));
        assert_eq!(get("filter.cat.clean"), Some("cat"));
        assert_eq!(get("filter.cat.smudge"), Some(""));
        assert_eq!(get("core.attributesfile"), Some("/dev/null"));
        assert_eq!(get("core.eol"), None);
    }

    #[test]
    fn drivers_found_later_are_neutralised() {
        let pin = Pin::from_listing(&listing(&[("filter.cat.clean", "cat")]), &NoEnv);
        let mut fresh = super::FreshDrivers::default();
        fresh.filters.insert("cat".to_owned());
        fresh.filters.insert("evil".to_owned());
        fresh.merges.insert("evil".to_owned());
        let settings = pin.settings(&fresh);
        assert!(!settings.contains(&("filter.cat.process".to_owned(), String::new())));
        fresh.processes.insert("cat".to_owned());
        let settings = pin.settings(&fresh);
        assert!(settings.contains(&("filter.evil.clean".to_owned(), String::new())));
        assert!(settings.contains(&("filter.evil.process".to_owned(), String::new())));
        // A start driver that gained a process is turned off rather than run it.
        assert!(settings.contains(&("filter.cat.process".to_owned(), String::new())));
        assert!(settings.contains(&("filter.evil.required".to_owned(), "false".to_owned())));
        assert!(settings.contains(&(
            "merge.evil.driver".to_owned(),
            super::NEUTRAL_MERGE_DRIVER.to_owned()
        )));
        assert!(!settings.contains(&("filter.cat.clean".to_owned(), String::new())));
    }

    #[test]
    fn changes_name_added_removed_and_changed_keys() {
        let pin = Pin::from_listing(
            &listing(&[("core.bare", "false"), ("user.name", "Ann")]),
            &NoEnv,
        );
        let now = listing(&[
            ("core.bare", "false"),
            ("user.name", "Eve"),
            ("core.fsmonitor", "x"),
        ]);
        assert_eq!(pin.changes(&now), ["core.fsmonitor", "user.name"]);
        let mut with_command = now.clone();
        with_command.extend_from_slice(b"command\0core.hookspath\n/dev/null\0");
        assert_eq!(pin.changes(&with_command), ["core.fsmonitor", "user.name"]);
    }
}
