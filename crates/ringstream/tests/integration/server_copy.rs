//! The server sends large response bodies without copying their `Bytes`:
//! the transport sees the body's own memory in a vectored write, behind the
//! head, and small chunked frames coalesced into one write.

use std::convert::Infallible;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use ringstream::server::{serve_connection, service_fn, Config};
use ringstream::{Incoming, ResponseStream};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// One write call: the address and length of each slice, and the bytes.
#[derive(Default)]
struct Log {
    calls: Vec<Vec<(usize, usize)>>,
    bytes: Vec<u8>,
}

/// Reads a scripted request, then end of file; records every write.
struct Recorder {
    input: Vec<u8>,
    at: usize,
    log: Arc<Mutex<Log>>,
}

impl AsyncRead for Recorder {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let n = (self.input.len() - self.at).min(buf.remaining());
        let at = self.at;
        buf.put_slice(&self.input[at..at + n]);
        self.at += n;
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Recorder {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_vectored(cx, &[IoSlice::new(buf)])
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let mut log = self.log.lock().unwrap();
        log.calls.push(
            bufs.iter()
                .map(|b| (b.as_ptr() as usize, b.len()))
                .collect(),
        );
        let mut n = 0;
        for b in bufs {
            log.bytes.extend_from_slice(b);
            n += b.len();
        }
        Poll::Ready(Ok(n))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

async fn run<S, B>(request: &[u8], service: S) -> Log
where
    S: tower_service::Service<http::Request<Incoming>, Response = http::Response<B>>,
    S::Error: Into<ringstream::BoxError>,
    B: http_body::Body,
    B::Error: Into<ringstream::BoxError>,
{
    let log = Arc::new(Mutex::new(Log::default()));
    let io = Recorder {
        input: request.to_vec(),
        at: 0,
        log: log.clone(),
    };
    serve_connection(io, service, Config::default())
        .await
        .unwrap();
    Arc::try_unwrap(log).ok().unwrap().into_inner().unwrap()
}

#[tokio::test]
async fn large_body_goes_out_from_its_own_memory() {
    let body = Bytes::from(vec![b'q'; 200_000]);
    let (ptr, len) = (body.as_ptr() as usize, body.len());
    let service = service_fn(move |_req: http::Request<Incoming>| {
        let body = body.clone();
        async move { Ok::<_, Infallible>(http::Response::new(http_body_util::Full::new(body))) }
    });
    let log = run(
        b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        service,
    )
    .await;
    // The first write gathers the head and the body itself.
    let first = &log.calls[0];
    assert_eq!(
        first.len(),
        2,
        "head and body in one vectored write: {first:?}"
    );
    assert_eq!(first[1], (ptr, len), "the body was copied before the write");
    let text = String::from_utf8_lossy(&log.bytes[..200]).to_ascii_lowercase();
    assert!(text.contains("content-length: 200000"), "{text}");
    assert_eq!(log.calls.len(), 1);
}

#[tokio::test]
async fn small_chunked_frames_are_coalesced() {
    let service = service_fn(|_req: http::Request<Incoming>| async {
        let (mut writer, body) = ResponseStream::streaming(64);
        tokio::spawn(async move {
            for i in 0..200 {
                writer.write_all(format!("{i},").as_bytes()).await.unwrap();
            }
        });
        Ok::<_, Infallible>(http::Response::new(body))
    });
    let log = run(
        b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        service,
    )
    .await;
    let text = String::from_utf8_lossy(&log.bytes);
    assert!(text.ends_with("0\r\n\r\n"), "{text}");
    // Many frames, far fewer write calls than frames.
    let frames = text.matches("\r\n").count() / 2;
    assert!(
        log.calls.len() < frames,
        "{} writes for {frames} frames",
        log.calls.len()
    );
}

/// A body of unknown length whose frames are all ready, and which says it
/// has ended as soon as its last frame is taken.
struct KnowsItsEnd {
    frames: Vec<Bytes>,
}

impl http_body::Body for KnowsItsEnd {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Infallible>>> {
        if self.frames.is_empty() {
            return Poll::Ready(None);
        }
        Poll::Ready(Some(Ok(http_body::Frame::data(self.frames.remove(0)))))
    }

    fn is_end_stream(&self) -> bool {
        self.frames.is_empty()
    }
}

#[tokio::test]
async fn a_body_that_says_it_ended_gets_its_last_chunk_after_its_last_frame() {
    // One small frame and one large one (sent from its own memory): the
    // last chunk follows whichever came last.
    for sizes in [vec![10], vec![10, 10_000], vec![10_000]] {
        let frames: Vec<Bytes> = sizes.iter().map(|&n| Bytes::from(vec![b'z'; n])).collect();
        let service = service_fn(move |_req: http::Request<Incoming>| {
            let body = KnowsItsEnd {
                frames: frames.clone(),
            };
            async move { Ok::<_, Infallible>(http::Response::new(body)) }
        });
        let log = run(
            b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
            service,
        )
        .await;
        let text = String::from_utf8_lossy(&log.bytes);
        let body = &text[text.find("\r\n\r\n").unwrap() + 4..];
        let mut expected = String::new();
        for &n in &sizes {
            expected += &format!("{n:x}\r\n{}\r\n", "z".repeat(n));
        }
        expected += "0\r\n\r\n";
        assert!(
            body == expected,
            "{sizes:?}: {} bytes, not as framed",
            body.len()
        );
    }
}
