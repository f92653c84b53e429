//! Integration tests of git-ops: one binary, one module per concern, all on real repositories.

mod ancestry;
mod branches;
mod commits;
mod diffs;
mod init;
mod leftovers;
mod merges;
mod notes;
mod open;
mod pinned_config;
mod refs;
mod restore;
mod rollback;
mod stage;
mod status;
mod status_monitor;
mod status_scan;
mod support;
mod switch;
mod threads;
mod tree_files;
mod worktrees;
