//! Logging the tracing way: a span per request with OpenTelemetry field
//! names, the service's events inside it, and the access line only when
//! `Config::access_log` asks for it.

use crate::common;

#[path = "../../examples/tracing.rs"]
#[allow(dead_code)]
mod tracing_example;

use std::convert::Infallible;

use common::{read_response, start, Captured};
use ringstream::server::{service_fn, Config};
use ringstream::Incoming;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// Serves two requests (one with a query) and returns the log.
async fn serve_and_log(config: Config) -> (String, std::net::SocketAddr) {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .finish();
    let _default = tracing::subscriber::set_default(subscriber);

    let service = service_fn(|req: http::Request<Incoming>| async move {
        tracing::info!(path = req.uri().path(), "handler ran");
        Ok::<_, Infallible>(http::Response::new(String::from("hello")))
    });
    let server = start(service, config).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let client = socket.local_addr().unwrap();
    let mut buf = Vec::new();
    socket
        .write_all(b"GET /a?x=1 HTTP/1.1\r\nHost: t\r\n\r\nPOST /b HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n")
        .await
        .unwrap();
    assert_eq!(
        read_response(&mut socket, &mut buf, false).await.status,
        200
    );
    assert_eq!(
        read_response(&mut socket, &mut buf, false).await.status,
        200
    );
    server.shutdown().await.unwrap();
    (captured.text(), client)
}

#[tokio::test(flavor = "current_thread")]
async fn a_service_event_carries_the_request_span() {
    let (log, client) = serve_and_log(Config::default()).await;
    let line = log
        .lines()
        .find(|l| l.contains("handler ran") && l.contains("path=\"/a\""))
        .unwrap_or_else(|| panic!("no handler line in {log}"));
    for field in [
        "request{",
        "http.request.method=GET",
        "url.path=\"/a\"",
        "url.query=\"x=1\"",
        "network.protocol.version=\"1.1\"",
        &format!("client.address={}", client.ip()),
        &format!("client.port={}", client.port()),
    ] {
        assert!(line.contains(field), "{field} missing from {line:?}");
    }
    let second = log
        .lines()
        .find(|l| l.contains("handler ran") && l.contains("path=\"/b\""))
        .unwrap_or_else(|| panic!("no second handler line in {log}"));
    assert!(second.contains("http.request.method=POST"), "{second}");
    assert!(!second.contains("url.query"), "{second}");
    // Off by default: no access line of the server's own.
    assert!(!log.contains("http.response.status_code"), "{log}");
}

#[tokio::test(flavor = "current_thread")]
async fn the_access_line_is_written_when_asked_for() {
    let config = Config {
        access_log: true,
        ..Config::default()
    };
    let (log, client) = serve_and_log(config).await;
    let line = log
        .lines()
        .find(|l| l.contains("ringstream::access") && l.contains("/a?x=1"))
        .unwrap_or_else(|| panic!("no access line in {log}"));
    for field in [
        "http.request.method=GET",
        "http.target=/a?x=1",
        "network.protocol.version=\"1.1\"",
        "http.response.status_code=200",
        "http.response.body.size=5",
        "duration_us=",
        &format!("client.address={client}"),
        // Inside the request's span, which has the status recorded.
        "request{",
    ] {
        assert!(line.contains(field), "{field} missing from {line:?}");
    }
}

#[tokio::test(flavor = "current_thread")]
async fn the_tracing_example_logs_spans_events_and_access_lines() {
    let captured = Captured::default();
    let writer = captured.clone();
    let _default = tracing::subscriber::set_default(tracing_example::subscriber(
        move || writer.clone(),
        false,
    ));
    let server = start(
        service_fn(tracing_example::hello),
        tracing_example::config(),
    )
    .await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let mut buf = Vec::new();
    socket
        .write_all(b"GET /hello?name=ring HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let response = read_response(&mut socket, &mut buf, false).await;
    assert_eq!(response.body, b"hello, ring\n");
    server.shutdown().await.unwrap();

    let log = captured.text();
    let greeting = log
        .lines()
        .find(|l| l.contains("greeting"))
        .unwrap_or_else(|| panic!("no handler event in {log}"));
    assert!(greeting.contains("url.path=\"/hello\""), "{greeting}");
    assert!(greeting.contains("name=ring"), "{greeting}");
    let access = log
        .lines()
        .find(|l| l.contains("ringstream::access"))
        .unwrap_or_else(|| panic!("no access line in {log}"));
    assert!(access.contains("http.response.status_code=200"), "{access}");
}
