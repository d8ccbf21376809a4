//! The connection loop: read a head, let the application answer, keep
//! the connection or close it — each step as the core decides.

use core::cell::Cell;
use core::future::{poll_fn, Future};
use core::pin::pin;
use core::task::{Context, Poll, Waker};

use embassy_time::{with_deadline, with_timeout, Instant};
use embedded_io_async::{Read, Write};
use ringstream_core::h1::{write_error_response, Exchange, Field, HeadParser, Next};
use ringstream_core::{Limits, SliceBuf};

use super::{App, Error, Request, Responder};
use crate::in_place::PollInPlace;
use crate::{Config, WriteInPlace};

/// Field slots of a request head: a head with more fields is answered 431
/// ([`TooManyFields`](ringstream_core::Error::TooManyFields)). Each slot
/// is two slices (16 bytes on a 32-bit target) in the connection's future.
pub const FIELDS: usize = 24;

/// The memory of one connection: a receive buffer of `RX` bytes and a
/// transmit buffer of `TX` bytes, the caller's (a `static`, a task's
/// state).
///
/// The receive buffer holds the request head while the handler runs, and
/// the request body and pipelined requests stream through the rest of it:
/// its size bounds the request head (a larger head is answered 431). The
/// transmit buffer holds the response head and body bytes on their way
/// out; one `write!` may produce at most half of it. `TX` must be at least
/// 128, so that an error response fits (a compile-time check).
///
/// # Examples
///
/// ```
/// use ringstream_embedded::http::Buffers;
///
/// static mut BUFFERS: Buffers<1024, 512> = Buffers::new();
/// assert_eq!(core::mem::size_of::<Buffers<1024, 512>>(), 1536);
/// ```
#[derive(Debug)]
pub struct Buffers<const RX: usize = 1024, const TX: usize = 512> {
    rx: [u8; RX],
    tx: [u8; TX],
}

impl<const RX: usize, const TX: usize> Buffers<RX, TX> {
    /// Zeroed buffers, usable in a `static` initialiser.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::http::Buffers;
    ///
    /// // 1 KiB to receive, 512 bytes to transmit: the connection's only memory
    /// // for bytes, besides its future.
    /// let buffers = Buffers::<1024, 512>::new();
    /// assert!(core::mem::size_of_val(&buffers) >= 1024 + 512);
    /// ```
    pub const fn new() -> Self {
        const { assert!(TX >= 128, "the transmit buffer needs at least 128 bytes") };
        Buffers {
            rx: [0; RX],
            tx: [0; TX],
        }
    }
}

impl<const RX: usize, const TX: usize> Default for Buffers<RX, TX> {
    fn default() -> Self {
        Self::new()
    }
}

/// Serves HTTP/1.1 requests on `io` with `app` until the connection ends.
///
/// Each request: the head is read into the receive buffer until the core's
/// [`HeadParser`] says it is complete (a head the core refuses is answered
/// with its status — 400, 414, 431, 501, 505 — and the connection closed);
/// `app` answers it through a [`Responder`]; then the core's
/// [`Exchange::after_response`] keeps the connection, drains the unread
/// rest of the request body (at most [`Config::drain_limit`] bytes) or
/// closes. Pipelined requests already received are served in order, and
/// the responses are flushed when no request is waiting.
///
/// Deadlines ([`Config`]): the head must arrive within `head_timeout`
/// (else 408, or a silent close if nothing came), a kept-alive connection
/// may stay idle for `idle_timeout`, and each body read, response write or
/// flush may stall for `io_timeout`.
///
/// The connection is used whole (never split) and not closed here: the
/// caller closes it when this returns (the `embassy-net` pool does so with
/// a lingering close, so that the last response is not destroyed by a
/// reset).
///
/// # Examples
///
/// Over any `Read + Write` connection, here one that has just been given
/// a request and keeps what is written to it:
///
/// ```
/// # use core::convert::Infallible;
/// use ringstream_embedded::embedded_io_async::{ErrorType, Read, Write};
/// use ringstream_embedded::http::{serve_connection, App, Buffers, Error, Request, Responder, Sent};
/// use ringstream_embedded::Config;
///
/// struct Hello;
///
/// impl App for Hello {
///     async fn handle<IO: Read + Write>(
///         &self,
///         _request: &Request<'_>,
///         responder: &mut Responder<'_, IO>,
///     ) -> Result<Sent, Error<IO::Error>> {
///         responder.send(200, &[], b"hello").await
///     }
/// }
///
/// /// A request in, the response out.
/// struct Wire<'a> { input: &'a [u8], output: [u8; 256], written: usize }
///
/// impl ErrorType for Wire<'_> { type Error = Infallible; }
/// impl Read for Wire<'_> {
///     async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
///         let n = buf.len().min(self.input.len());
///         buf[..n].copy_from_slice(&self.input[..n]);
///         self.input = &self.input[n..];
///         Ok(n)
///     }
/// }
/// impl Write for Wire<'_> {
///     async fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
///         let n = buf.len().min(self.output.len() - self.written);
///         self.output[self.written..self.written + n].copy_from_slice(&buf[..n]);
///         self.written += n;
///         Ok(n)
///     }
///     async fn flush(&mut self) -> Result<(), Infallible> {
///         Ok(())
///     }
/// }
///
/// async fn serve() {
///     let mut wire = Wire {
///         input: b"GET / HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n",
///         output: [0; 256],
///         written: 0,
///     };
///     let mut buffers = Buffers::<1024, 512>::new();
///     serve_connection(&mut wire, &Hello, &mut buffers, &Config::DEFAULT).await.unwrap();
///     assert_eq!(
///         &wire.output[..wire.written],
///         b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhello"
///     );
/// }
/// # // This connection never waits: poll the server to its end.
/// # let mut serve = core::pin::pin!(serve());
/// # let mut cx = core::task::Context::from_waker(std::task::Waker::noop());
/// # while core::future::Future::poll(serve.as_mut(), &mut cx).is_pending() {}
/// ```
///
/// # Errors
///
/// `Ok(())` when the connection ended by the rules: the client closed it
/// or stayed silent between requests, a response closed it (`Connection:
/// close`, HTTP/1.0, a body left unread past the drain limit), or a
/// request head the core refused was answered. An error otherwise: the
/// connection failed ([`Error::Io`]), a body read or response write
/// stalled ([`Error::TimedOut`]), the client left within a body
/// ([`Error::Closed`]), or the handler returned an error (answered with
/// its status when the response had not started).
///
/// # Cancel safety
///
/// Dropping the future abandons the connection mid-exchange; close it
/// then (the pool resets it at its deadline).
pub async fn serve_connection<IO, A, const RX: usize, const TX: usize>(
    io: &mut IO,
    app: &A,
    buffers: &mut Buffers<RX, TX>,
    config: &Config,
) -> Result<(), Error<IO::Error>>
where
    IO: Read + Write,
    A: App,
{
    serve(
        io,
        app,
        &mut buffers.rx,
        &mut buffers.tx,
        config,
        None,
        None,
    )
    .await
}

/// A connection's line to whoever lent it, for
/// [`serve_connection_with`]: the server says when the connection waits
/// idle for its next request, and the lender can ask it to give its slot
/// up — it then closes quietly at its next idle wait, at once if it is
/// waiting (the `embassy-net` pool asks when a client is queued and no
/// worker is free, and when it shuts down).
///
/// Cells, no heap, no lock: the server and the lender run on one
/// executor (a `Release` is not `Sync`).
///
/// # Examples
///
/// ```
/// use ringstream_embedded::http::Release;
///
/// let release = Release::new();
/// assert_eq!(release.idle_since(), None);
/// release.request();
/// assert!(release.is_requested());
/// release.reset();
/// assert!(!release.is_requested());
/// ```
#[derive(Default)]
pub struct Release {
    requested: Cell<bool>,
    /// Since when the connection waits idle for its next request.
    idle_since: Cell<Option<Instant>>,
    /// The serving future's waker, during its idle wait.
    connection: Cell<Option<Waker>>,
    /// The lender's waker, woken when the connection starts to wait idle.
    lender: Cell<Option<Waker>>,
}

impl core::fmt::Debug for Release {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Release")
            .field("requested", &self.requested.get())
            .field("idle_since", &self.idle_since.get())
            .finish_non_exhaustive()
    }
}

impl Release {
    /// A release not requested, for a connection not idle.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::http::Release;
    ///
    /// let release = Release::new();
    /// assert!(!release.is_requested());
    /// assert_eq!(release.idle_since(), None);
    /// release.request();
    /// assert!(release.is_requested());
    /// // Ready for the next connection.
    /// release.reset();
    /// assert!(!release.is_requested());
    /// ```
    pub const fn new() -> Self {
        Release {
            requested: Cell::new(false),
            idle_since: Cell::new(None),
            connection: Cell::new(None),
            lender: Cell::new(None),
        }
    }

    /// Asks the connection to close at its next idle wait between
    /// requests (or while it waits for its first request with nothing
    /// received), at once if it waits now. A request in progress, and any
    /// request already received behind it, is served first.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::http::Release;
    ///
    /// let release = Release::new();
    /// release.request();
    /// assert!(release.is_requested());
    /// // Asking twice is asking once.
    /// release.request();
    /// assert!(release.is_requested());
    /// ```
    pub fn request(&self) {
        self.requested.set(true);
        if let Some(waker) = self.connection.take() {
            waker.wake();
        }
    }

    /// Whether [`request`](Self::request) was called since the last
    /// [`reset`](Self::reset).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::http::Release;
    ///
    /// let release = Release::new();
    /// assert!(!release.is_requested());
    /// release.request();
    /// assert!(release.is_requested());
    /// ```
    pub fn is_requested(&self) -> bool {
        self.requested.get()
    }

    /// Since when the connection has waited, kept alive and idle, for its
    /// next request; `None` while it reads or answers one (and before its
    /// first request).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::http::Release;
    ///
    /// // A connection that has not yet served a request is not idle.
    /// assert_eq!(Release::new().idle_since(), None);
    /// ```
    pub fn idle_since(&self) -> Option<Instant> {
        self.idle_since.get()
    }

    /// Wakes `waker` the next time the connection starts to wait idle.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::http::Release;
    ///
    /// let release = Release::new();
    /// // The lender's task, woken when the connection starts to wait idle.
    /// release.watch(std::task::Waker::noop());
    /// assert_eq!(release.idle_since(), None);
    /// ```
    pub fn watch(&self, waker: &Waker) {
        match self.lender.take() {
            Some(w) if w.will_wake(waker) => self.lender.set(Some(w)),
            _ => self.lender.set(Some(waker.clone())),
        }
    }

    /// Makes the release ready for another connection: not requested, not
    /// idle, no waker.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::http::Release;
    ///
    /// let release = Release::new();
    /// release.request();
    /// release.reset();
    /// assert!(!release.is_requested());
    /// assert_eq!(release.idle_since(), None);
    /// ```
    pub fn reset(&self) {
        self.requested.set(false);
        self.idle_since.set(None);
        self.connection.set(None);
        self.lender.set(None);
    }

    fn set_idle(&self, since: Option<Instant>) {
        self.idle_since.set(since);
        if since.is_some() {
            if let Some(waker) = self.lender.take() {
                waker.wake();
            }
        }
    }

    fn poll_requested(&self, cx: &mut Context<'_>) -> Poll<()> {
        if self.requested.get() {
            return Poll::Ready(());
        }
        match self.connection.take() {
            Some(w) if w.will_wake(cx.waker()) => self.connection.set(Some(w)),
            _ => self.connection.set(Some(cx.waker().clone())),
        }
        Poll::Pending
    }
}

/// [`serve_connection`], with a [`Release`] through which the lender of
/// the connection sees it wait idle and can ask it to close then.
///
/// A kept-alive connection marks itself idle (from
/// [`Release::idle_since`]) while it waits for its next request with
/// nothing received, and ends with `Ok(())` as soon as the release is
/// requested; a new connection that has sent nothing ends so too. A
/// request in progress is never cut by the release.
///
/// # Examples
///
/// The lender asks for the connection back once it waits idle, after two
/// kept-alive requests: both were answered, and it ends at once.
///
/// ```
/// use core::pin::pin;
/// use core::task::Poll;
/// use ringstream_embedded::embedded_io_async::{Read, Write};
/// use ringstream_embedded::http::{
///     serve_connection_with, App, Buffers, Error, Release, Request, Responder, Sent,
/// };
/// use ringstream_embedded::Config;
/// # use core::convert::Infallible;
/// # use ringstream_embedded::embedded_io_async::ErrorType;
/// # /// A connection that was given `input`, then stays open and silent,
/// # /// and keeps what is written to it.
/// # struct Wire<'a> { input: &'a [u8], output: [u8; 1024], written: usize }
/// # fn open_wire(input: &[u8]) -> Wire<'_> { Wire { input, output: [0; 1024], written: 0 } }
/// # impl Wire<'_> { fn sent(&self) -> &[u8] { &self.output[..self.written] } }
/// # impl ErrorType for Wire<'_> { type Error = Infallible; }
/// # impl Read for Wire<'_> {
/// #     async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
/// #         if self.input.is_empty() {
/// #             core::future::pending::<()>().await;
/// #         }
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
/// # fn poll_once<F: core::future::Future>(f: core::pin::Pin<&mut F>) -> Poll<F::Output> {
/// #     f.poll(&mut core::task::Context::from_waker(std::task::Waker::noop()))
/// # }
///
/// struct Hello;
///
/// impl App for Hello {
///     async fn handle<IO: Read + Write>(
///         &self,
///         _request: &Request<'_>,
///         responder: &mut Responder<'_, IO>,
///     ) -> Result<Sent, Error<IO::Error>> {
///         responder.send(200, &[], b"hello").await
///     }
/// }
///
/// // `open_wire` makes an in-memory connection that stays open once its
/// // input is read.
/// let mut io = open_wire(b"GET /a HTTP/1.1\r\nHost: d\r\n\r\nGET /b HTTP/1.1\r\nHost: d\r\n\r\n");
/// let release = Release::new();
/// let mut buffers = Buffers::<1024, 512>::new();
/// let config = Config::DEFAULT;
/// {
///     let mut serving = pin!(serve_connection_with(&mut io, &Hello, &mut buffers, &config, &release));
///     while release.idle_since().is_none() {
///         assert!(poll_once(serving.as_mut()).is_pending());
///     }
///     release.request();
///     assert!(matches!(poll_once(serving.as_mut()), Poll::Ready(Ok(()))));
/// }
/// let sent = core::str::from_utf8(io.sent()).unwrap();
/// assert_eq!(sent.matches("HTTP/1.1 200 OK\r\n").count(), 2);
/// ```
///
/// # Errors
///
/// As [`serve_connection`].
///
/// # Cancel safety
///
/// As [`serve_connection`].
pub async fn serve_connection_with<IO, A, const RX: usize, const TX: usize>(
    io: &mut IO,
    app: &A,
    buffers: &mut Buffers<RX, TX>,
    config: &Config,
    release: &Release,
) -> Result<(), Error<IO::Error>>
where
    IO: Read + Write,
    A: App,
{
    serve(
        io,
        app,
        &mut buffers.rx,
        &mut buffers.tx,
        config,
        Some(release),
        None,
    )
    .await
}

/// [`serve_connection_with`] over a connection that lends its own transmit
/// buffer ([`WriteInPlace`]): `write!` formats a response's body straight
/// into the connection's free transmit space, so the server copies none of
/// those bytes ([`Responder::copied`] counts what it does copy: the head,
/// framing, the overflow of a `write!` that did not fit). The `embassy-net`
/// pool serves HTTP this way. `release` is optional here.
///
/// # Examples
///
/// ```
/// use ringstream_embedded::embedded_io_async::Read;
/// use ringstream_embedded::http::{serve_connection_in_place, App, Buffers, Error};
/// use ringstream_embedded::{Config, WriteInPlace};
///
/// async fn serve<IO: Read + WriteInPlace, A: App>(io: &mut IO, app: &A) -> Result<(), Error<IO::Error>> {
///     let mut buffers = Buffers::<1024, 512>::new();
///     serve_connection_in_place(io, app, &mut buffers, &Config::DEFAULT, None).await
/// }
/// ```
///
/// # Errors
///
/// As [`serve_connection`].
///
/// # Cancel safety
///
/// As [`serve_connection`].
pub async fn serve_connection_in_place<IO, A, const RX: usize, const TX: usize>(
    io: &mut IO,
    app: &A,
    buffers: &mut Buffers<RX, TX>,
    config: &Config,
    release: Option<&Release>,
) -> Result<(), Error<IO::Error>>
where
    IO: Read + WriteInPlace,
    A: App,
{
    serve(
        io,
        app,
        &mut buffers.rx,
        &mut buffers.tx,
        config,
        release,
        Some(IO::poll_write_in_place),
    )
    .await
}

/// What reading a head came to.
enum HeadRead {
    /// A complete head of this many bytes.
    Head(usize),
    /// The client closed, or stayed silent past its deadline, between
    /// requests.
    Closed,
    /// Answer with this status and close.
    Reject(u16),
}

async fn serve<IO: Read + Write, A: App>(
    io: &mut IO,
    app: &A,
    rx: &mut [u8],
    tx: &mut [u8],
    config: &Config,
    release: Option<&Release>,
    in_place: Option<PollInPlace<IO>>,
) -> Result<(), Error<IO::Error>> {
    // A head must fit in the receive buffer, and its target in half of
    // it: a target that cannot fit is too long (414), whatever else the
    // head holds.
    let limits = Limits {
        max_head_len: config.limits.max_head_len.min(rx.len()),
        max_target_len: config.limits.max_target_len.min(rx.len() / 2),
        ..config.limits
    };
    let mut parser = HeadParser::new(limits);
    // Bytes received and not yet served, at the start of `rx`.
    let mut len = 0;
    let mut first = true;
    loop {
        parser.reset();
        let head_len =
            match read_head(io, rx, &mut len, &mut parser, config, first, release).await? {
                HeadRead::Head(n) => n,
                HeadRead::Closed => return Ok(()),
                HeadRead::Reject(status) => return reject(io, tx, status, config).await,
            };
        first = false;
        let (head_bytes, rest) = rx.split_at_mut(head_len);
        let mut fields = [Field::EMPTY; FIELDS];
        // The parser answered this head already: asked again over exactly
        // its bytes, it only splits the fields out once more.
        let Ok(Some(head)) = parser.parse(head_bytes, &mut fields) else {
            return reject(io, tx, 500, config).await;
        };
        let exchange = Exchange::new(&head);
        let request = Request::new(head, &fields);
        let mut responder =
            Responder::new(io, config, exchange, rest, len - head_len, tx, in_place);
        let outcome = app.handle(&request, &mut responder).await;
        let unread = conclude(&mut responder, outcome).await?;
        // Pipelined requests move to the start of the buffer (they are
        // few: what came with the last one).
        match unread {
            Some((from, to)) => {
                rx.copy_within(head_len + from..head_len + to, 0);
                len = to - from;
            }
            None => {
                flush(io, config).await?;
                return Ok(());
            }
        }
        if len == 0 {
            flush(io, config).await?;
        }
    }
}

/// Reads until the core's parser has a complete head in `rx[..len]`, under
/// the head deadline (from the connection's start for the first request,
/// from the head's first byte for a later one) and the idle deadline.
async fn read_head<IO: Read + Write>(
    io: &mut IO,
    rx: &mut [u8],
    len: &mut usize,
    parser: &mut HeadParser,
    config: &Config,
    first: bool,
    release: Option<&Release>,
) -> Result<HeadRead, Error<IO::Error>> {
    let now = Instant::now();
    let mut head_started = first;
    let mut deadline = if first {
        now + config.head_timeout
    } else {
        now + config.idle_timeout
    };
    loop {
        if *len > 0 {
            // Fields storage for this call only: the complete head is
            // parsed again, cheaply, into the storage the handler sees.
            let mut fields = [Field::EMPTY; FIELDS];
            match parser.parse(rx.get(..*len).unwrap_or_default(), &mut fields) {
                Ok(Some(head)) => return Ok(HeadRead::Head(head.head_len)),
                Ok(None) => {}
                Err(e) => return Ok(HeadRead::Reject(e.status())),
            }
            if *len == rx.len() {
                // The parser's limit is the buffer: it could not say more.
                return Ok(HeadRead::Reject(
                    ringstream_core::Error::HeadTooLarge.status(),
                ));
            }
            if !head_started {
                head_started = true;
                deadline = Instant::now() + config.head_timeout;
            }
        }
        let room = rx.get_mut(*len..).unwrap_or_default();
        let read = with_deadline(deadline, io.read(room));
        let read = match release {
            // Idle, with nothing received: the lender may end the wait.
            Some(release) if *len == 0 => {
                if release.is_requested() {
                    return Ok(HeadRead::Closed);
                }
                if !first {
                    release.set_idle(Some(Instant::now()));
                }
                let mut read = pin!(read);
                let read = poll_fn(|cx| {
                    if let Poll::Ready(r) = read.as_mut().poll(cx) {
                        return Poll::Ready(Some(r));
                    }
                    release.poll_requested(cx).map(|()| None)
                })
                .await;
                release.set_idle(None);
                match read {
                    Some(read) => read,
                    None => return Ok(HeadRead::Closed),
                }
            }
            _ => read.await,
        };
        match read {
            Ok(Ok(0)) if *len == 0 => return Ok(HeadRead::Closed),
            // The client closed within a head: an incomplete request.
            Ok(Ok(0)) => return Ok(HeadRead::Reject(400)),
            Ok(Ok(n)) => *len += n,
            Ok(Err(e)) => return Err(Error::Io(e)),
            Err(_) if *len == 0 => return Ok(HeadRead::Closed),
            Err(_) => return Ok(HeadRead::Reject(408)),
        }
    }
}

/// After the handler: answers a refused request, or asks the core what
/// follows the response (drain, keep, close). `Some(range)`: the
/// connection is kept, with these bytes of the receive buffer (after the
/// head) unread.
async fn conclude<IO: Read + Write>(
    responder: &mut Responder<'_, IO>,
    outcome: Result<super::Sent, Error<IO::Error>>,
) -> Result<Option<(usize, usize)>, Error<IO::Error>> {
    if let Err(e) = outcome {
        if !responder.is_started() {
            if let Some(status) = e.status() {
                let _ = reject(responder.io, responder.tx, status, responder.config).await;
            }
        }
        return Err(e);
    }
    let drain_limit = responder.config.drain_limit;
    let body_complete = responder.is_body_complete();
    let keep = match responder
        .exchange
        .after_response(body_complete, drain_limit)
    {
        Next::KeepAlive => true,
        Next::Close => false,
        Next::Drain { limit } => responder.drain(limit).await,
    };
    Ok(keep.then_some((responder.start, responder.end)))
}

/// Answers `status` with the core's error response (`connection: close`)
/// and flushes it; the connection is closed after it.
async fn reject<IO: Write>(
    io: &mut IO,
    tx: &mut [u8],
    status: u16,
    config: &Config,
) -> Result<(), Error<IO::Error>> {
    let mut out = SliceBuf::new(tx);
    if write_error_response(&mut out, status, b"").is_err() {
        return Ok(());
    }
    let response = out.into_written();
    match with_timeout(config.io_timeout, async {
        io.write_all(response).await?;
        io.flush().await
    })
    .await
    {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(Error::Io(e)),
        Err(_) => Err(Error::TimedOut),
    }
}

/// Flushes the connection within the write deadline.
async fn flush<IO: Write>(io: &mut IO, config: &Config) -> Result<(), Error<IO::Error>> {
    match with_timeout(config.io_timeout, io.flush()).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(Error::Io(e)),
        Err(_) => Err(Error::TimedOut),
    }
}
