//! Integration tests of story-plan.
