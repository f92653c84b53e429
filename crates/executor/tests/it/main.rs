//! Integration tests of the executor: one binary, real git repositories, real processes as
//! agents (shell scripts the tests write), never a mock.

mod api;
mod blocked;
mod epic_failures;
mod epic_run;
mod epic_support;
mod gates;
mod happy;
mod hostile_agents;
mod misbehaviour;
mod noop;
mod planner;
mod presets;
mod resume;
mod review;
mod script;
mod seats;
mod support;
