//! Integration tests of the executor: one binary, real git repositories, real processes as
//! agents (shell scripts the tests write), never a mock.

// The crate's clippy.toml keeps file I/O and `std::process::Command` out of the executor; its
// tests are the user here: they build repositories, write agents and read what a run left.
#![expect(
    clippy::disallowed_methods,
    reason = "tests build repositories, write agent scripts and read what a run left"
)]

mod api;
mod blocked;
mod briefing;
mod containment;
mod epic_failures;
mod epic_run;
mod epic_support;
mod flaky_gates;
mod gate_leftovers;
mod guarded_files;
mod happy;
mod hostile_agents;
mod hostile_replies;
mod in_place;
mod leftovers;
mod limits;
mod merge_queue;
mod merge_revisions;
mod misbehaviour;
mod noop;
mod odd_names;
mod people;
mod per_test;
mod planner;
mod planted_config;
mod presets;
mod processes;
mod rejected;
mod report_runs;
mod resume;
mod review;
mod roster;
mod sandbox;
mod script;
mod seats;
mod stalls;
mod support;
mod warm;
mod weakened_tests;
