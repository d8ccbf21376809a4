//! The seed's demo on the embedded server: a `no_std`, heap-free app
//! (nothing here uses `std` or `alloc`), shared by the host example
//! (`examples/demo.rs`) and the tokio tests (`tests/tokio_tcp/demo.rs`),
//! and meant to link unchanged into firmware.
//!
//! - `/`: a small dashboard page, a static [`Asset`] (ETag, 304);
//! - `/api/livedata`: ~40 KB of JSON of a simulated solar installation of
//!   90 inverters, printed line by line with `write!` into the chunked
//!   response (each formatter runs once), the same shape as
//!   `ringstream serve`'s;
//! - `/events`: server-sent events, the live totals once a second, from a
//!   [`Broadcaster`] that [`Demo::tick`] feeds;
//! - `/ws/live`: a WebSocket pushing the same totals on every tick;
//! - anything else: 404.

#![allow(dead_code)] // Each includer uses a part.

use core::cell::Cell;
use core::fmt::{self, Write as _};

use ringstream_embedded::embedded_io_async::{Read, Write};
use ringstream_embedded::http::{
    App, Asset, Error, Request, Responder, Sent, Upgrade, WebSocketConfig,
};
use ringstream_embedded::ringstream_core::ws::CloseCode;
use ringstream_embedded::sse::{Broadcaster, Event, EventStream, OverflowPolicy, Received};

/// Inverters of the simulated installation (as `ringstream serve`).
pub const INVERTERS: usize = 90;

/// The dashboard page.
pub const DASHBOARD: Asset = Asset::new(
    "/",
    "text/html; charset=utf-8",
    include_bytes!("dashboard.html"),
);

/// The totals' ring: 4 events of up to 128 bytes, for 4 subscribers (the
/// `/events` streams and `/ws/live` sessions together).
pub type Live = Broadcaster<4, 512, 4>;

/// Longest totals line, in bytes (the scratch of a stream or a session).
const TOTALS_LEN: usize = 128;

/// The demo app: the live totals' broadcaster and the last tick.
pub struct Demo {
    live: Live,
    /// The unix seconds of the last tick.
    now: Cell<u64>,
    /// Formatter runs of the last `/api/livedata` (one per line printed).
    pub formatter_runs: Cell<usize>,
}

impl Demo {
    /// The app at `unix_secs`, before any tick.
    pub const fn new(unix_secs: u64) -> Demo {
        Demo {
            live: Broadcaster::new(OverflowPolicy::DropOldest),
            now: Cell::new(unix_secs),
            formatter_runs: Cell::new(0),
        }
    }

    /// Sets the clock to `unix_secs` and publishes the totals to every
    /// `/events` stream and `/ws/live` session: the publisher task calls it
    /// once a second.
    pub fn tick(&self, unix_secs: u64) {
        self.now.set(unix_secs);
        let mut buf = [0u8; TOTALS_LEN];
        let mut out = SliceWriter {
            buf: &mut buf,
            len: 0,
        };
        if write!(out, "{}", LiveTotals::at(unix_secs)).is_ok() {
            let len = out.len;
            if let Ok(json) = core::str::from_utf8(&buf[..len]) {
                // A full ring drops its oldest event; nothing else fails here.
                let _ = self.live.publish(&Event::new().data(json));
            }
        }
    }

    /// The unix seconds of the last tick.
    pub fn now(&self) -> u64 {
        self.now.get()
    }

    /// `/events` streams and `/ws/live` sessions subscribed.
    pub fn subscribers(&self) -> usize {
        self.live.subscriber_count()
    }

    /// Ends every stream and session (a graceful shutdown).
    pub fn close(&self) {
        self.live.close();
    }
}

impl App for Demo {
    async fn handle<IO: Read + Write>(
        &self,
        request: &Request<'_>,
        responder: &mut Responder<'_, IO>,
    ) -> Result<Sent, Error<IO::Error>> {
        match request.path() {
            "/" => DASHBOARD.serve(request, responder, &[]).await,
            "/api/livedata" => {
                responder
                    .start(200, &[("content-type", b"application/json")], None)
                    .await?;
                // One `write!` per line: each line's formatter runs once,
                // straight into the transmit buffer.
                let unix_secs = self.now.get();
                let runs = Cell::new(0);
                for index in 0..LINES {
                    let line = Counted(Line::at(unix_secs, index), &runs);
                    let written = writeln!(responder, "{line}").await;
                    self.formatter_runs.set(runs.get());
                    written?;
                }
                responder.finish().await
            }
            "/events" => {
                let Some(mut subscriber) = self.live.subscribe(None) else {
                    return responder.send(503, &[("retry-after", b"1")], b"").await;
                };
                let mut stream = EventStream::start(responder, &[]).await?;
                let mut scratch = [0u8; TOTALS_LEN + 16];
                stream.forward(&mut subscriber, &mut scratch).await?;
                stream.finish().await
            }
            "/ws/live" => {
                let mut ws = match responder
                    .accept_websocket(request, &WebSocketConfig::DEFAULT)
                    .await?
                {
                    Upgrade::Accepted(ws) => ws,
                    Upgrade::Refused(sent) => return Ok(sent),
                };
                let Some(mut subscriber) = self.live.subscribe(None) else {
                    ws.close(CloseCode::TRY_AGAIN_LATER, "busy").await?;
                    return Ok(ws.end());
                };
                // Push only: the totals on every tick, until the client
                // goes (a failed write) or the demo closes.
                let mut scratch = [0u8; TOTALS_LEN + 16];
                while let Received::Event(_) | Received::Behind { .. } =
                    subscriber.recv(&mut scratch).await
                {
                    write!(ws, "{}", LiveTotals::at(self.now.get())).await?;
                    ws.flush().await?;
                }
                ws.close(CloseCode::GOING_AWAY, "").await?;
                Ok(ws.end())
            }
            _ => {
                responder
                    .send(404, &[("content-type", b"text/plain")], b"not found\n")
                    .await
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The simulated installation, as `ringstream serve`'s (`livedata.rs` of the
// CLI), without `std`: `core::fmt` only, no heap.
// ---------------------------------------------------------------------------

/// Lines of `/api/livedata`: its head, six per inverter, its tail.
pub const LINES: usize = 2 + 6 * INVERTERS;

/// cos(x) without `std` (core has no `f64::cos`): reduced to [-π, π],
/// then the Taylor series to x^26, within a few ulps of `std`'s over the
/// phases of a day (the JSON prints the results to 0.1 at most 0.001).
pub fn cos(x: f64) -> f64 {
    use core::f64::consts::{PI, TAU};
    let mut x = x % TAU;
    if x > PI {
        x -= TAU;
    } else if x < -PI {
        x += TAU;
    }
    let x2 = x * x;
    let mut term = 1.0;
    let mut sum = 1.0;
    let mut n = 0.0;
    for _ in 0..13 {
        term *= -x2 / ((n + 1.0) * (n + 2.0));
        sum += term;
        n += 2.0;
    }
    sum
}

/// The sun's height over the installation at `unix_secs`, as a factor
/// 0.05..1.
fn sun(unix_secs: u64) -> f64 {
    let day_secs = unix_secs % 86_400;
    let phase = (day_secs as f64 / 86_400.0) * core::f64::consts::TAU;
    let height = -cos(phase);
    if height > 0.05 {
        height
    } else {
        0.05
    }
}

/// One simulated inverter at one moment.
#[derive(Clone, Copy)]
struct Inverter {
    jitter: f64,
    power: f64,
    voltage: f64,
    current: f64,
    daily: f64,
    temp: f64,
}

impl Inverter {
    fn at(i: usize, unix_secs: u64, sun: f64) -> Inverter {
        let jitter = (((unix_secs.wrapping_mul(31) + i as u64 * 977) % 1000) as f64) / 10_000.0;
        let rated = 600.0 + (i % 4) as f64 * 200.0;
        let factor = sun * (0.9 + jitter);
        let power = rated * if factor < 1.0 { factor } else { 1.0 };
        let voltage = 30.0 + 8.0 * sun + jitter * 10.0;
        Inverter {
            jitter,
            power,
            voltage,
            current: power / voltage,
            daily: power * 6.5 / 1000.0,
            temp: 18.0 + 25.0 * sun + jitter * 40.0,
        }
    }
}

/// The installation's totals at one moment; `Display` prints them as the
/// JSON object `/events` and `/ws/live` push.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LiveTotals {
    pub timestamp: u64,
    pub power: f64,
    pub yield_day: f64,
}

impl LiveTotals {
    pub fn at(unix_secs: u64) -> LiveTotals {
        let sun = sun(unix_secs);
        let (mut power, mut yield_day) = (0.0, 0.0);
        for i in 0..INVERTERS {
            let inv = Inverter::at(i, unix_secs, sun);
            power += inv.power;
            yield_day += inv.daily;
        }
        LiveTotals {
            timestamp: unix_secs,
            power,
            yield_day,
        }
    }
}

impl fmt::Display for LiveTotals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{{\"timestamp\":{},\"power\":{:.1},\"yield_day\":{:.3},\"inverters\":{INVERTERS}}}",
            self.timestamp, self.power, self.yield_day
        )
    }
}

/// Line `index` (of [`LINES`], without its `\n`) of `/api/livedata` at
/// `unix_secs`.
#[derive(Clone, Copy)]
pub struct Line {
    unix_secs: u64,
    index: usize,
}

impl Line {
    pub fn at(unix_secs: u64, index: usize) -> Line {
        Line { unix_secs, index }
    }
}

impl fmt::Display for Line {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unix_secs = self.unix_secs;
        if self.index == 0 {
            return write!(
                out,
                "{{\"site\":\"ringstream demo array\",\"timestamp\":{unix_secs},\"inverters\":["
            );
        }
        if self.index == LINES - 1 {
            let t = LiveTotals::at(unix_secs);
            return write!(
                out,
                "],\"total\":{{\"power\":{:.1},\"yield_day\":{:.3},\"inverters\":{INVERTERS}}}}}",
                t.power, t.yield_day
            );
        }
        let i = (self.index - 1) / 6;
        let Inverter {
            jitter,
            power,
            voltage,
            current,
            daily,
            temp,
        } = Inverter::at(i, unix_secs, sun(unix_secs));
        let comma = if i + 1 == INVERTERS { "" } else { "," };
        match (self.index - 1) % 6 {
            0 => write!(
                out,
                "{{\"serial\":\"1141{:08}\",\"name\":\"Inverter {:02} (roof {})\",",
                7_300_000 + i * 37,
                i + 1,
                i % 3 + 1
            ),
            1 => write!(
                out,
                "\"producing\":{},\"reachable\":true,\"limit_relative\":100.0,",
                power > 1.0
            ),
            2 => write!(out, "\"ac\":{{\"power\":{power:.1},\"voltage\":{:.1},\"current\":{:.3},\"frequency\":{:.2},\"power_factor\":{:.3}}},", 229.0 + jitter * 20.0, power / 230.0, 49.98 + jitter / 10.0, 0.99 + jitter / 100.0),
            3 => write!(out, "\"dc\":[{{\"string\":1,\"power\":{:.1},\"voltage\":{voltage:.1},\"current\":{:.3},\"yield_day\":{:.1}}},", power / 2.0 + 4.0, current / 2.0, daily * 500.0),
            4 => write!(out, "{{\"string\":2,\"power\":{:.1},\"voltage\":{:.1},\"current\":{:.3},\"yield_day\":{:.1}}}],", power / 2.0 + 3.0, voltage - 0.4, current / 2.0, daily * 500.0),
            _ => write!(out, "\"yield_day\":{daily:.3},\"yield_total\":{:.3},\"temperature\":{temp:.1},\"efficiency\":{:.2}}}{comma}", 1500.0 + i as f64 * 12.5 + daily, 95.0 + jitter * 10.0),
        }
    }
}

/// Prints all of `/api/livedata` at `unix_secs` into `out`, line by line
/// (what the route sends, for a test or a firmware's own use).
pub fn write_livedata(out: &mut impl fmt::Write, unix_secs: u64) -> fmt::Result {
    for index in 0..LINES {
        writeln!(out, "{}", Line::at(unix_secs, index))?;
    }
    Ok(())
}

/// A `Display` that counts its runs.
struct Counted<'c, D>(D, &'c Cell<usize>);

impl<D: fmt::Display> fmt::Display for Counted<'_, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.1.set(self.1.get() + 1);
        self.0.fmt(f)
    }
}

/// `fmt::Write` into a byte slice.
struct SliceWriter<'b> {
    buf: &'b mut [u8],
    len: usize,
}

impl fmt::Write for SliceWriter<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        let dst = self.buf.get_mut(self.len..end).ok_or(fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}
