//! `response-40k`: a metrics page built with many small `write!` calls into
//! a response stream, then sent one TCP segment at a time.
//!
//! This is the embedded-server case where a 40 KiB Prometheus body was
//! printed line by line into a buffered response stream and then pulled in
//! 1,436-byte reads as TCP acknowledgements arrived. A string-backed stream
//! whose byte reads moved the whole remaining string made every response
//! quadratic; a ring that grows by exactly each write's shortfall made one
//! reallocation per write. The ring under test starts at one segment
//! (1,460 bytes), grows geometrically and drains with bulk copies.

use std::fmt;
use std::hint::black_box;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use ringstream_core::RingBuffer;
use serde_json::json;

use super::{median, thread_cpu_time, Common, Samples};
use crate::emulate::{ExactGrowthCbuf, StreamString, VecDrain};
use crate::report::{self, Chart, Row, Series};

/// Scenario name on the command line and in JSON.
const NAME: &str = "response-40k";
/// Default body size, in bytes.
const DEFAULT_SIZE: usize = 40_960;
/// Initial buffer size, in bytes: one TCP segment with its headers, the
/// response stream's default.
const INITIAL_CAPACITY: usize = 1_460;
/// Bytes pulled per read: one TCP segment's payload.
const SEGMENT: usize = 1_436;
/// Smallest accepted `--size`, in bytes.
const MIN_SIZE: usize = 4 * 1024;
/// Largest accepted `--size`, in bytes.
const MAX_SIZE: usize = 4 * 1024 * 1024;
/// Body sizes of the `--plot` sweep, in bytes.
const SWEEP: [usize; 7] = [
    4 * 1024,
    16 * 1024,
    40 * 1024,
    160 * 1024,
    400 * 1024,
    1024 * 1024,
    4 * 1024 * 1024,
];

/// Flags of `response-40k`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    common: Common,
    /// Run only these variants (repeatable): ring, stream-string,
    /// cbuf-exact-growth, vec-drain.
    #[arg(long = "variant", value_name = "NAME")]
    variants: Vec<String>,
}

/// A response buffer: written with `write!`, drained with bulk reads.
trait Body: fmt::Write {
    /// A fresh, empty buffer as the response stream creates it.
    fn create() -> Self;
    /// Bytes stored.
    fn stored(&self) -> usize;
    /// Moves up to `dst.len()` bytes into `dst`; 0 when empty.
    fn read_into(&mut self, dst: &mut [u8]) -> usize;
}

impl Body for RingBuffer {
    fn create() -> Self {
        RingBuffer::with_capacity(INITIAL_CAPACITY)
    }
    #[inline]
    fn stored(&self) -> usize {
        self.len()
    }
    #[inline]
    fn read_into(&mut self, dst: &mut [u8]) -> usize {
        self.read(dst)
    }
}

impl Body for StreamString {
    fn create() -> Self {
        StreamString::with_capacity(INITIAL_CAPACITY)
    }
    fn stored(&self) -> usize {
        self.len()
    }
    fn read_into(&mut self, dst: &mut [u8]) -> usize {
        self.read_bytes(dst)
    }
}

impl Body for ExactGrowthCbuf {
    fn create() -> Self {
        ExactGrowthCbuf::new(INITIAL_CAPACITY)
    }
    fn stored(&self) -> usize {
        self.len()
    }
    fn read_into(&mut self, dst: &mut [u8]) -> usize {
        self.read(dst)
    }
}

impl Body for VecDrain {
    fn create() -> Self {
        VecDrain::with_capacity(INITIAL_CAPACITY)
    }
    fn stored(&self) -> usize {
        self.len()
    }
    fn read_into(&mut self, dst: &mut [u8]) -> usize {
        self.read(dst)
    }
}

/// Metric names and help texts of the generated page.
const METRICS: [(&str, &str); 10] = [
    ("yieldday", "Energy converted today in Wh"),
    ("yieldtotal", "Energy converted since reset in kWh"),
    ("voltage", "Voltage per channel in V"),
    ("current", "Current per channel in A"),
    ("power", "Power per channel in W"),
    ("frequency", "Grid frequency in Hz"),
    ("temperature", "Inverter temperature in C"),
    ("efficiency", "Conversion efficiency in percent"),
    ("reactivepower", "Reactive power in var"),
    ("powerfactor", "Power factor"),
];

/// A deterministic xorshift generator for serials and values.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
}

/// Longest generated line, in bytes.
const MAX_LINE: usize = 80;
/// Shortest generated line, in bytes.
const MIN_LINE: usize = 20;

/// Writes a Prometheus-style text page of exactly `size` bytes into `w`
/// with `write!`, one line (20 to 80 bytes) per call: `# HELP` and
/// `# TYPE` lines, then one sample per inverter channel, then `#` padding
/// lines to reach `size`. The output depends only on `size`.
fn generate<B: Body>(w: &mut B, size: usize) -> fmt::Result {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut metric = 0usize;
    let mut line = 0usize;
    let start = w.stored();
    let remaining = |w: &B| size.saturating_sub(w.stored() - start);
    while remaining(w) >= MAX_LINE + MIN_LINE {
        let (name, help) = METRICS[metric % METRICS.len()];
        match line {
            0 => writeln!(w, "# HELP opendtu_{name} {help}")?,
            1 => writeln!(w, "# TYPE opendtu_{name} gauge")?,
            _ => {
                let r = rng.next();
                let serial = 114_100_000_000 + (r % 1_000_000);
                let channel = (line - 2) % 4;
                let value = (r >> 20) % 100_000;
                let frac = (r >> 40) % 1000;
                writeln!(
                    w,
                    "opendtu_{name}{{serial=\"{serial}\",ch=\"{channel}\"}} {value}.{frac:03}"
                )?
            }
        }
        line += 1;
        if line == 6 {
            line = 0;
            metric += 1;
        }
    }
    // Pad with comment lines: one, or two if one would be too long.
    let mut rest = remaining(w);
    if rest > MAX_LINE {
        let half = rest / 2;
        pad(w, half)?;
        rest -= half;
    }
    pad(w, rest)
}

/// Writes a `#` comment line of exactly `n` bytes (newline included).
fn pad<B: Body>(w: &mut B, n: usize) -> fmt::Result {
    match n {
        0 => Ok(()),
        1 => w.write_str("\n"),
        _ => writeln!(w, "#{:1$}", "", n - 2),
    }
}

/// Drains `body` in segment-sized reads into a sink; returns bytes read.
#[inline]
fn drain<B: Body>(body: &mut B, segment: &mut [u8; SEGMENT]) -> usize {
    let mut total = 0;
    loop {
        let n = body.read_into(segment);
        if n == 0 {
            return total;
        }
        black_box(&segment[..n]);
        total += n;
    }
}

/// One build and drain; returns (build + drain time, drain time).
fn run_once<B: Body>(size: usize) -> (Duration, Duration) {
    let mut segment = [0u8; SEGMENT];
    let t0 = Instant::now();
    let mut body = B::create();
    generate(&mut body, size).expect("an unbounded buffer accepts every line");
    let t1 = Instant::now();
    let drained = drain(&mut body, &mut segment);
    let t2 = Instant::now();
    assert_eq!(drained, size, "the drain must return the whole body");
    drop(black_box(body));
    (t2 - t0, t2 - t1)
}

/// One variant: its name, its runner, and the largest size it is run at
/// (with the reason) when it is quadratic.
struct Variant {
    name: &'static str,
    run_once: fn(usize) -> (Duration, Duration),
    limit: Option<(usize, &'static str)>,
}

const VARIANTS: [Variant; 4] = [
    Variant {
        name: "ring",
        run_once: run_once::<RingBuffer>,
        limit: None,
    },
    Variant {
        name: "stream-string",
        run_once: run_once::<StreamString>,
        limit: Some((
            400 * 1024,
            "each one-byte read moves the rest of the string, ~n^2/2 bytes moved per body",
        )),
    },
    Variant {
        name: "cbuf-exact-growth",
        run_once: run_once::<ExactGrowthCbuf>,
        limit: Some((
            1024 * 1024,
            "each write that does not fit copies the whole buffer, ~n^2/(2*write size) bytes copied per body",
        )),
    },
    Variant {
        name: "vec-drain",
        run_once: run_once::<VecDrain>,
        limit: None,
    },
];

/// How long each variant runs before any is measured.
const WARM_UP: Duration = Duration::from_millis(200);

/// The row of one variant from its counted run, timings and CPU times.
fn row(v: &Variant, size: usize, counted: &crate::alloc::Snapshot, samples: &Samples, cpu: &[f64]) -> Row {
    let drain = samples.median_phase();
    Row {
        drain_seconds: Some(drain),
        extra: vec![
            ("runs".into(), json!(samples.total.len())),
            ("min_seconds".into(), json!(samples.min_total())),
            ("cpu_seconds".into(), json!(median(cpu))),
            (
                "live_heap_after".into(),
                json!(counted.live_above_baseline()),
            ),
            ("drain_gbps".into(), json!(report::gbps(size, drain))),
        ],
        ..Row::counted(NAME, v.name, size, samples.median_total(), counted)
    }
}

/// Measures every variant at `size`, skipping (with a note on stderr in
/// JSON mode, stdout otherwise) those above their limit.
///
/// Each variant first makes one counted run (its allocations), then all
/// are warmed up, then they run interleaved — one run of each per round —
/// so that a change in the machine's load during the measurement affects
/// every variant alike. Rounds go on until `--runs` rounds were made and
/// `--budget` seconds per variant have passed (or, for slow variants, at
/// least 3 rounds and five times that).
fn measure_all(size: usize, common: &Common, only: &[String]) -> Vec<Row> {
    let mut chosen = Vec::new();
    for v in VARIANTS
        .iter()
        .filter(|v| only.is_empty() || only.iter().any(|o| o == v.name))
    {
        if let Some((limit, why)) = v.limit {
            if size > limit {
                let note = format!(
                    "skipped {} at {}: above {} because {why}",
                    v.name,
                    report::format_bytes(size as f64),
                    report::format_bytes(limit as f64)
                );
                if common.json {
                    eprintln!("{note}");
                } else {
                    println!("{note}");
                }
                continue;
            }
        }
        chosen.push(v);
    }
    let counted: Vec<_> = chosen
        .iter()
        .map(|v| {
            crate::alloc::reset();
            (v.run_once)(size);
            crate::alloc::snapshot()
        })
        .collect();
    for v in &chosen {
        let start = Instant::now();
        while start.elapsed() < WARM_UP {
            (v.run_once)(size);
        }
    }
    let budget = Duration::from_secs_f64(common.budget.max(0.0)).saturating_mul(chosen.len() as u32);
    let mut samples = vec![Samples::default(); chosen.len()];
    let mut cpu = vec![Vec::new(); chosen.len()];
    let start = Instant::now();
    let mut rounds = 0usize;
    while !chosen.is_empty() {
        for (i, v) in chosen.iter().enumerate() {
            let c0 = thread_cpu_time();
            let (total, phase) = (v.run_once)(size);
            cpu[i].push((thread_cpu_time() - c0).as_secs_f64());
            samples[i].total.push(total.as_secs_f64());
            samples[i].phase.push(phase.as_secs_f64());
        }
        rounds += 1;
        let elapsed = start.elapsed();
        if rounds >= 100_000
            || (rounds >= common.runs && elapsed >= budget)
            || (rounds >= 3 && elapsed >= budget.saturating_mul(5))
        {
            break;
        }
    }
    chosen
        .iter()
        .enumerate()
        .map(|(i, v)| row(v, size, &counted[i], &samples[i], &cpu[i]))
        .collect()
}

/// Runs the scenario.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let common = &args.common;
    if let Some(unknown) = args
        .variants
        .iter()
        .find(|o| !VARIANTS.iter().any(|v| v.name == o.as_str()))
    {
        bail!("unknown variant `{unknown}`");
    }
    if let Some(path) = &common.plot {
        let mut rows = Vec::new();
        for &size in &SWEEP {
            if !common.json {
                eprintln!("measuring {} ...", report::format_bytes(size as f64));
            }
            rows.extend(measure_all(size, common, &args.variants));
        }
        output(&rows, common);
        summarise_sweep(&rows, common);
        let chart = sweep_chart(&rows);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        std::fs::write(path, chart.to_svg())
            .with_context(|| format!("writing {}", path.display()))?;
        if !common.json {
            println!("wrote {}", path.display());
        }
        return Ok(());
    }

    let size = common.size.unwrap_or(DEFAULT_SIZE);
    if !(MIN_SIZE..=MAX_SIZE).contains(&size) {
        bail!("--size must be between 4 KiB and 4 MiB, got {size} bytes");
    }
    let rows = measure_all(size, common, &args.variants);
    output(&rows, common);
    if !common.json {
        summarise(&rows);
    }
    Ok(())
}

fn output(rows: &[Row], common: &Common) {
    if common.json {
        report::print_json(rows);
    } else {
        report::print_table(rows, "ring");
    }
}

fn find<'a>(rows: &'a [Row], variant: &str, size: usize) -> Option<&'a Row> {
    rows.iter()
        .find(|r| r.variant == variant && r.bytes == size)
}

/// Prints how `ring` compares at one size.
fn summarise(rows: &[Row]) {
    let Some(ring) = rows.iter().find(|r| r.variant == "ring") else {
        return;
    };
    println!();
    for other in rows.iter().filter(|r| r.variant != "ring") {
        let drain = match (ring.drain_seconds, other.drain_seconds) {
            (Some(a), Some(b)) if a > 0.0 => report::format_ratio(b / a),
            _ => "-".into(),
        };
        let cpu = match (
            ring.extra_f64("cpu_seconds"),
            other.extra_f64("cpu_seconds"),
        ) {
            (Some(a), Some(b)) if a > 0.0 => report::format_ratio(b / a),
            _ => "-".into(),
        };
        println!(
            "ring vs {}: build+drain {} faster ({} by CPU time), drain {} faster, \
             allocator calls {} vs {}",
            other.variant,
            report::format_ratio(other.seconds / ring.seconds),
            cpu,
            drain,
            ring.allocations + ring.reallocations,
            other.allocations + other.reallocations,
        );
    }
}

/// Prints how `ring`'s time scales over the sweep, by wall-clock median,
/// fastest run and thread CPU time.
fn summarise_sweep(rows: &[Row], common: &Common) {
    if common.json {
        return;
    }
    if let (Some(a), Some(b)) = (
        find(rows, "ring", 40 * 1024),
        find(rows, "ring", 4 * 1024 * 1024),
    ) {
        let ratio = |key: &str| match (b.extra_f64(key), a.extra_f64(key)) {
            (Some(x), Some(y)) if y > 0.0 => report::format_ratio(x / y),
            _ => "-".into(),
        };
        println!(
            "\nring: 40 KiB -> 4 MiB (x102.4 bytes) takes {} the time \
             (wall median), {} (fastest run), {} (CPU median)",
            report::format_ratio(b.seconds / a.seconds),
            ratio("min_seconds"),
            ratio("cpu_seconds"),
        );
    }
}

/// Time (build + drain) against size, one line per variant.
fn sweep_chart(rows: &[Row]) -> Chart {
    let series = VARIANTS
        .iter()
        .map(|v| Series {
            name: v.name.into(),
            points: rows
                .iter()
                .filter(|r| r.variant == v.name)
                .map(|r| (r.bytes as f64, r.seconds))
                .collect(),
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    Chart {
        title: "response-40k: write! a metrics page, drain it in 1,436-byte reads".into(),
        x_label: "body size (log)".into(),
        y_label: "median build + drain time (log)".into(),
        x_format: report::format_bytes,
        y_format: report::format_seconds,
        x_ticks: SWEEP.iter().map(|&s| s as f64).collect(),
        series,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build_and_drain<B: Body>(size: usize) -> Vec<u8> {
        let mut body = B::create();
        generate(&mut body, size).unwrap();
        let mut out = Vec::new();
        let mut seg = [0u8; SEGMENT];
        loop {
            let n = body.read_into(&mut seg);
            if n == 0 {
                break;
            }
            out.extend_from_slice(&seg[..n]);
        }
        out
    }

    #[test]
    fn every_variant_produces_the_same_body() {
        for size in [4096, 40_960, 40_961, 100_003] {
            let ring = build_and_drain::<RingBuffer>(size);
            assert_eq!(ring.len(), size);
            assert_eq!(build_and_drain::<StreamString>(size), ring);
            assert_eq!(build_and_drain::<ExactGrowthCbuf>(size), ring);
            assert_eq!(build_and_drain::<VecDrain>(size), ring);
        }
    }

    #[test]
    fn lines_are_20_to_80_bytes() {
        let body = build_and_drain::<RingBuffer>(40_960);
        let text = std::str::from_utf8(&body).unwrap();
        assert!(text.starts_with("# HELP opendtu_yieldday "));
        for line in text.split_inclusive('\n') {
            assert!(
                (MIN_LINE..=MAX_LINE).contains(&line.len()),
                "{} bytes: {line:?}",
                line.len()
            );
            assert!(line.ends_with('\n'));
        }
    }

    #[test]
    fn ring_allocates_a_handful_of_times_for_40k() {
        let _guard = crate::alloc::TEST_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        // Warm any lazily allocated runtime state first.
        run_once::<RingBuffer>(40_960);
        crate::alloc::reset();
        run_once::<RingBuffer>(40_960);
        let s = crate::alloc::snapshot();
        // Other test threads may allocate at the same time; the ring itself
        // makes one allocation and five reallocations.
        assert!(s.allocations + s.reallocations >= 6);
    }
}
