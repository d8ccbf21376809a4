//! The `text/event-stream` response body: [`EventStream`], its keep-alive
//! timer, and [`sse_response`].

use std::fmt;
use std::future::Future as _;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderValue, Response};
use http_body::{Body, Frame, SizeHint};
use tokio::sync::mpsc;
use tokio::time::{Instant, Sleep};

use super::event::{dropped_comment, KEEP_ALIVE_COMMENT};
use super::policy::SubscriberStats;
use super::subscription::{Next, Subscription};
use super::Event;

/// How long an [`EventStream`] waits without sending anything before it
/// sends a keep-alive comment: 15 seconds.
pub const DEFAULT_KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Wrap `stream` in a `200 OK` response with `content-type:
/// text/event-stream` and `cache-control: no-cache`; the same as
/// [`EventStream::into_http_response`].
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
/// [`Broadcaster`](super::Broadcaster) closed or dropped, the channel
/// closed, or the client fell behind under
/// [`OverflowPolicy::Close`](super::OverflowPolicy::Close)) it ends.
///
/// Make one with [`Broadcaster::subscribe`](super::Broadcaster::subscribe)
/// (many clients) or [`EventStream::from_receiver`] (one producer per
/// client).
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

/// Where a stream's events come from.
enum Source {
    Receiver(mpsc::Receiver<Event>),
    Subscription(Subscription),
    Done,
}

/// The keep-alive timer of a stream.
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
        EventStream {
            source: Source::Receiver(receiver),
            keep_alive: Some(KeepAlive::new(DEFAULT_KEEP_ALIVE)),
        }
    }

    /// A stream of a broadcaster's events for one subscriber, sending
    /// keep-alive comments every `keep_alive` (never with `None`).
    pub(super) fn subscribed(
        subscription: Subscription,
        keep_alive: Option<Duration>,
    ) -> EventStream {
        EventStream {
            source: Source::Subscription(subscription),
            keep_alive: keep_alive.map(KeepAlive::new),
        }
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
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use http_body_util::BodyExt;
    /// use ringstream::sse::{Broadcaster, OverflowPolicy};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().unwrap().block_on(async {
    /// let broadcaster = Broadcaster::new(8, OverflowPolicy::DropOldest);
    /// let mut quiet = broadcaster.subscribe(None).without_keep_alive();
    /// let mut default = broadcaster.subscribe(None);
    ///
    /// // An hour without events (the clock is paused, so no real hour
    /// // passes): a keep-alive comment on the default stream, nothing on
    /// // the other.
    /// let hour = Duration::from_secs(3600);
    /// assert!(tokio::time::timeout(hour, default.frame()).await.is_ok());
    /// assert!(tokio::time::timeout(hour, quiet.frame()).await.is_err());
    /// # });
    /// ```
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
    /// let response = broadcaster.subscribe(None).into_http_response();
    /// assert_eq!(response.status(), 200);
    /// assert_eq!(response.headers()["content-type"], "text/event-stream");
    /// ```
    pub fn into_http_response(self) -> Response<EventStream> {
        sse_response(self)
    }

    /// This client's counters, when the stream comes from a
    /// [`Broadcaster`](super::Broadcaster) and is still subscribed.
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
                    return Poll::Ready(Some(dropped_comment(n)));
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
                    Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(
                        KEEP_ALIVE_COMMENT,
                    )))))
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
