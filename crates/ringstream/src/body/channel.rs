//! The hand-over between a server connection, which owns the stream, and a
//! request's [`Incoming`](super::Incoming), owned by the service.
//!
//! A slot that both ends have let go of is kept by the thread, emptied,
//! for the next request body ([`KEPT`] at most): a request with a body
//! costs no allocation for its hand-over.

use std::cell::Cell;
use std::io;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use super::piece::BodyPiece;
use crate::error::Error;
use crate::wake::register;

/// The hand-over slot between a server connection (which owns the stream)
/// and the request's [`Incoming`] (owned by the service).
///
/// It holds at most one piece of data: the connection reads the stream only
/// when the body asks for more, so a body nobody reads costs nothing and
/// memory is bounded by one read block.
#[derive(Default)]
pub(crate) struct Shared {
    state: Mutex<Slot>,
}

#[derive(Default)]
struct Slot {
    item: Option<Result<BodyPiece, Error>>,
    /// The body is waiting for data.
    wanted: bool,
    /// The body was dropped: nobody will read any more.
    dropped: bool,
    /// The end of the body, or an error, was handed over.
    finished: bool,
    body_waker: Option<Waker>,
    conn_waker: Option<Waker>,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn poll_pull(&self, cx: &mut Context<'_>) -> Poll<Result<BodyPiece, Error>> {
        let mut slot = self.lock();
        if let Some(item) = slot.item.take() {
            slot.wanted = false;
            return Poll::Ready(item);
        }
        slot.wanted = true;
        register(&mut slot.body_waker, cx);
        let conn = slot.conn_waker.take();
        drop(slot);
        if let Some(w) = conn {
            w.wake();
        }
        Poll::Pending
    }

    /// Whether the body is waiting for data (and the slot is free). Registers
    /// the connection's waker to hear when that changes.
    pub(crate) fn poll_wanted(&self, cx: &mut Context<'_>) -> bool {
        let mut slot = self.lock();
        if slot.wanted && slot.item.is_none() && !slot.dropped {
            return true;
        }
        register(&mut slot.conn_waker, cx);
        false
    }

    /// Whether the body has been dropped.
    pub(crate) fn is_dropped(&self) -> bool {
        self.lock().dropped
    }

    /// Hand a piece of data (or the end, or an error) to the body, from the
    /// task polling `cx`. The body's task is woken unless it is that same
    /// task: the connection polls the body again right after handing data
    /// over, so waking itself would only schedule a redundant poll.
    pub(crate) fn put_from(&self, item: Result<BodyPiece, Error>, cx: &Context<'_>) {
        self.hand_over(item, Some(cx));
    }

    /// Hand a piece of data (or the end, or an error) to the body.
    pub(crate) fn put(&self, item: Result<BodyPiece, Error>) {
        self.hand_over(item, None);
    }

    fn hand_over(&self, item: Result<BodyPiece, Error>, cx: Option<&Context<'_>>) {
        let mut slot = self.lock();
        if slot.finished {
            return;
        }
        slot.finished = !matches!(item, Ok(BodyPiece::Data(_)));
        slot.item = Some(item);
        slot.wanted = false;
        let waker = slot.body_waker.take();
        drop(slot);
        if let Some(w) = waker {
            if !cx.is_some_and(|cx| w.will_wake(cx.waker())) {
                w.wake();
            }
        }
    }

    /// The connection stopped feeding the body: a body still open hears
    /// that the connection closed before its end. One that was dropped or
    /// was given its end needs nothing, and no error is made for it.
    fn sender_gone(&self) {
        let open = {
            let slot = self.lock();
            !slot.finished && !slot.dropped
        };
        if open {
            let closed = io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed before the end of the body",
            );
            self.put(Err(Error::Io(closed)));
        }
    }

    pub(super) fn body_dropped(&self) {
        let mut slot = self.lock();
        slot.dropped = true;
        slot.item = None;
        let waker = slot.conn_waker.take();
        drop(slot);
        if let Some(w) = waker {
            w.wake();
        }
    }
}

/// The connection's end of a [`Shared`] slot. Dropping it before the end of
/// the body was handed over (the connection failed or closed) gives the body
/// an error instead of leaving its reader waiting forever.
pub(crate) struct BodySender {
    pub(crate) shared: Arc<Shared>,
}

impl BodySender {
    /// A new hand-over: the connection's end, and the slot for the body's
    /// [`Incoming`](super::Incoming) (one the thread kept, if it has one).
    pub(crate) fn new() -> (BodySender, Arc<Shared>) {
        let shared = take_kept().unwrap_or_default();
        let sender = BodySender {
            shared: Arc::clone(&shared),
        };
        (sender, shared)
    }
}

impl Drop for BodySender {
    fn drop(&mut self) {
        match Arc::get_mut(&mut self.shared) {
            // The body is gone too: nobody hears of the end, and the slot,
            // emptied, is kept for the next body.
            Some(slot) => {
                *slot = Shared::default();
                keep(Arc::clone(&self.shared));
            }
            None => self.shared.sender_gone(),
        }
    }
}

/// Slots a thread keeps at most for the next request bodies: a few cover
/// the connections that read bodies one after another on the thread.
const KEPT: usize = 4;

thread_local! {
    static SLOTS: [Cell<Option<Arc<Shared>>>; KEPT] = const { [const { Cell::new(None) }; KEPT] };
}

/// A kept slot, if the thread has one.
fn take_kept() -> Option<Arc<Shared>> {
    SLOTS
        .try_with(|slots| {
            slots.iter().find_map(|cell| {
                // A kept slot has no other owner (the sender's reference
                // ends right after it is kept); one that had would be freed.
                let mut shared = cell.take()?;
                Arc::get_mut(&mut shared).is_some().then_some(shared)
            })
        })
        .ok()
        .flatten()
}

/// Keeps an emptied slot when the thread has room; else it is freed.
fn keep(shared: Arc<Shared>) {
    let _ = SLOTS.try_with(|slots| {
        let mut shared = Some(shared);
        for cell in slots {
            // Swaps ours into a free cell; a full one gets its own back.
            shared = cell.replace(shared);
            if shared.is_none() {
                return;
            }
            shared = cell.replace(shared);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain() {
        while take_kept().is_some() {}
    }

    #[test]
    fn a_slot_both_ends_let_go_of_is_reused_empty() {
        drain();
        let (sender, body) = BodySender::new();
        sender
            .shared
            .put(Ok(BodyPiece::Data(bytes::Bytes::from_static(b"x"))));
        let first = Arc::as_ptr(&body);
        drop(body);
        drop(sender);
        let (sender, body) = BodySender::new();
        assert_eq!(Arc::as_ptr(&body), first, "the kept slot is reused");
        let slot = body.lock();
        assert!(slot.item.is_none() && !slot.finished && !slot.dropped);
        drop(slot);
        drop((sender, body));
    }

    #[test]
    fn a_body_still_held_hears_the_connection_close_and_keeps_its_slot() {
        drain();
        let (sender, body) = BodySender::new();
        drop(sender);
        assert!(take_kept().is_none(), "the body still holds the slot");
        let item = body.lock().item.take();
        assert!(
            matches!(item, Some(Err(Error::Io(e))) if e.kind() == io::ErrorKind::UnexpectedEof)
        );
    }

    #[test]
    fn a_dropped_or_finished_body_gets_no_error() {
        drain();
        let (sender, body) = BodySender::new();
        body.body_dropped();
        let held = Arc::clone(&body);
        drop(sender);
        assert!(held.lock().item.is_none());

        let (sender, body) = BodySender::new();
        sender.shared.put(Ok(BodyPiece::End(None)));
        drop(sender);
        assert!(matches!(body.lock().item, Some(Ok(BodyPiece::End(None)))));
    }
}
