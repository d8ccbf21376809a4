//! The connection's end of a streaming body: takes what the handler wrote
//! out of the shared ring, one frame per poll.

use std::io;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use ringstream_core::RingBuffer;

use super::channel::{register, End, Shared};

/// The connection's side of a streaming body, held by
/// [`ResponseStream`](super::ResponseStream).
#[derive(Debug)]
pub(super) struct Reader {
    shared: Arc<Shared>,
    /// The end (or the error) has been reported.
    done: bool,
}

impl Reader {
    /// The reading end of `shared`.
    pub(super) fn new(shared: Arc<Shared>) -> Reader {
        Reader {
            shared,
            done: false,
        }
    }

    /// Takes everything in the ring as one `Bytes` (one copy), or reports
    /// the error of an abort, or the end.
    pub(super) fn poll_data(&mut self, cx: &mut Context<'_>) -> Poll<Option<io::Result<Bytes>>> {
        if self.done {
            return Poll::Ready(None);
        }
        let mut st = self.shared.lock();
        if let End::Aborted(err) = &mut st.end {
            let err = err
                .take()
                .unwrap_or_else(|| io::Error::other("response body aborted"));
            self.done = true;
            return Poll::Ready(Some(Err(err)));
        }
        if !st.ring.is_empty() {
            let (a, b) = st.ring.as_slices();
            let mut frame = Vec::with_capacity(a.len() + b.len());
            frame.extend_from_slice(a);
            frame.extend_from_slice(b);
            st.ring.clear();
            let writer = st.writer.take();
            drop(st);
            if let Some(w) = writer {
                w.wake();
            }
            // Length equals capacity, so `Bytes` takes the vector over
            // without a further allocation.
            return Poll::Ready(Some(Ok(Bytes::from(frame))));
        }
        if let End::Finished = st.end {
            self.done = true;
            return Poll::Ready(None);
        }
        register(&mut st.reader, cx);
        Poll::Pending
    }

    /// No more data will come.
    pub(super) fn is_end_stream(&self) -> bool {
        if self.done {
            return true;
        }
        let st = self.shared.lock();
        matches!(st.end, End::Finished) && st.ring.is_empty()
    }

    /// The exact remaining length if the writer has finished, else `None`.
    pub(super) fn exact_len(&self) -> Option<u64> {
        if self.done {
            return Some(0);
        }
        let st = self.shared.lock();
        match st.end {
            End::Finished => u64::try_from(st.ring.len()).ok(),
            _ => None,
        }
    }

    /// Bytes waiting in the ring.
    pub(super) fn len(&self) -> usize {
        self.shared.lock().ring.len()
    }

    /// The ring's fixed capacity.
    pub(super) fn capacity(&self) -> usize {
        self.shared.lock().ring.capacity()
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        let mut st = self.shared.lock();
        st.reader_gone = true;
        st.reader = None;
        // Nobody will read the buffered bytes: release the storage now
        // rather than when the writer goes away.
        st.ring = RingBuffer::bounded(0);
        let writer = st.writer.take();
        drop(st);
        if let Some(w) = writer {
            w.wake();
        }
    }
}
