//! Tests of the `epic` binary.
