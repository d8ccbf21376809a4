//! Server-sent events: `text/event-stream` bodies and a broadcaster that fans
//! events out to many clients with bounded memory.
//!
//! # Pieces
//!
//! - [`Event`] builds one event (`id`, `event`, `data`, `retry`, comments)
//!   and [`Event::encode`] turns it into wire bytes once, as an
//!   [`EncodedEvent`] whose [`Bytes`] are shared, never copied, by every
//!   client that receives it.
//! - [`EventStream`] is an [`http_body::Body`] that yields encoded events and,
//!   when nothing was sent for a while, a keep-alive comment
//!   (`: keep-alive\n\n`, every [`DEFAULT_KEEP_ALIVE`] unless configured), so
//!   that proxies keep the connection open and a vanished client is noticed
//!   by the failing write. [`EventStream::into_response`] (or
//!   [`sse_response`]) wraps it in a response with
//!   `content-type: text/event-stream` and `cache-control: no-cache`.
//! - [`Broadcaster`] fans events out: [`Broadcaster::send`] never blocks and
//!   never waits for any client; [`Broadcaster::subscribe`] gives each client
//!   its own [`EventStream`].
//!
//! # Encoding
//!
//! Every field is written as `name: value\n` (the single space after the
//! colon is what a client strips, so values starting with a space survive),
//! or `name:\n` for an empty value, and an event ends with a blank line.
//! Data containing line breaks becomes several `data:` lines; CR, LF and
//! CRLF all count as line breaks, as in the HTML parser, so the client
//! reassembles the data with LF between the lines. Comments are split the
//! same way into several `:` lines. An `id` or `event` value cannot span
//! lines: [`Event::id`] and [`Event::event`] remove CR and LF (and NUL from
//! ids, which a client would otherwise ignore), while [`Event::try_id`] and
//! [`Event::try_event`] reject such values with [`InvalidField`].
//!
//! # Memory and the overflow policy
//!
//! A [`Broadcaster`] keeps the last `capacity` encoded events in one shared
//! ring, whatever the number of clients. Each client is only a cursor into
//! that ring: the events it has not yet taken are its queue, so a client's
//! queue holds at most `capacity` events, and a client that stops reading
//! costs no memory beyond its cursor (plus what its socket buffers hold).
//! Sending appends to the ring and evicts the oldest event once it is full;
//! it never looks at how far behind a client is.
//!
//! A client falls behind when an event it has not yet taken is evicted. What
//! happens then is the [`OverflowPolicy`]:
//!
//! - [`OverflowPolicy::DropOldest`]: the client skips the evicted events and
//!   carries on with the oldest event still retained. The number skipped is
//!   counted per client ([`SubscriberStats::dropped`]) and in total
//!   ([`Broadcaster::dropped_total`]), and with
//!   [`Broadcaster::with_drop_reports`] the client is told with a comment
//!   `: dropped N events` before the next event.
//! - [`OverflowPolicy::Close`]: the client's stream ends (its response
//!   finishes cleanly), so it can reconnect with `Last-Event-ID` and learn
//!   what it missed. Such closes are counted by
//!   [`Broadcaster::closed_for_lag`].
//!
//! Either way a slow client never holds back the others, and the events it
//! missed are counted from the moment they are evicted, even if its stream
//! is not being polled (because its socket is full).
//!
//! # Reconnection and `Last-Event-ID`
//!
//! A reconnecting browser sends the id of the last event it saw in the
//! `Last-Event-ID` header ([`last_event_id`] reads it). The ring doubles as a
//! bounded history: [`Broadcaster::subscribe`] with that id replays the
//! retained events sent after the event carrying it, then continues live.
//! When the id is not retained (too old, or from before a restart) nothing is
//! replayed and the client receives live events only.
//!
//! # Examples
//!
//! ```
//! use http_body_util::BodyExt;
//! use ringstream::sse::{Broadcaster, Event, OverflowPolicy};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let broadcaster = Broadcaster::new(64, OverflowPolicy::DropOldest);
//! let mut client = broadcaster.subscribe(None);
//! broadcaster.send(Event::new().id("1").event("tick").data("one\ntwo"));
//!
//! let frame = client.frame().await.unwrap().unwrap();
//! assert_eq!(
//!     frame.into_data().unwrap(),
//!     "id: 1\nevent: tick\ndata: one\ndata: two\n\n"
//! );
//! # });
//! ```

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::future::Future as _;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Response};
use http_body::{Body, Frame, SizeHint};
use tokio::sync::mpsc;
use tokio::time::{Instant, Sleep};

/// How long an [`EventStream`] waits without sending anything before it
/// sends a keep-alive comment: 15 seconds.
pub const DEFAULT_KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The keep-alive comment, in wire bytes.
const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// The `Last-Event-ID` request header, as sent by a reconnecting client.
pub const LAST_EVENT_ID: &str = "last-event-id";

/// One server-sent event, built field by field.
///
/// Every field is optional. An event with data is delivered to the client's
/// `onmessage` (or to the listener of its `event` type); an event made only
/// of comments is ignored by clients and serves as a ping.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ringstream::sse::Event;
///
/// let event = Event::new()
///     .id("42")
///     .event("update")
///     .retry(Duration::from_secs(3))
///     .data("line one\r\nline two");
/// assert_eq!(
///     event.encode().bytes(),
///     "id: 42\nevent: update\nretry: 3000\ndata: line one\ndata: line two\n\n"
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    id: Option<String>,
    event: Option<String>,
    data: Option<String>,
    retry: Option<Duration>,
    comments: Vec<String>,
}

/// A field value that cannot be encoded: an `id` or `event` containing a
/// line break (or an `id` containing NUL).
///
/// # Examples
///
/// ```
/// use ringstream::sse::Event;
///
/// let err = Event::new().try_id("a\nb").unwrap_err();
/// assert_eq!(err.field(), "id");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidField {
    field: &'static str,
}

impl InvalidField {
    /// The name of the rejected field (`"id"` or `"event"`).
    pub fn field(&self) -> &'static str {
        self.field
    }
}

impl fmt::Display for InvalidField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "server-sent event `{}` field contains a line break or NUL",
            self.field
        )
    }
}

impl std::error::Error for InvalidField {}

fn is_line_break(c: char) -> bool {
    c == '\r' || c == '\n'
}

impl Event {
    /// An empty event; add fields with the builder methods.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::sse::Event;
    ///
    /// assert_eq!(Event::new().data("hi").encode().bytes(), "data: hi\n\n");
    /// ```
    pub fn new() -> Event {
        Event::default()
    }

    /// Set the event id, removing any CR, LF and NUL from it (a client would
    /// split the line at a break and ignore an id containing NUL).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::sse::Event;
    ///
    /// assert_eq!(Event::new().id("7\r\n").encode().bytes(), "id: 7\n\n");
    /// ```
    #[must_use]
    pub fn id(mut self, id: impl Into<String>) -> Event {
        let mut id = id.into();
        id.retain(|c| !is_line_break(c) && c != '\0');
        self.id = Some(id);
        self
    }

    /// Set the event id, or reject it if it contains CR, LF or NUL.
    ///
    /// # Errors
    ///
    /// [`InvalidField`] when the id contains CR, LF or NUL.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::sse::Event;
    ///
    /// assert!(Event::new().try_id("7").is_ok());
    /// assert!(Event::new().try_id("7\r").is_err());
    /// ```
    pub fn try_id(mut self, id: impl Into<String>) -> Result<Event, InvalidField> {
        let id = id.into();
        if id.contains(|c| is_line_break(c) || c == '\0') {
            return Err(InvalidField { field: "id" });
        }
        self.id = Some(id);
        Ok(self)
    }

    /// Set the event type (the client dispatches it to listeners of that
    /// name instead of `onmessage`), removing any CR and LF from it.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::sse::Event;
    ///
    /// assert_eq!(Event::new().event("tick").encode().bytes(), "event: tick\n\n");
    /// ```
    #[must_use]
    pub fn event(mut self, event: impl Into<String>) -> Event {
        let mut event = event.into();
        event.retain(|c| !is_line_break(c));
        self.event = Some(event);
        self
    }

    /// Set the event type, or reject it if it contains CR or LF.
    ///
    /// # Errors
    ///
    /// [`InvalidField`] when the type contains CR or LF.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::sse::Event;
    ///
    /// assert!(Event::new().try_event("a\nb").is_err());
    /// ```
    pub fn try_event(mut self, event: impl Into<String>) -> Result<Event, InvalidField> {
        let event = event.into();
        if event.contains(is_line_break) {
            return Err(InvalidField { field: "event" });
        }
        self.event = Some(event);
        Ok(self)
    }

    /// Set the data, replacing earlier data. Line breaks (CR, LF or CRLF)
    /// split it into several `data:` lines, which the client joins with LF.
    /// Empty data is sent as one empty `data:` line.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::sse::Event;
    ///
    /// assert_eq!(Event::new().data("a\rb").encode().bytes(), "data: a\ndata: b\n\n");
    /// assert_eq!(Event::new().data("").encode().bytes(), "data:\n\n");
    /// ```
    #[must_use]
    pub fn data(mut self, data: impl Into<String>) -> Event {
        self.data = Some(data.into());
        self
    }

    /// Set the reconnection time the client should wait after losing the
    /// connection, sent in whole milliseconds.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ringstream::sse::Event;
    ///
    /// let event = Event::new().retry(Duration::from_millis(2500));
    /// assert_eq!(event.encode().bytes(), "retry: 2500\n\n");
    /// ```
    #[must_use]
    pub fn retry(mut self, retry: Duration) -> Event {
        self.retry = Some(retry);
        self
    }

    /// Add a comment, which clients ignore. Comments are written before the
    /// fields; a comment with line breaks becomes several comment lines.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::sse::Event;
    ///
    /// let event = Event::new().comment("hello").data("x");
    /// assert_eq!(event.encode().bytes(), ": hello\ndata: x\n\n");
    /// ```
    #[must_use]
    pub fn comment(mut self, comment: impl Into<String>) -> Event {
        self.comments.push(comment.into());
        self
    }

    /// Encode the event into its wire bytes, once; the result is cheap to
    /// clone and to send to any number of clients.
    ///
    /// Field order: comments, `id`, `event`, `retry`, `data`, then the blank
    /// line that ends the event.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::sse::Event;
    ///
    /// let encoded = Event::new().id("1").data("x").encode();
    /// assert_eq!(encoded.id(), Some("1"));
    /// assert_eq!(encoded.bytes(), "id: 1\ndata: x\n\n");
    /// ```
    pub fn encode(&self) -> EncodedEvent {
        let mut len = 1;
        for comment in &self.comments {
            len += comment.len() + 3;
        }
        if let Some(id) = &self.id {
            len += id.len() + 5;
        }
        if let Some(event) = &self.event {
            len += event.len() + 8;
        }
        if self.retry.is_some() {
            len += 28;
        }
        if let Some(data) = &self.data {
            // Each line costs "data: " and "\n"; count the lines first.
            len += data.len() + 7 * Lines::new(data).count();
        }
        let mut buf = BytesMut::with_capacity(len);
        for comment in &self.comments {
            for line in Lines::new(comment) {
                put_field(&mut buf, "", line);
            }
        }
        if let Some(id) = &self.id {
            put_field(&mut buf, "id", id);
        }
        if let Some(event) = &self.event {
            put_field(&mut buf, "event", event);
        }
        if let Some(retry) = self.retry {
            put_field(&mut buf, "retry", &retry.as_millis().to_string());
        }
        if let Some(data) = &self.data {
            for line in Lines::new(data) {
                put_field(&mut buf, "data", line);
            }
        }
        buf.put_u8(b'\n');
        EncodedEvent {
            id: self.id.as_deref().map(Arc::from),
            bytes: buf.freeze(),
        }
    }
}

/// Write `name: value\n`, or `name:\n` when the value is empty.
fn put_field(buf: &mut BytesMut, name: &str, value: &str) {
    buf.put_slice(name.as_bytes());
    buf.put_u8(b':');
    if !value.is_empty() {
        buf.put_u8(b' ');
        buf.put_slice(value.as_bytes());
    }
    buf.put_u8(b'\n');
}

/// The lines of a text split at CRLF, CR or LF. An empty text is one empty
/// line, and a text ending with a break ends with an empty line.
struct Lines<'a> {
    rest: Option<&'a str>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Lines<'a> {
        Lines { rest: Some(text) }
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let rest = self.rest?;
        match rest.find(is_line_break) {
            None => {
                self.rest = None;
                Some(rest)
            }
            Some(at) => {
                let (line, tail) = rest.split_at(at);
                let skip = if tail.starts_with("\r\n") { 2 } else { 1 };
                self.rest = tail.get(skip..);
                Some(line)
            }
        }
    }
}

/// An event in wire form: its bytes, shared by every client that receives
/// it, and its id (kept for `Last-Event-ID` replay).
///
/// # Examples
///
/// ```
/// use ringstream::sse::{EncodedEvent, Event};
///
/// let encoded: EncodedEvent = Event::new().data("x").into();
/// let copy = encoded.clone(); // a reference count, not a copy of the bytes
/// assert_eq!(copy.bytes().as_ptr(), encoded.bytes().as_ptr());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedEvent {
    id: Option<Arc<str>>,
    bytes: Bytes,
}

impl EncodedEvent {
    /// The event's id, if it has one.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// The wire bytes (a cheap reference-counted handle).
    pub fn bytes(&self) -> Bytes {
        self.bytes.clone()
    }

    /// The wire bytes, consuming the event.
    pub fn into_bytes(self) -> Bytes {
        self.bytes
    }
}

impl From<Event> for EncodedEvent {
    fn from(event: Event) -> EncodedEvent {
        event.encode()
    }
}

impl From<&Event> for EncodedEvent {
    fn from(event: &Event) -> EncodedEvent {
        event.encode()
    }
}

/// Read the `Last-Event-ID` header of a request: the id of the last event a
/// reconnecting client received. An absent, empty or non-text header gives
/// `None`.
///
/// # Examples
///
/// ```
/// use ringstream::sse::last_event_id;
///
/// let mut headers = http::HeaderMap::new();
/// assert_eq!(last_event_id(&headers), None);
/// headers.insert("last-event-id", "41".parse().unwrap());
/// assert_eq!(last_event_id(&headers), Some("41"));
/// ```
pub fn last_event_id(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(LAST_EVENT_ID)
        .and_then(|value| value.to_str().ok())
        .filter(|id| !id.is_empty())
}

/// Wrap `stream` in a `200 OK` response with `content-type:
/// text/event-stream` and `cache-control: no-cache`; the same as
/// [`EventStream::into_response`].
///
/// # Examples
///
/// ```
/// use ringstream::sse::{sse_response, Broadcaster, OverflowPolicy};
///
/// let broadcaster = Broadcaster::new(16, OverflowPolicy::DropOldest);
/// let response = sse_response(broadcaster.subscribe(None));
/// assert_eq!(response.headers()["content-type"], "text/event-stream");
/// assert_eq!(response.headers()["cache-control"], "no-cache");
/// ```
pub fn sse_response(stream: EventStream) -> Response<EventStream> {
    let mut response = Response::new(stream);
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// A `text/event-stream` response body.
///
/// It yields one data frame per event (the event's shared bytes) and, when
/// nothing was sent for the keep-alive interval, the comment
/// `: keep-alive\n\n`. Its length is unknown, so HTTP/1.1 sends it chunked.
/// It never yields an error: when its source is finished (the
/// [`Broadcaster`] closed or dropped, the channel closed, or the client fell
/// behind under [`OverflowPolicy::Close`]) it ends.
///
/// Make one with [`Broadcaster::subscribe`] (many clients) or
/// [`EventStream::from_receiver`] (one producer per client).
///
/// # Examples
///
/// ```
/// use http_body_util::BodyExt;
/// use ringstream::sse::{Event, EventStream};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let (tx, rx) = tokio::sync::mpsc::channel(8);
/// let mut body = EventStream::from_receiver(rx);
/// tx.send(Event::new().data("hello")).await.unwrap();
/// drop(tx);
/// let bytes = body.collect().await.unwrap().to_bytes();
/// assert_eq!(bytes, "data: hello\n\n");
/// # });
/// ```
pub struct EventStream {
    source: Source,
    keep_alive: Option<KeepAlive>,
}

enum Source {
    Receiver(mpsc::Receiver<Event>),
    Subscription(Subscription),
    Done,
}

struct KeepAlive {
    interval: Duration,
    /// Created on the first poll, so a stream can be built outside a runtime.
    sleep: Option<Pin<Box<Sleep>>>,
    /// When the last frame went out.
    last_sent: Option<Instant>,
}

impl KeepAlive {
    fn new(interval: Duration) -> KeepAlive {
        KeepAlive {
            interval,
            sleep: None,
            last_sent: None,
        }
    }

    fn sent(&mut self) {
        self.last_sent = Some(Instant::now());
    }

    /// Whether a keep-alive comment is due now; otherwise the timer is armed
    /// to wake the task when it will be. The timer is re-armed only when it
    /// fires, not on every frame sent.
    fn poll_due(&mut self, cx: &mut Context<'_>) -> bool {
        let now = Instant::now();
        let last = *self.last_sent.get_or_insert(now);
        let Some(due) = last.checked_add(self.interval) else {
            return false;
        };
        let sleep = self
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(due)));
        loop {
            if sleep.as_mut().poll(cx).is_pending() {
                return false;
            }
            if sleep.deadline() < due {
                // Frames went out since the timer was armed: wait for the
                // rest of the interval.
                sleep.as_mut().reset(due);
                continue;
            }
            self.last_sent = Some(now);
            return true;
        }
    }
}

impl EventStream {
    fn with_source(source: Source) -> EventStream {
        EventStream {
            source,
            keep_alive: Some(KeepAlive::new(DEFAULT_KEEP_ALIVE)),
        }
    }

    /// A stream of the events sent on an `mpsc` channel, for one client with
    /// its own producer. The channel's capacity bounds the queue; the stream
    /// ends when every sender is dropped. Events are encoded as they are
    /// taken from the channel.
    ///
    /// # Examples
    ///
    /// ```
    /// use http_body_util::BodyExt;
    /// use ringstream::sse::{Event, EventStream};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let (tx, rx) = tokio::sync::mpsc::channel(1);
    /// let mut body = EventStream::from_receiver(rx);
    /// tx.try_send(Event::new().data("a")).unwrap();
    /// assert!(tx.try_send(Event::new().data("b")).is_err()); // full: bounded
    /// let frame = body.frame().await.unwrap().unwrap();
    /// assert_eq!(frame.into_data().unwrap(), "data: a\n\n");
    /// # });
    /// ```
    pub fn from_receiver(receiver: mpsc::Receiver<Event>) -> EventStream {
        EventStream::with_source(Source::Receiver(receiver))
    }

    /// Send a keep-alive comment after `interval` without any other frame
    /// (the default is [`DEFAULT_KEEP_ALIVE`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use http_body_util::BodyExt;
    /// use ringstream::sse::{Broadcaster, OverflowPolicy};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let broadcaster = Broadcaster::new(8, OverflowPolicy::DropOldest);
    /// let mut body = broadcaster
    ///     .subscribe(None)
    ///     .with_keep_alive(Duration::from_millis(10));
    /// let frame = body.frame().await.unwrap().unwrap();
    /// assert_eq!(frame.into_data().unwrap(), ": keep-alive\n\n");
    /// # });
    /// ```
    #[must_use]
    pub fn with_keep_alive(mut self, interval: Duration) -> EventStream {
        self.keep_alive = Some(KeepAlive::new(interval));
        self
    }

    /// Never send keep-alive comments.
    #[must_use]
    pub fn without_keep_alive(mut self) -> EventStream {
        self.keep_alive = None;
        self
    }

    /// Wrap the stream in a `200 OK` response with `content-type:
    /// text/event-stream` and `cache-control: no-cache`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::sse::{Broadcaster, OverflowPolicy};
    ///
    /// let broadcaster = Broadcaster::new(16, OverflowPolicy::Close);
    /// let response = broadcaster.subscribe(None).into_response();
    /// assert_eq!(response.status(), 200);
    /// assert_eq!(response.headers()["content-type"], "text/event-stream");
    /// ```
    pub fn into_response(self) -> Response<EventStream> {
        sse_response(self)
    }

    /// This client's counters, when the stream comes from a [`Broadcaster`]
    /// and is still subscribed.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::sse::{Broadcaster, Event, OverflowPolicy};
    ///
    /// let broadcaster = Broadcaster::new(2, OverflowPolicy::DropOldest);
    /// let client = broadcaster.subscribe(None);
    /// for i in 0..5 {
    ///     broadcaster.send(Event::new().data(i.to_string()));
    /// }
    /// let stats = client.stats().unwrap();
    /// assert_eq!((stats.queued, stats.dropped), (2, 3));
    /// ```
    pub fn stats(&self) -> Option<SubscriberStats> {
        match &self.source {
            Source::Subscription(sub) => sub.stats(),
            _ => None,
        }
    }

    fn poll_source(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        loop {
            let next = match &mut self.source {
                Source::Done => return Poll::Ready(None),
                Source::Receiver(rx) => match rx.poll_recv(cx) {
                    Poll::Ready(Some(event)) => Next::Event(event.encode().into_bytes()),
                    Poll::Ready(None) => Next::End,
                    Poll::Pending => return Poll::Pending,
                },
                Source::Subscription(sub) => match sub.poll_next(cx) {
                    Poll::Ready(next) => next,
                    Poll::Pending => return Poll::Pending,
                },
            };
            match next {
                Next::Event(bytes) => return Poll::Ready(Some(bytes)),
                Next::Dropped(n) => {
                    // The report goes first; the event follows on the next poll.
                    return Poll::Ready(Some(Bytes::from(format!(": dropped {n} events\n\n"))));
                }
                Next::End => {
                    // Dropping the subscription unregisters the client now.
                    self.source = Source::Done;
                }
            }
        }
    }
}

impl fmt::Debug for EventStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let source = match &self.source {
            Source::Receiver(_) => "receiver",
            Source::Subscription(_) => "broadcaster",
            Source::Done => "done",
        };
        f.debug_struct("EventStream")
            .field("source", &source)
            .field("keep_alive", &self.keep_alive.as_ref().map(|k| k.interval))
            .finish()
    }
}

impl Body for EventStream {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let this = self.get_mut();
        match this.poll_source(cx) {
            Poll::Ready(Some(bytes)) => {
                if let Some(keep_alive) = &mut this.keep_alive {
                    keep_alive.sent();
                }
                Poll::Ready(Some(Ok(Frame::data(bytes))))
            }
            Poll::Ready(None) => {
                this.keep_alive = None;
                Poll::Ready(None)
            }
            Poll::Pending => {
                let due = this.keep_alive.as_mut().is_some_and(|k| k.poll_due(cx));
                if due {
                    Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(KEEP_ALIVE)))))
                } else {
                    Poll::Pending
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.source, Source::Done)
    }

    fn size_hint(&self) -> SizeHint {
        if self.is_end_stream() {
            SizeHint::with_exact(0)
        } else {
            SizeHint::default()
        }
    }
}

/// What a [`Broadcaster`] does with a client whose unread events are being
/// evicted from the ring (see the [module docs](self#memory-and-the-overflow-policy)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OverflowPolicy {
    /// The client skips the evicted events, continues with the oldest one
    /// still retained, and the skipped events are counted.
    DropOldest,
    /// The client's stream ends.
    Close,
}

/// The counters of one subscribed client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SubscriberStats {
    /// The client's id within its broadcaster (in subscription order).
    pub id: u64,
    /// Retained events the client has not taken yet (at most the
    /// broadcaster's capacity).
    pub queued: usize,
    /// Events the client missed because they were evicted before it took
    /// them.
    pub dropped: u64,
}

/// Fans events out to many [`EventStream`]s with bounded memory.
///
/// The last `capacity` events are kept in one shared ring; each subscriber
/// reads through it at its own pace. [`send`](Broadcaster::send) appends to
/// the ring and wakes the waiting subscribers: it never blocks and never
/// waits for a slow client. Subscribers that fall more than `capacity`
/// events behind are handled by the [`OverflowPolicy`]; see the [module
/// docs](self#memory-and-the-overflow-policy).
///
/// Clones share the same ring. When the last clone is dropped (or
/// [`close`](Broadcaster::close) is called), subscribers receive what is
/// left for them and their streams end.
///
/// # Examples
///
/// ```
/// use http_body_util::BodyExt;
/// use ringstream::sse::{Broadcaster, Event, OverflowPolicy};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let broadcaster = Broadcaster::new(16, OverflowPolicy::DropOldest);
/// let a = broadcaster.subscribe(None);
/// let b = broadcaster.subscribe(None);
/// assert_eq!(broadcaster.subscriber_count(), 2);
///
/// broadcaster.send(Event::new().id("1").data("hello"));
/// drop(broadcaster); // ends the streams once they are drained
///
/// for body in [a, b] {
///     let bytes = body.collect().await.unwrap().to_bytes();
///     assert_eq!(bytes, "id: 1\ndata: hello\n\n");
/// }
/// # });
/// ```
#[derive(Clone)]
pub struct Broadcaster {
    owner: Arc<Owner>,
    keep_alive: Option<Duration>,
    report_drops: bool,
}

/// Closes the ring when the last [`Broadcaster`] clone is dropped.
struct Owner(Arc<Shared>);

impl Drop for Owner {
    fn drop(&mut self) {
        self.0.close();
    }
}

struct Shared {
    capacity: usize,
    policy: OverflowPolicy,
    state: Mutex<State>,
}

struct State {
    ring: VecDeque<EncodedEvent>,
    /// Sequence number of the next event sent; the ring holds the events
    /// `next_seq - ring.len() .. next_seq`.
    next_seq: u64,
    closed: bool,
    subscribers: HashMap<u64, Cursor>,
    /// Subscribers with a registered waker.
    waiting: Vec<u64>,
    next_key: u64,
    /// Drops already settled (counted when a subscriber skipped or left).
    dropped_settled: u64,
    closed_for_lag: u64,
}

struct Cursor {
    /// Sequence number of the next event this subscriber takes.
    next: u64,
    /// Drops settled for this subscriber.
    dropped: u64,
    waker: Option<Waker>,
}

impl State {
    fn oldest_seq(&self) -> u64 {
        self.next_seq.saturating_sub(self.ring.len() as u64)
    }

    /// Events evicted before `cursor` took them, not yet settled.
    fn lag(&self, cursor: &Cursor) -> u64 {
        self.oldest_seq().saturating_sub(cursor.next)
    }

    fn stats(&self, key: u64, cursor: &Cursor) -> SubscriberStats {
        let from = cursor.next.max(self.oldest_seq());
        SubscriberStats {
            id: key,
            queued: usize::try_from(self.next_seq.saturating_sub(from)).unwrap_or(usize::MAX),
            dropped: cursor.dropped.saturating_add(self.lag(cursor)),
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // No code panics while holding the lock; if a waker's code did,
        // the state is still consistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn close(&self) {
        let wakers = {
            let mut state = self.lock();
            state.closed = true;
            take_wakers(&mut state)
        };
        wakers.into_iter().for_each(Waker::wake);
    }
}

fn take_wakers(state: &mut State) -> Vec<Waker> {
    let waiting = std::mem::take(&mut state.waiting);
    let mut wakers = Vec::with_capacity(waiting.len());
    for key in waiting {
        if let Some(waker) = state.subscribers.get_mut(&key).and_then(|c| c.waker.take()) {
            wakers.push(waker);
        }
    }
    wakers
}

impl Broadcaster {
    /// A broadcaster retaining the last `capacity` events (at least one) and
    /// handling slow clients with `policy`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::sse::{Broadcaster, OverflowPolicy};
    ///
    /// let broadcaster = Broadcaster::new(64, OverflowPolicy::Close);
    /// assert_eq!(broadcaster.capacity(), 64);
    /// assert_eq!(broadcaster.policy(), OverflowPolicy::Close);
    /// ```
    pub fn new(capacity: usize, policy: OverflowPolicy) -> Broadcaster {
        let capacity = capacity.max(1);
        let state = State {
            ring: VecDeque::with_capacity(capacity),
            next_seq: 0,
            closed: false,
            subscribers: HashMap::new(),
            waiting: Vec::new(),
            next_key: 0,
            dropped_settled: 0,
            closed_for_lag: 0,
        };
        let shared = Arc::new(Shared {
            capacity,
            policy,
            state: Mutex::new(state),
        });
        Broadcaster {
            owner: Arc::new(Owner(shared)),
            keep_alive: Some(DEFAULT_KEEP_ALIVE),
            report_drops: false,
        }
    }

    /// Set the keep-alive interval of the streams made by
    /// [`subscribe`](Broadcaster::subscribe) from now on; `None` disables
    /// keep-alive comments. The default is [`DEFAULT_KEEP_ALIVE`].
    #[must_use]
    pub fn with_keep_alive(mut self, interval: Option<Duration>) -> Broadcaster {
        self.keep_alive = interval;
        self
    }

    /// Tell clients how many events they skipped under
    /// [`OverflowPolicy::DropOldest`], with a comment `: dropped N events`
    /// sent before the next event. Off by default.
    ///
    /// # Examples
    ///
    /// ```
    /// use http_body_util::BodyExt;
    /// use ringstream::sse::{Broadcaster, Event, OverflowPolicy};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let broadcaster = Broadcaster::new(1, OverflowPolicy::DropOldest).with_drop_reports(true);
    /// let client = broadcaster.subscribe(None);
    /// broadcaster.send(Event::new().data("a"));
    /// broadcaster.send(Event::new().data("b"));
    /// drop(broadcaster);
    /// let bytes = client.collect().await.unwrap().to_bytes();
    /// assert_eq!(bytes, ": dropped 1 events\n\ndata: b\n\n");
    /// # });
    /// ```
    #[must_use]
    pub fn with_drop_reports(mut self, report: bool) -> Broadcaster {
        self.report_drops = report;
        self
    }

    fn shared(&self) -> &Arc<Shared> {
        &self.owner.0
    }

    /// The number of events retained (the most any client can have queued).
    pub fn capacity(&self) -> usize {
        self.shared().capacity
    }

    /// The overflow policy.
    pub fn policy(&self) -> OverflowPolicy {
        self.shared().policy
    }

    /// Encode `event` once and append it to the ring, evicting the oldest
    /// event when the ring is full, then wake the waiting subscribers. Never
    /// blocks on, or waits for, any client. After
    /// [`close`](Broadcaster::close) it does nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::sse::{Broadcaster, Event, OverflowPolicy};
    ///
    /// let broadcaster = Broadcaster::new(2, OverflowPolicy::DropOldest);
    /// for i in 0..10 {
    ///     broadcaster.send(Event::new().data(i.to_string())); // no subscriber: nothing waits
    /// }
    /// assert_eq!(broadcaster.retained(), 2);
    /// assert_eq!(broadcaster.sent(), 10);
    /// ```
    pub fn send(&self, event: impl Into<EncodedEvent>) {
        let event = event.into();
        let shared = self.shared();
        let wakers = {
            let mut state = shared.lock();
            if state.closed {
                return;
            }
            if state.ring.len() >= shared.capacity {
                state.ring.pop_front();
            }
            state.ring.push_back(event);
            state.next_seq = state.next_seq.saturating_add(1);
            take_wakers(&mut state)
        };
        wakers.into_iter().for_each(Waker::wake);
    }

    /// A stream for one client. With `last_event_id` (see [`last_event_id`])
    /// and that id among the retained events, the events sent after it are
    /// replayed first; otherwise the client receives only events sent from
    /// now on.
    ///
    /// # Examples
    ///
    /// ```
    /// use http_body_util::BodyExt;
    /// use ringstream::sse::{Broadcaster, Event, OverflowPolicy};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let broadcaster = Broadcaster::new(8, OverflowPolicy::DropOldest);
    /// for i in 1..=3 {
    ///     broadcaster.send(Event::new().id(i.to_string()).data("x"));
    /// }
    /// let resumed = broadcaster.subscribe(Some("2"));
    /// let unknown = broadcaster.subscribe(Some("old"));
    /// drop(broadcaster);
    /// assert_eq!(resumed.collect().await.unwrap().to_bytes(), "id: 3\ndata: x\n\n");
    /// assert_eq!(unknown.collect().await.unwrap().to_bytes(), "");
    /// # });
    /// ```
    pub fn subscribe(&self, last_event_id: Option<&str>) -> EventStream {
        let shared = self.shared().clone();
        let key = {
            let mut state = shared.lock();
            let mut next = state.next_seq;
            if let Some(wanted) = last_event_id {
                let oldest = state.oldest_seq();
                if let Some(at) = state.ring.iter().rposition(|e| e.id() == Some(wanted)) {
                    next = oldest.saturating_add(at as u64).saturating_add(1);
                }
            }
            let key = state.next_key;
            state.next_key = key.saturating_add(1);
            state.subscribers.insert(
                key,
                Cursor {
                    next,
                    dropped: 0,
                    waker: None,
                },
            );
            key
        };
        let subscription = Subscription {
            shared,
            key,
            report_drops: self.report_drops,
        };
        let mut stream = EventStream::with_source(Source::Subscription(subscription));
        stream.keep_alive = self.keep_alive.map(KeepAlive::new);
        stream
    }

    /// Stop accepting events: subscribers receive what is left for them and
    /// their streams end; later subscribers get only the replay.
    pub fn close(&self) {
        self.shared().close();
    }

    /// Whether [`close`](Broadcaster::close) was called.
    pub fn is_closed(&self) -> bool {
        self.shared().lock().closed
    }

    /// The number of subscribed streams (a stream unsubscribes when it is
    /// dropped or has ended).
    pub fn subscriber_count(&self) -> usize {
        self.shared().lock().subscribers.len()
    }

    /// The number of events sent.
    pub fn sent(&self) -> u64 {
        self.shared().lock().next_seq
    }

    /// The number of events currently retained; never more than
    /// [`capacity`](Broadcaster::capacity).
    pub fn retained(&self) -> usize {
        self.shared().lock().ring.len()
    }

    /// Events missed by clients, summed over all clients past and present:
    /// each event evicted before a subscribed client took it counts once for
    /// that client.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::sse::{Broadcaster, Event, OverflowPolicy};
    ///
    /// let broadcaster = Broadcaster::new(4, OverflowPolicy::DropOldest);
    /// let _slow_a = broadcaster.subscribe(None);
    /// let _slow_b = broadcaster.subscribe(None);
    /// for i in 0..10 {
    ///     broadcaster.send(Event::new().data(i.to_string()));
    /// }
    /// assert_eq!(broadcaster.dropped_total(), 12); // 6 each
    /// ```
    pub fn dropped_total(&self) -> u64 {
        let state = self.shared().lock();
        state
            .subscribers
            .values()
            .fold(state.dropped_settled, |sum, cursor| {
                sum.saturating_add(state.lag(cursor))
            })
    }

    /// Streams ended under [`OverflowPolicy::Close`] because their client
    /// fell behind.
    pub fn closed_for_lag(&self) -> u64 {
        self.shared().lock().closed_for_lag
    }

    /// The counters of every subscribed client, in subscription order.
    pub fn subscriber_stats(&self) -> Vec<SubscriberStats> {
        let state = self.shared().lock();
        let mut stats: Vec<_> = state
            .subscribers
            .iter()
            .map(|(&key, cursor)| state.stats(key, cursor))
            .collect();
        stats.sort_unstable_by_key(|s| s.id);
        stats
    }
}

impl fmt::Debug for Broadcaster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shared = self.shared();
        let state = shared.lock();
        f.debug_struct("Broadcaster")
            .field("capacity", &shared.capacity)
            .field("policy", &shared.policy)
            .field("retained", &state.ring.len())
            .field("sent", &state.next_seq)
            .field("subscribers", &state.subscribers.len())
            .field("closed", &state.closed)
            .finish()
    }
}

/// One client's cursor into a broadcaster's ring.
struct Subscription {
    shared: Arc<Shared>,
    key: u64,
    report_drops: bool,
}

enum Next {
    Event(Bytes),
    Dropped(u64),
    End,
}

impl Subscription {
    fn stats(&self) -> Option<SubscriberStats> {
        let state = self.shared.lock();
        state
            .subscribers
            .get(&self.key)
            .map(|cursor| state.stats(self.key, cursor))
    }

    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Next> {
        let policy = self.shared.policy;
        let mut guard = self.shared.lock();
        let state = &mut *guard;
        let oldest = state.oldest_seq();
        let Some(cursor) = state.subscribers.get_mut(&self.key) else {
            return Poll::Ready(Next::End);
        };
        if cursor.next < oldest {
            let skipped = oldest - cursor.next;
            cursor.dropped = cursor.dropped.saturating_add(skipped);
            state.dropped_settled = state.dropped_settled.saturating_add(skipped);
            match policy {
                OverflowPolicy::Close => {
                    // Settled: this client will not count as lagging again.
                    cursor.next = oldest;
                    state.closed_for_lag = state.closed_for_lag.saturating_add(1);
                    return Poll::Ready(Next::End);
                }
                OverflowPolicy::DropOldest => {
                    cursor.next = oldest;
                    if self.report_drops {
                        return Poll::Ready(Next::Dropped(skipped));
                    }
                }
            }
        }
        let index = usize::try_from(cursor.next - oldest).unwrap_or(usize::MAX);
        if let Some(event) = state.ring.get(index) {
            cursor.next = cursor.next.saturating_add(1);
            return Poll::Ready(Next::Event(event.bytes()));
        }
        if state.closed {
            return Poll::Ready(Next::End);
        }
        match &mut cursor.waker {
            Some(waker) => waker.clone_from(cx.waker()),
            None => {
                cursor.waker = Some(cx.waker().clone());
                state.waiting.push(self.key);
            }
        }
        Poll::Pending
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        if let Some(cursor) = state.subscribers.remove(&self.key) {
            let lag = state.lag(&cursor);
            state.dropped_settled = state.dropped_settled.saturating_add(lag);
            if cursor.waker.is_some() {
                let key = self.key;
                state.waiting.retain(|&k| k != key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<&str> {
        Lines::new(text).collect()
    }

    #[test]
    fn lines_split_at_every_break_kind() {
        assert_eq!(lines(""), [""]);
        assert_eq!(lines("a"), ["a"]);
        assert_eq!(lines("a\n"), ["a", ""]);
        assert_eq!(lines("a\r\nb\rc\nd"), ["a", "b", "c", "d"]);
        assert_eq!(lines("\r\r\n\n"), ["", "", "", ""]);
        assert_eq!(lines("a\n\rb"), ["a", "", "b"]);
    }
}
