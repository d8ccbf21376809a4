//! One HTTP/2 stream, from its request to its response: [`prepare`] turns
//! `h2`'s request into the service's (its body, its extensions, an
//! extended CONNECT's upgrade), [`serve_stream`] runs the service and
//! sends what it answers, [`open_tunnel`] hands an extended CONNECT's
//! stream to the service.

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use futures_util::FutureExt;
use h2::server::SendResponse;
use h2::RecvStream;
use http::header::CONTENT_LENGTH;
use http::{Method, Request, StatusCode};
use tokio::sync::watch;
use tracing::Instrument;

use super::respond::{fit_head, send_response, send_status, ServerFieldValues};
use super::tunnel::Tunnel;
use crate::body::Incoming;
use crate::server::addr::ConnectionInfo;
use crate::server::config::Config;
use crate::server::metrics::Metrics;
use crate::server::upgrade::{self, Pending, UpgradedIo};
use crate::stream::Stream;

/// A stream's request, ready for the service.
pub(super) struct Prepared {
    pub(super) request: Request<Incoming>,
    pub(super) respond: SendResponse<Bytes>,
    pub(super) log: RequestLog,
    /// An extended CONNECT's stream, kept for the service's upgrade.
    pub(super) tunnel: Option<TunnelOffer>,
}

/// What an extended CONNECT (RFC 8441) keeps until its response: the
/// stream's receiving half (its DATA is the new protocol's, not a body)
/// and the upgrade offered to the service.
pub(super) struct TunnelOffer {
    recv: RecvStream,
    pending: Pending,
}

/// What the log line of a stream names.
pub(super) struct RequestLog {
    method: Method,
    target: String,
    client: Option<ConnectionInfo>,
    head_request: bool,
}

/// Turns `h2`'s request into the service's: its body an [`Incoming`] over
/// the stream's DATA frames, its extensions the connection's info. A body
/// declared longer than the limit is answered 413 here (`None`).
pub(super) fn prepare(
    request: Request<RecvStream>,
    respond: SendResponse<Bytes>,
    config: &Config,
    info: Option<&ConnectionInfo>,
    fields: &ServerFieldValues,
) -> Option<Prepared> {
    let (mut parts, recv) = request.into_parts();
    let length = parts
        .headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if length.is_some_and(|n| n > config.limits.max_body_len) {
        send_status(respond, StatusCode::PAYLOAD_TOO_LARGE, fields);
        return None;
    }
    // An extended CONNECT opens a tunnel (a WebSocket, RFC 8441): the
    // service gets the upgrade, the stream's DATA frames are the tunnel's.
    let extended_connect =
        parts.method == Method::CONNECT && parts.extensions.get::<h2::ext::Protocol>().is_some();
    let (body, tunnel) = if extended_connect {
        let (on_upgrade, pending) = upgrade::offer();
        parts.extensions.insert(on_upgrade);
        (Incoming::empty(), Some(TunnelOffer { recv, pending }))
    } else {
        let deadlines = config.body_deadlines();
        let body = Incoming::from_http2(recv, length, config.limits.max_body_len, deadlines);
        (body, None)
    };
    if let Some(info) = info.filter(|_| config.connection_info) {
        info.insert_into(&mut parts.extensions);
    }
    let log = RequestLog {
        head_request: parts.method == Method::HEAD,
        method: parts.method.clone(),
        target: if config.access_log {
            parts
                .uri
                .path_and_query()
                .map_or_else(String::new, |p| p.as_str().to_owned())
        } else {
            String::new()
        },
        client: info.filter(|_| config.access_log).cloned(),
    };
    Some(Prepared {
        request: Request::from_parts(parts, body),
        respond,
        log,
        tunnel,
    })
}

/// How a stream's service call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StreamEnd {
    /// Answered (or the answer failed on the way).
    Answered,
    /// The client reset the stream before the service answered: the
    /// service's future was dropped.
    ResetByClient,
}

/// One stream: the service's future to its response, the response out,
/// its outcome counted and logged. A service that fails or panics is
/// answered 500; a response body that fails resets the stream; a client
/// that resets the stream drops the service's future at once.
pub(super) async fn serve_stream<F, B, E>(
    future: F,
    mut respond: SendResponse<Bytes>,
    log: RequestLog,
    tunnel: Option<(TunnelOffer, watch::Receiver<bool>)>,
    fields: ServerFieldValues,
    config: Arc<Config>,
    metrics: Arc<Metrics>,
) -> StreamEnd
where
    F: Future<Output = Result<http::Response<B>, E>>,
    E: Into<crate::error::BoxError>,
    B: http_body::Body,
    B::Error: Into<crate::error::BoxError>,
{
    let started = config.access_log.then(Instant::now);
    let span = tracing::info_span!(
        target: "ringstream::request",
        "request",
        http.request.method = %log.method,
        network.protocol.version = "2",
        http.response.status_code = tracing::field::Empty,
    );
    let mut service = pin!(std::panic::AssertUnwindSafe(future)
        .catch_unwind()
        .instrument(span.clone()));
    let outcome = poll_fn(|cx| {
        if respond.poll_reset(cx).is_ready() {
            return std::task::Poll::Ready(None);
        }
        service
            .as_mut()
            .poll(cx)
            .map(|caught| Some(caught.map(|answered| answered.map_err(Into::into))))
    })
    .await;
    let Some(outcome) = outcome else {
        return StreamEnd::ResetByClient;
    };
    let response = match outcome {
        Ok(Ok(response)) => response,
        Ok(Err(e)) => {
            tracing::error!(method = %log.method, error = %e, "service failed");
            metrics.record_status(500);
            send_status(respond, StatusCode::INTERNAL_SERVER_ERROR, &fields);
            return StreamEnd::Answered;
        }
        Err(_) => {
            tracing::error!(method = %log.method, "service panicked");
            metrics.record_status(500);
            send_status(respond, StatusCode::INTERNAL_SERVER_ERROR, &fields);
            return StreamEnd::Answered;
        }
    };
    let status = response.status().as_u16();
    metrics.record_status(status);
    span.record("http.response.status_code", status);
    if let Some((offer, stop)) = tunnel {
        if response.status().is_success() {
            open_tunnel(respond, response, offer, stop, &fields, &config).await;
            return StreamEnd::Answered;
        }
    }
    let sent = send_response(
        respond,
        response,
        &fields,
        log.head_request,
        config.write_timeout,
    )
    .await;
    let bytes = match sent {
        Ok(bytes) => bytes,
        Err(e) => {
            tracing::debug!(method = %log.method, status, error = %e, "response aborted");
            return StreamEnd::Answered;
        }
    };
    if let Some(at) = started {
        tracing::info!(
            target: "ringstream::access",
            duration_us = at.elapsed().as_micros() as u64,
            "http.request.method" = %log.method,
            "http.target" = %log.target,
            "network.protocol.version" = "2",
            "client.address" = log.client.as_ref().map(|i| tracing::field::display(i.remote_addr())),
            "http.response.status_code" = status,
            "http.response.body.size" = bytes,
        );
    }
    StreamEnd::Answered
}

/// Answers an extended CONNECT with the service's `2xx` head and hands
/// the stream to the service as an upgraded connection; returns once the
/// service lets it go (or the client ends it).
async fn open_tunnel<B>(
    mut respond: SendResponse<Bytes>,
    response: http::Response<B>,
    offer: TunnelOffer,
    stop: watch::Receiver<bool>,
    fields: &ServerFieldValues,
    config: &Config,
) {
    let (mut parts, _body) = response.into_parts();
    fit_head(&mut parts.headers, fields, None);
    let send = match respond.send_response(http::Response::from_parts(parts, ()), false) {
        Ok(send) => send,
        Err(e) => {
            tracing::debug!(error = %e, "extended CONNECT answer failed");
            return;
        }
    };
    let tunnel: Box<dyn UpgradedIo> = Box::new(Tunnel::new(offer.recv, send));
    let stream = Stream::with_options(tunnel, config.stream.clone());
    if let Some(mut guard) = offer.pending.complete(stream, stop) {
        guard.released().await;
    }
}
