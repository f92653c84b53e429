//! Placeholder until the scale benchmark lands.

fn main() {}
