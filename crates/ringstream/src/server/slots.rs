//! The connection slots of a server: at most `max_connections` served at
//! once, which of them are idle, and closing the longest-idle one when a
//! new client needs its slot (as nginx reuses idle keep-alive connections).
//!
//! A connection owns one [`Slot`] for its life. It marks the slot idle when
//! it starts to wait for a request with nothing buffered (a new connection
//! starts idle: one that has not sent a byte holds a slot as cheaply as an
//! idle keep-alive), and busy when the bytes of a request arrive — two
//! relaxed atomic stores per request, nothing else on the request path. The
//! accept loop, finding every slot taken, picks the slot idle the longest
//! and evicts it; the connection sees that in its idle wait (the same wait
//! that watches for shutdown) and closes.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::Waker;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The slot's state: busy.
const BUSY: u64 = 0;
/// The slot's state: evicted; the connection is to close.
const EVICTED: u64 = u64::MAX;

/// One connection's slot: its state and the waker that ends its idle wait.
#[derive(Debug)]
pub(crate) struct Slot {
    /// [`BUSY`], [`EVICTED`], or idle since this many milliseconds after
    /// the Unix epoch, plus one.
    state: AtomicU64,
    /// The connection task's waker, set on its first idle wait (and again
    /// only if the waker changes).
    waker: Mutex<Option<Waker>>,
    /// Set by [`wake`](Self::wake) and an eviction, cleared by
    /// [`take_woken`](Self::take_woken): whether the connection has
    /// something to look at (the stop, the eviction) since it last looked.
    woken: AtomicBool,
}

impl Slot {
    /// A slot idle since `unix_millis`.
    fn new(unix_millis: u64) -> Slot {
        Slot {
            state: AtomicU64::new(idle_stamp(unix_millis)),
            waker: Mutex::new(None),
            woken: AtomicBool::new(false),
        }
    }

    /// A slot outside any server's accounting (a connection served by
    /// itself): never evicted.
    pub(crate) fn standalone() -> Arc<Slot> {
        Arc::new(Slot::new(unix_millis()))
    }

    /// The connection waits for a request since `unix_millis` (the time
    /// its last response was dated: the clock is read once per response
    /// for the `Date` field, and not again here).
    #[inline]
    pub(crate) fn set_idle(&self, unix_millis: u64) {
        // Only the connection leaves the busy state, so the store cannot
        // overwrite an eviction.
        self.state.store(idle_stamp(unix_millis), Ordering::Relaxed);
    }

    /// The bytes of a request arrived. `false`: the slot was evicted first,
    /// and the connection is to close instead.
    #[inline]
    pub(crate) fn set_busy(&self) -> bool {
        self.state.swap(BUSY, Ordering::AcqRel) != EVICTED
    }

    /// Whether the slot was evicted.
    #[inline]
    pub(crate) fn is_evicted(&self) -> bool {
        self.state.load(Ordering::Acquire) == EVICTED
    }

    /// Whether the slot was woken (by the stop or an eviction) since the
    /// last call; clears it. One load when it was not.
    #[inline]
    pub(crate) fn take_woken(&self) -> bool {
        if !self.woken.load(Ordering::Acquire) {
            return false;
        }
        // Only the connection clears it: a wake between the load and this
        // store wakes the task, which then looks again anyway.
        self.woken.store(false, Ordering::Relaxed);
        true
    }

    /// Stores the waker that an eviction wakes. Check
    /// [`is_evicted`](Self::is_evicted) after this: an eviction between the
    /// check and the store would otherwise wake a stale waker.
    pub(crate) fn register(&self, waker: &Waker) {
        let mut slot = self.waker.lock().unwrap_or_else(PoisonError::into_inner);
        crate::wake::register(&mut slot, &std::task::Context::from_waker(waker));
    }

    /// Drops the stored waker: the connection was upgraded and will not
    /// wait on the slot again. A waker keeps its task's allocation (the
    /// whole HTTP connection's future) alive after the task has ended, so
    /// an upgraded connection that kept it would hold that memory for its
    /// whole life.
    pub(crate) fn forget_waker(&self) {
        let waker = self
            .waker
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        drop(waker);
    }

    /// Wakes the connection if it waits (for the shutdown to be seen). A
    /// connection that waits looks at the stop signal again only once its
    /// slot has been woken ([`take_woken`](Self::take_woken)): whoever
    /// sends the stop wakes the slot after.
    pub(crate) fn wake(&self) {
        self.woken.store(true, Ordering::Release);
        let waker = self
            .waker
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Evicts the slot if it is idle since `since`, waking its connection.
    fn evict(&self, since: u64) -> bool {
        let evicted = self
            .state
            .compare_exchange(since, EVICTED, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok();
        if evicted {
            self.woken.store(true, Ordering::Release);
            let waker = self
                .waker
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            if let Some(waker) = waker {
                waker.wake();
            }
        }
        evicted
    }

    /// Since when the slot is idle, if it is.
    fn idle_since(&self) -> Option<u64> {
        match self.state.load(Ordering::Relaxed) {
            BUSY | EVICTED => None,
            since => Some(since),
        }
    }
}

/// The state of a slot idle since `unix_millis`: never [`BUSY`] nor
/// [`EVICTED`].
#[inline]
fn idle_stamp(unix_millis: u64) -> u64 {
    unix_millis.min(EVICTED - 2) + 1
}

/// Milliseconds since the Unix epoch, now (0 for a clock set before it).
pub(crate) fn unix_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() * 1000 + u64::from(d.subsec_millis()))
}

/// The slots of one server.
#[derive(Debug)]
pub(crate) struct Slots {
    permits: Arc<Semaphore>,
    /// Clients admitted by an eviction that have not yet taken the slot
    /// given back: while there are any, no new client takes a free slot
    /// first (it would take the one an eviction made for a waiter).
    waiting: AtomicUsize,
    table: Mutex<Table>,
}

/// The open connections' slots, with the free places for new ones.
#[derive(Debug, Default)]
struct Table {
    entries: Vec<Option<Arc<Slot>>>,
    free: Vec<usize>,
}

impl Slots {
    /// Room for `max` connections at once (at least one).
    pub(crate) fn new(max: usize) -> Slots {
        Slots {
            permits: Arc::new(Semaphore::new(max.max(1))),
            waiting: AtomicUsize::new(0),
            table: Mutex::new(Table::default()),
        }
    }

    /// A slot for a new connection, if one is free now and no client
    /// admitted by an eviction waits for it.
    pub(crate) fn try_take(self: &Arc<Self>) -> Option<SlotGuard> {
        if self.waiting.load(Ordering::Acquire) != 0 {
            return None;
        }
        let permit = self.permits.clone().try_acquire_owned().ok()?;
        Some(self.admit(permit))
    }

    /// A place in the line for the next slot given back (after an
    /// eviction): from now on, until the [`Waiting`] is dropped or has
    /// taken its slot, [`try_take`](Self::try_take) leaves free slots to
    /// the line.
    pub(crate) fn wait(self: &Arc<Self>) -> Waiting {
        self.waiting.fetch_add(1, Ordering::AcqRel);
        Waiting {
            slots: self.clone(),
        }
    }

    fn admit(self: &Arc<Self>, permit: OwnedSemaphorePermit) -> SlotGuard {
        let slot = Arc::new(Slot::new(unix_millis()));
        let mut table = self.lock();
        let index = match table.free.pop() {
            Some(index) => {
                table.entries[index] = Some(slot.clone());
                index
            }
            None => {
                table.entries.push(Some(slot.clone()));
                table.entries.len() - 1
            }
        };
        drop(table);
        SlotGuard {
            slots: self.clone(),
            slot,
            index,
            _permit: permit,
        }
    }

    /// Evicts the connection idle the longest, if any is idle: it closes,
    /// and its slot goes to the next [`take`](Self::take). The scan visits
    /// every open connection: work bounded by the cap, done only when the
    /// cap is reached.
    pub(crate) fn evict_longest_idle(&self) -> bool {
        loop {
            let oldest = {
                let table = self.lock();
                table
                    .entries
                    .iter()
                    .flatten()
                    .filter_map(|slot| Some((slot.idle_since()?, slot)))
                    .min_by_key(|(since, _)| *since)
                    .map(|(since, slot)| (since, slot.clone()))
            };
            let Some((since, slot)) = oldest else {
                return false;
            };
            if slot.evict(since) {
                return true;
            }
            // It became busy (or idle again) since the scan: look again.
        }
    }

    /// Wakes every open connection that waits: the server has begun to
    /// stop, and each one, woken, sees it.
    pub(crate) fn wake_all(&self) {
        let open: Vec<Arc<Slot>> = self.lock().entries.iter().flatten().cloned().collect();
        for slot in open {
            slot.wake();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A client's place in the line for a slot; see [`Slots::wait`].
#[derive(Debug)]
pub(crate) struct Waiting {
    slots: Arc<Slots>,
}

impl Waiting {
    /// The next slot given back (waiters are served in order).
    pub(crate) async fn take(self) -> Option<SlotGuard> {
        let permit = self.slots.permits.clone().acquire_owned().await.ok()?;
        Some(self.slots.admit(permit))
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.slots.waiting.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A connection's place among the slots, given back when dropped.
#[derive(Debug)]
pub(crate) struct SlotGuard {
    slots: Arc<Slots>,
    slot: Arc<Slot>,
    index: usize,
    _permit: OwnedSemaphorePermit,
}

impl SlotGuard {
    /// The slot the connection marks idle and busy.
    pub(crate) fn slot(&self) -> Arc<Slot> {
        self.slot.clone()
    }

    /// The connection left HTTP for another protocol: see
    /// [`Slot::forget_waker`].
    pub(crate) fn upgraded(&self) {
        self.slot.forget_waker();
    }
}

impl Drop for SlotGuard {
    fn drop(&mut self) {
        let mut table = self.slots.lock();
        if let Some(entry) = table.entries.get_mut(self.index) {
            *entry = None;
            table.free.push(self.index);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::task::Wake;

    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn the_longest_idle_slot_is_evicted_and_busy_ones_never() {
        let slots = Arc::new(Slots::new(3));
        let a = slots.try_take().unwrap();
        let b = slots.try_take().unwrap();
        let c = slots.try_take().unwrap();
        // `c` went idle after `b`, both long after `a` came.
        b.slot().set_idle(1_000);
        c.slot().set_idle(1_010);
        assert!(slots.try_take().is_none(), "the cap is reached");

        // `a` is busy; `b` has been idle the longest of the others.
        assert!(a.slot().set_busy());
        let woken = Arc::new(Count(AtomicUsize::new(0)));
        b.slot().register(&Waker::from(woken.clone()));
        assert!(slots.evict_longest_idle());
        assert!(b.slot().is_evicted());
        assert_eq!(woken.0.load(Ordering::Relaxed), 1);
        assert!(!c.slot().is_evicted());
        // A request arriving after the eviction is not served.
        assert!(!b.slot().set_busy());

        // `c` next; then nothing idle is left.
        assert!(slots.evict_longest_idle());
        assert!(c.slot().is_evicted());
        assert!(!slots.evict_longest_idle());

        // `a`, idle again, is now the one.
        a.slot().set_idle(unix_millis());
        assert!(slots.evict_longest_idle());
        assert!(a.slot().is_evicted());
    }

    #[tokio::test]
    async fn a_slot_given_back_goes_to_the_waiting_connection() {
        let slots = Arc::new(Slots::new(1));
        let first = slots.try_take().unwrap();
        assert!(slots.evict_longest_idle());
        let waiting = slots.wait();
        // Given back before the waiter first asks for it: a new client
        // still cannot take it.
        drop(first);
        assert!(slots.try_take().is_none());
        let taken = waiting.take().await.unwrap();
        // The table reuses the freed place.
        assert_eq!(slots.lock().entries.len(), 1);
        drop(taken);
        assert!(slots.try_take().is_some(), "the line is empty again");
    }

    #[tokio::test]
    async fn a_waiter_that_gives_up_leaves_the_line() {
        let slots = Arc::new(Slots::new(1));
        let first = slots.try_take().unwrap();
        let waiting = slots.wait();
        drop(waiting);
        drop(first);
        assert!(slots.try_take().is_some());
    }

    #[test]
    fn a_standalone_slot_starts_idle_and_stays_so() {
        let slot = Slot::standalone();
        assert!(slot.idle_since().is_some());
        assert!(slot.set_busy());
        assert!(slot.idle_since().is_none());
        slot.set_idle(unix_millis());
        assert!(!slot.is_evicted());
    }
}
