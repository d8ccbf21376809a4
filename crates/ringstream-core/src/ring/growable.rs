//! [`RingBuffer`]: the growable ring, on the heap; see the
//! [module documentation](super) for its growth policy and bounded form.

use alloc::vec::Vec;
use core::{cmp, fmt};

use super::span::Span;
use super::ConsumeError;
use crate::out::{OutOfSpace, WriteBuf};

/// Capacity, in bytes, of the first allocation made by an unbounded ring
/// created with [`RingBuffer::new`] when a small write arrives.
const MIN_GROWTH: usize = 64;

/// A growable circular byte buffer with copy-once reads and writes.
///
/// See the [module documentation](super) for the growth policy and the
/// bounded form, and [`FixedRing`](super::FixedRing) for a ring over
/// storage the caller provides, without a heap.
///
/// The stored bytes form at most two contiguous runs in the storage, shown
/// by [`as_slices`](Self::as_slices); reads, peeks and the [`bytes::Buf`]
/// view walk those runs in order.
///
/// # Examples
///
/// ```
/// use core::fmt::Write as _;
/// use ringstream_core::RingBuffer;
///
/// let mut ring = RingBuffer::with_capacity(16);
/// write!(ring, "up{{job=\"dtu\"}} {}\n", 1).unwrap();
/// assert_eq!(ring.len(), 16);
///
/// let mut segment = [0u8; 4];
/// assert_eq!(ring.read(&mut segment), 4);
/// assert_eq!(&segment, b"up{j");
/// assert_eq!(ring.len(), 12);
/// ```
pub struct RingBuffer {
    /// Storage. Its allocation holds at least `cap` bytes; its length is
    /// the initialised prefix (the high-water mark of writes), so growing
    /// never zero-fills: new bytes are appended where they land. Every
    /// stored byte lies in `buf[..buf.len()]`, and when the data wraps,
    /// `buf.len() == cap`.
    buf: Vec<u8>,
    /// Capacity in bytes: the ring's modulus.
    cap: usize,
    /// Where the stored bytes lie, modulo `cap`.
    span: Span,
    /// Whether the capacity is fixed.
    bounded: bool,
}

impl RingBuffer {
    /// Creates an empty, unbounded ring. It allocates nothing until the
    /// first write.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::RingBuffer;
    ///
    /// let ring = RingBuffer::new();
    /// assert_eq!(ring.capacity(), 0);
    /// assert!(ring.is_empty());
    /// assert!(!ring.is_bounded());
    /// ```
    pub fn new() -> Self {
        RingBuffer {
            buf: Vec::new(),
            cap: 0,
            span: Span::EMPTY,
            bounded: false,
        }
    }

    /// Creates an empty, unbounded ring with room for `capacity` bytes
    /// before it first grows.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::RingBuffer;
    ///
    /// // One TCP segment's worth, like a 1460-byte response stream.
    /// let ring = RingBuffer::with_capacity(1460);
    /// assert_eq!(ring.capacity(), 1460);
    /// assert_eq!(ring.room(), 1460);
    /// ```
    pub fn with_capacity(capacity: usize) -> Self {
        RingBuffer {
            buf: Vec::with_capacity(capacity),
            cap: capacity,
            span: Span::EMPTY,
            bounded: false,
        }
    }

    /// Creates an empty ring whose capacity is fixed at `capacity` bytes.
    ///
    /// Writes to a bounded ring accept only what fits and return how many
    /// bytes they took; [`reserve`](Self::reserve) and
    /// [`shrink_to`](Self::shrink_to) leave its capacity unchanged. The
    /// storage is allocated here, once.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::RingBuffer;
    ///
    /// let mut ring = RingBuffer::bounded(4);
    /// assert_eq!(ring.write(b"abcdef"), 4);
    /// assert_eq!(ring.write(b"g"), 0); // full: the producer must wait
    /// assert_eq!(ring.capacity(), 4);
    /// ```
    pub fn bounded(capacity: usize) -> Self {
        RingBuffer {
            buf: Vec::with_capacity(capacity),
            cap: capacity,
            span: Span::EMPTY,
            bounded: true,
        }
    }

    /// Returns `true` if the capacity of this ring is fixed.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::RingBuffer;
    ///
    /// assert!(RingBuffer::bounded(64).is_bounded());
    /// assert!(!RingBuffer::new().is_bounded());
    /// ```
    pub fn is_bounded(&self) -> bool {
        self.bounded
    }

    /// Number of stored bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::RingBuffer;
    ///
    /// let mut ring = RingBuffer::new();
    /// ring.write(b"abc");
    /// assert_eq!(ring.len(), 3);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.span.len
    }

    /// Returns `true` if the ring holds no bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::RingBuffer;
    ///
    /// let mut ring = RingBuffer::new();
    /// assert!(ring.is_empty());
    /// ring.write(b"a");
    /// assert!(!ring.is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.span.len == 0
    }

    /// Number of bytes the ring can hold without growing.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::RingBuffer;
    ///
    /// let mut ring = RingBuffer::with_capacity(100);
    /// assert!(ring.capacity() >= 100);
    /// // An unbounded ring grows past it.
    /// ring.write(&[0; 200]);
    /// assert!(ring.capacity() >= 200);
    /// ```
    #[inline]
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// Number of bytes that can be written right now without growing:
    /// `capacity() - len()`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::RingBuffer;
    ///
    /// let mut ring = RingBuffer::with_capacity(16);
    /// ring.write(b"abc");
    /// assert_eq!(ring.room(), ring.capacity() - 3);
    /// ```
    #[inline]
    pub fn room(&self) -> usize {
        self.cap - self.span.len
    }

    /// Returns `true` if no byte can be written without growing:
    /// `len() == capacity()`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::RingBuffer;
    ///
    /// let mut ring = RingBuffer::bounded(2);
    /// ring.write(b"ab");
    /// assert!(ring.is_full());
    /// ring.consume(1);
    /// assert!(!ring.is_full());
    /// ```
    #[inline]
    pub fn is_full(&self) -> bool {
        self.span.len == self.cap
    }

    /// Appends bytes from `src` and returns how many were stored.
    ///
    /// An unbounded ring grows when `src` does not fit (to at least twice
    /// its capacity) and always stores all of `src`. A bounded ring stores
    /// `min(src.len(), room())` bytes. The copy is at most two `memcpy`
    /// calls.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::RingBuffer;
    ///
    /// let mut ring = RingBuffer::with_capacity(2);
    /// assert_eq!(ring.write(b"hello"), 5);
    /// assert!(ring.capacity() >= 5);
    ///
    /// let mut bounded = RingBuffer::bounded(2);
    /// assert_eq!(bounded.write(b"hello"), 2);
    /// ```
    ///
    /// # Panics
    ///
    /// Panics if an unbounded ring would need more than `usize::MAX` bytes,
    /// like `Vec` does.
    #[inline]
    pub fn write(&mut self, src: &[u8]) -> usize {
        if self.append_contiguous(src) {
            return src.len();
        }
        self.write_slow(src)
    }

    /// Appends all of `src` if it fits after the stored bytes without
    /// wrapping or growing, and returns `true`; otherwise changes nothing
    /// and returns `false`. This is the fast path of [`write`](Self::write),
    /// for callers with their own growth policy.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::RingBuffer;
    ///
    /// let mut ring = RingBuffer::with_capacity(4);
    /// assert!(ring.try_write_contiguous(b"abc"));
    /// assert!(!ring.try_write_contiguous(b"de"));
    /// assert_eq!(ring.len(), 3);
    /// ```
    #[inline]
    pub fn try_write_contiguous(&mut self, src: &[u8]) -> bool {
        self.append_contiguous(src)
    }

    /// Moves up to `dst.len()` stored bytes into `dst`, removing them from
    /// the ring, and returns how many were moved. The copy is at most two
    /// `memcpy` calls.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::RingBuffer;
    ///
    /// let mut ring = RingBuffer::from(&b"abcdef"[..]);
    /// let mut segment = [0u8; 4];
    /// assert_eq!(ring.read(&mut segment), 4);
    /// assert_eq!(&segment, b"abcd");
    /// assert_eq!(ring.read(&mut segment), 2);
    /// assert_eq!(ring.read(&mut segment), 0);
    /// ```
    #[inline]
    pub fn read(&mut self, dst: &mut [u8]) -> usize {
        let n = self.peek(dst);
        self.span.advance(n, self.cap);
        n
    }

    /// Copies up to `dst.len()` stored bytes into `dst` without removing
    /// them, and returns how many were copied.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::RingBuffer;
    ///
    /// let ring = RingBuffer::from(&b"abc"[..]);
    /// let mut out = [0u8; 2];
    /// assert_eq!(ring.peek(&mut out), 2);
    /// assert_eq!(&out, b"ab");
    /// assert_eq!(ring.len(), 3);
    /// ```
    #[inline]
    pub fn peek(&self, dst: &mut [u8]) -> usize {
        let (a, b) = self.as_slices();
        let n = cmp::min(dst.len(), a.len() + b.len());
        if n <= a.len() {
            dst[..n].copy_from_slice(&a[..n]);
        } else {
            let (d1, d2) = dst[..n].split_at_mut(a.len());
            d1.copy_from_slice(a);
            d2.copy_from_slice(&b[..n - a.len()]);
        }
        n
    }

    /// Discards the first `n` stored bytes in O(1).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::RingBuffer;
    ///
    /// let mut ring = RingBuffer::from(&b"GET / HTTP/1.1\r\n"[..]);
    /// ring.consume(4);
    /// assert_eq!(ring.as_slices().0, b"/ HTTP/1.1\r\n");
    /// ```
    ///
    /// # Panics
    ///
    /// Panics if `n > len()`. Use [`try_consume`](Self::try_consume) to get
    /// an error instead.
    #[inline]
    pub fn consume(&mut self, n: usize) {
        assert!(
            n <= self.span.len,
            "cannot consume {n} bytes from a ring holding {}",
            self.span.len
        );
        self.span.advance(n, self.cap);
    }

    /// Discards the first `n` stored bytes, or returns an error and leaves
    /// the ring unchanged if it holds fewer than `n`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::RingBuffer;
    ///
    /// let mut ring = RingBuffer::from(&b"abc"[..]);
    /// assert!(ring.try_consume(4).is_err());
    /// assert!(ring.try_consume(3).is_ok());
    /// assert!(ring.is_empty());
    /// ```
    ///
    /// # Errors
    ///
    /// Returns [`ConsumeError`] if `n > len()`.
    pub fn try_consume(&mut self, n: usize) -> Result<(), ConsumeError> {
        if n > self.span.len {
            return Err(ConsumeError::new(n, self.span.len));
        }
        self.span.advance(n, self.cap);
        Ok(())
    }

    /// Removes every stored byte. The capacity is kept.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::RingBuffer;
    ///
    /// let mut ring = RingBuffer::with_capacity(16);
    /// ring.write(b"abc");
    /// let capacity = ring.capacity();
    /// ring.clear();
    /// assert!(ring.is_empty());
    /// assert_eq!(ring.capacity(), capacity);
    /// ```
    pub fn clear(&mut self) {
        self.span = Span::EMPTY;
    }

    /// Keeps the first `len` stored bytes and drops the rest, the most
    /// recently written ones; does nothing if the ring holds `len` bytes
    /// or fewer. The capacity is kept.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::RingBuffer;
    ///
    /// let mut ring = RingBuffer::from(&b"abcdef"[..]);
    /// ring.truncate(2);
    /// assert_eq!(ring.as_slices().0, b"ab");
    /// ```
    #[inline]
    pub fn truncate(&mut self, len: usize) {
        self.span.truncate(len);
    }

    /// Makes room for at least `additional` more bytes without further
    /// growth, growing geometrically if needed.
    ///
    /// On a bounded ring this does nothing: its capacity is fixed.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::RingBuffer;
    ///
    /// let mut ring = RingBuffer::new();
    /// ring.reserve(100);
    /// assert!(ring.room() >= 100);
    /// ```
    ///
    /// # Panics
    ///
    /// Panics if the new capacity would exceed `usize::MAX` bytes.
    pub fn reserve(&mut self, additional: usize) {
        if !self.bounded && additional > self.room() {
            self.grow(additional);
        }
    }

    /// Shrinks the capacity to `max(len(), min_capacity)` if that is
    /// smaller than the current capacity. The stored bytes are kept, and
    /// moved to the start of the new storage.
    ///
    /// On a bounded ring this does nothing: its capacity is fixed.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::RingBuffer;
    ///
    /// let mut ring = RingBuffer::with_capacity(4096);
    /// ring.write(b"abc");
    /// ring.shrink_to(16);
    /// assert_eq!(ring.capacity(), 16);
    /// assert_eq!(ring.as_slices().0, b"abc");
    /// ```
    pub fn shrink_to(&mut self, min_capacity: usize) {
        let new_cap = cmp::max(self.span.len, min_capacity);
        if self.bounded || new_cap >= self.capacity() {
            return;
        }
        let mut v = Vec::with_capacity(new_cap);
        let (a, b) = self.as_slices();
        v.extend_from_slice(a);
        v.extend_from_slice(b);
        self.buf = v;
        self.cap = new_cap;
        self.span.head = 0;
    }

    /// The stored bytes as two runs, in order. The second run is empty
    /// unless the data wraps around the end of the storage.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::RingBuffer;
    ///
    /// let mut ring = RingBuffer::bounded(4);
    /// ring.write(b"abc");
    /// ring.consume(2);
    /// ring.write(b"de");
    /// assert_eq!(ring.as_slices(), (&b"cd"[..], &b"e"[..]));
    /// ```
    #[inline]
    pub fn as_slices(&self) -> (&[u8], &[u8]) {
        let (a, b) = self.span.data(self.cap);
        (&self.buf[a], &self.buf[b])
    }

    /// The largest contiguous writable run directly after the stored bytes,
    /// so that a socket read can land in the ring without a copy. Write
    /// into it, then call [`commit`](Self::commit) with the number of bytes
    /// written.
    ///
    /// This never grows the ring; call [`reserve`](Self::reserve) first to
    /// make room. The run is empty exactly when [`room`](Self::room) is 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::RingBuffer;
    ///
    /// let mut ring = RingBuffer::new();
    /// ring.reserve(8);
    /// let spare = ring.spare_mut();
    /// spare[..5].copy_from_slice(b"hello"); // as a socket read would
    /// ring.commit(5);
    /// assert_eq!(ring.as_slices().0, b"hello");
    /// ```
    #[inline]
    pub fn spare_mut(&mut self) -> &mut [u8] {
        let (run, _) = self.span.spare(self.cap);
        if run.end > self.buf.len() {
            // First use of this part of the storage: initialise it.
            self.buf.resize(run.end, 0);
        }
        &mut self.buf[run]
    }

    /// Both writable runs after the stored bytes, in the order writes fill
    /// them: [`spare_mut`](Self::spare_mut)'s run, then the free bytes
    /// before the data when the free space wraps around the end of the
    /// storage — for a vectored read. Write into them in order, then call
    /// [`commit`](Self::commit) once per run with the bytes written there
    /// (the second run only after the first is full).
    ///
    /// This never grows the ring.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::RingBuffer;
    ///
    /// let mut ring = RingBuffer::bounded(6);
    /// ring.write(b"abcd");
    /// ring.consume(3); // "d" at offset 3: free are 4..6, then 0..3
    /// let (first, second) = ring.spare_slices_mut();
    /// assert_eq!((first.len(), second.len()), (2, 3));
    /// first.copy_from_slice(b"ef");
    /// second[..1].copy_from_slice(b"g");
    /// ring.commit(2);
    /// ring.commit(1);
    /// assert_eq!(ring.as_slices(), (&b"def"[..], &b"g"[..]));
    /// ```
    #[inline]
    pub fn spare_slices_mut(&mut self) -> (&mut [u8], &mut [u8]) {
        let (first, second) = self.span.spare(self.cap);
        if first.end > self.buf.len() {
            self.buf.resize(first.end, 0);
        }
        // The second run ends at the head, inside the initialised prefix,
        // and lies before the first.
        let (front, back) = self.buf.split_at_mut(first.start);
        (&mut back[..first.len()], &mut front[second])
    }

    /// Marks the first `n` bytes of [`spare_mut`](Self::spare_mut) as
    /// written, making them part of the stored bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::RingBuffer;
    ///
    /// let mut ring = RingBuffer::bounded(4);
    /// ring.spare_mut()[..2].copy_from_slice(b"ok");
    /// ring.commit(2);
    /// assert_eq!(ring.len(), 2);
    /// ```
    ///
    /// # Panics
    ///
    /// Panics if `n` is larger than the run `spare_mut` returns.
    #[inline]
    pub fn commit(&mut self, n: usize) {
        let spare = self.spare_mut().len();
        assert!(
            n <= spare,
            "cannot commit {n} bytes: only {spare} spare bytes follow the data"
        );
        self.span.len += n;
    }

    /// Rearranges the storage so the stored bytes form one run, and returns
    /// it. This moves bytes only when the data wraps.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::RingBuffer;
    ///
    /// let mut ring = RingBuffer::bounded(4);
    /// ring.write(b"abc");
    /// ring.consume(2);
    /// ring.write(b"de");
    /// assert_eq!(ring.make_contiguous(), b"cde");
    /// assert_eq!(ring.as_slices(), (&b"cde"[..], &b""[..]));
    /// ```
    pub fn make_contiguous(&mut self) -> &mut [u8] {
        if self.span.is_wrapped(self.cap) {
            // Wrapped, so `buf.len() == cap`.
            self.buf.rotate_left(self.span.head);
            self.span.head = 0;
        }
        &mut self.buf[self.span.head..self.span.end()]
    }

    /// Returns the stored bytes as a `Vec<u8>`, reusing the ring's
    /// allocation. No allocation is made: when the data already starts at
    /// offset 0 (always the case for a ring that was only written to, or
    /// drained to empty and refilled) nothing is copied either; otherwise
    /// the bytes are moved to the front in place. The vector keeps the
    /// ring's capacity.
    ///
    /// This is how a finished body becomes `bytes::Bytes::from(vec)`
    /// without a copy.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::fmt::Write as _;
    /// use ringstream_core::RingBuffer;
    ///
    /// let mut ring = RingBuffer::with_capacity(64);
    /// write!(ring, "{}", "hello").unwrap();
    /// let body = bytes::Bytes::from(ring.into_vec());
    /// assert_eq!(body, "hello");
    /// ```
    pub fn into_vec(mut self) -> Vec<u8> {
        let Span { head, len } = self.span;
        if head != 0 {
            if self.span.is_wrapped(self.cap) {
                self.buf.rotate_left(head);
            } else {
                self.buf.copy_within(head..head + len, 0);
            }
        }
        let mut v = self.buf;
        v.truncate(len);
        v
    }

    /// Formats `args` into the ring, so `write!(ring, ...)` works without
    /// importing `core::fmt::Write` or `std::io::Write` (having both traits
    /// in scope would make the macro ambiguous).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::RingBuffer;
    ///
    /// let mut ring = RingBuffer::new();
    /// write!(ring, "{} {}\n", "opendtu_uptime", 42).unwrap();
    /// assert_eq!(ring.as_slices().0, b"opendtu_uptime 42\n");
    /// ```
    ///
    /// # Errors
    ///
    /// A bounded ring returns [`fmt::Error`] for a formatted piece that
    /// does not fit, and stores none of that piece (see the
    /// [`fmt::Write`] implementation).
    #[inline]
    pub fn write_fmt(&mut self, args: fmt::Arguments<'_>) -> fmt::Result {
        fmt::Write::write_fmt(self, args)
    }

    // ---- internals ----------------------------------------------------

    /// The fast path of every write while a body is being built: if the
    /// data does not wrap, ends at the initialised frontier, and `src` fits
    /// before the end of the storage, one append (a copy; no reallocation
    /// since the allocation holds `cap` bytes). Returns `false`, touching
    /// nothing, otherwise.
    #[inline(always)]
    fn append_contiguous(&mut self, src: &[u8]) -> bool {
        // head < cap (or 0) and len <= cap, so `end` cannot overflow. When
        // the data wraps, `end > cap >= buf.len()`.
        let end = self.span.end();
        let n = src.len();
        if end == self.buf.len() && n <= self.cap - end {
            // SAFETY: `end + n <= cap <= buf.capacity()` (the storage is
            // always allocated with at least `cap` bytes), so the `n` bytes
            // after the initialised `end` are inside the allocation; `src`
            // cannot overlap them (it is a shared borrow while `self` is
            // borrowed mutably); after the copy the first `end + n` bytes
            // are initialised.
            unsafe {
                copy_small_or_bulk(src.as_ptr(), self.buf.as_mut_ptr().add(end), n);
                self.buf.set_len(end + n);
            }
            self.span.len += n;
            true
        } else {
            false
        }
    }

    /// Writes that wrap, grow or hit the bound.
    #[inline(never)]
    fn write_slow(&mut self, src: &[u8]) -> usize {
        let room = self.room();
        let src = if src.len() <= room {
            src
        } else if self.bounded {
            &src[..room]
        } else {
            self.grow(src.len());
            src
        };
        self.copy_in(src);
        src.len()
    }

    /// `fmt::Write::write_str` when the fast path does not apply.
    #[inline(never)]
    fn write_str_slow(&mut self, s: &str) -> fmt::Result {
        if self.bounded && s.len() > self.room() {
            return Err(fmt::Error);
        }
        self.write_slow(s.as_bytes());
        Ok(())
    }

    /// Copies `src` (which fits in `room()`) after the stored bytes: at
    /// most two runs, each copied over initialised bytes and/or appended
    /// at the frontier.
    fn copy_in(&mut self, src: &[u8]) {
        debug_assert!(src.len() <= self.room());
        // Unwrapped data: the first run reaches the end of the storage.
        // Wrapped (or tail at the end): it reaches the head.
        let (run, _) = self.span.spare(self.cap);
        let first = cmp::min(src.len(), run.len());
        let (a, b) = src.split_at(first);
        self.put_at(run.start, a);
        // The second run starts at 0 and ends before the head, inside the
        // initialised prefix.
        self.put_at(0, b);
        self.span.len += src.len();
    }

    /// Stores `src` at `pos` (`pos <= buf.len()`, `pos + src.len() <=
    /// cap`): overwrites the initialised part, appends the rest.
    #[inline]
    fn put_at(&mut self, pos: usize, src: &[u8]) {
        let inside = cmp::min(src.len(), self.buf.len() - pos);
        let (a, b) = src.split_at(inside);
        self.buf[pos..pos + inside].copy_from_slice(a);
        if !b.is_empty() {
            self.buf.extend_from_slice(b);
        }
    }

    /// Grows an unbounded ring so that `additional` more bytes fit: to at
    /// least twice the capacity. The stored bytes stay in order: a wrapped
    /// second run is moved to follow the first.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, additional: usize) {
        let old_cap = self.cap;
        let needed = self
            .span
            .len
            .checked_add(additional)
            .expect("ring buffer capacity overflow");
        let new_cap = cmp::max(cmp::max(old_cap.saturating_mul(2), needed), MIN_GROWTH);
        // One reallocation that copies only the initialised prefix and
        // zero-fills nothing.
        self.buf.reserve_exact(new_cap - self.buf.len());
        self.cap = new_cap;
        let end = self.span.end();
        if end > old_cap {
            // Wrapped, so buf.len() == old_cap: the second run sits at
            // [0, end - old_cap) and is appended after the first run.
            // end - old_cap < old_cap <= new_cap - old_cap, so it fits.
            self.buf.extend_from_within(..end - old_cap);
        }
    }
}

impl Clone for RingBuffer {
    /// A copy with the same capacity, bound and layout.
    fn clone(&self) -> Self {
        let mut buf = Vec::with_capacity(self.cap);
        buf.extend_from_slice(&self.buf);
        RingBuffer {
            buf,
            cap: self.cap,
            span: self.span,
            bounded: self.bounded,
        }
    }
}

impl Default for RingBuffer {
    /// Same as [`RingBuffer::new`].
    fn default() -> Self {
        RingBuffer::new()
    }
}

impl fmt::Debug for RingBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RingBuffer")
            .field("len", &self.span.len)
            .field("capacity", &self.capacity())
            .field("head", &self.span.head)
            .field("bounded", &self.bounded)
            .finish()
    }
}

impl From<&[u8]> for RingBuffer {
    /// An unbounded ring holding a copy of `bytes`, with capacity equal to
    /// its length.
    fn from(bytes: &[u8]) -> Self {
        RingBuffer {
            buf: bytes.to_vec(),
            cap: bytes.len(),
            span: Span {
                head: 0,
                len: bytes.len(),
            },
            bounded: false,
        }
    }
}

impl From<Vec<u8>> for RingBuffer {
    /// An unbounded ring holding `vec`'s bytes, reusing its allocation
    /// (its spare capacity becomes the ring's room). Nothing is copied.
    fn from(vec: Vec<u8>) -> Self {
        let len = vec.len();
        RingBuffer {
            cap: vec.capacity(),
            buf: vec,
            span: Span { head: 0, len },
            bounded: false,
        }
    }
}

impl Extend<u8> for RingBuffer {
    /// Appends every byte of `iter`.
    ///
    /// # Panics
    ///
    /// Panics on a bounded ring if the bytes do not fit; use
    /// [`RingBuffer::write`] to learn how many bytes fit instead.
    fn extend<I: IntoIterator<Item = u8>>(&mut self, iter: I) {
        let iter = iter.into_iter();
        self.reserve(iter.size_hint().0);
        for byte in iter {
            assert!(
                self.write(&[byte]) == 1,
                "bounded ring buffer is full ({} bytes)",
                self.capacity()
            );
        }
    }
}

impl<'a> Extend<&'a u8> for RingBuffer {
    /// Appends every byte of `iter`.
    ///
    /// # Panics
    ///
    /// Panics on a bounded ring if the bytes do not fit.
    fn extend<I: IntoIterator<Item = &'a u8>>(&mut self, iter: I) {
        self.extend(iter.into_iter().copied());
    }
}

impl fmt::Write for RingBuffer {
    /// Appends `s` whole.
    ///
    /// An unbounded ring always succeeds. A bounded ring that lacks room
    /// for all of `s` stores none of it and returns [`fmt::Error`], so it
    /// never holds half a formatted piece.
    #[inline]
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.append_contiguous(s.as_bytes()) {
            return Ok(());
        }
        self.write_str_slow(s)
    }
}

impl WriteBuf for RingBuffer {
    /// Appends all of `bytes`: an unbounded ring grows, so only a bounded
    /// one runs out of space, and then stores nothing.
    #[inline]
    fn put(&mut self, bytes: &[u8]) -> Result<(), OutOfSpace> {
        if self.append_contiguous(bytes) {
            return Ok(());
        }
        if self.bounded && bytes.len() > self.room() {
            return Err(OutOfSpace);
        }
        self.write_slow(bytes);
        Ok(())
    }

    /// The number of stored bytes.
    #[inline]
    fn mark(&self) -> usize {
        self.span.len
    }

    /// Same as [`RingBuffer::truncate`].
    #[inline]
    fn rewind(&mut self, mark: usize) {
        self.span.truncate(mark);
    }
}

impl bytes::Buf for RingBuffer {
    #[inline]
    fn remaining(&self) -> usize {
        self.span.len
    }

    /// The first run of stored bytes (see [`RingBuffer::as_slices`]).
    #[inline]
    fn chunk(&self) -> &[u8] {
        self.as_slices().0
    }

    /// Fills up to two `IoSlice`s with the stored runs, for a vectored
    /// write.
    #[cfg(feature = "std")]
    fn chunks_vectored<'a>(&'a self, dst: &mut [std::io::IoSlice<'a>]) -> usize {
        let (a, b) = self.as_slices();
        let mut n = 0;
        for run in [a, b] {
            if run.is_empty() {
                continue;
            }
            match dst.get_mut(n) {
                Some(slot) => *slot = std::io::IoSlice::new(run),
                None => break,
            }
            n += 1;
        }
        n
    }

    /// Same as [`RingBuffer::consume`].
    #[inline]
    fn advance(&mut self, cnt: usize) {
        self.consume(cnt);
    }

    fn copy_to_slice(&mut self, dst: &mut [u8]) {
        assert!(
            dst.len() <= self.span.len,
            "cannot copy {} bytes from a ring holding {}",
            dst.len(),
            self.span.len
        );
        self.read(dst);
    }
}

// SAFETY: `chunk_mut` returns a slice of initialised storage (the ring never
// holds uninitialised memory), `remaining_mut` is exact for a bounded ring
// and a large upper bound for an unbounded one (which grows in `chunk_mut`
// when no spare byte is left), and `advance_mut` panics instead of marking
// bytes past the returned run as written. The methods themselves hold no
// unsafe code (`put_slice` reaches the append fast path through `write`,
// whose own SAFETY argument covers it).
unsafe impl bytes::BufMut for RingBuffer {
    #[inline]
    fn remaining_mut(&self) -> usize {
        if self.bounded {
            self.room()
        } else {
            isize::MAX as usize - self.span.len
        }
    }

    /// Same as [`RingBuffer::commit`].
    ///
    /// # Panics
    ///
    /// Panics if `cnt` exceeds the run `chunk_mut` returns.
    ///
    /// # Safety
    ///
    /// Any `cnt` is memory-safe here since the ring's storage is always
    /// initialised; the trait's contract asks callers to have written the
    /// first `cnt` bytes of `chunk_mut`.
    #[inline]
    unsafe fn advance_mut(&mut self, cnt: usize) {
        self.commit(cnt);
    }

    /// The writable run after the stored bytes. An unbounded ring with no
    /// room grows first, so the run is empty only when `remaining_mut` is 0.
    #[inline]
    fn chunk_mut(&mut self) -> &mut bytes::buf::UninitSlice {
        if !self.bounded && self.room() == 0 {
            self.grow(1);
        }
        bytes::buf::UninitSlice::new(self.spare_mut())
    }

    /// Appends all of `src` with at most two copies.
    ///
    /// # Panics
    ///
    /// Panics if `src` does not fit in a bounded ring.
    #[inline]
    fn put_slice(&mut self, src: &[u8]) {
        assert!(
            src.len() <= self.remaining_mut(),
            "cannot put {} bytes into a ring with room for {}",
            src.len(),
            self.remaining_mut()
        );
        self.write(src);
    }
}

#[cfg(feature = "std")]
impl std::io::Read for RingBuffer {
    /// Same as [`RingBuffer::read`]. An empty ring returns `Ok(0)`, which
    /// readers treat as end of data.
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        Ok(RingBuffer::read(self, buf))
    }
}

#[cfg(feature = "std")]
impl std::io::Write for RingBuffer {
    /// Same as [`RingBuffer::write`]: never fails and never blocks.
    ///
    /// A full bounded ring returns `Ok(0)` for a non-empty `buf`, so
    /// `write_all` on it fails with `ErrorKind::WriteZero` instead of
    /// spinning; `write` reports partial acceptance as a short count.
    #[inline]
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Ok(RingBuffer::write(self, buf))
    }

    /// Does nothing: the ring is the destination.
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(feature = "std")]
impl std::io::BufRead for RingBuffer {
    /// The first run of stored bytes; empty only when the ring is empty.
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        Ok(self.as_slices().0)
    }

    /// Same as [`RingBuffer::consume`].
    fn consume(&mut self, amt: usize) {
        RingBuffer::consume(self, amt);
    }
}

/// Copies `n` bytes from `src` to `dst`. Pieces of up to 16 bytes (most
/// pieces a `write!` produces) are copied with two overlapping fixed-size
/// moves, inline, instead of a call into the C library's `memcpy`.
///
/// # Safety
///
/// `src` must be valid for reads and `dst` for writes of `n` bytes, and the
/// two ranges must not overlap.
#[inline(always)]
unsafe fn copy_small_or_bulk(src: *const u8, dst: *mut u8, n: usize) {
    use core::ptr::{copy_nonoverlapping, read_unaligned, write_unaligned};
    // SAFETY: every access lies within the first `n` bytes of `src` and
    // `dst`, which the caller guarantees are valid and disjoint: for 8 <= n <= 16 the moves cover [0, 8) and [n - 8, n),
    // for 4 <= n < 8 [0, 4) and [n - 4, n), for n < 4 single bytes at 0,
    // n / 2 and n - 1. Unaligned reads and writes are used, so no alignment
    // is assumed.
    unsafe {
        if n > 16 {
            copy_nonoverlapping(src, dst, n);
        } else if n >= 8 {
            let head = read_unaligned(src.cast::<u64>());
            let tail = read_unaligned(src.add(n - 8).cast::<u64>());
            write_unaligned(dst.cast::<u64>(), head);
            write_unaligned(dst.add(n - 8).cast::<u64>(), tail);
        } else if n >= 4 {
            let head = read_unaligned(src.cast::<u32>());
            let tail = read_unaligned(src.add(n - 4).cast::<u32>());
            write_unaligned(dst.cast::<u32>(), head);
            write_unaligned(dst.add(n - 4).cast::<u32>(), tail);
        } else if n > 0 {
            *dst = *src;
            *dst.add(n / 2) = *src.add(n / 2);
            *dst.add(n - 1) = *src.add(n - 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contents(r: &RingBuffer) -> Vec<u8> {
        let (a, b) = r.as_slices();
        let mut v = Vec::from(a);
        v.extend_from_slice(b);
        v
    }

    #[test]
    fn head_resets_to_zero_when_drained() {
        let mut r = RingBuffer::with_capacity(8);
        r.write(b"abcdef");
        r.consume(3);
        assert_eq!(r.span.head, 3);
        r.consume(3);
        assert_eq!(r.span.head, 0);
        r.write(b"xyz");
        r.consume(1);
        let mut out = [0u8; 8];
        assert_eq!(r.read(&mut out), 2);
        assert_eq!(r.span.head, 0);
    }

    #[test]
    fn head_wraps_exactly_at_capacity() {
        let mut r = RingBuffer::bounded(4);
        r.write(b"abcd");
        r.consume(2);
        r.write(b"ef");
        assert_eq!((r.span.head, r.span.tail(r.cap)), (2, 2));
        r.consume(2);
        assert_eq!(r.span.head, 0);
        assert_eq!(contents(&r), b"ef");
    }

    #[test]
    fn grow_while_wrapped_appends_second_run_after_first() {
        let mut r = RingBuffer::with_capacity(4);
        r.write(b"abcd");
        r.consume(3);
        r.write(b"efg"); // wraps: d | efg
        assert_eq!(r.span.head, 3);
        r.write(b"hi"); // grows (to the minimum growth size)
        assert_eq!(r.capacity(), MIN_GROWTH);
        assert_eq!(r.span.head, 3);
        assert_eq!(r.as_slices(), (&b"defghi"[..], &b""[..]));
    }

    /// Every piece length around the small-copy thresholds (0..=40 bytes)
    /// at every offset of an 8-byte word lands byte for byte. Run under
    /// Miri too.
    #[test]
    fn small_and_bulk_copies_are_exact() {
        let source: alloc::vec::Vec<u8> = (0u8..=255).collect();
        for offset in 0..8 {
            for n in 0..=40 {
                let mut r = RingBuffer::with_capacity(64);
                r.write(&source[200..200 + offset]);
                let piece = &source[offset..offset + n];
                assert!(r.try_write_contiguous(piece));
                let mut expected = source[200..200 + offset].to_vec();
                expected.extend_from_slice(piece);
                assert_eq!(contents(&r), expected, "offset {offset}, n {n}");
            }
        }
    }

    /// The unchecked copy of the append fast path: exactly up to the
    /// capacity, one byte over it, after growth (storage larger than the
    /// initialised part), after a consume (data not starting at 0) and with
    /// the data wrapped (the fast path must refuse). Run under Miri too.
    #[test]
    fn append_fast_path_edges() {
        let mut r = RingBuffer::with_capacity(8);
        assert!(r.try_write_contiguous(b""));
        assert!(r.try_write_contiguous(b"abcdefgh"));
        assert!(!r.try_write_contiguous(b"i"));
        assert_eq!(contents(&r), b"abcdefgh");
        assert_eq!(r.write(b"i"), 1); // grows
        let cap = r.capacity();
        assert!(cap > 9);
        let fill = alloc::vec![b'x'; cap - 9];
        assert!(r.try_write_contiguous(&fill));
        assert!(!r.try_write_contiguous(b"y"));
        assert_eq!(r.len(), cap);

        let mut r = RingBuffer::with_capacity(8);
        r.write(b"abcdef");
        r.consume(4);
        assert!(r.try_write_contiguous(b"gh"));
        assert!(!r.try_write_contiguous(b"i"));
        assert_eq!(r.write(b"ij"), 2); // wraps
        assert!(!r.try_write_contiguous(b"k"));
        assert_eq!(contents(&r), b"efghij");
        r.consume(6);
        assert_eq!(r.write(b"kl"), 2);
        assert_eq!(contents(&r), b"kl");
    }

    #[test]
    fn grow_from_zero_uses_minimum() {
        let mut r = RingBuffer::new();
        r.write(b"a");
        assert_eq!(r.capacity(), MIN_GROWTH);
    }

    #[test]
    fn spare_range_when_tail_sits_at_end() {
        let mut r = RingBuffer::bounded(4);
        r.write(b"abcd");
        r.consume(1);
        // data [1, 4): tail wraps to 0, spare is [0, 1).
        assert_eq!(r.span.spare(r.cap).0, 0..1);
        r.commit(1);
        assert_eq!(r.span.spare(r.cap).0, 0..0);
    }

    #[test]
    fn storage_is_initialised_lazily_and_never_zero_filled_by_growth() {
        let mut r = RingBuffer::with_capacity(8);
        assert_eq!(r.buf.len(), 0);
        r.write(b"abc");
        assert_eq!(r.buf.len(), 3, "appended at the frontier");
        r.write(&[b'x'; 10]); // grows
        assert_eq!(r.buf.len(), 13);
        assert!(r.buf.capacity() >= r.cap);
        // Drained and refilled: overwrites initialised bytes.
        r.consume(13);
        r.write(b"zz");
        assert_eq!(r.buf.len(), 13);
        assert_eq!(contents(&r), b"zz");
        // spare_mut initialises only the run it returns.
        let n = r.spare_mut().len();
        assert_eq!(n, r.cap - 2);
        assert_eq!(r.buf.len(), r.cap);
    }

    #[test]
    fn commit_without_spare_mut_initialises_the_committed_bytes() {
        let mut r = RingBuffer::with_capacity(4);
        r.commit(3);
        assert_eq!(r.len(), 3);
        assert_eq!(r.as_slices().0.len(), 3);
    }

    #[test]
    fn wrapped_data_implies_full_frontier() {
        let mut r = RingBuffer::bounded(6);
        r.write(b"abcd");
        r.consume(3);
        r.write(b"efgh"); // d e f | g h
        assert_eq!(r.buf.len(), r.cap);
        assert_eq!(r.as_slices(), (&b"def"[..], &b"gh"[..]));
    }

    #[test]
    fn into_vec_moves_unwrapped_data_to_front_in_place() {
        let mut r = RingBuffer::with_capacity(8);
        r.write(b"abcdef");
        r.consume(2);
        let ptr = r.buf.as_ptr();
        let v = r.into_vec();
        assert_eq!(v, b"cdef");
        assert_eq!(v.as_ptr(), ptr);
        assert_eq!(v.capacity(), 8);
    }
}
