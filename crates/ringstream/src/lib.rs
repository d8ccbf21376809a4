//! # ringstream
//!
//! Buffered async streams with constant memory, on tokio.
//!
//! `ringstream` is the async shell around [`ringstream_core`]: the core is
//! sans-IO (it is given bytes and says what they mean), this crate owns the
//! sockets.

pub use ringstream_core as core;
pub mod response;
pub use response::{ResponseStream, ResponseWriter};
pub mod stream;
pub use stream::{Stream, StreamOptions};
pub mod app;
pub mod body;
pub mod error;
pub mod fs;
pub mod server;
pub mod sse;
pub use body::Incoming;
pub use error::{BoxError, Error};
