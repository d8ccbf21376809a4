//! Pattern scans: `read_until_exclusive`, `read_until_inclusive`, `gets` and
//! `discard_until` share one scanner that remembers how far it has looked.

use std::io;

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite};

use super::Stream;
use crate::error::Error;

/// How a scan ended.
enum Outcome {
    /// The pattern starts at this index of the read buffer.
    Match(usize),
    /// No match ends within the limit, and every byte up to the limit is
    /// buffered.
    Limit,
    /// End of file without a match.
    Eof,
}

/// Index of the first occurrence of `pattern` in `haystack` starting at or
/// after `from`.
fn find(haystack: &[u8], pattern: &[u8], from: usize) -> Option<usize> {
    let Some((&first, rest)) = pattern.split_first() else {
        return (from <= haystack.len()).then_some(from);
    };
    let tail = haystack.get(from..)?;
    let last_start = tail.len().checked_sub(pattern.len())?;
    let mut start = 0;
    while let Some(candidates) = tail.get(start..=last_start) {
        let offset = candidates.iter().position(|&b| b == first)?;
        let at = start + offset;
        if tail.get(at + 1..at + pattern.len()) == Some(rest) {
            return Some(from + at);
        }
        start = at + 1;
    }
    None
}

fn limit_error(what: &str, limit: usize, by_buffer: bool) -> io::Error {
    let message = if by_buffer {
        format!("{what} not found within maximum_buffer_size ({limit} bytes)")
    } else {
        format!("{what} not found within the limit of {limit} bytes")
    };
    io::Error::new(io::ErrorKind::InvalidData, message)
}

impl<T: AsyncRead + AsyncWrite + Unpin> Stream<T> {
    /// The shared scanner.
    ///
    /// Looks for `pattern` ending within the first `limit` bytes counted
    /// from the start of the call, reading as needed. Each pass resumes
    /// `pattern.len() - 1` bytes before the end of the previous one, so a
    /// pattern split across reads is found and no byte is examined more
    /// than `pattern.len()` times. With `discard`, bytes that cannot be
    /// part of a match are dropped after each successful read; the second
    /// value returned counts them.
    async fn scan(
        &mut self,
        pattern: &[u8],
        limit: usize,
        discard: bool,
    ) -> io::Result<(Outcome, usize)> {
        self.check_open()?;
        let overlap = pattern.len().saturating_sub(1);
        let mut from = 0;
        let mut discarded = 0usize;
        loop {
            let budget = limit.saturating_sub(discarded);
            let len = self.read_buf.len();
            let window = len.min(budget);
            let searched = self.read_buf.get(..window).unwrap_or_default();
            if let Some(index) = find(searched, pattern, from) {
                return Ok((Outcome::Match(index), discarded));
            }
            from = from.max(window.saturating_sub(overlap));
            if len >= budget {
                return Ok((Outcome::Limit, discarded));
            }
            if self.fill_hint(len.saturating_add(1)).await? == 0 {
                return Ok((Outcome::Eof, discarded));
            }
            if discard && from > 0 {
                bytes::Buf::advance(&mut self.read_buf, from);
                discarded = discarded.saturating_add(from);
                from = 0;
            }
        }
    }

    /// Shared body of `read_until_exclusive` and `read_until_inclusive`.
    async fn read_until_inner(
        &mut self,
        pattern: &[u8],
        limit: usize,
        inclusive: bool,
    ) -> io::Result<Option<Bytes>> {
        let cap = self.options.maximum_buffer_size;
        let effective = limit.min(cap);
        match self.scan(pattern, effective, false).await?.0 {
            Outcome::Match(index) => {
                let end = index + pattern.len();
                if inclusive {
                    Ok(Some(self.read_buf.split_to(end).freeze()))
                } else {
                    let data = self.read_buf.split_to(index).freeze();
                    bytes::Buf::advance(&mut self.read_buf, pattern.len());
                    Ok(Some(data))
                }
            }
            Outcome::Limit => Err(limit_error("pattern", effective, limit > cap)),
            Outcome::Eof => Ok(None),
        }
    }

    /// Reads up to `pattern` and hands off the bytes before it; the
    /// pattern is consumed but not returned.
    ///
    /// The pattern may be several bytes long, and it is left out of the
    /// result: this is not
    /// [`AsyncBufReadExt::read_until`](tokio::io::AsyncBufReadExt::read_until),
    /// which looks for one byte and keeps it.
    ///
    /// `limit` counts bytes **including the pattern**: a match must end
    /// within the first `limit` bytes (and within
    /// [`maximum_buffer_size`](super::StreamOptions::maximum_buffer_size)).
    /// Pass `usize::MAX` for no limit other than that.
    ///
    /// Returns `None` at end of file without a match; the unmatched data
    /// stays buffered.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::Stream;
    /// use tokio::io::AsyncWriteExt;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ringstream::Error> {
    /// let (mut peer, io) = tokio::io::duplex(1024);
    /// peer.write_all(b"hello\r\nworld").await?;
    /// drop(peer);
    ///
    /// let mut stream = Stream::new(io);
    /// assert!(stream.read_until_exclusive(b"\r\n", 6).await.is_err()); // ends at 7
    /// assert_eq!(&stream.read_until_exclusive(b"\r\n", 7).await?.unwrap()[..], b"hello");
    /// assert_eq!(stream.read_until_exclusive(b"\r\n", 100).await?, None);
    /// assert_eq!(stream.buffered(), b"world");
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidData`](io::ErrorKind::InvalidData) when `limit` (or
    /// `maximum_buffer_size`) bytes are buffered and no match ends within
    /// them. Nothing is consumed, so the caller may inspect
    /// [`buffered`](Self::buffered).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: nothing is consumed before the final synchronous step.
    pub async fn read_until_exclusive(
        &mut self,
        pattern: &[u8],
        limit: usize,
    ) -> Result<Option<Bytes>, Error> {
        Ok(self.read_until_inner(pattern, limit, false).await?)
    }

    /// Like [`read_until_exclusive`](Self::read_until_exclusive), but the
    /// returned bytes end with the pattern.
    ///
    /// # Errors
    ///
    /// As [`read_until_exclusive`](Self::read_until_exclusive).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: nothing is consumed before the final synchronous step.
    pub async fn read_until_inclusive(
        &mut self,
        pattern: &[u8],
        limit: usize,
    ) -> Result<Option<Bytes>, Error> {
        Ok(self.read_until_inner(pattern, limit, true).await?)
    }

    /// Reads a line the way Ruby's `IO#gets(limit)` does: up to and
    /// including `"\n"`; or `limit` bytes when no newline is among them;
    /// or what remains at end of file; then `None`.
    ///
    /// `gets(0)` returns an empty `Some` without any I/O.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::Stream;
    /// use tokio::io::AsyncWriteExt;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ringstream::Error> {
    /// let (mut peer, io) = tokio::io::duplex(1024);
    /// peer.write_all(b"hello\nworld\nrest").await?;
    /// drop(peer);
    ///
    /// let mut stream = Stream::new(io);
    /// assert_eq!(&stream.gets(4).await?.unwrap()[..], b"hell");
    /// assert_eq!(&stream.gets(5).await?.unwrap()[..], b"o\n");
    /// assert_eq!(&stream.gets(1024).await?.unwrap()[..], b"world\n");
    /// assert_eq!(&stream.gets(1024).await?.unwrap()[..], b"rest");
    /// assert_eq!(stream.gets(1024).await?, None);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidData`](io::ErrorKind::InvalidData) when `limit` exceeds
    /// [`maximum_buffer_size`](super::StreamOptions::maximum_buffer_size)
    /// and that many bytes arrive without a newline; nothing is consumed.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: nothing is consumed before the final synchronous step.
    pub async fn gets(&mut self, limit: usize) -> Result<Option<Bytes>, Error> {
        self.check_open()?;
        if limit == 0 {
            return Ok(Some(Bytes::new()));
        }
        let cap = self.options.maximum_buffer_size;
        let effective = limit.min(cap);
        match self.scan(b"\n", effective, false).await?.0 {
            Outcome::Match(index) => Ok(Some(self.read_buf.split_to(index + 1).freeze())),
            Outcome::Limit if limit <= cap => Ok(Some(self.read_buf.split_to(limit).freeze())),
            Outcome::Limit => Err(limit_error("newline", cap, true).into()),
            Outcome::Eof if self.read_buf.is_empty() => Ok(None),
            Outcome::Eof => Ok(Some(self.read_buf.split().freeze())),
        }
    }

    /// Skips data up to and including `pattern`, with memory bounded by
    /// one read block plus the pattern.
    ///
    /// While scanning, bytes that cannot be part of a match are dropped
    /// after each read. When the pattern is found within `limit` bytes
    /// (counted from the start of the call, pattern included) everything
    /// through it is consumed and the still-buffered bytes that end with
    /// the pattern are returned: at least the pattern, and everything
    /// skipped when it was found without reading further.
    ///
    /// Returns `None` in two cases, which [`is_eof`](Self::is_eof) tells
    /// apart:
    /// * end of file without a match: the bytes of the last read stay
    ///   buffered;
    /// * `limit` bytes were scanned without a match ending within them:
    ///   exactly `limit` bytes are discarded, and a further call continues
    ///   the search.
    ///
    /// # Cancel safety
    ///
    /// Not fully cancel safe: a cancelled call may already have dropped
    /// bytes that precede any possible match (never part of a match).
    pub async fn discard_until(
        &mut self,
        pattern: &[u8],
        limit: usize,
    ) -> Result<Option<Bytes>, Error> {
        let (outcome, discarded) = self.scan(pattern, limit, true).await?;
        match outcome {
            Outcome::Match(index) => {
                Ok(Some(self.read_buf.split_to(index + pattern.len()).freeze()))
            }
            Outcome::Limit => {
                let rest = limit.saturating_sub(discarded).min(self.read_buf.len());
                bytes::Buf::advance(&mut self.read_buf, rest);
                Ok(None)
            }
            Outcome::Eof => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::find;

    #[test]
    fn find_cases() {
        assert_eq!(find(b"hello\nworld", b"\n", 0), Some(5));
        assert_eq!(find(b"hello\nworld", b"\n", 6), None);
        assert_eq!(find(b"abcabd", b"abd", 0), Some(3));
        assert_eq!(find(b"abcabd", b"abd", 4), None);
        assert_eq!(find(b"ab", b"abc", 0), None);
        assert_eq!(find(b"ab", b"", 1), Some(1));
        assert_eq!(find(b"ab", b"", 3), None);
        assert_eq!(find(b"aaab", b"aab", 0), Some(1));
    }
}
