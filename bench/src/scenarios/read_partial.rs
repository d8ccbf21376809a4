//! `read-partial`: read an in-memory source with `read_partial`-style calls
//! until end of file, dropping each chunk, and measure the heap.
//!
//! The source hands out a repeated pattern without holding the payload, so
//! the heap measured is the reader's alone. Variants:
//!
//! * `ringstream`: [`Stream::read_partial`]; chunks are zero-copy views of
//!   the read block, which is reclaimed once they are dropped.
//! * `dup-clear`: the old Ruby way (`result = @read_buffer.dup;
//!   @read_buffer.clear`): read into a kept buffer, copy the bytes out into
//!   a fresh `Vec` as the returned chunk, clear the buffer. Ruby with GC
//!   disabled (as in the measurement that reported 5.24 MB of growth for a
//!   5 MB read) frees none of those copies until a collection runs; this
//!   variant models that honestly by keeping every copy alive until the
//!   loop ends, so its peak and live heap grow with the payload.
//! * `tokio-bufreader`: [`tokio::io::BufReader`] with `fill_buf`, `to_vec`
//!   of the chunk (the caller gets an owned chunk, as with the others) and
//!   `consume`.

use std::hint::black_box;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure};
use ringstream::{Stream, StreamOptions};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, BufReader, ReadBuf};

use super::{parse_size, time_box, Common};
use crate::alloc::Snapshot;
use crate::report::{self, Row};

const NAME: &str = "read-partial";
const DEFAULT_SIZE: usize = 5 * 1024 * 1024;
const MIN_SIZE: usize = 1;
const MAX_SIZE: usize = 1024 * 1024 * 1024;
/// `dup-clear` keeps the whole payload alive; above this it is skipped.
const DUP_CLEAR_LIMIT: usize = 256 * 1024 * 1024;
/// Period of the pattern the source repeats, in bytes.
const PATTERN_LEN: usize = 4096;
static PATTERN: [u8; PATTERN_LEN] = {
    let mut p = [0u8; PATTERN_LEN];
    let mut i = 0;
    while i < PATTERN_LEN {
        p[i] = (i % 251) as u8;
        i += 1;
    }
    p
};

/// Flags of the `read-partial` scenario.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    common: Common,
    /// Read block size in bytes (the stream's `minimum_read_size`, the
    /// buffer of the other variants).
    #[arg(long, value_parser = parse_size)]
    block_size: Option<usize>,
    /// Measure only this variant (repeatable).
    #[arg(long = "variant", value_name = "NAME")]
    variants: Vec<String>,
}

/// An in-memory source of `remaining` bytes of a repeated pattern that
/// holds no payload on the heap; writes are discarded.
struct PatternSource {
    remaining: usize,
    offset: usize,
}

impl PatternSource {
    fn new(size: usize) -> Self {
        PatternSource {
            remaining: size,
            offset: 0,
        }
    }
}

impl AsyncRead for PatternSource {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        while self.remaining > 0 && buf.remaining() > 0 {
            let from = self.offset;
            let n = (PATTERN_LEN - from)
                .min(self.remaining)
                .min(buf.remaining());
            buf.put_slice(&PATTERN[from..from + n]);
            self.remaining -= n;
            self.offset = (from + n) % PATTERN_LEN;
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for PatternSource {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// What one run measured: bytes read, loop time and the allocator counters
/// at the end of the loop (reader and retained chunks still alive).
struct Outcome {
    bytes: usize,
    elapsed: Duration,
    counted: Snapshot,
}

async fn ringstream(size: usize, block: usize) -> io::Result<Outcome> {
    let options = StreamOptions {
        minimum_read_size: block,
        ..StreamOptions::DEFAULT
    };
    crate::alloc::reset();
    let t0 = Instant::now();
    let mut stream = Stream::with_options(PatternSource::new(size), options);
    let mut bytes = 0;
    while let Some(chunk) = stream.read_partial(usize::MAX).await? {
        bytes += black_box(chunk).len();
    }
    let elapsed = t0.elapsed();
    let counted = crate::alloc::snapshot();
    drop(stream);
    Ok(Outcome {
        bytes,
        elapsed,
        counted,
    })
}

async fn dup_clear(size: usize, block: usize) -> io::Result<Outcome> {
    crate::alloc::reset();
    let t0 = Instant::now();
    let mut source = PatternSource::new(size);
    let mut buffer: Vec<u8> = Vec::with_capacity(block);
    // Garbage a GC-less runtime has not collected yet.
    let mut uncollected: Vec<Vec<u8>> = Vec::new();
    let mut bytes = 0;
    loop {
        let n = source.read_buf(&mut buffer).await?;
        if n == 0 {
            break;
        }
        let chunk = buffer.clone(); // `@read_buffer.dup`
        buffer.clear();
        bytes += black_box(&chunk).len();
        uncollected.push(chunk);
    }
    let elapsed = t0.elapsed();
    let counted = crate::alloc::snapshot();
    drop(uncollected);
    Ok(Outcome {
        bytes,
        elapsed,
        counted,
    })
}

async fn tokio_bufreader(size: usize, block: usize) -> io::Result<Outcome> {
    crate::alloc::reset();
    let t0 = Instant::now();
    let mut reader = BufReader::with_capacity(block, PatternSource::new(size));
    let mut bytes = 0;
    loop {
        let chunk = reader.fill_buf().await?.to_vec();
        if chunk.is_empty() {
            break;
        }
        reader.consume(chunk.len());
        bytes += black_box(chunk).len();
    }
    let elapsed = t0.elapsed();
    let counted = crate::alloc::snapshot();
    drop(reader);
    Ok(Outcome {
        bytes,
        elapsed,
        counted,
    })
}

#[derive(Clone, Copy)]
enum Variant {
    Ringstream,
    DupClear,
    TokioBufReader,
}

const VARIANTS: [(Variant, &str); 3] = [
    (Variant::Ringstream, "ringstream"),
    (Variant::DupClear, "dup-clear"),
    (Variant::TokioBufReader, "tokio-bufreader"),
];

fn run_once(
    rt: &tokio::runtime::Runtime,
    v: Variant,
    size: usize,
    block: usize,
) -> anyhow::Result<Outcome> {
    let outcome = rt.block_on(async {
        match v {
            Variant::Ringstream => ringstream(size, block).await,
            Variant::DupClear => dup_clear(size, block).await,
            Variant::TokioBufReader => tokio_bufreader(size, block).await,
        }
    })?;
    ensure!(
        outcome.bytes == size,
        "read {} bytes, expected {size}",
        outcome.bytes
    );
    Ok(outcome)
}

fn measure(
    rt: &tokio::runtime::Runtime,
    (v, name): (Variant, &str),
    size: usize,
    block: usize,
    common: &Common,
) -> anyhow::Result<Row> {
    let counted = run_once(rt, v, size, block)?.counted;
    let budget = Duration::from_secs_f64(common.budget.max(0.0));
    let mut failure = None;
    let samples = time_box(common.runs, budget, || match run_once(rt, v, size, block) {
        Ok(o) => (o.elapsed, o.elapsed),
        Err(e) => {
            failure.get_or_insert(e);
            (Duration::ZERO, Duration::ZERO)
        }
    });
    if let Some(e) = failure {
        return Err(e);
    }
    let seconds = samples.median_total();
    Ok(Row {
        extra: vec![
            ("runs".into(), json!(samples.total.len())),
            (
                "live_heap_after".into(),
                json!(counted.live_above_baseline()),
            ),
            ("block_size".into(), json!(block)),
            ("gbps".into(), json!(report::gbps(size, seconds))),
        ],
        ..Row::counted(NAME, name, size, seconds, &counted)
    })
}

fn print_table(rows: &[Row]) {
    let header = [
        "variant",
        "bytes",
        "median s",
        "GB/s",
        "allocs",
        "bytes alloc",
        "peak heap",
        "live after",
    ];
    let mut table: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    for row in rows {
        let live_after = row.extra_value("live_heap_after").cloned();
        table.push(vec![
            row.variant.clone(),
            row.bytes.to_string(),
            report::format_seconds(row.seconds),
            format!("{:.2}", row.extra_f64("gbps").unwrap_or(0.0)),
            row.allocations.to_string(),
            row.bytes_allocated.to_string(),
            row.peak_heap_bytes.to_string(),
            live_after.unwrap_or_default().to_string(),
        ]);
    }
    crate::report::print_grid(&table);
}

/// Checks the `ringstream` row against its targets: peak heap at most two
/// blocks plus 64 KiB, live heap after the loop at most one block and its
/// shared header (the block the thread's pool keeps for the next stream),
/// at most 16 allocations.
fn check_targets(rows: &[Row], block: usize) -> Vec<String> {
    let mut verdicts = Vec::new();
    for row in rows.iter().filter(|r| r.variant == "ringstream") {
        let live = row
            .extra_value("live_heap_after")
            .and_then(|v| v.as_i64())
            .unwrap_or(i64::MAX);
        let checks = [
            (
                "peak heap <= 2 blocks + 64 KiB",
                row.peak_heap_bytes <= 2 * block + 64 * 1024,
            ),
            (
                "live heap after <= 1 block + 64 B (kept by the thread's pool)",
                live <= block as i64 + 64,
            ),
            ("allocations <= 16", row.allocations <= 16),
        ];
        for (what, ok) in checks {
            verdicts.push(format!("{} {what}", if ok { "PASS" } else { "FAIL" }));
        }
    }
    verdicts
}

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
        bail!("--size must be between 1 byte and 1 GiB, got {size} bytes");
    }
    let block = args
        .block_size
        .unwrap_or(StreamOptions::DEFAULT.minimum_read_size);
    ensure!(block > 0, "--block-size must be positive");
    let rt = tokio::runtime::Builder::new_current_thread().build()?;
    let mut rows = Vec::new();
    for variant in VARIANTS
        .iter()
        .filter(|(_, name)| args.variants.is_empty() || args.variants.iter().any(|o| o == name))
    {
        if matches!(variant.0, Variant::DupClear) && size > DUP_CLEAR_LIMIT {
            eprintln!(
                "skipped dup-clear at {}: it keeps the whole payload alive (limit {})",
                report::format_bytes(size as f64),
                report::format_bytes(DUP_CLEAR_LIMIT as f64)
            );
            continue;
        }
        rows.push(measure(&rt, *variant, size, block, common)?);
    }
    if common.json {
        report::print_json(&rows);
    } else {
        print_table(&rows);
        for verdict in check_targets(&rows, block) {
            println!("{verdict}");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_produces_the_requested_bytes() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let data = rt.block_on(async {
            let mut out = Vec::new();
            PatternSource::new(10_000)
                .read_to_end(&mut out)
                .await
                .unwrap();
            out
        });
        assert_eq!(data.len(), 10_000);
        assert!(data
            .iter()
            .enumerate()
            .all(|(i, &b)| b == ((i % PATTERN_LEN) % 251) as u8));
    }

    #[test]
    fn every_variant_reads_everything() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        for variant in VARIANTS {
            let outcome = run_once(&rt, variant.0, 300_000, 16 * 1024).unwrap();
            assert_eq!(outcome.bytes, 300_000, "{}", variant.1);
        }
    }
}
