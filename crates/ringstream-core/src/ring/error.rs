//! [`ConsumeError`]: asked to discard more bytes than a ring holds.

use core::fmt;

/// The error returned by [`FixedRing::try_consume`](super::FixedRing::try_consume)
/// and `RingBuffer::try_consume` when asked to discard more bytes than the
/// ring holds.
///
/// # Examples
///
/// ```
/// use ringstream_core::ring::FixedRing;
///
/// let mut ring = FixedRing::new([0u8; 8]);
/// ring.write(b"abc");
/// let err = ring.try_consume(5).unwrap_err();
/// assert_eq!(err.requested(), 5);
/// assert_eq!(err.available(), 3);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConsumeError {
    requested: usize,
    available: usize,
}

impl ConsumeError {
    /// The error for `requested` bytes asked of a ring holding `available`.
    pub(crate) const fn new(requested: usize, available: usize) -> ConsumeError {
        ConsumeError {
            requested,
            available,
        }
    }

    /// How many bytes the caller asked to consume.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::FixedRing;
    ///
    /// let mut ring = FixedRing::new([0u8; 8]);
    /// assert_eq!(ring.try_consume(1).unwrap_err().requested(), 1);
    /// ```
    pub const fn requested(&self) -> usize {
        self.requested
    }

    /// How many bytes the ring held.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::FixedRing;
    ///
    /// let mut ring = FixedRing::new([0u8; 8]);
    /// ring.write(b"ab");
    /// assert_eq!(ring.try_consume(3).unwrap_err().available(), 2);
    /// ```
    pub const fn available(&self) -> usize {
        self.available
    }
}

impl fmt::Display for ConsumeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot consume {} bytes from a ring holding {}",
            self.requested, self.available
        )
    }
}

impl core::error::Error for ConsumeError {}
