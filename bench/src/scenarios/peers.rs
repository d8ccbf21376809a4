//! `peers`: `ringstream serve` beside the HTTP/1.1 servers a Rust user
//! might pick instead — hyper 1.x, actix-web, xitca-web and may_minihttp —
//! each on `--workers` worker threads (one by default), serving the same
//! bytes, measured in one run: requests per second, server CPU time per
//! request, and memory per idle keep-alive connection, with every
//! figure's ratio to ringstream's.
//!
//! # The servers
//!
//! - **ringstream**: `ringstream serve --workers N --no-access-log` (the
//!   binary next to this one), its demo's `GET /bytes/{n}`: one tokio
//!   multi-thread runtime of N threads, one listener;
//! - **ringstream-reuseport** (asked for with `--servers`, and measured
//!   by default when `--workers` is above 1): the same with
//!   `--reuse-port`, N threads each with a current-thread runtime and a
//!   listener of its own on the port (SO_REUSEPORT);
//! - **hyper**: this binary's `hyper-peer --workers N` (see `peer.rs`);
//! - **actix-web**, **xitca-web**, **may_minihttp**: the binaries
//!   `peer-actix`, `peer-xitca` and `peer-may` of `bench/peers`, a cargo
//!   workspace of its own so that ringstream's build and tests never
//!   compile these frameworks. The scenario builds it first
//!   (`cargo build --release --manifest-path bench/peers/Cargo.toml`;
//!   minutes the first time, nothing after), unless `--no-build`; a peer
//!   whose binary is then missing, or that does not answer correctly, is
//!   skipped with a note, and the others are measured.
//!
//! Each serves `n` bytes of the same 64 KiB pattern block as ringstream's
//! demo, as slices of one shared block where the framework allows it,
//! with the same `Content-Type` and the `Date` and `Content-Length` every
//! one of them sends (the `Server` value is each one's own name;
//! may_minihttp's is a fixed `M`). Before measuring, one request of each
//! size checks every server's body against ringstream's block, and the
//! header fields each one sends are printed.
//!
//! # Method
//!
//! Every server is a child process pinned to `--server-cpus` by taskset,
//! on `--workers` worker threads (the framework peers get `--workers N`
//! on their command line); the load generator ([`crate::loadgen`]) runs
//! on one thread of this process pinned to `--client-cpu`. By default
//! the servers get the first N cores and the load generator the next one;
//! when there is no core left for it (`--workers 2` on two cores), the
//! servers get the first N cores and the load generator is not pinned: it
//! shares the servers' cores, which the report says, and requests/s is
//! then what server and client together get from those cores:
//! many keep-alive connections, requests built once, `--depth` of them
//! written at once in the pipelined case, responses counted by their
//! `Content-Length`, whose value is checked. A run opens its connections,
//! loads the server for `--warmup` seconds, then counts the responses
//! completed in the next `--duration` seconds, with the CPU time the
//! server's threads ran meanwhile (`/proc/PID/task/*/schedstat`) and the
//! client thread's own.
//!
//! The cases, each with every server:
//!
//! - `GET /bytes/13` on 1, 64 and 256 connections (`--connections`);
//! - `GET /bytes/13`, 16 at a time (`--depth`), on 64 connections;
//! - `GET /bytes/40960` (`--size`) on 64 connections;
//! - idle: each server started afresh, its RSS (`VmRSS`) read after one
//!   request, then 1,000 and 10,000 connections (`--idle-connections`)
//!   each sending one `GET /bytes/13` and reading the answer before the
//!   next opens, all left open, and the RSS read again after a settling
//!   pause: the growth over the count is the memory per idle connection.
//!
//! Each case runs `--rounds` rounds, the servers in one order in the
//! first round, reversed in the next, and so on; tables show the median
//! over rounds of requests/s and of server CPU per request, and each
//! ratio to ringstream is the median of the per-round ratios (runs
//! seconds apart, which on a shared machine compare more fairly than
//! medians taken minutes apart).
//!
//! # Reading the tables
//!
//! `busy` is the CPU time the server's threads and the client's thread
//! ran during the window, in percent of one core (above 100% for a
//! server on several cores); `others` what the rest of the machine took
//! (a run disturbed by 20% of a core or more is run again up to
//! `--retries` times). A case is **client-bound** when the client's core
//! was ≥ 90% busy while the server's cores were not: the client, not the
//! server, set the pace, and the server's requests/s is a floor, not its
//! limit (its CPU per request still holds). `server` means the server's
//! cores (its workers, at most its CPUs) were ≥ 90% busy, the intended
//! case; `all cores` that server and client together kept the cores they
//! share ≥ 90% busy; `neither` means the round trip set the pace (one
//! connection). `threads` is how many of the server's threads ran ≥ 5%
//! of its CPU time in the window, over how many it has: one serving
//! thread shows as `1/N`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::Context;
use serde_json::json;

use super::servers::{start_hyper, start_program, start_ringstream_with, ServerProcess};
use super::rounds::ratios;
use super::ws;
use crate::loadgen::{self, Load};
use crate::report::Row;

/// Flags of `peers`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// `--size` sets the body of the large case (40960 by default).
    #[command(flatten)]
    pub common: super::Common,
    /// Rounds per case; the servers' order is reversed from one round to
    /// the next.
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Seconds counted per run.
    #[arg(long, default_value_t = 2.0)]
    pub duration: f64,
    /// Seconds of load before each run's count starts.
    #[arg(long, default_value_t = 0.5)]
    pub warmup: f64,
    /// Servers to measure; ratios need ringstream among them [default:
    /// ringstream,hyper,actix,xitca,may, with ringstream-reuseport after
    /// ringstream when --workers is above 1].
    #[arg(long, value_enum, value_delimiter = ',')]
    pub servers: Vec<Server>,
    /// Worker threads of every server.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// Cases to run.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "small,pipelined,large,idle"
    )]
    pub cases: Vec<Case>,
    /// Connection counts of the `GET /bytes/13` case.
    #[arg(long, value_delimiter = ',', default_value = "1,64,256")]
    pub connections: Vec<usize>,
    /// Requests written at once per connection in the pipelined case.
    #[arg(long, default_value_t = 16)]
    pub depth: usize,
    /// Connections of the pipelined case.
    #[arg(long, default_value_t = 64)]
    pub pipelined_connections: usize,
    /// Connections of the large-body case.
    #[arg(long, default_value_t = 64)]
    pub large_connections: usize,
    /// Connection counts of the idle case.
    #[arg(long, value_delimiter = ',', default_value = "1000,10000")]
    pub idle_connections: Vec<usize>,
    /// Milliseconds to let a server settle before each RSS reading.
    #[arg(long, default_value_t = 300)]
    pub settle_ms: u64,
    /// CPUs for the servers (taskset list); `none` to not pin [default:
    /// the first --workers CPUs].
    #[arg(long)]
    pub server_cpus: Option<String>,
    /// CPU of the load generator's thread; negative to not pin [default:
    /// the CPU after the servers', unpinned when there is none].
    #[arg(long, allow_negative_numbers = true)]
    pub client_cpu: Option<i32>,
    /// Times a run is repeated when other work on the machine took 20% of
    /// a core or more during it (the last try is kept).
    #[arg(long, default_value_t = 1)]
    pub retries: usize,
    /// The peers' workspace (`bench/peers/Cargo.toml` of this checkout by
    /// default); its binaries are looked for in `target/release` beside it.
    #[arg(long, value_name = "Cargo.toml")]
    pub peers_manifest: Option<PathBuf>,
    /// Do not build the peers' workspace; use the binaries already there.
    #[arg(long)]
    pub no_build: bool,
}

/// A server under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Server {
    /// `ringstream serve --workers N --no-access-log`.
    Ringstream,
    /// `ringstream serve --workers N --reuse-port --no-access-log`.
    RingstreamReuseport,
    /// `ringstream serve --workers N --no-access-log --proxy-protocol
    /// --proxy-from 127.0.0.1/32`, each connection opened with a PROXY v1
    /// header: what a PROXY header costs.
    RingstreamProxy,
    /// The hyper 1.x peer (`hyper-peer --workers N`).
    Hyper,
    /// `peer-actix`: actix-web 4, `workers(N)`.
    Actix,
    /// `peer-xitca`: xitca-web, `worker_threads(N)`.
    Xitca,
    /// `peer-may`: may_minihttp, `may::config().set_workers(N)`.
    May,
}

impl Server {
    /// The name in tables and JSON rows.
    pub fn name(self) -> &'static str {
        match self {
            Server::Ringstream => "ringstream",
            Server::RingstreamReuseport => "ringstream-reuseport",
            Server::RingstreamProxy => "ringstream-proxy",
            Server::Hyper => "hyper",
            Server::Actix => "actix-web",
            Server::Xitca => "xitca-web",
            Server::May => "may_minihttp",
        }
    }

    /// What each connection sends before its first request.
    fn preamble(self) -> &'static [u8] {
        match self {
            Server::RingstreamProxy => b"PROXY TCP4 192.0.2.7 127.0.0.1 51000 8080\r\n",
            _ => b"",
        }
    }

    /// The binary of `bench/peers` it runs, for the framework peers.
    fn binary(self) -> Option<&'static str> {
        match self {
            Server::Ringstream
            | Server::RingstreamReuseport
            | Server::RingstreamProxy
            | Server::Hyper => None,
            Server::Actix => Some("peer-actix"),
            Server::Xitca => Some("peer-xitca"),
            Server::May => Some("peer-may"),
        }
    }
}

/// The parts of the scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Case {
    /// `GET /bytes/13` on each of `--connections`.
    Small,
    /// `GET /bytes/13`, `--depth` at a time, on `--pipelined-connections`.
    Pipelined,
    /// `GET /bytes/{--size}` on `--large-connections`.
    Large,
    /// Memory per idle keep-alive connection.
    Idle,
}

/// The small body, in bytes.
const SMALL: u64 = 13;

/// The large body by default, in bytes.
const LARGE: u64 = 40960;

/// Busy share (CPU time over wall time) at or above which a core counts
/// as saturated.
const SATURATED: f64 = 0.9;

/// CPU time of other work over a run's wall time (in cores) from which a
/// run is said to be disturbed.
const DISTURBED: f64 = 0.2;

/// Share of a server's CPU time in a window from which one of its threads
/// counts as doing the serving.
const BUSY_THREAD: f64 = 0.05;

/// What one run measured.
#[derive(Debug, Clone)]
struct Sample {
    /// Requests per second.
    rate: f64,
    /// Server CPU time per request, in nanoseconds.
    server_ns: f64,
    /// Client CPU time per request, in nanoseconds.
    client_ns: f64,
    /// Server CPU time over wall time.
    server_busy: f64,
    /// Client CPU time over wall time.
    client_busy: f64,
    /// CPU time of everything else on the machine over wall time, in
    /// cores.
    others_busy: f64,
    /// Names of the server's threads that ran ≥ [`BUSY_THREAD`] of its
    /// CPU time in the window.
    busy_threads: Vec<String>,
    /// Threads the server had.
    threads: usize,
}

impl Sample {
    fn client_bound(&self, place: &Placement) -> bool {
        self.client_busy >= SATURATED
            && self.server_busy < SATURATED * place.server_cores
            && !self.cores_saturated(place)
    }

    /// Whether server and client together kept the cores they share
    /// busy.
    fn cores_saturated(&self, place: &Placement) -> bool {
        place.shared && self.server_busy + self.client_busy >= SATURATED * place.cores
    }
}

/// Where the servers and the load generator run.
#[derive(Debug, Clone, PartialEq)]
struct Placement {
    /// The servers' CPUs (a taskset list), `None` when not pinned.
    server_cpus: Option<String>,
    /// The load generator's CPU, `None` when not pinned.
    client_cpu: Option<usize>,
    /// How many cores a server's threads can keep busy: its workers, at
    /// most its CPUs.
    server_cores: f64,
    /// Whether the load generator may run on a server's CPU.
    shared: bool,
    /// The CPUs servers and load generator run on together.
    cores: f64,
}

impl Placement {
    /// The flags' placement, or the default one for `workers` threads on
    /// a machine of `online` CPUs.
    fn new(args: &Args, workers: usize, online: usize) -> Placement {
        let online = online.max(1);
        let first = |n: usize| match n {
            0 | 1 => "0".to_owned(),
            n => format!("0-{}", n - 1),
        };
        let server_cpus = match &args.server_cpus {
            Some(list) => super::http::cpus(list).map(str::to_owned),
            None => Some(first(workers.min(online))),
        };
        let client_cpu = match args.client_cpu {
            Some(cpu) => usize::try_from(cpu).ok(),
            None if args.server_cpus.is_none() && workers < online => Some(workers),
            None if args.server_cpus.is_none() => None,
            // Servers placed by hand: the client on the first CPU they
            // leave free, if any (and not pinned beside unpinned servers).
            None => server_cpus.as_deref().and_then(|list| {
                let taken = cpu_list(list);
                (0..online).find(|cpu| !taken.contains(cpu))
            }),
        };
        let server_set = server_cpus.as_deref().map(cpu_list);
        let server_count = server_set.as_ref().map_or(online, Vec::len).max(1);
        let shared = match (&server_set, client_cpu) {
            (Some(set), Some(cpu)) => set.contains(&cpu),
            _ => true,
        };
        let cores = match (&server_set, client_cpu) {
            (Some(set), Some(cpu)) => set.len() + usize::from(!set.contains(&cpu)),
            _ => online,
        };
        Placement {
            server_cpus,
            client_cpu,
            server_cores: workers.min(server_count).max(1) as f64,
            shared,
            cores: cores as f64,
        }
    }

    /// The client CPU as `on_client_cpu` takes it (negative: unpinned).
    fn client(&self) -> i32 {
        self.client_cpu
            .and_then(|cpu| i32::try_from(cpu).ok())
            .unwrap_or(-1)
    }
}

/// The CPUs of a taskset list (`0`, `0-1`, `0,2-3`); what does not parse
/// is left out.
fn cpu_list(list: &str) -> Vec<usize> {
    let mut cpus = Vec::new();
    for part in list.split(',') {
        let part = part.trim();
        match part.split_once('-') {
            Some((from, to)) => {
                if let (Ok(from), Ok(to)) = (from.parse::<usize>(), to.parse::<usize>()) {
                    cpus.extend(from..=to);
                }
            }
            None => cpus.extend(part.parse::<usize>().ok()),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

/// What is read at each edge of a run's window.
struct Reading {
    threads: Vec<(u32, String, u64)>,
    machine_ns: u64,
}

fn read(server: &ServerProcess) -> anyhow::Result<Reading> {
    Ok(Reading {
        threads: server.threads_cpu_ns()?,
        machine_ns: ws::machine_busy_ns()?,
    })
}

/// Runs `f` on a thread of its own pinned to `cpu` (unless negative), so
/// that the servers started from this thread do not inherit the pinning.
fn on_client_cpu<T: Send>(cpu: i32, f: impl FnOnce() -> anyhow::Result<T> + Send) -> anyhow::Result<T> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                if let Ok(cpu) = usize::try_from(cpu) {
                    super::pin_current_thread(cpu)?;
                }
                f()
            })
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the load generator panicked")))
    })
}

/// One run of `load` against `server`.
fn measure(
    server: &ServerProcess,
    load: &Load,
    args: &Args,
    place: &Placement,
) -> anyhow::Result<Sample> {
    let warmup = Duration::from_secs_f64(args.warmup);
    let duration = Duration::from_secs_f64(args.duration);
    let (counts, readings) = on_client_cpu(place.client(), || {
        let mut readings = Vec::with_capacity(2);
        let counts = loadgen::run(load, warmup, duration, || readings.push(read(server)))
            .with_context(|| format!("loading {} on {}", server.name, server.addr))?;
        Ok((counts, readings))
    })?;
    let mut readings = readings.into_iter();
    let (Some(before), Some(after)) = (readings.next(), readings.next()) else {
        anyhow::bail!("the load generator read the server twice");
    };
    let (before, after) = (before?, after?);
    anyhow::ensure!(
        counts.responses > 0,
        "{} completed no request in {:?}",
        server.name,
        counts.wall
    );
    let ran = |tid: u32, ns: u64| {
        let then = before
            .threads
            .iter()
            .find(|t| t.0 == tid)
            .map_or(0, |t| t.2);
        ns.saturating_sub(then)
    };
    let server_ns: u64 = after.threads.iter().map(|t| ran(t.0, t.2)).sum();
    let busy_threads = after
        .threads
        .iter()
        .filter(|t| ran(t.0, t.2) as f64 >= BUSY_THREAD * server_ns as f64)
        .map(|t| t.1.clone())
        .collect();
    let wall = counts.wall.as_secs_f64();
    let responses = counts.responses as f64;
    let client_ns = counts.client_cpu.as_nanos() as f64;
    let machine_ns = after.machine_ns.saturating_sub(before.machine_ns) as f64;
    Ok(Sample {
        rate: responses / wall,
        server_ns: server_ns as f64 / responses,
        client_ns: client_ns / responses,
        server_busy: server_ns as f64 / 1e9 / wall,
        client_busy: client_ns / 1e9 / wall,
        others_busy: (machine_ns - server_ns as f64 - client_ns).max(0.0) / 1e9 / wall,
        busy_threads,
        threads: after.threads.len(),
    })
}

/// Where the peers' binaries are, building them first unless
/// `--no-build`; the framework peers whose binary is missing are left out
/// with a note.
fn peer_binaries(args: &Args, servers: &mut Vec<Server>) -> Vec<(Server, PathBuf)> {
    let manifest = args.peers_manifest.clone().unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/Cargo.toml")
    });
    let wanted: Vec<Server> = servers.iter().copied().filter(|s| s.binary().is_some()).collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    let dir = manifest.parent().unwrap_or(Path::new(".")).to_path_buf();
    let target = dir.join("target");
    let command = format!(
        "cargo build --release --manifest-path {}",
        manifest.display()
    );
    if !args.no_build {
        eprintln!("building the peers ({command}); the first build takes minutes");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "--release", "--keep-going", "--manifest-path"])
            .arg(&manifest)
            .arg("--target-dir")
            .arg(&target)
            .stdout(Stdio::null())
            .status();
        match status {
            Ok(s) if s.success() => {}
            Ok(s) => eprintln!(
                "note: building the peers failed ({s}); a peer whose binary is missing is skipped, \
                 one left by an earlier build is used"
            ),
            Err(e) => eprintln!(
                "note: could not run cargo to build the peers ({e}); run `{command}` by hand"
            ),
        }
    }
    let mut found = Vec::new();
    for server in wanted {
        let Some(name) = server.binary() else { continue };
        let path = target.join("release").join(name);
        if path.is_file() {
            found.push((server, path));
        } else {
            eprintln!(
                "note: {} skipped: {} is missing (build it with `{command}`)",
                server.name(),
                path.display()
            );
            servers.retain(|s| *s != server);
        }
    }
    found
}

/// How to start each server.
struct Launcher {
    binaries: Vec<(Server, PathBuf)>,
    cpus: Option<String>,
    max_connections: String,
    workers: usize,
}

impl Launcher {
    fn start(&self, server: Server) -> anyhow::Result<ServerProcess> {
        let cpus = self.cpus.as_deref();
        let flags = ["--no-access-log", "--max-connections", &self.max_connections];
        match server {
            Server::Ringstream => start_ringstream_with(self.workers, cpus, &flags),
            Server::RingstreamReuseport => {
                let mut process = start_ringstream_with(
                    self.workers,
                    cpus,
                    &[&flags[..], &["--reuse-port"]].concat(),
                )?;
                process.name = server.name();
                Ok(process)
            }
            Server::RingstreamProxy => {
                let proxy = ["--proxy-protocol", "--proxy-from", "127.0.0.1/32"];
                let mut process =
                    start_ringstream_with(self.workers, cpus, &[&flags[..], &proxy].concat())?;
                process.name = server.name();
                Ok(process)
            }
            Server::Hyper => start_hyper(self.workers, cpus),
            _ => {
                let path = self
                    .binaries
                    .iter()
                    .find(|(s, _)| *s == server)
                    .map(|(_, p)| p)
                    .with_context(|| format!("no binary for {}", server.name()))?;
                start_program(
                    server.name(),
                    path,
                    &["--workers", &self.workers.to_string()],
                    cpus,
                )
            }
        }
    }
}

/// The servers of `--servers`, or the default ones: ringstream and its
/// peers, with ringstream's per-core listeners when there is more than
/// one worker.
fn default_servers(asked: &[Server], workers: usize) -> Vec<Server> {
    if !asked.is_empty() {
        return asked.to_vec();
    }
    let mut servers = vec![Server::Ringstream];
    if workers > 1 {
        servers.push(Server::RingstreamReuseport);
    }
    servers.extend([Server::Hyper, Server::Actix, Server::Xitca, Server::May]);
    servers
}

/// The first `n` bytes of `/bytes/{n}`: ringstream's pattern block,
/// repeated.
fn expected_body(n: u64) -> Vec<u8> {
    let block = ringstream_cli::app::pattern_block();
    block.iter().copied().cycle().take(n as usize).collect()
}

/// Checks what `server` answers to `/bytes/{n}` for each of `sizes`;
/// returns the fields of the first answer's head, for the table's
/// heading.
fn check(server: &ServerProcess, preamble: &[u8], sizes: &[u64]) -> anyhow::Result<String> {
    let mut summary = String::new();
    for &n in sizes {
        let request = [preamble, &loadgen::get(&format!("/bytes/{n}"))].concat();
        let probed = loadgen::probe(server.addr, &request)
            .with_context(|| format!("GET /bytes/{n} from {}", server.name))?;
        anyhow::ensure!(
            probed.body == expected_body(n),
            "{}: the body of /bytes/{n} is not ringstream's pattern",
            server.name
        );
        anyhow::ensure!(
            probed.header("content-type") == Some("application/octet-stream"),
            "{}: /bytes/{n} comes as {:?}",
            server.name,
            probed.header("content-type")
        );
        if summary.is_empty() {
            summary = format!(
                "{} · {} · Server: {} · head of /bytes/{n}: {} B",
                probed.head.lines().next().unwrap_or_default(),
                probed.header_names().join(", "),
                probed.header("server").unwrap_or("(none)"),
                probed.head.len() + 4,
            );
        }
    }
    Ok(summary)
}

/// One request case: what to send and to how many connections.
struct RequestCase {
    case: Case,
    label: String,
    size: u64,
    connections: usize,
    depth: usize,
}

/// Notes gathered for the closing lines.
#[derive(Debug, Default)]
struct Notes {
    client_bound: Vec<String>,
    /// Runs kept although disturbed, and runs in all.
    disturbed: (usize, usize),
    /// The most other work took during a kept run, in cores.
    most_others: f64,
    retried: usize,
}

/// How a case's runs of one server were limited.
fn bound(
    samples: &[Sample],
    case: &str,
    name: &str,
    place: &Placement,
    notes: &mut Notes,
) -> &'static str {
    let median = |f: fn(&Sample) -> f64| super::rounds::median_by(samples, f);
    let client_bound = samples.iter().filter(|s| s.client_bound(place)).count();
    let cores_saturated = samples.iter().filter(|s| s.cores_saturated(place)).count();
    if client_bound > 0 {
        notes.client_bound.push(format!(
            "{name} {case} ({client_bound} of {} rounds)",
            samples.len()
        ));
    }
    notes.disturbed.0 += samples.iter().filter(|s| s.others_busy >= DISTURBED).count();
    notes.disturbed.1 += samples.len();
    notes.most_others = samples
        .iter()
        .map(|s| s.others_busy)
        .fold(notes.most_others, f64::max);
    let (server, client) = (median(|s| s.server_busy), median(|s| s.client_busy));
    let server_saturated = server >= SATURATED * place.server_cores;
    if client_bound * 2 > samples.len() {
        "client-bound"
    } else if cores_saturated * 2 > samples.len() {
        "all cores"
    } else if server_saturated && client >= SATURATED {
        "both"
    } else if server_saturated {
        "server"
    } else {
        "neither"
    }
}

/// Runs one request case on every server, round by round, and reports
/// it.
fn request_case(
    args: &Args,
    place: &Placement,
    servers: &[(Server, ServerProcess)],
    case: &RequestCase,
    rows: &mut Vec<Row>,
    notes: &mut Notes,
) -> anyhow::Result<()> {
    let load = |server: Server, addr: SocketAddr| Load {
        addr,
        request: loadgen::get(&format!("/bytes/{}", case.size)),
        depth: case.depth,
        connections: case.connections,
        body_len: Some(case.size),
        preamble: server.preamble().to_vec(),
    };
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); servers.len()];
    for round in 0..args.rounds {
        for i in super::rounds::indices(round, servers.len()) {
            let (server, process) = (servers[i].0, &servers[i].1);
            let mut sample = measure(process, &load(server, process.addr), args, place)?;
            for _ in 0..args.retries {
                if sample.others_busy < DISTURBED {
                    break;
                }
                notes.retried += 1;
                std::thread::sleep(Duration::from_secs(1));
                sample = measure(process, &load(server, process.addr), args, place)?;
            }
            samples[i].push(sample);
        }
    }
    let field = |i: usize, f: fn(&Sample) -> f64| -> Vec<f64> { samples[i].iter().map(f).collect() };
    let reference = servers.iter().position(|(s, _)| *s == Server::Ringstream);
    let mut table = vec![[
        "server",
        "req/s",
        "÷ ringstream",
        "CPU/req",
        "÷ ringstream",
        "client CPU/req",
        "busy server/client",
        "others",
        "threads",
        "bound",
    ]
    .map(String::from)
    .to_vec()];
    for (i, (server, _)) in servers.iter().enumerate() {
        let (rate, cpu) = (field(i, |s| s.rate), field(i, |s| s.server_ns));
        let (rate_ratios, cpu_ratios) = match reference {
            Some(r) => (
                ratios(&rate, &field(r, |s| s.rate)),
                ratios(&cpu, &field(r, |s| s.server_ns)),
            ),
            None => (Vec::new(), Vec::new()),
        };
        let case_name = format!("{} × {}", case.label, case.connections);
        let bound = bound(&samples[i], &case_name, server.name(), place, notes);
        let busy_threads = samples[i]
            .iter()
            .map(|s| s.busy_threads.len())
            .max()
            .unwrap_or(0);
        let threads = samples[i].iter().map(|s| s.threads).max().unwrap_or(0);
        let median = super::median;
        let ratio_text = |v: &[f64]| {
            if v.is_empty() {
                String::new()
            } else {
                format!("{:.2}", median(v))
            }
        };
        table.push(vec![
            server.name().to_owned(),
            format!("{:.0}", median(&rate)),
            ratio_text(&rate_ratios),
            format!("{:.2} µs", median(&cpu) / 1e3),
            ratio_text(&cpu_ratios),
            format!("{:.2} µs", median(&field(i, |s| s.client_ns)) / 1e3),
            format!(
                "{:.0}%/{:.0}%",
                median(&field(i, |s| s.server_busy)) * 100.0,
                median(&field(i, |s| s.client_busy)) * 100.0
            ),
            format!("{:.0}%", median(&field(i, |s| s.others_busy)) * 100.0),
            format!("{busy_threads}/{threads}"),
            bound.to_owned(),
        ]);
        let mut names: Vec<&str> = samples[i]
            .iter()
            .flat_map(|s| s.busy_threads.iter().map(String::as_str))
            .collect();
        names.sort_unstable();
        names.dedup();
        rows.push(Row {
            scenario: "peers".into(),
            variant: server.name().into(),
            bytes: case.size as usize,
            seconds: 1.0 / median(&rate),
            extra: vec![
                ("case".into(), json!(format!("{:?}", case.case).to_lowercase())),
                ("path".into(), json!(format!("/bytes/{}", case.size))),
                ("connections".into(), json!(case.connections)),
                ("depth".into(), json!(case.depth)),
                ("workers".into(), json!(args.workers)),
                ("requests_per_second".into(), json!(median(&rate))),
                ("samples".into(), json!(rate)),
                ("ratio_to_ringstream".into(), json!(reference.map(|_| median(&rate_ratios)))),
                ("round_ratios".into(), json!(rate_ratios)),
                ("server_cpu_ns_per_request".into(), json!(median(&cpu))),
                ("cpu_samples".into(), json!(cpu)),
                ("cpu_ratio_to_ringstream".into(), json!(reference.map(|_| median(&cpu_ratios)))),
                ("cpu_round_ratios".into(), json!(cpu_ratios)),
                (
                    "client_cpu_ns_per_request".into(),
                    json!(median(&field(i, |s| s.client_ns))),
                ),
                ("server_busy".into(), json!(median(&field(i, |s| s.server_busy)))),
                ("client_busy".into(), json!(median(&field(i, |s| s.client_busy)))),
                ("others_busy".into(), json!(field(i, |s| s.others_busy))),
                ("bound".into(), json!(bound)),
                ("busy_threads".into(), json!(names)),
                ("threads".into(), json!(threads)),
            ],
            ..Row::default()
        });
    }
    if !args.common.json {
        let depth = if case.depth > 1 {
            format!(", {} requests at a time", case.depth)
        } else {
            String::new()
        };
        println!(
            "\n{}, {} connection{}{depth}",
            case.label,
            case.connections,
            if case.connections == 1 { "" } else { "s" }
        );
        crate::report::print_grid(&table);
    }
    Ok(())
}

/// What one idle round measured of one server, in bytes.
#[derive(Debug, Clone, Copy)]
struct IdleSample {
    before: u64,
    after: u64,
}

/// The idle case: every server started afresh for each count and round.
fn idle(
    args: &Args,
    place: &Placement,
    launcher: &Launcher,
    servers: &[Server],
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let settle = Duration::from_millis(args.settle_ms);
    let request = loadgen::get(&format!("/bytes/{SMALL}"));
    let reference = servers.iter().position(|s| *s == Server::Ringstream);
    for &n in &args.idle_connections {
        let n = n.max(1);
        let mut samples: Vec<Vec<IdleSample>> = vec![Vec::new(); servers.len()];
        for round in 0..args.rounds {
            for i in super::rounds::indices(round, servers.len()) {
                let request = [servers[i].preamble(), &request[..]].concat();
                let server = launcher.start(servers[i])?;
                let addr = server.addr;
                // One request first, so that what the first connection
                // sets up once is in `before`.
                loadgen::open_idle(addr, 1, &request, Some(SMALL))
                    .with_context(|| format!("first request to {}", server.name))?;
                std::thread::sleep(settle);
                let before = server.rss()?;
                let conns = on_client_cpu(place.client(), || {
                    loadgen::open_idle(addr, n, &request, Some(SMALL))
                        .with_context(|| format!("{n} idle connections to {}", server.name))
                })?;
                std::thread::sleep(settle);
                let after = server.rss()?;
                // The server goes first, so that the closes' TIME_WAIT
                // is on its side, not on the client's ports.
                drop(server);
                drop(conns);
                samples[i].push(IdleSample { before, after });
            }
        }
        let per = |v: &[IdleSample]| -> Vec<f64> {
            v.iter()
                .map(|s| s.after.saturating_sub(s.before) as f64 / n as f64)
                .collect()
        };
        let mut table = vec![[
            "server",
            "connections",
            "RSS before",
            "RSS after",
            "per connection",
            "÷ ringstream",
        ]
        .map(String::from)
        .to_vec()];
        for (i, server) in servers.iter().enumerate() {
            let v = &samples[i];
            let median_of = |f: fn(&IdleSample) -> u64| {
                super::rounds::median_by(v, |s| f(s) as f64)
            };
            let per_conn = per(v);
            let round_ratios = reference.map(|r| ratios(&per_conn, &per(&samples[r])));
            let ratio = round_ratios.as_deref().map(super::median);
            table.push(vec![
                server.name().to_owned(),
                n.to_string(),
                format!("{:.1} MiB", median_of(|s| s.before) / 1048576.0),
                format!("{:.1} MiB", median_of(|s| s.after) / 1048576.0),
                format!("{:.2} KiB", super::median(&per_conn) / 1024.0),
                ratio.map(|r| format!("{r:.2}")).unwrap_or_default(),
            ]);
            rows.push(Row {
                scenario: "peers".into(),
                variant: server.name().into(),
                bytes: SMALL as usize,
                seconds: 0.0,
                extra: vec![
                    ("case".into(), json!("idle")),
                    ("connections".into(), json!(n)),
                    ("workers".into(), json!(args.workers)),
                    ("rss_before_bytes".into(), json!(median_of(|s| s.before))),
                    ("rss_after_bytes".into(), json!(median_of(|s| s.after))),
                    (
                        "bytes_per_connection".into(),
                        json!(super::median(&per_conn)),
                    ),
                    ("samples".into(), json!(per_conn)),
                    ("ratio_to_ringstream".into(), json!(ratio)),
                    ("round_ratios".into(), json!(round_ratios)),
                ],
                ..Row::default()
            });
        }
        if !args.common.json {
            println!("\nidle keep-alive connections (each answered one GET /bytes/{SMALL}, then left open)");
            crate::report::print_grid(&table);
        }
    }
    Ok(())
}

/// Run the scenario.
pub fn run(args: &Args) -> anyhow::Result<()> {
    anyhow::ensure!(args.rounds > 0, "--rounds must be positive");
    anyhow::ensure!(args.workers > 0, "--workers must be positive");
    let workers = args.workers;
    let online = std::thread::available_parallelism().map_or(1, |n| n.get());
    let place = Placement::new(args, workers, online);
    let mut servers: Vec<Server> = Vec::new();
    for server in default_servers(&args.servers, workers) {
        if !servers.contains(&server) {
            servers.push(server);
        }
    }
    let binaries = peer_binaries(args, &mut servers);
    let most_idle = args.idle_connections.iter().copied().max().unwrap_or(0);
    let most = args
        .connections
        .iter()
        .copied()
        .chain([args.pipelined_connections, args.large_connections, most_idle])
        .max()
        .unwrap_or(1);
    // The client holds `most` sockets, and so does a server, which
    // inherits the limit.
    ws::raise_fd_limit(most as u64 + 256);
    let launcher = Launcher {
        binaries,
        cpus: place.server_cpus.clone(),
        // With --reuse-port, each listener has its share of the cap:
        // every listener can still hold every connection.
        max_connections: ((most + 1024) * workers).to_string(),
        workers,
    };
    let large = args.common.size.map_or(LARGE, |n| n as u64);
    let wants = |case| args.cases.contains(&case);
    let mut rows = Vec::new();
    let mut notes = Notes::default();

    if !args.common.json {
        println!(
            "servers on CPU {} ({} each), load generator {}; {} round(s) of {} s (+{} s warm-up) per server and case",
            place.server_cpus.as_deref().unwrap_or("(any: not pinned)"),
            match workers {
                1 => "one worker thread".to_owned(),
                n => format!("{n} worker threads"),
            },
            match place.client_cpu {
                Some(cpu) if place.shared => format!("on CPU {cpu}, which it shares with the servers"),
                Some(cpu) => format!("on CPU {cpu}"),
                None => "not pinned: it shares the servers' cores".to_owned(),
            },
            args.rounds,
            args.duration,
            args.warmup
        );
    }
    let mut cases = Vec::new();
    if wants(Case::Small) {
        for &connections in &args.connections {
            cases.push(RequestCase {
                case: Case::Small,
                label: format!("GET /bytes/{SMALL}"),
                size: SMALL,
                connections,
                depth: 1,
            });
        }
    }
    if wants(Case::Pipelined) {
        cases.push(RequestCase {
            case: Case::Pipelined,
            label: format!("GET /bytes/{SMALL} pipelined"),
            size: SMALL,
            connections: args.pipelined_connections,
            depth: args.depth.max(1),
        });
    }
    if wants(Case::Large) {
        cases.push(RequestCase {
            case: Case::Large,
            label: format!("GET /bytes/{large}"),
            size: large,
            connections: args.large_connections,
            depth: 1,
        });
    }
    // Checked once, with the sizes the cases use.
    let mut checked: Vec<Server> = Vec::new();
    if !cases.is_empty() || wants(Case::Idle) {
        let mut sizes = vec![SMALL];
        if wants(Case::Large) {
            sizes.push(large);
        }
        for &server in &servers {
            let outcome = launcher
                .start(server)
                .and_then(|process| check(&process, server.preamble(), &sizes));
            match outcome {
                Ok(summary) => {
                    if !args.common.json {
                        println!("{:<13} {summary}", server.name());
                    }
                    checked.push(server);
                }
                Err(e) => eprintln!("note: {} skipped: {e:#}", server.name()),
            }
        }
    }
    anyhow::ensure!(!checked.is_empty(), "no server to measure");
    if !checked.contains(&Server::Ringstream) {
        eprintln!("note: ringstream is not measured: no ratios");
    }

    if !cases.is_empty() {
        let mut processes = Vec::new();
        for &server in &checked {
            processes.push((server, launcher.start(server)?));
        }
        for case in &cases {
            request_case(args, &place, &processes, case, &mut rows, &mut notes)?;
        }
    }
    if wants(Case::Idle) {
        idle(args, &place, &launcher, &checked, &mut rows)?;
    }

    if let Some(path) = &args.common.plot {
        std::fs::write(path, chart(&rows, workers).to_svg())
            .with_context(|| format!("writing {}", path.display()))?;
        if !args.common.json {
            println!("\nchart: {}", path.display());
        }
    }
    if args.common.json {
        crate::report::print_json(&rows);
        return Ok(());
    }
    if !cases.is_empty() {
        println!(
            "\nCPU/req: server CPU time per request (all its threads); busy: CPU time in % of one core; \
             threads: ≥ {:.0}% of the server's CPU / all",
            BUSY_THREAD * 100.0
        );
        if place.shared {
            println!(
                "the load generator shares the servers' cores: req/s is what server and client \
                 together get from {} core{}, and the client's CPU time is taken from the server's \
                 (CPU/req is the server's alone); `all cores`: server and client kept them ≥ {:.0}% busy",
                place.cores,
                if place.cores == 1.0 { "" } else { "s" },
                SATURATED * 100.0
            );
        }
        if notes.client_bound.is_empty() {
            println!(
                "client-bound: none (in no run was the client's core ≥ {:.0}% busy while the server's was below)",
                SATURATED * 100.0
            );
        } else {
            println!(
                "client-bound (the client's core ≥ {:.0}% busy while the server's was below; req/s is a floor): {}",
                SATURATED * 100.0,
                notes.client_bound.join("; ")
            );
        }
        if notes.retried > 0 {
            println!("{} disturbed run(s) were run again", notes.retried);
        }
        if notes.disturbed.0 > 0 {
            println!(
                "disturbed: in {} of {} runs other work took ≥ {:.0}% of a core (up to {:.0}%; \
                 `others` is the median per case)",
                notes.disturbed.0,
                notes.disturbed.1,
                DISTURBED * 100.0,
                notes.most_others * 100.0
            );
        }
    }
    Ok(())
}

/// The chart of `--plot`: server CPU per request in each request case,
/// and memory per idle connection at each count, one panel each, the
/// servers in the order measured.
fn chart(rows: &[Row], workers: usize) -> crate::bars::BarChart {
    let text = |row: &Row, key: &str| row.extra_value(key).cloned().unwrap_or_default();
    let number = |row: &Row, key: &str| text(row, key).as_f64().unwrap_or(f64::NAN);
    let mut panels: Vec<crate::bars::Panel> = Vec::new();
    for row in rows {
        let (title, unit, value) = if text(row, "case") == json!("idle") {
            (
                format!(
                    "Memory per idle keep-alive connection, {} connections",
                    number(row, "connections")
                ),
                "KiB",
                number(row, "bytes_per_connection") / 1024.0,
            )
        } else {
            let depth = number(row, "depth");
            let pipelined = if depth > 1.0 {
                format!(", {depth} pipelined")
            } else {
                String::new()
            };
            let connections = number(row, "connections");
            let plural = if connections == 1.0 { "" } else { "s" };
            (
                format!(
                    "CPU per request, GET /bytes/{} × {connections} connection{plural}{pipelined}",
                    row.bytes
                ),
                "µs",
                number(row, "server_cpu_ns_per_request") / 1000.0,
            )
        };
        match panels.iter_mut().find(|p| p.title == title) {
            Some(panel) => panel.bars.push((row.variant.clone(), value)),
            None => panels.push(crate::bars::Panel {
                title,
                unit: unit.into(),
                bars: vec![(row.variant.clone(), value)],
            }),
        }
    }
    crate::bars::BarChart {
        title: match workers {
            1 => "ringstream and its peers, one worker thread each (shorter is better)".into(),
            n => format!("ringstream and its peers, {n} worker threads each (shorter is better)"),
        },
        subtitle: "ringstream-bench peers: server CPU time per request (medians of rounds); \
                   resident memory per idle connection"
            .into(),
        panels,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_bodies_repeat_ringstreams_block() {
        let block = ringstream_cli::app::pattern_block();
        assert_eq!(expected_body(13), block[..13]);
        let long = expected_body(block.len() as u64 + 10);
        assert_eq!(long[block.len()..], block[..10]);
    }

    #[test]
    fn the_chart_has_a_panel_per_case_and_a_bar_per_server() {
        let request = |server: &str, cpu_ns: f64| Row {
            scenario: "peers".into(),
            variant: server.into(),
            bytes: 13,
            seconds: 0.0,
            extra: vec![
                ("case".into(), json!("small")),
                ("connections".into(), json!(64)),
                ("depth".into(), json!(16)),
                ("server_cpu_ns_per_request".into(), json!(cpu_ns)),
            ],
            ..Row::default()
        };
        let idle = |server: &str, bytes: f64| Row {
            extra: vec![
                ("case".into(), json!("idle")),
                ("connections".into(), json!(1000)),
                ("bytes_per_connection".into(), json!(bytes)),
            ],
            ..request(server, 0.0)
        };
        let rows = [
            request("ringstream", 1800.0),
            request("hyper", 9000.0),
            idle("ringstream", 3850.0),
            idle("hyper", 11650.0),
        ];
        let chart = chart(&rows, 1);
        assert_eq!(chart.panels.len(), 2);
        let cpu = &chart.panels[0];
        assert_eq!(cpu.title, "CPU per request, GET /bytes/13 × 64 connections, 16 pipelined");
        assert_eq!(cpu.bars, vec![("ringstream".into(), 1.8), ("hyper".into(), 9.0)]);
        let memory = &chart.panels[1];
        assert_eq!(memory.unit, "KiB");
        assert!((memory.bars[1].1 - 11650.0 / 1024.0).abs() < 1e-9);
    }

    /// `peers` with `flags` on its command line.
    fn args(flags: &[&str]) -> Args {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            args: Args,
        }
        let cli: Cli = clap::Parser::parse_from([&["peers"], flags].concat());
        cli.args
    }

    #[test]
    fn one_worker_keeps_server_and_client_on_cores_of_their_own() {
        let place = Placement::new(&args(&[]), 1, 2);
        assert_eq!(place.server_cpus.as_deref(), Some("0"));
        assert_eq!(place.client_cpu, Some(1));
        assert!(!place.shared);
        assert_eq!((place.server_cores, place.cores), (1.0, 2.0));
        assert_eq!(
            default_servers(&[], 1),
            [Server::Ringstream, Server::Hyper, Server::Actix, Server::Xitca, Server::May]
        );
    }

    #[test]
    fn two_workers_on_two_cores_share_them_with_the_client() {
        let place = Placement::new(&args(&["--workers", "2"]), 2, 2);
        assert_eq!(place.server_cpus.as_deref(), Some("0-1"));
        assert_eq!(place.client_cpu, None);
        assert!(place.shared);
        assert_eq!((place.server_cores, place.cores), (2.0, 2.0));
        assert_eq!(place.client(), -1);
        assert_eq!(default_servers(&[], 2)[..2], [Server::Ringstream, Server::RingstreamReuseport]);
        // On four cores the client gets one of its own.
        let place = Placement::new(&args(&["--workers", "2"]), 2, 4);
        assert_eq!((place.server_cpus.as_deref(), place.client_cpu), (Some("0-1"), Some(2)));
        assert!(!place.shared);
        // Placed by hand.
        let place = Placement::new(&args(&["--server-cpus", "0,1", "--client-cpu", "1"]), 2, 2);
        assert!(place.shared);
        assert_eq!(place.cores, 2.0);
        let place = Placement::new(&args(&["--server-cpus", "none"]), 1, 2);
        assert_eq!((place.server_cpus, place.client_cpu), (None, None));
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(cpu_list("0"), [0]);
        assert_eq!(cpu_list("0-2,5"), [0, 1, 2, 5]);
        assert_eq!(cpu_list("x"), Vec::<usize>::new());
    }

    #[test]
    fn a_saturated_pair_of_shared_cores_is_not_client_bound() {
        let place = Placement::new(&args(&["--workers", "2"]), 2, 2);
        let sample = Sample {
            rate: 1.0,
            server_ns: 1.0,
            client_ns: 1.0,
            server_busy: 1.0,
            client_busy: 0.95,
            others_busy: 0.0,
            busy_threads: Vec::new(),
            threads: 2,
        };
        assert!(sample.cores_saturated(&place));
        assert!(!sample.client_bound(&place));
        let one = Placement::new(&args(&[]), 1, 2);
        assert!(!sample.client_bound(&one));
        assert!(!sample.cores_saturated(&one));
    }
}
