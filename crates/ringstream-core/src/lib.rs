//! # ringstream-core
//!
//! The sans-IO heart of ringstream: it is given bytes and says what they mean.
//! It has no runtime and performs no I/O, and builds with `#![no_std]` plus
//! `alloc`, so it fits embedded targets as well as servers.
//!
//! - [`RingBuffer`]: a growable circular byte buffer with geometric growth,
//!   bulk copy-once reads and writes, and a bounded form for back-pressure.
//!
//! The `std` feature (on by default) adds `std::io::{Read, Write, BufRead}`
//! implementations.
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod ring;

pub use ring::RingBuffer;
