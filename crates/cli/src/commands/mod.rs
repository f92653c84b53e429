//! The commands of `epic`, one module each; [`run()`] (`dispatch.rs`) dispatches to them, and
//! `common.rs` holds what several of them use.

pub(crate) mod clean;
mod clock;
mod common;
pub(crate) mod completions;
pub(crate) mod config;
pub(crate) mod demo;
mod dispatch;
pub(crate) mod graph;
pub(crate) mod init;
pub(crate) mod land;
pub(crate) mod people;
pub(crate) mod plan;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod schema;
pub(crate) mod status;
pub(crate) mod validate;
pub(crate) mod verify;
pub(crate) mod watch;

pub(crate) use clock::clock;
pub(crate) use common::{SKIP_PREFLIGHT, json, render, runtime, violations_text};
pub(crate) use dispatch::run;
