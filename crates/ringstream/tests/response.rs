//! `ResponseStream` and `ResponseWriter` through the public API.
//!
//! Buffered bodies guard the OpenDTU metrics case (a ~40 KB page printed
//! line by line must cost a handful of allocations and go out with a
//! `Content-Length`, never one reallocation per write); streaming bodies
//! guard constant memory under a slow client and clean cancellation when
//! the client disconnects mid-response.

use std::io::{self, Write as _};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::Bytes;
use http_body::Body;
use http_body_util::BodyExt;
use ringstream::{ResponseStream, ResponseWriter};
use ringstream_testkit::alloc::{allocations, Counting};

#[global_allocator]
static GLOBAL: Counting = Counting;

// ---- helpers ---------------------------------------------------------------

fn poll_once(body: &mut ResponseStream) -> Poll<Option<io::Result<Bytes>>> {
    let mut cx = Context::from_waker(Waker::noop());
    Pin::new(body)
        .poll_frame(&mut cx)
        .map(|f| f.map(|r| r.map(|frame| frame.into_data().expect("data frame"))))
}

/// A Prometheus-style page of about 40 KB, as OpenDTU prints it.
fn write_metrics(body: &mut ResponseStream) -> String {
    let mut expected = String::new();
    let mut i = 0u32;
    while expected.len() < 40_000 {
        let line = format!(
            "opendtu_inverter_power{{serial=\"1161{i:08}\",unit=\"W\"}} {}.{}\n",
            i * 7,
            i % 10
        );
        expected.push_str(&line);
        writeln!(
            body,
            "opendtu_inverter_power{{serial=\"1161{i:08}\",unit=\"W\"}} {}.{}",
            i * 7,
            i % 10
        )
        .unwrap();
        i += 1;
    }
    expected
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Polls `fut` exactly once with the current task's waker: true when it is
/// still pending. Tells "this waits" without sleeping and hoping another
/// task got that far.
async fn polled_once_is_pending<F: std::future::Future>(mut fut: Pin<&mut F>) -> bool {
    std::future::poll_fn(|cx| Poll::Ready(fut.as_mut().poll(cx).is_pending())).await
}

// ---- static guarantees -------------------------------------------------------

fn assert_send<T: Send>(t: T) -> T {
    t
}

#[test]
fn bounds_for_hyper_and_axum() {
    fn body<T: Body + Send + Sync + Unpin + 'static>() {}
    fn writer<T: Send + Sync + Unpin + 'static>() {}
    body::<ResponseStream>();
    writer::<ResponseWriter>();

    // axum takes it as a body as is.
    let mut b = ResponseStream::buffered();
    write!(b, "ok").unwrap();
    let response = axum::response::Response::new(axum::body::Body::new(b));
    let bytes = rt()
        .block_on(response.into_body().collect())
        .unwrap()
        .to_bytes();
    assert_eq!(bytes, "ok");
}

// ---- buffered ------------------------------------------------------------------

#[test]
fn buffered_write_macro_many_lines_exact_bytes_one_frame() {
    let mut body = ResponseStream::buffered();
    let expected = write_metrics(&mut body);
    assert!(body.is_buffered());
    assert_eq!(body.len(), expected.len());
    assert_eq!(body.size_hint().exact(), Some(expected.len() as u64));
    assert!(!body.is_end_stream());

    let frame = match poll_once(&mut body) {
        Poll::Ready(Some(Ok(frame))) => frame,
        other => panic!("expected one data frame, got {other:?}"),
    };
    assert_eq!(frame, expected.as_bytes());
    assert!(body.is_end_stream());
    assert_eq!(body.size_hint().exact(), Some(0));
    assert!(matches!(poll_once(&mut body), Poll::Ready(None)));
}

#[test]
fn buffered_empty_body_ends_immediately() {
    let mut body = ResponseStream::buffered();
    assert!(body.is_end_stream());
    assert_eq!(body.size_hint().exact(), Some(0));
    assert!(matches!(poll_once(&mut body), Poll::Ready(None)));
}

#[test]
fn buffered_io_write_and_fmt_write() {
    let mut body = ResponseStream::with_capacity(4);
    body.write_all(b"HTTP").unwrap();
    writeln!(body, " io {}", 1).unwrap(); // inherent write_fmt wins
    std::fmt::Write::write_str(&mut body, "fmt ").unwrap();
    std::fmt::Write::write_fmt(&mut body, format_args!("{}", 2)).unwrap();
    body.append(b"!").unwrap();
    body.flush().unwrap();
    assert_eq!(io::Write::write(&mut body, b"?").unwrap(), 1);
    let bytes = rt().block_on(body.collect()).unwrap().to_bytes();
    assert_eq!(bytes, "HTTP io 1\nfmt 2!?");
}

/// `fmt::Write::write_char` appends the character's UTF-8 bytes, through
/// growth, and fails on a streaming body or once the body was sent.
#[test]
fn fmt_write_char_appends_utf8_and_grows() {
    use std::fmt::Write as _;
    let mut body = ResponseStream::with_capacity(2);
    for c in ['a', 'é', '€', '🦀', 'z'] {
        body.write_char(c).unwrap();
    }
    assert_eq!(body.len(), "aé€🦀z".len());
    let bytes = rt().block_on(body.collect()).unwrap().to_bytes();
    assert_eq!(bytes, "aé€🦀z");

    let (_writer, mut streaming) = ResponseStream::streaming(16);
    assert!(streaming.write_char('x').is_err());
    let mut sent = ResponseStream::buffered();
    sent.write_char('x').unwrap();
    assert!(matches!(poll_once(&mut sent), Poll::Ready(Some(Ok(_)))));
    assert!(sent.write_char('y').is_err());
}

#[test]
fn buffered_writes_after_sending_fail() {
    let mut body = ResponseStream::buffered();
    body.append(b"once").unwrap();
    assert!(matches!(poll_once(&mut body), Poll::Ready(Some(Ok(_)))));
    assert!(body.append(b"late").is_err());
    assert!(write!(body, "late").is_err());
    assert_eq!(body.capacity(), 0);
}

#[test]
fn buffered_growth_is_geometric_from_1k() {
    // clevercoffee PR #643: ~9000 reallocations in one request. Here the
    // capacity changes a handful of times, however small the writes.
    let mut body = ResponseStream::buffered();
    assert_eq!(body.capacity(), 1024);
    let mut caps = vec![body.capacity()];
    for _ in 0..40_000 / 8 {
        body.append(b"1234567\n").unwrap();
        if body.capacity() != *caps.last().unwrap() {
            caps.push(body.capacity());
        }
    }
    assert_eq!(caps, [1024, 4096, 16384, 32768, 65536]);
}

#[test]
fn buffered_with_capacity_hint_does_not_grow() {
    let mut body = ResponseStream::with_capacity(40_960);
    for _ in 0..40_960 / 64 {
        body.append(&[b'x'; 64]).unwrap();
    }
    assert_eq!(body.capacity(), 40_960);
}

#[test]
fn buffered_40k_page_allocations() {
    // Writing the page: the first buffer plus four reallocations
    // (1 → 4 → 16 → 32 → 64 KiB); formatting integers allocates nothing.
    let expected = write_metrics(&mut ResponseStream::buffered());
    let (mut body, writing) = allocations(|| {
        let mut body = ResponseStream::buffered();
        let mut i = 0u32;
        while body.len() < expected.len() {
            writeln!(
                body,
                "opendtu_inverter_power{{serial=\"1161{i:08}\",unit=\"W\"}} {}.{}",
                i * 7,
                i % 10
            )
            .unwrap();
            i += 1;
        }
        body
    });
    assert_eq!(body.len(), expected.len());
    assert_eq!(writing, 5, "1 allocation + 4 reallocations");

    // Hand-off: no copy; `Bytes` allocates only its small shared header,
    // because the body does not fill its 64 KiB buffer exactly.
    let (frame, handoff) = allocations(|| poll_once(&mut body));
    assert_eq!(handoff, 1, "hand-off allocations");
    match frame {
        Poll::Ready(Some(Ok(frame))) => assert_eq!(frame, expected.as_bytes()),
        other => panic!("expected the body, got {other:?}"),
    }
}

#[test]
fn buffered_exact_fit_hands_off_without_allocating() {
    let mut body = ResponseStream::with_capacity(4096);
    body.append(&[b'a'; 4096]).unwrap();
    let (frame, handoff) = allocations(|| poll_once(&mut body));
    assert_eq!(handoff, 0);
    match frame {
        Poll::Ready(Some(Ok(frame))) => assert_eq!(frame, &[b'a'; 4096][..]),
        other => panic!("expected the body, got {other:?}"),
    }
}

#[test]
fn buffered_body_as_http_response() {
    let mut body = ResponseStream::buffered();
    write!(body, "{{\"ok\":true}}").unwrap();
    let response = http::Response::builder()
        .header("content-type", "application/json")
        .body(body)
        .unwrap();
    assert_eq!(response.body().size_hint().exact(), Some(11));
}

// ---- streaming -------------------------------------------------------------------

#[test]
fn streaming_writes_to_body_directly_are_unsupported() {
    let (_writer, mut body) = ResponseStream::streaming(16);
    assert!(!body.is_buffered());
    let err = body.append(b"x").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::Unsupported);
    assert!(write!(body, "x").is_err());
}

#[test]
fn streaming_10mb_through_4k_ring_is_identical_and_bounded() {
    const TOTAL: usize = 10 * 1024 * 1024;
    const RING: usize = 4096;
    let rt = rt();
    rt.block_on(async {
        let (mut writer, mut body) = ResponseStream::streaming(RING);
        assert_eq!(body.size_hint().exact(), None);
        let producer = tokio::spawn(async move {
            // Uneven pieces, so writes straddle the ring's wrap point.
            let mut sent = 0usize;
            let mut piece = 1usize;
            let mut max_cap = 0;
            while sent < TOTAL {
                let n = piece.min(TOTAL - sent);
                let data: Vec<u8> = (sent..sent + n).map(|i| (i % 251) as u8).collect();
                writer.write_all(&data).await?;
                max_cap = max_cap.max(writer.capacity());
                sent += n;
                piece = piece * 3 % 9973 + 1;
            }
            writer.finish();
            Ok::<_, io::Error>(max_cap)
        });
        let mut received = Vec::with_capacity(TOTAL);
        let mut frames = 0usize;
        while let Some(frame) = body.frame().await {
            let data = frame.unwrap().into_data().unwrap();
            assert!(data.len() <= RING, "frame of {} bytes", data.len());
            assert!(body.capacity() <= RING);
            received.extend_from_slice(&data);
            frames += 1;
        }
        let max_cap = producer.await.unwrap().unwrap();
        assert_eq!(max_cap, RING);
        assert_eq!(received.len(), TOTAL);
        assert!(received
            .iter()
            .enumerate()
            .all(|(i, &b)| b == (i % 251) as u8));
        assert!(frames >= TOTAL / RING);
    });
}

#[test]
fn streaming_write_waits_when_full_until_polled() {
    rt().block_on(async {
        let (mut writer, mut body) = ResponseStream::streaming(16);
        writer.write_all(&[b'a'; 16]).await.unwrap();
        // Nobody reads: the next write is pending — not an error, not growth.
        let blocked = tokio::time::timeout(Duration::from_millis(50), writer.write_all(b"b")).await;
        assert!(blocked.is_err(), "write should wait while the ring is full");
        assert_eq!(writer.capacity(), 16);
        assert_eq!(body.len(), 16);

        let mut waiting = Box::pin(writer.write_all(b"bc"));
        assert!(
            polled_once_is_pending(waiting.as_mut()).await,
            "the write should wait while the ring is full"
        );
        let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(first, &[b'a'; 16][..]);
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("the write resumes once the body is polled")
            .unwrap();
        writer.finish();
        let rest = body.collect().await.unwrap().to_bytes();
        assert_eq!(rest, "bc");
    });
}

#[test]
fn streaming_dropped_body_fails_pending_and_next_writes() {
    rt().block_on(async {
        // A write waiting for room wakes and fails.
        let (mut writer, body) = ResponseStream::streaming(8);
        let mut pending = Box::pin(writer.write_all(&[0u8; 64]));
        assert!(
            polled_once_is_pending(pending.as_mut()).await,
            "a write larger than the ring waits for room"
        );
        drop(body); // the client went away
        let result = tokio::time::timeout(Duration::from_secs(5), pending)
            .await
            .expect("a pending write wakes when the body is dropped");
        assert_eq!(result.unwrap_err().kind(), io::ErrorKind::BrokenPipe);
        assert!(writer.is_closed());
        assert_eq!(writer.capacity(), 0, "the ring is released");

        // The next write, flush and formatted write fail at once.
        let err = writer.write_all(b"more").await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
        let err = writer.flush().await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
        let err = ringstream::awrite!(writer, "{}", 1).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
    });
}

#[test]
fn streaming_abort_yields_error_frame() {
    rt().block_on(async {
        let (mut writer, mut body) = ResponseStream::streaming(64);
        writer.write_all(b"partial").await.unwrap();
        writer.abort(io::Error::new(io::ErrorKind::TimedOut, "sensor timeout"));
        let err = body.frame().await.unwrap().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert!(body.frame().await.is_none());
        assert!(body.is_end_stream());
    });
}

#[test]
fn streaming_panicking_producer_fails_the_body() {
    rt().block_on(async {
        let (mut writer, body) = ResponseStream::streaming(64);
        let task = tokio::spawn(async move {
            writer.write_all(b"half a page").await.unwrap();
            panic!("handler bug");
        });
        let result = body.collect().await;
        assert!(
            result.is_err(),
            "a panic must not look like a complete body"
        );
        assert!(task.await.is_err());
    });
}

#[test]
fn streaming_finish_and_drop_end_the_body() {
    rt().block_on(async {
        let (mut writer, body) = ResponseStream::streaming(64);
        writer.write_all(b"abc").await.unwrap();
        assert_eq!(body.size_hint().exact(), None);
        writer.finish();
        // Finished: the remaining length is known.
        assert_eq!(body.size_hint().exact(), Some(3));
        assert!(!body.is_end_stream());
        assert_eq!(body.collect().await.unwrap().to_bytes(), "abc");

        let (mut writer, body) = ResponseStream::streaming(64);
        writer.write_all(b"xyz").await.unwrap();
        drop(writer);
        assert_eq!(body.collect().await.unwrap().to_bytes(), "xyz");
    });
}

#[test]
fn streaming_write_macro_await_and_send() {
    let rt = rt();
    let (mut writer, body) = ResponseStream::streaming(32);
    let reader = rt.spawn(body.collect());
    rt.block_on(async {
        // The write `awrite!` yields is Send.
        let (name, n) = ("a", 1);
        let fut = assert_send(ringstream::awrite!(writer, "{name}-{n}\n"));
        fut.await.unwrap();
        ringstream::awriteln!(writer, "b-{}", 2).await.unwrap();
    });
    // `awrite!` keeps a spawned task Send (checked by `tokio::spawn`).
    let task = rt.spawn(async move {
        for i in 0..200 {
            ringstream::awrite!(writer, "line {:03} of a long page\n", i).await?;
        }
        ringstream::awriteln!(writer, "end {}", "of page").await?;
        writer.finish();
        Ok::<_, io::Error>(())
    });
    rt.block_on(task).unwrap().unwrap();
    let bytes = rt.block_on(reader).unwrap().unwrap().to_bytes();
    let mut expected = String::from("a-1\nb-2\n");
    for i in 0..200 {
        expected.push_str(&format!("line {i:03} of a long page\n"));
    }
    expected.push_str("end of page\n");
    assert_eq!(bytes, expected.as_bytes());
}

/// `awrite!` on a synchronous writer does what `write!` does.
#[test]
fn awrite_on_a_synchronous_writer_is_write() {
    use std::fmt::Write as _;
    let mut text = String::new();
    ringstream::awrite!(text, "{}-{}", "a", 1).unwrap();
    ringstream::awriteln!(text, "!").unwrap();
    assert_eq!(text, "a-1!\n");
    let mut body = ResponseStream::buffered();
    ringstream::awrite!(body, "{}", 42).unwrap();
    assert_eq!(body.len(), 2);
}

#[test]
fn streaming_async_write_with_tokio_copy() {
    rt().block_on(async {
        let source: Vec<u8> = (0..1_000_000u32).map(|i| (i % 253) as u8).collect();
        let (mut writer, body) = ResponseStream::streaming(1024);
        let reader = tokio::spawn(body.collect());
        let copied = tokio::io::copy(&mut &source[..], &mut writer)
            .await
            .unwrap();
        assert_eq!(copied, 1_000_000);
        tokio::io::AsyncWriteExt::shutdown(&mut writer)
            .await
            .unwrap();
        // After shutdown the body has ended; writes fail.
        let err = tokio::io::AsyncWriteExt::write_all(&mut writer, b"x")
            .await
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
        let bytes = reader.await.unwrap().unwrap().to_bytes();
        assert_eq!(bytes, source);
    });
}

#[test]
fn streaming_flush_waits_until_taken() {
    rt().block_on(async {
        let (mut writer, mut body) = ResponseStream::streaming(64);
        writer.write_all(b"data: 1\n\n").await.unwrap();
        let pending = tokio::time::timeout(Duration::from_millis(50), writer.flush()).await;
        assert!(pending.is_err(), "flush waits while bytes are in the ring");
        let flusher = tokio::spawn(async move {
            writer.flush().await.unwrap();
            writer
        });
        let frame = body.frame().await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(frame, "data: 1\n\n");
        let writer = tokio::time::timeout(Duration::from_secs(5), flusher)
            .await
            .unwrap()
            .unwrap();
        writer.finish();
        assert!(body.frame().await.is_none());
    });
}

#[test]
fn streaming_zero_capacity_is_one_byte() {
    rt().block_on(async {
        let (mut writer, body) = ResponseStream::streaming(0);
        assert_eq!(writer.capacity(), 1);
        let reader = tokio::spawn(body.collect());
        writer.write_all(b"slow but correct").await.unwrap();
        writer.finish();
        assert_eq!(
            reader.await.unwrap().unwrap().to_bytes(),
            "slow but correct"
        );
    });
}
