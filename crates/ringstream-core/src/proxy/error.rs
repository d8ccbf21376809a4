//! The PROXY header's error type: every way its first bytes can fail a
//! connection that must start with one. None is answered: the server
//! closes the connection (the peer is a balancer, or an impostor).

use core::fmt;

/// What is wrong with a PROXY header.
///
/// # Examples
///
/// ```
/// use ringstream_core::proxy::{parse, Error};
///
/// assert_eq!(parse(b"GET / HTTP/1.1\r\n", 4096), Err(Error::NotProxy));
/// assert_eq!(Error::NotProxy.to_string(), "no PROXY header");
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Error {
    /// The bytes do not begin a PROXY header of either version.
    NotProxy,
    /// A version 1 line has no CRLF within 107 bytes.
    LineTooLong,
    /// A version 1 line is not `PROXY TCP4|TCP6 src dst sport dport` (or
    /// `PROXY UNKNOWN …`): a bad protocol, address, port or separator.
    BadLine,
    /// A version 2 header's version is not 2.
    BadVersion,
    /// A version 2 header's command is neither `LOCAL` nor `PROXY`.
    BadCommand,
    /// A version 2 header's address family or transport is not one a
    /// stream server takes (a datagram, an unknown family).
    BadFamily,
    /// A version 2 header's length is shorter than its addresses need.
    BadLength,
    /// A version 2 header is longer than the server accepts.
    TooLong,
    /// An extension runs past the end of the header.
    BadTlv,
    /// The CRC32C extension does not match the header.
    BadChecksum,
}

impl Error {
    /// A short description, as [`Display`](fmt::Display) writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Error::NotProxy => "no PROXY header",
            Error::LineTooLong => "PROXY v1 line without CRLF within 107 bytes",
            Error::BadLine => "malformed PROXY v1 line",
            Error::BadVersion => "PROXY v2 header of another version",
            Error::BadCommand => "PROXY v2 header with an unknown command",
            Error::BadFamily => "PROXY v2 header with an unsupported family or transport",
            Error::BadLength => "PROXY v2 header too short for its addresses",
            Error::TooLong => "PROXY v2 header longer than allowed",
            Error::BadTlv => "PROXY v2 extension past the end of the header",
            Error::BadChecksum => "PROXY v2 header failing its CRC32C",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl core::error::Error for Error {}
