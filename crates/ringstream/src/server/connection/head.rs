//! Phase 1, bytes in → request: wait for bytes under the idle and head
//! deadlines, ask the core whether they form a head, and turn it into an
//! `http::Request` that shares the head bytes.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Uri};
#[cfg(feature = "http2")]
use ringstream_core::h1::http2_preface;
use ringstream_core::h1::{Exchange, Field, HeadParser, Http2Preface, Version, MAX_FIELDS};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::{sleep_until, Sleep};

use super::field_names;
use super::reuse::{self, Span};
use crate::server::addr::ConnectionInfo;
use crate::server::config::Config;
use crate::server::stop::StopSignal;
use crate::stream::Stream;

/// Header fields parsed into storage on the stack; a request with more
/// (up to the configured limit) is parsed again into storage of its size.
const FIELD_SLOTS: usize = 24;

/// The request head, as offsets into the head bytes (so the buffer borrow
/// ends before the head is split off the stream), and the exchange it
/// starts.
pub(super) struct HeadSpans {
    pub(super) method: Span,
    pub(super) target: Span,
    pub(super) exchange: Exchange,
    pub(super) head_len: usize,
}

/// Why no request could be read.
pub(super) enum HeadOutcome {
    /// The peer closed, went idle, or the server is shutting down.
    Closed,
    /// The connection was idle and its slot went to a new client.
    Evicted,
    /// The head broke the rules: answer with this status and close; the
    /// reason goes to the log.
    Reject(u16, &'static str),
    /// The connection's first bytes are the HTTP/2 preface: it speaks
    /// HTTP/2 from here on.
    #[cfg(feature = "http2")]
    Http2,
}

/// What a connection keeps to read request heads: the core's parser, the
/// list its fields are noted in, and the idle and head deadline.
pub(super) struct HeadReader {
    parser: HeadParser,
    fields: Vec<(Span, Span)>,
    /// The idle and head-read deadline of this connection.
    timer: Pin<Box<Sleep>>,
    /// The timer has been polled since it was last reset: it holds this
    /// task's waker and wakes it when it fires, so until then it is not
    /// polled again (see [`HeadReader::poll_timer`]).
    timer_polled: bool,
    /// When the idle deadline was last pushed back, in milliseconds since
    /// the Unix epoch (from the clock reading that dated a response); 0
    /// when the timer holds another deadline.
    idle_pushed_millis: u64,
    /// No request has been read yet: the first one is awaited under the
    /// head deadline set at the start.
    awaiting_first: bool,
    /// An eighth of the idle timeout, in milliseconds: how far the idle
    /// deadline may drift before it is pushed back.
    idle_eighth_millis: u64,
    /// Bytes of the head being read have come.
    head_started: bool,
    /// The slot is marked idle (a new connection's starts so).
    marked_idle: bool,
    /// The last poll waited for bytes, having looked at those buffered.
    waiting: bool,
}

impl HeadReader {
    pub(super) fn new(config: &Config) -> HeadReader {
        HeadReader {
            parser: HeadParser::new(config.limits),
            fields: Vec::new(),
            timer: Box::pin(sleep_until(tokio::time::Instant::now())),
            timer_polled: false,
            idle_pushed_millis: 0,
            awaiting_first: true,
            idle_eighth_millis: u64::try_from((config.idle_timeout / 8).as_millis())
                .unwrap_or(u64::MAX),
            head_started: false,
            marked_idle: true,
            waiting: false,
        }
    }

    /// A new connection is given the head timeout, not the idle timeout,
    /// to send its first request: a socket that connects and stays
    /// silent holds a slot no longer than a slow head would.
    pub(super) fn await_first(&mut self, config: &Config) {
        let first_deadline = tokio::time::Instant::now() + config.head_timeout;
        self.reset_timer(first_deadline);
        self.awaiting_first = true;
    }

    /// Starts reading the next request head with
    /// [`poll_read`](Self::poll_read).
    pub(super) fn start(&mut self) {
        self.parser.reset();
        self.head_started = false;
        // A new connection's slot starts marked idle.
        self.marked_idle = self.awaiting_first;
        self.waiting = false;
    }

    /// Read and validate the next request head from `stream` (after
    /// [`start`](Self::start)); between requests the connection's slot is
    /// marked idle since `idle_since` (milliseconds since the Unix epoch).
    /// A poll function rather than a future: a keep-alive connection makes
    /// no future of its own per request, and what it remembers between
    /// polls lives here.
    pub(super) fn poll_read<T>(
        &mut self,
        cx: &mut std::task::Context<'_>,
        stream: &mut Stream<T>,
        shutdown: &mut StopSignal,
        config: &Config,
        idle_since: u64,
    ) -> Poll<Result<HeadSpans, HeadOutcome>>
    where
        T: AsyncRead + AsyncWrite + Unpin,
    {
        loop {
            // Polled again after it waited: the buffered bytes are those it
            // has looked at already.
            if !std::mem::take(&mut self.waiting) {
                if let Some(done) = self.look(stream, shutdown, config, idle_since) {
                    return Poll::Ready(done);
                }
            }
            let idle = !self.head_started;
            // Bytes first; then the deadline, and while idle the stop.
            let read = match stream.poll_fill_releasing(cx) {
                Poll::Ready(read) => read,
                Poll::Pending => {
                    if self.poll_timer(cx).is_ready() {
                        return Poll::Ready(Err(if idle {
                            HeadOutcome::Closed
                        } else {
                            HeadOutcome::Reject(408, "request head timed out")
                        }));
                    }
                    if idle && shutdown.poll_stopping(cx).is_ready() {
                        return Poll::Ready(Err(if shutdown.slot().is_evicted() {
                            HeadOutcome::Evicted
                        } else {
                            HeadOutcome::Closed
                        }));
                    }
                    self.waiting = true;
                    return Poll::Pending;
                }
            };
            match read {
                // EOF: between requests that is a normal close; inside a
                // head it is an incomplete request.
                Ok(0) if stream.buffered().is_empty() => {
                    return Poll::Ready(Err(HeadOutcome::Closed))
                }
                Ok(0) => {
                    return Poll::Ready(Err(HeadOutcome::Reject(
                        400,
                        "connection closed within a request head",
                    )))
                }
                Ok(_) => {
                    // The slot may have been evicted just before the bytes
                    // came: its place is promised to another client.
                    if self.marked_idle {
                        self.marked_idle = false;
                        if !shutdown.slot().set_busy() {
                            return Poll::Ready(Err(HeadOutcome::Evicted));
                        }
                    }
                }
                Err(_) => return Poll::Ready(Err(HeadOutcome::Closed)),
            }
        }
    }

    /// Looks at the buffered bytes before a read: a whole head (or the
    /// HTTP/2 preface, or a head that breaks the rules) ends the read;
    /// otherwise the deadline that applies to the wait is set and, between
    /// requests, the slot is marked idle.
    fn look<T>(
        &mut self,
        stream: &Stream<T>,
        shutdown: &StopSignal,
        config: &Config,
        idle_since: u64,
    ) -> Option<Result<HeadSpans, HeadOutcome>>
    where
        T: AsyncRead + AsyncWrite + Unpin,
    {
        if !stream.buffered().is_empty() {
            #[cfg(feature = "http2")]
            let http2 = self.http2_preface(stream.buffered(), config);
            #[cfg(not(feature = "http2"))]
            let http2 = Http2Preface::Absent;
            if http2 == Http2Preface::Whole {
                #[cfg(feature = "http2")]
                return Some(Err(HeadOutcome::Http2));
            }
            if http2 == Http2Preface::Invalid {
                return Some(Err(HeadOutcome::Closed));
            }
            if http2 == Http2Preface::Absent {
                match self.try_parse(stream) {
                    Ok(Some(spans)) => {
                        self.awaiting_first = false;
                        return Some(Ok(spans));
                    }
                    Ok(None) => {}
                    Err(outcome) => return Some(Err(outcome)),
                }
            }
            // Part of a head: from now on the head timeout applies
            // (set only here, so a head that arrives whole costs no
            // timer update).
            // The first request of a connection keeps the deadline
            // counted from the accept.
            if !self.head_started {
                self.head_started = true;
                if !self.awaiting_first {
                    let deadline = tokio::time::Instant::now() + config.head_timeout;
                    self.reset_timer(deadline);
                }
            }
        }
        if !self.head_started && !self.awaiting_first {
            self.push_back_idle_deadline(config, idle_since);
            if !self.marked_idle {
                self.marked_idle = true;
                shutdown.slot().set_idle(idle_since);
            }
        }
        None
    }

    /// Whether a connection's first bytes are the HTTP/2 preface (a
    /// client speaking `h2c` with prior knowledge), when the server speaks
    /// HTTP/2; on a later request they never are.
    #[cfg(feature = "http2")]
    fn http2_preface(&self, buffered: &[u8], config: &Config) -> Http2Preface {
        if self.awaiting_first && config.http2.enabled {
            http2_preface(buffered)
        } else {
            Http2Preface::Absent
        }
    }

    /// The idle timer is coarse: it is pushed back only once it has drifted
    /// by an eighth of the timeout, so a busy keep-alive connection rarely
    /// touches the timer wheel (or even reads the clock: `dated_millis`,
    /// when the last response was dated, tells whether an eighth may have
    /// passed). An idle connection is closed after 7/8 to 8/8 of the
    /// timeout.
    #[inline]
    fn push_back_idle_deadline(&mut self, config: &Config, dated_millis: u64) {
        let since_push = dated_millis.wrapping_sub(self.idle_pushed_millis);
        if self.idle_pushed_millis != 0 && since_push < self.idle_eighth_millis {
            return;
        }
        self.push_back_idle_deadline_now(config, dated_millis);
    }

    /// [`push_back_idle_deadline`](Self::push_back_idle_deadline) once an
    /// eighth may have passed.
    #[inline(never)]
    fn push_back_idle_deadline_now(&mut self, config: &Config, dated_millis: u64) {
        let idle_timeout = config.idle_timeout;
        let eighth = idle_timeout / 8;
        let now = tokio::time::Instant::now();
        let wanted = now + idle_timeout;
        let current = self.timer.deadline();
        if current + eighth < wanted || current > wanted {
            self.reset_timer(wanted);
            self.idle_pushed_millis = dated_millis;
        }
    }

    /// Sets the deadline (which then no longer counts as the idle one).
    fn reset_timer(&mut self, deadline: tokio::time::Instant) {
        self.timer.as_mut().reset(deadline);
        self.timer_polled = false;
        self.idle_pushed_millis = 0;
    }

    /// Polls the deadline only when it may have changed: after a reset (so
    /// that it holds this task's waker) or once it has fired. Between the
    /// two, the timer wakes the task by itself, and a wake-up for the
    /// socket costs no timer poll.
    #[inline]
    fn poll_timer(&mut self, cx: &mut std::task::Context<'_>) -> Poll<()> {
        if self.timer_polled && !self.timer.is_elapsed() {
            return Poll::Pending;
        }
        self.poll_timer_now(cx)
    }

    /// [`poll_timer`](Self::poll_timer) after a reset or once it fired.
    #[inline(never)]
    fn poll_timer_now(&mut self, cx: &mut std::task::Context<'_>) -> Poll<()> {
        self.timer_polled = true;
        self.timer.as_mut().poll(cx)
    }

    fn try_parse<T>(&mut self, stream: &Stream<T>) -> Result<Option<HeadSpans>, HeadOutcome>
    where
        T: AsyncRead + AsyncWrite + Unpin,
    {
        let buf = stream.buffered();
        let base = buf.as_ptr() as usize;
        let span = |s: &[u8]| (s.as_ptr() as usize - base, s.len());
        // Most requests fit the small array on the stack; a head with more
        // fields (up to the limit) is parsed again into storage of its size.
        let mut slots = [Field::EMPTY; FIELD_SLOTS];
        let mut more = Vec::new();
        let parsed = match self.parser.parse(buf, &mut slots) {
            Err(ringstream_core::Error::TooManyFields)
                if self.parser.field_lines() > FIELD_SLOTS
                    && self.parser.field_lines()
                        <= self.parser.limits().max_fields.min(MAX_FIELDS) =>
            {
                more.resize(self.parser.field_lines(), Field::EMPTY);
                self.parser.parse(buf, &mut more)
            }
            parsed => parsed,
        };
        let head = match parsed {
            Ok(Some(head)) => head,
            Ok(None) => return Ok(None),
            Err(e) => return Err(HeadOutcome::Reject(e.status(), e.as_str())),
        };
        let fields = if more.is_empty() {
            &slots[..]
        } else {
            &more[..]
        };
        if self.fields.capacity() == 0 {
            self.fields = reuse::take_fields();
        }
        self.fields.clear();
        // One reservation for all (the slice's length is known), not a
        // capacity check per field.
        self.fields.extend(
            head.fields(fields)
                .iter()
                .map(|field| (span(field.name.as_bytes()), span(field.value))),
        );
        Ok(Some(HeadSpans {
            method: span(head.method.as_bytes()),
            target: span(head.target.as_bytes()),
            exchange: Exchange::new(&head),
            head_len: head.head_len,
        }))
    }

    /// Turn the head bytes into the parts of `request` (made with its body
    /// by the caller, so that it is built where it stays and not moved
    /// once more), sharing them (the target and the field values are
    /// slices of the head, not copies); `info` goes into its extensions.
    pub(super) fn build_request<B>(
        &mut self,
        spans: &HeadSpans,
        head: &Bytes,
        info: Option<&ConnectionInfo>,
        request: &mut Request<B>,
    ) -> Result<(), (u16, &'static str)> {
        let bytes = |(at, len): Span| head.get(at..at + len).unwrap_or_default();
        let shared = |(at, len): Span| head.slice(at..at + len);
        *request.method_mut() =
            Method::from_bytes(bytes(spans.method)).map_err(|_| (400, "invalid method"))?;
        *request.uri_mut() = Uri::from_maybe_shared(shared(spans.target))
            .map_err(|_| (400, "invalid request target"))?;
        *request.version_mut() = match spans.exchange.version() {
            Version::Http10 => http::Version::HTTP_10,
            Version::Http11 => http::Version::HTTP_11,
        };
        // The fields go straight into the request's own (empty) map, or a
        // kept one put in its place.
        let headers = request.headers_mut();
        reuse::make_room(headers, self.fields.len());
        for &(name, value) in &self.fields {
            let name =
                field_names::header_name(bytes(name)).map_err(|_| (400, "invalid field name"))?;
            // SAFETY: `from_maybe_shared_unchecked` requires bytes that
            // `HeaderValue` allows: HTAB, and every byte from SP up but DEL.
            // The core's head parser gives out no field value holding any
            // other byte (a control byte other than HTAB, or DEL, fails the
            // head: `ringstream_core::h1::Field`'s contract, checked by the
            // core's parser tests and by `every_byte_in_a_field_value_is_
            // refused_or_kept_as_sent` in tests/integration/server_errors.rs), and these
            // spans are the parser's fields. (Debug builds check it again.)
            let value = unsafe { HeaderValue::from_maybe_shared_unchecked(shared(value)) };
            headers.append(name, value);
        }
        // The spans go back to the thread once read: a connection that
        // waits for its next request holds none.
        reuse::give_fields(std::mem::take(&mut self.fields));
        if let Some(info) = info {
            insert_info(request.extensions_mut(), info);
        }
        Ok(())
    }
}

/// Gives a request the ends of its connection: ringstream's
/// [`ConnectionInfo`], and with the `axum` feature axum's
/// `ConnectInfo<SocketAddr>` for TCP.
fn insert_info(extensions: &mut http::Extensions, info: &ConnectionInfo) {
    #[cfg(feature = "axum")]
    if let Some(remote) = info.remote_addr().socket_addr() {
        extensions.insert(axum::extract::ConnectInfo(remote));
    }
    extensions.insert(info.clone());
}
