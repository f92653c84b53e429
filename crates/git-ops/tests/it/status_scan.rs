//! The status against `git status`, change by change: every kind of change the quick pass must
//! either prove absent or hand to gix (see `src/scan.rs`), one at a time and in random mixes.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use epic_git_ops::{Git, GixGit};
use proptest::prelude::*;

use crate::status::git_status_paths;
use crate::support::Repo;

/// Tracked files of the starting commit: nested directories, names a glob would misread, and
/// the ignore rules.
const FILES: [&str; 10] = [
    "a.txt",
    "src/lib.rs",
    "src/main.rs",
    "src/deep/er/mod.rs",
    "docs/guide.md",
    "docs/a*b[1].md",
    "with space/x y.txt",
    "ünï/日本.txt",
    "tools/run.sh",
    ".gitignore",
];

pub(crate) fn committed() -> Repo {
    let repo = Repo::new();
    for path in FILES {
        let content = if path == ".gitignore" {
            "*.log\nbuild/\n".to_owned()
        } else {
            format!("{path}\n")
        };
        repo.write(path, &content);
    }
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "files"]);
    repo
}

/// Ours, git's, and ours again (git's status may rewrite the index's stat data).
pub(crate) fn assert_like_git(repo: &Repo, git: &GixGit, what: &str) {
    let ours = git.status(&repo.path, &[]).expect("status").paths;
    let theirs = git_status_paths(repo, &repo.path);
    assert_eq!(ours, theirs, "after {what}");
    let again = git.status(&repo.path, &[]).expect("status").paths;
    assert_eq!(again, theirs, "after {what}, once git refreshed the index");
}

fn remove(path: &Path) {
    if path.is_dir() && !path.is_symlink() {
        std::fs::remove_dir_all(path).expect("remove dir");
    } else {
        std::fs::remove_file(path).expect("remove file");
    }
}

/// One change to the worktree (or index) of the repository from [`committed`].
#[derive(Clone, Debug)]
enum Change {
    /// Rewrites a tracked file, longer or with the same length.
    Edit {
        file: usize,
        same_size: bool,
    },
    /// Rewrites a tracked file with its own content: new stat data, same content.
    Touch {
        file: usize,
    },
    Delete {
        file: usize,
    },
    /// Sets the executable bit.
    Chmod {
        file: usize,
    },
    /// Replaces a tracked file with a symbolic link.
    Symlink {
        file: usize,
    },
    /// Replaces a tracked file with a directory holding a file.
    FileToDir {
        file: usize,
    },
    /// Replaces a directory of tracked files with a file.
    DirToFile {
        dir: usize,
    },
    /// Creates an untracked file, perhaps in new directories, perhaps ignored.
    Untracked {
        at: usize,
        name: usize,
    },
    EmptyDir {
        at: usize,
    },
    /// Stages a tracked file's edit (then the index no longer matches HEAD).
    Stage {
        file: usize,
    },
    /// Commits everything (new index timestamp, stat data refreshed).
    Commit,
    /// Renames a directory away, or back where it was: the watched directory moves.
    RenameDir {
        dir: usize,
    },
    /// Saves a tracked file the way editors do: a new file written beside it, renamed over it.
    Replace {
        file: usize,
    },
}

const DIRS: [&str; 5] = ["", "src", "src/deep", "docs", "new/nested"];
const NAMES: [&str; 5] = ["u.txt", "debug.log", "build/out.o", "q?[x].txt", "ü n.txt"];

fn change() -> impl Strategy<Value = Change> {
    let file = 0..FILES.len();
    prop_oneof![
        (file.clone(), any::<bool>())
            .prop_map(|(file, same_size)| Change::Edit { file, same_size }),
        file.clone().prop_map(|file| Change::Touch { file }),
        file.clone().prop_map(|file| Change::Delete { file }),
        file.clone().prop_map(|file| Change::Chmod { file }),
        file.clone().prop_map(|file| Change::Symlink { file }),
        file.clone().prop_map(|file| Change::FileToDir { file }),
        (1..4usize).prop_map(|dir| Change::DirToFile { dir }),
        (0..DIRS.len(), 0..NAMES.len()).prop_map(|(at, name)| Change::Untracked { at, name }),
        (0..DIRS.len()).prop_map(|at| Change::EmptyDir { at }),
        file.clone().prop_map(|file| Change::Stage { file }),
        Just(Change::Commit),
        (1..4usize).prop_map(|dir| Change::RenameDir { dir }),
        file.prop_map(|file| Change::Replace { file }),
    ]
}

fn apply(repo: &Repo, change: &Change) {
    let at = |rel: &str| repo.path.join(rel);
    let is_file = |rel: &str| at(rel).symlink_metadata().is_ok_and(|m| m.is_file());
    match *change {
        Change::Edit { file, same_size } => {
            let path = FILES[file];
            if is_file(path) {
                let old = std::fs::read_to_string(at(path)).unwrap_or_default();
                let new = if same_size {
                    old.to_uppercase()
                } else {
                    format!("{old}more\n")
                };
                std::fs::write(at(path), new).expect("edit");
            }
        }
        Change::Touch { file } => {
            let path = FILES[file];
            if is_file(path) {
                let old = std::fs::read(at(path)).expect("read");
                std::fs::write(at(path), old).expect("touch");
            }
        }
        Change::Delete { file } => {
            if at(FILES[file]).symlink_metadata().is_ok() {
                remove(&at(FILES[file]));
            }
        }
        Change::Chmod { file } => {
            let path = FILES[file];
            if is_file(path) {
                std::fs::set_permissions(at(path), std::fs::Permissions::from_mode(0o755))
                    .expect("chmod");
            }
        }
        Change::Symlink { file } => {
            let path = FILES[file];
            if at(path).symlink_metadata().is_ok() {
                remove(&at(path));
            }
            if at(path).parent().is_some_and(Path::is_dir) {
                // Not at itself: git skips a path below a looping link, gix calls it deleted.
                std::os::unix::fs::symlink("nowhere", at(path)).expect("symlink");
            }
        }
        Change::FileToDir { file } => {
            let path = FILES[file];
            if is_file(path) {
                remove(&at(path));
                std::fs::create_dir_all(at(path)).expect("mkdir");
                std::fs::write(at(path).join("inside.txt"), "inside\n").expect("write");
            }
        }
        Change::DirToFile { dir } => {
            let path = DIRS[dir];
            if at(path).symlink_metadata().is_ok() {
                remove(&at(path));
            }
            if at(path).parent().is_some_and(Path::is_dir) {
                std::fs::write(at(path), "now a file\n").expect("write");
            }
        }
        Change::Untracked { at: dir, name } => {
            let path = at(DIRS[dir]).join(NAMES[name]);
            if std::fs::create_dir_all(path.parent().expect("parent")).is_ok() && !path.exists() {
                std::fs::write(path, "untracked\n").expect("write");
            }
        }
        Change::EmptyDir { at: dir } => {
            std::fs::create_dir_all(at(DIRS[dir]).join("empty")).ok();
        }
        Change::Stage { file } => {
            let path = FILES[file];
            if is_file(path) {
                std::fs::write(at(path), "staged\n").expect("write");
                repo.git(&["add", "--", path]);
            }
        }
        Change::Commit => {
            repo.git(&["add", "-A"]);
            repo.git(&["commit", "-q", "--allow-empty", "-m", "more"]);
        }
        Change::RenameDir { dir } => {
            let path = at(DIRS[dir]);
            let away = path.with_extension("away");
            if away.symlink_metadata().is_ok() && path.symlink_metadata().is_err() {
                std::fs::rename(&away, &path).expect("rename back");
            } else if path.symlink_metadata().is_ok() && away.symlink_metadata().is_err() {
                std::fs::rename(&path, &away).expect("rename away");
            }
        }
        Change::Replace { file } => {
            let path = FILES[file];
            if is_file(path) {
                let old = std::fs::read_to_string(at(path)).unwrap_or_default();
                let saved = at(path).with_extension("swp");
                std::fs::write(&saved, old.to_uppercase()).expect("write beside");
                std::fs::rename(&saved, at(path)).expect("rename over");
            }
        }
    }
}

#[test]
fn each_change_alone_is_seen_like_git() {
    let cases = [
        Change::Edit {
            file: 1,
            same_size: true,
        },
        Change::Edit {
            file: 5,
            same_size: false,
        },
        Change::Touch { file: 3 },
        Change::Delete { file: 6 },
        Change::Chmod { file: 8 },
        Change::Symlink { file: 0 },
        Change::FileToDir { file: 4 },
        Change::DirToFile { dir: 2 },
        Change::Untracked { at: 0, name: 0 },
        Change::Untracked { at: 4, name: 4 },
        Change::Untracked { at: 1, name: 1 },
        Change::Untracked { at: 3, name: 2 },
        Change::Untracked { at: 2, name: 3 },
        Change::EmptyDir { at: 3 },
        Change::Stage { file: 7 },
        Change::RenameDir { dir: 3 },
        Change::Replace { file: 2 },
    ];
    for case in cases {
        let repo = committed();
        let git = repo.handle();
        assert_like_git(&repo, &git, "the commit");
        apply(&repo, &case);
        assert_like_git(&repo, &git, &format!("{case:?}"));
    }
}

/// A time long past, to date files and indexes to: what counts is their order, not the clock.
fn long_ago() -> std::time::SystemTime {
    std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_600_000_000)
}

/// Sets the modification time of the file at `path`.
fn date(path: &Path, at: std::time::SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|file| file.set_modified(at))
        .unwrap_or_else(|error| panic!("date {}: {error}", path.display()));
}

/// Dates every tracked file to [`long_ago`] and has git record their stat data in an index
/// written after them: no file is racy.
fn settle(repo: &Repo) {
    for path in FILES {
        date(&repo.path.join(path), long_ago());
    }
    repo.git(&["update-index", "--really-refresh"]);
}

#[test]
fn a_touched_file_in_an_older_index_is_unchanged() {
    let repo = committed();
    let git = repo.handle();
    // An index written well after the files: their stat data are not racy.
    settle(&repo);
    repo.git(&["status"]);
    // And well before the touches that follow: theirs are not racy either, only new.
    date(
        &repo.path.join(".git/index"),
        long_ago() + std::time::Duration::from_hours(1),
    );
    apply(&repo, &Change::Touch { file: 1 });
    apply(
        &repo,
        &Change::Edit {
            file: 2,
            same_size: true,
        },
    );
    assert_like_git(&repo, &git, "a touch and a same-size edit");
}

#[test]
fn an_executable_bit_is_seen_without_ctime() {
    let repo = committed();
    // Without ctime, a chmod leaves every compared stat field as it was: only the mode shows it.
    repo.git(&["config", "core.trustCTime", "false"]);
    let git = repo.handle();
    settle(&repo);
    apply(&repo, &Change::Chmod { file: 1 });
    assert_like_git(&repo, &git, "a chmod");
    assert_eq!(
        git.status(&repo.path, &[]).expect("status").paths,
        ["src/lib.rs"]
    );
}

#[test]
fn a_nested_repository_is_reported_like_git() {
    let repo = committed();
    let git = repo.handle();
    repo.git(&["init", "-q", "src/vendor"]);
    std::fs::write(repo.path.join("src/vendor/v.txt"), "v\n").expect("write");
    let ours = git.status(&repo.path, &[]).expect("status").paths;
    assert!(
        ours.iter().any(|path| path.starts_with("src/vendor")),
        "{ours:?}"
    );
}

#[test]
fn many_changes_fall_back_to_the_full_status() {
    let repo = committed();
    let git = repo.handle();
    for i in 0..300 {
        repo.write(&format!("many/f{i}.txt"), "x");
        repo.write(&format!("src/m{i}.rs"), "x");
    }
    assert_like_git(&repo, &git, "600 untracked files");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn any_mix_of_changes_is_seen_like_git(changes in proptest::collection::vec(change(), 1..8)) {
        let repo = committed();
        let git = repo.handle();
        for change in &changes {
            apply(&repo, change);
            let ours = git.status(&repo.path, &[]).expect("status").paths;
            let theirs = git_status_paths(&repo, &repo.path);
            prop_assert_eq!(ours, theirs, "after {:?}", changes);
        }
    }
}

/// Dates the index back to the start of the second in which its oldest file was written: every
/// tracked file is then racy (written no earlier than the index, as far as its times tell) and
/// stays so however long the test takes, as if everything since happened within that second.
fn keep_racy(repo: &Repo) {
    let listed = repo.git(&["ls-files", "-z"]);
    let oldest = listed
        .split('\0')
        .filter(|path| !path.is_empty())
        .map(|path| {
            std::fs::metadata(repo.path.join(path))
                .and_then(|meta| meta.modified())
                .expect("a tracked file's time")
        })
        .min()
        .expect("tracked files");
    let second = oldest
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    date(
        &repo.path.join(".git/index"),
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(second),
    );
}

#[test]
fn a_file_read_once_is_trusted_only_while_its_stat_data_stay() {
    let repo = committed();
    // The files stay racy throughout, whatever the machine's speed.
    keep_racy(&repo);
    let git = repo.handle();
    // The first status reads every file and keeps what it read (their change times are
    // settled by then); the next ones must still see every change. The one wait left in these
    // tests: a change time is the kernel's, which no program can set back (what `scan.rs`
    // relies on), so only time makes it settled (50 ms before a status begins).
    std::thread::sleep(std::time::Duration::from_millis(100));
    for round in 0..3 {
        assert!(
            git.status(&repo.path, &[])
                .expect("status")
                .paths
                .is_empty(),
            "round {round}"
        );
    }
    let before = std::fs::read_to_string(repo.path.join("src/lib.rs")).expect("read");
    // The same size, and racy: only the change time tells.
    repo.write("src/lib.rs", before.to_uppercase());
    assert_eq!(
        git.status(&repo.path, &[]).expect("status").paths,
        ["src/lib.rs"]
    );
    repo.write("src/lib.rs", &before);
    assert!(
        git.status(&repo.path, &[])
            .expect("status")
            .paths
            .is_empty()
    );
    assert_like_git(&repo, &git, "an edit undone");
}

#[test]
fn a_submodule_is_judged_like_git() {
    let repo = committed();
    let sub = repo.path.join("sub");
    repo.git(&["init", "-q", "sub"]);
    std::fs::write(sub.join("x"), "x\n").expect("write");
    repo.git_in(&sub, &["add", "x"]);
    let me = ["-c", "user.name=Sub", "-c", "user.email=sub@example.com"];
    repo.git_in(&sub, &[&me[..], &["commit", "-q", "-m", "x"]].concat());
    let head = repo.git_in(&sub, &["rev-parse", "HEAD"]);
    // Recorded as a submodule (a gitlink) at its head.
    repo.git(&[
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("160000,{},sub", head.trim()),
    ]);
    repo.git(&["commit", "-q", "-m", "submodule"]);
    let git = repo.handle();
    assert_like_git(&repo, &git, "a clean submodule");
    std::fs::write(sub.join("x"), "moved on\n").expect("write");
    repo.git_in(&sub, &[&me[..], &["commit", "-q", "-am", "moved"]].concat());
    assert_like_git(&repo, &git, "a submodule whose head moved");
}

#[test]
fn a_racy_file_is_read_through_the_attributes_the_index_keeps() {
    let repo = Repo::new();
    // Checked in as LF, kept in the worktree as CRLF: only the filters make them equal.
    for dir in ["", "sub/"] {
        repo.write(&format!("{dir}.gitattributes"), "*.crlf text eol=crlf\n");
        repo.write(&format!("{dir}lines.crlf"), "one\r\ntwo\r\n");
    }
    repo.write("plain.txt", "plain\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "files"]);
    keep_racy(&repo);
    // Gone from the worktree: git adds a file with the attributes its index holds.
    for dir in ["", "sub/"] {
        std::fs::remove_file(repo.path.join(format!("{dir}.gitattributes"))).expect("remove");
    }
    let git = repo.handle();
    assert_eq!(
        git.status(&repo.path, &[]).expect("status").paths,
        [".gitattributes", "sub/.gitattributes"],
        "the CRLF files read as their LF blobs"
    );
    assert_like_git(&repo, &git, "the attribute files removed");
}
