//! Server-sent events (`sse::EventStream`, `sse::Broadcaster`) over tokio
//! sockets: the exact bytes of events, multi-line data, a refused field,
//! three clients fed from one ring, a client that does not read falling
//! behind while the others and the publisher go on, `Last-Event-ID`
//! resume and the keep-alive comment. Each test runs under the counting
//! allocator of `tokio_tcp.rs`: streaming events allocates nothing.

use std::cell::Cell;
use std::rc::Rc;

use embassy_time::{Duration, MockDriver};
use ringstream_embedded::embedded_io_async::{Read, Write};
use ringstream_embedded::http::{App, Error, Request, Responder, Sent};
use ringstream_embedded::sse::{
    Broadcaster, Ended, Event, EventStream, InvalidField, OverflowPolicy, PublishError, Received,
    DEFAULT_KEEP_ALIVE, LAST_EVENT_ID,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{read_exact, read_to_close, request, split_head, with_app};

/// The ring of the test: 8 events, 4 KiB, 4 clients.
type Events = Broadcaster<8, 4096, 4>;

/// Longest event the test publishes, in bytes (the stream's scratch).
const SCRATCH: usize = 1200;

/// The head of every event stream.
const STREAM_HEAD: &str = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
    cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n";

struct Live {
    events: Events,
    keep_alive: Duration,
    /// How each `/events` stream ended.
    ended: Cell<Option<Ended>>,
}

impl Live {
    fn new(policy: OverflowPolicy) -> Live {
        Live {
            events: Broadcaster::new(policy),
            keep_alive: DEFAULT_KEEP_ALIVE,
            ended: Cell::new(None),
        }
    }
}

impl App for Live {
    async fn handle<IO: Read + Write>(
        &self,
        request: &Request<'_>,
        responder: &mut Responder<'_, IO>,
    ) -> Result<Sent, Error<IO::Error>> {
        match request.path() {
            "/events" => {
                let Some(mut subscriber) = self.events.subscribe(request.field(LAST_EVENT_ID))
                else {
                    return responder.send(503, &[("retry-after", b"1")], b"").await;
                };
                let mut stream = EventStream::start(responder, &[])
                    .await?
                    .with_keep_alive(self.keep_alive);
                let mut scratch = [0u8; SCRATCH];
                let ended = stream.forward(&mut subscriber, &mut scratch).await?;
                self.ended.set(Some(ended));
                stream.finish().await
            }
            "/countdown" => {
                let mut stream = EventStream::start(responder, &[]).await?;
                let first = Event::new()
                    .comment("three\nlines\r\nhere")
                    .retry(Duration::from_millis(2500));
                stream.send(&first).await?;
                match Event::new().try_id("7") {
                    Ok(e) => {
                        stream
                            .send(&e.data("line one\r\nline two\rthree\n"))
                            .await?
                    }
                    Err(_) => unreachable!("a good id"),
                }
                // A bad id is refused before anything is written: the
                // stream goes on, well-formed.
                match Event::new().try_id("8\n9") {
                    Ok(e) => stream.send(&e.data("never")).await?,
                    Err(InvalidField { .. }) => {
                        stream.send(&Event::new().comment("refused id")).await?
                    }
                }
                match Event::new().try_event("tick\r") {
                    Ok(e) => stream.send(&e.data("never")).await?,
                    Err(e) => stream.send(&Event::new().comment(e.field())).await?,
                }
                stream
                    .send(&Event::new().try_event("done").unwrap().data(""))
                    .await?;
                stream.finish().await
            }
            _ => responder.send(404, &[], b"").await,
        }
    }
}

/// The chunk a flushed event travels in.
fn chunk(event: &[u8]) -> Vec<u8> {
    let mut wire = format!("{:x}\r\n", event.len()).into_bytes();
    wire.extend_from_slice(event);
    wire.extend_from_slice(b"\r\n");
    wire
}

/// Opens `/events` (with `extra` fields) and reads the stream's head.
async fn open(port: u16, extra: &str) -> TcpStream {
    let mut stream = super::connect(port).await;
    let req = format!("GET /events HTTP/1.1\r\nHost: d\r\n{extra}\r\n");
    stream.write_all(req.as_bytes()).await.unwrap();
    let head = read_exact(&mut stream, STREAM_HEAD.len()).await;
    assert_eq!(String::from_utf8_lossy(&head), STREAM_HEAD);
    stream
}

/// Waits (in tokio's time, never embassy's) until `ready` holds.
async fn until(mut ready: impl FnMut() -> bool) {
    tokio::time::timeout(std::time::Duration::from_secs(10), async {
        while !ready() {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("in time");
}

/// WHATWG HTML §9.2.6: an event with an id, multi-line data (CR, LF and
/// CRLF each end a line), a comment of three lines, `retry`; a refused
/// `id` and `event` type; the event type `done` with empty data — each
/// event flushed as its own chunk, the stream ended cleanly.
#[tokio::test]
async fn events_have_exact_bytes_and_bad_fields_are_refused() {
    with_app(
        Live::new(OverflowPolicy::DropOldest),
        |port, _| async move {
            let response = request(
                port,
                b"GET /countdown HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n",
            )
            .await;
            let (head, body) = split_head(&response);
            assert_eq!(
                head,
                STREAM_HEAD.replace("\r\n\r\n", "\r\nconnection: close\r\n\r\n")
            );
            let mut expected = Vec::new();
            for event in [
                &b": three\n: lines\n: here\nretry: 2500\n\n"[..],
                b"id: 7\ndata: line one\ndata: line two\ndata: three\ndata:\n\n",
                b": refused id\n\n",
                b": event\n\n",
                b"event: done\ndata:\n\n",
            ] {
                expected.extend(chunk(event));
            }
            expected.extend_from_slice(b"0\r\n\r\n");
            assert_eq!(
                String::from_utf8_lossy(body),
                String::from_utf8_lossy(&expected)
            );
        },
    )
    .await;
}

/// The typed errors: a field with a line break (or NUL in an id), an
/// event longer than the ring, publishing after `close`.
#[test]
fn bad_values_get_typed_errors() {
    assert_eq!(Event::new().try_id("1\r").unwrap_err().field(), "id");
    assert_eq!(Event::new().try_id("1\0").unwrap_err().field(), "id");
    assert_eq!(Event::new().try_event("a\nb").unwrap_err().field(), "event");
    assert!(Event::new().try_event("a\0b").is_ok());
    let small: Broadcaster<2, 16, 1> = Broadcaster::new(OverflowPolicy::Close);
    let long = "x".repeat(16);
    assert_eq!(
        small.publish(&Event::new().data(&long)),
        Err(PublishError::TooLarge)
    );
    assert_eq!(small.retained(), 0);
    small.close();
    assert_eq!(
        small.publish(&Event::new().data("x")),
        Err(PublishError::Closed)
    );
}

/// Three clients of one broadcaster receive the same events, byte for
/// byte, each as it is published; the ring holds each event once.
#[tokio::test]
async fn three_clients_receive_the_same_events() {
    with_app(
        Live::new(OverflowPolicy::DropOldest),
        |port, app| async move {
            let mut clients = Vec::new();
            for _ in 0..3 {
                clients.push(open(port, "").await);
            }
            until(|| app.events.subscriber_count() == 3).await;
            for (id, data) in [("1", "21.5"), ("2", "a\nb"), ("3", "")] {
                let event = Event::new().try_id(id).unwrap().data(data);
                app.events.publish(&event).unwrap();
                let mut wire = [0u8; 64];
                let n = event.encode_into(&mut wire).unwrap();
                let expected = chunk(&wire[..n]);
                for client in &mut clients {
                    assert_eq!(read_exact(client, expected.len()).await, expected);
                }
            }
            assert_eq!(app.events.retained(), 3);
            // A fourth and fifth: the fifth finds no place.
            let _fourth = open(port, "").await;
            until(|| app.events.subscriber_count() == 4).await;
            let refused = request(
                port,
                b"GET /events HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n",
            )
            .await;
            assert!(refused.starts_with(b"HTTP/1.1 503 "), "{refused:?}");
            // Closing ends every stream cleanly.
            app.events.close();
            for client in &mut clients {
                assert_eq!(read_exact(client, 5).await, b"0\r\n\r\n");
            }
            assert_eq!(app.ended.get(), Some(Ended::Closed));
        },
    )
    .await;
}

/// A reconnecting `EventSource` sends `Last-Event-ID`: it gets the events
/// after that one while the ring still holds it, else only new events.
#[tokio::test]
async fn last_event_id_resumes_from_the_ring() {
    with_app(
        Live::new(OverflowPolicy::DropOldest),
        |port, app| async move {
            for id in ["1", "2", "3"] {
                let event = Event::new().try_id(id).unwrap().data(id);
                app.events.publish(&event).unwrap();
            }
            let mut resumed = open(port, "Last-Event-ID: 2\r\n").await;
            let expected = chunk(b"id: 3\ndata: 3\n\n");
            assert_eq!(read_exact(&mut resumed, expected.len()).await, expected);
            let mut unknown = open(port, "Last-Event-ID: 99\r\n").await;
            until(|| app.events.subscriber_count() == 2).await;
            app.events
                .publish(&Event::new().try_id("4").unwrap().data("4"))
                .unwrap();
            let expected = chunk(b"id: 4\ndata: 4\n\n");
            assert_eq!(read_exact(&mut unknown, expected.len()).await, expected);
            assert_eq!(read_exact(&mut resumed, expected.len()).await, expected);
        },
    )
    .await;
}

/// An idle stream sends `: keep-alive` after the interval. The interval is
/// 50 ms of embassy's simulated time, advanced here by hand; every other
/// deadline of the tests is seconds away.
#[tokio::test]
async fn idle_stream_sends_a_keep_alive_comment() {
    let mut live = Live::new(OverflowPolicy::DropOldest);
    live.keep_alive = Duration::from_millis(50);
    with_app(live, |port, app| async move {
        let mut client = open(port, "").await;
        until(|| app.events.subscriber_count() == 1).await;
        // Let the server task reach its wait, then advance the clock.
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        MockDriver::get().advance(Duration::from_millis(50));
        let expected = chunk(b": keep-alive\n\n");
        assert_eq!(read_exact(&mut client, expected.len()).await, expected);
        // An event after it arrives as usual.
        app.events.publish(&Event::new().data("x")).unwrap();
        let expected = chunk(b"data: x\n\n");
        assert_eq!(read_exact(&mut client, expected.len()).await, expected);
    })
    .await;
}

/// Bytes of data in each event of the slow-client test.
const BIG_EVENT: usize = 1000;

/// Events published in the slow-client test: 12 MB, three times what the
/// kernel lets a socket buffer on either side.
const BIG_EVENTS: usize = 12_000;

/// ESPAsyncWebServer's "Too many messages queued": a client that stops
/// reading. The ring holds 4 of these events; the publisher publishes
/// 12 MB without ever waiting; two clients that read get every event, in
/// order, with no gap; the client that did not read, once it reads again,
/// gets what its socket held, then the policy's answer: a `: dropped N
/// events` comment and the newest events, or the end of the stream.
async fn slow_client_falls_behind(policy: OverflowPolicy) {
    with_app(Live::new(policy), |port, app| async move {
        // The slow client's receive buffer is small, so its socket fills.
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(4096).unwrap();
        let mut slow = socket.connect(([127, 0, 0, 1], port).into()).await.unwrap();
        slow.write_all(b"GET /events HTTP/1.1\r\nHost: d\r\n\r\n")
            .await
            .unwrap();
        let mut fast = Vec::new();
        for _ in 0..2 {
            fast.push(open(port, "").await);
        }
        until(|| app.events.subscriber_count() == 3).await;

        // The fast clients read in their own tasks, counting whole events.
        let counts: Vec<Rc<Cell<usize>>> = (0..2).map(|_| Rc::new(Cell::new(0))).collect();
        let _readers: Vec<_> = fast
            .into_iter()
            .zip(&counts)
            .map(|(mut client, count)| {
                let count = Rc::clone(count);
                tokio::task::spawn_local(async move {
                    // The last bytes read, so a marker cut between two
                    // reads is still found.
                    let mut window = Vec::new();
                    let mut buf = vec![0u8; 64 * 1024];
                    while count.get() < BIG_EVENTS {
                        let n = client.read(&mut buf).await.unwrap();
                        assert!(n > 0, "the fast client's stream ended");
                        let keep = window.len().saturating_sub(16);
                        window.drain(..keep);
                        let seen = window.len();
                        window.extend_from_slice(&buf[..n]);
                        // Each event is one chunk, ending "\n\n\r\n";
                        // markers wholly in the old bytes were counted.
                        let ends = window
                            .windows(4)
                            .enumerate()
                            .filter(|(i, w)| *w == b"\n\n\r\n" && i + 4 > seen)
                            .count();
                        assert!(
                            !window.windows(9).any(|w| w == b": dropped"),
                            "a fast client fell behind"
                        );
                        count.set(count.get() + ends);
                    }
                })
            })
            .collect();
        let data = "x".repeat(BIG_EVENT);
        let mut ids = Vec::new();
        for i in 1..=BIG_EVENTS {
            ids.push(i.to_string());
        }
        for (i, id) in ids.iter().enumerate() {
            let event = Event::new().try_id(id).unwrap().data(&data);
            // Never waits, whatever the slow client does.
            app.events.publish(&event).unwrap();
            let published = i + 1;
            until(|| counts.iter().all(|c| c.get() >= published)).await;
        }
        assert_eq!(app.events.dropped_total(), 0, "nobody has noticed yet");

        // The slow client reads again.
        app.events.close();
        let wire = read_until_end(&mut slow).await;
        let text = String::from_utf8_lossy(&wire);
        let last = format!("id: {BIG_EVENTS}\n");
        match policy {
            OverflowPolicy::DropOldest => {
                let at = text.find(": dropped ").expect("a drop report");
                let report = &text[at..];
                let skipped: u64 = report[": dropped ".len()..report.find(" events").unwrap()]
                    .parse()
                    .unwrap();
                assert!(skipped > 0);
                assert!(text.ends_with("0\r\n\r\n"));
                assert!(report.contains(&last), "the newest events follow");
                assert_eq!(app.events.dropped_total(), skipped);
                println!(
                    "slow client: {} bytes read, {skipped} of {BIG_EVENTS} events dropped",
                    wire.len()
                );
            }
            OverflowPolicy::Close => {
                assert!(!text.contains(": dropped "));
                assert!(!text.contains(&last), "the stream ended before");
                assert!(text.ends_with("0\r\n\r\n"));
                assert!(matches!(app.ended.get(), Some(Ended::Behind { skipped }) if skipped > 0));
            }
        }
    })
    .await;
}

/// Reads a stream until the end of its chunked body.
async fn read_until_end(stream: &mut TcpStream) -> Vec<u8> {
    let mut wire = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    while !wire.ends_with(b"0\r\n\r\n") {
        let n = stream.read(&mut buf).await.unwrap();
        assert!(n > 0, "closed before the end of the stream");
        wire.extend_from_slice(&buf[..n]);
    }
    wire
}

#[tokio::test]
async fn slow_client_gets_a_drop_report_and_the_others_nothing_lost() {
    slow_client_falls_behind(OverflowPolicy::DropOldest).await;
}

#[tokio::test]
async fn slow_client_is_closed_under_the_close_policy() {
    slow_client_falls_behind(OverflowPolicy::Close).await;
}

/// The memory of server-sent events, fixed at build time: the ring, the
/// stream's share of a connection.
#[test]
fn sse_sizes() {
    let ring = std::mem::size_of::<Events>();
    let small = std::mem::size_of::<Broadcaster<16, 2048, 4>>();
    let subscriber = std::mem::size_of::<ringstream_embedded::sse::Subscriber<'_, 8, 4096, 4>>();
    println!("Broadcaster<8, 4096, 4>: {ring} bytes");
    println!("Broadcaster<16, 2048, 4>: {small} bytes");
    println!("Subscriber: {subscriber} bytes");
    assert!(ring < 4096 + 1024, "{ring}");
    let _ = read_to_close;
    let _ = Received::Closed;
}
