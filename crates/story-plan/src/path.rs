//! Repo-relative path prefixes: normalisation, containment and safety.
//!
//! Plans name paths as prefixes with `/` separators. These functions are the one definition of
//! what two spellings of a path have in common; `epic-perimeter` and the rest of epic use them.

use std::fmt;

/// Normalises a repo-relative path: trims whitespace, turns `\` into `/`, and drops empty and `.`
/// segments (so `./`, doubled `/` and a trailing `/` disappear).
///
/// `..` is kept as it is: it is never resolved, and [`check_safe`] rejects it. A leading `/` is
/// dropped like any empty segment, so check safety on the raw spelling.
///
/// ```
/// use epic_story_plan::path::normalize;
/// assert_eq!(normalize("./src\\cart//mod.rs/"), "src/cart/mod.rs");
/// assert_eq!(normalize("././"), "");
/// ```
pub fn normalize(path: &str) -> String {
    let mut out = normalize_once(path);
    // Whitespace next to a separator at either end (`"src/ /"`) only surfaces once the empty
    // segments are gone; repeat until nothing changes, so `normalize` is idempotent.
    while out.trim() != out {
        out = normalize_once(&out);
    }
    out
}

fn normalize_once(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for segment in path.trim().split(['/', '\\']) {
        if segment.is_empty() || segment == "." {
            continue;
        }
        if !out.is_empty() {
            out.push('/');
        }
        out.push_str(segment);
    }
    out
}

/// Whether `path` is `prefix` or lies under it, both normalised first.
///
/// Prefixes are directory prefixes: `src/kit.ts` is not within `src/kit`. The empty prefix
/// contains everything.
///
/// ```
/// use epic_story_plan::path::within;
/// assert!(within("src/cart/mod.rs", "./src/cart/"));
/// assert!(!within("src/cart-old/mod.rs", "src/cart"));
/// ```
pub fn within(path: &str, prefix: &str) -> bool {
    within_normalized(&normalize(path), &normalize(prefix))
}

/// [`within`] for paths that are already normalised.
pub fn within_normalized(path: &str, prefix: &str) -> bool {
    prefix.is_empty()
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// Whether one of two normalised paths is, or lies under, the other.
pub fn overlaps_normalized(a: &str, b: &str) -> bool {
    within_normalized(a, b) || within_normalized(b, a)
}

/// Why a path may not be used as an owned, shared or read-first anchor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum UnsafePath {
    /// Empty (or only `/`, `.` and separators): it would cover the whole repository.
    Empty,
    /// Starts with `/` or `\`.
    Absolute,
    /// Starts with a Windows drive letter such as `C:`.
    DriveLetter,
    /// Has a `..` segment, which could climb out of the repository.
    ParentSegment,
    /// Lies under a `.git` directory (in any letter case).
    GitDir,
    /// Contains a NUL byte or another control character.
    ControlCharacter,
}

impl fmt::Display for UnsafePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Empty => "it is empty, which would cover the whole repository",
            Self::Absolute => "it is absolute; paths are relative to the repository root",
            Self::DriveLetter => {
                "it starts with a drive letter; paths are relative to the repository root"
            }
            Self::ParentSegment => "it has a `..` segment, which could leave the repository",
            Self::GitDir => "it lies under `.git`, which belongs to git",
            Self::ControlCharacter => "it contains a control character",
        })
    }
}

/// Checks that a path, as written in the plan, is a safe repo-relative anchor.
///
/// ```
/// use epic_story_plan::path::{check_safe, UnsafePath};
/// assert_eq!(check_safe("src/cart"), Ok(()));
/// assert_eq!(check_safe("../x"), Err(UnsafePath::ParentSegment));
/// assert_eq!(check_safe("/etc/passwd"), Err(UnsafePath::Absolute));
/// assert_eq!(check_safe(".git/hooks/pre-commit"), Err(UnsafePath::GitDir));
/// ```
pub fn check_safe(raw: &str) -> Result<(), UnsafePath> {
    let trimmed = raw.trim();
    if trimmed.chars().any(char::is_control) {
        return Err(UnsafePath::ControlCharacter);
    }
    if trimmed.starts_with(['/', '\\']) {
        return Err(UnsafePath::Absolute);
    }
    let normalized = normalize(trimmed);
    // On the raw spelling and the normalised one: `./C:/src` names a drive too.
    if [trimmed, normalized.as_str()]
        .iter()
        .any(|p| has_drive_letter(p))
    {
        return Err(UnsafePath::DriveLetter);
    }
    if normalized.is_empty() {
        return Err(UnsafePath::Empty);
    }
    for segment in normalized.split('/') {
        if segment == ".." {
            return Err(UnsafePath::ParentSegment);
        }
        if segment.eq_ignore_ascii_case(".git") {
            return Err(UnsafePath::GitDir);
        }
    }
    Ok(())
}

fn has_drive_letter(path: &str) -> bool {
    let bytes = path.as_bytes();
    bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'
}

/// Whether a path is a safe anchor: [`check_safe`] as a boolean.
pub fn is_safe(raw: &str) -> bool {
    check_safe(raw).is_ok()
}

/// Why a symbolic link's target leaves the repository; returned by [`resolve_link`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LinkEscape {
    /// The target is absolute (starts with `/`): it names a file of the machine, not of the
    /// repository.
    Absolute,
    /// Its `..` segments climb above the repository's root.
    AboveRoot,
    /// It resolves into a `.git` directory (in any letter case), which belongs to git.
    GitDir,
}

impl fmt::Display for LinkEscape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Absolute => "its target is absolute, outside the repository",
            Self::AboveRoot => "its target climbs above the repository's root",
            Self::GitDir => "its target lies under `.git`, which belongs to git",
        })
    }
}

/// Where a symbolic link at repo-relative `link` points, resolved lexically against the link's
/// own directory: the normalised repo-relative path of its target (`""` for the repository's
/// root), or why that lies outside the repository.
///
/// Only `/` separates segments, as on the systems where git checks symbolic links out (a `\` is
/// part of a name there; splitting on it could make `a\b/../../x`, which climbs out, look
/// inside). Empty and `.` segments are dropped and `..` takes one segment off, lexically: the
/// symbolic links the target passes through are not followed (each is checked on its own). A
/// `..` above the root is an escape even when the target comes back in later (`../repo/x`): the
/// repository's own name is not known here. A `.git` segment anywhere, in the target as
/// written or in where it lands, is an escape too. The link's path is resolved the same way, so
/// a hostile link path cannot open a way out either. No input panics, whatever its length.
///
/// ```
/// use epic_story_plan::path::{LinkEscape, resolve_link};
/// assert_eq!(resolve_link("src/cart/kit", "../kit/mod.rs"), Ok("src/kit/mod.rs".to_owned()));
/// assert_eq!(resolve_link("src/cart/passwd", "/etc/passwd"), Err(LinkEscape::Absolute));
/// assert_eq!(resolve_link("src/cart/up", "../../../x"), Err(LinkEscape::AboveRoot));
/// assert_eq!(resolve_link("src/hooks", "../.git/hooks"), Err(LinkEscape::GitDir));
/// assert_eq!(resolve_link("src/root", ".."), Ok(String::new()));
/// ```
pub fn resolve_link(link: &str, target: &str) -> Result<String, LinkEscape> {
    if target.starts_with('/') {
        return Err(LinkEscape::Absolute);
    }
    let is_git = |segment: &str| segment.eq_ignore_ascii_case(".git");
    if target.split('/').any(is_git) {
        return Err(LinkEscape::GitDir);
    }
    let mut resolved: Vec<&str> = Vec::new();
    let mut parent = link.split('/').collect::<Vec<_>>();
    // The link's directory: its path without its own name.
    parent.pop();
    for segment in parent.into_iter().chain(target.split('/')) {
        match segment {
            "" | "." => {}
            ".." => {
                if resolved.pop().is_none() {
                    return Err(LinkEscape::AboveRoot);
                }
            }
            name => resolved.push(name),
        }
    }
    if resolved.iter().copied().any(is_git) {
        return Err(LinkEscape::GitDir);
    }
    Ok(resolved.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_is_by_whole_segments() {
        assert!(within(
            "src/features/conto/overview/page.tsx",
            "src/features/conto/overview"
        ));
        assert!(within("src/App.tsx", "./src/App.tsx"));
        assert!(!within(
            "src/features/conto/overview-old/page.tsx",
            "src/features/conto/overview"
        ));
        assert!(!within("src/kit.ts", "src/kit"));
        assert!(within("anything/at/all", "/"));
    }

    #[test]
    fn normalize_is_idempotent_with_whitespace_at_the_ends() {
        for raw in ["src/ /", " / src", "src/ /.", "a\\ \\", " ./ ./x/ "] {
            let once = normalize(raw);
            assert_eq!(normalize(&once), once, "{raw:?}");
        }
        assert_eq!(normalize("src/ /"), "src");
        assert_eq!(normalize("my dir/my file.txt"), "my dir/my file.txt");
    }

    #[test]
    fn unsafe_anchors_are_named() {
        for (raw, expected) in [
            ("", UnsafePath::Empty),
            (".", UnsafePath::Empty),
            ("./", UnsafePath::Empty),
            ("/abs/src/x.ts", UnsafePath::Absolute),
            ("\\\\server\\share", UnsafePath::Absolute),
            ("C:\\x", UnsafePath::DriveLetter),
            ("c:x", UnsafePath::DriveLetter),
            ("./C:/src", UnsafePath::DriveLetter),
            ("../shared/kit", UnsafePath::ParentSegment),
            ("src/ok/../ok", UnsafePath::ParentSegment),
            ("a/../../b", UnsafePath::ParentSegment),
            (".git", UnsafePath::GitDir),
            (".GIT/config", UnsafePath::GitDir),
            ("vendor/sub/.git/hooks", UnsafePath::GitDir),
            ("src/\0x", UnsafePath::ControlCharacter),
        ] {
            assert_eq!(check_safe(raw), Err(expected), "{raw:?}");
        }
        for raw in [
            "src/ok",
            "./src/x/",
            "src\\win\\path",
            ".github/workflows",
            "a..b/c",
        ] {
            assert_eq!(check_safe(raw), Ok(()), "{raw:?}");
        }
    }

    #[test]
    fn link_targets_resolve_against_the_links_directory() {
        for (link, target, expected) in [
            ("src/a/x", "y", Ok("src/a/y")),
            ("src/a/x", "./y/./z/", Ok("src/a/y/z")),
            ("src/a/x", "../b/file.txt", Ok("src/b/file.txt")),
            ("x", "src//a", Ok("src/a")),
            ("src/a/x", "../..", Ok("")),
            ("src/a/x", "", Ok("src/a")),
            (
                "src/a/x",
                "a\\..\\..\\..\\..\\etc",
                Ok("src/a/a\\..\\..\\..\\..\\etc"),
            ),
            ("src/a/x", "/etc/passwd", Err(LinkEscape::Absolute)),
            ("src/a/x", "//server/share", Err(LinkEscape::Absolute)),
            (
                "src/a/x",
                "../../../outside.txt",
                Err(LinkEscape::AboveRoot),
            ),
            ("x", "..", Err(LinkEscape::AboveRoot)),
            (
                "src/a/x",
                "../../../repo/src/a/y",
                Err(LinkEscape::AboveRoot),
            ),
            ("src/a/x", "../../.git/config", Err(LinkEscape::GitDir)),
            ("src/a/x", ".GIT", Err(LinkEscape::GitDir)),
            (
                "src/a/x",
                "../../vendor/.git/../ok",
                Err(LinkEscape::GitDir),
            ),
            ("src/.git/x", "y", Err(LinkEscape::GitDir)),
            ("../x", "y", Err(LinkEscape::AboveRoot)),
        ] {
            assert_eq!(
                resolve_link(link, target),
                expected.map(str::to_owned),
                "{link} -> {target}"
            );
        }
    }
}
