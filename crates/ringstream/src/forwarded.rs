//! Behind HTTP proxies (an L7 load balancer, a CDN): [`ForwardedLayer`],
//! a tower layer that takes a request's client address and scheme from
//! `Forwarded` (RFC 7239), or `X-Forwarded-For` and `X-Forwarded-Proto`,
//! through the proxies it is told to trust, and from nobody else.
//!
//! The fields are read right to left by the core
//! ([`ringstream_core::forwarded::client`]): each hop was appended by the
//! party that connected to the next proxy, so a hop is believed only while
//! the party that wrote it is trusted — starting with the socket's peer.
//! What a client writes itself is left of everything a trusted proxy
//! appended, and is never reached.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::task::{Context, Poll};

use http::header::{HeaderName, FORWARDED};
use http::uri::Scheme;
use http::Request;
use ipnet::IpNet;
use ringstream_core::forwarded::{client, forwarded_hops, x_forwarded_hops, Hop, Node};
use tower_service::Service;

use crate::server::ConnectionInfo;

const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");
const X_FORWARDED_PROTO: HeaderName = HeaderName::from_static("x-forwarded-proto");

/// The client of a request as the trusted proxies name it: an extension
/// that [`Forwarded`] gives every request it could resolve (its
/// [`ConnectionInfo`] then names the client too, and keeps the proxy in
/// [`ConnectionInfo::proxied_by`]).
///
/// # Examples
///
/// ```
/// use std::convert::Infallible;
/// use std::net::SocketAddr;
/// use ringstream::forwarded::{ForwardedClient, ForwardedLayer};
/// use ringstream::server::{service_fn, Addr, ConnectionInfo};
/// use tower_layer::Layer;
/// use tower_service::Service;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let app = service_fn(|req: http::Request<()>| async move {
///     Ok::<_, Infallible>(req.extensions().get::<ForwardedClient>().cloned())
/// });
/// let mut app = ForwardedLayer::new(["10.0.0.0/8".parse().unwrap()]).layer(app);
///
/// let mut request = http::Request::new(());
/// let proxy: SocketAddr = "10.0.0.2:5000".parse().unwrap();
/// request.extensions_mut().insert(ConnectionInfo::new(proxy, Addr::Unknown));
/// let field = "for=\"198.51.100.17:4711\";proto=https";
/// request.headers_mut().insert("forwarded", field.parse().unwrap());
/// let client = app.call(request).await.unwrap().expect("named by a trusted proxy");
/// assert_eq!(client.addr.to_string(), "198.51.100.17");
/// assert_eq!(client.port, Some(4711));
/// assert_eq!(client.scheme, Some(http::uri::Scheme::HTTPS));
/// # });
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardedClient {
    /// The client's address.
    pub addr: IpAddr,
    /// The client's port, when a proxy gave it.
    pub port: Option<u16>,
    /// The scheme the client used (`http` or `https`), when a proxy said.
    pub scheme: Option<Scheme>,
}

/// Makes [`Forwarded`] services: see the [module](self).
///
/// # Examples
///
/// ```
/// use std::convert::Infallible;
/// use ringstream::forwarded::{ForwardedClient, ForwardedLayer};
/// use ringstream::server::{service_fn, Addr, ConnectionInfo};
/// use tower_layer::Layer;
/// use tower_service::Service;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let app = service_fn(|req: http::Request<()>| async move {
///     let info = req.extensions().get::<ConnectionInfo>().unwrap();
///     Ok::<_, Infallible>(info.remote_addr().to_string())
/// });
/// let mut app = ForwardedLayer::new(["10.0.0.0/8".parse().unwrap()]).layer(app);
///
/// // Through the trusted proxy 10.0.0.2: its word is taken, the client's
/// // own claim (6.6.6.6) is not.
/// let mut request = http::Request::new(());
/// let proxy: std::net::SocketAddr = "10.0.0.2:5000".parse().unwrap();
/// request.extensions_mut().insert(ConnectionInfo::new(proxy, Addr::Unknown));
/// request.headers_mut().insert("x-forwarded-for", "6.6.6.6, 198.51.100.17".parse().unwrap());
/// request.headers_mut().insert("x-forwarded-proto", "https".parse().unwrap());
/// assert_eq!(app.call(request).await.unwrap(), "198.51.100.17:0");
///
/// // From anywhere else: the fields are ignored.
/// let mut request = http::Request::new(());
/// let stranger: std::net::SocketAddr = "192.0.2.9:5000".parse().unwrap();
/// request.extensions_mut().insert(ConnectionInfo::new(stranger, Addr::Unknown));
/// request.headers_mut().insert("forwarded", "for=1.2.3.4".parse().unwrap());
/// assert_eq!(app.call(request).await.unwrap(), "192.0.2.9:5000");
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct ForwardedLayer {
    trusted: Arc<[IpNet]>,
}

impl ForwardedLayer {
    /// Trusts the proxies in `trusted` (CIDR blocks) to name clients.
    pub fn new(trusted: impl IntoIterator<Item = IpNet>) -> ForwardedLayer {
        ForwardedLayer {
            trusted: trusted.into_iter().collect(),
        }
    }
}

impl<S> tower_layer::Layer<S> for ForwardedLayer {
    type Service = Forwarded<S>;

    fn layer(&self, inner: S) -> Forwarded<S> {
        Forwarded {
            inner,
            trusted: self.trusted.clone(),
        }
    }
}

/// A service whose requests name their client as the trusted proxies say
/// (made by [`ForwardedLayer`]).
///
/// # Examples
///
/// The request's [`ConnectionInfo`] names the client, and keeps the proxy:
///
/// ```
/// use std::convert::Infallible;
/// use std::net::SocketAddr;
/// use ringstream::forwarded::{Forwarded, ForwardedLayer};
/// use ringstream::server::{service_fn, Addr, ConnectionInfo};
/// use tower_layer::Layer;
/// use tower_service::Service;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let app = service_fn(|req: http::Request<()>| async move {
///     let info = req.extensions().get::<ConnectionInfo>().unwrap();
///     Ok::<_, Infallible>((info.remote_addr().clone(), info.proxied_by().cloned()))
/// });
/// let mut app: Forwarded<_> = ForwardedLayer::new(["10.0.0.0/8".parse().unwrap()]).layer(app);
///
/// let mut request = http::Request::new(());
/// let proxy: SocketAddr = "10.0.0.2:5000".parse().unwrap();
/// request.extensions_mut().insert(ConnectionInfo::new(proxy, Addr::Unknown));
/// request.headers_mut().insert("x-forwarded-for", "198.51.100.17".parse().unwrap());
/// let (client, proxied_by) = app.call(request).await.unwrap();
/// assert_eq!(client.to_string(), "198.51.100.17:0"); // no port given
/// assert_eq!(proxied_by, Some(Addr::from(proxy)));
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct Forwarded<S> {
    inner: S,
    trusted: Arc<[IpNet]>,
}

impl<S> Forwarded<S> {
    /// The client of `request`, if its peer is a trusted proxy and the
    /// fields name one.
    fn client_of<B>(&self, request: &Request<B>, peer: IpAddr) -> Option<ForwardedClient> {
        let trusted = |ip: IpAddr| self.trusted.iter().any(|net| net.contains(&ip));
        let headers = request.headers();
        let values = |name| headers.get_all(name).into_iter().map(|v| v.as_bytes());
        let hop: Hop<'_> = if headers.contains_key(FORWARDED) {
            client(forwarded_hops(values(&FORWARDED)), peer, trusted)?
        } else if headers.contains_key(&X_FORWARDED_FOR) {
            let proto = headers.get(&X_FORWARDED_PROTO).map(|v| v.as_bytes());
            let mut fields = values(&X_FORWARDED_FOR);
            let first = fields.next()?;
            match fields.next() {
                // Almost always one field: no list made.
                None => client(x_forwarded_hops([first], proto), peer, trusted)?,
                Some(second) => {
                    let all: Vec<&[u8]> = [first, second].into_iter().chain(fields).collect();
                    client(x_forwarded_hops(all.iter().copied(), proto), peer, trusted)?
                }
            }
        } else {
            return None;
        };
        let Node::Ip(addr, port) = hop.node else {
            return None;
        };
        let scheme = hop.proto.and_then(|proto| {
            if proto.eq_ignore_ascii_case(b"https") {
                Some(Scheme::HTTPS)
            } else if proto.eq_ignore_ascii_case(b"http") {
                Some(Scheme::HTTP)
            } else {
                None
            }
        });
        Some(ForwardedClient { addr, port, scheme })
    }
}

impl<S, B> Service<Request<B>> for Forwarded<S>
where
    S: Service<Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> S::Future {
        let peer = request
            .extensions()
            .get::<ConnectionInfo>()
            .and_then(|info| info.remote_addr().socket_addr())
            .map(|addr| addr.ip());
        if let Some(found) = peer.and_then(|peer| self.client_of(&request, peer)) {
            let extensions = request.extensions_mut();
            if let Some(info) = extensions.get::<ConnectionInfo>() {
                let client = SocketAddr::new(found.addr, found.port.unwrap_or(0));
                let info = info.forwarded_for(client);
                info.insert_into(extensions);
            }
            extensions.insert(found);
        }
        self.inner.call(request)
    }
}
