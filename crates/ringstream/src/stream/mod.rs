//! [`Stream`]: a buffered async byte stream whose memory does not grow with
//! the payload.
//!
//! A `Stream` wraps any `AsyncRead + AsyncWrite` transport (TCP, Unix
//! sockets, TLS, [`tokio::io::duplex`]) with a read buffer and a write
//! buffer:
//!
//! * **Reading.** Operating-system reads land directly in a [`BytesMut`]
//!   block of at least [`StreamOptions::minimum_read_size`] bytes. Data is
//!   handed to the caller zero-copy as [`Bytes`] split off that block. Once
//!   the caller has dropped every chunk of a block, the next read reclaims
//!   the same allocation, so a steady stream of reads allocates nothing.
//! * **Writing.** Small writes are gathered in a write buffer and go out
//!   once [`StreamOptions::minimum_write_size`] bytes are pending; large
//!   payloads are sent with one vectored write together with what is
//!   buffered, without being copied.
//! * **Request/response.** Every read from the transport first writes out
//!   pending data, so two peers that talk in turns never wait on each other.
//!
//! # Errors
//!
//! The async methods return [`Error`]; the `poll_*` methods, the building
//! blocks of the `AsyncRead` / `AsyncWrite` impls, return [`io::Error`]
//! as those traits require. Either way transport errors are passed on
//! unchanged (a peer that resets the connection surfaces as
//! [`Error::Io`] of kind [`io::ErrorKind::ConnectionReset`]), and
//! [`Error::kind`] tells the cases apart. In addition:
//!
//! | kind | when |
//! |------|------|
//! | [`NotConnected`](io::ErrorKind::NotConnected) | any operation after [`Stream::close`] |
//! | [`BrokenPipe`](io::ErrorKind::BrokenPipe) | a write after a failed write ([`Stream::is_broken`]) or after [`Stream::close_write`] |
//! | [`WriteZero`](io::ErrorKind::WriteZero) | the transport accepted no bytes of a write |
//! | [`UnexpectedEof`](io::ErrorKind::UnexpectedEof) | [`Stream::read_exactly`] ran out of data |
//! | [`InvalidData`](io::ErrorKind::InvalidData) | a pattern or line was not found within the caller's limit or within [`StreamOptions::maximum_buffer_size`] |
//! | [`InvalidInput`](io::ErrorKind::InvalidInput) | [`Stream::peek`] asked for more than [`StreamOptions::maximum_buffer_size`]; [`Stream::try_consume`] or [`Stream::try_split_buffered`] asked for more than is buffered ([`Error::NotBuffered`]) |

mod buffers;
mod io_impls;
mod options;
pub(crate) mod pool;
mod read;
mod scan;
mod write;

use std::fmt;
use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

pub use options::StreamOptions;

use crate::error::Error;

/// A buffered async byte stream over a transport `T`.
///
/// See the [module documentation](self) for the buffering model and the
/// errors it reports.
///
/// # Examples
///
/// ```
/// use ringstream::Stream;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), ringstream::Error> {
/// let (client, server) = tokio::io::duplex(1024);
/// let mut client = Stream::new(client);
/// let mut server = Stream::new(server);
///
/// client.puts(b"GET / HTTP/1.1").await?;
/// let line = server.gets(1024).await?.expect("a line");
/// assert_eq!(&line[..], b"GET / HTTP/1.1\n");
/// # Ok(())
/// # }
/// ```
pub struct Stream<T> {
    io: T,
    options: StreamOptions,
    /// Unread bytes; its spare capacity receives the next read.
    read_buf: BytesMut,
    /// Pending output; `write_buf[write_pos..]` is not sent yet.
    write_buf: Vec<u8>,
    write_pos: usize,
    /// The transport returned end of file.
    eof: bool,
    /// The last read from the transport filled all the room it was given.
    last_read_full: bool,
    /// [`Stream::close`] was called.
    closed: bool,
    /// A write failed; no later write is attempted.
    broken: bool,
    /// The write half was shut down.
    write_closed: bool,
    /// Bytes were written to `T` since its last `poll_flush`.
    needs_flush: bool,
}

impl<T> fmt::Debug for Stream<T>
where
    T: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stream")
            .field("io", &self.io)
            .field("options", &self.options)
            .field("buffered", &self.read_buf.len())
            .field("pending_write", &self.pending_write_len())
            .field("eof", &self.eof)
            .field("closed", &self.closed)
            .field("broken", &self.broken)
            .field("write_closed", &self.write_closed)
            .finish()
    }
}

pub(crate) fn closed_error() -> io::Error {
    io::Error::new(io::ErrorKind::NotConnected, "stream is closed")
}

pub(crate) fn broken_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::BrokenPipe,
        "stream is broken: an earlier write failed",
    )
}

pub(crate) fn write_closed_error() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "write half is closed")
}

impl<T> Stream<T> {
    fn pending_write_len(&self) -> usize {
        self.write_buf.len().saturating_sub(self.write_pos)
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> Stream<T> {
    /// Wraps `io` with the [default options](StreamOptions::DEFAULT).
    ///
    /// No buffer is allocated until the first read or write.
    pub fn new(io: T) -> Self {
        Self::with_options(io, StreamOptions::DEFAULT)
    }

    /// Wraps `io` with the given buffer sizes.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::{Stream, StreamOptions};
    ///
    /// let (io, _peer) = tokio::io::duplex(64);
    /// let options = StreamOptions { minimum_read_size: 16 * 1024, ..StreamOptions::DEFAULT };
    /// let stream = Stream::with_options(io, options);
    /// assert_eq!(stream.options().minimum_read_size, 16 * 1024);
    /// ```
    pub fn with_options(io: T, options: StreamOptions) -> Self {
        Stream {
            io,
            options: options.normalized(),
            read_buf: BytesMut::new(),
            write_buf: Vec::new(),
            write_pos: 0,
            eof: false,
            last_read_full: false,
            closed: false,
            broken: false,
            write_closed: false,
            needs_flush: false,
        }
    }

    /// The transport.
    pub fn get_ref(&self) -> &T {
        &self.io
    }

    /// The transport, mutably. Reading from or writing to it directly
    /// bypasses the buffers and can reorder data.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.io
    }

    /// Unwraps the transport. Buffered unread data and unsent writes are
    /// dropped.
    pub fn into_inner(self) -> T {
        self.io
    }

    /// The buffer sizes in effect (after out-of-range values were brought
    /// into range).
    pub fn options(&self) -> &StreamOptions {
        &self.options
    }

    /// Whether a write failed. A broken stream never reports later writes
    /// as sent: every write and flush fails with
    /// [`BrokenPipe`](io::ErrorKind::BrokenPipe), and unsent data was
    /// discarded when the failure was reported. Reading still works.
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// The unread bytes in the read buffer.
    pub fn buffered(&self) -> &[u8] {
        &self.read_buf
    }

    /// The unread bytes in the read buffer, to change in place (a
    /// WebSocket unmasks its frames' payload where it lies, before handing
    /// it out without a copy).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::Stream;
    /// use tokio::io::AsyncWriteExt;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let (io, mut peer) = tokio::io::duplex(64);
    /// peer.write_all(b"abc").await.unwrap();
    /// let mut stream = Stream::new(io);
    /// stream.fill().await.unwrap();
    /// stream.buffered_mut().make_ascii_uppercase();
    /// assert_eq!(&stream.split_buffered(3)[..], b"ABC");
    /// # });
    /// ```
    pub fn buffered_mut(&mut self) -> &mut [u8] {
        &mut self.read_buf
    }

    /// Drops the first `n` buffered bytes.
    ///
    /// # Panics
    ///
    /// Panics if `n > self.buffered().len()`; [`try_consume`](Self::try_consume)
    /// does not.
    pub fn consume(&mut self, n: usize) {
        if let Err(e) = self.try_consume(n) {
            panic!("consume({n}): {e}");
        }
    }

    /// Drops the first `n` buffered bytes if there are that many.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::{Error, Stream};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let (io, _peer) = tokio::io::duplex(64);
    /// let mut stream = Stream::new(io);
    /// let err = stream.try_consume(1).unwrap_err();
    /// assert!(matches!(err, Error::NotBuffered { requested: 1, buffered: 0 }));
    /// assert!(stream.try_consume(0).is_ok());
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::NotBuffered`] when fewer than `n` bytes are buffered;
    /// nothing is dropped then.
    pub fn try_consume(&mut self, n: usize) -> Result<(), Error> {
        self.check_buffered(n)?;
        bytes::Buf::advance(&mut self.read_buf, n);
        Ok(())
    }

    #[inline]
    fn check_buffered(&self, n: usize) -> Result<(), Error> {
        let buffered = self.read_buf.len();
        if n > buffered {
            return Err(Error::NotBuffered {
                requested: n,
                buffered,
            });
        }
        Ok(())
    }

    /// Hands off the first `n` buffered bytes without copying them.
    ///
    /// # Panics
    ///
    /// Panics if `n > self.buffered().len()`;
    /// [`try_split_buffered`](Self::try_split_buffered) does not.
    #[inline]
    pub fn split_buffered(&mut self, n: usize) -> Bytes {
        match self.try_split_buffered(n) {
            Ok(bytes) => bytes,
            Err(e) => panic!("split_buffered({n}): {e}"),
        }
    }

    /// Hands off the first `n` buffered bytes without copying them.
    ///
    /// # Errors
    ///
    /// [`Error::NotBuffered`] when fewer than `n` bytes are buffered;
    /// nothing is taken then.
    #[inline]
    pub fn try_split_buffered(&mut self, n: usize) -> Result<Bytes, Error> {
        self.check_buffered(n)?;
        Ok(self.read_buf.split_to(n).freeze())
    }

    /// Writes out pending data, then performs **one** read from the
    /// transport, appended to the read buffer. Returns the number of bytes
    /// read: `Ok(0)` means end of file (and stays so).
    ///
    /// The read buffer grows by at least
    /// [`minimum_read_size`](StreamOptions::minimum_read_size) when its
    /// spare room is short, reusing its allocation when every chunk handed
    /// off from it has been dropped.
    pub fn poll_fill(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        self.poll_fill_hint(cx, 0)
    }

    /// Like [`poll_fill`](Self::poll_fill), for a caller that knows it
    /// wants `want` bytes buffered (a large request body, say): the read
    /// is sized for them, between `minimum_read_size` and
    /// `maximum_read_size`, so a long transfer takes fewer, larger reads.
    /// Once the chunks handed off from a larger block are dropped, the
    /// block is reused like any other.
    pub fn poll_fill_to(&mut self, cx: &mut Context<'_>, want: usize) -> Poll<io::Result<usize>> {
        self.poll_fill_hint(cx, want)
    }

    /// Whether the last read from the transport filled all the room it
    /// was given: more data was probably waiting, so a reader of a long
    /// transfer may ask for a larger read next
    /// ([`poll_fill_to`](Self::poll_fill_to)).
    pub fn last_read_full(&self) -> bool {
        self.last_read_full
    }

    /// Async twin of [`poll_fill`](Self::poll_fill).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: data read is appended to the buffer synchronously in
    /// the final poll, and pending writes that went out stay sent.
    pub async fn fill(&mut self) -> Result<usize, Error> {
        Ok(poll_fn(|cx| self.poll_fill_hint(cx, 0)).await?)
    }

    /// Appends `data` to the write buffer without any I/O. It goes out with
    /// the next flush, the next write that crosses the threshold, or
    /// before the next read from the transport.
    pub fn buffer_write(&mut self, data: &[u8]) {
        self.reserve_write(data.len());
        self.write_buf.extend_from_slice(data);
    }

    /// The write buffer, to append to in place (as
    /// [`buffer_write`](Self::buffer_write) does, without the intermediate
    /// slice), with room for at least `additional` more bytes. Callers only
    /// ever append: the bytes already in it may be partly sent.
    pub(crate) fn write_buffer_for(&mut self, additional: usize) -> &mut Vec<u8> {
        self.reserve_write(additional);
        &mut self.write_buf
    }

    /// The number of bytes in the write buffer not sent yet.
    pub fn pending_write(&self) -> usize {
        self.pending_write_len()
    }

    /// Writes the write buffer out to the transport, without flushing the
    /// transport itself.
    ///
    /// # Errors
    ///
    /// A transport error marks the stream [broken](Self::is_broken) and
    /// discards the unsent data; it is returned once, later calls fail
    /// with [`BrokenPipe`](io::ErrorKind::BrokenPipe).
    pub fn poll_flush_buffer(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.closed {
            return Poll::Ready(Err(closed_error()));
        }
        if self.broken {
            return Poll::Ready(Err(broken_error()));
        }
        if self.pending_write_len() == 0 {
            self.write_buf.clear();
            self.write_pos = 0;
            return Poll::Ready(Ok(()));
        }
        if self.write_closed {
            return Poll::Ready(Err(write_closed_error()));
        }
        while self.write_pos < self.write_buf.len() {
            let pending = self.write_buf.get(self.write_pos..).unwrap_or_default();
            match ready!(Pin::new(&mut self.io).poll_write(cx, pending)) {
                Ok(0) => return Poll::Ready(Err(self.fail_write(write_zero()))),
                Ok(n) => {
                    self.needs_flush = true;
                    self.write_pos = self.write_pos.saturating_add(n).min(self.write_buf.len());
                }
                Err(e) => return Poll::Ready(Err(self.fail_write(e))),
            }
        }
        self.write_buf.clear();
        self.write_pos = 0;
        Poll::Ready(Ok(()))
    }

    /// Marks the stream broken, discards unsent data and returns `e`.
    fn fail_write(&mut self, e: io::Error) -> io::Error {
        self.broken = true;
        self.write_buf = Vec::new();
        self.write_pos = 0;
        self.needs_flush = false;
        e
    }

    #[inline]
    fn reserve_write(&mut self, additional: usize) {
        if self.write_buf.capacity() == 0 {
            self.take_write_buffer(additional);
        } else {
            self.write_buf.reserve(additional);
        }
    }

    /// A write buffer for a stream that holds none: from the thread's
    /// pool, or a new one.
    #[inline(never)]
    fn take_write_buffer(&mut self, additional: usize) {
        let block = self.options.minimum_write_size.max(additional);
        match pool::take_write(block) {
            Some(buffer) => self.write_buf = buffer,
            None => self.write_buf.reserve(block),
        }
    }

    pub(crate) fn check_open(&self) -> io::Result<()> {
        if self.closed {
            Err(closed_error())
        } else {
            Ok(())
        }
    }

    /// Writes out pending data and flushes the transport if anything was
    /// written since its last flush. A broken stream skips this so that
    /// reading keeps working.
    fn poll_flush_before_read(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.broken {
            return Poll::Ready(Ok(()));
        }
        if self.pending_write_len() > 0 && !self.write_closed {
            ready!(self.poll_flush_buffer(cx))?;
        }
        if self.needs_flush {
            if let Err(e) = ready!(Pin::new(&mut self.io).poll_flush(cx)) {
                return Poll::Ready(Err(self.fail_write(e)));
            }
            self.needs_flush = false;
        }
        Poll::Ready(Ok(()))
    }

    /// Makes room for the next read and returns how many bytes it may
    /// ask for. `hint` is the number of buffered bytes the caller waits
    /// for (0 when any amount will do).
    fn prepare_read_space(&mut self, hint: usize) -> usize {
        let minimum = self.options.minimum_read_size;
        let len = self.read_buf.len();
        let spare = self.read_buf.capacity().saturating_sub(len);
        let need = hint.saturating_sub(len);
        let want = need.clamp(minimum, self.options.maximum_read_size);
        if self.read_buf.capacity() == 0 {
            if let Some(block) = pool::take_read(want) {
                self.read_buf = block;
            }
        }
        // Reuse the allocation when every chunk handed off from it has been
        // dropped (this also moves the unread bytes to its start).
        // Otherwise read into what is left of the block while it is a
        // sizeable part of one, and allocate a new block only when the
        // caller needs more room or the block is nearly used up.
        if spare < want
            && !self.read_buf.try_reclaim(want)
            && (need > spare || spare == 0 || spare < minimum / 4)
        {
            self.read_buf.reserve(want);
        }
        let spare = self.read_buf.capacity().saturating_sub(self.read_buf.len());
        spare.min(self.options.maximum_read_size)
    }

    /// [`poll_fill`](Self::poll_fill) sizing the read for a caller that
    /// waits until `hint` bytes are buffered.
    fn poll_fill_hint(&mut self, cx: &mut Context<'_>, hint: usize) -> Poll<io::Result<usize>> {
        self.check_open()?;
        if self.eof {
            self.release_read_block();
            return Poll::Ready(Ok(0));
        }
        ready!(self.poll_flush_before_read(cx))?;
        let size = self.prepare_read_space(hint);
        let len = self.read_buf.len();
        let spare = self.read_buf.spare_capacity_mut();
        let Some(spare) = spare.get_mut(..size) else {
            return Poll::Ready(Err(io::Error::other("read buffer has no spare room")));
        };
        let start = spare.as_ptr();
        let mut read_buf = ReadBuf::uninit(spare);
        ready!(Pin::new(&mut self.io).poll_read(cx, &mut read_buf))?;
        let filled = read_buf.filled();
        let n = filled.len();
        if n > size || (n > 0 && filled.as_ptr() != start.cast::<u8>()) {
            return Poll::Ready(Err(io::Error::other(
                "transport replaced the buffer it was given to read into",
            )));
        }
        // SAFETY: `ReadBuf` only reports bytes as filled once they are
        // initialised, the check above proves they are the first `n` bytes
        // of the spare capacity we lent it, and `n <= size <= spare
        // capacity`, so `len + n` bytes from the start are initialised and
        // within capacity.
        unsafe { self.read_buf.set_len(len + n) };
        self.last_read_full = n == size;
        if n == 0 {
            self.eof = true;
            self.release_read_block();
        }
        Poll::Ready(Ok(n))
    }

    /// Async form of [`poll_fill_hint`](Self::poll_fill_hint).
    async fn fill_hint(&mut self, hint: usize) -> io::Result<usize> {
        poll_fn(|cx| self.poll_fill_hint(cx, hint)).await
    }
}

fn write_zero() -> io::Error {
    io::Error::new(io::ErrorKind::WriteZero, "transport accepted no bytes")
}
