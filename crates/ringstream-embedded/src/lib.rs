//! # ringstream-embedded
//!
//! ringstream on a microcontroller: `#![no_std]`, no heap, stable Rust.
//! This crate is where the embedded web server on ringstream's sans-IO
//! core ([`ringstream_core`]) is being built. What it offers today is the
//! connection layer that server will stand on:
//!
//! - [`Handler`]: what to do with one connection, given as a single
//!   [`embedded_io_async`] `Read + Write` object, used whole (never split
//!   into halves, so a TLS session can carry it). Generic, no trait
//!   object, no `Send` bound.
//! - `pool` (feature `embassy-net`): a pool of connection slots on one
//!   embassy-net TCP port, with more listening sockets than workers so
//!   that a burst of clients is queued instead of refused (smoltcp has no
//!   accept backlog). The memory is the caller's, fixed at build time.
//!
//! The same handler runs on the host over a tokio `TcpStream` through
//! embedded-io-adapters' `FromTokio`, so it can be tested with real
//! sockets and ordinary HTTP clients.
//!
//! # What comes next
//!
//! The HTTP/1.1 server itself: request heads parsed by the core's
//! [`HeadParser`](ringstream_core::h1::HeadParser) (already allocation
//! free, into a caller's `[Field; N]`), bodies through the core's
//! decoders, responses through the core's encoder into a fixed buffer,
//! with the host server's strictness (413/414/431, chunked bodies,
//! `100-continue`), a deadline on every phase, and a target of at most
//! 4 KiB of RAM per connection slot beside the TCP buffers. It waits for
//! the core to work without `alloc` (a ring over caller storage, a head
//! writer into a fixed buffer); today `ringstream-core` still links
//! `alloc`, although nothing in this crate allocates.
//!
//! # Features
//!
//! - `embassy-net`: the `pool` module, on embassy-net 0.8 and
//!   embassy-time 0.5. The application brings the time driver and a
//!   critical-section implementation, as for any embassy-net program.
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use embedded_io_async;
pub use ringstream_core;

mod handler;
#[cfg(feature = "embassy-net")]
#[cfg_attr(docsrs, doc(cfg(feature = "embassy-net")))]
pub mod pool;

pub use handler::Handler;

/// The README's examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
