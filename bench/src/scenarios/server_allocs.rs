//! `server-allocs`: allocations per request of ringstream's server, counted
//! in-process with the counting allocator, the server driven over an
//! in-memory connection ([`crate::mempipe`]) on one thread.
//!
//! Two sets of rows. The demo application's routes (`App`) count what a
//! real service costs together with the server. A static service, which
//! answers every request with a static 13-byte body and no header of its
//! own and so allocates nothing itself, counts the server's own
//! allocations per request, on a keep-alive connection (one request at a
//! time) and in pipelined batches; the hyper peer serves the same static
//! service over the same connection for comparison.

use std::convert::Infallible;
use std::future::Ready;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::Full;
use hyper_util::rt::TokioIo;
use serde_json::json;

use crate::alloc;
use crate::mempipe::{Client, Loopback};
use crate::report::Row;
use ringstream::server::{
    serve_connection_with_info, service_fn, Config, ConnectionInfo, Metrics,
};
use ringstream::Incoming;
use ringstream_cli::app::App;

/// Flags of `server-allocs`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub common: super::Common,
    /// Requests measured per row (after as many warm-up requests).
    #[arg(long, default_value_t = 2000)]
    pub requests: usize,
    /// Paths of the demo application to measure (`--paths ''`: none).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "/api/livedata,/bytes/40960,/metrics"
    )]
    pub paths: Vec<String>,
    /// Servers of the static service's rows (`--servers ''`: none).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "ringstream,ringstream-no-info,hyper"
    )]
    pub servers: Vec<String>,
    /// Requests per batch in the static service's rows: 1 is one request
    /// at a time on a keep-alive connection, more are pipelined.
    #[arg(long, value_delimiter = ',', default_value = "1,16")]
    pub depths: Vec<usize>,
    /// Methods of the static service's rows: `GET`, or `POST` with a
    /// 13-byte body (`Content-Length`) that the service drops unread.
    #[arg(long, value_delimiter = ',', default_value = "GET,POST")]
    pub methods: Vec<String>,
    /// Fields every request carries besides `Host` (`X-Field-1: value-1`
    /// and so on), as a browser sends a dozen.
    #[arg(long, default_value_t = 0)]
    pub extra_fields: usize,
}

/// The static service's body (13 bytes, as `/bytes/13`).
const BODY: &[u8] = b"hello, world!";

/// The static service's response: no field, a static body. Building it
/// allocates nothing.
fn static_response() -> Response<Full<Bytes>> {
    Response::new(Full::new(Bytes::from_static(BODY)))
}

/// The static service, for ringstream.
fn static_service(_: Request<Incoming>) -> Ready<Result<Response<Full<Bytes>>, Infallible>> {
    std::future::ready(Ok(static_response()))
}

/// The static service, for hyper.
fn static_service_hyper(
    _: Request<hyper::body::Incoming>,
) -> Ready<Result<Response<Full<Bytes>>, Infallible>> {
    std::future::ready(Ok(static_response()))
}

/// ringstream serving the static service on `io`. A function of its own,
/// so that a profile can single out the server's task
/// (`valgrind --tool=callgrind --toggle-collect='*serve_ringstream*'`).
async fn serve_ringstream(io: crate::mempipe::Server, connection_info: bool) {
    let config = Config {
        connection_info,
        ..Config::default()
    };
    let _ = serve_connection_with_info(io, info(), service_fn(static_service), config).await;
}

/// hyper serving the static service on `io` (`--toggle-collect='*serve_hyper*'`).
async fn serve_hyper(io: crate::mempipe::Server) {
    // As hyper's own benchmarks configure it (see `peer::serve_io`).
    let _ = hyper::server::conn::http1::Builder::new()
        .pipeline_flush(true)
        .serve_connection(
            TokioIo::new(io),
            hyper::service::service_fn(static_service_hyper),
        )
        .await;
}

/// Which server serves the static service.
#[derive(Clone, Copy)]
enum Server {
    /// ringstream, with or without `ConnectionInfo` on every request.
    Ringstream { connection_info: bool },
    /// hyper 1.x's `http1` connection.
    Hyper,
}

impl Server {
    fn parse(name: &str) -> anyhow::Result<Server> {
        Ok(match name {
            "ringstream" => Server::Ringstream {
                connection_info: true,
            },
            "ringstream-no-info" => Server::Ringstream {
                connection_info: false,
            },
            "hyper" => Server::Hyper,
            other => anyhow::bail!(
                "unknown server `{other}` (ringstream, ringstream-no-info or hyper)"
            ),
        })
    }

    fn name(self) -> &'static str {
        match self {
            Server::Ringstream {
                connection_info: true,
            } => "ringstream",
            Server::Ringstream {
                connection_info: false,
            } => "ringstream (no connection info)",
            Server::Hyper => "hyper",
        }
    }
}

/// The request of the static service's rows for `method`.
fn static_request(method: &str) -> anyhow::Result<&'static [u8]> {
    Ok(match method {
        "GET" => b"GET /static HTTP/1.1\r\nHost: bench\r\n\r\n",
        "POST" => concat!(
            "POST /static HTTP/1.1\r\nHost: bench\r\nContent-Length: 13\r\n\r\n",
            "hello, world!"
        )
        .as_bytes(),
        other => anyhow::bail!("unknown method `{other}` (GET or POST)"),
    })
}

fn info() -> ConnectionInfo {
    ConnectionInfo::new(
        std::net::SocketAddr::from(([127, 0, 0, 1], 40000)),
        std::net::SocketAddr::from(([127, 0, 0, 1], 8080)),
    )
}

/// Run the scenario.
pub fn run(args: &Args) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.requests > 0 && args.depths.iter().all(|&depth| depth > 0),
        "--requests and --depths must be positive"
    );
    let servers = args
        .servers
        .iter()
        .filter(|name| !name.is_empty())
        .map(|name| Server::parse(name))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut rows = Vec::new();
    for path in args.paths.iter().filter(|path| !path.is_empty()) {
        // With the client's address on every request, as the server gives
        // it by default (`Config::connection_info`), and without.
        for connection_info in [true, false] {
            let request = format!("GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n");
            let (per_request, bytes) = runtime.block_on(async {
                let loopback = Loopback::new(256 * 1024);
                let (mut client, server) = loopback.connect();
                let app =
                    App::new(Arc::new(Metrics::default())).with_fixed_time(Some(1_750_000_000));
                let config = Config {
                    connection_info,
                    ..Config::default()
                };
                let conn = tokio::spawn(serve_connection_with_info(server, info(), app, config));
                let request = with_fields(request.as_bytes(), args.extra_fields);
                let counted = measure(&mut client, &request, 1, args.requests).await;
                drop(client);
                let _ = conn.await;
                counted
            });
            let variant = if connection_info {
                path.clone()
            } else {
                format!("{path} (no connection info)")
            };
            push_row(&mut rows, args, variant, bytes, per_request);
        }
    }
    for method in args.methods.iter().filter(|method| !method.is_empty()) {
        let request = with_fields(static_request(method)?, args.extra_fields);
        let request = &request[..];
        for &server in &servers {
            for &depth in &args.depths {
                let (per_request, bytes) = runtime.block_on(async {
                    let loopback = Loopback::new(256 * 1024);
                    let (mut client, io) = loopback.connect();
                    let conn = match server {
                        Server::Ringstream { connection_info } => {
                            tokio::spawn(serve_ringstream(io, connection_info))
                        }
                        Server::Hyper => tokio::spawn(serve_hyper(io)),
                    };
                    let counted = measure(&mut client, request, depth, args.requests).await;
                    drop(client);
                    let _ = conn.await;
                    counted
                });
                let shape = if depth == 1 {
                    "keep-alive".to_owned()
                } else {
                    format!("{depth} pipelined")
                };
                let variant = format!("static {method}, {shape}, {}", server.name());
                push_row(&mut rows, args, variant, bytes, per_request);
            }
        }
    }
    if args.common.json {
        crate::report::print_json(&rows);
    }
    Ok(())
}

/// `request` with `extra` more fields before the end of its head.
fn with_fields(request: &[u8], extra: usize) -> Vec<u8> {
    let end = request
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(request.len(), |at| at + 2);
    let mut out = request[..end].to_vec();
    for i in 1..=extra {
        out.extend_from_slice(format!("X-Field-{i}: value-{i}\r\n").as_bytes());
    }
    out.extend_from_slice(&request[end..]);
    out
}

/// Allocations and reallocations per request over `requests` requests
/// sent in batches of `depth` pipelined requests (after as many warm-up
/// requests), and the length of a response.
async fn measure(client: &mut Client, request: &[u8], depth: usize, requests: usize) -> (f64, usize) {
    let batch = request.repeat(depth);
    let batches = requests.div_ceil(depth);
    let mut bytes = 0;
    for _ in 0..batches {
        client.send(&batch);
        for _ in 0..depth {
            bytes = client.response().await;
        }
    }
    alloc::reset();
    for _ in 0..batches {
        client.send(&batch);
        for _ in 0..depth {
            client.response().await;
        }
    }
    let counted = alloc::snapshot();
    let total = counted.allocations + counted.reallocations;
    (total as f64 / (batches * depth) as f64, bytes)
}

fn push_row(rows: &mut Vec<Row>, args: &Args, variant: String, bytes: usize, per_request: f64) {
    if !args.common.json {
        println!(
            "{variant:<58} {bytes:>7} bytes/response  {per_request:>6.2} allocations+reallocations per request"
        );
    }
    rows.push(Row {
        scenario: "server-allocs".into(),
        variant,
        bytes,
        seconds: 0.0,
        drain_seconds: None,
        allocations: per_request.round() as usize,
        reallocations: 0,
        bytes_allocated: 0,
        peak_heap_bytes: 0,
        extra: vec![("allocations_per_request".into(), json!(per_request))],
    });
}
