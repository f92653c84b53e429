//! The line each event is shown as: [`describe`] asks each family of events in turn, a file
//! per family.

mod gate;
mod line;
mod merge;
mod people;
mod run;
mod story;
mod task;
mod turn;
mod worktree;

pub(super) use line::describe;
