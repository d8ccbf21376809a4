//! The live dashboard: the page at `/` and the once-a-second counters event
//! stream at `/events` that it draws when it cannot use `/ws/live`.

use std::sync::Arc;
use std::time::Duration;

use ringstream::server::Metrics;
use ringstream::sse::{Broadcaster, Event, OverflowPolicy};

/// The dashboard page: HTML with its CSS and JavaScript inline, embedded in
/// the binary (no build step, nothing fetched from elsewhere).
pub const PAGE: &str = include_str!("dashboard.html");

/// Events kept for slow or reconnecting dashboard clients (one a second).
const EVENT_HISTORY: usize = 60;

/// Make the broadcaster of the `/events` stream. A dashboard that cannot
/// keep up skips the oldest samples (they are counters: the next one carries
/// the totals).
pub fn events() -> Broadcaster {
    Broadcaster::new(EVENT_HISTORY, OverflowPolicy::DropOldest)
        .with_keep_alive(Some(Duration::from_secs(15)))
}

/// Resident memory of this process in bytes, where the platform tells
/// (`/proc/self/status` on Linux); 0 elsewhere.
pub fn resident_memory() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
            line["VmRSS:".len()..]
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map_or(0, |kib| kib * 1024)
}

/// The server's counters as a JSON object; `rate` is requests per second
/// since the previous sample. The data of an `/events` `stats` event, and
/// the `stats` of a `/ws/live` push.
pub fn stats_json(metrics: &Metrics, rate: f64) -> String {
    format!(
        "{{\"requests\":{},\"requests_per_second\":{rate:.1},\"bytes_in\":{},\"bytes_out\":{},\"connections_open\":{},\"errors\":{},\"rss_bytes\":{}}}",
        metrics.requests(),
        metrics.bytes_in(),
        metrics.bytes_out(),
        metrics.connections_open(),
        metrics.errors(),
        resident_memory(),
    )
}

/// One sample of the server's counters as an SSE event `stats` with a JSON
/// payload ([`stats_json`]); `rate` is requests per second since the
/// previous sample.
pub fn sample(seq: u64, metrics: &Metrics, rate: f64) -> Event {
    Event::new()
        .id(seq.to_string())
        .event("stats")
        .data(stats_json(metrics, rate))
}

/// Requests per second between samples of the counters.
#[derive(Debug)]
pub struct Rate {
    requests: u64,
    at: tokio::time::Instant,
}

impl Rate {
    /// Starts counting from the counters now.
    pub fn new(metrics: &Metrics) -> Rate {
        Rate {
            requests: metrics.requests(),
            at: tokio::time::Instant::now(),
        }
    }

    /// Requests per second since the previous call (or since
    /// [`new`](Self::new)); 0 when less than 10 ms have passed.
    pub fn sample(&mut self, metrics: &Metrics) -> f64 {
        let now = tokio::time::Instant::now();
        let secs = now.duration_since(self.at).as_secs_f64();
        if secs < 0.01 {
            return 0.0;
        }
        let requests = metrics.requests();
        let rate = requests.saturating_sub(self.requests) as f64 / secs;
        self.requests = requests;
        self.at = now;
        rate
    }
}

/// Send a counters sample every `period` until the broadcaster is closed.
/// Must be called within a tokio runtime.
pub fn spawn_ticker(
    events: Broadcaster,
    metrics: Arc<Metrics>,
    period: Duration,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut interval = tokio::time::interval(period);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let mut rate = Rate::new(&metrics);
        let mut seq = 0u64;
        loop {
            interval.tick().await;
            if events.is_closed() {
                break;
            }
            let per_second = rate.sample(&metrics);
            seq += 1;
            events.send(sample(seq, &metrics, per_second));
        }
    })
}
