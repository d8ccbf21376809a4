//! [`App`]: the application an HTTP connection is served with.

use embedded_io_async::{Read, Write};

use super::error::Error;
use super::request::Request;
use super::response::{Responder, Sent};

/// An HTTP application: answers one request at a time.
///
/// `handle` gets the request head and a [`Responder`], through which it
/// reads the request body (if it wants it) and writes exactly one
/// response; the [`Sent`] it returns can only come from a finished
/// response. It is generic over the connection, so no trait object and no
/// allocation is involved, and it is an `async fn` in a trait without a
/// `Send` bound (embassy's executors need none).
///
/// # Examples
///
/// ```
/// use ringstream_embedded::embedded_io_async::{Read, Write};
/// use ringstream_embedded::http::{App, Error, Request, Responder, Sent};
///
/// struct Hello;
///
/// impl App for Hello {
///     async fn handle<IO: Read + Write>(
///         &self,
///         request: &Request<'_>,
///         responder: &mut Responder<'_, IO>,
///     ) -> Result<Sent, Error<IO::Error>> {
///         match (request.method(), request.path()) {
///             ("GET", "/") => {
///                 let fields = [("content-type", &b"text/plain"[..])];
///                 responder.send(200, &fields, b"hello").await
///             }
///             ("GET", "/count") => {
///                 // Unknown length: sent chunked while it is printed.
///                 responder.start(200, &[], None).await?;
///                 for i in 0..100 {
///                     write!(responder, "line {i}\n").await?;
///                 }
///                 responder.finish().await
///             }
///             _ => responder.send(404, &[], b"").await,
///         }
///     }
/// }
/// ```
#[allow(async_fn_in_trait)] // No `Send` bound on purpose: see above.
pub trait App {
    /// Answers `request` through `responder`.
    ///
    /// # Examples
    ///
    /// The server calls it once per request; here, a request for a path the
    /// application does not know:
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
    /// struct Routes;
    ///
    /// impl App for Routes {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         match request.path() {
    ///             "/" => responder.send(200, &[], b"home").await,
    ///             _ => responder.send(404, &[], b"").await,
    ///         }
    ///     }
    /// }
    ///
    /// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
    /// let mut io = wire(b"GET /nowhere HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n");
    /// let mut buffers = Buffers::<1024, 512>::new();
    /// block_on(serve_connection(&mut io, &Routes, &mut buffers, &Config::DEFAULT)).unwrap();
    /// assert!(io.sent().starts_with(b"HTTP/1.1 404 Not Found\r\n"));
    /// ```
    ///
    /// # Errors
    ///
    /// The errors of the [`Responder`]'s methods, passed on with `?`. When
    /// `handle` returns an error before the response head was written and
    /// the error has a status ([`Error::status`]: a bad request body is
    /// 400, one too large 413, a stalled one 408), the client is answered
    /// with it; the connection is closed in any case.
    ///
    /// # Cancel safety
    ///
    /// The server drops this future only when the whole connection is
    /// dropped.
    async fn handle<IO: Read + Write>(
        &self,
        request: &Request<'_>,
        responder: &mut Responder<'_, IO>,
    ) -> Result<Sent, Error<IO::Error>>;
}
