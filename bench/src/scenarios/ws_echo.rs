//! `ws-echo`: messages per second and server CPU time per message of
//! WebSocket echo servers — `ringstream serve` (`/ws/echo`), and the
//! fastwebsockets and tokio-tungstenite peers (`ws-peer`) — under the same
//! raw-frame load client, side by side.
//!
//! Each server runs as a child process pinned to core 0; the client runs on
//! one current-thread runtime pinned to core 1. Every connection sends one
//! masked binary frame (built and masked once per case), reads the whole
//! echo back by its header's length, and repeats, so the client does a
//! write and a read or two per message and nothing else. A run connects
//! the connections, echoes for `--warmup` seconds, then counts the
//! messages echoed in the next `--duration` seconds and the CPU time that
//! the server's threads (from `/proc/PID/task/*/schedstat`) and the
//! client's thread spent in that window. Servers alternate round by round
//! (A B C, then C B A); the table shows medians over rounds, and the CPU
//! per message of each server against fastwebsockets' as the median of
//! the ratios within each round (with their quartiles), as `http` does.
//!
//! The client's own CPU share tells whether it limited a case: a client
//! busy ≥ 90% of the window while the server's core is below 90% is the
//! bottleneck, and the `bound` column and the closing line say so (and
//! name the cases where both cores were saturated). The
//! `others` column is the CPU time that everything else on the machine
//! took during the window (from `/proc/stat`, in % of one core): on a
//! shared machine, runs where it is high are disturbed, and the closing
//! lines name them; such a run is run again up to `--retries` times.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use serde_json::json;

use super::servers::ServerProcess;
use super::ws::{self, ServerArgs};
use crate::report::Row;
use crate::wsclient::{self, Conn};

/// Flags of `ws-echo`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub common: super::Common,
    #[command(flatten)]
    pub servers: ServerArgs,
    /// Rounds; each runs every server once per case, in alternating order.
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Seconds counted per run.
    #[arg(long, default_value_t = 2.0)]
    pub duration: f64,
    /// Seconds of echoing before each run's count starts.
    #[arg(long, default_value_t = 0.5)]
    pub warmup: f64,
    /// Message sizes (`--size` measures that one size instead).
    #[arg(long, value_delimiter = ',', value_parser = super::parse_size, default_value = "64,16KiB")]
    pub sizes: Vec<usize>,
    /// Connection counts.
    #[arg(long, value_delimiter = ',', default_value = "1,64")]
    pub connections: Vec<usize>,
    /// Times a run is repeated when other work on the machine took 20% of
    /// a core or more during it (the last try is kept).
    #[arg(long, default_value_t = 2)]
    pub retries: usize,
}

/// Busy share (CPU time over wall time) at or above which a core counts
/// as saturated.
const SATURATED: f64 = 0.9;

/// CPU time of other work over a run's wall time (in cores) from which
/// the run is said to be disturbed.
const DISTURBED: f64 = 0.2;

/// What one run measured.
#[derive(Debug, Clone, Copy)]
struct Sample {
    messages_per_second: f64,
    /// Server CPU time per echoed message, in microseconds.
    server_micros: f64,
    /// Client CPU time per echoed message, in microseconds.
    client_micros: f64,
    /// Server CPU time over wall time in the window.
    server_busy: f64,
    /// Client CPU time over wall time in the window.
    client_busy: f64,
    /// CPU time of everything else on the machine over wall time in the
    /// window, in cores (other processes, or the kernel's work for none
    /// of the two).
    others_busy: f64,
}

impl Sample {
    fn client_bound(&self) -> bool {
        self.client_busy >= SATURATED && self.server_busy < SATURATED
    }
}

/// One run against `server`: `connections` new connections, each echoing
/// one binary message of `payload` at a time.
async fn echo_run(
    server: &ServerProcess,
    path: &str,
    payload: Arc<Vec<u8>>,
    connections: usize,
    warmup: Duration,
    duration: Duration,
) -> anyhow::Result<Sample> {
    let frame = Arc::new(wsclient::masked_frame(
        wsclient::OP_BINARY,
        &payload,
        wsclient::MASK,
    ));
    let buf_len = (payload.len() + 14).clamp(4096, 64 * 1024);
    let mut conns = Vec::with_capacity(connections);
    for _ in 0..connections {
        conns.push(
            Conn::connect(server.addr, path, buf_len)
                .await
                .with_context(|| format!("upgrading a connection to {}", server.name))?,
        );
    }
    let echoed = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::with_capacity(connections);
    for mut conn in conns {
        let (frame, payload) = (frame.clone(), payload.clone());
        let (echoed, stop) = (echoed.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            // The first echo is compared with the message; the rest are
            // only measured.
            conn.send(&frame).await?;
            conn.read_message(Some(&payload)).await?;
            while !stop.load(Relaxed) {
                conn.send(&frame).await?;
                conn.read_message(None).await?;
                echoed.fetch_add(1, Relaxed);
            }
            std::io::Result::Ok(())
        }));
    }
    tokio::time::sleep(warmup).await;
    let count0 = echoed.load(Relaxed);
    let server0 = server.cpu_ns()?;
    let client0 = super::thread_cpu_time();
    let machine0 = ws::machine_busy_ns()?;
    let start = Instant::now();
    tokio::time::sleep(duration).await;
    let count1 = echoed.load(Relaxed);
    let server1 = server.cpu_ns()?;
    let client1 = super::thread_cpu_time();
    let machine1 = ws::machine_busy_ns()?;
    let wall = start.elapsed().as_secs_f64();
    stop.store(true, Relaxed);
    for task in tasks {
        task.await?
            .with_context(|| format!("echoing with {}", server.name))?;
    }
    let messages = count1.saturating_sub(count0) as f64;
    if messages < 1.0 {
        anyhow::bail!("{} echoed no message in {wall:.1} s", server.name);
    }
    let server_ns = server1.saturating_sub(server0) as f64;
    let client_ns = (client1.saturating_sub(client0)).as_nanos() as f64;
    let machine_ns = machine1.saturating_sub(machine0) as f64;
    Ok(Sample {
        messages_per_second: messages / wall,
        server_micros: server_ns / 1e3 / messages,
        client_micros: client_ns / 1e3 / messages,
        server_busy: server_ns / 1e9 / wall,
        client_busy: client_ns / 1e9 / wall,
        others_busy: (machine_ns - server_ns - client_ns).max(0.0) / 1e9 / wall,
    })
}

/// Run the scenario.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let sizes = match args.common.size {
        Some(size) => vec![size],
        None => args.sizes.clone(),
    };
    let max_connections = args.connections.iter().copied().max().unwrap_or(1);
    ws::raise_fd_limit(2 * max_connections as u64 + 256);
    let rt = ws::client_runtime(args.servers.client_cpu)?;
    let mut servers = Vec::new();
    for &server in &args.servers.servers {
        if let Some(process) = ws::start_checked(server, &args.servers, max_connections, &rt)? {
            servers.push(process);
        }
    }
    anyhow::ensure!(!servers.is_empty(), "no server to measure");
    let reference = servers.iter().position(|s| s.name == ws::REFERENCE);
    let warmup = Duration::from_secs_f64(args.warmup);
    let duration = Duration::from_secs_f64(args.duration);
    if !args.common.json {
        println!(
            "{:<15} {:>6} {:>5}  {:>9}  {:>9}  {:>18}  {:>6} {:>6}  {:>10}  {:>6} {:>6}  bound",
            "server",
            "size",
            "conns",
            "msg/s",
            "CPU/msg",
            "÷ fws (quartiles)",
            "server",
            "client",
            "client/msg",
            "others",
            "steal",
        );
    }
    let mut rows = Vec::new();
    let mut client_bound_cases = Vec::new();
    let mut disturbed_cases = Vec::new();
    let mut retried = 0usize;
    let mut both_cases = Vec::new();
    for &size in &sizes {
        let payload = Arc::new(wsclient::payload(size));
        for &connections in &args.connections {
            let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); servers.len()];
            let ticks = super::http::machine_ticks()?;
            for round in 0..args.rounds {
                for i in super::rounds::indices(round, servers.len()) {
                    let run = || {
                        rt.block_on(echo_run(
                            &servers[i],
                            args.servers.path(),
                            payload.clone(),
                            connections,
                            warmup,
                            duration,
                        ))
                    };
                    let mut sample = run()?;
                    for _ in 0..args.retries {
                        if sample.others_busy < DISTURBED {
                            break;
                        }
                        retried += 1;
                        std::thread::sleep(Duration::from_secs(1));
                        sample = run()?;
                    }
                    samples[i].push(sample);
                }
            }
            let steal = super::http::steal_since(ticks)?;
            for (i, server) in servers.iter().enumerate() {
                let field = |f: fn(&Sample) -> f64| -> Vec<f64> { samples[i].iter().map(f).collect() };
                let rate = field(|s| s.messages_per_second);
                let cpu = field(|s| s.server_micros);
                let client = field(|s| s.client_micros);
                let server_busy = super::median(&field(|s| s.server_busy));
                let client_busy = super::median(&field(|s| s.client_busy));
                let others = field(|s| s.others_busy);
                let others_median = super::median(&others);
                let others_max = others.iter().copied().fold(0.0, f64::max);
                if others_max >= DISTURBED {
                    disturbed_cases.push(format!(
                        "{} {} B × {} conns (up to {:.0}% of a core)",
                        server.name,
                        size,
                        connections,
                        others_max * 100.0
                    ));
                }
                let ratios: Option<Vec<f64>> = reference.map(|r| {
                    cpu.iter()
                        .zip(&samples[r])
                        .map(|(c, f)| c / f.server_micros)
                        .collect()
                });
                let client_bound_rounds = samples[i].iter().filter(|s| s.client_bound()).count();
                let bound = if client_bound_rounds * 2 > samples[i].len() {
                    "client"
                } else if server_busy >= SATURATED && client_busy >= SATURATED {
                    both_cases.push(format!("{} {} B × {} conns", server.name, size, connections));
                    "server and client"
                } else if server_busy >= SATURATED {
                    "server"
                } else {
                    "neither (round trips)"
                };
                if client_bound_rounds > 0 {
                    client_bound_cases.push(format!(
                        "{} {} B × {} conns ({} of {} rounds)",
                        server.name,
                        size,
                        connections,
                        client_bound_rounds,
                        samples[i].len()
                    ));
                }
                let ratio = ratios.as_deref().map(super::median);
                rows.push(Row {
                    scenario: "ws-echo".into(),
                    variant: server.name.into(),
                    bytes: size,
                    seconds: 1.0 / super::median(&rate),
                    extra: vec![
                        ("connections".into(), json!(connections)),
                        ("messages_per_second".into(), json!(super::median(&rate))),
                        ("samples".into(), json!(rate)),
                        ("cpu_micros_per_message".into(), json!(super::median(&cpu))),
                        ("cpu_samples".into(), json!(cpu)),
                        ("cpu_ratio_to_fastwebsockets".into(), json!(ratio)),
                        ("cpu_round_ratios".into(), json!(ratios)),
                        ("server_busy".into(), json!(server_busy)),
                        ("client_busy".into(), json!(client_busy)),
                        ("client_cpu_micros_per_message".into(), json!(super::median(&client))),
                        ("client_bound_rounds".into(), json!(client_bound_rounds)),
                        ("others_busy".into(), json!(others)),
                        ("bound".into(), json!(bound)),
                        ("steal_share".into(), json!(steal)),
                    ],
                    ..Row::default()
                });
                if !args.common.json {
                    let ratio = match (ratio, ratios.as_deref()) {
                        (Some(m), Some(v)) => super::rounds::with_quartiles(m, v),
                        _ => "-".into(),
                    };
                    println!(
                        "{:<15} {:>6} {:>5}  {:>9.0}  {:>6.2} µs  {:>18}  {:>5.0}% {:>5.0}%  {:>7.2} µs  {:>5.0}% {:>5.1}%  {bound}",
                        server.name,
                        size,
                        connections,
                        super::median(&rate),
                        super::median(&cpu),
                        ratio,
                        server_busy * 100.0,
                        client_busy * 100.0,
                        super::median(&client),
                        others_median * 100.0,
                        steal * 100.0,
                    );
                }
            }
        }
    }
    if args.common.json {
        crate::report::print_json(&rows);
    } else if client_bound_cases.is_empty() {
        println!(
            "client bottleneck: none (in no run was the client's core ≥ {:.0}% busy while the server's was below)",
            SATURATED * 100.0
        );
    } else {
        println!(
            "client bottleneck: the client's core was ≥ {:.0}% busy while the server's was below in: {}",
            SATURATED * 100.0,
            client_bound_cases.join("; ")
        );
    }
    if !args.common.json && !both_cases.is_empty() {
        println!(
            "both cores ≥ {:.0}% busy (msg/s is the limit of both; compare CPU/msg) in: {}",
            SATURATED * 100.0,
            both_cases.join("; ")
        );
    }
    if !args.common.json && retried > 0 {
        println!("{retried} disturbed run(s) were run again");
    }
    if !args.common.json && !disturbed_cases.is_empty() {
        println!(
            "disturbed: other work took ≥ {:.0}% of a core during a run of: {}",
            DISTURBED * 100.0,
            disturbed_cases.join("; ")
        );
    }
    Ok(())
}
