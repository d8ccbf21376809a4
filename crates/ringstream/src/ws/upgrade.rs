//! [`WebSocketUpgrade`]: the opening handshake of a WebSocket on
//! ringstream's server, for a plain tower service or, with the `axum`
//! feature, as an axum extractor.

use std::borrow::Cow;
use std::fmt;
use std::future::Future;

use http::{header, HeaderValue, Method, Request, Response, StatusCode};
use ringstream_core::h1::list_contains;
use ringstream_core::ws::{accept, AcceptKey, DeflateParams, Error as CoreWsError};

use super::config::Config;
use super::socket::WebSocket;
use crate::error::Error;
use crate::server::upgrade::{on_upgrade, OnUpgrade};

/// A request that asks for a WebSocket, checked: answer it with
/// [`on_upgrade`](Self::on_upgrade), whose `101` response hands the
/// connection to the callback once written.
///
/// The checks (RFC 6455 §4.2.1): a `GET` over HTTP/1.1, `Connection:
/// upgrade` with `Upgrade: websocket`, `Sec-WebSocket-Version: 13` and a
/// valid `Sec-WebSocket-Key` — and a connection that ringstream's server
/// can hand over. Over HTTP/2 (feature `http2`, RFC 8441), an extended
/// `CONNECT` with `:protocol` `websocket` and `Sec-WebSocket-Version: 13`:
/// the answer is then a `200` and the WebSocket runs on the request's
/// stream, beside the connection's other streams; the handler is the same.
///
/// Its builder methods are axum's: [`protocols`](Self::protocols),
/// [`selected_protocol`](Self::selected_protocol),
/// [`max_message_size`](Self::max_message_size),
/// [`max_frame_size`](Self::max_frame_size),
/// [`on_failed_upgrade`](Self::on_failed_upgrade), and
/// [`config`](Self::config) for the rest of ringstream's settings.
///
/// # Examples
///
/// With the `axum` feature, as axum's own extractor:
///
/// ```
/// # #[cfg(feature = "axum")] {
/// use axum::response::IntoResponse;
/// use axum::routing::any;
/// use axum::Router;
/// use ringstream::ws::{Message, WebSocket, WebSocketUpgrade};
///
/// async fn ws_handler(ws: WebSocketUpgrade) -> impl IntoResponse {
///     ws.protocols(["chat.v2", "chat"])
///         .max_message_size(1 << 20)
///         .on_failed_upgrade(|error| eprintln!("upgrade failed: {error}"))
///         .on_upgrade(handle_socket)
/// }
///
/// async fn handle_socket(mut socket: WebSocket) {
///     let protocol = socket.protocol().cloned();
///     while let Some(Ok(msg)) = socket.recv().await {
///         if let Message::Text(text) = msg {
///             let reply = format!("{protocol:?} {text}");
///             if socket.send(Message::text(reply)).await.is_err() {
///                 break;
///             }
///         }
///     }
/// }
///
/// let app: Router = Router::new().route("/ws", any(ws_handler));
/// # let _ = app;
/// # }
/// ```
#[must_use]
pub struct WebSocketUpgrade<F = DefaultOnFailedUpgrade> {
    on_upgrade: OnUpgrade,
    /// The `Sec-WebSocket-Accept` of an HTTP/1.1 handshake; `None` over
    /// HTTP/2, which has none.
    accept: Option<AcceptKey>,
    config: Config,
    /// The client's first valid permessage-deflate offer.
    deflate_offer: Option<DeflateParams>,
    /// The subprotocols the client offered (`Sec-WebSocket-Protocol`), in
    /// its order.
    requested_protocols: Vec<HeaderValue>,
    /// The subprotocol selected, sent back in the `101`.
    protocol: Option<HeaderValue>,
    on_failed_upgrade: F,
}

impl<F> fmt::Debug for WebSocketUpgrade<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebSocketUpgrade")
            .field("accept", &self.accept.as_ref().map(AcceptKey::as_str))
            .field("config", &self.config)
            .field("requested_protocols", &self.requested_protocols)
            .field("protocol", &self.protocol)
            .finish_non_exhaustive()
    }
}

/// What to do when the connection cannot be handed over after the `101`
/// (see [`WebSocketUpgrade::on_failed_upgrade`]), as axum's trait of the
/// same name. Any `FnOnce(Error) + Send + 'static` is one.
///
/// # Examples
///
/// ```
/// use ringstream::ws::OnFailedUpgrade;
///
/// let (tx, rx) = std::sync::mpsc::channel();
/// let on_failed = move |error: ringstream::Error| tx.send(error.to_string()).unwrap();
/// on_failed.call(ringstream::Error::Closed);
/// assert_eq!(rx.recv().unwrap(), "connection closed");
/// ```
pub trait OnFailedUpgrade: Send + 'static {
    /// Called with the error, in the upgrade's task.
    fn call(self, error: Error);
}

impl<F> OnFailedUpgrade for F
where
    F: FnOnce(Error) + Send + 'static,
{
    fn call(self, error: Error) {
        self(error);
    }
}

/// The [`OnFailedUpgrade`] of a [`WebSocketUpgrade`] by default: logs the
/// error (`tracing`, at debug level: a client that goes away before its
/// `101` is written is routine).
///
/// # Examples
///
/// ```
/// use ringstream::ws::{DefaultOnFailedUpgrade, OnFailedUpgrade};
///
/// DefaultOnFailedUpgrade::default().call(ringstream::Error::Closed); // logged only
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultOnFailedUpgrade;

impl OnFailedUpgrade for DefaultOnFailedUpgrade {
    fn call(self, error: Error) {
        tracing::debug!(error = %error, "websocket handshake not completed");
    }
}

/// Why a request was not taken as a WebSocket handshake, with the status to
/// answer it with ([`into_response`](Self::into_response)).
///
/// # Examples
///
/// ```
/// use ringstream::ws::WebSocketUpgrade;
///
/// let mut request = http::Request::post("/ws").body(()).unwrap();
/// let refused = WebSocketUpgrade::from_request(&mut request).unwrap_err();
/// assert_eq!(refused.status(), 405);
/// assert_eq!(refused.to_string(), format!("{} (405 Method Not Allowed)", refused.reason()));
/// ```
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

    /// The refusal as a response: the status, the reason as a
    /// `text/plain; charset=utf-8` body, and the headers the status calls
    /// for (`Upgrade` and `Sec-WebSocket-Version` with a `426`, `Allow`
    /// with a `405`).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::ws::WebSocketUpgrade;
    ///
    /// let mut request = http::Request::get("/ws").body(()).unwrap();
    /// let refused = WebSocketUpgrade::from_request(&mut request).unwrap_err();
    /// let response = refused.into_response();
    /// assert_eq!(response.status(), 426);
    /// assert_eq!(response.headers()["content-type"], "text/plain; charset=utf-8");
    /// assert_eq!(response.headers()["upgrade"], "websocket");
    /// ```
    pub fn into_response(self) -> Response<String> {
        let mut response = Response::new(format!("{}\n", self.reason));
        *response.status_mut() = self.status;
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
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
    /// # Examples
    ///
    /// ```
    /// use ringstream::ws::WebSocketUpgrade;
    ///
    /// // A valid handshake, but not through ringstream's server: no connection to take.
    /// let mut request = http::Request::get("/ws").header("connection", "upgrade")
    ///     .header("upgrade", "websocket").header("sec-websocket-version", "13")
    ///     .header("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==").body(()).unwrap();
    /// assert_eq!(WebSocketUpgrade::from_request(&mut request).unwrap_err().status(), 500);
    /// ```
    ///
    /// # Errors
    ///
    /// [`UpgradeRefused`], with the status to answer with.
    pub fn from_request<B>(request: &mut Request<B>) -> Result<WebSocketUpgrade, UpgradeRefused> {
        let accept = check(
            request.method(),
            request.version(),
            request.headers(),
            request.extensions(),
        )?;
        let on_upgrade = on_upgrade(request).ok_or(not_upgradable())?;
        Ok(WebSocketUpgrade::new(on_upgrade, accept, request.headers()))
    }

    fn new(on_upgrade: OnUpgrade, accept: Option<AcceptKey>, headers: &http::HeaderMap) -> Self {
        WebSocketUpgrade {
            on_upgrade,
            accept,
            config: Config::default(),
            deflate_offer: deflate_offer(headers),
            requested_protocols: requested_protocols(headers),
            protocol: None,
            on_failed_upgrade: DefaultOnFailedUpgrade,
        }
    }
}

impl<F> WebSocketUpgrade<F> {
    /// Replaces the connection's settings (including the limits that
    /// [`max_message_size`](Self::max_message_size) and
    /// [`max_frame_size`](Self::max_frame_size) set: call those after it).
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// The largest message taken, in bytes
    /// ([`Limits::max_message_len`](super::Limits::max_message_len), 16 MiB
    /// by default): a larger one closes the connection with 1009.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::ws::{WebSocketUpgrade, WebSocket};
    ///
    /// fn small(ws: WebSocketUpgrade) -> http::Response<String> {
    ///     ws.max_message_size(64 * 1024)
    ///         .max_frame_size(16 * 1024)
    ///         .on_upgrade(|_socket: WebSocket| async {})
    /// }
    /// # let _ = small;
    /// ```
    pub fn max_message_size(mut self, max: usize) -> Self {
        self.config.limits.max_message_len = max;
        self
    }

    /// The largest frame payload taken, in bytes
    /// ([`Limits::max_frame_len`](super::Limits::max_frame_len), 16 MiB
    /// by default): a larger one closes the connection with 1009.
    pub fn max_frame_size(mut self, max: usize) -> Self {
        self.config.limits.max_frame_len = max;
        self
    }

    /// The subprotocols the server speaks, most preferred first: the first
    /// of them the client offered (`Sec-WebSocket-Protocol`) is selected
    /// and sent back in the `101`, and the [`WebSocket`] reports it
    /// ([`WebSocket::protocol`]). None offered: none selected (the client
    /// decides whether to go on without one).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::ws::WebSocketUpgrade;
    ///
    /// fn graphql(ws: WebSocketUpgrade) -> http::Response<String> {
    ///     let ws = ws.protocols(["graphql-transport-ws", "graphql-ws"]);
    ///     let selected = ws.selected_protocol().cloned();
    ///     ws.on_upgrade(move |socket| async move {
    ///         assert_eq!(socket.protocol(), selected.as_ref());
    ///     })
    /// }
    /// # let _ = graphql;
    /// ```
    pub fn protocols<I>(mut self, protocols: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<Cow<'static, str>>,
    {
        let requested = &self.requested_protocols;
        self.protocol = protocols.into_iter().find_map(|protocol| {
            let protocol = protocol.into();
            let offered = requested
                .iter()
                .any(|offered| offered.as_bytes() == protocol.as_bytes());
            offered
                .then(|| HeaderValue::from_str(&protocol).ok())
                .flatten()
        });
        self
    }

    /// The subprotocols the client offered, in its order: for
    /// `Sec-WebSocket-Protocol: soap, wamp`, `soap` and `wamp`.
    pub fn requested_protocols(&self) -> impl Iterator<Item = &HeaderValue> {
        self.requested_protocols.iter()
    }

    /// Selects `protocol` (replacing what [`protocols`](Self::protocols)
    /// chose). Browsers fail the connection when it is not one they
    /// offered.
    pub fn set_selected_protocol(&mut self, protocol: HeaderValue) {
        self.protocol = Some(protocol);
    }

    /// The subprotocol that will be selected, if any.
    pub fn selected_protocol(&self) -> Option<&HeaderValue> {
        self.protocol.as_ref()
    }

    /// Calls `callback` with the error if the connection cannot be handed
    /// over after the `101` (the client went away before it was written,
    /// or a middleware answered something else), as axum's
    /// `on_failed_upgrade`. By default the error is logged
    /// ([`DefaultOnFailedUpgrade`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::ws::WebSocketUpgrade;
    ///
    /// fn handler(ws: WebSocketUpgrade) -> http::Response<String> {
    ///     ws.on_failed_upgrade(|error| eprintln!("no websocket: {error}"))
    ///         .on_upgrade(|_socket| async {})
    /// }
    /// # let _ = handler;
    /// ```
    pub fn on_failed_upgrade<C: OnFailedUpgrade>(self, callback: C) -> WebSocketUpgrade<C> {
        WebSocketUpgrade {
            on_upgrade: self.on_upgrade,
            accept: self.accept,
            config: self.config,
            deflate_offer: self.deflate_offer,
            requested_protocols: self.requested_protocols,
            protocol: self.protocol,
            on_failed_upgrade: callback,
        }
    }

    /// The `101 Switching Protocols` (over HTTP/2, the `200`) to answer with; once the server has
    /// written it, `callback` runs in a task of its own with the
    /// [`WebSocket`]. If the connection cannot be handed over, the
    /// [`on_failed_upgrade`](Self::on_failed_upgrade) callback runs
    /// instead.
    ///
    /// An axum handler returns it as `impl IntoResponse`.
    #[must_use = "the WebSocket is set up only once this response is returned"]
    pub fn on_upgrade<C, Fut>(self, callback: C) -> Response<String>
    where
        C: FnOnce(WebSocket) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
        F: OnFailedUpgrade,
    {
        let WebSocketUpgrade {
            on_upgrade,
            accept,
            config,
            deflate_offer,
            requested_protocols: _,
            protocol,
            on_failed_upgrade,
        } = self;
        // permessage-deflate when offered, built in and wanted.
        let deflate = match (super::compression::AVAILABLE, config.deflate, deflate_offer) {
            (true, Some(ours), Some(offer)) => Some(ours.accept(&offer)),
            _ => None,
        };
        let mut response = Response::new(String::new());
        // Over HTTP/2 (no accept key), the 200 opens the stream as the
        // WebSocket.
        if let Some(accept) = accept {
            *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
            let headers = response.headers_mut();
            headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
            headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
            if let Ok(value) = HeaderValue::from_str(accept.as_str()) {
                headers.insert(header::SEC_WEBSOCKET_ACCEPT, value);
            }
        }
        let headers = response.headers_mut();
        if let Some(params) = deflate {
            if let Ok(value) = HeaderValue::from_str(params.to_header().as_str()) {
                headers.insert(header::SEC_WEBSOCKET_EXTENSIONS, value);
            }
        }
        if let Some(protocol) = &protocol {
            headers.insert(header::SEC_WEBSOCKET_PROTOCOL, protocol.clone());
        }
        // Two tasks: this one waits for the handover, then the callback's
        // future runs as a task of its own. One task for both would keep
        // what the first part captured (the settings, the callbacks) in
        // the future beside the callback's for the WebSocket's whole life.
        tokio::spawn(async move {
            match on_upgrade.await {
                Ok(upgraded) => {
                    let socket = WebSocket::from_upgraded_with(upgraded, config, deflate, protocol);
                    tokio::spawn(callback(socket));
                }
                Err(e) => on_failed_upgrade.call(e),
            }
        });
        response
    }
}

/// Checks the request against the core's rules of the opening handshake
/// (RFC 6455 §4.1): a `GET` on HTTP/1.1, without a body (the bytes after
/// the head are the session's), whose `Connection` lists `upgrade`, then
/// its WebSocket fields ([`accept`]); the accept key when they pass.
///
/// Over HTTP/2, the request must be an extended CONNECT (RFC 8441) that
/// the core's [`check_extended_connect`](ringstream_core::ws::check_extended_connect)
/// accepts; there is no accept key then (`None`).
fn check(
    method: &Method,
    version: http::Version,
    headers: &http::HeaderMap,
    extensions: &http::Extensions,
) -> Result<Option<AcceptKey>, UpgradeRefused> {
    let refuse = |e: CoreWsError| UpgradeRefused::new(e.status(), e.as_str());
    if version == http::Version::HTTP_2 {
        #[cfg(feature = "http2")]
        if let (true, Some(protocol)) = (
            method == Method::CONNECT,
            extensions.get::<h2::ext::Protocol>(),
        ) {
            let fields = headers
                .iter()
                .map(|(name, value)| (name.as_str(), value.as_bytes()));
            return ringstream_core::ws::check_extended_connect(
                protocol.as_str().as_bytes(),
                fields,
            )
            .map(|()| None)
            .map_err(refuse);
        }
        let _ = extensions;
        return Err(refuse(CoreWsError::NotWebSocket));
    }
    if method != Method::GET {
        return Err(refuse(CoreWsError::NotGet));
    }
    if version < http::Version::HTTP_11 {
        return Err(refuse(CoreWsError::NotHttp11));
    }
    let has_body = headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get_all(header::CONTENT_LENGTH)
            .iter()
            .any(|length| length.as_bytes() != b"0");
    if has_body {
        return Err(refuse(CoreWsError::RequestBody));
    }
    let connection_upgrade = headers
        .get_all(header::CONNECTION)
        .iter()
        .any(|value| list_contains(value.as_bytes(), b"upgrade"));
    if !connection_upgrade {
        return Err(UpgradeRefused::new(
            426,
            "a WebSocket handshake says Connection: upgrade",
        ));
    }
    let fields = headers
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_bytes()));
    accept(fields).map(Some).map_err(refuse)
}

fn not_upgradable() -> UpgradeRefused {
    UpgradeRefused::new(
        500,
        "the connection cannot be upgraded (not served by ringstream's server?)",
    )
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
        let accept = check(
            &parts.method,
            parts.version,
            &parts.headers,
            &parts.extensions,
        )
        .map_err(IntoResponse::into_response)?;
        let on_upgrade = parts
            .extensions
            .remove::<OnUpgrade>()
            .ok_or_else(|| not_upgradable().into_response().into_response())?;
        Ok(WebSocketUpgrade::new(on_upgrade, accept, &parts.headers))
    }
}

#[cfg(feature = "axum")]
impl axum::response::IntoResponse for UpgradeRefused {
    /// [`UpgradeRefused::into_response`], with an axum body.
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

/// The subprotocols of the request's `Sec-WebSocket-Protocol` fields, in
/// order (a comma-separated list, RFC 6455 §4.1; empty elements skipped).
fn requested_protocols(headers: &http::HeaderMap) -> Vec<HeaderValue> {
    headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .flat_map(|value| value.as_bytes().split(|&b| b == b','))
        .map(<[u8]>::trim_ascii)
        .filter(|token| !token.is_empty())
        .filter_map(|token| HeaderValue::from_bytes(token).ok())
        .collect()
}
