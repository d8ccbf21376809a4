//! [`FixedRing`]: a ring over storage the caller provides, without a heap.

use core::{cmp, fmt};

use super::span::Span;
use super::ConsumeError;
use crate::out::{OutOfSpace, WriteBuf};

/// A circular byte buffer over storage the caller provides: an array
/// (`FixedRing<[u8; N]>`), a borrowed slice (`FixedRing<&mut [u8]>`), or
/// any `S` that is a byte slice through `AsRef<[u8]>` and `AsMut<[u8]>`.
///
/// The capacity is the length of the storage and never changes; nothing is
/// allocated. It reads and writes like a bounded
/// [`RingBuffer`](crate::ring) — the same method names, and the same index
/// arithmetic under them: [`write`](Self::write) takes what fits and returns
/// the count, [`as_slices`](Self::as_slices) shows the stored bytes as two
/// runs, [`spare_mut`](Self::spare_mut) and [`commit`](Self::commit) let a
/// socket read land in place. Through [`WriteBuf`] and `fmt::Write` it takes
/// a piece whole or not at all, so a response head can be written straight
/// into a transmit ring.
///
/// The storage's contents when the ring is made are ignored: a new ring is
/// empty. `S` must return the same slice every time it is asked, as arrays,
/// slices, `Vec` and `Box` do (a storage that changed length would make the
/// ring panic, never read out of bounds).
///
/// # Examples
///
/// A connection's receive ring, with a request arriving in two reads:
///
/// ```
/// use ringstream_core::h1::{Field, HeadParser};
/// use ringstream_core::ring::FixedRing;
/// use ringstream_core::Limits;
///
/// let mut rx = FixedRing::new([0u8; 128]);
/// for read in [&b"GET / HTTP/1.1\r\nHo"[..], b"st: a\r\n\r\n"] {
///     // As a socket read would: straight into the free run.
///     let spare = rx.spare_mut();
///     spare[..read.len()].copy_from_slice(read);
///     rx.commit(read.len());
/// }
/// let mut fields = [Field::EMPTY; 8];
/// let head = HeadParser::new(Limits::DEFAULT)
///     .parse(rx.make_contiguous(), &mut fields)?
///     .expect("a complete head");
/// assert_eq!(head.target, "/");
/// let used = head.head_len;
/// rx.consume(used);
/// assert!(rx.is_empty());
/// # Ok::<(), ringstream_core::Error>(())
/// ```
///
/// Over a borrowed slice, writing takes what fits:
///
/// ```
/// use ringstream_core::ring::FixedRing;
///
/// let mut storage = [0u8; 4];
/// let mut ring = FixedRing::new(&mut storage[..]);
/// assert_eq!(ring.write(b"abcdef"), 4);
/// assert!(ring.is_full());
/// let mut out = [0u8; 2];
/// assert_eq!(ring.read(&mut out), 2);
/// assert_eq!(ring.write(b"ef"), 2);
/// assert_eq!(ring.as_slices(), (&b"cd"[..], &b"ef"[..]));
/// ```
#[derive(Clone)]
pub struct FixedRing<S> {
    storage: S,
    /// Where the stored bytes lie, modulo the storage's length.
    span: Span,
}

impl<S: AsRef<[u8]> + AsMut<[u8]>> FixedRing<S> {
    /// An empty ring over `storage`, with a capacity of its length.
    ///
    /// It is a `const fn`, so a ring can be a `static` item.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ring::FixedRing;
    ///
    /// let ring = FixedRing::new([0u8; 1024]);
    /// assert_eq!(ring.capacity(), 1024);
    /// assert!(ring.is_empty());
    /// ```
    #[inline]
    pub const fn new(storage: S) -> FixedRing<S> {
        FixedRing {
            storage,
            span: Span::EMPTY,
        }
    }

    /// Gives the storage back. The stored bytes are in it, as
    /// [`as_slices`](Self::as_slices) showed them.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ring::FixedRing;
    ///
    /// let mut ring = FixedRing::new([0u8; 4]);
    /// ring.write(b"ab");
    /// assert_eq!(ring.into_inner(), *b"ab\0\0");
    /// ```
    #[inline]
    pub fn into_inner(self) -> S {
        self.storage
    }

    /// Number of stored bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::FixedRing;
    ///
    /// let mut ring = FixedRing::new([0u8; 8]);
    /// assert_eq!(ring.len(), 0);
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
    /// use ringstream_core::FixedRing;
    ///
    /// let mut ring = FixedRing::new([0u8; 8]);
    /// assert!(ring.is_empty());
    /// ring.write(b"a");
    /// assert!(!ring.is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.span.len == 0
    }

    /// Number of bytes the ring can hold: the length of its storage.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::FixedRing;
    ///
    /// assert_eq!(FixedRing::new([0u8; 8]).capacity(), 8);
    /// let mut storage = [0u8; 16];
    /// assert_eq!(FixedRing::new(&mut storage[..]).capacity(), 16);
    /// ```
    #[inline]
    pub fn capacity(&self) -> usize {
        self.storage.as_ref().len()
    }

    /// Number of bytes that can be written now: `capacity() - len()`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::FixedRing;
    ///
    /// let mut ring = FixedRing::new([0u8; 8]);
    /// ring.write(b"abc");
    /// assert_eq!(ring.room(), 5);
    /// ```
    #[inline]
    pub fn room(&self) -> usize {
        self.capacity() - self.span.len
    }

    /// Returns `true` if no byte can be written: `len() == capacity()`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::FixedRing;
    ///
    /// let mut ring = FixedRing::new([0u8; 2]);
    /// assert_eq!(ring.write(b"abc"), 2);
    /// assert!(ring.is_full());
    /// ```
    #[inline]
    pub fn is_full(&self) -> bool {
        self.span.len == self.capacity()
    }

    /// Appends bytes from `src` and returns how many were stored:
    /// `min(src.len(), room())`, copied with at most two `memcpy` calls.
    ///
    /// To store all of `src` or nothing, use [`WriteBuf::put`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ring::FixedRing;
    ///
    /// let mut ring = FixedRing::new([0u8; 2]);
    /// assert_eq!(ring.write(b"hello"), 2);
    /// assert_eq!(ring.write(b"!"), 0); // full: the producer must wait
    /// ```
    #[inline]
    pub fn write(&mut self, src: &[u8]) -> usize {
        let n = cmp::min(src.len(), self.room());
        self.copy_in(&src[..n]);
        n
    }

    /// Moves up to `dst.len()` stored bytes into `dst`, removing them from
    /// the ring, and returns how many were moved.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ring::FixedRing;
    ///
    /// let mut ring = FixedRing::new([0u8; 8]);
    /// ring.write(b"abcdef");
    /// let mut segment = [0u8; 4];
    /// assert_eq!(ring.read(&mut segment), 4);
    /// assert_eq!(&segment, b"abcd");
    /// assert_eq!(ring.read(&mut segment), 2);
    /// ```
    #[inline]
    pub fn read(&mut self, dst: &mut [u8]) -> usize {
        let n = self.peek(dst);
        let cap = self.capacity();
        self.span.advance(n, cap);
        n
    }

    /// Copies up to `dst.len()` stored bytes into `dst` without removing
    /// them, and returns how many were copied.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ring::FixedRing;
    ///
    /// let mut ring = FixedRing::new([0u8; 8]);
    /// ring.write(b"abc");
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
    /// use ringstream_core::ring::FixedRing;
    ///
    /// let mut ring = FixedRing::new([0u8; 32]);
    /// ring.write(b"GET / HTTP/1.1\r\n");
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
        let cap = self.capacity();
        self.span.advance(n, cap);
    }

    /// Discards the first `n` stored bytes, or returns an error and leaves
    /// the ring unchanged if it holds fewer than `n`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ring::FixedRing;
    ///
    /// let mut ring = FixedRing::new([0u8; 8]);
    /// ring.write(b"abc");
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
        let cap = self.capacity();
        self.span.advance(n, cap);
        Ok(())
    }

    /// Removes every stored byte.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::FixedRing;
    ///
    /// let mut ring = FixedRing::new([0u8; 8]);
    /// ring.write(b"abc");
    /// ring.clear();
    /// assert!(ring.is_empty());
    /// assert_eq!(ring.room(), 8);
    /// ```
    #[inline]
    pub fn clear(&mut self) {
        self.span = Span::EMPTY;
    }

    /// Keeps the first `len` stored bytes and drops the rest, the most
    /// recently written ones; does nothing if the ring holds `len` bytes or
    /// fewer.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ring::FixedRing;
    ///
    /// let mut ring = FixedRing::new([0u8; 8]);
    /// ring.write(b"abcdef");
    /// ring.truncate(2);
    /// assert_eq!(ring.as_slices().0, b"ab");
    /// ```
    #[inline]
    pub fn truncate(&mut self, len: usize) {
        self.span.truncate(len);
    }

    /// The stored bytes as two runs, in order. The second run is empty
    /// unless the data wraps around the end of the storage.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ring::FixedRing;
    ///
    /// let mut ring = FixedRing::new([0u8; 4]);
    /// ring.write(b"abc");
    /// ring.consume(2);
    /// ring.write(b"de");
    /// assert_eq!(ring.as_slices(), (&b"cd"[..], &b"e"[..]));
    /// ```
    #[inline]
    pub fn as_slices(&self) -> (&[u8], &[u8]) {
        let storage = self.storage.as_ref();
        let (a, b) = self.span.data(storage.len());
        (&storage[a], &storage[b])
    }

    /// The stored bytes as two mutable runs, in order — to unmask a
    /// WebSocket payload in place, for instance.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ring::FixedRing;
    ///
    /// let mut ring = FixedRing::new([0u8; 4]);
    /// ring.write(b"abc");
    /// ring.as_mut_slices().0.make_ascii_uppercase();
    /// assert_eq!(ring.as_slices().0, b"ABC");
    /// ```
    #[inline]
    pub fn as_mut_slices(&mut self) -> (&mut [u8], &mut [u8]) {
        let storage = self.storage.as_mut();
        let (a, b) = self.span.data(storage.len());
        // The second run, when there is one, lies before the first.
        let (front, back) = storage.split_at_mut(a.start);
        (&mut back[..a.len()], &mut front[b])
    }

    /// The largest contiguous writable run directly after the stored bytes,
    /// so that a socket read can land in the ring without a copy. Write
    /// into it, then call [`commit`](Self::commit) with the number of bytes
    /// written. The run is empty exactly when the ring is full.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ring::FixedRing;
    ///
    /// let mut ring = FixedRing::new([0u8; 8]);
    /// let spare = ring.spare_mut();
    /// assert_eq!(spare.len(), 8);
    /// spare[..5].copy_from_slice(b"hello"); // as a socket read would
    /// ring.commit(5);
    /// assert_eq!(ring.as_slices().0, b"hello");
    /// ```
    #[inline]
    pub fn spare_mut(&mut self) -> &mut [u8] {
        let storage = self.storage.as_mut();
        let (run, _) = self.span.spare(storage.len());
        &mut storage[run]
    }

    /// Both writable runs after the stored bytes, in the order writes fill
    /// them: [`spare_mut`](Self::spare_mut)'s run, then the free bytes
    /// before the data when the free space wraps around the end of the
    /// storage — for a vectored read. Write into them in order, then call
    /// [`commit`](Self::commit) once per run with the bytes written there
    /// (the second run only after the first is full).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ring::FixedRing;
    ///
    /// let mut ring = FixedRing::new([0u8; 6]);
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
        let storage = self.storage.as_mut();
        let (first, second) = self.span.spare(storage.len());
        // The second run, when there is one, ends at the head, before the
        // first.
        let (front, back) = storage.split_at_mut(first.start);
        (&mut back[..first.len()], &mut front[second])
    }

    /// Marks the first `n` bytes of [`spare_mut`](Self::spare_mut) as
    /// written, making them part of the stored bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ring::FixedRing;
    ///
    /// let mut ring = FixedRing::new([0u8; 4]);
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
        let (run, _) = self.span.spare(self.capacity());
        let spare = run.len();
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
    /// use ringstream_core::ring::FixedRing;
    ///
    /// let mut ring = FixedRing::new([0u8; 4]);
    /// ring.write(b"abc");
    /// ring.consume(2);
    /// ring.write(b"de");
    /// assert_eq!(ring.make_contiguous(), b"cde");
    /// assert_eq!(ring.as_slices(), (&b"cde"[..], &b""[..]));
    /// ```
    pub fn make_contiguous(&mut self) -> &mut [u8] {
        let storage = self.storage.as_mut();
        if self.span.is_wrapped(storage.len()) {
            storage.rotate_left(self.span.head);
            self.span.head = 0;
        }
        &mut storage[self.span.head..self.span.end()]
    }

    /// Formats `args` into the ring, so `write!(ring, ...)` works without
    /// importing `core::fmt::Write`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ring::FixedRing;
    ///
    /// let mut ring = FixedRing::new([0u8; 32]);
    /// write!(ring, "{} {}\n", "uptime", 42).unwrap();
    /// assert_eq!(ring.as_slices().0, b"uptime 42\n");
    /// ```
    ///
    /// # Errors
    ///
    /// [`fmt::Error`] for a formatted piece that does not fit; none of that
    /// piece is stored (see the [`fmt::Write`] implementation), but the
    /// pieces before it are.
    #[inline]
    pub fn write_fmt(&mut self, args: fmt::Arguments<'_>) -> fmt::Result {
        fmt::Write::write_fmt(self, args)
    }

    /// Copies `src`, which fits in `room()`, after the stored bytes: the
    /// free run to the end of the storage (or to the head), then the one
    /// from offset 0.
    #[inline]
    fn copy_in(&mut self, src: &[u8]) {
        debug_assert!(src.len() <= self.room());
        let storage = self.storage.as_mut();
        let (first, second) = self.span.spare(storage.len());
        let (a, b) = src.split_at(cmp::min(src.len(), first.len()));
        storage[first.start..first.start + a.len()].copy_from_slice(a);
        storage[second.start..second.start + b.len()].copy_from_slice(b);
        self.span.len += src.len();
    }
}

impl<S: AsRef<[u8]> + AsMut<[u8]>> WriteBuf for FixedRing<S> {
    /// Appends all of `bytes` after the stored bytes, across the wrap if
    /// need be, or nothing.
    #[inline]
    fn put(&mut self, bytes: &[u8]) -> Result<(), OutOfSpace> {
        if bytes.len() > self.room() {
            return Err(OutOfSpace);
        }
        self.copy_in(bytes);
        Ok(())
    }

    /// The number of stored bytes.
    #[inline]
    fn mark(&self) -> usize {
        self.span.len
    }

    /// Same as [`FixedRing::truncate`].
    #[inline]
    fn rewind(&mut self, mark: usize) {
        self.span.truncate(mark);
    }
}

impl<S: AsRef<[u8]> + AsMut<[u8]>> fmt::Write for FixedRing<S> {
    /// Appends `s` whole, or returns [`fmt::Error`] and stores none of it,
    /// so the ring never holds half a formatted piece.
    #[inline]
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.put(s.as_bytes()).map_err(|OutOfSpace| fmt::Error)
    }
}

impl<S: AsRef<[u8]>> fmt::Debug for FixedRing<S> {
    /// The shape of the ring, not its contents.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FixedRing")
            .field("len", &self.span.len)
            .field("capacity", &self.storage.as_ref().len())
            .field("head", &self.span.head)
            .finish()
    }
}

#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
impl<S: AsRef<[u8]> + AsMut<[u8]>> std::io::Read for FixedRing<S> {
    /// Same as [`FixedRing::read`]. An empty ring returns `Ok(0)`, which
    /// readers treat as end of data.
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        Ok(FixedRing::read(self, buf))
    }
}

#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
impl<S: AsRef<[u8]> + AsMut<[u8]>> std::io::Write for FixedRing<S> {
    /// Same as [`FixedRing::write`]: never fails and never blocks. A full
    /// ring returns `Ok(0)` for a non-empty `buf`, so `write_all` on it
    /// fails with `ErrorKind::WriteZero` instead of spinning.
    #[inline]
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Ok(FixedRing::write(self, buf))
    }

    /// Does nothing: the ring is the destination.
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
impl<S: AsRef<[u8]> + AsMut<[u8]>> std::io::BufRead for FixedRing<S> {
    /// The first run of stored bytes; empty only when the ring is empty.
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        Ok(self.as_slices().0)
    }

    /// Same as [`FixedRing::consume`].
    fn consume(&mut self, amt: usize) {
        FixedRing::consume(self, amt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_resets_to_zero_when_drained() {
        let mut r = FixedRing::new([0u8; 8]);
        r.write(b"abcdef");
        r.consume(3);
        assert_eq!(r.span.head, 3);
        r.consume(3);
        assert_eq!(r.span.head, 0);
    }

    #[test]
    fn put_wraps_across_the_end_of_the_storage() {
        let mut r = FixedRing::new([0u8; 6]);
        r.write(b"abcd");
        r.consume(3);
        r.put(b"efgh").unwrap();
        assert_eq!(r.span, Span { head: 3, len: 5 });
        assert_eq!(r.as_slices(), (&b"def"[..], &b"gh"[..]));
        assert_eq!(r.put(b"ij"), Err(OutOfSpace));
        assert_eq!(r.len(), 5);
        r.rewind(2);
        assert_eq!(r.as_slices(), (&b"de"[..], &b""[..]));
    }

    #[test]
    fn capacity_zero_holds_nothing() {
        let mut r = FixedRing::new([0u8; 0]);
        assert!(r.is_full() && r.is_empty());
        assert_eq!(r.write(b"a"), 0);
        assert_eq!(r.put(b""), Ok(()));
        assert_eq!(r.put(b"a"), Err(OutOfSpace));
        assert!(r.spare_mut().is_empty());
        assert_eq!(r.make_contiguous(), b"");
    }
}
