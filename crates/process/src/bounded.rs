//! Text that may grow without limit, kept in bounded memory: its head, its tail, and how much of
//! the middle was left out.

use std::fmt::Write as _;

/// The head and tail of a text stream, with a count of what was dropped between them.
///
/// An agent that prints 200 MB must not take 200 MB of memory: at most `head + 2 × tail` bytes
/// are held at any time (the tail buffer is compacted when it doubles), and
/// [`text`](Self::text) is at most `head + tail` bytes plus a one-line note. The head keeps what
/// a reply opens with (a planner's JSON), the tail what it ends with (a `BLOCKED_ON:` line, the
/// error at the end of a log).
#[derive(Debug, Clone)]
pub struct BoundedText {
    head: String,
    tail: String,
    head_limit: usize,
    tail_limit: usize,
    omitted_bytes: u64,
    total_chars: u64,
}

impl BoundedText {
    /// An empty buffer keeping up to `head_limit` bytes of the start and `tail_limit` of the end.
    pub fn new(head_limit: usize, tail_limit: usize) -> Self {
        Self {
            head: String::new(),
            tail: String::new(),
            head_limit,
            tail_limit,
            omitted_bytes: 0,
            total_chars: 0,
        }
    }

    /// Appends `text`.
    pub fn push(&mut self, mut text: &str) {
        self.total_chars = self
            .total_chars
            .saturating_add(text.encode_utf16().count() as u64);
        if self.tail.is_empty() && self.omitted_bytes == 0 {
            let room = self.head_limit.saturating_sub(self.head.len());
            let take = text.floor_char_boundary(room);
            self.head.push_str(&text[..take]);
            text = &text[take..];
            if text.is_empty() {
                return;
            }
        }
        self.tail.push_str(text);
        if self.tail.len() > self.tail_limit.saturating_mul(2).max(1) {
            self.compact();
        }
    }

    /// Drops the tail's excess beyond `tail_limit`, counting it as omitted.
    fn compact(&mut self) {
        if self.tail.len() <= self.tail_limit {
            return;
        }
        let cut = self
            .tail
            .ceil_char_boundary(self.tail.len() - self.tail_limit);
        self.omitted_bytes = self.omitted_bytes.saturating_add(cut as u64);
        self.tail.drain(..cut);
    }

    /// Every character pushed (UTF-16 code units, the unit of the usage estimates).
    pub fn total_chars(&self) -> u64 {
        self.total_chars
    }

    /// The kept text: head, a note naming how much was left out (if anything was), tail.
    pub fn text(&mut self) -> String {
        self.compact();
        let mut out = String::with_capacity(self.head.len() + self.tail.len() + 64);
        out.push_str(&self.head);
        if self.omitted_bytes > 0 {
            let _ = write!(
                out,
                "\n[… {} bytes of output omitted …]\n",
                self.omitted_bytes
            );
        }
        out.push_str(&self.tail);
        out
    }

    /// The last `max` bytes of the kept text (at a character boundary), for error messages.
    pub fn last(&mut self, max: usize) -> String {
        let text = self.text();
        let start = text.ceil_char_boundary(text.len().saturating_sub(max));
        text[start..].to_owned()
    }
}

/// Turns a byte stream into text chunks, carrying a character split across reads over to the
/// next read; invalid UTF-8 becomes U+FFFD.
#[derive(Debug, Default)]
pub struct Utf8Decoder {
    pending: Vec<u8>,
}

impl Utf8Decoder {
    /// The text of `bytes`, after whatever was pending from the previous call.
    pub fn decode(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let valid_up_to = match std::str::from_utf8(&self.pending) {
            Ok(_) => self.pending.len(),
            Err(error) => match error.error_len() {
                // A character cut short at the end: keep its bytes for the next read.
                None => error.valid_up_to(),
                // Invalid bytes inside: decode everything lossily.
                Some(_) => self.pending.len(),
            },
        };
        let rest = self.pending.split_off(valid_up_to);
        let text = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending = rest;
        text
    }

    /// Whatever is still pending at the end of the stream.
    pub fn finish(&mut self) -> String {
        let text = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_head_and_tail() {
        let mut text = BoundedText::new(4, 4);
        for _ in 0..100 {
            text.push("abcdefghij");
        }
        let kept = text.text();
        assert!(kept.starts_with("abcd"));
        assert!(kept.ends_with("ghij"));
        assert!(kept.contains("992 bytes of output omitted"));
        assert_eq!(text.total_chars(), 1000);
    }

    #[test]
    fn short_text_is_whole() {
        let mut text = BoundedText::new(8, 8);
        text.push("héllo");
        text.push(" wörld");
        assert_eq!(text.text(), "héllo wörld");
    }

    #[test]
    fn splits_only_at_char_boundaries() {
        let mut text = BoundedText::new(3, 3);
        text.push("ééééééééé");
        let kept = text.text();
        assert!(kept.starts_with('é'));
        assert!(kept.ends_with('é'));
    }

    #[test]
    fn decoder_joins_split_characters() {
        let mut decoder = Utf8Decoder::default();
        let bytes = "é".as_bytes();
        assert_eq!(decoder.decode(&bytes[..1]), "");
        assert_eq!(decoder.decode(&bytes[1..]), "é");
        assert_eq!(decoder.decode(&[0xff, b'a']), "\u{fffd}a");
        assert_eq!(decoder.finish(), "");
    }
}
