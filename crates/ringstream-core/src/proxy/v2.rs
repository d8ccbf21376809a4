//! Version 2: a 12-byte signature, a version and command byte, a family
//! and transport byte, a 16-bit length, then the addresses and the
//! extensions (type-length-value).

use core::net::{Ipv4Addr, Ipv6Addr, SocketAddr};

use super::crc32c;
use super::error::Error;
use super::header::{Command, Header};
use super::tlv::{self, Tlvs};

/// The 12 bytes every version 2 header starts with.
pub const SIGNATURE: [u8; 12] = *b"\r\n\r\n\0\r\nQUIT\n";

/// The signature, the two command bytes and the length.
const HEAD_LEN: usize = 16;

pub(super) fn parse(bytes: &[u8], max_len: usize) -> Result<Option<Header<'_>>, Error> {
    let n = bytes.len().min(SIGNATURE.len());
    if bytes[..n] != SIGNATURE[..n] {
        return Err(Error::NotProxy);
    }
    if bytes.len() < HEAD_LEN {
        return Ok(None);
    }
    let version_command = bytes[12];
    if version_command >> 4 != 2 {
        return Err(Error::BadVersion);
    }
    let command = match version_command & 0x0f {
        0 => Command::Local,
        1 => Command::Proxy,
        _ => return Err(Error::BadCommand),
    };
    let family = bytes[13];
    let length = usize::from(u16::from_be_bytes([bytes[14], bytes[15]]));
    let total = HEAD_LEN + length;
    if total > max_len {
        return Err(Error::TooLong);
    }
    // The family and transport: unspecified, or a stream over IPv4, IPv6
    // or a Unix socket, with the length their addresses take.
    let address_len = match family {
        0x00 => 0,
        0x11 => 12,
        0x21 => 36,
        0x31 => 216,
        _ => return Err(Error::BadFamily),
    };
    if length < address_len {
        return Err(Error::BadLength);
    }
    if bytes.len() < total {
        return Ok(None);
    }
    let body = &bytes[HEAD_LEN..total];
    let (addresses, tlvs) = body.split_at(address_len);
    tlv::check(tlvs)?;
    if let Some(expected) = Tlvs::new(tlvs).get(tlv::CRC32C) {
        let expected: [u8; 4] = expected.try_into().map_err(|_| Error::BadTlv)?;
        if crc32c::of_header(&bytes[..total], tlvs_offset(address_len))
            != u32::from_be_bytes(expected)
        {
            return Err(Error::BadChecksum);
        }
    }
    let addresses = match (command, family) {
        (Command::Proxy, 0x11) => Some(inet(addresses)),
        (Command::Proxy, 0x21) => Some(inet6(addresses)),
        // LOCAL, unspecified, Unix: the socket's own addresses apply.
        _ => None,
    };
    Ok(Some(Header {
        version: 2,
        command,
        addresses,
        len: total,
        tlvs,
    }))
}

/// Where the extensions start in a header whose addresses take
/// `address_len` bytes.
fn tlvs_offset(address_len: usize) -> usize {
    HEAD_LEN + address_len
}

fn inet(bytes: &[u8]) -> (SocketAddr, SocketAddr) {
    let ip = |at: usize| Ipv4Addr::new(bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]);
    let port = |at: usize| u16::from_be_bytes([bytes[at], bytes[at + 1]]);
    (
        SocketAddr::new(ip(0).into(), port(8)),
        SocketAddr::new(ip(4).into(), port(10)),
    )
}

fn inet6(bytes: &[u8]) -> (SocketAddr, SocketAddr) {
    let ip = |at: usize| {
        let mut octets = [0u8; 16];
        octets.copy_from_slice(&bytes[at..at + 16]);
        Ipv6Addr::from(octets)
    };
    let port = |at: usize| u16::from_be_bytes([bytes[at], bytes[at + 1]]);
    (
        SocketAddr::new(ip(0).into(), port(32)),
        SocketAddr::new(ip(16).into(), port(34)),
    )
}
