//! The hand-over between a server connection, which owns the stream, and a
//! request's [`Incoming`](super::Incoming), owned by the service.

use std::io;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use super::Pulled;
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
    item: Option<Result<Pulled, Error>>,
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

    pub(super) fn poll_pull(&self, cx: &mut Context<'_>) -> Poll<Result<Pulled, Error>> {
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
    pub(crate) fn put_from(&self, item: Result<Pulled, Error>, cx: &Context<'_>) {
        self.hand_over(item, Some(cx));
    }

    /// Hand a piece of data (or the end, or an error) to the body.
    pub(crate) fn put(&self, item: Result<Pulled, Error>) {
        self.hand_over(item, None);
    }

    fn hand_over(&self, item: Result<Pulled, Error>, cx: Option<&Context<'_>>) {
        let mut slot = self.lock();
        if slot.finished {
            return;
        }
        slot.finished = !matches!(item, Ok(Pulled::Data(_)));
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

impl Drop for BodySender {
    fn drop(&mut self) {
        let closed = io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "connection closed before the end of the body",
        );
        self.shared.put(Err(Error::Io(closed)));
    }
}
