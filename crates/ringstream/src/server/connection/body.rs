//! Phase 2, the request body: fed to the service one read block at a time,
//! only when the body asks, under the body's deadlines.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use ringstream_core::h1::{BodyState, Decoder, Exchange};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::{sleep_until, Sleep};

use crate::body::{poll_body, BodyPiece, BodySender, Incoming};
use crate::error::{Error, Timeout};
use crate::server::config::Config;
use crate::stream::Stream;

/// The request-body side of one exchange.
pub(super) struct BodyPump {
    sender: Option<BodySender>,
    pub(super) decoder: Decoder,
    /// The body has been read to its end.
    pub(super) complete: bool,
    /// The per-read body timeout, made on the first read that waits.
    timer: Option<Pin<Box<Sleep>>>,
    timer_armed: bool,
    timeout: std::time::Duration,
    /// The slowest transfer allowed (bytes per second; 0: none), and what
    /// it is measured over: when the first read of the body began, and
    /// the body bytes received since.
    min_rate: u64,
    started: Option<tokio::time::Instant>,
    received: u64,
    /// The whole body's deadline, counted from `started`.
    total: Option<std::time::Duration>,
}

/// A failure of the request body (framing, timeout, I/O) that ends the
/// connection.
pub(super) struct BodyFailure(pub(super) Error);

impl BodyPump {
    /// The pump that feeds the request body of `exchange`; the body itself
    /// is then taken with [`body`](Self::body).
    pub(super) fn new(exchange: &Exchange, config: &Config) -> BodyPump {
        BodyPump {
            sender: None,
            decoder: exchange.decoder(config.limits),
            complete: exchange.body_framing().is_empty(),
            timer: None,
            timer_armed: false,
            timeout: config.body_read_timeout,
            min_rate: config.body_min_rate,
            started: None,
            received: 0,
            total: config.body_timeout,
        }
    }

    /// The request body of `exchange`, for the service (once).
    pub(super) fn body(&mut self, exchange: &Exchange) -> Incoming {
        if self.complete {
            return Incoming::empty();
        }
        let (sender, shared) = BodySender::new();
        self.sender = Some(sender);
        Incoming::channel(shared, exchange.body_framing().length())
    }

    /// What became of the body, for the connection rules.
    pub(super) fn state(&self) -> BodyState {
        if self.complete {
            return BodyState::Complete;
        }
        BodyState::Unread {
            held: self.sender.as_ref().is_some_and(|s| !s.shared.is_dropped()),
            remaining: self.decoder.remaining_hint(),
        }
    }

    /// Stop feeding the body (the service is done with it).
    pub(super) fn disconnect(&mut self) {
        self.sender = None;
    }

    /// Feed the request body if it asked for data. `Ok(true)`: something was
    /// handed over (poll the service again).
    #[inline]
    pub(super) fn poll<T>(
        &mut self,
        stream: &mut Stream<T>,
        exchange: &mut Exchange,
        cx: &mut Context<'_>,
    ) -> Result<bool, BodyFailure>
    where
        T: AsyncRead + AsyncWrite + Unpin,
    {
        // No body, or the service is done with it: nothing to feed (the
        // common case, checked first, where the pump is polled).
        if self.sender.is_none() {
            return Ok(false);
        }
        self.feed(stream, exchange, cx)
    }

    /// [`poll`](Self::poll) with a body to feed.
    fn feed<T>(
        &mut self,
        stream: &mut Stream<T>,
        exchange: &mut Exchange,
        cx: &mut Context<'_>,
    ) -> Result<bool, BodyFailure>
    where
        T: AsyncRead + AsyncWrite + Unpin,
    {
        if self.total.is_some() {
            if let Some(failure) = self.past_total() {
                return Err(failure);
            }
        }
        let Some(sender) = &self.sender else {
            return Ok(false);
        };
        if sender.shared.is_dropped() || !sender.shared.poll_wanted(cx) {
            return Ok(false);
        }
        if let Some(invitation) = exchange.body_wanted() {
            stream.buffer_write(invitation);
        }
        if (self.min_rate > 0 || self.total.is_some()) && self.started.is_none() {
            self.started = Some(tokio::time::Instant::now());
        }
        match poll_body(stream, &mut self.decoder, cx) {
            Poll::Pending => self.poll_timeout(cx),
            Poll::Ready(Ok(piece)) => {
                self.timer_armed = false;
                if let BodyPiece::Data(data) = &piece {
                    self.received += data.len() as u64;
                }
                let end = matches!(piece, BodyPiece::End(_));
                sender.shared.put_from(Ok(piece), cx);
                if end {
                    self.complete = true;
                    self.sender = None;
                }
                Ok(true)
            }
            Poll::Ready(Err(e)) => {
                sender.shared.put(Err(copy_error(&e)));
                self.sender = None;
                Err(BodyFailure(e))
            }
        }
    }

    /// No body bytes yet: arm the per-read timeout, and fail the body when
    /// it has run out or when the body as a whole is slower than the
    /// minimum rate allows.
    fn poll_timeout(&mut self, cx: &mut Context<'_>) -> Result<bool, BodyFailure> {
        let now = tokio::time::Instant::now();
        let started = *self.started.get_or_insert(now);
        let mut deadline = now + self.timeout;
        let mut why = Timeout::RequestBodyRead;
        if let Some(allowed) = self.rate_deadline(started) {
            if allowed < deadline {
                deadline = allowed;
                why = Timeout::RequestBodyRate;
            }
        }
        if let Some(allowed) = self.total.and_then(|total| started.checked_add(total)) {
            if allowed < deadline {
                deadline = allowed;
                why = Timeout::RequestBodyTotal;
            }
        }
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(sleep_until(deadline)));
        if !self.timer_armed || why != Timeout::RequestBodyRead {
            timer.as_mut().reset(deadline);
            self.timer_armed = true;
        }
        if timer.as_mut().poll(cx).is_pending() {
            return Ok(false);
        }
        if let Some(sender) = self.sender.take() {
            sender.shared.put(Err(Error::TimedOut(why)));
        }
        Err(BodyFailure(Error::TimedOut(why)))
    }

    /// The body's failure once it has taken longer than
    /// [`Config::body_timeout`], however fast its bytes come (checked
    /// before each read, only when set).
    fn past_total(&mut self) -> Option<BodyFailure> {
        let (total, started) = (self.total?, self.started?);
        self.sender.as_ref()?;
        if tokio::time::Instant::now().saturating_duration_since(started) < total {
            return None;
        }
        if let Some(sender) = self.sender.take() {
            sender
                .shared
                .put(Err(Error::TimedOut(Timeout::RequestBodyTotal)));
        }
        Some(BodyFailure(Error::TimedOut(Timeout::RequestBodyTotal)))
    }

    /// When the body has taken longer than the minimum rate allows (as
    /// Apache's `mod_reqtimeout`: the read timeout to begin with, plus one
    /// second for every `min_rate` bytes received).
    fn rate_deadline(&self, started: tokio::time::Instant) -> Option<tokio::time::Instant> {
        if self.min_rate == 0 {
            return None;
        }
        let earned =
            std::time::Duration::from_secs_f64(self.received as f64 / self.min_rate as f64);
        started.checked_add(self.timeout)?.checked_add(earned)
    }
}

/// A copy of a body error for the second party that must hear of it.
fn copy_error(e: &Error) -> Error {
    match e {
        Error::Io(io) => Error::Io(io::Error::new(io.kind(), io.to_string())),
        Error::Protocol(p) => Error::Protocol(*p),
        Error::TimedOut(which) => Error::TimedOut(*which),
        Error::Closed => Error::Closed,
        Error::User(u) => Error::User(u.to_string().into()),
        e @ Error::NotBuffered { .. } => Error::Io(io::Error::new(e.kind(), e.to_string())),
        #[cfg(feature = "tls")]
        e @ Error::Tls(_) => Error::Io(io::Error::new(e.kind(), e.to_string())),
        #[cfg(feature = "http2")]
        e @ Error::Http2(_) => Error::Io(io::Error::new(e.kind(), e.to_string())),
        Error::BodyTooLarge { limit } => Error::BodyTooLarge { limit: *limit },
        Error::WebSocket(e) => Error::WebSocket(*e),
    }
}
