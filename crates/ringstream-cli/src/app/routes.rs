//! The demo's route table and its answers to requests no route serves
//! (RFC 9110 §9 and §15): `405` with `Allow`, `OPTIONS`, `501`, `404`.

use http::{header, Method, Response, StatusCode};

use super::{text, AppBody};

/// `Allow` of the routes that answer `GET` (RFC 9110 §9.3.2: and `HEAD`).
pub(super) const ALLOW_GET: &str = "GET, HEAD, OPTIONS";

/// `Allow` of the routes that answer `POST`.
pub(super) const ALLOW_POST: &str = "POST, OPTIONS";

/// `Allow` of the WebSocket routes: a handshake is a `GET` (RFC 6455
/// §4.1), and a `HEAD` could not be one.
pub(super) const ALLOW_WEBSOCKET: &str = "GET, OPTIONS";

/// `Allow` of the server as a whole (`OPTIONS *`, `CONNECT`): the union of
/// every route's.
pub(super) const ALLOW_SERVER: &str = "GET, HEAD, POST, OPTIONS";

/// The route table: the paths the demo serves (its target resources,
/// RFC 9110 §7.1), each with the methods it answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Route {
    /// `/`, the dashboard page.
    Page,
    /// `/events`, the server-sent events.
    Events,
    /// `/static/…`, when a root is set.
    Static,
    /// `/api/livedata`.
    Livedata,
    /// `/metrics`.
    Metrics,
    /// `/healthz`: alive.
    Healthz,
    /// `/readyz`: ready, or draining.
    Readyz,
    /// `/bytes/{n}` (a bad `n` is the route's own `400`).
    Bytes,
    /// `/echo`.
    Echo,
    /// `/upload`.
    Upload,
    /// `/ws/echo`, a WebSocket.
    WsEcho,
    /// `/ws/live`, a WebSocket.
    WsLive,
    /// `/ws/broadcast`, a WebSocket.
    WsBroadcast,
}

impl Route {
    /// The route of `path`, if it has one; `/static/…` only if
    /// `static_root` is set.
    pub(super) fn of(path: &str, static_root: bool) -> Option<Route> {
        Some(match path {
            "/" => Route::Page,
            "/events" => Route::Events,
            "/api/livedata" => Route::Livedata,
            "/metrics" => Route::Metrics,
            "/healthz" => Route::Healthz,
            "/readyz" => Route::Readyz,
            "/echo" => Route::Echo,
            "/upload" => Route::Upload,
            "/ws/echo" => Route::WsEcho,
            "/ws/live" => Route::WsLive,
            "/ws/broadcast" => Route::WsBroadcast,
            p if p.starts_with("/bytes/") => Route::Bytes,
            p if static_root && p.starts_with("/static/") => Route::Static,
            _ => return None,
        })
    }

    /// The `Allow` field of the route (RFC 9110 §10.2.1): the methods it
    /// answers, `OPTIONS` included.
    pub(super) fn allow(self) -> &'static str {
        match self {
            Route::Echo | Route::Upload => ALLOW_POST,
            Route::WsEcho | Route::WsLive | Route::WsBroadcast => ALLOW_WEBSOCKET,
            _ => ALLOW_GET,
        }
    }

    /// Whether the route answers `method` with a resource (`OPTIONS` is
    /// answered for every route, by [`options`]).
    pub(super) fn serves(self, method: &Method, version: http::Version) -> bool {
        match self {
            Route::Echo | Route::Upload => method == Method::POST,
            // Any `GET`, handshake or not: one that is not gets the
            // handshake's refusal (`426`, `400`), which names what is missing.
            // Over HTTP/2 a WebSocket opens with an extended `CONNECT` (RFC
            // 8441), which browsers use on HTTP/2 pages.
            Route::WsEcho | Route::WsLive | Route::WsBroadcast => {
                method == Method::GET || is_extended_connect(method, version)
            }
            _ => method == Method::GET || method == Method::HEAD,
        }
    }
}

/// The answer to a request no route serves: `501` for a method the server
/// does not recognize, `OPTIONS`'s list or `405` with `Allow`, or `404`.
pub(super) fn refuse(method: &Method, path: &str, route: Option<Route>) -> Response<AppBody> {
    if !is_standard(method) {
        // RFC 9110 §15.6.2: a method the server does not recognize.
        return text(StatusCode::NOT_IMPLEMENTED, "not implemented\n");
    }
    if method == Method::CONNECT {
        // RFC 9110 §9.3.6: CONNECT asks for a tunnel to the authority it
        // names (`host:port`), a resource of no route here. 405 rather than
        // 501: the method is one the server recognizes (§15.6.2 keeps 501
        // for those it does not), and its target names the server as a
        // whole, so the `Allow` sent is the server's, as for `OPTIONS *`.
        return method_not_allowed(ALLOW_SERVER);
    }
    if method == Method::OPTIONS && path == "*" {
        // RFC 9110 §9.3.7: `OPTIONS *` is about the server itself.
        return options(ALLOW_SERVER);
    }
    match route {
        None => text(StatusCode::NOT_FOUND, "not found\n"),
        Some(route) if method == Method::OPTIONS => options(route.allow()),
        Some(route) => method_not_allowed(route.allow()),
    }
}

/// Whether a request is a `CONNECT` over HTTP/2, which opens a WebSocket
/// there (RFC 8441: the handshake checks its `:protocol`).
fn is_extended_connect(method: &Method, version: http::Version) -> bool {
    method == Method::CONNECT && version == http::Version::HTTP_2
}

/// Whether `method` is one RFC 9110 §9 defines (or PATCH, RFC 5789).
/// Methods are case-sensitive (§9.1): `get` is not `GET`.
pub(super) fn is_standard(method: &Method) -> bool {
    matches!(
        *method,
        Method::GET
            | Method::HEAD
            | Method::POST
            | Method::PUT
            | Method::DELETE
            | Method::CONNECT
            | Method::OPTIONS
            | Method::TRACE
            | Method::PATCH
    )
}

/// `405 Method Not Allowed` with the `Allow` it must carry (RFC 9110
/// §15.5.6).
fn method_not_allowed(allow: &'static str) -> Response<AppBody> {
    let mut response = text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n");
    response
        .headers_mut()
        .insert(header::ALLOW, header::HeaderValue::from_static(allow));
    response
}

/// The answer to `OPTIONS` (RFC 9110 §9.3.7): `204`, and the methods in
/// `Allow`.
fn options(allow: &'static str) -> Response<AppBody> {
    let mut response = Response::new(AppBody::Full(None));
    *response.status_mut() = StatusCode::NO_CONTENT;
    response
        .headers_mut()
        .insert(header::ALLOW, header::HeaderValue::from_static(allow));
    response
}
