//! `http`: requests per second of `ringstream serve` and the hyper peer on
//! the same endpoints, driven by the same load generator (wrk), at 1 and 64
//! connections, alternating A/B, B/A; medians and ratios.
//!
//! A ratio is the median over rounds of the ratio between the two runs of a
//! round, which follow each other within seconds: on a shared machine whose
//! speed drifts from one second to the next, only neighbouring runs compare
//! fairly. The quartiles of those per-round ratios are printed beside it,
//! to show how far a single round can be trusted.
//!
//! Beside requests per second it reports the server's CPU time per request
//! (its threads' run time from `/proc`, divided by the requests wrk
//! completed). On a virtual machine whose CPUs are shared, wall-clock
//! throughput swings with the time the hypervisor steals and with how long
//! an idle virtual CPU takes to wake up; CPU time per request is what the
//! server itself spends, and holds steady across runs. The share of time
//! stolen from the machine during the runs is printed too.

use std::process::Command;

use anyhow::{bail, Context};
use serde_json::json;

use super::rounds::{quartiles, ratios};
use super::servers::{start_hyper, start_ringstream, ServerProcess};
use crate::report::Row;

/// Flags of `http`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub common: super::Common,
    /// Seconds per wrk run.
    #[arg(long, default_value_t = 2)]
    pub duration: u64,
    /// Runs per server per case (alternated A/B/A/B).
    #[arg(long, default_value_t = 7)]
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

/// What one wrk run measured.
#[derive(Debug, Clone, Copy)]
struct Sample {
    requests_per_second: f64,
    /// Server CPU time per completed request, in microseconds.
    cpu_micros_per_request: f64,
}

fn wrk(
    server: &ServerProcess,
    path: &str,
    connections: usize,
    args: &Args,
) -> anyhow::Result<Sample> {
    let url = format!("http://{}{}", server.addr, path);
    let cpu_before = server.cpu_ns()?;
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
    let cpu = server.cpu_ns()?.saturating_sub(cpu_before);
    let text = String::from_utf8_lossy(&out.stdout);
    if text.contains("Non-2xx") || text.contains("Socket errors") {
        bail!("{} answered errors under load:\n{text}", server.name);
    }
    let rps = text
        .lines()
        .find_map(|l| l.strip_prefix("Requests/sec:"))
        .with_context(|| format!("no Requests/sec in wrk output:\n{text}"))?;
    // "  12345 requests in 2.00s, 480.00MB read"
    let requests: f64 = text
        .lines()
        .find_map(|l| l.trim().split_once(" requests in "))
        .with_context(|| format!("no request count in wrk output:\n{text}"))?
        .0
        .parse()?;
    if requests < 1.0 {
        bail!("{} completed no request:\n{text}", server.name);
    }
    Ok(Sample {
        requests_per_second: rps.trim().parse()?,
        cpu_micros_per_request: cpu as f64 / 1e3 / requests,
    })
}

/// Ticks the whole machine has spent (all, stolen) so far, from the `cpu`
/// line of `/proc/stat`.
pub fn machine_ticks() -> anyhow::Result<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat")?;
    let line = stat.lines().next().context("empty /proc/stat")?;
    let ticks: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(str::parse)
        .collect::<Result<_, _>>()?;
    // user nice system idle iowait irq softirq steal ...
    let steal = ticks.get(7).copied().unwrap_or(0);
    Ok((ticks.iter().take(8).sum(), steal))
}

/// The share of the machine's ticks stolen since `start`, a reading of
/// [`machine_ticks`].
pub fn steal_since((total0, steal0): (u64, u64)) -> anyhow::Result<f64> {
    let (total1, steal1) = machine_ticks()?;
    Ok((steal1 - steal0) as f64 / (total1 - total0).max(1) as f64)
}

/// Run the scenario.
pub fn run(args: &Args) -> anyhow::Result<()> {
    ensure_wrk()?;
    let ringstream = start_ringstream(args.workers, cpus(&args.server_cpus), 1 << 30)?;
    let hyper = start_hyper(args.workers, cpus(&args.server_cpus))?;
    let mut rows = Vec::new();
    if !args.common.json {
        println!(
            "{:<16} {:>5}  {:>15} {:>15} {:>18}  {:>18} {:>13} {:>18}  {:>6}",
            "path",
            "conns",
            "ringstream req/s",
            "hyper req/s",
            "ratio (quartiles)",
            "ringstream CPU/req",
            "hyper CPU/req",
            "ratio (quartiles)",
            "steal"
        );
    }
    for path in &args.paths {
        for &connections in &args.connections {
            let mut samples: [Vec<Sample>; 2] = [Vec::new(), Vec::new()];
            // Warm both up, then alternate.
            for server in [&ringstream, &hyper] {
                let warm = Args {
                    duration: 1,
                    ..clone_args(args)
                };
                wrk(server, path, connections, &warm)?;
            }
            let ticks = machine_ticks()?;
            // A/B then B/A, so that neither server always runs first.
            for round in 0..args.rounds {
                for i in super::rounds::indices(round, 2) {
                    let server = [&ringstream, &hyper][i];
                    samples[i].push(wrk(server, path, connections, args)?);
                }
            }
            let steal = steal_since(ticks)?;
            let rps = |i: usize| -> Vec<f64> {
                samples[i].iter().map(|s| s.requests_per_second).collect()
            };
            let cpu = |i: usize| -> Vec<f64> {
                samples[i]
                    .iter()
                    .map(|s| s.cpu_micros_per_request)
                    .collect()
            };
            let medians = [super::median(&rps(0)), super::median(&rps(1))];
            let cpu_medians = [super::median(&cpu(0)), super::median(&cpu(1))];
            let rps_ratios = ratios(&rps(0), &rps(1));
            let cpu_ratios = ratios(&cpu(1), &cpu(0));
            let (rps_ratio, rps_q) = (super::median(&rps_ratios), quartiles(&rps_ratios));
            let (cpu_ratio, cpu_q) = (super::median(&cpu_ratios), quartiles(&cpu_ratios));
            for (i, server) in [&ringstream, &hyper].into_iter().enumerate() {
                rows.push(Row {
                    scenario: "http".into(),
                    variant: server.name.into(),
                    bytes: 0,
                    seconds: 1.0 / medians[i],
                    extra: vec![
                        ("path".into(), json!(path)),
                        ("connections".into(), json!(connections)),
                        ("requests_per_second".into(), json!(medians[i])),
                        ("samples".into(), json!(rps(i))),
                        (
                            "ratio_to_hyper".into(),
                            json!(if i == 0 { rps_ratio } else { 1.0 }),
                        ),
                        ("round_ratios".into(), json!(rps_ratios)),
                        ("cpu_micros_per_request".into(), json!(cpu_medians[i])),
                        ("cpu_samples".into(), json!(cpu(i))),
                        (
                            "cpu_ratio_to_hyper".into(),
                            json!(if i == 0 { cpu_ratio } else { 1.0 }),
                        ),
                        ("cpu_round_ratios".into(), json!(cpu_ratios)),
                        ("steal_share".into(), json!(steal)),
                    ],
                    ..Row::default()
                });
            }
            if !args.common.json {
                println!(
                    "{path:<16} {connections:>5}  {:>15.0} {:>15.0} {:>6.2} ({:.2}–{:.2})  {:>15.1} µs {:>10.1} µs {:>6.2} ({:.2}–{:.2})  {:>5.1}%",
                    medians[0],
                    medians[1],
                    rps_ratio,
                    rps_q.0,
                    rps_q.1,
                    cpu_medians[0],
                    cpu_medians[1],
                    cpu_ratio,
                    cpu_q.0,
                    cpu_q.1,
                    steal * 100.0,
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
