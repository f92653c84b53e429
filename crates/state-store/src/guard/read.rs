//! Reading the watched paths into a snapshot: each entry's type, mode, contents or link target,
//! a regular file's contents reused while its stamp is unchanged, and the paths resolved.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::error::GuardError;
use super::model::{Entry, Held, Key, LARGEST, Snapshot, Watch, bytes_of, normalized};
use super::notifier::Notifier;
use super::platform::mode_of;
use super::stamp::{Read, Stamp};

/// How a tree is read: the snapshot whose unchanged contents it reuses, and when.
#[derive(Debug, Clone, Copy)]
pub(super) struct Reader<'a> {
    pub(super) previous: Option<&'a Snapshot>,
    pub(super) read_at: Read,
}

/// `path` with its symbolic links resolved, as far as it exists: its longest existing ancestor
/// is resolved and the rest appended (git records worktree paths resolved, so a path of epic's
/// must be resolved before it is compared with one git wrote). The path itself when nothing of
/// it can be resolved.
pub fn resolved(path: &Path) -> PathBuf {
    let mut existing = path;
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = fs::canonicalize(existing) {
            let mut out = real;
            for name in rest.iter().rev() {
                out.push(name);
            }
            return out;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Reads `path` (normalized), which `watch` covers, into `taken`: the file, or the tree from
/// `path` down.
pub(super) fn read_watch(
    watch: &Watch,
    path: &Path,
    reader: Reader<'_>,
    taken: &mut Snapshot,
    notifier: Option<&mut Notifier>,
) -> Result<(), GuardError> {
    match watch {
        Watch::File(_) => {
            read_into(path, None, reader.previous, reader.read_at, taken)?;
            Ok(())
        }
        Watch::Tree { root, keep } => {
            let root = normalized(root);
            read_tree(&root, path, None, *keep, reader, taken, notifier)
        }
    }
}

/// Reads `path` (normalized) into `taken` (nothing when it is not there), reusing `previous`'s
/// contents for a file whose stamp is unchanged: whether it is a directory.
pub(super) fn read_into(
    path: &Path,
    metadata: Option<fs::Metadata>,
    previous: Option<&Snapshot>,
    read_at: Read,
    taken: &mut Snapshot,
) -> Result<bool, GuardError> {
    let Some((entry, stamp)) = read_entry(path, metadata, previous, read_at)? else {
        return Ok(false);
    };
    let dir = matches!(entry, Entry::Dir { .. });
    taken
        .entries
        .insert(Key(path.to_path_buf()), Held { entry, stamp });
    Ok(dir)
}

/// What `path` holds (`metadata`: its `lstat`, when the caller has it already), reusing
/// `previous`'s contents for a file whose stamp is unchanged; `None` when nothing is there.
pub(super) fn read_entry(
    path: &Path,
    metadata: Option<fs::Metadata>,
    previous: Option<&Snapshot>,
    read_at: Read,
) -> Result<Option<(Entry, Option<Stamp>)>, GuardError> {
    let fail = |source| GuardError::Read {
        path: path.to_path_buf(),
        source,
    };
    let metadata = match metadata.map_or_else(|| fs::symlink_metadata(path), Ok) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(fail(error)),
    };
    let entry = if metadata.is_symlink() {
        match fs::read_link(path) {
            Ok(target) => Entry::Link { target },
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(fail(error)),
        }
    } else if metadata.is_dir() {
        Entry::Dir {
            mode: mode_of(&metadata),
        }
    } else if metadata.len() > LARGEST {
        Entry::Large {
            mode: mode_of(&metadata),
            len: metadata.len(),
            modified: metadata
                .modified()
                .ok()
                .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |since| since.as_nanos()),
        }
    } else {
        // Stamped before the read: a write between the two leaves a stamp older than what was
        // read, so the next snapshot reads the file again.
        let stamp = Stamp::of(&metadata, read_at.at, read_at.racy_ns);
        if let (Some(stamp), Some(previous)) = (stamp, previous)
            && let Some(held) = previous.entries.get(bytes_of(path))
            && held.stamp == Some(stamp)
            && let entry @ Entry::File { .. } = &held.entry
        {
            return Ok(Some((entry.clone(), Some(stamp))));
        }
        match fs::read(path) {
            Ok(contents) => {
                let entry = Entry::File {
                    mode: mode_of(&metadata),
                    contents: contents.into(),
                };
                return Ok(Some((entry, stamp)));
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(fail(error)),
        }
    };
    Ok(Some((entry, None)))
}

/// Reads `dir` (under `root`, both normalized) and what it holds into `taken`.
pub(super) fn read_tree(
    root: &Path,
    dir: &Path,
    metadata: Option<fs::Metadata>,
    keep: fn(&Path) -> bool,
    reader: Reader<'_>,
    taken: &mut Snapshot,
    mut notifier: Option<&mut Notifier>,
) -> Result<(), GuardError> {
    if !read_into(dir, metadata, reader.previous, reader.read_at, taken)? {
        return Ok(());
    }
    // Watched before it is listed: a change after the listing is an event.
    if let Some(notifier) = notifier.as_deref_mut() {
        notifier.watch(dir);
    }
    let listing = match fs::read_dir(dir) {
        Ok(listing) => listing,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(GuardError::Read {
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    let mut children = Vec::new();
    for child in listing {
        let child = child.map_err(|source| GuardError::Read {
            path: dir.to_path_buf(),
            source,
        })?;
        let path = child.path();
        let relative = path.strip_prefix(root).unwrap_or(&path);
        if keep(relative) {
            // Statted relative to the open directory (`fstatat`): no walk of the whole path. A
            // child gone meanwhile is statted again by path, and found gone.
            children.push((child.metadata().ok(), path));
        }
    }
    // In the order the directory lists them: the snapshot orders its keys itself.
    for (metadata, child) in children {
        read_tree(
            root,
            &child,
            metadata,
            keep,
            reader,
            taken,
            notifier.as_deref_mut(),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::platform::symlink;

    #[test]
    fn resolved_resolves_what_exists_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        fs::create_dir(&real).unwrap();
        symlink(&real, &dir.path().join("link")).unwrap();
        let real = fs::canonicalize(&real).unwrap();
        assert_eq!(
            resolved(&dir.path().join("link/not/yet")),
            real.join("not/yet")
        );
        assert_eq!(
            resolved(Path::new("relative/nowhere")),
            Path::new("relative/nowhere")
        );
    }
}
