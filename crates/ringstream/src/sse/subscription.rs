//! The fan-out core of the broadcasters: one ring of encoded messages
//! (server-sent events, or WebSocket frames for
//! [`ws::Broadcaster`](crate::ws::Broadcaster)), each subscriber's cursor
//! into it, and the [`Subscription`] through which an
//! [`EventStream`](super::EventStream) or a WebSocket reads them: one
//! encoding for any number of clients, and memory bounded by the ring.
//!
//! Sequence numbers count every event ever sent; the ring holds the newest
//! `capacity` of them. A subscriber's cursor is the sequence number of the
//! next event it takes; it has missed events exactly when its cursor points
//! before the ring's first event.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;

use super::policy::{OverflowPolicy, SubscriberStats};
use super::EncodedEvent;

/// What a source yields when polled.
pub(crate) enum Next {
    /// An event's wire bytes.
    Event(Bytes),
    /// The client skipped this many events; the next event follows.
    Dropped(u64),
    /// The source is finished.
    End,
}

/// What the clones of a broadcaster and its subscriptions share.
pub(crate) struct Shared {
    /// The number of events retained (at least one).
    pub(super) capacity: usize,
    /// What happens to a subscriber that falls behind.
    pub(super) policy: OverflowPolicy,
    state: Mutex<State>,
}

/// The ring and the subscribers' cursors, behind the lock.
pub(super) struct State {
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

/// Where one subscriber is in the ring.
struct Cursor {
    /// Sequence number of the next event this subscriber takes.
    next: u64,
    /// Drops settled for this subscriber.
    dropped: u64,
    waker: Option<Waker>,
}

impl Shared {
    /// Shared state retaining the last `capacity` events (at least one).
    pub(super) fn new(capacity: usize, policy: OverflowPolicy) -> Shared {
        let capacity = capacity.max(1);
        Shared {
            capacity,
            policy,
            state: Mutex::new(State::new(capacity)),
        }
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        // No code panics while holding the lock; if a waker's code did,
        // the state is still consistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Apply `change` under the lock, then wake the subscribers that were
    /// waiting for it once the lock is released (a woken task may poll at
    /// once, on another thread).
    fn change_and_wake(&self, change: impl FnOnce(&mut State)) {
        let wakers = {
            let mut state = self.lock();
            change(&mut state);
            state.take_wakers()
        };
        wakers.into_iter().for_each(Waker::wake);
    }

    /// Append `event` to the ring (nothing once closed) and wake the
    /// waiting subscribers.
    pub(super) fn send(&self, event: EncodedEvent) {
        self.change_and_wake(|state| state.push(event, self.capacity));
    }

    /// Stop accepting events and wake the waiting subscribers, which end
    /// once they have taken what is left for them.
    pub(super) fn close(&self) {
        self.change_and_wake(|state| state.closed = true);
    }
}

impl State {
    fn new(capacity: usize) -> State {
        State {
            ring: VecDeque::with_capacity(capacity),
            next_seq: 0,
            closed: false,
            subscribers: HashMap::new(),
            waiting: Vec::new(),
            next_key: 0,
            dropped_settled: 0,
            closed_for_lag: 0,
        }
    }

    pub(super) fn is_closed(&self) -> bool {
        self.closed
    }

    pub(super) fn subscriber_count(&self) -> usize {
        self.subscribers.len()
    }

    /// The number of events sent.
    pub(super) fn sent(&self) -> u64 {
        self.next_seq
    }

    pub(super) fn retained(&self) -> usize {
        self.ring.len()
    }

    pub(super) fn closed_for_lag(&self) -> u64 {
        self.closed_for_lag
    }

    /// Events missed, summed over every subscriber past and present: the
    /// settled drops plus the present subscribers' unsettled lag.
    pub(super) fn dropped_total(&self) -> u64 {
        self.subscribers
            .values()
            .fold(self.dropped_settled, |sum, cursor| {
                sum.saturating_add(self.lag(cursor))
            })
    }

    /// The counters of every subscriber, in subscription order.
    pub(super) fn subscriber_stats(&self) -> Vec<SubscriberStats> {
        let mut stats: Vec<_> = self
            .subscribers
            .iter()
            .map(|(&key, cursor)| self.stats(key, cursor))
            .collect();
        stats.sort_unstable_by_key(|s| s.id);
        stats
    }

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

    /// Append `event`, evicting the oldest event when `capacity` events are
    /// retained. Does nothing once closed.
    fn push(&mut self, event: EncodedEvent, capacity: usize) {
        if self.closed {
            return;
        }
        if self.ring.len() >= capacity {
            self.ring.pop_front();
        }
        self.ring.push_back(event);
        self.next_seq = self.next_seq.saturating_add(1);
    }

    /// The sequence number a new subscriber starts at: just after the
    /// newest retained event with id `last_event_id`, or, when there is
    /// none, the next event sent.
    fn resume_seq(&self, last_event_id: Option<&str>) -> u64 {
        let retained =
            last_event_id.and_then(|wanted| self.ring.iter().rposition(|e| e.id() == Some(wanted)));
        match retained {
            Some(at) => self
                .oldest_seq()
                .saturating_add(at as u64)
                .saturating_add(1),
            None => self.next_seq,
        }
    }

    /// Register a subscriber resuming after `last_event_id` (see
    /// [`resume_seq`](State::resume_seq)); returns its key.
    fn add_subscriber(&mut self, last_event_id: Option<&str>) -> u64 {
        let next = self.resume_seq(last_event_id);
        let key = self.next_key;
        self.next_key = key.saturating_add(1);
        let cursor = Cursor {
            next,
            dropped: 0,
            waker: None,
        };
        self.subscribers.insert(key, cursor);
        key
    }

    /// Unregister the subscriber `key`, settling the events it missed.
    fn remove_subscriber(&mut self, key: u64) {
        if let Some(cursor) = self.subscribers.remove(&key) {
            let lag = self.lag(&cursor);
            self.dropped_settled = self.dropped_settled.saturating_add(lag);
            if cursor.waker.is_some() {
                self.waiting.retain(|&k| k != key);
            }
        }
    }

    /// The wakers of the waiting subscribers, which stop waiting.
    fn take_wakers(&mut self) -> Vec<Waker> {
        let waiting = std::mem::take(&mut self.waiting);
        let mut wakers = Vec::with_capacity(waiting.len());
        for key in waiting {
            if let Some(waker) = self.subscribers.get_mut(&key).and_then(|c| c.waker.take()) {
                wakers.push(waker);
            }
        }
        wakers
    }
}

impl Cursor {
    /// Move past the events evicted before this subscriber took them (the
    /// ring now starts at `oldest`), counting them as dropped; returns how
    /// many were skipped.
    fn skip_evicted(&mut self, oldest: u64) -> u64 {
        let skipped = oldest.saturating_sub(self.next);
        if skipped > 0 {
            self.dropped = self.dropped.saturating_add(skipped);
            self.next = oldest;
        }
        skipped
    }

    /// Take the next event from `ring`, whose first event is `oldest`; the
    /// cursor must not be behind `oldest`.
    fn take(&mut self, ring: &VecDeque<EncodedEvent>, oldest: u64) -> Option<Bytes> {
        let index = usize::try_from(self.next - oldest).unwrap_or(usize::MAX);
        let event = ring.get(index)?;
        self.next = self.next.saturating_add(1);
        Some(event.bytes())
    }

    /// Keep `waker` for the next send; returns whether the subscriber was
    /// not waiting yet (and so must join the waiting list).
    fn set_waker(&mut self, waker: &Waker) -> bool {
        match &mut self.waker {
            Some(current) => {
                current.clone_from(waker);
                false
            }
            None => {
                self.waker = Some(waker.clone());
                true
            }
        }
    }
}

/// One client's cursor into a broadcaster's ring.
pub(crate) struct Subscription {
    shared: Arc<Shared>,
    key: u64,
    report_drops: bool,
}

impl Subscription {
    /// Subscribe to `shared`, resuming after `last_event_id` when that event
    /// is retained; with `report_drops`, skipped events are reported.
    pub(crate) fn new(
        shared: Arc<Shared>,
        last_event_id: Option<&str>,
        report_drops: bool,
    ) -> Subscription {
        let key = shared.lock().add_subscriber(last_event_id);
        Subscription {
            shared,
            key,
            report_drops,
        }
    }

    /// This subscriber's counters, while it is subscribed.
    pub(super) fn stats(&self) -> Option<SubscriberStats> {
        let state = self.shared.lock();
        state
            .subscribers
            .get(&self.key)
            .map(|cursor| state.stats(self.key, cursor))
    }

    /// The next event, a drop report, or the end; pending (with the waker
    /// kept for the next send) when the subscriber has taken every event.
    pub(crate) fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Next> {
        let mut guard = self.shared.lock();
        let state = &mut *guard;
        let oldest = state.oldest_seq();
        let Some(cursor) = state.subscribers.get_mut(&self.key) else {
            return Poll::Ready(Next::End);
        };
        let skipped = cursor.skip_evicted(oldest);
        if skipped > 0 {
            state.dropped_settled = state.dropped_settled.saturating_add(skipped);
            match self.shared.policy {
                OverflowPolicy::Close => {
                    // Settled: this client will not count as lagging again.
                    state.closed_for_lag = state.closed_for_lag.saturating_add(1);
                    return Poll::Ready(Next::End);
                }
                OverflowPolicy::DropOldest if self.report_drops => {
                    return Poll::Ready(Next::Dropped(skipped));
                }
                OverflowPolicy::DropOldest => {}
            }
        }
        if let Some(bytes) = cursor.take(&state.ring, oldest) {
            return Poll::Ready(Next::Event(bytes));
        }
        if state.closed {
            return Poll::Ready(Next::End);
        }
        if cursor.set_waker(cx.waker()) {
            state.waiting.push(self.key);
        }
        Poll::Pending
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.shared.lock().remove_subscriber(self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sse::Event;

    fn shared(capacity: usize) -> Arc<Shared> {
        Arc::new(Shared::new(capacity, OverflowPolicy::DropOldest))
    }

    fn subscribe(shared: &Arc<Shared>) -> Subscription {
        Subscription::new(shared.clone(), None, false)
    }

    fn poll(subscription: &mut Subscription) -> Poll<Next> {
        subscription.poll_next(&mut Context::from_waker(Waker::noop()))
    }

    fn send(shared: &Shared, ids: &[&str]) {
        for id in ids {
            shared.send(Event::new().id(*id).data("x").encode());
        }
    }

    #[test]
    fn a_waiting_subscriber_is_listed_once_and_unlisted_when_dropped() {
        let shared = shared(4);
        let mut subscription = subscribe(&shared);
        let key = subscription.key;
        assert!(poll(&mut subscription).is_pending());
        assert!(poll(&mut subscription).is_pending());
        assert_eq!(shared.lock().waiting, [key]);

        send(&shared, &["1"]);
        assert!(shared.lock().waiting.is_empty());
        assert!(matches!(
            poll(&mut subscription),
            Poll::Ready(Next::Event(_))
        ));
        assert!(poll(&mut subscription).is_pending());

        drop(subscription);
        let state = shared.lock();
        assert!(state.waiting.is_empty());
        assert!(!state.subscribers.contains_key(&key));
    }

    #[test]
    fn events_a_slow_subscriber_missed_are_counted_once() {
        let shared = shared(2);
        let mut subscription = subscribe(&shared);
        send(&shared, &["1", "2", "3", "4", "5"]);
        // Not polled yet: the three evicted events are lag, not yet settled.
        assert_eq!(shared.lock().dropped_settled, 0);
        assert_eq!(shared.lock().dropped_total(), 3);

        let Poll::Ready(Next::Event(bytes)) = poll(&mut subscription) else {
            panic!("the oldest retained event is ready");
        };
        assert_eq!(bytes, "id: 4\ndata: x\n\n");
        {
            let state = shared.lock();
            assert_eq!(state.dropped_settled, 3);
            assert_eq!(state.lag(&state.subscribers[&subscription.key]), 0);
        }
        drop(subscription);
        assert_eq!(shared.lock().dropped_total(), 3);
    }

    #[test]
    fn a_reconnecting_client_resumes_after_the_newest_event_with_its_id() {
        let shared = shared(8);
        send(&shared, &["a", "b", "a", "c"]);
        let state = shared.lock();
        assert_eq!(state.resume_seq(Some("a")), 3);
        assert_eq!(state.resume_seq(Some("c")), 4);
        assert_eq!(state.resume_seq(Some("unknown")), 4);
        assert_eq!(state.resume_seq(None), 4);
    }

    #[test]
    fn sending_after_close_retains_nothing() {
        let shared = shared(4);
        send(&shared, &["1"]);
        shared.close();
        send(&shared, &["2"]);
        let state = shared.lock();
        assert_eq!((state.ring.len(), state.next_seq), (1, 1));
        assert!(state.waiting.is_empty());
    }
}
