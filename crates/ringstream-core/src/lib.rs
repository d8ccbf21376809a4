//! # ringstream-core
//!
//! The sans-IO heart of ringstream: it is given bytes and says what they mean.
//! It has no runtime and performs no I/O, and builds with `#![no_std]` plus
//! `alloc`, so it fits embedded targets as well as servers.
//!
//! - [`RingBuffer`]: a growable circular byte buffer with geometric growth,
//!   bulk copy-once reads and writes, and a bounded form for back-pressure.
//! - [`h1`]: strict HTTP/1.1 framing per RFC 9112: request heads, body
//!   framing, `Content-Length` and chunked decoders and encoders.
//! - [`ws`]: WebSocket (RFC 6455): frame heads, masking, a decoder that
//!   reassembles messages under size limits and validates text as UTF-8,
//!   close codes, the writer side, and the server's handshake checks, with
//!   its own error type mapping every violation to a close code.
//! - [`Error`] and [`Limits`]: the one error type of this layer, and the caps
//!   on everything a peer controls.
//!
//! The `std` feature (on by default) adds `std::io::{Read, Write, BufRead}`
//! implementations.
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

// Unit tests may use a heap whatever the features.
#[cfg(any(feature = "alloc", test))]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod byte_str;
pub mod error;
pub mod h1;
pub mod limits;
pub mod out;
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
