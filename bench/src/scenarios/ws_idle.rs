//! `ws-idle`: resident memory per idle WebSocket connection of
//! `ringstream serve` (`/ws/echo`) and the fastwebsockets and
//! tokio-tungstenite peers (`ws-peer`).
//!
//! Each round starts every server afresh (so no memory freed by an earlier
//! round is reused), checks one upgrade and echo, reads its RSS
//! (`VmRSS`), then opens `--connections` connections (1,000 by default)
//! and waits until each is upgraded (its `101` read), and reads the RSS
//! again after a short settling pause: connections that have sent nothing
//! since their upgrade. Then every connection echoes one 64-byte message,
//! and the RSS is read a third time, since a library may allocate its
//! buffers only on the first message. The growth over the connection count
//! is the memory per idle connection; the table shows medians over rounds,
//! servers alternating in order from round to round.
//!
//! Each server is measured with two kinds of client (`--request`): one
//! that sends its upgrade request as soon as it is connected (the server
//! usually finds it there on its first read), and one that sends it a
//! millisecond later (`--late-us`), so that the server's connection has
//! waited on HTTP for its request first, as a browser's or a script's
//! may. The connections are made one after another either way.

use std::time::Duration;

use anyhow::Context;
use serde_json::json;

use super::ws::{self, ServerArgs};
use crate::report::Row;
use crate::wsclient::{self, Conn};

/// When a client sends its upgrade request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Request {
    /// As soon as the connection is made.
    AtOnce,
    /// A moment (`--late-us`) after the connection is made, once the
    /// server has accepted it and waits, on HTTP, for its request.
    Late,
}

impl Request {
    fn name(self) -> &'static str {
        match self {
            Request::AtOnce => "at once",
            Request::Late => "late",
        }
    }
}

/// Flags of `ws-idle`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub common: super::Common,
    #[command(flatten)]
    pub servers: ServerArgs,
    /// Rounds; each starts every server afresh.
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Connections held open at once.
    #[arg(long, default_value_t = 1000)]
    pub connections: usize,
    /// Milliseconds to let the server settle before each RSS reading.
    #[arg(long, default_value_t = 300)]
    pub settle_ms: u64,
    /// Microseconds a late client waits between connecting and sending
    /// its upgrade request.
    #[arg(long, default_value_t = 1000)]
    pub late_us: u64,
    /// When the clients send their upgrade requests: a row for each.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "at-once,late")]
    pub request: Vec<Request>,
}

/// What one round measured of one server, in bytes.
#[derive(Debug, Clone, Copy)]
struct Sample {
    before: u64,
    upgraded: u64,
    echoed: u64,
}

/// Run the scenario.
pub fn run(args: &Args) -> anyhow::Result<()> {
    ws::raise_fd_limit(2 * args.connections as u64 + 256);
    let rt = ws::client_runtime(args.servers.client_cpu)?;
    let payload = wsclient::payload(64);
    let frame = wsclient::masked_frame(wsclient::OP_BINARY, &payload, wsclient::MASK);
    let mut kinds = args.servers.servers.clone();
    let mut samples: Vec<(&'static str, Request, Vec<Sample>)> = Vec::new();
    for round in 0..args.rounds {
        for kind in super::rounds::alternated(round, &kinds) {
            for &request in &args.request {
                let Some(server) = ws::start_checked(kind, &args.servers, args.connections, &rt)?
                else {
                    // Skipped, with a note: not in later rounds either.
                    kinds.retain(|k| *k != kind);
                    break;
                };
                let sample = measure(&server, request, args, &rt, &frame, &payload)?;
                match samples
                    .iter_mut()
                    .find(|(name, r, _)| *name == server.name && *r == request)
                {
                    Some((_, _, v)) => v.push(sample),
                    None => samples.push((server.name, request, vec![sample])),
                }
            }
        }
    }
    anyhow::ensure!(!samples.is_empty(), "no server to measure");
    if !args.common.json {
        println!(
            "{:<15} {:<8} {:>6}  {:>10}  {:>14} {:>10}  {:>14} {:>10}",
            "server",
            "request",
            "conns",
            "RSS before",
            "after upgrade",
            "per conn",
            "after one echo",
            "per conn"
        );
    }
    let n = args.connections.max(1) as f64;
    let mut rows = Vec::new();
    for (name, request, v) in &samples {
        let median = |f: fn(&Sample) -> f64| super::rounds::median_by(v, f);
        let before = median(|s| s.before as f64);
        let upgraded = median(|s| s.upgraded as f64);
        let echoed = median(|s| s.echoed as f64);
        let per_upgraded: Vec<f64> = v
            .iter()
            .map(|s| s.upgraded.saturating_sub(s.before) as f64 / n / 1024.0)
            .collect();
        let per_echoed: Vec<f64> = v
            .iter()
            .map(|s| s.echoed.saturating_sub(s.before) as f64 / n / 1024.0)
            .collect();
        let (kib_upgraded, kib_echoed) = (super::median(&per_upgraded), super::median(&per_echoed));
        rows.push(Row {
            scenario: "ws-idle".into(),
            variant: (*name).into(),
            bytes: 0,
            seconds: 0.0,
            extra: vec![
                ("request".into(), json!(request.name())),
                ("connections".into(), json!(args.connections)),
                ("rss_before_bytes".into(), json!(before)),
                ("rss_upgraded_bytes".into(), json!(upgraded)),
                ("rss_echoed_bytes".into(), json!(echoed)),
                ("kib_per_connection_upgraded".into(), json!(kib_upgraded)),
                ("kib_per_connection_echoed".into(), json!(kib_echoed)),
                ("upgraded_samples".into(), json!(per_upgraded)),
                ("echoed_samples".into(), json!(per_echoed)),
            ],
            ..Row::default()
        });
        if !args.common.json {
            println!(
                "{:<15} {:<8} {:>6}  {:>6.1} MiB  {:>10.1} MiB {:>6.1} KiB  {:>10.1} MiB {:>6.1} KiB",
                name,
                request.name(),
                args.connections,
                before / 1048576.0,
                upgraded / 1048576.0,
                kib_upgraded,
                echoed / 1048576.0,
                kib_echoed,
            );
        }
    }
    if args.common.json {
        crate::report::print_json(&rows);
    }
    Ok(())
}

/// One round of one server: the RSS before, with every connection
/// upgraded and silent, and after one echo on each.
fn measure(
    server: &super::servers::ServerProcess,
    request: Request,
    args: &Args,
    rt: &tokio::runtime::Runtime,
    frame: &[u8],
    payload: &[u8],
) -> anyhow::Result<Sample> {
    let settle = Duration::from_millis(args.settle_ms);
    let late = Duration::from_micros(args.late_us);
    let path = args.servers.path();
    let n = args.connections;
    let failed = |i: usize| format!("connection {} of {n} to {}", i + 1, server.name);
    std::thread::sleep(settle);
    let before = server.rss()?;
    let mut conns = Vec::with_capacity(n);
    match request {
        Request::AtOnce => rt.block_on(async {
            for i in 0..n {
                conns.push(
                    Conn::connect(server.addr, path, 512)
                        .await
                        .with_context(|| failed(i))?,
                );
            }
            anyhow::Ok(())
        })?,
        Request::Late => rt.block_on(async {
            for i in 0..n {
                let stream = tokio::net::TcpStream::connect(server.addr)
                    .await
                    .with_context(|| failed(i))?;
                // The server accepts the connection and waits for its
                // request meanwhile.
                tokio::time::sleep(late).await;
                conns.push(
                    Conn::upgrade(stream, server.addr, path, 512)
                        .await
                        .with_context(|| failed(i))?,
                );
            }
            anyhow::Ok(())
        })?,
    }
    std::thread::sleep(settle);
    let upgraded = server.rss()?;
    rt.block_on(async {
        for conn in &mut conns {
            conn.send(frame).await?;
            conn.read_message(Some(payload)).await?;
        }
        anyhow::Ok(())
    })
    .with_context(|| format!("echoing once on each connection to {}", server.name))?;
    std::thread::sleep(settle);
    let echoed = server.rss()?;
    Ok(Sample {
        before,
        upgraded,
        echoed,
    })
}
