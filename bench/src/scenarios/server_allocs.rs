//! `server-allocs`: allocations per request of ringstream's server, counted
//! in-process with the counting allocator, the server driven over an
//! in-memory connection ([`crate::mempipe`]) on one thread.

use std::sync::Arc;

use serde_json::json;

use crate::alloc;
use crate::mempipe::Loopback;
use crate::report::Row;
use ringstream_cli::app::App;
use ringstream::server::{serve_connection_with_info, Config, ConnectionInfo, Metrics};

/// Flags of `server-allocs`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub common: super::Common,
    /// Requests measured per path (after as many warm-up requests).
    #[arg(long, default_value_t = 2000)]
    pub requests: usize,
    /// Paths to measure.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "/api/livedata,/bytes/40960,/metrics"
    )]
    pub paths: Vec<String>,
}

/// Run the scenario.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut rows = Vec::new();
    for path in &args.paths {
        // With the client's address on every request, as the server gives
        // it by default (`Config::connection_info`), and without.
        for connection_info in [true, false] {
            let request = format!("GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n");
            let (per_request, bytes) = runtime.block_on(async {
                let loopback = Loopback::new(256 * 1024);
                let (mut client, server) = loopback.connect();
                let app =
                    App::new(Arc::new(Metrics::default())).with_fixed_time(Some(1_750_000_000));
                let info = ConnectionInfo::new(
                    std::net::SocketAddr::from(([127, 0, 0, 1], 40000)),
                    std::net::SocketAddr::from(([127, 0, 0, 1], 8080)),
                );
                let config = Config {
                    connection_info,
                    ..Config::default()
                };
                let conn = tokio::spawn(serve_connection_with_info(server, info, app, config));
                let mut bytes = 0;
                for _ in 0..args.requests {
                    bytes = client.exchange(request.as_bytes()).await;
                }
                alloc::reset();
                for _ in 0..args.requests {
                    client.exchange(request.as_bytes()).await;
                }
                let counted = alloc::snapshot();
                drop(client);
                let _ = conn.await;
                let total = counted.allocations + counted.reallocations;
                (total as f64 / args.requests as f64, bytes)
            });
            let variant = if connection_info {
                path.clone()
            } else {
                format!("{path} (no connection info)")
            };
            rows.push(Row {
                scenario: "server-allocs".into(),
                variant: variant.clone(),
                bytes,
                seconds: 0.0,
                drain_seconds: None,
                allocations: per_request.round() as usize,
                reallocations: 0,
                bytes_allocated: 0,
                peak_heap_bytes: 0,
                extra: vec![("allocations_per_request".into(), json!(per_request))],
            });
            if !args.common.json {
                println!(
                    "{variant:<36} {bytes:>7} bytes/response  {per_request:>6.2} allocations+reallocations per request"
                );
            }
        }
    }
    if args.common.json {
        crate::report::print_json(&rows);
    }
    Ok(())
}
