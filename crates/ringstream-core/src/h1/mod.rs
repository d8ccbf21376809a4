//! Strict, sans-IO HTTP/1.1 framing (RFC 9112).
//!
//! - `head`: request-head parsing and validation, deciding the body framing.
//! - `decode`: `LengthDecoder` and `ChunkedDecoder`, stepping over byte slices.
//! - `encode`: the response-framing rule, the response head writer and the
//!   body [`Encoder`] (`Content-Length`, chunked with trailers,
//!   close-delimited, none), and the `Date` value.
//! - `conn`: the connection rules of one exchange ([`Exchange`]):
//!   keep-alive or close, `100 Continue`, draining an unread body, upgrade.
//!
//! The types these modules share live here.

pub mod head;
pub use head::{Field, HeadParser, RequestHead, TargetForm, MAX_FIELDS};
pub mod decode;
#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub use decode::Trailers;
pub use decode::{ChunkedDecoder, Decoder, LengthDecoder, Progress};
pub mod encode;
pub use encode::{
    response_framing, write_error_response, write_response_head, write_unavailable_response,
    BodyFrame, ChunkPrefix, ChunkedEncoder, DateCache, Encoder, HttpDate, LengthEncoder,
    ResponseFraming, ResponseHead,
};
pub mod conn;
mod date;
pub mod negotiate;
mod response;
pub use conn::{BodyState, Exchange, Next, CONTINUE};

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

/// How a message body is delimited (RFC 9112 §6.3). A request head decides
/// `None`, `Length` or `Chunked`; `CloseDelimited` is for a response read
/// by a client.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::BodyFraming;
///
/// assert!(BodyFraming::None.is_empty());
/// assert!(BodyFraming::Length(0).is_empty());
/// assert!(!BodyFraming::Chunked.is_empty());
/// assert_eq!(BodyFraming::None.length(), Some(0));
/// assert_eq!(BodyFraming::CloseDelimited.length(), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BodyFraming {
    /// No body (no `Content-Length`, no `Transfer-Encoding`).
    None,
    /// A body of exactly this many bytes (`Content-Length`).
    Length(u64),
    /// A chunked body (`Transfer-Encoding: chunked`).
    Chunked,
    /// A body that ends when the peer closes the connection (a response
    /// without a length; never a request, RFC 9112 §6.3).
    CloseDelimited,
}

impl BodyFraming {
    /// Whether the framing says the body is empty.
    #[inline]
    pub const fn is_empty(self) -> bool {
        matches!(self, BodyFraming::None | BodyFraming::Length(0))
    }

    /// The body length in bytes, when the framing tells it (`None` is a
    /// length of zero).
    #[inline]
    pub const fn length(self) -> Option<u64> {
        match self {
            BodyFraming::None => Some(0),
            BodyFraming::Length(n) => Some(n),
            BodyFraming::Chunked | BodyFraming::CloseDelimited => None,
        }
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

/// Whether `s` is a non-empty token (RFC 9110 §5.6.2).
pub(crate) fn is_token(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(|&b| TCHAR[usize::from(b)])
}

/// `tchar` (RFC 9110 §5.6.2) by table lookup, for loops over many bytes.
#[inline]
pub(crate) fn is_tchar_byte(b: u8) -> bool {
    TCHAR[usize::from(b)]
}

/// RFC 9110 §5.6.2 tchar, by byte value.
pub(crate) static TCHAR: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = is_tchar(b);
        i += 1;
    }
    t
};

/// Whether every byte of `v` is allowed in a field value, looking at eight
/// bytes at a time: only a word holding a control byte (HTAB included) or
/// DEL is checked byte by byte.
pub(crate) fn is_field_value(v: &[u8]) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const DEL: u64 = LO * 0x7f;
    let mut chunks = v.chunks_exact(8);
    for chunk in &mut chunks {
        let Ok(word) = <[u8; 8]>::try_from(chunk) else {
            return false;
        };
        let w = u64::from_le_bytes(word);
        let del = w ^ DEL;
        // Non-zero when some byte is below 0x20 or equals 0x7f.
        let suspect = ((w.wrapping_sub(LO * 0x20) & !w) | (del.wrapping_sub(LO) & !del)) & HI;
        if suspect != 0 && !chunk.iter().all(|&b| FIELD_BYTE[usize::from(b)]) {
            return false;
        }
    }
    chunks
        .remainder()
        .iter()
        .all(|&b| FIELD_BYTE[usize::from(b)])
}

/// Bytes allowed in a field value: HTAB, SP, VCHAR, obs-text
/// (RFC 9110 §5.5), by byte value.
static FIELD_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = b == b'\t' || (b >= b' ' && b <= b'~') || b >= 0x80;
        i += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_value_check_matches_the_table() {
        let naive = |s: &[u8]| s.iter().all(|&b| FIELD_BYTE[usize::from(b)]);
        for bad in 0u8..=255 {
            for at in 0..20 {
                let mut v = [b'x'; 20];
                v[at] = bad;
                for from in 0..v.len() {
                    assert_eq!(
                        is_field_value(&v[from..]),
                        naive(&v[from..]),
                        "{bad} at {at}"
                    );
                }
            }
        }
    }
}
