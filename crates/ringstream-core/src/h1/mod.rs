//! Strict, sans-IO HTTP/1.1 framing (RFC 9112).
//!
//! - `head`: request-head parsing and validation, deciding the body framing.
//! - `decode`: `LengthDecoder` and `ChunkedDecoder`, stepping over byte slices.
//! - `encode`: the response head writer, `LengthEncoder`, `ChunkedEncoder` and
//!   the response-framing rule.
//!
//! The types shared by all three live here.

pub mod head;
pub use head::{Field, HeadParser, RequestHead, TargetForm, MAX_FIELDS};
pub mod decode;
pub use decode::{ChunkedDecoder, Decoder, LengthDecoder, Progress, Trailers};
pub mod encode;
pub use encode::{
    response_framing, write_response_head, ChunkPrefix, ChunkedEncoder, DateCache, HttpDate,
    LengthEncoder, ResponseFraming,
};

/// The HTTP version of a message: ringstream speaks HTTP/1.0 and HTTP/1.1.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::Version;
///
/// assert_eq!(Version::Http11.as_str(), "HTTP/1.1");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Version {
    /// HTTP/1.0 (RFC 1945).
    Http10,
    /// HTTP/1.1 (RFC 9112).
    Http11,
}

impl Version {
    /// The protocol string as it appears on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            Version::Http10 => "HTTP/1.0",
            Version::Http11 => "HTTP/1.1",
        }
    }
}

/// How a request body is delimited, decided from the head per RFC 9112 §6.3.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::BodyFraming;
///
/// assert!(BodyFraming::None.is_empty());
/// assert!(BodyFraming::Length(0).is_empty());
/// assert!(!BodyFraming::Chunked.is_empty());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BodyFraming {
    /// No body (no `Content-Length`, no `Transfer-Encoding`).
    None,
    /// A body of exactly this many bytes (`Content-Length`).
    Length(u64),
    /// A chunked body (`Transfer-Encoding: chunked`).
    Chunked,
}

impl BodyFraming {
    /// Whether the framing says the body is empty.
    pub const fn is_empty(self) -> bool {
        matches!(self, BodyFraming::None | BodyFraming::Length(0))
    }
}

/// `tchar` (RFC 9110 §5.6.2).
#[inline]
pub(crate) const fn is_tchar(b: u8) -> bool {
    matches!(
        b,
        b'!' | b'#'
            | b'$'
            | b'%'
            | b'&'
            | b'\''
            | b'*'
            | b'+'
            | b'-'
            | b'.'
            | b'^'
            | b'_'
            | b'`'
            | b'|'
            | b'~'
            | b'0'..=b'9'
            | b'a'..=b'z'
            | b'A'..=b'Z'
    )
}
