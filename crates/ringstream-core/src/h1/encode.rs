//! Response body encoding: the body encoders ([`Encoder`],
//! [`LengthEncoder`], [`ChunkedEncoder`]), for the framing the response
//! framing rule chose ([`ResponseFraming`]). The head is written by
//! [`response`](super::response).
//!
//! Nothing here performs I/O. The encoders hand back small framing pieces
//! (a chunk-size line, a CRLF) so a writer can send framing and the untouched
//! body as separate slices of one vectored write, and they count bytes so a
//! short or long `Content-Length` body is reported instead of corrupting the
//! connection.

use crate::h1::decode::is_forbidden_trailer;
use crate::h1::response::check_field;
use crate::out::{OutOfSpace, WriteBuf};
use crate::Error;

use crate::h1::framing::ResponseFraming;
use crate::h1::syntax::CRLF;

// ---------------------------------------------------------------------------
// LengthEncoder
// ---------------------------------------------------------------------------

/// Counts the bytes of a `Content-Length` body as they are written.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::encode::LengthEncoder;
/// use ringstream_core::Error;
///
/// let mut encoder = LengthEncoder::new(5);
/// encoder.encode(3).unwrap();
/// assert_eq!(encoder.finish(), Err(Error::BodyUnderflow));
/// assert_eq!(encoder.encode(3), Err(Error::BodyOverflow));
/// encoder.encode(2).unwrap();
/// encoder.finish().unwrap();
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LengthEncoder {
    remaining: u64,
}

impl LengthEncoder {
    /// An encoder for a body of exactly `len` bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::LengthEncoder;
    /// use ringstream_core::Error;
    ///
    /// let mut encoder = LengthEncoder::new(5);
    /// encoder.encode(3)?;
    /// assert_eq!(encoder.remaining(), 2);
    /// assert_eq!(encoder.finish(), Err(Error::BodyUnderflow));
    /// encoder.encode(2)?;
    /// encoder.finish()?;
    /// # Ok::<(), Error>(())
    /// ```
    pub const fn new(len: u64) -> LengthEncoder {
        LengthEncoder { remaining: len }
    }

    /// Accounts for `n` more body bytes about to be written.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::LengthEncoder;
    /// use ringstream_core::Error;
    ///
    /// let mut encoder = LengthEncoder::new(2);
    /// encoder.encode(2)?;
    /// // Nothing is accounted: the caller must not send that byte.
    /// assert_eq!(encoder.encode(1), Err(Error::BodyOverflow));
    /// assert_eq!(encoder.remaining(), 0);
    /// # Ok::<(), Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::BodyOverflow`] if `n` exceeds the bytes remaining; nothing is
    /// accounted then, so the caller must not send those bytes.
    #[inline]
    pub fn encode(&mut self, n: usize) -> Result<(), Error> {
        let n = u64::try_from(n).map_err(|_| Error::BodyOverflow)?;
        self.remaining = self.remaining.checked_sub(n).ok_or(Error::BodyOverflow)?;
        Ok(())
    }

    /// Checks the whole body was written.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::LengthEncoder;
    /// use ringstream_core::Error;
    ///
    /// let mut encoder = LengthEncoder::new(3);
    /// encoder.encode(2)?;
    /// assert_eq!(encoder.finish(), Err(Error::BodyUnderflow));
    /// encoder.encode(1)?;
    /// assert_eq!(encoder.finish(), Ok(()));
    /// # Ok::<(), Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::BodyUnderflow`] if bytes are still missing.
    pub const fn finish(&self) -> Result<(), Error> {
        if self.remaining == 0 {
            Ok(())
        } else {
            Err(Error::BodyUnderflow)
        }
    }

    /// Body bytes still to be written.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::LengthEncoder;
    ///
    /// let mut encoder = LengthEncoder::new(10);
    /// encoder.encode(4)?;
    /// assert_eq!(encoder.remaining(), 6);
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    pub const fn remaining(&self) -> u64 {
        self.remaining
    }
}

// ---------------------------------------------------------------------------
// ChunkedEncoder
// ---------------------------------------------------------------------------

/// Frames body bytes with the chunked transfer coding (RFC 9112 §7.1).
///
/// A chunk is sent as three slices: [`chunk_prefix`](Self::chunk_prefix)
/// (the size line), the untouched data, and [`CRLF`]. Empty data must be
/// skipped, never sent as a chunk, because a zero-size chunk ends the body;
/// `chunk_prefix(0)` therefore returns `None`. The body ends with
/// [`last_chunk`](Self::last_chunk).
///
/// # Examples
///
/// ```
/// # #[cfg(feature = "alloc")] { // `Vec<u8>` as the output buffer
/// use ringstream_core::h1::encode::ChunkedEncoder;
/// use ringstream_core::h1::CRLF;
///
/// let encoder = ChunkedEncoder::new();
/// let data = b"hello, world";
/// let mut wire = Vec::new();
/// if let Some(prefix) = encoder.chunk_prefix(data.len() as u64) {
///     // A writer would send these three slices in one vectored write.
///     wire.extend_from_slice(prefix.as_ref());
///     wire.extend_from_slice(data);
///     wire.extend_from_slice(CRLF);
/// }
/// encoder.last_chunk([("x-checksum", &b"abc"[..])], &mut wire).unwrap();
/// assert_eq!(wire, b"c\r\nhello, world\r\n0\r\nx-checksum: abc\r\n\r\n");
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChunkedEncoder {
    uppercase: bool,
}

impl ChunkedEncoder {
    /// The CRLF sent after each chunk's data.
    pub const CRLF: &'static [u8] = CRLF;

    /// An encoder writing chunk sizes in lowercase hex.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::ChunkedEncoder;
    /// use ringstream_core::SliceBuf;
    ///
    /// let mut tx = [0u8; 32];
    /// let mut out = SliceBuf::new(&mut tx);
    /// ChunkedEncoder::new().write_chunk(&[b'.'; 26], &mut out)?;
    /// assert_eq!(&out.written()[..4], b"1a\r\n");
    /// # Ok::<(), ringstream_core::OutOfSpace>(())
    /// ```
    pub const fn new() -> ChunkedEncoder {
        ChunkedEncoder { uppercase: false }
    }

    /// An encoder writing chunk sizes in uppercase hex.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::ChunkedEncoder;
    /// use ringstream_core::SliceBuf;
    ///
    /// let mut tx = [0u8; 32];
    /// let mut out = SliceBuf::new(&mut tx);
    /// ChunkedEncoder::uppercase().write_chunk(&[b'.'; 26], &mut out)?;
    /// assert_eq!(&out.written()[..4], b"1A\r\n");
    /// assert_eq!(out.room(), 0);
    /// # Ok::<(), ringstream_core::OutOfSpace>(())
    /// ```
    pub const fn uppercase() -> ChunkedEncoder {
        ChunkedEncoder { uppercase: true }
    }

    /// The size line (`{hex len}\r\n`) for a chunk of `len` bytes, or `None`
    /// when `len` is zero (a zero-size chunk would end the body).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::encode::ChunkedEncoder;
    ///
    /// let prefix = ChunkedEncoder::uppercase().chunk_prefix(0xBEEF).unwrap();
    /// assert_eq!(prefix.as_ref(), b"BEEF\r\n");
    /// assert!(ChunkedEncoder::new().chunk_prefix(0).is_none());
    /// ```
    pub fn chunk_prefix(&self, len: u64) -> Option<ChunkPrefix> {
        if len == 0 {
            return None;
        }
        let digits: &[u8; 16] = if self.uppercase {
            b"0123456789ABCDEF"
        } else {
            b"0123456789abcdef"
        };
        let mut buf = [0u8; 18];
        let nibbles = (64 - len.leading_zeros() as usize).div_ceil(4);
        let mut n = len;
        for i in (0..nibbles).rev() {
            buf[i] = digits[(n & 0xf) as usize];
            n >>= 4;
        }
        buf[nibbles] = b'\r';
        buf[nibbles + 1] = b'\n';
        Some(ChunkPrefix {
            buf,
            len: (nibbles + 2) as u8,
        })
    }

    /// The size line for a chunk of `len` bytes with its number padded by
    /// leading zeros to `digits` hex digits (`chunk-size = 1*HEXDIG`, RFC
    /// 9112 §7.1, allows them), so that a writer can reserve the line
    /// before it knows how long the chunk will be. `None` when `len` is
    /// zero, or needs more than `digits` digits, or `digits` is over 16.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::encode::ChunkedEncoder;
    ///
    /// let prefix = ChunkedEncoder::new().chunk_prefix_padded(0x2a, 4).unwrap();
    /// assert_eq!(prefix.as_ref(), b"002a\r\n");
    /// assert!(ChunkedEncoder::new().chunk_prefix_padded(0x12345, 4).is_none());
    /// ```
    pub fn chunk_prefix_padded(&self, len: u64, digits: usize) -> Option<ChunkPrefix> {
        let mut prefix = self.chunk_prefix(len)?;
        let nibbles = prefix.len() - CRLF.len();
        if digits > 16 || nibbles > digits {
            return None;
        }
        let pad = digits - nibbles;
        let len = prefix.len();
        prefix.buf.copy_within(..len, pad);
        prefix.buf[..pad].fill(b'0');
        prefix.len = (digits + CRLF.len()) as u8;
        Some(prefix)
    }

    /// The number of hex digits a chunk of `len` bytes needs in its size
    /// line (at least one).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::encode::ChunkedEncoder;
    ///
    /// assert_eq!(ChunkedEncoder::digits(0), 1);
    /// assert_eq!(ChunkedEncoder::digits(0xfff), 3);
    /// assert_eq!(ChunkedEncoder::digits(0x1000), 4);
    /// ```
    pub const fn digits(len: u64) -> usize {
        let bits = 64 - len.leading_zeros() as usize;
        if bits == 0 {
            1
        } else {
            bits.div_ceil(4)
        }
    }

    /// Appends one whole chunk (size line, `data`, CRLF) to `out`, copying
    /// the data; does nothing for empty `data`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::encode::ChunkedEncoder;
    /// use ringstream_core::SliceBuf;
    ///
    /// let mut tx = [0u8; 16];
    /// let mut out = SliceBuf::new(&mut tx);
    /// ChunkedEncoder::new().write_chunk(b"", &mut out)?;
    /// ChunkedEncoder::new().write_chunk(b"abc", &mut out)?;
    /// assert_eq!(out.written(), b"3\r\nabc\r\n");
    /// # Ok::<(), ringstream_core::OutOfSpace>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`OutOfSpace`] if the chunk does not fit in `out` (only a buffer of
    /// fixed size runs out); nothing is written then.
    pub fn write_chunk<O>(&self, data: &[u8], out: &mut O) -> Result<(), OutOfSpace>
    where
        O: WriteBuf + ?Sized,
    {
        let Some(prefix) = self.chunk_prefix(data.len() as u64) else {
            return Ok(());
        };
        let start = out.mark();
        let written = out
            .put(prefix.as_ref())
            .and_then(|()| out.put(data))
            .and_then(|()| out.put(CRLF));
        if written.is_err() {
            out.rewind(start);
        }
        written
    }

    /// Appends the end of the body: `0\r\n`, the trailer fields, and the
    /// final CRLF.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::ChunkedEncoder;
    /// use ringstream_core::{Error, SliceBuf};
    ///
    /// let mut tx = [0u8; 32];
    /// let mut out = SliceBuf::new(&mut tx);
    /// let encoder = ChunkedEncoder::new();
    /// encoder.last_chunk([("x-sum", &b"42"[..])], &mut out)?;
    /// assert_eq!(out.written(), b"0\r\nx-sum: 42\r\n\r\n");
    ///
    /// // A framing field may not be a trailer; nothing is written.
    /// out.clear();
    /// let framing = [("content-length", &b"1"[..])];
    /// assert_eq!(encoder.last_chunk(framing, &mut out), Err(Error::ForbiddenTrailer));
    /// assert!(out.is_empty());
    /// # Ok::<(), Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Nothing is written and an error is returned if a trailer name is not
    /// a token ([`Error::InvalidFieldName`]), a value holds a control
    /// character or surrounding whitespace ([`Error::InvalidTrailer`]), a
    /// trailer is a framing field (`Content-Length`, `Transfer-Encoding`,
    /// `Host`: [`Error::ForbiddenTrailer`], RFC 9110 §6.5.1), or the end of
    /// the body does not fit in `out` ([`Error::OutOfSpace`], only from a
    /// buffer of fixed size).
    pub fn last_chunk<'a, I, O>(&self, trailers: I, out: &mut O) -> Result<(), Error>
    where
        I: IntoIterator<Item = (&'a str, &'a [u8])>,
        O: WriteBuf + ?Sized,
    {
        let start = out.mark();
        let written = write_last_chunk(trailers, out);
        if written.is_err() {
            out.rewind(start);
        }
        written
    }
}

/// [`ChunkedEncoder::last_chunk`] without the rewind.
fn write_last_chunk<'a, I, O>(trailers: I, out: &mut O) -> Result<(), Error>
where
    I: IntoIterator<Item = (&'a str, &'a [u8])>,
    O: WriteBuf + ?Sized,
{
    out.put(b"0\r\n")?;
    for (name, value) in trailers {
        let name = name.as_bytes();
        check_field(name, value, Error::InvalidTrailer)?;
        if is_forbidden_trailer(name) {
            return Err(Error::ForbiddenTrailer);
        }
        out.put(name)?;
        out.put(b": ")?;
        out.put(value)?;
        out.put(CRLF)?;
    }
    out.put(CRLF)?;
    Ok(())
}

impl ChunkedEncoder {}

// ---------------------------------------------------------------------------
// Encoder
// ---------------------------------------------------------------------------

/// The response body encoder: frames body data for the framing the head
/// announced — `Content-Length` (counted), chunked (with trailers),
/// close-delimited, or none (`HEAD`, `204`, `304`).
///
/// Like hyper's, it performs no I/O: [`encode`](Self::encode) hands back
/// the framing pieces to send before and after the untouched data, so a
/// writer can send all three in one vectored write, and
/// [`finish`](Self::finish) writes the end of the body and reports a short
/// body as an error.
///
/// # Examples
///
/// ```
/// # #[cfg(feature = "alloc")] { // `Vec<u8>` as the output buffer
/// use ringstream_core::h1::{Encoder, ResponseFraming};
///
/// let mut wire = Vec::new();
/// let mut encoder = Encoder::new(ResponseFraming::Chunked);
/// let frame = encoder.encode(5)?;
/// wire.extend_from_slice(frame.prefix());
/// wire.extend_from_slice(b"hello");
/// wire.extend_from_slice(frame.suffix());
/// encoder.finish([], &mut wire)?;
/// assert_eq!(wire, b"5\r\nhello\r\n0\r\n\r\n");
///
/// let mut encoder = Encoder::new(ResponseFraming::Length(4));
/// encoder.encode(3)?;
/// assert!(encoder.finish([], &mut wire).is_err()); // one byte short
/// # }
/// # Ok::<(), ringstream_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Encoder {
    kind: EncoderKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EncoderKind {
    Length(LengthEncoder),
    Chunked(ChunkedEncoder),
    CloseDelimited,
    NoBody,
}

impl Encoder {
    /// The encoder for a body framed as `framing`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{Encoder, ResponseFraming};
    ///
    /// assert!(Encoder::new(ResponseFraming::Length(5)).sends_body());
    /// assert!(Encoder::new(ResponseFraming::CloseDelimited).is_close_delimited());
    /// // A response to `HEAD` announces a length but sends no body.
    /// let head = ResponseFraming::NoBody { content_length: Some(5) };
    /// assert!(!Encoder::new(head).sends_body());
    /// ```
    #[inline]
    pub const fn new(framing: ResponseFraming) -> Encoder {
        let kind = match framing {
            ResponseFraming::Length(n) => EncoderKind::Length(LengthEncoder::new(n)),
            ResponseFraming::Chunked => EncoderKind::Chunked(ChunkedEncoder::new()),
            ResponseFraming::CloseDelimited => EncoderKind::CloseDelimited,
            ResponseFraming::NoBody { .. } => EncoderKind::NoBody,
        };
        Encoder { kind }
    }

    /// Whether body bytes are sent at all (not for `HEAD`, `204`, `304`).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{Encoder, ResponseFraming};
    ///
    /// assert!(Encoder::new(ResponseFraming::Chunked).sends_body());
    /// let not_modified = ResponseFraming::NoBody { content_length: None };
    /// assert!(!Encoder::new(not_modified).sends_body());
    /// ```
    #[inline]
    pub const fn sends_body(&self) -> bool {
        !matches!(self.kind, EncoderKind::NoBody)
    }

    /// Whether the body ends by closing the connection.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{Encoder, ResponseFraming};
    ///
    /// assert!(Encoder::new(ResponseFraming::CloseDelimited).is_close_delimited());
    /// assert!(!Encoder::new(ResponseFraming::Chunked).is_close_delimited());
    /// ```
    #[inline]
    pub const fn is_close_delimited(&self) -> bool {
        matches!(self.kind, EncoderKind::CloseDelimited)
    }

    /// Frames the next `len` bytes of body data: send
    /// [`prefix`](BodyFrame::prefix), the data, then
    /// [`suffix`](BodyFrame::suffix). Empty data needs no frame at all (a
    /// zero-size chunk would end a chunked body) and gets empty pieces.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{Encoder, ResponseFraming};
    ///
    /// let mut encoder = Encoder::new(ResponseFraming::Chunked);
    /// let frame = encoder.encode(11)?;
    /// assert_eq!(frame.prefix(), b"b\r\n");
    /// assert_eq!(frame.suffix(), b"\r\n");
    /// // Empty data gets empty pieces: a zero-size chunk would end the body.
    /// assert_eq!(encoder.encode(0)?.len(), 0);
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::BodyOverflow`] for more bytes than a `Content-Length` body
    /// announced, or for any byte of a body that is not sent; nothing is
    /// accounted then, so the caller must not send those bytes.
    #[inline]
    pub fn encode(&mut self, len: usize) -> Result<BodyFrame, Error> {
        let empty = BodyFrame {
            prefix: None,
            suffix: b"",
        };
        if len == 0 {
            return Ok(empty);
        }
        match &mut self.kind {
            EncoderKind::Length(length) => length.encode(len).map(|()| empty),
            EncoderKind::Chunked(chunked) => Ok(BodyFrame {
                prefix: chunked.chunk_prefix(len as u64),
                suffix: CRLF,
            }),
            EncoderKind::CloseDelimited => Ok(empty),
            EncoderKind::NoBody => Err(Error::BodyOverflow),
        }
    }

    /// How many bytes to reserve before a piece of at most `max_len` bytes
    /// whose length is not known yet, for
    /// [`encode_padded`](Self::encode_padded): a chunk-size line as wide as
    /// `max_len` needs on a chunked body, nothing on the others.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{Encoder, ResponseFraming};
    ///
    /// assert_eq!(Encoder::new(ResponseFraming::Chunked).padded_prefix_len(1024), 5);
    /// assert_eq!(Encoder::new(ResponseFraming::Length(9)).padded_prefix_len(1024), 0);
    /// ```
    #[inline]
    pub const fn padded_prefix_len(&self, max_len: usize) -> usize {
        match self.kind {
            EncoderKind::Chunked(_) => ChunkedEncoder::digits(max_len as u64) + CRLF.len(),
            _ => 0,
        }
    }

    /// [`encode`](Self::encode), with the chunk-size line of a chunked body
    /// exactly `prefix_len` bytes long (its number padded with leading
    /// zeros): the line a writer reserved with
    /// [`padded_prefix_len`](Self::padded_prefix_len) before it wrote the
    /// data in place behind it.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{Encoder, ResponseFraming};
    ///
    /// let mut encoder = Encoder::new(ResponseFraming::Chunked);
    /// let reserved = encoder.padded_prefix_len(1024);
    /// let frame = encoder.encode_padded(13, reserved)?;
    /// assert_eq!(frame.prefix(), b"00d\r\n");
    /// assert_eq!(frame.suffix(), b"\r\n");
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Those of [`encode`](Self::encode); [`Error::OutOfSpace`] when `len`
    /// does not fit in a size line of `prefix_len` bytes (nothing is
    /// accounted then).
    pub fn encode_padded(&mut self, len: usize, prefix_len: usize) -> Result<BodyFrame, Error> {
        let EncoderKind::Chunked(chunked) = &self.kind else {
            return self.encode(len);
        };
        if len == 0 {
            return Ok(BodyFrame {
                prefix: None,
                suffix: b"",
            });
        }
        let digits = prefix_len.saturating_sub(CRLF.len());
        let prefix = chunked
            .chunk_prefix_padded(len as u64, digits)
            .ok_or(Error::OutOfSpace)?;
        Ok(BodyFrame {
            prefix: Some(prefix),
            suffix: CRLF,
        })
    }

    /// Ends the body: writes the last chunk and the `trailers` to `out` for
    /// a chunked body (other framings send no trailers and write nothing).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{Encoder, ResponseFraming};
    /// use ringstream_core::{Error, SliceBuf};
    ///
    /// let mut tx = [0u8; 16];
    /// let mut out = SliceBuf::new(&mut tx);
    /// Encoder::new(ResponseFraming::Chunked).finish([], &mut out)?;
    /// assert_eq!(out.written(), b"0\r\n\r\n");
    ///
    /// let mut short = Encoder::new(ResponseFraming::Length(2));
    /// short.encode(1)?;
    /// assert_eq!(short.finish([], &mut out), Err(Error::BodyUnderflow));
    /// # Ok::<(), Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::BodyUnderflow`] if a `Content-Length` body is short; the
    /// errors of [`ChunkedEncoder::last_chunk`] for a bad trailer or a full
    /// buffer, which leave `out` as it was.
    pub fn finish<'a, I, O>(&mut self, trailers: I, out: &mut O) -> Result<(), Error>
    where
        I: IntoIterator<Item = (&'a str, &'a [u8])>,
        O: WriteBuf + ?Sized,
    {
        match &self.kind {
            EncoderKind::Length(length) => length.finish(),
            EncoderKind::Chunked(chunked) => chunked.last_chunk(trailers, out),
            EncoderKind::CloseDelimited | EncoderKind::NoBody => Ok(()),
        }
    }
}

/// The framing pieces around one piece of body data, from
/// [`Encoder::encode`].
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::{Encoder, ResponseFraming};
///
/// let frame = Encoder::new(ResponseFraming::Chunked).encode(1460)?;
/// assert_eq!(frame.prefix(), b"5b4\r\n");
/// assert_eq!(frame.suffix(), b"\r\n");
/// assert_eq!(frame.len(), 7);
/// # Ok::<(), ringstream_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyFrame {
    prefix: Option<ChunkPrefix>,
    suffix: &'static [u8],
}

impl BodyFrame {
    /// The bytes to send before the data (a chunk-size line, or nothing).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{Encoder, ResponseFraming};
    ///
    /// let frame = Encoder::new(ResponseFraming::Chunked).encode(300)?;
    /// assert_eq!(frame.prefix(), b"12c\r\n");
    /// // A `Content-Length` body needs no framing.
    /// let frame = Encoder::new(ResponseFraming::Length(300)).encode(300)?;
    /// assert_eq!((frame.prefix(), frame.suffix()), (&b""[..], &b""[..]));
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    #[inline]
    pub fn prefix(&self) -> &[u8] {
        self.prefix.as_ref().map_or(&[][..], ChunkPrefix::as_bytes)
    }

    /// The bytes to send after the data (CRLF after a chunk, or nothing).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{Encoder, ResponseFraming};
    ///
    /// assert_eq!(Encoder::new(ResponseFraming::Chunked).encode(3)?.suffix(), b"\r\n");
    /// assert_eq!(Encoder::new(ResponseFraming::CloseDelimited).encode(3)?.suffix(), b"");
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    #[inline]
    pub const fn suffix(&self) -> &'static [u8] {
        self.suffix
    }

    /// The framing bytes in all, prefix and suffix.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{Encoder, ResponseFraming};
    ///
    /// // `5\r\n` before the data, `\r\n` after it.
    /// let frame = Encoder::new(ResponseFraming::Chunked).encode(5)?;
    /// assert_eq!(frame.len(), 5);
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    #[allow(clippy::len_without_is_empty)]
    #[inline]
    pub fn len(&self) -> usize {
        self.prefix().len() + self.suffix.len()
    }
}

/// A chunk-size line (`{hex len}\r\n`) held on the stack.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::encode::ChunkedEncoder;
///
/// let prefix = ChunkedEncoder::new().chunk_prefix(1460).unwrap();
/// assert_eq!(prefix.as_ref(), b"5b4\r\n");
/// assert_eq!(prefix.len(), 5);
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ChunkPrefix {
    buf: [u8; 18],
    len: u8,
}

impl ChunkPrefix {
    /// The bytes of the size line.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::ChunkedEncoder;
    ///
    /// let prefix = ChunkedEncoder::new().chunk_prefix(4096).expect("not empty");
    /// assert_eq!(prefix.as_bytes(), b"1000\r\n");
    /// assert_eq!(prefix.len(), 6);
    /// // Empty data has no chunk: a zero-size one would end the body.
    /// assert!(ChunkedEncoder::new().chunk_prefix(0).is_none());
    /// ```
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..usize::from(self.len)).unwrap_or(&[])
    }

    /// Length of the size line in bytes, CRLF included.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::ChunkedEncoder;
    ///
    /// // `ff\r\n`
    /// assert_eq!(ChunkedEncoder::new().chunk_prefix(255).map(|p| p.len()), Some(4));
    /// ```
    #[allow(clippy::len_without_is_empty)]
    pub const fn len(&self) -> usize {
        self.len as usize
    }
}

impl AsRef<[u8]> for ChunkPrefix {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl core::fmt::Debug for ChunkPrefix {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("ChunkPrefix")
            .field(&crate::byte_str::ByteStr(self.as_bytes()))
            .finish()
    }
}
