//! `service_fn`: a `tower_service::Service` from an async function.

use std::future::Future;
use std::task::{Context, Poll};

use tower_service::Service;

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

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), E>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Req) -> Fut {
        (self.f)(req)
    }
}
