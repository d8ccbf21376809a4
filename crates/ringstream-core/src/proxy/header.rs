//! [`Header`]: what a PROXY header says, whichever its version.

use core::net::SocketAddr;

use super::tlv::Tlvs;

/// What a header asks of the server.
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
