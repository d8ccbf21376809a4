//! `http`: requests per second of `ringstream serve` and the hyper peer on
//! the same endpoints, driven by the same load generator (wrk), at 1 and 64
//! connections, alternating A/B/A/B; medians and ratios.

use std::process::Command;

use anyhow::{bail, Context};
use serde_json::json;

use super::servers::{start_hyper, start_ringstream, ServerProcess};
use crate::report::Row;

/// Flags of `http`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub common: super::Common,
    /// Seconds per wrk run.
    #[arg(long, default_value_t = 5)]
    pub duration: u64,
    /// Runs per server per case (alternated A/B/A/B).
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Runtime worker threads of each server.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// wrk threads.
    #[arg(long, default_value_t = 1)]
    pub wrk_threads: usize,
    /// Connection counts to measure.
    #[arg(long, value_delimiter = ',', default_value = "1,64")]
    pub connections: Vec<usize>,
    /// Paths to measure.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "/bytes/40960,/api/livedata"
    )]
    pub paths: Vec<String>,
    /// CPUs for the servers (taskset list); `none` to not pin.
    #[arg(long, default_value = "0")]
    pub server_cpus: String,
    /// CPUs for wrk (taskset list); `none` to not pin.
    #[arg(long, default_value = "1")]
    pub wrk_cpus: String,
}

/// `None` for the word `none`, else the CPU list.
pub fn cpus(list: &str) -> Option<&str> {
    (list != "none").then_some(list)
}

/// Make sure wrk is there, installing Debian's package if it is not.
pub fn ensure_wrk() -> anyhow::Result<()> {
    if Command::new("wrk").arg("--version").output().is_ok() {
        return Ok(());
    }
    eprintln!("wrk not found: installing Debian's wrk package");
    let ok = Command::new("sh")
        .args([
            "-c",
            "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk",
        ])
        .status()
        .is_ok_and(|s| s.success());
    if !ok || Command::new("wrk").arg("--version").output().is_err() {
        bail!("wrk is required for the http scenario and could not be installed");
    }
    Ok(())
}

fn wrk(server: &ServerProcess, path: &str, connections: usize, args: &Args) -> anyhow::Result<f64> {
    let url = format!("http://{}{}", server.addr, path);
    let out = super::servers::pinned(std::path::Path::new("wrk"), cpus(&args.wrk_cpus))
        .args([
            "-t",
            &args.wrk_threads.min(connections).to_string(),
            "-c",
            &connections.to_string(),
            "-d",
            &format!("{}s", args.duration),
            &url,
        ])
        .output()
        .context("running wrk")?;
    let text = String::from_utf8_lossy(&out.stdout);
    if text.contains("Non-2xx") || text.contains("Socket errors") {
        bail!("{} answered errors under load:\n{text}", server.name);
    }
    let rps = text
        .lines()
        .find_map(|l| l.strip_prefix("Requests/sec:"))
        .with_context(|| format!("no Requests/sec in wrk output:\n{text}"))?;
    Ok(rps.trim().parse()?)
}

/// Run the scenario.
pub fn run(args: &Args) -> anyhow::Result<()> {
    ensure_wrk()?;
    let ringstream = start_ringstream(args.workers, cpus(&args.server_cpus))?;
    let hyper = start_hyper(args.workers, cpus(&args.server_cpus))?;
    let mut rows = Vec::new();
    for path in &args.paths {
        for &connections in &args.connections {
            let mut samples = [Vec::new(), Vec::new()];
            // Warm both up, then alternate.
            for server in [&ringstream, &hyper] {
                let warm = Args {
                    duration: 1,
                    ..clone_args(args)
                };
                wrk(server, path, connections, &warm)?;
            }
            for _ in 0..args.rounds {
                for (i, server) in [&ringstream, &hyper].into_iter().enumerate() {
                    samples[i].push(wrk(server, path, connections, args)?);
                }
            }
            let medians = [super::median(&samples[0]), super::median(&samples[1])];
            for (i, server) in [&ringstream, &hyper].into_iter().enumerate() {
                rows.push(Row {
                    scenario: "http".into(),
                    variant: server.name.into(),
                    bytes: 0,
                    seconds: 1.0 / medians[i],
                    drain_seconds: None,
                    allocations: 0,
                    reallocations: 0,
                    bytes_allocated: 0,
                    peak_heap_bytes: 0,
                    extra: vec![
                        ("path".into(), json!(path)),
                        ("connections".into(), json!(connections)),
                        ("requests_per_second".into(), json!(medians[i])),
                        ("samples".into(), json!(samples[i])),
                        ("ratio_to_hyper".into(), json!(medians[i] / medians[1])),
                    ],
                });
            }
            if !args.common.json {
                println!(
                    "{path:<16} {connections:>3} conns  ringstream {:>10.0} req/s  hyper {:>10.0} req/s  ratio {:.2}",
                    medians[0],
                    medians[1],
                    medians[0] / medians[1]
                );
            }
        }
    }
    if args.common.json {
        crate::report::print_json(&rows);
    }
    Ok(())
}

fn clone_args(args: &Args) -> Args {
    Args {
        common: args.common.clone(),
        duration: args.duration,
        rounds: args.rounds,
        workers: args.workers,
        wrk_threads: args.wrk_threads,
        connections: args.connections.clone(),
        paths: args.paths.clone(),
        server_cpus: args.server_cpus.clone(),
        wrk_cpus: args.wrk_cpus.clone(),
    }
}
