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

/// Three commits on `main` beyond the first, as ids.
fn three_commits(repo: &Repo) -> [CommitId; 3] {
    ["a", "b", "c"].map(|name| {
        repo.commit_file(&repo.path, &format!("{name}.txt"), "x\n", name);
        repo.git(&["rev-parse", "HEAD"])
            .trim()
            .parse()
            .expect("a commit id")
    })
}

/// The blob id of the note on `commit` under `notes_ref`.
fn note_blob(repo: &Repo, notes_ref: &str, commit: &CommitId) -> String {
    repo.git(&["notes", "--ref", notes_ref, "list", &commit.to_hex()])
        .trim()
        .to_owned()
}

#[test]
fn several_notes_are_one_change_of_the_notes_ref_holding_what_git_would() {
    let repo = Repo::new();
    let [a, b, c] = three_commits(&repo);
    let trace = repo.beside("trace");
    std::fs::create_dir_all(trace.parent().unwrap()).unwrap();
    let git = repo.handle().with_env("GIT_TRACE", Some(&trace));
    git.write_note(&repo.path, "refs/notes/epic", &a, "old\n")
        .unwrap();
    std::fs::remove_file(&trace).unwrap();
    // Texts as an attestation might end, and with what `git notes add -F` cleans up.
    let notes = [
        (a, "{\"a\": 1}\n".to_owned()),
        (b, "\n\n{\"b\": 2}   \n\n\n\n".to_owned()),
        (c, "{\n\n\n  \"c\": 3\n}".to_owned()),
    ];
    git.write_notes(&repo.path, "refs/notes/epic", &notes)
        .unwrap();
    assert!(
        crate::support::traced_commands(&trace).is_empty(),
        "no git process: {:#?}",
        crate::support::traced_commands(&trace)
    );
    assert_eq!(
        repo.git(&["rev-list", "--count", "refs/notes/epic"]).trim(),
        "2",
        "one commit for the three"
    );
    // git writes the same texts to another ref: the same blobs, and git shows them alike.
    for (commit, text) in &notes {
        repo.git_in_with_input(
            &repo.path,
            &[
                "notes",
                "--ref",
                "refs/notes/git",
                "add",
                "-f",
                "-F",
                "-",
                &commit.to_hex(),
            ],
            text,
        );
        assert_eq!(
            note_blob(&repo, "refs/notes/epic", commit),
            note_blob(&repo, "refs/notes/git", commit)
        );
    }
    let read = repo.handle().notes(&repo.path, "refs/notes/epic").unwrap();
    assert_eq!(read.len(), 3);
    assert_eq!(read[&a], "{\"a\": 1}\n");
    assert_eq!(read[&b], "{\"b\": 2}\n");
    assert_eq!(
        repo.git(&["reflog", "-1", "--format=%gs", "refs/notes/epic"])
            .trim(),
        "notes: Notes added by epic"
    );
    repo.fsck();
}

#[test]
fn notes_written_at_once_follow_a_fanned_out_tree_and_replace_a_note_wherever_it_was() {
    let repo = Repo::new();
    let [a, b, c] = three_commits(&repo);
    // A notes tree fanned out by one level, as git writes one holding many notes: the note
    // of `a` at `xx/yyyy…`.
    let hex = a.to_hex();
    let blob = repo.git_in_with_input(&repo.path, &["hash-object", "-w", "--stdin"], "old\n");
    let inner = repo.git_in_with_input(
        &repo.path,
        &["mktree"],
        &format!("100644 blob {}\t{}\n", blob.trim(), &hex[2..]),
    );
    let root = repo.git_in_with_input(
        &repo.path,
        &["mktree"],
        &format!("040000 tree {}\t{}\n", inner.trim(), &hex[..2]),
    );
    let commit = repo.git(&["commit-tree", "-m", "notes", root.trim()]);
    repo.git(&["update-ref", "refs/notes/epic", commit.trim()]);
    assert_eq!(
        repo.git(&["notes", "--ref", "refs/notes/epic", "show", &hex]),
        "old\n"
    );

    let git = repo.handle();
    let notes = [
        (a, "new a\n".to_owned()),
        (b, "b\n".to_owned()),
        (c, "c\n".to_owned()),
    ];
    git.write_notes(&repo.path, "refs/notes/epic", &notes)
        .unwrap();
    assert_eq!(
        repo.git(&["notes", "--ref", "refs/notes/epic", "show", &hex]),
        "new a\n",
        "replaced, not joined to the old note"
    );
    let paths = repo.git(&["ls-tree", "-r", "--name-only", "refs/notes/epic"]);
    let paths: Vec<&str> = paths.lines().collect();
    assert_eq!(paths.len(), 3, "{paths:?}");
    for (commit, _) in &notes {
        let hex = commit.to_hex();
        assert!(
            paths.contains(&format!("{}/{}", &hex[..2], &hex[2..]).as_str()),
            "{paths:?}"
        );
    }
    repo.fsck();
}

#[test]
fn with_an_identity_in_the_environment_git_adds_each_note() {
    let repo = Repo::new();
    let [a, b, _] = three_commits(&repo);
    let trace = repo.beside("trace");
    std::fs::create_dir_all(trace.parent().unwrap()).unwrap();
    let git = repo
        .handle()
        .with_env("GIT_TRACE", Some(&trace))
        .with_env("GIT_COMMITTER_NAME", Some("Someone Else"));
    let notes = [(a, "a\n".to_owned()), (b, "b\n".to_owned())];
    git.write_notes(&repo.path, "refs/notes/epic", &notes)
        .unwrap();
    let added = crate::support::traced_commands(&trace)
        .iter()
        .filter(|command| command.contains("notes --ref refs/notes/epic add"))
        .count();
    assert_eq!(added, 2);
    assert_eq!(
        repo.git(&["log", "-1", "--format=%cn", "refs/notes/epic"])
            .trim(),
        "Someone Else"
    );
}

/// A flat notes tree that grows past a few hundred notes is fanned out one level (`ab/cdef…`),
/// as git fans out one, and every note stays readable by git, the moved ones and the new.
#[test]
fn a_flat_notes_tree_that_grows_large_is_fanned_out_and_every_note_stays() {
    let repo = Repo::new();
    let git = repo.handle();
    // Notes annotate any object: 300 blobs stand for 300 merges.
    let objects: Vec<CommitId> = (0..300)
        .map(|i| {
            let blob = repo.git_in_with_input(
                &repo.path,
                &["hash-object", "-w", "--stdin"],
                &format!("{i}\n"),
            );
            blob.trim().parse().expect("an object id")
        })
        .collect();
    let note = |id: &CommitId| (*id, format!("{{\"note\": \"{}\"}}\n", id.to_hex()));
    let first: Vec<(CommitId, String)> = objects[..250].iter().map(note).collect();
    git.write_notes(&repo.path, "refs/notes/epic", &first)
        .unwrap();
    let top = repo.git(&["ls-tree", "--name-only", "refs/notes/epic"]);
    assert_eq!(top.lines().count(), 250, "250 notes stay flat");
    let rest: Vec<(CommitId, String)> = objects[250..].iter().map(note).collect();
    git.write_notes(&repo.path, "refs/notes/epic", &rest)
        .unwrap();
    let top = repo.git(&["ls-tree", "--name-only", "refs/notes/epic"]);
    assert!(
        top.lines().all(|name| name.len() == 2),
        "fanned out one level: {top}"
    );
    let notes = git.notes(&repo.path, "refs/notes/epic").unwrap();
    assert_eq!(notes.len(), 300);
    for (id, text) in objects.iter().map(note) {
        assert_eq!(notes[&id], text);
        assert_eq!(
            repo.git(&["notes", "--ref", "refs/notes/epic", "show", &id.to_hex()]),
            text
        );
    }
    repo.fsck();
}
