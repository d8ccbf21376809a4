//! Buffered mode: the whole body is built in one growable ring, then handed
//! to the connection as a single frame with a known length.

use std::io;

use bytes::Bytes;
use ringstream_core::RingBuffer;

/// Capacity, in bytes, below which a buffered body grows fourfold; from this
/// size on it doubles. See [`next_capacity`].
const QUADRUPLE_BELOW: usize = 16 * 1024;

/// The body of a [`ResponseStream`](super::ResponseStream) in buffered mode.
///
/// `ring` is `None` once the body has been handed to the connection.
#[derive(Debug)]
pub(super) struct Buffered {
    ring: Option<RingBuffer>,
}

impl Buffered {
    /// An empty body with room for `capacity` bytes before it first grows.
    pub(super) fn with_capacity(capacity: usize) -> Self {
        Buffered {
            ring: Some(RingBuffer::with_capacity(capacity)),
        }
    }

    /// Appends `data` whole, growing by the policy of [`next_capacity`].
    ///
    /// Fails only once the body has been handed to the connection.
    #[inline]
    pub(super) fn append(&mut self, data: &[u8]) -> io::Result<()> {
        if self.try_append_fast(data) {
            return Ok(());
        }
        self.append_slow(data)
    }

    /// The common case of [`append`](Self::append), small enough to inline
    /// into every `write!` piece: `data` fits after the stored bytes.
    #[inline(always)]
    pub(super) fn try_append_fast(&mut self, data: &[u8]) -> bool {
        match &mut self.ring {
            Some(ring) => ring.try_write_contiguous(data),
            None => false,
        }
    }

    /// Growth (or the error once sent), kept out of line so the fast path
    /// stays a few instructions.
    #[inline(never)]
    fn append_slow(&mut self, data: &[u8]) -> io::Result<()> {
        let Some(ring) = self.ring.as_mut() else {
            return Err(already_sent());
        };
        if data.len() > ring.room() {
            let needed = ring.len().saturating_add(data.len());
            let target = next_capacity(ring.capacity(), needed);
            // `target >= 2 * capacity` and `target >= needed`, so the ring
            // grows to exactly `target` in one reallocation.
            ring.reserve(target - ring.len());
        }
        ring.write(data);
        Ok(())
    }

    /// Bytes written and not yet handed to the connection.
    pub(super) fn len(&self) -> usize {
        self.ring.as_ref().map_or(0, RingBuffer::len)
    }

    /// Bytes the body can hold before it grows again (0 once sent).
    pub(super) fn capacity(&self) -> usize {
        self.ring.as_ref().map_or(0, RingBuffer::capacity)
    }

    /// Hands the whole body over as one `Bytes` built on the ring's own
    /// storage, without copying. Returns `None` for an empty body and on
    /// every call after the first.
    pub(super) fn take(&mut self) -> Option<Bytes> {
        let ring = self.ring.take()?;
        if ring.is_empty() {
            return None;
        }
        // A buffered ring is only ever written to, so its data starts at
        // offset 0 and `into_vec` neither copies nor allocates.
        Some(Bytes::from(ring.into_vec()))
    }
}

/// The capacity a buffered body grows to when it holds `capacity` bytes of
/// storage and needs room for `needed`.
///
/// The policy: quadruple while the capacity is below [`QUADRUPLE_BELOW`]
/// (16 KiB), then double; never less than `needed`, so one large append
/// lands in an exactly sized buffer. From the default 1 KiB a body grows
/// 1 → 4 → 16 → 32 → 64 KiB: four reallocations cover a 40 KB page, and
/// unused capacity stays below 12 KiB under 16 KiB and below half the
/// buffer above it.
fn next_capacity(capacity: usize, needed: usize) -> usize {
    let grown = if capacity == 0 {
        super::DEFAULT_BUFFERED_CAPACITY
    } else if capacity < QUADRUPLE_BELOW {
        capacity.saturating_mul(4)
    } else {
        capacity.saturating_mul(2)
    };
    grown.max(needed)
}

/// The error for a write after the body went to the connection.
#[cold]
fn already_sent() -> io::Error {
    io::Error::other("response body already handed to the connection")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_policy_quadruples_then_doubles() {
        assert_eq!(next_capacity(1024, 1025), 4096);
        assert_eq!(next_capacity(4096, 4097), 16384);
        assert_eq!(next_capacity(16384, 16385), 32768);
        assert_eq!(next_capacity(32768, 40_000), 65536);
        assert_eq!(next_capacity(0, 10), 1024);
        assert_eq!(next_capacity(1024, 1_000_000), 1_000_000);
        assert_eq!(next_capacity(usize::MAX / 2 + 1, usize::MAX), usize::MAX);
    }

    #[test]
    fn take_is_once() {
        let mut b = Buffered::with_capacity(4);
        b.append(b"hello").unwrap();
        assert_eq!(b.take().unwrap(), "hello");
        assert!(b.take().is_none());
        assert!(b.append(b"x").is_err());
    }
}
