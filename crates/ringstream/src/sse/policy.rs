//! What a broadcaster does with a client that falls behind, and what it
//! counts of each client.

/// What a [`Broadcaster`](super::Broadcaster) does with a client whose unread events are being
/// evicted from the ring (see the [module docs](super#memory-and-the-overflow-policy)).
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
