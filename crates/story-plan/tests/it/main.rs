//! Integration tests of story-plan: one binary, one module per concern.

mod graph;
mod hash;
mod parse;
mod properties;
mod render;
mod support;
mod validate;
