//! Errors rendered for a person: an error and every source under it, on one line.

use std::error::Error;

/// An error and its sources, joined with `: `.
pub fn chain(error: &(dyn Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(next) = source {
        let next_text = next.to_string();
        if !text.contains(&next_text) {
            text.push_str(": ");
            text.push_str(&next_text);
        }
        source = next.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::chain;

    #[derive(Debug, thiserror::Error)]
    #[error("could not read the plan")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn each_source_is_added_once() {
        let error = Outer(std::io::Error::other("permission denied"));
        assert_eq!(chain(&error), "could not read the plan: permission denied");
    }
}
