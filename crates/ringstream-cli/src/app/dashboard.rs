//! The live dashboard: the page at `/` and the once-a-second counters event
//! stream at `/events` that it draws.

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

/// One sample of the server's counters as an SSE event `stats` with a JSON
/// payload; `rate` is requests per second since the previous sample.
pub fn sample(seq: u64, metrics: &Metrics, rate: f64) -> Event {
    let data = format!(
        "{{\"requests\":{},\"requests_per_second\":{rate:.1},\"bytes_in\":{},\"bytes_out\":{},\"connections_open\":{},\"errors\":{},\"rss_bytes\":{}}}",
        metrics.requests(),
        metrics.bytes_in(),
        metrics.bytes_out(),
        metrics.connections_open(),
        metrics.errors(),
        resident_memory(),
    );
    Event::new().id(seq.to_string()).event("stats").data(data)
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
        let mut last = metrics.requests();
        let mut last_at = tokio::time::Instant::now();
        let mut seq = 0u64;
        loop {
            interval.tick().await;
            if events.is_closed() {
                break;
            }
            let now = tokio::time::Instant::now();
            let requests = metrics.requests();
            let secs = now.duration_since(last_at).as_secs_f64().max(1e-3);
            let rate = (requests.saturating_sub(last)) as f64 / secs;
            last = requests;
            last_at = now;
            seq += 1;
            events.send(sample(seq, &metrics, rate));
        }
    })
}
