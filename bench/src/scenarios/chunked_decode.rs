//! `chunked-decode`: decode a large chunked request body the way the server
//! does, in 64 KiB reads, with the sans-IO `ChunkedDecoder`.
//!
//! The body (256 MiB by default) is chunk-encoded once in memory, then fed
//! to a fresh decoder in 64 KiB input slices. Each slice is consumed per
//! [`Progress`](ringstream_core::h1::decode::Progress) like a real caller:
//! framing is skipped, each data range is handed on (`black_box`), and the
//! next call starts after `consumed`. Two chunkings are measured: one TCP
//! segment's worth (1,460 bytes, many size lines) and 64 KiB chunks (the
//! data path dominates). Throughput is body bytes per second.
//!
//! The decoder never reads data bytes: it reports their ranges, and the
//! caller hands them on without copying. So with 64 KiB chunks the figure
//! is the per-read framing cost, far above memory bandwidth; with 1,460-byte
//! chunks every size line sits on a cache line of its own in a body much
//! larger than the cache, so that figure is bound by memory latency.

use std::hint::black_box;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure};
use ringstream_core::h1::decode::Decoder;
use ringstream_core::h1::encode::ChunkedEncoder;
use ringstream_core::Limits;
use serde_json::json;

use super::{time_box, Common};
use crate::report::{self, Row};

/// Scenario name on the command line and in JSON.
const NAME: &str = "chunked-decode";
/// Default body size, in bytes.
const DEFAULT_SIZE: usize = 256 * 1024 * 1024;
/// Smallest accepted `--size`, in bytes.
const MIN_SIZE: usize = 64 * 1024;
/// Largest accepted `--size`, in bytes.
const MAX_SIZE: usize = 4 * 1024 * 1024 * 1024;
/// Bytes handed to the decoder per call: one socket read, in bytes.
const INPUT_SLICE: usize = 64 * 1024;
/// Chunk sizes of the variants, in bytes.
const CHUNK_SIZES: [usize; 2] = [1_460, 65_536];

/// Flags of `chunked-decode`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    common: Common,
}

/// Chunk-encodes `size` bytes of patterned data in chunks of `chunk` bytes
/// (the last one may be shorter), ending with the last chunk.
fn encode(size: usize, chunk: usize) -> Vec<u8> {
    let chunks = size.div_ceil(chunk);
    // Body, plus at most 18 bytes of size line and 2 of CRLF per chunk,
    // plus the last chunk.
    let mut wire = Vec::with_capacity(size + chunks * 20 + 5);
    let encoder = ChunkedEncoder::new();
    let pattern: Vec<u8> = (0..chunk).map(|i| (i % 251) as u8).collect();
    let mut left = size;
    while left > 0 {
        let n = left.min(chunk);
        encoder
            .write_chunk(&pattern[..n], &mut wire)
            .expect("a Vec has room");
        left -= n;
    }
    encoder
        .last_chunk(std::iter::empty(), &mut wire)
        .expect("no trailers to validate");
    wire
}

/// Decodes `wire` in [`INPUT_SLICE`]-byte slices; returns the body bytes
/// seen.
#[inline(never)]
fn decode(wire: &[u8]) -> anyhow::Result<usize> {
    // Bodies up to `MAX_SIZE`, above the default body limit of 1 GiB.
    let mut decoder = Decoder::chunked(Limits {
        max_body_len: u64::MAX,
        ..Limits::DEFAULT
    });
    let mut body = 0usize;
    for slice in wire.chunks(INPUT_SLICE) {
        let mut input = slice;
        while !input.is_empty() {
            let progress = decoder.decode(input)?;
            let data = &input[progress.data.clone()];
            black_box(data);
            body += data.len();
            input = &input[progress.consumed..];
            if progress.finished {
                ensure!(input.is_empty(), "bytes after the body");
                return Ok(body);
            }
        }
    }
    decoder.finish_eof()?;
    Ok(body)
}

/// One timed decode.
fn run_once(wire: &[u8], size: usize) -> anyhow::Result<Duration> {
    let t0 = Instant::now();
    let body = decode(black_box(wire))?;
    let elapsed = t0.elapsed();
    ensure!(body == size, "decoded {body} bytes, expected {size}");
    Ok(elapsed)
}

/// Measures one chunk size: encode once, a counted run (also a warm-up),
/// then time-boxed runs.
fn measure(chunk: usize, size: usize, common: &Common) -> anyhow::Result<Row> {
    let wire = encode(size, chunk);
    crate::alloc::reset();
    run_once(&wire, size)?;
    let counted = crate::alloc::snapshot();
    let budget = Duration::from_secs_f64(common.budget.max(0.0));
    let mut failure = None;
    let samples = time_box(common.runs, budget, || match run_once(&wire, size) {
        Ok(t) => (t, t),
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
            ("gbps".into(), json!(report::gbps(size, seconds))),
            ("chunk_size".into(), json!(chunk)),
            ("wire_bytes".into(), json!(wire.len())),
            ("input_slice".into(), json!(INPUT_SLICE)),
        ],
        ..Row::counted(NAME, &format!("chunk-{chunk}"), size, seconds, &counted)
    })
}

/// Prints the rows as a table with a GB/s column.
fn print_table(rows: &[Row]) {
    let header = [
        "variant",
        "bytes",
        "median s",
        "GB/s",
        "allocs",
        "reallocs",
        "bytes alloc",
        "peak heap",
    ];
    let mut table: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    for row in rows {
        table.push(vec![
            row.variant.clone(),
            row.bytes.to_string(),
            report::format_seconds(row.seconds),
            format!("{:.2}", report::gbps(row.bytes, row.seconds)),
            row.allocations.to_string(),
            row.reallocations.to_string(),
            row.bytes_allocated.to_string(),
            row.peak_heap_bytes.to_string(),
        ]);
    }
    crate::report::print_grid(&table);
}

/// Runs the scenario.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let common = &args.common;
    if common.plot.is_some() {
        bail!("{NAME} has no size sweep; --plot is not supported");
    }
    let size = common.size.unwrap_or(DEFAULT_SIZE);
    if !(MIN_SIZE..=MAX_SIZE).contains(&size) {
        bail!("--size must be between 64 KiB and 4 GiB, got {size} bytes");
    }
    let mut rows = Vec::new();
    for chunk in CHUNK_SIZES {
        rows.push(measure(chunk, size, common)?);
    }
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
    fn encoded_bodies_decode_to_their_size() {
        for chunk in CHUNK_SIZES {
            for size in [1, chunk - 1, chunk, chunk + 1, 3 * INPUT_SLICE + 7] {
                let wire = encode(size, chunk);
                assert_eq!(decode(&wire).unwrap(), size, "chunk {chunk} size {size}");
            }
        }
    }

    #[test]
    fn wire_overhead_is_the_size_lines() {
        // 3 chunks of 1,460 ("5b4\r\n" + "\r\n") and the last chunk.
        let wire = encode(3 * 1_460, 1_460);
        assert_eq!(wire.len(), 3 * (1_460 + 5 + 2) + 5);
        assert!(wire.starts_with(b"5b4\r\n"));
        assert!(wire.ends_with(b"\r\n0\r\n\r\n"));
    }
}
