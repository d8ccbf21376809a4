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
