//! HTTP/2 over plain TCP (`h2c` with prior knowledge) with `h2`'s own
//! client, on the port that serves HTTP/1.1: the preface told apart from
//! a request head, streams side by side, bodies both ways under flow
//! control, the response framing rules, trailers, limits, errors and the
//! graceful shutdown.
#![cfg(feature = "http2")]

use crate::common;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use h2::client::SendRequest;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, StreamBody};
use ringstream::server::{self, service_fn, Config, ConnectionInfo, Metrics};
use ringstream::Incoming;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

type Body = http_body_util::combinators::UnsyncBoxBody<Bytes, std::io::Error>;

fn full(text: impl Into<Bytes>) -> Body {
    Full::new(text.into())
        .map_err(|never: Infallible| match never {})
        .boxed_unsync()
}

/// The test service: `/` names the request, `/echo` echoes the body and
/// its trailers, `/big` sends 1 MiB, `/slow` answers after a second,
/// `/fail` fails, `/panic` panics, `/trailers` ends with trailers,
/// `/unread` answers without reading the body, `/304` and `/204` have no
/// body.
async fn app(mut req: Request<Incoming>) -> Result<Response<Body>, std::io::Error> {
    match req.uri().path() {
        "/ws" => {
            let upgrade = match ringstream::ws::WebSocketUpgrade::from_request(&mut req) {
                Ok(upgrade) => upgrade,
                Err(refused) => return Ok(refused.into_response().map(full)),
            };
            let response = upgrade.on_upgrade(|mut socket| async move {
                while let Some(Ok(message)) = socket.recv().await {
                    if message.is_data() && socket.send(message).await.is_err() {
                        break;
                    }
                }
            });
            Ok(response.map(full))
        }
        "/echo" => {
            let mut received = Vec::new();
            loop {
                match req.body_mut().read_partial(64 * 1024).await {
                    Ok(Some(piece)) => received.extend_from_slice(&piece),
                    Ok(None) => break,
                    // A body that failed (a deadline, a limit): its status.
                    Err(e) => {
                        let mut refused = Response::new(full(e.to_string()));
                        *refused.status_mut() =
                            StatusCode::from_u16(e.status().unwrap_or(500)).unwrap();
                        return Ok(refused);
                    }
                }
            }
            let mut response = Response::new(full(received));
            if let Some(trailers) = req.body().trailers() {
                for (name, value) in trailers {
                    let name = format!("echo-{name}");
                    response
                        .headers_mut()
                        .insert(http::HeaderName::try_from(name).unwrap(), value.clone());
                }
            }
            Ok(response)
        }
        "/big" => Ok(Response::new(full(vec![b'x'; 1 << 20]))),
        "/slow" => {
            tokio::time::sleep(Duration::from_secs(1)).await;
            Ok(Response::new(full("slow")))
        }
        "/fail" => Err(std::io::Error::other("refused by the app")),
        "/panic" => panic!("the app panicked"),
        "/trailers" => {
            let mut trailers = http::HeaderMap::new();
            trailers.insert("checksum", "abc".parse().unwrap());
            let frames = vec![
                Ok(http_body::Frame::data(Bytes::from_static(b"part one, "))),
                Ok(http_body::Frame::data(Bytes::from_static(b"part two"))),
                Ok(http_body::Frame::trailers(trailers)),
            ];
            let body = StreamBody::new(futures_util::stream::iter(frames));
            Ok(Response::new(body.boxed_unsync()))
        }
        "/unread" => Ok(Response::new(full("not read"))),
        "/304" => {
            let mut response = Response::new(full(""));
            *response.status_mut() = StatusCode::NOT_MODIFIED;
            Ok(response)
        }
        "/connection-fields" => {
            let mut response = Response::new(full("fields"));
            let headers = response.headers_mut();
            headers.insert("connection", "keep-alive".parse().unwrap());
            headers.insert("keep-alive", "timeout=5".parse().unwrap());
            headers.insert("x-kept", "yes".parse().unwrap());
            Ok(response)
        }
        _ => {
            let client = req
                .extensions()
                .get::<ConnectionInfo>()
                .map(|info| info.remote_addr().to_string())
                .unwrap_or_default();
            let text = format!(
                "{} {} {:?} from {client}",
                req.method(),
                req.uri().path(),
                req.version()
            );
            Ok(Response::new(full(text)))
        }
    }
}

struct Running {
    addr: SocketAddr,
    metrics: Arc<Metrics>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    served: tokio::task::JoinHandle<Result<(), ringstream::Error>>,
}

async fn start(config: Config) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let serve = server::serve(listener, service_fn(app)).with_config(config);
    let metrics = serve.metrics();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(serve.with_graceful_shutdown(async {
        let _ = stopped.await;
    }));
    Running {
        addr,
        metrics,
        stop: Some(stop),
        served,
    }
}

/// An `h2` client connected with prior knowledge.
async fn h2c(addr: SocketAddr) -> SendRequest<Bytes> {
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (client, connection) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client.ready().await.unwrap()
}

#[tokio::test]
async fn a_connection_that_starts_with_the_preface_speaks_http2() {
    let server = start(Config::default()).await;
    let mut client = h2c(server.addr).await;
    let request = Request::get("http://localhost/hello").body(()).unwrap();
    let (response, _) = client.send_request(request, true).unwrap();
    let response = response.await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.version(), http::Version::HTTP_2);
    assert!(response.headers().contains_key("date"));
    assert_eq!(response.headers()["server"], "ringstream");
    let length = response.headers()["content-length"].clone();
    let body = common::h2_body(response.into_body()).await;
    assert_eq!(length, body.len().to_string().as_str());
    let text = String::from_utf8(body).unwrap();
    assert!(
        text.starts_with("GET /hello HTTP/2.0 from 127.0.0.1:"),
        "{text}"
    );
    assert_eq!(server.metrics.requests(), 1);

    // HTTP/1.1 on the same port, as before.
    let mut tcp = TcpStream::connect(server.addr).await.unwrap();
    tcp.write_all(b"GET /one HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(
        answer.contains("\r\n\r\nGET /one HTTP/1.1 from 127.0.0.1:"),
        "{answer}"
    );
}

#[tokio::test]
async fn a_preface_that_arrives_byte_by_byte_is_still_recognised() {
    let server = start(Config::default()).await;
    let mut tcp = TcpStream::connect(server.addr).await.unwrap();
    for byte in ringstream::ringstream_core::h1::HTTP2_PREFACE.iter() {
        tcp.write_all(&[*byte]).await.unwrap();
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    // The server's SETTINGS: a frame of type 4 on stream 0.
    let mut head = [0u8; 9];
    tcp.read_exact(&mut head).await.unwrap();
    assert_eq!(head[3], 4, "a SETTINGS frame: {head:?}");
    assert_eq!(&head[5..9], &[0, 0, 0, 0]);
}

#[tokio::test]
async fn with_http2_turned_off_the_preface_is_an_http1_error() {
    let mut config = Config::default();
    config.http2.enabled = false;
    let server = start(config).await;
    let mut tcp = TcpStream::connect(server.addr).await.unwrap();
    tcp.write_all(ringstream::ringstream_core::h1::HTTP2_PREFACE)
        .await
        .unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), tcp.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 "), "{answer}");
    assert!(!answer.starts_with("HTTP/1.1 2"), "{answer}");
}

#[tokio::test]
async fn streams_are_served_side_by_side_on_one_connection() {
    let server = start(Config::default()).await;
    let mut client = h2c(server.addr).await;
    // A slow stream first: the quick ones behind it are not held up.
    let slow = Request::get("http://localhost/slow").body(()).unwrap();
    let (slow, _) = client.send_request(slow, true).unwrap();
    let mut slow = Box::pin(slow);
    let mut quick = Vec::new();
    for i in 0..40 {
        client = client.ready().await.unwrap();
        let request = Request::get(format!("http://localhost/q{i}"))
            .body(())
            .unwrap();
        quick.push(client.send_request(request, true).unwrap().0);
    }
    for (i, response) in quick.into_iter().enumerate() {
        let body = common::h2_body(response.await.unwrap().into_body()).await;
        let text = String::from_utf8(body).unwrap();
        assert!(text.starts_with(&format!("GET /q{i} HTTP/2.0")), "{text}");
    }
    assert!(
        futures_util::FutureExt::now_or_never(&mut slow).is_none(),
        "the quick streams waited for the slow one"
    );
    let body = common::h2_body(slow.await.unwrap().into_body()).await;
    assert_eq!(body, b"slow");
    assert_eq!(server.metrics.requests(), 41);
}

#[tokio::test]
async fn a_large_upload_and_download_pass_through_the_windows() {
    let server = start(Config::default()).await;
    let mut client = h2c(server.addr).await;
    // 3 MiB up: more than the stream (256 KiB) and connection (1 MiB)
    // windows, so the upload moves only as the service reads.
    let upload: Vec<u8> = (0..3 << 20).map(|i| (i % 251) as u8).collect();
    let request = Request::post("http://localhost/echo").body(()).unwrap();
    let (response, mut send) = client.send_request(request, false).unwrap();
    let sender = tokio::spawn({
        let upload = Bytes::from(upload.clone());
        async move {
            let mut rest = upload;
            while !rest.is_empty() {
                send.reserve_capacity(rest.len().min(64 * 1024));
                let room = std::future::poll_fn(|cx| send.poll_capacity(cx))
                    .await
                    .unwrap()
                    .unwrap();
                let piece = rest.split_to(room.min(rest.len()));
                send.send_data(piece, rest.is_empty()).unwrap();
            }
        }
    });
    let response = response.await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let echoed = common::h2_body(response.into_body()).await;
    sender.await.unwrap();
    assert_eq!(echoed.len(), upload.len());
    assert!(echoed == upload, "the echo differs");

    let request = Request::get("http://localhost/big").body(()).unwrap();
    let (response, _) = client.send_request(request, true).unwrap();
    let body = common::h2_body(response.await.unwrap().into_body()).await;
    assert_eq!(body.len(), 1 << 20);
}

#[tokio::test]
async fn trailers_go_both_ways() {
    let server = start(Config::default()).await;
    let mut client = h2c(server.addr).await;
    let request = Request::post("http://localhost/echo").body(()).unwrap();
    let (response, mut send) = client.send_request(request, false).unwrap();
    send.send_data(Bytes::from_static(b"payload"), false)
        .unwrap();
    let mut trailers = http::HeaderMap::new();
    trailers.insert("digest", "xyz".parse().unwrap());
    send.send_trailers(trailers).unwrap();
    let response = response.await.unwrap();
    assert_eq!(response.headers()["echo-digest"], "xyz");
    assert_eq!(common::h2_body(response.into_body()).await, b"payload");

    let request = Request::get("http://localhost/trailers").body(()).unwrap();
    let (response, _) = client.send_request(request, true).unwrap();
    let mut body = response.await.unwrap().into_body();
    let mut data = Vec::new();
    while let Some(piece) = body.data().await {
        data.extend_from_slice(&piece.unwrap());
    }
    assert_eq!(data, b"part one, part two");
    let trailers = body.trailers().await.unwrap().unwrap();
    assert_eq!(trailers["checksum"], "abc");
}

#[tokio::test]
async fn head_and_304_have_no_body_and_connection_fields_are_dropped() {
    let server = start(Config::default()).await;
    let mut client = h2c(server.addr).await;
    let request = Request::builder()
        .method(Method::HEAD)
        .uri("http://localhost/head")
        .body(())
        .unwrap();
    let (response, _) = client.send_request(request, true).unwrap();
    let response = response.await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let length: usize = response.headers()["content-length"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(length, "HEAD /head HTTP/2.0 from 127.0.0.1:".len() + 5);
    assert!(response.body().is_end_stream());

    let request = Request::get("http://localhost/304").body(()).unwrap();
    let (response, _) = client.send_request(request, true).unwrap();
    let response = response.await.unwrap();
    assert_eq!(response.status(), StatusCode::NOT_MODIFIED);
    assert!(response.body().is_end_stream());

    let request = Request::get("http://localhost/connection-fields")
        .body(())
        .unwrap();
    let (response, _) = client.send_request(request, true).unwrap();
    let response = response.await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(!response.headers().contains_key("connection"));
    assert!(!response.headers().contains_key("keep-alive"));
    assert_eq!(response.headers()["x-kept"], "yes");
    assert_eq!(common::h2_body(response.into_body()).await, b"fields");
}

#[tokio::test]
async fn failures_are_answered_500_and_the_connection_lives_on() {
    let server = start(Config::default()).await;
    let mut client = h2c(server.addr).await;
    for path in ["/fail", "/panic"] {
        let request = Request::get(format!("http://localhost{path}"))
            .body(())
            .unwrap();
        let (response, _) = client.send_request(request, true).unwrap();
        let response = response.await.unwrap();
        assert_eq!(
            response.status(),
            StatusCode::INTERNAL_SERVER_ERROR,
            "{path}"
        );
    }
    client = client.ready().await.unwrap();
    let request = Request::get("http://localhost/after").body(()).unwrap();
    let (response, _) = client.send_request(request, true).unwrap();
    assert_eq!(response.await.unwrap().status(), StatusCode::OK);
    assert_eq!(server.metrics.status_count(500), 2);
}

#[tokio::test]
async fn a_body_declared_over_the_limit_is_answered_413_unread() {
    let mut config = Config::default();
    config.limits.max_body_len = 1000;
    let server = start(config).await;
    let mut client = h2c(server.addr).await;
    let request = Request::post("http://localhost/echo")
        .header("content-length", "5000")
        .body(())
        .unwrap();
    let (response, _send) = client.send_request(request, false).unwrap();
    assert_eq!(
        response.await.unwrap().status(),
        StatusCode::PAYLOAD_TOO_LARGE
    );

    // Undeclared, and longer than the limit: the read fails, 413.
    let request = Request::post("http://localhost/echo").body(()).unwrap();
    let (response, mut send) = client.send_request(request, false).unwrap();
    send.send_data(Bytes::from(vec![0u8; 4000]), true).unwrap();
    let response = response.await;
    let status = response.map(|r| r.status());
    assert!(
        !matches!(status, Ok(StatusCode::OK)),
        "a body over the limit was served: {status:?}"
    );
}

#[tokio::test]
async fn an_idle_connection_is_closed_after_the_idle_timeout() {
    let config = Config {
        idle_timeout: Duration::from_millis(200),
        ..Config::default()
    };
    let server = start(config).await;
    let tcp = TcpStream::connect(server.addr).await.unwrap();
    let (client, connection) = h2::client::handshake(tcp).await.unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(5), connection).await;
    assert!(ended.is_ok(), "the idle connection stayed open");
    drop(client);
}

#[tokio::test]
async fn graceful_shutdown_lets_an_open_stream_finish() {
    let mut server = start(Config::default()).await;
    let mut client = h2c(server.addr).await;
    let request = Request::get("http://localhost/slow").body(()).unwrap();
    let (response, _) = client.send_request(request, true).unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let _ = server.stop.take().unwrap().send(());
    let response = response.await.unwrap();
    assert_eq!(common::h2_body(response.into_body()).await, b"slow");
    let served = tokio::time::timeout(Duration::from_secs(5), server.served).await;
    assert!(served.is_ok(), "the server did not stop");
}

/// A client that answers nothing (not even the keep-alive PING) is closed
/// after two intervals, long before the idle timeout.
#[tokio::test]
async fn a_client_that_leaves_the_keep_alive_ping_unanswered_is_closed() {
    let mut config = Config::default();
    config.http2.keep_alive_interval = Some(Duration::from_millis(100));
    let server = start(config).await;
    let mut tcp = TcpStream::connect(server.addr).await.unwrap();
    tcp.write_all(ringstream::ringstream_core::h1::HTTP2_PREFACE)
        .await
        .unwrap();
    // An empty SETTINGS frame, then silence: no SETTINGS ACK, no PING ACK.
    tcp.write_all(&[0, 0, 0, 4, 0, 0, 0, 0, 0]).await.unwrap();
    let mut frame_types = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let mut head = [0u8; 9];
            if tcp.read_exact(&mut head).await.is_err() {
                return;
            }
            let len = usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]);
            let mut payload = vec![0u8; len];
            if tcp.read_exact(&mut payload).await.is_err() {
                return;
            }
            frame_types.push(head[3]);
        }
    })
    .await;
    assert!(read.is_ok(), "the silent client was not closed");
    assert!(
        frame_types.contains(&6),
        "no PING was sent: {frame_types:?}"
    );
}

/// A WebSocket over HTTP/2 (RFC 8441): an extended CONNECT answered 200,
/// then WebSocket frames in the stream's DATA, echoed by the same handler
/// that serves HTTP/1.1; other streams are served beside it. A request
/// that is not an extended CONNECT, or names another version, is refused.
#[tokio::test]
async fn a_websocket_runs_over_an_http2_stream() {
    let server = start(Config::default()).await;
    let mut client = h2c(server.addr).await;
    // The server's SETTINGS (which enable extended CONNECT) have arrived
    // once a first response has.
    let first = Request::get("http://localhost/first").body(()).unwrap();
    let (first, _) = client.send_request(first, true).unwrap();
    assert_eq!(first.await.unwrap().status(), StatusCode::OK);
    assert!(client.is_extended_connect_protocol_enabled());
    let request = Request::builder()
        .method(Method::CONNECT)
        .uri("http://localhost/ws")
        .extension(h2::ext::Protocol::from_static("websocket"))
        .header("sec-websocket-version", "13")
        .body(())
        .unwrap();
    let (response, mut send) = client.send_request(request, false).unwrap();
    let response = response.await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(!response.headers().contains_key("sec-websocket-accept"));
    let mut recv = response.into_body();

    // A masked text frame "hello", in two DATA frames.
    let mask = [1u8, 2, 3, 4];
    let mut frame = vec![0x81, 0x80 | 5];
    frame.extend_from_slice(&mask);
    frame.extend(b"hello".iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    let second = frame.split_off(3);
    send.send_data(Bytes::from(frame), false).unwrap();
    send.send_data(Bytes::from(second), false).unwrap();
    let mut echoed = Vec::new();
    while echoed.len() < 7 {
        let data = recv.data().await.unwrap().unwrap();
        let _ = recv.flow_control().release_capacity(data.len());
        echoed.extend_from_slice(&data);
    }
    assert_eq!(echoed, b"\x81\x05hello");

    // Another stream on the same connection meanwhile.
    let other = Request::get("http://localhost/beside").body(()).unwrap();
    let (other, _) = client.send_request(other, true).unwrap();
    assert_eq!(other.await.unwrap().status(), StatusCode::OK);

    // A close frame: the server answers with its own.
    let mut close = vec![0x88, 0x80 | 2];
    close.extend_from_slice(&mask);
    close.extend([0x03 ^ mask[0], 0xe8 ^ mask[1]]);
    send.send_data(Bytes::from(close), false).unwrap();
    let data = recv.data().await.unwrap().unwrap();
    assert_eq!(data[0], 0x88, "{data:?}");

    for (method, version) in [(Method::GET, "13"), (Method::CONNECT, "8")] {
        let mut request = Request::builder()
            .method(method.clone())
            .uri("http://localhost/ws")
            .header("sec-websocket-version", version);
        if method == Method::CONNECT {
            request = request.extension(h2::ext::Protocol::from_static("websocket"));
        }
        client = client.ready().await.unwrap();
        let (response, _) = client
            .send_request(request.body(()).unwrap(), true)
            .unwrap();
        let status = response.await.unwrap().status();
        assert_eq!(
            status,
            StatusCode::UPGRADE_REQUIRED,
            "{method} version {version}"
        );
    }
}

/// At the connection cap, an HTTP/2 connection with no stream open is
/// idle: a new client takes its slot, and it is closed (GOAWAY).
#[tokio::test]
async fn an_idle_http2_connection_gives_its_slot_to_a_new_client() {
    let config = Config {
        max_connections: 1,
        ..Config::default()
    };
    let server = start(config).await;
    let tcp = TcpStream::connect(server.addr).await.unwrap();
    let (client, connection) = h2::client::handshake(tcp).await.unwrap();
    let mut connection = tokio::spawn(connection);
    let mut client = client.ready().await.unwrap();
    let request = Request::get("http://localhost/first").body(()).unwrap();
    let (response, _) = client.send_request(request, true).unwrap();
    assert_eq!(response.await.unwrap().status(), StatusCode::OK);
    assert!(
        tokio::time::timeout(Duration::from_millis(100), &mut connection)
            .await
            .is_err(),
        "the connection ended by itself"
    );

    let mut tcp = TcpStream::connect(server.addr).await.unwrap();
    tcp.write_all(b"GET /new HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    let ended = tokio::time::timeout(Duration::from_secs(5), connection).await;
    assert!(ended.is_ok(), "the idle HTTP/2 connection kept its slot");
    assert_eq!(server.metrics.connections_evicted(), 1);
}

/// A stream whose body stops coming fails its read after
/// `body_read_timeout` (408), and one that trickles slower than
/// `body_min_rate` fails at its rate; the connection serves on.
#[tokio::test]
async fn a_stalled_or_trickling_body_times_out() {
    let config = Config {
        body_read_timeout: Duration::from_millis(300),
        body_min_rate: 0,
        ..Config::default()
    };
    let server = start(config).await;
    let mut client = h2c(server.addr).await;
    let request = Request::post("http://localhost/echo").body(()).unwrap();
    let (response, mut send) = client.send_request(request, false).unwrap();
    send.send_data(Bytes::from_static(b"a start"), false)
        .unwrap();
    let response = tokio::time::timeout(Duration::from_secs(5), response)
        .await
        .expect("the stalled body was waited for forever")
        .unwrap();
    assert_eq!(response.status(), StatusCode::REQUEST_TIMEOUT);
    let text = String::from_utf8(common::h2_body(response.into_body()).await).unwrap();
    assert!(text.contains("request body read"), "{text}");

    // 10 bytes every 100 ms: 100 bytes/s, under the 1,000 allowed.
    let config = Config {
        body_read_timeout: Duration::from_millis(300),
        body_min_rate: 1000,
        ..Config::default()
    };
    let server = start(config).await;
    let mut client = h2c(server.addr).await;
    let request = Request::post("http://localhost/echo").body(()).unwrap();
    let (response, mut send) = client.send_request(request, false).unwrap();
    let trickle = tokio::spawn(async move {
        for _ in 0..50 {
            if send
                .send_data(Bytes::from_static(b"0123456789"), false)
                .is_err()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    let response = tokio::time::timeout(Duration::from_secs(5), response)
        .await
        .expect("the trickle was waited for to its end")
        .unwrap();
    assert_eq!(response.status(), StatusCode::REQUEST_TIMEOUT);
    let text = String::from_utf8(common::h2_body(response.into_body()).await).unwrap();
    assert!(text.contains("too slow"), "{text}");
    trickle.abort();
}

/// A drain started: the open HTTP/2 connection gets GOAWAY (its open
/// stream finishes) and closes; a new one is still served.
#[tokio::test]
async fn a_drain_sends_goaway_and_lets_the_open_stream_finish() {
    let config = Config::default();
    let drain = config.drain.clone();
    let server = start(config).await;
    let tcp = TcpStream::connect(server.addr).await.unwrap();
    let (client, connection) = h2::client::handshake(tcp).await.unwrap();
    let connection = tokio::spawn(connection);
    let mut client = client.ready().await.unwrap();
    let request = Request::get("http://localhost/slow").body(()).unwrap();
    let (slow, _) = client.send_request(request, true).unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    drain.start();
    let slow = slow.await.unwrap();
    assert_eq!(common::h2_body(slow.into_body()).await, b"slow");
    let ended = tokio::time::timeout(Duration::from_secs(5), connection).await;
    assert!(ended.is_ok(), "the draining connection stayed open");
    // Still serving.
    let mut fresh = h2c(server.addr).await;
    let request = Request::get("http://localhost/again").body(()).unwrap();
    let (response, _) = fresh.send_request(request, true).unwrap();
    assert_eq!(response.await.unwrap().status(), StatusCode::OK);
}

/// A service that takes one request at a time: not ready while one is
/// being answered, as behind tower's concurrency limit.
#[derive(Clone, Default)]
struct OneAtATime {
    /// Whether a request is being answered, and the connection waiting.
    state: Arc<std::sync::Mutex<(bool, Option<std::task::Waker>)>>,
}

impl tower_service::Service<Request<Incoming>> for OneAtATime {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<Response<Body>, Infallible>> + Send>,
    >;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        let mut state = self.state.lock().unwrap();
        if state.0 {
            state.1 = Some(cx.waker().clone());
            return std::task::Poll::Pending;
        }
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<Incoming>) -> Self::Future {
        self.state.lock().unwrap().0 = true;
        let state = self.state.clone();
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let waiting = {
                let mut state = state.lock().unwrap();
                state.0 = false;
                state.1.take()
            };
            if let Some(waker) = waiting {
                waker.wake();
            }
            Ok(Response::new(full(req.uri().path().to_owned())))
        })
    }
}

#[tokio::test]
async fn a_service_not_ready_holds_new_streams_while_the_open_ones_finish() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let served = tokio::spawn(server::serve(listener, OneAtATime::default()));
    let mut client = h2c(addr).await;
    let mut answers = Vec::new();
    for i in 0..4 {
        client = client.ready().await.unwrap();
        let request = Request::get(format!("http://localhost/n{i}"))
            .body(())
            .unwrap();
        answers.push(client.send_request(request, true).unwrap().0);
    }
    // Each stream waits for the one before it to be answered: a server
    // that waited for the service without serving the open streams would
    // never answer the first.
    let all = async {
        let mut bodies = Vec::new();
        for answer in answers {
            bodies.push(common::h2_body(answer.await.unwrap().into_body()).await);
        }
        bodies
    };
    let bodies = tokio::time::timeout(Duration::from_secs(5), all)
        .await
        .expect("the streams behind a busy service were never answered");
    for (i, body) in bodies.into_iter().enumerate() {
        assert_eq!(body, format!("/n{i}").into_bytes());
    }
    served.abort();
}

/// A service that can never serve: its `poll_ready` fails.
#[derive(Clone)]
struct Broken;

impl tower_service::Service<Request<Incoming>> for Broken {
    type Response = Response<Body>;
    type Error = std::io::Error;
    type Future = std::future::Ready<Result<Response<Body>, std::io::Error>>;

    fn poll_ready(
        &mut self,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), std::io::Error>> {
        std::task::Poll::Ready(Err(std::io::Error::other("the database is gone")))
    }

    fn call(&mut self, _req: Request<Incoming>) -> Self::Future {
        unreachable!("never ready, never called")
    }
}

#[tokio::test]
async fn a_service_that_fails_to_get_ready_is_answered_503_stream_by_stream() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let served = tokio::spawn(server::serve(listener, Broken));
    let mut client = h2c(addr).await;
    for i in 0..3 {
        client = client.ready().await.unwrap();
        let request = Request::get(format!("http://localhost/{i}"))
            .body(())
            .unwrap();
        let (answer, _) = client.send_request(request, true).unwrap();
        let answer = tokio::time::timeout(Duration::from_secs(5), answer)
            .await
            .expect("no answer")
            .unwrap();
        assert_eq!(answer.status(), StatusCode::SERVICE_UNAVAILABLE);
    }
    served.abort();
}
