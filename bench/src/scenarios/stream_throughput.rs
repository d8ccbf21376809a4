//! `stream-throughput`: read a payload (1 GiB by default) over TCP
//! loopback and report GB/s for ringstream's `read_partial` against
//! tokio's `BufReader` and plain reads into one reused buffer.
//!
//! The payload goes over fresh connections in segments (64 MiB by
//! default, `--segment`). For each segment a writer thread sends it from
//! one reused buffer and shuts its side down, and the reader, a
//! current-thread runtime on a thread of its own, drains to end of file;
//! the two are pinned to different CPUs. Variants alternate segment by
//! segment (A/B/C/A/B/C...) for `--rounds` rounds of the whole payload,
//! and each reports the median over all its segments, scaled to the
//! payload. Short alternated segments put every variant through the same
//! drift of a shared machine: whole 1 GiB transfers one after another
//! spread by ±20% from run to run, more than the differences measured.
//! The reader's own CPU time is reported beside the wall time: the writer
//! is usually the slower end, so CPU time is where the read paths differ.
//! Repeat `--block-size` to compare block sizes (how
//! `StreamOptions::minimum_read_size` was chosen).
//!
//! * `read-partial`: [`Stream::read_partial`], dropping each chunk.
//! * `bufreader`: [`tokio::io::AsyncBufReadExt::fill_buf`] on a `tokio::io::BufReader` + `consume`.
//! * `raw-read`: `AsyncReadExt::read` into one reused buffer.
//!
//! Allocation counts come from the reader thread's first segment and are
//! process-wide (the writer thread does not allocate while it sends).

use std::hint::black_box;
use std::io;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context as _};
use ringstream::{Stream, StreamOptions};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::net::TcpStream;

use super::{median, parse_size, thread_cpu_time, Common};
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
    /// Alternated rounds; each variant reads the whole payload once per
    /// round, one segment at a time.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Bytes per connection; the payload is sent in segments of this size,
    /// alternating variants between segments. Same suffixes as `--size`.
    #[arg(long, value_parser = parse_size, default_value = "64MiB")]
    segment: usize,
    /// Measure only this variant (repeatable).
    #[arg(long = "variant", value_name = "NAME")]
    variants: Vec<String>,
    /// CPU the reading thread is pinned to; negative to not pin.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    reader_cpu: i32,
    /// CPU the writing thread is pinned to; negative to not pin.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    writer_cpu: i32,
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

/// A connected loopback pair: (reader side, writer side), both still
/// blocking std sockets.
fn pair() -> io::Result<(std::net::TcpStream, std::net::TcpStream)> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let writer = std::net::TcpStream::connect(listener.local_addr()?)?;
    writer.set_nodelay(true)?;
    let (reader, _) = listener.accept()?;
    Ok((reader, writer))
}

/// The sending side: blocking writes from one reused buffer on its own
/// thread, then a shutdown of the write half. Returns its CPU time.
fn send(mut writer: std::net::TcpStream, buffer: &[u8], size: usize) -> io::Result<Duration> {
    use std::io::Write as _;
    let cpu0 = thread_cpu_time();
    let mut left = size;
    while left > 0 {
        let n = left.min(WRITE_BUFFER);
        writer.write_all(&buffer[..n])?;
        left -= n;
    }
    writer.shutdown(std::net::Shutdown::Write)?;
    Ok(thread_cpu_time().saturating_sub(cpu0))
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

/// Which CPU each end runs on (`None`: wherever the scheduler puts it).
#[derive(Debug, Clone, Copy)]
struct Placement {
    reader: Option<usize>,
    writer: Option<usize>,
}

/// What one transfer measured.
struct Outcome {
    /// Wall time of the drain, writer running concurrently.
    elapsed: Duration,
    /// CPU time of the reading thread alone.
    reader_cpu: Duration,
    /// CPU time of the writing thread alone.
    writer_cpu: Duration,
    /// Allocator counters at the end of the drain.
    counted: Snapshot,
}

/// One transfer. The reader runs a current-thread runtime on a thread of
/// its own and the writer blocks on another, each pinned to its CPU when
/// `placement` says so: left to the scheduler, the two ends and the
/// runtime's workers migrate between the cores and the run-to-run spread
/// is larger than the differences being measured.
fn run_once(v: Variant, size: usize, block: usize, placement: Placement) -> anyhow::Result<Outcome> {
    let (reader, writer) = pair().context("connecting over loopback")?;
    reader.set_nonblocking(true)?;
    let start = Barrier::new(2);
    std::thread::scope(|scope| {
        let sender = scope.spawn(|| -> anyhow::Result<Duration> {
            // Meet the reader even when pinning fails, so that it is never
            // left waiting; the socket then closes early and it errors out.
            let pinned = placement.writer.map_or(Ok(()), super::pin_current_thread);
            // Allocated before the reader starts counting allocations.
            let buffer = vec![0x5a_u8; WRITE_BUFFER];
            start.wait();
            pinned?;
            Ok(send(writer, &buffer, size)?)
        });
        let receiver = scope.spawn(|| -> anyhow::Result<(Duration, Duration, Snapshot, usize)> {
            let setup = placement
                .reader
                .map_or(Ok(()), super::pin_current_thread)
                .and_then(|()| {
                    Ok(tokio::runtime::Builder::new_current_thread()
                        .enable_io()
                        .build()?)
                });
            let rt = match setup {
                Ok(rt) => rt,
                Err(e) => {
                    // Release the writer; it fails on the closed socket.
                    start.wait();
                    return Err(e);
                }
            };
            rt.block_on(async {
                let reader = TcpStream::from_std(reader);
                crate::alloc::reset();
                start.wait();
                let reader = reader?;
                let cpu0 = thread_cpu_time();
                let t0 = Instant::now();
                let received = drain(v, reader, block).await?;
                let elapsed = t0.elapsed();
                let cpu = thread_cpu_time().saturating_sub(cpu0);
                Ok((elapsed, cpu, crate::alloc::snapshot(), received))
            })
        });
        let received = receiver.join().map_err(|_| anyhow::anyhow!("reader panicked"))?;
        let writer_cpu = sender.join().map_err(|_| anyhow::anyhow!("writer panicked"))??;
        let (elapsed, reader_cpu, counted, received) = received?;
        ensure!(
            received == size,
            "received {received} bytes, expected {size}"
        );
        Ok(Outcome {
            elapsed,
            reader_cpu,
            writer_cpu,
            counted,
        })
    })
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
        "reader CPU s",
        "CPU x raw",
        "CPU x bufreader",
        "allocs",
        "peak heap",
    ];
    let mut table: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    let block_of = |row: &Row| row.extra_f64("block_size").unwrap_or(0.0) as usize;
    for row in rows {
        let reference = |name: &str| {
            rows.iter()
                .find(|r| r.variant == name && block_of(r) == block_of(row))
        };
        let ratio = |name: &str| {
            reference(name)
                .map(|r| format!("{:.2}", r.seconds / row.seconds))
                .unwrap_or_default()
        };
        let cpu = |r: &Row| r.extra_f64("reader_cpu_seconds");
        let cpu_ratio = |name: &str| {
            reference(name)
                .and_then(|r| Some(cpu(r)? / cpu(row)?))
                .map(|x| format!("{x:.2}"))
                .unwrap_or_default()
        };
        table.push(vec![
            row.variant.clone(),
            report::format_bytes(block_of(row) as f64),
            row.bytes.to_string(),
            report::format_seconds(row.seconds),
            format!("{:.2}", report::gbps(row.bytes, row.seconds)),
            ratio("raw-read"),
            ratio("bufreader"),
            cpu(row).map(report::format_seconds).unwrap_or_default(),
            cpu_ratio("raw-read"),
            cpu_ratio("bufreader"),
            row.allocations.to_string(),
            row.peak_heap_bytes.to_string(),
        ]);
    }
    crate::report::print_grid(&table);
}

/// The seconds one round measured: wall time, and the CPU time of the
/// reader and of the writer.
#[derive(Debug, Clone, Copy)]
struct Timing {
    wall: f64,
    reader_cpu: f64,
    writer_cpu: f64,
}

/// One (block, variant) pair: block size, variant, its name, the timings
/// of every round and the counters of the first.
type Cell = (
    usize,
    Variant,
    &'static str,
    Vec<Timing>,
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
    ensure!(args.segment > 0, "--segment must be positive");
    ensure!(
        size <= args.segment || size % args.segment == 0,
        "--size ({size} bytes) must be a multiple of --segment ({} bytes) when larger",
        args.segment
    );
    let variants: Vec<(Variant, &'static str)> = VARIANTS
        .into_iter()
        .filter(|(_, name)| args.variants.is_empty() || args.variants.iter().any(|o| o == name))
        .collect();
    let cpu = |n: i32| usize::try_from(n).ok();
    let placement = Placement {
        reader: cpu(args.reader_cpu),
        writer: cpu(args.writer_cpu),
    };

    let mut cells: Vec<Cell> = Vec::new();
    for &block in &blocks {
        for &(v, name) in &variants {
            cells.push((block, v, name, Vec::new(), None));
        }
    }
    let segment = args.segment.min(size);
    for round in 0..args.rounds {
        if !common.json {
            eprintln!("round {}/{}", round + 1, args.rounds);
        }
        let mut sent = 0;
        while sent < size {
            let bytes = segment.min(size - sent);
            // Scale each segment's times to the whole payload.
            let scale = size as f64 / bytes as f64;
            for (block, v, _, times, counted) in cells.iter_mut() {
                let outcome = run_once(*v, bytes, *block, placement)?;
                times.push(Timing {
                    wall: outcome.elapsed.as_secs_f64() * scale,
                    reader_cpu: outcome.reader_cpu.as_secs_f64() * scale,
                    writer_cpu: outcome.writer_cpu.as_secs_f64() * scale,
                });
                counted.get_or_insert(outcome.counted);
            }
            sent += bytes;
        }
    }
    let rows: Vec<Row> = cells
        .into_iter()
        .map(|(block, _, name, times, counted)| {
            let wall: Vec<f64> = times.iter().map(|t| t.wall).collect();
            let reader_cpu: Vec<f64> = times.iter().map(|t| t.reader_cpu).collect();
            let writer_cpu: Vec<f64> = times.iter().map(|t| t.writer_cpu).collect();
            let seconds = median(&wall);
            let reader_cpu_seconds = median(&reader_cpu);
            let counted = counted.unwrap_or_default();
            Row {
                extra: vec![
                    ("runs".into(), json!(times.len())),
                    (
                        "live_heap_after".into(),
                        json!(counted.live_above_baseline()),
                    ),
                    ("gbps".into(), json!(report::gbps(size, seconds))),
                    ("block_size".into(), json!(block)),
                    ("reader_cpu_seconds".into(), json!(reader_cpu_seconds)),
                    ("reader_cpu_gbps".into(), json!(report::gbps(size, reader_cpu_seconds))),
                    ("writer_cpu_seconds".into(), json!(median(&writer_cpu))),
                    ("seconds_all".into(), json!(wall)),
                    ("reader_cpu_seconds_all".into(), json!(reader_cpu)),
                ],
                ..Row::counted(NAME, name, size, seconds, &counted)
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
        let unpinned = Placement {
            reader: None,
            writer: None,
        };
        for (v, name) in VARIANTS {
            let outcome = run_once(v, 3_000_000, 64 * 1024, unpinned).unwrap();
            assert!(outcome.elapsed > Duration::ZERO, "{name}");
            assert!(outcome.reader_cpu > Duration::ZERO, "{name}");
        }
    }
}
