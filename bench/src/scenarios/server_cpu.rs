//! `server-cpu`: CPU time and allocations per request of ringstream's
//! server and of the hyper peer, in one process on one current-thread
//! runtime, each served over an in-memory connection ([`crate::mempipe`])
//! by the same keep-alive client, which takes the responses out of one
//! shared buffer without copying them.
//!
//! No sockets, no kernel and no second CPU are involved, so what differs
//! between the two is the servers' own user-space work per request: head
//! parsing, request and response building, body framing and the
//! connection's bookkeeping, plus each side's handler: ringstream's `App`
//! and the peer's own handler (`peer::handle`), which answer the same
//! routes with the same bodies and headers and share the page-printing
//! code. Each server's writes into the shared buffer (the stand-in for
//! the kernel's copy of a socket send) and the client's work are the same
//! for both, so the ratio understates the difference between the servers
//! themselves. Short batches of requests alternate between the servers
//! (A/B/A/B), each reports the median over its batches of the thread's
//! CPU time per request, and the ratio is the median of the ratios of neighbouring
//! batches: on a shared machine whose speed changes from one second to the
//! next, only batches measured close together compare fairly.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use serde_json::json;

use super::{median, thread_cpu_time};
use crate::alloc;
use crate::mempipe::Loopback;
use crate::report::Row;
use ringstream_cli::app::App;
use ringstream::server::{serve_connection, Config, Metrics};

/// Flags of `server-cpu`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub common: super::Common,
    /// Requests per batch.
    #[arg(long, default_value_t = 100)]
    pub requests: usize,
    /// Batches per server and path (alternated A/B/A/B).
    #[arg(long, default_value_t = 400)]
    pub rounds: usize,
    /// Paths to measure.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "/bytes/40960,/api/livedata,/bytes/100"
    )]
    pub paths: Vec<String>,
}

/// The servers, in the order they are reported.
const SERVERS: [&str; 2] = ["ringstream", "hyper"];

/// The fixed clock of the simulated installation, so both servers print
/// the same page.
const FIXED_TIME: u64 = 1_750_000_000;

/// Run the scenario.
pub fn run(args: &Args) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.requests > 0 && args.rounds > 0,
        "--requests and --rounds must be positive"
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut rows = Vec::new();
    if !args.common.json {
        println!(
            "{:<16} {:>9}  {:>18} {:>14} {:>6}  {:>18} {:>13}",
            "path",
            "bytes",
            "ringstream CPU/req",
            "hyper CPU/req",
            "ratio",
            "ringstream allocs",
            "hyper allocs"
        );
    }
    for path in &args.paths {
        let request = format!("GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n");
        let (cpu, allocs, bytes) = runtime.block_on(async {
            let app = || App::new(Arc::new(Metrics::default())).with_fixed_time(Some(FIXED_TIME));
            let loopback = Loopback::new(256 * 1024);
            let (client_r, server_r) = loopback.connect();
            let (client_h, server_h) = loopback.connect();
            let ringstream = tokio::spawn(serve_connection(server_r, app(), Config::default()));
            let hyper = tokio::spawn(crate::peer::serve_io(
                server_h,
                Arc::new(AtomicUsize::new(0)),
                app(),
            ));
            let mut clients = [client_r, client_h];
            let mut bytes = [0usize; 2];
            // Warm-up: page-size hints, allocator pools, caches.
            for (client, bytes) in clients.iter_mut().zip(&mut bytes) {
                for _ in 0..500 {
                    *bytes = client.exchange(request.as_bytes()).await;
                }
            }
            let mut cpu: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
            let mut allocs: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
            for round in 0..args.rounds {
                for i in super::rounds::indices(round, 2) {
                    let client = &mut clients[i];
                    alloc::reset();
                    let t0 = thread_cpu_time();
                    for _ in 0..args.requests {
                        client.exchange(request.as_bytes()).await;
                    }
                    let spent = thread_cpu_time().saturating_sub(t0);
                    let counted = alloc::snapshot();
                    cpu[i].push(spent.as_secs_f64() * 1e6 / args.requests as f64);
                    allocs[i].push(
                        (counted.allocations + counted.reallocations) as f64
                            / args.requests as f64,
                    );
                }
            }
            drop(clients);
            let _ = ringstream.await;
            let _ = hyper.await;
            (cpu, allocs, bytes)
        });
        anyhow::ensure!(
            bytes[0].abs_diff(bytes[1]) < 512,
            "{path}: the servers' responses differ in size ({} vs {} bytes)",
            bytes[0],
            bytes[1]
        );
        let cpu_medians = [median(&cpu[0]), median(&cpu[1])];
        let paired: Vec<f64> = cpu[0].iter().zip(&cpu[1]).map(|(r, h)| h / r).collect();
        let ratio = median(&paired);
        let alloc_medians = [median(&allocs[0]), median(&allocs[1])];
        for (i, server) in SERVERS.into_iter().enumerate() {
            rows.push(Row {
                scenario: "server-cpu".into(),
                variant: server.into(),
                bytes: bytes[i],
                seconds: cpu_medians[i] / 1e6,
                drain_seconds: None,
                allocations: alloc_medians[i].round() as usize,
                reallocations: 0,
                bytes_allocated: 0,
                peak_heap_bytes: 0,
                extra: vec![
                    ("path".into(), json!(path)),
                    ("cpu_micros_per_request".into(), json!(cpu_medians[i])),
                    ("cpu_samples".into(), json!(cpu[i])),
                    (
                        "cpu_ratio_to_hyper".into(),
                        json!(if i == 0 { ratio } else { 1.0 }),
                    ),
                    ("allocations_per_request".into(), json!(alloc_medians[i])),
                ],
            });
        }
        if !args.common.json {
            println!(
                "{path:<16} {:>9}  {:>15.2} µs {:>11.2} µs {:>6.2}  {:>18.2} {:>13.2}",
                bytes[0],
                cpu_medians[0],
                cpu_medians[1],
                ratio,
                alloc_medians[0],
                alloc_medians[1],
            );
        }
    }
    if args.common.json {
        crate::report::print_json(&rows);
    }
    Ok(())
}
