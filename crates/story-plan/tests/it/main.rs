//! Integration tests of story-plan: one binary, one module per concern.

mod graph;
mod hash;
mod parse;
mod properties;
mod read_first;
mod render;
mod support;
mod validate;
