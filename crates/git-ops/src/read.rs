//! Reading the head of a file of a worktree, for a prompt: the executor inlines the small files
//! a story's plan entry names (`read_first`) in its agents' prompts, and does no file I/O of its
//! own.
//!
//! A plan names paths inside the repository; this refuses any that would read elsewhere (an
//! absolute path, a `..` segment, or a symbolic link on the way that leads out of the worktree),
//! so that no prompt carries a file the repository does not hold.

use std::io::{self, Read as _};
use std::path::{Component, Path};

/// What [`read_head`] found at a path of a worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileHead {
    /// A text file: its first bytes (at most the limit, cut back to a whole UTF-8 character;
    /// invalid sequences replaced), and its whole size in bytes.
    Text {
        /// The head of the file.
        text: String,
        /// The file's size in bytes.
        size: u64,
    },
    /// A file whose head holds a NUL byte or is not UTF-8: not text to show.
    Binary {
        /// The file's size in bytes.
        size: u64,
    },
    /// A directory.
    Directory,
    /// Nothing at that path.
    Missing,
    /// A path that leads out of the worktree, or is no plain file or directory: not read.
    Refused,
}

/// The head of the file at `path` (repo-relative, `/`-separated) in `worktree`: at most `limit`
/// bytes of it as text, or what it is when it is not a text file. An absolute path, a `..`
/// segment, or a path whose symbolic links lead out of the worktree is [`FileHead::Refused`].
///
/// ```no_run
/// use epic_git_ops::{FileHead, read_head};
///
/// match read_head("../app.worktrees/e/s".as_ref(), "src/lib.rs", 8192)? {
///     FileHead::Text { text, size } => println!("{size} bytes, starting with {text}"),
///     other => println!("{other:?}"),
/// }
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn read_head(worktree: &Path, path: &str, limit: usize) -> io::Result<FileHead> {
    let relative = Path::new(path);
    if relative
        .components()
        .any(|part| !matches!(part, Component::Normal(_) | Component::CurDir))
    {
        return Ok(FileHead::Refused);
    }
    let root = worktree.canonicalize()?;
    let full = match root.join(relative).canonicalize() {
        Ok(full) => full,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(FileHead::Missing),
        Err(error) => return Err(error),
    };
    if !full.starts_with(&root) {
        return Ok(FileHead::Refused);
    }
    let meta = std::fs::metadata(&full)?;
    if meta.is_dir() {
        return Ok(FileHead::Directory);
    }
    if !meta.is_file() {
        return Ok(FileHead::Refused);
    }
    let mut bytes = Vec::new();
    std::fs::File::open(&full)?
        .take(u64::try_from(limit).unwrap_or(u64::MAX))
        .read_to_end(&mut bytes)?;
    let size = meta.len().max(bytes.len() as u64);
    if bytes.contains(&0) {
        return Ok(FileHead::Binary { size });
    }
    // A cut may split the last character: keep the whole ones.
    let text = match std::str::from_utf8(&bytes) {
        Ok(text) => text.to_owned(),
        Err(error) if error.error_len().is_none() => {
            String::from_utf8_lossy(&bytes[..error.valid_up_to()]).into_owned()
        }
        Err(_) => return Ok(FileHead::Binary { size }),
    };
    Ok(FileHead::Text { text, size })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_heads_and_refuses_what_leads_outside() {
        let tmp = tempfile::tempdir().unwrap();
        let (tree, outside) = (tmp.path().join("tree"), tmp.path().join("secret.txt"));
        std::fs::create_dir_all(tree.join("src")).unwrap();
        std::fs::write(tree.join("src/a.rs"), "fn a() {}\n").unwrap();
        std::fs::write(tree.join("big.txt"), "é".repeat(10)).unwrap();
        std::fs::write(tree.join("blob.bin"), [1, 0, 2]).unwrap();
        std::fs::write(&outside, "secret").unwrap();
        std::os::unix::fs::symlink(&outside, tree.join("link")).unwrap();
        std::os::unix::fs::symlink("src/a.rs", tree.join("inner")).unwrap();

        let head = |path: &str, limit| read_head(&tree, path, limit).unwrap();
        assert_eq!(
            head("src/a.rs", 100),
            FileHead::Text {
                text: "fn a() {}\n".into(),
                size: 10
            }
        );
        assert_eq!(head("./inner", 100), head("src/a.rs", 100));
        // 20 bytes of two-byte characters cut at 5: two whole characters.
        assert_eq!(
            head("big.txt", 5),
            FileHead::Text {
                text: "éé".into(),
                size: 20
            }
        );
        assert_eq!(head("blob.bin", 100), FileHead::Binary { size: 3 });
        assert_eq!(head("src", 100), FileHead::Directory);
        assert_eq!(head("nothing.rs", 100), FileHead::Missing);
        assert_eq!(head("link", 100), FileHead::Refused);
        assert_eq!(head("../secret.txt", 100), FileHead::Refused);
        assert_eq!(head(&outside.display().to_string(), 100), FileHead::Refused);
    }
}
