//! What [`serve`](super::serve) is given, and how each connection gets its
//! service: [`IntoMakeService`] and [`MakeService`].
//!
//! A server takes a tower service of `Request<Incoming>` (an axum `Router`,
//! a [`service_fn`](super::service_fn), any stack of layers) and clones it
//! for each connection. With the `axum` feature it also takes the two forms
//! an axum application hands to `axum::serve`:
//! `router.into_make_service()` and
//! `router.into_make_service_with_connect_info::<C>()`; the second makes
//! each connection's service with its `ConnectInfo<C>`, taken from the
//! connection's [`ConnectionInfo`].

use http_body::Body;

use super::addr::ConnectionInfo;
use super::service::HttpService;

/// Makes the service of each accepted connection.
///
/// Every [`HttpService`] that is `Clone` and can move to another thread
/// is one: each connection gets a clone. [`IntoMakeService`] turns what
/// [`serve`](super::serve) is given into one.
///
/// # Examples
///
/// ```
/// use std::convert::Infallible;
/// use ringstream::server::{service_fn, Addr, ConnectionInfo, MakeService};
///
/// let mut service = service_fn(|_req: http::Request<ringstream::Incoming>| async {
///     Ok::<_, Infallible>(http::Response::new(String::from("hi\n")))
/// });
/// let info = ConnectionInfo::new(Addr::Unknown, Addr::Unknown);
/// assert!(service.make_service(&info).is_some());
/// ```
pub trait MakeService: Clone + Send + 'static {
    /// The service of one connection: an [`HttpService`] that runs in the
    /// connection's task, so it, its future and its response body are
    /// `Send + 'static`, and so is the body's data.
    type Service: HttpService<ResponseBody: Body<Data: Send> + Send + 'static, Future: Send>
        + Send
        + 'static;

    /// The service for the connection `info` describes; `None` closes the
    /// connection unserved (and is logged).
    fn make_service(&mut self, info: &ConnectionInfo) -> Option<Self::Service>;
}

impl<S> MakeService for S
where
    S: HttpService<ResponseBody: Body<Data: Send> + Send + 'static, Future: Send>
        + Clone
        + Send
        + 'static,
{
    type Service = S;

    #[inline]
    fn make_service(&mut self, _info: &ConnectionInfo) -> Option<S> {
        Some(self.clone())
    }
}

/// What [`serve`](super::serve) and [`Server::serve`](super::Server::serve)
/// accept: an [`HttpService`] (or any [`MakeService`]), or (with the `axum`
/// feature) axum's `Router::into_make_service()` and
/// `Router::into_make_service_with_connect_info::<C>()`.
///
/// `Marker` only tells the implementations apart; it is inferred, never
/// written.
///
/// # Examples
///
/// ```
/// use std::convert::Infallible;
/// use ringstream::server::{service_fn, Addr, ConnectionInfo, IntoMakeService, MakeService};
///
/// // What `serve` does with what it is given, once per connection.
/// fn made<M>(app: impl IntoMakeService<M>) -> impl MakeService {
///     app.into_make_service()
/// }
///
/// let mut make = made(service_fn(|_req: http::Request<ringstream::Incoming>| async {
///     Ok::<_, Infallible>(http::Response::new(String::from("hi\n")))
/// }));
/// let info = ConnectionInfo::new(Addr::Unknown, Addr::Unknown);
/// assert!(make.make_service(&info).is_some());
/// ```
#[diagnostic::on_unimplemented(
    message = "ringstream cannot serve `{Self}`",
    label = "not a service of `http::Request<ringstream::Incoming>`",
    note = "serve takes a tower `Service<http::Request<ringstream::Incoming>, Response = http::Response<B>>` \
            (a `ringstream::server::HttpService`) that is `Clone + Send + 'static`, whose future is `Send` \
            and whose body `B` is `Send + 'static` with `Send` data (an axum `Router`, \
            `ringstream::server::service_fn`), \
            or, with ringstream's `axum` feature, `router.into_make_service()` or \
            `router.into_make_service_with_connect_info::<C>()` where `C` is `SocketAddr`, \
            `ringstream::server::ConnectionInfo`, `ringstream::server::Addr` or a type that implements \
            `axum::extract::connect_info::Connected<&ringstream::server::ConnectionInfo>`"
)]
pub trait IntoMakeService<Marker> {
    /// The [`MakeService`] it becomes.
    type MakeService: MakeService;

    /// Converts it.
    fn into_make_service(self) -> Self::MakeService;
}

/// The [`IntoMakeService`] marker of an [`HttpService`] (or any other
/// [`MakeService`]), served as it is.
///
/// # Examples
///
/// Inferred when a service is served; named only where a bound needs it:
///
/// ```
/// use std::convert::Infallible;
/// use ringstream::server::{service_fn, IntoMakeService, ServiceMarker};
///
/// let service = service_fn(|_req: http::Request<ringstream::Incoming>| async {
///     Ok::<_, Infallible>(http::Response::new(String::new()))
/// });
/// let made = IntoMakeService::<ServiceMarker>::into_make_service(service);
/// # let _ = made;
/// ```
#[derive(Debug)]
pub struct ServiceMarker;

impl<S> IntoMakeService<ServiceMarker> for S
where
    S: MakeService,
{
    type MakeService = S;

    #[inline]
    fn into_make_service(self) -> S {
        self
    }
}
