//! The smallest ringstream server: a page printed into a `ResponseStream`.
//!
//! Run with `cargo run -p ringstream --example hello`, then `curl http://127.0.0.1:3000/`.

use std::convert::Infallible;

use ringstream::server::{service_fn, Server};
use ringstream::{Incoming, ResponseStream};

#[tokio::main]
async fn main() -> Result<(), ringstream::Error> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3000".into());
    let server = Server::bind(&addr).await?;
    println!("hello on http://{}", server.local_addr()?);
    server
        .serve(service_fn(|req: http::Request<Incoming>| async move {
            let mut page = ResponseStream::buffered();
            let _ = writeln!(page, "hello from ringstream");
            let _ = writeln!(page, "you asked for {} {}", req.method(), req.uri());
            Ok::<_, Infallible>(http::Response::new(page))
        }))
        .await
}
