//! A realistic axum 0.8 application — state, `Path`, `Query`, `Json`, an
//! error type of its own, `DefaultBodyLimit`, a streamed body, SSE with
//! keep-alive, `ConnectInfo`, tower-http's trace, compression, CORS,
//! timeout and `ServeDir` layers, graceful shutdown — built once and
//! served twice: by `ringstream::server::serve` and by `axum::serve`, the
//! serve line being the only difference. Every request is answered alike
//! on the wire: the same status, the same fields but `date`, the same body.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, DefaultBodyLimit, Path, Query, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::stream::{self, Stream};
use futures_util::StreamExt as _;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tower_http::compression::CompressionLayer;
use tower_http::cors::CorsLayer;
use tower_http::services::ServeDir;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

// ---------------------------------------------------------------------------
// The application, as its author wrote it for axum.
// ---------------------------------------------------------------------------

#[derive(Clone, Default)]
struct AppState {
    items: Arc<Mutex<HashMap<u32, Item>>>,
}

#[derive(Clone, Serialize, Deserialize)]
struct Item {
    name: String,
    price: u32,
}

#[derive(Deserialize)]
struct Page {
    offset: Option<usize>,
    limit: Option<usize>,
}

/// The application's error type.
enum AppError {
    NotFound(u32),
    Invalid(&'static str),
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        match self {
            AppError::NotFound(id) => (
                StatusCode::NOT_FOUND,
                Json(serde_json::json!({ "error": format!("no item {id}") })),
            )
                .into_response(),
            AppError::Invalid(why) => (StatusCode::UNPROCESSABLE_ENTITY, why).into_response(),
        }
    }
}

async fn list_items(State(state): State<AppState>, Query(page): Query<Page>) -> Json<Vec<Item>> {
    let items = state.items.lock().unwrap();
    let mut all: Vec<(u32, Item)> = items.iter().map(|(k, v)| (*k, v.clone())).collect();
    all.sort_by_key(|(k, _)| *k);
    Json(
        all.into_iter()
            .map(|(_, v)| v)
            .skip(page.offset.unwrap_or(0))
            .take(page.limit.unwrap_or(10))
            .collect(),
    )
}

async fn get_item(
    State(state): State<AppState>,
    Path(id): Path<u32>,
) -> Result<Json<Item>, AppError> {
    let items = state.items.lock().unwrap();
    items
        .get(&id)
        .cloned()
        .map(Json)
        .ok_or(AppError::NotFound(id))
}

async fn put_item(
    State(state): State<AppState>,
    Path(id): Path<u32>,
    Json(item): Json<Item>,
) -> Result<(StatusCode, Json<Item>), AppError> {
    if item.name.is_empty() {
        return Err(AppError::Invalid("an item needs a name\n"));
    }
    state.items.lock().unwrap().insert(id, item.clone());
    Ok((StatusCode::CREATED, Json(item)))
}

async fn upload(body: Bytes) -> String {
    format!("{} bytes\n", body.len())
}

async fn numbers() -> Body {
    let lines = (0..100).map(|i| Ok::<_, Infallible>(format!("line {i}\n")));
    Body::from_stream(stream::iter(lines))
}

async fn events() -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let events =
        stream::iter(1..=3).map(|n| Ok(Event::default().event("tick").data(n.to_string())));
    Sse::new(events.chain(stream::pending())).keep_alive(KeepAlive::default())
}

async fn whoami(ConnectInfo(addr): ConnectInfo<SocketAddr>) -> String {
    format!("{}\n", addr.ip())
}

async fn slow() -> &'static str {
    tokio::time::sleep(Duration::from_secs(5)).await;
    "too late\n"
}

async fn big() -> String {
    "ringstream ".repeat(1000)
}

fn app(assets: &std::path::Path) -> Router {
    Router::new()
        .route("/items", get(list_items))
        .route("/items/{id}", get(get_item).put(put_item))
        .route("/upload", post(upload).layer(DefaultBodyLimit::max(1024)))
        .route("/numbers", get(numbers))
        .route("/events", get(events))
        .route("/whoami", get(whoami))
        .route("/slow", get(slow))
        .route("/big", get(big))
        .nest_service("/static", ServeDir::new(assets))
        .with_state(AppState::default())
        .layer(TraceLayer::new_for_http())
        .layer(CompressionLayer::new())
        .layer(CorsLayer::permissive())
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            Duration::from_millis(300),
        ))
}

// ---------------------------------------------------------------------------
// The two servers and a client.
// ---------------------------------------------------------------------------

/// One answer, read off the wire to the close: status line, fields
/// lowercased and sorted but `date`, and the body with chunked coding
/// removed.
#[derive(Debug, PartialEq, Eq)]
struct Answer {
    status: String,
    fields: Vec<(String, String)>,
    body: Vec<u8>,
}

async fn ask(addr: SocketAddr, request: &str) -> Answer {
    let mut socket = TcpStream::connect(addr).await.unwrap();
    socket.write_all(request.as_bytes()).await.unwrap();
    let mut wire = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), socket.read_to_end(&mut wire))
        .await
        .unwrap_or_else(|_| panic!("an answer within 5 s to {request:?}"))
        .unwrap();
    let end = wire
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a whole head");
    let head = String::from_utf8(wire[..end].to_vec()).unwrap();
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap().to_owned();
    let mut fields: Vec<(String, String)> = lines
        .map(|line| {
            let (n, v) = line.split_once(':').unwrap();
            (n.to_ascii_lowercase(), v.trim().to_owned())
        })
        .filter(|(n, _)| n != "date")
        .collect();
    fields.sort();
    let mut body = wire[end + 4..].to_vec();
    if fields
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v == "chunked")
    {
        body = unchunk(&body);
    }
    // Compressed bodies are compared as what they decompress to: where the
    // compressor flushes follows how the body's parts arrive.
    if fields
        .iter()
        .any(|(n, v)| n == "content-encoding" && v == "gzip")
        && !body.is_empty()
    {
        let mut plain = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&body[..]), &mut plain)
            .unwrap();
        body = plain;
    }
    Answer {
        status,
        fields,
        body,
    }
}

fn unchunk(mut wire: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = wire.windows(2).position(|w| w == b"\r\n").unwrap();
        let size =
            usize::from_str_radix(std::str::from_utf8(&wire[..line_end]).unwrap(), 16).unwrap();
        wire = &wire[line_end + 2..];
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&wire[..size]);
        wire = &wire[size + 2..];
    }
}

fn assets() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ringstream-axum-app-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("app.js"),
        "console.log('ringstream');\n".repeat(50),
    )
    .unwrap();
    dir
}

#[tokio::test]
async fn every_route_answers_as_on_axum_serve() {
    let dir = assets();
    let ours_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let theirs_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let ours = ours_listener.local_addr().unwrap();
    let theirs = theirs_listener.local_addr().unwrap();
    // The one line that differs between the two builds of the application.
    tokio::spawn(
        ringstream::server::serve(
            ours_listener,
            app(&dir).into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_config(ringstream::server::Config {
            server_header: false,
            ..Default::default()
        }),
    );
    tokio::spawn(async move {
        axum::serve(
            theirs_listener,
            app(&assets()).into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
    });

    let close = "Connection: close\r\n";
    let json = "Content-Type: application/json\r\n";
    let put = |id: &str, body: &str| {
        format!(
            "PUT /items/{id} HTTP/1.1\r\nHost: t\r\n{close}{json}Content-Length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    let get = |target: &str, extra: &str| {
        format!("GET {target} HTTP/1.1\r\nHost: t\r\n{close}{extra}\r\n")
    };
    let upload = |n: usize| {
        format!(
            "POST /upload HTTP/1.1\r\nHost: t\r\n{close}Content-Length: {n}\r\n\r\n{}",
            "u".repeat(n)
        )
    };
    let requests = [
        put("1", r#"{"name":"ring","price":3}"#),
        put("2", r#"{"name":"stream","price":5}"#),
        put("3", r#"{"name":"","price":5}"#),
        put("x", r#"{"name":"y","price":5}"#),
        put("4", r#"{"name":"y"}"#),
        put("5", "not json"),
        get("/items", ""),
        get("/items?offset=1&limit=1", ""),
        get("/items?limit=many", ""),
        get("/items/1", ""),
        get("/items/9", ""),
        format!("HEAD /items/1 HTTP/1.1\r\nHost: t\r\n{close}\r\n"),
        get("/numbers", ""),
        format!("HEAD /numbers HTTP/1.1\r\nHost: t\r\n{close}\r\n"),
        get("/big", ""),
        get("/big", "Accept-Encoding: gzip\r\n"),
        format!("HEAD /big HTTP/1.1\r\nHost: t\r\n{close}Accept-Encoding: gzip\r\n\r\n"),
        get("/whoami", ""),
        get("/slow", ""),
        get("/static/app.js", ""),
        get("/static/app.js", "Accept-Encoding: gzip\r\n"),
        format!("HEAD /static/app.js HTTP/1.1\r\nHost: t\r\n{close}\r\n"),
        get("/static/app.js", "Range: bytes=0-9\r\n"),
        get("/static/missing.js", ""),
        get("/nowhere", ""),
        upload(1000),
        upload(2000),
        format!(
            "OPTIONS /items HTTP/1.1\r\nHost: t\r\n{close}Origin: https://example.com\r\n\
             Access-Control-Request-Method: PUT\r\n\r\n"
        ),
        get("/items/1", "Origin: https://example.com\r\n"),
        format!("DELETE /items/1 HTTP/1.1\r\nHost: t\r\n{close}\r\n"),
    ];
    // The static file's validators, for its 304.
    let file = ask(theirs, &get("/static/app.js", "")).await;
    let modified = file
        .fields
        .iter()
        .find(|(n, _)| n == "last-modified")
        .map(|(_, v)| v.clone())
        .unwrap();
    let conditional = get(
        "/static/app.js",
        &format!("If-Modified-Since: {modified}\r\n"),
    );

    let mut compared = 0;
    for request in requests.iter().chain([&conditional]) {
        let expected = ask(theirs, request).await;
        let got = ask(ours, request).await;
        // The code; the reason phrases differ where RFC 9110 renamed them
        // (`422 Unprocessable Content`, `413 Content Too Large`).
        assert_eq!(got.status[..12], expected.status[..12], "{request}");
        assert_eq!(got.fields, expected.fields, "{request}");
        assert_eq!(got.body, expected.body, "{request}");
        compared += 1;
    }
    assert_eq!(compared, requests.len() + 1);

    // The SSE route: the same first events, then keep-alive comments.
    for addr in [ours, theirs] {
        let mut socket = TcpStream::connect(addr).await.unwrap();
        socket
            .write_all(b"GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
            .await
            .unwrap();
        let mut wire = Vec::new();
        let mut buf = [0; 1024];
        while !String::from_utf8_lossy(&wire).contains("data: 3\n\n") {
            let n = tokio::time::timeout(Duration::from_secs(5), socket.read(&mut buf))
                .await
                .expect("events within 5 s")
                .unwrap();
            assert!(n > 0);
            wire.extend_from_slice(&buf[..n]);
        }
        let text = String::from_utf8_lossy(&wire);
        assert!(text.contains("event: tick\ndata: 1\n\n"), "{text}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Graceful shutdown as axum's examples write it: an in-flight request
/// finishes, then the server's future completes.
#[tokio::test]
async fn graceful_shutdown_lets_a_request_finish() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let app = Router::new().route(
        "/work",
        get(|| async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            "done\n"
        }),
    );
    let server = tokio::spawn(async move {
        ringstream::server::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await
    });
    let request = tokio::spawn(ask(
        addr,
        "GET /work HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
    ));
    tokio::time::sleep(Duration::from_millis(50)).await;
    stop.send(()).unwrap();
    let answer = request.await.unwrap();
    assert!(answer.status.starts_with("HTTP/1.1 200"), "{answer:?}");
    assert_eq!(answer.body, b"done\n");
    tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .expect("the server stops")
        .unwrap()
        .unwrap();
}
