//! Settings of the HTTP server: limits and deadlines.

use embassy_time::Duration;
use ringstream_core::Limits;

/// Settings of [`serve_connection`](crate::http::serve_connection): the
/// core's [`Limits`] and a deadline on every phase of a connection.
///
/// Every deadline is measured with embassy-time, whose time driver the
/// application brings (as for any embassy program).
///
/// # Examples
///
/// ```
/// use embassy_time::Duration;
/// use ringstream_embedded::Config;
///
/// let config = Config {
///     idle_timeout: Duration::from_secs(2),
///     ..Config::DEFAULT
/// };
/// assert_eq!(config.head_timeout, Duration::from_secs(10));
/// assert_eq!(config.limits.max_body_len, 1 << 30);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// The core's limits on what a client sends. `max_head_len` is also
    /// capped by the receive buffer: a head that does not fit in it is
    /// answered 431, as one over the limit is; `max_target_len` by half
    /// the receive buffer (a longer target is answered 414). Default:
    /// [`Limits::DEFAULT`] (a request body of at most 1 GiB, streamed).
    pub limits: Limits,
    /// How long a request head may take to arrive, counted from the
    /// connection's start for the first request and from its first byte
    /// for a later one. A head still incomplete then is answered 408 and
    /// the connection closed; a new connection that sent nothing is closed
    /// silently. Default: 10 seconds.
    pub head_timeout: Duration,
    /// How long a kept-alive connection may wait, idle, for its next
    /// request before it is closed and its slot given up. Default: 5
    /// seconds (a device has few slots; a browser reconnects).
    pub idle_timeout: Duration,
    /// How long one read of the request body, one write of the response
    /// or a flush may stall: a client that stops sending its body or stops
    /// reading the response is cut off at this deadline. Default: 10
    /// seconds.
    pub io_timeout: Duration,
    /// The most request-body bytes, in bytes, read and dropped after a
    /// response whose handler left the body unread, to keep the connection
    /// alive; a longer rest closes it instead. Default: 16 KiB.
    pub drain_limit: u64,
}

impl Config {
    /// The defaults, usable in `const` contexts (a `static` server).
    pub const DEFAULT: Config = Config {
        limits: Limits::DEFAULT,
        head_timeout: Duration::from_secs(10),
        idle_timeout: Duration::from_secs(5),
        io_timeout: Duration::from_secs(10),
        drain_limit: 16 * 1024,
    };
}

impl Default for Config {
    fn default() -> Self {
        Config::DEFAULT
    }
}
