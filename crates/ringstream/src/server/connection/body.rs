//! Phase 2, the request body: fed to the service one read block at a time,
//! only when the body asks, under the body's deadlines.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use ringstream_core::h1::{BodyState, Decoder, Exchange};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::{sleep_until, Sleep};

use crate::body::{poll_body, BodyDeadlines, BodyPiece, BodySender, Incoming};
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
    /// The per-read, minimum-rate and total deadlines, and what they are
    /// measured over: when the first read of the body began, and the body
    /// bytes received since.
    deadlines: BodyDeadlines,
    started: Option<tokio::time::Instant>,
    received: u64,
}

/// A failure of the request body (framing, timeout, I/O) that ends the
/// connection.
pub(super) struct BodyFailure(pub(super) Error);

impl BodyPump {
    /// The pump that feeds the request body of `exchange`; the body itself
    /// is then taken with [`body`](Self::body).
    #[inline]
    pub(super) fn new(exchange: &Exchange, config: &Config) -> BodyPump {
        BodyPump {
            sender: None,
            decoder: exchange.decoder(config.limits),
            complete: exchange.body_framing().is_empty(),
            timer: None,
            timer_armed: false,
            deadlines: config.body_deadlines(),
            started: None,
            received: 0,
        }
    }

    /// The request body of `exchange`, for the service (once).
    #[inline(always)]
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
        if self.deadlines.total.is_some() {
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
        if self.deadlines.measures_the_whole() && self.started.is_none() {
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
        let (deadline, why) = self.deadlines.next(now, started, self.received);
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
        let started = self.started?;
        self.sender.as_ref()?;
        if !self
            .deadlines
            .past_total(tokio::time::Instant::now(), started)
        {
            return None;
        }
        if let Some(sender) = self.sender.take() {
            sender
                .shared
                .put(Err(Error::TimedOut(Timeout::RequestBodyTotal)));
        }
        Some(BodyFailure(Error::TimedOut(Timeout::RequestBodyTotal)))
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
