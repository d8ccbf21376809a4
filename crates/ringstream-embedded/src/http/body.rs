//! The request-body side of a [`Responder`]: the body streamed through the
//! receive buffer, in pieces, by the core's decoder.

use embassy_time::with_timeout;
use embedded_io_async::{Read, Write};

use super::{Error, Responder};

impl<IO: Read + Write> Responder<'_, IO> {
    /// Reads request-body bytes into `buf`; `Ok(0)` once the body has
    /// ended (at once for a request without a body).
    ///
    /// The body arrives through the receive buffer in pieces of at most
    /// its free size and is decoded there by the core (`Content-Length` or
    /// chunked), so a body of any size streams through a buffer of 1 KiB.
    /// The first read sends `100 Continue` to a client that waits for it.
    ///
    /// # Examples
    ///
    /// Counting the bytes of an upload:
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{App, Error, Request, Responder, Sent};
    ///
    /// struct Upload;
    ///
    /// impl App for Upload {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         _request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         let mut buf = [0u8; 128];
    ///         let mut total = 0u64;
    ///         loop {
    ///             match responder.read_body(&mut buf).await? {
    ///                 0 => break,
    ///                 n => total += n as u64, // flash it, hash it...
    ///             }
    ///         }
    ///         responder.start(200, &[], None).await?;
    ///         write!(responder, "{total} bytes\n").await?;
    ///         responder.finish().await
    ///     }
    /// }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Http`] when the core refuses the body (a bad chunk,
    /// [`BodyTooLarge`](ringstream_core::Error::BodyTooLarge) past
    /// [`Limits::max_body_len`](ringstream_core::Limits)),
    /// [`Error::Closed`] when the client closes within it,
    /// [`Error::TimedOut`] when it stalls past
    /// [`Config::io_timeout`](crate::Config::io_timeout), or an I/O error.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe when the connection's `read` is (embassy-net's
    /// `TcpSocket`'s is): bytes received before the read was dropped stay
    /// in the receive buffer for the next one. A read dropped while it
    /// sends `100 Continue` may leave part of the invitation unsent.
    pub async fn read_body(&mut self, buf: &mut [u8]) -> Result<usize, Error<IO::Error>> {
        if buf.is_empty() {
            return Ok(0);
        }
        self.fill_pending().await?;
        let n = buf.len().min(self.pending.len());
        let from = self.pending.start;
        if let (Some(dst), Some(src)) = (buf.get_mut(..n), self.rx.get(from..from + n)) {
            dst.copy_from_slice(src);
        }
        self.pending.start += n;
        Ok(n)
    }

    /// The next piece of the request body, in place in the receive buffer
    /// (no copy); `None` once the body has ended.
    ///
    /// # Examples
    ///
    /// A chunked upload, counted piece by piece without a copy:
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{serve_connection, App, Buffers, Error, Request, Responder, Sent};
    /// use ringstream_embedded::Config;
    /// # use core::convert::Infallible;
    /// # use ringstream_embedded::embedded_io_async::ErrorType;
    /// # /// A connection that was given `input` and keeps what is written to it.
    /// # struct Wire<'a> { input: &'a [u8], output: [u8; 1024], written: usize }
    /// # fn wire(input: &[u8]) -> Wire<'_> { Wire { input, output: [0; 1024], written: 0 } }
    /// # impl Wire<'_> { fn sent(&self) -> &[u8] { &self.output[..self.written] } }
    /// # impl ErrorType for Wire<'_> { type Error = Infallible; }
    /// # impl Read for Wire<'_> {
    /// #     async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
    /// #         let n = buf.len().min(self.input.len());
    /// #         buf[..n].copy_from_slice(&self.input[..n]);
    /// #         self.input = &self.input[n..];
    /// #         Ok(n)
    /// #     }
    /// # }
    /// # impl Write for Wire<'_> {
    /// #     async fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
    /// #         let n = buf.len().min(self.output.len() - self.written);
    /// #         self.output[self.written..self.written + n].copy_from_slice(&buf[..n]);
    /// #         self.written += n;
    /// #         Ok(n)
    /// #     }
    /// #     async fn flush(&mut self) -> Result<(), Infallible> { Ok(()) }
    /// # }
    /// # /// This connection never waits: poll the future to its end.
    /// # fn block_on<F: core::future::Future>(f: F) -> F::Output {
    /// #     let mut f = core::pin::pin!(f);
    /// #     let mut cx = core::task::Context::from_waker(std::task::Waker::noop());
    /// #     loop {
    /// #         if let core::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; }
    /// #     }
    /// # }
    ///
    /// struct Count;
    ///
    /// impl App for Count {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         _request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         let mut total = 0;
    ///         while let Some(piece) = responder.body_chunk().await? {
    ///             total += piece.len();
    ///         }
    ///         assert!(responder.is_body_complete());
    ///         responder.start(200, &[], None).await?;
    ///         write!(responder, "{total} bytes").await?;
    ///         responder.finish().await
    ///     }
    /// }
    ///
    /// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
    /// let mut io = wire(b"POST /up HTTP/1.1\r\nHost: device\r\nTransfer-Encoding: chunked\r\n\
    ///                     Connection: close\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
    /// let mut buffers = Buffers::<1024, 512>::new();
    /// block_on(serve_connection(&mut io, &Count, &mut buffers, &Config::DEFAULT)).unwrap();
    /// assert!(core::str::from_utf8(io.sent()).unwrap().contains("5 bytes"));
    /// ```
    ///
    /// # Errors
    ///
    /// Those of [`read_body`](Self::read_body).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe, as [`read_body`](Self::read_body).
    pub async fn body_chunk(&mut self) -> Result<Option<&[u8]>, Error<IO::Error>> {
        self.fill_pending().await?;
        let piece = core::mem::replace(&mut self.pending, 0..0);
        Ok(self.rx.get(piece).filter(|p| !p.is_empty()))
    }

    /// Whether the request body has been read to its end.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{serve_connection, App, Buffers, Error, Request, Responder, Sent};
    /// use ringstream_embedded::Config;
    /// # use core::convert::Infallible;
    /// # use ringstream_embedded::embedded_io_async::ErrorType;
    /// # /// A connection that was given `input` and keeps what is written to it.
    /// # struct Wire<'a> { input: &'a [u8], output: [u8; 1024], written: usize }
    /// # fn wire(input: &[u8]) -> Wire<'_> { Wire { input, output: [0; 1024], written: 0 } }
    /// # impl Wire<'_> { fn sent(&self) -> &[u8] { &self.output[..self.written] } }
    /// # impl ErrorType for Wire<'_> { type Error = Infallible; }
    /// # impl Read for Wire<'_> {
    /// #     async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
    /// #         let n = buf.len().min(self.input.len());
    /// #         buf[..n].copy_from_slice(&self.input[..n]);
    /// #         self.input = &self.input[n..];
    /// #         Ok(n)
    /// #     }
    /// # }
    /// # impl Write for Wire<'_> {
    /// #     async fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
    /// #         let n = buf.len().min(self.output.len() - self.written);
    /// #         self.output[self.written..self.written + n].copy_from_slice(&buf[..n]);
    /// #         self.written += n;
    /// #         Ok(n)
    /// #     }
    /// #     async fn flush(&mut self) -> Result<(), Infallible> { Ok(()) }
    /// # }
    /// # /// This connection never waits: poll the future to its end.
    /// # fn block_on<F: core::future::Future>(f: F) -> F::Output {
    /// #     let mut f = core::pin::pin!(f);
    /// #     let mut cx = core::task::Context::from_waker(std::task::Waker::noop());
    /// #     loop {
    /// #         if let core::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; }
    /// #     }
    /// # }
    ///
    /// struct Check;
    ///
    /// impl App for Check {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         _request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         let mut buf = [0u8; 1];
    ///         responder.read_body(&mut buf).await?; // one byte of two
    ///         let said: &[u8] = if responder.is_body_complete() { b"whole" } else { b"part" };
    ///         responder.send(200, &[], said).await
    ///     }
    /// }
    ///
    /// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
    /// let mut io = wire(b"POST / HTTP/1.1\r\nHost: device\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
    /// let mut buffers = Buffers::<1024, 512>::new();
    /// block_on(serve_connection(&mut io, &Check, &mut buffers, &Config::DEFAULT)).unwrap();
    /// assert!(io.sent().ends_with(b"part"));
    /// ```
    pub fn is_body_complete(&self) -> bool {
        self.body_done && self.pending.is_empty()
    }

    /// Reads and drops the rest of the body, at most `limit` bytes of it;
    /// `true` if it ended within them (the connection can be kept).
    pub(super) async fn drain(&mut self, limit: u64) -> bool {
        let mut drained = 0u64;
        loop {
            self.pending = 0..0;
            if self.body_done {
                return true;
            }
            if self.fill_pending().await.is_err() {
                return false;
            }
            drained += self.pending.len() as u64;
            if drained > limit {
                return false;
            }
        }
    }

    /// Makes `pending` hold body data, unless the body has ended: decodes
    /// what the receive buffer holds, reading more as needed.
    async fn fill_pending(&mut self) -> Result<(), Error<IO::Error>> {
        self.body_wanted = true;
        // Before the first read of the body, the core's invitation to a
        // client that waits for one — only before the response head: once
        // the head is out, it is too late for an interim response.
        if !self.body_done && !self.is_started() {
            if let Some(invitation) = self.exchange.body_wanted() {
                let io = &mut *self.io;
                let sent = with_timeout(self.config.io_timeout, async {
                    io.write_all(invitation).await?;
                    io.flush().await
                })
                .await;
                match sent {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => return Err(Error::Io(e)),
                    Err(_) => return Err(Error::TimedOut),
                }
            }
        }
        while self.pending.is_empty() && !self.body_done {
            if self.start < self.end {
                let input = self.rx.get(self.start..self.end).unwrap_or_default();
                let progress = self.decoder.decode(input)?;
                self.pending = self.start + progress.data.start..self.start + progress.data.end;
                self.start += progress.consumed;
                self.body_done = progress.finished;
                if progress.consumed > 0 {
                    continue;
                }
            }
            self.receive().await?;
        }
        Ok(())
    }

    /// Reads more of the body into the receive buffer.
    async fn receive(&mut self) -> Result<(), Error<IO::Error>> {
        if self.eof {
            // A length or chunked body never ends at EOF: the client left
            // (nobody to answer), unless the decoder had already failed.
            return Err(match self.decoder.finish_eof() {
                Ok(()) | Err(ringstream_core::Error::UnexpectedEof) => Error::Closed,
                Err(e) => Error::Http(e),
            });
        }
        // Room at the end of the buffer: reuse it from the start once
        // everything in it is decoded, or move the few undecoded bytes.
        if self.start == self.end && self.pending.is_empty() {
            self.start = 0;
            self.end = 0;
        } else if self.end == self.rx.len() && self.pending.is_empty() {
            self.rx.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        let room = self.rx.get_mut(self.end..).unwrap_or_default();
        if room.is_empty() {
            // The head left no room in the receive buffer for its body.
            return Err(Error::Http(ringstream_core::Error::HeadTooLarge));
        }
        match with_timeout(self.config.io_timeout, self.io.read(room)).await {
            Ok(Ok(0)) => {
                self.eof = true;
                Ok(())
            }
            Ok(Ok(n)) => {
                self.end += n;
                Ok(())
            }
            Ok(Err(e)) => Err(Error::Io(e)),
            Err(_) => Err(Error::TimedOut),
        }
    }
}
