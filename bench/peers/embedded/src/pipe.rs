//! The in-memory connection both servers are served over: one TCP
//! socket's worth of buffers (1 KiB to receive, 1 KiB to transmit, as
//! picoserve's examples give embassy-net), polled on one thread.
//!
//! The server side behaves as an embassy-net `TcpSocket` does: a read
//! waits (returns `Pending`) while the receive buffer is empty, a write
//! takes what fits in the transmit buffer and waits while it is full,
//! `write_with` lends the free part of the transmit buffer (picoserve's
//! way of formatting straight into the socket), and a flush waits until
//! the client has taken everything. The client side is the harness's
//! loop: between two polls of the server it takes all the transmitted
//! bytes and puts the next request into the receive buffer, as a network
//! that is never the bottleneck.

use core::cell::{Cell, RefCell};
use core::convert::Infallible;
use core::future::poll_fn;
use core::task::Poll;

/// Bytes of each of the socket's buffers.
pub const SOCKET_BUF: usize = 1024;

/// One direction of the socket.
struct Half {
    buf: [u8; SOCKET_BUF],
    start: usize,
    end: usize,
}

impl Half {
    const fn new() -> Half {
        Half {
            buf: [0; SOCKET_BUF],
            start: 0,
            end: 0,
        }
    }
}

/// The socket between the harness's client and a server.
pub struct Pipe {
    /// Client to server: the socket's receive buffer.
    rx: RefCell<Half>,
    /// Server to client: the socket's transmit buffer.
    tx: RefCell<Half>,
    /// The client has closed its side: a read of an empty buffer is EOF.
    eof: Cell<bool>,
    /// Write calls that moved bytes (`write` and `write_with`).
    pub writes: Cell<usize>,
}

impl Pipe {
    pub const fn new() -> Pipe {
        Pipe {
            rx: RefCell::new(Half::new()),
            tx: RefCell::new(Half::new()),
            eof: Cell::new(false),
            writes: Cell::new(0),
        }
    }

    /// The client's side: puts `data` into the receive buffer; how many
    /// bytes fitted.
    pub fn client_send(&self, data: &[u8]) -> usize {
        let mut rx = self.rx.borrow_mut();
        if rx.start == rx.end {
            rx.start = 0;
            rx.end = 0;
        }
        let end = rx.end;
        let n = data.len().min(SOCKET_BUF - end);
        rx.buf[end..end + n].copy_from_slice(&data[..n]);
        rx.end += n;
        n
    }

    /// The client's side: hands everything transmitted to `take`, then
    /// empties the transmit buffer; how many bytes there were.
    pub fn client_recv(&self, take: impl FnOnce(&[u8])) -> usize {
        let mut tx = self.tx.borrow_mut();
        let n = tx.end - tx.start;
        if n > 0 {
            take(&tx.buf[tx.start..tx.end]);
        }
        tx.start = 0;
        tx.end = 0;
        n
    }

    /// The client closes its side.
    pub fn client_close(&self) {
        self.eof.set(true);
    }

    /// Ready for a new connection.
    pub fn reset(&self) {
        *self.rx.borrow_mut() = Half::new();
        *self.tx.borrow_mut() = Half::new();
        self.eof.set(false);
        self.writes.set(0);
    }
}

impl Default for Pipe {
    fn default() -> Pipe {
        Pipe::new()
    }
}

/// The server's end of a [`Pipe`]: both halves, and each half of
/// picoserve's split.
#[derive(Clone, Copy)]
pub struct Io<'p>(pub &'p Pipe);

impl embedded_io_async::ErrorType for Io<'_> {
    type Error = Infallible;
}

impl embedded_io_async::Read for Io<'_> {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
        let pipe = self.0;
        poll_fn(|_| {
            let mut rx = pipe.rx.borrow_mut();
            let available = rx.end - rx.start;
            if available == 0 {
                return if pipe.eof.get() || buf.is_empty() {
                    Poll::Ready(Ok(0))
                } else {
                    Poll::Pending
                };
            }
            let n = available.min(buf.len());
            let start = rx.start;
            buf[..n].copy_from_slice(&rx.buf[start..start + n]);
            rx.start += n;
            Poll::Ready(Ok(n))
        })
        .await
    }
}

impl embedded_io_async::Write for Io<'_> {
    async fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
        let pipe = self.0;
        if buf.is_empty() {
            return Ok(0);
        }
        poll_fn(|_| {
            let mut tx = pipe.tx.borrow_mut();
            let free = SOCKET_BUF - tx.end;
            if free == 0 {
                return Poll::Pending;
            }
            let n = free.min(buf.len());
            let end = tx.end;
            tx.buf[end..end + n].copy_from_slice(&buf[..n]);
            tx.end += n;
            pipe.writes.set(pipe.writes.get() + 1);
            Poll::Ready(Ok(n))
        })
        .await
    }

    async fn flush(&mut self) -> Result<(), Infallible> {
        let pipe = self.0;
        poll_fn(|_| {
            let tx = pipe.tx.borrow();
            if tx.end == tx.start {
                Poll::Ready(Ok(()))
            } else {
                Poll::Pending
            }
        })
        .await
    }
}

impl picoserve::io::Write for Io<'_> {
    /// As embassy-net's `TcpWriter::write_with`: waits for room, then
    /// lends the free part of the transmit buffer.
    async fn write_with<F: FnOnce(picoserve::mem::BorrowedCursor<'_>) -> R, R>(
        &mut self,
        f: F,
    ) -> Result<R, Infallible> {
        let pipe = self.0;
        poll_fn(|_| {
            let tx = pipe.tx.borrow();
            if tx.end < SOCKET_BUF {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
        let mut tx = pipe.tx.borrow_mut();
        let end = tx.end;
        let mut lent = picoserve::mem::BorrowedBuffer::new(&mut tx.buf[end..]);
        let output = f(lent.unfilled());
        let n = lent.len();
        tx.end += n;
        if n > 0 {
            pipe.writes.set(pipe.writes.get() + 1);
        }
        Ok(output)
    }
}

impl ringstream_embedded::WriteInPlace for Io<'_> {
    /// As embassy-net's `TcpSocket` (which ringstream-embedded's pool
    /// serves with): waits for room, then lends the free part of the
    /// transmit buffer. Bytes left there unsent stay where they are: the
    /// client's side only empties the buffer, so the next free part still
    /// holds them.
    fn poll_write_in_place(
        &mut self,
        _cx: &mut core::task::Context<'_>,
        fill: &mut dyn FnMut(&mut [u8]) -> usize,
    ) -> Poll<Result<usize, Infallible>> {
        let mut tx = self.0.tx.borrow_mut();
        if tx.end == SOCKET_BUF {
            return Poll::Pending;
        }
        let end = tx.end;
        let n = fill(&mut tx.buf[end..]);
        tx.end += n;
        if n > 0 {
            self.0.writes.set(self.0.writes.get() + 1);
        }
        Poll::Ready(Ok(n))
    }
}

/// The harness's "runtime", for picoserve's `Socket` and `Timer`.
pub struct Bench;

/// picoserve's socket: the pipe, split into the same [`Io`] twice.
pub struct PicoSocket<'p>(pub &'p Pipe);

impl<'p> picoserve::io::Socket<Bench> for PicoSocket<'p> {
    type Error = Infallible;
    type ReadHalf<'a>
        = Io<'a>
    where
        Self: 'a;
    type WriteHalf<'a>
        = Io<'a>
    where
        Self: 'a;

    fn split(&mut self) -> (Io<'_>, Io<'_>) {
        (Io(self.0), Io(self.0))
    }

    async fn abort<T: picoserve::Timer<Bench>>(
        self,
        _timeouts: &picoserve::Timeouts,
        _timer: &T,
    ) -> Result<(), picoserve::Error<Infallible>> {
        Ok(())
    }

    async fn shutdown<T: picoserve::Timer<Bench>>(
        self,
        _timeouts: &picoserve::Timeouts,
        _timer: &T,
    ) -> Result<(), picoserve::Error<Infallible>> {
        Ok(())
    }
}

/// picoserve's timer on embassy-time, as its own `EmbassyTimer` (which
/// needs its `embassy` feature, and embassy-net with it).
pub struct EmbassyTimer;

impl picoserve::Timer<Bench> for EmbassyTimer {
    fn delay(&self, duration: picoserve::time::Duration) -> impl core::future::Future<Output = ()> {
        embassy_time::Timer::after(embassy_time::Duration::from_millis(duration.as_millis()))
    }
}
