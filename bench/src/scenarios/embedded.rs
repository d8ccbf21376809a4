//! `embedded`: ringstream-embedded beside picoserve, the `no_std` HTTP
//! server a Rust firmware would otherwise pick, serving the same two
//! routes on the same host harness: RAM per connection slot, time and
//! instructions per request, formatter runs and heap allocations per
//! response.
//!
//! # The harness
//!
//! Both servers run in one process, `peer-embedded` of `bench/peers` (a
//! cargo workspace of its own: picoserve 0.20 needs Rust 1.93, above
//! ringstream's rust-version, and stays out of ringstream's lockfile;
//! ringstream-embedded comes in by path). The scenario builds it first
//! (`cargo build --release --manifest-path bench/peers/Cargo.toml -p
//! peer-embedded`), unless `--no-build`.
//!
//! Each server serves one connection at a time over the same in-memory
//! socket: 1 KiB to receive and 1 KiB to transmit, behaving as an
//! embassy-net `TcpSocket` (a read waits while nothing arrived, a write
//! takes what fits, picoserve's `write_with` lends the free part of the
//! transmit buffer, a flush waits until the client took everything). One
//! thread polls the server's future with a no-op waker and, between two
//! polls, plays the client: takes every byte sent, parses the response
//! (its head, `content-length` or chunks) and sends the next request
//! when it is complete. The deadlines of both run on embassy-time's mock
//! driver (time stands still; both servers' timers are embassy-time
//! `Timer`s). The routes:
//!
//! - `GET /`: `Hello, World!`, 13 bytes of `text/plain; charset=utf-8`
//!   with `content-length`;
//! - `GET /api/livedata`: the ~40 KB JSON of ringstream-embedded's demo,
//!   the same `Line` values (its `examples/demo/app.rs` is compiled into
//!   the peer), printed line by line with `writeln!` (542 lines), chunked
//!   by both since its length is not known in advance: into
//!   ringstream-embedded's `Responder`, and into picoserve's
//!   `ChunkWriter` of a `ChunkedResponse`. Each line's `Display` is
//!   wrapped in a counter of formatter runs.
//!
//! Both bodies are checked against the demo's `write_livedata` first.
//! ringstream-embedded gets its demo's `Buffers<1024, 512>` and
//! `Config::DEFAULT`; picoserve its examples' 2048-byte HTTP buffer and
//! `Config::const_default().keep_connection_alive()`.
//!
//! # What is measured
//!
//! - RAM per connection slot: `size_of_val` of the connection-serving
//!   future before its first poll (`serve_connection(..)`, picoserve's
//!   `Server::custom(..).serve(socket)`), and the buffers the caller
//!   gives it; the socket's 2 KiB apart (the same for both). On this
//!   64-bit host: pointers and slices are twice their size on a 32-bit
//!   microcontroller.
//! - Time per request, the thread's CPU time (what the server and the
//!   client cost, without the time the thread waited for a core on a
//!   shared machine) and wall time: rounds of one connection serving
//!   `--small-per-round` (or `--live-per-round`) keep-alive requests,
//!   one after the other, the two servers alternating round by round
//!   (A B, B A) until `--budget` seconds per route have passed and each
//!   has had `--runs` rounds. The median of the rounds' time per request,
//!   and the median (and quartiles) of the per-round ratio.
//! - Instructions per request: `valgrind --tool=callgrind` over
//!   `--callgrind-small` (`--callgrind-live`) requests of one route on one
//!   connection, collecting only inside the harness's `poll_server` (the
//!   server's code, the socket's and the timer's; not the client's);
//!   skipped with a note when valgrind is missing or with
//!   `--no-callgrind`. For the live data, a second count leaves the
//!   lines' formatters out (collection toggled off inside the counting
//!   `Display`): the server's own work around them.
//! - Formatter runs, heap allocations (a counting global allocator),
//!   bytes on the wire, chunks, socket writes and polls per response, in
//!   one counted round.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context as _;
use serde_json::Value;

use crate::report::{format_bytes, format_ratio, format_seconds, print_grid};

/// The servers, in the peer's names.
const SERVERS: [&str; 2] = ["ringstream-embedded", "picoserve"];
/// The routes, in the peer's names, with their labels.
const ROUTES: [(&str, &str); 2] = [("small", "GET / (13 B)"), ("livedata", "GET /api/livedata")];

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub common: super::Common,
    /// Keep-alive requests of `GET /` per timed round.
    #[arg(long, default_value_t = 100)]
    pub small_per_round: usize,
    /// Keep-alive requests of `GET /api/livedata` per timed round (few:
    /// a short round is seldom interrupted on a shared machine).
    #[arg(long, default_value_t = 2)]
    pub live_per_round: usize,
    /// Requests of `GET /` counted under callgrind.
    #[arg(long, default_value_t = 1000)]
    pub callgrind_small: usize,
    /// Requests of `GET /api/livedata` counted under callgrind.
    #[arg(long, default_value_t = 20)]
    pub callgrind_live: usize,
    /// Do not count instructions with callgrind.
    #[arg(long)]
    pub no_callgrind: bool,
    /// The peers' workspace (`bench/peers/Cargo.toml` of this checkout by
    /// default); `peer-embedded` is looked for in `target/release` beside it.
    #[arg(long, value_name = "Cargo.toml")]
    pub peers_manifest: Option<PathBuf>,
    /// Do not build `peer-embedded`; use the binary already there.
    #[arg(long)]
    pub no_build: bool,
}

/// Builds `peer-embedded` unless `--no-build`; its path.
fn peer_binary(args: &Args) -> anyhow::Result<PathBuf> {
    let manifest = args
        .peers_manifest
        .clone()
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/Cargo.toml"));
    let dir = manifest.parent().unwrap_or(Path::new(".")).to_path_buf();
    let target = dir.join("target");
    let command = format!(
        "cargo build --release --manifest-path {} -p peer-embedded",
        manifest.display()
    );
    if !args.no_build {
        eprintln!("building peer-embedded ({command}); the first build takes a minute");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "--release", "-p", "peer-embedded", "--manifest-path"])
            .arg(&manifest)
            .arg("--target-dir")
            .arg(&target)
            .stdout(Stdio::null())
            .status()
            .with_context(|| format!("running `{command}`"))?;
        anyhow::ensure!(status.success(), "`{command}` failed ({status})");
    }
    let binary = target.join("release").join("peer-embedded");
    anyhow::ensure!(
        binary.is_file(),
        "{} is missing (build it with `{command}`)",
        binary.display()
    );
    Ok(binary)
}

/// The collected instruction count of a callgrind output file: its
/// `totals:` line (or `summary:`).
pub fn callgrind_total(text: &str) -> Option<u64> {
    let line = text
        .lines()
        .find(|l| l.starts_with("totals:"))
        .or_else(|| text.lines().find(|l| l.starts_with("summary:")))?;
    line.split_once(':')?
        .1
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Whether valgrind runs here.
fn valgrind_available() -> bool {
    Command::new("valgrind")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Instructions per request of `requests` requests of `route` on
/// `server`, counted by callgrind inside the harness's `poll_server`;
/// with `without_formatters`, not inside the live data's line formatters
/// either (the counting `Display`, `Counted::fmt`, toggles collection
/// off for its run).
fn instructions(
    binary: &Path,
    server: &str,
    route: &str,
    requests: usize,
    without_formatters: bool,
) -> anyhow::Result<f64> {
    let out = std::env::temp_dir().join(format!(
        "ringstream-bench-embedded-{}-{server}-{route}-{}.callgrind",
        std::process::id(),
        u8::from(without_formatters)
    ));
    let status = Command::new("valgrind")
        .args([
            "--tool=callgrind",
            "--collect-atstart=no",
            "--toggle-collect=*poll_server*",
        ])
        .args(without_formatters.then_some("--toggle-collect=*Counted*"))
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(binary)
        .args(["instr", server, route, &requests.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .context("running valgrind")?;
    let text = std::fs::read_to_string(&out);
    let _ = std::fs::remove_file(&out);
    anyhow::ensure!(status.success(), "callgrind of {server} {route} failed ({status})");
    let total = callgrind_total(&text?).context("no totals in callgrind's output")?;
    Ok(total as f64 / requests.max(1) as f64)
}

/// The row of `server` and `route` among the peer's rows.
fn find<'r>(rows: &'r [Value], server: &str, route: &str) -> Option<&'r Value> {
    rows.iter()
        .find(|r| r["server"] == server && r["route"] == route)
}

fn num(row: Option<&Value>, key: &str) -> Option<f64> {
    row.and_then(|r| r[key].as_f64())
}

/// The table: one line per figure, a column per server, and picoserve's
/// figure over ringstream-embedded's (for time, the median and quartiles
/// of the per-round ratios).
pub fn table(rows: &[Value]) -> Vec<Vec<String>> {
    let mut table = vec![vec![
        "figure".to_owned(),
        SERVERS[0].to_owned(),
        SERVERS[1].to_owned(),
        "picoserve / ringstream".to_owned(),
    ]];
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if a > 0.0 => format_ratio(b / a),
        _ => String::new(),
    };
    let line = |label: &str, key: &str, route: &str, show: &dyn Fn(f64) -> String| {
        let a = num(find(rows, SERVERS[0], route), key);
        let b = num(find(rows, SERVERS[1], route), key);
        let cell = |v: Option<f64>| v.map(show).unwrap_or_else(|| "-".to_owned());
        vec![label.to_owned(), cell(a), cell(b), ratio(a, b)]
    };
    let bytes = |v: f64| format!("{v:.0} B");
    // RAM, the same for both routes: read from the first.
    let first = ROUTES[0].0;
    table.push(line("slot: connection future", "future_bytes", first, &bytes));
    table.push(line("slot: buffers", "buffer_bytes", first, &bytes));
    {
        let total = |server| {
            let r = find(rows, server, first);
            Some(num(r, "future_bytes")? + num(r, "buffer_bytes")?)
        };
        let (a, b) = (total(SERVERS[0]), total(SERVERS[1]));
        let cell = |v: Option<f64>| v.map(&bytes).unwrap_or_else(|| "-".to_owned());
        table.push(vec!["slot: total".into(), cell(a), cell(b), ratio(a, b)]);
    }
    table.push(line(
        "TCP socket buffers (apart)",
        "socket_bytes",
        first,
        &|v| format_bytes(v),
    ));
    for (route, label) in ROUTES {
        let a = find(rows, SERVERS[0], route);
        let b = find(rows, SERVERS[1], route);
        let time = |v: f64| format_seconds(v / 1e9);
        let time_ratio = |prefix: &str| {
            let m = num(b, &format!("{prefix}picoserve_over_ringstream"))?;
            Some(
                match (
                    num(b, &format!("{prefix}ratio_q1")),
                    num(b, &format!("{prefix}ratio_q3")),
                ) {
                    (Some(q1), Some(q3)) => format!("{m:.2}x ({q1:.2}–{q3:.2})"),
                    _ => format_ratio(m),
                },
            )
        };
        let cell = |r: Option<&Value>, key: &str, show: &dyn Fn(f64) -> String| {
            num(r, key).map(show).unwrap_or_else(|| "-".to_owned())
        };
        table.push(vec![
            format!("{label}: CPU time per request (median)"),
            cell(a, "cpu_median_ns", &time),
            cell(b, "cpu_median_ns", &time),
            time_ratio("cpu_").unwrap_or_default(),
        ]);
        table.push(vec![
            format!("{label}: wall time per request (median)"),
            cell(a, "median_ns", &time),
            cell(b, "median_ns", &time),
            time_ratio("").unwrap_or_default(),
        ]);
        let count = |v: f64| {
            if (v - v.round()).abs() < 0.005 {
                format!("{v:.0}")
            } else {
                format!("{v:.2}")
            }
        };
        let per = |key: &str, what: &str, show: &dyn Fn(f64) -> String| {
            vec![
                format!("{label}: {what}"),
                cell(a, key, show),
                cell(b, key, show),
                ratio(num(a, key), num(b, key)),
            ]
        };
        let thousands = |v: f64| group(v.round() as u64);
        table.push(per("instructions", "instructions per request", &thousands));
        if route == "livedata" {
            table.push(per(
                "instructions_outside_formatters",
                "instructions outside the line formatters",
                &thousands,
            ));
            table.push(per("formatter_runs", "formatter runs per response", &count));
        }
        table.push(per("allocations", "heap allocations per request", &count));
        table.push(per("wire_bytes", "bytes on the wire", &thousands));
        if route == "livedata" {
            table.push(per("chunks", "chunks", &count));
        }
        table.push(per("socket_writes", "socket writes", &count));
        table.push(per("polls", "polls of the connection future", &count));
    }
    table
}

/// `1234567` as `1,234,567`.
fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.common.plot.is_none() && args.common.size.is_none(),
        "`embedded` has no size sweep: --plot and --size do not apply"
    );
    let binary = peer_binary(args)?;
    let output = Command::new(&binary)
        .arg("measure")
        .args(["--budget", &args.common.budget.to_string()])
        .args(["--min-rounds", &args.common.runs.max(1).to_string()])
        .args(["--small-per-round", &args.small_per_round.to_string()])
        .args(["--live-per-round", &args.live_per_round.to_string()])
        .stderr(if args.common.json {
            Stdio::null()
        } else {
            Stdio::inherit()
        })
        .output()
        .with_context(|| format!("running {}", binary.display()))?;
    anyhow::ensure!(
        output.status.success(),
        "{} measure failed ({})",
        binary.display(),
        output.status
    );
    let mut rows: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()
        .context("reading peer-embedded's rows")?;

    let mut counted: HashMap<(String, String), f64> = HashMap::new();
    let mut outside: HashMap<(String, String), f64> = HashMap::new();
    if args.no_callgrind {
    } else if !valgrind_available() {
        eprintln!("note: valgrind is not installed: no instruction counts");
    } else {
        for server in SERVERS {
            for (route, _) in ROUTES {
                let requests = if route == "small" {
                    args.callgrind_small
                } else {
                    args.callgrind_live
                };
                let key = (server.to_owned(), route.to_owned());
                match instructions(&binary, server, route, requests, false) {
                    Ok(n) => {
                        counted.insert(key.clone(), n);
                    }
                    Err(e) => eprintln!("note: no instruction count for {server} {route}: {e:#}"),
                }
                if route == "livedata" {
                    match instructions(&binary, server, route, requests, true) {
                        Ok(n) => {
                            outside.insert(key, n);
                        }
                        Err(e) => eprintln!(
                            "note: no instruction count outside the formatters for {server} {route}: {e:#}"
                        ),
                    }
                }
            }
        }
    }
    for row in &mut rows {
        let key = (
            row["server"].as_str().unwrap_or_default().to_owned(),
            row["route"].as_str().unwrap_or_default().to_owned(),
        );
        if let (Some(n), Some(map)) = (counted.get(&key), row.as_object_mut()) {
            map.insert("instructions".into(), serde_json::json!(n.round()));
        }
        if let (Some(n), Some(map)) = (outside.get(&key), row.as_object_mut()) {
            map.insert(
                "instructions_outside_formatters".into(),
                serde_json::json!(n.round()),
            );
        }
        if let Some(map) = row.as_object_mut() {
            map.insert("scenario".into(), serde_json::json!("embedded"));
        }
    }

    if args.common.json {
        for row in &rows {
            println!("{row}");
        }
    } else {
        println!();
        print_grid(&table(&rows));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn callgrind_totals_are_read() {
        let text = "version: 1\ncreator: callgrind-3.19.0\nevents: Ir\nsummary: 3584320\n\nfl=(1)\ntotals: 3584320\n";
        assert_eq!(callgrind_total(text), Some(3_584_320));
        assert_eq!(callgrind_total("summary: 12\n"), Some(12));
        assert_eq!(callgrind_total("events: Ir\n"), None);
    }

    #[test]
    fn numbers_are_grouped() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(1_914_108), "1,914,108");
    }

    #[test]
    fn the_table_has_both_servers_and_their_ratio() {
        let row = |server: &str, route: &str, ns: f64, future: f64| {
            json!({
                "server": server, "route": route, "median_ns": ns, "future_bytes": future,
                "buffer_bytes": 1000.0, "socket_bytes": 2048.0, "formatter_runs": 1.0,
                "allocations": 0.0, "wire_bytes": 100.0, "chunks": 0.0,
                "socket_writes": 1.0, "polls": 1.0, "instructions": 3000.0,
                "picoserve_over_ringstream": 2.0, "ratio_q1": 1.9, "ratio_q3": 2.1,
                "cpu_median_ns": ns, "cpu_picoserve_over_ringstream": 2.0,
            })
        };
        let rows = vec![
            row("ringstream-embedded", "small", 500.0, 2000.0),
            row("picoserve", "small", 1000.0, 3000.0),
            row("ringstream-embedded", "livedata", 1e5, 2000.0),
            row("picoserve", "livedata", 2e5, 3000.0),
        ];
        let table = table(&rows);
        let line = |label: &str| {
            table
                .iter()
                .find(|l| l[0] == label)
                .unwrap_or_else(|| panic!("no line {label}"))
                .clone()
        };
        assert_eq!(line("slot: total"), ["slot: total", "3000 B", "4000 B", "1.33x"]);
        assert_eq!(
            line("GET / (13 B): wall time per request (median)"),
            [
                "GET / (13 B): wall time per request (median)",
                "500 ns",
                "1 µs",
                "2.00x (1.90–2.10)"
            ]
        );
        assert_eq!(
            line("GET / (13 B): CPU time per request (median)")[3],
            "2.00x"
        );
        assert_eq!(
            line("GET /api/livedata: instructions per request")[1],
            "3,000"
        );
        assert!(table.iter().all(|l| l.len() == 4));
    }
}
