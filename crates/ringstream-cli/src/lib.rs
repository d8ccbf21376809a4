//! # ringstream-cli
//!
//! The `ringstream` command and the demo it serves. The binary is glue over
//! the [`ringstream`] library: it parses the command line, sets up logging
//! and the tokio runtime, and serves [`app::App`].
//!
//! The demo lives in this library target so that the benchmarks and the wire
//! tests can serve it in-process.

pub mod app;
pub mod open_files;
