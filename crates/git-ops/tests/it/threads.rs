//! One handle shared by threads, as the executor shares it across stories.

use std::sync::Arc;

use epic_git_ops::{Git, GixGit};

use crate::support::{Repo, write_in};

#[test]
fn the_handle_is_send_and_sync_and_usable_as_a_trait_object() {
    fn shareable<T: Send + Sync>() {}
    shareable::<GixGit>();
    shareable::<Arc<dyn Git>>();
}

#[test]
fn stories_in_parallel_each_see_their_own_worktree() {
    let repo = Repo::new();
    let git: Arc<dyn Git> = Arc::new(repo.handle());
    let worktrees: Vec<_> = (0..4).map(|i| repo.beside(&format!("s{i}"))).collect();
    std::thread::scope(|scope| {
        for (i, wt) in worktrees.iter().enumerate() {
            let git = Arc::clone(&git);
            scope.spawn(move || {
                git.add_worktree_new_branch(wt, &format!("story/e/s{i}"), "main")
                    .expect("add");
                write_in(wt, &format!("s{i}.txt"), "x");
                assert_eq!(
                    git.status(wt, &[]).expect("status").paths,
                    [format!("s{i}.txt")]
                );
                git.commit_all(wt, "work").expect("commit");
                assert!(!git.status(wt, &[]).expect("status").is_dirty());
                assert_eq!(
                    git.changed_paths_vs_base(wt, "main", "HEAD")
                        .expect("paths"),
                    [format!("s{i}.txt")]
                );
            });
        }
    });
    assert_eq!(git.worktrees().expect("list").len(), 5);
    repo.fsck();
}
