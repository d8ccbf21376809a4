//! # ringstream-embedded
//!
//! ringstream on a microcontroller: `#![no_std]`, no heap, stable Rust.
//! The embedded web server on ringstream's sans-IO core
//! ([`ringstream_core`]), with the host server's strictness: every byte of
//! HTTP is judged by the same core code that `ringstream serve` uses.
//!
//! - [`http`]: the HTTP/1.1 server. [`serve_connection`](http::serve_connection)
//!   serves one connection with an [`App`](http::App) (an `async fn` in a
//!   trait) over caller-provided [`Buffers`](http::Buffers): request heads
//!   parsed by the core (400/414/431/501/505 as it says), request bodies
//!   of `Content-Length` or chunked streamed to the handler in pieces
//!   through a 1 KiB buffer (413 past the limit), `100 Continue` when the
//!   handler first reads the body, responses of known length or chunked
//!   while printed with `write!` (each formatter run once), `HEAD`,
//!   keep-alive, pipelining and draining as the core's `Exchange` decides,
//!   and a deadline on every phase ([`Config`]).
//!   [`Asset`](http::Asset) serves a static asset from flash, its
//!   entity-tag computed at compile time, with `304` and a precompressed
//!   gzip variant.
//!   [`Responder::accept_websocket`](http::Responder::accept_websocket)
//!   answers a WebSocket handshake through the core and hands the handler
//!   a [`WebSocket`](http::WebSocket) on the core's codec: messages in
//!   pieces of at most the receive buffer, Pings answered, Closes echoed,
//!   violations closed with the core's codes, no heap.
//! - [`sse`]: server-sent events without a heap: an
//!   [`EventStream`](sse::EventStream) on a response, each event sent at
//!   once, a keep-alive comment when idle, and a
//!   [`Broadcaster`](sse::Broadcaster) that keeps the last events once in
//!   a ring fixed at build time, each client a read position, with a
//!   policy for a client that falls behind and `Last-Event-ID` resume.
//! - [`Handler`]: what to do with one connection, given as a single
//!   [`embedded_io_async`] `Read + Write` object, used whole (never split
//!   into halves, so a TLS session can carry it).
//!   [`HttpHandler`](http::HttpHandler) is the HTTP server as one.
//! - `pool` (feature `embassy-net`): a pool of connection slots on one
//!   embassy-net TCP port, with more listening sockets than workers so
//!   that a burst of clients is queued instead of refused (smoltcp has no
//!   accept backlog), one socket kept to answer `503` when every other one
//!   holds a connection, idle kept-alive HTTP connections that give their
//!   slot up to a queued client, and graceful shutdown. The memory is the
//!   caller's, fixed at build time.
//!
//! The same server runs on the host over a tokio `TcpStream` through
//! embedded-io-adapters' `FromTokio`, so it can be tested with real
//! sockets and ordinary HTTP clients.
//!
//! - [`WriteInPlace`]: a connection that lends its own transmit buffer
//!   (embassy-net's `TcpSocket` does), so that
//!   [`serve_connection_in_place`](http::serve_connection_in_place) — and
//!   the pool — format a response's `write!` output straight into the
//!   socket's transmit buffer, copying none of it.
//!
//! # Features
//!
//! - `embassy-net`: the `pool` module, on embassy-net 0.8.
//!
//! The deadlines use embassy-time 0.5: the application brings the time
//! driver (and, with `embassy-net`, a critical-section implementation), as
//! for any embassy program.
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use embedded_io_async;
pub use ringstream_core;

mod config;
mod handler;
pub mod http;
mod in_place;
#[cfg(feature = "embassy-net")]
#[cfg_attr(docsrs, doc(cfg(feature = "embassy-net")))]
pub mod pool;
pub mod sse;

pub use config::Config;
pub use handler::Handler;
pub use in_place::WriteInPlace;

/// The README's examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
