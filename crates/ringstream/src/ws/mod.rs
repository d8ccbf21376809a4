//! WebSocket (RFC 6455) on ringstream's server: [`WebSocketUpgrade`]
//! accepts the handshake, [`WebSocket`] carries the messages.
//!
//! The framing rules are the core's ([`ringstream_core::ws`]): this module
//! moves bytes and awaits. A message that arrived in one frame is handed
//! over from the connection's read block without a copy; a large message
//! is sent with its frame head in one vectored write, without a copy.
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
mod config;
#[cfg(feature = "deflate")]
mod deflate;
mod gather;
mod message;
mod send;
mod sink;
mod socket;
mod upgrade;
mod utf8_bytes;

pub use broadcast::{Broadcaster, Frame, Subscription};
pub use config::Config;
#[cfg(feature = "deflate")]
pub use deflate::{Deflater, Inflater, DEFAULT_LEVEL, DEFLATE_TAIL};
pub use message::{close_code, CloseFrame, Message};
pub use ringstream_core::ws::{CloseCode, Limits, Role};
pub use ringstream_core::ws::{DeflateConfig, DeflateParams};
pub use socket::WebSocket;
pub use upgrade::{DefaultOnFailedUpgrade, OnFailedUpgrade, UpgradeRefused, WebSocketUpgrade};
pub use utf8_bytes::Utf8Bytes;
