//! Integration tests of state-store: one binary, one module per concern.
//!
//! Some tests need a second process (a writer killed mid-save, a lock holder killed while
//! holding): they re-run this very binary on an ignored helper test, which acts only when the
//! environment tells it to ([`support::spawn_helper`]).

mod atomic;
mod document;
mod events;
mod files;
mod layout;
mod lock;
mod schema;
mod support;
