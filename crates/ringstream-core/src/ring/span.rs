//! The index arithmetic both rings share: where the stored bytes and the
//! free bytes lie in a storage of `cap` bytes.
//!
//! [`Span`] knows nothing of the storage itself. The growable ring passes
//! its current capacity (which growth changes), the fixed ring the length
//! of its caller's storage; each then copies bytes in and out of the ranges
//! it is given.

use core::ops::Range;

/// Where the stored bytes of a ring lie: `len` bytes from offset `head`,
/// wrapping at the capacity `cap` that every method is given.
///
/// Invariants, for the `cap` of the ring: `len <= cap`; `head < cap`, or
/// `head == 0`; and `head == 0` whenever `len == 0`, so a ring that is
/// drained completely starts again at offset 0 and refills contiguously.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Span {
    /// Offset of the first stored byte. Zero whenever `len == 0`.
    pub(crate) head: usize,
    /// Number of stored bytes.
    pub(crate) len: usize,
}

impl Span {
    /// No bytes stored.
    pub(crate) const EMPTY: Span = Span { head: 0, len: 0 };

    /// Offset one past the last stored byte if the storage went on past
    /// `cap`: greater than `cap` exactly when the data wraps. Cannot
    /// overflow, since `head < cap` (or 0) and `len <= cap`.
    #[inline]
    pub(crate) const fn end(self) -> usize {
        self.head + self.len
    }

    /// Whether the stored bytes wrap around the end of the storage (so
    /// they form two runs).
    #[inline]
    pub(crate) const fn is_wrapped(self, cap: usize) -> bool {
        self.len > cap - self.head
    }

    /// Offset one past the last stored byte, wrapped into the storage: where
    /// the next written byte goes.
    #[inline]
    pub(crate) const fn tail(self, cap: usize) -> usize {
        let t = self.end();
        if t >= cap {
            t - cap
        } else {
            t
        }
    }

    /// The stored bytes as two ranges of the storage, in order. The second
    /// is empty unless the data wraps.
    #[inline]
    pub(crate) const fn data(self, cap: usize) -> (Range<usize>, Range<usize>) {
        if self.is_wrapped(cap) {
            (self.head..cap, 0..self.len - (cap - self.head))
        } else {
            (self.head..self.end(), 0..0)
        }
    }

    /// The free bytes as two ranges of the storage, in the order writes
    /// fill them: from the tail to the end of the storage (or to the head,
    /// when the data wraps), then from offset 0 to the head. Both are empty
    /// when the ring is full; the second is empty unless the data is
    /// unwrapped and does not start at 0.
    #[inline]
    pub(crate) const fn spare(self, cap: usize) -> (Range<usize>, Range<usize>) {
        if self.len == cap {
            return (0..0, 0..0);
        }
        let tail = self.tail(cap);
        if tail >= self.head {
            // Data unwrapped (or empty): the run reaches the end of storage,
            // and the bytes before the head follow it.
            (tail..cap, 0..self.head)
        } else {
            (tail..self.head, 0..0)
        }
    }

    /// Discards `n <= len` bytes from the front; back to offset 0 when the
    /// ring becomes empty.
    #[inline]
    pub(crate) fn advance(&mut self, n: usize, cap: usize) {
        debug_assert!(n <= self.len);
        self.len -= n;
        if self.len == 0 {
            self.head = 0;
        } else {
            self.head += n;
            if self.head >= cap {
                self.head -= cap;
            }
        }
    }

    /// Keeps the first `len` stored bytes (all of them if there are fewer)
    /// and forgets the rest, from the tail.
    #[inline]
    pub(crate) fn truncate(&mut self, len: usize) {
        if len < self.len {
            self.len = len;
            if len == 0 {
                self.head = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_and_spare_partition_the_storage() {
        let cap = 7;
        for head in 0..cap {
            for len in 0..=cap {
                if len == 0 && head != 0 {
                    continue;
                }
                let span = Span { head, len };
                let mut owner = [0u8; 7];
                let (a, b) = span.data(cap);
                let (c, d) = span.spare(cap);
                for range in [a.clone(), b.clone(), c.clone(), d.clone()] {
                    for i in range {
                        owner[i] += 1;
                    }
                }
                assert_eq!(owner, [1; 7], "head {head}, len {len}");
                assert_eq!(a.len() + b.len(), len);
                assert_eq!(a.start, head);
                if !b.is_empty() {
                    assert_eq!((a.end, b.start), (cap, 0));
                }
                // Writes go on where the data ends.
                if c.start != c.end {
                    assert_eq!(c.start, span.tail(cap));
                }
                if !d.is_empty() {
                    assert_eq!((c.end, d.start, d.end), (cap, 0, head));
                }
            }
        }
    }

    #[test]
    fn advance_wraps_and_resets() {
        let mut span = Span { head: 5, len: 4 };
        span.advance(3, 6);
        assert_eq!(span, Span { head: 2, len: 1 });
        span.advance(1, 6);
        assert_eq!(span, Span::EMPTY);
        let mut span = Span { head: 3, len: 4 };
        span.truncate(9);
        assert_eq!(span.len, 4);
        span.truncate(0);
        assert_eq!(span, Span::EMPTY);
    }

    #[test]
    fn capacity_zero_is_empty_and_full() {
        let span = Span::EMPTY;
        assert_eq!(span.data(0), (0..0, 0..0));
        assert_eq!(span.spare(0), (0..0, 0..0));
        assert_eq!(span.tail(0), 0);
    }
}
