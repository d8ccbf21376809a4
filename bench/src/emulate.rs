//! Faithful emulations of the response-stream buffers ringstream's ring is
//! measured against.
//!
//! - [`StreamString`]: the string stream an embedded web server used for a
//!   buffered response: an Arduino `String` that grows by exactly what each
//!   write needs, and a `read()` that removes the first byte (moving the
//!   rest), with a bulk read that just loops over `read()`.
//! - [`ExactGrowthCbuf`]: the classic `cbuf` ring (begin/end indices, one
//!   slot kept empty, reads and writes of at most two copies) fed by a
//!   response stream that, when a write does not fit, resizes it by exactly
//!   the shortfall; `cbuf::resize` allocates a new buffer, copies the data
//!   over and frees the old one.
//! - [`VecDrain`]: a `Vec<u8>` read from the front with `drain(..n)`.

use std::fmt;

/// An Arduino `StreamString`: `String` storage, one-byte `read()` as
/// `remove(0, 1)`, and the default `Stream::readBytes` loop over `read()`.
///
/// The one-second `timedRead` wait on an empty stream is not emulated; it
/// would only make this variant slower.
#[derive(Debug, Clone)]
pub struct StreamString {
    s: String,
}

impl StreamString {
    /// An empty stream with `reserve` bytes reserved up front, as the
    /// response stream did with its buffer size.
    pub fn with_capacity(reserve: usize) -> Self {
        StreamString {
            s: String::with_capacity(reserve),
        }
    }

    /// Bytes stored.
    pub fn len(&self) -> usize {
        self.s.len()
    }

    /// `Stream::read()`: the first byte, removed by moving every other
    /// byte one place to the front.
    pub fn read(&mut self) -> Option<u8> {
        if self.s.is_empty() {
            return None;
        }
        // ASCII only (enforced by `write_str`), so the char is one byte.
        let c = self.s.remove(0);
        Some(c as u8)
    }

    /// `Stream::readBytes(buf, len)`, not overridden: `read()` per byte.
    pub fn read_bytes(&mut self, dst: &mut [u8]) -> usize {
        let mut n = 0;
        while n < dst.len() {
            match self.read() {
                Some(b) => dst[n] = b,
                None => break,
            }
            n += 1;
        }
        n
    }
}

impl fmt::Write for StreamString {
    /// `String::concat`: grows to exactly the new length (plus the C
    /// string terminator) when it does not fit. Rejects non-ASCII text,
    /// which the byte-wise `read()` could not return intact.
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if !s.is_ascii() {
            return Err(fmt::Error);
        }
        let needed = self.s.len() + s.len() + 1;
        if needed > self.s.capacity() {
            self.s.reserve_exact(needed - self.s.len());
        }
        self.s.push_str(s);
        Ok(())
    }
}

/// The classic `cbuf` ring, grown by exactly the shortfall of each write
/// that does not fit (`resizeAdd(len - room())`).
#[derive(Debug, Clone)]
pub struct ExactGrowthCbuf {
    buf: Box<[u8]>,
    begin: usize,
    end: usize,
}

impl ExactGrowthCbuf {
    /// `cbuf(size)`: a ring of `size` bytes holding at most `size - 1`.
    pub fn new(size: usize) -> Self {
        ExactGrowthCbuf {
            buf: vec![0u8; size].into_boxed_slice(),
            begin: 0,
            end: 0,
        }
    }

    /// `cbuf::available()`: bytes stored.
    pub fn len(&self) -> usize {
        if self.end >= self.begin {
            self.end - self.begin
        } else {
            self.buf.len() - (self.begin - self.end)
        }
    }

    /// `cbuf::room()`: bytes that can be written; one slot stays empty.
    pub fn room(&self) -> usize {
        if self.end >= self.begin {
            (self.buf.len() - (self.end - self.begin)).saturating_sub(1)
        } else {
            self.begin - self.end - 1
        }
    }

    /// `cbuf::resize(new_size)`: a new zeroed buffer, the data read into
    /// it, the old buffer freed.
    fn resize(&mut self, new_size: usize) {
        let available = self.len();
        if new_size < available || new_size == self.buf.len() {
            return;
        }
        let mut new = vec![0u8; new_size].into_boxed_slice();
        self.read(&mut new[..available]);
        self.buf = new;
        self.begin = 0;
        self.end = available;
    }

    /// `AsyncResponseStream::write`: resize by the shortfall, then
    /// `cbuf::write`.
    pub fn write(&mut self, src: &[u8]) -> usize {
        let room = self.room();
        if src.len() > room {
            let grow = if self.buf.is_empty() { 1 } else { 0 };
            self.resize(self.buf.len() + (src.len() - room) + grow);
        }
        let n = src.len().min(self.room());
        let top = self.buf.len() - self.end;
        if top < n {
            self.buf[self.end..].copy_from_slice(&src[..top]);
            self.buf[..n - top].copy_from_slice(&src[top..n]);
            self.end = n - top;
        } else {
            self.buf[self.end..self.end + n].copy_from_slice(&src[..n]);
            self.end += n;
            if self.end == self.buf.len() {
                self.end = 0;
            }
        }
        n
    }

    /// `cbuf::read(dst, size)`: at most two copies.
    pub fn read(&mut self, dst: &mut [u8]) -> usize {
        let n = dst.len().min(self.len());
        let top = self.buf.len() - self.begin;
        if top < n {
            dst[..top].copy_from_slice(&self.buf[self.begin..]);
            dst[top..n].copy_from_slice(&self.buf[..n - top]);
            self.begin = n - top;
        } else {
            dst[..n].copy_from_slice(&self.buf[self.begin..self.begin + n]);
            self.begin += n;
            if self.begin == self.buf.len() {
                self.begin = 0;
            }
        }
        n
    }
}

impl fmt::Write for ExactGrowthCbuf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.write(s.as_bytes());
        Ok(())
    }
}

/// A `Vec<u8>` written at the back and read from the front with
/// `drain(..n)`, which moves the remaining bytes on every read.
#[derive(Debug, Clone)]
pub struct VecDrain {
    v: Vec<u8>,
}

impl VecDrain {
    /// An empty vector with `capacity` bytes reserved.
    pub fn with_capacity(capacity: usize) -> Self {
        VecDrain {
            v: Vec::with_capacity(capacity),
        }
    }

    /// Bytes stored.
    pub fn len(&self) -> usize {
        self.v.len()
    }

    /// Copies up to `dst.len()` bytes out and drains them.
    pub fn read(&mut self, dst: &mut [u8]) -> usize {
        let n = dst.len().min(self.v.len());
        dst[..n].copy_from_slice(&self.v[..n]);
        self.v.drain(..n);
        n
    }
}

impl fmt::Write for VecDrain {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.v.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write as _;

    #[test]
    fn cbuf_keeps_one_slot_empty_and_grows_by_the_shortfall() {
        let mut c = ExactGrowthCbuf::new(4);
        assert_eq!(c.room(), 3);
        assert_eq!(c.write(b"abcdef"), 6);
        assert_eq!(c.buf.len(), 7, "4 + shortfall of 3");
        assert_eq!(c.room(), 0);
        let mut out = [0u8; 4];
        assert_eq!(c.read(&mut out), 4);
        assert_eq!(&out, b"abcd");
        assert_eq!(c.write(b"ghij"), 4); // wraps
        let mut out = [0u8; 8];
        assert_eq!(c.read(&mut out), 6);
        assert_eq!(&out[..6], b"efghij");
        // Growth while wrapped keeps order.
        let mut c = ExactGrowthCbuf::new(4);
        c.write(b"abc");
        c.read(&mut [0u8; 2]);
        c.write(b"de");
        c.write(b"fghi");
        let mut out = [0u8; 8];
        assert_eq!(c.read(&mut out), 7);
        assert_eq!(&out[..7], b"cdefghi");
    }

    #[test]
    fn stream_string_reads_bytewise_and_rejects_non_ascii() {
        let mut s = StreamString::with_capacity(2);
        write!(s, "hello").unwrap();
        assert!(s.write_str("é").is_err());
        let mut out = [0u8; 3];
        assert_eq!(s.read_bytes(&mut out), 3);
        assert_eq!(&out, b"hel");
        assert_eq!(s.read_bytes(&mut out), 2);
        assert_eq!(s.read(), None);
    }

    #[test]
    fn vec_drain_reads_in_order() {
        let mut v = VecDrain::with_capacity(1);
        write!(v, "abcdef").unwrap();
        let mut out = [0u8; 4];
        assert_eq!(v.read(&mut out), 4);
        assert_eq!(v.len(), 2);
        assert_eq!(v.read(&mut out), 2);
        assert_eq!(&out[..2], b"ef");
    }
}
