//! [`Config`]: the settings of a WebSocket session.

use std::time::Duration;

use ringstream_core::ws::{DeflateConfig, Limits};

use super::compression;

/// The settings of a [`WebSocket`](super::WebSocket).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ringstream::ws::Config;
///
/// let config = Config { idle_timeout: Some(Duration::from_secs(10)), ..Config::default() };
/// assert_eq!(config.limits.max_message_len, 16 << 20);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// The largest message and frame taken (a larger one closes the
    /// connection with 1009). Default 16 MiB each.
    pub limits: Limits,
    /// How long the connection may stay silent before it is sent a Ping;
    /// when it stays silent as long again, it is closed
    /// ([`Error::TimedOut`](crate::Error::TimedOut)`(`[`WebSocketPing`](crate::error::Timeout::WebSocketPing)`)`).
    /// `None`: never.
    /// Default 30 s.
    pub idle_timeout: Option<Duration>,
    /// How long one [`send`](super::WebSocket::send) or
    /// [`flush`](super::WebSocket::flush) may wait for the peer to take its bytes
    /// (a peer that stopped reading); past it the send fails with
    /// [`Error::TimedOut`](crate::Error::TimedOut)`(`[`WebSocketWrite`](crate::error::Timeout::WebSocketWrite)`)`
    /// and the connection is
    /// given up. `None`: no limit. Default 30 s.
    pub write_timeout: Option<Duration>,
    /// permessage-deflate (RFC 7692), accepted when a client offers it:
    /// what the server asks for. Needs the `deflate` feature, without
    /// which no offer is accepted. Default: on with the feature, with
    /// `server_no_context_takeover` (no compressor kept per connection
    /// between messages), else `None`.
    pub deflate: Option<DeflateConfig>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            limits: Limits::DEFAULT,
            idle_timeout: Some(Duration::from_secs(30)),
            write_timeout: Some(Duration::from_secs(30)),
            deflate: if compression::AVAILABLE {
                Some(DeflateConfig::DEFAULT)
            } else {
                None
            },
        }
    }
}
