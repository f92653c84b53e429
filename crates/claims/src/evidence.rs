//! The check of a judge's evidence that a story's work is already on the epic branch
//! ([`check`]): the story changed nothing, and a judge's "clean" alone is an opinion, so a
//! confirmation clears it only with evidence epic can check on the proven epic head.
//!
//! The rules, all of which must hold:
//!
//! - the evidence names at least one file;
//! - each named path is safe (as a plan's paths must be), lies inside the story's owned paths
//!   (`epic_story_plan::path::within`) and is a file on the head: not a directory, a symbolic
//!   link, a submodule or nothing;
//! - each of the story's `provides` is named by some file of the evidence;
//! - each name a file is said to provide appears in that file ([`word_of`], [`appears`]): the
//!   first word (a run of letters, digits, `_` and `-`) of the name's last part (after the last
//!   `::`, `.`, `/` or `#`) occurs in the file as a whole word, case-sensitively. `cart::Cart`
//!   looks for `Cart`, `useCart() hook` for `useCart`, `POST /api/cart` for `cart`. Plain and
//!   predictable, it proves that the file names the thing, not that it implements it: that is
//!   the judge's part, and the gates'.
//!
//! A path outside the owned paths is not read: the story's owned paths are the only ones no
//! other story changes, so evidence there stays true on every later proven head.

use std::fmt;

use epic_git_ops::TreeFile;
use epic_report::Evidence;
use epic_story_plan::Story;
use epic_story_plan::path::{self, UnsafePath};

/// Why a judge's evidence does not hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The confirmation names no evidence at all.
    NoEvidence,
    /// Its `evidence` could not be read as a list of `{"path","provides"}` objects.
    Unreadable(String),
    /// A path that is not a safe repo-relative path.
    UnsafePath {
        /// The path as the judge wrote it.
        path: String,
        /// What is wrong with it.
        why: UnsafePath,
    },
    /// A path outside the story's owned paths.
    Outside {
        /// The path, normalised.
        path: String,
        /// The story's owned paths.
        owned: Vec<String>,
    },
    /// A path that is not a file on the head.
    NotAFile {
        /// The path, normalised.
        path: String,
        /// What the head has there ([`TreeFile::kind`]).
        found: &'static str,
    },
    /// A provided name with no word to look for.
    NoWord {
        /// The name.
        name: String,
    },
    /// A provided name whose word does not appear in the file named for it.
    NameMissing {
        /// The name.
        name: String,
        /// The word looked for (`word_of`).
        word: String,
        /// The file.
        path: String,
    },
    /// One of the story's `provides` that no file of the evidence provides.
    Uncovered {
        /// The name.
        name: String,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoEvidence => f.write_str(
                "the confirmation names no evidence: no file that holds the story's work \
                 (`evidence` is empty or missing)",
            ),
            Self::Unreadable(error) => write!(
                f,
                "the confirmation's `evidence` could not be read as \
                 [{{\"path\":\"…\",\"provides\":[\"…\"]}}]: {error}"
            ),
            Self::UnsafePath { path, why } => write!(f, "`{path}` is no path to check: {why}"),
            Self::Outside { path, owned } => write!(
                f,
                "`{path}` is outside the story's owned paths ({})",
                owned.join(", ")
            ),
            Self::NotAFile { path, found } => {
                write!(f, "`{path}` is not a file on the epic head: {found}")
            }
            Self::NoWord { name } => write!(
                f,
                "`{name}` has no word to look for (letters, digits, `_` or `-` after its last \
                 `::`, `.`, `/` or `#`)"
            ),
            Self::NameMissing { name, word, path } => write!(
                f,
                "`{name}` does not appear in `{path}` (the word `{word}` is not in it as a whole \
                 word)"
            ),
            Self::Uncovered { name } => write!(
                f,
                "`{name}`, which the story provides, is named by no file of the evidence"
            ),
        }
    }
}

/// The evidence `claimed` for `story`, checked against the tree `read` reads (a path of the
/// proven epic head): the evidence normalised (paths as the plan spells paths, names trimmed)
/// when it holds, else every problem found, in the evidence's order then the story's
/// `provides`. `read` is called once for each path that is safe and inside the owned paths.
pub fn check<E>(
    story: &Story,
    claimed: Result<&[Evidence], &str>,
    mut read: impl FnMut(&str) -> Result<TreeFile, E>,
) -> Result<Result<Vec<Evidence>, Vec<Problem>>, E> {
    let claimed = match claimed {
        Ok([]) => return Ok(Err(vec![Problem::NoEvidence])),
        Ok(claimed) => claimed,
        Err(error) => return Ok(Err(vec![Problem::Unreadable(error.to_owned())])),
    };
    let mut problems = Vec::new();
    let mut checked = Vec::with_capacity(claimed.len());
    for evidence in claimed {
        let names: Vec<String> = evidence
            .provides
            .iter()
            .map(|name| name.trim().to_owned())
            .collect();
        if let Err(why) = path::check_safe(&evidence.path) {
            problems.push(Problem::UnsafePath {
                path: evidence.path.clone(),
                why,
            });
            continue;
        }
        let file = path::normalize(&evidence.path);
        if !story.owned.iter().any(|owned| path::within(&file, owned)) {
            problems.push(Problem::Outside {
                path: file,
                owned: story.owned.clone(),
            });
            continue;
        }
        let text = match read(&file)? {
            TreeFile::File(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            other => {
                problems.push(Problem::NotAFile {
                    path: file,
                    found: other.kind(),
                });
                continue;
            }
        };
        for name in &names {
            match word_of(name) {
                None => problems.push(Problem::NoWord { name: name.clone() }),
                Some(word) if !appears(&text, word) => problems.push(Problem::NameMissing {
                    name: name.clone(),
                    word: word.to_owned(),
                    path: file.clone(),
                }),
                Some(_) => {}
            }
        }
        checked.push(Evidence::new(file, names));
    }
    for name in &story.provides {
        let covered = claimed
            .iter()
            .any(|evidence| evidence.provides.iter().any(|n| n.trim() == name.trim()));
        if !covered {
            problems.push(Problem::Uncovered { name: name.clone() });
        }
    }
    Ok(if problems.is_empty() {
        Ok(checked)
    } else {
        Err(problems)
    })
}

/// Whether `c` belongs to a word: a letter, a digit, `_` or `-`.
fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-'
}

/// The word a provided name is looked for by: the first run of word characters ([`is_word`])
/// in the name's last part that has one, the parts split at `::`, `.`, `/` and `#`. `None`
/// when no part has a word character.
///
/// ```text
/// cart::Cart -> Cart     useCart() hook -> useCart     POST /api/cart -> cart
/// ```
pub(crate) fn word_of(name: &str) -> Option<&str> {
    let part = name
        .split("::")
        .flat_map(|part| part.split(['.', '/', '#']))
        .filter(|part| part.chars().any(is_word))
        .last()?;
    let start = part.find(is_word)?;
    let rest = &part[start..];
    let end = rest.find(|c: char| !is_word(c)).unwrap_or(rest.len());
    Some(&rest[..end])
}

/// Whether `word` occurs in `text` as a whole word: with no word character ([`is_word`])
/// right before or right after it.
pub(crate) fn appears(text: &str, word: &str) -> bool {
    if word.is_empty() {
        return false;
    }
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::convert::Infallible;

    use super::*;

    #[test]
    fn the_word_of_a_name_is_the_first_word_of_its_last_part() {
        assert_eq!(word_of("cart::Cart"), Some("Cart"));
        assert_eq!(word_of("cart::Cart::add()"), Some("add"));
        assert_eq!(word_of("useCart() hook"), Some("useCart"));
        assert_eq!(word_of("POST /api/cart"), Some("cart"));
        assert_eq!(word_of("src/cart.rs#Cart"), Some("Cart"));
        assert_eq!(word_of("Cart<T>"), Some("Cart"));
        assert_eq!(word_of("`Cart` struct"), Some("Cart"));
        assert_eq!(word_of("use-cart"), Some("use-cart"));
        assert_eq!(word_of("cart::"), Some("cart"));
        assert_eq!(word_of("::/()"), None);
        assert_eq!(word_of(""), None);
    }

    #[test]
    fn a_word_appears_only_whole() {
        let text = "pub struct Carts;\nimpl Cart {}\n";
        assert!(appears(text, "Cart"));
        assert!(!appears("pub struct Carts;", "Cart"));
        assert!(!appears("struct MyCart;", "Cart"));
        assert!(!appears("cart_item", "cart"));
        assert!(appears("(Cart)", "Cart"));
        assert!(!appears("Cart", ""));
        assert!(appears("é Cart", "Cart"));
        assert!(!appears("éCart", "Cart"));
    }

    /// A story owning `src/a` that provides `provides`, checked against the files `tree` holds
    /// (path → content; `dir` for a directory, `link` for a symbolic link).
    fn check_on(
        provides: &[&str],
        claimed: &[Evidence],
        tree: &[(&str, &str)],
    ) -> Result<Vec<Evidence>, Vec<String>> {
        let tree: BTreeMap<&str, &str> = tree.iter().copied().collect();
        let mut story = Story::new("a", "A", ["src/a"]);
        story.provides = provides.iter().map(|name| (*name).to_owned()).collect();
        let mut reads = Vec::new();
        let checked = check(&story, Ok(claimed), |path| {
            reads.push(path.to_owned());
            Ok::<_, Infallible>(match tree.get(path) {
                Some(&"dir") => TreeFile::Directory,
                Some(&"link") => TreeFile::Link("elsewhere".to_owned()),
                Some(text) => TreeFile::File(text.as_bytes().to_vec()),
                None => TreeFile::Missing,
            })
        })
        .expect("no read fails");
        // Only safe paths inside the owned ones are read.
        assert!(
            reads.iter().all(|path| path.starts_with("src/a/")),
            "{reads:?}"
        );
        checked.map_err(|problems| problems.iter().map(ToString::to_string).collect())
    }

    #[test]
    fn evidence_that_holds_comes_back_normalised() {
        let claimed = [
            Evidence::new("./src/a//cart.rs", [" cart::Cart "]),
            Evidence::new("src/a/mod.rs", Vec::<String>::new()),
        ];
        let tree = [
            ("src/a/cart.rs", "pub struct Cart;\n"),
            ("src/a/mod.rs", "mod cart;\n"),
        ];
        assert_eq!(
            check_on(&["cart::Cart"], &claimed, &tree),
            Ok(vec![
                Evidence::new("src/a/cart.rs", ["cart::Cart"]),
                Evidence::new("src/a/mod.rs", Vec::<String>::new()),
            ])
        );
    }

    #[test]
    fn every_problem_is_named() {
        assert_eq!(
            check_on(&[], &[], &[]),
            Err(vec![
                "the confirmation names no evidence: no file that holds the story's work \
                 (`evidence` is empty or missing)"
                    .to_owned()
            ])
        );
        let story = Story::new("a", "A", ["src/a"]);
        let unreadable = check(&story, Err("invalid type: string"), |_| {
            Ok::<_, Infallible>(TreeFile::Missing)
        });
        assert_eq!(
            unreadable.expect("checked"),
            Err(vec![Problem::Unreadable("invalid type: string".to_owned())])
        );
        let claimed = [
            Evidence::new("README.md", Vec::<String>::new()),
            Evidence::new("../src/a/x.rs", Vec::<String>::new()),
            Evidence::new("src/a/gone.rs", Vec::<String>::new()),
            Evidence::new("src/a/sub", Vec::<String>::new()),
            Evidence::new("src/a/link.rs", Vec::<String>::new()),
            Evidence::new("src/a/cart.rs", ["cart::Cart", "()"]),
        ];
        let tree = [
            ("src/a/sub", "dir"),
            ("src/a/link.rs", "link"),
            ("src/a/cart.rs", "pub struct Carts;\n"),
        ];
        assert_eq!(
            check_on(&["cart::Cart", "cart::add"], &claimed, &tree),
            Err(vec![
                "`README.md` is outside the story's owned paths (src/a)".to_owned(),
                "`../src/a/x.rs` is no path to check: it has a `..` segment, which could leave \
                 the repository"
                    .to_owned(),
                "`src/a/gone.rs` is not a file on the epic head: no such path".to_owned(),
                "`src/a/sub` is not a file on the epic head: a directory".to_owned(),
                "`src/a/link.rs` is not a file on the epic head: a symbolic link".to_owned(),
                "`cart::Cart` does not appear in `src/a/cart.rs` (the word `Cart` is not in it \
                 as a whole word)"
                    .to_owned(),
                "`()` has no word to look for (letters, digits, `_` or `-` after its last `::`, \
                 `.`, `/` or `#`)"
                    .to_owned(),
                "`cart::add`, which the story provides, is named by no file of the evidence"
                    .to_owned(),
            ])
        );
    }
}
