//! `upload`: stream a large body (1 GiB by default) to `POST /upload` of
//! `ringstream serve` and of the hyper peer, chunked and with a
//! `Content-Length`, and report throughput, the server's CPU time per
//! upload (steadier than throughput on a shared machine; see `http`) and
//! its peak resident memory growth (from `/proc`).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Instant;

use anyhow::{bail, Context};
use serde_json::json;

use super::servers::{start_hyper, start_ringstream, ServerProcess};
use crate::report::Row;

/// Flags of `upload`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub common: super::Common,
    /// Runs per server per framing (alternated A/B/A/B).
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Runtime worker threads of each server.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// Size of each write of the client, in bytes (also the chunk size of
    /// the chunked upload).
    #[arg(long, default_value_t = 64 * 1024)]
    pub write_size: usize,
    /// CPUs for the servers (taskset list; the client runs on the others);
    /// `none` to not pin.
    #[arg(long, default_value = "0")]
    pub server_cpus: String,
    /// CPU the uploading client thread runs on; negative to not pin.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    pub client_cpu: i32,
}

/// One upload; returns (seconds, bytes the server reported).
fn upload(
    server: &ServerProcess,
    size: u64,
    chunked: bool,
    write_size: usize,
) -> anyhow::Result<f64> {
    let mut socket = TcpStream::connect(server.addr)?;
    socket.set_nodelay(true)?;
    let block: Vec<u8> = (0..write_size).map(|i| (i % 251) as u8).collect();
    let start = Instant::now();
    let head = if chunked {
        "POST /upload HTTP/1.1\r\nHost: bench\r\nTransfer-Encoding: chunked\r\n\r\n".to_string()
    } else {
        format!("POST /upload HTTP/1.1\r\nHost: bench\r\nContent-Length: {size}\r\n\r\n")
    };
    socket.write_all(head.as_bytes())?;
    let mut left = size;
    while left > 0 {
        let n = left.min(block.len() as u64) as usize;
        if chunked {
            socket.write_all(format!("{n:x}\r\n").as_bytes())?;
            socket.write_all(&block[..n])?;
            socket.write_all(b"\r\n")?;
        } else {
            socket.write_all(&block[..n])?;
        }
        left -= n as u64;
    }
    if chunked {
        socket.write_all(b"0\r\n\r\n")?;
    }
    let mut response = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = socket.read(&mut buf)?;
        if n == 0 {
            break;
        }
        response.extend_from_slice(&buf[..n]);
        if response.ends_with(b"}\n") {
            break;
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let text = String::from_utf8_lossy(&response);
    if !text.starts_with("HTTP/1.1 200") || !text.contains(&format!("\"bytes\":{size}")) {
        bail!("{} answered the upload with: {text}", server.name);
    }
    Ok(seconds)
}

/// Run the scenario.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let size = args.common.size.unwrap_or(1 << 30) as u64;
    let cpus = super::http::cpus(&args.server_cpus);
    // `ringstream serve` refuses bodies over 1 GiB by default: a larger
    // `--size` raises its limit to the upload's size.
    let servers = [
        start_ringstream(args.workers, cpus, size.max(1 << 30))?,
        start_hyper(args.workers, cpus)?,
    ];
    if let Ok(cpu) = usize::try_from(args.client_cpu) {
        super::pin_current_thread(cpu)?;
    }
    let mut rows = Vec::new();
    for chunked in [true, false] {
        let framing = if chunked { "chunked" } else { "fixed" };
        let mut seconds = [Vec::new(), Vec::new()];
        let mut cpu = [Vec::new(), Vec::new()];
        let mut growth = [0u64, 0u64];
        // A/B then B/A, so that neither server always runs first.
        for round in 0..args.rounds {
            for i in super::rounds::indices(round, 2) {
                let server = &servers[i];
                let before = server.rss()?;
                server.reset_peak()?;
                let cpu_before = server.cpu_ns()?;
                seconds[i].push(upload(server, size, chunked, args.write_size).context("upload")?);
                cpu[i].push(server.cpu_ns()?.saturating_sub(cpu_before) as f64 / 1e9);
                let peak = server.peak_rss()?;
                growth[i] = growth[i].max(peak.saturating_sub(before));
            }
        }
        let medians = [super::median(&seconds[0]), super::median(&seconds[1])];
        let cpu_medians = [super::median(&cpu[0]), super::median(&cpu[1])];
        let gbps = [
            size as f64 / medians[0] / 1e9,
            size as f64 / medians[1] / 1e9,
        ];
        for (i, server) in servers.iter().enumerate() {
            rows.push(Row {
                scenario: "upload".into(),
                variant: format!("{}-{framing}", server.name),
                bytes: size as usize,
                seconds: medians[i],
                extra: vec![
                    ("gbps".into(), json!(gbps[i])),
                    ("rss_growth_bytes".into(), json!(growth[i])),
                    ("ratio_to_hyper".into(), json!(gbps[i] / gbps[1])),
                    ("server_cpu_seconds".into(), json!(cpu_medians[i])),
                    (
                        "cpu_ratio_to_hyper".into(),
                        json!(cpu_medians[1] / cpu_medians[i]),
                    ),
                ],
                ..Row::default()
            });
            if !args.common.json {
                println!(
                    "{:<20} {:>8.3} s  {:>6.3} GB/s  peak RSS growth {:>8.1} KiB  ratio to hyper {:.2}  server CPU {:>6.3} s  CPU ratio {:.2}",
                    format!("{}-{framing}", server.name),
                    medians[i],
                    gbps[i],
                    growth[i] as f64 / 1024.0,
                    gbps[i] / gbps[1],
                    cpu_medians[i],
                    cpu_medians[1] / cpu_medians[i],
                );
            }
        }
    }
    if args.common.json {
        crate::report::print_json(&rows);
    }
    Ok(())
}
