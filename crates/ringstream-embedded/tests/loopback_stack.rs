//! The connection pool on a real no_std TCP stack in one process:
//! embassy-net over the in-memory loopback link of `support`, with client
//! and server sockets on the same stack and simulated time.
//!
//! One test function (embassy's executor and tasks are statics) runs the
//! scenarios in sequence inside one executor run:
//!
//! 1. the sizes of the pool's futures and buffers, printed;
//! 2. a request/response round trip through the pool;
//! 3. bursts of twice as many clients as workers, repeated (picoserve
//!    #9: a server that "stops accepting connections and never
//!    recovers"): every client is served, queued then served, or answered
//!    `503` at once by the socket kept for refusals; none is reset, none
//!    hangs, and the pool serves normally afterwards (and, after the
//!    long-lived connections of 7, the same with the HTTP server);
//! 4. a burst of silent clients, which the pool's deadline cuts, after
//!    which it serves again;
//! 5. a lossy link (dropped and reordered frames): a 40 KiB payload still
//!    arrives intact, from the test handler and, printed and chunked, from
//!    the HTTP server;
//! 6. the HTTP server through a second pool: a GET and a 40 KB response
//!    printed with `write!` and sent chunked, on one kept-alive
//!    connection; a head that stalls is answered 408 at the head
//!    deadline; an idle kept-alive connection is closed at the idle
//!    deadline; a body that stalls is answered 408, and a client that
//!    stops reading is cut off, at the I/O deadline, while the other
//!    worker keeps serving; two idle kept-alive connections give their
//!    slots up, with a clean close, to two clients queued behind them.
//! 7. long-lived connections through a third pool (`live`): a silent
//!    WebSocket client pinged, then closed with 1001 at its idle deadline,
//!    and one that answers or talks kept; an idle event stream's
//!    keep-alive comments at their interval, and a stream whose client
//!    stops reading cut at the write deadline; a 1 MiB download and
//!    upload that do not hold up small requests on the other worker;
//!    each time the other worker serving meanwhile; then bursts as in 3;
//! 8. graceful shutdown of the first two pools: nothing listens any more
//!    at once; a queued connection is answered `503`; a handler that sees
//!    no release is cut at the grace deadline; an idle kept-alive HTTP
//!    connection closes at once, a request in flight is answered first;
//!    the listeners and workers return.

mod support;

#[path = "loopback_stack/live.rs"]
mod live;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use embassy_executor::{Executor, Spawner};
use embassy_net::{Runner, Stack, StackResources};
use embassy_time::{with_timeout, Duration, Instant, Timer};
use ringstream_embedded::pool::{Config, Pool, SocketBuffers};

use live::{LiveHttp, LivePool, LIVE_PORT, LIVE_SOCKETS, LIVE_WORKERS};
use ringstream_embedded::embedded_io_async::{Read, Write};
use ringstream_embedded::http::HttpHandler;
use ringstream_embedded::Handler;
use support::app::{payload_byte, App, PAYLOAD_LEN};
use support::http_app::{line, Demo, LINES};
use support::live::Live;
use support::loopback::{Faults, Link, Loopback};
use support::{connect, exchange, join_all, request, Client, Failure};

/// The port the pool listens on.
const PORT: u16 = 8080;
/// Worker tasks.
const WORKERS: usize = 2;
/// Listening sockets: two more than the workers, so one connection queues
/// and one socket is kept for refusals (`503`).
const SOCKETS: usize = 4;
/// Clients in a burst: twice the workers.
const BURST: usize = 2 * WORKERS;
/// Socket buffers of the pool, in bytes: the demo's 1 KiB + 1 KiB.
const RX: usize = 1024;
const TX: usize = 1024;
/// The pool's deadline per connection, in simulated time: longer than the
/// lossy link's 40 KiB takes.
const DEADLINE: Duration = Duration::from_secs(10);
/// The pool's socket timeout (no segment from the client for this long),
/// in simulated time: longer than the deadline, so that the silent burst
/// shows both.
const TIMEOUT: Duration = Duration::from_secs(15);
/// The pools' grace period after a shutdown, in simulated time.
const GRACE: Duration = Duration::from_secs(1);
/// The longest any client exchange may take, in simulated time.
const PATIENCE: Duration = Duration::from_secs(60);

type TestPool = Pool<'static, SOCKETS>;

/// A client's future, boxed to run beside others of its kind.
type Task<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + 'a>>;

/// The HTTP server's port.
const HTTP_PORT: u16 = 80;
/// The HTTP pool's sockets and workers: two queue places beyond the
/// workers, one of them kept for refusals.
const HTTP_SOCKETS: usize = 4;
const HTTP_WORKERS: usize = 2;
/// The HTTP server's head and idle deadlines, in simulated time.
const HEAD_TIMEOUT: Duration = Duration::from_secs(2);
const IDLE_TIMEOUT: Duration = Duration::from_secs(1);
/// The HTTP server's deadline on a stalled body read or response write.
const IO_TIMEOUT: Duration = Duration::from_secs(3);

type HttpPool = Pool<'static, HTTP_SOCKETS>;
/// The HTTP server of the tests: 1 KiB to receive, 512 bytes to transmit.
type Http = HttpHandler<Demo, 1024, 512>;

/// A handler that does nothing: the pool's own share of a worker's
/// future, when measured with it.
pub struct Nothing;

impl Handler for Nothing {
    async fn serve<IO: Read + Write>(&self, _io: &mut IO) -> Result<(), IO::Error> {
        Ok(())
    }
}

const HELLO: &[u8] = b"GET /hello HTTP/1.1\r\nHost: device\r\n\r\n";
const HELLO_RESPONSE: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";

#[embassy_executor::task]
async fn net(mut runner: Runner<'static, Loopback>) -> ! {
    runner.run().await
}

#[embassy_executor::task]
async fn clock() -> ! {
    support::advance_time().await
}

/// The first pool's tasks that have returned (after its shutdown).
static RETURNED: AtomicUsize = AtomicUsize::new(0);
/// The HTTP pool's tasks that have returned.
static HTTP_RETURNED: AtomicUsize = AtomicUsize::new(0);

#[embassy_executor::task]
async fn listener(pool: &'static TestPool) {
    pool.run_listener().await;
    RETURNED.fetch_add(1, Ordering::SeqCst);
}

#[embassy_executor::task(pool_size = WORKERS)]
async fn worker(pool: &'static TestPool) {
    pool.run_worker(&App).await;
    RETURNED.fetch_add(1, Ordering::SeqCst);
}

#[embassy_executor::task(pool_size = HTTP_WORKERS)]
async fn http_worker(pool: &'static HttpPool, http: &'static Http) {
    pool.run_http_worker(http).await;
    HTTP_RETURNED.fetch_add(1, Ordering::SeqCst);
}

#[embassy_executor::task]
async fn http_listener(pool: &'static HttpPool) {
    pool.run_listener().await;
    HTTP_RETURNED.fetch_add(1, Ordering::SeqCst);
}

#[embassy_executor::task]
async fn scenarios(
    stack: Stack<'static>,
    link: Link,
    pool: &'static TestPool,
    http: (&'static HttpPool, &'static Http),
    live: &'static LiveHttp,
    done: &'static AtomicBool,
) {
    sizes(pool, http.0, http.1);
    round_trip(stack).await;
    for round in 1..=3 {
        burst(stack, round, &TEST_HANDLER).await;
    }
    silent_burst(stack).await;
    lossy_link(stack, &link).await;
    http_keep_alive(stack, http.1).await;
    http_deadlines(stack).await;
    http_stalls(stack).await;
    http_idle_gives_way(stack).await;
    live::ws_silent_client(stack, live).await;
    live::ws_live_client(stack, live).await;
    live::sse_keep_alive(stack, live).await;
    live::sse_stalled_reader(stack, live).await;
    live::fairness(stack).await;
    Timer::after(Config::new(LIVE_PORT).linger).await;
    for round in 1..=3 {
        burst(stack, round, &HTTP_SERVER).await;
    }
    shutdown(stack, pool).await;
    http_shutdown(stack, http.0).await;
    done.store(true, Ordering::SeqCst);
}

#[test]
fn pool_on_embassy_net_over_loopback() {
    // The pool's sockets and every client of a burst at once.
    let (stack, runner, link) =
        support::stack::<{ SOCKETS + BURST + HTTP_SOCKETS + LIVE_SOCKETS }>();
    let buffers = Box::leak(Box::new(
        [const { SocketBuffers::<RX, TX>::new() }; SOCKETS],
    ));
    let config = Config {
        deadline: Some(DEADLINE),
        timeout: Some(TIMEOUT),
        grace: GRACE,
        ..Config::new(PORT)
    };
    let pool: &'static TestPool = Box::leak(Box::new(Pool::new(stack, config, buffers)));
    let http_buffers = Box::leak(Box::new(
        [const { SocketBuffers::<RX, TX>::new() }; HTTP_SOCKETS],
    ));
    let http_config = Config {
        grace: GRACE,
        ..Config::new(HTTP_PORT)
    };
    let http_pool: &'static HttpPool =
        Box::leak(Box::new(Pool::new(stack, http_config, http_buffers)));
    let http: &'static Http = Box::leak(Box::new(HttpHandler::new(
        Demo::default(),
        ringstream_embedded::Config {
            head_timeout: HEAD_TIMEOUT,
            idle_timeout: IDLE_TIMEOUT,
            io_timeout: IO_TIMEOUT,
            ..ringstream_embedded::Config::DEFAULT
        },
    )));
    let live_buffers = Box::leak(Box::new(
        [const { SocketBuffers::<RX, TX>::new() }; LIVE_SOCKETS],
    ));
    let live_pool: &'static LivePool = Box::leak(Box::new(Pool::new(
        stack,
        Config::new(LIVE_PORT),
        live_buffers,
    )));
    let live_http: &'static LiveHttp = Box::leak(Box::new(HttpHandler::new(
        Live::new(live::WS_IDLE, live::KEEP_ALIVE),
        live::server_config(),
    )));
    let done: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));

    let executor = Box::leak(Box::new(Executor::new()));
    let started = std::time::Instant::now();
    executor.run_until(
        |spawner: Spawner| {
            spawner.spawn(net(runner).unwrap());
            spawner.spawn(clock().unwrap());
            spawner.spawn(listener(pool).unwrap());
            for _ in 0..WORKERS {
                spawner.spawn(worker(pool).unwrap());
            }
            spawner.spawn(http_listener(http_pool).unwrap());
            for _ in 0..HTTP_WORKERS {
                spawner.spawn(http_worker(http_pool, http).unwrap());
            }
            spawner.spawn(live::live_listener(live_pool).unwrap());
            for _ in 0..LIVE_WORKERS {
                spawner.spawn(live::live_worker(live_pool, live_http).unwrap());
            }
            spawner
                .spawn(scenarios(stack, link, pool, (http_pool, http), live_http, done).unwrap());
        },
        // A hang fails the test instead of holding CI.
        || done.load(Ordering::SeqCst) || started.elapsed() > std::time::Duration::from_secs(120),
    );
    assert!(
        done.load(Ordering::SeqCst),
        "the scenarios did not finish within 120 s of real time"
    );
}

/// The RAM of a connection slot, as far as this step has one: the worker
/// task's future (which holds the handler's future), the listener's, the
/// pool, the socket buffers and smoltcp's state for one socket.
fn sizes(pool: &'static TestPool, http_pool: &'static HttpPool, http: &'static Http) {
    let worker_app = std::mem::size_of_val(&pool.run_worker(&App));
    let worker_http = std::mem::size_of_val(&http_pool.run_worker(http));
    let http_worker = std::mem::size_of_val(&http_pool.run_http_worker(http));
    let worker_nothing = std::mem::size_of_val(&pool.run_worker(&Nothing));
    let listener = std::mem::size_of_val(&pool.run_listener());
    let smoltcp_socket =
        std::mem::size_of::<StackResources<2>>() - std::mem::size_of::<StackResources<1>>();
    println!("worker future, test app handler (512-byte head buffer): {worker_app} bytes");
    println!("worker future, handler that does nothing (the pool's share): {worker_nothing} bytes");
    println!(
        "worker future, HTTP server with the test app (1 KiB + 512 B buffers inside): {worker_http} bytes"
    );
    println!(
        "run_http_worker future, HTTP server with the test app (buffers and Release inside): {http_worker} bytes"
    );
    println!("listener future: {listener} bytes");
    println!("Pool<{SOCKETS}>: {} bytes", std::mem::size_of::<TestPool>());
    println!(
        "Pool<1>: {} bytes, http::Release: {} bytes",
        std::mem::size_of::<Pool<'static, 1>>(),
        std::mem::size_of::<ringstream_embedded::http::Release>()
    );
    println!(
        "SocketBuffers<{RX}, {TX}>: {} bytes per socket",
        std::mem::size_of::<SocketBuffers<RX, TX>>()
    );
    println!("smoltcp socket storage: {smoltcp_socket} bytes per socket");
}

/// A request and its response, twice on fresh connections: a GET, and a
/// POST whose body comes back.
async fn round_trip(stack: Stack<'static>) {
    let response = with_timeout(PATIENCE, request(stack, PORT, HELLO))
        .await
        .expect("round trip within the patience")
        .expect("round trip");
    assert_eq!(response, HELLO_RESPONSE);

    let post = b"POST /echo HTTP/1.1\r\nHost: device\r\nContent-Length: 11\r\n\r\nhello, pool";
    let response = with_timeout(PATIENCE, request(stack, PORT, post))
        .await
        .expect("echo within the patience")
        .expect("echo");
    assert_eq!(
        response,
        b"HTTP/1.1 200 \r\nContent-Length: 11\r\nConnection: close\r\n\r\nhello, pool"
    );
}

/// What became of one client of a burst.
#[derive(Debug)]
enum Outcome {
    Served,
    /// Answered `503`, this long after it started to connect.
    Unavailable(Duration),
}

/// Whether `response` is the pool's refusal: the core's `503` with
/// `Retry-After: 1`, closing the connection.
fn is_unavailable(response: &[u8]) -> bool {
    let text = String::from_utf8_lossy(response);
    text.starts_with("HTTP/1.1 503 ")
        && text.contains("\r\nretry-after: 1\r\n")
        && text.contains("\r\nconnection: close\r\n")
}

/// A pool a burst is aimed at: its port, the request each client sends
/// and the response it expects when served.
struct Target {
    name: &'static str,
    port: u16,
    request: &'static [u8],
    response: &'static [u8],
}

/// The first pool, with the test handler.
const TEST_HANDLER: Target = Target {
    name: "test handler",
    port: PORT,
    request: HELLO,
    response: HELLO_RESPONSE,
};

/// The third pool, with the HTTP server.
const HTTP_SERVER: Target = Target {
    name: "http server",
    port: LIVE_PORT,
    request: b"GET /hello HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n",
    response: b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 5\r\n\
        connection: close\r\n\r\nhello",
};

// The burst's counts hold for the third pool as for the first.
const _: () = assert!(LIVE_SOCKETS == SOCKETS && LIVE_WORKERS == WORKERS);

/// `BURST` clients connect at once and only send their requests once every
/// connect has an answer, so the workers are busy while the others
/// arrive: `SOCKETS - 1` connections are accepted (`WORKERS` served at
/// once, the rest queued, then served), and the one the socket kept for
/// refusals accepts is answered `503` at once. No client is reset and none
/// hangs. Then the pool serves a request as usual.
async fn burst(stack: Stack<'static>, round: usize, target: &'static Target) {
    let Target {
        name,
        port,
        request: hello,
        response: hello_response,
    } = *target;
    // Every socket listens again after the previous round's closes.
    Timer::after(Duration::from_millis(200)).await;
    let answered = std::cell::Cell::new(0);
    let clients = (0..BURST)
        .map(|_| {
            let answered = &answered;
            Box::pin(async move {
                let mut client = Client::new();
                let mut socket = client.socket(stack);
                let started = Instant::now();
                let connected = connect(&mut socket, port).await;
                answered.set(answered.get() + 1);
                if let Err(failure) = connected {
                    return Err(failure).map_err(|f| (f, started.elapsed()));
                }
                while answered.get() < BURST {
                    support::yield_now().await;
                }
                let response = exchange(&mut socket, hello)
                    .await
                    .map_err(|f| (f, started.elapsed()))?;
                if is_unavailable(&response) {
                    return Ok(Outcome::Unavailable(started.elapsed()));
                }
                assert_eq!(
                    response,
                    hello_response,
                    "{name}, round {round}: a served client's response: {}",
                    String::from_utf8_lossy(&response)
                );
                Ok(Outcome::Served)
            }) as std::pin::Pin<Box<dyn std::future::Future<Output = _>>>
        })
        .collect();
    let outcomes: Vec<Outcome> = with_timeout(PATIENCE, join_all(clients))
        .await
        .unwrap_or_else(|_| panic!("{name}, round {round}: a client hung"))
        .into_iter()
        .map(|r| match r {
            Ok(outcome) => outcome,
            Err((failure, after)) => {
                panic!("{name}, round {round}: a client failed with {failure:?} after {after}")
            }
        })
        .collect();
    let served = outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::Served))
        .count();
    assert_eq!(served, SOCKETS - 1, "{name}, round {round}: {outcomes:?}");
    let unavailable_ms: Vec<u64> = outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::Unavailable(after) => Some(after.as_millis()),
            Outcome::Served => None,
        })
        .collect();
    assert_eq!(
        unavailable_ms.len(),
        BURST - (SOCKETS - 1),
        "{name}, round {round}: {outcomes:?}"
    );
    for ms in &unavailable_ms {
        assert!(*ms < 100, "{name}, round {round}: a 503 took {ms} ms");
    }
    println!("burst, {name}, round {round}: {served} served, 503 after {unavailable_ms:?} ms");

    let response = with_timeout(PATIENCE, request(stack, port, hello))
        .await
        .unwrap_or_else(|_| panic!("{name}, round {round}: the request after the burst hung"))
        .expect("the request after the burst");
    assert_eq!(response, hello_response);
}

/// `BURST` clients connect and send nothing. The two served at once are
/// reset at the pool's deadline; the queued one at the socket timeout
/// (its client silent all along), before a worker takes it; the last is
/// answered `503` at once. Then the pool serves again.
async fn silent_burst(stack: Stack<'static>) {
    Timer::after(Duration::from_millis(200)).await;
    let started = Instant::now();
    let clients = (0..BURST)
        .map(|_| {
            Box::pin(async move {
                let mut client = Client::new();
                let mut socket = client.socket(stack);
                connect(&mut socket, PORT).await?;
                // Wait, without sending, for the server to end it.
                let mut got = Vec::new();
                let mut buf = [0u8; 256];
                while let Ok(n @ 1..) = socket.read(&mut buf).await {
                    got.extend_from_slice(&buf[..n]);
                }
                Ok((started.elapsed(), got))
            })
                as std::pin::Pin<
                    Box<dyn std::future::Future<Output = Result<(Duration, Vec<u8>), Failure>>>,
                >
        })
        .collect();
    let outcomes = with_timeout(PATIENCE, join_all(clients))
        .await
        .expect("a silent client was never cut");
    let near = |after: Duration, mark: Duration| {
        after >= mark && after < mark + Duration::from_millis(100)
    };
    let cut_at = |mark: Duration| {
        outcomes
            .iter()
            .filter(|o| matches!(o, Ok((t, got)) if got.is_empty() && near(*t, mark)))
            .count()
    };
    let at_deadline = cut_at(DEADLINE);
    let at_timeout = cut_at(TIMEOUT);
    let unavailable = outcomes
        .iter()
        .filter(
            |o| matches!(o, Ok((t, got)) if is_unavailable(got) && *t < Duration::from_millis(100)),
        )
        .count();
    assert_eq!(
        (at_deadline, at_timeout, unavailable),
        (WORKERS, SOCKETS - 1 - WORKERS, BURST - (SOCKETS - 1)),
        "{outcomes:?}"
    );
    let cut_ms: Vec<u64> = outcomes
        .iter()
        .flatten()
        .map(|(t, _)| t.as_millis())
        .collect();
    println!("silent burst: ended after {cut_ms:?} ms, {unavailable} answered 503");

    let response = with_timeout(PATIENCE, request(stack, PORT, HELLO))
        .await
        .expect("the request after the silent burst hung")
        .expect("the request after the silent burst");
    assert_eq!(response, HELLO_RESPONSE);
}

/// One frame in 12 dropped and one in 9 held back behind the next: the
/// 40 KiB payload of the test handler arrives whole and in order, and so
/// does the HTTP server's 40 KB page, printed line by line and chunked.
async fn lossy_link(stack: Stack<'static>, link: &Link) {
    let before = link.counters();
    link.set_faults(Faults {
        drop_one_in: 12,
        reorder_one_in: 9,
    });
    let started = Instant::now();
    let response = with_timeout(
        PATIENCE,
        request(
            stack,
            PORT,
            b"GET /payload HTTP/1.1\r\nHost: device\r\n\r\n",
        ),
    )
    .await
    .expect("the payload within the patience")
    .unwrap_or_else(|f| {
        panic!(
            "the payload: {f:?} after {}, {:?}",
            started.elapsed(),
            link.counters()
        )
    });
    let took = started.elapsed();
    let between = link.counters();
    let page_started = Instant::now();
    let page = with_timeout(
        PATIENCE,
        request(
            stack,
            HTTP_PORT,
            b"GET /lines HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n",
        ),
    )
    .await
    .expect("the page within the patience")
    .unwrap_or_else(|f| {
        panic!(
            "the page: {f:?} after {}, {:?}",
            page_started.elapsed(),
            link.counters()
        )
    });
    let page_took = page_started.elapsed();
    link.set_faults(Faults::default());
    let after = link.counters();
    let expected: String = (0..LINES).map(line).collect();
    assert_eq!(lines_body(&page), expected);

    let head =
        format!("HTTP/1.1 200 \r\nContent-Length: {PAYLOAD_LEN}\r\nConnection: close\r\n\r\n");
    assert!(
        response.starts_with(head.as_bytes()),
        "{:?}",
        &response[..response.len().min(80)]
    );
    let body = &response[head.len()..];
    assert_eq!(body.len(), PAYLOAD_LEN);
    if let Some(i) = (0..PAYLOAD_LEN).find(|&i| body[i] != payload_byte(i)) {
        panic!("payload byte {i} differs");
    }
    for (name, from, to, ms) in [
        ("payload", before, between, took.as_millis()),
        ("page", between, after, page_took.as_millis()),
    ] {
        let dropped = to.dropped - from.dropped;
        let reordered = to.reordered - from.reordered;
        let frames = to.transmitted - from.transmitted;
        println!(
            "lossy link, {name}: {frames} frames, {dropped} dropped, {reordered} reordered, {ms} ms simulated"
        );
        assert!(
            dropped > 0 && reordered > 0,
            "the link was not lossy for the {name}: {from:?} to {to:?}"
        );
    }

    let response = with_timeout(PATIENCE, request(stack, PORT, HELLO))
        .await
        .expect("the request after the lossy link hung")
        .expect("the request after the lossy link");
    assert_eq!(response, HELLO_RESPONSE);
}

/// Reads from `socket` until `buf` holds `n` bytes.
async fn read_n(socket: &mut embassy_net::tcp::TcpSocket<'_>, n: usize) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while got.len() < n {
        let want = buf.len().min(n - got.len());
        match socket.read(&mut buf[..want]).await {
            Ok(0) | Err(_) => break,
            Ok(k) => got.extend_from_slice(&buf[..k]),
        }
    }
    got
}

/// The body of a `/lines` response that closes its connection, its
/// chunks decoded here (test side).
fn lines_body(response: &[u8]) -> String {
    let head = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n";
    assert!(
        response.starts_with(head),
        "{:?}",
        &response[..response.len().min(80)]
    );
    let mut wire = &response[head.len()..];
    let mut body = Vec::new();
    loop {
        let Some(eol) = wire.windows(2).position(|w| w == b"\r\n") else {
            panic!("the body cut short after {} bytes", body.len());
        };
        let size = usize::from_str_radix(std::str::from_utf8(&wire[..eol]).unwrap(), 16).unwrap();
        wire = &wire[eol + 2..];
        if size == 0 {
            assert_eq!(wire, b"\r\n");
            break;
        }
        let (Some(data), Some(rest)) = (wire.get(..size), wire.get(size + 2..)) else {
            panic!("the body cut short after {} bytes", body.len());
        };
        body.extend_from_slice(data);
        wire = rest;
    }
    String::from_utf8(body).expect("UTF-8 lines")
}

/// The HTTP server through the pool: a GET, then on the same connection
/// the 40 KB page printed line by line and sent chunked, every line's
/// formatter run once.
async fn http_keep_alive(stack: Stack<'static>, http: &'static Http) {
    let runs_before = http.app().formatter_runs.get();
    let mut client = Client::new();
    let mut socket = client.socket(stack);
    connect(&mut socket, HTTP_PORT)
        .await
        .expect("connect to the HTTP pool");
    socket
        .write_all(b"GET /hello HTTP/1.1\r\nHost: device\r\n\r\n")
        .await
        .expect("send");
    let hello = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 5\r\n\r\nhello";
    let response = with_timeout(PATIENCE, read_n(&mut socket, hello.len()))
        .await
        .expect("the first response within the patience");
    assert_eq!(response, hello);

    let response = with_timeout(
        PATIENCE,
        exchange(
            &mut socket,
            b"GET /lines HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n",
        ),
    )
    .await
    .expect("the page within the patience")
    .expect("the page");
    let body = lines_body(&response);
    let expected: String = (0..LINES).map(line).collect();
    assert_eq!(body, expected);
    assert_eq!(http.app().formatter_runs.get() - runs_before, LINES);
    println!(
        "http over the pool: /hello, then /lines ({} bytes) kept alive",
        expected.len()
    );
}

/// The HTTP server's deadlines, in simulated time: a head that stalls is
/// answered 408 at the head deadline; a kept-alive connection left idle is
/// closed at the idle deadline.
async fn http_deadlines(stack: Stack<'static>) {
    let near = |after: Duration, mark: Duration| {
        after >= mark && after < mark + Duration::from_millis(100)
    };

    let mut client = Client::new();
    let mut socket = client.socket(stack);
    connect(&mut socket, HTTP_PORT).await.expect("connect");
    let started = Instant::now();
    socket
        .write_all(b"GET /hello HTTP/1.1\r\nHo")
        .await
        .expect("send half a head");
    let mut response = Vec::new();
    let mut buf = [0u8; 256];
    while let Ok(n @ 1..) = socket.read(&mut buf).await {
        response.extend_from_slice(&buf[..n]);
    }
    let stalled = started.elapsed();
    assert!(
        response.starts_with(b"HTTP/1.1 408 "),
        "{:?}",
        String::from_utf8_lossy(&response)
    );
    assert!(near(stalled, HEAD_TIMEOUT), "408 after {stalled}");
    socket.close();
    let _ = socket.flush().await;
    drop(socket);

    let mut client = Client::new();
    let mut socket = client.socket(stack);
    connect(&mut socket, HTTP_PORT).await.expect("connect");
    socket
        .write_all(b"GET /hello HTTP/1.1\r\nHost: device\r\n\r\n")
        .await
        .expect("send");
    let hello = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 5\r\n\r\nhello";
    assert_eq!(read_n(&mut socket, hello.len()).await, hello);
    let idle_from = Instant::now();
    let end = socket.read(&mut buf).await;
    let idle = idle_from.elapsed();
    assert!(matches!(end, Ok(0) | Err(_)), "{end:?}");
    assert!(near(idle, IDLE_TIMEOUT), "closed after {idle} idle");
    println!(
        "http deadlines: 408 after {} ms of a stalled head, idle close after {} ms",
        stalled.as_millis(),
        idle.as_millis()
    );
}

/// Clients that stall: a body that stops coming is answered 408 at the
/// I/O deadline; a client that stops reading a 40 KB page holds one worker
/// until the I/O deadline (and the pool's linger) cut it off, while the
/// other worker serves at once.
async fn http_stalls(stack: Stack<'static>) {
    // Both workers done with the connections before (closed, lingering).
    Timer::after(Config::new(HTTP_PORT).linger).await;
    let mut client = Client::new();
    let mut socket = client.socket(stack);
    connect(&mut socket, HTTP_PORT).await.expect("connect");
    let started = Instant::now();
    socket
        .write_all(b"POST /count HTTP/1.1\r\nHost: device\r\nContent-Length: 10\r\n\r\nabc")
        .await
        .expect("send part of a body");
    let mut response = Vec::new();
    let mut buf = [0u8; 256];
    while let Ok(n @ 1..) = socket.read(&mut buf).await {
        response.extend_from_slice(&buf[..n]);
    }
    let stalled = started.elapsed();
    assert!(
        response.starts_with(b"HTTP/1.1 408 "),
        "{:?}",
        String::from_utf8_lossy(&response)
    );
    assert!(
        stalled >= IO_TIMEOUT && stalled < IO_TIMEOUT + Duration::from_millis(100),
        "408 after {stalled}"
    );
    socket.close();
    let _ = socket.flush().await;
    drop(socket);

    // A client that asks for the page and does not read it.
    let mut stuck_client = Client::new();
    let mut stuck = stuck_client.socket(stack);
    connect(&mut stuck, HTTP_PORT).await.expect("connect");
    stuck
        .write_all(b"GET /lines HTTP/1.1\r\nHost: device\r\n\r\n")
        .await
        .expect("send");
    Timer::after(Duration::from_millis(200)).await;
    // The other worker answers meanwhile.
    let asked = Instant::now();
    let response = with_timeout(
        PATIENCE,
        request(
            stack,
            HTTP_PORT,
            b"GET /hello HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n",
        ),
    )
    .await
    .expect("served beside a stalled client")
    .expect("the request beside a stalled client");
    let beside = asked.elapsed();
    assert!(response.ends_with(b"\r\n\r\nhello"), "{response:?}");
    assert!(beside < Duration::from_millis(100), "served after {beside}");
    // Past the I/O deadline and the pool's linger, the stalled connection
    // is gone: what it can still read ends, short of the page.
    Timer::after(IO_TIMEOUT + Config::new(HTTP_PORT).linger + Duration::from_secs(1)).await;
    let mut got = 0;
    let mut buf = [0u8; 1024];
    let ended = with_timeout(PATIENCE, async {
        while let Ok(n @ 1..) = stuck.read(&mut buf).await {
            got += n;
        }
    })
    .await;
    assert!(ended.is_ok(), "the stalled connection was never cut");
    assert!(got < LINES * support::http_app::LINE_LEN, "{got} bytes");
    println!(
        "http stalls: 408 after {} ms of a stalled body; beside a stalled reader, served in {} ms; the stalled reader got {got} bytes",
        stalled.as_millis(),
        beside.as_millis()
    );
}

/// Two clients hold kept-alive connections idle on both workers; two more
/// arrive together and are queued. The idle connections give their slots
/// up at once (a clean close, long before the idle deadline), and the two
/// new clients are served promptly.
async fn http_idle_gives_way(stack: Stack<'static>) {
    Timer::after(Config::new(HTTP_PORT).linger).await;
    let hello = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 5\r\n\r\nhello";
    let mut idle_clients = [Client::new(), Client::new()];
    let mut idle = Vec::new();
    for client in &mut idle_clients {
        let mut socket = client.socket(stack);
        connect(&mut socket, HTTP_PORT).await.expect("connect");
        socket
            .write_all(b"GET /hello HTTP/1.1\r\nHost: device\r\n\r\n")
            .await
            .expect("send");
        assert_eq!(read_n(&mut socket, hello.len()).await, hello);
        idle.push(socket);
    }
    // Both connections wait idle, well inside the idle deadline.
    Timer::after(Duration::from_millis(100)).await;
    let asked = Instant::now();
    let mut waits: Vec<Task<'_, (Vec<u8>, bool)>> = Vec::new();
    for mut socket in idle {
        waits.push(Box::pin(async move {
            let mut buf = [0u8; 64];
            let end = socket.read(&mut buf).await;
            socket.close();
            let _ = socket.flush().await;
            (Vec::new(), matches!(end, Ok(0)))
        }));
    }
    for _ in 0..2 {
        waits.push(Box::pin(async move {
            let response = request(
                stack,
                HTTP_PORT,
                b"GET /hello HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n",
            )
            .await
            .expect("a queued client");
            (response, true)
        }));
    }
    let ends = with_timeout(PATIENCE, join_all(waits))
        .await
        .expect("the idle connections gave way");
    let took = asked.elapsed();
    assert!(ends[0].1 && ends[1].1, "an idle client was reset");
    for (response, _) in &ends[2..] {
        assert!(
            response.ends_with(b"\r\n\r\nhello"),
            "{}",
            String::from_utf8_lossy(response)
        );
    }
    assert!(
        took < Duration::from_millis(200),
        "the queued clients were served after {took}"
    );
    println!(
        "http idle gives way: 2 idle kept-alive connections closed cleanly, 2 queued clients served in {} ms",
        took.as_millis()
    );
}

/// Waits until `returned` counts `tasks`, and says when.
async fn all_returned(returned: &AtomicUsize, tasks: usize) -> Duration {
    let from = Instant::now();
    with_timeout(PATIENCE, async {
        while returned.load(Ordering::SeqCst) < tasks {
            Timer::after(Duration::from_millis(1)).await;
        }
    })
    .await
    .expect("the pool's tasks returned");
    from.elapsed()
}

/// Whether a new client is refused with a reset, at once: nothing listens.
async fn refused_at_once(stack: Stack<'static>, port: u16) -> bool {
    let mut client = Client::new();
    let mut socket = client.socket(stack);
    let started = Instant::now();
    let refused = matches!(
        connect(&mut socket, port).await,
        Err(Failure::Connect(
            embassy_net::tcp::ConnectError::ConnectionReset
        ))
    );
    refused && started.elapsed() < Duration::from_millis(50)
}

/// The first pool shuts down with silent clients in its handler on both
/// workers (a handler that sees no release) and one more queued: nothing
/// listens any more at once, the queued client is answered `503` at once,
/// the served ones are cut at the grace deadline, and the listener and
/// workers return.
async fn shutdown(stack: Stack<'static>, pool: &'static TestPool) {
    Timer::after(Duration::from_millis(200)).await;
    let mut clients = [Client::new(), Client::new(), Client::new()];
    let mut silent = Vec::new();
    for client in &mut clients {
        let mut socket = client.socket(stack);
        connect(&mut socket, PORT).await.expect("connect");
        silent.push(socket);
    }
    Timer::after(Duration::from_millis(100)).await;
    let stopped = Instant::now();
    pool.shut_down();
    assert!(pool.is_shutting_down());
    assert!(
        refused_at_once(stack, PORT).await,
        "a client was accepted after the shutdown"
    );
    let ends: Vec<Task<'_, (Vec<u8>, Duration)>> = silent
        .into_iter()
        .map(|mut socket| {
            Box::pin(async move {
                let mut got = Vec::new();
                let mut buf = [0u8; 256];
                while let Ok(n @ 1..) = socket.read(&mut buf).await {
                    got.extend_from_slice(&buf[..n]);
                }
                (got, stopped.elapsed())
            }) as Task<'_, _>
        })
        .collect();
    let ends = with_timeout(PATIENCE, join_all(ends))
        .await
        .expect("the silent clients were cut");
    let cut = ends
        .iter()
        .filter(|(got, at)| {
            got.is_empty() && *at >= GRACE && *at < GRACE + Duration::from_millis(100)
        })
        .count();
    let unavailable = ends
        .iter()
        .filter(|(got, at)| is_unavailable(got) && *at < Duration::from_millis(100))
        .count();
    assert_eq!((cut, unavailable), (WORKERS, 1), "{ends:?}");
    let returned = stopped.elapsed() + all_returned(&RETURNED, WORKERS + 1).await;
    assert!(
        returned < GRACE + Config::new(PORT).linger,
        "returned {returned} after the shutdown"
    );
    let ends_ms: Vec<u64> = ends.iter().map(|(_, at)| at.as_millis()).collect();
    println!(
        "shutdown: the queued client answered 503 and the served ones cut at the 1 s grace, after {ends_ms:?} ms; tasks returned after {} ms",
        returned.as_millis()
    );
}

/// The HTTP pool shuts down with one kept-alive connection idle and one
/// request in flight (half its body sent): the idle one is closed at once,
/// cleanly; nothing listens any more; the request in flight is answered
/// when its body comes, within the grace period, and its connection then
/// closed; the listener and workers return.
async fn http_shutdown(stack: Stack<'static>, pool: &'static HttpPool) {
    Timer::after(Config::new(HTTP_PORT).linger).await;
    let hello = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 5\r\n\r\nhello";
    let mut idle_client = Client::new();
    let mut idle = idle_client.socket(stack);
    connect(&mut idle, HTTP_PORT).await.expect("connect");
    idle.write_all(b"GET /hello HTTP/1.1\r\nHost: device\r\n\r\n")
        .await
        .expect("send");
    assert_eq!(read_n(&mut idle, hello.len()).await, hello);

    let mut busy_client = Client::new();
    let mut busy = busy_client.socket(stack);
    connect(&mut busy, HTTP_PORT).await.expect("connect");
    busy.write_all(b"POST /count HTTP/1.1\r\nHost: device\r\nContent-Length: 10\r\n\r\nabc")
        .await
        .expect("send half a body");
    Timer::after(Duration::from_millis(100)).await;

    let stopped = Instant::now();
    pool.shut_down();
    let idle_end = async {
        let mut buf = [0u8; 64];
        let end = idle.read(&mut buf).await;
        let at = stopped.elapsed();
        idle.close();
        let _ = idle.flush().await;
        (end, at)
    };
    let in_flight = async {
        Timer::after(Duration::from_millis(300)).await;
        busy.write_all(b"defghij").await.expect("send the rest");
        let mut response = Vec::new();
        let mut buf = [0u8; 256];
        let end = loop {
            match busy.read(&mut buf).await {
                Ok(0) => break Ok(0),
                Ok(n) => response.extend_from_slice(&buf[..n]),
                Err(e) => break Err(e),
            }
        };
        let at = stopped.elapsed();
        busy.close();
        let _ = busy.flush().await;
        (response, end, at)
    };
    let ((idle_end, idle_at), (response, busy_end, busy_at), refused) = with_timeout(
        PATIENCE,
        join3(idle_end, in_flight, refused_at_once(stack, HTTP_PORT)),
    )
    .await
    .expect("the shutdown's clients");
    assert!(
        matches!(idle_end, Ok(0)),
        "the idle client saw {idle_end:?}"
    );
    assert!(
        idle_at < Duration::from_millis(100),
        "idle closed after {idle_at}"
    );
    assert!(refused, "a client was accepted after the shutdown");
    let text = String::from_utf8_lossy(&response);
    assert!(
        text.starts_with("HTTP/1.1 200 OK\r\n") && text.contains("\r\n10 "),
        "{text:?}"
    );
    assert!(
        matches!(busy_end, Ok(0)),
        "the request in flight ended with {busy_end:?}"
    );
    assert!(busy_at < GRACE, "answered after {busy_at}");
    let returned = stopped.elapsed() + all_returned(&HTTP_RETURNED, HTTP_WORKERS + 1).await;
    assert!(
        returned < GRACE + Config::new(HTTP_PORT).linger,
        "returned {returned} after the shutdown"
    );
    println!(
        "http shutdown: idle closed after {} ms, the request in flight answered and closed after {} ms, tasks returned after {} ms",
        idle_at.as_millis(),
        busy_at.as_millis(),
        returned.as_millis()
    );
}

/// Runs three futures together.
async fn join3<A, B, C>(
    a: impl std::future::Future<Output = A>,
    b: impl std::future::Future<Output = B>,
    c: impl std::future::Future<Output = C>,
) -> (A, B, C) {
    let (mut a, mut b, mut c) = (Box::pin(a), Box::pin(b), Box::pin(c));
    let (mut ra, mut rb, mut rc) = (None, None, None);
    std::future::poll_fn(|cx| {
        if ra.is_none() {
            if let std::task::Poll::Ready(v) = a.as_mut().poll(cx) {
                ra = Some(v);
            }
        }
        if rb.is_none() {
            if let std::task::Poll::Ready(v) = b.as_mut().poll(cx) {
                rb = Some(v);
            }
        }
        if rc.is_none() {
            if let std::task::Poll::Ready(v) = c.as_mut().poll(cx) {
                rc = Some(v);
            }
        }
        if ra.is_some() && rb.is_some() && rc.is_some() {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
    (ra.unwrap(), rb.unwrap(), rc.unwrap())
}
