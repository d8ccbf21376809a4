//! One axum `Router` served twice, on ringstream and on `axum::serve`, and
//! every `GET`, `HEAD` and conditional `GET` answered with the same status
//! and the same fields (but `date`): the framing of responses without a
//! body (RFC 9110 §8.6, §9.3.2, §15.4.5) for buffered, streamed, chunked
//! and empty bodies, tower-http's `ServeDir` and ringstream's own static
//! files, and `304`s. Three differences are deliberate and checked apart: a
//! `HEAD` answered `304` does not keep the `content-length: 0` axum writes
//! for the 304's empty body, a `304` keeps a `Content-Length` its service
//! states (axum's server drops both), and a `204` never has one (axum's
//! server sends the length of a body its handler returned).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use axum::body::Body;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use ringstream::server::Config;
use ringstream::ResponseStream;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The test's static files: `hello.txt` (13 bytes) and `empty.txt`.
fn site() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ringstream-axum-framing-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("hello.txt"), b"hello, world\n").unwrap();
    std::fs::write(dir.join("empty.txt"), b"").unwrap();
    dir
}

fn app(dir: &std::path::Path) -> Router {
    Router::new()
        .route("/buffered", get(|| async { "hello, world\n" }))
        .route("/empty", get(|| async { "" }))
        .route(
            "/streamed",
            get(|| async {
                let parts = ["hello, ", "world\n"].map(|s| Ok::<_, std::io::Error>(s.as_bytes()));
                Body::from_stream(futures_util::stream::iter(parts))
            }),
        )
        .route(
            "/chunked",
            get(|| async {
                let (mut writer, body) = ResponseStream::channel();
                tokio::spawn(async move {
                    let _ = writer.write_all(b"hello, ").await;
                    let _ = writer.write_all(b"world\n").await;
                    writer.finish();
                });
                body
            }),
        )
        .route(
            "/not-modified",
            get(|| async { (StatusCode::NOT_MODIFIED, [(header::ETAG, "\"v1\"")]) }),
        )
        .route(
            "/not-modified-length",
            get(|| async {
                (
                    StatusCode::NOT_MODIFIED,
                    [(header::ETAG, "\"v1\""), (header::CONTENT_LENGTH, "13")],
                )
                    .into_response()
            }),
        )
        .route(
            "/no-content",
            get(|| async { (StatusCode::NO_CONTENT, "ignored") }),
        )
        .nest_service("/tower", tower_http::services::ServeDir::new(dir))
        .nest_service("/ours", ringstream::fs::ServeDir::new(dir))
}

/// A response head as read off the wire: the status line and the fields,
/// lowercased and sorted, without `date`.
#[derive(Debug, PartialEq, Eq)]
struct Head {
    status: String,
    fields: Vec<(String, String)>,
}

impl Head {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Sends `request` on a new connection and reads the response head.
async fn head_of(addr: SocketAddr, request: &str) -> Head {
    let mut socket = TcpStream::connect(addr).await.unwrap();
    socket.write_all(request.as_bytes()).await.unwrap();
    let mut wire = Vec::new();
    let mut buf = [0; 4096];
    while !wire.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(5), socket.read(&mut buf))
            .await
            .expect("a response head within 5 s")
            .unwrap();
        assert!(n > 0, "closed before the head ended: {wire:?}");
        wire.extend_from_slice(&buf[..n]);
    }
    let end = wire.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let text = String::from_utf8(wire[..end].to_vec()).unwrap();
    let mut lines = text.split("\r\n");
    let status = lines.next().unwrap().to_owned();
    let mut fields: Vec<(String, String)> = lines
        .map(|line| {
            let (name, value) = line.split_once(':').unwrap();
            (name.to_ascii_lowercase(), value.trim().to_owned())
        })
        .filter(|(name, _)| name != "date")
        .collect();
    fields.sort();
    Head { status, fields }
}

/// The two servers of one router: ringstream's and axum's own.
async fn both(app: Router) -> (SocketAddr, SocketAddr) {
    let ours = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let theirs = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addrs = (ours.local_addr().unwrap(), theirs.local_addr().unwrap());
    let config = Config {
        server_header: false,
        ..Config::default()
    };
    tokio::spawn(ringstream::server::serve(ours, app.clone()).with_config(config));
    tokio::spawn(async move { axum::serve(theirs, app).await });
    addrs
}

#[tokio::test]
async fn head_and_304_fields_match_axum_serve() {
    let dir = site();
    let (ours, theirs) = both(app(&dir)).await;

    // The validators of the two static responders, to ask for their 304s.
    let get = |path: &str| format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n");
    let tower = head_of(theirs, &get("/tower/hello.txt")).await;
    let own = head_of(ours, &get("/ours/hello.txt")).await;
    let tower_etag = tower.field("etag");
    let tower_modified = tower
        .field("last-modified")
        .expect("tower-http's last-modified");
    let own_etag = own.field("etag").expect("ringstream's etag");
    let own_modified = own
        .field("last-modified")
        .expect("ringstream's last-modified");

    let mut requests = Vec::new();
    for path in [
        "/buffered",
        "/empty",
        "/streamed",
        "/chunked",
        "/not-modified",
        "/tower/hello.txt",
        "/tower/empty.txt",
        "/tower/missing.txt",
        "/ours/hello.txt",
        "/ours/empty.txt",
    ] {
        requests.push(get(path));
        requests.push(format!("HEAD {path} HTTP/1.1\r\nHost: t\r\n\r\n"));
    }
    for (path, field, value) in [
        ("/tower/hello.txt", "If-Modified-Since", tower_modified),
        ("/ours/hello.txt", "If-Modified-Since", own_modified),
        ("/ours/hello.txt", "If-None-Match", own_etag),
    ]
    .into_iter()
    .chain(tower_etag.map(|etag| ("/tower/hello.txt", "If-None-Match", etag)))
    {
        for method in ["GET", "HEAD"] {
            requests.push(format!(
                "{method} {path} HTTP/1.1\r\nHost: t\r\n{field}: {value}\r\n\r\n"
            ));
        }
    }

    for request in &requests {
        let mut expected = head_of(theirs, request).await;
        // The one deliberate difference: a `HEAD` answered `304` with the
        // `content-length: 0` axum writes for the 304's own empty body
        // keeps it on axum's server; ringstream drops it, as on a `GET`
        // (it is not the length of the representation).
        if request.starts_with("HEAD ") && expected.status.starts_with("HTTP/1.1 304") {
            expected
                .fields
                .retain(|(name, value)| !(name == "content-length" && value == "0"));
        }
        let got = head_of(ours, request).await;
        assert_eq!(
            got, expected,
            "ringstream against axum::serve for\n{request}"
        );
    }

    // What the comparison stands for, said outright.
    let head = |path: &str| format!("HEAD {path} HTTP/1.1\r\nHost: t\r\n\r\n");
    let buffered = head_of(ours, &head("/buffered")).await;
    assert_eq!(buffered.field("content-length"), Some("13"));
    let streamed = head_of(ours, &head("/streamed")).await;
    assert_eq!(streamed.field("content-length"), None);
    assert_eq!(streamed.field("transfer-encoding"), None);
    let chunked = head_of(ours, &head("/chunked")).await;
    assert_eq!(chunked.field("content-length"), None);
    let not_modified = head_of(ours, &get("/not-modified")).await;
    assert!(
        not_modified.status.starts_with("HTTP/1.1 304"),
        "{not_modified:?}"
    );
    assert_eq!(not_modified.field("content-length"), None);
    // A `204` never has a length (RFC 9110 §8.6 "MUST NOT"), even when its
    // handler returned a body (axum's server sends its length).
    let no_content = head_of(ours, &get("/no-content")).await;
    assert!(
        no_content.status.starts_with("HTTP/1.1 204"),
        "{no_content:?}"
    );
    assert_eq!(no_content.field("content-length"), None);
    // A `304` whose service states the representation's length keeps it
    // (RFC 9110 §8.6 allows it; axum's server drops it).
    for method in ["GET", "HEAD"] {
        let stated = head_of(
            ours,
            &format!("{method} /not-modified-length HTTP/1.1\r\nHost: t\r\n\r\n"),
        )
        .await;
        assert_eq!(stated.field("content-length"), Some("13"), "{method}");
    }
    for path in ["/tower/hello.txt", "/ours/hello.txt"] {
        let file = head_of(ours, &head(path)).await;
        assert_eq!(file.field("content-length"), Some("13"), "{path}");
    }
    let _ = std::fs::remove_dir_all(dir);
}
