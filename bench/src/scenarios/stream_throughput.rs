//! `stream-throughput`: read a payload (1 GiB by default) over TCP
//! loopback and report GB/s for ringstream's `read_partial` against
//! tokio's `BufReader` and plain reads into one reused buffer.
//!
//! A writer task sends the payload from one reused buffer, then shuts its
//! side down; the reader drains to end of file. Variants run alternated
//! (A/B/C/A/B/C...) for `--rounds` rounds and each reports its median, so
//! drift on a shared machine hits all of them alike. Repeat `--block-size`
//! to compare block sizes (how `StreamOptions::minimum_read_size` was
//! chosen).
//!
//! * `read-partial`: [`Stream::read_partial`], dropping each chunk.
//! * `bufreader`: [`tokio::io::BufReader::fill_buf`] + `consume`.
//! * `raw-read`: `AsyncReadExt::read` into one reused buffer.
//!
//! Allocation counts come from the first round and are process-wide: they
//! include the runtime's own work on its worker threads.

use std::hint::black_box;
use std::io;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context as _};
use ringstream::{Stream, StreamOptions};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

use super::{median, parse_size, Common};
use crate::alloc::Snapshot;
use crate::report::{self, Row};

const NAME: &str = "stream-throughput";
const DEFAULT_SIZE: usize = 1024 * 1024 * 1024;
const MIN_SIZE: usize = 1;
const MAX_SIZE: usize = 64 * 1024 * 1024 * 1024;
/// The writer's reused buffer, in bytes.
const WRITE_BUFFER: usize = 256 * 1024;

/// Flags of the `stream-throughput` scenario.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    common: Common,
    /// Read block size in bytes (repeatable): the stream's
    /// `minimum_read_size`, the `BufReader` capacity and the raw buffer.
    /// Defaults to `StreamOptions::DEFAULT.minimum_read_size`.
    #[arg(long, value_parser = parse_size)]
    block_size: Vec<usize>,
    /// Alternated rounds; each variant runs once per round.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Measure only this variant (repeatable).
    #[arg(long = "variant", value_name = "NAME")]
    variants: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Variant {
    ReadPartial,
    BufReader,
    RawRead,
}

const VARIANTS: [(Variant, &str); 3] = [
    (Variant::ReadPartial, "read-partial"),
    (Variant::BufReader, "bufreader"),
    (Variant::RawRead, "raw-read"),
];

/// A connected loopback pair: (reader side, writer side).
async fn pair() -> io::Result<(TcpStream, TcpStream)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let (writer, accepted) = tokio::join!(TcpStream::connect(addr), listener.accept());
    let writer = writer?;
    writer.set_nodelay(true)?;
    Ok((accepted?.0, writer))
}

async fn send(mut writer: TcpStream, size: usize) -> io::Result<()> {
    let buffer = vec![0x5a_u8; WRITE_BUFFER];
    let mut left = size;
    while left > 0 {
        let n = left.min(WRITE_BUFFER);
        writer.write_all(&buffer[..n]).await?;
        left -= n;
    }
    writer.shutdown().await
}

async fn drain(v: Variant, reader: TcpStream, block: usize) -> io::Result<usize> {
    let mut total = 0;
    match v {
        Variant::ReadPartial => {
            let options = StreamOptions {
                minimum_read_size: block,
                ..StreamOptions::DEFAULT
            };
            let mut stream = Stream::with_options(reader, options);
            while let Some(chunk) = stream.read_partial(usize::MAX).await? {
                total += black_box(chunk).len();
            }
        }
        Variant::BufReader => {
            let mut reader = BufReader::with_capacity(block, reader);
            loop {
                let n = black_box(reader.fill_buf().await?).len();
                if n == 0 {
                    break;
                }
                reader.consume(n);
                total += n;
            }
        }
        Variant::RawRead => {
            let mut reader = reader;
            let mut buffer = vec![0u8; block];
            loop {
                let n = reader.read(&mut buffer).await?;
                if n == 0 {
                    break;
                }
                black_box(&buffer[..n]);
                total += n;
            }
        }
    }
    Ok(total)
}

/// CPU time used so far by every thread of the process, in nanoseconds
/// (the sum of `/proc/self/task/*/schedstat`), or `None` where that is not
/// available. Unlike wall time it is not inflated by other processes
/// competing for the cores.
fn process_cpu_ns() -> Option<u64> {
    let mut total = 0u64;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let path = task.ok()?.path().join("schedstat");
        let text = std::fs::read_to_string(path).ok()?;
        total += text.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(total)
}

/// What one transfer measured.
struct Outcome {
    /// Wall time of the drain, writer running concurrently.
    elapsed: Duration,
    /// CPU time of reader and writer together, in seconds.
    cpu_seconds: Option<f64>,
    /// Allocator counters at the end of the drain.
    counted: Snapshot,
}

/// One transfer.
fn run_once(
    rt: &tokio::runtime::Runtime,
    v: Variant,
    size: usize,
    block: usize,
) -> anyhow::Result<Outcome> {
    rt.block_on(async {
        let (reader, writer) = pair().await.context("connecting over loopback")?;
        crate::alloc::reset();
        let cpu0 = process_cpu_ns();
        let t0 = Instant::now();
        let sender = tokio::spawn(send(writer, size));
        let received = drain(v, reader, block).await?;
        let elapsed = t0.elapsed();
        let counted = crate::alloc::snapshot();
        sender.await??;
        let cpu_seconds = match (cpu0, process_cpu_ns()) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a) as f64 / 1e9),
            _ => None,
        };
        ensure!(
            received == size,
            "received {received} bytes, expected {size}"
        );
        Ok(Outcome {
            elapsed,
            cpu_seconds,
            counted,
        })
    })
}

fn gbps(bytes: usize, seconds: f64) -> f64 {
    if seconds > 0.0 {
        bytes as f64 / seconds / 1e9
    } else {
        0.0
    }
}

fn print_table(rows: &[Row]) {
    let header = [
        "variant",
        "block",
        "bytes",
        "median s",
        "GB/s",
        "x raw",
        "x bufreader",
        "CPU GB/s",
        "allocs",
        "peak heap",
    ];
    let mut table: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    let block_of = |row: &Row| {
        row.extra
            .iter()
            .find(|(k, _)| k == "block_size")
            .and_then(|(_, v)| v.as_u64())
            .unwrap_or(0)
    };
    for row in rows {
        let ratio = |reference: &str| {
            rows.iter()
                .find(|r| r.variant == reference && block_of(r) == block_of(row))
                .map(|r| format!("{:.2}", r.seconds / row.seconds))
                .unwrap_or_default()
        };
        table.push(vec![
            row.variant.clone(),
            report::format_bytes(block_of(row) as f64),
            row.bytes.to_string(),
            report::format_seconds(row.seconds),
            format!("{:.2}", gbps(row.bytes, row.seconds)),
            ratio("raw-read"),
            ratio("bufreader"),
            row.extra
                .iter()
                .find(|(k, _)| k == "cpu_gbps")
                .and_then(|(_, v)| v.as_f64())
                .map(|g| format!("{g:.2}"))
                .unwrap_or_default(),
            row.allocations.to_string(),
            row.peak_heap_bytes.to_string(),
        ]);
    }
    crate::report::print_grid(&table);
}

/// One (block, variant) pair: block size, variant, its name, the (wall,
/// CPU) seconds of every round and the counters of the first.
type Cell = (
    usize,
    Variant,
    &'static str,
    Vec<(f64, f64)>,
    Option<Snapshot>,
);

/// Runs the scenario.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let common = &args.common;
    if common.plot.is_some() {
        bail!("{NAME} has no size sweep; --plot is not supported");
    }
    if let Some(unknown) = args
        .variants
        .iter()
        .find(|o| !VARIANTS.iter().any(|(_, name)| name == o))
    {
        bail!("unknown variant `{unknown}`");
    }
    let size = common.size.unwrap_or(DEFAULT_SIZE);
    if !(MIN_SIZE..=MAX_SIZE).contains(&size) {
        bail!("--size must be between 1 byte and 64 GiB, got {size} bytes");
    }
    let blocks = if args.block_size.is_empty() {
        vec![StreamOptions::DEFAULT.minimum_read_size]
    } else {
        args.block_size.clone()
    };
    ensure!(
        blocks.iter().all(|&b| b > 0),
        "--block-size must be positive"
    );
    ensure!(args.rounds > 0, "--rounds must be positive");
    let variants: Vec<(Variant, &'static str)> = VARIANTS
        .into_iter()
        .filter(|(_, name)| args.variants.is_empty() || args.variants.iter().any(|o| o == name))
        .collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;

    let mut cells: Vec<Cell> = Vec::new();
    for &block in &blocks {
        for &(v, name) in &variants {
            cells.push((block, v, name, Vec::new(), None));
        }
    }
    for round in 0..args.rounds {
        if !common.json {
            eprintln!("round {}/{}", round + 1, args.rounds);
        }
        for (block, v, _, times, counted) in cells.iter_mut() {
            let outcome = run_once(&rt, *v, size, *block)?;
            times.push((
                outcome.elapsed.as_secs_f64(),
                outcome.cpu_seconds.unwrap_or(f64::NAN),
            ));
            counted.get_or_insert(outcome.counted);
        }
    }
    let rows: Vec<Row> = cells
        .into_iter()
        .map(|(block, _, name, times, counted)| {
            let wall: Vec<f64> = times.iter().map(|t| t.0).collect();
            let cpu: Vec<f64> = times
                .iter()
                .map(|t| t.1)
                .filter(|c| c.is_finite())
                .collect();
            let seconds = median(&wall);
            let cpu_seconds = (!cpu.is_empty()).then(|| median(&cpu));
            let counted = counted.unwrap_or_default();
            Row {
                scenario: NAME.into(),
                variant: name.into(),
                bytes: size,
                seconds,
                drain_seconds: None,
                allocations: counted.allocations,
                reallocations: counted.reallocations,
                bytes_allocated: counted.bytes_allocated,
                peak_heap_bytes: counted.peak_above_baseline(),
                extra: vec![
                    ("runs".into(), json!(times.len())),
                    (
                        "live_heap_after".into(),
                        json!(counted.live_above_baseline()),
                    ),
                    ("gbps".into(), json!(gbps(size, seconds))),
                    ("block_size".into(), json!(block)),
                    ("cpu_seconds".into(), json!(cpu_seconds)),
                    ("cpu_gbps".into(), json!(cpu_seconds.map(|c| gbps(size, c)))),
                    ("seconds_all".into(), json!(wall)),
                ],
            }
        })
        .collect();
    if common.json {
        report::print_json(&rows);
    } else {
        print_table(&rows);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_transfers_everything() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        for (v, name) in VARIANTS {
            let outcome = run_once(&rt, v, 3_000_000, 64 * 1024).unwrap();
            assert!(outcome.elapsed > Duration::ZERO, "{name}");
        }
    }
}
