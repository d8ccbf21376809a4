//! The demo application served by `ringstream serve`: the endpoints that
//! show ringstream's streaming paths and serve as its benchmark surface.
//!
//! | endpoint | what it shows |
//! |---|---|
//! | `GET /` | the live dashboard page (HTML, CSS and JavaScript embedded in the binary) |
//! | `GET /events` | server-sent events: the server's counters once a second |
//! | `GET /static/…` | files under `--root DIR` ([`ServeDir`]) |
//! | `GET /api/livedata` | ~40 KB of JSON for a simulated solar installation, printed line by line into a [`ResponseStream`] |
//! | `GET /healthz` | `200 ok`: the process is alive (a liveness probe) |
//! | `GET /readyz` | `200 ready`, or `503 draining` once the server drains or shuts down (a readiness probe, a balancer's health check) |
//! | `GET /metrics` | the server's own counters as Prometheus text, then the demo's: its broadcasters' and the WebSocket connections open on each route (below) |
//! | `GET /bytes/{n}` | `n` bytes of a fixed pattern, from one shared block (no per-request copy) |
//! | `POST /echo` | the request body streamed back as it arrives |
//! | `POST /upload` | the body streamed through SHA-256: `{"bytes": N, "sha256": "…"}` |
//! | `GET /ws/echo` | a WebSocket that sends every text and binary message back ([`websocket`]); over HTTP/2, the extended `CONNECT` of RFC 8441 opens each of the `/ws/…` sockets |
//! | `GET /ws/live` | a WebSocket: the `/events` counters and the array's totals pushed once a second, commands from the page ([`websocket`]) |
//! | `GET /ws/broadcast` | a WebSocket: every text and binary message a client sends goes to every client connected, through one [`ringstream::ws::Broadcaster`] ([`websocket`]) |
//!
//! Every `GET` endpoint but the WebSockets answers `HEAD` too (RFC 9110
//! §9.3.2); a `GET` of a WebSocket that is no handshake gets the
//! handshake's refusal (`426 Upgrade Required` with `Upgrade: websocket`
//! and `Sec-WebSocket-Version: 13` when it does not ask for an upgrade).
//! The other methods get what RFC 9110 asks for:
//!
//! | request | answer |
//! |---|---|
//! | `OPTIONS` on an endpoint | `204`, `Allow: GET, HEAD, OPTIONS` (`POST, OPTIONS` for `/echo` and `/upload`, `GET, OPTIONS` for `/ws/…`) |
//! | `OPTIONS *` | `204`, `Allow: GET, HEAD, POST, OPTIONS` (the server as a whole) |
//! | another method of RFC 9110 on an endpoint (`PUT /`, `GET /echo`, `HEAD /ws/live`, `TRACE /`, …) | `405`, with the endpoint's `Allow` |
//! | `CONNECT host:port` | `405`, with the server's `Allow` (the demo is no proxy) |
//! | a method RFC 9110 does not define (`FOO`, or `get`: methods are case-sensitive) | `501`, on any path |
//! | any other path | `404` |
//!
//! # The demo's counters in `/metrics`
//!
//! After the server's counters, `/metrics` reports, by route:
//!
//! | family | type | what |
//! |---|---|---|
//! | `ringstream_ws_broadcast_subscribers{route="/ws/broadcast"}` | gauge | clients subscribed to the broadcaster now |
//! | `ringstream_ws_broadcast_sent_total{route="/ws/broadcast"}` | counter | messages broadcast (each encoded once for every client) |
//! | `ringstream_ws_broadcast_dropped_total{route="/ws/broadcast"}` | counter | messages clients skipped because they fell more than the broadcaster's history behind, summed over clients (drop-oldest; a client still behind counts what it has missed so far) |
//! | `ringstream_ws_broadcast_lag_closed_total{route="/ws/broadcast"}` | counter | clients closed for falling behind (under the close policy; `/ws/broadcast` drops the oldest, so 0) |
//! | `ringstream_sse_broadcast_subscribers{route="/events"}`, `…_sent_total`, `…_dropped_total`, `…_lag_closed_total` | as above | the same for the `/events` broadcaster |
//! | `ringstream_ws_connections_open{route="/ws/echo"}` (`/ws/live`, `/ws/broadcast`) | gauge | WebSocket connections open now on each route |
//!
//! `/ws/live` has no broadcaster: each connection pushes at its own pace.
//!
//! # Examples
//!
//! ```
//! use std::sync::Arc;
//! use ringstream_cli::app::App;
//! use ringstream::server::{Drain, Metrics};
//!
//! let app = App::new(Arc::new(Metrics::default()));
//! let page = app.livedata_text(0);
//! assert!(page.len() > 30_000);
//! assert!(page.starts_with("{\"site\""));
//! ```

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http::{header, HeaderValue, Method, Request, Response, StatusCode};
use http_body::{Body, Frame, SizeHint};
use sha2::{Digest, Sha256};
use tower_service::Service;

use ringstream::fs::{FileBody, ServeDir};
use ringstream::server::{Drain, Metrics};
use ringstream::sse::{last_event_id, Broadcaster, EventStream};
use ringstream::BoxError;
use ringstream::{Incoming, ResponseStream};

mod livedata;
mod prometheus;
mod routes;
use livedata::write_livedata;
pub use livedata::LiveTotals;
use routes::{refuse, Route};
use websocket::WebSockets;

pub mod dashboard;
pub mod websocket;

/// Largest `/bytes/{n}`: 1 GiB.
pub const MAX_BYTES: u64 = 1 << 30;

/// Size of the shared pattern block `/bytes/{n}` is served from, in bytes.
const PATTERN_BLOCK: usize = 64 * 1024;

/// Number of simulated inverters in `/api/livedata`.
const INVERTERS: usize = 90;

/// The demo application: a cheap-to-clone [`Service`] (one reference
/// count, whatever it serves).
#[derive(Clone, Debug)]
pub struct App {
    inner: Arc<Inner>,
}

/// What every clone of an [`App`] shares.
#[derive(Clone, Debug)]
struct Inner {
    metrics: Arc<Metrics>,
    /// Size of the last `/api/livedata` page, the next page's size hint.
    last_page: Arc<AtomicUsize>,
    /// A fixed clock for the simulation (tests, benchmarks), in unix seconds.
    fixed_time: Option<u64>,
    /// The `/events` stream.
    events: Broadcaster,
    /// The WebSockets' broadcaster and connection counts.
    websockets: Arc<WebSockets>,
    /// Files under `/static/`, if a root was given.
    static_dir: Option<ServeDir>,
    /// The server's drain, which `/readyz` reports.
    drain: Drain,
}

impl App {
    /// An app that reports `metrics` at `/metrics`.
    pub fn new(metrics: Arc<Metrics>) -> App {
        App {
            inner: Arc::new(Inner {
                metrics,
                last_page: Arc::new(AtomicUsize::new(0)),
                fixed_time: None,
                events: dashboard::events(),
                websockets: Arc::new(WebSockets::new()),
                static_dir: None,
                drain: Drain::new(),
            }),
        }
    }

    /// Serve the files under `root` at `/static/`.
    #[must_use]
    pub fn with_static_root(mut self, root: impl Into<std::path::PathBuf>) -> App {
        Arc::make_mut(&mut self.inner).static_dir =
            Some(ServeDir::new(root).strip_prefix("/static"));
        self
    }

    /// `/readyz` reports `drain`: `503` once it has started.
    pub fn with_drain(mut self, drain: Drain) -> App {
        Arc::make_mut(&mut self.inner).drain = drain;
        self
    }

    /// The broadcaster of `/events`: close it to end every dashboard stream
    /// (as graceful shutdown does).
    pub fn events(&self) -> &Broadcaster {
        &self.inner.events
    }

    /// The demo's WebSockets: the broadcaster of `/ws/broadcast` and the
    /// connections open on each route.
    pub fn websockets(&self) -> &WebSockets {
        &self.inner.websockets
    }

    /// Start sending the server's counters to `/events` once a second, until
    /// [`events`](Self::events) is closed. Needs a tokio runtime.
    pub fn spawn_ticker(&self) -> tokio::task::JoinHandle<()> {
        dashboard::spawn_ticker(
            self.inner.events.clone(),
            self.inner.metrics.clone(),
            std::time::Duration::from_secs(1),
        )
    }

    /// Freeze the simulation's clock at `unix_secs` (`None`: the real
    /// clock), so that every `/api/livedata` page is the same.
    #[must_use]
    pub fn with_fixed_time(mut self, unix_secs: Option<u64>) -> App {
        Arc::make_mut(&mut self.inner).fixed_time = unix_secs;
        self
    }

    fn now(&self) -> u64 {
        self.inner.fixed_time.unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        })
    }

    /// Handle one request.
    pub async fn handle(&self, req: Request<Incoming>) -> Response<AppBody> {
        match self.route(req) {
            Routed::Now(response) => response,
            Routed::Later(req) => self.respond_later(req).await,
        }
    }

    /// The response, for every route that needs no waiting; the request
    /// back for the others (`/static/`, `/upload`).
    fn route(&self, req: Request<Incoming>) -> Routed {
        let method = req.method();
        let path = req.uri().path();
        // The common case first: a known route asked for a method it serves
        // (only GET, HEAD and POST are served, so the checks below, which
        // that case would pass, are left out of it).
        let route = Route::of(path, self.inner.static_dir.is_some());
        let Some(route) = route.filter(|route| route.serves(method, req.version())) else {
            return Routed::Now(refuse(method, path, route));
        };
        Routed::Now(match route {
            Route::Page => respond(
                StatusCode::OK,
                static_value!("text/html; charset=utf-8"),
                AppBody::Full(Some(Bytes::from_static(dashboard::PAGE.as_bytes()))),
            ),
            Route::Events => {
                let stream = self.inner.events.subscribe(last_event_id(req.headers()));
                stream.into_http_response().map(AppBody::Events)
            }
            Route::Livedata => self.livedata(),
            Route::Metrics => self.metrics_page(),
            Route::Healthz => text(StatusCode::OK, "ok\n"),
            Route::Readyz if self.inner.drain.is_draining() => {
                text(StatusCode::SERVICE_UNAVAILABLE, "draining\n")
            }
            Route::Readyz => text(StatusCode::OK, "ready\n"),
            Route::Bytes => bytes_page(req),
            Route::Echo => echo(req),
            Route::WsEcho => websocket::echo(req, &self.inner.websockets),
            Route::WsLive => websocket::live(req, self.clone()),
            Route::WsBroadcast => websocket::broadcast(req, &self.inner.websockets),
            Route::Static | Route::Upload => return Routed::Later(req),
        })
    }

    /// The routes that wait: for files, or for the whole request body.
    async fn respond_later(&self, req: Request<Incoming>) -> Response<AppBody> {
        if req.uri().path().starts_with("/static/") {
            if let Some(mut dir) = self.inner.static_dir.clone() {
                return match dir.call(req).await {
                    Ok(response) => response.map(AppBody::File),
                    Err(never) => match never {},
                };
            }
        }
        if req.method() == Method::POST && req.uri().path() == "/upload" {
            return upload(req).await;
        }
        text(StatusCode::NOT_FOUND, "not found\n")
    }

    /// Print the `/api/livedata` JSON for the installation now (or at the
    /// fixed time) into `out`, line by line.
    ///
    /// # Errors
    ///
    /// Only what `out` returns.
    pub fn write_livedata<W: std::fmt::Write>(&self, out: &mut W) -> std::fmt::Result {
        write_livedata(out, self.now())
    }

    /// The `/api/livedata` JSON for the installation at `unix_secs`.
    pub fn livedata_text(&self, unix_secs: u64) -> String {
        let mut out = String::with_capacity(48 * 1024);
        write_livedata(&mut out, unix_secs).unwrap_or_default();
        out
    }

    fn livedata(&self) -> Response<AppBody> {
        let hint = self.inner.last_page.load(Relaxed);
        let mut body = if hint == 0 {
            ResponseStream::buffered()
        } else {
            ResponseStream::with_capacity(hint + hint / 8)
        };
        if write_livedata(&mut body, self.now()).is_err() {
            return text(StatusCode::INTERNAL_SERVER_ERROR, "livedata failed\n");
        }
        if let Some(len) = body.size_hint().exact() {
            self.inner.last_page.store(len as usize, Relaxed);
        }
        respond(
            StatusCode::OK,
            static_value!("application/json"),
            AppBody::Stream(body),
        )
    }

    fn metrics_page(&self) -> Response<AppBody> {
        let mut body = ResponseStream::buffered();
        if self.write_metrics(&mut body).is_err() {
            return text(StatusCode::INTERNAL_SERVER_ERROR, "metrics failed\n");
        }
        respond(
            StatusCode::OK,
            static_value!("text/plain; version=0.0.4"),
            AppBody::Stream(body),
        )
    }

    /// The `/metrics` page: the server's counters, then the demo's.
    ///
    /// # Errors
    ///
    /// Only what `out` returns.
    pub fn write_metrics<W: std::fmt::Write>(&self, out: &mut W) -> std::fmt::Result {
        self.inner.metrics.write_prometheus(out)?;
        prometheus::write_broadcasters(
            out,
            "ringstream_sse_broadcast",
            "server-sent events",
            &[(
                "/events",
                prometheus::BroadcastCounters::of_sse(&self.inner.events),
            )],
        )?;
        self.inner.websockets.write_prometheus(out)
    }
}

impl Service<Request<Incoming>> for App {
    type Response = Response<AppBody>;
    type Error = Infallible;
    type Future = AppFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<Incoming>) -> Self::Future {
        match self.route(req) {
            Routed::Now(response) => AppFuture(Answer::Ready(Some(response))),
            Routed::Later(req) => {
                let app = self.clone();
                AppFuture(Answer::Waiting(Box::pin(async move {
                    app.respond_later(req).await
                })))
            }
        }
    }
}

/// Where [`App::route`] sent a request.
enum Routed {
    /// Answered at once.
    Now(Response<AppBody>),
    /// To be answered by [`App::respond_later`].
    Later(Request<Incoming>),
}

/// The future of [`App`]'s [`Service::call`]: ready at once for the routes
/// that need no waiting (no allocation), boxed for the others.
pub struct AppFuture(Answer);

// The ready response is kept inline: answering must not allocate.
#[allow(clippy::large_enum_variant)]
enum Answer {
    Ready(Option<Response<AppBody>>),
    Waiting(Pin<Box<dyn Future<Output = Response<AppBody>> + Send>>),
}

impl Future for AppFuture {
    type Output = Result<Response<AppBody>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.get_mut().0 {
            Answer::Ready(response) => match response.take() {
                Some(response) => Poll::Ready(Ok(response)),
                None => panic!("AppFuture polled after it completed"),
            },
            Answer::Waiting(future) => future.as_mut().poll(cx).map(Ok),
        }
    }
}

impl std::fmt::Debug for AppFuture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match &self.0 {
            Answer::Ready(Some(_)) => "ready",
            Answer::Ready(None) => "done",
            Answer::Waiting(_) => "waiting",
        };
        f.debug_tuple("AppFuture").field(&state).finish()
    }
}

/// A field value made (and checked) when the program is compiled, not
/// every time a response is made.
macro_rules! static_value {
    ($value:literal) => {
        const { header::HeaderValue::from_static($value) }
    };
}
use static_value;

fn respond(status: StatusCode, content_type: HeaderValue, body: AppBody) -> Response<AppBody> {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, content_type);
    response
}

fn text(status: StatusCode, message: &'static str) -> Response<AppBody> {
    respond(
        status,
        static_value!("text/plain; charset=utf-8"),
        AppBody::Full(Some(Bytes::from_static(message.as_bytes()))),
    )
}

/// The shared 64 KiB pattern block that `/bytes/{n}` is served from.
pub fn pattern_block() -> Bytes {
    static BLOCK: OnceLock<Bytes> = OnceLock::new();
    BLOCK
        .get_or_init(|| {
            let line = b"ringstream streams bytes at memory speed with constant memory.\n";
            let data: Vec<u8> = line.iter().copied().cycle().take(PATTERN_BLOCK).collect();
            Bytes::from(data)
        })
        .clone()
}

/// `/bytes/{n}`. The request's field map, emptied, carries the
/// response's field: the server hands every request a map it recycled, so
/// the page allocates nothing.
fn bytes_page(req: Request<Incoming>) -> Response<AppBody> {
    let (parts, _) = req.into_parts();
    let digits = &parts.uri.path()["/bytes/".len()..];
    let n = match digits.parse::<u64>() {
        Ok(n) if !digits.starts_with('+') && n <= MAX_BYTES => n,
        Ok(_) => return text(StatusCode::BAD_REQUEST, "at most 1073741824 bytes\n"),
        Err(_) => return text(StatusCode::BAD_REQUEST, "expected /bytes/{n}\n"),
    };
    let mut headers = parts.headers;
    headers.clear();
    headers.insert(
        header::CONTENT_TYPE,
        static_value!("application/octet-stream"),
    );
    let mut response = Response::new(AppBody::Pattern {
        block: pattern_block(),
        remaining: n,
    });
    *response.headers_mut() = headers;
    response
}

fn echo(req: Request<Incoming>) -> Response<AppBody> {
    let content_type = req.headers().get(header::CONTENT_TYPE).cloned();
    let mut response = Response::new(AppBody::Echo(req.into_body()));
    if let Some(ct) = content_type {
        response.headers_mut().insert(header::CONTENT_TYPE, ct);
    }
    response
}

async fn upload(req: Request<Incoming>) -> Response<AppBody> {
    let mut body = req.into_body();
    let mut hasher = Sha256::new();
    let mut total = 0u64;
    loop {
        match body.read_partial(usize::MAX).await {
            Ok(Some(chunk)) => {
                total += chunk.len() as u64;
                hasher.update(&chunk);
            }
            Ok(None) => break,
            Err(e) => {
                tracing::debug!(error = %e, "upload failed");
                return text(StatusCode::BAD_REQUEST, "upload failed\n");
            }
        }
    }
    let digest = hex::encode(hasher.finalize());
    let json = format!("{{\"bytes\":{total},\"sha256\":\"{digest}\"}}\n");
    respond(
        StatusCode::OK,
        static_value!("application/json"),
        AppBody::Full(Some(Bytes::from(json))),
    )
}

/// The response bodies of [`App`].
#[derive(Debug)]
pub enum AppBody {
    /// A body printed into a [`ResponseStream`].
    Stream(ResponseStream),
    /// `remaining` bytes of the shared pattern block.
    Pattern {
        /// The shared block; frames are slices of it.
        block: Bytes,
        /// Bytes still to send.
        remaining: u64,
    },
    /// The request body, streamed back.
    Echo(Incoming),
    /// A complete body in one piece.
    Full(Option<Bytes>),
    /// Server-sent events.
    Events(EventStream),
    /// A file streamed from disk.
    File(FileBody),
}

impl Body for AppBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match self.get_mut() {
            AppBody::Stream(body) => Pin::new(body).poll_frame(cx).map_err(Into::into),
            AppBody::Echo(body) => Pin::new(body).poll_frame(cx).map_err(Into::into),
            AppBody::Events(body) => Pin::new(body).poll_frame(cx).map_err(Into::into),
            AppBody::File(body) => Pin::new(body).poll_frame(cx).map_err(Into::into),
            AppBody::Full(data) => Poll::Ready(data.take().map(|d| Ok(Frame::data(d)))),
            AppBody::Pattern { block, remaining } => {
                if *remaining == 0 {
                    return Poll::Ready(None);
                }
                let n = (*remaining).min(block.len() as u64) as usize;
                *remaining -= n as u64;
                Poll::Ready(Some(Ok(Frame::data(block.slice(..n)))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            AppBody::Stream(body) => body.is_end_stream(),
            AppBody::Echo(body) => body.is_end_stream(),
            AppBody::Events(body) => body.is_end_stream(),
            AppBody::File(body) => body.is_end_stream(),
            AppBody::Full(data) => data.is_none(),
            AppBody::Pattern { remaining, .. } => *remaining == 0,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            AppBody::Stream(body) => body.size_hint(),
            AppBody::Echo(body) => body.size_hint(),
            AppBody::Events(body) => body.size_hint(),
            AppBody::File(body) => body.size_hint(),
            AppBody::Full(data) => {
                SizeHint::with_exact(data.as_ref().map_or(0, |d| d.len() as u64))
            }
            AppBody::Pattern { remaining, .. } => SizeHint::with_exact(*remaining),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::routes::{is_standard, ALLOW_SERVER};
    use super::*;

    /// Every path of the route table, with and without a static root.
    #[test]
    fn route_table_knows_every_path() {
        for static_root in [false, true] {
            assert_eq!(Route::of("/", static_root), Some(Route::Page));
            assert_eq!(Route::of("/events", static_root), Some(Route::Events));
            assert_eq!(
                Route::of("/api/livedata", static_root),
                Some(Route::Livedata)
            );
            assert_eq!(Route::of("/metrics", static_root), Some(Route::Metrics));
            assert_eq!(Route::of("/bytes/40960", static_root), Some(Route::Bytes));
            assert_eq!(Route::of("/bytes/x", static_root), Some(Route::Bytes));
            assert_eq!(Route::of("/echo", static_root), Some(Route::Echo));
            assert_eq!(Route::of("/upload", static_root), Some(Route::Upload));
            assert_eq!(Route::of("/ws/echo", static_root), Some(Route::WsEcho));
            assert_eq!(Route::of("/ws/live", static_root), Some(Route::WsLive));
            assert_eq!(
                Route::of("/ws/broadcast", static_root),
                Some(Route::WsBroadcast)
            );
            for unknown in [
                "",
                "*",
                "/nope",
                "/bytes",
                "/echo/",
                "/metrics/x",
                "/Events",
                "/ws",
                "/ws/",
                "/ws/echo/",
                "/ws/broadcast/",
            ] {
                assert_eq!(Route::of(unknown, static_root), None, "{unknown}");
            }
        }
        assert_eq!(Route::of("/static/a.txt", false), None);
        assert_eq!(Route::of("/static/a.txt", true), Some(Route::Static));
    }

    /// RFC 9110 §15.5.6 and §9.3.2: `GET` routes allow `HEAD` (but the
    /// WebSockets, whose handshake is a `GET`), `POST` routes only `POST`,
    /// every route `OPTIONS`; and what a route serves is exactly what its
    /// `Allow` lists (less `OPTIONS`).
    #[test]
    fn allow_lists_what_each_route_serves() {
        let routes = [
            Route::Page,
            Route::Events,
            Route::Static,
            Route::Livedata,
            Route::Metrics,
            Route::Healthz,
            Route::Readyz,
            Route::Bytes,
            Route::Echo,
            Route::Upload,
            Route::WsEcho,
            Route::WsLive,
            Route::WsBroadcast,
        ];
        let methods = [
            Method::GET,
            Method::HEAD,
            Method::POST,
            Method::PUT,
            Method::DELETE,
            Method::CONNECT,
            Method::OPTIONS,
            Method::TRACE,
            Method::PATCH,
        ];
        for route in routes {
            let allow = route.allow();
            let expected = match route {
                Route::Echo | Route::Upload => "POST, OPTIONS",
                Route::WsEcho | Route::WsLive | Route::WsBroadcast => "GET, OPTIONS",
                _ => "GET, HEAD, OPTIONS",
            };
            assert_eq!(allow, expected, "{route:?}");
            for method in &methods {
                let listed = allow.split(", ").any(|m| m == method.as_str());
                // Over HTTP/1.1, as `Allow` describes the resource; HTTP/2's
                // extended CONNECT is checked below.
                let served =
                    route.serves(method, http::Version::HTTP_11) || *method == Method::OPTIONS;
                assert_eq!(listed, served, "{route:?} {method}");
                // The server's `Allow` is the union of the routes'.
                if listed {
                    assert!(
                        ALLOW_SERVER.split(", ").any(|m| m == method.as_str()),
                        "{method}"
                    );
                }
            }
        }
        assert_eq!(ALLOW_SERVER, "GET, HEAD, POST, OPTIONS");
        // HTTP/2's extended CONNECT opens the WebSockets, and nothing else.
        for route in routes {
            let websocket = matches!(route, Route::WsEcho | Route::WsLive | Route::WsBroadcast);
            assert_eq!(
                route.serves(&Method::CONNECT, http::Version::HTTP_2),
                websocket
            );
            assert!(!route.serves(&Method::CONNECT, http::Version::HTTP_11));
        }
    }

    /// `LiveTotals` are the `total` of `/api/livedata` at the same moment.
    #[test]
    fn live_totals_match_the_livedata_page() {
        let app = App::new(Arc::new(Metrics::default()));
        for t in [0, 1_750_000_000, 1_750_040_000, 1_750_043_210] {
            let page = app.livedata_text(t);
            let total = &page[page.rfind("\"total\":").unwrap() + "\"total\":".len()..];
            let totals = LiveTotals::at(t);
            let json = totals.to_json();
            let expected = format!(
                "{{\"power\":{:.1},\"yield_day\":{:.3},\"inverters\":90}}",
                totals.power, totals.yield_day
            );
            assert!(total.starts_with(&expected), "{total} vs {expected}");
            assert!(json.starts_with(&format!("{{\"timestamp\":{t},")), "{json}");
            assert!(json.ends_with(&expected[1..]), "{json} vs {expected}");
        }
    }

    /// RFC 9110 §9.1: the standard methods are known, names are
    /// case-sensitive, and extension methods are not.
    #[test]
    fn a_bytes_page_carries_none_of_the_request_fields() {
        let app = App::new(Arc::new(Metrics::default()));
        let req = Request::get("/bytes/5")
            .header(header::HOST, "x")
            .header(header::COOKIE, "secret=1")
            .header(header::CONTENT_TYPE, "text/plain")
            .body(Incoming::empty())
            .unwrap();
        let Routed::Now(response) = app.route(req) else {
            panic!("/bytes/5 waits");
        };
        assert_eq!(response.status(), StatusCode::OK);
        let fields: Vec<_> = response.headers().iter().collect();
        assert_eq!(
            fields,
            [(
                &header::CONTENT_TYPE,
                &HeaderValue::from_static("application/octet-stream")
            )]
        );
        assert_eq!(response.body().size_hint().exact(), Some(5));
    }

    #[test]
    fn standard_methods_are_case_sensitive() {
        for name in [
            "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
        ] {
            let method = Method::from_bytes(name.as_bytes()).unwrap();
            assert!(is_standard(&method), "{name}");
        }
        for name in ["get", "Get", "FOO", "PROPFIND", "GETS", "options"] {
            let method = Method::from_bytes(name.as_bytes()).unwrap();
            assert!(!is_standard(&method), "{name}");
        }
    }
}
