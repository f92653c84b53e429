//! Plain files of the state directory: durable removal, reads of files that may be missing,
//! transcript files and their numbering.

use std::io::Write as _;

use epic_state_store::{
    RemoveError, create_transcript, last_transcript_number, read_if_exists, remove, write_atomic,
};

#[test]
fn remove_takes_the_file_and_tolerates_its_absence() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("merging.json");
    assert!(!remove(&path).unwrap(), "nothing to remove");
    write_atomic(&path, b"{}").unwrap();
    assert!(remove(&path).unwrap());
    assert!(!path.exists());
}

#[test]
fn remove_reports_a_file_it_cannot_remove() {
    let dir = tempfile::tempdir().unwrap();
    // A non-empty directory is not a file: `remove_file` refuses it.
    let path = dir.path().join("stories");
    std::fs::create_dir_all(path.join("inside")).unwrap();
    let error = remove(&path).unwrap_err();
    assert!(matches!(error, RemoveError::Remove { .. }), "{error:?}");
    assert!(error.to_string().contains("stories"), "{error}");
    assert!(path.exists());
}

#[test]
fn read_if_exists_tells_missing_from_present() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.plan.md");
    assert_eq!(read_if_exists(&path).unwrap(), None);
    write_atomic(&path, "- [x] café\n".as_bytes()).unwrap();
    assert_eq!(
        read_if_exists(&path).unwrap().as_deref(),
        Some("- [x] café\n")
    );
    // A directory is there but is no file: an error, not "missing".
    assert!(read_if_exists(dir.path()).is_err());
}

#[test]
fn transcripts_are_created_with_their_directory_and_numbered_on() {
    let dir = tempfile::tempdir().unwrap();
    let story = dir.path().join("transcripts").join("cart");
    assert_eq!(last_transcript_number(&story), 0, "no directory yet");
    let mut file = create_transcript(story.join("0001-planner.md")).unwrap();
    file.write_all(b"# Turn 1\n").unwrap();
    drop(file);
    create_transcript(story.join("0012-coder.md")).unwrap();
    std::fs::write(story.join("notes.md"), "not a turn").unwrap();
    assert_eq!(last_transcript_number(&story), 12);
    // Created again, a transcript starts empty.
    create_transcript(story.join("0001-planner.md")).unwrap();
    assert_eq!(
        std::fs::read_to_string(story.join("0001-planner.md")).unwrap(),
        ""
    );
}
