//! Integration tests of perimeter.
