//! Behind a load balancer: [`ProxyProtocol`], and reading a connection's
//! PROXY header (versions 1 and 2, parsed by the core's
//! [`proxy::parse`](ringstream_core::proxy::parse)) before anything else
//! — before TLS, before HTTP/1.1 or HTTP/2 — under the head deadline.

use std::net::IpAddr;

use bytes::{Bytes, BytesMut};
use ipnet::IpNet;
use ringstream_core::proxy::{self, Command};
use tokio::io::{AsyncRead, AsyncReadExt};

use super::addr::{Addr, ConnectionInfo};
use super::rewind::Rewind;

/// PROXY headers on a listener (HAProxy's `send-proxy` / `send-proxy-v2`,
/// nginx's `proxy_protocol on`, AWS NLB and Envoy): every connection must
/// start with one, from a trusted balancer, and its requests then see the
/// client's address ([`ConnectionInfo::remote_addr`], axum's
/// `ConnectInfo`, the access log, the request span), the balancer's kept
/// in [`ConnectionInfo::proxied_by`].
///
/// A connection from a source outside [`trusted`](Self::trusted), or
/// whose first bytes are not a valid header (missing, malformed, longer
/// than [`max_header_len`](Self::max_header_len), or not whole within the
/// head timeout), is closed without an answer and counted in
/// [`Metrics::proxy_refused`](super::Metrics::proxy_refused). A version 2
/// `LOCAL` header (the balancer's own health check) is served with the
/// socket's addresses. A Unix-socket peer is a local process and trusted.
///
/// # Examples
///
/// ```
/// use ringstream::server::{Config, ProxyProtocol};
///
/// let config = Config {
///     proxy_protocol: Some(ProxyProtocol::from(["10.0.0.0/8".parse().unwrap()])),
///     ..Config::default()
/// };
/// assert!(config.proxy_protocol.unwrap().trusts("10.1.2.3".parse().unwrap()));
/// ```
#[derive(Debug, Clone)]
pub struct ProxyProtocol {
    /// The balancers allowed to send a header, as CIDR blocks
    /// (`10.0.0.0/8`, `192.0.2.7/32`, `::1/128`).
    pub trusted: Vec<IpNet>,
    /// The longest header taken, in bytes (a version 2 header with its
    /// extensions; version 1 is 107 at most). Default 4,096.
    pub max_header_len: usize,
}

impl<I: IntoIterator<Item = IpNet>> From<I> for ProxyProtocol {
    fn from(trusted: I) -> ProxyProtocol {
        ProxyProtocol {
            trusted: trusted.into_iter().collect(),
            max_header_len: 4096,
        }
    }
}

impl ProxyProtocol {
    /// Whether `source` may send a header.
    pub fn trusts(&self, source: IpAddr) -> bool {
        let source = source.to_canonical();
        self.trusted.iter().any(|net| net.contains(&source))
    }

    fn trusts_peer(&self, peer: &Addr) -> bool {
        match peer {
            Addr::Tcp(addr) => self.trusts(addr.ip()),
            Addr::Unix(_) => true,
            _ => false,
        }
    }
}

/// Why a connection was closed before its PROXY header was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The peer is not a trusted balancer.
    Untrusted,
    /// The first bytes are no valid header.
    Header(proxy::Error),
    /// The peer closed (or the read failed) within the header.
    Closed,
}

/// Reads the PROXY header off `io` (from a peer `info` says is trusted)
/// and returns the transport, with the bytes read past the header put
/// back, and the connection's info as the header tells it. The caller
/// bounds it with the head deadline.
pub(crate) async fn read_header<T>(
    mut io: T,
    info: ConnectionInfo,
    settings: &ProxyProtocol,
) -> Result<(Rewind<T>, ConnectionInfo), Refused>
where
    T: AsyncRead + Unpin,
{
    if !settings.trusts_peer(info.remote_addr()) {
        return Err(Refused::Untrusted);
    }
    // A header and the first bytes after it usually come in one segment.
    let mut buf = BytesMut::with_capacity(256);
    loop {
        let n = io.read_buf(&mut buf).await.map_err(|_| Refused::Closed)?;
        if n == 0 {
            return Err(Refused::Closed);
        }
        let Some(header) = proxy::parse(&buf, settings.max_header_len).map_err(Refused::Header)?
        else {
            // A part of a header: make room for the rest (within the cap).
            if buf.len() == buf.capacity() {
                buf.reserve(buf.len().min(settings.max_header_len));
            }
            continue;
        };
        let info = match (header.command(), header.source()) {
            (Command::Proxy, Some(client)) => {
                info.proxied(client, header.destination(), header.tlvs().as_bytes())
            }
            // LOCAL, UNKNOWN: the socket's own addresses.
            _ => info,
        };
        let after = buf.split_off(header.len()).freeze();
        return Ok((Rewind::new(after, io), info));
    }
}

/// The transport of a listener without PROXY headers: nothing put back.
pub(crate) fn direct<T>(io: T) -> Rewind<T> {
    Rewind::new(Bytes::new(), io)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    fn trusted_localhost() -> ProxyProtocol {
        ProxyProtocol::from(["127.0.0.0/8".parse().unwrap()])
    }

    fn info_from(peer: &str) -> ConnectionInfo {
        let peer: std::net::SocketAddr = peer.parse().unwrap();
        ConnectionInfo::new(peer, Addr::Unknown)
    }

    #[tokio::test]
    async fn a_header_in_pieces_names_the_client_and_the_rest_is_put_back() {
        let (mut client, server) = tokio::io::duplex(64);
        tokio::spawn(async move {
            for piece in [
                &b"PROXY TCP4 203.0.113.7 "[..],
                b"192.0.2.1 51000 443\r\nGET /",
            ] {
                client.write_all(piece).await.unwrap();
                tokio::task::yield_now().await;
            }
        });
        let (mut io, info) = read_header(server, info_from("127.0.0.1:9999"), &trusted_localhost())
            .await
            .unwrap();
        assert_eq!(info.remote_addr().to_string(), "203.0.113.7:51000");
        assert_eq!(info.proxied_by().unwrap().to_string(), "127.0.0.1:9999");
        assert_eq!(info.proxy_destination().unwrap().port(), 443);
        let mut rest = [0u8; 5];
        io.read_exact(&mut rest).await.unwrap();
        assert_eq!(&rest, b"GET /");
    }

    #[tokio::test]
    async fn an_untrusted_peer_or_a_bad_header_is_refused() {
        let (_client, server) = tokio::io::duplex(64);
        let refused = read_header(server, info_from("192.0.2.9:1"), &trusted_localhost()).await;
        assert_eq!(refused.err(), Some(Refused::Untrusted));

        let (mut client, server) = tokio::io::duplex(64);
        client.write_all(b"GET / HTTP/1.1\r\n").await.unwrap();
        let refused = read_header(server, info_from("127.0.0.1:1"), &trusted_localhost()).await;
        assert_eq!(refused.err(), Some(Refused::Header(proxy::Error::NotProxy)));

        let (mut client, server) = tokio::io::duplex(64);
        client.write_all(b"PROXY TCP4 1.2.3.4").await.unwrap();
        drop(client);
        let refused = read_header(server, info_from("127.0.0.1:1"), &trusted_localhost()).await;
        assert_eq!(refused.err(), Some(Refused::Closed));
    }

    #[test]
    fn ipv4_mapped_sources_match_ipv4_blocks() {
        let settings = trusted_localhost();
        assert!(settings.trusts("::ffff:127.0.0.1".parse().unwrap()));
        assert!(!settings.trusts("::1".parse().unwrap()));
        assert!(settings.trusts_peer(&Addr::Unix(None)));
        assert!(!settings.trusts_peer(&Addr::Unknown));
    }
}
