//! What the `ws-*` scenarios share: the servers under test, started as
//! child processes and checked to upgrade before they are measured, the
//! client's pinned runtime and the open-file limit.
//!
//! ringstream's variant runs `ringstream serve` (the binary next to this
//! one) and targets its demo's echo route, `/ws/echo` by default, or its
//! broadcast route, `/ws/broadcast`, for `ws-broadcast` (whose peers then
//! run with `--broadcast`). Until that binary exists and the route answers
//! the upgrade with `101`, the variant is skipped with a note and the peers
//! are measured alone.

use std::net::SocketAddr;

use super::servers::{start_ringstream_with, start_ws_peer, ServerProcess};
use super::ws_peer::Impl;
use crate::wsclient::{Conn, ConnectError};

/// A WebSocket server under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WsServer {
    /// `ringstream serve` (its `/ws/echo` route).
    Ringstream,
    /// The fastwebsockets peer (`ws-peer --impl fastwebsockets`).
    Fastwebsockets,
    /// The tokio-tungstenite peer (`ws-peer --impl tungstenite`).
    Tungstenite,
}

/// The name of the variant every other one is compared with.
pub const REFERENCE: &str = "fastwebsockets";

/// Flags of the `ws-*` scenarios about the servers and where things run.
#[derive(Debug, Clone, clap::Args)]
pub struct ServerArgs {
    /// Servers to measure, in this order.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "ringstream,fastwebsockets,tungstenite"
    )]
    pub servers: Vec<WsServer>,
    /// Path of the upgrade request (the peers upgrade on any path);
    /// `/ws/echo` by default, `/ws/broadcast` for `ws-broadcast`.
    #[arg(long)]
    pub path: Option<String>,
    /// Whether the servers broadcast every message to every client instead
    /// of echoing it (set by `ws-broadcast`).
    #[arg(skip)]
    pub broadcast: bool,
    /// The send buffer the servers give every connection (`--send-buffer`
    /// of `ringstream serve` and `ws-peer`; set by `ws-broadcast`), else
    /// the kernel's.
    #[arg(skip)]
    pub send_buffer: Option<u32>,
    /// Runtime worker threads of each server (multi-thread runtimes);
    /// 0 runs the peers on a current-thread runtime (`ringstream serve`
    /// then takes 1).
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// CPUs for the servers (taskset list); `none` to not pin.
    #[arg(long, default_value = "0")]
    pub server_cpus: String,
    /// CPU of the client's thread (its current-thread runtime); negative
    /// to not pin.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    pub client_cpu: i32,
}

impl ServerArgs {
    /// The path of the upgrade request.
    pub fn path(&self) -> &str {
        match &self.path {
            Some(path) => path,
            None if self.broadcast => "/ws/broadcast",
            None => "/ws/echo",
        }
    }
}

impl WsServer {
    /// Start this server, able to hold `connections` WebSocket
    /// connections at once.
    fn start(self, args: &ServerArgs, connections: usize) -> anyhow::Result<ServerProcess> {
        let cpus = super::http::cpus(&args.server_cpus);
        let send_buffer = args.send_buffer.map(|size| size.to_string());
        let mut extra: Vec<&str> = Vec::new();
        if let Some(size) = &send_buffer {
            extra.extend(["--send-buffer", size]);
        }
        let max = (connections + 64).max(1024).to_string();
        let implementation = match self {
            WsServer::Ringstream => {
                extra.extend(["--max-connections", &max]);
                return start_ringstream_with(args.workers, cpus, &extra);
            }
            WsServer::Fastwebsockets => Impl::Fastwebsockets,
            WsServer::Tungstenite => Impl::Tungstenite,
        };
        if args.broadcast {
            extra.push("--broadcast");
        }
        start_ws_peer(implementation, args.workers, cpus, &extra)
    }
}

/// Start `server` and check with one connection that `args.path()`
/// upgrades and echoes (a broadcast sends the message back to its sender
/// too). ringstream's variant is skipped (`None`, with a
/// note on stderr) when its binary is missing or it does not upgrade; a
/// peer that fails is an error.
pub fn start_checked(
    server: WsServer,
    args: &ServerArgs,
    connections: usize,
    rt: &tokio::runtime::Runtime,
) -> anyhow::Result<Option<ServerProcess>> {
    let skip = |why: String| -> anyhow::Result<Option<ServerProcess>> {
        if server == WsServer::Ringstream {
            eprintln!("note: ringstream variant skipped: {why}");
            Ok(None)
        } else {
            anyhow::bail!("{why}")
        }
    };
    let process = match server.start(args, connections) {
        Ok(p) => p,
        Err(e) => return skip(format!("{e:#}")),
    };
    match rt.block_on(probe(process.addr, args.path())) {
        Ok(()) => Ok(Some(process)),
        Err(ConnectError::Refused(why)) => skip(format!(
            "`GET {}` upgrade request to {}: {why}",
            args.path(),
            process.name
        )),
        Err(ConnectError::Io(e)) => skip(format!(
            "{} failed the upgrade and echo on {}: {e}",
            process.name,
            args.path()
        )),
    }
}

/// One upgrade and one echoed message.
async fn probe(addr: SocketAddr, path: &str) -> Result<(), ConnectError> {
    let mut conn = Conn::connect(addr, path, 4096).await?;
    let payload = crate::wsclient::payload(100);
    let frame =
        crate::wsclient::masked_frame(crate::wsclient::OP_BINARY, &payload, crate::wsclient::MASK);
    conn.send(&frame).await?;
    conn.read_message(Some(&payload)).await?;
    Ok(())
}

/// CPU time the whole machine has spent busy so far (user, nice, system,
/// irq and softirq time of the `cpu` line of `/proc/stat`), in
/// nanoseconds, at the kernel's tick resolution (10 ms at the usual 100
/// ticks a second). Less the server's and the client's own time over a
/// window, it is what other processes took from the two cores meanwhile.
pub fn machine_busy_ns() -> anyhow::Result<u64> {
    let stat = std::fs::read_to_string("/proc/stat")?;
    let line = stat.lines().next().unwrap_or_default();
    let ticks: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(str::parse)
        .collect::<Result<_, _>>()?;
    // user nice system idle iowait irq softirq steal ...
    let busy: u64 = [0, 1, 2, 5, 6].iter().filter_map(|&i| ticks.get(i)).sum();
    Ok(busy.saturating_mul(1_000_000_000) / clock_ticks_per_second())
}

/// `sysconf(_SC_CLK_TCK)`, 100 if unknown.
fn clock_ticks_per_second() -> u64 {
    #[cfg(unix)]
    {
        // SAFETY: sysconf reads a configuration value and has no
        // preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        if hz > 0 {
            return hz as u64;
        }
    }
    100
}

/// The client's runtime: a current-thread tokio runtime on the calling
/// thread, pinned to `cpu` unless it is negative. All client work, its
/// sockets and its timers, runs on this one thread, whose CPU time
/// [`super::thread_cpu_time`] then reads.
pub fn client_runtime(cpu: i32) -> anyhow::Result<tokio::runtime::Runtime> {
    if let Ok(cpu) = usize::try_from(cpu) {
        super::pin_current_thread(cpu)?;
    }
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// Raise this process's soft open-file limit to at least `needed` (up to
/// the hard limit); servers started afterwards inherit it. Says so on
/// stderr when the limit stays below `needed`.
pub fn raise_fd_limit(needed: u64) {
    if let Some((_, now)) = ringstream_cli::open_files::raise_to(needed) {
        if now < needed {
            eprintln!(
                "warning: the open-file limit is {now}, below the {needed} this run needs: \
                 connections will fail"
            );
        }
    }
}
