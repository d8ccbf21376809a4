//! Streaming mode: a bounded ring shared by the handler's
//! [`ResponseWriter`] and the connection's [`Reader`] (inside a
//! [`ResponseStream`](super::ResponseStream)).
//!
//! One `std::sync::Mutex` guards the ring, the two wakers and the end
//! state. Every change that can unblock the other side (bytes written,
//! bytes taken, end, abort, either side dropped) takes the other side's
//! waker under the lock and wakes it after the lock is released, so no
//! wake-up is lost and no waker runs under the lock.

use std::future::poll_fn;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

pub(super) use crate::wake::register;

use ringstream_core::RingBuffer;

impl Shared {
    /// The state of a new channel: one bounded ring of `capacity` bytes
    /// (at least 1), nobody waiting, open.
    pub(super) fn new(capacity: usize) -> Arc<Shared> {
        Arc::new(Shared {
            state: Mutex::new(State {
                ring: RingBuffer::bounded(capacity.max(1)),
                reader: None,
                writer: None,
                end: End::Open,
                reader_gone: false,
            }),
        })
    }
}

/// State shared by the writer and the body.
#[derive(Debug)]
pub(super) struct Shared {
    state: Mutex<State>,
}

/// What the lock guards.
#[derive(Debug)]
pub(super) struct State {
    /// Bounded: its capacity never changes (until the body is dropped,
    /// when it is released).
    pub(super) ring: RingBuffer,
    /// The connection, waiting for bytes or for the end.
    pub(super) reader: Option<Waker>,
    /// The handler, waiting for room or for the ring to drain.
    pub(super) writer: Option<Waker>,
    /// How the writer side ended, if it did.
    pub(super) end: End,
    /// The body was dropped: nobody will read again.
    pub(super) reader_gone: bool,
}

/// How the writer side stands.
#[derive(Debug)]
pub(super) enum End {
    /// The writer may still write.
    Open,
    /// The body is complete once the ring drains.
    Finished,
    /// The body failed; the error is handed to the connection once.
    Aborted(Option<io::Error>),
}

impl Shared {
    /// Locks the state.
    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        // No code panics while holding the lock, and every state is
        // consistent between statements, so a poisoned lock is still sound.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stores as many bytes of `data` as fit. Pending when the ring is
    /// full; fails once the body is gone.
    pub(super) fn poll_write(&self, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        let mut st = self.lock();
        if st.reader_gone {
            return Poll::Ready(Err(broken_pipe()));
        }
        if data.is_empty() {
            return Poll::Ready(Ok(0));
        }
        let n = st.ring.write(data);
        if n == 0 {
            register(&mut st.writer, cx);
            return Poll::Pending;
        }
        let reader = st.reader.take();
        drop(st);
        if let Some(w) = reader {
            w.wake();
        }
        Poll::Ready(Ok(n))
    }

    /// Ready once the connection has taken every byte from the ring.
    pub(super) fn poll_drained(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut st = self.lock();
        if st.reader_gone {
            return Poll::Ready(Err(broken_pipe()));
        }
        if st.ring.is_empty() {
            return Poll::Ready(Ok(()));
        }
        register(&mut st.writer, cx);
        Poll::Pending
    }

    /// Ends the writer side (once) and wakes the connection.
    pub(super) fn end(&self, end: End) {
        let mut st = self.lock();
        if !matches!(st.end, End::Open) {
            return;
        }
        if let End::Aborted(_) = end {
            // Nothing buffered will be sent: release it now.
            st.ring.clear();
        }
        st.end = end;
        let reader = st.reader.take();
        drop(st);
        if let Some(w) = reader {
            w.wake();
        }
    }
}

/// The error a writer sees once the body has been dropped.
fn broken_pipe() -> io::Error {
    io::Error::new(
        io::ErrorKind::BrokenPipe,
        "response body dropped: the client went away",
    )
}

/// Writes all of `data` into the shared ring, waiting for room as needed.
pub(super) async fn write_all(shared: &Shared, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        let n = poll_fn(|cx| shared.poll_write(cx, data)).await?;
        data = data.get(n..).unwrap_or_default();
    }
    Ok(())
}
