//! The actix-web peer of `ringstream-bench peers`: `GET /bytes/{n}` on
//! `--workers` worker threads (one by default), written as an actix-web
//! user would.
//!
//! The body is a slice of the shared pattern block (`Bytes::from_static`,
//! no copy and no allocation); past the block's 64 KiB, a body type of
//! its own hands out slices of it. `Server` and `Content-Type` are set on
//! the response, as ringstream sends them; actix-web adds `Date` and
//! `Content-Length` itself.
//!
//! ```text
//! peer-actix --addr 127.0.0.1:8082 [--workers 2]
//! ```

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::body::{BodySize, MessageBody};
use actix_web::http::header;
use actix_web::web::{Bytes, Path};
use actix_web::{get, App, HttpResponse, HttpServer};
use peer_common::{pattern_block, CONTENT_TYPE, MAX_BYTES};

/// `n` bytes of the pattern.
#[get("/bytes/{n}")]
async fn bytes(n: Path<u64>) -> HttpResponse {
    let n = n.into_inner();
    if n > MAX_BYTES {
        return HttpResponse::BadRequest().body("at most 1073741824 bytes\n");
    }
    let mut response = HttpResponse::Ok();
    response
        .insert_header((header::SERVER, "actix-web"))
        .content_type(CONTENT_TYPE);
    let block = pattern_block().as_bytes();
    match usize::try_from(n) {
        Ok(n) if n <= block.len() => response.body(Bytes::from_static(&block[..n])),
        _ => response.body(Pattern { remaining: n }),
    }
}

/// A body longer than the pattern block: slices of it, one after another.
struct Pattern {
    remaining: u64,
}

impl MessageBody for Pattern {
    type Error = Infallible;

    fn size(&self) -> BodySize {
        BodySize::Sized(self.remaining)
    }

    fn poll_next(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, Infallible>>> {
        let block = pattern_block().as_bytes();
        let n = self.remaining.min(block.len() as u64) as usize;
        if n == 0 {
            return Poll::Ready(None);
        }
        self.remaining -= n as u64;
        Poll::Ready(Some(Ok(Bytes::from_static(&block[..n]))))
    }
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let peer_common::Args { addr, workers } = peer_common::args();
    let server = HttpServer::new(|| App::new().service(bytes))
        // `--workers` threads (1 by default) serve the connections
        // (actix-web runs one per core by default); the acceptor thread
        // only accepts.
        .workers(workers)
        // Idle keep-alive connections are kept as long as ringstream
        // keeps them (60 s; actix-web's default is 5 s).
        .keep_alive(Duration::from_secs(60))
        .bind(addr)?;
    peer_common::announce("actix-web", addr);
    server.run().await
}
