//! What a server does with one connection.

use embedded_io_async::{Read, Write};

/// Serves one connection, given as a single `Read + Write` object.
///
/// The connection is lent whole, never split into a reading and a writing
/// half, so the same handler runs over an embassy-net `TcpSocket`, over a
/// TLS session that cannot be split (embedded-tls, esp-mbedtls), or over a
/// tokio `TcpStream` wrapped in embedded-io-adapters' `FromTokio`.
///
/// `serve` is generic over the connection: no trait object, no allocation,
/// and the connection's future has a size known at compile time, which the
/// task holding it reserves once.
///
/// It is an `async fn` in a trait (stable since Rust 1.75), whose futures
/// carry no `Send` bound: embassy's executors run every task on one thread
/// and do not need one. On tokio, serve a connection with
/// `tokio::task::spawn_local` or `LocalSet`, or in a task that is not
/// spawned (see the crate's tokio test).
///
/// # Examples
///
/// An echo server (served over an in-memory connection in
/// [`serve`](Self::serve)'s example):
///
/// ```
/// use ringstream_embedded::embedded_io_async::{Read, Write};
/// use ringstream_embedded::Handler;
///
/// struct Echo;
///
/// impl Handler for Echo {
///     async fn serve<IO: Read + Write>(&self, io: &mut IO) -> Result<(), IO::Error> {
///         let mut buf = [0; 64];
///         loop {
///             let n = io.read(&mut buf).await?;
///             if n == 0 {
///                 return Ok(()); // the peer closed its side
///             }
///             io.write_all(&buf[..n]).await?;
///         }
///     }
/// }
/// ```
#[allow(async_fn_in_trait)] // No `Send` bound on purpose: see above.
pub trait Handler {
    /// Serves the connection `io` until the handler is done with it.
    ///
    /// When it returns, whoever lent the connection closes it: the pool
    /// of the `embassy-net` feature closes it gracefully after `Ok` and
    /// resets it after `Err`.
    ///
    /// # Examples
    ///
    /// An echo handler, served over an in-memory connection that is given
    /// `ping` and then closed by the peer:
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::Handler;
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
    /// struct Echo;
    ///
    /// impl Handler for Echo {
    ///     async fn serve<IO: Read + Write>(&self, io: &mut IO) -> Result<(), IO::Error> {
    ///         let mut buf = [0; 64];
    ///         loop {
    ///             match io.read(&mut buf).await? {
    ///                 0 => return Ok(()),
    ///                 n => io.write_all(&buf[..n]).await?,
    ///             }
    ///         }
    ///     }
    /// }
    ///
    /// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
    /// let mut io = wire(b"ping");
    /// block_on(Echo.serve(&mut io)).unwrap();
    /// assert_eq!(io.sent(), b"ping");
    /// ```
    ///
    /// # Errors
    ///
    /// An I/O error of the connection, which the handler passes on (with
    /// `?`) when it cannot go on.
    ///
    /// # Cancel safety
    ///
    /// Whoever lends the connection may drop this future, for example at
    /// a deadline; the connection is then closed, so a handler needs no
    /// cleanup of its own beyond what its `Drop` implementations do.
    async fn serve<IO>(&self, io: &mut IO) -> Result<(), IO::Error>
    where
        IO: Read + Write;
}
