//! # ringstream-cli
//!
//! The `ringstream` command and the demo it serves. The binary is glue over
//! the [`ringstream`] library: it parses the command line, sets up logging
//! and the tokio runtime, and serves [`app::App`], over HTTPS when asked
//! ([`https`]: the development certificate, the redirect from plain HTTP).
//!
//! The demo lives in this library target so that the benchmarks and the wire
//! tests can serve it in-process.

pub mod app;
pub mod https;
pub mod open_files;
