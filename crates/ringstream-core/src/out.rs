//! Output buffers: where the core writes the bytes it makes (response
//! heads, chunk framing, trailers), with or without a heap.
//!
//! Every writer of the core is generic over [`WriteBuf`], which three kinds
//! of buffer implement:
//!
//! - `Vec<u8>` (with `alloc`): grows, so it never runs out of space; its
//!   methods inline to plain `extend_from_slice` calls;
//! - [`SliceBuf`]: a caller's `&mut [u8]`, filled from the start, such as
//!   the transmit buffer of an embedded server or the free run of a ring
//!   ([`FixedRing::spare_mut`](crate::ring::FixedRing::spare_mut));
//! - the rings ([`FixedRing`](crate::ring::FixedRing) and, with `alloc`,
//!   `RingBuffer`): bytes are appended after the stored ones, across the
//!   wrap.
//!
//! A writer that runs out of space, or finds its input invalid, rewinds the
//! buffer to where it started, so a buffer never holds half a head: running
//! out of space is an ordinary result ([`OutOfSpace`], or
//! [`Error::OutOfSpace`](crate::Error::OutOfSpace) from the head writers) —
//! send what the buffer holds and write again, or answer with a shorter
//! response.

use core::fmt;

/// A byte buffer the core's writers append to.
///
/// A writer remembers [`mark`](Self::mark) before it starts, appends its
/// pieces with [`put`](Self::put), and on an error calls
/// [`rewind`](Self::rewind) with the mark so the buffer is left as it was.
///
/// # Examples
///
/// A response head written into a fixed buffer, and refused by one too
/// small for it:
///
/// ```
/// use ringstream_core::h1::{write_response_head, ResponseFraming, ResponseHead};
/// use ringstream_core::{Error, SliceBuf};
///
/// let head = ResponseHead::new(204);
/// let mut storage = [0u8; 64];
/// let mut out = SliceBuf::new(&mut storage);
/// write_response_head(&mut out, &head, [], ResponseFraming::NoBody { content_length: None }, false)?;
/// assert_eq!(out.written(), b"HTTP/1.1 204 No Content\r\n\r\n");
///
/// let mut small = [0u8; 16];
/// let mut out = SliceBuf::new(&mut small);
/// let full = write_response_head(&mut out, &head, [], ResponseFraming::NoBody { content_length: None }, false);
/// assert_eq!(full, Err(Error::OutOfSpace));
/// assert!(out.written().is_empty()); // left as it was
/// # Ok::<(), Error>(())
/// ```
///
/// Implementing it for another buffer:
///
/// ```
/// use ringstream_core::{OutOfSpace, WriteBuf};
///
/// /// Counts the bytes a writer would produce.
/// struct Measure(usize);
///
/// impl WriteBuf for Measure {
///     fn put(&mut self, bytes: &[u8]) -> Result<(), OutOfSpace> {
///         self.0 += bytes.len();
///         Ok(())
///     }
///     fn mark(&self) -> usize {
///         self.0
///     }
///     fn rewind(&mut self, mark: usize) {
///         self.0 = self.0.min(mark);
///     }
/// }
///
/// let mut measure = Measure(0);
/// ringstream_core::h1::write_error_response(&mut measure, 404, b"")?;
/// assert_eq!(measure.0, 116);
/// # Ok::<(), ringstream_core::Error>(())
/// ```
pub trait WriteBuf {
    /// Appends all of `bytes`, or nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::{SliceBuf, WriteBuf};
    ///
    /// let mut tx = [0u8; 4];
    /// let mut out = SliceBuf::new(&mut tx);
    /// out.put(b"ab")?;
    /// // All or nothing: three bytes do not fit in the two left.
    /// assert!(out.put(b"cde").is_err());
    /// assert_eq!(out.written(), b"ab");
    /// # Ok::<(), ringstream_core::OutOfSpace>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`OutOfSpace`] if `bytes` does not fit; nothing is appended then.
    fn put(&mut self, bytes: &[u8]) -> Result<(), OutOfSpace>;

    /// A mark for [`rewind`](Self::rewind): the number of bytes the buffer
    /// holds now.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::{SliceBuf, WriteBuf};
    ///
    /// let mut tx = [0u8; 8];
    /// let mut out = SliceBuf::new(&mut tx);
    /// out.put(b"abc")?;
    /// assert_eq!(out.mark(), 3);
    /// # Ok::<(), ringstream_core::OutOfSpace>(())
    /// ```
    fn mark(&self) -> usize;

    /// Forgets every byte appended since [`mark`](Self::mark) returned
    /// `mark`. Does nothing if the buffer holds `mark` bytes or fewer.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::{SliceBuf, WriteBuf};
    ///
    /// let mut tx = [0u8; 8];
    /// let mut out = SliceBuf::new(&mut tx);
    /// out.put(b"HTTP")?;
    /// let mark = out.mark();
    /// out.put(b"/1.x")?;
    /// // A later piece failed: take back what this writer added.
    /// out.rewind(mark);
    /// assert_eq!(out.written(), b"HTTP");
    /// # Ok::<(), ringstream_core::OutOfSpace>(())
    /// ```
    fn rewind(&mut self, mark: usize);
}

/// The error of a write that does not fit in its buffer: nothing was
/// written. [`Error::OutOfSpace`](crate::Error::OutOfSpace) is the same
/// condition from a head writer, which can also fail for other reasons.
///
/// # Examples
///
/// ```
/// use ringstream_core::{OutOfSpace, SliceBuf, WriteBuf};
///
/// let mut storage = [0u8; 4];
/// let mut out = SliceBuf::new(&mut storage);
/// assert_eq!(out.put(b"hello"), Err(OutOfSpace));
/// assert_eq!(OutOfSpace.to_string(), "no room in the output buffer");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OutOfSpace;

impl fmt::Display for OutOfSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("no room in the output buffer")
    }
}

impl core::error::Error for OutOfSpace {}

#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
impl WriteBuf for alloc::vec::Vec<u8> {
    /// Appends `bytes`; a `Vec` grows, so this never fails.
    #[inline]
    fn put(&mut self, bytes: &[u8]) -> Result<(), OutOfSpace> {
        self.extend_from_slice(bytes);
        Ok(())
    }

    /// The length.
    #[inline]
    fn mark(&self) -> usize {
        self.len()
    }

    /// Truncates to `mark`.
    #[inline]
    fn rewind(&mut self, mark: usize) {
        self.truncate(mark);
    }
}

/// A [`WriteBuf`] over a caller's byte slice, filled from its start.
///
/// # Examples
///
/// A chunk of a chunked body, framed straight into a transmit buffer:
///
/// ```
/// use ringstream_core::h1::ChunkedEncoder;
/// use ringstream_core::SliceBuf;
///
/// let mut tx = [0u8; 32];
/// let mut out = SliceBuf::new(&mut tx);
/// ChunkedEncoder::new().write_chunk(b"hello", &mut out)?;
/// assert_eq!(out.written(), b"5\r\nhello\r\n");
/// assert_eq!(out.room(), 22);
/// # Ok::<(), ringstream_core::OutOfSpace>(())
/// ```
#[derive(Debug)]
pub struct SliceBuf<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl<'a> SliceBuf<'a> {
    /// An empty writer over `buf`: writes start at `buf[0]`, and may fill
    /// all of it.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::{SliceBuf, WriteBuf};
    ///
    /// let mut tx = [0u8; 4];
    /// let mut out = SliceBuf::new(&mut tx);
    /// out.put(b"abc")?;
    /// assert_eq!((out.len(), out.room()), (3, 1));
    /// assert!(out.put(b"de").is_err());
    /// assert_eq!(out.written(), b"abc");
    /// out.clear();
    /// assert!(out.is_empty());
    /// # Ok::<(), ringstream_core::OutOfSpace>(())
    /// ```
    #[inline]
    pub fn new(buf: &'a mut [u8]) -> SliceBuf<'a> {
        SliceBuf { buf, len: 0 }
    }

    /// Number of bytes written.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::{SliceBuf, WriteBuf};
    ///
    /// let mut tx = [0u8; 8];
    /// let mut out = SliceBuf::new(&mut tx);
    /// out.put(b"abc")?;
    /// assert_eq!(out.len(), 3);
    /// # Ok::<(), ringstream_core::OutOfSpace>(())
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Returns `true` if nothing has been written.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::{SliceBuf, WriteBuf};
    ///
    /// let mut tx = [0u8; 8];
    /// let mut out = SliceBuf::new(&mut tx);
    /// assert!(out.is_empty());
    /// out.put(b"a")?;
    /// assert!(!out.is_empty());
    /// # Ok::<(), ringstream_core::OutOfSpace>(())
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size of the slice in bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::SliceBuf;
    ///
    /// let mut tx = [0u8; 8];
    /// assert_eq!(SliceBuf::new(&mut tx).capacity(), 8);
    /// ```
    #[inline]
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// Number of bytes that can still be written.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::{SliceBuf, WriteBuf};
    ///
    /// let mut tx = [0u8; 8];
    /// let mut out = SliceBuf::new(&mut tx);
    /// out.put(b"abc")?;
    /// assert_eq!(out.room(), out.capacity() - out.len());
    /// assert_eq!(out.room(), 5);
    /// # Ok::<(), ringstream_core::OutOfSpace>(())
    /// ```
    #[inline]
    pub fn room(&self) -> usize {
        self.buf.len() - self.len
    }

    /// The bytes written, from the start of the slice.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::{SliceBuf, WriteBuf};
    ///
    /// let mut tx = [0u8; 8];
    /// let mut out = SliceBuf::new(&mut tx);
    /// out.put(b"ab")?;
    /// out.put(b"c")?;
    /// assert_eq!(out.written(), b"abc");
    /// # Ok::<(), ringstream_core::OutOfSpace>(())
    /// ```
    #[inline]
    pub fn written(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// Forgets the bytes written; the next write starts at `buf[0]` again.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::{SliceBuf, WriteBuf};
    ///
    /// let mut tx = [0u8; 8];
    /// let mut out = SliceBuf::new(&mut tx);
    /// out.put(b"first")?;
    /// out.clear();
    /// out.put(b"second")?;
    /// assert_eq!(out.written(), b"second");
    /// # Ok::<(), ringstream_core::OutOfSpace>(())
    /// ```
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// The bytes written, keeping the slice's lifetime.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::{SliceBuf, WriteBuf};
    ///
    /// let mut storage = [0u8; 8];
    /// let mut out = SliceBuf::new(&mut storage);
    /// out.put(b"ok")?;
    /// let written: &mut [u8] = out.into_written();
    /// assert_eq!(written, b"ok");
    /// # Ok::<(), ringstream_core::OutOfSpace>(())
    /// ```
    #[inline]
    pub fn into_written(self) -> &'a mut [u8] {
        &mut self.buf[..self.len]
    }
}

impl WriteBuf for SliceBuf<'_> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) -> Result<(), OutOfSpace> {
        let end = self.len + bytes.len();
        match self.buf.get_mut(self.len..end) {
            Some(dst) => {
                dst.copy_from_slice(bytes);
                self.len = end;
                Ok(())
            }
            None => Err(OutOfSpace),
        }
    }

    #[inline]
    fn mark(&self) -> usize {
        self.len
    }

    #[inline]
    fn rewind(&mut self, mark: usize) {
        self.len = self.len.min(mark);
    }
}

impl fmt::Write for SliceBuf<'_> {
    /// Appends `s` whole, or returns [`fmt::Error`] and appends none of it.
    #[inline]
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.put(s.as_bytes()).map_err(|OutOfSpace| fmt::Error)
    }
}
