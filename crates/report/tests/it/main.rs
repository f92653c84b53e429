//! Integration tests of report: one binary, one module per concern.

mod html;
mod json;
mod markdown;
mod prices;
mod properties;
mod support;
mod timeline;
mod timestamp;
mod usage;
