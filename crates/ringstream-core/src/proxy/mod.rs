//! The PROXY protocol (HAProxy's, versions 1 and 2): the header a load
//! balancer sends first on each connection it opens to a server, naming
//! the client it came from. Sans-IO: [`parse`] is given the connection's
//! first bytes and says whether they hold a whole header, what it says,
//! and how many bytes it took.
//!
//! The specification's rules for a receiver, and where they live:
//!
//! - the header comes before anything else, and a connection that should
//!   start with one and does not is closed: [`parse`] answers
//!   [`Error::NotProxy`] on the first byte that cannot begin a header;
//! - version 1 is one text line of at most 107 bytes ending in CRLF
//!   ([`Error::LineTooLong`] past it); version 2 is binary, a 16-byte head
//!   and a length, checked against the address family and the caller's
//!   cap ([`Error::TooLong`]);
//! - `LOCAL` (a balancer's own health check) and `UNKNOWN`/`UNSPEC` carry
//!   no usable addresses: [`Header::source`] is `None`, and the server
//!   uses the socket's own;
//! - version 2's type-length-value extensions are exposed as they are
//!   ([`Header::tlvs`], with accessors for the common ones: ALPN,
//!   authority, unique id, TLS details, cloud endpoint ids), checked for
//!   length, and a CRC32C extension is verified.
//!
//! Whether a source may send a header at all (only trusted balancers) is
//! the server's decision, not the parser's.
//!
//! # Examples
//!
//! ```
//! use ringstream_core::proxy::{parse, Command};
//!
//! let bytes = b"PROXY TCP4 203.0.113.7 192.0.2.1 51000 443\r\nGET / HTTP/1.1\r\n";
//! let header = parse(bytes, 4096)?.expect("a whole header");
//! assert_eq!(header.version(), 1);
//! assert_eq!(header.command(), Command::Proxy);
//! assert_eq!(header.source().unwrap().to_string(), "203.0.113.7:51000");
//! assert_eq!(header.destination().unwrap().port(), 443);
//! // The request starts where the header ends.
//! assert!(bytes[header.len()..].starts_with(b"GET /"));
//!
//! // Not all of it yet: wait for more bytes.
//! assert!(parse(b"PROXY TCP4 203.0", 4096)?.is_none());
//! # Ok::<(), ringstream_core::proxy::Error>(())
//! ```

mod crc32c;
mod error;
mod header;
mod tlv;
mod v1;
mod v2;

pub use error::Error;
pub use header::{Command, Header};
pub use tlv::{SslInfo, Tlv, Tlvs};
pub use v1::MAX_V1_LEN;
pub use v2::SIGNATURE;

/// Reads a PROXY header (version 1 or 2) from the start of `bytes`, the
/// first bytes of a connection. `Ok(None)`: `bytes` is the start of a
/// header, wait for more. `max_len` caps a version 2 header (16 bytes of
/// head and its addresses and extensions); version 1 is capped at
/// [`MAX_V1_LEN`].
///
/// # Errors
///
/// [`Error`]: the bytes are not a PROXY header, or break its rules. The
/// connection is to be closed without an answer.
pub fn parse(bytes: &[u8], max_len: usize) -> Result<Option<Header<'_>>, Error> {
    match bytes.first() {
        None => Ok(None),
        Some(b'P') => v1::parse(bytes),
        Some(&first) if first == SIGNATURE[0] => v2::parse(bytes, max_len),
        Some(_) => Err(Error::NotProxy),
    }
}

#[cfg(test)]
mod tests;
