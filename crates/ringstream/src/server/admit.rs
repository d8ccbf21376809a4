//! Admission at the connection cap: a free slot, or the longest-idle
//! connection's, or a prompt `503` — never silence in the listen backlog.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Waker};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ringstream_core::h1::{write_unavailable_response, DateCache};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use super::accepted::{serve_accepted, ConnectionContext};
use super::addr::ConnectionInfo;
use super::config::Config;
use super::make::MakeService;
use super::refuse::refuse;
use super::slots::Slots;

/// The `Retry-After` of a refusal at the cap, in seconds.
const RETRY_AFTER_SECS: u32 = 1;

/// Refusals answered at once; past this many, a refused client gets its
/// `503` without the lingering close.
const MAX_REFUSING: usize = 64;

/// How often a line that may repeat at every accept is logged (at most
/// once per this period, with the count of those left out in between).
const LOG_PERIOD: Duration = Duration::from_secs(5);

/// Decides, for each accepted connection, whether and how it is served.
pub(super) struct Admission {
    slots: Arc<Slots>,
    max_connections: usize,
    /// How long a client admitted by an eviction waits for the evicted
    /// connection to give its slot back.
    evict_wait: Duration,
    refusals: Arc<Semaphore>,
    evictions_log: Throttle,
    refusals_log: Throttle,
    date: DateCache,
}

impl Admission {
    /// Wakes every connection that waits, to see the stop just sent.
    pub(super) fn wake_all(&self) {
        self.slots.wake_all();
    }

    pub(super) fn new(config: &Config) -> Admission {
        Admission {
            slots: Arc::new(Slots::new(config.max_connections)),
            max_connections: config.max_connections,
            evict_wait: config.head_timeout,
            refusals: Arc::new(Semaphore::new(MAX_REFUSING)),
            evictions_log: Throttle::default(),
            refusals_log: Throttle::default(),
            date: DateCache::new(),
        }
    }

    /// Serves `socket` in a new task of `tasks` if there is room or an
    /// idle connection makes room; refuses it with `503` otherwise.
    pub(super) fn admit<T, M>(
        &mut self,
        socket: T,
        info: ConnectionInfo,
        context: ConnectionContext<M>,
        tasks: &mut JoinSet<()>,
    ) where
        T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
        M: MakeService,
    {
        if let Some(taken) = self.slots.try_take() {
            tasks.spawn(serve_accepted(socket, info, context, taken));
            return;
        }
        if self.slots.evict_longest_idle() {
            // The connection idle the longest closes; this one takes its
            // slot as soon as it is given back.
            context.metrics.record_connection_evicted();
            if let Some(since_last) = self.evictions_log.due() {
                tracing::info!(
                    max_connections = self.max_connections,
                    since_last,
                    "connection cap reached: closed the longest-idle connection for a new one"
                );
            }
            let waiting = self.slots.wait();
            let wait = self.evict_wait;
            let answer = self.unavailable();
            tasks.spawn(async move {
                match tokio::time::timeout(wait, waiting.take()).await {
                    Ok(Some(taken)) => serve_accepted(socket, info, context, taken).await,
                    // The evicted connection did not close in time.
                    _ => {
                        context.metrics.record_connection_refused();
                        refuse(socket, &answer).await;
                    }
                }
            });
            return;
        }
        // Every connection is busy.
        context.metrics.record_connection_refused();
        if let Some(since_last) = self.refusals_log.due() {
            tracing::warn!(
                max_connections = self.max_connections,
                since_last,
                "connection cap reached with every connection busy: refused with 503"
            );
        }
        let answer = self.unavailable();
        match self.refusals.clone().try_acquire_owned() {
            Ok(permit) => {
                tasks.spawn(async move {
                    refuse(socket, &answer).await;
                    drop(permit);
                });
            }
            // Too many refusals under way: the answer without the lingering
            // close (the send buffer of a new socket takes it whole).
            Err(_) => try_write(socket, &answer),
        }
    }
    /// The `503` of a refusal, dated now.
    fn unavailable(&mut self) -> Vec<u8> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut answer = Vec::with_capacity(160);
        // Cannot fail: a `Vec` has room, and the cached date is a valid value.
        let _ = write_unavailable_response(&mut answer, RETRY_AFTER_SECS, self.date.update(now));
        answer
    }
}

/// Writes what `socket` takes of `answer` at once, without waiting, and
/// drops it.
fn try_write<T: AsyncWrite + Unpin>(mut socket: T, answer: &[u8]) {
    let mut cx = Context::from_waker(Waker::noop());
    let _ = Pin::new(&mut socket).poll_write(&mut cx, answer);
}

/// A rate limit for a log line that may repeat at every accept (accept
/// errors at file-descriptor exhaustion, evictions and refusals at the
/// cap).
#[derive(Default)]
pub(super) struct Throttle {
    last: Option<std::time::Instant>,
    suppressed: u64,
}

impl Throttle {
    /// `Some(n)` when the line is due, with the `n` occurrences left out
    /// since the last one; `None` within the period.
    pub(super) fn due(&mut self) -> Option<u64> {
        let now = std::time::Instant::now();
        if self
            .last
            .is_some_and(|at| now.duration_since(at) < LOG_PERIOD)
        {
            self.suppressed += 1;
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.suppressed))
    }
}
