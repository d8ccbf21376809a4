//! What a connection tells `tracing`: a span for each request, the access
//! log line, and how an exchange failed.
//!
//! Field names follow OpenTelemetry's semantic conventions for HTTP
//! servers (`http.request.method`, `url.path`, `http.response.status_code`,
//! `client.address`, ...), so a subscriber exporting spans needs no
//! renaming.

use std::time::Instant;

use http::{Method, Uri, Version};
use tracing::field::{display, Empty};
use tracing::Span;

use super::body::BodyFailure;
use super::service::NoResponse;
use crate::error::Error;
use crate::server::addr::{Addr, ConnectionInfo};

/// The span of one request, target `ringstream::request`, level INFO,
/// named `request`: entered while the service and its response body run,
/// so their events carry it. `http.response.status_code` and
/// `http.response.body.size` are recorded once the response is sent.
/// A disabled span (no subscriber wants it) costs a few loads.
///
/// The access line names the request target as it arrived `http.target`
/// (path and query), and the time from the head to the last byte handed
/// to the socket `duration_us`.
///
/// Both carry `network.protocol.version`: `"1.1"` (or `"1.0"` for an
/// HTTP/1.0 request), as HTTP/2's carry `"2"`.
///
/// Inlined where the request is made: with the `INFO` level off (the
/// common case), that check is all it costs.
#[inline]
pub(super) fn request_span(
    info: Option<&ConnectionInfo>,
    method: &Method,
    uri: &Uri,
    version: Version,
) -> Span {
    if !tracing::level_enabled!(tracing::Level::INFO) {
        return Span::none();
    }
    enabled_request_span(info, method, uri, version)
}

/// [`request_span`] with the `INFO` level on (the span may still be
/// disabled for its target).
#[inline(never)]
fn enabled_request_span(
    info: Option<&ConnectionInfo>,
    method: &Method,
    uri: &Uri,
    version: Version,
) -> Span {
    let span = tracing::info_span!(
        target: "ringstream::request",
        "request",
        http.request.method = %method,
        network.protocol.version = protocol_version(version),
        url.path = uri.path(),
        url.query = Empty,
        client.address = Empty,
        client.port = Empty,
        http.response.status_code = Empty,
        http.response.body.size = Empty,
    );
    if !span.is_disabled() {
        if let Some(query) = uri.query() {
            span.record("url.query", query);
        }
        if let Some(info) = info {
            record_client(&span, info.remote_addr());
        }
    }
    span
}

/// The `network.protocol.version` of an HTTP/1.x request.
pub(super) fn protocol_version(version: Version) -> &'static str {
    if version == Version::HTTP_10 {
        "1.0"
    } else {
        "1.1"
    }
}

fn record_client(span: &Span, addr: &Addr) {
    match addr {
        Addr::Tcp(addr) => {
            span.record("client.address", display(addr.ip()));
            span.record("client.port", addr.port());
        }
        other => {
            span.record("client.address", display(other));
        }
    }
}

/// Records the outcome of a request on its span.
pub(super) fn record_response(span: &Span, status: u16, bytes: u64) {
    if !span.is_disabled() {
        span.record("http.response.status_code", status);
        span.record("http.response.body.size", bytes);
    }
}

/// The access-log line of a served request: target `ringstream::access`,
/// level INFO, written when [`Config::access_log`](crate::server::Config::access_log)
/// is on.
pub(super) fn log_access(
    method: &LossyText<'_>,
    uri: &LossyText<'_>,
    version: &'static str,
    info: Option<&ConnectionInfo>,
    status: u16,
    bytes: u64,
    started: Instant,
) {
    tracing::info!(
        target: "ringstream::access",
        duration_us = started.elapsed().as_micros() as u64,
        "http.request.method" = %method,
        "http.target" = %uri,
        "network.protocol.version" = version,
        "client.address" = info.map(|i| display(i.remote_addr())),
        "http.response.status_code" = status,
        "http.response.body.size" = bytes,
    );
}

/// Why an exchange ended without a response, for the log line.
pub(super) enum Failure {
    Fixed(&'static str),
    Body(Error),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Fixed(why) => f.write_str(why),
            Failure::Body(e) => std::fmt::Display::fmt(e, f),
        }
    }
}

/// Logs how waiting for a response failed and gives the status to answer
/// with, if any (a body that failed on I/O gets none: the peer is gone).
pub(super) fn failure_status<R>(
    failed: Result<Result<R, String>, NoResponse>,
    method: &LossyText<'_>,
    uri: &LossyText<'_>,
    access_log: bool,
) -> Option<(u16, Failure)> {
    match failed {
        Ok(Ok(_)) => None,
        Ok(Err(e)) => {
            tracing::error!(%method, %uri, error = %e, "service failed");
            Some((500, Failure::Fixed("service failed")))
        }
        Err(NoResponse::Panicked) => {
            tracing::error!(%method, %uri, "service panicked");
            Some((500, Failure::Fixed("service panicked")))
        }
        Err(NoResponse::BodyFailed(BodyFailure(e))) => match e.status() {
            // Answered (and logged) as a rejection.
            Some(status) => Some((status, Failure::Body(e))),
            // The client went away within its body: an ordinary disconnect,
            // with nobody to answer.
            None => {
                if access_log {
                    tracing::info!(
                        target: "ringstream::access",
                        reason = %e,
                        "http.request.method" = %method,
                        "http.target" = %uri,
                        "request body cut short"
                    );
                } else {
                    tracing::debug!(%method, %uri, reason = %e, "request body cut short");
                }
                None
            }
        },
    }
}

/// Bytes of the request line shown in a log line (lossily, as UTF-8).
pub(super) struct LossyText<'a>(pub(super) Option<&'a [u8]>);

impl std::fmt::Display for LossyText<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&String::from_utf8_lossy(self.0.unwrap_or_default()), f)
    }
}
