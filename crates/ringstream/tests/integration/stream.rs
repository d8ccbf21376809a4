//! Integration tests of `ringstream::Stream` through its public API, over a
//! scripted mock transport, `tokio::io::duplex` and real TCP loopback.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use ringstream::{Stream, StreamOptions};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// One write call seen by the mock.
#[derive(Debug, Clone)]
struct WriteCall {
    /// Number of non-empty slices passed.
    slices: usize,
    /// Address of each non-empty slice.
    pointers: Vec<usize>,
}

/// A transport with scripted read chunks (then end of file) that counts
/// reads and records every write call.
#[derive(Debug, Default)]
struct Mock {
    chunks: VecDeque<Vec<u8>>,
    read_error: Option<io::ErrorKind>,
    reads: usize,
    writes: Vec<WriteCall>,
    written: Vec<u8>,
    write_error: Option<io::ErrorKind>,
    /// Accept at most this many bytes per write call.
    write_limit: Option<usize>,
    flushes: usize,
    shutdowns: usize,
}

impl Mock {
    fn reading<I, C>(chunks: I) -> Self
    where
        I: IntoIterator<Item = C>,
        C: AsRef<[u8]>,
    {
        Mock {
            chunks: chunks.into_iter().map(|c| c.as_ref().to_vec()).collect(),
            ..Mock::default()
        }
    }

    fn writes(&self) -> usize {
        self.writes.len()
    }
}

impl AsyncRead for Mock {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.reads += 1;
        if let Some(kind) = self.read_error {
            return Poll::Ready(Err(io::Error::from(kind)));
        }
        if let Some(mut chunk) = self.chunks.pop_front() {
            let n = chunk.len().min(buf.remaining());
            buf.put_slice(&chunk[..n]);
            if n < chunk.len() {
                chunk.drain(..n);
                self.chunks.push_front(chunk);
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl Mock {
    fn record(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        if let Some(kind) = self.write_error {
            return Err(io::Error::from(kind));
        }
        let limit = self.write_limit.unwrap_or(usize::MAX);
        let mut accepted = 0;
        let mut pointers = Vec::new();
        for buf in bufs.iter().filter(|b| !b.is_empty()) {
            pointers.push(buf.as_ptr() as usize);
            let n = buf.len().min(limit - accepted);
            self.written.extend_from_slice(&buf[..n]);
            accepted += n;
            if accepted == limit {
                break;
            }
        }
        self.writes.push(WriteCall {
            slices: bufs.iter().filter(|b| !b.is_empty()).count(),
            pointers,
        });
        Ok(accepted)
    }
}

impl AsyncWrite for Mock {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(self.record(&[io::IoSlice::new(buf)]))
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(self.record(bufs))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.flushes += 1;
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.shutdowns += 1;
        Poll::Ready(Ok(()))
    }
}

fn options(minimum_read_size: usize, minimum_write_size: usize) -> StreamOptions {
    StreamOptions {
        minimum_read_size,
        minimum_write_size,
        ..StreamOptions::DEFAULT
    }
}

async fn tcp_pair() -> (TcpStream, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (client, accepted) = tokio::join!(TcpStream::connect(addr), listener.accept());
    (client.unwrap(), accepted.unwrap().0)
}

// ---- reading ----------------------------------------------------------

#[tokio::test]
async fn read_zero_is_empty_without_io() {
    let mut stream = Stream::new(Mock::reading(["data"]));
    assert_eq!(stream.read_up_to(0).await.unwrap(), Some(Bytes::new()));
    assert_eq!(stream.read_partial(0).await.unwrap(), Some(Bytes::new()));
    assert_eq!(stream.get_ref().reads, 0);
}

#[tokio::test]
async fn reads_at_eof() {
    let mut stream = Stream::new(Mock::reading(["Hello"]));
    assert_eq!(&stream.read_up_to(10).await.unwrap().unwrap()[..], b"Hello");
    assert_eq!(stream.read_up_to(1).await.unwrap(), None);
    assert_eq!(stream.read_partial(1).await.unwrap(), None);
    assert_eq!(stream.read_all().await.unwrap(), Bytes::new());
    assert!(stream.is_eof().await.unwrap());
    // End of file is sticky: the transport is not asked again.
    let reads = stream.get_ref().reads;
    assert_eq!(stream.read_up_to(1).await.unwrap(), None);
    assert_eq!(stream.get_ref().reads, reads);
}

#[tokio::test]
async fn read_waits_for_n_bytes() {
    let mut stream = Stream::new(Mock::reading(["He", "llo", " World"]));
    assert_eq!(&stream.read_up_to(5).await.unwrap().unwrap()[..], b"Hello");
    assert_eq!(&stream.read_all().await.unwrap()[..], b" World");
}

#[tokio::test]
async fn read_partial_serves_from_one_os_read() {
    let mut stream = Stream::new(Mock::reading(["Hello World"]));
    assert_eq!(&stream.read_partial(4).await.unwrap().unwrap()[..], b"Hell");
    assert_eq!(
        &stream.read_partial(20).await.unwrap().unwrap()[..],
        b"o World"
    );
    assert_eq!(stream.get_ref().reads, 1);
    assert_eq!(stream.read_partial(20).await.unwrap(), None);
}

#[tokio::test]
async fn read_partial_two_twelve_byte_reads_from_one_fill() {
    let mut stream = Stream::new(Mock::reading(["Hello World!Hello World!"]));
    assert_eq!(
        &stream.read_partial(12).await.unwrap().unwrap()[..],
        b"Hello World!"
    );
    assert_eq!(
        &stream.read_partial(12).await.unwrap().unwrap()[..],
        b"Hello World!"
    );
    assert_eq!(stream.get_ref().reads, 1);
}

#[tokio::test]
async fn peek_twice_then_read_partial_with_one_os_read() {
    let mut stream = Stream::new(Mock::reading(["Hello World"]));
    assert_eq!(stream.peek(4).await.unwrap(), b"Hell");
    assert_eq!(stream.peek(4).await.unwrap(), b"Hell");
    assert_eq!(
        &stream.read_partial(100).await.unwrap().unwrap()[..],
        b"Hello World"
    );
    assert_eq!(stream.get_ref().reads, 1);
}

#[tokio::test]
async fn peek_more_than_available_returns_everything() {
    let mut stream = Stream::new(Mock::reading(["Hello", " World"]));
    assert_eq!(stream.peek(400).await.unwrap(), b"Hello World");
    assert_eq!(stream.buffered(), b"Hello World");
}

#[tokio::test]
async fn peek_beyond_maximum_buffer_size_is_invalid_input() {
    let opts = StreamOptions {
        maximum_buffer_size: 8,
        ..StreamOptions::DEFAULT
    };
    let mut stream = Stream::with_options(Mock::reading(["Hello World"]), opts);
    let err = stream.peek(9).await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    assert_eq!(stream.peek(8).await.unwrap(), b"Hello Wo");
}

#[tokio::test]
async fn read_exactly_keeps_partial_data_on_short_read() {
    let mut stream = Stream::new(Mock::reading(["Hi"]));
    let err = stream.read_exactly(4).await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    assert_eq!(stream.buffered(), b"Hi");
    assert_eq!(&stream.read_partial(10).await.unwrap().unwrap()[..], b"Hi");
    let err = stream.read_exactly(1).await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
}

#[tokio::test]
async fn read_exactly_across_reads() {
    let mut stream = Stream::with_options(Mock::reading(["ab", "cd", "ef"]), options(1, 64));
    assert_eq!(&stream.read_exactly(5).await.unwrap()[..], b"abcde");
    assert_eq!(stream.buffered(), b"f");
}

// ---- pattern scans ----------------------------------------------------

#[tokio::test]
async fn read_until_lines_then_none() {
    let mut stream = Stream::new(Mock::reading(["hello\nworld\n"]));
    assert_eq!(
        &stream
            .read_until_exclusive(b"\n", 1024)
            .await
            .unwrap()
            .unwrap()[..],
        b"hello"
    );
    assert_eq!(
        &stream
            .read_until_exclusive(b"\n", 1024)
            .await
            .unwrap()
            .unwrap()[..],
        b"world"
    );
    assert_eq!(
        stream.read_until_exclusive(b"\n", 1024).await.unwrap(),
        None
    );
}

#[tokio::test]
async fn read_until_limit_counts_the_pattern() {
    for block in [1, 3, 64 * 1024] {
        let mut stream =
            Stream::with_options(Mock::reading(["hello\nworld\n"]), options(block, 64));
        for limit in [4, 5] {
            let err = stream.read_until_exclusive(b"\n", limit).await.unwrap_err();
            assert_eq!(
                err.kind(),
                io::ErrorKind::InvalidData,
                "block {block} limit {limit}"
            );
            // Nothing consumed.
            assert!(stream.buffered().starts_with(b"hell"));
        }
        assert_eq!(
            &stream
                .read_until_exclusive(b"\n", 6)
                .await
                .unwrap()
                .unwrap()[..],
            b"hello"
        );
        assert_eq!(
            &stream
                .read_until_exclusive(b"\n", 6)
                .await
                .unwrap()
                .unwrap()[..],
            b"world"
        );
        assert_eq!(stream.read_until_exclusive(b"\n", 6).await.unwrap(), None);
    }
}

#[tokio::test]
async fn read_until_with_one_byte_blocks() {
    let mut stream = Stream::with_options(Mock::reading(["hello\nworld\n"]), options(1, 64));
    assert_eq!(
        &stream
            .read_until_exclusive(b"\n", 100)
            .await
            .unwrap()
            .unwrap()[..],
        b"hello"
    );
    assert_eq!(
        &stream
            .read_until_exclusive(b"\n", 100)
            .await
            .unwrap()
            .unwrap()[..],
        b"world"
    );
    assert_eq!(stream.read_until_exclusive(b"\n", 100).await.unwrap(), None);
}

#[tokio::test]
async fn read_until_inclusive_keeps_the_pattern() {
    let mut stream = Stream::new(Mock::reading(["GET / HTTP/1.1\r\n", "Host: a\r\n\r\nbody"]));
    let head = stream
        .read_until_inclusive(b"\r\n\r\n", 1024)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&head[..], b"GET / HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(stream.buffered(), b"body");
}

#[tokio::test]
async fn read_until_finds_a_long_pattern_split_across_blocks() {
    let pattern = b"--boundary-0123456789"; // 21 bytes
    let mut data = b"preamble".to_vec();
    data.extend_from_slice(pattern);
    data.extend_from_slice(b"rest");
    // Every split point of the pattern, in 7-byte chunks and 7-byte blocks.
    for shift in 0..pattern.len() {
        let mut wire = vec![b'x'; shift];
        wire.extend_from_slice(&data);
        let chunks: Vec<&[u8]> = wire.chunks(7).collect();
        let mut stream = Stream::with_options(Mock::reading(chunks), options(7, 64));
        let before = stream
            .read_until_exclusive(pattern, 1024)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(before.len(), shift + 8);
        assert!(before.ends_with(b"preamble"));
        assert_eq!(&stream.read_all().await.unwrap()[..], b"rest");
    }
}

#[tokio::test]
async fn read_until_at_eof_keeps_the_data() {
    let mut stream = Stream::new(Mock::reading(["no newline here"]));
    assert_eq!(
        stream.read_until_exclusive(b"\n", 1024).await.unwrap(),
        None
    );
    assert_eq!(stream.buffered(), b"no newline here");
}

#[tokio::test]
async fn read_until_is_bounded_by_maximum_buffer_size() {
    let opts = StreamOptions {
        maximum_buffer_size: 10,
        ..options(4, 64)
    };
    let mut data = b"0123456789".repeat(100);
    data.push(b'\n');
    let mut stream = Stream::with_options(Mock::reading([data]), opts);
    let err = stream
        .read_until_exclusive(b"\n", usize::MAX)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    assert!(err.to_string().contains("maximum_buffer_size"), "{err}");
    let err = stream.gets(usize::MAX).await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    // The buffer stopped growing near the cap instead of taking it all.
    assert!(stream.buffered().len() < 64, "{}", stream.buffered().len());
    assert!(stream.buffered().starts_with(b"0123456789"));
}

#[tokio::test]
async fn gets_without_limit() {
    let mut stream = Stream::new(Mock::reading(["hello\nworld\nremainder"]));
    assert_eq!(&stream.gets(1024).await.unwrap().unwrap()[..], b"hello\n");
    assert_eq!(&stream.gets(1024).await.unwrap().unwrap()[..], b"world\n");
    assert_eq!(&stream.gets(1024).await.unwrap().unwrap()[..], b"remainder");
    assert_eq!(stream.gets(1024).await.unwrap(), None);
}

#[tokio::test]
async fn gets_with_limits() {
    for block in [1, 2, 64 * 1024] {
        let mut stream =
            Stream::with_options(Mock::reading(["hello\nworld\n"]), options(block, 64));
        assert_eq!(&stream.gets(4).await.unwrap().unwrap()[..], b"hell");
        assert_eq!(&stream.gets(5).await.unwrap().unwrap()[..], b"o\n");
        assert_eq!(&stream.gets(6).await.unwrap().unwrap()[..], b"world\n");
        assert_eq!(stream.gets(6).await.unwrap(), None);
    }
    let mut stream = Stream::new(Mock::reading(["abc"]));
    assert_eq!(stream.gets(0).await.unwrap(), Some(Bytes::new()));
}

#[tokio::test]
async fn discard_until_found() {
    let mut stream = Stream::new(Mock::reading(["junk--bound\r\nbody"]));
    let found = stream
        .discard_until(b"--bound\r\n", 1024)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&found[..], b"junk--bound\r\n");
    assert_eq!(stream.buffered(), b"body");
}

#[tokio::test]
async fn discard_until_split_across_small_blocks() {
    let data = b"aaaaaaaaaaaaaaaaaaaa--0123456789012345678--tail";
    let chunks: Vec<&[u8]> = data.chunks(3).collect();
    let mut stream = Stream::with_options(Mock::reading(chunks), options(3, 64));
    let found = stream
        .discard_until(b"--0123456789012345678--", 1024)
        .await
        .unwrap()
        .unwrap();
    assert!(found.ends_with(b"--0123456789012345678--"));
    // Memory stayed bounded: what it returns is the pattern plus less than
    // one block plus one pattern length of skipped data.
    assert!(found.len() <= 23 + 23 + 3, "{}", found.len());
    assert_eq!(&stream.read_all().await.unwrap()[..], b"tail");
}

#[tokio::test]
async fn discard_until_not_found_keeps_the_data_at_eof() {
    let mut stream = Stream::new(Mock::reading(["hello world"]));
    assert_eq!(stream.discard_until(b"xyz", 1024).await.unwrap(), None);
    assert_eq!(stream.buffered(), b"hello world");
    assert!(!stream.is_eof().await.unwrap());
}

#[tokio::test]
async fn discard_until_limit_discards_limit_bytes() {
    let mut stream = Stream::new(Mock::reading(["0123456789\nabc"]));
    assert_eq!(stream.discard_until(b"\n", 4).await.unwrap(), None);
    assert_eq!(stream.buffered(), b"456789\nabc");
    assert_eq!(
        &stream.discard_until(b"\n", 7).await.unwrap().unwrap()[..],
        b"456789\n"
    );
    assert_eq!(stream.buffered(), b"abc");
}

// ---- writing ----------------------------------------------------------

#[tokio::test]
async fn eight_one_byte_writes_with_threshold_eight_make_one_write() {
    let mut stream = Stream::with_options(Mock::default(), options(64, 8));
    for i in 0..8u8 {
        stream.write_all(&[b'a' + i]).await.unwrap();
        let expected = if i < 7 { 0 } else { 1 };
        assert_eq!(stream.get_ref().writes(), expected, "after write {i}");
    }
    assert_eq!(stream.get_ref().written, b"abcdefgh");
    assert_eq!(stream.pending_write(), 0);
}

#[tokio::test]
async fn threshold_decides_when_data_goes_out() {
    let mut stream = Stream::with_options(Mock::default(), options(64, 5));
    stream.write_all(b"Hello").await.unwrap();
    assert_eq!(stream.get_ref().writes(), 1);

    let mut stream = Stream::with_options(Mock::default(), options(64, 10));
    stream.write_all(b"Hello").await.unwrap();
    assert_eq!(stream.get_ref().writes(), 0);
    assert_eq!(stream.pending_write(), 5);
    stream.flush().await.unwrap();
    assert_eq!(stream.get_ref().writes(), 1);
    assert_eq!(stream.get_ref().written, b"Hello");
}

#[tokio::test]
async fn flushing_an_empty_buffer_makes_no_write() {
    let mut stream = Stream::new(Mock::default());
    stream.flush().await.unwrap();
    stream.flush().await.unwrap();
    assert_eq!(stream.get_ref().writes(), 0);
}

#[tokio::test]
async fn write_bytes_sends_a_large_payload_uncopied_in_one_vectored_write() {
    let mut stream = Stream::with_options(Mock::default(), options(64, 1024));
    stream.write_all(b"HTTP/1.1 200 OK\r\n\r\n").await.unwrap();
    let body = Bytes::from(vec![b'x'; 4096]);
    let body_ptr = body.as_ptr() as usize;
    stream.write_bytes(body.clone()).await.unwrap();
    let mock = stream.get_ref();
    assert_eq!(mock.writes(), 1);
    assert_eq!(mock.writes[0].slices, 2);
    // The second slice is the caller's allocation: it was not copied.
    assert_eq!(mock.writes[0].pointers[1], body_ptr);
    assert_eq!(mock.written.len(), 19 + 4096);
}

#[tokio::test]
async fn write_bytes_buffers_small_payloads() {
    let mut stream = Stream::with_options(Mock::default(), options(64, 1024));
    stream
        .write_bytes(Bytes::from_static(b"small"))
        .await
        .unwrap();
    assert_eq!(stream.get_ref().writes(), 0);
    assert_eq!(stream.pending_write(), 5);
}

#[tokio::test]
async fn partial_vectored_writes_send_the_buffer_before_counting_caller_bytes() {
    let mock = Mock {
        write_limit: Some(3),
        ..Mock::default()
    };
    let mut stream = Stream::with_options(mock, options(64, 8));
    stream.buffer_write(b"head-");
    let n = stream
        .write_vectored(&[io::IoSlice::new(b"0123456789")])
        .await
        .unwrap();
    // "head-" took two calls (3 + 2 of 3 accepted), the third byte of the
    // second call was the caller's.
    assert_eq!(n, 1);
    assert_eq!(stream.pending_write(), 0);
    assert_eq!(stream.get_ref().written, b"head-0");
}

#[tokio::test]
async fn async_write_vectored_gathers_buffer_and_caller_slices() {
    let mut stream = Stream::with_options(Mock::default(), options(64, 8));
    assert!(AsyncWrite::is_write_vectored(&stream));
    stream.buffer_write(b"head");
    let bufs = [io::IoSlice::new(b"abcdef"), io::IoSlice::new(b"ghijkl")];
    let n = stream.write_vectored(&bufs).await.unwrap();
    assert_eq!(n, 12);
    let mock = stream.get_ref();
    assert_eq!(mock.writes(), 1);
    assert_eq!(mock.writes[0].slices, 3);
    assert_eq!(mock.written, b"headabcdefghijkl");
}

#[tokio::test]
async fn puts_writes_a_line_and_flushes() {
    let mut stream = Stream::new(Mock::default());
    stream.puts(b"hello").await.unwrap();
    assert_eq!(stream.get_ref().written, b"hello\n");
    assert_eq!(stream.get_ref().writes(), 1);
    assert_eq!(stream.get_ref().flushes, 1);
}

#[tokio::test]
async fn a_read_first_writes_out_pending_data() {
    // Request/response: a peer that answers only after reading the request
    // would deadlock if the request sat in our buffer.
    let (client, server) = tokio::io::duplex(1024);
    let peer = tokio::spawn(async move {
        let mut server = Stream::new(server);
        let line = server.gets(1024).await.unwrap().unwrap();
        server.write_all(&line).await.unwrap();
        server.close().await.unwrap();
    });
    let mut client = Stream::new(client);
    client.write_all(b"ping\n").await.unwrap();
    assert_eq!(client.pending_write(), 5);
    assert_eq!(&client.gets(1024).await.unwrap().unwrap()[..], b"ping\n");
    peer.await.unwrap();
}

#[tokio::test]
async fn puts_then_gets_round_trip() {
    let (a, b) = tokio::io::duplex(1024);
    let (mut a, mut b) = (Stream::new(a), Stream::new(b));
    a.puts(b"hello world").await.unwrap();
    assert_eq!(&b.gets(1024).await.unwrap().unwrap()[..], b"hello world\n");
}

#[tokio::test]
async fn close_write_delivers_data_then_eof() {
    let (a, b) = tokio::io::duplex(1024);
    let (mut a, mut b) = (Stream::new(a), Stream::new(b));
    a.write_all(b"last words").await.unwrap();
    a.close_write().await.unwrap();
    assert_eq!(&b.read_all().await.unwrap()[..], b"last words");
    assert!(b.is_eof().await.unwrap());
    let err = a.write_all(b"more").await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
    // Reading still works after close_write.
    b.puts(b"reply").await.unwrap();
    assert_eq!(&a.gets(100).await.unwrap().unwrap()[..], b"reply\n");
}

#[tokio::test]
async fn operations_after_close_fail_with_not_connected() {
    let mut stream = Stream::new(Mock::reading(["data"]));
    stream.write_all(b"bye").await.unwrap();
    stream.close().await.unwrap();
    stream.close().await.unwrap(); // idempotent
    assert_eq!(stream.get_ref().written, b"bye");
    assert_eq!(stream.get_ref().shutdowns, 1);
    let kind = io::ErrorKind::NotConnected;
    assert_eq!(stream.read_up_to(1).await.unwrap_err().kind(), kind);
    assert_eq!(stream.read_partial(1).await.unwrap_err().kind(), kind);
    assert_eq!(stream.read_all().await.unwrap_err().kind(), kind);
    assert_eq!(stream.read_exactly(1).await.unwrap_err().kind(), kind);
    assert_eq!(
        stream
            .read_until_exclusive(b"\n", 9)
            .await
            .unwrap_err()
            .kind(),
        kind
    );
    assert_eq!(stream.gets(9).await.unwrap_err().kind(), kind);
    assert_eq!(
        stream.discard_until(b"\n", 9).await.unwrap_err().kind(),
        kind
    );
    assert_eq!(stream.peek(1).await.unwrap_err().kind(), kind);
    assert_eq!(stream.is_eof().await.unwrap_err().kind(), kind);
    assert_eq!(stream.fill().await.unwrap_err().kind(), kind);
    assert_eq!(stream.write_all(b"x").await.unwrap_err().kind(), kind);
    assert_eq!(
        stream
            .write_bytes(Bytes::from_static(b"x"))
            .await
            .unwrap_err()
            .kind(),
        kind
    );
    assert_eq!(stream.puts(b"x").await.unwrap_err().kind(), kind);
    assert_eq!(stream.flush().await.unwrap_err().kind(), kind);
    assert_eq!(stream.close_write().await.unwrap_err().kind(), kind);
    let mut buf = [0u8; 4];
    assert_eq!(
        AsyncReadExt::read(&mut stream, &mut buf)
            .await
            .unwrap_err()
            .kind(),
        kind
    );
    assert!(stream.buffered().is_empty());
    assert_eq!(stream.get_ref().reads, 0);
}

#[tokio::test]
async fn close_reports_a_failing_flush() {
    let mock = Mock {
        write_error: Some(io::ErrorKind::ConnectionReset),
        ..Mock::default()
    };
    let mut stream = Stream::new(mock);
    stream.write_all(b"unsent").await.unwrap();
    let err = stream.close().await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::ConnectionReset);
    stream.close().await.unwrap();
}

#[tokio::test]
async fn close_reports_bytes_buffered_after_close_write() {
    let mut stream = Stream::new(Mock::default());
    stream.close_write().await.unwrap();
    stream.buffer_write(b"too late");
    let err = stream.close().await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
    assert!(stream.get_ref().written.is_empty());
}

#[tokio::test]
async fn a_failed_write_marks_the_stream_broken() {
    let mut mock = Mock {
        write_error: Some(io::ErrorKind::BrokenPipe),
        ..Mock::default()
    };
    mock.chunks.push_back(b"response".to_vec());
    let mut stream = Stream::with_options(mock, options(64, 4));
    stream.write_all(b"ab").await.unwrap(); // buffered
    assert!(!stream.is_broken());
    let err = stream.write_all(b"cdef").await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
    assert!(stream.is_broken());
    assert_eq!(stream.pending_write(), 0);
    // The transport recovers, but the stream never pretends later data
    // went out.
    stream.get_mut().write_error = None;
    assert_eq!(
        stream.write_all(b"x").await.unwrap_err().kind(),
        io::ErrorKind::BrokenPipe
    );
    assert_eq!(
        stream.flush().await.unwrap_err().kind(),
        io::ErrorKind::BrokenPipe
    );
    assert!(stream.get_ref().written.is_empty());
    // Reading still works.
    assert_eq!(
        &stream.read_partial(100).await.unwrap().unwrap()[..],
        b"response"
    );
}

#[tokio::test]
async fn a_flush_failure_before_a_read_is_reported() {
    let mut mock = Mock::reading(["data"]);
    mock.write_error = Some(io::ErrorKind::ConnectionReset);
    let mut stream = Stream::new(mock);
    stream.write_all(b"request").await.unwrap();
    let err = stream.read_partial(10).await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::ConnectionReset);
    assert!(stream.is_broken());
    assert_eq!(
        &stream.read_partial(10).await.unwrap().unwrap()[..],
        b"data"
    );
}

#[tokio::test]
async fn write_zero_is_an_error() {
    let mock = Mock {
        write_limit: Some(0),
        ..Mock::default()
    };
    let mut stream = Stream::with_options(mock, options(64, 1));
    let err = stream.write_all(b"x").await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::WriteZero);
    assert!(stream.is_broken());
}

// ---- low-level access -------------------------------------------------

#[tokio::test]
async fn fill_consume_and_split_buffered() {
    let mut stream = Stream::new(Mock::reading(["Hello World"]));
    assert_eq!(stream.fill().await.unwrap(), 11);
    stream.consume(6);
    assert_eq!(&stream.split_buffered(5)[..], b"World");
    let err = stream.try_consume(1).unwrap_err();
    assert!(matches!(
        err,
        ringstream::Error::NotBuffered {
            requested: 1,
            buffered: 0
        }
    ));
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    assert!(matches!(
        stream.try_split_buffered(1),
        Err(ringstream::Error::NotBuffered { .. })
    ));
    stream.try_consume(0).unwrap();
    assert_eq!(stream.fill().await.unwrap(), 0);
}

#[test]
#[should_panic(expected = "consume")]
fn consume_beyond_buffered_panics() {
    let mut stream = Stream::new(Mock::default());
    stream.consume(1);
}

#[tokio::test]
async fn read_error_is_returned() {
    let mock = Mock {
        read_error: Some(io::ErrorKind::ConnectionReset),
        ..Mock::default()
    };
    let mut stream = Stream::new(mock);
    let err = stream.read_partial(1).await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::ConnectionReset);
}

// ---- memory -----------------------------------------------------------

#[tokio::test]
async fn steady_state_reuses_the_block() {
    // Each OS read fills a whole 16-byte block; once the chunk is dropped
    // the next one starts at the same address.
    let chunks: Vec<Vec<u8>> = (0..8u8).map(|i| vec![i; 16]).collect();
    let mut stream = Stream::with_options(Mock::reading(chunks), options(16, 64));
    let first = stream.read_partial(1024).await.unwrap().unwrap();
    let start = first.as_ptr();
    drop(first);
    for i in 1..8u8 {
        let chunk = stream.read_partial(1024).await.unwrap().unwrap();
        assert_eq!(chunk.as_ptr(), start, "chunk {i}");
        assert_eq!(&chunk[..], &[i; 16]);
    }
}

#[tokio::test]
async fn short_reads_reuse_the_block_from_its_start() {
    // Reads shorter than a block: after the chunk is dropped the block is
    // reclaimed from its start, not continued.
    let chunks: Vec<Vec<u8>> = (0..6u8).map(|i| vec![i; 5]).collect();
    let mut stream = Stream::with_options(Mock::reading(chunks), options(64, 64));
    let first = stream.read_partial(1024).await.unwrap().unwrap();
    let start = first.as_ptr();
    drop(first);
    for _ in 1..6 {
        let chunk = stream.read_partial(1024).await.unwrap().unwrap();
        assert_eq!(chunk.as_ptr(), start);
    }
}

#[tokio::test]
async fn held_chunks_keep_their_bytes() {
    let chunks: Vec<Vec<u8>> = (0..4u8).map(|i| vec![i; 16]).collect();
    let mut stream = Stream::with_options(Mock::reading(chunks), options(16, 64));
    let mut held = Vec::new();
    while let Some(chunk) = stream.read_partial(1024).await.unwrap() {
        held.push(chunk);
    }
    for (i, chunk) in held.iter().enumerate() {
        assert_eq!(&chunk[..], &[i as u8; 16]);
    }
}

// ---- tokio composition --------------------------------------------------

#[tokio::test]
async fn composes_with_tokio_copy_and_read_line() {
    let (mut peer, io) = tokio::io::duplex(64);
    let payload: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    let expected = payload.clone();
    let writer = tokio::spawn(async move {
        peer.write_all(b"first line\n").await.unwrap();
        peer.write_all(&payload).await.unwrap();
        peer.shutdown().await.unwrap();
    });
    let mut stream = Stream::with_options(io, options(1024, 64));
    let mut line = String::new();
    stream.read_line(&mut line).await.unwrap();
    assert_eq!(line, "first line\n");
    let mut sink = Vec::new();
    tokio::io::copy(&mut stream, &mut sink).await.unwrap();
    assert_eq!(sink, expected);
    writer.await.unwrap();
}

#[tokio::test]
async fn async_read_with_a_large_destination_bypasses_the_buffer() {
    let mut stream = Stream::with_options(Mock::reading(["abcdefgh"]), options(4, 64));
    let mut buf = [0u8; 16];
    let n = AsyncReadExt::read(&mut stream, &mut buf).await.unwrap();
    assert_eq!(&buf[..n], b"abcdefgh");
    assert!(stream.buffered().is_empty());
    assert_eq!(AsyncReadExt::read(&mut stream, &mut buf).await.unwrap(), 0);
}

#[tokio::test]
async fn copy_into_a_stream_writer() {
    let (a, mut b) = tokio::io::duplex(1 << 16);
    let mut writer = Stream::new(a);
    let data = vec![7u8; 200_000];
    let reader = tokio::spawn(async move {
        let mut out = Vec::new();
        b.read_to_end(&mut out).await.unwrap();
        out
    });
    tokio::io::copy(&mut &data[..], &mut writer).await.unwrap();
    writer.close_write().await.unwrap();
    assert_eq!(reader.await.unwrap(), data);
}

// ---- real TCP -----------------------------------------------------------

#[tokio::test]
async fn tcp_round_trip_of_a_large_payload() {
    let (client, server) = tcp_pair().await;
    let payload: Bytes = (0..3_000_000u32)
        .map(|i| (i % 253) as u8)
        .collect::<Vec<_>>()
        .into();
    let sent = payload.clone();
    let writer = tokio::spawn(async move {
        let mut client = Stream::new(client);
        client.write_all(b"len 3000000\n").await.unwrap();
        client.write_bytes(sent).await.unwrap();
        client.close_write().await.unwrap();
    });
    let mut server = Stream::new(server);
    assert_eq!(
        &server.gets(100).await.unwrap().unwrap()[..],
        b"len 3000000\n"
    );
    let mut received = Vec::new();
    while let Some(chunk) = server.read_partial(usize::MAX).await.unwrap() {
        received.extend_from_slice(&chunk);
    }
    assert_eq!(received, payload);
    writer.await.unwrap();
}

#[tokio::test]
async fn tcp_peer_reset_surfaces_as_connection_reset_on_read() {
    let (client, server) = tcp_pair().await;
    server.set_zero_linger().unwrap();
    drop(server);
    let mut stream = Stream::new(client);
    let result = tokio::time::timeout(Duration::from_secs(10), stream.read_partial(100))
        .await
        .expect("the read finishes");
    let err = result.expect_err("a reset peer is an error, not end of file");
    assert_eq!(err.kind(), io::ErrorKind::ConnectionReset);
}

#[tokio::test]
async fn tcp_peer_reset_surfaces_on_write() {
    let (client, server) = tcp_pair().await;
    server.set_zero_linger().unwrap();
    drop(server);
    let mut stream = Stream::with_options(client, options(64, 1));
    // The RST may take a moment to arrive; keep writing until it does.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let err = loop {
        match stream.write_all(&[0u8; 1024]).await {
            Err(e) => break e,
            Ok(_) => {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "writing to a reset peer still succeeds after 10 s"
                );
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
    };
    assert!(
        matches!(
            err.kind(),
            io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe
        ),
        "{err:?}"
    );
    assert!(stream.is_broken());
}

// ---- split-point independence -------------------------------------------

/// Reads `wire` with a mix of scans and reads and records what came out.
async fn transcript(chunks: Vec<Vec<u8>>, block: usize) -> Vec<Option<Vec<u8>>> {
    let mut stream = Stream::with_options(Mock::reading(chunks), options(block, 64));
    let mut out = Vec::new();
    let take = |r: Result<Option<Bytes>, ringstream::Error>| r.unwrap().map(|b| b.to_vec());
    out.push(take(stream.gets(1024).await));
    out.push(take(stream.read_until_exclusive(b"\r\n\r\n", 1024).await));
    out.push(take(stream.read_until_inclusive(b"--sep--", 1024).await));
    out.push(take(stream.read_up_to(3).await));
    out.push(take(stream.discard_until(b"==", 1024).await).map(|b| b[b.len() - 2..].to_vec()));
    out.push(take(stream.gets(4).await));
    out.push(Some(stream.read_all().await.unwrap().to_vec()));
    out
}

#[tokio::test]
async fn scans_do_not_depend_on_split_points() {
    let wire = b"line one\nhead: a\r\nb: c\r\n\r\nbody--sep--abcjunk junk==long line\nend";
    let whole = transcript(vec![wire.to_vec()], 64 * 1024).await;
    assert_eq!(whole[0].as_deref(), Some(&b"line one\n"[..]));
    assert_eq!(whole[1].as_deref(), Some(&b"head: a\r\nb: c"[..]));
    assert_eq!(whole[2].as_deref(), Some(&b"body--sep--"[..]));
    assert_eq!(whole[3].as_deref(), Some(&b"abc"[..]));
    assert_eq!(whole[4].as_deref(), Some(&b"=="[..]));
    assert_eq!(whole[5].as_deref(), Some(&b"long"[..]));
    assert_eq!(whole[6].as_deref(), Some(&b" line\nend"[..]));
    // One byte at a time.
    let bytes: Vec<Vec<u8>> = wire.iter().map(|&b| vec![b]).collect();
    assert_eq!(transcript(bytes, 1).await, whole);
    // Split at every offset, with small and large blocks.
    for split in 1..wire.len() {
        for block in [1, 5, 64 * 1024] {
            let chunks = vec![wire[..split].to_vec(), wire[split..].to_vec()];
            assert_eq!(
                transcript(chunks, block).await,
                whole,
                "split {split} block {block}"
            );
        }
    }
}
