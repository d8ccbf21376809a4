//! The server's stop signal as one connection sees it.

use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use tokio::sync::watch;

use super::slots::Slot;

/// One connection's view of graceful shutdown, and of its eviction.
///
/// The server sends `true` once on a `watch` channel when it begins to
/// stop, then wakes every open connection through its [`Slot`]. A
/// connection asks two things of it: after each response, whether to keep
/// the connection alive ([`is_stopping`](Self::is_stopping), an atomic
/// load while nothing was sent), and, while idle between requests, to be
/// woken when the stop begins or its slot is evicted to make room for a
/// new client ([`poll_stopping`](Self::poll_stopping)). Both wake-ups come
/// through the waker the slot holds, stored once per connection (and again
/// only if the task's waker changes): an idle connection holds no waiter
/// of its own on the channel.
pub(crate) struct StopSignal {
    receiver: watch::Receiver<bool>,
    /// The waker the slot holds.
    registered: Option<Waker>,
    stopped: bool,
    slot: Arc<Slot>,
}

impl StopSignal {
    pub(crate) fn new(receiver: watch::Receiver<bool>, slot: Arc<Slot>) -> Self {
        // A receiver subscribed after the send has already seen it.
        let stopped = *receiver.borrow();
        StopSignal {
            receiver,
            registered: None,
            stopped,
            slot,
        }
    }

    /// A receiver of the server's stop signal of its own, for an upgraded
    /// connection.
    pub(crate) fn receiver(&self) -> watch::Receiver<bool> {
        self.receiver.clone()
    }

    /// Lets go of the waker of the task that served the connection so far,
    /// which ends (its memory would be kept by the waker otherwise): the
    /// next [`poll_stopping`](Self::poll_stopping) registers the waker of
    /// the task that serves it from then on.
    #[cfg(feature = "http2")]
    pub(crate) fn forget_waker(&mut self) {
        self.registered = None;
        self.slot.forget_waker();
    }

    /// The connection's slot, marked idle and busy as requests come.
    #[inline]
    pub(crate) fn slot(&self) -> &Slot {
        &self.slot
    }

    /// Whether the server has begun to stop.
    pub(crate) fn is_stopping(&self) -> bool {
        if self.stopped {
            return true;
        }
        match self.receiver.has_changed() {
            Ok(false) => false,
            // Something was sent, or the sender is gone: the value says.
            _ => *self.receiver.borrow(),
        }
    }

    /// Ready once the server has begun to stop or the slot was evicted
    /// (which [`Slot::is_evicted`] tells apart). A dropped sender never
    /// stops the connection. Pending, the task is woken through its slot
    /// ([`Slot::wake`] at the stop, or the eviction), and until then the
    /// signal is not looked at again: whoever sends the stop wakes the
    /// slot after sending.
    #[inline]
    pub(crate) fn poll_stopping(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.stopped {
            return Poll::Ready(());
        }
        let known = self
            .registered
            .as_ref()
            .is_some_and(|waker| waker.will_wake(cx.waker()));
        // The slot holds this task's waker and has not been woken since the
        // last look: neither the stop (whose sender wakes every slot after
        // sending) nor an eviction has come. A wait polled again for its
        // socket costs this one load.
        if known && !self.slot.take_woken() {
            return Poll::Pending;
        }
        self.look(known, cx)
    }

    /// [`poll_stopping`](Self::poll_stopping) when the slot was woken or
    /// does not hold this task's waker yet.
    #[inline(never)]
    fn look(&mut self, known: bool, cx: &mut Context<'_>) -> Poll<()> {
        if !known {
            // The waker goes to the slot before the checks below, so a
            // stop or an eviction in between still wakes this task.
            self.slot.register(cx.waker());
            self.registered = Some(cx.waker().clone());
        }
        if self.slot.is_evicted() {
            return Poll::Ready(());
        }
        if self.is_stopping() {
            self.stopped = true;
            self.registered = None;
            return Poll::Ready(());
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::{poll_fn, Future};

    #[tokio::test]
    async fn stop_is_seen_by_both_the_check_and_the_wait() {
        let (stop, receiver) = watch::channel(false);
        let slot = Slot::standalone();
        let mut signal = StopSignal::new(receiver, slot.clone());
        assert!(!signal.is_stopping());
        let waiting = poll_fn(|cx| Poll::Ready(signal.poll_stopping(cx).is_ready())).await;
        assert!(!waiting, "nothing sent yet");
        stop.send(true).unwrap();
        // The check sees the send at once; the wait, registered, once the
        // slot is woken (as every sender of the stop does after sending).
        assert!(signal.is_stopping());
        let waiting = poll_fn(|cx| Poll::Ready(signal.poll_stopping(cx).is_ready())).await;
        assert!(!waiting, "not looked at before the slot is woken");
        slot.wake();
        poll_fn(|cx| signal.poll_stopping(cx)).await;
        assert!(signal.is_stopping());
        // Ready again afterwards.
        poll_fn(|cx| signal.poll_stopping(cx)).await;
    }

    /// A task waiting on the signal (polled many times with the same waker,
    /// as an idle connection is between requests) is woken by the server's
    /// wake of its slot after the send: nothing else wakes it after the
    /// last nudge.
    #[tokio::test]
    async fn an_idle_task_is_woken_through_its_slot() {
        let (stop, receiver) = watch::channel(false);
        let slot = Slot::standalone();
        let its_slot = slot.clone();
        let (nudge, mut nudged) = tokio::sync::mpsc::unbounded_channel::<()>();
        let (seen_tx, mut seen) = tokio::sync::mpsc::unbounded_channel::<u32>();
        let task = tokio::spawn(async move {
            let mut signal = StopSignal::new(receiver, its_slot);
            let mut polls = 0u32;
            loop {
                tokio::select! {
                    biased;
                    () = poll_fn(|cx| signal.poll_stopping(cx)) => return polls,
                    Some(()) = nudged.recv() => {
                        polls += 1;
                        let _ = seen_tx.send(polls);
                    }
                }
            }
        });
        for n in 1..=5 {
            nudge.send(()).unwrap();
            assert_eq!(seen.recv().await, Some(n));
        }
        stop.send(true).unwrap();
        slot.wake();
        let polls = tokio::time::timeout(std::time::Duration::from_secs(5), task)
            .await
            .expect("the send wakes the task")
            .unwrap();
        assert_eq!(polls, 5);
        drop(nudge);
    }

    /// The first wait may come when the task has spent its tokio budget
    /// (a burst of pipelined requests): its waker must still reach the
    /// slot, or the stop would never wake the task.
    #[tokio::test]
    async fn a_first_wait_with_the_budget_spent_is_still_woken() {
        let (stop, receiver) = watch::channel(false);
        let slot = Slot::standalone();
        let its_slot = slot.clone();
        let (waiting_tx, waiting) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let mut signal = StopSignal::new(receiver, its_slot);
            let mut waiting_tx = Some(waiting_tx);
            let mut first = true;
            poll_fn(|cx| {
                if first {
                    first = false;
                    // Spend the budget within this poll.
                    loop {
                        let mut spend = Box::pin(tokio::task::consume_budget());
                        if spend.as_mut().poll(cx).is_pending() {
                            break;
                        }
                    }
                }
                let polled = signal.poll_stopping(cx);
                if polled.is_pending() {
                    if let Some(tx) = waiting_tx.take() {
                        let _ = tx.send(());
                    }
                }
                polled
            })
            .await;
        });
        waiting.await.unwrap();
        // Let the task settle: it is re-polled once after the budget's own
        // wake-up, then nothing but the send can wake it.
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        stop.send(true).unwrap();
        slot.wake();
        tokio::time::timeout(std::time::Duration::from_secs(5), task)
            .await
            .expect("the send wakes the task")
            .unwrap();
    }

    #[tokio::test]
    async fn a_dropped_sender_never_stops_the_connection() {
        let (stop, receiver) = watch::channel(false);
        let mut signal = StopSignal::new(receiver, Slot::standalone());
        drop(stop);
        assert!(!signal.is_stopping());
        let ready = poll_fn(|cx| Poll::Ready(signal.poll_stopping(cx).is_ready())).await;
        assert!(!ready);
    }

    #[tokio::test]
    async fn a_stop_sent_before_the_connection_started_counts() {
        let (stop, receiver) = watch::channel(false);
        stop.send(true).unwrap();
        assert!(StopSignal::new(receiver.clone(), Slot::standalone()).is_stopping());
        assert!(StopSignal::new(stop.subscribe(), Slot::standalone()).is_stopping());
    }
}
