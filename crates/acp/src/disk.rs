//! The files epic reads and writes for an ACP agent, never through a link: epic runs outside the
//! sandbox, so a path checked and then written could lead elsewhere by the time of the write if
//! the agent (which works in the same worktree) swapped a directory for a link in between. Each
//! directory on the way is opened below the worktree's with `O_NOFOLLOW`, and the file itself
//! too: a link anywhere below the worktree fails the request instead of being followed.

use std::fs::File;
use std::io::{self, Read as _, Write as _};
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{CWD, Mode, OFlags, mkdirat, openat};

/// The directory holding `relative` (a `/`-separated path below `root`, no `.` or `..`), opened
/// component by component without following a link, created where `create` and missing; and
/// the file's name in it.
fn parent<'a>(root: &Path, relative: &'a str, create: bool) -> io::Result<(OwnedFd, &'a str)> {
    let directory = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut dir = openat(CWD, root, directory, Mode::empty())?;
    let mut parts: Vec<&str> = relative.split('/').collect();
    let name = parts
        .pop()
        .filter(|name| !name.is_empty())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?;
    for part in parts {
        if create {
            match mkdirat(&dir, part, Mode::from_raw_mode(0o755)) {
                Ok(()) => {}
                Err(error) if error == rustix::io::Errno::EXIST => {}
                Err(error) => return Err(error.into()),
            }
        }
        dir = openat(&dir, part, directory | OFlags::NOFOLLOW, Mode::empty())?;
    }
    Ok((dir, name))
}

/// Writes `content` to `relative` below `root` (creating its directories), replacing what was
/// there; a link on the way or at the end fails it.
pub(crate) fn write(root: &Path, relative: &str, content: &[u8]) -> io::Result<()> {
    let (dir, name) = parent(root, relative, true)?;
    let flags =
        OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut file = File::from(openat(&dir, name, flags, Mode::from_raw_mode(0o644))?);
    file.write_all(content)
}

/// The text of `relative` below `root`, when it is at most `cap` bytes; a link on the way or at
/// the end fails it.
pub(crate) fn read(root: &Path, relative: &str, cap: u64) -> io::Result<String> {
    let (dir, name) = parent(root, relative, false)?;
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let file = File::from(openat(&dir, name, flags, Mode::empty())?);
    let size = file.metadata()?.len();
    if size > cap {
        return Err(io::Error::other(format!(
            "it is {size} bytes; epic reads files of up to {cap} bytes for an agent"
        )));
    }
    let mut text = String::new();
    file.take(cap).read_to_string(&mut text)?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[expect(
        clippy::disallowed_methods,
        reason = "the test looks where nothing may be written"
    )]
    fn a_write_makes_its_directories_and_never_follows_a_link() {
        let root = tempfile::tempdir().expect("a worktree");
        let outside = tempfile::tempdir().expect("somewhere else");
        write(root.path(), "src/cart/mod.rs", b"one").expect("written");
        assert_eq!(
            read(root.path(), "src/cart/mod.rs", 100).expect("read"),
            "one"
        );
        std::os::unix::fs::symlink(outside.path(), root.path().join("src/out"))
            .expect("a link to a directory outside");
        assert!(write(root.path(), "src/out/x.rs", b"two").is_err());
        std::os::unix::fs::symlink(outside.path().join("y"), root.path().join("src/y"))
            .expect("a link to a file outside");
        assert!(write(root.path(), "src/y", b"three").is_err());
        assert_eq!(std::fs::read_dir(outside.path()).expect("lists").count(), 0);
        assert!(read(root.path(), "src/out/x.rs", 100).is_err());
        assert!(
            read(root.path(), "src/cart/mod.rs", 2).is_err(),
            "past the cap"
        );
    }
}
