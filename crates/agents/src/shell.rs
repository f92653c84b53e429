//! Command lines as people read them: one word quoted for `sh` ([`shell_quote`]), for the
//! seat check's and the previews' `sh -c …` lines, the presets' argument lists and the sandbox's
//! view.

/// `text` as one word for `sh`, quoted by [`shlex`] where it needs quoting; a NUL byte, which no
/// shell word can hold, is shown escaped (the command line is for people to read).
pub fn shell_quote(text: &str) -> String {
    shlex::try_quote(text).map_or_else(|_| text.escape_default().to_string(), Into::into)
}

#[cfg(test)]
mod tests {
    use super::shell_quote;

    #[test]
    fn quotes_for_sh() {
        assert_eq!(shell_quote("claude"), "claude");
        assert_eq!(shell_quote("it's"), r#""it's""#);
        assert_eq!(shell_quote("a'b c$"), r#""a'b c"'$'"#);
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("a\0b"), r"a\u{0}b");
    }
}
