//! Who a request came from when HTTP proxies relayed it: the `Forwarded`
//! field (RFC 7239) and the older `X-Forwarded-For` / `X-Forwarded-Proto`,
//! read as lists of hops, and [`client`], which walks them right to left
//! through the proxies the server trusts, so that a client cannot name
//! an address of its choosing: every hop left of the first untrusted one
//! was written by that untrusted party, and is ignored.
//!
//! # Examples
//!
//! ```
//! use ringstream_core::forwarded::{client, forwarded_hops, Node};
//!
//! // The client claims 6.6.6.6; the trusted proxy 10.0.0.2 appends what
//! // it saw (198.51.100.17) and connects to the server.
//! let value = b"for=6.6.6.6, for=198.51.100.17;proto=https";
//! let trusted = |ip: std::net::IpAddr| ip.to_string().starts_with("10.");
//! let peer = "10.0.0.2".parse().unwrap();
//! let hop = client(forwarded_hops([&value[..]]), peer, trusted).unwrap();
//! assert_eq!(hop.node, Node::Ip("198.51.100.17".parse().unwrap(), None));
//! assert_eq!(hop.proto, Some(&b"https"[..]));
//! ```

use core::net::{IpAddr, Ipv6Addr};

/// A node of a `for` (or `X-Forwarded-For`) element.
///
/// # Examples
///
/// ```
/// use ringstream_core::forwarded::{forwarded_hops, Node};
///
/// let value = b"for=\"192.0.2.60:8080\", for=unknown, for=_hidden, for=\"[2001:db8::1]\"";
/// let nodes: Vec<Node> = forwarded_hops([&value[..]]).map(|hop| hop.node).collect();
/// assert_eq!(nodes, [
///     Node::Ip("192.0.2.60".parse().unwrap(), Some(8080)),
///     Node::Unknown,
///     Node::Unknown,
///     Node::Ip("2001:db8::1".parse().unwrap(), None),
/// ]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Node {
    /// An address, and its port when given.
    Ip(IpAddr, Option<u16>),
    /// `unknown`, an obfuscated identifier (`_hidden`), or a value that
    /// is none of the forms: a hop whose address is not known.
    Unknown,
}

/// One hop: who connected to the proxy that wrote it, and over which
/// scheme.
///
/// # Examples
///
/// ```
/// use ringstream_core::forwarded::{x_forwarded_hops, Hop, Node};
///
/// // `X-Forwarded-Proto` is the scheme of the last hop only.
/// let fields = [&b"203.0.113.7, 10.0.0.2"[..]];
/// let hops: Vec<Hop<'_>> = x_forwarded_hops(fields, Some(&b"https"[..])).collect();
/// let client = Node::Ip("203.0.113.7".parse().unwrap(), None);
/// assert_eq!(hops[0], Hop { node: client, proto: None });
/// assert_eq!(hops[1].proto, Some(&b"https"[..]));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hop<'a> {
    /// The `for` node.
    pub node: Node,
    /// The `proto` parameter (`http`, `https`), when given.
    pub proto: Option<&'a [u8]>,
}

/// The hops of every `Forwarded` field value in `values` (in field order),
/// one for each element (`for=…;proto=…`), left to right; an element
/// without `for` is an [`Node::Unknown`] hop.
///
/// # Examples
///
/// ```
/// use ringstream_core::forwarded::{forwarded_hops, Node};
///
/// let hops: Vec<_> = forwarded_hops([&b"for=\"[2001:db8:cafe::17]:4711\", For=unknown;proto=http"[..]]).collect();
/// assert_eq!(hops[0].node, Node::Ip("2001:db8:cafe::17".parse().unwrap(), Some(4711)));
/// assert_eq!(hops[1].node, Node::Unknown);
/// assert_eq!(hops[1].proto, Some(&b"http"[..]));
/// ```
pub fn forwarded_hops<'a, I>(values: I) -> impl DoubleEndedIterator<Item = Hop<'a>>
where
    I: IntoIterator<Item = &'a [u8]>,
    I::IntoIter: DoubleEndedIterator,
{
    values
        .into_iter()
        .flat_map(|value| split_unquoted(value, b','))
        .map(element)
}

/// The hops of every `X-Forwarded-For` value (comma-separated addresses),
/// with `proto` from `X-Forwarded-Proto` given to the last hop only (a
/// proxy writes the scheme of the connection it received). The values are
/// gone through twice (`Clone`): a slice of them will do.
pub fn x_forwarded_hops<'a, I>(
    values: I,
    proto: Option<&'a [u8]>,
) -> impl DoubleEndedIterator<Item = Hop<'a>>
where
    I: IntoIterator<Item = &'a [u8]>,
    I::IntoIter: Clone + DoubleEndedIterator,
{
    let nodes = values
        .into_iter()
        .flat_map(|value| value.split(|&b| b == b','));
    XForwarded {
        left: nodes.clone().count(),
        nodes,
        proto: proto.map(<[u8]>::trim_ascii),
    }
}

/// [`x_forwarded_hops`]' iterator: `left` hops not yet taken from either
/// end; the last hop takes `proto`.
#[derive(Clone)]
struct XForwarded<'a, N> {
    nodes: N,
    left: usize,
    proto: Option<&'a [u8]>,
}

fn x_hop<'a>(node: &[u8], proto: Option<&'a [u8]>) -> Hop<'a> {
    Hop {
        node: parse_node(node.trim_ascii()),
        proto,
    }
}

impl<'a, N: Iterator<Item = &'a [u8]>> Iterator for XForwarded<'a, N> {
    type Item = Hop<'a>;

    fn next(&mut self) -> Option<Hop<'a>> {
        let node = self.nodes.next()?;
        self.left -= 1;
        // The final hop, unless it was taken from the back already.
        let proto = if self.left == 0 {
            self.proto.take()
        } else {
            None
        };
        Some(x_hop(node, proto))
    }
}

impl<'a, N: DoubleEndedIterator<Item = &'a [u8]>> DoubleEndedIterator for XForwarded<'a, N> {
    fn next_back(&mut self) -> Option<Hop<'a>> {
        let node = self.nodes.next_back()?;
        self.left -= 1;
        // The first hop taken from the back is the last one.
        Some(x_hop(node, self.proto.take()))
    }
}

/// The client of a request whose socket peer is `peer`: walking `hops`
/// from the right while the party that wrote each one is trusted, the
/// first hop written by a trusted proxy about an untrusted node (or the
/// leftmost hop, when every node is trusted). `None` when `peer` itself is
/// not trusted (its hops are not believed) or there are no hops.
pub fn client<'a, I>(hops: I, peer: IpAddr, trusted: impl Fn(IpAddr) -> bool) -> Option<Hop<'a>>
where
    I: DoubleEndedIterator<Item = Hop<'a>>,
{
    if !trusted(peer.to_canonical()) {
        return None;
    }
    let mut found = None;
    for hop in hops.rev() {
        found = Some(hop);
        match hop.node {
            Node::Ip(ip, _) if trusted(ip.to_canonical()) => continue,
            _ => break,
        }
    }
    found
}

/// One element: `for=…;proto=…;by=…;host=…`, parameters in any case.
fn element(element: &[u8]) -> Hop<'_> {
    let mut hop = Hop {
        node: Node::Unknown,
        proto: None,
    };
    for pair in split_unquoted(element, b';') {
        let pair = pair.trim_ascii();
        let Some(eq) = pair.iter().position(|&b| b == b'=') else {
            continue;
        };
        let (name, value) = (
            pair[..eq].trim_ascii(),
            unquote(pair[eq + 1..].trim_ascii()),
        );
        if name.eq_ignore_ascii_case(b"for") {
            hop.node = parse_node(value);
        } else if name.eq_ignore_ascii_case(b"proto") {
            hop.proto = Some(value);
        }
    }
    hop
}

/// Splits at `sep` outside double quotes.
fn split_unquoted(bytes: &[u8], sep: u8) -> impl DoubleEndedIterator<Item = &[u8]> + Clone {
    let mut quoted = false;
    let mut escaped = false;
    bytes.split(move |&b| {
        if escaped {
            escaped = false;
            return false;
        }
        match b {
            b'\\' if quoted => escaped = true,
            b'"' => quoted = !quoted,
            _ => {}
        }
        b == sep && !quoted
    })
}

fn unquote(value: &[u8]) -> &[u8] {
    match value {
        [b'"', inner @ .., b'"'] => inner,
        _ => value,
    }
}

/// `192.0.2.43`, `192.0.2.43:80`, `[2001:db8::1]`, `[2001:db8::1]:4711`,
/// a bare IPv6 address (as `X-Forwarded-For` writes it); anything else is
/// unknown.
fn parse_node(node: &[u8]) -> Node {
    let Ok(text) = core::str::from_utf8(node) else {
        return Node::Unknown;
    };
    if let Some(rest) = text.strip_prefix('[') {
        let Some((ip, after)) = rest.split_once(']') else {
            return Node::Unknown;
        };
        let Ok(ip) = ip.parse::<Ipv6Addr>() else {
            return Node::Unknown;
        };
        return match after {
            "" => Node::Ip(IpAddr::V6(ip), None),
            port => match port.strip_prefix(':').and_then(|p| p.parse().ok()) {
                Some(port) => Node::Ip(IpAddr::V6(ip), Some(port)),
                None => Node::Unknown,
            },
        };
    }
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Node::Ip(ip, None);
    }
    match text.rsplit_once(':') {
        Some((ip, port)) => match (ip.parse::<core::net::Ipv4Addr>(), port.parse::<u16>()) {
            (Ok(ip), Ok(port)) => Node::Ip(IpAddr::V4(ip), Some(port)),
            _ => Node::Unknown,
        },
        None => Node::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    fn ten(ip: IpAddr) -> bool {
        matches!(ip, IpAddr::V4(v4) if v4.octets()[0] == 10)
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn the_client_is_the_first_untrusted_node_from_the_right() {
        let value = b"for=1.1.1.1, for=2.2.2.2, for=10.0.0.5";
        let hop = client(forwarded_hops([&value[..]]), ip("10.0.0.9"), ten).unwrap();
        assert_eq!(hop.node, Node::Ip(ip("2.2.2.2"), None));
    }

    #[test]
    fn an_untrusted_peer_is_believed_about_nothing() {
        let value = b"for=1.1.1.1";
        assert_eq!(
            client(forwarded_hops([&value[..]]), ip("192.0.2.1"), ten),
            None
        );
    }

    #[test]
    fn when_every_node_is_trusted_the_leftmost_is_the_client() {
        let value = b"for=10.0.0.1, for=10.0.0.2";
        let hop = client(forwarded_hops([&value[..]]), ip("10.0.0.3"), ten).unwrap();
        assert_eq!(hop.node, Node::Ip(ip("10.0.0.1"), None));
    }

    #[test]
    fn an_unknown_or_obfuscated_node_stops_the_walk() {
        for value in [
            &b"for=1.1.1.1, for=unknown"[..],
            b"for=1.1.1.1, for=_hidden",
            b"for=1.1.1.1, proto=https",
        ] {
            let hop = client(forwarded_hops([value]), ip("10.0.0.3"), ten).unwrap();
            assert_eq!(hop.node, Node::Unknown, "{value:?}");
        }
    }

    #[test]
    fn several_fields_are_one_list_and_quotes_hide_separators() {
        let hops: Vec<_> = forwarded_hops([
            &b"for=\"[2001:db8::1]:80\";proto=https"[..],
            b"for=\"bad,quote;x\", FOR=192.0.2.4:81",
        ])
        .collect();
        assert_eq!(hops.len(), 3);
        assert_eq!(hops[0].node, Node::Ip(ip("2001:db8::1"), Some(80)));
        assert_eq!(hops[0].proto, Some(&b"https"[..]));
        assert_eq!(hops[1].node, Node::Unknown);
        assert_eq!(hops[2].node, Node::Ip(ip("192.0.2.4"), Some(81)));
    }

    #[test]
    fn x_forwarded_for_gives_the_proto_to_the_last_hop() {
        let hops: Vec<_> = x_forwarded_hops(
            [&b"203.0.113.7, 2001:db8::9"[..], b"10.0.0.4"],
            Some(b" https"),
        )
        .collect();
        assert_eq!(hops.len(), 3);
        assert_eq!(hops[1].node, Node::Ip(ip("2001:db8::9"), None));
        assert_eq!((hops[0].proto, hops[2].proto), (None, Some(&b"https"[..])));
        let hop = client(hops.into_iter(), ip("10.0.0.1"), ten).unwrap();
        assert_eq!(hop.node, Node::Ip(ip("2001:db8::9"), None));
    }

    #[test]
    fn nodes_in_every_form() {
        assert_eq!(
            parse_node(b"192.0.2.1:8080"),
            Node::Ip(ip("192.0.2.1"), Some(8080))
        );
        assert_eq!(parse_node(b"[::1]"), Node::Ip(ip("::1"), None));
        assert_eq!(parse_node(b"::1"), Node::Ip(ip("::1"), None));
        for bad in [
            &b"[::1"[..],
            b"[::1]x",
            b"[::1]:99999",
            b"1.2.3.4:",
            b"host.example",
            b"",
        ] {
            assert_eq!(parse_node(bad), Node::Unknown, "{bad:?}");
        }
    }
}
