//! What a broadcaster does with a client that falls behind, and what it
//! counts of each client.

/// What a [`Broadcaster`](super::Broadcaster) does with a client whose unread events are being
/// evicted from the ring (see the [module docs](super#memory-and-the-overflow-policy)).
///
/// # Examples
///
/// ```
/// use http_body_util::BodyExt;
/// use ringstream::sse::{Broadcaster, Event, OverflowPolicy};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// // A ring of 2 events, and a client that reads nothing while 3 are sent.
/// let skip = Broadcaster::new(2, OverflowPolicy::DropOldest);
/// let client = skip.subscribe(None).without_keep_alive();
/// for data in ["a", "b", "c"] {
///     skip.send(Event::new().data(data));
/// }
/// drop(skip);
/// // It missed "a" and goes on with what is retained.
/// assert_eq!(client.collect().await.unwrap().to_bytes(), "data: b\n\ndata: c\n\n");
///
/// let close = Broadcaster::new(2, OverflowPolicy::Close);
/// let client = close.subscribe(None).without_keep_alive();
/// for data in ["a", "b", "c"] {
///     close.send(Event::new().data(data));
/// }
/// // Its stream ends instead (and is counted when it finds out).
/// assert!(client.collect().await.unwrap().to_bytes().is_empty());
/// assert_eq!(close.closed_for_lag(), 1);
/// # });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OverflowPolicy {
    /// The client skips the evicted events, continues with the oldest one
    /// still retained, and the skipped events are counted.
    DropOldest,
    /// The client's stream ends.
    Close,
}

/// The counters of one subscribed client.
///
/// # Examples
///
/// ```
/// use ringstream::sse::{Broadcaster, Event, OverflowPolicy};
///
/// let broadcaster = Broadcaster::new(4, OverflowPolicy::DropOldest);
/// let first = broadcaster.subscribe(None);
/// let second = broadcaster.subscribe(None);
/// for i in 0..6 {
///     broadcaster.send(Event::new().data(i.to_string()));
/// }
/// let stats = broadcaster.subscriber_stats();
/// assert_eq!(stats.len(), 2);
/// assert!(stats[0].id < stats[1].id);
/// assert_eq!((stats[0].queued, stats[0].dropped), (4, 2));
/// assert_eq!(first.stats(), Some(stats[0]));
/// # drop(second);
/// ```
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
