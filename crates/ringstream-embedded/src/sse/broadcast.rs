//! The [`Broadcaster`]: the last events in one ring of encoded bytes, fixed
//! at build time, and a [`Subscriber`] per client, which is only a read
//! position in it.

use core::cell::{Cell, RefCell};
use core::future::poll_fn;
use core::task::{Poll, Waker};

use super::ring::{Ring, Slot};
use super::Event;

/// What happens to a subscriber that falls further behind than the ring
/// holds (its next event was overwritten), as in the tokio crate.
///
/// The publisher never waits for a subscriber and the ring never grows:
/// the subscriber is told, and this says what it does.
///
/// # Examples
///
/// ```
/// use ringstream_embedded::sse::{Broadcaster, Event, OverflowPolicy, Received};
///
/// // Two slots: a subscriber that reads nothing while three events are
/// // published misses the first.
/// let events: Broadcaster<2, 256, 1> = Broadcaster::new(OverflowPolicy::Close);
/// let mut slow = events.subscribe(None).unwrap();
/// for n in ["1", "2", "3"] {
///     events.publish(&Event::new().data(n)).unwrap();
/// }
/// let mut buf = [0u8; 64];
/// assert_eq!(slow.try_recv(&mut buf), Some(Received::Behind { skipped: 1 }));
/// // Under `Close`, an event stream forwarding it ends here.
/// assert_eq!(slow.policy(), OverflowPolicy::Close);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverflowPolicy {
    /// Skip to the oldest event still held, after a comment
    /// `: dropped N events` (the tokio crate's drop report) so the client
    /// can tell.
    DropOldest,
    /// End the stream; the client's `EventSource` reconnects with
    /// `Last-Event-ID` and resumes from the ring if it can.
    Close,
}

/// Why an event could not be published.
///
/// # Examples
///
/// ```
/// use ringstream_embedded::sse::{Broadcaster, Event, OverflowPolicy, PublishError};
///
/// let events: Broadcaster<4, 16, 1> = Broadcaster::new(OverflowPolicy::DropOldest);
/// let long = Event::new().data("longer than the ring");
/// assert_eq!(events.publish(&long), Err(PublishError::TooLarge));
/// events.close();
/// assert_eq!(events.publish(&Event::new().data("x")), Err(PublishError::Closed));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PublishError {
    /// The event's wire bytes are longer than the whole ring (`BYTES`), or
    /// the ring has no slot (`SLOTS` is 0).
    TooLarge,
    /// The broadcaster was [closed](Broadcaster::close).
    Closed,
}

impl core::fmt::Display for PublishError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            PublishError::TooLarge => "server-sent event larger than the broadcaster's ring",
            PublishError::Closed => "broadcaster closed",
        })
    }
}

impl core::error::Error for PublishError {}

/// What a [`Subscriber`] found at its read position.
///
/// # Examples
///
/// ```
/// use ringstream_embedded::sse::{Broadcaster, Event, OverflowPolicy, Received};
///
/// let events: Broadcaster<4, 256, 1> = Broadcaster::new(OverflowPolicy::DropOldest);
/// let mut subscriber = events.subscribe(None).unwrap();
/// events.publish(&Event::new().data("on")).unwrap();
/// events.close();
/// let mut buf = [0u8; 64];
/// assert_eq!(subscriber.try_recv(&mut buf), Some(Received::Event(10)));
/// assert_eq!(&buf[..10], b"data: on\n\n");
/// assert_eq!(subscriber.try_recv(&mut buf), Some(Received::Closed));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received {
    /// The next event's wire bytes, copied into the caller's buffer: their
    /// length.
    Event(usize),
    /// The subscriber fell behind: `skipped` events were overwritten before
    /// it read them (or one was longer than the caller's buffer). Its
    /// position is now the oldest event held; the
    /// [policy](Broadcaster::policy) says whether to go on.
    Behind {
        /// Events the subscriber will never see.
        skipped: u64,
    },
    /// The broadcaster was closed and every event was read.
    Closed,
}

/// Server-sent events fanned out to many clients, in memory fixed at build
/// time: the last events in one ring of `BYTES` encoded bytes, at most
/// `SLOTS` of them, and room for `SUBSCRIBERS` clients.
///
/// An event is encoded once, into the ring ([`publish`](Self::publish)):
/// N clients cost one copy of each event, not N. A [`Subscriber`] is a read
/// position in the ring (and a place for its waker); each client's
/// stream copies the next event out of the ring only when it writes it.
/// The publisher never waits: an event overwrites the oldest ones, and a
/// subscriber whose next event was overwritten is told
/// ([`Received::Behind`]) and handled by the [`OverflowPolicy`]. A client
/// reconnecting with `Last-Event-ID` resumes after that event while it is
/// still in the ring.
///
/// # Sharing and wakers
///
/// The broadcaster is for one executor (embassy's, single-threaded): its
/// state is in `Cell`s and a `RefCell`, as the `pool`'s is, and it is not
/// `Sync`, so the compiler keeps it off other threads and interrupts (put
/// it in a `static_cell::StaticCell`, or on the stack of a task that owns
/// the serving tasks). Publish from a task, not an interrupt handler. The
/// wakers of waiting subscribers are a fixed array of `Option<Waker>`, one
/// per subscriber place: no heap, no critical section, no extra
/// dependency (embassy-sync's `MultiWakerRegistration` would do the same
/// with a critical-section mutex the single-threaded executor does not
/// need).
///
/// # Memory
///
/// `BYTES` for the ring, 24 bytes per slot on thumbv7em (40 on x86_64),
/// an `Option<Waker>` and a flag per subscriber place, and a few words:
/// `Broadcaster<16, 2048, 4>` is 2,520 bytes on thumbv7em (2,808 on
/// x86_64) however many events are published, and a [`Subscriber`] 16
/// (24).
///
/// # Examples
///
/// ```
/// use ringstream_embedded::sse::{Broadcaster, Event, OverflowPolicy, Received};
///
/// let events: Broadcaster<4, 256, 2> = Broadcaster::new(OverflowPolicy::DropOldest);
/// let mut a = events.subscribe(None).unwrap();
/// let mut b = events.subscribe(None).unwrap();
/// events.publish(&Event::new().try_id("1")?.data("21.5")).unwrap();
///
/// let mut buf = [0u8; 64];
/// assert_eq!(a.try_recv(&mut buf), Some(Received::Event(18)));
/// assert_eq!(&buf[..18], b"id: 1\ndata: 21.5\n\n");
/// assert_eq!(b.try_recv(&mut buf), Some(Received::Event(18)));
/// assert_eq!(a.try_recv(&mut buf), None); // nothing new yet
///
/// // A client that comes back with `Last-Event-ID: 1` gets what followed.
/// events.publish(&Event::new().try_id("2")?.data("21.6")).unwrap();
/// drop(a);
/// let mut again = events.subscribe(Some(b"1")).unwrap();
/// assert_eq!(again.try_recv(&mut buf), Some(Received::Event(18)));
/// assert_eq!(&buf[..18], b"id: 2\ndata: 21.6\n\n");
/// # Ok::<(), ringstream_embedded::sse::InvalidField>(())
/// ```
pub struct Broadcaster<const SLOTS: usize, const BYTES: usize, const SUBSCRIBERS: usize> {
    ring: RefCell<Ring<SLOTS, BYTES>>,
    wakers: [Cell<Option<Waker>>; SUBSCRIBERS],
    taken: [Cell<bool>; SUBSCRIBERS],
    policy: OverflowPolicy,
}

impl<const SLOTS: usize, const BYTES: usize, const SUBSCRIBERS: usize>
    Broadcaster<SLOTS, BYTES, SUBSCRIBERS>
{
    /// An empty broadcaster; `const`, so it can be built in place.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::sse::{Broadcaster, OverflowPolicy};
    ///
    /// // 16 events, 2 KiB of event bytes, 4 subscribers: all of it inline.
    /// let events = Broadcaster::<16, 2048, 4>::new(OverflowPolicy::DropOldest);
    /// assert_eq!(events.policy(), OverflowPolicy::DropOldest);
    /// assert_eq!((events.retained(), events.subscriber_count()), (0, 0));
    /// ```
    pub const fn new(policy: OverflowPolicy) -> Self {
        Broadcaster {
            ring: RefCell::new(Ring {
                bytes: [0; BYTES],
                slots: [Slot {
                    start: 0,
                    len: 0,
                    id: None,
                }; SLOTS],
                oldest: 0,
                next: 0,
                end: 0,
                closed: false,
                dropped_total: 0,
            }),
            wakers: [const { Cell::new(None) }; SUBSCRIBERS],
            taken: [const { Cell::new(false) }; SUBSCRIBERS],
            policy,
        }
    }

    /// The policy for subscribers that fall behind.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::sse::{Broadcaster, OverflowPolicy};
    ///
    /// let events: Broadcaster<4, 256, 1> = Broadcaster::new(OverflowPolicy::Close);
    /// assert_eq!(events.policy(), OverflowPolicy::Close);
    /// ```
    pub fn policy(&self) -> OverflowPolicy {
        self.policy
    }

    /// Encodes `event` once into the ring, overwriting the oldest events as
    /// needed, and wakes every waiting subscriber. Never waits.
    ///
    /// # Examples
    ///
    /// See [`Broadcaster`].
    ///
    /// # Errors
    ///
    /// [`PublishError::TooLarge`] for an event longer than the ring
    /// (nothing is overwritten); [`PublishError::Closed`] after
    /// [`close`](Self::close).
    pub fn publish(&self, event: &Event<'_>) -> Result<(), PublishError> {
        {
            let mut ring = self.ring.borrow_mut();
            if ring.closed {
                return Err(PublishError::Closed);
            }
            let len = event.encoded_len();
            if len > BYTES || SLOTS == 0 {
                return Err(PublishError::TooLarge);
            }
            let start = ring.end;
            let mut at = start;
            for piece in event.pieces() {
                ring.copy_in(at, piece);
                at += piece.len() as u64;
            }
            let id = event.id_offset().zip(event.id().map(str::len));
            let seq = ring.next;
            let index = usize::try_from(seq % SLOTS as u64).unwrap_or(0);
            if let Some(slot) = ring.slots.get_mut(index) {
                *slot = Slot { start, len, id };
            }
            ring.next = seq + 1;
            ring.end = at;
            // Forget the events overwritten, by slot or by byte.
            let floor = ring.end.saturating_sub(BYTES as u64);
            while ring.oldest < ring.next
                && (ring.next - ring.oldest > SLOTS as u64
                    || ring.slot(ring.oldest).is_none_or(|s| s.start < floor))
            {
                ring.oldest += 1;
            }
        }
        self.wake_all();
        Ok(())
    }

    /// A subscriber, reading from the event after the one whose id is
    /// `last_event_id` if that is still in the ring, else from the next
    /// event published; `None` when all `SUBSCRIBERS` places are taken.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::sse::{Broadcaster, OverflowPolicy};
    ///
    /// let events: Broadcaster<4, 256, 1> = Broadcaster::new(OverflowPolicy::DropOldest);
    /// let first = events.subscribe(None).unwrap();
    /// assert_eq!(events.subscriber_count(), 1);
    /// // One place: a second client gets none until the first leaves.
    /// assert!(events.subscribe(None).is_none());
    /// drop(first);
    /// assert!(events.subscribe(None).is_some());
    /// ```
    pub fn subscribe(
        &self,
        last_event_id: Option<&[u8]>,
    ) -> Option<Subscriber<'_, SLOTS, BYTES, SUBSCRIBERS>> {
        let place = self.taken.iter().position(|t| !t.get())?;
        self.taken.get(place)?.set(true);
        let ring = self.ring.borrow();
        let next = last_event_id
            .and_then(|id| ring.find(id))
            .map_or(ring.next, |seq| seq + 1);
        Some(Subscriber {
            broadcaster: self,
            next,
            place,
        })
    }

    /// Ends every stream once it has read what is held; later
    /// [`publish`](Self::publish) calls fail. For a shutdown.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::sse::{Broadcaster, Event, OverflowPolicy, PublishError};
    ///
    /// let events: Broadcaster<4, 256, 1> = Broadcaster::new(OverflowPolicy::DropOldest);
    /// events.close();
    /// assert!(events.is_closed());
    /// assert_eq!(events.publish(&Event::new().data("late")), Err(PublishError::Closed));
    /// ```
    pub fn close(&self) {
        self.ring.borrow_mut().closed = true;
        self.wake_all();
    }

    /// Whether [`close`](Self::close) was called.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::sse::{Broadcaster, OverflowPolicy};
    ///
    /// let events: Broadcaster<4, 256, 1> = Broadcaster::new(OverflowPolicy::DropOldest);
    /// assert!(!events.is_closed());
    /// events.close();
    /// assert!(events.is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        self.ring.borrow().closed
    }

    /// Subscribers alive.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::sse::{Broadcaster, OverflowPolicy};
    ///
    /// let events: Broadcaster<4, 256, 2> = Broadcaster::new(OverflowPolicy::DropOldest);
    /// let a = events.subscribe(None).unwrap();
    /// let _b = events.subscribe(None).unwrap();
    /// assert_eq!(events.subscriber_count(), 2);
    /// drop(a);
    /// assert_eq!(events.subscriber_count(), 1);
    /// ```
    pub fn subscriber_count(&self) -> usize {
        self.taken.iter().filter(|t| t.get()).count()
    }

    /// Events held in the ring.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::sse::{Broadcaster, Event, OverflowPolicy};
    ///
    /// // Two slots: the third event overwrites the first.
    /// let events: Broadcaster<2, 256, 1> = Broadcaster::new(OverflowPolicy::DropOldest);
    /// for n in ["1", "2", "3"] {
    ///     events.publish(&Event::new().data(n)).unwrap();
    /// }
    /// assert_eq!(events.retained(), 2);
    /// ```
    pub fn retained(&self) -> usize {
        let ring = self.ring.borrow();
        usize::try_from(ring.next - ring.oldest).unwrap_or(usize::MAX)
    }

    /// Events skipped by subscribers that fell behind, in total.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::sse::{Broadcaster, Event, OverflowPolicy, Received};
    ///
    /// let events: Broadcaster<2, 256, 1> = Broadcaster::new(OverflowPolicy::DropOldest);
    /// let mut slow = events.subscribe(None).unwrap();
    /// for n in ["1", "2", "3"] {
    ///     events.publish(&Event::new().data(n)).unwrap();
    /// }
    /// let mut buf = [0u8; 64];
    /// assert_eq!(slow.try_recv(&mut buf), Some(Received::Behind { skipped: 1 }));
    /// assert_eq!(events.dropped_total(), 1);
    /// ```
    pub fn dropped_total(&self) -> u64 {
        self.ring.borrow().dropped_total
    }

    fn wake_all(&self) {
        for waker in &self.wakers {
            if let Some(w) = waker.take() {
                w.wake();
            }
        }
    }
}

/// One client's read position in a [`Broadcaster`]; its place is given
/// back when it is dropped.
///
/// # Examples
///
/// Back with `Last-Event-ID: 1`, a client resumes after that event:
///
/// ```
/// use ringstream_embedded::sse::{Broadcaster, Event, OverflowPolicy, Received};
///
/// let events: Broadcaster<4, 256, 1> = Broadcaster::new(OverflowPolicy::DropOldest);
/// events.publish(&Event::new().try_id("1")?.data("a"))?;
/// events.publish(&Event::new().try_id("2")?.data("b"))?;
/// let mut resumed = events.subscribe(Some(b"1")).unwrap();
/// let mut buf = [0u8; 64];
/// assert_eq!(resumed.try_recv(&mut buf), Some(Received::Event(15)));
/// assert_eq!(&buf[..15], b"id: 2\ndata: b\n\n");
/// # Ok::<(), Box<dyn core::error::Error>>(())
/// ```
pub struct Subscriber<'b, const SLOTS: usize, const BYTES: usize, const SUBSCRIBERS: usize> {
    broadcaster: &'b Broadcaster<SLOTS, BYTES, SUBSCRIBERS>,
    next: u64,
    place: usize,
}

impl<const SLOTS: usize, const BYTES: usize, const SUBSCRIBERS: usize>
    Subscriber<'_, SLOTS, BYTES, SUBSCRIBERS>
{
    /// The broadcaster's policy for a subscriber that falls behind.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::sse::{Broadcaster, OverflowPolicy};
    ///
    /// let events: Broadcaster<4, 256, 1> = Broadcaster::new(OverflowPolicy::Close);
    /// let subscriber = events.subscribe(None).unwrap();
    /// assert_eq!(subscriber.policy(), OverflowPolicy::Close);
    /// ```
    pub fn policy(&self) -> OverflowPolicy {
        self.broadcaster.policy
    }

    /// Copies the next event into `buf`, or says that the subscriber fell
    /// behind or that the broadcaster is closed; `None` when there is
    /// nothing new. An event longer than `buf` is skipped and reported as
    /// [`Received::Behind`]: give a buffer as long as the longest event.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::sse::{Broadcaster, Event, OverflowPolicy, Received};
    ///
    /// let events: Broadcaster<4, 256, 1> = Broadcaster::new(OverflowPolicy::DropOldest);
    /// let mut subscriber = events.subscribe(None).unwrap();
    /// let mut buf = [0u8; 4];
    /// assert_eq!(subscriber.try_recv(&mut buf), None);
    /// // `data: 21.5\n\n` does not fit in 4 bytes: it is skipped.
    /// events.publish(&Event::new().data("21.5")).unwrap();
    /// assert_eq!(subscriber.try_recv(&mut buf), Some(Received::Behind { skipped: 1 }));
    /// assert_eq!(subscriber.try_recv(&mut buf), None);
    /// ```
    pub fn try_recv(&mut self, buf: &mut [u8]) -> Option<Received> {
        let mut ring = self.broadcaster.ring.borrow_mut();
        if self.next < ring.oldest {
            let skipped = ring.oldest - self.next;
            self.next = ring.oldest;
            ring.dropped_total += skipped;
            return Some(Received::Behind { skipped });
        }
        if self.next >= ring.next {
            return ring.closed.then_some(Received::Closed);
        }
        let slot = *ring.slot(self.next)?;
        self.next += 1;
        let Some(out) = buf.get_mut(..slot.len) else {
            ring.dropped_total += 1;
            return Some(Received::Behind { skipped: 1 });
        };
        ring.copy_out(slot.start, out);
        Some(Received::Event(slot.len))
    }

    /// Waits until [`try_recv`](Self::try_recv) has something to say.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::sse::{Broadcaster, Event, OverflowPolicy, Received};
    /// # fn block_on<F: core::future::Future>(f: F) -> F::Output {
    /// #     let mut f = core::pin::pin!(f);
    /// #     let mut cx = core::task::Context::from_waker(std::task::Waker::noop());
    /// #     loop {
    /// #         if let core::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; }
    /// #     }
    /// # }
    ///
    /// let events: Broadcaster<4, 256, 1> = Broadcaster::new(OverflowPolicy::DropOldest);
    /// let mut subscriber = events.subscribe(None).unwrap();
    /// events.publish(&Event::new().data("on")).unwrap();
    /// // Something is held: `ready` returns at once (`block_on` polls it), and
    /// // the event is still there to read.
    /// block_on(subscriber.ready());
    /// let mut buf = [0u8; 64];
    /// assert_eq!(subscriber.try_recv(&mut buf), Some(Received::Event(10)));
    /// ```
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only waits; the position moves in `try_recv`.
    pub async fn ready(&mut self) {
        poll_fn(|cx| {
            let ring = self.broadcaster.ring.borrow();
            if self.next < ring.oldest || self.next < ring.next || ring.closed {
                return Poll::Ready(());
            }
            if let Some(cell) = self.broadcaster.wakers.get(self.place) {
                let waker = match cell.take() {
                    Some(w) if w.will_wake(cx.waker()) => w,
                    _ => cx.waker().clone(),
                };
                cell.set(Some(waker));
            }
            Poll::Pending
        })
        .await
    }

    /// [`try_recv`](Self::try_recv), waiting for something to say.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::sse::{Broadcaster, Event, OverflowPolicy, Received};
    /// # fn block_on<F: core::future::Future>(f: F) -> F::Output {
    /// #     let mut f = core::pin::pin!(f);
    /// #     let mut cx = core::task::Context::from_waker(std::task::Waker::noop());
    /// #     loop {
    /// #         if let core::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; }
    /// #     }
    /// # }
    ///
    /// let events: Broadcaster<4, 256, 1> = Broadcaster::new(OverflowPolicy::DropOldest);
    /// let mut subscriber = events.subscribe(None).unwrap();
    /// events.publish(&Event::new().data("on")).unwrap();
    /// let mut buf = [0u8; 64];
    /// // An event is held: `recv` is ready at once (`block_on` polls it).
    /// assert_eq!(block_on(subscriber.recv(&mut buf)), Received::Event(10));
    /// ```
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: an event is taken only when it is returned.
    pub async fn recv(&mut self, buf: &mut [u8]) -> Received {
        loop {
            if let Some(received) = self.try_recv(buf) {
                return received;
            }
            self.ready().await;
        }
    }
}

impl<const SLOTS: usize, const BYTES: usize, const SUBSCRIBERS: usize> Drop
    for Subscriber<'_, SLOTS, BYTES, SUBSCRIBERS>
{
    fn drop(&mut self) {
        if let Some(cell) = self.broadcaster.wakers.get(self.place) {
            cell.set(None);
        }
        if let Some(taken) = self.broadcaster.taken.get(self.place) {
            taken.set(false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Events that wrap around a small ring, ids split by the wrap: every
    /// event still held is read back whole, found by its id, and the
    /// evicted ones are reported as skipped.
    #[test]
    fn events_and_ids_across_the_wrap() {
        let ring: Broadcaster<4, 64, 2> = Broadcaster::new(OverflowPolicy::DropOldest);
        let ids = [
            "a", "bb", "ccc", "dddd", "eeeee", "ffffff", "g", "hh", "iii",
        ];
        let data = ["0123456789", "x", "", "yy\nzz", "0123456789012"];
        let mut late = ring.subscribe(None).unwrap();
        let mut wire = [0u8; 64];
        let mut expected = [0u8; 64];
        for (k, id) in ids.iter().enumerate() {
            let event = Event::new().try_id(id).unwrap().data(data[k % data.len()]);
            ring.publish(&event).unwrap();
            assert!(ring.retained() <= 4);
            // The event just published, read by a client that resumes
            // after the one before it (when that is still held).
            if k > 0 && ring.retained() > 1 {
                let mut resumed = ring.subscribe(Some(ids[k - 1].as_bytes())).unwrap();
                let n = event.encode_into(&mut expected).unwrap();
                assert_eq!(resumed.try_recv(&mut wire), Some(Received::Event(n)));
                assert_eq!(wire[..n], expected[..n], "event {id}");
                assert_eq!(resumed.try_recv(&mut wire), None);
            }
        }
        // The subscriber that never read: told how many it lost, then the
        // events held, oldest first.
        let held = ring.retained() as u64;
        assert_eq!(
            late.try_recv(&mut wire),
            Some(Received::Behind {
                skipped: ids.len() as u64 - held
            })
        );
        for _ in 0..held {
            assert!(matches!(late.try_recv(&mut wire), Some(Received::Event(_))));
        }
        assert_eq!(late.try_recv(&mut wire), None);
        ring.close();
        assert_eq!(late.try_recv(&mut wire), Some(Received::Closed));
    }
}
