//! One HTTP/2 response out: its head as a HEADERS frame, its body as DATA
//! frames that carry the body's own `Bytes` (no copy), each handed to the
//! connection only once the client's window has room for it, then its
//! trailers.

use std::future::poll_fn;
use std::pin::pin;
use std::time::Duration;

use bytes::{Buf, Bytes};
use h2::server::SendResponse;
use h2::{Reason, SendStream};
use http::header::{self, HeaderMap, HeaderValue};
use http::{Response, StatusCode};
use http_body::Body;

use crate::error::{BoxError, Error, Timeout};

/// The fields RFC 9113 §8.2.2 forbids in HTTP/2: they describe an
/// HTTP/1.1 connection, and `h2` refuses a head that has them.
const CONNECTION_FIELDS: [header::HeaderName; 4] = [
    header::CONNECTION,
    header::TRANSFER_ENCODING,
    header::UPGRADE,
    header::HeaderName::from_static("keep-alive"),
];

/// What the server adds to a response head: its `date` and `server`
/// fields, unless the service set its own.
pub(super) struct ServerFieldValues {
    pub(super) date: HeaderValue,
    pub(super) server: Option<HeaderValue>,
}

/// Fits a service's response head to HTTP/2: connection-specific fields
/// dropped (`proxy-connection` too), the server's fields added, and
/// `declared_length` (a body's known length) given as its
/// `content-length` unless the service set one.
pub(super) fn fit_head(
    headers: &mut HeaderMap,
    fields: &ServerFieldValues,
    declared_length: Option<u64>,
) {
    for name in &CONNECTION_FIELDS {
        if headers.contains_key(name) {
            headers.remove(name);
        }
    }
    if headers.contains_key("proxy-connection") {
        headers.remove("proxy-connection");
    }
    if !headers.contains_key(header::DATE) {
        headers.insert(header::DATE, fields.date.clone());
    }
    if let Some(server) = &fields.server {
        if !headers.contains_key(header::SERVER) {
            headers.insert(header::SERVER, server.clone());
        }
    }
    if let Some(length) = declared_length {
        if !headers.contains_key(header::CONTENT_LENGTH) {
            headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
        }
    }
}

/// Whether a response with `status` to a request of `method` has no body
/// on the wire (RFC 9110 §6.4.1): HEAD, 1xx, 204 and 304.
pub(super) fn has_no_body(head_request: bool, status: StatusCode) -> bool {
    head_request
        || status.is_informational()
        || status == StatusCode::NO_CONTENT
        || status == StatusCode::NOT_MODIFIED
}

/// Sends `response` on its stream: the head, then (unless the response
/// has no body on the wire) the body under the write deadline. Returns
/// the body bytes sent.
pub(super) async fn send_response<B>(
    mut respond: SendResponse<Bytes>,
    response: Response<B>,
    fields: &ServerFieldValues,
    head_request: bool,
    write_timeout: Duration,
) -> Result<u64, Error>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let (mut parts, body) = response.into_parts();
    let no_body = has_no_body(head_request, parts.status);
    // The length a body of known size declares: as over HTTP/1.1, none on
    // 1xx and 204, and none on HEAD when the service dropped the body.
    let status = parts.status;
    let declared = body.size_hint().exact().filter(|&n| {
        !(status.is_informational() || status == StatusCode::NO_CONTENT || head_request && n == 0)
    });
    fit_head(&mut parts.headers, fields, declared);
    let end = no_body || body.is_end_stream();
    let send = respond.send_response(Response::from_parts(parts, ()), end)?;
    if end {
        return Ok(0);
    }
    send_body(send, body, write_timeout).await
}

/// A bare response with `status` and no body (a request refused before
/// the service saw it).
pub(super) fn send_status(
    mut respond: SendResponse<Bytes>,
    status: StatusCode,
    fields: &ServerFieldValues,
) {
    let mut response = Response::new(());
    *response.status_mut() = status;
    fit_head(response.headers_mut(), fields, None);
    // The stream may be reset already: nothing to answer then.
    let _ = respond.send_response(response, true);
}

/// The body out as DATA frames: each frame of the body is polled before
/// any window is reserved for it (a window reserved ahead could starve the
/// other streams), then handed to `h2` once the stream has room, the last
/// one with END_STREAM. A client reset ends it at once.
async fn send_body<B>(
    mut send: SendStream<Bytes>,
    body: B,
    write_timeout: Duration,
) -> Result<u64, Error>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let mut body = pin!(body);
    let mut sent = 0u64;
    loop {
        let frame = poll_fn(|cx| {
            if let std::task::Poll::Ready(reset) = send.poll_reset(cx) {
                return std::task::Poll::Ready(Err(reset));
            }
            // The body's error as a `BoxError` at once: what `B` fails
            // with need not be `Send`, and this future must be.
            body.as_mut()
                .poll_frame(cx)
                .map(|frame| Ok(frame.map(|f| f.map_err(Into::into))))
        })
        .await;
        let frame = match frame {
            Err(reset) => {
                return Err(match reset {
                    Ok(reason) => Error::Http2(h2::Error::from(reason)),
                    Err(e) => Error::Http2(e),
                });
            }
            Ok(None) => {
                send.send_data(Bytes::new(), true)?;
                return Ok(sent);
            }
            Ok(Some(Err(e))) => {
                send.send_reset(Reason::INTERNAL_ERROR);
                return Err(Error::User(e));
            }
            Ok(Some(Ok(frame))) => frame,
        };
        let data = match frame.into_data() {
            Ok(mut data) => data.copy_to_bytes(data.remaining()),
            Err(frame) => {
                if let Ok(mut trailers) = frame.into_trailers() {
                    for name in &CONNECTION_FIELDS {
                        trailers.remove(name);
                    }
                    send.send_trailers(trailers)?;
                    return Ok(sent);
                }
                continue;
            }
        };
        let last = body.is_end_stream();
        if data.is_empty() && !last {
            continue;
        }
        // Handed over whole once the stream has room (its window, and
        // under `h2`'s cap on what a stream buffers): `h2` frames it as the
        // window allows, and the next piece of the body is polled only
        // when room is back, so what waits to be sent stays bounded.
        window(&mut send, data.len(), write_timeout).await?;
        sent += data.len() as u64;
        send.send_data(data, last)?;
        if last {
            return Ok(sent);
        }
    }
}

/// Room for up to `wanted` bytes reserved, and waited for until the
/// stream has some (at least one byte; none is waited for when `wanted`
/// is 0), under `write_timeout`: a client that stops reading has its
/// stream reset (`CANCEL`) when it runs out.
async fn window(
    send: &mut SendStream<Bytes>,
    wanted: usize,
    write_timeout: Duration,
) -> Result<usize, Error> {
    if wanted == 0 {
        return Ok(0);
    }
    send.reserve_capacity(wanted);
    if send.capacity() > 0 {
        return Ok(send.capacity());
    }
    let waited = tokio::time::timeout(write_timeout, async {
        loop {
            match poll_fn(|cx| send.poll_capacity(cx)).await {
                Some(Ok(0)) => {}
                Some(Ok(n)) => return Ok(n),
                Some(Err(e)) => return Err(Error::Http2(e)),
                None => return Err(Error::Closed),
            }
        }
    })
    .await;
    match waited {
        Ok(room) => room,
        Err(_) => {
            send.send_reset(Reason::CANCEL);
            Err(Error::TimedOut(Timeout::ResponseWrite))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields() -> ServerFieldValues {
        ServerFieldValues {
            date: HeaderValue::from_static("Mon, 07 Dec 2026 08:00:00 GMT"),
            server: Some(HeaderValue::from_static("ringstream")),
        }
    }

    #[test]
    fn connection_fields_are_dropped_and_the_server_fields_added() {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
        headers.insert("keep-alive", HeaderValue::from_static("timeout=5"));
        headers.insert("proxy-connection", HeaderValue::from_static("x"));
        headers.insert(
            header::TRANSFER_ENCODING,
            HeaderValue::from_static("chunked"),
        );
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        fit_head(&mut headers, &fields(), Some(5));
        let names: Vec<_> = headers.keys().map(|k| k.as_str()).collect();
        assert_eq!(names, ["content-type", "date", "server", "content-length"]);
        assert_eq!(headers[header::CONTENT_LENGTH], "5");
    }

    #[test]
    fn a_field_the_service_set_is_kept() {
        let mut headers = HeaderMap::new();
        headers.insert(header::SERVER, HeaderValue::from_static("mine"));
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from_static("9"));
        fit_head(&mut headers, &fields(), Some(0));
        assert_eq!(headers[header::SERVER], "mine");
        assert_eq!(headers[header::CONTENT_LENGTH], "9");
    }

    #[test]
    fn head_1xx_204_and_304_have_no_body() {
        assert!(has_no_body(true, StatusCode::OK));
        assert!(has_no_body(false, StatusCode::NO_CONTENT));
        assert!(has_no_body(false, StatusCode::NOT_MODIFIED));
        assert!(!has_no_body(false, StatusCode::OK));
    }
}
