//! Serve a directory over HTTP on 127.0.0.1:8080.
//!
//! ```text
//! cargo run -p ringstream --example static_site -- path/to/site
//! curl -i http://127.0.0.1:8080/
//! ```
//!
//! The directory defaults to `.`. Precompressed `FILE.br` / `FILE.gz`
//! variants are served to clients that accept them. Ctrl-C stops the
//! server gracefully.

use ringstream::fs::ServeDir;
use ringstream::server::Server;

#[tokio::main]
async fn main() -> Result<(), ringstream::Error> {
    let root = std::env::args().nth(1).unwrap_or_else(|| ".".to_owned());
    let files = ServeDir::new(&root).precompressed_br().precompressed_gzip();
    let server = Server::bind("127.0.0.1:8080").await?;
    println!("serving {root} on http://{}/", server.local_addr()?);
    server
        .serve(files)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
}
