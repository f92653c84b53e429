//! The JSON `epic status --format json` prints against the shape docs/contract.md gives it:
//! tests only, apart from the model (`model.rs`) and beside its hand-built fixtures.

use std::collections::{BTreeMap, BTreeSet};
use std::iter::Peekable;
use std::str::Chars;

use serde::Serialize;
use serde_json::Value;

use super::fixtures::{bare, full, several};

const CONTRACT: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../docs/contract.md"
));

/// A key of a shape as docs/contract.md writes it: whether it may be left out (`"key"?`) and
/// whether it may be `null` (`…\|null`).
#[derive(Debug, Clone, Copy)]
struct Key {
    optional: bool,
    nullable: bool,
}

/// The two shapes the contract's row of `epic status` gives: one epic (after `--format
/// json`), several epics.
fn documented() -> (BTreeMap<String, Key>, BTreeMap<String, Key>) {
    let row = CONTRACT
        .lines()
        .find(|line| line.starts_with("| `epic status "))
        .expect("docs/contract.md has a row for `epic status`");
    let shape = |after: &str| {
        let text = row
            .split(after)
            .nth(1)
            .and_then(|rest| rest.split('`').next())
            .unwrap_or_else(|| panic!("the row of `epic status` has {after:?}: {row}"));
        keys(&text.replace("\\|", "|"))
    };
    (shape("`--format json`: `"), shape("with several epics, `"))
}

/// Every key of a shape (`{"a","b"?:{"c"}|null,"d":[{"e"}]}`), by its path (`a`, `b.c`,
/// `d[].e`).
fn keys(shape: &str) -> BTreeMap<String, Key> {
    let mut keys = BTreeMap::new();
    let mut chars = shape.chars().peekable();
    object(&mut chars, "", &mut keys);
    assert_eq!(
        chars.next(),
        None,
        "the shape goes on after its object: {shape}"
    );
    keys
}

/// An object's keys into `keys`, under `prefix`.
fn object(chars: &mut Peekable<Chars<'_>>, prefix: &str, keys: &mut BTreeMap<String, Key>) {
    assert_eq!(chars.next(), Some('{'), "an object under {prefix:?}");
    loop {
        assert_eq!(chars.next(), Some('"'), "a key under {prefix:?}");
        let name: String = chars.by_ref().take_while(|c| *c != '"').collect();
        let path = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}.{name}")
        };
        let optional = chars.next_if_eq(&'?').is_some();
        let nullable = chars.next_if_eq(&':').is_some() && value(chars, &path, keys);
        keys.insert(path, Key { optional, nullable });
        match chars.next() {
            Some(',') => {}
            Some('}') => return,
            other => panic!("{other:?} after a key under {prefix:?}"),
        }
    }
}

/// A value (an object, an array, a string, `null`, or several of them split by `|`), the
/// keys it holds into `keys`; whether it may be `null`. What the contract leaves unsaid
/// (`…`) is refused: each key is written out.
fn value(chars: &mut Peekable<Chars<'_>>, path: &str, keys: &mut BTreeMap<String, Key>) -> bool {
    let mut nullable = false;
    loop {
        match chars.peek() {
            Some('{') => object(chars, path, keys),
            Some('[') => {
                chars.next();
                value(chars, &format!("{path}[]"), keys);
                assert_eq!(chars.next(), Some(']'), "the end of the array {path}");
            }
            Some('"') => {
                chars.next();
                chars.by_ref().take_while(|c| *c != '"').for_each(drop);
            }
            Some('n') => {
                let word: String = chars.by_ref().take(4).collect();
                assert_eq!(word, "null", "the value of {path}");
                nullable = true;
            }
            other => panic!("{other:?} as the value of {path}: the contract spells it out"),
        }
        if chars.next_if_eq(&'|').is_none() {
            return nullable;
        }
    }
}

/// The path of every key in `value`, as [`keys`] writes them.
fn serialised(value: &Value, prefix: &str, paths: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (name, inner) in map {
                let path = if prefix.is_empty() {
                    name.clone()
                } else {
                    format!("{prefix}.{name}")
                };
                serialised(inner, &path, paths);
                paths.insert(path);
            }
        }
        Value::Array(items) => {
            for item in items {
                serialised(item, &format!("{prefix}[]"), paths);
            }
        }
        _ => {}
    }
}

fn paths_of(model: &impl Serialize) -> BTreeSet<String> {
    let mut paths = BTreeSet::new();
    serialised(&serde_json::to_value(model).unwrap(), "", &mut paths);
    paths
}

#[test]
fn a_status_with_everything_has_each_key_the_contract_names_and_no_other() {
    let (one, several_shape) = documented();
    assert_eq!(
        paths_of(&full()),
        one.into_keys().collect(),
        "`epic status --format json` against docs/contract.md"
    );
    assert_eq!(
        paths_of(&several()),
        several_shape.into_keys().collect(),
        "`epic status --format json` for several epics against docs/contract.md"
    );
}

#[test]
fn a_bare_status_leaves_out_exactly_what_the_contract_marks_optional() {
    let (one, _) = documented();
    // A key is always there when neither it nor a key around it may be left out, and no
    // key around it may be `null`.
    let always: BTreeSet<String> = one
        .iter()
        .filter(|(path, key)| {
            let around = path
                .match_indices('.')
                .map(|(at, _)| path[..at].trim_end_matches("[]"));
            !key.optional
                && around
                    .map(|outer| one[outer])
                    .all(|outer| !outer.optional && !outer.nullable)
        })
        .map(|(path, _)| path.clone())
        .collect();
    assert!(always.contains("stories[].reason"), "{always:?}");
    assert_eq!(paths_of(&bare()), always);
}
