//! [`WebSocketUpgrade`]: the opening handshake of a WebSocket on
//! ringstream's server, for a plain tower service or, with the `axum`
//! feature, as an axum extractor.

use std::fmt;
use std::future::Future;

use http::{header, HeaderValue, Method, Request, Response, StatusCode};
use ringstream_core::ws::{accept, AcceptKey, DeflateParams};

use super::{Config, WebSocket};
use crate::server::upgrade::{on_upgrade, OnUpgrade};

/// A request that asks for a WebSocket, checked: answer it with
/// [`on_upgrade`](Self::on_upgrade), whose `101` response hands the
/// connection to the callback once written.
///
/// The checks (RFC 6455 §4.2.1): a `GET` over HTTP/1.1, `Connection:
/// upgrade` with `Upgrade: websocket`, `Sec-WebSocket-Version: 13` and a
/// valid `Sec-WebSocket-Key` — and a connection that ringstream's server
/// can hand over.
pub struct WebSocketUpgrade {
    on_upgrade: OnUpgrade,
    accept: AcceptKey,
    config: Config,
    /// The client's first valid permessage-deflate offer.
    deflate_offer: Option<DeflateParams>,
}

impl fmt::Debug for WebSocketUpgrade {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebSocketUpgrade")
            .field("accept", &self.accept.as_str())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Why a request was not taken as a WebSocket handshake, with the status to
/// answer it with ([`into_response`](Self::into_response)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpgradeRefused {
    status: StatusCode,
    reason: &'static str,
}

impl UpgradeRefused {
    fn new(status: u16, reason: &'static str) -> UpgradeRefused {
        UpgradeRefused {
            status: StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
            reason,
        }
    }

    /// The status to answer with: `400`, `405` for another method than
    /// `GET`, `426` with `Sec-WebSocket-Version: 13` for another version,
    /// `500` when the connection cannot be handed over (the request did not
    /// come through ringstream's server).
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// What was wrong.
    pub fn reason(&self) -> &'static str {
        self.reason
    }

    /// The refusal as a response.
    pub fn into_response(self) -> Response<String> {
        let mut response = Response::new(format!("{}\n", self.reason));
        *response.status_mut() = self.status;
        if self.status == StatusCode::UPGRADE_REQUIRED {
            response.headers_mut().insert(
                header::SEC_WEBSOCKET_VERSION,
                HeaderValue::from_static("13"),
            );
            response
                .headers_mut()
                .insert(header::UPGRADE, HeaderValue::from_static("websocket"));
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
        }
        if self.status == StatusCode::METHOD_NOT_ALLOWED {
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET"));
        }
        response
    }
}

impl fmt::Display for UpgradeRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.reason, self.status)
    }
}

impl std::error::Error for UpgradeRefused {}

impl WebSocketUpgrade {
    /// Checks `request` as a WebSocket handshake and takes the connection's
    /// upgrade from it.
    ///
    /// # Errors
    ///
    /// [`UpgradeRefused`], with the status to answer with.
    pub fn from_request<B>(request: &mut Request<B>) -> Result<WebSocketUpgrade, UpgradeRefused> {
        let accept = Self::from_parts(request.method(), request.version(), request.headers())?;
        let on_upgrade = on_upgrade(request).ok_or(UpgradeRefused::new(
            500,
            "the connection cannot be upgraded (not served by ringstream's server?)",
        ))?;
        let deflate_offer = deflate_offer(request.headers());
        Ok(WebSocketUpgrade {
            on_upgrade,
            accept,
            config: Config::default(),
            deflate_offer,
        })
    }

    fn from_parts(
        method: &Method,
        version: http::Version,
        headers: &http::HeaderMap,
    ) -> Result<AcceptKey, UpgradeRefused> {
        if method != Method::GET {
            return Err(UpgradeRefused::new(405, "a WebSocket handshake is a GET"));
        }
        if version < http::Version::HTTP_11 {
            return Err(UpgradeRefused::new(
                400,
                "a WebSocket handshake needs HTTP/1.1",
            ));
        }
        let connection_upgrade = headers.get_all(header::CONNECTION).iter().any(|value| {
            value
                .as_bytes()
                .split(|&b| b == b',')
                .any(|token| token.trim_ascii().eq_ignore_ascii_case(b"upgrade"))
        });
        if !connection_upgrade {
            return Err(UpgradeRefused::new(
                426,
                "a WebSocket handshake says Connection: upgrade",
            ));
        }
        let fields = headers
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_bytes()));
        accept(fields).map_err(|e| UpgradeRefused::new(e.status(), e.as_str()))
    }

    /// Replaces the connection's settings.
    #[must_use]
    pub fn config(mut self, config: Config) -> WebSocketUpgrade {
        self.config = config;
        self
    }

    /// The `101 Switching Protocols` to answer with; once the server has
    /// written it, `callback` runs in a task of its own with the
    /// [`WebSocket`].
    pub fn on_upgrade<F, Fut>(self, callback: F) -> Response<String>
    where
        F: FnOnce(WebSocket) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let WebSocketUpgrade {
            on_upgrade,
            accept,
            config,
            deflate_offer,
        } = self;
        // permessage-deflate when offered, built in and wanted.
        let deflate = match (super::compression::AVAILABLE, config.deflate, deflate_offer) {
            (true, Some(ours), Some(offer)) => Some(ours.accept(&offer)),
            _ => None,
        };
        tokio::spawn(async move {
            match on_upgrade.await {
                Ok(upgraded) => {
                    callback(WebSocket::from_upgraded_with(upgraded, config, deflate)).await;
                }
                Err(e) => tracing::debug!(error = %e, "websocket handshake not completed"),
            }
        });
        let mut response = Response::new(String::new());
        *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
        let headers = response.headers_mut();
        headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
        headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
        if let Ok(value) = HeaderValue::from_str(accept.as_str()) {
            headers.insert(header::SEC_WEBSOCKET_ACCEPT, value);
        }
        if let Some(params) = deflate {
            if let Ok(value) = HeaderValue::from_str(params.to_header().as_str()) {
                headers.insert(header::SEC_WEBSOCKET_EXTENSIONS, value);
            }
        }
        response
    }
}

#[cfg(feature = "axum")]
impl<S: Send + Sync> axum::extract::FromRequestParts<S> for WebSocketUpgrade {
    type Rejection = axum::response::Response;

    /// Works as axum's own `WebSocketUpgrade` does, on ringstream's server:
    /// `ws.on_upgrade(|socket| async move { .. })`.
    async fn from_request_parts(
        parts: &mut http::request::Parts,
        _state: &S,
    ) -> Result<Self, Self::Rejection> {
        use axum::response::IntoResponse;
        let refuse = |refused: UpgradeRefused| refused.into_response().into_response();
        let accept =
            Self::from_parts(&parts.method, parts.version, &parts.headers).map_err(refuse)?;
        let on_upgrade = parts.extensions.remove::<OnUpgrade>().ok_or_else(|| {
            refuse(UpgradeRefused::new(
                500,
                "the connection cannot be upgraded (not served by ringstream's server?)",
            ))
        })?;
        Ok(WebSocketUpgrade {
            on_upgrade,
            accept,
            config: Config::default(),
            deflate_offer: deflate_offer(&parts.headers),
        })
    }
}

#[cfg(feature = "axum")]
impl axum::response::IntoResponse for UpgradeRefused {
    fn into_response(self) -> axum::response::Response {
        UpgradeRefused::into_response(self).map(axum::body::Body::new)
    }
}

/// The client's first valid permessage-deflate offer, if any.
fn deflate_offer(headers: &http::HeaderMap) -> Option<DeflateParams> {
    DeflateParams::first_offer(
        headers
            .get_all(header::SEC_WEBSOCKET_EXTENSIONS)
            .iter()
            .map(HeaderValue::as_bytes),
    )
}
