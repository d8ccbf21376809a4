//! Server-sent events: encoding (HTML Living Standard §9.2.6, "Interpreting
//! an event stream"), keep-alive, the broadcaster's overflow policy, and
//! clients reading events over real sockets — including a client that stops
//! reading, the case where an event source that queues per client either
//! drops messages for everyone or locks up.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use http::Request;
use http_body::Body;
use http_body_util::BodyExt;
use ringstream::ringstream_core::h1::Decoder;
use ringstream::ringstream_core::Limits;
use ringstream::server::{service_fn, Server};
use ringstream::sse::{
    last_event_id, sse_response, Broadcaster, EncodedEvent, Event, EventStream, OverflowPolicy,
};
use ringstream::Incoming;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::{oneshot, watch};
use tokio::time::timeout;

fn wire(event: Event) -> Bytes {
    event.encode().into_bytes()
}

// ---- encoding --------------------------------------------------------------

#[test]
fn encodes_every_field_once_in_a_fixed_order() {
    let event = Event::new()
        .comment("note")
        .data("payload")
        .retry(Duration::from_millis(1500))
        .event("update")
        .id("17");
    assert_eq!(
        wire(event),
        ": note\nid: 17\nevent: update\nretry: 1500\ndata: payload\n\n"
    );
}

#[test]
fn multi_line_data_splits_at_lf_crlf_and_cr() {
    // HTML §9.2.6: "Lines must be separated by either a U+000D CARRIAGE RETURN
    // U+000A LINE FEED (CRLF) character pair, a single U+000A LINE FEED (LF)
    // character, or a single U+000D CARRIAGE RETURN (CR) character."
    assert_eq!(wire(Event::new().data("a\nb")), "data: a\ndata: b\n\n");
    assert_eq!(wire(Event::new().data("a\r\nb")), "data: a\ndata: b\n\n");
    assert_eq!(wire(Event::new().data("a\rb")), "data: a\ndata: b\n\n");
    assert_eq!(
        wire(Event::new().data("1\r\n2\r3\n4")),
        "data: 1\ndata: 2\ndata: 3\ndata: 4\n\n"
    );
    // A CR followed by LF is one break; LF followed by CR is two.
    assert_eq!(
        wire(Event::new().data("a\n\rb")),
        "data: a\ndata:\ndata: b\n\n"
    );
    // A trailing break is kept as an empty last line, so the client's data
    // ends with LF as well.
    assert_eq!(wire(Event::new().data("a\n")), "data: a\ndata:\n\n");
    assert_eq!(wire(Event::new().data("\n")), "data:\ndata:\n\n");
}

#[test]
fn empty_data_and_empty_event() {
    assert_eq!(wire(Event::new().data("")), "data:\n\n");
    assert_eq!(wire(Event::new()), "\n");
    assert_eq!(wire(Event::new().id("")), "id:\n\n");
}

#[test]
fn leading_space_in_a_value_survives_the_clients_strip() {
    // The client removes exactly one space after the colon.
    assert_eq!(wire(Event::new().data(" x")), "data:  x\n\n");
}

#[test]
fn comments_split_into_lines() {
    assert_eq!(wire(Event::new().comment("a\r\nb")), ": a\n: b\n\n");
    assert_eq!(wire(Event::new().comment("")), ":\n\n");
    assert_eq!(
        wire(Event::new().comment("one").comment("two").data("d")),
        ": one\n: two\ndata: d\n\n"
    );
}

#[test]
fn id_and_event_cannot_span_lines() {
    assert_eq!(wire(Event::new().id("1\r\n2")), "id: 12\n\n");
    assert_eq!(wire(Event::new().id("a\0b")), "id: ab\n\n");
    assert_eq!(wire(Event::new().event("ti\rck\n")), "event: tick\n\n");
    assert_eq!(Event::new().try_id("1\n2").unwrap_err().field(), "id");
    assert_eq!(Event::new().try_id("1\u{0}2").unwrap_err().field(), "id");
    assert_eq!(Event::new().try_event("a\rb").unwrap_err().field(), "event");
    assert_eq!(
        wire(Event::new().try_id("9").unwrap().try_event("e").unwrap()),
        "id: 9\nevent: e\n\n"
    );
}

#[test]
fn retry_is_whole_milliseconds() {
    assert_eq!(wire(Event::new().retry(Duration::ZERO)), "retry: 0\n\n");
    assert_eq!(
        wire(Event::new().retry(Duration::from_micros(2_999_999))),
        "retry: 2999\n\n"
    );
}

#[test]
fn encoded_bytes_are_shared_not_copied() {
    let encoded: EncodedEvent = Event::new().id("x").data("shared").into();
    assert_eq!(encoded.id(), Some("x"));
    let a = encoded.bytes();
    let b = encoded.clone().into_bytes();
    assert_eq!(a.as_ptr(), b.as_ptr());
}

#[test]
fn response_headers() {
    let broadcaster = Broadcaster::new(4, OverflowPolicy::DropOldest);
    let response = sse_response(broadcaster.subscribe(None));
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    assert_eq!(response.headers()["cache-control"], "no-cache");
    assert!(response.body().size_hint().exact().is_none());
}

#[test]
fn last_event_id_header() {
    let mut headers = http::HeaderMap::new();
    assert_eq!(last_event_id(&headers), None);
    headers.insert("last-event-id", http::HeaderValue::from_static(""));
    assert_eq!(last_event_id(&headers), None);
    headers.insert("Last-Event-ID", http::HeaderValue::from_static("abc-7"));
    assert_eq!(last_event_id(&headers), Some("abc-7"));
}

// ---- keep-alive ------------------------------------------------------------

fn poll_body(
    task: &mut tokio_test::task::Spawn<()>,
    body: &mut EventStream,
) -> Poll<Option<Bytes>> {
    task.enter(|cx, _| match Pin::new(body).poll_frame(cx) {
        Poll::Ready(Some(Ok(frame))) => Poll::Ready(Some(frame.into_data().unwrap())),
        Poll::Ready(Some(Err(e))) => panic!("event stream failed: {e}"),
        Poll::Ready(None) => Poll::Ready(None),
        Poll::Pending => Poll::Pending,
    })
}

#[tokio::test(start_paused = true)]
async fn keep_alive_after_the_interval_without_events() {
    let broadcaster = Broadcaster::new(8, OverflowPolicy::DropOldest)
        .with_keep_alive(Some(Duration::from_secs(15)));
    let mut body = broadcaster.subscribe(None);
    let mut task = tokio_test::task::spawn(());

    assert!(poll_body(&mut task, &mut body).is_pending());
    tokio::time::advance(Duration::from_secs(14)).await;
    assert!(poll_body(&mut task, &mut body).is_pending());
    tokio::time::advance(Duration::from_secs(1)).await;
    assert!(task.is_woken());
    assert_eq!(
        poll_body(&mut task, &mut body),
        Poll::Ready(Some(Bytes::from_static(b": keep-alive\n\n")))
    );
    assert!(poll_body(&mut task, &mut body).is_pending());

    // An event restarts the interval.
    tokio::time::advance(Duration::from_secs(5)).await;
    broadcaster.send(Event::new().data("tick"));
    assert!(task.is_woken());
    assert_eq!(
        poll_body(&mut task, &mut body),
        Poll::Ready(Some(Bytes::from_static(b"data: tick\n\n")))
    );
    assert!(poll_body(&mut task, &mut body).is_pending());
    tokio::time::advance(Duration::from_secs(14)).await;
    assert!(poll_body(&mut task, &mut body).is_pending());
    tokio::time::advance(Duration::from_secs(1)).await;
    assert_eq!(
        poll_body(&mut task, &mut body),
        Poll::Ready(Some(Bytes::from_static(b": keep-alive\n\n")))
    );
}

#[tokio::test(start_paused = true)]
async fn default_keep_alive_is_fifteen_seconds_and_can_be_disabled() {
    let (_tx, rx) = tokio::sync::mpsc::channel::<Event>(1);
    let mut body = EventStream::from_receiver(rx);
    let (_tx2, rx2) = tokio::sync::mpsc::channel::<Event>(1);
    let mut quiet = EventStream::from_receiver(rx2).without_keep_alive();
    let mut task = tokio_test::task::spawn(());

    assert!(poll_body(&mut task, &mut body).is_pending());
    assert!(poll_body(&mut task, &mut quiet).is_pending());
    tokio::time::advance(Duration::from_millis(14_999)).await;
    assert!(poll_body(&mut task, &mut body).is_pending());
    tokio::time::advance(Duration::from_millis(1)).await;
    assert_eq!(
        poll_body(&mut task, &mut body),
        Poll::Ready(Some(Bytes::from_static(b": keep-alive\n\n")))
    );
    tokio::time::advance(Duration::from_secs(3600)).await;
    assert!(poll_body(&mut task, &mut quiet).is_pending());
}

#[tokio::test]
async fn receiver_stream_ends_when_senders_are_gone() {
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    let body = EventStream::from_receiver(rx);
    tx.send(Event::new().id("1").data("a")).await.unwrap();
    tx.send(Event::new().id("2").data("b")).await.unwrap();
    drop(tx);
    let bytes = body.collect().await.unwrap().to_bytes();
    assert_eq!(bytes, "id: 1\ndata: a\n\nid: 2\ndata: b\n\n");
}

// ---- broadcaster -----------------------------------------------------------

fn ready(body: &mut EventStream) -> Option<Bytes> {
    let mut task = tokio_test::task::spawn(());
    match poll_body(&mut task, body) {
        Poll::Ready(frame) => frame,
        Poll::Pending => panic!("stream not ready"),
    }
}

#[tokio::test]
async fn every_subscriber_gets_every_event_in_order() {
    let broadcaster = Broadcaster::new(16, OverflowPolicy::DropOldest);
    let mut a = broadcaster.subscribe(None);
    let mut b = broadcaster.subscribe(None);
    for i in 0..10 {
        broadcaster.send(Event::new().id(i.to_string()).data(format!("event {i}")));
    }
    for i in 0..10 {
        let expected = format!("id: {i}\ndata: event {i}\n\n");
        assert_eq!(ready(&mut a).unwrap(), expected);
        assert_eq!(ready(&mut b).unwrap(), expected);
    }
    assert_eq!(broadcaster.sent(), 10);
    assert_eq!(broadcaster.dropped_total(), 0);
}

#[tokio::test]
async fn send_wakes_a_waiting_subscriber() {
    let broadcaster = Broadcaster::new(4, OverflowPolicy::DropOldest);
    let mut body = broadcaster.subscribe(None).without_keep_alive();
    let mut task = tokio_test::task::spawn(());
    assert!(poll_body(&mut task, &mut body).is_pending());
    assert!(!task.is_woken());
    broadcaster.send(Event::new().data("x"));
    assert!(task.is_woken());
    assert_eq!(
        poll_body(&mut task, &mut body),
        Poll::Ready(Some(Bytes::from_static(b"data: x\n\n")))
    );
}

#[tokio::test]
async fn drop_oldest_skips_and_counts_per_client_and_in_total() {
    let broadcaster = Broadcaster::new(4, OverflowPolicy::DropOldest);
    let mut slow = broadcaster.subscribe(None);
    let mut fast = broadcaster.subscribe(None);
    for i in 0..10 {
        broadcaster.send(Event::new().id(i.to_string()));
        assert_eq!(ready(&mut fast).unwrap(), format!("id: {i}\n\n"));
        // Memory stays bounded whatever the slow client does.
        assert!(broadcaster.retained() <= 4);
        assert!(slow.stats().unwrap().queued <= 4);
    }
    // Counted as soon as the events are evicted, before the slow stream is
    // polled again.
    assert_eq!(slow.stats().unwrap().dropped, 6);
    assert_eq!(fast.stats().unwrap().dropped, 0);
    assert_eq!(broadcaster.dropped_total(), 6);
    // The slow client resumes at the oldest retained event.
    for i in 6..10 {
        assert_eq!(ready(&mut slow).unwrap(), format!("id: {i}\n\n"));
    }
    assert_eq!(slow.stats().unwrap().dropped, 6);
    assert_eq!(slow.stats().unwrap().queued, 0);
    // The total survives the client leaving.
    drop(slow);
    assert_eq!(broadcaster.dropped_total(), 6);
    assert_eq!(broadcaster.subscriber_count(), 1);
}

#[tokio::test]
async fn drop_reports_tell_the_client_how_many_it_skipped() {
    let broadcaster = Broadcaster::new(2, OverflowPolicy::DropOldest).with_drop_reports(true);
    let mut body = broadcaster.subscribe(None);
    for i in 0..5 {
        broadcaster.send(Event::new().id(i.to_string()));
    }
    assert_eq!(ready(&mut body).unwrap(), ": dropped 3 events\n\n");
    assert_eq!(ready(&mut body).unwrap(), "id: 3\n\n");
    assert_eq!(ready(&mut body).unwrap(), "id: 4\n\n");
}

#[tokio::test]
async fn close_policy_ends_the_lagging_stream_only() {
    let broadcaster = Broadcaster::new(4, OverflowPolicy::Close);
    let mut slow = broadcaster.subscribe(None);
    let mut fast = broadcaster.subscribe(None);
    broadcaster.send(Event::new().id("0"));
    assert_eq!(ready(&mut slow).unwrap(), "id: 0\n\n");
    assert_eq!(ready(&mut fast).unwrap(), "id: 0\n\n");
    for i in 1..=5 {
        broadcaster.send(Event::new().id(i.to_string()));
        assert_eq!(ready(&mut fast).unwrap(), format!("id: {i}\n\n"));
    }
    assert_eq!(ready(&mut slow), None);
    assert!(slow.is_end_stream());
    assert_eq!(broadcaster.closed_for_lag(), 1);
    assert_eq!(broadcaster.dropped_total(), 1);
    assert_eq!(broadcaster.subscriber_count(), 1);
    broadcaster.send(Event::new().id("6"));
    assert_eq!(ready(&mut fast).unwrap(), "id: 6\n\n");
}

#[tokio::test]
async fn close_ends_streams_after_they_drain() {
    let broadcaster = Broadcaster::new(4, OverflowPolicy::DropOldest);
    let mut body = broadcaster.subscribe(None);
    broadcaster.send(Event::new().data("last"));
    broadcaster.close();
    broadcaster.send(Event::new().data("ignored"));
    assert!(broadcaster.is_closed());
    assert_eq!(ready(&mut body).unwrap(), "data: last\n\n");
    assert_eq!(ready(&mut body), None);
    assert_eq!(broadcaster.subscriber_count(), 0);
}

#[tokio::test]
async fn dropping_the_last_handle_closes() {
    let broadcaster = Broadcaster::new(4, OverflowPolicy::DropOldest);
    let clone = broadcaster.clone();
    let mut body = broadcaster.subscribe(None);
    drop(broadcaster);
    clone.send(Event::new().data("still open"));
    assert_eq!(ready(&mut body).unwrap(), "data: still open\n\n");
    let mut task = tokio_test::task::spawn(());
    assert!(poll_body(&mut task, &mut body).is_pending());
    drop(clone);
    assert!(task.is_woken());
    assert_eq!(poll_body(&mut task, &mut body), Poll::Ready(None));
}

#[tokio::test]
async fn last_event_id_replays_retained_events_after_it() {
    let broadcaster = Broadcaster::new(4, OverflowPolicy::DropOldest);
    for i in 1..=6 {
        broadcaster.send(Event::new().id(i.to_string()).data("x"));
    }
    broadcaster.send(Event::new().data("no id"));
    // Retained: 4, 5, 6, (no id).
    let mut resumed = broadcaster.subscribe(Some("5"));
    assert_eq!(ready(&mut resumed).unwrap(), "id: 6\ndata: x\n\n");
    assert_eq!(ready(&mut resumed).unwrap(), "data: no id\n\n");
    // Evicted or unknown ids: live events only.
    let mut evicted = broadcaster.subscribe(Some("2"));
    let mut latest = broadcaster.subscribe(Some("6"));
    broadcaster.send(Event::new().id("8"));
    assert_eq!(ready(&mut evicted).unwrap(), "id: 8\n\n");
    assert_eq!(ready(&mut latest).unwrap(), "data: no id\n\n");
    assert_eq!(ready(&mut latest).unwrap(), "id: 8\n\n");
}

#[tokio::test]
async fn capacity_zero_retains_one_event() {
    let broadcaster = Broadcaster::new(0, OverflowPolicy::DropOldest);
    assert_eq!(broadcaster.capacity(), 1);
    let mut body = broadcaster.subscribe(None);
    broadcaster.send(Event::new().id("a"));
    broadcaster.send(Event::new().id("b"));
    assert_eq!(broadcaster.retained(), 1);
    assert_eq!(ready(&mut body).unwrap(), "id: b\n\n");
}

#[tokio::test]
async fn many_silent_subscribers_cost_no_event_memory() {
    let broadcaster = Broadcaster::new(8, OverflowPolicy::DropOldest);
    let subscribers: Vec<_> = (0..1000).map(|_| broadcaster.subscribe(None)).collect();
    for i in 0..100 {
        broadcaster.send(Event::new().data(i.to_string()));
    }
    assert_eq!(broadcaster.retained(), 8);
    let stats = broadcaster.subscriber_stats();
    assert_eq!(stats.len(), 1000);
    assert!(stats.iter().all(|s| s.queued == 8 && s.dropped == 92));
    assert_eq!(broadcaster.dropped_total(), 92_000);
    drop(subscribers);
    assert_eq!(broadcaster.subscriber_count(), 0);
    assert_eq!(broadcaster.dropped_total(), 92_000);
}

// ---- over real sockets -----------------------------------------------------

struct Running {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Serve `broadcaster` on every path: one subscription per request, resumed
/// from the request's `Last-Event-ID`.
async fn serve(broadcaster: &Broadcaster) -> Running {
    let server = Server::bind("127.0.0.1:0").await.expect("bind");
    let addr = server.local_addr().expect("addr");
    let broadcaster = broadcaster.clone();
    let service = service_fn(move |req: Request<Incoming>| {
        let stream = broadcaster.subscribe(last_event_id(req.headers()));
        async move { Ok::<_, Infallible>(stream.into_http_response()) }
    });
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(server.serve(service).with_graceful_shutdown(async {
        let _ = stopped.await;
    }));
    Running {
        addr,
        stop: Some(stop),
    }
}

/// A raw HTTP/1.1 client reading a chunked event stream.
struct Client {
    socket: TcpStream,
    input: Vec<u8>,
    decoder: Decoder,
    body: Vec<u8>,
    finished: bool,
}

impl Client {
    async fn connect(addr: SocketAddr, extra: &str) -> Client {
        Client::connect_with(TcpStream::connect(addr).await.expect("connect"), extra).await
    }

    /// Connect with a tiny receive buffer, so that a client that does not
    /// read stops the server's writes quickly.
    async fn connect_small(addr: SocketAddr) -> Client {
        let socket = TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(4096).unwrap();
        Client::connect_with(socket.connect(addr).await.expect("connect"), "").await
    }

    async fn connect_with(mut socket: TcpStream, extra: &str) -> Client {
        let request = format!("GET /events HTTP/1.1\r\nHost: t\r\n{extra}\r\n");
        socket.write_all(request.as_bytes()).await.unwrap();
        let mut input = Vec::new();
        let head_end = loop {
            if let Some(at) = input.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            let mut buf = [0; 1024];
            let n = socket.read(&mut buf).await.unwrap();
            assert!(n > 0, "connection closed before the response head");
            input.extend_from_slice(&buf[..n]);
        };
        let head = String::from_utf8(input[..head_end].to_vec())
            .unwrap()
            .to_ascii_lowercase();
        assert!(head.starts_with("http/1.1 200"), "{head}");
        assert!(
            head.contains("content-type: text/event-stream\r\n"),
            "{head}"
        );
        assert!(head.contains("cache-control: no-cache\r\n"), "{head}");
        assert!(head.contains("transfer-encoding: chunked\r\n"), "{head}");
        input.drain(..head_end);
        Client {
            socket,
            input,
            decoder: Decoder::chunked(Limits::DEFAULT),
            body: Vec::new(),
            finished: false,
        }
    }

    /// The next event's text (keep-alive comments skipped), or `None` when
    /// the response ended.
    async fn next_event(&mut self) -> Option<String> {
        loop {
            while let Some(at) = self.body.windows(2).position(|w| w == b"\n\n") {
                let event: Vec<u8> = self.body.drain(..at + 2).collect();
                let event = String::from_utf8(event).unwrap();
                if event != ": keep-alive\n\n" {
                    return Some(event);
                }
            }
            if self.finished {
                assert!(self.body.is_empty(), "partial event at the end");
                return None;
            }
            let progress = self.decoder.decode(&self.input).expect("chunked framing");
            self.body
                .extend_from_slice(&self.input[progress.data.clone()]);
            self.input.drain(..progress.consumed);
            self.finished = progress.finished;
            if progress.consumed == 0 && !self.finished {
                let mut buf = [0; 16 * 1024];
                let n = self.socket.read(&mut buf).await.unwrap();
                assert!(n > 0, "connection closed inside the event stream");
                self.input.extend_from_slice(&buf[..n]);
            }
        }
    }
}

const DEADLINE: Duration = Duration::from_secs(10);

#[tokio::test]
async fn events_arrive_in_order_over_a_socket() {
    let broadcaster = Broadcaster::new(64, OverflowPolicy::DropOldest);
    let running = serve(&broadcaster).await;
    let mut client = Client::connect(running.addr, "").await;
    while broadcaster.subscriber_count() < 1 {
        tokio::task::yield_now().await;
    }
    broadcaster.send(
        Event::new()
            .id("1")
            .event("greeting")
            .retry(Duration::from_secs(2))
            .data("hello\r\nworld"),
    );
    broadcaster.send(Event::new().comment("just a note").id("2").data(""));
    broadcaster.send(Event::new().id("3").data("x".repeat(100_000)));
    let first = timeout(DEADLINE, client.next_event())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        first,
        "id: 1\nevent: greeting\nretry: 2000\ndata: hello\ndata: world\n\n"
    );
    let second = timeout(DEADLINE, client.next_event())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(second, ": just a note\nid: 2\ndata:\n\n");
    let third = timeout(DEADLINE, client.next_event())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(third, format!("id: 3\ndata: {}\n\n", "x".repeat(100_000)));

    // Closing the broadcaster finishes the chunked response cleanly.
    broadcaster.close();
    assert_eq!(timeout(DEADLINE, client.next_event()).await.unwrap(), None);
}

#[tokio::test]
async fn last_event_id_header_resumes_a_reconnecting_client() {
    let broadcaster = Broadcaster::new(64, OverflowPolicy::DropOldest);
    let running = serve(&broadcaster).await;
    for i in 1..=5 {
        broadcaster.send(Event::new().id(i.to_string()).data(format!("n{i}")));
    }
    let mut client = Client::connect(running.addr, "Last-Event-ID: 3\r\n").await;
    for i in 4..=5 {
        let event = timeout(DEADLINE, client.next_event())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(event, format!("id: {i}\ndata: n{i}\n\n"));
    }
    broadcaster.send(Event::new().id("6").data("n6"));
    let event = timeout(DEADLINE, client.next_event())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(event, "id: 6\ndata: n6\n\n");
}

/// Spawn a reader that publishes the number of the last event received (its
/// id plus one) and checks that ids arrive consecutively from `first`.
fn spawn_reader(mut client: Client, first: u64) -> watch::Receiver<u64> {
    let (tx, rx) = watch::channel(first);
    tokio::spawn(async move {
        let mut expected = first;
        while let Some(event) = client.next_event().await {
            let id: u64 = event
                .strip_prefix("id: ")
                .and_then(|rest| rest.split('\n').next())
                .and_then(|id| id.parse().ok())
                .unwrap_or_else(|| panic!("event without id: {event:?}"));
            assert_eq!(id, expected, "fast client missed or reordered an event");
            expected += 1;
            if tx.send(expected).is_err() {
                return;
            }
        }
    });
    rx
}

/// Send events of about 1 KiB in bursts of 8 while `fast` keeps up, until
/// `done` says the slow client has fallen behind; every burst must reach the
/// fast client within the deadline. Returns the number of events sent.
async fn send_until(
    broadcaster: &Broadcaster,
    fast: &mut watch::Receiver<u64>,
    mut done: impl FnMut(&Broadcaster) -> bool,
) -> u64 {
    let padding = "p".repeat(1000);
    let mut sent = 0u64;
    let mut after_done = None;
    while after_done != Some(0) {
        for _ in 0..8 {
            broadcaster.send(Event::new().id(sent.to_string()).data(&*padding));
            sent += 1;
        }
        timeout(Duration::from_secs(5), fast.wait_for(|&got| got >= sent))
            .await
            .expect("the fast client fell behind a slow one")
            .expect("fast reader failed");
        assert!(broadcaster.retained() <= broadcaster.capacity());
        for stats in broadcaster.subscriber_stats() {
            assert!(stats.queued <= broadcaster.capacity());
        }
        assert!(sent < 200_000, "the slow client never fell behind");
        after_done = match after_done {
            None if done(broadcaster) => Some(20),
            None => None,
            Some(n) => Some(n - 1),
        };
    }
    sent
}

#[tokio::test]
async fn a_client_that_never_reads_drops_events_while_others_keep_up() {
    let broadcaster = Broadcaster::new(32, OverflowPolicy::DropOldest).with_keep_alive(None);
    let running = serve(&broadcaster).await;
    let slow = Client::connect_small(running.addr).await;
    let fast = Client::connect(running.addr, "").await;
    while broadcaster.subscriber_count() < 2 {
        tokio::task::yield_now().await;
    }
    let mut fast = spawn_reader(fast, 0);
    // Subscription order: the slow client subscribed first.
    let slow_id = broadcaster.subscriber_stats()[0].id;
    let slow_dropped = |b: &Broadcaster| {
        b.subscriber_stats()
            .iter()
            .find(|s| s.id == slow_id)
            .map_or(0, |s| s.dropped)
    };
    let sent = send_until(&broadcaster, &mut fast, |b| slow_dropped(b) > 0).await;

    let stats = broadcaster.subscriber_stats();
    let slow_stats = stats.iter().find(|s| s.id == slow_id).unwrap();
    let fast_stats = stats.iter().find(|s| s.id != slow_id).unwrap();
    assert!(slow_stats.dropped > 0);
    assert!(slow_stats.queued <= 32);
    assert_eq!(fast_stats.dropped, 0);
    assert_eq!(broadcaster.dropped_total(), slow_stats.dropped);
    assert_eq!(*fast.borrow(), sent);
    assert_eq!(broadcaster.subscriber_count(), 2);
    eprintln!(
        "sent {sent} events; the client that never reads skipped {}",
        slow_stats.dropped
    );
    drop(slow);
}

#[tokio::test]
async fn close_policy_ends_a_slow_clients_stream() {
    let broadcaster = Broadcaster::new(32, OverflowPolicy::Close).with_keep_alive(None);
    let running = serve(&broadcaster).await;
    let mut slow = Client::connect_small(running.addr).await;
    let fast = Client::connect(running.addr, "").await;
    while broadcaster.subscriber_count() < 2 {
        tokio::task::yield_now().await;
    }
    let mut fast = spawn_reader(fast, 0);
    let slow_id = broadcaster.subscriber_stats()[0].id;
    let slow_behind = |b: &Broadcaster| {
        b.subscriber_stats()
            .iter()
            .find(|s| s.id == slow_id)
            .is_some_and(|s| s.dropped > 0)
    };
    send_until(&broadcaster, &mut fast, slow_behind).await;

    // Now the slow client reads: a gapless prefix of the events, then the
    // end of the response.
    let mut received = 0u64;
    while let Some(event) = timeout(DEADLINE, slow.next_event())
        .await
        .expect("slow client stalled")
    {
        assert!(event.starts_with(&format!("id: {received}\n")), "{event:?}");
        received += 1;
    }
    assert!(received > 0);
    assert!(received < broadcaster.sent());
    assert_eq!(broadcaster.closed_for_lag(), 1);
    assert_eq!(broadcaster.subscriber_count(), 1);

    // The fast client is still subscribed and still receives.
    let next = broadcaster.sent();
    broadcaster.send(Event::new().id(next.to_string()));
    timeout(DEADLINE, fast.wait_for(|&got| got > next))
        .await
        .expect("fast client stalled")
        .unwrap();
}
