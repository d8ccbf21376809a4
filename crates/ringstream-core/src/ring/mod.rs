//! Ring buffers: [`RingBuffer`], growable, on the heap, and [`FixedRing`],
//! over storage the caller provides.
//!
//! A ring is the only place in ringstream that owns I/O memory. Bytes are
//! written at the tail and read from the head; both operations are at most
//! two `memcpy` calls, and consuming bytes is O(1). Nothing moves the stored
//! bytes except growth and `make_contiguous`. When a ring becomes empty its
//! head returns to offset 0, so a buffer that is filled and then drained
//! completely keeps its data contiguous. Both rings share their index
//! arithmetic and the same method names: `write`, `read`, `peek`,
//! `consume`, `as_slices` for the two runs of stored bytes, `spare_mut` and
//! `spare_slices_mut` for the free bytes a socket read can land in, then
//! `commit`.
//!
//! # The growable ring (`alloc`)
//!
//! [`RingBuffer`] comes in two forms:
//!
//! - **unbounded** ([`RingBuffer::new`], [`RingBuffer::with_capacity`]): a
//!   write that does not fit grows the storage geometrically (at least
//!   doubling), so building a body of `n` bytes from many small writes costs
//!   O(log n) reallocations, never one per write;
//! - **bounded** ([`RingBuffer::bounded`]): the capacity never changes and a
//!   write accepts only what fits, returning the count. That count is the
//!   back-pressure signal a producer waits on.
//!
//! A ring that was only written to, or drained to empty and refilled, hands
//! its allocation over without copying ([`RingBuffer::into_vec`]).
//!
//! # The fixed ring (no heap)
//!
//! [`FixedRing`] works like a bounded `RingBuffer` over storage the caller
//! provides — an array (`FixedRing<[u8; 1024]>`, in a `static` or a task's
//! state) or a borrowed slice (`FixedRing<&mut [u8]>`) — and never
//! allocates. A write takes only what fits and returns the count; the
//! [`WriteBuf`](crate::WriteBuf) and `fmt::Write` views take a piece whole
//! or not at all.

mod error;
mod fixed;
#[cfg(feature = "alloc")]
mod growable;
mod span;

pub use error::ConsumeError;
pub use fixed::FixedRing;
#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub use growable::RingBuffer;
