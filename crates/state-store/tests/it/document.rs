//! Versioned documents: the file format, every way a file can be bad, versions and migration.

use std::fs;
use std::path::Path;

use epic_state_store::{
    Document, EnvelopeProblem, LoadError, MigrateError, SaveError, StoryStage, StoryState, load,
    save,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::support::{Counter, story, temp_files};

fn load_error(path: &Path) -> LoadError {
    load::<StoryState>(path).expect_err("the file is bad")
}

/// Checks what every load error must do: name the file and say what to do about it.
fn assert_actionable(error: &LoadError, path: &Path) -> String {
    let message = error.to_string();
    assert!(
        message.contains(&format!("story state file `{}`", path.display())),
        "{message}"
    );
    assert!(
        message.ends_with("; remove it to start that story over"),
        "{message}"
    );
    assert_eq!(error.path(), path);
    message
}

#[test]
fn round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stories/cart-api.json");
    for status in [StoryStage::Started, StoryStage::Failed, StoryStage::Merged] {
        let state = story("cart-api", status);
        save(&path, &state).unwrap();
        assert_eq!(load::<StoryState>(&path).unwrap(), Some(state));
    }
    assert_eq!(temp_files(&path), Vec::<String>::new());
}

#[test]
fn missing_file_is_none() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        load::<StoryState>(dir.path().join("nope.json")).unwrap(),
        None
    );
    assert_eq!(
        load::<StoryState>(dir.path().join("no/such/dir/x.json")).unwrap(),
        None
    );
}

#[test]
fn file_format_is_the_contract_envelope_pretty_printed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cart-api.json");
    save(&path, &story("cart-api", StoryStage::Merged)).unwrap();
    let text = fs::read_to_string(&path).unwrap();
    assert_eq!(
        text,
        r#"{
  "version": 1,
  "data": {
    "id": "cart-api",
    "hash": "5e3c0f6a9b1d2e47",
    "branch": "story/checkout/cart-api",
    "worktree": "/src/shop.worktrees/checkout/cart-api",
    "status": "merged"
  }
}
"#
    );
}

#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
struct WithOptional {
    id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

impl Document for WithOptional {
    const NAME: &'static str = "sample";
    const VERSION: u32 = 1;
}

#[test]
fn absent_optional_fields_are_omitted_not_null() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sample.json");
    let document = WithOptional {
        id: "a".into(),
        reason: None,
    };
    save(&path, &document).unwrap();
    let text = fs::read_to_string(&path).unwrap();
    assert!(!text.contains("null"), "{text}");
    assert!(!text.contains("reason"), "{text}");
    assert_eq!(load::<WithOptional>(&path).unwrap(), Some(document));
}

#[test]
fn unreadable_file_names_the_file_and_keeps_the_os_reason() {
    let dir = tempfile::tempdir().unwrap();
    // A directory where the file should be: reading it fails on every platform and as root.
    let path = dir.path().join("cart-api.json");
    fs::create_dir(&path).unwrap();
    let error = load_error(&path);
    let LoadError::Read { source, .. } = &error else {
        panic!("expected a read error, got {error:?}");
    };
    assert_eq!(
        error.to_string(),
        format!("failed to read story state file `{}`", path.display())
    );
    assert!(!source.to_string().is_empty());
}

#[test]
fn empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cart-api.json");
    for contents in ["", "\n", "  \n\t"] {
        fs::write(&path, contents).unwrap();
        let error = load_error(&path);
        assert!(matches!(error, LoadError::Empty { .. }), "{error:?}");
        let message = assert_actionable(&error, &path);
        assert!(message.contains("is empty"), "{message}");
    }
}

#[test]
fn corrupt_json_gives_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cart-api.json");
    fs::write(
        &path,
        "{\n  \"version\": 1,\n  \"data\": {\"id\": oops}\n}\n",
    )
    .unwrap();
    let error = load_error(&path);
    let LoadError::Syntax { location, .. } = &error else {
        panic!("expected a syntax error, got {error:?}");
    };
    assert_eq!((location.line, location.column), (3, 18));
    let message = assert_actionable(&error, &path);
    assert!(
        message.contains("is not valid JSON at line 3, column 18: expected value;"),
        "{message}"
    );
}

#[test]
fn torn_file_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cart-api.json");
    save(&path, &story("cart-api", StoryStage::Started)).unwrap();
    let whole = fs::read(&path).unwrap();
    // Every proper prefix of a document is what a non-atomic writer could leave behind.
    for cut in 1..whole.len() - 1 {
        fs::write(&path, &whole[..cut]).unwrap();
        let error = load_error(&path);
        assert!(
            matches!(error, LoadError::Syntax { .. } | LoadError::Empty { .. }),
            "cut at {cut}: {error:?}"
        );
        assert_actionable(&error, &path);
    }
    // Not UTF-8 at all.
    fs::write(&path, [0xff, 0xfe, 0x00, 0x7b]).unwrap();
    assert_actionable(&load_error(&path), &path);
}

#[test]
fn wrong_envelope() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cart-api.json");
    let state = serde_json::to_value(story("cart-api", StoryStage::Started)).unwrap();
    let cases = [
        (json!([1, 2]), EnvelopeProblem::NotAnObject),
        // A bare document without its envelope.
        (state.clone(), EnvelopeProblem::MissingVersion),
        // The reference implementation's envelope.
        (
            json!({"schemaVersion": 1, "value": state}),
            EnvelopeProblem::MissingVersion,
        ),
        (
            json!({"version": "1", "data": state}),
            EnvelopeProblem::BadVersion,
        ),
        (
            json!({"version": 1.5, "data": state}),
            EnvelopeProblem::BadVersion,
        ),
        (json!({"version": 1}), EnvelopeProblem::MissingData),
        (
            json!({"version": 1, "data": state, "extra": true}),
            EnvelopeProblem::ExtraField,
        ),
    ];
    for (contents, expected) in cases {
        fs::write(&path, contents.to_string()).unwrap();
        let error = load_error(&path);
        let LoadError::Envelope { problem, .. } = &error else {
            panic!("{contents}: expected an envelope error, got {error:?}");
        };
        assert_eq!(*problem, expected, "{contents}");
        let message = assert_actionable(&error, &path);
        assert!(message.contains("is not a versioned document"), "{message}");
    }
}

#[test]
fn data_that_does_not_match_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cart-api.json");
    fs::write(
        &path,
        r#"{
  "version": 1,
  "data": {
    "id": "cart-api",
    "hash": "5e3c",
    "branch": "story/checkout/cart-api",
    "worktree": "/wt",
    "status": "finished"
  }
}
"#,
    )
    .unwrap();
    let error = load_error(&path);
    let LoadError::Data { at, location, .. } = &error else {
        panic!("expected a data error, got {error:?}");
    };
    assert_eq!(at, "data.status");
    assert_eq!(location.map(|location| location.line), Some(8));
    let message = assert_actionable(&error, &path);
    assert!(
        message.contains("does not match its schema at `data.status` (line 8, column 24): unknown variant `finished`"),
        "{message}"
    );

    fs::write(&path, r#"{"version":1,"data":{"id":"cart-api"}}"#).unwrap();
    let message = assert_actionable(&load_error(&path), &path);
    assert!(message.contains("missing field `hash`"), "{message}");

    fs::write(&path, r#"{"version":1,"data":null}"#).unwrap();
    assert!(matches!(load_error(&path), LoadError::Data { .. }));
}

fn write_envelope(path: &Path, version: u64, data: &Value) {
    fs::write(path, json!({"version": version, "data": data}).to_string()).expect("write");
}

#[test]
fn newer_version_is_refused_on_load() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cart-api.json");
    write_envelope(&path, 2, &json!({"anything": "a newer build wrote"}));
    let error = load_error(&path);
    let LoadError::TooNew {
        found, supported, ..
    } = &error
    else {
        panic!("expected TooNew, got {error:?}");
    };
    assert_eq!((*found, *supported), (2, 1));
    assert_eq!(
        error.to_string(),
        format!(
            "story state file `{}` has format version 2, newer than version 1 that this build \
             of epic reads; use a newer epic",
            path.display()
        )
    );
    // Versions beyond u32 are newer too, not garbage.
    write_envelope(&path, u64::MAX, &json!({}));
    assert!(matches!(
        load_error(&path),
        LoadError::TooNew {
            found: u64::MAX,
            ..
        }
    ));
}

#[test]
fn newer_file_is_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cart-api.json");
    // Deliberately odd formatting: the check is byte for byte.
    let newer = "{\"data\":{\"future\":[1,2,3]},   \"version\":7}";
    fs::write(&path, newer).unwrap();
    let error = save(&path, &story("cart-api", StoryStage::Merged)).unwrap_err();
    let SaveError::TooNew {
        found, supported, ..
    } = &error
    else {
        panic!("expected TooNew, got {error:?}");
    };
    assert_eq!((*found, *supported), (7, 1));
    let message = error.to_string();
    assert!(
        message.starts_with(&format!(
            "refusing to overwrite story state file `{}`: it has format version 7",
            path.display()
        )),
        "{message}"
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), newer);
    assert_eq!(temp_files(&path), Vec::<String>::new());
}

#[test]
fn a_file_this_process_wrote_is_checked_again_once_another_writer_replaced_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cart-api.json");
    save(&path, &story("cart-api", StoryStage::Started)).unwrap();
    save(&path, &story("cart-api", StoryStage::Failed)).unwrap();
    // A newer build replaces it the way every writer does: a new file renamed over the old.
    let newer = r#"{"version":7,"data":{"future":true}}"#;
    let staged = dir.path().join("staged");
    fs::write(&staged, newer).unwrap();
    fs::rename(&staged, &path).unwrap();
    let error = save(&path, &story("cart-api", StoryStage::Merged)).unwrap_err();
    assert!(
        matches!(error, SaveError::TooNew { found: 7, .. }),
        "{error:?}"
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), newer);
}

#[test]
fn unparseable_or_same_or_older_files_are_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("counter.json");
    for existing in [
        "garbage {",
        "",
        r#"{"version":2,"data":{}}"#,
        r#"{"version":3,"data":{}}"#,
        r#"{"version":"9","data":{}}"#,
    ] {
        fs::write(&path, existing).unwrap();
        save(&path, &Counter::new(5)).unwrap();
        assert_eq!(load::<Counter>(&path).unwrap(), Some(Counter::new(5)));
    }
}

#[test]
fn older_version_without_migration_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("counter.json");
    write_envelope(&path, 2, &json!({"n": 1, "payload": ""}));
    let error = load::<Counter>(&path).unwrap_err();
    let LoadError::TooOld {
        found,
        supported,
        source,
        ..
    } = &error
    else {
        panic!("expected TooOld, got {error:?}");
    };
    assert_eq!((*found, *supported), (2, 3));
    assert!(matches!(source, MigrateError::Unsupported));
    assert!(
        error
            .to_string()
            .contains("has format version 2, older than version 3"),
        "{error}"
    );
}

/// Version 2 of this document renamed `name` to `title`; version 0 is too old to migrate.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Renamed {
    title: String,
}

impl Document for Renamed {
    const NAME: &'static str = "renamed";
    const VERSION: u32 = 2;

    fn migrate(version: u32, mut data: Value) -> Result<Value, MigrateError> {
        if version != 1 {
            return Err(MigrateError::Unsupported);
        }
        let object = data.as_object_mut().ok_or_else(|| MigrateError::Invalid {
            reason: "not an object".into(),
        })?;
        let name = object.remove("name").ok_or_else(|| MigrateError::Invalid {
            reason: "no `name`".into(),
        })?;
        object.insert("title".into(), name);
        Ok(data)
    }
}

#[test]
fn migration_hook_upgrades_old_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("renamed.json");

    write_envelope(&path, 1, &json!({"name": "Cart API"}));
    let loaded = load::<Renamed>(&path).unwrap().unwrap();
    assert_eq!(loaded.title, "Cart API");
    // Saving writes the current version.
    save(&path, &loaded).unwrap();
    let saved: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(saved, json!({"version": 2, "data": {"title": "Cart API"}}));

    // The migration refuses what it cannot read; the error says why.
    write_envelope(&path, 1, &json!({"label": "Cart API"}));
    let error = load::<Renamed>(&path).unwrap_err();
    assert!(
        matches!(&error, LoadError::TooOld { source: MigrateError::Invalid { reason }, .. } if reason == "no `name`"),
        "{error:?}"
    );

    // Migrated data that still does not decode is a data error, without a line.
    write_envelope(&path, 1, &json!({"name": 42}));
    let error = load::<Renamed>(&path).unwrap_err();
    let LoadError::Data { at, location, .. } = &error else {
        panic!("expected a data error, got {error:?}");
    };
    assert_eq!((at.as_str(), *location), ("data.title", None));

    write_envelope(&path, 0, &json!({"name": "Cart API"}));
    assert!(matches!(
        load::<Renamed>(&path).unwrap_err(),
        LoadError::TooOld {
            found: 0,
            source: MigrateError::Unsupported,
            ..
        }
    ));
}

#[test]
fn failed_write_leaves_the_old_file_and_no_temp_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("board.md");
    // A non-empty directory at the target: the temp file is written, the rename fails.
    fs::create_dir(&path).unwrap();
    fs::write(path.join("keep"), "x").unwrap();
    let error = epic_state_store::write_atomic(&path, b"# Board\n").unwrap_err();
    assert!(
        matches!(error, epic_state_store::WriteError::Rename { .. }),
        "{error:?}"
    );
    assert_eq!(temp_files(&path), Vec::<String>::new());
    assert_eq!(fs::read_to_string(path.join("keep")).unwrap(), "x");
}

#[test]
fn unencodable_document_writes_nothing() {
    #[derive(Serialize, Deserialize, JsonSchema)]
    struct Keys(std::collections::BTreeMap<Vec<u8>, u8>);
    impl Document for Keys {
        const NAME: &'static str = "keys";
        const VERSION: u32 = 1;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("keys.json");
    let error = save(&path, &Keys([(vec![1], 1)].into())).unwrap_err();
    assert!(matches!(error, SaveError::Encode { .. }), "{error:?}");
    assert!(!path.exists());
    assert_eq!(temp_files(&path), Vec::<String>::new());
    // Written as it is encoded: a document that fails halfway leaves the last one whole.
    save(&path, &Keys(std::collections::BTreeMap::new())).unwrap();
    let written = fs::read_to_string(&path).unwrap();
    let error = save(&path, &Keys([(vec![1], 1)].into())).unwrap_err();
    assert!(matches!(error, SaveError::Encode { .. }), "{error:?}");
    assert_eq!(fs::read_to_string(&path).unwrap(), written);
    assert_eq!(temp_files(&path), Vec::<String>::new());
}
