//! A pool of connection slots on one embassy-net TCP port.
//!
//! smoltcp, under embassy-net, has no accept backlog: a connection can
//! only be accepted by a socket that is in the `LISTEN` state when its SYN
//! arrives, and a SYN that finds none is answered with a reset. A server
//! with one socket per task therefore refuses every client that arrives
//! while all its tasks are busy: a browser opening six connections at
//! once, or a user holding the reload key, gets resets.
//!
//! [`Pool`] keeps more sockets listening than it has workers. A socket
//! that completes a handshake while every worker is busy holds its
//! connection, with whatever the client already sent in the socket's
//! receive buffer, until a worker is free: the sockets are the accept
//! queue. When every other socket holds a connection, the last one
//! accepts only to answer `503 Service Unavailable` with `Retry-After` and
//! close ([`Config::refusal`]), so a client of a burst gets an HTTP answer
//! instead of a reset; only a SYN that finds no socket listening at all is
//! refused with a reset, at once (the client's `connect` fails promptly
//! instead of hanging).
//!
//! # Design
//!
//! - One **listener** future ([`Pool::run_listener`]) keeps every free
//!   socket listening and notices when one of them has a connection. It is
//!   the only future that waits on a listening socket, so each socket has
//!   exactly one waker registered with it.
//! - **Workers** ([`Pool::run_worker`]) each take the oldest queued
//!   connection, lend its socket whole to the [`Handler`], close the
//!   connection and give the socket back to the listener.
//!   [`Pool::run_http_worker`] serves the HTTP server
//!   ([`HttpHandler`]) with a [`Release`] per slot: a kept-alive
//!   connection waiting idle for its next request closes quietly as soon
//!   as a connection is queued and no worker is free (the one idle
//!   longest first, as the tokio server evicts), so a client holding a
//!   connection open cannot keep others out. A connection accepted on the
//!   socket kept for refusals is queued instead of refused when an idle
//!   connection can give way to it.
//!
//! Run the listener and each worker as an embassy task of its own (or
//! join them into one). Everything is shared through `&Pool`, with cells
//! and no locks: a `Pool` is not `Sync`, so all its futures run on one
//! executor, as embassy-net's sockets require anyway.
//!
//! # Trade-offs
//!
//! - Against one socket per task (picoserve's `listen_and_serve`): a
//!   queued connection costs its socket (RX + TX buffer bytes and
//!   smoltcp's state) but no task future; a worker costs its future,
//!   which holds the handler's state, but no socket. The two are sized
//!   apart: as many workers as connections the device can serve at once,
//!   as many sockets as it should hold through a burst.
//! - Against edge-http's `run_with_socket_queue` (one acceptor future per
//!   socket, feeding workers through a channel): one listener future for
//!   all the sockets instead of one each, and no channel (embassy-sync's
//!   `Channel` has a single receiver waker, and workers waiting on it
//!   together would wake each other in a loop).
//! - A queued connection is served in the order its handshake completed,
//!   by whichever worker is free first. While it waits, its client's
//!   bytes fill the socket's receive buffer and then its TCP window
//!   closes; nothing is lost. It waits at most [`Config::timeout`] after
//!   its client's last segment; [`Config::deadline`] bounds how long the
//!   connections before it can keep the workers.
//! - The socket kept for refusals costs its buffers (`RX + TX` bytes of
//!   [`SocketBuffers`]) and smoltcp's state for one socket, and holds no
//!   queued connection; the listener writes the `503` into its transmit
//!   buffer without a task of its own. `Config { refusal: None, .. }`
//!   gives the socket back to the queue and refuses with resets instead.
//! - [`Pool::shut_down`] stops the pool gracefully: no socket listens any
//!   more, queued connections get the `503`, idle HTTP connections close
//!   at once, requests in flight finish within [`Config::grace`], and the
//!   listener and workers return.
//! - The listener scans all `SOCKETS` slots when woken, so its work per
//!   wake grows with the number of sockets (a handful on a device).
//!
//! # Examples
//!
//! An echo server on port 7 with three sockets and two workers (one
//! queued connection), on embassy tasks; the `503` is HTTP, so an echo
//! server goes without it:
//!
//! ```no_run
//! use ringstream_embedded::embedded_io_async::{Read, Write};
//! use ringstream_embedded::pool::{Config, Pool, SocketBuffers};
//! use ringstream_embedded::Handler;
//!
//! struct Echo;
//!
//! impl Handler for Echo {
//!     async fn serve<IO: Read + Write>(&self, io: &mut IO) -> Result<(), IO::Error> {
//!         let mut buf = [0; 64];
//!         loop {
//!             let n = io.read(&mut buf).await?;
//!             if n == 0 {
//!                 return Ok(());
//!             }
//!             io.write_all(&buf[..n]).await?;
//!         }
//!     }
//! }
//!
//! type EchoPool = Pool<'static, 3>;
//!
//! async fn listener(pool: &'static EchoPool) {
//!     pool.run_listener().await
//! }
//!
//! async fn worker(pool: &'static EchoPool) {
//!     pool.run_worker(&Echo).await
//! }
//!
//! fn start(stack: embassy_net::Stack<'static>) -> &'static EchoPool {
//!     // In firmware: a `StaticCell`, so the buffers live in `.bss`.
//!     let buffers = Box::leak(Box::new([const { SocketBuffers::<1024, 1024>::new() }; 3]));
//!     let config = Config { refusal: None, ..Config::new(7) };
//!     let pool: &'static EchoPool = Box::leak(Box::new(Pool::new(stack, config, buffers)));
//!     // spawner.spawn(listener_task(pool)), then two worker tasks.
//!     pool
//! }
//! ```

use core::cell::{Cell, RefCell};
use core::future::{poll_fn, Future};
use core::pin::{pin, Pin};
use core::task::{Context, Poll, Waker};

use embassy_net::tcp::{State, TcpSocket};
use embassy_net::Stack;
use embassy_time::{with_timeout, Duration, Instant, Timer};
use ringstream_core::h1::write_unavailable_response;
use ringstream_core::SliceBuf;

use crate::http::{serve_connection_in_place, App, Buffers, Error, HttpHandler, Release};
use crate::Handler;

/// The `Retry-After` of a refusal, in seconds.
const RETRY_AFTER_SECS: u32 = 1;

/// The receive and transmit buffers of one socket: `RX` and `TX` bytes.
///
/// The pool's memory is the caller's: an array of these, typically in a
/// `static` (a `StaticCell` in firmware), lent to [`Pool::new`].
///
/// # Examples
///
/// ```
/// use ringstream_embedded::pool::SocketBuffers;
///
/// static mut BUFFERS: [SocketBuffers<1024, 1024>; 4] = [const { SocketBuffers::new() }; 4];
/// assert_eq!(core::mem::size_of::<SocketBuffers<1024, 1024>>(), 2048);
/// ```
#[derive(Debug)]
pub struct SocketBuffers<const RX: usize, const TX: usize> {
    rx: [u8; RX],
    tx: [u8; TX],
}

impl<const RX: usize, const TX: usize> SocketBuffers<RX, TX> {
    /// Zeroed buffers, usable in a `static` initialiser.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::pool::SocketBuffers;
    ///
    /// // `const`: an array of them can fill a `static` without running code.
    /// const BUFFERS: [SocketBuffers<512, 512>; 2] = [const { SocketBuffers::new() }; 2];
    /// assert_eq!(core::mem::size_of_val(&BUFFERS), 2 * 1024);
    /// ```
    pub const fn new() -> Self {
        SocketBuffers {
            rx: [0; RX],
            tx: [0; TX],
        }
    }
}

impl<const RX: usize, const TX: usize> Default for SocketBuffers<RX, TX> {
    fn default() -> Self {
        Self::new()
    }
}

/// Settings of a [`Pool`].
///
/// # Examples
///
/// ```
/// use embassy_time::Duration;
/// use ringstream_embedded::pool::Config;
///
/// let config = Config {
///     timeout: Some(Duration::from_secs(5)),
///     ..Config::new(80)
/// };
/// assert_eq!(config.port, 80);
/// assert_eq!(config.linger, Duration::from_secs(2));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// The TCP port every socket listens on. Not 0.
    pub port: u16,
    /// smoltcp's socket timeout, on every socket of the pool: a
    /// connection from which no segment has arrived for this long is
    /// reset, whether it is queued or served. (smoltcp 0.12 applies it to
    /// idle connections too, although its documentation speaks only of
    /// unacknowledged data and keep-alive.) So a queued connection whose
    /// client has sent its request and waits waits at most this long for a
    /// worker. `None` for no limit. Default: 10 seconds.
    pub timeout: Option<Duration>,
    /// The longest a worker serves one connection: at this deadline the
    /// handler is dropped and the connection reset, so a client that
    /// connects and never sends, or never stops, cannot keep a worker for
    /// ever. `None` for no limit (the default): the per-phase deadlines of
    /// the HTTP server ([`Config`](crate::Config)) are the finer tool.
    pub deadline: Option<Duration>,
    /// How long closing a connection may take once its handler is done:
    /// the unsent data and the FIN acknowledged, then the client's
    /// remaining bytes read and dropped until its FIN, then the socket is
    /// reset and reused. Default: 2 seconds.
    pub linger: Duration,
    /// How a client that finds every worker busy and every queue place
    /// taken is refused. `Some(time)` (the default, 1 second): one socket
    /// is kept for refusals — a connection is queued only while another
    /// socket stays free to listen, and the connection that socket
    /// accepts when all the others hold one is answered `503 Service
    /// Unavailable` with `Retry-After: 1` and `connection: close` (the
    /// core's `write_unavailable_response`), then closed within `time`:
    /// the FIN after the response, what the client still sends read and
    /// dropped until its FIN, then the socket listens again. `None`:
    /// every socket queues, and a client that finds them all taken is
    /// refused with a TCP reset (smoltcp has no accept backlog).
    ///
    /// The cost of `Some`: one socket's buffers no longer hold a queued
    /// connection, so a pool of `SOCKETS` sockets serves or queues at
    /// most `SOCKETS - 1` connections at once (with as many sockets as
    /// workers, one worker never gets a connection: give the pool at least
    /// one socket more than it has workers); a refused client gets an answer instead of a reset. A pool of one
    /// socket has none to spare and ignores this setting. The answer is
    /// HTTP: a pool serving another protocol wants `None`. A client that arrives while that socket
    /// is still refusing the previous one is reset, as before.
    pub refusal: Option<Duration>,
    /// How long requests in flight may go on after
    /// [`Pool::shut_down`]: a connection still served at this deadline is
    /// dropped and reset. Default: 5 seconds.
    pub grace: Duration,
}

impl Config {
    /// The defaults, on `port`.
    ///
    /// # Examples
    ///
    /// ```
    /// use embassy_time::Duration;
    /// use ringstream_embedded::pool::Config;
    ///
    /// // An echo server: no HTTP `503` for a client that finds every socket taken.
    /// let config = Config { refusal: None, ..Config::new(7) };
    /// assert_eq!(config.port, 7);
    /// assert_eq!(config.grace, Duration::from_secs(5));
    /// ```
    pub const fn new(port: u16) -> Self {
        Config {
            port,
            timeout: Some(Duration::from_secs(10)),
            deadline: None,
            linger: Duration::from_secs(2),
            refusal: Some(Duration::from_secs(1)),
            grace: Duration::from_secs(5),
        }
    }
}

/// Where a slot's socket is in its cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SlotState {
    /// Closed; the listener puts it back in `LISTEN`.
    Free,
    /// In `LISTEN` or `SYN-RECEIVED`, watched by the listener.
    Listening,
    /// Holds a connection no worker has taken yet; the ticket orders the
    /// queue.
    Queued(u32),
    /// Lent to a worker.
    Serving,
    /// Answered `503` and closing, until this deadline; the listener
    /// reads what the client still sends.
    Refusing(Instant),
    /// Reset, until the reset has gone out or this deadline.
    Resetting(Instant),
    /// Closed for good: the pool is shutting down.
    Stopped,
}

struct Slot<'d> {
    socket: RefCell<TcpSocket<'d>>,
    state: Cell<SlotState>,
    /// The served connection's idle wait, and the pool's request that it
    /// give the slot up.
    release: Release,
    /// The waker of the worker serving the slot, woken when the pool
    /// begins to shut down.
    worker: Cell<Option<Waker>>,
}

/// `SOCKETS` TCP sockets listening on one port, served by any number of
/// workers up to `SOCKETS`.
///
/// See the [module documentation](self) for the design. The stack's
/// `StackResources` must have room for the `SOCKETS` sockets, besides any
/// other socket the application opens.
///
/// # Examples
///
/// An HTTP server on port 80: four sockets, up to three workers (so one
/// connection can wait in the queue), each a task in firmware. A pool needs
/// a network stack, so this is compiled but not run:
///
/// ```no_run
/// use ringstream_embedded::embedded_io_async::{Read, Write};
/// use ringstream_embedded::http::{App, Error, HttpHandler, Request, Responder, Sent};
/// use ringstream_embedded::pool::{Config, Pool, SocketBuffers};
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
/// static HTTP: HttpHandler<Hello> = HttpHandler::new(Hello, ringstream_embedded::Config::DEFAULT);
///
/// type WebPool = Pool<'static, 4>;
///
/// fn start(stack: embassy_net::Stack<'static>) -> &'static WebPool {
///     // In firmware: a `StaticCell`, so the buffers live in `.bss`.
///     let buffers = Box::leak(Box::new([const { SocketBuffers::<1024, 1024>::new() }; 4]));
///     Box::leak(Box::new(Pool::new(stack, Config::new(80), buffers)))
/// }
///
/// async fn listener_task(pool: &'static WebPool) {
///     pool.run_listener().await
/// }
///
/// async fn worker_task(pool: &'static WebPool) {
///     pool.run_http_worker(&HTTP).await
/// }
///
/// fn stop(pool: &WebPool) {
///     pool.shut_down();
///     assert!(pool.is_shutting_down());
/// }
/// ```
pub struct Pool<'d, const SOCKETS: usize> {
    slots: [Slot<'d>; SOCKETS],
    config: Config,
    /// The listener's waker: a worker that frees a slot wakes it.
    listener: Cell<Option<Waker>>,
    /// Wakers of idle workers, woken one per newly queued connection.
    idle: [Cell<Option<Waker>>; SOCKETS],
    next_ticket: Cell<u32>,
    /// Workers waiting for a queued connection.
    waiting: Cell<usize>,
    /// Since [`shut_down`](Self::shut_down): the end of the grace period.
    stopping: Cell<Option<Instant>>,
}

impl<'d, const SOCKETS: usize> Pool<'d, SOCKETS> {
    /// A pool of `SOCKETS` sockets on `stack`, over `buffers`.
    ///
    /// Nothing listens until [`run_listener`](Self::run_listener) runs.
    ///
    /// # Examples
    ///
    /// A pool needs a network stack, so this is compiled but not run:
    ///
    /// ```no_run
    /// use ringstream_embedded::pool::{Config, Pool, SocketBuffers};
    ///
    /// fn start(stack: embassy_net::Stack<'static>) -> &'static Pool<'static, 4> {
    ///     // In firmware: a `StaticCell`, so the buffers live in `.bss`.
    ///     let buffers = Box::leak(Box::new([const { SocketBuffers::<1024, 1024>::new() }; 4]));
    ///     Box::leak(Box::new(Pool::new(stack, Config::new(80), buffers)))
    /// }
    /// ```
    ///
    /// # Panics
    ///
    /// If `config.port` is 0 (a socket cannot listen on it), or if the
    /// stack's `StackResources` has no room left for the sockets.
    pub fn new<const RX: usize, const TX: usize>(
        stack: Stack<'d>,
        config: Config,
        buffers: &'d mut [SocketBuffers<RX, TX>; SOCKETS],
    ) -> Self {
        assert!(config.port != 0, "a pool cannot listen on port 0");
        let slots = buffers.each_mut().map(|b| {
            let mut socket = TcpSocket::new(stack, &mut b.rx, &mut b.tx);
            socket.set_timeout(config.timeout);
            Slot {
                socket: RefCell::new(socket),
                state: Cell::new(SlotState::Free),
                release: Release::new(),
                worker: Cell::new(None),
            }
        });
        Pool {
            slots,
            config,
            listener: Cell::new(None),
            idle: [const { Cell::new(None) }; SOCKETS],
            next_ticket: Cell::new(0),
            waiting: Cell::new(0),
            stopping: Cell::new(None),
        }
    }

    /// The pool's settings.
    ///
    /// # Examples
    ///
    /// A pool needs a network stack, so this is compiled but not run:
    ///
    /// ```no_run
    /// use ringstream_embedded::pool::Pool;
    ///
    /// fn port(pool: &Pool<'static, 4>) -> u16 {
    ///     pool.config().port
    /// }
    /// ```
    pub const fn config(&self) -> &Config {
        &self.config
    }

    /// Keeps every free socket listening and queues the connections they
    /// accept, until the pool shuts down.
    ///
    /// Run exactly one listener per pool. After
    /// [`shut_down`](Self::shut_down) it stops listening at once, answers
    /// the connections still queued `503` (when [`Config::refusal`] is
    /// `Some`; else it resets them), finishes the refusals under way, and
    /// returns.
    ///
    /// # Examples
    ///
    /// A pool needs a network stack, so this is compiled but not run:
    ///
    /// ```no_run
    /// use ringstream_embedded::pool::Pool;
    ///
    /// // One embassy task per pool, for the pool's whole life.
    /// async fn listener_task(pool: &'static Pool<'static, 4>) {
    ///     pool.run_listener().await
    /// }
    /// ```
    ///
    /// # Cancel safety
    ///
    /// Dropping it stops the pool from listening: the sockets already
    /// listening still complete handshakes, but nothing queues them.
    pub async fn run_listener(&self) {
        poll_fn(|cx| self.poll_listen(cx)).await;
    }

    /// Begins a graceful shutdown: the listener stops accepting and
    /// returns once the refusals under way are done; a connection waiting
    /// idle for a request (kept alive, or new with nothing received) is
    /// closed at once when served by
    /// [`run_http_worker`](Self::run_http_worker), and one with a request in flight after its response; a connection
    /// still served [`Config::grace`] from now is dropped and reset (a
    /// [`Handler`] of [`run_worker`](Self::run_worker), which sees no
    /// release, is served until it ends or until then). Each worker
    /// returns when its connection is closed. Calling it again does
    /// nothing.
    ///
    /// # Examples
    ///
    /// A pool needs a network stack, so this is compiled but not run:
    ///
    /// ```no_run
    /// use ringstream_embedded::pool::Pool;
    ///
    /// // Called when the firmware is about to update itself, say.
    /// fn stop(pool: &Pool<'static, 4>) {
    ///     pool.shut_down();
    ///     assert!(pool.is_shutting_down());
    /// }
    /// ```
    pub fn shut_down(&self) {
        if self.stopping.get().is_some() {
            return;
        }
        self.stopping.set(Some(Instant::now() + self.config.grace));
        for slot in &self.slots {
            slot.release.request();
            if let Some(worker) = slot.worker.take() {
                worker.wake();
            }
        }
        for cell in &self.idle {
            if let Some(worker) = cell.take() {
                worker.wake();
            }
        }
        self.wake_listener();
    }

    /// Whether [`shut_down`](Self::shut_down) was called.
    ///
    /// # Examples
    ///
    /// A pool needs a network stack, so this is compiled but not run:
    ///
    /// ```no_run
    /// use ringstream_embedded::pool::Pool;
    ///
    /// // A task that wants to know whether to begin new work.
    /// fn may_start(pool: &Pool<'static, 4>) -> bool {
    ///     !pool.is_shutting_down()
    /// }
    /// ```
    pub fn is_shutting_down(&self) -> bool {
        self.stopping.get().is_some()
    }

    /// Serves queued connections with `handler`, one at a time, until the
    /// pool shuts down.
    ///
    /// Run up to `SOCKETS` workers per pool (more would never all have a
    /// socket, and their wakers would not all fit: they would wake each
    /// other in turn instead of sleeping). Between connections a worker
    /// closes the one it served (gracefully, within [`Config::linger`])
    /// and hands the socket back to the listener.
    ///
    /// The pool cannot see when a connection served by a `Handler` is idle:
    /// for the HTTP server, [`run_http_worker`](Self::run_http_worker)
    /// lets an idle kept-alive connection give its slot up to a queued one.
    ///
    /// # Examples
    ///
    /// A pool needs a network stack, so this is compiled but not run:
    ///
    /// ```no_run
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::pool::Pool;
    /// use ringstream_embedded::Handler;
    ///
    /// /// Answers every connection with its own bytes.
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
    /// // Up to `SOCKETS` worker tasks, each running this.
    /// async fn worker_task(pool: &'static Pool<'static, 4>) {
    ///     pool.run_worker(&Echo).await
    /// }
    /// ```
    ///
    /// # Cancel safety
    ///
    /// Dropping a worker while it serves leaves its slot taken: the socket
    /// is not reused. Dropping it while it waits for a connection leaves
    /// it counted as waiting, so an idle connection is asked to give way
    /// one queued connection later than it should.
    pub async fn run_worker<H: Handler>(&self, handler: &H) {
        self.run(&Plain(handler)).await
    }

    /// Serves queued connections with the HTTP server `http`, one at a
    /// time, until the pool shuts down: as [`run_worker`](Self::run_worker)
    /// with `http` as the handler, and besides, a connection that waits
    /// idle, kept alive, for its next request closes quietly as soon as a
    /// connection is queued and no worker is free (the one idle longest
    /// first), so a client holding a connection open cannot keep another
    /// out; and at [`shut_down`](Self::shut_down), an idle connection
    /// closes at once and one with a request in flight after its response.
    ///
    /// The connection's [`Buffers`] are in this future, as with
    /// [`HttpHandler`] as a [`Handler`].
    ///
    /// # Examples
    ///
    /// A pool needs a network stack, so this is compiled but not run:
    ///
    /// ```no_run
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{App, Error, HttpHandler, Request, Responder, Sent};
    /// use ringstream_embedded::pool::Pool;
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
    /// static HTTP: HttpHandler<Hello> = HttpHandler::new(Hello, Config::DEFAULT);
    ///
    /// // Up to `SOCKETS` worker tasks, each running this.
    /// async fn worker_task(pool: &'static Pool<'static, 4>) {
    ///     pool.run_http_worker(&HTTP).await
    /// }
    /// ```
    ///
    /// # Cancel safety
    ///
    /// As [`run_worker`](Self::run_worker).
    pub async fn run_http_worker<A: App, const RX: usize, const TX: usize>(
        &self,
        http: &HttpHandler<A, RX, TX>,
    ) {
        self.run(http).await
    }

    // The socket's `RefMut` is held across the handler's awaits on
    // purpose: while a slot is `Serving`, its worker is the only code that
    // borrows its socket (the listener skips such slots and uses
    // `try_borrow_mut` anyway), so the borrow cannot collide.
    #[allow(clippy::await_holding_refcell_ref)]
    async fn run<S: Serve>(&self, serve: &S) {
        loop {
            self.waiting.set(self.waiting.get() + 1);
            let slot = self.next_connection().await;
            self.waiting.set(self.waiting.get() - 1);
            let Some(slot) = slot else {
                return;
            };
            slot.release.reset();
            // The listener watches the slot's release from its next pass.
            self.wake_listener();
            // Only this worker touches a slot in `Serving`; the listener
            // borrows only the other slots, briefly.
            if let Ok(mut socket) = slot.socket.try_borrow_mut() {
                let served = self.serve_until_grace(slot, serve, &mut socket).await;
                close(&mut socket, served, self.config.linger).await;
            }
            slot.release.reset();
            slot.worker.set(None);
            if self.stopping.get().is_some() {
                slot.state.set(SlotState::Stopped);
                self.wake_listener();
                return;
            }
            slot.state.set(SlotState::Free);
            self.wake_listener();
        }
    }

    /// Serves one connection, within [`Config::deadline`] and, once the
    /// pool shuts down, within the grace period. Whether it ended
    /// gracefully.
    async fn serve_until_grace<S: Serve>(
        &self,
        slot: &Slot<'d>,
        serve: &S,
        socket: &mut TcpSocket<'d>,
    ) -> bool {
        let serving = async {
            match self.config.deadline {
                Some(deadline) => with_timeout(deadline, serve.serve(socket, &slot.release))
                    .await
                    .unwrap_or(false),
                None => serve.serve(socket, &slot.release).await,
            }
        };
        let mut serving = pin!(serving);
        let mut grace: Option<Timer> = None;
        poll_fn(|cx| {
            if let Poll::Ready(served) = serving.as_mut().poll(cx) {
                return Poll::Ready(served);
            }
            match self.stopping.get() {
                None => {
                    register(&slot.worker, cx.waker());
                    Poll::Pending
                }
                Some(end) => {
                    let timer = grace.get_or_insert_with(|| Timer::at(end));
                    Pin::new(timer).poll(cx).map(|()| false)
                }
            }
        })
        .await
    }

    fn wake_listener(&self) {
        if let Some(listener) = self.listener.take() {
            listener.wake();
        }
    }

    /// One pass of the listener over the slots; ready when the pool has
    /// shut down and no socket is left to the listener.
    fn poll_listen(&self, cx: &mut Context<'_>) -> Poll<()> {
        register(&self.listener, cx.waker());
        if self.stopping.get().is_some() {
            return self.poll_stop(cx);
        }
        let mut queued = 0;
        for slot in &self.slots {
            let state = slot.state.get();
            if state == SlotState::Serving {
                // Woken when its connection starts to wait idle.
                slot.release.watch(cx.waker());
                continue;
            }
            if matches!(state, SlotState::Queued(_) | SlotState::Stopped) {
                continue;
            }
            let Ok(mut socket) = slot.socket.try_borrow_mut() else {
                continue;
            };
            match (state, socket.state()) {
                (SlotState::Refusing(_) | SlotState::Resetting(_), _) => {
                    self.poll_refusal(slot, &mut socket, cx);
                }
                (_, State::Closed) => {
                    // `accept` puts the socket in LISTEN on its first poll
                    // and registers our waker; the future itself is not
                    // kept, `wait_write_ready` re-registers on later passes.
                    let accepted = pin!(socket.accept(self.config.port)).poll(cx);
                    match accepted {
                        Poll::Pending => slot.state.set(SlotState::Listening),
                        Poll::Ready(Ok(())) => {
                            if self.admit(slot, &mut socket, cx) {
                                queued += 1;
                            }
                        }
                        // Not closed after all, or port 0 (refused by
                        // `new`): leave it free and look again.
                        Poll::Ready(Err(_)) => cx.waker().wake_by_ref(),
                    }
                }
                (SlotState::Listening, State::Listen | State::SynReceived) => {
                    // Not writable in these states, so this registers our
                    // waker, which smoltcp wakes on every state change.
                    let ready = pin!(socket.wait_write_ready());
                    let _ = ready.poll(cx);
                }
                (SlotState::Listening, _) => {
                    // A handshake completed (the connection may already be
                    // closing: its worker will read the end of it).
                    if self.admit(slot, &mut socket, cx) {
                        queued += 1;
                    }
                }
                (_, _) => {
                    // A free slot that is not closed: make it so.
                    socket.abort();
                    cx.waker().wake_by_ref();
                }
            }
        }
        for _ in 0..queued {
            if let Some(worker) = self.idle.iter().find_map(Cell::take) {
                worker.wake();
            }
        }
        self.release_idle();
        Poll::Pending
    }

    /// A pass of the listener once the pool shuts down: no socket listens
    /// any more, queued connections are refused, refusals under way end.
    fn poll_stop(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut busy = false;
        for slot in &self.slots {
            let state = slot.state.get();
            let Ok(mut socket) = slot.socket.try_borrow_mut() else {
                continue;
            };
            match state {
                SlotState::Serving | SlotState::Stopped => {}
                SlotState::Free | SlotState::Listening => {
                    socket.abort();
                    slot.state.set(SlotState::Stopped);
                }
                SlotState::Queued(_) => {
                    self.refuse(slot, &mut socket, cx);
                    busy = true;
                }
                SlotState::Refusing(_) | SlotState::Resetting(_) => {
                    self.poll_refusal(slot, &mut socket, cx);
                    busy = true;
                }
            }
        }
        if busy {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }

    /// Asks idle connections to give their slots up, the one idle longest
    /// first, until every queued connection has a worker waiting for it or
    /// a connection giving its slot up.
    fn release_idle(&self) {
        let mut queued = 0;
        let mut releasing = 0;
        for slot in &self.slots {
            match slot.state.get() {
                SlotState::Queued(_) => queued += 1,
                SlotState::Serving if slot.release.is_requested() => releasing += 1,
                _ => {}
            }
        }
        let mut needed = queued - queued.min(self.waiting.get() + releasing);
        while needed > 0 {
            let Some(slot) = self.longest_idle() else {
                return;
            };
            slot.release.request();
            needed -= 1;
        }
    }

    /// The served slot whose connection has waited idle longest, not yet
    /// asked to give its slot up.
    fn longest_idle(&self) -> Option<&Slot<'d>> {
        self.slots
            .iter()
            .filter(|s| s.state.get() == SlotState::Serving && !s.release.is_requested())
            .filter_map(|s| s.release.idle_since().map(|since| (s, since)))
            .min_by_key(|(_, since)| *since)
            .map(|(s, _)| s)
    }

    /// Moves a refusal on: the client's bytes dropped until both sides
    /// have closed or the deadline, then a reset, then a free socket.
    fn poll_refusal(&self, slot: &Slot<'d>, socket: &mut TcpSocket<'d>, cx: &mut Context<'_>) {
        match slot.state.get() {
            SlotState::Refusing(deadline) => {
                let done = matches!(socket.state(), State::Closed | State::TimeWait);
                if done || Instant::now() >= deadline {
                    socket.abort();
                    slot.state
                        .set(SlotState::Resetting(Instant::now() + self.config.linger));
                    cx.waker().wake_by_ref();
                } else {
                    // What the client still sends is dropped; each of
                    // these polls registers our waker with the socket.
                    while let Poll::Ready(Ok(())) =
                        pin!(socket.read_with(|rest| (rest.len(), ()))).poll(cx)
                    {
                    }
                    let _ = pin!(socket.flush()).poll(cx);
                    let _ = pin!(Timer::at(deadline)).poll(cx);
                }
            }
            SlotState::Resetting(deadline) => {
                if pin!(socket.flush()).poll(cx).is_ready() || Instant::now() >= deadline {
                    let stopping = self.stopping.get().is_some();
                    slot.state.set(if stopping {
                        SlotState::Stopped
                    } else {
                        SlotState::Free
                    });
                    cx.waker().wake_by_ref();
                } else {
                    let _ = pin!(Timer::at(deadline)).poll(cx);
                }
            }
            _ => {}
        }
    }

    /// Queues the connection `slot` has just accepted, or refuses it with
    /// `503` when it holds the socket kept for refusals
    /// ([`Config::refusal`]). Whether it was queued.
    fn admit(&self, slot: &Slot<'d>, socket: &mut TcpSocket<'d>, cx: &mut Context<'_>) -> bool {
        // A pool of one socket has none to spare: it queues.
        if self.config.refusal.is_none() || SOCKETS < 2 {
            slot.state.set(SlotState::Queued(self.ticket()));
            return true;
        }
        let held = self
            .slots
            .iter()
            .filter(|s| matches!(s.state.get(), SlotState::Queued(_) | SlotState::Serving))
            .count();
        // One socket stays free to listen, unless an idle connection can
        // give its slot up to this one.
        if held + 1 < SOCKETS || self.longest_idle().is_some() {
            slot.state.set(SlotState::Queued(self.ticket()));
            self.release_idle();
            return true;
        }
        self.refuse(slot, socket, cx);
        false
    }

    /// Answers the connection of `slot` `503` and begins its close (a
    /// reset at once without [`Config::refusal`]).
    fn refuse(&self, slot: &Slot<'d>, socket: &mut TcpSocket<'d>, cx: &mut Context<'_>) {
        let Some(refusal) = self.config.refusal else {
            socket.abort();
            slot.state
                .set(SlotState::Resetting(Instant::now() + self.config.linger));
            cx.waker().wake_by_ref();
            return;
        };
        // The 503 is written into the socket's transmit buffer at once (a
        // new connection's buffer is empty, and the response is about 140
        // bytes); what does not fit is lost, and the client sees the
        // close.
        let mut response = [0u8; 192];
        let mut out = SliceBuf::new(&mut response);
        if write_unavailable_response(&mut out, RETRY_AFTER_SECS, b"").is_ok() {
            let bytes = out.into_written();
            let _ = pin!(socket.write(bytes)).poll(cx);
        }
        socket.close();
        slot.state
            .set(SlotState::Refusing(Instant::now() + refusal));
        cx.waker().wake_by_ref();
    }

    /// Waits for the oldest queued connection and takes it; `None` once
    /// the pool shuts down.
    fn next_connection(&self) -> impl Future<Output = Option<&Slot<'d>>> + '_ {
        poll_fn(|cx| {
            if self.stopping.get().is_some() {
                return Poll::Ready(None);
            }
            let mut oldest: Option<(&Slot<'d>, u32)> = None;
            for slot in &self.slots {
                if let SlotState::Queued(ticket) = slot.state.get() {
                    // Tickets wrap; at most SOCKETS are outstanding.
                    let older = oldest.is_none_or(|(_, t)| (ticket.wrapping_sub(t) as i32) < 0);
                    if older {
                        oldest = Some((slot, ticket));
                    }
                }
            }
            match oldest {
                Some((slot, _)) => {
                    slot.state.set(SlotState::Serving);
                    Poll::Ready(Some(slot))
                }
                None => {
                    self.wait_idle(cx.waker());
                    Poll::Pending
                }
            }
        })
    }

    /// Puts an idle worker's waker in the first free place (unless it is
    /// there already).
    fn wait_idle(&self, waker: &Waker) {
        let mut free = None;
        for cell in &self.idle {
            match cell.take() {
                Some(w) if w.will_wake(waker) => {
                    cell.set(Some(w));
                    return;
                }
                Some(w) => cell.set(Some(w)),
                None => {
                    if free.is_none() {
                        free = Some(cell);
                    }
                }
            }
        }
        // With no free place (more waiting workers than sockets), the
        // worker displaced is woken to look again. With no places at all
        // (no sockets), nothing will ever be queued.
        if let Some(cell) = free.or(self.idle.first()) {
            if let Some(displaced) = cell.replace(Some(waker.clone())) {
                displaced.wake();
            }
        }
    }

    fn ticket(&self) -> u32 {
        let ticket = self.next_ticket.get();
        self.next_ticket.set(ticket.wrapping_add(1));
        ticket
    }
}

/// How a worker serves one connection: a [`Handler`], or the HTTP server
/// with a [`Release`]. Whether the connection ended gracefully.
trait Serve {
    async fn serve(&self, socket: &mut TcpSocket<'_>, release: &Release) -> bool;
}

/// A [`Handler`], which sees no [`Release`].
struct Plain<'h, H>(&'h H);

impl<H: Handler> Serve for Plain<'_, H> {
    async fn serve(&self, socket: &mut TcpSocket<'_>, _release: &Release) -> bool {
        self.0.serve(socket).await.is_ok()
    }
}

impl<A: App, const RX: usize, const TX: usize> Serve for HttpHandler<A, RX, TX> {
    async fn serve(&self, socket: &mut TcpSocket<'_>, release: &Release) -> bool {
        let mut buffers = Buffers::<RX, TX>::new();
        let served = serve_connection_in_place(
            socket,
            self.app(),
            &mut buffers,
            self.config(),
            Some(release),
        )
        .await;
        !matches!(served, Err(Error::Io(_)))
    }
}

/// Stores `waker` in `cell`, unless it already holds one that wakes the
/// same task.
fn register(cell: &Cell<Option<Waker>>, waker: &Waker) {
    match cell.take() {
        Some(w) if w.will_wake(waker) => cell.set(Some(w)),
        _ => cell.set(Some(waker.clone())),
    }
}

/// Ends a served connection and leaves the socket closed.
///
/// After a handler that succeeded: a lingering close. The FIN follows the
/// unsent data; once both are acknowledged, what the client still sends is
/// read and dropped until its own FIN, so that a client still sending (a
/// pipelined request, the rest of a body the handler did not read) is not
/// answered with a reset that could destroy the response in its receive
/// buffer. All of it within `linger`. Then, or at once after a handler
/// error, the socket is reset (a no-op on a connection both sides closed)
/// and the reset given `linger` to go out before the socket listens again.
async fn close(socket: &mut TcpSocket<'_>, graceful: bool, linger: Duration) {
    if graceful {
        let _ = with_timeout(linger, async {
            socket.close();
            if socket.flush().await.is_ok() {
                while socket.read_with(|rest| (rest.len(), ())).await.is_ok() {}
            }
        })
        .await;
    }
    socket.abort();
    let _ = with_timeout(linger, socket.flush()).await;
}
