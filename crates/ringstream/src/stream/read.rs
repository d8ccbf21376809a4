//! Reading whole amounts: `read_up_to`, `read_partial`, `read_exactly`,
//! `read_all`, `peek` and `is_eof`.

use std::io;

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite};

use super::Stream;
use crate::error::Error;

impl<T: AsyncRead + AsyncWrite + Unpin> Stream<T> {
    /// Reads until `n` bytes are buffered or the transport reaches end of
    /// file, then hands off up to `n` bytes.
    ///
    /// Returns `Some` with exactly `n` bytes, or fewer at end of file;
    /// `None` at end of file with nothing buffered. `read_up_to(0)` returns
    /// an empty `Some` without any I/O. This is Ruby io-stream's `read(n)`;
    /// it is not [`AsyncReadExt::read`](tokio::io::AsyncReadExt::read),
    /// which fills a caller's slice with whatever one read gives.
    ///
    /// The bytes are contiguous, so a large `n` grows the read buffer to
    /// `n` bytes; use [`read_partial`](Self::read_partial) to stream with
    /// constant memory.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: bytes read before cancellation stay buffered and are
    /// returned by the next read.
    pub async fn read_up_to(&mut self, n: usize) -> Result<Option<Bytes>, Error> {
        self.check_open()?;
        if n == 0 {
            return Ok(Some(Bytes::new()));
        }
        while self.read_buf.len() < n {
            if self.fill_hint(n).await? == 0 {
                break;
            }
        }
        if self.read_buf.is_empty() {
            return Ok(None);
        }
        let take = n.min(self.read_buf.len());
        Ok(Some(self.read_buf.split_to(take).freeze()))
    }

    /// Reads until end of file and hands off everything (empty when
    /// nothing is left).
    ///
    /// The result is held in memory whole: this grows without bound on an
    /// endless transport. Unlike
    /// [`AsyncReadExt::read_to_end`](tokio::io::AsyncReadExt::read_to_end)
    /// it returns the bytes rather than appending them to a vector.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: bytes read before cancellation stay buffered.
    pub async fn read_all(&mut self) -> Result<Bytes, Error> {
        self.check_open()?;
        loop {
            let hint = self
                .read_buf
                .len()
                .saturating_add(self.options.minimum_read_size);
            if self.fill_hint(hint).await? == 0 {
                break;
            }
        }
        Ok(self.read_buf.split().freeze())
    }

    /// Hands off what is buffered, at most `n` bytes. Only when nothing is
    /// buffered does it read from the transport, once.
    ///
    /// Returns `None` at end of file; `read_partial(0)` returns an empty
    /// `Some` without any I/O. This is the constant-memory way to stream:
    /// each chunk is a zero-copy view of the read block, and once the
    /// chunks are dropped the next read reuses the block.
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
    /// peer.write_all(b"Hello World").await?;
    /// drop(peer);
    ///
    /// let mut stream = Stream::new(io);
    /// assert_eq!(&stream.read_partial(4).await?.unwrap()[..], b"Hell");
    /// assert_eq!(&stream.read_partial(20).await?.unwrap()[..], b"o World");
    /// assert_eq!(stream.read_partial(20).await?, None);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: nothing is consumed before the final synchronous step.
    pub async fn read_partial(&mut self, n: usize) -> Result<Option<Bytes>, Error> {
        self.check_open()?;
        if n == 0 {
            return Ok(Some(Bytes::new()));
        }
        if self.read_buf.is_empty() {
            self.fill_hint(0).await?;
        }
        if self.read_buf.is_empty() {
            return Ok(None);
        }
        let take = n.min(self.read_buf.len());
        Ok(Some(self.read_buf.split_to(take).freeze()))
    }

    /// Reads exactly `n` bytes.
    ///
    /// # Errors
    ///
    /// [`UnexpectedEof`](io::ErrorKind::UnexpectedEof) when the transport
    /// ends first; the partial data is not consumed and stays readable.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: nothing is consumed before the final synchronous step.
    pub async fn read_exactly(&mut self, n: usize) -> Result<Bytes, Error> {
        self.check_open()?;
        while self.read_buf.len() < n {
            if self.fill_hint(n).await? == 0 {
                return Err(Error::from(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("stream ended after {} of {n} bytes", self.read_buf.len()),
                )));
            }
        }
        Ok(self.read_buf.split_to(n).freeze())
    }

    /// Reads until `n` bytes are buffered (fewer at end of file) and shows
    /// them without consuming anything.
    ///
    /// # Errors
    ///
    /// [`InvalidInput`](io::ErrorKind::InvalidInput) if `n` exceeds
    /// [`maximum_buffer_size`](super::StreamOptions::maximum_buffer_size).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it never consumes.
    pub async fn peek(&mut self, n: usize) -> Result<&[u8], Error> {
        self.check_open()?;
        if n > self.options.maximum_buffer_size {
            return Err(Error::from(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "peek of {n} bytes exceeds maximum_buffer_size ({})",
                    self.options.maximum_buffer_size
                ),
            )));
        }
        while self.read_buf.len() < n {
            if self.fill_hint(n).await? == 0 {
                break;
            }
        }
        let shown = n.min(self.read_buf.len());
        Ok(self.read_buf.get(..shown).unwrap_or_default())
    }

    /// Whether every byte has been read: nothing is buffered and the
    /// transport is at end of file. With nothing buffered it reads from
    /// the transport once, so it may wait for the peer.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it never consumes.
    pub async fn is_eof(&mut self) -> Result<bool, Error> {
        self.check_open()?;
        if !self.read_buf.is_empty() {
            return Ok(false);
        }
        Ok(self.fill_hint(0).await? == 0)
    }
}
