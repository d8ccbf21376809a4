//! axum integration (feature `axum`): ringstream's bodies as axum
//! responses, ringstream's reading API as an extractor, and the client's
//! address as axum's `ConnectInfo`.
//!
//! - [`ResponseStream`], [`EventStream`] and [`Incoming`] implement
//!   [`IntoResponse`]: a handler returns them as they are.
//! - [`Incoming`] implements [`FromRequest`]: a handler that takes it reads
//!   the request body with `read_partial`, `gets`, `read_until_exclusive`,
//!   `read_exactly` and the trailers, each read handing over `Bytes`
//!   without a copy, under axum's `DefaultBodyLimit`.
//! - [`serve`](crate::server::serve) takes what `axum::serve` takes: the
//!   `Router`, `router.into_make_service()`, or
//!   `router.into_make_service_with_connect_info::<C>()`, whose `C` is made
//!   for each connection from its
//!   [`ConnectionInfo`]: `SocketAddr`,
//!   `ConnectionInfo` and [`Addr`] are ready to use,
//!   and a type of the application's own implements
//!   `Connected<&ConnectionInfo>` (see [`ReadyMakeService`]).
//! - Every request over TCP also carries `ConnectInfo<SocketAddr>`, so the
//!   `ConnectInfo` extractor works with the plain `Router` too (with
//!   [`Config::connection_info`](crate::server::Config::connection_info),
//!   on by default).
//!
//! # Examples
//!
//! ```
//! use std::net::SocketAddr;
//! use axum::extract::ConnectInfo;
//! use axum::routing::{get, post};
//! use axum::Router;
//! use ringstream::sse::{Broadcaster, EventStream, OverflowPolicy};
//! use ringstream::{Incoming, ResponseStream};
//!
//! async fn whoami(ConnectInfo(peer): ConnectInfo<SocketAddr>) -> String {
//!     format!("you are {peer}\n")
//! }
//!
//! async fn lines(mut body: Incoming) -> Result<ResponseStream, ringstream::Error> {
//!     let mut out = ResponseStream::buffered();
//!     let mut n = 0;
//!     while let Some(line) = body.gets(8 * 1024).await? {
//!         n += 1;
//!         std::fmt::Write::write_fmt(&mut out, format_args!("{n}: {} bytes\n", line.len()))
//!             .unwrap();
//!     }
//!     Ok(out)
//! }
//!
//! let events = Broadcaster::new(64, OverflowPolicy::DropOldest);
//! let app: Router = Router::new()
//!     .route("/whoami", get(whoami))
//!     .route("/lines", post(lines))
//!     .route("/events", get(move || {
//!         let events = events.clone();
//!         async move { events.subscribe(None) }
//!     }));
//! # let _ = app;
//! ```

use std::future::Future;
use std::net::SocketAddr;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use axum::body::Body as AxumBody;
use axum::extract::connect_info::{Connected, IntoMakeServiceWithConnectInfo};
use axum::extract::FromRequest;
use axum::response::{IntoResponse, Response};
use http_body::Body;
use tower_service::Service;

use crate::server::{Addr, ConnectionInfo, HttpService, IntoMakeService, MakeService};
use crate::sse::EventStream;
use crate::{Error, Incoming, ResponseStream};

/// The [`MakeService`] of axum's make-services,
/// `router.into_make_service()` and
/// `router.into_make_service_with_connect_info::<C>()`: each connection's
/// service is what the make-service answers for the connection's
/// [`ConnectionInfo`].
///
/// Both answer at once (their futures are ready when made), so the service
/// is made as the connection is accepted; a make-service that is not
/// ready, or fails, closes that connection unserved.
///
/// # Examples
///
/// A connect-info type of the application's own implements
/// `Connected<&ConnectionInfo>`:
///
/// ```
/// use axum::extract::connect_info::Connected;
/// use axum::extract::ConnectInfo;
/// use axum::routing::get;
/// use axum::Router;
/// use ringstream::server::{Addr, ConnectionInfo};
///
/// #[derive(Clone, Debug)]
/// struct Peer {
///     remote: Addr,
/// }
///
/// impl Connected<&ConnectionInfo> for Peer {
///     fn connect_info(info: &ConnectionInfo) -> Peer {
///         Peer { remote: info.remote_addr().clone() }
///     }
/// }
///
/// async fn who(ConnectInfo(peer): ConnectInfo<Peer>) -> String {
///     format!("{}\n", peer.remote)
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let app = Router::new().route("/", get(who));
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// let server = ringstream::server::serve(listener, app.into_make_service_with_connect_info::<Peer>());
/// # drop(server);
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct ReadyMakeService<M>(M);

impl<M, S> MakeService for ReadyMakeService<M>
where
    M: for<'a> Service<&'a ConnectionInfo, Response = S> + Clone + Send + 'static,
    S: HttpService<ResponseBody: Body<Data: Send> + Send + 'static, Future: Send> + Send + 'static,
{
    type Service = S;

    fn make_service(&mut self, info: &ConnectionInfo) -> Option<S> {
        let mut cx = Context::from_waker(Waker::noop());
        match self.0.poll_ready(&mut cx) {
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(_)) | Poll::Pending => return None,
        }
        match pin!(self.0.call(info)).poll(&mut cx) {
            Poll::Ready(Ok(service)) => Some(service),
            Poll::Ready(Err(_)) | Poll::Pending => None,
        }
    }
}

/// The [`IntoMakeService`] marker of
/// `router.into_make_service_with_connect_info::<C>()`.
///
/// # Examples
///
/// Each connection's `ConnectInfo<SocketAddr>`, the client's address:
///
/// ```
/// use axum::routing::get;
/// use axum::Router;
/// use axum::extract::ConnectInfo;
/// use std::net::SocketAddr;
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let app = Router::new()
///     .route("/", get(|ConnectInfo(peer): ConnectInfo<SocketAddr>| async move { peer.ip().to_string() }))
///     .into_make_service_with_connect_info::<SocketAddr>();
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// let addr = listener.local_addr().unwrap();
/// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
/// let running = tokio::spawn(ringstream::server::serve(listener, app).with_graceful_shutdown(async {
///     let _ = stopped.await;
/// }));
///
/// let mut client = tokio::net::TcpStream::connect(addr).await.unwrap();
/// client.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await.unwrap();
/// let mut response = String::new();
/// client.read_to_string(&mut response).await.unwrap();
/// assert!(response.ends_with("\r\n\r\n127.0.0.1"));
/// stop.send(()).unwrap();
/// running.await.unwrap().unwrap();
/// # });
/// ```
#[derive(Debug)]
pub struct ConnectInfoMarker;

impl<S, C> IntoMakeService<ConnectInfoMarker> for IntoMakeServiceWithConnectInfo<S, C>
where
    S: Clone + Send + 'static,
    C: for<'a> Connected<&'a ConnectionInfo>,
    ReadyMakeService<Self>: MakeService,
{
    type MakeService = ReadyMakeService<Self>;

    fn into_make_service(self) -> ReadyMakeService<Self> {
        ReadyMakeService(self)
    }
}

/// The [`IntoMakeService`] marker of `router.into_make_service()`.
///
/// # Examples
///
/// ```
/// use axum::routing::get;
/// use axum::Router;
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let app = Router::new().route("/health", get(|| async { "ok" })).into_make_service();
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// let addr = listener.local_addr().unwrap();
/// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
/// let running = tokio::spawn(ringstream::server::serve(listener, app).with_graceful_shutdown(async {
///     let _ = stopped.await;
/// }));
///
/// let mut client = tokio::net::TcpStream::connect(addr).await.unwrap();
/// client.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await.unwrap();
/// let mut response = String::new();
/// client.read_to_string(&mut response).await.unwrap();
/// assert!(response.starts_with("HTTP/1.1 200 OK\r\n"));
/// assert!(response.ends_with("\r\n\r\nok"));
/// stop.send(()).unwrap();
/// running.await.unwrap().unwrap();
/// # });
/// ```
#[derive(Debug)]
pub struct RouterMakeServiceMarker;

impl<S> IntoMakeService<RouterMakeServiceMarker> for axum::routing::IntoMakeService<S>
where
    S: Clone + Send + 'static,
    ReadyMakeService<Self>: MakeService,
{
    type MakeService = ReadyMakeService<Self>;

    fn into_make_service(self) -> ReadyMakeService<Self> {
        ReadyMakeService(self)
    }
}

impl Connected<&ConnectionInfo> for SocketAddr {
    /// The client's TCP address; `0.0.0.0:0` for a client on another
    /// transport (a Unix domain socket), which has none.
    fn connect_info(info: &ConnectionInfo) -> SocketAddr {
        info.remote_addr()
            .socket_addr()
            .unwrap_or(SocketAddr::from(([0, 0, 0, 0], 0)))
    }
}

impl Connected<&ConnectionInfo> for ConnectionInfo {
    /// Both ends of the connection.
    fn connect_info(info: &ConnectionInfo) -> ConnectionInfo {
        info.clone()
    }
}

impl Connected<&ConnectionInfo> for Addr {
    /// The client's end, on any transport.
    fn connect_info(info: &ConnectionInfo) -> Addr {
        info.remote_addr().clone()
    }
}

impl IntoResponse for ResponseStream {
    /// A `200 OK` with this body (and its length, when it is buffered).
    fn into_response(self) -> Response {
        Response::new(AxumBody::new(self))
    }
}

impl IntoResponse for EventStream {
    /// A `200 OK` `text/event-stream` response, as
    /// [`EventStream::into_http_response`].
    fn into_response(self) -> Response {
        self.into_http_response().map(AxumBody::new)
    }
}

impl IntoResponse for Incoming {
    /// A `200 OK` that streams this body back, frame by frame.
    fn into_response(self) -> Response {
        Response::new(AxumBody::new(self))
    }
}

impl IntoResponse for Error {
    /// The status the error maps to (a request-body error keeps its own:
    /// `408` for a body timeout, `413` for a body over the limit, `400`
    /// for a framing error), `500` otherwise, with the error as text.
    fn into_response(self) -> Response {
        let status = self
            .status()
            .and_then(|s| http::StatusCode::from_u16(s).ok())
            .unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
        (status, self.to_string()).into_response()
    }
}

impl<S: Send + Sync> FromRequest<S> for Incoming {
    type Rejection = std::convert::Infallible;

    /// The request body, read with ringstream's API. axum's
    /// `DefaultBodyLimit` applies (2 MB unless a layer changes it): a body
    /// beyond it fails the read that crosses it.
    async fn from_request(
        req: axum::extract::Request,
        _state: &S,
    ) -> Result<Self, Self::Rejection> {
        use axum::RequestExt;
        Ok(Incoming::from_body(req.with_limited_body().into_body()))
    }
}

#[cfg(test)]
mod tests {
    use std::future::{ready, Ready};

    use super::*;

    /// A make-service that answers with `answer`, or is never ready.
    #[derive(Clone)]
    struct Maker {
        ready: bool,
        answer: Result<Made, ()>,
    }

    /// The service a [`Maker`] makes, told apart by its number.
    #[derive(Clone)]
    struct Made(u8);

    impl Service<http::Request<Incoming>> for Made {
        type Response = http::Response<String>;
        type Error = std::convert::Infallible;
        type Future = Ready<Result<http::Response<String>, std::convert::Infallible>>;

        fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _req: http::Request<Incoming>) -> Self::Future {
            ready(Ok(http::Response::new(String::new())))
        }
    }

    impl Service<&ConnectionInfo> for Maker {
        type Response = Made;
        type Error = ();
        type Future = Ready<Result<Made, ()>>;

        fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), ()>> {
            if self.ready {
                Poll::Ready(Ok(()))
            } else {
                Poll::Pending
            }
        }

        fn call(&mut self, _info: &ConnectionInfo) -> Self::Future {
            ready(self.answer.clone())
        }
    }

    fn made(ready: bool, answer: Result<u8, ()>) -> Option<u8> {
        let info = ConnectionInfo::new(Addr::Unknown, Addr::Unknown);
        let answer = answer.map(Made);
        let made = ReadyMakeService(Maker { ready, answer }).make_service(&info);
        made.map(|Made(n)| n)
    }

    #[test]
    fn a_ready_make_service_makes_the_connections_service() {
        assert_eq!(made(true, Ok(7)), Some(7));
    }

    #[test]
    fn a_make_service_that_is_not_ready_or_fails_makes_none() {
        assert_eq!(made(false, Ok(7)), None);
        assert_eq!(made(true, Err(())), None);
    }

    #[test]
    fn socket_addr_connect_info_of_a_connection_without_one_is_unspecified() {
        let unix = ConnectionInfo::new(Addr::Unix(None), Addr::Unknown);
        assert_eq!(
            SocketAddr::connect_info(&unix),
            SocketAddr::from(([0, 0, 0, 0], 0))
        );
        let tcp: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let info = ConnectionInfo::new(tcp, Addr::Unknown);
        assert_eq!(SocketAddr::connect_info(&info), tcp);
        assert_eq!(Addr::connect_info(&info), Addr::Tcp(tcp));
        assert_eq!(ConnectionInfo::connect_info(&info), info);
    }
}
