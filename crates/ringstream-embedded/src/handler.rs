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
/// An echo server, served here over an in-memory connection:
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
