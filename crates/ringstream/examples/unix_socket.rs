//! ringstream on a Unix domain socket, with the same cap, timeouts, metrics
//! and graceful shutdown as on TCP; each request knows the socket it came
//! on (`ConnectionInfo`).
//!
//! Run with `cargo run -p ringstream --example unix_socket -- /tmp/ringstream.sock`,
//! then `curl --unix-socket /tmp/ringstream.sock http://localhost/`.
//! Ctrl-C stops it gracefully.

use std::convert::Infallible;
use std::path::Path;

use ringstream::server::{self, service_fn, ConnectionInfo};
use ringstream::{Incoming, ResponseStream};

/// Answers with the method, the target and both ends of the connection.
pub async fn handle(
    req: http::Request<Incoming>,
) -> Result<http::Response<ResponseStream>, Infallible> {
    let mut page = ResponseStream::buffered();
    let (remote, local) = match req.extensions().get::<ConnectionInfo>() {
        Some(info) => (
            info.remote_addr().to_string(),
            info.local_addr().to_string(),
        ),
        None => (String::from("-"), String::from("-")),
    };
    let _ = writeln!(page, "{} {}", req.method(), req.uri());
    let _ = writeln!(page, "from {remote} to {local}");
    Ok(http::Response::new(page))
}

/// Serves [`handle`] on a Unix socket at `path` until `stop` completes.
pub async fn serve_at(
    path: &Path,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ringstream::Error> {
    // A socket file left by an earlier run would make the bind fail.
    let _ = std::fs::remove_file(path);
    let listener = tokio::net::UnixListener::bind(path)?;
    let served = server::serve(listener, service_fn(handle))
        .with_graceful_shutdown(stop)
        .await;
    let _ = std::fs::remove_file(path);
    served
}

#[tokio::main]
async fn main() -> Result<(), ringstream::Error> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "/tmp/ringstream.sock".into());
    println!("serving on unix:{path}");
    serve_at(Path::new(&path), async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await
}
