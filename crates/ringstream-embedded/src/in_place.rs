//! [`WriteInPlace`]: a connection that lends its own transmit buffer.

use core::task::{Context, Poll};

use embedded_io_async::Write;

/// A connection whose transmit buffer the server writes into in place.
///
/// A TCP stack without an operating system keeps each socket's unsent
/// bytes in a buffer of its own, and copies them from there into the
/// packets it sends. Through [`Write`], every response byte would be
/// copied once more: from the server's transmit buffer into the socket's.
/// A connection that implements this trait lends its free transmit space
/// instead, and
/// [`serve_connection_in_place`](crate::http::serve_connection_in_place)
/// formats a response's `write!` output straight into it: the server
/// copies those bytes not at all (the [`Responder`](crate::http::Responder)
/// counts what it does copy, [`copied`](crate::http::Responder::copied)).
///
/// embassy-net's `TcpSocket` implements it (feature `embassy-net`).
///
/// # Contract
///
/// - `fill` is called at most once per call that returns
///   `Poll::Ready(Ok(_))`, and not at all otherwise; it is given the free
///   space (the largest contiguous part, at least one byte), writes at its
///   start, and returns how many of those bytes to send, which the call
///   returns.
/// - Bytes that `fill` wrote past the count it returned are kept where
///   they are until the next call, and the free space that call lends
///   contains their addresses (at its start, or further in when the free
///   space moved). The server relies on this to build a chunk across
///   several `write!`s before it knows the chunk's size, and it makes no
///   other write to the connection while it keeps such bytes.
///
/// # Examples
///
/// A connection over a plain buffer (a socket's transmit buffer would
/// hand its free space the same way):
///
/// ```
/// use core::convert::Infallible;
/// use core::task::{Context, Poll};
/// use ringstream_embedded::embedded_io_async::{ErrorType, Write};
/// use ringstream_embedded::WriteInPlace;
///
/// struct Out { buf: [u8; 64], len: usize }
///
/// impl ErrorType for Out { type Error = Infallible; }
/// impl Write for Out {
///     async fn write(&mut self, data: &[u8]) -> Result<usize, Infallible> {
///         let n = data.len().min(self.buf.len() - self.len);
///         self.buf[self.len..self.len + n].copy_from_slice(&data[..n]);
///         self.len += n;
///         Ok(n)
///     }
///     async fn flush(&mut self) -> Result<(), Infallible> {
///         Ok(())
///     }
/// }
/// impl WriteInPlace for Out {
///     fn poll_write_in_place(
///         &mut self,
///         _cx: &mut Context<'_>,
///         fill: &mut dyn FnMut(&mut [u8]) -> usize,
///     ) -> Poll<Result<usize, Infallible>> {
///         let n = fill(&mut self.buf[self.len..]);
///         self.len += n;
///         Poll::Ready(Ok(n))
///     }
/// }
///
/// let mut out = Out { buf: [0; 64], len: 0 };
/// let mut cx = Context::from_waker(std::task::Waker::noop());
/// let sent = out.poll_write_in_place(&mut cx, &mut |free| {
///     free[..5].copy_from_slice(b"hello");
///     5
/// });
/// assert!(matches!(sent, Poll::Ready(Ok(5))));
/// assert_eq!(&out.buf[..out.len], b"hello");
/// ```
pub trait WriteInPlace: Write {
    /// Waits for free transmit space, then lends it to `fill` and sends the
    /// bytes `fill` says it wrote at its start; returns their number.
    ///
    /// # Errors
    ///
    /// The connection's error when it can send no more (closed, reset).
    fn poll_write_in_place(
        &mut self,
        cx: &mut Context<'_>,
        fill: &mut dyn FnMut(&mut [u8]) -> usize,
    ) -> Poll<Result<usize, Self::Error>>;
}

#[cfg(feature = "embassy-net")]
impl WriteInPlace for embassy_net::tcp::TcpSocket<'_> {
    /// The socket's transmit ring, lent from its write position (the
    /// largest contiguous part). Bytes left there unsent stay put: the
    /// ring writes into its free space only when bytes are sent, and when
    /// it is empty and moves its write position to the start, the space it
    /// lends runs over the whole ring, the kept bytes included.
    fn poll_write_in_place(
        &mut self,
        cx: &mut Context<'_>,
        fill: &mut dyn FnMut(&mut [u8]) -> usize,
    ) -> Poll<Result<usize, Self::Error>> {
        let write = core::pin::pin!(self.write_with(|free| {
            let n = fill(free);
            (n, n)
        }));
        core::future::Future::poll(write, cx)
    }
}

/// [`WriteInPlace::poll_write_in_place`] for a connection type known only
/// where a connection is served: the [`Responder`](crate::http::Responder)
/// holds it for a connection of any type.
pub(crate) type PollInPlace<IO> =
    fn(
        &mut IO,
        &mut Context<'_>,
        &mut dyn FnMut(&mut [u8]) -> usize,
    ) -> Poll<Result<usize, <IO as embedded_io_async::ErrorType>::Error>>;
