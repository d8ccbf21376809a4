//! `https`: ringstream's HTTPS server (`Server::tls`) side by side with
//! hyper 1.x behind tokio-rustls, on the same rustls, crypto provider
//! (aws-lc-rs) and certificate — requests per second, handshakes per
//! second and memory per idle connection.
//!
//! # Method
//!
//! A run makes one certificate (ECDSA P-256, self-signed, for
//! `localhost`) into a temporary directory, and starts both servers from
//! it as child processes of this binary (`tls-peer --impl ringstream` and
//! `--impl hyper`), pinned to core 0, each on a one-worker multi-thread
//! runtime as in `http`. Both serve the demo's `/bytes/{n}` route from the
//! same pattern block. The first connection to each checks the bodies and
//! the negotiated protocol, cipher suite and key exchange, which must be
//! the same for both (the line above the tables names them).
//!
//! The client runs in this process on one current-thread tokio runtime
//! pinned to core 1, with tokio-rustls on the same provider. It trusts the
//! certificate by its bytes (no chain to walk) and, like wrk and h2load,
//! does not check the handshake's signature unless `--verify-signatures`
//! asks it to: the server's work is the same either way, and in a full
//! handshake the client's own work is as much as the server's.
//!
//! - **Requests**: `--connections` keep-alive connections (1 and 64) each
//!   send `GET /bytes/13` or `GET /bytes/40960`, read the whole response
//!   by its `Content-Length`, and repeat. After `--warmup` seconds the
//!   requests completed in the next `--duration` seconds are counted, with
//!   the CPU time the server's threads ran meanwhile (from
//!   `/proc/PID/task/*/schedstat`): requests/s and server CPU µs per
//!   request.
//! - **Handshakes**: `--handshake-connections` loops (8) each connect,
//!   shake hands, send `GET /bytes/13` with `Connection: close`, read the
//!   answer and wait for the server to close; per handshake, then, a TCP
//!   connect and close, a handshake and one small request. *Full*: the
//!   client keeps no session, so every handshake signs with the
//!   certificate's key and runs the key exchange. *Resumed*: the client
//!   keeps the TLS 1.3 tickets the server sends (both servers issue them
//!   from an aws-lc-rs ticketer) in one store per server shared by its
//!   connections, and offers one on each new connection; the key exchange
//!   still runs, the signature does not. rustls' store keeps 8 tickets per
//!   server, hence 8 loops: with more, some find none. The share of
//!   handshakes actually resumed is printed beside the figures.
//!   Handshakes/s and server CPU µs per handshake are counted as requests
//!   are.
//! - **Idle**: each round starts every server afresh, checks one request,
//!   reads its RSS (`VmRSS`), opens `--idle-connections` TLS connections
//!   (1,000) one after another, reads the RSS again after a settling pause,
//!   sends one `GET /bytes/13` on each, and reads it a third time: the
//!   growth over the connection count is the memory per idle connection,
//!   after the handshake and after one request. The same is done over
//!   plain HTTP (`tls-peer --plain`) for reference.
//!
//! Servers alternate round by round (A B, then B A), and the tables show
//! medians over rounds; a ratio is ringstream's figure over hyper's, the
//! median of the ratios within each round (two runs seconds apart) with
//! their quartiles, as in `http`. As in `ws-echo`, the client's CPU share
//! says whether it limited a case (`bound`: the client's core ≥ 90% busy
//! while the server's is below), and `others` is the CPU time everything
//! else on the machine took during the window (in % of one core); a run
//! disturbed by ≥ 20% is run again up to `--retries` times.

use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use rustls::ClientConfig;
use serde_json::json;
use tokio::io::{AsyncRead, AsyncWrite};

use super::servers::{start_tls_peer, ServerProcess};
use super::tls_peer::TlsImpl;
use super::ws;
use crate::report::Row;
use crate::tlsclient::{self, HttpConn, RunCertificate};

/// Flags of `https`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub common: super::Common,
    /// Rounds; each runs both servers once per case, in alternating order
    /// (the idle case starts them afresh every round).
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Seconds counted per run.
    #[arg(long, default_value_t = 1.0)]
    pub duration: f64,
    /// Seconds of load before each run's count starts.
    #[arg(long, default_value_t = 0.3)]
    pub warmup: f64,
    /// Paths requested in the request cases (`--size N` requests
    /// `/bytes/N` instead).
    #[arg(long, value_delimiter = ',', default_value = "/bytes/13,/bytes/40960")]
    pub paths: Vec<String>,
    /// Keep-alive connection counts of the request cases.
    #[arg(long, value_delimiter = ',', default_value = "1,64")]
    pub connections: Vec<usize>,
    /// Connections shaking hands at once in the handshake cases. The
    /// client's session store keeps 8 tickets per server (rustls'
    /// in-memory store), so beyond 8 some resumptions find none.
    #[arg(long, value_delimiter = ',', default_value = "8")]
    pub handshake_connections: Vec<usize>,
    /// Connections held open at once in the idle case.
    #[arg(long, default_value_t = 1000)]
    pub idle_connections: usize,
    /// Milliseconds to let a server settle before each RSS reading.
    #[arg(long, default_value_t = 300)]
    pub settle_ms: u64,
    /// Cases to run.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "requests,handshakes,idle"
    )]
    pub cases: Vec<Case>,
    /// Leave out the plain-HTTP reference of the idle case.
    #[arg(long)]
    pub no_plain: bool,
    /// Have the client check the server's handshake signatures (it
    /// checks the certificate's bytes in any case).
    #[arg(long)]
    pub verify_signatures: bool,
    /// Runtime worker threads of each server.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// CPUs for the servers (taskset list); `none` to not pin.
    #[arg(long, default_value = "0")]
    pub server_cpus: String,
    /// CPU of the client's thread (its current-thread runtime); negative
    /// to not pin.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    pub client_cpu: i32,
    /// Times a run is repeated when other work on the machine took 20% of
    /// a core or more during it (the last try is kept).
    #[arg(long, default_value_t = 2)]
    pub retries: usize,
}

/// The parts of the scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Case {
    /// Requests per second on keep-alive connections.
    Requests,
    /// Full and resumed handshakes per second.
    Handshakes,
    /// Memory per idle connection.
    Idle,
}

/// Busy share (CPU time over wall time) at or above which a core counts
/// as saturated.
const SATURATED: f64 = 0.9;

/// CPU time of other work over a run's wall time (in cores) from which
/// the run is said to be disturbed.
const DISTURBED: f64 = 0.2;

/// The servers, in the order of the tables.
const SERVERS: [TlsImpl; 2] = [TlsImpl::Ringstream, TlsImpl::Hyper];

/// How long a stopped client task may take to finish its last request.
const JOIN_TIMEOUT: Duration = Duration::from_secs(10);

/// The request of the handshake cases and the idle case.
const SMALL: &str = "/bytes/13";

/// What one run measured (also of `h2`'s request cases).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Sample {
    /// Requests or handshakes per second.
    pub rate: f64,
    /// Server CPU time per request or handshake, in microseconds.
    pub server_micros: f64,
    /// Client CPU time per request or handshake, in microseconds.
    pub client_micros: f64,
    /// Server CPU time over wall time in the window.
    pub server_busy: f64,
    /// Client CPU time over wall time in the window.
    pub client_busy: f64,
    /// CPU time of everything else on the machine over wall time, in
    /// cores.
    pub others_busy: f64,
    /// Share of the handshakes in the window that were resumed.
    pub resumed: f64,
}

impl Sample {
    fn client_bound(&self) -> bool {
        self.client_busy >= SATURATED && self.server_busy < SATURATED
    }
}

/// What the client's tasks count.
#[derive(Debug, Default)]
struct Counters {
    done: AtomicU64,
    resumed: AtomicU64,
    stop: AtomicBool,
}

/// Waits out the warm-up, then counts what the tasks complete in the
/// next `duration` and the CPU time spent meanwhile; then tells the tasks
/// to stop.
async fn window(
    server: &ServerProcess,
    counters: &Counters,
    warmup: Duration,
    duration: Duration,
) -> anyhow::Result<Sample> {
    let measured = async {
        tokio::time::sleep(warmup).await;
        let (done0, resumed0) = (counters.done.load(Relaxed), counters.resumed.load(Relaxed));
        let server0 = server.cpu_ns()?;
        let client0 = super::thread_cpu_time();
        let machine0 = ws::machine_busy_ns()?;
        let start = Instant::now();
        tokio::time::sleep(duration).await;
        let (done1, resumed1) = (counters.done.load(Relaxed), counters.resumed.load(Relaxed));
        let server1 = server.cpu_ns()?;
        let client1 = super::thread_cpu_time();
        let machine1 = ws::machine_busy_ns()?;
        let wall = start.elapsed().as_secs_f64();
        let done = done1.saturating_sub(done0) as f64;
        anyhow::ensure!(done >= 1.0, "{} completed nothing in {wall:.1} s", server.name);
        let server_ns = server1.saturating_sub(server0) as f64;
        let client_ns = client1.saturating_sub(client0).as_nanos() as f64;
        let machine_ns = machine1.saturating_sub(machine0) as f64;
        Ok(Sample {
            rate: done / wall,
            server_micros: server_ns / 1e3 / done,
            client_micros: client_ns / 1e3 / done,
            server_busy: server_ns / 1e9 / wall,
            client_busy: client_ns / 1e9 / wall,
            others_busy: (machine_ns - server_ns - client_ns).max(0.0) / 1e9 / wall,
            resumed: resumed1.saturating_sub(resumed0) as f64 / done,
        })
    }
    .await;
    counters.stop.store(true, Relaxed);
    measured
}

/// One request run: `connections` keep-alive connections, each asking for
/// `path` again as soon as the previous answer is in.
async fn requests_run(
    server: &ServerProcess,
    config: &Arc<ClientConfig>,
    path: &str,
    connections: usize,
    warmup: Duration,
    duration: Duration,
) -> anyhow::Result<Sample> {
    let request = Arc::new(tlsclient::get(path));
    let expected = tlsclient::expected_body(path);
    let buf_len = expected
        .as_ref()
        .map_or(64 * 1024, |b| (b.len() + 1024).clamp(4096, 64 * 1024));
    let mut conns = Vec::with_capacity(connections);
    for _ in 0..connections {
        let tls = tlsclient::connect_tls(server.addr, config)
            .await
            .with_context(|| format!("connecting to {}", server.name))?;
        let mut conn = HttpConn::new(tls, buf_len);
        // The first answer is compared with the pattern; the rest are
        // only measured.
        conn.request(&request, expected.as_deref())
            .await
            .with_context(|| format!("GET {path} from {}", server.name))?;
        conns.push(conn);
    }
    let counters = Arc::new(Counters::default());
    let mut tasks = Vec::with_capacity(connections);
    for mut conn in conns {
        let (request, counters) = (request.clone(), counters.clone());
        tasks.push(tokio::spawn(async move {
            while !counters.stop.load(Relaxed) {
                conn.request(&request, None).await?;
                counters.done.fetch_add(1, Relaxed);
            }
            io::Result::Ok(())
        }));
    }
    let sample = window(server, &counters, warmup, duration).await;
    join(tasks, server).await.with_context(|| format!("GET {path}"))?;
    sample
}

/// One handshake run: `concurrency` loops of connect, handshake, one
/// small request with `Connection: close`, and the server's close.
async fn handshakes_run(
    server: &ServerProcess,
    config: &Arc<ClientConfig>,
    concurrency: usize,
    warmup: Duration,
    duration: Duration,
) -> anyhow::Result<Sample> {
    let request = Arc::new(tlsclient::get_and_close(SMALL));
    let expected = Arc::new(tlsclient::expected_body(SMALL).unwrap_or_default());
    let counters = Arc::new(Counters::default());
    let mut tasks = Vec::with_capacity(concurrency);
    for _ in 0..concurrency {
        let (request, expected, counters) = (request.clone(), expected.clone(), counters.clone());
        let (addr, config) = (server.addr, config.clone());
        tasks.push(tokio::spawn(async move {
            while !counters.stop.load(Relaxed) {
                let tls = tlsclient::connect_tls(addr, &config).await?;
                let resumed =
                    tls.get_ref().1.handshake_kind() == Some(rustls::HandshakeKind::Resumed);
                let mut conn = HttpConn::new(tls, 4096);
                conn.request(&request, Some(&expected)).await?;
                conn.read_to_close().await?;
                counters.resumed.fetch_add(u64::from(resumed), Relaxed);
                counters.done.fetch_add(1, Relaxed);
            }
            io::Result::Ok(())
        }));
    }
    let sample = window(server, &counters, warmup, duration).await;
    join(tasks, server).await.context("handshakes")?;
    sample
}

/// Waits for the client's tasks to stop (each within [`JOIN_TIMEOUT`]
/// of being told to), passing on their first error.
async fn join(
    tasks: Vec<tokio::task::JoinHandle<io::Result<()>>>,
    server: &ServerProcess,
) -> anyhow::Result<()> {
    for task in tasks {
        tokio::time::timeout(JOIN_TIMEOUT, task)
            .await
            .with_context(|| format!("{} left a request unanswered", server.name))??
            .with_context(|| format!("with {}", server.name))?;
    }
    Ok(())
}

/// One connection to `server`: checks the bodies of `paths` and returns
/// what the handshake negotiated (version, cipher suite, key exchange,
/// ALPN).
async fn probe(
    server: &ServerProcess,
    config: &Arc<ClientConfig>,
    paths: &[String],
) -> anyhow::Result<String> {
    let tls = tlsclient::connect_tls(server.addr, config)
        .await
        .with_context(|| format!("TLS handshake with {}", server.name))?;
    let conn = tls.get_ref().1;
    let negotiated = format!(
        "{:?} {:?} {:?} ALPN {}",
        conn.protocol_version().context("no protocol version")?,
        conn.negotiated_cipher_suite()
            .context("no cipher suite")?
            .suite(),
        conn.negotiated_key_exchange_group()
            .context("no key exchange")?
            .name(),
        String::from_utf8_lossy(conn.alpn_protocol().unwrap_or(b"none")),
    );
    let mut conn = HttpConn::new(tls, 64 * 1024);
    for path in paths.iter().map(String::as_str).chain([SMALL]) {
        let expected = tlsclient::expected_body(path);
        conn.request(&tlsclient::get(path), expected.as_deref())
            .await
            .with_context(|| format!("GET {path} from {}", server.name))?;
    }
    Ok(negotiated)
}

/// Runs `run` on each server `rounds` times, alternating their order
/// round by round, again up to `retries` times when disturbed; returns
/// the samples of each server, in round order, and how many runs were
/// repeated.
pub(super) fn alternate(
    rounds: usize,
    retries: usize,
    mut run: impl FnMut(usize) -> anyhow::Result<Sample>,
) -> anyhow::Result<([Vec<Sample>; 2], usize)> {
    let mut samples: [Vec<Sample>; 2] = [Vec::new(), Vec::new()];
    let mut retried = 0;
    for round in 0..rounds {
        for i in super::rounds::indices(round, 2) {
            let mut sample = run(i)?;
            for _ in 0..retries {
                if sample.others_busy < DISTURBED {
                    break;
                }
                retried += 1;
                std::thread::sleep(Duration::from_secs(1));
                sample = run(i)?;
            }
            samples[i].push(sample);
        }
    }
    Ok((samples, retried))
}

/// What the closing lines say about the cases measured.
#[derive(Debug, Default)]
pub(super) struct Notes {
    client_bound: Vec<String>,
    both_saturated: Vec<String>,
    disturbed: Vec<String>,
    pub retried: usize,
}

impl Notes {
    /// Prints the closing lines: which runs the client limited, which
    /// saturated both cores, which were disturbed or run again.
    pub(super) fn print(&self) {
        if self.client_bound.is_empty() {
            println!(
                "client bottleneck: none (in no run was the client's core ≥ {:.0}% busy while the server's was below)",
                SATURATED * 100.0
            );
        } else {
            println!(
                "client bottleneck: the client's core was ≥ {:.0}% busy while the server's was below in: {}",
                SATURATED * 100.0,
                self.client_bound.join("; ")
            );
        }
        if !self.both_saturated.is_empty() {
            println!(
                "both cores ≥ {:.0}% busy (the rate is the limit of both; compare CPU/op) in: {}",
                SATURATED * 100.0,
                self.both_saturated.join("; ")
            );
        }
        if self.retried > 0 {
            println!("{} disturbed run(s) were run again", self.retried);
        }
        if !self.disturbed.is_empty() {
            println!(
                "disturbed: other work took ≥ {:.0}% of a core during a run of: {}",
                DISTURBED * 100.0,
                self.disturbed.join("; ")
            );
        }
    }
}

/// How a case's runs of one server were limited.
fn bound(samples: &[Sample], case: &str, name: &str, notes: &mut Notes) -> &'static str {
    let field = |f: fn(&Sample) -> f64| super::rounds::median_by(samples, f);
    let (server_busy, client_busy) = (field(|s| s.server_busy), field(|s| s.client_busy));
    let client_bound = samples.iter().filter(|s| s.client_bound()).count();
    if client_bound > 0 {
        notes.client_bound.push(format!(
            "{name} {case} ({client_bound} of {} rounds)",
            samples.len()
        ));
    }
    let others = samples.iter().map(|s| s.others_busy).fold(0.0, f64::max);
    if others >= DISTURBED {
        notes.disturbed.push(format!(
            "{name} {case} (up to {:.0}% of a core)",
            others * 100.0
        ));
    }
    if client_bound * 2 > samples.len() {
        "client"
    } else if server_busy >= SATURATED && client_busy >= SATURATED {
        notes.both_saturated.push(format!("{name} {case}"));
        "both"
    } else if server_busy >= SATURATED {
        "server"
    } else {
        "neither"
    }
}

/// Prints the header of the request and handshake tables.
pub(super) fn print_header(unit: &str) {
    println!(
        "{:<22} {:>5}  {:>11} {:>11} {:>17}  {:>9} {:>9} {:>17}  {:>9} {:>9}  {:>6}  bound r/h",
        "case",
        "conns",
        format!("ringstream {unit}"),
        format!("hyper {unit}"),
        "r ÷ h (quartiles)",
        "r CPU/op",
        "h CPU/op",
        "r ÷ h (quartiles)",
        "busy r/h",
        "client",
        "others",
    );
}

/// The median of the per-round ratios `a / b`, formatted with their
/// quartiles, and the ratios.
fn ratio(a: &[f64], b: &[f64]) -> (String, Vec<f64>) {
    let ratios = super::rounds::ratios(a, b);
    let text = super::rounds::with_quartiles(super::median(&ratios), &ratios);
    (text, ratios)
}

/// Prints one case's row (unless `json`) and adds its JSON rows, of
/// scenario `scenario`.
#[allow(clippy::too_many_arguments)]
pub(super) fn report_case(
    scenario: &str,
    json: bool,
    scenario_case: &str,
    label: &str,
    connections: usize,
    samples: &[Vec<Sample>; 2],
    rows: &mut Vec<Row>,
    notes: &mut Notes,
    steal: f64,
) {
    let field = |i: usize, f: fn(&Sample) -> f64| -> Vec<f64> { samples[i].iter().map(f).collect() };
    let rate = [field(0, |s| s.rate), field(1, |s| s.rate)];
    let cpu = [field(0, |s| s.server_micros), field(1, |s| s.server_micros)];
    let (rate_text, rate_ratios) = ratio(&rate[0], &rate[1]);
    let (cpu_text, cpu_ratios) = ratio(&cpu[0], &cpu[1]);
    let case_name = format!("{label} × {connections}");
    let bounds = [0, 1].map(|i| bound(&samples[i], &case_name, SERVERS[i].name(), notes));
    let others: Vec<f64> = samples.iter().flatten().map(|s| s.others_busy).collect();
    for (i, server) in SERVERS.iter().enumerate() {
        let client = field(i, |s| s.client_micros);
        rows.push(Row {
            scenario: scenario.into(),
            variant: server.name().into(),
            bytes: 0,
            seconds: 1.0 / super::median(&rate[i]),
            extra: vec![
                ("case".into(), json!(scenario_case)),
                ("label".into(), json!(label)),
                ("connections".into(), json!(connections)),
                ("per_second".into(), json!(super::median(&rate[i]))),
                ("samples".into(), json!(rate[i])),
                ("cpu_micros".into(), json!(super::median(&cpu[i]))),
                ("cpu_samples".into(), json!(cpu[i])),
                ("client_cpu_micros".into(), json!(super::median(&client))),
                (
                    "server_busy".into(),
                    json!(super::median(&field(i, |s| s.server_busy))),
                ),
                (
                    "client_busy".into(),
                    json!(super::median(&field(i, |s| s.client_busy))),
                ),
                ("resumed_share".into(), json!(field(i, |s| s.resumed))),
                ("others_busy".into(), json!(field(i, |s| s.others_busy))),
                ("bound".into(), json!(bounds[i])),
                ("round_ratios_ringstream_to_hyper".into(), json!(rate_ratios)),
                (
                    "cpu_round_ratios_ringstream_to_hyper".into(),
                    json!(cpu_ratios),
                ),
                ("steal_share".into(), json!(steal)),
            ],
            ..Row::default()
        });
    }
    if !json {
        let busy = |i: usize, f: fn(&Sample) -> f64| super::median(&field(i, f)) * 100.0;
        println!(
            "{:<22} {:>5}  {:>11.0} {:>11.0} {:>17}  {:>6.1} µs {:>6.1} µs {:>17}  {:>3.0}%/{:>3.0}% {:>3.0}%/{:>3.0}%  {:>5.0}%  {}/{}",
            label,
            connections,
            super::median(&rate[0]),
            super::median(&rate[1]),
            rate_text,
            super::median(&cpu[0]),
            super::median(&cpu[1]),
            cpu_text,
            busy(0, |s| s.server_busy),
            busy(1, |s| s.server_busy),
            busy(0, |s| s.client_busy),
            busy(1, |s| s.client_busy),
            super::median(&others) * 100.0,
            bounds[0],
            bounds[1],
        );
    }
}

/// What one idle round measured of one server, in bytes (also of `h2`'s
/// idle case).
#[derive(Debug, Clone, Copy)]
pub(super) struct IdleSample {
    /// RSS after one connection and request, before the others.
    pub before: u64,
    /// RSS with every connection open.
    pub connected: u64,
    /// RSS after one request on each.
    pub requested: u64,
}

/// Opens `n` connections to `server` with `connect`, one after another,
/// then sends one small request on each, reading the server's RSS before,
/// after connecting and after the requests.
fn idle_round<S, F, Fut>(
    rt: &tokio::runtime::Runtime,
    server: &ServerProcess,
    n: usize,
    settle: Duration,
    connect: F,
) -> anyhow::Result<IdleSample>
where
    S: AsyncRead + AsyncWrite + Unpin,
    F: Fn() -> Fut,
    Fut: Future<Output = io::Result<S>>,
{
    let request = tlsclient::get(SMALL);
    let expected = tlsclient::expected_body(SMALL);
    // One request first, so that what the first connection sets up once
    // (runtime, allocator arenas, the TLS configuration) is in `before`.
    rt.block_on(async {
        let mut conn = HttpConn::new(connect().await?, 4096);
        conn.request(&request, expected.as_deref()).await
    })
    .with_context(|| format!("first request to {}", server.name))?;
    std::thread::sleep(settle);
    let before = server.rss()?;
    let mut conns = Vec::with_capacity(n);
    rt.block_on(async {
        for _ in 0..n {
            conns.push(HttpConn::new(connect().await?, 4096));
        }
        io::Result::Ok(())
    })
    .with_context(|| format!("connection {} of {n} to {}", conns.len() + 1, server.name))?;
    std::thread::sleep(settle);
    let connected = server.rss()?;
    rt.block_on(async {
        for conn in &mut conns {
            conn.request(&request, expected.as_deref()).await?;
        }
        io::Result::Ok(())
    })
    .with_context(|| format!("one request on each connection to {}", server.name))?;
    std::thread::sleep(settle);
    let requested = server.rss()?;
    Ok(IdleSample {
        before,
        connected,
        requested,
    })
}

/// The idle case: memory per idle connection, over TLS and (unless
/// `--no-plain`) plain HTTP.
fn idle(
    args: &Args,
    certificate: &RunCertificate,
    rt: &tokio::runtime::Runtime,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let cpus = super::http::cpus(&args.server_cpus);
    let settle = Duration::from_millis(args.settle_ms);
    let config = tlsclient::client_config(&certificate.der, false, args.verify_signatures)?;
    let n = args.idle_connections.max(1);
    let mut variants: Vec<(TlsImpl, bool)> = SERVERS.iter().map(|&s| (s, false)).collect();
    if !args.no_plain {
        variants.extend(SERVERS.iter().map(|&s| (s, true)));
    }
    let mut samples: Vec<Vec<IdleSample>> = vec![Vec::new(); variants.len()];
    for round in 0..args.rounds {
        for i in super::rounds::indices(round, variants.len()) {
            let (implementation, plain) = variants[i];
            let server = start_tls_peer(
                implementation,
                &certificate.cert_path,
                &certificate.key_path,
                plain,
                args.workers,
                cpus,
            )?;
            let addr = server.addr;
            let sample = if plain {
                idle_round(rt, &server, n, settle, || tlsclient::connect_plain(addr))?
            } else {
                idle_round(rt, &server, n, settle, || {
                    let config = config.clone();
                    async move { tlsclient::connect_tls(addr, &config).await }
                })?
            };
            samples[i].push(sample);
        }
    }
    if !args.common.json {
        println!(
            "{:<11} {:>5} {:>6}  {:>10}  {:>15} {:>10}  {:>16} {:>10}",
            "server",
            "",
            "conns",
            "RSS before",
            "after connect",
            "per conn",
            "after 1 request",
            "per conn"
        );
    }
    let mut per_request = Vec::new();
    for (i, &(implementation, plain)) in variants.iter().enumerate() {
        let v = &samples[i];
        let median = |f: fn(&IdleSample) -> f64| super::rounds::median_by(v, f);
        let per = |f: fn(&IdleSample) -> u64| -> Vec<f64> {
            v.iter()
                .map(|s| f(s).saturating_sub(s.before) as f64 / n as f64 / 1024.0)
                .collect()
        };
        let per_connected = per(|s| s.connected);
        let per_requested = per(|s| s.requested);
        let transport = if plain { "http" } else { "https" };
        per_request.push(super::median(&per_requested));
        rows.push(Row {
            scenario: "https".into(),
            variant: implementation.name().into(),
            bytes: 0,
            seconds: 0.0,
            extra: vec![
                ("case".into(), json!("idle")),
                ("transport".into(), json!(transport)),
                ("connections".into(), json!(n)),
                ("rss_before_bytes".into(), json!(median(|s| s.before as f64))),
                (
                    "rss_connected_bytes".into(),
                    json!(median(|s| s.connected as f64)),
                ),
                (
                    "rss_requested_bytes".into(),
                    json!(median(|s| s.requested as f64)),
                ),
                (
                    "kib_per_connection_connected".into(),
                    json!(super::median(&per_connected)),
                ),
                (
                    "kib_per_connection_requested".into(),
                    json!(super::median(&per_requested)),
                ),
                ("connected_samples".into(), json!(per_connected)),
                ("requested_samples".into(), json!(per_requested)),
            ],
            ..Row::default()
        });
        if !args.common.json {
            println!(
                "{:<11} {:>5} {:>6}  {:>6.1} MiB  {:>11.1} MiB {:>6.1} KiB  {:>12.1} MiB {:>6.1} KiB",
                implementation.name(),
                transport,
                n,
                median(|s| s.before as f64) / 1048576.0,
                median(|s| s.connected as f64) / 1048576.0,
                super::median(&per_connected),
                median(|s| s.requested as f64) / 1048576.0,
                super::median(&per_requested),
            );
        }
    }
    if !args.common.json {
        println!(
            "idle https, per connection after one request: ringstream ÷ hyper = {:.2}",
            per_request[0] / per_request[1]
        );
    }
    Ok(())
}

/// Run the scenario.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let paths = match args.common.size {
        Some(size) => vec![format!("/bytes/{size}")],
        None => args.paths.clone(),
    };
    let most = args
        .connections
        .iter()
        .chain(&args.handshake_connections)
        .copied()
        .chain([args.idle_connections])
        .max()
        .unwrap_or(1);
    ws::raise_fd_limit(2 * most as u64 + 256);
    let certificate = RunCertificate::generate().context("making the run's certificate")?;
    let rt = ws::client_runtime(args.client_cpu)?;
    let warmup = Duration::from_secs_f64(args.warmup);
    let duration = Duration::from_secs_f64(args.duration);
    let mut rows = Vec::new();
    let mut notes = Notes::default();
    let wants = |case| args.cases.contains(&case);

    if wants(Case::Requests) || wants(Case::Handshakes) {
        let cpus = super::http::cpus(&args.server_cpus);
        let start = |implementation| {
            start_tls_peer(
                implementation,
                &certificate.cert_path,
                &certificate.key_path,
                false,
                args.workers,
                cpus,
            )
        };
        let servers = [start(SERVERS[0])?, start(SERVERS[1])?];
        let full = tlsclient::client_config(&certificate.der, false, args.verify_signatures)?;
        let mut negotiated = Vec::new();
        for server in &servers {
            negotiated.push(rt.block_on(probe(server, &full, &paths))?);
        }
        anyhow::ensure!(
            negotiated[0] == negotiated[1],
            "the servers negotiated differently: ringstream {}, hyper {}",
            negotiated[0],
            negotiated[1]
        );
        if !args.common.json {
            println!(
                "both servers: {} · certificate ECDSA P-256 · client on CPU {}, servers on {}",
                negotiated[0], args.client_cpu, args.server_cpus
            );
        }

        if wants(Case::Requests) {
            if !args.common.json {
                print_header("req/s");
            }
            for path in &paths {
                for &connections in &args.connections {
                    let ticks = super::http::machine_ticks()?;
                    let (samples, retried) = alternate(args.rounds, args.retries, |i| {
                        rt.block_on(requests_run(
                            &servers[i],
                            &full,
                            path,
                            connections,
                            warmup,
                            duration,
                        ))
                    })?;
                    notes.retried += retried;
                    let steal = super::http::steal_since(ticks)?;
                    report_case(
                        "https",
                        args.common.json,
                        "requests",
                        &format!("GET {path}"),
                        connections,
                        &samples,
                        &mut rows,
                        &mut notes,
                        steal,
                    );
                }
            }
        }

        if wants(Case::Handshakes) {
            if !args.common.json {
                print_header("hs/s");
            }
            for resume in [false, true] {
                let label = if resume {
                    "resumed handshake"
                } else {
                    "full handshake"
                };
                for &concurrency in &args.handshake_connections {
                    // A session store per server: a ticket is only good
                    // with the server that issued it.
                    let configs = [
                        tlsclient::client_config(&certificate.der, resume, args.verify_signatures)?,
                        tlsclient::client_config(&certificate.der, resume, args.verify_signatures)?,
                    ];
                    let ticks = super::http::machine_ticks()?;
                    let (samples, retried) = alternate(args.rounds, args.retries, |i| {
                        rt.block_on(handshakes_run(
                            &servers[i],
                            &configs[i],
                            concurrency,
                            warmup,
                            duration,
                        ))
                    })?;
                    notes.retried += retried;
                    let steal = super::http::steal_since(ticks)?;
                    report_case(
                        "https",
                        args.common.json,
                        if resume { "resumed" } else { "full" },
                        label,
                        concurrency,
                        &samples,
                        &mut rows,
                        &mut notes,
                        steal,
                    );
                    if resume && !args.common.json {
                        let share = |i: usize| {
                            super::rounds::median_by(&samples[i], |s| s.resumed)
                        };
                        println!(
                            "{:<22} {:>5}  resumed: ringstream {:.1}%, hyper {:.1}% of handshakes",
                            "",
                            "",
                            share(0) * 100.0,
                            share(1) * 100.0
                        );
                    }
                }
            }
        }
        if !args.common.json {
            println!("CPU/op: server CPU µs per request or per handshake (with its request and close); busy: share of a core");
        }
    }

    if wants(Case::Idle) {
        idle(args, &certificate, &rt, &mut rows)?;
    }

    if args.common.json {
        crate::report::print_json(&rows);
        return Ok(());
    }
    if wants(Case::Requests) || wants(Case::Handshakes) {
        notes.print();
    }
    Ok(())
}
