//! The broadcaster: the [`Broadcaster`] handle that sends events and
//! subscribes clients, the [`OverflowPolicy`] for clients that fall behind,
//! and the counters it reports.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::policy::{OverflowPolicy, SubscriberStats};
use super::subscription::{Shared, Subscription};
use super::{EncodedEvent, EventStream, DEFAULT_KEEP_ALIVE};

/// Fans events out to many [`EventStream`]s with bounded memory.
///
/// The last `capacity` events are kept in one shared ring; each subscriber
/// reads through it at its own pace. [`send`](Broadcaster::send) appends to
/// the ring and wakes the waiting subscribers: it never blocks and never
/// waits for a slow client. Subscribers that fall more than `capacity`
/// events behind are handled by the [`OverflowPolicy`]; see the [module
/// docs](super#memory-and-the-overflow-policy).
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
        let shared = Arc::new(Shared::new(capacity, policy));
        Broadcaster {
            owner: Arc::new(Owner(shared)),
            keep_alive: Some(DEFAULT_KEEP_ALIVE),
            report_drops: false,
        }
    }

    /// Set the keep-alive interval of the streams made by
    /// [`subscribe`](Broadcaster::subscribe) from now on; `None` disables
    /// keep-alive comments. The default is [`DEFAULT_KEEP_ALIVE`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use http_body_util::BodyExt;
    /// use ringstream::sse::{Broadcaster, OverflowPolicy};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let broadcaster = Broadcaster::new(8, OverflowPolicy::DropOldest)
    ///     .with_keep_alive(Some(Duration::from_millis(10)));
    /// let mut client = broadcaster.subscribe(None);
    /// // Nothing sent: a comment keeps the connection alive.
    /// let frame = client.frame().await.unwrap().unwrap();
    /// assert_eq!(frame.into_data().unwrap(), ": keep-alive\n\n");
    /// # });
    /// ```
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

    pub(crate) fn shared(&self) -> &Arc<Shared> {
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
        self.shared().send(event.into());
    }

    /// A stream for one client. With `last_event_id` (see
    /// [`last_event_id`](super::last_event_id)) and that id among the
    /// retained events, the events sent after it are replayed first;
    /// otherwise the client receives only events sent from now on.
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
        let subscription =
            Subscription::new(self.shared().clone(), last_event_id, self.report_drops);
        EventStream::subscribed(subscription, self.keep_alive)
    }

    /// Stop accepting events: subscribers receive what is left for them and
    /// their streams end; later subscribers get only the replay.
    pub fn close(&self) {
        self.shared().close();
    }

    /// Whether [`close`](Broadcaster::close) was called.
    pub fn is_closed(&self) -> bool {
        self.shared().lock().is_closed()
    }

    /// The number of subscribed streams (a stream unsubscribes when it is
    /// dropped or has ended).
    pub fn subscriber_count(&self) -> usize {
        self.shared().lock().subscriber_count()
    }

    /// The number of events sent.
    pub fn sent(&self) -> u64 {
        self.shared().lock().sent()
    }

    /// The number of events currently retained; never more than
    /// [`capacity`](Broadcaster::capacity).
    pub fn retained(&self) -> usize {
        self.shared().lock().retained()
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
        self.shared().lock().dropped_total()
    }

    /// Streams ended under [`OverflowPolicy::Close`] because their client
    /// fell behind.
    pub fn closed_for_lag(&self) -> u64 {
        self.shared().lock().closed_for_lag()
    }

    /// The counters of every subscribed client, in subscription order.
    pub fn subscriber_stats(&self) -> Vec<SubscriberStats> {
        self.shared().lock().subscriber_stats()
    }
}

impl fmt::Debug for Broadcaster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shared = self.shared();
        let state = shared.lock();
        f.debug_struct("Broadcaster")
            .field("capacity", &shared.capacity)
            .field("policy", &shared.policy)
            .field("retained", &state.retained())
            .field("sent", &state.sent())
            .field("subscribers", &state.subscriber_count())
            .field("closed", &state.is_closed())
            .finish()
    }
}

/// Closes the ring when the last [`Broadcaster`] clone is dropped.
struct Owner(Arc<Shared>);

impl Drop for Owner {
    fn drop(&mut self) {
        self.0.close();
    }
}
