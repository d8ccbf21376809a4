//! Version 1: `PROXY TCP4 203.0.113.7 192.0.2.1 51000 443\r\n`, one line
//! of at most 107 bytes, single spaces, addresses in their usual text
//! forms, ports as decimal numbers without leading zeros.

use core::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use super::error::Error;
use super::header::{Command, Header};

/// The longest version 1 header, CRLF included (the specification's 107).
pub const MAX_V1_LEN: usize = 107;

const PREFIX: &[u8] = b"PROXY ";

pub(super) fn parse(bytes: &[u8]) -> Result<Option<Header<'_>>, Error> {
    let n = bytes.len().min(PREFIX.len());
    if bytes[..n] != PREFIX[..n] {
        return Err(Error::NotProxy);
    }
    let window = &bytes[..bytes.len().min(MAX_V1_LEN)];
    let Some(cr) = window.iter().position(|&b| b == b'\r' || b == b'\n') else {
        return if bytes.len() >= MAX_V1_LEN {
            Err(Error::LineTooLong)
        } else {
            Ok(None)
        };
    };
    if bytes[cr] == b'\n' {
        // A bare LF: lines end in CRLF.
        return Err(Error::BadLine);
    }
    match bytes.get(cr + 1) {
        None => return Ok(None),
        Some(b'\n') => {}
        Some(_) => return Err(Error::BadLine),
    }
    let line = &bytes[PREFIX.len()..cr];
    let addresses = addresses(line)?;
    Ok(Some(Header {
        version: 1,
        command: Command::Proxy,
        addresses,
        len: cr + 2,
        tlvs: &[],
    }))
}

/// `TCP4 src dst sport dport`, `TCP6 …`, or `UNKNOWN` followed by
/// anything (the receiver ignores it).
fn addresses(line: &[u8]) -> Result<Option<(SocketAddr, SocketAddr)>, Error> {
    if line == b"UNKNOWN" || line.starts_with(b"UNKNOWN ") {
        return Ok(None);
    }
    let mut parts = line.split(|&b| b == b' ');
    let protocol = parts.next().ok_or(Error::BadLine)?;
    let (source, destination, source_port, destination_port) = (
        parts.next().ok_or(Error::BadLine)?,
        parts.next().ok_or(Error::BadLine)?,
        parts.next().ok_or(Error::BadLine)?,
        parts.next().ok_or(Error::BadLine)?,
    );
    if parts.next().is_some() {
        return Err(Error::BadLine);
    }
    let (source, destination) = match protocol {
        b"TCP4" => (IpAddr::V4(ipv4(source)?), IpAddr::V4(ipv4(destination)?)),
        b"TCP6" => (IpAddr::V6(ipv6(source)?), IpAddr::V6(ipv6(destination)?)),
        _ => return Err(Error::BadLine),
    };
    Ok(Some((
        SocketAddr::new(source, port(source_port)?),
        SocketAddr::new(destination, port(destination_port)?),
    )))
}

fn text(bytes: &[u8]) -> Result<&str, Error> {
    core::str::from_utf8(bytes).map_err(|_| Error::BadLine)
}

fn ipv4(bytes: &[u8]) -> Result<Ipv4Addr, Error> {
    text(bytes)?.parse().map_err(|_| Error::BadLine)
}

fn ipv6(bytes: &[u8]) -> Result<Ipv6Addr, Error> {
    text(bytes)?.parse().map_err(|_| Error::BadLine)
}

/// A port: 1 to 5 digits, no leading zero (but `0` itself), at most 65535.
fn port(bytes: &[u8]) -> Result<u16, Error> {
    let digits = !bytes.is_empty() && bytes.len() <= 5 && bytes.iter().all(u8::is_ascii_digit);
    if !digits || (bytes.len() > 1 && bytes[0] == b'0') {
        return Err(Error::BadLine);
    }
    text(bytes)?.parse().map_err(|_| Error::BadLine)
}
