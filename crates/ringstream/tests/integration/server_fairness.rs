//! No client holds the server for itself: a silent new connection is closed
//! at the head deadline, and a pipelining client yields to the others.

use crate::common;

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{read_response, read_to_close, start};
use http::{Request, Response};
use ringstream::server::{service_fn, Config};
use ringstream::Incoming;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::Notify;

fn hello() -> impl tower_service::Service<
    Request<Incoming>,
    Response = Response<String>,
    Error = Infallible,
    Future = impl Send,
> + Clone
       + Send
       + 'static {
    service_fn(|_req: Request<Incoming>| async {
        Ok::<_, Infallible>(Response::new(String::from("hello")))
    })
}

/// A connection that never sends a byte holds its slot for the head
/// timeout, not the idle timeout, and is closed without an answer.
#[tokio::test]
async fn silent_new_connection_is_closed_at_the_head_deadline() {
    let config = Config {
        head_timeout: Duration::from_millis(300),
        idle_timeout: Duration::from_secs(30),
        ..Config::default()
    };
    let server = start(hello(), config).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let started = Instant::now();
    let rest = tokio::time::timeout(Duration::from_secs(10), read_to_close(&mut socket))
        .await
        .expect("closed within the head timeout, not the idle timeout");
    assert!(rest.is_empty(), "{}", String::from_utf8_lossy(&rest));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "closed after {:?}",
        started.elapsed()
    );
}

/// Between requests the idle timeout applies: a kept-alive connection
/// outlives the head timeout.
#[tokio::test]
async fn a_kept_alive_connection_waits_the_idle_timeout() {
    let config = Config {
        head_timeout: Duration::from_millis(200),
        idle_timeout: Duration::from_secs(20),
        ..Config::default()
    };
    let server = start(hello(), config).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    let mut buf = Vec::new();
    for _ in 0..2 {
        socket
            .write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
            .await
            .unwrap();
        let response = read_response(&mut socket, &mut buf, false).await;
        assert_eq!(response.status, 200);
        // Longer than the head timeout, well within the idle timeout.
        tokio::time::sleep(Duration::from_millis(600)).await;
    }
}

/// A client with thousands of requests in flight does not starve another:
/// on one thread, the other client is answered while the pipeline is still
/// being served, not after it.
#[tokio::test]
async fn a_pipelining_client_yields_to_another() {
    const PIPELINED: usize = 4000;
    let flood_served = Arc::new(AtomicUsize::new(0));
    let probe_saw = Arc::new(AtomicUsize::new(usize::MAX));
    let started = Arc::new(Notify::new());
    let service = {
        let (flood_served, probe_saw, started) =
            (flood_served.clone(), probe_saw.clone(), started.clone());
        service_fn(move |req: Request<Incoming>| {
            if req.uri().path() == "/probe" {
                probe_saw.store(flood_served.load(Ordering::SeqCst), Ordering::SeqCst);
            } else if flood_served.fetch_add(1, Ordering::SeqCst) == 0 {
                started.notify_one();
            }
            async { Ok::<_, Infallible>(Response::new(String::from("hello"))) }
        })
    };
    let server = start(service, Config::default()).await;
    let mut flood = TcpStream::connect(server.addr).await.unwrap();
    let mut probe = TcpStream::connect(server.addr).await.unwrap();
    flood
        .write_all(&b"GET /flood HTTP/1.1\r\nHost: t\r\n\r\n".repeat(PIPELINED))
        .await
        .unwrap();
    // Once the server is busy with the pipeline, the other client asks.
    started.notified().await;
    probe
        .write_all(b"GET /probe HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let mut buf = Vec::new();
    let response = read_response(&mut probe, &mut buf, false).await;
    assert_eq!(response.status, 200);
    let before = probe_saw.load(Ordering::SeqCst);
    assert!(
        before < PIPELINED,
        "the other client was answered only after all {before} pipelined requests"
    );
    drop(flood);
}

/// A client that never reads its response holds its slot no longer than
/// the write timeout: the server closes the connection once nothing has
/// moved for that long.
#[tokio::test]
async fn a_client_that_never_reads_is_dropped_at_the_write_deadline() {
    let config = Config {
        write_timeout: Duration::from_millis(300),
        ..Config::default()
    };
    let service = service_fn(|_req: Request<Incoming>| async {
        // Far more than the socket buffers hold.
        Ok::<_, Infallible>(Response::new("x".repeat(64 << 20)))
    });
    let server = start(service, config).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    socket
        .write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.metrics.connections_accepted() == 0 {
        assert!(Instant::now() < deadline, "the connection was not accepted");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    while server.metrics.connections_open() > 0 {
        assert!(
            Instant::now() < deadline,
            "the server still holds a connection whose client reads nothing"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(server.metrics.write_timeouts(), 1);
    drop(socket);
}

/// A body trickled a byte at a time, each byte within the per-read
/// timeout, is cut once it falls below the minimum rate: 408 and close.
#[tokio::test]
async fn a_trickled_body_is_cut_at_the_minimum_rate() {
    let config = Config {
        body_read_timeout: Duration::from_millis(400),
        body_min_rate: 100,
        ..Config::default()
    };
    let service = service_fn(|req: Request<Incoming>| async move {
        let mut body = req.into_body();
        let read = body.read_all().await;
        Ok::<_, Infallible>(Response::new(format!("{:?}", read.map(|b| b.len()))))
    });
    let server = start(service, config).await;
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    socket
        .write_all(b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n")
        .await
        .unwrap();
    let started = Instant::now();
    // One byte every 100 ms: each read waits far less than the per-read
    // timeout, but 10 bytes/s is far below the minimum rate.
    let trickle = async {
        for _ in 0..100 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if socket.write_all(b"x").await.is_err() {
                break;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(5), trickle)
        .await
        .ok();
    let all = tokio::time::timeout(Duration::from_secs(5), read_to_close(&mut socket))
        .await
        .expect("the server closes the connection");
    assert_eq!(
        common::status_of(&all),
        Some(408),
        "{}",
        String::from_utf8_lossy(&all)
    );
    assert!(started.elapsed() < Duration::from_secs(8));
}

/// A body that keeps coming fast enough for every per-read and rate check
/// is still cut at `Config::body_timeout`: 408 and close, promptly.
#[tokio::test]
async fn a_body_that_never_ends_is_cut_at_the_total_deadline() {
    let config = Config {
        body_timeout: Some(Duration::from_millis(800)),
        ..Config::default()
    };
    let service = service_fn(|req: Request<Incoming>| async move {
        let mut body = req.into_body();
        let mut got = 0;
        let read = loop {
            match body.read_partial(usize::MAX).await {
                Ok(Some(piece)) => got += piece.len(),
                Ok(None) => break Ok(got),
                Err(e) => break Err(e),
            }
        };
        Ok::<_, Infallible>(Response::new(format!("{read:?}")))
    });
    let server = start(service, config).await;
    let socket = TcpStream::connect(server.addr).await.unwrap();
    let (mut reader, mut writer) = socket.into_split();
    writer
        .write_all(b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
        .await
        .unwrap();
    let started = Instant::now();
    // 2 KB/s in chunks every 50 ms, for up to 10 s: far above the minimum
    // rate, and never a read that waits long.
    let feeding = tokio::spawn(async move {
        for _ in 0..200 {
            tokio::time::sleep(Duration::from_millis(50)).await;
            let chunk = format!("64\r\n{}\r\n", "x".repeat(100));
            if writer.write_all(chunk.as_bytes()).await.is_err() {
                break;
            }
        }
    });
    let mut all = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), async {
        let mut buf = [0u8; 1024];
        loop {
            match tokio::io::AsyncReadExt::read(&mut reader, &mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => all.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await
    .expect("the server answers and closes");
    assert_eq!(
        common::status_of(&all),
        Some(408),
        "{}",
        String::from_utf8_lossy(&all)
    );
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(700), "{took:?}");
    assert!(took < Duration::from_secs(4), "{took:?}");
    feeding.abort();
}

/// A response body that sends `size` bytes every `period`, forever: a
/// stream of events (SSE-like).
struct Ticks {
    interval: tokio::time::Interval,
    size: usize,
}

impl http_body::Body for Ticks {
    type Data = bytes::Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<bytes::Bytes>, Infallible>>> {
        std::task::ready!(self.interval.poll_tick(cx));
        let frame = http_body::Frame::data(bytes::Bytes::from(vec![b'x'; self.size]));
        std::task::Poll::Ready(Some(Ok(frame)))
    }
}

/// A server whose connections have small send buffers (a listener's
/// buffer sizes pass to the sockets it accepts), so that a client that
/// reads little soon makes writes wait.
fn start_small_buffers<S, B>(
    service: S,
    config: Config,
) -> (std::net::SocketAddr, Arc<ringstream::server::Metrics>)
where
    S: tower_service::Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<ringstream::BoxError>,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<ringstream::BoxError>,
{
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_send_buffer_size(8192).unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let listener = socket.listen(16).unwrap();
    let server = ringstream::server::Server::from_listener(listener).with_config(config);
    let addr = server.local_addr().unwrap();
    let metrics = server.metrics();
    tokio::spawn(
        server
            .serve(service)
            .with_graceful_shutdown(std::future::pending::<()>()),
    );
    (addr, metrics)
}

/// A client connected with a small receive buffer.
async fn connect_small_window(addr: std::net::SocketAddr) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket.connect(addr).await.unwrap()
}

/// An event stream whose subscriber stopped reading is dropped at the
/// write deadline even though new events keep coming: an event that only
/// joins the write buffer is no progress.
#[tokio::test]
async fn a_stream_subscriber_that_stopped_reading_is_dropped() {
    let config = Config {
        write_timeout: Duration::from_millis(300),
        ..Config::default()
    };
    let service = service_fn(|_req: Request<Incoming>| async {
        let mut interval = tokio::time::interval(Duration::from_millis(5));
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        Ok::<_, Infallible>(Response::new(Ticks { interval, size: 64 }))
    });
    let (addr, metrics) = start_small_buffers(service, config);
    let mut socket = connect_small_window(addr).await;
    socket
        .write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let started = Instant::now();
    while metrics.connections_accepted() == 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // 12.8 KB/s: the socket buffers (about 17 KB) fill in under 2 s; 64 KiB
    // more in the write buffer would take 5 s more.
    while metrics.connections_open() > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "the server still holds a subscriber that reads nothing"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(metrics.write_timeouts(), 1);
    drop(socket);
}

/// A client that reads slowly but steadily gets its whole response, even
/// when sending what is left in the write buffer takes far longer than
/// the write timeout: only a write that makes no progress times out.
#[tokio::test]
async fn a_slow_but_steady_reader_gets_the_whole_response() {
    use tokio::io::AsyncReadExt;
    const LEN: usize = 60 * 1024;
    let config = Config {
        write_timeout: Duration::from_secs(1),
        ..Config::default()
    };
    // Small frames, all ready: they stay in the write buffer (below its
    // minimum write size) until the final flush.
    let service = service_fn(|_req: Request<Incoming>| async {
        let mut response = Response::new(Frames { left: LEN / 1024 });
        response
            .headers_mut()
            .insert(http::header::CONTENT_LENGTH, LEN.into());
        Ok::<_, Infallible>(response)
    });
    let (addr, metrics) = start_small_buffers(service, config);
    let mut socket = connect_small_window(addr).await;
    socket
        .write_all(b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let started = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 2048];
    // About 20 KB/s, a read every 100 ms: sending the 60 KB left in the
    // write buffer takes some 2 s, each wait far shorter than the timeout.
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        match socket.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
        assert!(started.elapsed() < Duration::from_secs(30));
    }
    let body_at = got.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    assert_eq!(got.len() - body_at, LEN, "the response was cut short");
    assert_eq!(metrics.write_timeouts(), 0);
}

/// A body of `left` frames of 1 KiB, all ready at once.
struct Frames {
    left: usize,
}

impl http_body::Body for Frames {
    type Data = bytes::Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<bytes::Bytes>, Infallible>>> {
        if self.left == 0 {
            return std::task::Poll::Ready(None);
        }
        self.left -= 1;
        let frame = http_body::Frame::data(bytes::Bytes::from(vec![b'y'; 1024]));
        std::task::Poll::Ready(Some(Ok(frame)))
    }
}

/// A connection closed by the end of the shutdown grace period is counted
/// closed like any other: no connection is open once the server is done.
#[tokio::test]
async fn connections_closed_at_the_shutdown_deadline_are_counted() {
    let config = Config {
        shutdown_timeout: Duration::from_millis(200),
        ..Config::default()
    };
    let service = service_fn(|_req: Request<Incoming>| async {
        std::future::pending::<()>().await;
        Ok::<_, Infallible>(Response::new(String::new()))
    });
    let server = start(service, config).await;
    let metrics = server.metrics.clone();
    let mut socket = TcpStream::connect(server.addr).await.unwrap();
    socket
        .write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while metrics.requests() == 0 {
        assert!(Instant::now() < deadline, "the request was not read");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::timeout(Duration::from_secs(5), server.shutdown())
        .await
        .expect("the shutdown ends")
        .unwrap();
    assert_eq!(metrics.connections_open(), 0);
    drop(socket);
}
