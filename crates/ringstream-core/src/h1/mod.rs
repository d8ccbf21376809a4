//! Strict, sans-IO HTTP/1.1 framing (RFC 9112).
//!
//! Each module builds on the ones above it, never on one below:
//!
//! - `syntax` and `version`: the grammar's building blocks (tokens, field
//!   values, lists, CRLF) and [`Version`].
//! - `framing`: how a body is delimited — [`BodyFraming`], which a request
//!   head decides, and the response framing rule ([`response_framing`]).
//! - [`head`]: request-head parsing and validation, deciding the body
//!   framing.
//! - [`decode`]: [`LengthDecoder`] and [`ChunkedDecoder`], stepping over
//!   byte slices.
//! - [`date`]: the `Date` value, cached per second.
//! - [`response`]: the one place response heads are written — the status
//!   line, the caller's fields, the framing and connection fields — and the
//!   bare error responses a server closes with.
//! - [`encode`]: the body [`Encoder`] (`Content-Length`, chunked with
//!   trailers, close-delimited, none).
//! - [`negotiate`]: content negotiation and conditional requests.
//! - [`conn`]: the connection rules of one exchange ([`Exchange`]):
//!   keep-alive or close, `100 Continue`, draining an unread body, upgrade.
//! - `http2_preface`: whether a connection's first bytes are the HTTP/2
//!   preface ([`http2_preface`]), so one port serves both versions.

mod syntax;
mod version;
pub use version::Version;
mod framing;
pub use framing::{response_framing, BodyFraming, ResponseFraming};
pub mod head;
pub use head::{Field, HeadParser, RequestHead, TargetForm, MAX_FIELDS};
pub mod decode;
#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub use decode::Trailers;
pub use decode::{ChunkedDecoder, Decoder, LengthDecoder, Progress};
pub mod date;
pub use date::{DateCache, HttpDate, HTTP_DATE_LEN, MAX_HTTP_DATE_SECS};
mod server_fields;
pub use server_fields::{ServerFields, MAX_SERVER_NAME};
pub mod response;
pub use response::{
    reason_phrase, write_error_response, write_response_head, write_unavailable_response,
    ResponseHead,
};
pub mod encode;
pub use encode::{BodyFrame, ChunkPrefix, ChunkedEncoder, Encoder, LengthEncoder};
pub use syntax::{list_contains, CRLF};
pub mod conn;
mod http2_preface;
pub mod negotiate;
pub use conn::{BodyState, Exchange, Next, CONTINUE};
pub use http2_preface::{http2_preface, Http2Preface, HTTP2_PREFACE};
