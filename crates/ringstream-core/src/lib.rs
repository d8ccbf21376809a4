//! # ringstream-core
//!
//! The sans-IO heart of ringstream: it is given bytes and says what they mean.
//! It has no runtime and performs no I/O, and builds with `#![no_std]`, with
//! or without a heap, so it fits embedded targets as well as servers.
//!
//! - [`ring`]: [`RingBuffer`], a growable circular byte buffer with
//!   geometric growth, bulk copy-once reads and writes, and a bounded form
//!   for back-pressure; and [`FixedRing`], the same over storage the caller
//!   provides (an array, a borrowed slice), never allocating.
//! - [`h1`]: strict HTTP/1.1 framing per RFC 9112: request heads, body
//!   framing, `Content-Length` and chunked decoders and encoders, and the
//!   connection rules of one exchange.
//! - [`ws`]: WebSocket (RFC 6455): frame heads, masking, a decoder that
//!   reassembles messages under size limits and validates text as UTF-8,
//!   close codes, the writer side, and the server's handshake checks, with
//!   its own error type mapping every violation to a close code.
//! - [`forwarded`]: the client of a request relayed by HTTP proxies
//!   (`Forwarded`, `X-Forwarded-For`), through the proxies trusted.
//! - [`proxy`]: the PROXY protocol (versions 1 and 2) a load balancer
//!   puts before a connection's bytes, naming the client.
//! - [`out`]: [`WriteBuf`], the output buffer every writer of the core
//!   appends to — a `Vec<u8>`, a [`SliceBuf`] over a fixed transmit buffer,
//!   a ring — where running out of space is an ordinary result
//!   ([`OutOfSpace`]) that leaves the buffer as it was.
//! - [`Error`] and [`Limits`]: the one error type of this layer, and the caps
//!   on everything a peer controls.
//!
//! # Features
//!
//! - `std` (on by default, implies `alloc`): `std::io::{Read, Write,
//!   BufRead}` for the rings, and `std::io::IoSlice` views of the growable
//!   ring.
//! - `alloc`: what needs a heap — [`RingBuffer`] and its `bytes::Buf` and
//!   `BufMut` views, `Vec<u8>` as a [`WriteBuf`], and the trailer fields of
//!   a chunked body (`Decoder::trailers`).
//! - With neither (`default-features = false`), everything else works
//!   without a heap, on the same code paths: the head parser
//!   ([`h1::HeadParser`], with caller-provided field storage), the body
//!   decoders (a chunked body's trailer fields are checked as strictly,
//!   then dropped), the response head writer, [`h1::Encoder`],
//!   [`h1::Exchange`], content negotiation, the WebSocket codec and
//!   handshake checks, [`FixedRing`] and [`SliceBuf`]. CI builds this form
//!   for `thumbv7em-none-eabihf`.
//!
//! # Examples
//!
//! A request read into a fixed ring and answered in a fixed buffer, with
//! no heap:
//!
//! ```
//! use ringstream_core::h1::{Exchange, Field, HeadParser, ResponseHead};
//! use ringstream_core::{FixedRing, Limits, SliceBuf, WriteBuf};
//!
//! let mut rx = FixedRing::new([0u8; 512]);
//! rx.write(b"GET /hello HTTP/1.1\r\nHost: device.local\r\n\r\n");
//! let mut fields = [Field::EMPTY; 16];
//! let head = HeadParser::new(Limits::DEFAULT)
//!     .parse(rx.make_contiguous(), &mut fields)?
//!     .expect("a complete head");
//! let mut exchange = Exchange::new(&head);
//! let used = head.head_len;
//! rx.consume(used);
//!
//! let mut tx = [0u8; 256];
//! let mut out = SliceBuf::new(&mut tx);
//! let body = b"hi";
//! exchange.write_head(&mut out, &ResponseHead::new(200), [], Some(body.len() as u64))?;
//! out.put(body)?;
//! assert_eq!(out.written(), b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nhi");
//! # Ok::<(), ringstream_core::Error>(())
//! ```
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

// Unit tests may use a heap whatever the features.
#[cfg(any(feature = "alloc", test))]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod byte_str;
pub mod error;
pub mod forwarded;
pub mod h1;
pub mod limits;
pub mod out;
pub mod proxy;
pub mod ring;
pub mod ws;

pub use error::Error;
pub use limits::Limits;
pub use out::{OutOfSpace, SliceBuf, WriteBuf};
pub use ring::FixedRing;
#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub use ring::RingBuffer;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
