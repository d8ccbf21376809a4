//! The server's own counters.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Counters a [`Server`](super::Server) keeps while it runs: requests, bytes
/// in and out, open connections, and responses by status.
///
/// All counters are relaxed atomics: cheap to bump, and read as a
/// consistent-enough snapshot for monitoring.
///
/// # Examples
///
/// ```
/// use ringstream::server::Metrics;
///
/// let metrics = Metrics::default();
/// metrics.record_status(404);
/// let mut text = String::new();
/// metrics.write_prometheus(&mut text).unwrap();
/// assert!(text.contains("ringstream_responses_total{status=\"404\"} 1"));
/// ```
#[derive(Debug)]
pub struct Metrics {
    /// Requests whose head was read.
    pub requests: AtomicU64,
    /// Bytes read from clients.
    pub bytes_in: AtomicU64,
    /// Bytes written to clients.
    pub bytes_out: AtomicU64,
    /// Connections accepted since start.
    pub connections_accepted: AtomicU64,
    /// Connections open now.
    pub connections_open: AtomicU64,
    /// Responses by status code, indexed by `status - 100`.
    statuses: Box<[AtomicU64; 500]>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            requests: AtomicU64::new(0),
            bytes_in: AtomicU64::new(0),
            bytes_out: AtomicU64::new(0),
            connections_accepted: AtomicU64::new(0),
            connections_open: AtomicU64::new(0),
            statuses: Box::new([const { AtomicU64::new(0) }; 500]),
        }
    }
}

impl Metrics {
    /// Count one response with `status`.
    pub fn record_status(&self, status: u16) {
        if let Some(slot) = usize::from(status)
            .checked_sub(100)
            .and_then(|i| self.statuses.get(i))
        {
            slot.fetch_add(1, Relaxed);
        }
    }

    /// Responses sent with `status` so far.
    pub fn status_count(&self, status: u16) -> u64 {
        usize::from(status)
            .checked_sub(100)
            .and_then(|i| self.statuses.get(i))
            .map_or(0, |c| c.load(Relaxed))
    }

    /// Responses with a status of 400 or above.
    pub fn errors(&self) -> u64 {
        self.statuses[300..].iter().map(|c| c.load(Relaxed)).sum()
    }

    /// Print the counters as Prometheus text exposition format, one line at
    /// a time.
    ///
    /// # Errors
    ///
    /// Only what `out` returns.
    pub fn write_prometheus<W: fmt::Write>(&self, out: &mut W) -> fmt::Result {
        let counters = [
            (
                "ringstream_requests_total",
                "Requests received.",
                &self.requests,
            ),
            (
                "ringstream_bytes_in_total",
                "Bytes read from clients.",
                &self.bytes_in,
            ),
            (
                "ringstream_bytes_out_total",
                "Bytes written to clients.",
                &self.bytes_out,
            ),
            (
                "ringstream_connections_accepted_total",
                "Connections accepted.",
                &self.connections_accepted,
            ),
        ];
        for (name, help, value) in counters {
            writeln!(out, "# HELP {name} {help}")?;
            writeln!(out, "# TYPE {name} counter")?;
            writeln!(out, "{name} {}", value.load(Relaxed))?;
        }
        writeln!(
            out,
            "# HELP ringstream_connections_open Connections open now."
        )?;
        writeln!(out, "# TYPE ringstream_connections_open gauge")?;
        writeln!(
            out,
            "ringstream_connections_open {}",
            self.connections_open.load(Relaxed)
        )?;
        writeln!(
            out,
            "# HELP ringstream_responses_total Responses by status code."
        )?;
        writeln!(out, "# TYPE ringstream_responses_total counter")?;
        for (i, count) in self.statuses.iter().enumerate() {
            let n = count.load(Relaxed);
            if n > 0 {
                writeln!(
                    out,
                    "ringstream_responses_total{{status=\"{}\"}} {n}",
                    i + 100
                )?;
            }
        }
        let errors = self.errors();
        writeln!(
            out,
            "# HELP ringstream_errors_total Responses with status >= 400."
        )?;
        writeln!(out, "# TYPE ringstream_errors_total counter")?;
        writeln!(out, "ringstream_errors_total {errors}")
    }
}
