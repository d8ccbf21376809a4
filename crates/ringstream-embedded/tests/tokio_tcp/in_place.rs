//! Responses written in place: `serve_connection_in_place` over an
//! in-memory connection whose transmit buffer is a ring that lends its
//! free space the way a TCP stack's socket does (contiguous from the write
//! position, starting over at the ring's start when it empties), read by a
//! peer that takes the bytes at different paces.
//!
//! What is checked: every route answers as it does through `Write` alone
//! (the same status, fields and body; chunk sizes may differ), and the
//! seed's 40 KB live-data page, printed line by line, costs the server
//! under 10 bytes copied per 100 body bytes — the rest is formatted
//! straight into the ring — with each line's formatter run once and no
//! allocation.

use std::cell::Cell;
use std::convert::Infallible;
use std::future::Future;
use std::task::{Context, Poll};

use ringstream_embedded::embedded_io_async::{ErrorType, Read, Write};
use ringstream_embedded::http::{
    serve_connection, serve_connection_in_place, App, Buffers, Error, Request, Responder, Sent,
};
use ringstream_embedded::WriteInPlace;
use ringstream_testkit::alloc;

use super::demo::app as demo_app;
use super::http_app::Demo;
use super::{dechunk, split_head, CONFIG};

/// How the peer takes bytes out of the ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Peer {
    /// Only when the ring is full, then all of it.
    WhenFull,
    /// Everything, after each write: the ring empties and starts over at
    /// its start, under bytes kept in its free space.
    AfterEach,
    /// Half of what the ring holds when it is more than half full: the
    /// free space wraps around the ring's end.
    Half,
    /// Everything but what the last write sent, before each write: the
    /// ring empties under bytes kept in its free space after a write that
    /// sent nothing, and starts over at its start.
    Behind,
}

const PEERS: [Peer; 4] = [Peer::WhenFull, Peer::AfterEach, Peer::Half, Peer::Behind];

/// A connection with a transmit ring of `N` bytes.
struct Ring<'a, const N: usize> {
    input: &'a [u8],
    ring: [u8; N],
    read_at: usize,
    len: usize,
    peer: Peer,
    /// What the peer took, in order.
    wire: Vec<u8>,
    /// Bytes that came through `Write::write` (copied from the server's
    /// buffers), and bytes sent from where the server wrote them.
    written: usize,
    in_place: usize,
    /// Bytes the last write sent.
    fresh: usize,
}

impl<'a, const N: usize> Ring<'a, N> {
    fn new(input: &'a [u8], peer: Peer) -> Self {
        Ring {
            input,
            ring: [0; N],
            read_at: 0,
            len: 0,
            peer,
            wire: Vec::new(),
            written: 0,
            in_place: 0,
            fresh: 0,
        }
    }

    /// The peer takes `n` bytes (its own allocations are not the
    /// server's).
    fn take(&mut self, n: usize) {
        let _peer = alloc::Uncounted::new();
        for _ in 0..n {
            self.wire.push(self.ring[self.read_at]);
            self.read_at = (self.read_at + 1) % N;
            self.len -= 1;
        }
    }

    /// The peer, before the server writes.
    fn before(&mut self) {
        match self.peer {
            Peer::WhenFull | Peer::AfterEach if self.len == N => self.take(N),
            Peer::Half if self.len > N / 2 => self.take(self.len / 2),
            Peer::Behind if self.len == N => self.take(N),
            Peer::Behind => self.take(self.len - self.fresh),
            _ => {}
        }
    }

    /// The peer, after the server wrote `n` bytes.
    fn after(&mut self, n: usize) {
        self.fresh = n;
        if self.peer == Peer::AfterEach {
            self.take(self.len);
        }
    }

    /// The free space as a TCP stack's ring lends it.
    fn free(&mut self) -> &mut [u8] {
        if self.len == 0 {
            self.read_at = 0;
        }
        let write_at = (self.read_at + self.len) % N;
        let end = if write_at >= self.read_at && self.len != N {
            N
        } else {
            self.read_at
        };
        &mut self.ring[write_at..end]
    }

    /// The peer reads what is left once the server is done.
    fn finish(mut self) -> (Vec<u8>, usize, usize) {
        self.take(self.len);
        (self.wire, self.written, self.in_place)
    }
}

impl<const N: usize> ErrorType for Ring<'_, N> {
    type Error = Infallible;
}

impl<const N: usize> Read for Ring<'_, N> {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
        let n = buf.len().min(self.input.len());
        buf[..n].copy_from_slice(&self.input[..n]);
        self.input = &self.input[n..];
        Ok(n)
    }
}

impl<const N: usize> Write for Ring<'_, N> {
    async fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
        self.before();
        let free = self.free();
        let n = free.len().min(buf.len());
        free[..n].copy_from_slice(&buf[..n]);
        self.len += n;
        self.written += n;
        self.after(n);
        Ok(n)
    }

    async fn flush(&mut self) -> Result<(), Infallible> {
        Ok(())
    }
}

impl<const N: usize> WriteInPlace for Ring<'_, N> {
    fn poll_write_in_place(
        &mut self,
        _cx: &mut Context<'_>,
        fill: &mut dyn FnMut(&mut [u8]) -> usize,
    ) -> Poll<Result<usize, Infallible>> {
        self.before();
        let free = self.free();
        let room = free.len();
        let n = fill(free);
        assert!(n <= room);
        self.len += n;
        self.in_place += n;
        self.after(n);
        Poll::Ready(Ok(n))
    }
}

/// An app that notes what its responses cost in copies.
struct Copies<'a, A> {
    app: &'a A,
    copied: Cell<usize>,
}

impl<A: App> App for Copies<'_, A> {
    async fn handle<IO: Read + Write>(
        &self,
        request: &Request<'_>,
        responder: &mut Responder<'_, IO>,
    ) -> Result<Sent, Error<IO::Error>> {
        let sent = self.app.handle(request, responder).await?;
        self.copied.set(self.copied.get() + responder.copied());
        Ok(sent)
    }
}

/// Polls `future` to its end (the connections here never wait), counting
/// the allocations its polls make.
fn run<F: Future>(future: F) -> (F::Output, usize) {
    let mut future = std::pin::pin!(future);
    let mut cx = Context::from_waker(std::task::Waker::noop());
    alloc::reset();
    loop {
        let polled = {
            let _measured = alloc::Measured::new();
            future.as_mut().poll(&mut cx)
        };
        if let Poll::Ready(out) = polled {
            return (out, alloc::calls());
        }
    }
}

/// What a response says, whatever its framing: the status line, the
/// fields but the framing ones, the body decoded.
fn meaning(response: &[u8]) -> (String, Vec<String>, Vec<u8>) {
    let (head, rest) = split_head(response);
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap().to_owned();
    let chunked = head.contains("transfer-encoding: chunked\r\n");
    let fields = lines
        .filter(|l| !l.is_empty())
        .filter(|l| !l.starts_with("transfer-encoding:"))
        .map(str::to_owned)
        .collect();
    let body = if chunked {
        dechunk(rest).0
    } else {
        rest.to_vec()
    };
    (status, fields, body)
}

/// Serves `request` in place over a ring of 1 KiB read by `peer`: the
/// wire, the server's copies, the bytes that went through `write` and
/// those sent from where the server wrote them.
fn serve_in_place<A: App>(app: &A, request: &[u8], peer: Peer) -> (Vec<u8>, usize, usize, usize) {
    let copies = Copies {
        app,
        copied: Cell::new(0),
    };
    let mut ring = Ring::<1024>::new(request, peer);
    let mut buffers = Buffers::<1024, 512>::new();
    let (served, allocations) = run(serve_connection_in_place(
        &mut ring,
        &copies,
        &mut buffers,
        &CONFIG,
        None,
    ));
    served.expect("served to the end");
    assert_eq!(allocations, 0, "serving in place allocated");
    let (wire, written, in_place) = ring.finish();
    (wire, copies.copied.get(), written, in_place)
}

/// Serves `request` through `Write` alone: the wire and the copies.
fn serve_written<A: App>(app: &A, request: &[u8]) -> (Vec<u8>, usize) {
    let copies = Copies {
        app,
        copied: Cell::new(0),
    };
    let mut ring = Ring::<1024>::new(request, Peer::WhenFull);
    let mut buffers = Buffers::<1024, 512>::new();
    let (served, _) = run(serve_connection(&mut ring, &copies, &mut buffers, &CONFIG));
    served.expect("served to the end");
    let (wire, _, in_place) = ring.finish();
    assert_eq!(in_place, 0);
    (wire, copies.copied.get())
}

/// Every route of the test app answers in place as through `Write`:
/// printed lines, a known-length payload in pieces, a page from flash
/// whole and between printed lines, a head wider than half the transmit
/// buffer, an echo of a chunked upload, `HEAD` and a 404.
#[test]
fn every_route_answers_in_place_as_through_write() {
    let requests: [&[u8]; 9] = [
        b"GET /lines HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n",
        b"GET /payload HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n",
        b"GET /flash HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n",
        b"GET /flash-chunked HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n",
        b"GET /wide HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n",
        b"GET /hello HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n",
        b"POST /echo HTTP/1.1\r\nHost: d\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n\
          5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
        b"HEAD /lines HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n",
        b"GET /nope HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n",
    ];
    for request in requests {
        let (expected, _) = serve_written(&Demo::default(), request);
        let expected = meaning(&expected);
        for peer in PEERS {
            let (wire, ..) = serve_in_place(&Demo::default(), request, peer);
            assert_eq!(
                meaning(&wire),
                expected,
                "{peer:?}: {}",
                String::from_utf8_lossy(request)
            );
        }
    }
}

/// An event stream's way: a few lines, sent at once, again and again.
struct Flushed;

impl App for Flushed {
    async fn handle<IO: Read + Write>(
        &self,
        _request: &Request<'_>,
        responder: &mut Responder<'_, IO>,
    ) -> Result<Sent, Error<IO::Error>> {
        responder.start(200, &[], None).await?;
        for i in 0..200 {
            writeln!(responder, "line {i:03} of the stream").await?;
            if i % 3 == 2 {
                responder.flush().await?;
            }
        }
        responder.finish().await
    }
}

/// Chunks kept open in the ring while the peer empties it under them:
/// the ring starts over at its start, the kept bytes are moved there
/// (copies, counted) and the stream arrives whole, as through `Write`.
#[test]
fn kept_chunks_survive_a_ring_that_starts_over() {
    let request = b"GET / HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n";
    let (expected, _) = serve_written(&Flushed, request);
    let expected = meaning(&expected);
    let mut copied = Vec::new();
    for peer in PEERS {
        let (wire, c, ..) = serve_in_place(&Flushed, request, peer);
        assert_eq!(meaning(&wire), expected, "{peer:?}");
        copied.push(c);
    }
    // The peer that empties the ring under a kept chunk makes the server
    // move it: more copies than where the ring never starts over.
    assert!(copied[3] > copied[0], "{copied:?}");
}

/// The seed's page: 40 KB of live data printed line by line. In place,
/// the server copies 4–9 bytes per hundred body bytes, depending on the
/// peer's pace (the head, the overflow of the lines that straddle the end
/// of the free space, a chunk's kept bytes moved when the ring starts
/// over); through `Write`, every byte once and the framing. Each line's
/// formatter runs once either way.
#[test]
fn livedata_is_formatted_into_the_socket_ring() {
    const NOON: u64 = 1_765_108_800;
    let request = b"GET /api/livedata HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n";
    let mut printed = String::new();
    demo_app::write_livedata(&mut printed, NOON).unwrap();

    let demo = demo_app::Demo::new(NOON);
    let (wire, copied_written) = serve_written(&demo, request);
    let (_, _, body) = meaning(&wire);
    assert_eq!(body, printed.as_bytes());
    let through_write = copied_written as f64 / body.len() as f64;
    println!(
        "through Write: {copied_written} bytes copied for {} body bytes ({through_write:.3})",
        body.len()
    );
    assert!(through_write >= 1.0, "{through_write}");

    for peer in PEERS {
        let demo = demo_app::Demo::new(NOON);
        let (wire, copied, written, in_place) = serve_in_place(&demo, request, peer);
        let (status, _, body) = meaning(&wire);
        assert_eq!(status, "HTTP/1.1 200 OK");
        assert_eq!(body, printed.as_bytes(), "{peer:?}");
        assert_eq!(demo.formatter_runs.get(), demo_app::LINES, "{peer:?}");
        let ratio = copied as f64 / body.len() as f64;
        println!(
            "in place, peer {peer:?}: {copied} bytes copied ({written} through Write) \
             for {} body bytes ({ratio:.3}), {} wire bytes",
            body.len(),
            wire.len()
        );
        // Everything that went through `write` was a copy, counted; the
        // rest of the wire was written in place.
        assert!(written <= copied, "{written} > {copied}");
        assert_eq!(written + in_place, wire.len());
        assert!(ratio < 0.1, "{peer:?}: {ratio}");
    }
}
