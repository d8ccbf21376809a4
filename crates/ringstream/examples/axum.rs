//! An axum `Router` served by ringstream's server, unchanged.
//!
//! Run with `cargo run --example axum`, then:
//!
//! ```text
//! curl http://127.0.0.1:3000/hello/world
//! curl -d 'some text' http://127.0.0.1:3000/count
//! curl http://127.0.0.1:3000/stream
//! ```

use axum::body::Body;
use axum::extract::Path;
use axum::routing::{get, post};
use axum::Router;
use ringstream::server::Server;
use ringstream::ResponseStream;

/// The application: plain axum handlers, plus a ringstream `ResponseStream`
/// used as an axum body.
pub fn router() -> Router {
    Router::new()
        .route(
            "/hello/{name}",
            get(|Path(name): Path<String>| async move { format!("hello, {name}\n") }),
        )
        .route(
            "/count",
            post(|body: axum::body::Bytes| async move { format!("{} bytes\n", body.len()) }),
        )
        .route(
            "/stream",
            get(|| async {
                let mut page = ResponseStream::buffered();
                for i in 0..100 {
                    std::fmt::Write::write_fmt(&mut page, format_args!("line {i}\n")).unwrap();
                }
                Body::new(page)
            }),
        )
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3000".into());
    let server = Server::bind(&addr).await?;
    println!("axum on ringstream: http://{}", server.local_addr()?);
    server.serve(router()).await
}
