//! The HTTP/1.1 server: one connection served by an [`App`], every
//! decision taken by ringstream's sans-IO core.
//!
//! [`serve_connection`] reads request heads into the caller's receive
//! buffer and asks the core's [`HeadParser`](ringstream_core::h1::HeadParser)
//! what they mean; the core's [`Exchange`](ringstream_core::h1::Exchange)
//! decides `100 Continue`, the response framing, keep-alive and draining;
//! request bodies go through the core's
//! [`Decoder`](ringstream_core::h1::Decoder) and response bodies through
//! its [`Encoder`](ringstream_core::h1::Encoder); bad requests are
//! answered by its `write_error_response` with the status its
//! [`Error::status`](ringstream_core::Error::status) gives. This module
//! moves bytes and awaits; it parses nothing itself.
//!
//! - [`App`]: the application, an `async fn` in a trait on stable Rust.
//! - [`Request`]: the request head, borrowed from the receive buffer.
//! - [`Responder`]: reads the request body in pieces and writes the
//!   response: known length or chunked, with `write!` formatting straight
//!   into the transmit buffer, each formatter run once.
//! - [`Buffers`]: the receive and transmit buffers of one connection.
//! - [`Asset`]: a static asset from flash, with its entity-tag computed
//!   at compile time, `304` and a precompressed gzip variant.
//! - [`HttpHandler`]: an [`App`] as a [`Handler`](crate::Handler), so the
//!   `embassy-net` pool serves HTTP.
//!
//! Responses carry no `Date` field: a device without a reliable clock
//! must not send one (RFC 9110 §6.6.1), and the application can add its
//! own among a response's fields when it has one.
//!
//! # Memory
//!
//! Nothing is allocated. A connection uses its [`Buffers`] (1 KiB + 512
//! bytes make a good start), [`FIELDS`] field slots and a few words of
//! state in the `serve_connection` future. The receive buffer holds the
//! request head for as long as the handler runs (the [`Request`] borrows
//! it); the request body and any pipelined request stream through the rest
//! of it, so a body of any size passes through a buffer of 1 KiB.

mod app;
mod asset;
mod body;
mod conn;
mod error;
mod handler;
mod request;
mod response;
mod ws;

pub use app::App;
pub use asset::{Asset, ETAG_LEN};
pub use conn::{
    serve_connection, serve_connection_in_place, serve_connection_with, Buffers, Release, FIELDS,
};
pub use error::Error;
pub use handler::HttpHandler;
pub use request::Request;
pub use response::{Responder, Sent};
pub use ws::{Piece, Received, Upgrade, WebSocket, WebSocketConfig};
