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
//! - Every request over TCP carries `ConnectInfo<SocketAddr>`, so the
//!   `ConnectInfo` extractor works without
//!   `into_make_service_with_connect_info` (ringstream's own
//!   [`ConnectionInfo`](crate::server::ConnectionInfo) is there as well, for
//!   every transport).
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

use axum::body::Body as AxumBody;
use axum::extract::FromRequest;
use axum::response::{IntoResponse, Response};

use crate::sse::EventStream;
use crate::{Error, Incoming, ResponseStream};

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
