//! Reads of a request body up to a delimiter or an exact length — `gets`,
//! `read_until_exclusive`, `read_until_inclusive`, `read_exactly` — with
//! the semantics of [`Stream`](crate::Stream)'s. A line that lies within
//! one piece of the body is handed over without a copy; only a line that
//! spans pieces is gathered.

use std::future::poll_fn;
use std::io;

use bytes::{Bytes, BytesMut};

use super::piece::BodyPiece;
use super::Incoming;
use crate::error::Error;

/// How a scan for a delimiter ended.
enum Found {
    /// The delimiter ends at this offset of the leftover.
    At(usize),
    /// `limit` bytes are gathered without the delimiter ending in them.
    Limit,
    /// The body ended without the delimiter.
    End,
}

impl Incoming {
    /// Gathers data into the leftover until `pattern` ends within the
    /// first `limit` bytes of it, or `limit` bytes are there, or the body
    /// ends.
    async fn scan(&mut self, pattern: &[u8], limit: usize) -> Result<Found, Error> {
        // How far the search already looked: a pattern cannot end before.
        let mut searched = 0usize;
        loop {
            let window = self.leftover.len().min(limit);
            let from = searched.saturating_sub(pattern.len().saturating_sub(1));
            if let Some(at) = find(&self.leftover[from..window], pattern) {
                return Ok(Found::At(from + at + pattern.len()));
            }
            if self.leftover.len() >= limit {
                return Ok(Found::Limit);
            }
            searched = window;
            // The leftover stays in place while waiting, so a cancelled
            // read loses nothing.
            match poll_fn(|cx| self.poll_pull(cx)).await? {
                BodyPiece::Data(more) if self.leftover.is_empty() => self.leftover = more,
                BodyPiece::Data(more) => {
                    let mut joined = BytesMut::with_capacity(self.leftover.len() + more.len());
                    joined.extend_from_slice(&self.leftover);
                    joined.extend_from_slice(&more);
                    self.leftover = joined.freeze();
                }
                BodyPiece::End(trailers) => {
                    if trailers.is_some() {
                        self.trailers = trailers.map(Box::new);
                    }
                    return Ok(Found::End);
                }
            }
        }
    }

    /// Reads a line the way Ruby's `IO#gets(limit)` does: up to and
    /// including `"\n"`; or `limit` bytes when no newline is among them;
    /// or what remains at the end of the body; then `None`.
    ///
    /// # Examples
    ///
    /// ```
    /// use bytes::Bytes;
    /// use ringstream::Incoming;
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let mut body = Incoming::from_body(http_body_util::Full::new(Bytes::from_static(
    ///     b"hello\nworld\nrest",
    /// )));
    /// assert_eq!(&body.gets(4).await.unwrap().unwrap()[..], b"hell");
    /// assert_eq!(&body.gets(1024).await.unwrap().unwrap()[..], b"o\n");
    /// assert_eq!(&body.gets(1024).await.unwrap().unwrap()[..], b"world\n");
    /// assert_eq!(&body.gets(1024).await.unwrap().unwrap()[..], b"rest");
    /// assert_eq!(body.gets(1024).await.unwrap(), None);
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// As [`read_partial`](Self::read_partial).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: what was gathered stays for the next read.
    pub async fn gets(&mut self, limit: usize) -> Result<Option<Bytes>, Error> {
        if limit == 0 {
            return Ok(Some(Bytes::new()));
        }
        Ok(match self.scan(b"\n", limit).await? {
            Found::At(end) => Some(self.leftover.split_to(end)),
            Found::Limit => Some(self.leftover.split_to(limit)),
            Found::End if self.leftover.is_empty() => None,
            Found::End => Some(std::mem::take(&mut self.leftover)),
        })
    }

    /// The data before the next `pattern`, which is consumed but not
    /// returned; `None` when the body ends without it (what remains stays
    /// readable).
    ///
    /// # Examples
    ///
    /// ```
    /// use bytes::Bytes;
    /// use ringstream::Incoming;
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let mut body =
    ///     Incoming::from_body(http_body_util::Full::new(Bytes::from_static(b"a=1&b=2")));
    /// assert_eq!(&body.read_until_exclusive(b"&", 64).await.unwrap().unwrap()[..], b"a=1");
    /// assert_eq!(body.read_until_exclusive(b"&", 64).await.unwrap(), None);
    /// assert_eq!(&body.read_partial(64).await.unwrap().unwrap()[..], b"b=2");
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidData`](io::ErrorKind::InvalidData) when `limit` bytes
    /// arrive and no match ends within them (nothing is consumed); else as
    /// [`read_partial`](Self::read_partial).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: what was gathered stays for the next read.
    pub async fn read_until_exclusive(
        &mut self,
        pattern: &[u8],
        limit: usize,
    ) -> Result<Option<Bytes>, Error> {
        let found = self.read_until_inclusive(pattern, limit).await?;
        Ok(found.map(|mut line| {
            line.truncate(line.len() - pattern.len());
            line
        }))
    }

    /// Like [`read_until_exclusive`](Self::read_until_exclusive), but the
    /// returned bytes end with the pattern.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::Incoming;
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let mut body = Incoming::from_body(String::from("--frontier\r\npart one--frontier--"));
    /// let preamble = body.read_until_inclusive(b"\r\n", 64).await.unwrap().unwrap();
    /// assert_eq!(&preamble[..], b"--frontier\r\n");
    /// let part = body.read_until_inclusive(b"--frontier", 64).await.unwrap().unwrap();
    /// assert_eq!(&part[..], b"part one--frontier");
    /// // No pattern before the end of the body: what remains stays readable.
    /// assert_eq!(body.read_until_inclusive(b"\r\n", 64).await.unwrap(), None);
    /// assert_eq!(&body.read_partial(64).await.unwrap().unwrap()[..], b"--");
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// As [`read_until_exclusive`](Self::read_until_exclusive).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe.
    pub async fn read_until_inclusive(
        &mut self,
        pattern: &[u8],
        limit: usize,
    ) -> Result<Option<Bytes>, Error> {
        if pattern.is_empty() {
            return Ok(Some(Bytes::new()));
        }
        match self.scan(pattern, limit).await? {
            Found::At(end) => Ok(Some(self.leftover.split_to(end))),
            Found::End => Ok(None),
            Found::Limit => Err(Error::Io(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("no delimiter within {limit} bytes of the request body"),
            ))),
        }
    }

    /// Exactly `n` bytes of the body.
    ///
    /// # Examples
    ///
    /// ```
    /// use bytes::Bytes;
    /// use ringstream::Incoming;
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let mut body =
    ///     Incoming::from_body(http_body_util::Full::new(Bytes::from_static(b"\x00\x03abc!")));
    /// let header = body.read_exactly(2).await.unwrap();
    /// let len = u16::from_be_bytes([header[0], header[1]]) as usize;
    /// assert_eq!(&body.read_exactly(len).await.unwrap()[..], b"abc");
    /// assert!(body.read_exactly(2).await.is_err(), "one byte is left");
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// [`UnexpectedEof`](io::ErrorKind::UnexpectedEof) when the body ends
    /// first; the partial data stays readable. Else as
    /// [`read_partial`](Self::read_partial).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe.
    pub async fn read_exactly(&mut self, n: usize) -> Result<Bytes, Error> {
        match self.scan(&[], n).await? {
            Found::Limit => Ok(self.leftover.split_to(n)),
            Found::At(_) | Found::End => Err(Error::Io(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "request body ended after {} of {n} bytes",
                    self.leftover.len()
                ),
            ))),
        }
    }
}

/// Where `pattern` first starts in `haystack` (never for an empty pattern).
fn find(haystack: &[u8], pattern: &[u8]) -> Option<usize> {
    if pattern.is_empty() || haystack.len() < pattern.len() {
        return None;
    }
    haystack.windows(pattern.len()).position(|w| w == pattern)
}
