//! Phase 3, the service: its future run to a response while the request
//! body is fed to it.

use std::future::{poll_fn, Future};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::Poll;

use http::Response;
use ringstream_core::h1::Exchange;
use tokio::io::{AsyncRead, AsyncWrite};

use super::body::{BodyFailure, BodyPump};
use crate::error::BoxError;
use crate::stream::Stream;

/// How waiting for a response ended other than with one.
pub(super) enum NoResponse {
    /// The service's future panicked.
    Panicked,
    /// The request body failed (framing, timeout, I/O).
    BodyFailed(BodyFailure),
}

/// Runs the service's `future` to its response, feeding the request body
/// through `pump` while it waits; the service's own events belong to
/// `span`. `Ok(Err(text))`: the service failed.
///
/// The future is pinned where the caller made it: waiting for it moves
/// nothing.
pub(super) fn await_response<'a, T, B, F, E>(
    stream: &'a mut Stream<T>,
    mut future: Pin<&'a mut F>,
    pump: &'a mut BodyPump,
    exchange: &'a mut Exchange,
    span: &'a tracing::Span,
) -> impl Future<Output = Result<Result<Response<B>, String>, NoResponse>> + 'a
where
    T: AsyncRead + AsyncWrite + Unpin,
    F: Future<Output = Result<Response<B>, E>>,
    E: Into<BoxError>,
{
    poll_fn(move |cx| loop {
        // The service's own events belong to the request's span.
        let entered = span.enter();
        let polled = catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx)));
        match polled {
            Err(_) => return Poll::Ready(Err(NoResponse::Panicked)),
            Ok(Poll::Ready(Ok(response))) => return Poll::Ready(Ok(Ok(response))),
            Ok(Poll::Ready(Err(e))) => return Poll::Ready(Ok(Err(e.into().to_string()))),
            Ok(Poll::Pending) => {}
        }
        drop(entered);
        match pump.poll(stream, exchange, cx) {
            Err(failure) => return Poll::Ready(Err(NoResponse::BodyFailed(failure))),
            Ok(true) => continue,
            Ok(false) => return Poll::Pending,
        }
    })
}
