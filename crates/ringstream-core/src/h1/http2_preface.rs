//! The HTTP/2 connection preface (RFC 9113 §3.4): the first bytes of a
//! client that speaks HTTP/2 "with prior knowledge" on a port that also
//! speaks HTTP/1.1 (`h2c`). A server tells the two apart by the first
//! bytes alone, before parsing a request head.

/// The 24 bytes every HTTP/2 client connection starts with.
pub const HTTP2_PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// What a connection's first bytes say about HTTP/2 (see
/// [`http2_preface`]).
///
/// # Examples
///
/// What a server on a shared HTTP/1.1 and `h2c` port does with each answer:
///
/// ```
/// use ringstream_core::h1::{http2_preface, Http2Preface};
///
/// let serve_as = |first: &[u8]| match http2_preface(first) {
///     Http2Preface::Whole => "h2",
///     Http2Preface::Partial => "read more",
///     Http2Preface::Absent => "http/1.1",
///     Http2Preface::Invalid => "close unanswered",
/// };
/// assert_eq!(serve_as(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), "h2");
/// assert_eq!(serve_as(b"PRI * HTTP"), "read more");
/// assert_eq!(serve_as(b"GET / HTTP/1.1\r\n"), "http/1.1");
/// assert_eq!(serve_as(b"BAD PREFACE HERE\r\n"), "close unanswered");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Http2Preface {
    /// The whole preface: the connection speaks HTTP/2.
    Whole,
    /// The start of the preface and nothing else: wait for more bytes.
    Partial,
    /// Not the preface: the connection speaks HTTP/1.x (or nothing valid).
    Absent,
    /// Not the preface, and a first line that is no HTTP/1 request line
    /// either: three words whose last is no HTTP version, as the preface's
    /// own first line is shaped (`INVALID CONNECTION PREFACE`). An invalid
    /// preface (RFC 9113 §3.4: a connection error), to be closed without
    /// an HTTP/1.1 answer, which an HTTP/2 client would read as a frame.
    Invalid,
}

/// Whether `first_bytes`, the first bytes read on a connection, are the
/// HTTP/2 preface.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::{http2_preface, Http2Preface, HTTP2_PREFACE};
///
/// assert_eq!(http2_preface(HTTP2_PREFACE), Http2Preface::Whole);
/// assert_eq!(http2_preface(b"PRI * HTTP/2"), Http2Preface::Partial);
/// assert_eq!(http2_preface(b"GET / HTTP/1.1\r\n"), Http2Preface::Absent);
/// assert_eq!(http2_preface(b"INVALID CONNECTION PREFACE\r\n\r\n"), Http2Preface::Invalid);
/// // An empty read says nothing yet.
/// assert_eq!(http2_preface(b""), Http2Preface::Partial);
/// ```
pub fn http2_preface(first_bytes: &[u8]) -> Http2Preface {
    let n = first_bytes.len().min(HTTP2_PREFACE.len());
    if first_bytes[..n] != HTTP2_PREFACE[..n] {
        if is_versionless_request_line(first_bytes) {
            Http2Preface::Invalid
        } else {
            Http2Preface::Absent
        }
    } else if n == HTTP2_PREFACE.len() {
        Http2Preface::Whole
    } else {
        Http2Preface::Partial
    }
}

/// Whether the first line of `bytes` is complete and shaped as a request
/// line (three words split by single spaces) whose last word does not
/// start with `HTTP/`. Any other line (a request line with a version, a
/// PROXY header, a line not ended yet) is left to the HTTP/1 parser.
fn is_versionless_request_line(bytes: &[u8]) -> bool {
    let Some(end) = bytes.iter().position(|&b| b == b'\n') else {
        return false;
    };
    let line = &bytes[..end];
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let mut words = line.split(|&b| b == b' ');
    match (words.next(), words.next(), words.next(), words.next()) {
        (Some(_), Some(_), Some(version), None) => !version.starts_with(b"HTTP/"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_preface_followed_by_frames_is_whole() {
        let mut bytes = HTTP2_PREFACE.to_vec();
        bytes.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]);
        assert_eq!(http2_preface(&bytes), Http2Preface::Whole);
    }

    #[test]
    fn every_proper_prefix_is_partial_and_every_wrong_byte_is_absent() {
        for n in 0..HTTP2_PREFACE.len() {
            assert_eq!(http2_preface(&HTTP2_PREFACE[..n]), Http2Preface::Partial);
            let mut wrong = HTTP2_PREFACE[..=n].to_vec();
            wrong[n] ^= 0x20;
            assert_eq!(http2_preface(&wrong), Http2Preface::Absent, "byte {n}");
        }
    }

    #[test]
    fn an_http1_request_with_the_pri_method_is_absent() {
        assert_eq!(
            http2_preface(b"PRI * HTTP/1.1\r\nHost: x\r\n\r\n"),
            Http2Preface::Absent
        );
    }

    #[test]
    fn a_first_line_without_an_http_version_is_an_invalid_preface() {
        let invalid = http2_preface(b"INVALID CONNECTION PREFACE\r\n\r\n");
        assert_eq!(invalid, Http2Preface::Invalid);
        assert_eq!(http2_preface(b"GET / FTP/1.0\n"), Http2Preface::Invalid);
        // Left to the HTTP/1 parser: a version, another shape, a line not
        // ended yet.
        for absent in [
            &b"GET / HTTP/1.1\r\n"[..],
            b"GET / HTTP/9.9\r\n",
            b"PROXY TCP4 192.0.2.1 192.0.2.2 1234 80\r\n",
            b"GET /\r\n",
            b"INVALID CONNECTION PREFACE",
        ] {
            assert_eq!(http2_preface(absent), Http2Preface::Absent, "{absent:?}");
        }
    }
}
