//! Tests of the `epic` binary: each drives the real executable on plan files in a temporary
//! directory and snapshots what it prints (see [`util::Run`] for the layout).

#![expect(
    clippy::disallowed_methods,
    reason = "the crate's clippy.toml keeps the CLI from writing files and running git itself; \
              tests and benchmarks are the user here: they build repositories and write agents"
)]

mod acp;
mod clean;
mod completions;
mod config;
mod contract;
mod crash;
mod crash_scale;
mod demo;
mod examples;
mod flaky_gates;
mod graph;
mod guarded_files;
mod house_rules;
mod init;
mod land;
mod leftovers;
mod limits;
mod maintenance;
mod merge_revisions;
mod parse_errors;
mod people;
mod people_run;
mod per_test;
mod plan;
mod plan_input;
mod preflight;
mod readme;
mod real_agents;
mod real_replies;
mod reliability;
mod report;
mod rerun_options;
mod roster;
mod run;
mod sandbox;
mod schema;
mod secrets;
mod stalls;
mod stand_ins;
mod status;
mod usage;
mod util;
mod validate;
mod verify;
mod warm;
mod watch;
