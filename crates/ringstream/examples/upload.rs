//! A streaming upload: the request body is read block by block as it
//! arrives and counted, never held whole, up to a body limit of 100 MiB
//! (`Limits::max_body_len`): a larger `Content-Length` gets `413` before a
//! byte of the body is read, and a chunked body that grows past it fails
//! the read that crosses it (and gets `413` too).
//!
//! Run with `cargo run -p ringstream --example upload`, then
//! `curl -T some-big-file http://127.0.0.1:3000/`.

use std::convert::Infallible;

use ringstream::ringstream_core::Limits;
use ringstream::server::{service_fn, Config, Server};
use ringstream::Incoming;

/// The largest upload taken, in bytes.
pub const MAX_UPLOAD: u64 = 100 * 1024 * 1024;

/// The server's configuration: the default one with the body limit.
pub fn config() -> Config {
    Config {
        limits: Limits {
            max_body_len: MAX_UPLOAD,
            ..Limits::DEFAULT
        },
        ..Config::default()
    }
}

/// Counts the body as it arrives.
pub async fn count(req: http::Request<Incoming>) -> Result<http::Response<String>, Infallible> {
    let mut body = req.into_body();
    let (mut bytes, mut pieces, mut largest) = (0u64, 0u64, 0usize);
    let answer = loop {
        match body.read_partial(usize::MAX).await {
            Ok(Some(piece)) => {
                bytes += piece.len() as u64;
                pieces += 1;
                largest = largest.max(piece.len());
            }
            Ok(None) => break format!("{bytes} bytes in {pieces} pieces (largest {largest})\n"),
            Err(e) => break format!("upload failed after {bytes} bytes: {e}\n"),
        }
    };
    Ok(http::Response::new(answer))
}

#[tokio::main]
async fn main() -> Result<(), ringstream::Error> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3000".into());
    let server = Server::bind(&addr).await?.with_config(config());
    println!("upload sink on http://{}", server.local_addr()?);
    server.serve(service_fn(count)).await
}
