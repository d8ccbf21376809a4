//! The scenarios, one subcommand each, and what they share: common flags,
//! size parsing and a time-boxed measuring loop.
//!
//! To add a scenario, create `scenarios/<name>.rs` with
//!
//! ```text
//! #[derive(Debug, clap::Args)]
//! pub struct Args { #[command(flatten)] pub common: super::Common, /* own flags */ }
//! pub fn run(args: &Args) -> anyhow::Result<()> { ... }
//! ```
//!
//! and add one line to the `scenarios!` invocation below.

use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Declares the scenario modules, the [`Scenario`] subcommand enum and its
/// dispatch from one list of `Variant => module, "cli-name";` lines (each
/// optionally preceded by doc comments, which become the subcommand help).
macro_rules! scenarios {
    ($( $(#[$doc:meta])* $variant:ident => $module:ident, $name:literal; )*) => {
        $( pub mod $module; )*

        /// The benchmark scenarios.
        #[derive(Debug, clap::Subcommand)]
        pub enum Scenario {
            $( $(#[$doc])* #[command(name = $name)] $variant($module::Args), )*
        }

        impl Scenario {
            /// Runs the chosen scenario.
            pub fn run(&self) -> anyhow::Result<()> {
                match self {
                    $( Scenario::$variant(args) => $module::run(args), )*
                }
            }
        }
    };
}

scenarios! {
    /// Build a 40 KiB Prometheus-style body with `write!`, then drain it in
    /// 1,436-byte (one TCP segment) reads: ring vs the string stream, an
    /// exact-growth cbuf and a draining Vec.
    Response40k => response_40k, "response-40k";
    /// Decode a 256 MiB chunked body in 64 KiB reads (1,460-byte and 64 KiB chunks).
    ChunkedDecode => chunked_decode, "chunked-decode";
    /// Read a 5 MiB source with read_partial, dropping chunks: heap of ringstream vs dup-clear and BufReader.
    ReadPartial => read_partial, "read-partial";
    /// Read 1 GiB over TCP loopback: Stream::read_partial vs BufReader vs raw reads, alternated medians.
    StreamThroughput => stream_throughput, "stream-throughput";
    /// Requests per second of `ringstream serve` vs a hyper 1.x peer (wrk, 1 and 64 connections).
    Http => http, "http";
    /// Stream a 1 GiB upload (chunked and fixed) to both servers: throughput and peak RSS growth.
    Upload => upload, "upload";
    /// Allocations per request of the server, counted in-process over an in-memory connection.
    ServerAllocs => server_allocs, "server-allocs";
    /// CPU time and allocations per request of ringstream's server and the hyper peer, in-process over in-memory connections.
    ServerCpu => server_cpu, "server-cpu";
    /// Run the hyper 1.x peer server (used by `http` and `upload`).
    HyperPeer => hyper_peer, "hyper-peer";
    /// WebSocket echo of 64 B and 16 KiB messages at 1 and 64 connections:
    /// ringstream vs fastwebsockets and tokio-tungstenite (messages/s, server CPU per message).
    WsEcho => ws_echo, "ws-echo";
    /// Resident memory per idle WebSocket connection at 1,000 connections:
    /// ringstream vs fastwebsockets and tokio-tungstenite.
    WsIdle => ws_idle, "ws-idle";
    /// One message to 1,000 WebSocket clients, 10 of which never read: delivered/s,
    /// latency, server CPU per delivery and RSS, the broadcaster's drop counts:
    /// ringstream's `/ws/broadcast` vs fastwebsockets and tokio-tungstenite fan-outs.
    WsBroadcast => ws_broadcast, "ws-broadcast";
    /// Run a WebSocket echo (or `--broadcast`) peer server on fastwebsockets or tokio-tungstenite (used by `ws-*`).
    WsPeer => ws_peer, "ws-peer";
    /// HTTPS: requests/s of /bytes/13 and /bytes/40960 at 1 and 64 connections, full and
    /// resumed handshakes/s, RSS per idle TLS connection: ringstream vs hyper + tokio-rustls.
    Https => https, "https";
    /// Run an HTTPS server on ringstream or hyper + tokio-rustls (used by `https`).
    TlsPeer => tls_peer, "tls-peer";
    /// HTTP/2: requests/s and server CPU per request of /bytes/13 and /bytes/40960 under
    /// h2load (64 connections × 100 streams) over h2c and TLS, RSS per idle HTTP/2
    /// connection (1,000) and RSS growth during a slowly read 1 GiB upload:
    /// ringstream vs hyper.
    H2 => h2, "h2";
    /// Run an HTTP/2 server (h2c, or TLS with ALPN h2) on ringstream or hyper (used by `h2`).
    H2Peer => h2_peer, "h2-peer";
    /// ringstream vs hyper, actix-web, xitca-web and may_minihttp, --workers threads each
    /// (one by default; ringstream also with --reuse-port above one): requests/s and server
    /// CPU per request of /bytes/13 (1, 64, 256 connections; 16-deep pipelined) and
    /// /bytes/40960, and RSS per idle connection (1,000 and 10,000).
    Peers => peers, "peers";
    /// ringstream-embedded vs picoserve on one in-memory socket, one thread: RAM per
    /// connection slot, time and instructions per request of `GET /` and the ~40 KB
    /// `/api/livedata`, formatter runs and heap allocations per response.
    Embedded => embedded, "embedded";
}

pub mod rounds;
pub mod servers;
pub mod ws;

/// Flags every scenario accepts.
#[derive(Debug, Clone, clap::Args)]
pub struct Common {
    /// Print one JSON object per variant per line instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Payload size in bytes; suffixes K/KiB, M/MiB (1024-based) and
    /// KB/MB (1000-based) are accepted, e.g. 40960, 4KiB, 4MiB.
    #[arg(long, value_parser = parse_size)]
    pub size: Option<usize>,
    /// Minimum number of timed runs per variant (fewer, but at least 3,
    /// when one variant exceeds the time budget).
    #[arg(long, default_value_t = 15)]
    pub runs: usize,
    /// Time budget per variant and size, in seconds: runs continue until
    /// both `--runs` and this are reached.
    #[arg(long, default_value_t = 1.0)]
    pub budget: f64,
    /// Run a size sweep and draw time against size to this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

/// Parses a byte size such as `40960`, `40k`, `4KiB`, `4MiB` or `1MB`.
pub fn parse_size(s: &str) -> Result<usize, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let num: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a size (try 40960, 4KiB or 4MiB)"))?;
    let mult = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "ki" | "kib" => 1024.0,
        "m" | "mi" | "mib" => 1024.0 * 1024.0,
        "g" | "gi" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        other => return Err(format!("unknown size unit `{other}` in `{s}`")),
    };
    let bytes = num * mult;
    if !(bytes.is_finite() && bytes >= 0.0 && bytes <= usize::MAX as f64) {
        return Err(format!("size `{s}` is out of range"));
    }
    Ok(bytes.round() as usize)
}

/// CPU time consumed so far by the calling thread (`CLOCK_THREAD_CPUTIME_ID`),
/// or zero if the clock is unavailable. Unlike wall time it does not count
/// time the thread spent descheduled, so it stays comparable across sizes
/// when other processes share the cores; the clock read is a system call
/// (well under a microsecond).
///
/// On targets without a per-thread CPU clock (Windows, and unix targets
/// such as Redox or the newlib-based ones) this is always zero: CPU-time
/// columns then read 0 while wall-clock timings still work.
pub fn thread_cpu_time() -> Duration {
    thread_clock::now()
}

/// Declares `thread_clock` twice from one list of targets: reading
/// `clock_gettime(CLOCK_THREAD_CPUTIME_ID)` on the targets listed (their C
/// library has it), and reading zero on all others.
macro_rules! thread_clock_on {
    ($($target:meta),* $(,)?) => {
        /// The per-thread CPU clock, on targets whose C library has
        /// `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`.
        #[cfg(any($($target),*))]
        mod thread_clock {
            use std::time::Duration;

            /// Whether [`now`] reads a real clock.
            #[cfg(test)]
            pub const AVAILABLE: bool = true;

            /// The calling thread's CPU time, or zero if the clock read fails.
            pub fn now() -> Duration {
                let mut ts = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                };
                // SAFETY: `ts` is a valid, writable `timespec` that outlives the
                // call, and `clock_gettime` writes only to it.
                let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
                if rc != 0 {
                    return Duration::ZERO;
                }
                let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
                let nanos = u32::try_from(ts.tv_nsec).unwrap_or(0);
                Duration::new(secs, nanos)
            }
        }

        /// No per-thread CPU clock on this target: the time reads zero.
        #[cfg(not(any($($target),*)))]
        mod thread_clock {
            use std::time::Duration;

            /// Whether [`now`] reads a real clock.
            #[cfg(test)]
            pub const AVAILABLE: bool = false;

            /// Always zero.
            pub fn now() -> Duration {
                Duration::ZERO
            }
        }
    };
}

thread_clock_on!(
    target_os = "linux",
    target_os = "android",
    target_vendor = "apple",
    target_os = "freebsd",
    target_os = "dragonfly",
    target_os = "netbsd",
    target_os = "openbsd",
    target_os = "solaris",
    target_os = "illumos",
    target_os = "aix",
    target_os = "haiku",
    target_os = "hurd",
    target_os = "nto",
    target_os = "cygwin",
);

/// Timings of repeated runs of one variant.
#[derive(Debug, Clone, Default)]
pub struct Samples {
    /// Whole-operation times, in seconds.
    pub total: Vec<f64>,
    /// Phase times (e.g. drain alone), in seconds.
    pub phase: Vec<f64>,
}

impl Samples {
    /// Median whole-operation time, in seconds.
    pub fn median_total(&self) -> f64 {
        median(&self.total)
    }

    /// Fastest whole-operation time, in seconds: the least disturbed by
    /// other processes.
    pub fn min_total(&self) -> f64 {
        self.total.iter().copied().fold(f64::INFINITY, f64::min)
    }

    /// Median phase time, in seconds.
    pub fn median_phase(&self) -> f64 {
        median(&self.phase)
    }
}

/// The median of `v` (0 if empty).
pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let mid = s.len() / 2;
    if s.len() % 2 == 1 {
        s[mid]
    } else {
        (s[mid - 1] + s[mid]) / 2.0
    }
}

/// Calls `f` repeatedly; each call returns (whole time, phase time).
///
/// Stops once at least `min_runs` calls were made and `budget` has
/// elapsed; or, for slow variants, once at least 3 calls were made and
/// five times `budget` has elapsed; and never after more than 100,000
/// calls.
pub fn time_box(
    min_runs: usize,
    budget: Duration,
    mut f: impl FnMut() -> (Duration, Duration),
) -> Samples {
    const FLOOR: usize = 3;
    const CEILING: usize = 100_000;
    let start = Instant::now();
    let mut samples = Samples::default();
    loop {
        let (total, phase) = f();
        samples.total.push(total.as_secs_f64());
        samples.phase.push(phase.as_secs_f64());
        let n = samples.total.len();
        let elapsed = start.elapsed();
        if n >= CEILING
            || (n >= min_runs && elapsed >= budget)
            || (n >= FLOOR && elapsed >= budget.saturating_mul(5))
        {
            return samples;
        }
    }
}

/// Pin the calling thread to `cpu`.
///
/// Only Linux pins (`sched_setaffinity`). Elsewhere this does nothing
/// and returns `Ok`, after saying once on stderr that threads run
/// unpinned.
#[cfg(target_os = "linux")]
pub fn pin_current_thread(cpu: usize) -> anyhow::Result<()> {
    // SAFETY: `cpu_set_t` is plain data; CPU_ZERO/CPU_SET write within it,
    // and sched_setaffinity only reads it for the size we pass.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc != 0 {
        anyhow::bail!("sched_setaffinity: {}", std::io::Error::last_os_error());
    }
    Ok(())
}

/// Pin the calling thread to `cpu`: not supported on this target, so the
/// thread stays where the scheduler puts it (said once on stderr).
#[cfg(not(target_os = "linux"))]
pub fn pin_current_thread(_cpu: usize) -> anyhow::Result<()> {
    pinning_unsupported();
    Ok(())
}

/// Says once on stderr that CPU pinning was asked for but is available
/// only on Linux, so results are measured unpinned.
#[cfg(not(target_os = "linux"))]
pub fn pinning_unsupported() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        eprintln!(
            "ringstream-bench: CPU pinning is only supported on Linux; \
             threads and servers run unpinned"
        );
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_suffixes() {
        assert_eq!(parse_size("40960"), Ok(40_960));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("4MiB"), Ok(4 << 20));
        assert_eq!(parse_size("1.5KiB"), Ok(1536));
        assert_eq!(parse_size("2KB"), Ok(2000));
        assert!(parse_size("4 parsecs").is_err());
        assert!(parse_size("").is_err());
    }

    #[test]
    fn thread_cpu_time_advances_with_work() {
        let t0 = thread_cpu_time();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        if thread_clock::AVAILABLE {
            assert!(thread_cpu_time() > t0);
        } else {
            assert_eq!(thread_cpu_time(), Duration::ZERO);
        }
    }

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }

    #[test]
    fn time_box_respects_min_runs_and_floor() {
        let s = time_box(5, Duration::ZERO, || (Duration::ZERO, Duration::ZERO));
        assert_eq!(s.total.len(), 3, "budget exceeded: stop at the floor");
        let s = time_box(5, Duration::from_secs(3600), || {
            (Duration::ZERO, Duration::ZERO)
        });
        assert_eq!(s.total.len(), 100_000);
        let s = time_box(2, Duration::ZERO, || (Duration::ZERO, Duration::ZERO));
        assert_eq!(s.total.len(), 2);
    }
}
