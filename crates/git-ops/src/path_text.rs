//! Repository paths as text, without losing a byte.
//!
//! Git allows any bytes in a file name but `/` and NUL; this crate hands paths out as `String`s.
//! A path that is valid UTF-8, holds no control character and does not start with `"` is its own
//! text. Any other is written the way git's own listings quote it (`core.quotePath`): in double
//! quotes, with `\n`, `\t`, `\"`, `\\`, … for those characters and `\ooo` (octal) for each byte
//! that is not part of valid UTF-8 — `"src/two\nlines.txt"`, `"src/raw\377.txt"`. So a quoted
//! path always starts with `"`, no other does, and [`path_bytes`] turns either back into the
//! exact bytes git needs to stage, restore or delete the file.
//!
//! A quoted path is never a safe path for a perimeter (it starts with `"`, no plan's path does,
//! and the quote cannot be taken for a directory of the repository by mistake: the one path it
//! could be mistaken for, a name that itself starts with `"`, is quoted too).

use std::borrow::Cow;

/// `bytes` (a repository path as git stores it) as text: itself when it is valid UTF-8 with no
/// control character and no leading `"`, else quoted like git quotes it.
///
/// ```text
/// src/main.rs          -> src/main.rs
/// src/two<LF>lines.txt -> "src/two\nlines.txt"
/// src/raw<FF>.txt      -> "src/raw\377.txt"
/// ```
pub(crate) fn path_text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) if !text.starts_with('"') && !text.chars().any(char::is_control) => {
            text.to_owned()
        }
        _ => quote(bytes),
    }
}

/// The bytes of a path [`path_text`] wrote: a quoted one unquoted, any other as it is. `None`
/// for a path that starts with `"` but is not a well-formed quoted path.
pub(crate) fn path_bytes(text: &str) -> Option<Cow<'_, [u8]>> {
    if text.starts_with('"') {
        unquote(text).map(Cow::Owned)
    } else {
        Some(Cow::Borrowed(text.as_bytes()))
    }
}

fn quote(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\u{7}' => out.push_str("\\a"),
                '\u{8}' => out.push_str("\\b"),
                '\t' => out.push_str("\\t"),
                '\n' => out.push_str("\\n"),
                '\u{b}' => out.push_str("\\v"),
                '\u{c}' => out.push_str("\\f"),
                '\r' => out.push_str("\\r"),
                c if c.is_control() => {
                    let mut buf = [0_u8; 4];
                    for &byte in c.encode_utf8(&mut buf).as_bytes() {
                        push_octal(&mut out, byte);
                    }
                }
                c => out.push(c),
            }
        }
        for &byte in chunk.invalid() {
            push_octal(&mut out, byte);
        }
    }
    out.push('"');
    out
}

/// `\ooo`: `byte` in three octal digits after a backslash.
fn push_octal(out: &mut String, byte: u8) {
    out.push('\\');
    for shift in [6, 3, 0] {
        out.push(char::from(b'0' + ((byte >> shift) & 7)));
    }
}

fn unquote(text: &str) -> Option<Vec<u8>> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = Vec::with_capacity(inner.len());
    let mut bytes = inner.bytes();
    while let Some(byte) = bytes.next() {
        match byte {
            b'"' => return None,
            b'\\' => out.push(match bytes.next()? {
                b'"' => b'"',
                b'\\' => b'\\',
                b'a' => 0x07,
                b'b' => 0x08,
                b't' => b'\t',
                b'n' => b'\n',
                b'v' => 0x0b,
                b'f' => 0x0c,
                b'r' => b'\r',
                first @ b'0'..=b'3' => {
                    let mut value = u32::from(first - b'0');
                    for _ in 0..2 {
                        let digit = bytes.next().filter(u8::is_ascii_digit)?;
                        if digit > b'7' {
                            return None;
                        }
                        value = value * 8 + u32::from(digit - b'0');
                    }
                    u8::try_from(value).ok()?
                }
                _ => return None,
            }),
            byte => out.push(byte),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::{path_bytes, path_text};

    #[test]
    fn plain_paths_are_their_own_text() {
        for path in [
            "src/main.rs",
            "ünïcode/日本.txt",
            "a b/c\"d.txt",
            "src/a\\b",
        ] {
            assert_eq!(path_text(path.as_bytes()), path);
            assert_eq!(path_bytes(path).as_deref(), Some(path.as_bytes()));
        }
    }

    #[test]
    fn odd_paths_are_quoted_like_git_and_come_back_whole() {
        let cases: [(&[u8], &str); 5] = [
            (b"src/two\nlines.txt", r#""src/two\nlines.txt""#),
            (b"src/raw\xff.txt", r#""src/raw\377.txt""#),
            (b"\"quoted\".txt", r#""\"quoted\".txt""#),
            (b"tab\there\\and\x01", r#""tab\there\\and\001""#),
            ("ü\u{7f}".as_bytes(), r#""ü\177""#),
        ];
        for (bytes, text) in cases {
            assert_eq!(path_text(bytes), text);
            assert_eq!(path_bytes(text).as_deref(), Some(bytes), "{text}");
        }
    }

    #[test]
    fn malformed_quoted_paths_are_refused() {
        for text in [
            r#""open"#,
            r#""bad\q""#,
            r#""\400""#,
            r#""a"b""#,
            r#""\12""#,
        ] {
            assert_eq!(path_bytes(text), None, "{text}");
        }
    }
}
