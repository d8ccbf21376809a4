//! `ws-broadcast`: one message to many WebSocket clients, some of which
//! never read — messages delivered per second, delivery latency, server
//! CPU per delivered message, and the server's memory while the stalled
//! clients' buffers are full.
//!
//! The servers: `ringstream serve` on its demo's `/ws/broadcast` (every
//! message a client sends goes to every client connected, the sender too,
//! through one `ringstream::ws::Broadcaster` of 256 frames, drop-oldest),
//! and the fastwebsockets and tokio-tungstenite peers run as
//! `ws-peer --broadcast`: the same fan-out written with a
//! `tokio::sync::broadcast` channel of 256 messages, where a client that
//! falls further behind skips the oldest too (see `ws_peer`). Each server
//! runs as a child process pinned to core 0, the client on one
//! current-thread runtime pinned to core 1, as in `ws-echo`.
//!
//! A run connects `--connections` clients (1,000), of which `--stalled`
//! (10, spread among the others) never read after their `101`. Once their
//! sockets' buffers are full the server cannot write to them and they fall
//! behind. On loopback the kernel would first hold some 45,000 messages of
//! 64 B for each (the server's send buffer grows to 4 MiB), minutes of
//! publishing at these rates, so the servers are given a send buffer of
//! `--send-buffer` bytes (4,096, which the kernel doubles; `ringstream
//! serve --send-buffer`, `ws-peer --send-buffer`) and the stalled clients a
//! receive buffer of `--stalled-rcvbuf` bytes (4,096): then about 180
//! messages fill them, and past 256 more the broadcaster drops.
//!
//! One of the reading clients is also the publisher: it sends binary
//! messages of `--size` bytes (64) carrying a sequence number and the
//! instant they were sent (nanoseconds on the client's clock, which the
//! readers share). First it sends one every 20 ms until every reading
//! client has received one (all are subscribed), then either as fast as
//! delivery allows — at most `--window` (2) messages not yet taken by every
//! reading client — or at `--rate` messages a second. After `--warmup`
//! seconds (2) it counts for `--duration` seconds (3): the messages the
//! reading clients take and the latency of each (taken − sent) in a
//! histogram (buckets 1/32 of an octave wide: quantiles within 3%), the
//! CPU time of the server's threads, of the client's thread and of
//! everything else on the machine (`others`, in % of one core: on a shared
//! machine, high values mean disturbed figures: a run where it reaches 20%
//! is run again, up to `--retries` times), and sequence numbers a reading
//! client never saw (skipped). The server's resident memory is
//! read when every client is connected, at the end, and its peak in
//! between (`VmHWM`, reset at the start).
//!
//! ringstream's `/metrics` gives its broadcaster's counters
//! (`ringstream_ws_broadcast_*{route="/ws/broadcast"}`): messages skipped
//! by clients that fell behind (the stalled ones) and clients closed for
//! it. The peers have no such counters: their columns read `-`.
//!
//! The table shows medians over rounds (servers alternating in order from
//! round to round), and each server's CPU per delivered message against
//! fastwebsockets' as the median of the ratios within each round (`÷ fws`),
//! which a drift of the machine's speed between rounds does not move.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use ringstream_cli::app::websocket::MAX_BROADCAST_LEN;
use serde_json::json;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::TcpStream;
use tokio::sync::Notify;

use super::servers::ServerProcess;
use super::ws::{self, ServerArgs};
use crate::report::Row;
use crate::wsclient::{self, Conn};

/// Flags of `ws-broadcast`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub common: super::Common,
    #[command(flatten)]
    pub servers: ServerArgs,
    /// Clients connected, the publisher and the stalled ones included.
    #[arg(long, default_value_t = 1000)]
    pub connections: usize,
    /// Clients that never read after the handshake.
    #[arg(long, default_value_t = 10)]
    pub stalled: usize,
    /// Receive buffer (`SO_RCVBUF`) of the stalled clients' sockets, in
    /// bytes; 0 leaves the kernel's.
    #[arg(long, default_value_t = 4096)]
    pub stalled_rcvbuf: u32,
    /// Send buffer (`SO_SNDBUF`) the servers give every connection
    /// (`--send-buffer`), in bytes; 0 leaves the kernel's, which grows to
    /// 4 MiB on loopback: a client that never reads then holds some 45,000
    /// messages of 64 B in the kernel before the server has to.
    #[arg(long, default_value_t = 4096)]
    pub send_buffer: u32,
    /// Seconds counted per run.
    #[arg(long, default_value_t = 3.0)]
    pub duration: f64,
    /// Seconds of publishing before the count starts: long enough, at the
    /// servers' pace, for the stalled clients' buffers to fill and for them
    /// to fall behind the 256 messages kept.
    #[arg(long, default_value_t = 2.0)]
    pub warmup: f64,
    /// Messages a second the publisher sends; 0: as fast as delivery
    /// allows, with at most `--window` messages not yet taken by every
    /// reading client.
    #[arg(long, default_value_t = 0.0)]
    pub rate: f64,
    /// Messages sent and not yet taken by every reading client, at most
    /// (with `--rate 0`); keep it below the servers' 256 retained. With 2
    /// the server always has the next message while it sends one out, and
    /// a message waits for at most one before it.
    #[arg(long, default_value_t = 2)]
    pub window: u64,
    /// Rounds; each runs every server once, in alternating order.
    #[arg(long, default_value_t = 1)]
    pub rounds: usize,
    /// Times a run is repeated, on a fresh server, when other work on the
    /// machine took 20% of a core or more during it (the last try is kept).
    #[arg(long, default_value_t = 2)]
    pub retries: usize,
}

/// CPU time of other work over a run's wall time (in cores) from which
/// the run is said to be disturbed.
const DISTURBED: f64 = 0.2;

/// The message size unless `--size` says otherwise.
const DEFAULT_SIZE: usize = 64;

/// The payload's head: the sequence number and the instant sent, 8 bytes
/// each, little-endian.
const HEAD: usize = 16;

/// Slots of the per-message counts of readers that took a message; more
/// than any window.
const SLOTS: usize = 4096;

/// Latencies in nanoseconds: exact below 64 ns, then 32 buckets per
/// octave, so a quantile is within 1/32 (3%) of the true value.
#[derive(Debug, Clone)]
struct Histogram {
    counts: Vec<u64>,
    total: u64,
    max: u64,
}

impl Histogram {
    const SUB_BITS: u32 = 5;

    fn new() -> Histogram {
        Histogram {
            counts: vec![0; 64 << Self::SUB_BITS],
            total: 0,
            max: 0,
        }
    }

    fn index(value: u64) -> usize {
        if value < 2 << Self::SUB_BITS {
            return value as usize;
        }
        let shift = 63 - value.leading_zeros() - Self::SUB_BITS;
        ((shift as usize) << Self::SUB_BITS) + (value >> shift) as usize
    }

    /// The middle of bucket `index`'s values.
    fn middle(index: usize) -> u64 {
        let sub = 1usize << Self::SUB_BITS;
        if index < 2 * sub {
            return index as u64;
        }
        let shift = (index >> Self::SUB_BITS) - 1;
        let mantissa = (index - (shift << Self::SUB_BITS)) as u64;
        let low = mantissa << shift;
        low + ((1u64 << shift) - 1) / 2
    }

    fn record(&mut self, value: u64) {
        self.counts[Self::index(value)] += 1;
        self.total += 1;
        self.max = self.max.max(value);
    }

    /// The value at quantile `q` (0..=1); 0 when empty.
    fn quantile(&self, q: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (index, &count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                return Self::middle(index).min(self.max);
            }
        }
        self.max
    }
}

/// What the client's tasks share during a run.
struct Shared {
    /// The origin of the instants in the messages.
    epoch: Instant,
    /// Reading clients (the publisher among them).
    readers: u32,
    /// Deliveries and latencies are counted while set.
    measuring: AtomicBool,
    /// Messages taken by reading clients while measuring.
    delivered: AtomicU64,
    /// Sequence numbers a reading client never saw (after its first).
    skipped: AtomicU64,
    /// Latencies of the messages counted.
    latencies: Mutex<Histogram>,
    /// Readers that have taken at least one message.
    started: AtomicU32,
    /// Messages from this sequence number on are counted in `taken`.
    counted_from: AtomicU64,
    /// For message `seq` (from `counted_from`), the readers that took or
    /// passed it, at `seq % SLOTS`.
    taken: Vec<AtomicU32>,
    /// Woken when every reader has taken a message.
    all_taken: Notify,
    /// Messages sent.
    sent: AtomicU64,
    /// Ends the publisher.
    stop: AtomicBool,
}

impl Shared {
    fn now(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// A reader that took nothing before took `seq` or, having taken
    /// `last`, took `seq`: counts it (and the ones it skipped) as taken.
    fn took(&self, last: Option<u64>, seq: u64) {
        let from = self.counted_from.load(Relaxed);
        let first = match last {
            Some(last) => last + 1,
            None => seq,
        }
        .max(from);
        for s in first..=seq {
            let slot = &self.taken[(s % SLOTS as u64) as usize];
            if slot.fetch_add(1, Relaxed) + 1 == self.readers {
                self.all_taken.notify_one();
            }
        }
    }
}

/// What one run measured.
#[derive(Debug, Clone)]
struct Sample {
    sent_per_second: f64,
    delivered_per_second: f64,
    latencies: Histogram,
    /// Server CPU time per delivered message, in nanoseconds.
    server_ns: f64,
    server_busy: f64,
    client_busy: f64,
    others_busy: f64,
    rss_start: u64,
    rss_end: u64,
    rss_peak: u64,
    skipped: u64,
    /// The broadcaster's counters (ringstream only).
    counters: Option<Counters>,
}

/// ringstream's broadcaster counters at the end of a run.
#[derive(Debug, Clone, Copy)]
struct Counters {
    subscribers: u64,
    sent: u64,
    dropped: u64,
    lag_closed: u64,
    /// Messages dropped during the counted window.
    dropped_in_window: u64,
}

/// One reading client: takes every message, records its latency while
/// measuring, and counts it as taken for the publisher's window.
async fn read_loop<S: AsyncRead + Unpin>(mut conn: Conn<S>, shared: Arc<Shared>) -> io::Result<()> {
    let mut head = [0u8; HEAD];
    let mut last: Option<u64> = None;
    loop {
        conn.read_message_head(&mut head).await?;
        let now = shared.now();
        let (seq, sent) = decode_head(&head);
        if last.is_none() {
            shared.started.fetch_add(1, Relaxed);
        }
        if let Some(last) = last {
            if seq > last + 1 {
                shared.skipped.fetch_add(seq - last - 1, Relaxed);
            }
        }
        shared.took(last, seq);
        last = Some(last.map_or(seq, |last| last.max(seq)));
        if shared.measuring.load(Relaxed) {
            shared.delivered.fetch_add(1, Relaxed);
            if let Ok(mut latencies) = shared.latencies.lock() {
                latencies.record(now.saturating_sub(sent));
            }
        }
    }
}

fn decode_head(head: &[u8; HEAD]) -> (u64, u64) {
    let mut seq = [0u8; 8];
    let mut sent = [0u8; 8];
    seq.copy_from_slice(&head[..8]);
    sent.copy_from_slice(&head[8..]);
    (u64::from_le_bytes(seq), u64::from_le_bytes(sent))
}

/// The publisher: sends message `seq` with its instant, masked, until
/// stopped. First one every 20 ms until every reader has taken one, then
/// at `rate` or within `window`. Gives the connection's sending side back,
/// which closes it when dropped.
async fn publish(
    mut writer: OwnedWriteHalf,
    shared: Arc<Shared>,
    size: usize,
    rate: f64,
    window: u64,
) -> anyhow::Result<OwnedWriteHalf> {
    let mut payload = wsclient::payload(size);
    let mut seq = 0u64;
    // Message `seq`, sent now, as a masked frame.
    let mut frame = |seq: u64| {
        payload[..8].copy_from_slice(&seq.to_le_bytes());
        payload[8..HEAD].copy_from_slice(&shared.now().to_le_bytes());
        shared.sent.fetch_add(1, Relaxed);
        wsclient::masked_frame(wsclient::OP_BINARY, &payload, wsclient::MASK)
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while shared.started.load(Relaxed) < shared.readers {
        anyhow::ensure!(
            Instant::now() < deadline,
            "{} of {} reading clients received a message within 10 s",
            shared.started.load(Relaxed),
            shared.readers
        );
        writer.write_all(&frame(seq)).await?;
        seq += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Every reader is subscribed: the window counts from here.
    let from = seq;
    shared.counted_from.store(from, Relaxed);
    let mut ticker = (rate > 0.0).then(|| {
        let mut ticker = tokio::time::interval(Duration::from_secs_f64(1.0 / rate));
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
        ticker
    });
    while !shared.stop.load(Relaxed) {
        if let Some(ticker) = &mut ticker {
            ticker.tick().await;
        } else if seq >= from + window {
            let gate = seq - window;
            let slot = &shared.taken[(gate % SLOTS as u64) as usize];
            while slot.load(Relaxed) < shared.readers {
                // Checked again now and then, so a stop is heard.
                let _ = tokio::time::timeout(
                    Duration::from_millis(100),
                    shared.all_taken.notified(),
                )
                .await;
                if shared.stop.load(Relaxed) {
                    return Ok(writer);
                }
            }
            // Free for message `gate + SLOTS`, which no reader can have
            // taken yet.
            slot.store(0, Relaxed);
        }
        writer.write_all(&frame(seq)).await?;
        seq += 1;
    }
    Ok(writer)
}

/// The `/metrics` page of the server at `addr`.
async fn fetch_metrics(addr: SocketAddr) -> anyhow::Result<String> {
    let mut socket = TcpStream::connect(addr).await?;
    socket
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n")
        .await?;
    let mut page = String::new();
    socket.read_to_string(&mut page).await?;
    Ok(page)
}

/// The value of `name{route="/ws/broadcast"}` in a `/metrics` page.
fn metric(page: &str, name: &str) -> anyhow::Result<u64> {
    let key = format!("{name}{{route=\"/ws/broadcast\"}} ");
    let line = page
        .lines()
        .find(|line| line.starts_with(&key))
        .with_context(|| format!("no {key}in /metrics"))?;
    Ok(line[key.len()..].trim().parse()?)
}

/// One run against `server`.
async fn broadcast_run(
    server: &ServerProcess,
    args: &Args,
    size: usize,
    with_counters: bool,
) -> anyhow::Result<Sample> {
    let path = args.servers.path();
    let stalled_every = args
        .connections
        .checked_div(args.stalled)
        .map_or(usize::MAX, |every| every.max(1));
    let mut readers = Vec::new();
    let mut stalled = Vec::new();
    for i in 0..args.connections {
        // The stalled clients are spread among the others; the first
        // client, the publisher, reads.
        let stalls = i % stalled_every == stalled_every - 1 && stalled.len() < args.stalled && i > 0;
        let recv_buffer = (stalls && args.stalled_rcvbuf > 0).then_some(args.stalled_rcvbuf);
        let conn = Conn::connect_with(server.addr, path, 4096, recv_buffer)
            .await
            .with_context(|| {
                format!(
                    "connection {} of {} to {}",
                    i + 1,
                    args.connections,
                    server.name
                )
            })?;
        if stalls {
            stalled.push(conn);
        } else {
            readers.push(conn);
        }
    }
    let rss_start = server.rss()?;
    server.reset_peak()?;
    let shared = Arc::new(Shared {
        epoch: Instant::now(),
        readers: readers.len() as u32,
        measuring: AtomicBool::new(false),
        delivered: AtomicU64::new(0),
        skipped: AtomicU64::new(0),
        latencies: Mutex::new(Histogram::new()),
        started: AtomicU32::new(0),
        counted_from: AtomicU64::new(u64::MAX),
        taken: (0..SLOTS).map(|_| AtomicU32::new(0)).collect(),
        all_taken: Notify::new(),
        sent: AtomicU64::new(0),
        stop: AtomicBool::new(false),
    });
    let mut readers = readers.into_iter();
    let publisher = readers.next().context("no reading client")?;
    let (publisher_reads, writer) = publisher.split();
    let mut tasks = vec![tokio::spawn(read_loop(publisher_reads, shared.clone()))];
    tasks.extend(readers.map(|conn| tokio::spawn(read_loop(conn, shared.clone()))));
    let publishing = tokio::spawn(publish(
        writer,
        shared.clone(),
        size,
        args.rate,
        args.window,
    ));
    tokio::time::sleep(Duration::from_secs_f64(args.warmup)).await;
    if publishing.is_finished() {
        let why = publishing.await;
        anyhow::bail!(
            "{}: the publisher stopped during the warm-up: {why:?}",
            server.name
        );
    }
    let dropped0 = if with_counters {
        Some(metric(
            &fetch_metrics(server.addr).await?,
            "ringstream_ws_broadcast_dropped_total",
        )?)
    } else {
        None
    };
    let sent0 = shared.sent.load(Relaxed);
    let server0 = server.cpu_ns()?;
    let client0 = super::thread_cpu_time();
    let machine0 = ws::machine_busy_ns()?;
    let start = Instant::now();
    shared.measuring.store(true, Relaxed);
    tokio::time::sleep(Duration::from_secs_f64(args.duration)).await;
    shared.measuring.store(false, Relaxed);
    let wall = start.elapsed().as_secs_f64();
    let sent1 = shared.sent.load(Relaxed);
    let server1 = server.cpu_ns()?;
    let client1 = super::thread_cpu_time();
    let machine1 = ws::machine_busy_ns()?;
    let rss_end = server.rss()?;
    let rss_peak = server.peak_rss()?;
    let (ended, reading): (Vec<_>, Vec<_>) = tasks.into_iter().partition(|t| t.is_finished());
    if let Some(task) = ended.into_iter().next() {
        let why = match task.await {
            Ok(Err(e)) => e.to_string(),
            other => format!("{other:?}"),
        };
        anyhow::bail!("{}: a reading client ended early: {why}", server.name);
    }
    shared.stop.store(true, Relaxed);
    // Kept open until the readers are stopped.
    let _writer = publishing
        .await?
        .with_context(|| format!("publishing to {}", server.name))?;
    let counters = match dropped0 {
        Some(dropped0) => {
            let page = fetch_metrics(server.addr).await?;
            let dropped = metric(&page, "ringstream_ws_broadcast_dropped_total")?;
            Some(Counters {
                subscribers: metric(&page, "ringstream_ws_broadcast_subscribers")?,
                sent: metric(&page, "ringstream_ws_broadcast_sent_total")?,
                dropped,
                lag_closed: metric(&page, "ringstream_ws_broadcast_lag_closed_total")?,
                dropped_in_window: dropped.saturating_sub(dropped0),
            })
        }
        None => None,
    };
    reading.iter().for_each(|task| task.abort());
    drop(stalled);
    let delivered = shared.delivered.load(Relaxed) as f64;
    anyhow::ensure!(
        delivered >= 1.0,
        "{} delivered no message in {wall:.1} s",
        server.name
    );
    let server_ns = server1.saturating_sub(server0) as f64;
    let client_ns = client1.saturating_sub(client0).as_nanos() as f64;
    let machine_ns = machine1.saturating_sub(machine0) as f64;
    let latencies = shared
        .latencies
        .lock()
        .map_err(|_| anyhow::anyhow!("latency histogram poisoned"))?
        .clone();
    Ok(Sample {
        sent_per_second: sent1.saturating_sub(sent0) as f64 / wall,
        delivered_per_second: delivered / wall,
        latencies,
        server_ns: server_ns / delivered,
        server_busy: server_ns / 1e9 / wall,
        client_busy: client_ns / 1e9 / wall,
        others_busy: (machine_ns - server_ns - client_ns).max(0.0) / 1e9 / wall,
        rss_start,
        rss_end,
        rss_peak,
        skipped: shared.skipped.load(Relaxed),
        counters,
    })
}

/// Run the scenario.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let size = args.common.size.unwrap_or(DEFAULT_SIZE);
    anyhow::ensure!(
        (HEAD..=MAX_BROADCAST_LEN).contains(&size),
        "--size must be {HEAD} to {MAX_BROADCAST_LEN} bytes (the largest message /ws/broadcast takes)"
    );
    anyhow::ensure!(
        args.stalled < args.connections,
        "--stalled must leave at least one reading client"
    );
    anyhow::ensure!(
        args.window >= 1 && args.window < SLOTS as u64,
        "--window must be 1 to {}",
        SLOTS - 1
    );
    let mut servers_args = args.servers.clone();
    servers_args.broadcast = true;
    servers_args.send_buffer = (args.send_buffer > 0).then_some(args.send_buffer);
    let args = &Args {
        servers: servers_args,
        common: args.common.clone(),
        ..*args
    };
    ws::raise_fd_limit(2 * args.connections as u64 + 256);
    let rt = ws::client_runtime(args.servers.client_cpu)?;
    let mut kinds = args.servers.servers.clone();
    let mut samples: Vec<(&'static str, Vec<Sample>)> = Vec::new();
    let mut retried = 0usize;
    for round in 0..args.rounds {
        for kind in super::rounds::alternated(round, &kinds) {
            let with_counters = kind == ws::WsServer::Ringstream;
            let mut tries = 0;
            let (name, sample) = loop {
                // A fresh server each try: its counters start at zero.
                let Some(server) = ws::start_checked(kind, &args.servers, args.connections, &rt)?
                else {
                    break (None, None);
                };
                let sample = rt.block_on(broadcast_run(&server, args, size, with_counters))?;
                if sample.others_busy < DISTURBED || tries == args.retries {
                    break (Some(server.name), Some(sample));
                }
                tries += 1;
                retried += 1;
                drop(server);
                std::thread::sleep(Duration::from_secs(1));
            };
            let (Some(name), Some(sample)) = (name, sample) else {
                // Skipped, with a note: not in later rounds either.
                kinds.retain(|k| *k != kind);
                continue;
            };
            match samples.iter_mut().find(|(n, _)| *n == name) {
                Some((_, v)) => v.push(sample),
                None => samples.push((name, vec![sample])),
            }
        }
    }
    anyhow::ensure!(!samples.is_empty(), "no server to measure");
    report(args, size, &samples);
    if !args.common.json && retried > 0 {
        println!("{retried} disturbed run(s) were run again");
    }
    Ok(())
}

/// Print the table (medians over rounds) or the JSON rows.
fn report(args: &Args, size: usize, samples: &[(&'static str, Vec<Sample>)]) {
    let readers = args.connections - args.stalled;
    let mode = if args.rate > 0.0 {
        format!("{} msg/s", args.rate)
    } else {
        format!("window {}", args.window)
    };
    if !args.common.json {
        println!(
            "{} clients ({} reading, {} stalled), {size} B messages, {mode}, {} s counted",
            args.connections, readers, args.stalled, args.duration
        );
        println!(
            "{:<15} {:>7} {:>11}  {:>9} {:>9} {:>9}  {:>9} {:>6}  {:>6} {:>6} {:>6}  {:>22}  {:>12} {:>10} {:>7}",
            "server",
            "sent/s",
            "delivered/s",
            "p50",
            "p99",
            "max",
            "CPU/dlv",
            "÷ fws",
            "server",
            "client",
            "others",
            "RSS start→end (peak)",
            "dropped",
            "lag-closed",
            "skipped",
        );
    }
    let reference = samples
        .iter()
        .find(|(name, _)| *name == ws::REFERENCE)
        .map(|(_, v)| v);
    let mut rows = Vec::new();
    for (name, v) in samples {
        // CPU per delivery against fastwebsockets', round by round.
        let ratios: Option<Vec<f64>> = reference.map(|r| {
            v.iter()
                .zip(r)
                .map(|(s, r)| s.server_ns / r.server_ns)
                .collect()
        });
        let ratio = ratios.as_deref().map(super::median);
        let median = |f: &dyn Fn(&Sample) -> f64| super::rounds::median_by(v, f);
        let sent = median(&|s| s.sent_per_second);
        let delivered = median(&|s| s.delivered_per_second);
        let p50 = median(&|s| s.latencies.quantile(0.5) as f64);
        let p99 = median(&|s| s.latencies.quantile(0.99) as f64);
        let max = median(&|s| s.latencies.max as f64);
        let cpu = median(&|s| s.server_ns);
        let server_busy = median(&|s| s.server_busy);
        let client_busy = median(&|s| s.client_busy);
        let others = median(&|s| s.others_busy);
        let rss_start = median(&|s| s.rss_start as f64);
        let rss_end = median(&|s| s.rss_end as f64);
        let rss_peak = median(&|s| s.rss_peak as f64);
        let skipped = median(&|s| s.skipped as f64);
        let counters: Option<Vec<Counters>> = v.iter().map(|s| s.counters).collect();
        let counter = |f: fn(&Counters) -> u64| -> Option<f64> {
            counters
                .as_ref()
                .map(|c| super::rounds::median_by(c, |c| f(c) as f64))
        };
        let dropped = counter(|c| c.dropped);
        let dropped_in_window = counter(|c| c.dropped_in_window);
        let lag_closed = counter(|c| c.lag_closed);
        rows.push(Row {
            scenario: "ws-broadcast".into(),
            variant: (*name).into(),
            bytes: size,
            seconds: 1.0 / delivered,
            extra: vec![
                ("connections".into(), json!(args.connections)),
                ("stalled".into(), json!(args.stalled)),
                ("rate".into(), json!(args.rate)),
                ("window".into(), json!(args.window)),
                ("sent_per_second".into(), json!(sent)),
                ("delivered_per_second".into(), json!(delivered)),
                ("latency_p50_ns".into(), json!(p50)),
                ("latency_p99_ns".into(), json!(p99)),
                ("latency_max_ns".into(), json!(max)),
                ("server_cpu_ns_per_delivered".into(), json!(cpu)),
                ("cpu_ratio_to_fastwebsockets".into(), json!(ratio)),
                ("cpu_round_ratios".into(), json!(ratios)),
                ("server_busy".into(), json!(server_busy)),
                ("client_busy".into(), json!(client_busy)),
                ("others_busy".into(), json!(others)),
                ("rss_start_bytes".into(), json!(rss_start)),
                ("rss_end_bytes".into(), json!(rss_end)),
                ("rss_peak_bytes".into(), json!(rss_peak)),
                ("skipped_by_readers".into(), json!(skipped)),
                ("broadcast_dropped_total".into(), json!(dropped)),
                ("broadcast_dropped_in_window".into(), json!(dropped_in_window)),
                ("broadcast_lag_closed_total".into(), json!(lag_closed)),
                (
                    "broadcast_subscribers".into(),
                    json!(counter(|c| c.subscribers)),
                ),
                ("broadcast_sent_total".into(), json!(counter(|c| c.sent))),
            ],
            ..Row::default()
        });
        if !args.common.json {
            let count = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.0}"));
            let rss = format!(
                "{:.1}→{:.1} ({:.1}) MiB",
                rss_start / 1048576.0,
                rss_end / 1048576.0,
                rss_peak / 1048576.0
            );
            println!(
                "{:<15} {:>7.0} {:>11.0}  {:>9} {:>9} {:>9}  {:>6.0} ns {:>6}  {:>5.0}% {:>5.0}% {:>5.0}%  {:>22}  {:>12} {:>10} {:>7.0}",
                name,
                sent,
                delivered,
                millis(p50),
                millis(p99),
                millis(max),
                cpu,
                ratio.map_or("-".to_string(), |r| format!("{r:.2}")),
                server_busy * 100.0,
                client_busy * 100.0,
                others * 100.0,
                rss,
                count(dropped),
                count(lag_closed),
                skipped,
            );
        }
    }
    if args.common.json {
        crate::report::print_json(&rows);
    } else {
        println!(
            "dropped: messages the server's broadcaster skipped for clients that fell behind (the stalled ones), \
             in all; lag-closed: clients it closed for it; skipped: sequence numbers a reading client never saw; \
             - : the peers have no such counters"
        );
    }
}

/// Nanoseconds as milliseconds, for the table.
fn millis(ns: f64) -> String {
    format!("{:.2} ms", ns / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_continuous_and_narrow() {
        let mut last = 0;
        for value in (0..100_000u64).chain([u64::MAX / 2, u64::MAX]) {
            let index = Histogram::index(value);
            assert!(index >= last, "{value}");
            assert!(index <= last + 1 || value > 99_999, "{value}");
            last = index;
            let middle = Histogram::middle(index);
            let error = middle.abs_diff(value) as f64 / value.max(1) as f64;
            assert!(error <= 1.0 / 32.0, "{value}: {middle}");
        }
        assert!(Histogram::index(u64::MAX) < Histogram::new().counts.len());
    }

    #[test]
    fn quantiles_of_a_uniform_spread() {
        let mut h = Histogram::new();
        for v in 1..=10_000u64 {
            h.record(v * 1000);
        }
        let p50 = h.quantile(0.5) as f64;
        let p99 = h.quantile(0.99) as f64;
        assert!((p50 / 5_000_000.0 - 1.0).abs() < 0.04, "{p50}");
        assert!((p99 / 9_900_000.0 - 1.0).abs() < 0.04, "{p99}");
        assert_eq!(h.quantile(1.0), 10_000_000);
        assert_eq!(Histogram::new().quantile(0.99), 0);
    }

    #[test]
    fn a_reader_that_skipped_counts_the_skipped_as_passed() {
        let shared = Shared {
            epoch: Instant::now(),
            readers: 2,
            measuring: AtomicBool::new(false),
            delivered: AtomicU64::new(0),
            skipped: AtomicU64::new(0),
            latencies: Mutex::new(Histogram::new()),
            started: AtomicU32::new(0),
            counted_from: AtomicU64::new(10),
            taken: (0..SLOTS).map(|_| AtomicU32::new(0)).collect(),
            all_taken: Notify::new(),
            sent: AtomicU64::new(0),
            stop: AtomicBool::new(false),
        };
        shared.took(None, 8);
        shared.took(Some(8), 12);
        shared.took(None, 11);
        let taken = |seq: usize| shared.taken[seq].load(Relaxed);
        assert_eq!([taken(8), taken(9)], [0, 0], "before the count");
        assert_eq!([taken(10), taken(11), taken(12)], [1, 2, 1]);
    }
}
