//! Logging the tracing way: a subscriber that prints ringstream's request
//! spans (OpenTelemetry field names: `http.request.method`, `url.path`,
//! `client.address`, ...) around the handler's own events, and the
//! server's access line (`Config::access_log`) on the `ringstream::access`
//! target.
//!
//! Run with `cargo run -p ringstream --example tracing`, then
//! `curl 'http://127.0.0.1:3000/hello?name=ring'`. `RUST_LOG` chooses what
//! is printed, e.g. `RUST_LOG=info,ringstream::access=off` for the spans
//! and events without the access line.

use std::convert::Infallible;

use ringstream::server::{service_fn, Config, Server};
use ringstream::{Incoming, ResponseStream};
use tracing_subscriber::EnvFilter;

/// A handler that logs inside the request's span.
pub async fn hello(
    req: http::Request<Incoming>,
) -> Result<http::Response<ResponseStream>, Infallible> {
    let name = req
        .uri()
        .query()
        .and_then(|q| q.strip_prefix("name="))
        .unwrap_or("world")
        .to_owned();
    tracing::info!(%name, "greeting");
    let mut page = ResponseStream::buffered();
    let _ = writeln!(page, "hello, {name}");
    Ok(http::Response::new(page))
}

/// The server's configuration: the access line on.
pub fn config() -> Config {
    Config {
        access_log: true,
        ..Config::default()
    }
}

/// The subscriber: `RUST_LOG`, else `info` (request spans, handler events
/// and access lines), written to `writer`, in colour when `ansi`.
pub fn subscriber<W>(writer: W, ansi: bool) -> impl tracing::Subscriber + Send + Sync
where
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(writer)
        .with_ansi(ansi)
        .finish()
}

#[tokio::main]
async fn main() -> Result<(), ringstream::Error> {
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing::subscriber::set_global_default(subscriber(std::io::stderr, ansi))
        .expect("no other subscriber is set");
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3000".into());
    let server = Server::bind(&addr).await?.with_config(config());
    tracing::info!(addr = %server.local_addr()?, "listening");
    server.serve(service_fn(hello)).await
}
