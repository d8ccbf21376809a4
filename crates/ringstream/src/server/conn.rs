//! One HTTP/1.1 connection: head → body → service → encode → keep-alive.
//!
//! The connection never parses bytes itself: it asks the core
//! ([`ringstream_core::h1`]) what the bytes mean, and moves them. Requests
//! are served strictly one after another, so pipelined responses go out in
//! request order; while a service runs, the connection feeds its request
//! body (one read block at a time, only when the body asks for more) and,
//! once the response has started, writes the response body with vectored
//! writes that never copy its `Bytes`.

use std::future::{poll_fn, Future};
use std::io::{self, IoSlice};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use bytes::{Buf, Bytes};
use http::header::{CONNECTION, CONTENT_LENGTH, TRANSFER_ENCODING};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Response, Uri};
use http_body::Body;
use ringstream_core::h1::{
    response_framing, write_response_head, BodyFraming, ChunkedEncoder, DateCache, Decoder, Field,
    HeadParser, LengthEncoder, ResponseFraming, Version, MAX_FIELDS,
};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;
use tokio::time::{sleep_until, timeout_at, Sleep};
use tower_service::Service;

use super::metrics::Metrics;
use super::stop::StopSignal;
use super::Config;
use crate::body::{poll_body, BodySender, Incoming, Pulled, Shared};
use crate::error::{BoxError, Error};
use crate::stream::Stream;

/// How long a closing connection keeps reading what the client still sends.
const LINGER_TIME: std::time::Duration = std::time::Duration::from_secs(2);

/// Response body frames up to this size (bytes) are copied into the write
/// buffer and coalesced; larger ones go out as vectored writes of their own
/// `Bytes`, never copied.
const SMALL_FRAME: usize = 4 * 1024;

/// Room made in the write buffer for a response head before it is written
/// (more is made as needed).
const HEAD_ROOM: usize = 256;

/// Header fields parsed into storage on the stack; a request with more
/// (up to the configured limit) is parsed again into storage of its size.
const FIELD_SLOTS: usize = 24;

/// Largest capacity of a response's field map kept for the next request's
/// fields: a response with hundreds of fields does not pin its map.
const SPARE_HEADERS_CAPACITY: usize = 64;

/// Where a piece of the request head lies within the head bytes.
type Span = (usize, usize);

/// The request head, as offsets into the head bytes (so the buffer borrow
/// ends before the head is split off the stream).
struct HeadSpans {
    method: Span,
    target: Span,
    version: Version,
    framing: BodyFraming,
    keep_alive: bool,
    expect_continue: bool,
    head_len: usize,
}

/// Why no request could be read.
enum HeadOutcome {
    /// The peer closed, went idle, or the server is shutting down.
    Closed,
    /// The head broke the rules: answer with this status and close; the
    /// reason goes to the log.
    Reject(u16, &'static str),
}

/// The request-body side of one exchange.
struct BodyPump {
    sender: Option<BodySender>,
    decoder: Decoder,
    /// `Expect: 100-continue` was asked and `100 Continue` not yet sent.
    continue_due: bool,
    /// The body has been read to its end.
    complete: bool,
    /// The per-read body timeout, made on the first read that waits.
    timer: Option<Pin<Box<Sleep>>>,
    timer_armed: bool,
    timeout: std::time::Duration,
}

/// A failure of the request body (framing, timeout, I/O) that ends the
/// connection.
struct BodyFailure(Error);

pub(crate) struct Connection<T, S> {
    stream: Stream<T>,
    service: S,
    config: Arc<Config>,
    metrics: Arc<Metrics>,
    shutdown: StopSignal,
    parser: HeadParser,
    fields: Vec<(Span, Span)>,
    date: DateCache,
    /// The idle and head-read deadline of this connection.
    timer: Pin<Box<Sleep>>,
    /// The last response's (emptied) field map, kept to hold the next
    /// request's fields: one allocation and one free less per request.
    spare_headers: Option<HeaderMap>,
}

impl<T, S, B> Connection<T, S>
where
    T: AsyncRead + AsyncWrite + Unpin,
    S: Service<Request<Incoming>, Response = Response<B>>,
    S::Error: Into<BoxError>,
    B: Body,
    B::Error: Into<BoxError>,
{
    pub(crate) fn new(
        io: T,
        service: S,
        config: Arc<Config>,
        metrics: Arc<Metrics>,
        shutdown: watch::Receiver<bool>,
    ) -> Self {
        Connection {
            stream: Stream::with_options(io, config.stream.clone()),
            service,
            parser: HeadParser::new(config.limits),
            config,
            metrics,
            shutdown: StopSignal::new(shutdown),
            fields: Vec::new(),
            date: DateCache::new(),
            timer: Box::pin(sleep_until(tokio::time::Instant::now())),
            spare_headers: None,
        }
    }

    /// Serve requests until the peer closes, an error ends the connection,
    /// or the server shuts down.
    pub(crate) async fn run(mut self) -> Result<(), Error> {
        loop {
            let spans = match self.read_head().await {
                Ok(spans) => spans,
                Err(HeadOutcome::Closed) => break,
                Err(HeadOutcome::Reject(status, why)) => {
                    self.reject(status, &why).await;
                    break;
                }
            };
            self.metrics.record_request();
            match self.exchange(spans).await {
                Ok(true) => continue,
                Ok(false) => break,
                Err(e) => {
                    let _ = self.stream.close().await;
                    return Err(e);
                }
            }
        }
        self.linger_close().await;
        Ok(())
    }

    /// Close without destroying the last response: shut down our write
    /// half, then read and discard what the client may still be sending
    /// (bounded in bytes and time) before closing. Closing a socket with
    /// unread data makes the kernel send a reset, which can discard a
    /// response the client has not read yet.
    async fn linger_close(&mut self) {
        /// Most bytes read and dropped while lingering.
        const LINGER_BYTES: usize = 1 << 20;
        if self.stream.close_write().await.is_ok() {
            let deadline = tokio::time::Instant::now() + LINGER_TIME;
            let stream = &mut self.stream;
            let _ = timeout_at(deadline, async {
                let mut discarded = 0usize;
                while discarded < LINGER_BYTES {
                    let pending = stream.buffered().len();
                    stream.consume(pending);
                    discarded += pending;
                    match stream.fill().await {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {}
                    }
                }
            })
            .await;
        }
        let _ = self.stream.close().await;
    }

    /// Read and validate the next request head.
    async fn read_head(&mut self) -> Result<HeadSpans, HeadOutcome> {
        self.parser.reset();
        let mut head_started = false;
        loop {
            if !self.stream.buffered().is_empty() {
                if let Some(spans) = self.try_parse_head()? {
                    return Ok(spans);
                }
                // Part of a head: from now on the head timeout applies
                // (set only here, so a head that arrives whole costs no
                // timer update).
                if !head_started {
                    head_started = true;
                    let deadline = tokio::time::Instant::now() + self.config.head_timeout;
                    self.timer.as_mut().reset(deadline);
                }
            }
            let idle = !head_started;
            if idle {
                // The idle timer is coarse: it is pushed back only once it
                // has drifted by an eighth of the timeout, so a busy
                // keep-alive connection rarely touches the timer wheel. An
                // idle connection is closed after 7/8 to 8/8 of the timeout.
                let idle_timeout = self.config.idle_timeout;
                let wanted = tokio::time::Instant::now() + idle_timeout;
                let current = self.timer.deadline();
                if current + idle_timeout / 8 < wanted || current > wanted {
                    self.timer.as_mut().reset(wanted);
                }
            }
            let Connection {
                stream,
                timer,
                shutdown,
                ..
            } = self;
            let read = tokio::select! {
                biased;
                read = stream.fill() => read,
                () = timer.as_mut() => {
                    return Err(if idle {
                        HeadOutcome::Closed
                    } else {
                        HeadOutcome::Reject(408, "request head timed out")
                    });
                }
                () = poll_fn(|cx| shutdown.poll_stopping(cx)), if idle => return Err(HeadOutcome::Closed),
            };
            match read {
                Ok(0) => {
                    // EOF: between requests that is a normal close; inside a
                    // head it is an incomplete request.
                    return Err(if self.stream.buffered().is_empty() {
                        HeadOutcome::Closed
                    } else {
                        HeadOutcome::Reject(400, "connection closed within a request head")
                    });
                }
                Ok(_) => continue,
                Err(_) => return Err(HeadOutcome::Closed),
            }
        }
    }

    fn try_parse_head(&mut self) -> Result<Option<HeadSpans>, HeadOutcome> {
        let buf = self.stream.buffered();
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
        self.fields.clear();
        for field in fields.get(..head.field_count).unwrap_or_default() {
            self.fields
                .push((span(field.name.as_bytes()), span(field.value)));
        }
        Ok(Some(HeadSpans {
            method: span(head.method.as_bytes()),
            target: span(head.target.as_bytes()),
            version: head.version,
            framing: head.framing,
            keep_alive: head.keep_alive,
            expect_continue: head.expect_continue,
            head_len: head.head_len,
        }))
    }

    /// Turn the head bytes into an `http::Request`, sharing them (the target
    /// and the field values are slices of the head, not copies).
    fn build_request(
        &mut self,
        spans: &HeadSpans,
        head: &Bytes,
    ) -> Result<Request<()>, (u16, &'static str)> {
        let bytes = |(at, len): Span| head.get(at..at + len).unwrap_or_default();
        let shared = |(at, len): Span| head.slice(at..at + len);
        let method =
            Method::from_bytes(bytes(spans.method)).map_err(|_| (400, "invalid method"))?;
        let uri = Uri::from_maybe_shared(shared(spans.target))
            .map_err(|_| (400, "invalid request target"))?;
        let mut headers = match self.spare_headers.take() {
            Some(mut spare) => {
                spare.reserve(self.fields.len());
                spare
            }
            None => HeaderMap::with_capacity(self.fields.len()),
        };
        for &(name, value) in &self.fields {
            let name =
                HeaderName::from_bytes(bytes(name)).map_err(|_| (400, "invalid field name"))?;
            let value = HeaderValue::from_maybe_shared(shared(value))
                .map_err(|_| (400, "invalid field value"))?;
            headers.append(name, value);
        }
        let mut request = Request::new(());
        *request.method_mut() = method;
        *request.uri_mut() = uri;
        *request.version_mut() = match spans.version {
            Version::Http10 => http::Version::HTTP_10,
            Version::Http11 => http::Version::HTTP_11,
        };
        *request.headers_mut() = headers;
        Ok(request)
    }

    /// Serve one request. `Ok(true)`: the connection may carry another.
    async fn exchange(&mut self, spans: HeadSpans) -> Result<bool, Error> {
        let started = tracing::enabled!(target: "ringstream::access", tracing::Level::INFO)
            .then(Instant::now);
        let head = self.stream.split_buffered(spans.head_len);
        let request = match self.build_request(&spans, &head) {
            Ok(request) => request,
            Err((status, why)) => {
                self.reject(status, &why).await;
                return Ok(false);
            }
        };
        let is_head = request.method() == Method::HEAD;
        // For log lines: the request line as it arrived (the request itself
        // shares these bytes, so keeping them costs nothing).
        let method = Shown(head.get(spans.method.0..spans.method.0 + spans.method.1));
        let uri = Shown(head.get(spans.target.0..spans.target.0 + spans.target.1));

        let (body, mut pump) = self.body_for(&spans);
        let request = request.map(|()| body);

        let ready = poll_fn(|cx| self.service.poll_ready(cx))
            .await
            .map_err(|e| e.into().to_string());
        if let Err(e) = ready {
            tracing::error!(error = %e, "service not ready");
            self.reject(503, &"service not ready").await;
            return Ok(false);
        }
        let future = self.service.call(request);
        let outcome = self.await_response(future, &mut pump).await;
        let response = match outcome {
            Ok(Ok(response)) => response,
            Ok(Err(e)) => {
                tracing::error!(%method, %uri, error = %e, "service failed");
                self.reject(500, &"service failed").await;
                return Ok(false);
            }
            Err(Settled::Panicked) => {
                tracing::error!(%method, %uri, "service panicked");
                self.reject(500, &"service panicked").await;
                return Ok(false);
            }
            Err(Settled::BodyFailed(BodyFailure(e))) => {
                tracing::debug!(%method, %uri, error = %e, "request body failed");
                if let Some(status) = e.status() {
                    self.reject(status, &e).await;
                }
                return Ok(false);
            }
        };

        let (parts, body) = response.into_parts();
        let status = parts.status.as_u16();
        let mut keep_alive = spans.keep_alive && !self.shutdown.is_stopping();
        if connection_has_close(&parts.headers) {
            keep_alive = false;
        }
        let known_length = declared_length(&parts.headers, &body);
        let framing = response_framing(is_head, status, spans.version, known_length);
        if matches!(framing, ResponseFraming::CloseDelimited) {
            keep_alive = false;
        }
        // `Expect: 100-continue` with the body not yet asked for: if the
        // service still holds the body (it may stream it, as an echo does),
        // invite it now, since no interim response may follow the final
        // head. Otherwise the client was never invited and may or may not
        // send it: do not reuse the connection.
        // The service dropped the body unread and more of it is announced
        // than will be drained: say now that the connection will close.
        if pump.sender.as_ref().is_some_and(|s| s.shared.is_dropped())
            && pump
                .decoder
                .remaining_hint()
                .is_some_and(|n| n > self.config.drain_limit)
        {
            keep_alive = false;
        }
        if pump.continue_due {
            if pump.sender.as_ref().is_some_and(|s| !s.shared.is_dropped()) {
                self.stream.buffer_write(b"HTTP/1.1 100 Continue\r\n\r\n");
                pump.continue_due = false;
            } else {
                keep_alive = false;
            }
        }

        if let Err(e) = self.write_head(status, &parts.headers, framing, spans.version, keep_alive)
        {
            tracing::error!(%method, %uri, status, error = %e, "response head rejected");
            self.reject(500, &"response head rejected").await;
            return Ok(false);
        }
        self.keep_spare_headers(parts.headers);
        self.metrics.record_status(status);
        let sent = self.write_body(body, framing, &mut pump).await;
        let bytes_sent = match sent {
            Ok(n) => n,
            Err(e) => {
                tracing::info!(%method, %uri, status, error = %e, "response aborted");
                return Err(e);
            }
        };

        if keep_alive && !pump.complete {
            keep_alive = self.drain(&mut pump).await;
        }
        if !keep_alive || self.stream.buffered().is_empty() {
            self.stream.flush().await?;
        }
        tracing::info!(
            target: "ringstream::access",
            %method,
            %uri,
            status,
            bytes = bytes_sent,
            micros = started.map_or(0, |at| at.elapsed().as_micros() as u64),
        );
        Ok(keep_alive)
    }

    fn body_for(&mut self, spans: &HeadSpans) -> (Incoming, BodyPump) {
        let (decoder, length) = match spans.framing {
            BodyFraming::None => (Decoder::length(0), Some(0)),
            BodyFraming::Length(n) => (Decoder::length(n), Some(n)),
            BodyFraming::Chunked => (Decoder::chunked(self.config.limits), None),
        };
        let mut pump = BodyPump {
            sender: None,
            decoder,
            continue_due: spans.expect_continue,
            complete: spans.framing.is_empty(),
            timer: None,
            timer_armed: false,
            timeout: self.config.body_read_timeout,
        };
        if pump.complete {
            pump.continue_due = false;
            return (Incoming::empty(), pump);
        }
        let shared = Arc::new(Shared::default());
        pump.sender = Some(BodySender {
            shared: shared.clone(),
        });
        (Incoming::channel(shared, length), pump)
    }

    /// Run the service future to its response, feeding the request body
    /// while it waits.
    async fn await_response<F, E>(
        &mut self,
        future: F,
        pump: &mut BodyPump,
    ) -> Result<Result<Response<B>, String>, Settled>
    where
        F: Future<Output = Result<Response<B>, E>>,
        E: Into<BoxError>,
    {
        let mut future = pin!(future);
        let stream = &mut self.stream;
        poll_fn(|cx| loop {
            let polled = catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx)));
            match polled {
                Err(_) => return Poll::Ready(Err(Settled::Panicked)),
                Ok(Poll::Ready(Ok(response))) => return Poll::Ready(Ok(Ok(response))),
                Ok(Poll::Ready(Err(e))) => return Poll::Ready(Ok(Err(e.into().to_string()))),
                Ok(Poll::Pending) => {}
            }
            match pump.poll(stream, cx) {
                Err(failure) => return Poll::Ready(Err(Settled::BodyFailed(failure))),
                Ok(true) => continue,
                Ok(false) => return Poll::Pending,
            }
        })
        .await
    }

    fn write_head(
        &mut self,
        status: u16,
        headers: &HeaderMap,
        framing: ResponseFraming,
        version: Version,
        keep_alive: bool,
    ) -> Result<(), ringstream_core::Error> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let date = *self.date.update(now);
        let fields = headers
            .iter()
            .filter(|(name, _)| {
                **name != CONNECTION && **name != CONTENT_LENGTH && **name != TRANSFER_ENCODING
            })
            .map(|(name, value)| (name.as_str().as_bytes(), value.as_bytes()));
        let server: Option<(&[u8], &[u8])> = self
            .config
            .server_header
            .then_some((b"server", b"ringstream"));
        let keep: Option<(&[u8], &[u8])> =
            (keep_alive && version == Version::Http10).then_some((b"connection", b"keep-alive"));
        // Straight into the write buffer; on an error the writer leaves it
        // as it was.
        write_response_head(
            self.stream.write_buffer_for(HEAD_ROOM),
            Version::Http11,
            status,
            None,
            server.into_iter().chain(keep).chain(fields),
            framing,
            &date,
            !keep_alive,
        )
    }

    /// Keep a response's field map, emptied, for the next request's fields
    /// (unless it grew unusually large).
    fn keep_spare_headers(&mut self, mut headers: HeaderMap) {
        if headers.capacity() <= SPARE_HEADERS_CAPACITY {
            headers.clear();
            self.spare_headers = Some(headers);
        }
    }

    /// Write the response body; returns the body bytes sent.
    async fn write_body(
        &mut self,
        body: B,
        framing: ResponseFraming,
        pump: &mut BodyPump,
    ) -> Result<u64, Error> {
        let mut body = pin!(body);
        let mut writer = BodyWriter::new(framing);
        let stream = &mut self.stream;
        let sent = poll_fn(|cx| loop {
            if let Err(BodyFailure(e)) = pump.poll(stream, cx) {
                return Poll::Ready(Err(e));
            }
            if stream.pending_write() >= stream.options().minimum_write_size {
                match stream.poll_flush_buffer(cx) {
                    Poll::Ready(Ok(())) => {}
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(Error::Io(e))),
                    Poll::Pending => return Poll::Pending,
                }
            }
            if let Some(frame) = &mut writer.pending {
                match frame.poll_write(stream, cx) {
                    Poll::Ready(Ok(())) => writer.pending = None,
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(Error::Io(e))),
                    Poll::Pending => return Poll::Pending,
                }
            }
            if writer.done {
                return Poll::Ready(Ok(writer.sent));
            }
            if !writer.sends_body() {
                writer.done = true;
                continue;
            }
            let polled = catch_unwind(AssertUnwindSafe(|| body.as_mut().poll_frame(cx)));
            match polled {
                Err(_) => return Poll::Ready(Err(Error::User("response body panicked".into()))),
                Ok(Poll::Pending) => {
                    // Nothing more yet: let what is written go out.
                    if stream.pending_write() > 0 {
                        if let Poll::Ready(Err(e)) = stream.poll_flush_buffer(cx) {
                            return Poll::Ready(Err(Error::Io(e)));
                        }
                    }
                    return Poll::Pending;
                }
                Ok(Poll::Ready(None)) => {
                    if let Err(e) = writer.finish(stream, None) {
                        return Poll::Ready(Err(e));
                    }
                }
                Ok(Poll::Ready(Some(Err(e)))) => {
                    return Poll::Ready(Err(Error::User(e.into())));
                }
                Ok(Poll::Ready(Some(Ok(frame)))) => match frame.into_data() {
                    Ok(mut data) => {
                        let data = data.copy_to_bytes(data.remaining());
                        if let Err(e) = writer.data(data, stream) {
                            return Poll::Ready(Err(e));
                        }
                    }
                    Err(frame) => {
                        if let Ok(trailers) = frame.into_trailers() {
                            if let Err(e) = writer.finish(stream, Some(&trailers)) {
                                return Poll::Ready(Err(e));
                            }
                        }
                    }
                },
            }
        })
        .await?;
        if writer.close_after {
            self.stream.flush().await?;
        }
        Ok(sent)
    }

    /// Read and discard what the service left unread of the request body, so
    /// the connection can be reused. `false`: it is too long (or broken) and
    /// the connection must close instead.
    async fn drain(&mut self, pump: &mut BodyPump) -> bool {
        pump.sender = None;
        if pump.continue_due {
            return false;
        }
        let limit = self.config.drain_limit;
        let mut drained = 0u64;
        let deadline = tokio::time::Instant::now() + self.config.body_read_timeout;
        let stream = &mut self.stream;
        let decoder = &mut pump.decoder;
        let result = timeout_at(
            deadline,
            poll_fn(|cx| loop {
                match poll_body(stream, decoder, cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Err(_)) => return Poll::Ready(false),
                    Poll::Ready(Ok(Pulled::End(_))) => return Poll::Ready(true),
                    Poll::Ready(Ok(Pulled::Data(data))) => {
                        drained += data.len() as u64;
                        if drained > limit {
                            return Poll::Ready(false);
                        }
                    }
                }
            }),
        )
        .await;
        pump.complete = matches!(result, Ok(true));
        pump.complete
    }

    /// Answer with a bare error status and `Connection: close`; `why` goes
    /// to the access log.
    async fn reject(&mut self, status: u16, why: &(dyn std::fmt::Display + Sync)) {
        self.metrics.record_status(status);
        let reason = http::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("Error");
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let date = *self.date.update(now);
        let body_len = reason.len() + 1;
        let content_type: (&[u8], &[u8]) = (b"content-type", b"text/plain; charset=utf-8");
        let out = self.stream.write_buffer_for(HEAD_ROOM);
        let written = write_response_head(
            out,
            Version::Http11,
            status,
            None,
            [content_type],
            ResponseFraming::Length(body_len as u64),
            &date,
            true,
        );
        if written.is_err() {
            return;
        }
        out.extend_from_slice(reason.as_bytes());
        out.push(b'\n');
        let deadline = tokio::time::Instant::now() + self.config.head_timeout;
        let _ = timeout_at(deadline, self.stream.flush()).await;
        tracing::info!(target: "ringstream::access", status, reason = %why, "request rejected");
    }
}

/// Bytes of the request line shown in a log line (lossily, as UTF-8).
struct Shown<'a>(Option<&'a [u8]>);

impl std::fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&String::from_utf8_lossy(self.0.unwrap_or_default()), f)
    }
}

/// How waiting for a response ended other than with one.
enum Settled {
    Panicked,
    BodyFailed(BodyFailure),
}

impl BodyPump {
    /// Feed the request body if it asked for data. `Ok(true)`: something was
    /// handed over (poll the service again).
    fn poll<T>(&mut self, stream: &mut Stream<T>, cx: &mut Context<'_>) -> Result<bool, BodyFailure>
    where
        T: AsyncRead + AsyncWrite + Unpin,
    {
        let Some(sender) = &self.sender else {
            return Ok(false);
        };
        if sender.shared.is_dropped() || !sender.shared.poll_wanted(cx) {
            return Ok(false);
        }
        if self.continue_due {
            stream.buffer_write(b"HTTP/1.1 100 Continue\r\n\r\n");
            self.continue_due = false;
        }
        match poll_body(stream, &mut self.decoder, cx) {
            Poll::Pending => {
                let deadline = tokio::time::Instant::now() + self.timeout;
                let timer = self
                    .timer
                    .get_or_insert_with(|| Box::pin(sleep_until(deadline)));
                if !self.timer_armed {
                    timer.as_mut().reset(deadline);
                    self.timer_armed = true;
                }
                if timer.as_mut().poll(cx).is_ready() {
                    let failure = Error::TimedOut("request body read");
                    sender.shared.put(Err(Error::TimedOut("request body read")));
                    self.sender = None;
                    return Err(BodyFailure(failure));
                }
                Ok(false)
            }
            Poll::Ready(Ok(pulled)) => {
                self.timer_armed = false;
                if let Pulled::End(_) = pulled {
                    self.complete = true;
                    sender.shared.put_from(Ok(pulled), cx);
                    self.sender = None;
                } else {
                    sender.shared.put_from(Ok(pulled), cx);
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
}

/// A copy of a body error for the second party that must hear of it.
fn copy_error(e: &Error) -> Error {
    match e {
        Error::Io(io) => Error::Io(io::Error::new(io.kind(), io.to_string())),
        Error::Protocol(p) => Error::Protocol(*p),
        Error::TimedOut(what) => Error::TimedOut(what),
        Error::Closed => Error::Closed,
        Error::User(u) => Error::User(u.to_string().into()),
        e @ Error::NotBuffered { .. } => Error::Io(io::Error::new(e.kind(), e.to_string())),
    }
}

fn connection_has_close(headers: &HeaderMap) -> bool {
    let has_close = |v: &HeaderValue| {
        v.as_bytes()
            .split(|&b| b == b',')
            .any(|t| t.trim_ascii().eq_ignore_ascii_case(b"close"))
    };
    // A response carries a handful of fields: comparing the standard names
    // is cheaper than hashing for the lookup.
    if headers.len() <= 8 {
        headers
            .iter()
            .any(|(name, value)| *name == CONNECTION && has_close(value))
    } else {
        headers.get_all(CONNECTION).iter().any(has_close)
    }
}

/// The response length: the body's exact size hint, else a valid
/// `Content-Length` the service set.
fn declared_length<B: Body>(headers: &HeaderMap, body: &B) -> Option<u64> {
    if let Some(n) = body.size_hint().exact() {
        return Some(n);
    }
    let value = headers.get(CONTENT_LENGTH)?.to_str().ok()?;
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    value.parse().ok()
}

/// Frames the response body per the chosen framing.
struct BodyWriter {
    framing: ResponseFraming,
    length: Option<LengthEncoder>,
    pending: Option<PendingFrame>,
    done: bool,
    close_after: bool,
    sent: u64,
}

impl BodyWriter {
    fn new(framing: ResponseFraming) -> Self {
        let length = match framing {
            ResponseFraming::Length(n) => Some(LengthEncoder::new(n)),
            _ => None,
        };
        BodyWriter {
            framing,
            length,
            pending: None,
            done: false,
            close_after: matches!(framing, ResponseFraming::CloseDelimited),
            sent: 0,
        }
    }

    fn sends_body(&self) -> bool {
        !matches!(self.framing, ResponseFraming::NoBody { .. })
    }

    /// Take one data frame: a small one is copied into the stream's write
    /// buffer (coalescing many small frames into one write), a large one
    /// is queued to go out as a vectored write of its own `Bytes`.
    fn data<T>(&mut self, data: Bytes, stream: &mut Stream<T>) -> Result<(), Error>
    where
        T: AsyncRead + AsyncWrite + Unpin,
    {
        if data.is_empty() {
            return Ok(());
        }
        if let Some(length) = &mut self.length {
            length.encode(data.len())?;
        }
        self.sent += data.len() as u64;
        let chunked = matches!(self.framing, ResponseFraming::Chunked);
        let prefix = if chunked {
            ChunkedEncoder::new().chunk_prefix(data.len() as u64)
        } else {
            None
        };
        let suffix: &'static [u8] = if chunked { ChunkedEncoder::CRLF } else { b"" };
        if data.len() <= SMALL_FRAME {
            if let Some(prefix) = &prefix {
                stream.buffer_write(prefix.as_bytes());
            }
            stream.buffer_write(&data);
            stream.buffer_write(suffix);
            return Ok(());
        }
        self.pending = Some(PendingFrame {
            prefix,
            data,
            suffix,
            written: 0,
        });
        Ok(())
    }

    fn finish<T>(
        &mut self,
        stream: &mut Stream<T>,
        trailers: Option<&HeaderMap>,
    ) -> Result<(), Error>
    where
        T: AsyncRead + AsyncWrite + Unpin,
    {
        self.done = true;
        match self.framing {
            ResponseFraming::Chunked => {
                let mut end = Vec::new();
                let fields = trailers
                    .into_iter()
                    .flat_map(|t| t.iter())
                    .map(|(n, v)| (n.as_str(), v.as_bytes()));
                ChunkedEncoder::new().last_chunk(fields, &mut end)?;
                stream.buffer_write(&end);
            }
            ResponseFraming::Length(_) => {
                if let Some(length) = &self.length {
                    length.finish()?;
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// One body frame on its way out: chunk prefix, the data untouched, suffix.
struct PendingFrame {
    prefix: Option<ringstream_core::h1::ChunkPrefix>,
    data: Bytes,
    suffix: &'static [u8],
    written: usize,
}

impl PendingFrame {
    fn parts(&self) -> [&[u8]; 3] {
        [
            self.prefix.as_ref().map_or(&[][..], |p| p.as_bytes()),
            &self.data,
            self.suffix,
        ]
    }

    fn poll_write<T>(
        &mut self,
        stream: &mut Stream<T>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<()>>
    where
        T: AsyncRead + AsyncWrite + Unpin,
    {
        loop {
            let mut skip = self.written;
            let mut slices = [IoSlice::new(&[]); 3];
            let mut count = 0;
            for part in self.parts() {
                if skip >= part.len() {
                    skip -= part.len();
                    continue;
                }
                slices[count] = IoSlice::new(&part[skip..]);
                skip = 0;
                count += 1;
            }
            if count == 0 {
                return Poll::Ready(Ok(()));
            }
            let n = std::task::ready!(stream.poll_write_unbuffered(cx, &slices[..count]))?;
            if n == 0 {
                if stream.pending_write() > 0 {
                    continue;
                }
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.written += n;
        }
    }
}
