//! WebSocket (RFC 6455) on ringstream's server: [`WebSocketUpgrade`]
//! accepts the handshake, [`WebSocket`] carries the messages.
//!
//! The framing rules are the core's ([`ringstream_core::ws`]): this module
//! moves bytes and awaits. A message that arrived in one frame is handed
//! over from the connection's read block without a copy; a large message
//! is sent with its frame head in one vectored write, without a copy.
//!
//! # Examples
//!
//! An echo service for any tower stack:
//!
//! ```
//! use std::convert::Infallible;
//! use ringstream::server::service_fn;
//! use ringstream::ws::{Config, WebSocketUpgrade};
//! use ringstream::Incoming;
//!
//! let echo = service_fn(|mut req: http::Request<Incoming>| async move {
//!     let upgrade = match WebSocketUpgrade::from_request(&mut req) {
//!         Ok(upgrade) => upgrade,
//!         Err(refused) => return Ok::<_, Infallible>(refused.into_response()),
//!     };
//!     Ok(upgrade.on_upgrade(|mut socket| async move {
//!         while let Some(Ok(message)) = socket.recv().await {
//!             if message.is_data() && socket.send(message).await.is_err() {
//!                 break;
//!             }
//!         }
//!     }))
//! });
//! # let _ = echo;
//! ```

mod broadcast;
mod compression;
#[cfg(feature = "deflate")]
mod deflate;
mod message;
mod send;
mod sink;
mod socket;
mod upgrade;
mod utf8_bytes;

use std::time::Duration;

pub use broadcast::{Broadcaster, Frame, Subscription};
#[cfg(feature = "deflate")]
pub use deflate::{Deflater, Inflater, DEFAULT_LEVEL, DEFLATE_TAIL};
pub use message::{close_code, CloseFrame, Message};
pub use ringstream_core::ws::{CloseCode, Limits, Role};
pub use ringstream_core::ws::{DeflateConfig, DeflateParams};
pub use socket::WebSocket;
pub use upgrade::{DefaultOnFailedUpgrade, OnFailedUpgrade, UpgradeRefused, WebSocketUpgrade};
pub use utf8_bytes::Utf8Bytes;

/// The settings of a [`WebSocket`].
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
    /// ([`Error::TimedOut`](crate::Error::TimedOut)). `None`: never.
    /// Default 30 s.
    pub idle_timeout: Option<Duration>,
    /// How long one [`send`](WebSocket::send) or
    /// [`flush`](WebSocket::flush) may wait for the peer to take its bytes
    /// (a peer that stopped reading); past it the send fails with
    /// [`Error::TimedOut`](crate::Error::TimedOut) and the connection is
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
