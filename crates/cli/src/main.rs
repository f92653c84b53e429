//! The `epic` binary.

fn main() {}
