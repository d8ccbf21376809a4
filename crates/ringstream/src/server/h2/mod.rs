//! HTTP/2 (feature `http2`): the same services over the second version of
//! the protocol, through the `h2` crate.
//!
//! A connection speaks HTTP/2 when TLS negotiated `h2` by ALPN, or when
//! its first bytes are the HTTP/2 preface (`h2c` with prior knowledge,
//! told apart by the core's [`http2_preface`](ringstream_core::h1::http2_preface)
//! before any request head is parsed); [`Http2Options`] sets its limits.
//!
//! - `serve`: the connection's loop, each stream served in the
//!   connection's task;
//! - `stream`: one stream, its request made the service's, the service's
//!   answer sent;
//! - `respond`: a response out as HEADERS and DATA frames;
//! - `tunnel`: a stream opened by an extended CONNECT (RFC 8441) as the
//!   transport of an upgraded connection — a WebSocket over HTTP/2.
//!
//! The request body is [`Incoming`](crate::Incoming) over the stream's
//! DATA frames (in `body/`), its window given back as the service reads.

mod options;
pub use options::Http2Options;

#[cfg(feature = "http2")]
mod respond;
#[cfg(feature = "http2")]
mod serve;
#[cfg(feature = "http2")]
mod stream;
#[cfg(feature = "http2")]
mod tunnel;

#[cfg(feature = "http2")]
pub(crate) use serve::{serve_http2, Http2Connection};
