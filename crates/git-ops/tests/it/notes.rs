//! Notes and the first-parent line: what an epic's attestations are written to and walked on.

use epic_git_ops::{CommitId, Git};

use crate::support::Repo;

#[test]
fn a_note_is_written_replaced_and_read_back_as_git_reads_it() {
    let repo = Repo::bare_identity();
    repo.write("a.txt", "a\n");
    repo.git(&[
        "-c",
        "user.name=Ada",
        "-c",
        "user.email=ada@example.invalid",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "first",
    ]);
    let git = repo.handle();
    let head: CommitId = repo.git(&["rev-parse", "HEAD"]).trim().parse().unwrap();
    // No notes ref yet: nothing, not an error.
    assert!(git.notes(&repo.path, "refs/notes/epic").unwrap().is_empty());
    // Without any identity configured, epic's fallback identity writes the notes commit.
    git.write_note(&repo.path, "refs/notes/epic", &head, "{\"one\":1}\n")
        .unwrap();
    git.write_note(&repo.path, "refs/notes/epic", &head, "{\"two\":2}\n")
        .unwrap();
    let notes = git.notes(&repo.path, "refs/notes/epic").unwrap();
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[&head], "{\"two\":2}\n");
    assert_eq!(
        repo.git(&["notes", "--ref", "refs/notes/epic", "show", "HEAD"]),
        "{\"two\":2}\n"
    );
    repo.fsck();
}

#[test]
fn the_first_parent_line_runs_from_the_base_to_the_tip_leaving_merged_commits_out() {
    let repo = Repo::new();
    let base: CommitId = repo.git(&["rev-parse", "HEAD"]).trim().parse().unwrap();
    repo.git(&["checkout", "-q", "-b", "side"]);
    repo.commit_file(&repo.path, "side.txt", "side\n", "on the side");
    repo.git(&["checkout", "-q", "main"]);
    repo.commit_file(&repo.path, "main.txt", "main\n", "on main");
    repo.git(&["merge", "-q", "--no-ff", "-m", "merge side", "side"]);
    let git = repo.handle();

    let (line, met) = git
        .first_parent_line(&repo.path, Some(&base), "main")
        .unwrap();
    assert!(met);
    let summaries: Vec<&str> = line.iter().map(|commit| commit.summary.as_str()).collect();
    assert_eq!(summaries, ["on main", "merge side"]);
    let merge = &line[1];
    assert_eq!(merge.parents.len(), 2);
    assert_eq!(
        merge.parents[1].to_hex(),
        repo.git(&["rev-parse", "side"]).trim()
    );
    assert_eq!(merge.tree, repo.git(&["rev-parse", "main^{tree}"]).trim());
    assert_eq!(merge.author, "Test Person <test@example.com>");

    // A base not on the line: the whole line, and it says so.
    let side: CommitId = repo.git(&["rev-parse", "side"]).trim().parse().unwrap();
    let (line, met) = git
        .first_parent_line(&repo.path, Some(&side), "main")
        .unwrap();
    assert!(!met);
    assert_eq!(line.len(), 3);
    assert_eq!(line[0].summary, "initial");
}
