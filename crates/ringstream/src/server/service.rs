//! What the server serves: [`HttpService`], the contract of a service,
//! and [`service_fn`], a service made from an async function.

use std::future::Future;
use std::task::{Context, Poll};

use http::{Request, Response};
use http_body::Body;
use tower_service::Service;

use crate::body::Incoming;
use crate::error::BoxError;

/// What ringstream serves: a tower [`Service`] of `Request<Incoming>`
/// whose responses are `http::Response<B>` with a body `B` ([`Body`]),
/// and whose errors — the service's and the body's — convert into a
/// [`BoxError`].
///
/// Every service that meets these bounds is one (an axum `Router`, a
/// [`service_fn`], a stack of tower layers): the trait is implemented for
/// them all and never by hand. [`serve_connection`](super::serve_connection)
/// takes one; [`serve`](super::serve) and [`Server::serve`](super::Server::serve)
/// take one (or what makes one per connection, [`IntoMakeService`](super::IntoMakeService))
/// that can also move to another thread: the service, its future and its
/// response body `Send + 'static`, and the body's data `Send` (see
/// [`MakeService::Service`](super::MakeService::Service)).
///
/// A service's error answers the request with `500` (it is logged); a
/// response body's error ends the connection.
///
/// # Examples
///
/// ```
/// use std::convert::Infallible;
/// use ringstream::server::{service_fn, HttpService};
/// use ringstream::{Incoming, ResponseStream};
/// use tower_service::Service;
///
/// // A function that takes any service ringstream can serve.
/// fn servable<S: HttpService>(service: S) -> S {
///     service
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut service = servable(service_fn(|_req: http::Request<Incoming>| async {
///     Ok::<_, Infallible>(http::Response::new(ResponseStream::buffered()))
/// }));
/// let response = service.call(http::Request::new(Incoming::empty())).await.unwrap();
/// assert_eq!(response.status(), 200);
/// # });
/// ```
#[diagnostic::on_unimplemented(
    message = "ringstream cannot serve `{Self}`",
    label = "not a service of `http::Request<ringstream::Incoming>` returning `http::Response<B>`",
    note = "a served service is a tower `Service<http::Request<ringstream::Incoming>, Response = http::Response<B>>` \
            where `B: http_body::Body`, and both `Service::Error` and `B::Error` convert \
            `Into<ringstream::BoxError>` (an axum `Router`, `ringstream::server::service_fn`)"
)]
pub trait HttpService:
    Service<Request<Incoming>, Response = Response<Self::ResponseBody>, Error: Into<BoxError>>
{
    /// The body of its responses.
    type ResponseBody: Body<Error: Into<BoxError>>;
}

impl<S, B> HttpService for S
where
    S: Service<Request<Incoming>, Response = Response<B>>,
    S::Error: Into<BoxError>,
    B: Body,
    B::Error: Into<BoxError>,
{
    type ResponseBody = B;
}

/// Make a [`Service`] from an async function of a request.
///
/// # Examples
///
/// ```
/// use std::convert::Infallible;
/// use ringstream::{server::service_fn, Incoming, ResponseStream};
///
/// let service = service_fn(|req: http::Request<Incoming>| async move {
///     let mut body = ResponseStream::buffered();
///     std::fmt::Write::write_fmt(&mut body, format_args!("hello {}", req.uri().path())).unwrap();
///     Ok::<_, Infallible>(http::Response::new(body))
/// });
/// # let _ = service;
/// ```
pub fn service_fn<F>(f: F) -> ServiceFn<F> {
    ServiceFn { f }
}

/// A [`Service`] made by [`service_fn`].
///
/// # Examples
///
/// Called directly as a tower service:
///
/// ```
/// use std::convert::Infallible;
/// use ringstream::server::{service_fn, ServiceFn};
/// use tower_service::Service;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut service: ServiceFn<_> = service_fn(|req: http::Request<ringstream::Incoming>| async move {
///     Ok::<_, Infallible>(http::Response::new(req.method().to_string()))
/// });
/// let request = http::Request::post("/").body(ringstream::Incoming::empty()).unwrap();
/// let response = service.call(request).await.unwrap();
/// assert_eq!(response.body(), "POST");
/// # });
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ServiceFn<F> {
    f: F,
}

impl<F, Req, Fut, Res, E> Service<Req> for ServiceFn<F>
where
    F: FnMut(Req) -> Fut,
    Fut: Future<Output = Result<Res, E>>,
{
    type Response = Res;
    type Error = E;
    type Future = Fut;

    #[inline]
    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), E>> {
        Poll::Ready(Ok(()))
    }

    // Inlined where the request is made: a call that is not copies the
    // request into its argument.
    #[inline]
    fn call(&mut self, req: Req) -> Fut {
        (self.f)(req)
    }
}
