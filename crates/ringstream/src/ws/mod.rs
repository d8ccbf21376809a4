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
//!
//! # Coming from axum
//!
//! axum 0.8's WebSocket code compiles against this module once its `use`
//! line says `ringstream::ws::{..}` instead of `axum::extract::ws::{..}`
//! and the router is served by [`crate::server::serve`]:
//! [`WebSocketUpgrade`] is an extractor (feature `axum`) with axum's
//! `on_upgrade`, `protocols`, `requested_protocols`,
//! `set_selected_protocol`, `selected_protocol`, `max_message_size`,
//! `max_frame_size` and `on_failed_upgrade`; [`WebSocket`] has `recv`
//! (`Option<Result<Message, Error>>`), `send` and `protocol`, and is a
//! `Stream` and `Sink` of messages (`split` with `futures_util`);
//! [`Message`], [`CloseFrame`], [`Utf8Bytes`] and [`close_code`] have axum's
//! shapes. `tests/axum/ws_examples.rs` runs axum's `websockets` and `chat`
//! examples so.
//!
//! What differs:
//!
//! - [`WebSocketUpgrade::on_upgrade`] returns `http::Response<String>`: a
//!   handler returns it as `impl IntoResponse` (as axum's examples do),
//!   not as axum's `Response` (or calls `.into_response()`).
//! - Errors are [`crate::Error`], not `axum::Error`.
//! - `read_buffer_size`, `write_buffer_size`, `max_write_buffer_size` and
//!   `accept_unmasked_frames` do not exist: a WebSocket reads in small
//!   blocks that grow to a message's size, writes each `send` at once,
//!   and always refuses a client's unmasked frame (RFC 6455 §5.1). The
//!   other settings are in [`Config`] ([`WebSocketUpgrade::config`]).
//! - [`CloseCode`] is ringstream's code type (a `u16` newtype with the
//!   RFC's names); axum's `CloseCode` is a `u16` alias. The field
//!   [`CloseFrame::code`] is a `u16` in both.
//! - WebSockets over HTTP/2 (RFC 8441 `CONNECT`): the server is HTTP/1.1.
//!
//! # Examples
//!
//! The shape of axum's examples (feature `axum`):
//!
//! ```
//! # #[cfg(feature = "axum")] {
//! use axum::{response::IntoResponse, routing::any, Router};
//! use futures_util::{SinkExt, StreamExt};
//! use ringstream::ws::{close_code, CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
//!
//! async fn ws_handler(ws: WebSocketUpgrade) -> impl IntoResponse {
//!     ws.on_upgrade(handle_socket)
//! }
//!
//! async fn handle_socket(socket: WebSocket) {
//!     let (mut sender, mut receiver) = socket.split();
//!     while let Some(Ok(msg)) = receiver.next().await {
//!         match msg {
//!             Message::Text(text) if text == "bye" => break,
//!             Message::Text(text) => {
//!                 if sender.send(Message::Text(format!("you said: {text}").into())).await.is_err() {
//!                     return;
//!                 }
//!             }
//!             Message::Close(_) => return, // answered already
//!             _ => {}
//!         }
//!     }
//!     let _ = sender
//!         .send(Message::Close(Some(CloseFrame {
//!             code: close_code::NORMAL,
//!             reason: Utf8Bytes::from_static("Goodbye"),
//!         })))
//!         .await;
//! }
//!
//! let app: Router = Router::new().route("/ws", any(ws_handler));
//! # let _ = app;
//! // ringstream::server::serve(listener, app).await
//! # }
//! ```

mod broadcast;
mod compression;
#[cfg(feature = "deflate")]
mod deflate;
mod gather;
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
    /// ([`Error::TimedOut`](crate::Error::TimedOut)`(`[`WebSocketPing`](crate::error::Timeout::WebSocketPing)`)`).
    /// `None`: never.
    /// Default 30 s.
    pub idle_timeout: Option<Duration>,
    /// How long one [`send`](WebSocket::send) or
    /// [`flush`](WebSocket::flush) may wait for the peer to take its bytes
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
