//! Tests of the `epic` binary: each drives the real executable on plan files in a temporary
//! directory and snapshots what it prints (see [`util::Run`] for the layout).

mod clean;
mod completions;
mod config;
mod crash;
mod demo;
mod examples;
mod graph;
mod init;
mod parse_errors;
mod plan_input;
mod readme;
mod reliability;
mod report;
mod run;
mod schema;
mod status;
mod usage;
mod util;
mod validate;
