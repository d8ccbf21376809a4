//! Server limits and timeouts: every one has a default and a knob.

use std::time::Duration;

use ringstream_core::Limits;

use super::drain::Drain;
use super::h2::Http2Options;
use super::proxy::ProxyProtocol;
use crate::body::BodyDeadlines;
use crate::stream::StreamOptions;

/// The limits and timeouts of a [`Server`](super::Server).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ringstream::server::Config;
///
/// use ringstream::ringstream_core::Limits;
///
/// let config = Config {
///     head_timeout: Duration::from_secs(5),
///     max_connections: 256,
///     // Request bodies of at most 10 MiB (413 beyond).
///     limits: Limits { max_body_len: 10 << 20, ..Limits::DEFAULT },
///     ..Config::default()
/// };
/// assert_eq!(config.limits.max_fields, 100);
/// assert_eq!(Config::default().limits.max_body_len, 1 << 30);
/// ```
#[derive(Debug, Clone)]
pub struct Config {
    /// Caps on request heads, bodies, chunk extensions and trailers (head
    /// bytes → 431, field count → 431, target length → 414, body bytes →
    /// 413).
    ///
    /// [`Limits::max_body_len`] (default 1 GiB) is the largest request body
    /// served. A `Content-Length` above it is answered `413 Content Too
    /// Large` with `connection: close` as soon as the head has arrived:
    /// the service is not called, no body byte is read, and a client
    /// waiting on `Expect: 100-continue` gets no `100 Continue`. A chunked
    /// body that grows past it fails the service's read with
    /// [`Error::Protocol`](crate::Error::Protocol)`(BodyTooLarge)` (status
    /// 413), never a body cut short; the server then answers 413 and
    /// closes if no response has started, and otherwise closes, the
    /// response incomplete.
    pub limits: Limits,
    /// Buffer sizes of each connection's [`Stream`](crate::Stream).
    pub stream: StreamOptions,
    /// How long a client may take to send a complete request head: counted
    /// from the accept for a connection's first request (a connection that
    /// sends nothing is closed quietly when it runs out), and from the first
    /// byte of the head for later ones. A slow client (slowloris) gets 408
    /// and is closed. Default 10 s.
    pub head_timeout: Duration,
    /// How long an idle keep-alive connection waits for the next request
    /// before it is closed quietly. Default 60 s.
    pub idle_timeout: Duration,
    /// How long one read of a request body may wait for data; the body then
    /// fails with a timeout (408,
    /// [`Timeout::RequestBodyRead`](crate::error::Timeout::RequestBodyRead))
    /// and the connection closes. Default 30 s.
    pub body_read_timeout: Duration,
    /// The slowest a request body may arrive as a whole, in bytes per
    /// second; 0 turns the check off. The body may take
    /// [`body_read_timeout`](Self::body_read_timeout) plus one second for
    /// every `body_min_rate` bytes received (as Apache's `mod_reqtimeout`),
    /// so a client trickling a byte now and then cannot hold a connection
    /// by resetting the per-read timeout; a slower body fails with
    /// [`Timeout::RequestBodyRate`](crate::error::Timeout::RequestBodyRate).
    /// Default 500 bytes/s.
    pub body_min_rate: u64,
    /// The longest a request body may take as a whole, from the first read
    /// of it, however fast it arrives (as Apache's `mod_reqtimeout`
    /// `maxtime`); past it the body fails with a timeout
    /// ([`Timeout::RequestBodyTotal`](crate::error::Timeout::RequestBodyTotal), 408 when no
    /// response has started) and the connection closes. Default `None`: an
    /// upload that keeps up [`body_min_rate`](Self::body_min_rate) may take
    /// as long as its size needs.
    pub body_timeout: Option<Duration>,
    /// Maximum connections served at once. A client arriving at the cap
    /// takes the slot of the connection idle the longest (between
    /// requests, or connected without sending a byte), which is closed
    /// cleanly; when every connection is busy it gets `503 Service
    /// Unavailable` with `Retry-After: 1` and is closed. Both are counted
    /// ([`Metrics::connections_evicted`](super::Metrics::connections_evicted),
    /// [`Metrics::connections_refused`](super::Metrics::connections_refused))
    /// and logged at most every 5 s. Default 1,024.
    pub max_connections: usize,
    /// The length of the listen queue: connections the kernel completes
    /// before the server accepts them. Set on the listener when the server
    /// starts (the kernel caps it at `net.core.somaxconn` on Linux).
    /// Default 1,024.
    pub listen_backlog: u32,
    /// How many unread request-body bytes the server reads and discards
    /// after a response so that the connection can be reused; a longer
    /// remainder closes the connection instead. Default 64 KiB.
    pub drain_limit: u64,
    /// How long writing a response may make no progress (the client reads
    /// nothing) before the connection is closed: a client that never reads
    /// — a stalled download, an SSE subscriber that stopped reading — does
    /// not keep its slot (the connection ends with
    /// [`Timeout::ResponseWrite`](crate::error::Timeout::ResponseWrite)).
    /// Default 30 s.
    pub write_timeout: Duration,
    /// How long graceful shutdown lets in-flight requests finish before
    /// their connections are closed. Default 30 s.
    pub shutdown_timeout: Duration,
    /// Write `Server: ringstream` on responses. Default true.
    pub server_header: bool,
    /// Log one line per request at INFO on the target `ringstream::access`
    /// (method, target, client, status, body bytes, duration) and each
    /// rejection with its reason. Default false: an application that logs
    /// with tower-http's `TraceLayer` or reads the per-request span
    /// (target `ringstream::request`) needs no second line; `ringstream
    /// serve` turns it on.
    pub access_log: bool,
    /// Give every request its [`ConnectionInfo`](super::ConnectionInfo)
    /// extension (and axum's `ConnectInfo<SocketAddr>` with the `axum`
    /// feature). It costs three allocations per request, `http::Extensions`'
    /// map, its table and the boxed value (one more for axum's), where the
    /// server otherwise allocates nothing per request when the service
    /// answers with a field of its own; a service that never asks for the
    /// client's address can turn it off. Default true.
    pub connection_info: bool,
    /// HTTP/2: whether it is spoken, and its own limits (see
    /// [`Http2Options`]).
    pub http2: Http2Options,
    /// PROXY headers from trusted load balancers, before anything else on
    /// every connection (see [`ProxyProtocol`]). Default `None`: the
    /// listener takes none, and a connection that sends one gets `400`.
    pub proxy_protocol: Option<ProxyProtocol>,
    /// The server's [`Drain`]: started, the server asks its clients to go
    /// while it still serves them (and a graceful shutdown starts it).
    /// Each `Config::default()` has a drain of its own; a clone of the
    /// config shares it. [`Serve::drain`](super::Serve::drain) gives it.
    pub drain: Drain,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            limits: Limits::DEFAULT,
            stream: StreamOptions::default(),
            head_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            body_read_timeout: Duration::from_secs(30),
            body_min_rate: 500,
            body_timeout: None,
            max_connections: 1024,
            listen_backlog: 1024,
            drain_limit: 64 * 1024,
            write_timeout: Duration::from_secs(30),
            shutdown_timeout: Duration::from_secs(30),
            server_header: true,
            access_log: false,
            connection_info: true,
            http2: Http2Options::default(),
            proxy_protocol: None,
            drain: Drain::new(),
        }
    }
}

impl Config {
    /// The deadlines a request body is read under.
    pub(crate) fn body_deadlines(&self) -> BodyDeadlines {
        BodyDeadlines {
            read: self.body_read_timeout,
            min_rate: self.body_min_rate,
            total: self.body_timeout,
        }
    }
}
