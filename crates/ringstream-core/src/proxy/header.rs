//! [`Header`]: what a PROXY header says, whichever its version.

use core::net::SocketAddr;

use super::tlv::Tlvs;

/// What a header asks of the server.
///
/// # Examples
///
/// A balancer's health check (version 2, `LOCAL`) names no client:
///
/// ```
/// use ringstream_core::proxy::{parse, Command, SIGNATURE};
///
/// let mut bytes = SIGNATURE.to_vec();
/// bytes.extend_from_slice(&[0x20, 0x00, 0, 0]); // LOCAL, UNSPEC, no addresses
/// let header = parse(&bytes, 4096)?.unwrap();
/// assert_eq!(header.command(), Command::Local);
/// assert_eq!(header.source(), None);
/// # Ok::<(), ringstream_core::proxy::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// A connection relayed for a client: the addresses are the client's
    /// and the one it connected to.
    Proxy,
    /// The balancer's own connection (a health check): serve it as a
    /// direct connection, with the socket's addresses (version 2 only).
    Local,
}

/// A parsed PROXY header, borrowing the bytes it was read from.
///
/// # Examples
///
/// A version 2 header (TCP over IPv4) in front of a request:
///
/// ```
/// use ringstream_core::proxy::{parse, Command, SIGNATURE};
///
/// let mut bytes = SIGNATURE.to_vec();
/// bytes.extend_from_slice(&[0x21, 0x11, 0, 12]); // PROXY, TCP4, 12 bytes
/// bytes.extend_from_slice(&[203, 0, 113, 7, 192, 0, 2, 1, 0xc7, 0x38, 0x01, 0xbb]);
/// bytes.extend_from_slice(b"GET / HTTP/1.1\r\n");
/// let header = parse(&bytes, 4096)?.unwrap();
/// assert_eq!((header.version(), header.command()), (2, Command::Proxy));
/// assert_eq!(header.source(), Some("203.0.113.7:51000".parse().unwrap()));
/// assert_eq!(header.destination(), Some("192.0.2.1:443".parse().unwrap()));
/// assert!(bytes[header.len()..].starts_with(b"GET /"));
/// # Ok::<(), ringstream_core::proxy::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header<'a> {
    pub(super) version: u8,
    pub(super) command: Command,
    /// Source and destination, when the header names them (TCP over IPv4
    /// or IPv6, command `PROXY`).
    pub(super) addresses: Option<(SocketAddr, SocketAddr)>,
    pub(super) len: usize,
    pub(super) tlvs: &'a [u8],
}

impl<'a> Header<'a> {
    /// 1 or 2.
    pub fn version(&self) -> u8 {
        self.version
    }

    /// `PROXY` or `LOCAL`.
    pub fn command(&self) -> Command {
        self.command
    }

    /// The client's address, when the header names one (`None` for
    /// `LOCAL`, `UNKNOWN`, an unspecified or Unix family).
    pub fn source(&self) -> Option<SocketAddr> {
        self.addresses.map(|(source, _)| source)
    }

    /// The address the client connected to, on the balancer.
    pub fn destination(&self) -> Option<SocketAddr> {
        self.addresses.map(|(_, destination)| destination)
    }

    /// Bytes the header took: the connection's own bytes start there.
    // A header is never empty: `is_empty` would say nothing.
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Version 2's extensions (none for version 1), checked for length.
    pub fn tlvs(&self) -> Tlvs<'a> {
        Tlvs::new(self.tlvs)
    }
}
