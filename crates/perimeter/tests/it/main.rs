//! Integration tests of perimeter: one binary, one module per concern.

mod check;
mod gate;
mod hostile;
mod named;
mod properties;
mod review;
mod stray;
mod support;
