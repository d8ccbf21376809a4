//! The demo's answers to every method (RFC 9110 §9), over real sockets and
//! written as raw bytes: `405` with `Allow` for a method a path does not
//! serve, `OPTIONS` on a path and on `*`, `501` for a method the server
//! does not recognize, `404` for a path it does not know. The WebSockets
//! answer `GET` only (their handshake; `tests/websocket.rs` has the rest).

use crate::common;

use std::path::PathBuf;

use common::{read_response, start_app, start_with, Parsed, TestServer};
use ringstream::server::Config;
use ringstream_cli::app::App;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// `Allow` of the demo's `GET` routes.
const GET_ROUTE: &str = "GET, HEAD, OPTIONS";
/// `Allow` of the demo's `POST` routes.
const POST_ROUTE: &str = "POST, OPTIONS";
/// `Allow` of the demo's WebSockets.
const WEBSOCKET_ROUTE: &str = "GET, OPTIONS";
/// `Allow` of the demo as a whole.
const SERVER: &str = "GET, HEAD, POST, OPTIONS";

/// Send each request on one connection and read its response (`HEAD`
/// responses without a body), checking that the connection stays open.
async fn exchange(server: &TestServer, requests: &[&[u8]]) -> Vec<Parsed> {
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let mut buf = Vec::new();
    let mut responses = Vec::new();
    for &request in requests {
        socket.write_all(request).await.unwrap();
        let response = read_response(&mut socket, &mut buf, request.starts_with(b"HEAD ")).await;
        assert!(
            !response.closes(),
            "{}: {response:?}",
            String::from_utf8_lossy(request)
        );
        responses.push(response);
    }
    assert!(buf.is_empty(), "bytes after the last response: {buf:?}");
    responses
}

/// Check `status` and `allow` (`None`: no `Allow` field) of the response
/// to each request.
async fn expect(server: &TestServer, cases: &[(&[u8], u16, Option<&str>)]) {
    let requests: Vec<&[u8]> = cases.iter().map(|&(request, ..)| request).collect();
    let responses = exchange(server, &requests).await;
    for (&(request, status, allow), response) in cases.iter().zip(responses) {
        let request = String::from_utf8_lossy(request);
        assert_eq!(response.status, status, "{request}: {response:?}");
        assert_eq!(response.header("allow"), allow, "{request}: {response:?}");
    }
}

/// A directory with one file, for `/static/`.
fn static_root(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("ringstream-methods-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.txt"), b"static\n").unwrap();
    dir
}

/// RFC 9110 §15.5.6: a method the target resource does not support gets
/// `405` and an `Allow` listing the methods it does, on every route.
#[tokio::test]
async fn wrong_method_on_a_known_path_is_405_with_allow() {
    let server = start_app(Config::default()).await;
    expect(
        &server,
        &[
            (
                b"PUT / HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nhi",
                405,
                Some(GET_ROUTE),
            ),
            (
                b"POST /events HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n",
                405,
                Some(GET_ROUTE),
            ),
            (
                b"DELETE /api/livedata HTTP/1.1\r\nHost: t\r\n\r\n",
                405,
                Some(GET_ROUTE),
            ),
            (
                b"PATCH /metrics HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\n\r\nx",
                405,
                Some(GET_ROUTE),
            ),
            (
                b"POST /bytes/10 HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n",
                405,
                Some(GET_ROUTE),
            ),
            // A bad `n` is still the `/bytes/{n}` route.
            (
                b"PUT /bytes/x HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n",
                405,
                Some(GET_ROUTE),
            ),
            (
                b"GET /echo HTTP/1.1\r\nHost: t\r\n\r\n",
                405,
                Some(POST_ROUTE),
            ),
            (
                b"HEAD /echo HTTP/1.1\r\nHost: t\r\n\r\n",
                405,
                Some(POST_ROUTE),
            ),
            (
                b"PUT /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc",
                405,
                Some(POST_ROUTE),
            ),
            (
                b"GET /upload HTTP/1.1\r\nHost: t\r\n\r\n",
                405,
                Some(POST_ROUTE),
            ),
            // The connection still serves the routes afterwards.
            (b"GET /bytes/3 HTTP/1.1\r\nHost: t\r\n\r\n", 200, None),
        ],
    )
    .await;
}

/// RFC 9110 §9.3.7: `OPTIONS` on a path answers `204` with the path's
/// `Allow`, and no body.
#[tokio::test]
async fn options_on_a_path_lists_its_methods() {
    let server = start_app(Config::default()).await;
    let cases: &[(&[u8], u16, Option<&str>)] = &[
        (
            b"OPTIONS / HTTP/1.1\r\nHost: t\r\n\r\n",
            204,
            Some(GET_ROUTE),
        ),
        (
            b"OPTIONS /events HTTP/1.1\r\nHost: t\r\n\r\n",
            204,
            Some(GET_ROUTE),
        ),
        (
            b"OPTIONS /api/livedata HTTP/1.1\r\nHost: t\r\n\r\n",
            204,
            Some(GET_ROUTE),
        ),
        (
            b"OPTIONS /metrics HTTP/1.1\r\nHost: t\r\n\r\n",
            204,
            Some(GET_ROUTE),
        ),
        (
            b"OPTIONS /bytes/40960 HTTP/1.1\r\nHost: t\r\n\r\n",
            204,
            Some(GET_ROUTE),
        ),
        (
            b"OPTIONS /echo HTTP/1.1\r\nHost: t\r\n\r\n",
            204,
            Some(POST_ROUTE),
        ),
        (
            b"OPTIONS /upload HTTP/1.1\r\nHost: t\r\n\r\n",
            204,
            Some(POST_ROUTE),
        ),
        (
            b"OPTIONS /api/livedata?x=1 HTTP/1.1\r\nHost: t\r\n\r\n",
            204,
            Some(GET_ROUTE),
        ),
    ];
    expect(&server, cases).await;
    let requests: Vec<&[u8]> = cases.iter().map(|&(request, ..)| request).collect();
    for response in exchange(&server, &requests).await {
        // RFC 9110 §8.6: a 204 carries no Content-Length.
        assert_eq!(response.header("content-length"), None, "{response:?}");
        assert_eq!(response.header("transfer-encoding"), None, "{response:?}");
        assert!(response.body.is_empty());
    }
}

/// RFC 9110 §9.3.7: `OPTIONS *` is about the server as a whole: `204`
/// with the union of every route's methods.
#[tokio::test]
async fn options_asterisk_lists_the_servers_methods() {
    let server = start_app(Config::default()).await;
    expect(
        &server,
        &[
            (b"OPTIONS * HTTP/1.1\r\nHost: t\r\n\r\n", 204, Some(SERVER)),
            (b"GET /bytes/1 HTTP/1.1\r\nHost: t\r\n\r\n", 200, None),
        ],
    )
    .await;
}

/// RFC 9110 §9.3.8: TRACE is a method the server knows and the demo does
/// not serve: `405` with the path's `Allow` (the request is not echoed).
#[tokio::test]
async fn trace_is_405_with_allow() {
    let server = start_app(Config::default()).await;
    expect(
        &server,
        &[
            (b"TRACE / HTTP/1.1\r\nHost: t\r\n\r\n", 405, Some(GET_ROUTE)),
            (
                b"TRACE /echo HTTP/1.1\r\nHost: t\r\n\r\n",
                405,
                Some(POST_ROUTE),
            ),
            (b"TRACE /nope HTTP/1.1\r\nHost: t\r\n\r\n", 404, None),
        ],
    )
    .await;
    let responses = exchange(
        &server,
        &[b"TRACE / HTTP/1.1\r\nHost: t\r\nX-Secret: s\r\n\r\n"],
    )
    .await;
    let body = String::from_utf8_lossy(&responses[0].body);
    assert!(!body.contains("X-Secret"), "{body}");
}

/// RFC 9110 §9.1 and §15.6.2: method names are case-sensitive, so `get`
/// is a method the server does not recognize: `501`.
#[tokio::test]
async fn lowercase_get_is_501() {
    let server = start_app(Config::default()).await;
    expect(
        &server,
        &[
            (b"get / HTTP/1.1\r\nHost: t\r\n\r\n", 501, None),
            (b"Get /bytes/5 HTTP/1.1\r\nHost: t\r\n\r\n", 501, None),
        ],
    )
    .await;
}

/// RFC 9110 §15.6.2: an unrecognized method is `501` whatever the path,
/// known or not.
#[tokio::test]
async fn unknown_method_is_501_on_any_path() {
    let server = start_app(Config::default()).await;
    expect(
        &server,
        &[
            (b"FOO / HTTP/1.1\r\nHost: t\r\n\r\n", 501, None),
            (b"FOO /bytes/5 HTTP/1.1\r\nHost: t\r\n\r\n", 501, None),
            (b"FOO /nope HTTP/1.1\r\nHost: t\r\n\r\n", 501, None),
            (
                b"PROPFIND /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n",
                501,
                None,
            ),
            (b"GET /bytes/2 HTTP/1.1\r\nHost: t\r\n\r\n", 200, None),
        ],
    )
    .await;
}

/// RFC 9110 §9.3.6: CONNECT names an authority, not a route; the demo is
/// no proxy. `405` with the server's `Allow` (the method is known, so not
/// `501`).
#[tokio::test]
async fn connect_is_405_with_the_servers_allow() {
    let server = start_app(Config::default()).await;
    expect(
        &server,
        &[
            (
                b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
                405,
                Some(SERVER),
            ),
            (b"GET /bytes/2 HTTP/1.1\r\nHost: t\r\n\r\n", 200, None),
        ],
    )
    .await;
}

/// A known method on a path the demo does not serve is `404`, as before.
#[tokio::test]
async fn unknown_path_is_404_for_every_known_method() {
    let server = start_app(Config::default()).await;
    expect(
        &server,
        &[
            (b"GET /nope HTTP/1.1\r\nHost: t\r\n\r\n", 404, None),
            (b"HEAD /nope HTTP/1.1\r\nHost: t\r\n\r\n", 404, None),
            (
                b"POST /nope HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n",
                404,
                None,
            ),
            (b"OPTIONS /nope HTTP/1.1\r\nHost: t\r\n\r\n", 404, None),
            (b"DELETE /bytes HTTP/1.1\r\nHost: t\r\n\r\n", 404, None),
            // Without a root, `/static/` is no route.
            (b"GET /static/a.txt HTTP/1.1\r\nHost: t\r\n\r\n", 404, None),
            (
                b"OPTIONS /static/a.txt HTTP/1.1\r\nHost: t\r\n\r\n",
                404,
                None,
            ),
        ],
    )
    .await;
}

/// RFC 9110 §9.3.2: HEAD still answers on every `GET` route, with the
/// `GET`'s status and no body.
#[tokio::test]
async fn head_still_works_on_get_routes() {
    let server = start_app(Config::default()).await;
    expect(
        &server,
        &[
            (b"HEAD / HTTP/1.1\r\nHost: t\r\n\r\n", 200, None),
            (b"HEAD /events HTTP/1.1\r\nHost: t\r\n\r\n", 200, None),
            (b"HEAD /api/livedata HTTP/1.1\r\nHost: t\r\n\r\n", 200, None),
            (b"HEAD /metrics HTTP/1.1\r\nHost: t\r\n\r\n", 200, None),
            (b"HEAD /bytes/40960 HTTP/1.1\r\nHost: t\r\n\r\n", 200, None),
            (b"GET /bytes/4 HTTP/1.1\r\nHost: t\r\n\r\n", 200, None),
        ],
    )
    .await;
}

/// `/static/…` with a root: `GET` and `HEAD` reach the files, `OPTIONS`
/// lists them, any other method is `405` with the same `Allow`.
#[tokio::test]
async fn static_route_answers_every_method() {
    let root = static_root("static");
    let dir = root.clone();
    let server = start_with(Config::default(), move |metrics| {
        App::new(metrics).with_static_root(dir)
    })
    .await;
    expect(
        &server,
        &[
            (b"GET /static/a.txt HTTP/1.1\r\nHost: t\r\n\r\n", 200, None),
            (b"HEAD /static/a.txt HTTP/1.1\r\nHost: t\r\n\r\n", 200, None),
            (
                b"OPTIONS /static/a.txt HTTP/1.1\r\nHost: t\r\n\r\n",
                204,
                Some(GET_ROUTE),
            ),
            (
                b"PUT /static/a.txt HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\n\r\nx",
                405,
                Some(GET_ROUTE),
            ),
            (
                b"DELETE /static/missing HTTP/1.1\r\nHost: t\r\n\r\n",
                405,
                Some(GET_ROUTE),
            ),
            (
                b"GET /static/missing HTTP/1.1\r\nHost: t\r\n\r\n",
                404,
                None,
            ),
            (b"FOO /static/a.txt HTTP/1.1\r\nHost: t\r\n\r\n", 501, None),
        ],
    )
    .await;
    let _ = std::fs::remove_dir_all(root);
}

/// RFC 6455 §4.1: a WebSocket handshake is a `GET`, so the WebSocket
/// routes answer `GET` alone: `HEAD` and the rest get `405` with
/// `Allow: GET, OPTIONS`, `OPTIONS` lists those, and a plain `GET` gets
/// the handshake's `426`.
#[tokio::test]
async fn websocket_routes_answer_get_only() {
    let server = start_app(Config::default()).await;
    expect(
        &server,
        &[
            (
                b"OPTIONS /ws/echo HTTP/1.1\r\nHost: t\r\n\r\n",
                204,
                Some(WEBSOCKET_ROUTE),
            ),
            (
                b"OPTIONS /ws/live HTTP/1.1\r\nHost: t\r\n\r\n",
                204,
                Some(WEBSOCKET_ROUTE),
            ),
            (
                b"HEAD /ws/live HTTP/1.1\r\nHost: t\r\n\r\n",
                405,
                Some(WEBSOCKET_ROUTE),
            ),
            (
                b"POST /ws/echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nhi",
                405,
                Some(WEBSOCKET_ROUTE),
            ),
            (
                b"PUT /ws/live HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n",
                405,
                Some(WEBSOCKET_ROUTE),
            ),
            (
                b"TRACE /ws/echo HTTP/1.1\r\nHost: t\r\n\r\n",
                405,
                Some(WEBSOCKET_ROUTE),
            ),
            (b"GET /ws/echo HTTP/1.1\r\nHost: t\r\n\r\n", 426, None),
            (b"FOO /ws/echo HTTP/1.1\r\nHost: t\r\n\r\n", 501, None),
            (b"GET /ws/nope HTTP/1.1\r\nHost: t\r\n\r\n", 404, None),
            (b"GET /bytes/2 HTTP/1.1\r\nHost: t\r\n\r\n", 200, None),
        ],
    )
    .await;
}
