//! A streaming upload: the request body is read block by block as it
//! arrives and counted, never held whole, whatever its size.
//!
//! Run with `cargo run -p ringstream --example upload`, then
//! `curl -T some-big-file http://127.0.0.1:3000/`.

use std::convert::Infallible;

use ringstream::server::{service_fn, Server};
use ringstream::Incoming;

#[tokio::main]
async fn main() -> Result<(), ringstream::Error> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3000".into());
    let server = Server::bind(&addr).await?;
    println!("upload sink on http://{}", server.local_addr()?);
    server
        .serve(service_fn(|req: http::Request<Incoming>| async move {
            let mut body = req.into_body();
            let (mut bytes, mut pieces, mut largest) = (0u64, 0u64, 0usize);
            let answer = loop {
                match body.read_partial(usize::MAX).await {
                    Ok(Some(piece)) => {
                        bytes += piece.len() as u64;
                        pieces += 1;
                        largest = largest.max(piece.len());
                    }
                    Ok(None) => {
                        break format!("{bytes} bytes in {pieces} pieces (largest {largest})\n")
                    }
                    Err(e) => break format!("upload failed after {bytes} bytes: {e}\n"),
                }
            };
            Ok::<_, Infallible>(http::Response::new(answer))
        }))
        .await
}
