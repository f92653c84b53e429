//! Linked worktrees: add (new and existing branch), list, remove, move, prune.

use epic_git_ops::{Git, Removal, WorktreeError};

use crate::support::{Repo, sorted_lines};

fn canonical(path: &std::path::Path) -> std::path::PathBuf {
    path.canonicalize().expect("canonical path")
}

#[test]
fn adds_a_worktree_on_a_new_branch_that_git_lists_and_finds_clean() {
    let repo = Repo::new();
    let git = repo.handle();
    repo.commit_file(&repo.path.clone(), "src/lib.rs", "// lib\n", "lib");
    let wt = repo.beside("epic e/story ä");
    git.add_worktree_new_branch(&wt, "story/e/a", "main")
        .expect("add");

    assert!(wt.join("src/lib.rs").is_file());
    assert_eq!(
        git.current_branch(&wt).expect("branch"),
        Some("story/e/a".into())
    );
    assert_eq!(
        repo.git_in(&wt, &["rev-parse", "--abbrev-ref", "HEAD"])
            .trim(),
        "story/e/a"
    );
    assert!(repo.porcelain(&wt).is_empty());
    let listed = repo.git(&["worktree", "list", "--porcelain"]);
    assert!(
        listed.contains(&format!("worktree {}", canonical(&wt).display())),
        "{listed}"
    );

    let ours = git.worktrees().expect("list");
    assert_eq!(ours.len(), 2);
    assert!(ours[0].is_main);
    assert_eq!(canonical(&ours[0].path), canonical(&repo.path));
    assert_eq!(canonical(&ours[1].path), canonical(&wt));
    assert_eq!(ours[1].branch.as_deref(), Some("story/e/a"));
    assert_eq!(
        ours[1].head,
        Some(git.rev_parse(&repo.path, "main").expect("main"))
    );
    assert!(!ours[1].prunable && !ours[1].locked);
    repo.fsck();
}

#[test]
fn refuses_a_taken_branch_name_and_an_occupied_destination() {
    let repo = Repo::new();
    let git = repo.handle();
    repo.git(&["branch", "story/e/a"]);
    let error = git
        .add_worktree_new_branch(&repo.beside("a"), "story/e/a", "main")
        .expect_err("branch exists");
    assert!(
        matches!(error, WorktreeError::BranchExists { .. }),
        "{error:?}"
    );
    assert!(!repo.beside("a").exists());

    let occupied = repo.beside("occupied");
    crate::support::write_in(&occupied, "file.txt", "x");
    let error = git
        .add_worktree_new_branch(&occupied, "story/e/b", "main")
        .expect_err("destination occupied");
    assert!(
        matches!(error, WorktreeError::PathExists { .. }),
        "{error:?}"
    );
    assert!(!git.branch_exists("story/e/b").expect("exists"));
    let error = git
        .add_worktree_new_branch(&repo.beside("c"), "story/e/c", "no-such-start")
        .expect_err("bad start");
    assert!(matches!(error, WorktreeError::StartPoint(_)), "{error:?}");
}

#[test]
fn resumes_a_branch_that_exists_without_its_worktree() {
    let repo = Repo::new();
    let git = repo.handle();
    repo.git(&["checkout", "-q", "-b", "story/e/a"]);
    repo.commit_file(&repo.path.clone(), "a.txt", "a\n", "story work");
    repo.git(&["checkout", "-q", "main"]);

    let wt = repo.beside("a");
    git.add_worktree(&wt, "story/e/a")
        .expect("add for an existing branch");
    assert_eq!(
        std::fs::read_to_string(wt.join("a.txt")).expect("read"),
        "a\n"
    );
    assert_eq!(
        git.current_branch(&wt).expect("branch"),
        Some("story/e/a".into())
    );
    assert!(repo.porcelain(&wt).is_empty());

    let again = git
        .add_worktree(&repo.beside("b"), "story/e/a")
        .expect_err("checked out");
    assert!(
        matches!(again, WorktreeError::BranchCheckedOut { .. }),
        "{again:?}"
    );
    let missing = git
        .add_worktree(&repo.beside("c"), "story/e/none")
        .expect_err("no branch");
    assert!(
        matches!(missing, WorktreeError::NoSuchBranch { .. }),
        "{missing:?}"
    );
}

#[test]
fn removes_a_dirty_worktree_and_prunes_one_deleted_by_hand() {
    let repo = Repo::new();
    let git = repo.handle();
    let dirty = repo.beside("dirty");
    let gone = repo.beside("gone");
    git.add_worktree_new_branch(&dirty, "story/e/dirty", "main")
        .expect("add");
    git.add_worktree_new_branch(&gone, "story/e/gone", "main")
        .expect("add");
    crate::support::write_in(&dirty, "untracked.txt", "u");
    crate::support::write_in(&dirty, "README.md", "changed");

    assert_eq!(
        git.remove_worktree(&dirty).expect("forced remove"),
        Removal::Removed
    );
    assert!(!dirty.exists());
    // The branch stays.
    assert!(git.branch_exists("story/e/dirty").expect("exists"));

    std::fs::remove_dir_all(&gone).expect("delete by hand");
    let listed = git.worktrees().expect("list");
    assert!(
        listed.iter().any(|worktree| worktree.prunable),
        "{listed:?}"
    );
    assert_eq!(git.remove_worktree(&gone).expect("prune"), Removal::Pruned);
    assert_eq!(
        git.remove_worktree(&gone).expect("nothing left"),
        Removal::Absent
    );
    let listed = repo.git(&["worktree", "list", "--porcelain"]);
    assert_eq!(listed.matches("worktree ").count(), 1, "{listed}");
    // The branch is free again: a new worktree may take it.
    git.add_worktree(&gone, "story/e/gone").expect("re-add");
    assert!(repo.porcelain(&gone).is_empty());
    repo.fsck();
}

/// The administrative directory the `.git` file of the linked worktree `worktree` points to.
fn admin_of(worktree: &std::path::Path) -> std::path::PathBuf {
    let dotgit = std::fs::read_to_string(worktree.join(".git")).expect(".git");
    std::path::PathBuf::from(dotgit.trim().trim_start_matches("gitdir:").trim())
}

#[test]
fn removes_a_worktree_whose_add_was_killed_half_way() {
    // What a `git worktree add` killed mid-way leaves: a registered directory whose `.git`
    // file is empty. git itself refuses to remove it.
    let repo = Repo::new();
    let git = repo.handle();
    let half = repo.beside("half");
    git.add_worktree_new_branch(&half, "story/e/half", "main")
        .expect("add");
    let admin = admin_of(&half);
    // git locks a worktree it is adding until the add is done: a killed add leaves the lock.
    let adding = || std::fs::write(admin.join("locked"), "initializing\n").expect("lock");
    assert!(!epic_git_ops::add_interrupted(&half));
    adding();
    assert!(epic_git_ops::add_interrupted(&half));
    std::fs::write(half.join(".git"), "").expect("truncate .git");
    // Removed and unregistered, so that the story's worktree can be added there again.
    let removed_and_readded = || {
        assert_eq!(
            git.remove_worktree(&half).expect("forced remove"),
            Removal::Removed
        );
        assert!(!half.exists());
        let listed = repo.git(&["worktree", "list", "--porcelain"]);
        assert_eq!(listed.matches("worktree ").count(), 1, "{listed}");
        git.add_worktree(&half, "story/e/half").expect("re-add");
        assert!(!epic_git_ops::add_interrupted(&half));
        repo.fsck();
    };
    removed_and_readded();

    // Killed later: `.git` written, but the administrative directory it points to has no
    // `HEAD` or `commondir` yet ("is not a .git file, error code 7").
    adding();
    std::fs::remove_file(admin.join("HEAD")).expect("remove HEAD");
    std::fs::remove_file(admin.join("commondir")).expect("remove commondir");
    removed_and_readded();

    // Killed before its `.git` was written, the directory deleted since: git refuses the path
    // ("missing but locked") until the registration is gone.
    adding();
    std::fs::remove_dir_all(&half).expect("delete the directory");
    assert!(git.add_worktree(&half, "story/e/half").is_err());
    assert_eq!(git.remove_worktree(&half).expect("pruned"), Removal::Pruned);
    git.add_worktree(&half, "story/e/half").expect("re-add");
    repo.fsck();

    // A lock of the user's own is kept: the registration stays.
    std::fs::write(admin.join("locked"), "on a USB disk\n").expect("lock");
    std::fs::remove_dir_all(&half).expect("delete the directory");
    git.remove_worktree(&half).expect("prune");
    assert!(admin.join("locked").is_file());
    let listed = repo.git(&["worktree", "list", "--porcelain"]);
    assert!(listed.contains("locked on a USB disk"), "{listed}");

    // A directory that is no worktree of the repository is never deleted.
    let stranger = repo.beside("stranger");
    std::fs::create_dir_all(&stranger).expect("dir");
    std::fs::write(stranger.join(".git"), "").expect("file");
    assert!(git.remove_worktree(&stranger).is_err());
    assert!(stranger.join(".git").exists());
}

#[test]
fn prune_drops_a_registration_a_killed_add_left_unreadable() {
    let repo = Repo::new();
    let git = repo.handle();
    let dead = repo.beside("dead");
    git.add_worktree_new_branch(&dead, "story/e/dead", "main")
        .expect("add");
    let admin = admin_of(&dead);
    // A whole registration locked with the same words is another matter: kept.
    let kept = repo.beside("kept");
    git.add_worktree_new_branch(&kept, "story/e/kept", "main")
        .expect("add");
    let kept_name = kept.display().to_string();
    repo.git(&["worktree", "lock", "--reason", "initializing", &kept_name]);
    // Killed while writing `commondir`: the add's lock is still there, the file empty.
    std::fs::write(admin.join("locked"), "initializing\n").expect("lock");
    std::fs::write(admin.join("commondir"), "").expect("truncate");
    let listed = repo.try_git_in(&repo.path, &["worktree", "list"]);
    assert!(!listed.status.success(), "git cannot list the worktrees");

    git.prune_worktrees().expect("prune");
    assert!(!admin.exists());
    assert!(!dead.exists(), "the add's directory went with it");
    assert!(kept.join(".git").is_file());
    let listed = repo.git(&["worktree", "list", "--porcelain"]);
    assert_eq!(listed.matches("worktree ").count(), 2, "{listed}");
    git.add_worktree(&dead, "story/e/dead").expect("re-add");

    // Killed while writing the worktree's `.git` too: the directory is the add's all the same.
    let admin = admin_of(&dead);
    std::fs::write(admin.join("locked"), "initializing\n").expect("lock");
    std::fs::write(admin.join("HEAD"), "").expect("truncate");
    std::fs::write(dead.join(".git"), "").expect("truncate .git");
    git.prune_worktrees().expect("prune");
    assert!(!admin.exists() && !dead.exists());
    git.add_worktree(&dead, "story/e/dead").expect("re-add");
    repo.fsck();
}

#[test]
fn prune_of_an_add_killed_before_it_wrote_gitdir_keeps_every_other_registration() {
    let repo = Repo::new();
    let git = repo.handle();
    let kept = repo.beside("kept");
    git.add_worktree_new_branch(&kept, "story/e/kept", "main")
        .expect("add");
    let dead = repo.beside("dead");
    git.add_worktree_new_branch(&dead, "story/e/dead", "main")
        .expect("add");
    let admin = admin_of(&dead);
    // Killed right after git created `gitdir`, before it wrote a byte of it: the registration
    // names no worktree, and must not be read as naming its parent, `.git/worktrees`.
    std::fs::write(admin.join("locked"), "initializing\n").expect("lock");
    std::fs::write(admin.join("gitdir"), "").expect("truncate gitdir");
    std::fs::remove_file(admin.join("HEAD")).expect("remove HEAD");

    git.prune_worktrees().expect("prune");
    assert!(!admin.exists(), "the dead registration is dropped");
    assert!(
        admin_of(&kept).join("HEAD").is_file(),
        "the other one stays"
    );
    let listed = repo.git(&["worktree", "list", "--porcelain"]);
    assert!(listed.contains(&kept.display().to_string()), "{listed}");
    repo.fsck();
}

#[test]
fn moves_and_prunes_worktrees() {
    let repo = Repo::new();
    let git = repo.handle();
    let from = repo.beside("old/a");
    let to = repo.beside("new root/epic/a b");
    git.add_worktree_new_branch(&from, "story/e/a", "main")
        .expect("add");
    assert_eq!(
        git.current_branch(&from).expect("branch"),
        Some("story/e/a".into())
    );
    git.move_worktree(&from, &to).expect("move");
    assert!(!from.exists());
    assert!(to.join("README.md").is_file());
    assert_eq!(
        git.current_branch(&to).expect("branch"),
        Some("story/e/a".into())
    );
    let listed = repo.git(&["worktree", "list", "--porcelain"]);
    assert!(
        listed.contains(&canonical(&to).display().to_string()),
        "{listed}"
    );

    let other = repo.beside("other");
    git.add_worktree_new_branch(&other, "story/e/b", "main")
        .expect("add");
    std::fs::remove_dir_all(&other).expect("delete by hand");
    git.prune_worktrees().expect("prune");
    let paths: Vec<_> = git
        .worktrees()
        .expect("list")
        .into_iter()
        .map(|w| w.path)
        .collect();
    assert_eq!(paths.len(), 2, "{paths:?}");
    let git_list = sorted_lines(&repo.git(&["worktree", "list"]));
    assert_eq!(git_list.len(), 2, "{git_list:?}");
}

#[test]
fn a_worktree_readded_at_the_same_path_is_seen_afresh() {
    let repo = Repo::new();
    let git = repo.handle();
    let wt = repo.beside("a");
    git.add_worktree_new_branch(&wt, "story/e/a", "main")
        .expect("add");
    assert_eq!(
        git.current_branch(&wt).expect("branch"),
        Some("story/e/a".into())
    );
    git.remove_worktree(&wt).expect("remove");
    git.add_worktree_new_branch(&wt, "story/e/b", "main")
        .expect("add again");
    assert_eq!(
        git.current_branch(&wt).expect("branch"),
        Some("story/e/b".into())
    );
}

#[test]
fn a_worktree_whose_git_file_names_another_is_pointed_back_at_its_own() {
    let repo = Repo::new();
    let git = repo.handle();
    let (a, b) = (repo.beside("a"), repo.beside("b"));
    git.add_worktree_new_branch(&a, "story/e/a", "main")
        .expect("add a");
    git.add_worktree_new_branch(&b, "story/e/b", "main")
        .expect("add b");
    assert!(!git.relink_worktree(&a).expect("relink"), "its own already");
    let own = admin_of(&a);
    // What an agent in a can do: its git now acts on b.
    std::fs::write(
        a.join(".git"),
        format!("gitdir: {}\n", admin_of(&b).display()),
    )
    .expect("redirect");
    assert_eq!(
        repo.git_in(&a, &["rev-parse", "--abbrev-ref", "HEAD"])
            .trim(),
        "story/e/b"
    );
    assert!(git.relink_worktree(&a).expect("relink"));
    assert_eq!(
        repo.git_in(&a, &["rev-parse", "--abbrev-ref", "HEAD"])
            .trim(),
        "story/e/a"
    );
    assert_eq!(
        canonical(&admin_of(&a)),
        canonical(&own),
        "its own registration"
    );
    assert_eq!(
        repo.git_in(&b, &["rev-parse", "--abbrev-ref", "HEAD"])
            .trim(),
        "story/e/b",
        "b is untouched"
    );
    assert!(!git.relink_worktree(&a).expect("relink"), "done once");
    let list = repo.git(&["worktree", "list", "--porcelain"]);
    assert!(!list.contains("prunable"), "{list}");
}
