//! Body decoders: step over byte slices and report how many bytes were used.
//!
//! A decoder never reads: it is handed whatever bytes have arrived and
//! answers with a [`Progress`] saying how many of them it used, which of them
//! (if any) are body data, and whether the body is complete. "Need more
//! bytes" is an ordinary result, never an error, so any split of the input
//! (down to one byte at a time) decodes the same body.
//!
//! # Feeding order
//!
//! 1. Call [`Decoder::decode`] with the buffered bytes.
//! 2. Drop `input[..progress.data.start]` (framing), hand
//!    `input[progress.data.clone()]` to the body consumer (it may be split
//!    off zero-copy), then drop `progress.consumed - progress.data.end` more
//!    bytes (framing after the data).
//! 3. Repeat while the call used bytes and the body is not finished; when a
//!    call uses nothing (`consumed == 0`), read more input first.
//! 4. When the peer closes the connection, call [`Decoder::finish_eof`]: it
//!    completes a read-until-close body and reports a truncated one.
//!
//! Each call returns at most one contiguous data run. Bytes after a finished
//! body are never consumed: they belong to the next message.
//!
//! Once a decoder has returned an error it stays failed and returns the same
//! error from every later call. A framing error found *after* a data run in
//! the same call is reported by the next call, so data that was valid is
//! never withheld.

#[cfg(feature = "alloc")]
use alloc::vec::Vec;
use core::ops::Range;

use crate::h1::framing::BodyFraming;
use crate::h1::syntax::{is_field_vchar, is_tchar, is_ws};
use crate::{Error, Limits};

/// The result of one decode step over an input slice.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::decode::Decoder;
///
/// let mut decoder = Decoder::length(3);
/// let progress = decoder.decode(b"abcdef").unwrap();
/// assert_eq!(progress.consumed, 3);
/// assert_eq!(progress.data, 0..3);
/// assert!(progress.finished);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// Bytes of the input used (framing and data); the caller drops them.
    pub consumed: usize,
    /// Body bytes, as a range within `input[..consumed]`. May be empty; at
    /// most one run per call.
    pub data: Range<usize>,
    /// The body (and its trailers) is complete; nothing after it belongs to
    /// this body.
    pub finished: bool,
}

impl Progress {
    const fn new(consumed: usize, data: Range<usize>, finished: bool) -> Progress {
        Progress {
            consumed,
            data,
            finished,
        }
    }
}

// ---------------------------------------------------------------------------
// Decoder
// ---------------------------------------------------------------------------

/// A request-body decoder: `Content-Length`, chunked, or read-until-close.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::decode::Decoder;
/// use ringstream_core::Limits;
///
/// let mut decoder = Decoder::chunked(Limits::DEFAULT);
/// let wire = b"5\r\nhello\r\n0\r\nx-sum: 42\r\n\r\n";
/// let progress = decoder.decode(wire).unwrap();
/// assert_eq!(&wire[progress.data.clone()], b"hello");
/// assert_eq!(progress.consumed, wire.len());
/// assert!(progress.finished);
/// # #[cfg(feature = "alloc")] {
/// let trailers: Vec<_> = decoder.trailers().collect();
/// assert_eq!(trailers, [("x-sum", &b"42"[..])]);
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Decoder {
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    Length(LengthDecoder),
    Chunked(ChunkedDecoder),
    /// Read until the peer closes; `left`: the bytes still allowed;
    /// `refused`: more came, and the decoder failed.
    Eof {
        finished: bool,
        left: u64,
        refused: bool,
    },
}

impl Decoder {
    /// A decoder for a body of exactly `n` bytes (`Content-Length: n`).
    ///
    /// `Decoder::length(0)` is finished immediately.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::decode::Decoder;
    ///
    /// assert!(Decoder::length(0).is_finished());
    /// assert_eq!(Decoder::length(9).remaining_hint(), Some(9));
    /// ```
    pub const fn length(n: u64) -> Decoder {
        Decoder {
            kind: Kind::Length(LengthDecoder::new(n)),
        }
    }

    /// A decoder for a chunked body (RFC 9112 §7.1), bounded by `limits`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::decode::Decoder;
    /// use ringstream_core::Limits;
    ///
    /// let mut decoder = Decoder::chunked(Limits::DEFAULT);
    /// assert!(decoder.decode(b"0\r\n\r\n").unwrap().finished);
    /// ```
    pub fn chunked(limits: Limits) -> Decoder {
        Decoder {
            kind: Kind::Chunked(ChunkedDecoder::new(limits)),
        }
    }

    /// A decoder for a body that ends when the peer closes the connection.
    ///
    /// Every input byte is data; the body finishes only through
    /// [`finish_eof`](Self::finish_eof). There is no size limit (see
    /// [`new`](Self::new) for one).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::decode::Decoder;
    ///
    /// let mut decoder = Decoder::eof();
    /// assert_eq!(decoder.decode(b"abc").unwrap().data, 0..3);
    /// decoder.finish_eof().unwrap();
    /// assert!(decoder.is_finished());
    /// ```
    pub const fn eof() -> Decoder {
        Decoder {
            kind: Kind::Eof {
                finished: false,
                left: u64::MAX,
                refused: false,
            },
        }
    }

    /// The decoder for a body framed as `framing`: the one mapping from
    /// framing to decoding. No body is a zero-length body; a close-delimited
    /// body is read until the peer closes.
    ///
    /// Every framing is held to [`Limits::max_body_len`]: a `Content-Length`
    /// above it fails the first [`decode`](Self::decode) with
    /// [`Error::BodyTooLarge`] before any data, a chunked body fails at the
    /// chunk that would cross it, and a close-delimited body hands out data
    /// up to the limit and then fails.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::decode::Decoder;
    /// use ringstream_core::h1::BodyFraming;
    /// use ringstream_core::{Error, Limits};
    ///
    /// assert!(Decoder::new(BodyFraming::None, Limits::DEFAULT).is_finished());
    ///
    /// let limits = Limits { max_body_len: 4, ..Limits::DEFAULT };
    /// let mut decoder = Decoder::new(BodyFraming::Length(5), limits);
    /// assert_eq!(decoder.decode(b"hello"), Err(Error::BodyTooLarge));
    /// ```
    pub fn new(framing: BodyFraming, limits: Limits) -> Decoder {
        match framing {
            BodyFraming::None => Decoder::length(0),
            BodyFraming::Length(n) if n > limits.max_body_len => Decoder {
                kind: Kind::Length(LengthDecoder::refused(n, Error::BodyTooLarge)),
            },
            BodyFraming::Length(n) => Decoder::length(n),
            BodyFraming::Chunked => Decoder::chunked(limits),
            BodyFraming::CloseDelimited => Decoder {
                kind: Kind::Eof {
                    finished: false,
                    left: limits.max_body_len,
                    refused: false,
                },
            },
        }
    }

    /// Decodes one step over `input`; see the [module docs](self) for the
    /// feeding order.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::decode::Decoder;
    ///
    /// let mut decoder = Decoder::length(5);
    /// // The next request's bytes follow the body: they are not consumed.
    /// let progress = decoder.decode(b"helloGET /")?;
    /// assert_eq!((progress.consumed, progress.data, progress.finished), (5, 0..5, true));
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// A chunked body returns the framing error it found (and every later
    /// call returns it again). A body over [`Limits::max_body_len`] (when
    /// made by [`new`](Self::new)) returns [`Error::BodyTooLarge`]. Length
    /// and read-until-close bodies never fail here otherwise.
    pub fn decode(&mut self, input: &[u8]) -> Result<Progress, Error> {
        match &mut self.kind {
            Kind::Length(d) => d.decode(input),
            Kind::Chunked(d) => d.decode(input),
            Kind::Eof { refused: true, .. } => Err(Error::BodyTooLarge),
            Kind::Eof { finished: true, .. } => Ok(Progress::new(0, 0..0, true)),
            Kind::Eof { left, refused, .. } => {
                let take = match usize::try_from(*left) {
                    Ok(left) => left.min(input.len()),
                    Err(_) => input.len(),
                };
                if take == 0 && !input.is_empty() {
                    *refused = true;
                    return Err(Error::BodyTooLarge);
                }
                // `take <= left`, so this cannot underflow.
                *left -= take as u64;
                Ok(Progress::new(take, 0..take, false))
            }
        }
    }

    /// Tells the decoder the peer closed the connection.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::decode::Decoder;
    /// use ringstream_core::Error;
    ///
    /// let mut decoder = Decoder::length(5);
    /// decoder.decode(b"hel")?;
    /// // The peer closed two bytes short.
    /// assert_eq!(decoder.finish_eof(), Err(Error::UnexpectedEof));
    /// # Ok::<(), Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::UnexpectedEof`] if a length or chunked body is incomplete (or
    /// the error the decoder had already failed with). A read-until-close
    /// body finishes successfully.
    pub fn finish_eof(&mut self) -> Result<(), Error> {
        match &mut self.kind {
            Kind::Length(d) => d.finish_eof(),
            Kind::Chunked(d) => d.finish_eof(),
            Kind::Eof { refused: true, .. } => Err(Error::BodyTooLarge),
            Kind::Eof { finished, .. } => {
                *finished = true;
                Ok(())
            }
        }
    }

    /// Whether the body is complete.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::decode::Decoder;
    ///
    /// let mut decoder = Decoder::length(2);
    /// assert!(!decoder.is_finished());
    /// decoder.decode(b"ok")?;
    /// assert!(decoder.is_finished());
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    pub fn is_finished(&self) -> bool {
        match &self.kind {
            Kind::Length(d) => d.is_finished(),
            Kind::Chunked(d) => d.is_finished(),
            Kind::Eof { finished, .. } => *finished,
        }
    }

    /// Body bytes still expected, if known: the rest of a `Content-Length`
    /// body, or the rest of the current chunk while inside chunk data.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::decode::Decoder;
    ///
    /// let mut decoder = Decoder::length(5);
    /// decoder.decode(b"hel")?;
    /// assert_eq!(decoder.remaining_hint(), Some(2));
    /// // A body read until the peer closes has no known length.
    /// assert_eq!(Decoder::eof().remaining_hint(), None);
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    pub fn remaining_hint(&self) -> Option<u64> {
        match &self.kind {
            Kind::Length(d) => Some(d.remaining()),
            Kind::Chunked(d) => d.remaining_hint(),
            Kind::Eof { finished, .. } => finished.then_some(0),
        }
    }

    /// The trailer fields of a finished chunked body, in arrival order, with
    /// their values trimmed of surrounding whitespace. Empty for other
    /// bodies.
    ///
    /// Without `alloc` a chunked body's trailer fields are checked as
    /// strictly as with it, and then dropped: keeping them needs a heap.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::decode::Decoder;
    /// use ringstream_core::Limits;
    ///
    /// let mut decoder = Decoder::chunked(Limits::DEFAULT);
    /// decoder.decode(b"0\r\nx-sum: 42\r\n\r\n")?;
    /// assert_eq!(decoder.trailers().next(), Some(("x-sum", &b"42"[..])));
    /// // Other bodies have none.
    /// assert_eq!(Decoder::length(0).trailers().next(), None);
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    #[cfg(feature = "alloc")]
    #[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
    pub fn trailers(&self) -> Trailers<'_> {
        match &self.kind {
            Kind::Chunked(d) => d.trailers(),
            _ => Trailers { rest: &[] },
        }
    }
}

// ---------------------------------------------------------------------------
// LengthDecoder
// ---------------------------------------------------------------------------

/// Decoder for a body of known length (`Content-Length`, RFC 9112 §6.2).
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::decode::LengthDecoder;
/// use ringstream_core::Error;
///
/// let mut decoder = LengthDecoder::new(5);
/// let progress = decoder.decode(b"hel").unwrap();
/// assert_eq!((progress.consumed, progress.finished), (3, false));
/// assert_eq!(decoder.remaining(), 2);
/// assert_eq!(decoder.finish_eof(), Err(Error::UnexpectedEof));
/// ```
#[derive(Debug, Clone)]
pub struct LengthDecoder {
    remaining: u64,
    error: Option<Error>,
}

impl LengthDecoder {
    /// A decoder expecting exactly `n` body bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::decode::LengthDecoder;
    ///
    /// let decoder = LengthDecoder::new(5);
    /// assert_eq!(decoder.remaining(), 5);
    /// assert!(!decoder.is_finished());
    /// assert!(LengthDecoder::new(0).is_finished());
    /// ```
    pub const fn new(n: u64) -> LengthDecoder {
        LengthDecoder {
            remaining: n,
            error: None,
        }
    }

    /// A decoder for `n` body bytes that refuses them: every call fails
    /// with `e`.
    const fn refused(n: u64, e: Error) -> LengthDecoder {
        LengthDecoder {
            remaining: n,
            error: Some(e),
        }
    }

    /// Takes up to the remaining length from `input`; all of it is data.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::decode::LengthDecoder;
    ///
    /// let mut decoder = LengthDecoder::new(3);
    /// let progress = decoder.decode(b"abcdef")?;
    /// assert_eq!((progress.consumed, progress.data, progress.finished), (3, 0..3, true));
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Only the error a previous [`finish_eof`](Self::finish_eof) reported.
    pub fn decode(&mut self, input: &[u8]) -> Result<Progress, Error> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let take = match usize::try_from(self.remaining) {
            Ok(r) => r.min(input.len()),
            Err(_) => input.len(),
        };
        // `take` never exceeds `remaining`, so this cannot underflow.
        self.remaining -= take as u64;
        Ok(Progress::new(take, 0..take, self.remaining == 0))
    }

    /// The peer closed the connection.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::decode::LengthDecoder;
    /// use ringstream_core::Error;
    ///
    /// let mut decoder = LengthDecoder::new(5);
    /// decoder.decode(b"hel")?;
    /// assert_eq!(decoder.finish_eof(), Err(Error::UnexpectedEof));
    /// // The decoder stays failed.
    /// assert_eq!(decoder.decode(b"lo"), Err(Error::UnexpectedEof));
    /// # Ok::<(), Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::UnexpectedEof`] if body bytes are still missing.
    pub fn finish_eof(&mut self) -> Result<(), Error> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if self.remaining > 0 {
            self.error = Some(Error::UnexpectedEof);
            return Err(Error::UnexpectedEof);
        }
        Ok(())
    }

    /// Whether every body byte has been taken.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::decode::LengthDecoder;
    ///
    /// let mut decoder = LengthDecoder::new(2);
    /// decoder.decode(b"o")?;
    /// assert!(!decoder.is_finished());
    /// decoder.decode(b"k")?;
    /// assert!(decoder.is_finished());
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    pub const fn is_finished(&self) -> bool {
        self.remaining == 0 && self.error.is_none()
    }

    /// Body bytes still expected.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::decode::LengthDecoder;
    ///
    /// let mut decoder = LengthDecoder::new(5);
    /// decoder.decode(b"hel")?;
    /// assert_eq!(decoder.remaining(), 2);
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    pub const fn remaining(&self) -> u64 {
        self.remaining
    }
}

// ---------------------------------------------------------------------------
// ChunkedDecoder
// ---------------------------------------------------------------------------

/// Decoder for the chunked transfer coding (RFC 9112 §7.1).
///
/// An incremental state machine: the chunk-size line, chunk extensions,
/// CRLFs and trailer fields are parsed byte by byte into state (nothing is
/// buffered), and chunk data is handed out as ranges of the input. With
/// `alloc`, the trailer fields are also collected (bounded by
/// [`Limits::max_trailers_len`] and [`Limits::max_trailer_fields`]) so they
/// are available once the body is finished; without it they are checked
/// the same way and dropped.
///
/// Strictness:
///
/// - the chunk size is one or more hex digits (leading zeros allowed), with
///   no sign, prefix or embedded whitespace, and must fit in a `u64`;
/// - every line ends in CRLF: a bare LF or bare CR is an error;
/// - chunk extensions follow `*( BWS ";" BWS name [ BWS "=" BWS value ] )`
///   with token or quoted-string values, are ignored, and may total at most
///   [`Limits::max_chunk_ext_len`] bytes per line;
/// - whitespace after the chunk size must be followed by `;` and an
///   extension (RFC 9112 §7.1: `chunk-size [ chunk-ext ] CRLF`), so `5 \r\n`
///   is [`Error::InvalidChunkSize`]; likewise whitespace after an extension
///   must be followed by `=` or another `;`, so `5;a \r\n` is
///   [`Error::InvalidChunkExtension`];
/// - trailer lines are `name ":" OWS value OWS`; no obs-fold, no space before
///   the colon, and none of the framing fields `Content-Length`,
///   `Transfer-Encoding` or `Host` (RFC 9110 §6.5.1);
/// - the chunk sizes may add up to at most [`Limits::max_body_len`]: the
///   chunk-size line of a chunk that would take the body past it is
///   [`Error::BodyTooLarge`] (413), and none of that chunk's data is handed
///   out. A chunk size too large for a `u64` is
///   [`Error::ChunkSizeOverflow`] whatever the limit.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::decode::ChunkedDecoder;
/// use ringstream_core::Limits;
///
/// let wire = b"3;name=\"v\"\r\nabc\r\n0\r\n\r\nNEXT";
/// let mut decoder = ChunkedDecoder::new(Limits::DEFAULT);
/// let mut body = Vec::new();
/// let mut input = &wire[..];
/// loop {
///     let progress = decoder.decode(input).unwrap();
///     body.extend_from_slice(&input[progress.data.clone()]);
///     input = &input[progress.consumed..];
///     if progress.finished || progress.consumed == 0 {
///         break;
///     }
/// }
/// assert_eq!(body, b"abc");
/// assert_eq!(input, b"NEXT");
/// ```
#[derive(Debug, Clone)]
pub struct ChunkedDecoder {
    state: State,
    /// Chunk size being parsed, then the data bytes left in the chunk.
    size: u64,
    /// Data bytes of the chunks accepted so far, the current one included.
    body_len: u64,
    /// Extension bytes seen on the current chunk-size line.
    ext_len: usize,
    /// What the trailer line being read has shown so far.
    line: TrailerLine,
    /// Completed trailer fields as `name ":" value "\n"`, followed by the
    /// raw bytes of the line being collected.
    #[cfg(feature = "alloc")]
    trailers: Vec<u8>,
    /// Length of the completed part of `trailers`.
    #[cfg(feature = "alloc")]
    trailers_done: usize,
    /// Raw bytes of the trailer section seen so far, CRLFs included.
    trailers_len: usize,
    /// Trailer fields seen so far.
    trailer_count: usize,
    limits: Limits,
    error: Option<Error>,
}

/// The chunked decoder's states. Each byte of framing moves the machine
/// through one small function; chunk data is taken in bulk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Start of a chunk-size line: a hex digit is required.
    SizeStart,
    /// Inside the chunk-size digits.
    Size,
    /// Whitespace after the size: more whitespace or `;` must follow.
    SizeBws,
    /// After `;`: optional whitespace, then an extension name.
    ExtNameStart,
    /// Inside an extension name.
    ExtName,
    /// Whitespace after an extension name: `=` or `;` must follow.
    ExtNameBws,
    /// After `=`: optional whitespace, then a token or quoted-string.
    ExtValueStart,
    /// Inside a token extension value.
    ExtToken,
    /// Inside a quoted-string extension value.
    ExtQuoted,
    /// After a backslash inside a quoted-string.
    ExtQuotedPair,
    /// After an extension value: whitespace, `;` or the line end.
    ExtValueEnd,
    /// Whitespace after an extension value: `;` must follow.
    ExtValueBws,
    /// After the CR ending a chunk-size line.
    SizeLf,
    /// Inside chunk data; `size` bytes remain.
    Data,
    /// Chunk data done: a CR is required.
    DataCr,
    /// After the CR following chunk data.
    DataLf,
    /// Start of a trailer line, or the CRLF ending the body.
    TrailerStart,
    /// Inside a trailer line.
    TrailerLine,
    /// After the CR ending a trailer line.
    TrailerLf,
    /// After the CR of the final empty line.
    EndLf,
    /// The body and its trailers are complete.
    Done,
}

impl State {
    /// Whether bytes handled in this state count towards the extension limit.
    const fn is_extension(self) -> bool {
        matches!(
            self,
            State::SizeBws
                | State::ExtNameStart
                | State::ExtName
                | State::ExtNameBws
                | State::ExtValueStart
                | State::ExtToken
                | State::ExtQuoted
                | State::ExtQuotedPair
                | State::ExtValueEnd
                | State::ExtValueBws
        )
    }
}

impl ChunkedDecoder {
    /// A decoder at the start of a chunked body, bounded by `limits`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::decode::ChunkedDecoder;
    /// use ringstream_core::{Error, Limits};
    ///
    /// let limits = Limits { max_body_len: 4, ..Limits::DEFAULT };
    /// let mut decoder = ChunkedDecoder::new(limits);
    /// // The chunk would take the body past the limit: none of it is handed out.
    /// assert_eq!(decoder.decode(b"5\r\nhello\r\n"), Err(Error::BodyTooLarge));
    /// ```
    pub const fn new(limits: Limits) -> ChunkedDecoder {
        ChunkedDecoder {
            state: State::SizeStart,
            size: 0,
            body_len: 0,
            ext_len: 0,
            line: TrailerLine::START,
            #[cfg(feature = "alloc")]
            trailers: Vec::new(),
            #[cfg(feature = "alloc")]
            trailers_done: 0,
            trailers_len: 0,
            trailer_count: 0,
            limits,
            error: None,
        }
    }

    /// Decodes one step over `input`: framing up to and including at most
    /// one run of chunk data, plus the framing that follows it up to the
    /// next chunk's data or the end of the body.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::decode::ChunkedDecoder;
    /// use ringstream_core::{Error, Limits};
    ///
    /// // A step stops after one run of data; a chunk split between reads is
    /// // resumed from the decoder's state.
    /// let mut decoder = ChunkedDecoder::new(Limits::DEFAULT);
    /// let progress = decoder.decode(b"3\r\nab")?;
    /// assert_eq!((progress.consumed, progress.data), (5, 3..5));
    /// let progress = decoder.decode(b"c\r\n0\r\n\r\n")?;
    /// assert_eq!((progress.data, progress.finished), (0..1, true));
    ///
    /// // A bare LF does not end a line, and the decoder stays failed.
    /// let mut decoder = ChunkedDecoder::new(Limits::DEFAULT);
    /// assert_eq!(decoder.decode(b"3\nabc"), Err(Error::BareLf));
    /// assert_eq!(decoder.decode(b"3\r\nabc"), Err(Error::BareLf));
    /// # Ok::<(), Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The framing error found, for example [`Error::InvalidChunkSize`],
    /// [`Error::BareLf`] or [`Error::ForbiddenTrailer`], or
    /// [`Error::BodyTooLarge`] at a chunk that would take the body past
    /// [`Limits::max_body_len`]. The decoder then stays failed.
    pub fn decode(&mut self, input: &[u8]) -> Result<Progress, Error> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let mut pos = 0usize;
        let mut data = 0..0;
        loop {
            match self.state {
                State::Done => break,
                State::Data => {
                    if !data.is_empty() {
                        // One data run per call.
                        break;
                    }
                    let avail = input.len().saturating_sub(pos);
                    if avail == 0 {
                        break;
                    }
                    let take = match usize::try_from(self.size) {
                        Ok(size) => size.min(avail),
                        Err(_) => avail,
                    };
                    let end = pos.saturating_add(take);
                    data = pos..end;
                    pos = end;
                    // `take <= size`, so this cannot underflow.
                    self.size -= take as u64;
                    if self.size == 0 {
                        self.state = State::DataCr;
                    }
                    continue;
                }
                State::TrailerLine => {
                    let rest = input.get(pos..).unwrap_or(&[]);
                    let n = rest
                        .iter()
                        .position(|&b| b == b'\r' || b == b'\n')
                        .unwrap_or(rest.len());
                    if n > 0 {
                        match self.collect_trailer_bytes(&rest[..n]) {
                            Ok(()) => pos += n,
                            Err(e) => return self.fail(e, pos, data),
                        }
                    }
                }
                _ => {}
            }
            let Some(&byte) = input.get(pos) else { break };
            match self.step(byte) {
                Ok(next) => {
                    self.state = next;
                    pos += 1;
                }
                Err(e) => return self.fail(e, pos, data),
            }
        }
        Ok(Progress::new(pos, data, self.state == State::Done))
    }

    /// Records `e`. If this call already produced data, that data is
    /// returned and the error is reported by the next call.
    fn fail(&mut self, e: Error, pos: usize, data: Range<usize>) -> Result<Progress, Error> {
        self.error = Some(e);
        if data.is_empty() {
            Err(e)
        } else {
            Ok(Progress::new(pos, data, false))
        }
    }

    /// The peer closed the connection.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::decode::ChunkedDecoder;
    /// use ringstream_core::{Error, Limits};
    ///
    /// let mut decoder = ChunkedDecoder::new(Limits::DEFAULT);
    /// decoder.decode(b"3\r\nabc\r\n")?;
    /// // The peer closed before the last chunk.
    /// assert_eq!(decoder.finish_eof(), Err(Error::UnexpectedEof));
    /// # Ok::<(), Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::UnexpectedEof`] unless the body is complete, or the error
    /// the decoder had already failed with.
    pub fn finish_eof(&mut self) -> Result<(), Error> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if self.state != State::Done {
            self.error = Some(Error::UnexpectedEof);
            return Err(Error::UnexpectedEof);
        }
        Ok(())
    }

    /// Whether the last chunk and the trailer section have been decoded.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::decode::ChunkedDecoder;
    /// use ringstream_core::Limits;
    ///
    /// let mut decoder = ChunkedDecoder::new(Limits::DEFAULT);
    /// decoder.decode(b"0\r\n")?;
    /// // The trailer section's empty line is still to come.
    /// assert!(!decoder.is_finished());
    /// decoder.decode(b"\r\n")?;
    /// assert!(decoder.is_finished());
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    pub fn is_finished(&self) -> bool {
        self.state == State::Done && self.error.is_none()
    }

    /// The data bytes left in the current chunk while inside chunk data,
    /// zero once finished, otherwise unknown.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::decode::ChunkedDecoder;
    /// use ringstream_core::Limits;
    ///
    /// let mut decoder = ChunkedDecoder::new(Limits::DEFAULT);
    /// assert_eq!(decoder.remaining_hint(), None); // the size line is still to come
    /// decoder.decode(b"5\r\nhe")?;
    /// assert_eq!(decoder.remaining_hint(), Some(3));
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    pub fn remaining_hint(&self) -> Option<u64> {
        match self.state {
            State::Data => Some(self.size),
            State::Done => Some(0),
            _ => None,
        }
    }

    /// The trailer fields decoded so far (all of them once finished), in
    /// arrival order, values trimmed of surrounding whitespace.
    ///
    /// Without `alloc` trailer fields are checked, then dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::decode::ChunkedDecoder;
    /// use ringstream_core::Limits;
    ///
    /// let mut decoder = ChunkedDecoder::new(Limits::DEFAULT);
    /// decoder.decode(b"0\r\nx-sum: 42\r\n\r\n")?;
    /// assert!(decoder.is_finished());
    /// assert_eq!(decoder.trailers().next(), Some(("x-sum", &b"42"[..])));
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    #[cfg(feature = "alloc")]
    #[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
    pub fn trailers(&self) -> Trailers<'_> {
        Trailers {
            rest: self.trailers.get(..self.trailers_done).unwrap_or(&[]),
        }
    }

    /// Advances the machine by one framing byte.
    fn step(&mut self, b: u8) -> Result<State, Error> {
        let next = match self.state {
            State::SizeStart => self.size_start(b),
            State::Size => self.size_digit(b),
            State::SizeBws => size_bws(b),
            State::ExtNameStart => ext_name_start(b),
            State::ExtName => ext_name(b),
            State::ExtNameBws => ext_name_bws(b),
            State::ExtValueStart => ext_value_start(b),
            State::ExtToken => ext_token(b),
            State::ExtQuoted => ext_quoted(b),
            State::ExtQuotedPair => ext_quoted_pair(b),
            State::ExtValueEnd => ext_value_end(b),
            State::ExtValueBws => ext_value_bws(b),
            State::SizeLf => self.size_lf(b),
            State::DataCr => data_cr(b),
            State::DataLf => data_lf(b),
            State::TrailerStart => self.trailer_start(b),
            State::TrailerLine => self.trailer_line(b),
            State::TrailerLf => self.trailer_lf(b),
            State::EndLf => end_lf(b),
            // The decode loop handles these without calling `step`.
            State::Data | State::Done => Ok(self.state),
        }?;
        if next.is_extension() {
            self.ext_len = self.ext_len.saturating_add(1);
            if self.ext_len > self.limits.max_chunk_ext_len {
                return Err(Error::ChunkExtensionTooLong);
            }
        }
        Ok(next)
    }

    fn size_start(&mut self, b: u8) -> Result<State, Error> {
        match hex_value(b) {
            Some(v) => {
                self.size = u64::from(v);
                Ok(State::Size)
            }
            None => Err(Error::InvalidChunkSize),
        }
    }

    fn size_digit(&mut self, b: u8) -> Result<State, Error> {
        if let Some(v) = hex_value(b) {
            self.size = self
                .size
                .checked_mul(16)
                .and_then(|s| s.checked_add(u64::from(v)))
                .ok_or(Error::ChunkSizeOverflow)?;
            return Ok(State::Size);
        }
        match b {
            b' ' | b'\t' => Ok(State::SizeBws),
            b';' => Ok(State::ExtNameStart),
            b'\r' => Ok(State::SizeLf),
            b'\n' => Err(Error::BareLf),
            _ => Err(Error::InvalidChunkSize),
        }
    }

    /// The end of a chunk-size line: the chunk is accepted if the body,
    /// with it, stays within the limit.
    fn size_lf(&mut self, b: u8) -> Result<State, Error> {
        match b {
            b'\n' => {
                self.ext_len = 0;
                if self.size == 0 {
                    return Ok(State::TrailerStart);
                }
                self.body_len = self
                    .body_len
                    .checked_add(self.size)
                    .filter(|&len| len <= self.limits.max_body_len)
                    .ok_or(Error::BodyTooLarge)?;
                Ok(State::Data)
            }
            _ => Err(Error::BareCr),
        }
    }

    fn trailer_start(&mut self, b: u8) -> Result<State, Error> {
        match b {
            b'\r' => Ok(State::EndLf),
            b'\n' => Err(Error::BareLf),
            b' ' | b'\t' if self.trailer_count > 0 => Err(Error::ObsFold),
            _ => {
                if self.trailer_count >= self.limits.max_trailer_fields {
                    return Err(Error::TrailersTooLarge);
                }
                self.trailer_count += 1;
                self.line = TrailerLine::START;
                self.collect_trailer_bytes(&[b])?;
                Ok(State::TrailerLine)
            }
        }
    }

    fn trailer_line(&mut self, b: u8) -> Result<State, Error> {
        match b {
            b'\r' => Ok(State::TrailerLf),
            b'\n' => Err(Error::BareLf),
            _ => {
                self.collect_trailer_bytes(&[b])?;
                Ok(State::TrailerLine)
            }
        }
    }

    fn trailer_lf(&mut self, b: u8) -> Result<State, Error> {
        match b {
            b'\n' => {
                self.add_trailers_len(2)?;
                self.finish_trailer_line()?;
                Ok(State::TrailerStart)
            }
            _ => Err(Error::BareCr),
        }
    }

    fn add_trailers_len(&mut self, n: usize) -> Result<(), Error> {
        self.trailers_len = self
            .trailers_len
            .checked_add(n)
            .filter(|&len| len <= self.limits.max_trailers_len)
            .ok_or(Error::TrailersTooLarge)?;
        Ok(())
    }

    /// Takes in bytes of the trailer line being read (never CR or LF).
    fn collect_trailer_bytes(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.add_trailers_len(bytes.len())?;
        for &b in bytes {
            self.line.push(b);
        }
        #[cfg(feature = "alloc")]
        self.trailers.extend_from_slice(bytes);
        Ok(())
    }

    /// Checks the trailer line just ended and, with `alloc`, stores it after
    /// `trailers_done` as `name ":" trimmed-value "\n"`.
    fn finish_trailer_line(&mut self) -> Result<(), Error> {
        self.line.check()?;
        #[cfg(feature = "alloc")]
        self.store_trailer_line();
        Ok(())
    }

    /// Trims the value of the checked trailer line collected after
    /// `trailers_done`, in place, and marks the line complete.
    #[cfg(feature = "alloc")]
    fn store_trailer_line(&mut self) {
        let start = self.trailers_done;
        let line = self.trailers.get(start..).unwrap_or(&[]);
        // The line has a colon: `TrailerLine::check` saw it.
        let colon = line.iter().position(|&b| b == b':').unwrap_or(line.len());
        let value = line.get(colon + 1..).unwrap_or(&[]);
        let lead = value.iter().take_while(|&&b| is_ws(b)).count();
        let trail = value.iter().rev().take_while(|&&b| is_ws(b)).count();
        let value_len = value.len().saturating_sub(lead).saturating_sub(trail);
        // Positions within `self.trailers`: the value starts after the colon.
        let value_at = start + colon + 1;
        let src = value_at + lead;
        self.trailers.copy_within(src..src + value_len, value_at);
        self.trailers.truncate(value_at + value_len);
        self.trailers.push(b'\n');
        self.trailers_done = self.trailers.len();
    }
}

/// The trailer line being read (RFC 9112 §7.1.2, RFC 9110 §5.1, §5.5),
/// checked a byte at a time so that nothing of it has to be kept: the
/// same checks with and without a heap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TrailerLine {
    /// Bytes of the name so far: the bytes before the first colon.
    name_len: usize,
    /// The colon after the name has been seen.
    colon: bool,
    /// Every byte of the name so far is a `tchar`.
    name_ok: bool,
    /// Every byte of the value so far is `VCHAR`, `obs-text`, SP or HTAB.
    value_ok: bool,
    /// The names of [`FORBIDDEN_TRAILERS`] that the name so far is a prefix
    /// of (ASCII case-insensitively), one bit each.
    forbidden: u8,
}

/// The fields a trailer section must not carry (RFC 9110 §6.5.1), lowercase:
/// they frame or route the message.
const FORBIDDEN_TRAILERS: [&[u8]; 3] = [b"content-length", b"transfer-encoding", b"host"];

impl TrailerLine {
    /// Before the first byte of a line.
    const START: TrailerLine = TrailerLine {
        name_len: 0,
        colon: false,
        name_ok: true,
        value_ok: true,
        forbidden: (1 << FORBIDDEN_TRAILERS.len()) - 1,
    };

    /// Takes in the next byte of the line.
    #[inline]
    fn push(&mut self, b: u8) {
        if self.colon {
            self.value_ok &= is_field_vchar(b) || is_ws(b);
        } else if b == b':' {
            self.colon = true;
        } else {
            self.name_ok &= is_tchar(b);
            let lower = b.to_ascii_lowercase();
            for (i, name) in FORBIDDEN_TRAILERS.iter().enumerate() {
                if name.get(self.name_len) != Some(&lower) {
                    self.forbidden &= !(1 << i);
                }
            }
            self.name_len = self.name_len.saturating_add(1);
        }
    }

    /// The line has ended: `name ":" OWS value OWS` with a token name, a
    /// field value, and not a framing field.
    fn check(&self) -> Result<(), Error> {
        if !self.colon || self.name_len == 0 || !self.name_ok || !self.value_ok {
            return Err(Error::InvalidTrailer);
        }
        let forbidden = FORBIDDEN_TRAILERS
            .iter()
            .enumerate()
            .any(|(i, name)| self.forbidden & (1 << i) != 0 && name.len() == self.name_len);
        if forbidden {
            return Err(Error::ForbiddenTrailer);
        }
        Ok(())
    }
}

/// Whitespace after the chunk size is the BWS before a `;` (RFC 9112
/// §7.1.1): without an extension after it, it is not part of the line.
fn size_bws(b: u8) -> Result<State, Error> {
    match b {
        b' ' | b'\t' => Ok(State::SizeBws),
        b';' => Ok(State::ExtNameStart),
        b'\n' => Err(Error::BareLf),
        _ => Err(Error::InvalidChunkSize),
    }
}

fn ext_name_start(b: u8) -> Result<State, Error> {
    match b {
        b' ' | b'\t' => Ok(State::ExtNameStart),
        b'\n' => Err(Error::BareLf),
        _ if is_tchar(b) => Ok(State::ExtName),
        _ => Err(Error::InvalidChunkExtension),
    }
}

fn ext_name(b: u8) -> Result<State, Error> {
    match b {
        b' ' | b'\t' => Ok(State::ExtNameBws),
        b'=' => Ok(State::ExtValueStart),
        b';' => Ok(State::ExtNameStart),
        b'\r' => Ok(State::SizeLf),
        b'\n' => Err(Error::BareLf),
        _ if is_tchar(b) => Ok(State::ExtName),
        _ => Err(Error::InvalidChunkExtension),
    }
}

/// The BWS after a name comes before `=` or `;` (RFC 9112 §7.1.1), never
/// before the line end.
fn ext_name_bws(b: u8) -> Result<State, Error> {
    match b {
        b' ' | b'\t' => Ok(State::ExtNameBws),
        b'=' => Ok(State::ExtValueStart),
        b';' => Ok(State::ExtNameStart),
        b'\n' => Err(Error::BareLf),
        _ => Err(Error::InvalidChunkExtension),
    }
}

fn ext_value_start(b: u8) -> Result<State, Error> {
    match b {
        b' ' | b'\t' => Ok(State::ExtValueStart),
        b'"' => Ok(State::ExtQuoted),
        b'\n' => Err(Error::BareLf),
        _ if is_tchar(b) => Ok(State::ExtToken),
        _ => Err(Error::InvalidChunkExtension),
    }
}

fn ext_token(b: u8) -> Result<State, Error> {
    match b {
        b' ' | b'\t' => Ok(State::ExtValueBws),
        b';' => Ok(State::ExtNameStart),
        b'\r' => Ok(State::SizeLf),
        b'\n' => Err(Error::BareLf),
        _ if is_tchar(b) => Ok(State::ExtToken),
        _ => Err(Error::InvalidChunkExtension),
    }
}

fn ext_quoted(b: u8) -> Result<State, Error> {
    match b {
        b'"' => Ok(State::ExtValueEnd),
        b'\\' => Ok(State::ExtQuotedPair),
        b'\n' => Err(Error::BareLf),
        b'\t' | b' ' | 0x21 | 0x23..=0x5b | 0x5d..=0x7e | 0x80..=0xff => Ok(State::ExtQuoted),
        _ => Err(Error::InvalidChunkExtension),
    }
}

fn ext_quoted_pair(b: u8) -> Result<State, Error> {
    match b {
        b'\n' => Err(Error::BareLf),
        b'\t' | b' ' | 0x21..=0x7e | 0x80..=0xff => Ok(State::ExtQuoted),
        _ => Err(Error::InvalidChunkExtension),
    }
}

fn ext_value_end(b: u8) -> Result<State, Error> {
    match b {
        b' ' | b'\t' => Ok(State::ExtValueBws),
        b';' => Ok(State::ExtNameStart),
        b'\r' => Ok(State::SizeLf),
        b'\n' => Err(Error::BareLf),
        _ => Err(Error::InvalidChunkExtension),
    }
}

/// The BWS after a value comes before the next `;`, never before the line
/// end.
fn ext_value_bws(b: u8) -> Result<State, Error> {
    match b {
        b' ' | b'\t' => Ok(State::ExtValueBws),
        b';' => Ok(State::ExtNameStart),
        b'\n' => Err(Error::BareLf),
        _ => Err(Error::InvalidChunkExtension),
    }
}

fn data_cr(b: u8) -> Result<State, Error> {
    match b {
        b'\r' => Ok(State::DataLf),
        b'\n' => Err(Error::BareLf),
        _ => Err(Error::MissingChunkCrlf),
    }
}

fn data_lf(b: u8) -> Result<State, Error> {
    match b {
        b'\n' => Ok(State::SizeStart),
        _ => Err(Error::BareCr),
    }
}

fn end_lf(b: u8) -> Result<State, Error> {
    match b {
        b'\n' => Ok(State::Done),
        _ => Err(Error::BareCr),
    }
}

// ---------------------------------------------------------------------------
// Trailers
// ---------------------------------------------------------------------------

/// Iterator over decoded trailer fields as `(name, value)` pairs.
///
/// Needs `alloc`: the decoder keeps the fields on the heap.
///
/// Names are as received (trailer names are case-insensitive; compare with
/// [`str::eq_ignore_ascii_case`]); values are trimmed of surrounding
/// whitespace.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::decode::Decoder;
/// use ringstream_core::Limits;
///
/// let mut decoder = Decoder::chunked(Limits::DEFAULT);
/// decoder.decode(b"0\r\nA: 1\r\nB:  two \r\n\r\n").unwrap();
/// let fields: Vec<_> = decoder.trailers().collect();
/// assert_eq!(fields, [("A", &b"1"[..]), ("B", &b"two"[..])]);
/// ```
#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
#[derive(Debug, Clone)]
pub struct Trailers<'a> {
    /// Completed fields, each `name ":" value "\n"`.
    rest: &'a [u8],
}

#[cfg(feature = "alloc")]
impl<'a> Iterator for Trailers<'a> {
    type Item = (&'a str, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.rest.is_empty() {
                return None;
            }
            let end = self
                .rest
                .iter()
                .position(|&b| b == b'\n')
                .unwrap_or(self.rest.len());
            let line = self.rest.get(..end).unwrap_or(&[]);
            self.rest = self.rest.get(end + 1..).unwrap_or(&[]);
            let Some(colon) = line.iter().position(|&b| b == b':') else {
                continue;
            };
            let (name, value) = line.split_at(colon);
            // Names were validated as tokens, which are ASCII.
            if let Ok(name) = core::str::from_utf8(name) {
                return Some((name, value.get(1..).unwrap_or(&[])));
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Byte classes
// ---------------------------------------------------------------------------

/// The value of a hex digit.
#[inline]
const fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Fields that must not appear in a trailer section because they frame or
/// route the message (RFC 9110 §6.5.1).
pub(crate) fn is_forbidden_trailer(name: &[u8]) -> bool {
    FORBIDDEN_TRAILERS
        .iter()
        .any(|forbidden| name.eq_ignore_ascii_case(forbidden))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_line_states_follow_rfc_9112_section_7_1_1() {
        let mut d = ChunkedDecoder::new(Limits::DEFAULT);
        for &b in b"a ; n = \"q\\\"\" ;m=t" {
            let next = d.step(b).unwrap();
            d.state = next;
        }
        assert_eq!(d.state, State::ExtToken);
        assert_eq!(d.size, 10);
        assert_eq!(d.ext_len, 17);
        d.state = d.step(b'\r').unwrap();
        d.state = d.step(b'\n').unwrap();
        assert_eq!(d.state, State::Data);
        assert_eq!(d.ext_len, 0);
    }

    /// The checks of a whole trailer line, as the decoder made them when it
    /// kept every line on the heap.
    fn whole_line_check(line: &[u8]) -> Result<(), Error> {
        let colon = line
            .iter()
            .position(|&b| b == b':')
            .ok_or(Error::InvalidTrailer)?;
        let (name, rest) = line.split_at(colon);
        let value = &rest[1..];
        if name.is_empty() || !name.iter().all(|&b| is_tchar(b)) {
            return Err(Error::InvalidTrailer);
        }
        if !value.iter().all(|&b| is_field_vchar(b) || is_ws(b)) {
            return Err(Error::InvalidTrailer);
        }
        if is_forbidden_trailer(name) {
            return Err(Error::ForbiddenTrailer);
        }
        Ok(())
    }

    fn byte_at_a_time_check(line: &[u8]) -> Result<(), Error> {
        let mut checked = TrailerLine::START;
        for &b in line {
            checked.push(b);
        }
        checked.check()
    }

    /// RFC 9112 §7.1.2, RFC 9110 §6.5.1: checking a trailer line a byte at
    /// a time, with nothing kept, decides as checking the whole line: every
    /// line of up to five bytes from an alphabet of each byte class, and
    /// the framing fields' names in any case, cut short and run on.
    #[test]
    fn trailer_lines_checked_a_byte_at_a_time_as_whole() {
        const ALPHABET: &[u8] = b"aH:\" \t\x01\x80";
        let mut line = [0u8; 5];
        for len in 0..=line.len() {
            let mut n = ALPHABET.len().pow(len as u32);
            while n > 0 {
                n -= 1;
                let mut rest = n;
                for slot in &mut line[..len] {
                    *slot = ALPHABET[rest % ALPHABET.len()];
                    rest /= ALPHABET.len();
                }
                let line = &line[..len];
                assert_eq!(
                    byte_at_a_time_check(line),
                    whole_line_check(line),
                    "{line:?}"
                );
            }
        }
        let mut named = [0u8; 32];
        for name in FORBIDDEN_TRAILERS {
            for cut in 0..=name.len() {
                for (suffix, case) in [(&b":"[..], 0u8), (b"x:1", 1), (b" :", 0), (b":v", 2)] {
                    let len = cut + suffix.len();
                    named[..cut].copy_from_slice(&name[..cut]);
                    match case {
                        1 => named[..cut].make_ascii_uppercase(),
                        2 => named[..1.min(cut)].make_ascii_uppercase(),
                        _ => {}
                    }
                    named[cut..len].copy_from_slice(suffix);
                    let line = &named[..len];
                    assert_eq!(
                        byte_at_a_time_check(line),
                        whole_line_check(line),
                        "{line:?}"
                    );
                }
            }
        }
        assert_eq!(
            byte_at_a_time_check(b"Content-Length: 5"),
            Err(Error::ForbiddenTrailer)
        );
        assert_eq!(byte_at_a_time_check(b"hostx: a"), Ok(()));
        assert_eq!(byte_at_a_time_check(b"x-sum: a:b"), Ok(()));
    }

    #[cfg(feature = "alloc")]
    #[test]
    fn trailer_values_are_trimmed_in_place() {
        let mut d = ChunkedDecoder::new(Limits::DEFAULT);
        d.decode(b"0\r\nA:\t x y \t\r\nB:\r\n").unwrap();
        assert_eq!(d.trailers, b"A:x y\nB:\n");
        assert_eq!(d.trailers().count(), 2);
    }
}
