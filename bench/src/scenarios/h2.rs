//! `h2`: ringstream's HTTP/2 server side by side with hyper 1.x's —
//! requests per second and server CPU per request under h2load, memory per
//! idle connection, and memory while a slow service takes a 1 GiB upload.
//!
//! # Servers
//!
//! Both run as child processes of this binary (`h2-peer --impl ringstream`
//! and `--impl hyper`), pinned to core 0, each on a one-worker
//! multi-thread runtime, serving the demo's `/bytes/{n}` route from the
//! same pattern block, over h2c (HTTP/2 by prior knowledge on a plain
//! port) or over TLS (ALPN `h2`; one ECDSA P-256 certificate made per run,
//! the same rustls and aws-lc-rs provider on both). Each keeps its own
//! HTTP/2 defaults, as its users run it:
//!
//! | | ringstream (`Http2Options::default()`) | hyper (`http2::Builder` defaults) |
//! |---|---|---|
//! | max concurrent streams | 100 | 200 |
//! | stream window (request bodies) | 256 KiB, given back as the service reads | 1 MiB, given back as the body is polled |
//! | connection window | 1 MiB | 1 MiB |
//! | max frame size | 16 KiB | 16 KiB |
//! | send buffer per stream | 256 KiB | 400 KiB |
//! | keep-alive PING | every 20 s | none |
//!
//! ringstream serves the demo application with `ringstream serve
//! --no-access-log`'s configuration, in `h2-peer` rather than through
//! that binary because the upload case needs a slow service of its own;
//! over TLS hyper offers ALPN `h2` alone, ringstream `h2` and `http/1.1`,
//! and h2load asks for `h2`. Both peers run on this binary's counting
//! allocator (the system allocator, plus a few relaxed atomic additions
//! per allocation).
//!
//! # Cases
//!
//! - **Requests**: h2load (nghttp2's, on core 1 with one thread: `taskset
//!   -c 1 h2load -t 1 -c 64 -m 100 -D … --warm-up-time …`) keeps 64
//!   connections × 100 streams busy with `GET /bytes/13` and
//!   `GET /bytes/40960`, over h2c (`http://`) and TLS (`https://`), for
//!   `--warmup` then `--duration` seconds. Requests/s are h2load's, of
//!   its measured period. Within that period, leaving 0.2 s at each end,
//!   the server's CPU time (`/proc/PID/task/*/schedstat`), h2load's
//!   (the same, of its process: its user plus system time, to the
//!   nanosecond) and the machine's are read: server CPU per request is
//!   the server's CPU time over the requests h2load's rate gives for that
//!   window. First a short h2load run on each server checks that both
//!   negotiate the same protocol (and, over TLS, cipher and key
//!   exchange), and the `h2` crate's client checks the bodies.
//! - **Idle**: each round starts every server afresh (h2c; `--idle-transports
//!   h2c,tls` adds TLS), makes one request, reads its RSS (`VmRSS`), opens
//!   `--idle-connections` connections (1,000; the `h2` crate's client:
//!   preface and SETTINGS) one after another, reads the RSS after a
//!   settling pause, sends one `GET /bytes/13` on each and reads it again:
//!   the growth over the connection count is the memory per idle HTTP/2
//!   connection, after the handshake and after one request. Beside it, the
//!   growth of the servers' live heap (`GET /heap` of `h2-peer
//!   --heap-route`, from this binary's counting allocator), which counts
//!   the untouched pages of a large buffer that the RSS does not. Over
//!   h2c a third server runs beside the two: the `h2` crate's server
//!   alone (`h2-peer --impl h2`, its defaults, every stream answered as it
//!   is taken), the floor under both, since both keep `h2`'s buffers. The
//!   open-file limit of this process (which the servers inherit) is raised
//!   as needed.
//! - **Upload**: each round starts every server afresh (h2c) with
//!   `--slow-upload RATE`, whose `POST /upload` reads its body in pieces of
//!   16 KiB at most, paced to `--upload-rate` bytes a second (200 MB/s:
//!   1 GiB in about 5.4 s). After one small request the RSS is read and
//!   its peak reset (`clear_refs`); then one stream sends `--upload-size`
//!   bytes (1 GiB) as fast as the flow-control windows let it, and the
//!   peak (`VmHWM`) less the RSS before is the memory the server held for
//!   a client faster than its service. ringstream gives the stream's window
//!   back only as the service reads, so it should hold about one window
//!   (256 KiB) of body: at most 2 MiB is expected.
//!
//! Servers alternate round by round (A B, then B A), and the tables show
//! medians over rounds; a ratio is ringstream's figure over hyper's (for
//! requests, the median of the per-round ratios with their quartiles, as
//! in `https`, whose table and closing notes this scenario shares). The
//! `bound` column says what limited a run: `client` when h2load's core was
//! ≥ 90% busy while the server's was below, `server` the reverse, `both`
//! when both were (the rate is then the limit of both; compare CPU per
//! request); `others` is the CPU time everything else on the machine took
//! during the window (in % of one core), and a run disturbed by ≥ 20% is
//! run again up to `--retries` times.

use std::future::poll_fn;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::ClientConfig;
use anyhow::{bail, ensure, Context};
use bytes::{Bytes, BytesMut};
use h2::client::SendRequest;
use serde_json::json;
use tokio::io::{AsyncRead, AsyncWrite};

use super::https::{self, IdleSample, Notes, Sample};
use super::servers::{cpu_ns_of, start_h2_peer, ServerProcess};
use super::h2_peer::H2Impl;
use super::ws;
use crate::report::Row;
use crate::tlsclient::{self, RunCertificate};

/// Flags of `h2`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub common: super::Common,
    /// Rounds; each runs both servers once per case, in alternating order.
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Seconds h2load measures per run (its `-D`).
    #[arg(long, default_value_t = 2.5)]
    pub duration: f64,
    /// Seconds of load before h2load's measurement starts (its
    /// `--warm-up-time`).
    #[arg(long, default_value_t = 0.5)]
    pub warmup: f64,
    /// Paths requested in the request cases (`--size N` requests
    /// `/bytes/N` instead).
    #[arg(long, value_delimiter = ',', default_value = "/bytes/13,/bytes/40960")]
    pub paths: Vec<String>,
    /// Connections of h2load (`-c`).
    #[arg(long, default_value_t = 64)]
    pub connections: usize,
    /// Streams at once on each of h2load's connections (`-m`).
    #[arg(long, default_value_t = 100)]
    pub streams: usize,
    /// Transports of the request cases.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "h2c,tls")]
    pub transports: Vec<Transport>,
    /// Cases to run.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "requests,idle,upload"
    )]
    pub cases: Vec<Case>,
    /// Connections held open at once in the idle case.
    #[arg(long, default_value_t = 1000)]
    pub idle_connections: usize,
    /// Transports of the idle case.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "h2c")]
    pub idle_transports: Vec<Transport>,
    /// Milliseconds to let a server settle before each RSS reading.
    #[arg(long, default_value_t = 300)]
    pub settle_ms: u64,
    /// Bytes of the upload case's one upload (e.g. 1GiB, 256MiB).
    #[arg(long, default_value = "1GiB", value_parser = super::parse_size)]
    pub upload_size: usize,
    /// Bytes a second the upload case's service reads at most.
    #[arg(long, default_value = "200MB", value_parser = super::parse_size)]
    pub upload_rate: usize,
    /// Runtime worker threads of each server.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// CPUs for the servers (taskset list); `none` to not pin.
    #[arg(long, default_value = "0")]
    pub server_cpus: String,
    /// CPU of h2load and of this process's client thread; negative to not
    /// pin.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    pub client_cpu: i32,
    /// Times a run is repeated when other work on the machine took 20% of
    /// a core or more during it (the last try is kept).
    #[arg(long, default_value_t = 2)]
    pub retries: usize,
    /// The h2load program.
    #[arg(long, default_value = "h2load")]
    pub h2load: String,
}

/// How the request cases reach the servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Transport {
    /// HTTP/2 by prior knowledge over plain TCP (`http://`).
    H2c,
    /// HTTP/2 over TLS, by ALPN (`https://`).
    Tls,
}

impl Transport {
    fn name(self) -> &'static str {
        match self {
            Transport::H2c => "h2c",
            Transport::Tls => "tls",
        }
    }

    fn scheme(self) -> &'static str {
        match self {
            Transport::H2c => "http",
            Transport::Tls => "https",
        }
    }
}

/// The parts of the scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Case {
    /// Requests per second under h2load.
    Requests,
    /// Memory per idle HTTP/2 connection.
    Idle,
    /// Memory while a slow service reads one large upload.
    Upload,
}

/// The servers, in the order of the tables.
const SERVERS: [H2Impl; 2] = [H2Impl::Ringstream, H2Impl::Hyper];

/// The idle case's servers: both, and over h2c the `h2` crate alone, the
/// floor under both.
fn idle_servers(transport: Transport) -> &'static [H2Impl] {
    match transport {
        Transport::H2c => &[H2Impl::Ringstream, H2Impl::Hyper, H2Impl::H2],
        Transport::Tls => &SERVERS,
    }
}

/// The request of the idle and upload cases' first connection.
const SMALL: &str = "/bytes/13";

/// Time left out of the CPU window at each end of h2load's measured
/// period, for its start and end not to be known to the millisecond.
const MARGIN: Duration = Duration::from_millis(200);

/// The RSS growth ringstream's upload should stay under.
const UPLOAD_BOUND: u64 = 2 << 20;

/// `taskset -c CPU` for the client when it is pinned.
fn client_cpus(args: &Args) -> Option<String> {
    (args.client_cpu >= 0).then(|| args.client_cpu.to_string())
}

/// What an h2load run printed that the scenario reads.
#[derive(Debug, Default)]
struct H2loadOutput {
    /// `finished in …, N req/s`.
    rate: f64,
    /// `requests: … N succeeded`.
    succeeded: u64,
    /// `… N failed, N errored, N timeout`.
    failed: u64,
    /// The negotiated protocol and, over TLS, cipher and key exchange.
    negotiated: String,
}

/// Reads h2load's report.
fn parse_h2load(text: &str) -> anyhow::Result<H2loadOutput> {
    let mut out = H2loadOutput::default();
    let mut negotiated = Vec::new();
    let mut counts = false;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("finished in ") {
            // "finished in 2.50s, 123456.78 req/s, 12.34MB/s"
            let rate = rest
                .split(", ")
                .nth(1)
                .and_then(|f| f.strip_suffix(" req/s"))
                .with_context(|| format!("no rate in h2load's `{line}`"))?;
            out.rate = rate.parse()?;
        } else if let Some(rest) = line.strip_prefix("requests: ") {
            // "requests: N total, N started, N done, N succeeded, N failed, N errored, N timeout"
            counts = true;
            for field in rest.split(", ") {
                let (n, what) = field.split_once(' ').unwrap_or_default();
                let n: u64 = n.parse().unwrap_or(0);
                match what {
                    "succeeded" => out.succeeded = n,
                    "failed" | "errored" | "timeout" => out.failed += n,
                    _ => {}
                }
            }
        } else if line.starts_with("Cipher:")
            || line.starts_with("Server Temp Key:")
            || line.starts_with("TLS Protocol:")
            || line.starts_with("Application protocol:")
        {
            negotiated.push(line.trim().to_owned());
        }
    }
    ensure!(out.rate > 0.0 && counts, "no result in h2load's output:\n{text}");
    out.negotiated = negotiated.join(" · ");
    Ok(out)
}

/// The h2load command on the client's CPU, with `args` and `url`.
fn h2load(args: &Args, h2load_args: &[String], url: &str) -> std::process::Command {
    let cpus = client_cpus(args);
    let mut cmd = super::servers::pinned(Path::new(&args.h2load), cpus.as_deref());
    cmd.args(h2load_args)
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Checks that h2load runs, and with one short run on each server that
/// both negotiate the same; returns what they negotiated.
fn probe_h2load(args: &Args, servers: &[ServerProcess; 2], url: &[String; 2]) -> anyhow::Result<String> {
    let mut negotiated = Vec::new();
    for (server, url) in servers.iter().zip(url) {
        let short = ["-n", "200", "-c", "2", "-m", "10", "-t", "1"].map(String::from);
        let out = h2load(args, &short, url)
            .output()
            .with_context(|| format!("running {} (Debian: apt-get install nghttp2-client)", args.h2load))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let parsed = parse_h2load(&text).with_context(|| format!("h2load against {}", server.name))?;
        ensure!(
            parsed.succeeded == 200 && parsed.failed == 0,
            "{} answered h2load's probe with errors:\n{text}",
            server.name
        );
        negotiated.push(parsed.negotiated);
    }
    ensure!(
        negotiated[0] == negotiated[1],
        "the servers negotiated differently: ringstream {}, hyper {}",
        negotiated[0],
        negotiated[1]
    );
    Ok(negotiated.swap_remove(0))
}

/// One request run: h2load for `--warmup` plus `--duration` seconds, and
/// the CPU times of the server, h2load and the machine read over its
/// measured period less [`MARGIN`] at each end.
fn requests_run(args: &Args, server: &ServerProcess, url: &str) -> anyhow::Result<Sample> {
    let warmup = Duration::from_secs_f64(args.warmup);
    let duration = Duration::from_secs_f64(args.duration);
    ensure!(duration > MARGIN * 3, "--duration must be over {:?}", MARGIN * 3);
    let load = [
        "-t".into(),
        "1".into(),
        "-c".into(),
        args.connections.to_string(),
        "-m".into(),
        args.streams.to_string(),
        "-D".into(),
        format!("{}ms", duration.as_millis()),
        format!("--warm-up-time={}ms", warmup.as_millis()),
    ];
    let child = h2load(args, &load, url).spawn().context("starting h2load")?;
    let pid = child.id();
    let measured = (|| {
        std::thread::sleep(warmup + MARGIN);
        let (server0, client0, machine0) = (server.cpu_ns()?, cpu_ns_of(pid)?, ws::machine_busy_ns()?);
        let start = Instant::now();
        std::thread::sleep(duration - MARGIN * 2);
        let (server1, client1, machine1) = (server.cpu_ns()?, cpu_ns_of(pid)?, ws::machine_busy_ns()?);
        let wall = start.elapsed().as_secs_f64();
        anyhow::Ok((
            server1.saturating_sub(server0) as f64,
            client1.saturating_sub(client0) as f64,
            machine1.saturating_sub(machine0) as f64,
            wall,
        ))
    })();
    let out = child.wait_with_output().context("waiting for h2load")?;
    let (server_ns, client_ns, machine_ns, wall) = measured.context("reading CPU times")?;
    let text = String::from_utf8_lossy(&out.stdout);
    let parsed = parse_h2load(&text).with_context(|| {
        format!(
            "h2load against {}: {}",
            server.name,
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    ensure!(
        parsed.failed == 0 && parsed.succeeded > 0,
        "{} answered errors under load:\n{text}",
        server.name
    );
    let requests = parsed.rate * wall;
    Ok(Sample {
        rate: parsed.rate,
        server_micros: server_ns / 1e3 / requests,
        client_micros: client_ns / 1e3 / requests,
        server_busy: server_ns / 1e9 / wall,
        client_busy: client_ns / 1e9 / wall,
        others_busy: (machine_ns - server_ns - client_ns).max(0.0) / 1e9 / wall,
        resumed: 0.0,
    })
}

/// An HTTP/2 client connection over `io` (the `h2` crate's client with
/// its defaults), its connection task spawned on the current runtime.
async fn handshake<S>(io: S) -> anyhow::Result<SendRequest<Bytes>>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (send, connection) = h2::client::handshake(io).await?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(send)
}

/// An h2c connection to `server`.
async fn connect_h2c(server: &ServerProcess) -> anyhow::Result<SendRequest<Bytes>> {
    let tcp = tlsclient::connect_plain(server.addr)
        .await
        .with_context(|| format!("connecting to {}", server.name))?;
    handshake(tcp).await
}

/// Reads a response's whole body, giving its window back as it goes.
async fn read_body(mut body: h2::RecvStream) -> anyhow::Result<Bytes> {
    let mut out = BytesMut::new();
    while let Some(data) = body.data().await {
        let data = data?;
        let _ = body.flow_control().release_capacity(data.len());
        out.extend_from_slice(&data);
    }
    Ok(out.freeze())
}

/// `GET path` on `send`, checked to be `200` with `/bytes/{n}`'s body when
/// `path` is one; returns the body.
async fn get(send: &SendRequest<Bytes>, scheme: &str, path: &str) -> anyhow::Result<Bytes> {
    let request = http::Request::get(format!("{scheme}://{}{path}", tlsclient::SERVER_NAME))
        .body(())?;
    let mut send = send.clone().ready().await?;
    let (response, _) = send.send_request(request, true)?;
    let response = response.await?;
    ensure!(response.status() == 200, "GET {path}: {}", response.status());
    let body = read_body(response.into_body()).await?;
    if let Some(expected) = tlsclient::expected_body(path) {
        ensure!(body[..] == expected[..], "GET {path}: wrong body ({} bytes)", body.len());
    }
    Ok(body)
}

/// The client's TLS configuration: `tlsclient`'s, trusting the run's
/// certificate alone, offering ALPN `h2`.
fn h2_tls_config(certificate: &RunCertificate) -> anyhow::Result<Arc<ClientConfig>> {
    let mut config = (*tlsclient::client_config(&certificate.der, false, false)?).clone();
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(Arc::new(config))
}

/// An HTTP/2 connection to `server` over `transport` (over TLS with
/// `tls`, checked to have chosen `h2` by ALPN).
async fn connect(
    server: &ServerProcess,
    transport: Transport,
    tls: &Arc<ClientConfig>,
) -> anyhow::Result<SendRequest<Bytes>> {
    match transport {
        Transport::H2c => connect_h2c(server).await,
        Transport::Tls => {
            let tls = tlsclient::connect_tls(server.addr, tls)
                .await
                .with_context(|| format!("TLS handshake with {}", server.name))?;
            let alpn = tls.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
            ensure!(
                alpn.as_deref() == Some(b"h2"),
                "{} negotiated ALPN {:?}, not h2",
                server.name,
                alpn.map(|p| String::from_utf8_lossy(&p).into_owned())
            );
            handshake(tls).await
        }
    }
}

/// Checks the bodies of `paths` from `server` with the `h2` crate's client
/// over `transport`.
async fn probe_bodies(
    server: &ServerProcess,
    transport: Transport,
    tls: &Arc<ClientConfig>,
    paths: &[String],
) -> anyhow::Result<()> {
    let send = connect(server, transport, tls).await?;
    for path in paths.iter().map(String::as_str).chain([SMALL]) {
        get(&send, transport.scheme(), path)
            .await
            .with_context(|| format!("{} over {}", server.name, transport.name()))?;
    }
    Ok(())
}

/// The request cases.
fn requests(
    args: &Args,
    certificate: &RunCertificate,
    rt: &tokio::runtime::Runtime,
    paths: &[String],
    rows: &mut Vec<Row>,
    notes: &mut Notes,
) -> anyhow::Result<()> {
    let cpus = super::http::cpus(&args.server_cpus);
    let tls_config = h2_tls_config(certificate)?;
    let mut header = false;
    for &transport in &args.transports {
        let tls = (transport == Transport::Tls)
            .then_some((certificate.cert_path.as_path(), certificate.key_path.as_path()));
        let start = |implementation| start_h2_peer(implementation, tls, args.workers, cpus, &[]);
        let servers = [start(SERVERS[0])?, start(SERVERS[1])?];
        for server in &servers {
            rt.block_on(probe_bodies(server, transport, &tls_config, paths))?;
        }
        let base = servers
            .each_ref()
            .map(|s| format!("{}://{}", transport.scheme(), s.addr));
        let negotiated = probe_h2load(args, &servers, &base.clone().map(|b| b + SMALL))?;
        if !args.common.json {
            println!(
                "{}: both servers: {negotiated} · h2load -t 1 -c {} -m {} on CPU {}, servers on {}",
                transport.name(),
                args.connections,
                args.streams,
                args.client_cpu,
                args.server_cpus
            );
        }
        for path in paths {
            if !header && !args.common.json {
                https::print_header("req/s");
                header = true;
            }
            let urls = base.clone().map(|b| b + path);
            let ticks = super::http::machine_ticks()?;
            let (samples, retried) = https::alternate(args.rounds, args.retries, |i| {
                requests_run(args, &servers[i], &urls[i])
            })?;
            notes.retried += retried;
            let steal = super::http::steal_since(ticks)?;
            https::report_case(
                "h2",
                args.common.json,
                &format!("requests-{}", transport.name()),
                &format!("{} GET {path}", transport.name()),
                args.connections,
                &samples,
                rows,
                notes,
                steal,
            );
        }
    }
    if !args.common.json {
        println!(
            "conns: h2load's connections, each with {} streams at once; CPU/op: server CPU µs per request; busy r/h: the server's core; client: h2load's core",
            args.streams
        );
    }
    Ok(())
}

/// Opens `n` HTTP/2 connections to `server` over `transport`, one after
/// another, then sends one small request on each, reading the server's
/// RSS and live heap (`GET /heap` on the first connection) before, after
/// connecting and after the requests; returns the RSS, then the heap.
async fn idle_round(
    server: &ServerProcess,
    transport: Transport,
    tls: &Arc<ClientConfig>,
    n: usize,
    settle: Duration,
) -> anyhow::Result<[IdleSample; 2]> {
    let scheme = transport.scheme();
    // One request first, so that what the first connection sets up once
    // (runtime, allocator arenas, the TLS configuration) is in `before`.
    let first = connect(server, transport, tls).await?;
    get(&first, scheme, SMALL).await?;
    let heap = || async {
        let body = get(&first, scheme, "/heap").await?;
        let heap: u64 = std::str::from_utf8(&body)?
            .trim()
            .parse()
            .with_context(|| format!("GET /heap of {}", server.name))?;
        anyhow::Ok(heap)
    };
    tokio::time::sleep(settle).await;
    let before = server.rss()?;
    let heap_before = heap().await?;
    let mut conns = Vec::with_capacity(n);
    for i in 0..n {
        conns.push(
            connect(server, transport, tls)
                .await
                .with_context(|| format!("connection {} of {n}", i + 1))?,
        );
    }
    tokio::time::sleep(settle).await;
    let connected = server.rss()?;
    let heap_connected = heap().await?;
    for conn in &conns {
        get(conn, scheme, SMALL).await?;
    }
    tokio::time::sleep(settle).await;
    let requested = server.rss()?;
    let heap_requested = heap().await?;
    drop(conns);
    Ok([
        IdleSample {
            before,
            connected,
            requested,
        },
        IdleSample {
            before: heap_before,
            connected: heap_connected,
            requested: heap_requested,
        },
    ])
}

/// The idle case, over each of `--idle-transports`.
fn idle(
    args: &Args,
    certificate: &RunCertificate,
    rt: &tokio::runtime::Runtime,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let cpus = super::http::cpus(&args.server_cpus);
    let settle = Duration::from_millis(args.settle_ms);
    let tls_config = h2_tls_config(certificate)?;
    let n = args.idle_connections.max(1);
    if !args.common.json {
        println!(
            "{:<11} {:>5} {:>6}  {:>10}  {:>15} {:>10}  {:>16} {:>10}  {:>19}",
            "server",
            "",
            "conns",
            "RSS before",
            "after connect",
            "per conn",
            "after 1 request",
            "per conn",
            "heap/conn conn/req"
        );
    }
    for &transport in &args.idle_transports {
        let tls = (transport == Transport::Tls)
            .then_some((certificate.cert_path.as_path(), certificate.key_path.as_path()));
        let servers = idle_servers(transport);
        let mut samples: Vec<Vec<[IdleSample; 2]>> = vec![Vec::new(); servers.len()];
        for round in 0..args.rounds {
            for i in super::rounds::indices(round, servers.len()) {
                let server = start_h2_peer(servers[i], tls, args.workers, cpus, &["--heap-route"])?;
                let sample = rt
                    .block_on(idle_round(&server, transport, &tls_config, n, settle))
                    .with_context(|| {
                        format!("idle {} connections to {}", transport.name(), server.name)
                    })?;
                samples[i].push(sample);
            }
        }
        // Per connection, in KiB: [RSS, heap] × [connected, requested].
        let mut per = vec![[[0.0; 2]; 2]; servers.len()];
        for (i, implementation) in servers.iter().enumerate() {
            let median = |f: fn(&[IdleSample; 2]) -> f64| super::rounds::median_by(&samples[i], f);
            let growth = |which: usize, f: fn(&IdleSample) -> u64| -> Vec<f64> {
                samples[i]
                    .iter()
                    .map(|s| f(&s[which]).saturating_sub(s[which].before) as f64 / n as f64 / 1024.0)
                    .collect()
            };
            let per_connected = growth(0, |s| s.connected);
            let per_requested = growth(0, |s| s.requested);
            let heap_connected = growth(1, |s| s.connected);
            let heap_requested = growth(1, |s| s.requested);
            per[i] = [
                [super::median(&per_connected), super::median(&per_requested)],
                [super::median(&heap_connected), super::median(&heap_requested)],
            ];
            rows.push(Row {
                scenario: "h2".into(),
                variant: implementation.name().into(),
                extra: vec![
                    ("case".into(), json!("idle")),
                    ("transport".into(), json!(transport.name())),
                    ("connections".into(), json!(n)),
                    ("rss_before_bytes".into(), json!(median(|s| s[0].before as f64))),
                    ("rss_connected_bytes".into(), json!(median(|s| s[0].connected as f64))),
                    ("rss_requested_bytes".into(), json!(median(|s| s[0].requested as f64))),
                    ("kib_per_connection_connected".into(), json!(per[i][0][0])),
                    ("kib_per_connection_requested".into(), json!(per[i][0][1])),
                    ("heap_kib_per_connection_connected".into(), json!(per[i][1][0])),
                    ("heap_kib_per_connection_requested".into(), json!(per[i][1][1])),
                    ("connected_samples".into(), json!(per_connected)),
                    ("requested_samples".into(), json!(per_requested)),
                ],
                ..Row::default()
            });
            if !args.common.json {
                println!(
                    "{:<11} {:>5} {:>6}  {:>6.1} MiB  {:>11.1} MiB {:>6.1} KiB  {:>12.1} MiB {:>6.1} KiB  {:>5.1} / {:>5.1} KiB",
                    implementation.name(),
                    transport.name(),
                    n,
                    median(|s| s[0].before as f64) / 1048576.0,
                    median(|s| s[0].connected as f64) / 1048576.0,
                    per[i][0][0],
                    median(|s| s[0].requested as f64) / 1048576.0,
                    per[i][0][1],
                    per[i][1][0],
                    per[i][1][1],
                );
            }
        }
        if !args.common.json {
            println!(
                "idle {}, RSS per connection: ringstream ÷ hyper = {:.2} after the handshake, {:.2} after one request",
                transport.name(),
                per[0][0][0] / per[1][0][0],
                per[0][0][1] / per[1][0][1]
            );
            if let Some(floor) = per.get(2) {
                println!(
                    "idle {}, the h2 crate alone: {:.1} KiB RSS ({:.2} of hyper's), {:.1} KiB heap per connection after the handshake",
                    transport.name(),
                    floor[0][0],
                    floor[0][0] / per[1][0][0],
                    floor[1][0],
                );
            }
        }
    }
    if !args.common.json {
        println!("heap/conn: live heap growth per connection (the peers' counting allocator), after the handshake / after one request");
    }
    Ok(())
}

/// What one upload measured of one server.
#[derive(Debug, Clone, Copy)]
struct UploadSample {
    /// RSS before the upload, in bytes.
    before: u64,
    /// Peak RSS during it less `before`, in bytes.
    growth: u64,
    /// Wall time of the upload, in seconds.
    seconds: f64,
    /// Server CPU time of the upload, in seconds.
    cpu: f64,
}

/// Sends `size` bytes on one stream of `send` to `POST /upload`, as fast
/// as the windows allow, and checks the answer.
async fn upload(send: &SendRequest<Bytes>, size: u64) -> anyhow::Result<()> {
    let request = http::Request::post(format!("http://{}/upload", tlsclient::SERVER_NAME))
        .header(http::header::CONTENT_LENGTH, size)
        .body(())?;
    let mut send = send.clone().ready().await?;
    let (response, mut stream) = send.send_request(request, size == 0)?;
    let block = Bytes::from(
        (0..64 * 1024)
            .map(|i| (i % 251) as u8)
            .collect::<Vec<u8>>(),
    );
    let mut left = size;
    while left > 0 {
        let want = block.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        stream.reserve_capacity(want);
        let granted = match poll_fn(|cx| stream.poll_capacity(cx)).await {
            Some(granted) => granted?,
            None => bail!("the stream closed with {left} bytes left to send"),
        };
        let n = granted.min(want);
        if n == 0 {
            continue;
        }
        left -= n as u64;
        stream.send_data(block.slice(..n), left == 0)?;
    }
    let response = response.await?;
    let status = response.status();
    let body = read_body(response.into_body()).await?;
    let text = String::from_utf8_lossy(&body);
    ensure!(
        status == 200 && text.contains(&format!("\"bytes\":{size}")),
        "the upload was answered {status}: {text}"
    );
    Ok(())
}

/// One upload round of one server.
async fn upload_round(server: &ServerProcess, size: u64, settle: Duration) -> anyhow::Result<UploadSample> {
    let send = connect_h2c(server).await?;
    get(&send, "http", SMALL).await?;
    tokio::time::sleep(settle).await;
    let before = server.rss()?;
    server.reset_peak()?;
    let cpu0 = server.cpu_ns()?;
    let start = Instant::now();
    upload(&send, size).await?;
    let seconds = start.elapsed().as_secs_f64();
    let cpu = server.cpu_ns()?.saturating_sub(cpu0) as f64 / 1e9;
    let peak = server.peak_rss()?;
    Ok(UploadSample {
        before,
        growth: peak.saturating_sub(before),
        seconds,
        cpu,
    })
}

/// The upload case.
fn upload_case(args: &Args, rt: &tokio::runtime::Runtime, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let cpus = super::http::cpus(&args.server_cpus);
    let settle = Duration::from_millis(args.settle_ms);
    let size = args.upload_size as u64;
    let rate = args.upload_rate.to_string();
    let mut samples: [Vec<UploadSample>; 2] = [Vec::new(), Vec::new()];
    for round in 0..args.rounds {
        for i in super::rounds::indices(round, 2) {
            let server = start_h2_peer(SERVERS[i], None, args.workers, cpus, &["--slow-upload", &rate])?;
            let sample = rt
                .block_on(upload_round(&server, size, settle))
                .with_context(|| format!("upload to {}", server.name))?;
            samples[i].push(sample);
        }
    }
    if !args.common.json {
        println!(
            "{:<11} {:>9} {:>9}  {:>8} {:>9} {:>10}  {:>14}  {:>10}",
            "server", "upload", "read at", "time", "MB/s", "server CPU", "RSS before", "peak growth"
        );
    }
    let mut growth = [0.0; 2];
    for (i, implementation) in SERVERS.iter().enumerate() {
        let v = &samples[i];
        let median = |f: fn(&UploadSample) -> f64| super::rounds::median_by(v, f);
        let growths: Vec<f64> = v.iter().map(|s| s.growth as f64).collect();
        growth[i] = super::median(&growths);
        let seconds = median(|s| s.seconds);
        rows.push(Row {
            scenario: "h2".into(),
            variant: implementation.name().into(),
            bytes: args.upload_size,
            seconds,
            extra: vec![
                ("case".into(), json!("upload")),
                ("transport".into(), json!("h2c")),
                ("read_rate_bytes_per_second".into(), json!(args.upload_rate)),
                ("server_cpu_seconds".into(), json!(median(|s| s.cpu))),
                ("rss_before_bytes".into(), json!(median(|s| s.before as f64))),
                ("rss_growth_bytes".into(), json!(growth[i])),
                ("rss_growth_samples".into(), json!(growths)),
            ],
            ..Row::default()
        });
        if !args.common.json {
            println!(
                "{:<11} {:>5} MiB {:>5} MB/s  {:>6.2} s {:>9.1} {:>8.2} s  {:>10.1} MiB  {:>7.2} MiB (max {:.2})",
                implementation.name(),
                args.upload_size >> 20,
                args.upload_rate / 1_000_000,
                seconds,
                size as f64 / seconds / 1e6,
                median(|s| s.cpu),
                median(|s| s.before as f64) / 1048576.0,
                growth[i] / 1048576.0,
                growths.iter().copied().fold(0.0, f64::max) / 1048576.0,
            );
        }
    }
    if !args.common.json {
        let worst = samples[0].iter().map(|s| s.growth).max().unwrap_or(0);
        println!(
            "upload, peak RSS growth: ringstream ÷ hyper = {:.2}; ringstream {} 2 MiB in every round",
            growth[0] / growth[1],
            if worst <= UPLOAD_BOUND { "stayed within" } else { "went over" }
        );
    }
    Ok(())
}

/// Run the scenario.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let began = Instant::now();
    let paths = match args.common.size {
        Some(size) => vec![format!("/bytes/{size}")],
        None => args.paths.clone(),
    };
    ws::raise_fd_limit(2 * args.idle_connections.max(args.connections) as u64 + 256);
    let certificate = RunCertificate::generate().context("making the run's certificate")?;
    let rt = ws::client_runtime(args.client_cpu)?;
    let mut rows = Vec::new();
    let mut notes = Notes::default();
    let wants = |case| args.cases.contains(&case);
    if wants(Case::Requests) {
        requests(args, &certificate, &rt, &paths, &mut rows, &mut notes)?;
    }
    if wants(Case::Idle) {
        idle(args, &certificate, &rt, &mut rows)?;
    }
    if wants(Case::Upload) {
        upload_case(args, &rt, &mut rows)?;
    }
    if args.common.json {
        crate::report::print_json(&rows);
        return Ok(());
    }
    if wants(Case::Requests) {
        notes.print();
    }
    println!("run took {:.0} s", began.elapsed().as_secs_f64());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn h2load_report_is_read() {
        let text = "starting benchmark...\n\
            TLS Protocol: TLSv1.3\n\
            Cipher: TLS_AES_256_GCM_SHA384\n\
            Server Temp Key: X25519 253 bits\n\
            Application protocol: h2\n\
            \n\
            finished in 2.50s, 123456.78 req/s, 5.36MB/s\n\
            requests: 308641 total, 308700 started, 308641 done, 308641 succeeded, 0 failed, 0 errored, 0 timeout\n\
            status codes: 308641 2xx, 0 3xx, 0 4xx, 0 5xx\n";
        let out = parse_h2load(text).unwrap();
        assert_eq!(out.rate, 123456.78);
        assert_eq!(out.succeeded, 308641);
        assert_eq!(out.failed, 0);
        assert_eq!(
            out.negotiated,
            "TLS Protocol: TLSv1.3 · Cipher: TLS_AES_256_GCM_SHA384 · Server Temp Key: X25519 253 bits · Application protocol: h2"
        );
        assert!(parse_h2load("no report").is_err());
    }
}
