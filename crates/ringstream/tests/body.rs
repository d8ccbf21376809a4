//! `Incoming`: request bodies read off a `Stream` — fixed, chunked and
//! read-until-close — through the public API, plus the memory bound of a
//! huge single chunk (counted with a counting global allocator).

use std::alloc::{GlobalAlloc, Layout, System};
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::Body;
use http_body_util::BodyExt;
use ringstream::ringstream_core::h1::BodyFraming;
use ringstream::{Incoming, Stream, StreamOptions};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};

/// Counts live heap bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: defers to `System` for every operation; only adds counters.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
            PEAK.fetch_max(live, Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `alloc` above with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::realloc`'s contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Relaxed);
            let live = LIVE.fetch_add(new_size, Relaxed) + new_size;
            PEAK.fetch_max(live, Relaxed);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The bytes `wire` as a stream whose peer then closes.
fn stream_of(wire: &[u8]) -> Stream<tokio::io::DuplexStream> {
    let (mut client, server) = tokio::io::duplex(wire.len().max(1) + 64);
    let wire = wire.to_vec();
    tokio::spawn(async move {
        client.write_all(&wire).await.unwrap();
        client.shutdown().await.unwrap();
        // Keep the write half alive until the reader is done.
        let mut sink = Vec::new();
        let _ = tokio::io::AsyncReadExt::read_to_end(&mut client, &mut sink).await;
    });
    Stream::new(server)
}

#[tokio::test]
async fn fixed_length_body_reads_exactly_its_bytes() {
    let mut body = Incoming::from_stream(stream_of(b"hello worldEXTRA"), BodyFraming::Length(11));
    assert_eq!(body.size_hint().exact(), Some(11));
    assert_eq!(&body.read_all().await.unwrap()[..], b"hello world");
    assert!(body.is_end_stream());
    assert_eq!(body.received(), 11);
}

/// RFC 9112 §6.3 (5): a body that ends before Content-Length is an error,
/// never a clean end.
#[tokio::test]
async fn fixed_length_body_cut_short_is_an_error() {
    let mut body = Incoming::from_stream(stream_of(b"hello"), BodyFraming::Length(11));
    let err = body.read_all().await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
}

/// RFC 9112 §7.1: chunked data frames, then a trailers frame.
#[tokio::test]
async fn chunked_body_yields_data_then_trailers() {
    let wire = b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Checksum: abc\r\n\r\n";
    let body = Incoming::from_stream(stream_of(wire), BodyFraming::Chunked);
    let collected = body.collect().await.unwrap();
    let trailers = collected.trailers().cloned().expect("trailers frame");
    assert_eq!(trailers.get("x-checksum").unwrap(), "abc");
    assert_eq!(&collected.to_bytes()[..], b"hello world");
}

/// RFC 9112 §7.1: EOF before the last chunk is an error.
#[tokio::test]
async fn chunked_body_without_last_chunk_is_an_error() {
    let mut body = Incoming::from_stream(stream_of(b"5\r\nhello\r\n"), BodyFraming::Chunked);
    assert_eq!(
        &body.read_partial(100).await.unwrap().unwrap()[..],
        b"hello"
    );
    let err = body.read_partial(100).await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
}

/// RFC 9112 §7.1: a framing violation surfaces as `InvalidData`.
#[tokio::test]
async fn chunked_framing_error_is_invalid_data() {
    let mut body =
        Incoming::from_stream(stream_of(b"+5\r\nhello\r\n0\r\n\r\n"), BodyFraming::Chunked);
    let err = body.read_all().await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidData);
}

/// RFC 9112 §6.3 (8): without framing, the body runs until the peer closes.
#[tokio::test]
async fn read_until_close_body() {
    let mut body = Incoming::from_stream(stream_of(b"all of it"), BodyFraming::CloseDelimited);
    assert_eq!(body.size_hint().exact(), None);
    assert_eq!(&body.read_up_to(3).await.unwrap().unwrap()[..], b"all");
    assert_eq!(&body.read_up_to(100).await.unwrap().unwrap()[..], b" of it");
    assert!(body.read_up_to(1).await.unwrap().is_none());
}

#[tokio::test]
async fn read_partial_and_read_semantics() {
    let wire = b"3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n";
    let mut body = Incoming::from_stream(stream_of(wire), BodyFraming::Chunked);
    assert_eq!(&body.read_partial(0).await.unwrap().unwrap()[..], b"");
    assert_eq!(&body.read_partial(2).await.unwrap().unwrap()[..], b"ab");
    // `read` gathers across chunks until it has n bytes.
    assert_eq!(&body.read_up_to(3).await.unwrap().unwrap()[..], b"cde");
    assert_eq!(&body.read_up_to(10).await.unwrap().unwrap()[..], b"f");
    assert!(body.read_partial(10).await.unwrap().is_none());
}

#[tokio::test]
async fn empty_body_ends_at_once() {
    let mut body = Incoming::empty();
    assert!(body.is_end_stream());
    assert!(body.read_partial(10).await.unwrap().is_none());
    assert_eq!(body.size_hint().exact(), Some(0));
}

/// A transport that announces one chunk of `size` bytes, then produces its
/// data from a pattern without holding it, then the last chunk.
struct HugeChunk {
    head: Vec<u8>,
    sent_head: usize,
    remaining: u64,
    tail: &'static [u8],
    sent_tail: usize,
}

impl AsyncRead for HugeChunk {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.sent_head < self.head.len() {
            let n = (self.head.len() - self.sent_head).min(buf.remaining());
            let at = self.sent_head;
            buf.put_slice(&self.head[at..at + n]);
            self.sent_head += n;
        } else if self.remaining > 0 {
            let n = (buf.remaining() as u64).min(self.remaining) as usize;
            let filled = buf.initialize_unfilled_to(n);
            filled.fill(b'z');
            buf.advance(n);
            self.remaining -= n as u64;
        } else {
            let n = (self.tail.len() - self.sent_tail).min(buf.remaining());
            let at = self.sent_tail;
            buf.put_slice(&self.tail[at..at + n]);
            self.sent_tail += n;
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for HugeChunk {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// A single 1 GiB chunk streams through in blocks (at most
/// `LARGE_BODY_READ` bytes each): it is never held whole, and the heap
/// stays within a few read blocks.
#[tokio::test]
async fn one_gib_single_chunk_streams_in_constant_memory() {
    const SIZE: u64 = 1 << 30;
    let transport = HugeChunk {
        head: format!("{SIZE:x}\r\n").into_bytes(),
        sent_head: 0,
        remaining: SIZE,
        tail: b"\r\n0\r\n\r\n",
        sent_tail: 0,
    };
    let options = StreamOptions::default();
    let block = options
        .minimum_read_size
        .max(ringstream::body::LARGE_BODY_READ);
    let stream = Stream::with_options(transport, options);
    let mut body = Incoming::from_stream(stream, BodyFraming::Chunked);
    let baseline = LIVE.load(Relaxed);
    PEAK.store(baseline, Relaxed);
    let mut total = 0u64;
    let mut largest = 0usize;
    while let Some(piece) = body.read_partial(usize::MAX).await.unwrap() {
        largest = largest.max(piece.len());
        total += piece.len() as u64;
        assert_eq!(piece.last(), Some(&b'z'));
        drop::<Bytes>(piece);
    }
    let peak = PEAK.load(Relaxed).saturating_sub(baseline);
    assert_eq!(total, SIZE);
    assert!(
        largest <= 2 * block,
        "a piece of {largest} bytes: not streamed in blocks"
    );
    assert!(
        peak <= 4 * block + 64 * 1024,
        "peak heap {peak} bytes while streaming 1 GiB"
    );
}

/// `read_all_limited` returns a body of at most its limit (gathered from
/// several chunks), and fails on a longer one instead of returning part of
/// it: `BodyTooLarge` with the limit, status 413.
#[tokio::test]
async fn read_all_limited_returns_the_body_within_the_limit_and_fails_beyond() {
    let wire = b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
    let mut body = Incoming::from_stream(stream_of(wire), BodyFraming::Chunked);
    assert_eq!(
        &body.read_all_limited(11).await.unwrap()[..],
        b"hello world"
    );
    assert!(body.is_end_stream());

    let mut body = Incoming::from_stream(stream_of(wire), BodyFraming::Chunked);
    let err = body.read_all_limited(10).await.unwrap_err();
    assert!(
        matches!(err, ringstream::Error::BodyTooLarge { limit: 10 }),
        "{err:?}"
    );
    assert_eq!(err.status(), Some(413));
    assert_eq!(err.kind(), io::ErrorKind::FileTooLarge);

    // Read until close: no length known, the data decides.
    let mut body = Incoming::from_stream(stream_of(b"0123456789"), BodyFraming::CloseDelimited);
    let err = body.read_all_limited(9).await.unwrap_err();
    assert!(matches!(err, ringstream::Error::BodyTooLarge { limit: 9 }));
    let mut body = Incoming::from_stream(stream_of(b"0123456789"), BodyFraming::CloseDelimited);
    assert_eq!(body.read_all_limited(10).await.unwrap().len(), 10);
}

/// A `Content-Length` over the limit fails `read_all_limited` before a
/// byte is read, and `read_all` buffers at most `READ_ALL_LIMIT`.
#[tokio::test]
async fn read_all_limited_refuses_a_declared_length_before_reading() {
    let mut body = Incoming::from_stream(stream_of(b"hello world"), BodyFraming::Length(11));
    let err = body.read_all_limited(10).await.unwrap_err();
    assert!(matches!(err, ringstream::Error::BodyTooLarge { limit: 10 }));
    assert_eq!(body.received(), 0, "nothing was read");

    let cap = ringstream::body::READ_ALL_LIMIT;
    assert_eq!(cap, 2 * 1024 * 1024);
    let declared = BodyFraming::Length(cap as u64 + 1);
    let mut body = Incoming::from_stream(stream_of(b"x"), declared);
    let err = body.read_all().await.unwrap_err();
    assert!(
        matches!(err, ringstream::Error::BodyTooLarge { limit } if limit == cap as u64),
        "{err:?}"
    );
    assert_eq!(body.received(), 0, "nothing was read");
}

/// A body read off a stream is held to `Limits::max_body_len` (1 GiB by
/// default): a single chunk one byte over it fails at its size line,
/// before any of its data.
#[tokio::test]
async fn a_chunk_over_the_default_body_limit_fails_at_its_size_line() {
    const SIZE: u64 = (1 << 30) + 1;
    let transport = HugeChunk {
        head: format!("{SIZE:x}\r\n").into_bytes(),
        sent_head: 0,
        remaining: SIZE,
        tail: b"\r\n0\r\n\r\n",
        sent_tail: 0,
    };
    let mut body = Incoming::from_stream(Stream::new(transport), BodyFraming::Chunked);
    let err = body.read_partial(usize::MAX).await.unwrap_err();
    assert!(
        matches!(
            err,
            ringstream::Error::Protocol(ringstream::ringstream_core::Error::BodyTooLarge)
        ),
        "{err:?}"
    );
    assert_eq!(body.received(), 0);
}
