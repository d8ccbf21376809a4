//! The core's error type: everything a peer can get wrong in HTTP/1.1 framing.

use core::fmt;

/// An HTTP/1.1 framing error found by the sans-IO core.
///
/// Every variant maps to the status code a server must answer with
/// ([`Error::status`]) before it closes the connection: the core never
/// recovers from a framing error, because after one the message boundaries
/// on the connection can no longer be trusted (RFC 9112 §6.3 and §11.2).
///
/// # Examples
///
/// ```
/// use ringstream_core::Error;
///
/// assert_eq!(Error::HeadTooLarge.status(), 431);
/// assert_eq!(Error::HeadTooLarge.to_string(), "request head too large");
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Error {
    // ---- request line -------------------------------------------------
    /// The method is not a token (RFC 9110 §9.1).
    InvalidMethod,
    /// The method is longer than [`Limits::max_method_len`](crate::Limits),
    /// so longer than any method the server implements: 501, as RFC 9112 §3
    /// recommends. Reported as soon as the first byte over the limit
    /// arrives, not once the head is too large (431).
    MethodTooLong,
    /// The request-target is malformed or not allowed for the method
    /// (RFC 9112 §3.2).
    InvalidTarget,
    /// The request-target is longer than [`Limits::max_target_len`](crate::Limits).
    TargetTooLong,
    /// The HTTP version is not 1.0 or 1.1 (RFC 9112 §2.3).
    UnsupportedVersion,
    /// The request line or a field line is malformed (RFC 9112 §3, §5).
    MalformedHead,
    /// A bare CR was found where CRLF is required (RFC 9112 §2.2).
    BareCr,
    /// Whitespace between the start line and the first field (RFC 9112 §2.2).
    WhitespaceBeforeFirstField,
    /// Line folding (obs-fold) in a field (RFC 9112 §5.2).
    ObsFold,
    // ---- fields -------------------------------------------------------
    /// A field name is not a token (RFC 9110 §5.1).
    InvalidFieldName,
    /// Whitespace between a field name and the colon (RFC 9112 §5.1).
    WhitespaceBeforeColon,
    /// A field value carries CR, LF, NUL or another forbidden byte
    /// (RFC 9110 §5.5).
    InvalidFieldValue,
    /// The head is larger than [`Limits::max_head_len`](crate::Limits).
    HeadTooLarge,
    /// More fields than [`Limits::max_fields`](crate::Limits); also
    /// returned, without ending the parse, when the field storage passed to
    /// [`HeadParser::parse`](crate::h1::HeadParser::parse) is too short for
    /// a head within the limit.
    TooManyFields,
    /// An HTTP/1.1 request without a `Host` field (RFC 9112 §3.2).
    MissingHost,
    /// More than one `Host` field (RFC 9112 §3.2).
    DuplicateHost,
    /// The `Host` value is not a valid `uri-host[:port]` (RFC 9110 §7.2).
    InvalidHost,
    // ---- body framing -------------------------------------------------
    /// `Content-Length` is not 1*DIGIT, overflows, or lists differing
    /// values (RFC 9110 §8.6, RFC 9112 §6.3).
    InvalidContentLength,
    /// `Transfer-Encoding` in an HTTP/1.0 request (RFC 9112 §6.1).
    TransferEncodingOnHttp10,
    /// `Transfer-Encoding` whose final coding is not `chunked`, or which
    /// applies `chunked` more than once (RFC 9112 §6.1, §6.3).
    InvalidTransferEncoding,
    /// A transfer coding this server does not implement (RFC 9112 §6.1).
    UnknownTransferCoding,
    /// Both `Content-Length` and `Transfer-Encoding` (RFC 9112 §6.1, §6.3).
    ContentLengthWithTransferEncoding,
    /// The body is larger than [`Limits::max_body_len`](crate::Limits): a
    /// `Content-Length` above it (refused with the head), or a chunked body
    /// whose chunks add up to more. 413 (RFC 9110 §15.5.14).
    BodyTooLarge,
    // ---- chunked coding -----------------------------------------------
    /// A chunk-size line is empty, not hex, or has a sign or prefix
    /// (RFC 9112 §7.1).
    InvalidChunkSize,
    /// A chunk size does not fit in a `u64`.
    ChunkSizeOverflow,
    /// A chunk extension carries a forbidden byte or bad syntax
    /// (RFC 9112 §7.1.1).
    InvalidChunkExtension,
    /// Chunk extensions longer than [`Limits::max_chunk_ext_len`](crate::Limits).
    ChunkExtensionTooLong,
    /// Chunk data is not followed by CRLF (RFC 9112 §7.1).
    MissingChunkCrlf,
    /// A bare LF where CRLF is required in chunked framing (RFC 9112 §2.2).
    BareLf,
    /// A trailer field is malformed (RFC 9112 §7.1.2).
    InvalidTrailer,
    /// The trailer section exceeds its size or count limit.
    TrailersTooLarge,
    /// A trailer carries a framing field (`Content-Length`,
    /// `Transfer-Encoding`, `Host`) (RFC 9110 §6.5.1).
    ForbiddenTrailer,
    /// The input ended before the message was complete.
    UnexpectedEof,
    // ---- encoding -----------------------------------------------------
    /// More body bytes were written than the declared `Content-Length`.
    BodyOverflow,
    /// Fewer body bytes were written than the declared `Content-Length`.
    BodyUnderflow,
    /// A response status code is not three digits (RFC 9110 §15).
    InvalidStatus,
    /// The output buffer has no room for what was to be written (a response
    /// head, the end of a chunked body): nothing was written. Only a buffer
    /// of fixed size runs out ([`OutOfSpace`](crate::OutOfSpace)); send what
    /// it holds and write again, or answer 500 if even an empty buffer is
    /// too small.
    OutOfSpace,
}

impl Error {
    /// The HTTP status code a server answers with for this error.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::Error;
    ///
    /// assert_eq!(Error::TargetTooLong.status(), 414);
    /// assert_eq!(Error::UnknownTransferCoding.status(), 501);
    /// assert_eq!(Error::UnsupportedVersion.status(), 505);
    /// ```
    pub const fn status(self) -> u16 {
        match self {
            Error::TargetTooLong => 414,
            Error::HeadTooLarge | Error::TooManyFields => 431,
            Error::UnsupportedVersion => 505,
            Error::UnknownTransferCoding | Error::MethodTooLong => 501,
            Error::BodyTooLarge => 413,
            Error::BodyOverflow
            | Error::BodyUnderflow
            | Error::InvalidStatus
            | Error::OutOfSpace => 500,
            _ => 400,
        }
    }

    /// A short lowercase description, the same text as `Display`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::Error;
    ///
    /// assert_eq!(Error::BareLf.as_str(), Error::BareLf.to_string());
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            Error::InvalidMethod => "invalid method",
            Error::MethodTooLong => "method too long",
            Error::InvalidTarget => "invalid request target",
            Error::TargetTooLong => "request target too long",
            Error::UnsupportedVersion => "unsupported http version",
            Error::MalformedHead => "malformed request head",
            Error::BareCr => "bare cr in head",
            Error::WhitespaceBeforeFirstField => "whitespace before first field",
            Error::ObsFold => "obsolete line folding",
            Error::InvalidFieldName => "invalid field name",
            Error::WhitespaceBeforeColon => "whitespace before colon",
            Error::InvalidFieldValue => "invalid field value",
            Error::HeadTooLarge => "request head too large",
            Error::TooManyFields => "too many fields",
            Error::MissingHost => "missing host",
            Error::DuplicateHost => "duplicate host",
            Error::InvalidHost => "invalid host",
            Error::InvalidContentLength => "invalid content-length",
            Error::TransferEncodingOnHttp10 => "transfer-encoding on http/1.0",
            Error::InvalidTransferEncoding => "invalid transfer-encoding",
            Error::UnknownTransferCoding => "unknown transfer coding",
            Error::ContentLengthWithTransferEncoding => "both content-length and transfer-encoding",
            Error::BodyTooLarge => "body too large",
            Error::InvalidChunkSize => "invalid chunk size",
            Error::ChunkSizeOverflow => "chunk size overflow",
            Error::InvalidChunkExtension => "invalid chunk extension",
            Error::ChunkExtensionTooLong => "chunk extension too long",
            Error::MissingChunkCrlf => "missing crlf after chunk data",
            Error::BareLf => "bare lf in chunked framing",
            Error::InvalidTrailer => "invalid trailer field",
            Error::TrailersTooLarge => "trailers too large",
            Error::ForbiddenTrailer => "forbidden field in trailers",
            Error::UnexpectedEof => "unexpected end of message",
            Error::BodyOverflow => "body longer than content-length",
            Error::BodyUnderflow => "body shorter than content-length",
            Error::InvalidStatus => "invalid status code",
            Error::OutOfSpace => "no room in the output buffer",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl core::error::Error for Error {}

impl From<crate::OutOfSpace> for Error {
    /// [`Error::OutOfSpace`].
    #[inline]
    fn from(_: crate::OutOfSpace) -> Error {
        Error::OutOfSpace
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn statuses_match_rfc_9110_section_15() {
        assert_eq!(Error::MissingHost.status(), 400);
        assert_eq!(Error::TooManyFields.status(), 431);
        assert_eq!(Error::BodyTooLarge.status(), 413);
        assert_eq!(Error::MethodTooLong.status(), 501);
        assert_eq!(Error::MethodTooLong.to_string(), "method too long");
        assert_eq!(Error::InvalidChunkSize.to_string(), "invalid chunk size");
    }
}
