//! axum's own examples, copied as an axum user has them, served on
//! ringstream. What differs from axum's text is said at the top of each
//! module; in every one the serve line is
//! `ringstream::server::serve(listener, app)` instead of
//! `axum::serve(listener, app)`, and `main` takes its listener (bound to a
//! free loopback port by the test) instead of binding port 3000, and sets
//! no global tracing subscriber.
//!
//! The WebSocket examples (echo and chat) are in `ws_examples.rs`.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// axum's README example: a handler of a static string and a JSON handler.
/// Its `use` lines are unchanged.
mod readme {
    use axum::{
        http::StatusCode,
        routing::{get, post},
        Json, Router,
    };
    use serde::{Deserialize, Serialize};

    pub async fn main(listener: tokio::net::TcpListener) {
        // build our application with a route
        let app = Router::new()
            // `GET /` goes to `root`
            .route("/", get(root))
            // `POST /users` goes to `create_user`
            .route("/users", post(create_user));

        ringstream::server::serve(listener, app).await.unwrap();
    }

    // basic handler that responds with a static string
    async fn root() -> &'static str {
        "Hello, World!"
    }

    async fn create_user(
        // this argument tells axum to parse the request body
        // as JSON into a `CreateUser` type
        Json(payload): Json<CreateUser>,
    ) -> (StatusCode, Json<User>) {
        // insert your application logic here
        let user = User {
            id: 1337,
            username: payload.username,
        };

        // this will be converted into a JSON response
        // with a status code of `201 Created`
        (StatusCode::CREATED, Json(user))
    }

    // the input to our `create_user` handler
    #[derive(Deserialize)]
    struct CreateUser {
        username: String,
    }

    // the output to our `create_user` handler
    #[derive(Serialize)]
    struct User {
        id: u64,
        username: String,
    }
}

/// axum's `examples/sse`. Left out: the `TypedHeader<UserAgent>` argument
/// of the handler and its `println!` (they need `axum-extra`, which this
/// workspace does not depend on).
mod sse {
    use axum::{
        response::sse::{Event, Sse},
        routing::get,
        Router,
    };
    use futures_util::stream::{self, Stream};
    use std::{convert::Infallible, path::PathBuf, time::Duration};
    use tokio_stream::StreamExt as _;
    use tower_http::{services::ServeDir, trace::TraceLayer};

    pub async fn main(listener: tokio::net::TcpListener) {
        tracing::debug!("listening on {}", listener.local_addr().unwrap());
        ringstream::server::serve(listener, app()).await.unwrap();
    }

    fn app() -> Router {
        let assets_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets");
        let static_files_service = ServeDir::new(assets_dir).append_index_html_on_directories(true);
        // build our application with a route
        Router::new()
            .fallback_service(static_files_service)
            .route("/sse", get(sse_handler))
            .layer(TraceLayer::new_for_http())
    }

    async fn sse_handler() -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
        // A `Stream` that repeats an event every second
        //
        // You can also create streams from tokio channels using the wrappers in
        // https://docs.rs/tokio-stream
        let stream = stream::repeat_with(|| Event::default().data("hi!"))
            .map(Ok)
            .throttle(Duration::from_secs(1));

        Sse::new(stream).keep_alive(
            axum::response::sse::KeepAlive::new()
                .interval(Duration::from_secs(1))
                .text("keep-alive-text"),
        )
    }
}

/// axum's `examples/static-file-server`, its `ServeDir` forms. The one
/// other difference: the `assets` directory is this crate's
/// `tests/assets`, named from the manifest directory.
mod static_file_server {
    use axum::{routing::get, Router};
    use tower_http::{
        services::{ServeDir, ServeFile},
        trace::TraceLayer,
    };

    const ASSETS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/assets");

    pub fn using_serve_dir() -> Router {
        // serve the file in the "assets" directory under `/assets`
        Router::new().nest_service("/assets", ServeDir::new(ASSETS))
    }

    pub fn using_serve_dir_with_assets_fallback() -> Router {
        // `ServeDir` allows setting a fallback if an asset is not found
        // so with this `GET /assets/doesnt-exist.jpg` will return `index.html`
        // rather than a 404
        let serve_dir =
            ServeDir::new(ASSETS).not_found_service(ServeFile::new(format!("{ASSETS}/index.html")));

        Router::new()
            .route("/foo", get(|| async { "Hi from /foo" }))
            .nest_service("/assets", serve_dir.clone())
            .fallback_service(serve_dir)
    }

    pub async fn serve(app: Router, listener: tokio::net::TcpListener) {
        tracing::debug!("listening on {}", listener.local_addr().unwrap());
        ringstream::server::serve(listener, app.layer(TraceLayer::new_for_http()))
            .await
            .unwrap();
    }
}

/// The example of axum's `ConnectInfo` documentation.
mod connect_info {
    use axum::{extract::ConnectInfo, routing::get, Router};
    use std::net::SocketAddr;

    pub async fn main(listener: tokio::net::TcpListener) {
        let app = Router::new().route("/", get(handler));

        async fn handler(ConnectInfo(addr): ConnectInfo<SocketAddr>) -> String {
            format!("Hello {addr}")
        }

        ringstream::server::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
        .unwrap();
    }
}

/// A loopback listener on a free port, and its address.
async fn listener() -> (TcpListener, SocketAddr) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    (listener, addr)
}

/// A whole response to a `Connection: close` request, read to the close.
struct Answer {
    status: u16,
    head: String,
    body: Vec<u8>,
}

impl Answer {
    fn field(&self, name: &str) -> Option<&str> {
        self.head.split("\r\n").skip(1).find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

/// Sends `method path` (with `extra` fields and `body`) and reads the
/// answer; returns the client's own address too.
async fn ask(
    addr: SocketAddr,
    method: &str,
    path: &str,
    extra: &str,
    body: &str,
) -> (SocketAddr, Answer) {
    let mut socket = TcpStream::connect(addr).await.unwrap();
    let me = socket.local_addr().unwrap();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n{extra}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    socket.write_all(request.as_bytes()).await.unwrap();
    let mut wire = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), socket.read_to_end(&mut wire))
        .await
        .expect("an answer within 5 s")
        .unwrap();
    let end = wire
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a whole head");
    let head = String::from_utf8(wire[..end].to_vec()).unwrap();
    let status = head[9..12].parse().unwrap();
    let mut body = wire[end + 4..].to_vec();
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        body = unchunk(&body);
    }
    (me, Answer { status, head, body })
}

/// The data of a whole chunked body.
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

#[tokio::test]
async fn the_readme_example_answers_text_and_json() {
    let (listener, addr) = listener().await;
    tokio::spawn(readme::main(listener));

    let (_, root) = ask(addr, "GET", "/", "", "").await;
    assert_eq!(root.status, 200);
    assert_eq!(root.body, b"Hello, World!");

    let json = "Content-Type: application/json\r\n";
    let (_, created) = ask(addr, "POST", "/users", json, r#"{"username":"ring"}"#).await;
    assert_eq!(created.status, 201, "{}", created.head);
    assert_eq!(created.field("content-type"), Some("application/json"));
    assert_eq!(created.body, br#"{"id":1337,"username":"ring"}"#);

    // axum's own rejections, as axum writes them.
    let (_, refused) = ask(addr, "POST", "/users", json, r#"{"name":1}"#).await;
    assert_eq!(refused.status, 422);
    assert_eq!(
        refused.field("content-type"),
        Some("text/plain; charset=utf-8")
    );
    let (_, untyped) = ask(addr, "POST", "/users", "", r#"{"username":"ring"}"#).await;
    assert_eq!(untyped.status, 415);
}

#[tokio::test]
async fn the_sse_example_streams_events_and_serves_its_fallback() {
    let (listener, addr) = listener().await;
    tokio::spawn(sse::main(listener));

    let mut socket = TcpStream::connect(addr).await.unwrap();
    socket
        .write_all(b"GET /sse HTTP/1.1\r\nHost: t\r\nAccept: text/event-stream\r\n\r\n")
        .await
        .unwrap();
    let mut wire = Vec::new();
    let mut buf = [0u8; 1024];
    let read = tokio::time::timeout(Duration::from_secs(10), async {
        while String::from_utf8_lossy(&wire)
            .matches("data: hi!\n\n")
            .count()
            < 2
        {
            let n = socket.read(&mut buf).await.unwrap();
            assert!(n > 0, "the event stream ended");
            wire.extend_from_slice(&buf[..n]);
        }
    })
    .await;
    let text = String::from_utf8_lossy(&wire).into_owned();
    assert!(read.is_ok(), "two events within 10 s: {text}");
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    let head = text.split("\r\n\r\n").next().unwrap().to_ascii_lowercase();
    assert!(head.contains("content-type: text/event-stream"), "{head}");
    assert!(head.contains("transfer-encoding: chunked"), "{head}");

    // The fallback is a `ServeDir` of a directory that is not there.
    let (_, missing) = ask(addr, "GET", "/nothing.txt", "", "").await;
    assert_eq!(missing.status, 404);
}

#[tokio::test]
async fn the_static_file_server_example_serves_files_ranges_304_and_fallbacks() {
    let index = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/assets/index.html"
    ))
    .unwrap();
    let (plain, plain_addr) = listener().await;
    let (fallback, fallback_addr) = listener().await;
    tokio::spawn(static_file_server::serve(
        static_file_server::using_serve_dir(),
        plain,
    ));
    tokio::spawn(static_file_server::serve(
        static_file_server::using_serve_dir_with_assets_fallback(),
        fallback,
    ));

    let (_, file) = ask(plain_addr, "GET", "/assets/index.html", "", "").await;
    assert_eq!(file.status, 200);
    assert_eq!(file.body, index);
    assert_eq!(file.field("content-type"), Some("text/html"));
    let length = index.len().to_string();
    assert_eq!(file.field("content-length"), Some(length.as_str()));

    let (_, head) = ask(plain_addr, "HEAD", "/assets/index.html", "", "").await;
    assert_eq!(head.status, 200);
    assert_eq!(head.field("content-length"), Some(length.as_str()));
    assert!(head.body.is_empty());

    let since = format!(
        "If-Modified-Since: {}\r\n",
        file.field("last-modified").unwrap()
    );
    let (_, unchanged) = ask(plain_addr, "GET", "/assets/index.html", &since, "").await;
    assert_eq!(unchanged.status, 304);
    assert_eq!(unchanged.field("content-length"), None);
    assert!(unchanged.body.is_empty());

    let (_, range) = ask(
        plain_addr,
        "GET",
        "/assets/index.html",
        "Range: bytes=0-8\r\n",
        "",
    )
    .await;
    assert_eq!(range.status, 206);
    assert_eq!(range.body, &index[..9]);

    let (_, missing) = ask(plain_addr, "GET", "/assets/missing.jpg", "", "").await;
    assert_eq!(missing.status, 404);

    let (_, foo) = ask(fallback_addr, "GET", "/foo", "", "").await;
    assert_eq!(foo.body, b"Hi from /foo");
    for path in ["/assets/doesnt-exist.jpg", "/script.js"] {
        let (_, found) = ask(fallback_addr, "GET", path, "", "").await;
        assert!(!found.body.is_empty(), "{path}: {}", found.head);
    }
    let (_, missing) = ask(fallback_addr, "GET", "/assets/doesnt-exist.jpg", "", "").await;
    assert_eq!(missing.body, index);
}

#[tokio::test]
async fn the_connect_info_example_greets_the_clients_address() {
    let (listener, addr) = listener().await;
    tokio::spawn(connect_info::main(listener));
    for _ in 0..2 {
        let (me, hello) = ask(addr, "GET", "/", "", "").await;
        assert_eq!(hello.status, 200);
        assert_eq!(
            String::from_utf8(hello.body).unwrap(),
            format!("Hello {me}")
        );
    }
}
