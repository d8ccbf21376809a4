//! The server's own counters.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Counters a [`Server`](super::Server) keeps while it runs: requests, bytes
/// in and out, open connections, and responses by status.
///
/// The server records into them; a program reads them through the methods
/// below, one at a time or all at once with [`snapshot`](Self::snapshot).
/// All counters are relaxed atomics: cheap to bump, and read as a
/// consistent-enough picture for monitoring.
///
/// # Examples
///
/// ```no_run
/// # async fn run() -> Result<(), ringstream::Error> {
/// let server = ringstream::server::Server::bind("127.0.0.1:0").await?;
/// let metrics = server.metrics();
/// // ... serve, then, from another task:
/// let now = metrics.snapshot();
/// println!("{} requests, {} open connections", now.requests, now.connections_open);
/// let mut text = String::new();
/// metrics.write_prometheus(&mut text).unwrap();
/// assert!(text.contains("ringstream_requests_total 0"));
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Metrics {
    requests: AtomicU64,
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
    connections_accepted: AtomicU64,
    connections_open: AtomicU64,
    connections_evicted: AtomicU64,
    connections_refused: AtomicU64,
    write_timeouts: AtomicU64,
    tls_handshakes: AtomicU64,
    tls_handshake_failures: AtomicU64,
    http2_connections: AtomicU64,
    http2_requests: AtomicU64,
    proxy_refused: AtomicU64,
    /// Responses by status code, indexed by `status - 100`.
    statuses: Box<[AtomicU64; 500]>,
}

/// The counters of [`Metrics`] read at one moment (each counter by itself;
/// they are not read under a lock).
///
/// # Examples
///
/// ```
/// use std::convert::Infallible;
/// use ringstream::server::{service_fn, MetricsSnapshot, Server};
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let server = Server::bind("127.0.0.1:0").await.unwrap();
/// let (addr, metrics) = (server.local_addr().unwrap(), server.metrics());
/// let app = service_fn(|_req: http::Request<ringstream::Incoming>| async {
///     Ok::<_, Infallible>(http::Response::new(String::from("hi")))
/// });
/// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
/// let running = tokio::spawn(server.serve(app).with_graceful_shutdown(async {
///     let _ = stopped.await;
/// }));
///
/// let mut client = tokio::net::TcpStream::connect(addr).await.unwrap();
/// client.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await.unwrap();
/// client.read_to_end(&mut Vec::new()).await.unwrap();
/// stop.send(()).unwrap();
/// running.await.unwrap().unwrap();
///
/// let now: MetricsSnapshot = metrics.snapshot();
/// assert_eq!(now.requests, 1);
/// assert_eq!(now.connections_accepted, 1);
/// assert_eq!(now.connections_open, 0);
/// assert_eq!(now.errors, 0);
/// assert!(now.bytes_out > 0);
/// # });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct MetricsSnapshot {
    /// Requests whose head was read.
    pub requests: u64,
    /// Bytes read from clients.
    pub bytes_in: u64,
    /// Bytes written to clients.
    pub bytes_out: u64,
    /// Connections accepted since start.
    pub connections_accepted: u64,
    /// Connections open now.
    pub connections_open: u64,
    /// Idle connections closed at the cap to admit a new client.
    pub connections_evicted: u64,
    /// Clients refused with `503` at the cap, every connection busy.
    pub connections_refused: u64,
    /// Connections closed because a response write made no progress for
    /// [`Config::write_timeout`](super::Config::write_timeout).
    pub write_timeouts: u64,
    /// TLS handshakes completed (feature `tls`).
    pub tls_handshakes: u64,
    /// TLS handshakes that failed: a protocol error, the handshake
    /// deadline, or a client that spoke plain HTTP to the TLS port.
    pub tls_handshake_failures: u64,
    /// Connections served over HTTP/2 (feature `http2`).
    pub http2_connections: u64,
    /// Requests served over HTTP/2 (also counted in
    /// [`requests`](Self::requests)).
    pub http2_requests: u64,
    /// Connections closed before their first request for want of a
    /// trusted, valid PROXY header ([`Config::proxy_protocol`](super::Config::proxy_protocol)).
    pub proxy_refused: u64,
    /// Responses with a status of 400 or above.
    pub errors: u64,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            requests: AtomicU64::new(0),
            bytes_in: AtomicU64::new(0),
            bytes_out: AtomicU64::new(0),
            connections_accepted: AtomicU64::new(0),
            connections_open: AtomicU64::new(0),
            connections_evicted: AtomicU64::new(0),
            connections_refused: AtomicU64::new(0),
            write_timeouts: AtomicU64::new(0),
            tls_handshakes: AtomicU64::new(0),
            tls_handshake_failures: AtomicU64::new(0),
            http2_connections: AtomicU64::new(0),
            http2_requests: AtomicU64::new(0),
            proxy_refused: AtomicU64::new(0),
            statuses: Box::new([const { AtomicU64::new(0) }; 500]),
        }
    }
}

impl Metrics {
    /// Requests whose head was read.
    pub fn requests(&self) -> u64 {
        self.requests.load(Relaxed)
    }

    /// Bytes read from clients.
    pub fn bytes_in(&self) -> u64 {
        self.bytes_in.load(Relaxed)
    }

    /// Bytes written to clients.
    pub fn bytes_out(&self) -> u64 {
        self.bytes_out.load(Relaxed)
    }

    /// Connections accepted since start.
    pub fn connections_accepted(&self) -> u64 {
        self.connections_accepted.load(Relaxed)
    }

    /// Connections open now.
    pub fn connections_open(&self) -> u64 {
        self.connections_open.load(Relaxed)
    }

    /// Idle connections closed at the cap to admit a new client (the
    /// longest-idle first).
    pub fn connections_evicted(&self) -> u64 {
        self.connections_evicted.load(Relaxed)
    }

    /// Clients refused with `503 Service Unavailable` at the cap because
    /// every connection was busy.
    pub fn connections_refused(&self) -> u64 {
        self.connections_refused.load(Relaxed)
    }

    /// Connections closed because a response write made no progress for
    /// [`Config::write_timeout`](super::Config::write_timeout): a client
    /// that stopped reading, an SSE subscriber that fell asleep.
    pub fn write_timeouts(&self) -> u64 {
        self.write_timeouts.load(Relaxed)
    }

    /// TLS handshakes completed (feature `tls`).
    pub fn tls_handshakes(&self) -> u64 {
        self.tls_handshakes.load(Relaxed)
    }

    /// TLS handshakes that failed: a protocol error, the handshake
    /// deadline, or a client that spoke plain HTTP to the TLS port.
    pub fn tls_handshake_failures(&self) -> u64 {
        self.tls_handshake_failures.load(Relaxed)
    }

    /// Connections served over HTTP/2 so far (feature `http2`).
    pub fn http2_connections(&self) -> u64 {
        self.http2_connections.load(Relaxed)
    }

    /// Requests served over HTTP/2 so far (also counted in
    /// [`requests`](Self::requests)).
    pub fn http2_requests(&self) -> u64 {
        self.http2_requests.load(Relaxed)
    }

    /// Connections closed so far for want of a trusted, valid PROXY
    /// header: from an untrusted source, without one, with a malformed
    /// one, or one not whole within the head timeout.
    pub fn proxy_refused(&self) -> u64 {
        self.proxy_refused.load(Relaxed)
    }

    /// Responses sent with `status` so far.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::server::Metrics;
    ///
    /// let metrics = Metrics::default();
    /// assert_eq!(metrics.status_count(404), 0);
    /// // Out of the range of HTTP statuses: always 0.
    /// assert_eq!(metrics.status_count(42), 0);
    /// assert_eq!(metrics.status_count(1000), 0);
    /// ```
    pub fn status_count(&self, status: u16) -> u64 {
        usize::from(status)
            .checked_sub(100)
            .and_then(|i| self.statuses.get(i))
            .map_or(0, |c| c.load(Relaxed))
    }

    /// Responses with a status of 400 or above.
    pub fn errors(&self) -> u64 {
        self.statuses
            .get(300..)
            .unwrap_or_default()
            .iter()
            .map(|c| c.load(Relaxed))
            .sum()
    }

    /// Every counter, read now.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::server::{Metrics, MetricsSnapshot};
    ///
    /// let metrics = Metrics::default();
    /// assert_eq!(metrics.snapshot(), MetricsSnapshot::default());
    /// ```
    pub fn snapshot(&self) -> MetricsSnapshot {
        MetricsSnapshot {
            requests: self.requests(),
            bytes_in: self.bytes_in(),
            bytes_out: self.bytes_out(),
            connections_accepted: self.connections_accepted(),
            connections_open: self.connections_open(),
            connections_evicted: self.connections_evicted(),
            connections_refused: self.connections_refused(),
            write_timeouts: self.write_timeouts(),
            tls_handshakes: self.tls_handshakes(),
            tls_handshake_failures: self.tls_handshake_failures(),
            http2_connections: self.http2_connections(),
            http2_requests: self.http2_requests(),
            proxy_refused: self.proxy_refused(),
            errors: self.errors(),
        }
    }

    /// Counts one request whose head was read.
    pub(crate) fn record_request(&self) {
        self.requests.fetch_add(1, Relaxed);
    }

    /// Counts a connection that speaks HTTP/2.
    #[cfg(feature = "http2")]
    pub(crate) fn record_http2_connection(&self) {
        self.http2_connections.fetch_add(1, Relaxed);
    }

    /// Counts one request read over HTTP/2 (in the total too).
    #[cfg(feature = "http2")]
    pub(crate) fn record_http2_request(&self) {
        self.requests.fetch_add(1, Relaxed);
        self.http2_requests.fetch_add(1, Relaxed);
    }

    /// Counts a connection closed for want of a trusted, valid PROXY
    /// header.
    pub(crate) fn record_proxy_refused(&self) {
        self.proxy_refused.fetch_add(1, Relaxed);
    }

    /// Counts `n` bytes read from a client.
    pub(crate) fn record_bytes_in(&self, n: u64) {
        self.bytes_in.fetch_add(n, Relaxed);
    }

    /// Counts `n` bytes written to a client.
    pub(crate) fn record_bytes_out(&self, n: u64) {
        self.bytes_out.fetch_add(n, Relaxed);
    }

    /// Counts a connection accepted and now open.
    pub(crate) fn record_connection_opened(&self) {
        self.connections_accepted.fetch_add(1, Relaxed);
        self.connections_open.fetch_add(1, Relaxed);
    }

    /// Counts an idle connection closed to admit a new one.
    pub(crate) fn record_connection_evicted(&self) {
        self.connections_evicted.fetch_add(1, Relaxed);
    }

    /// Counts a client refused at the cap.
    pub(crate) fn record_connection_refused(&self) {
        self.connections_refused.fetch_add(1, Relaxed);
    }

    /// Counts a connection closed at the write timeout.
    pub(crate) fn record_write_timeout(&self) {
        self.write_timeouts.fetch_add(1, Relaxed);
    }

    /// Counts a TLS handshake completed.
    #[cfg_attr(not(feature = "tls"), allow(dead_code))]
    pub(crate) fn record_tls_handshake(&self) {
        self.tls_handshakes.fetch_add(1, Relaxed);
    }

    /// Counts a TLS handshake failed.
    #[cfg_attr(not(feature = "tls"), allow(dead_code))]
    pub(crate) fn record_tls_handshake_failure(&self) {
        self.tls_handshake_failures.fetch_add(1, Relaxed);
    }

    /// Counts a connection closed.
    pub(crate) fn record_connection_closed(&self) {
        self.connections_open.fetch_sub(1, Relaxed);
    }

    /// Counts one response with `status`.
    pub(crate) fn record_status(&self, status: u16) {
        if let Some(slot) = usize::from(status)
            .checked_sub(100)
            .and_then(|i| self.statuses.get(i))
        {
            slot.fetch_add(1, Relaxed);
        }
    }

    /// Print the counters as Prometheus text exposition format, one line at
    /// a time.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::server::Metrics;
    ///
    /// let metrics = Metrics::default();
    /// let mut text = String::new();
    /// metrics.write_prometheus(&mut text).unwrap();
    /// assert!(text.contains("# TYPE ringstream_requests_total counter\n"));
    /// assert!(text.contains("\nringstream_requests_total 0\n"));
    /// ```
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
                "ringstream_http2_requests_total",
                "Requests received over HTTP/2.",
                &self.http2_requests,
            ),
            (
                "ringstream_http2_connections_total",
                "Connections served over HTTP/2.",
                &self.http2_connections,
            ),
            (
                "ringstream_proxy_refused_total",
                "Connections closed for want of a trusted, valid PROXY header.",
                &self.proxy_refused,
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
            (
                "ringstream_connections_evicted_total",
                "Idle connections closed at the connection cap to admit a new client.",
                &self.connections_evicted,
            ),
            (
                "ringstream_connections_refused_total",
                "Clients refused with 503 at the connection cap, every connection busy.",
                &self.connections_refused,
            ),
            (
                "ringstream_write_timeouts_total",
                "Connections closed because a response write made no progress for the write timeout.",
                &self.write_timeouts,
            ),
            (
                "ringstream_tls_handshakes_total",
                "TLS handshakes completed.",
                &self.tls_handshakes,
            ),
            (
                "ringstream_tls_handshake_failures_total",
                "TLS handshakes failed: protocol errors, deadlines, plain HTTP on the TLS port.",
                &self.tls_handshake_failures,
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
