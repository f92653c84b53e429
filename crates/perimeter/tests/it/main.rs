//! Integration tests of perimeter: one binary, one module per concern.

mod check;
mod gate;
mod hostile;
mod links;
mod named;
mod properties;
mod review;
mod stray;
mod support;
