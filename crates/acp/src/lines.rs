//! The ACP transport epic speaks over an agent's stdio: one JSON object per line, each way. The
//! SDK's own byte transport answers a line that is not JSON and reads on; epic ends the turn on
//! it instead ([`Broken`]), since an agent that breaks the protocol once cannot be trusted to
//! answer the next request, and a turn waiting on it would only end at its stall or deadline.
//! A line longer than [`LINE_CAP`] breaks it too, so an agent cannot make epic hold an
//! unbounded line in memory.

use std::sync::{Arc, Mutex, PoisonError};

use agent_client_protocol::Lines;
use futures::{Sink, Stream};
use tokio::io::{
    AsyncBufReadExt as _, AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _, BufReader,
};

/// The longest line an agent may send: 16 MiB (a file's content in an `fs/write_text_file`).
pub(crate) const LINE_CAP: usize = 16 * 1024 * 1024;

/// How many characters of a broken line the failure quotes.
const QUOTE: usize = 200;

/// Where the line that broke the protocol is kept, for the turn's failure.
#[derive(Debug, Clone, Default)]
pub(crate) struct Broken(Arc<Mutex<Option<String>>>);

impl Broken {
    fn set(&self, why: String) {
        let mut broken = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        broken.get_or_insert(why);
    }

    /// What broke the protocol, if anything did.
    pub(crate) fn take(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

/// The transport over `reader` (the agent's output) and `writer` (its input): lines in, each
/// checked to be a JSON object, lines out; the incoming stream ends at the first line that is
/// not, noted in `broken`.
pub(crate) fn lines<R, W>(
    reader: R,
    writer: W,
    broken: Broken,
) -> Lines<
    impl Sink<String, Error = std::io::Error> + Send + 'static,
    impl Stream<Item = std::io::Result<String>> + Send + 'static,
>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let incoming = futures::stream::unfold(
        (BufReader::new(reader), broken, Vec::new(), false),
        |(mut reader, broken, mut buffer, done)| async move {
            if done {
                return None;
            }
            buffer.clear();
            let read = (&mut reader)
                .take(u64::try_from(LINE_CAP).unwrap_or(u64::MAX) + 1)
                .read_until(b'\n', &mut buffer)
                .await;
            match read {
                Ok(0) => None,
                Err(error) => Some((Err(error), (reader, broken, buffer, true))),
                Ok(_) if buffer.len() > LINE_CAP => {
                    broken.set(format!("a line longer than {LINE_CAP} bytes"));
                    None
                }
                Ok(_) => match checked(&buffer) {
                    Ok(line) => Some((Ok(line), (reader, broken, buffer, false))),
                    Err(why) => {
                        broken.set(why);
                        None
                    }
                },
            }
        },
    );
    let outgoing = futures::sink::unfold(writer, |mut writer, line: String| async move {
        writer.write_all(line.as_bytes()).await?;
        writer.write_all(b"\n").await?;
        writer.flush().await?;
        Ok::<_, std::io::Error>(writer)
    });
    Lines::new(Box::pin(outgoing), Box::pin(incoming))
}

/// A line as text, when it is a JSON object (blank lines pass, as the SDK skips them); else
/// why it breaks the protocol, quoting its start.
fn checked(line: &[u8]) -> Result<String, String> {
    let text = String::from_utf8_lossy(line);
    let text = text.trim_end_matches(['\n', '\r']);
    if text.trim().is_empty()
        || serde_json::from_str::<serde_json::Value>(text).is_ok_and(|value| value.is_object())
    {
        return Ok(text.to_owned());
    }
    let quoted: String = text.chars().take(QUOTE).collect();
    let more = if quoted.len() < text.len() { "…" } else { "" };
    Err(format!(
        "a line that is not a JSON object: `{quoted}{more}`"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_pass_and_anything_else_is_quoted() {
        assert_eq!(checked(b"{\"a\":1}\n"), Ok("{\"a\":1}".to_owned()));
        assert!(checked(b"\n").is_ok());
        let why = checked(b"{not json\n").expect_err("broken");
        assert!(why.contains("`{not json`"), "{why}");
        assert!(checked(b"[1,2]\n").is_err());
    }
}
