//! The xitca-web peer of `ringstream-bench peers`: `GET /bytes/{n}` on
//! `--workers` worker threads (one by default), written as a xitca-web
//! user would.
//!
//! The body is a slice of the shared pattern block (`Bytes::from_static`,
//! no copy and no allocation); past the block's 64 KiB, a body type of
//! its own hands out slices of it. `Server` and `Content-Type` are set on
//! the response, as ringstream sends them; xitca-web adds `Date` and
//! `Content-Length` itself.
//!
//! ```text
//! peer-xitca --addr 127.0.0.1:8082 [--workers 2]
//! ```

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use peer_common::{bytes_len, pattern_block, CONTENT_TYPE};
use xitca_web::body::{Body, Frame, ResponseBody, SizeHint};
use xitca_web::bytes::Bytes;
use xitca_web::handler::handler_service;
use xitca_web::handler::path::PathRef;
use xitca_web::http::header::{HeaderValue, CONTENT_TYPE as CONTENT_TYPE_NAME, SERVER};
use xitca_web::http::{StatusCode, WebResponse};
use xitca_web::route::get;
use xitca_web::App;

/// `n` bytes of the pattern.
async fn bytes(PathRef(path): PathRef<'_>) -> WebResponse {
    let Some(n) = bytes_len(path) else {
        let mut response = WebResponse::new(ResponseBody::bytes(Bytes::from_static(
            b"expected /bytes/{n}, n at most 1073741824\n",
        )));
        *response.status_mut() = StatusCode::BAD_REQUEST;
        return response;
    };
    let block = pattern_block().as_bytes();
    let body = match usize::try_from(n) {
        Ok(n) if n <= block.len() => ResponseBody::bytes(Bytes::from_static(&block[..n])),
        _ => ResponseBody::boxed(Pattern { remaining: n }),
    };
    let mut response = WebResponse::new(body);
    let headers = response.headers_mut();
    headers.insert(SERVER, HeaderValue::from_static("xitca-web"));
    headers.insert(CONTENT_TYPE_NAME, HeaderValue::from_static(CONTENT_TYPE));
    response
}

/// A body longer than the pattern block: slices of it, one after another.
struct Pattern {
    remaining: u64,
}

impl Body for Pattern {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let block = pattern_block().as_bytes();
        let n = self.remaining.min(block.len() as u64) as usize;
        if n == 0 {
            return Poll::Ready(None);
        }
        self.remaining -= n as u64;
        Poll::Ready(Some(Ok(Frame::Data(Bytes::from_static(&block[..n])))))
    }

    fn is_end_stream(&self) -> bool {
        self.remaining == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::Exact(self.remaining)
    }
}

fn main() -> std::io::Result<()> {
    let peer_common::Args { addr, workers } = peer_common::args();
    let server = App::new()
        .at("/bytes/{n}", get(handler_service(bytes)))
        .serve()
        // `--workers` threads (1 by default) serve the connections
        // (xitca-web runs one per core by default); the server thread
        // only accepts.
        .worker_threads(workers)
        // Idle keep-alive connections are kept as long as ringstream
        // keeps them (60 s; xitca-web's default is 5 s).
        .keep_alive_timeout(Duration::from_secs(60))
        .bind(addr)?;
    peer_common::announce("xitca-web", addr);
    server.run().wait()
}
