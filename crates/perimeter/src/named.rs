//! Who owns a path, and which paths a piece of prose names.

use std::collections::{BTreeSet, HashSet};

use epic_story_plan::path::normalize;
use epic_story_plan::{Story, StoryPlan};

use crate::placement::{safe_normalized, under_any};

/// The first story of the plan that owns a prefix containing `path`.
///
/// `None` when no story owns it, and for a path that is not safe
/// ([`check_safe`](epic_story_plan::path::check_safe)): `src/a/../../etc` belongs to nobody.
///
/// ```
/// use epic_perimeter::owner_of;
/// use epic_story_plan::{Story, StoryPlan};
///
/// let plan = StoryPlan {
///     epic_id: "checkout".into(),
///     epic: String::new(),
///     stories: vec![
///         Story::new("cart-api", "Cart API", ["src/cart"]),
///         Story::new("home", "Home page", ["src/App.tsx"]),
///     ],
/// };
/// assert_eq!(owner_of(&plan, "./src/cart/mod.rs").map(|s| s.id.as_str()), Some("cart-api"));
/// assert_eq!(owner_of(&plan, "src/App.tsx").map(|s| s.id.as_str()), Some("home"));
/// assert!(owner_of(&plan, "README.md").is_none());
/// ```
pub fn owner_of<'p>(plan: &'p StoryPlan, path: &str) -> Option<&'p Story> {
    let path = safe_normalized(path)?;
    plan.stories
        .iter()
        .find(|story| under_any(&path, &story.owned))
}

/// The repository paths a piece of prose seems to name, normalised, in first-seen order without
/// duplicates.
///
/// A guess, never proof: it reads words, not code. A word made of letters, digits and `_ . @ / \
/// -` counts when, once trailing `.` are stripped and it is [normalised](normalize):
///
/// - it has a `/` and its first segment is the first segment of some owned or shared path in the
///   plan (so `src/kit/api.ts` counts in a plan that owns `src/…`, and `en/it` does not);
/// - or it has no `/`, looks like a file name (ends in `.` and one to five letters or digits),
///   and some story owns a file of that name: it then stands for every such owned file, so
///   `App.tsx` names `src/App.tsx`.
///
/// URLs (a word followed by `://`, up to the next whitespace) are skipped.
///
/// ```
/// use epic_perimeter::paths_named_in;
/// use epic_story_plan::{Story, StoryPlan};
///
/// let plan = StoryPlan {
///     epic_id: "bank".into(),
///     epic: String::new(),
///     stories: vec![
///         Story::new("overview", "Overview", ["src/features/overview"]).sharing(["src/kit"]),
///         Story::new("home", "Home page", ["src/App.tsx"]),
///     ],
/// };
/// assert_eq!(
///     paths_named_in(&plan, "Wire it into App.tsx, using src/kit/api.ts and en/it."),
///     ["src/App.tsx", "src/kit/api.ts"],
/// );
/// assert!(paths_named_in(&plan, "see https://example.com/src/x.ts").is_empty());
/// ```
pub fn paths_named_in(plan: &StoryPlan, text: &str) -> Vec<String> {
    let anchors: Vec<String> = plan
        .stories
        .iter()
        .flat_map(|story| story.owned.iter().chain(&story.shared_read_only))
        .filter_map(|path| safe_normalized(path))
        .collect();
    let roots: BTreeSet<&str> = anchors.iter().map(|path| first_segment(path)).collect();
    let owned_files: Vec<String> = plan
        .stories
        .iter()
        .flat_map(|story| &story.owned)
        .filter_map(|path| safe_normalized(path))
        .filter(|path| looks_like_file(path))
        .collect();

    let mut seen = HashSet::new();
    let mut named = Vec::new();
    let mut keep = |path: &str| {
        if seen.insert(path.to_owned()) {
            named.push(path.to_owned());
        }
    };
    for word in words(text) {
        let path = normalize(word.trim_end_matches(['.', ',', ':', ';']));
        if path.is_empty() {
            continue;
        }
        if path.contains('/') {
            if roots.contains(first_segment(&path)) {
                keep(&path);
            }
        } else if looks_like_file(&path) {
            for file in owned_files.iter().filter(|file| base_name(file) == path) {
                keep(file);
            }
        }
    }
    named
}

/// Whether a normalised path looks like a file rather than a directory: it ends in `.` and one
/// to five ASCII letters or digits.
pub(crate) fn looks_like_file(path: &str) -> bool {
    path.rsplit_once('.').is_some_and(|(_, extension)| {
        (1..=5).contains(&extension.len())
            && extension.bytes().all(|byte| byte.is_ascii_alphanumeric())
    })
}

fn first_segment(path: &str) -> &str {
    path.split('/').next().unwrap_or(path)
}

fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Whether a byte can be part of a path-like word.
fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'.' | b'@' | b'/' | b'\\' | b'-')
}

/// The path-like words of `text`, skipping URLs.
///
/// Word bytes are all ASCII, so every word starts and ends on a character boundary.
fn words(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        loop {
            while at < bytes.len() && !is_word_byte(bytes[at]) {
                at += 1;
            }
            if at >= bytes.len() {
                return None;
            }
            let start = at;
            while at < bytes.len() && is_word_byte(bytes[at]) {
                at += 1;
            }
            if bytes[at..].starts_with(b"://") {
                // A URL: its host and path are not the repository's.
                while at < bytes.len() && !bytes[at].is_ascii_whitespace() {
                    at += 1;
                }
                continue;
            }
            if let Some(word) = text.get(start..at) {
                return Some(word);
            }
        }
    })
}
