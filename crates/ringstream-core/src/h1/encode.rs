//! Response encoding: the framing rule, the head writer, body encoders and
//! the `Date` value.
//!
//! Nothing here performs I/O. The encoders hand back small framing pieces
//! (a chunk-size line, a CRLF) so a writer can send framing and the untouched
//! body as separate slices of one vectored write, and they count bytes so a
//! short or long `Content-Length` body is reported instead of corrupting the
//! connection.

use alloc::vec::Vec;

use crate::h1::decode::{is_field_vchar, is_forbidden_trailer, is_ws};
use crate::h1::Version;
use crate::h1::{is_field_value, is_token};
use crate::Error;

/// The line terminator of HTTP/1.1 framing.
pub const CRLF: &[u8] = b"\r\n";

// ---------------------------------------------------------------------------
// Framing rule
// ---------------------------------------------------------------------------

/// How a response body is delimited on the wire (RFC 9112 §6.3).
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::encode::{response_framing, ResponseFraming};
/// use ringstream_core::h1::Version;
///
/// assert_eq!(
///     response_framing(false, 200, Version::Http11, None),
///     ResponseFraming::Chunked
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResponseFraming {
    /// The response has no body. A response to `HEAD` and a `304` may still
    /// advertise the length the body would have had.
    NoBody {
        /// The `Content-Length` to advertise, if any.
        content_length: Option<u64>,
    },
    /// A body of exactly this many bytes (`Content-Length`).
    Length(u64),
    /// A chunked body (`Transfer-Encoding: chunked`), HTTP/1.1 only.
    Chunked,
    /// A body delimited by closing the connection (HTTP/1.0 with no known
    /// length).
    CloseDelimited,
}

impl ResponseFraming {
    /// Whether body bytes may be sent.
    pub const fn has_body(self) -> bool {
        !matches!(self, ResponseFraming::NoBody { .. })
    }

    /// Whether the connection must close after the response.
    pub const fn requires_close(self) -> bool {
        matches!(self, ResponseFraming::CloseDelimited)
    }
}

/// Decides how a response is framed (RFC 9112 §6.3, RFC 9110 §6.4.1).
///
/// - a response to `HEAD`, and a `304`, carry no body but advertise
///   `known_length` as the length the body would have had;
/// - `1xx` and `204` carry no body and no length;
/// - otherwise a known length frames the body with `Content-Length`, and an
///   unknown one uses chunked coding on HTTP/1.1 and closes the connection
///   on HTTP/1.0.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::encode::{response_framing, ResponseFraming};
/// use ringstream_core::h1::Version;
///
/// assert_eq!(
///     response_framing(true, 200, Version::Http11, Some(42)),
///     ResponseFraming::NoBody { content_length: Some(42) }
/// );
/// assert_eq!(
///     response_framing(false, 204, Version::Http11, Some(42)),
///     ResponseFraming::NoBody { content_length: None }
/// );
/// assert_eq!(
///     response_framing(false, 200, Version::Http10, None),
///     ResponseFraming::CloseDelimited
/// );
/// ```
pub const fn response_framing(
    request_is_head: bool,
    status: u16,
    version: Version,
    known_length: Option<u64>,
) -> ResponseFraming {
    if (status >= 100 && status < 200) || status == 204 {
        return ResponseFraming::NoBody {
            content_length: None,
        };
    }
    if request_is_head || status == 304 {
        return ResponseFraming::NoBody {
            content_length: known_length,
        };
    }
    match (known_length, version) {
        (Some(n), _) => ResponseFraming::Length(n),
        (None, Version::Http11) => ResponseFraming::Chunked,
        (None, Version::Http10) => ResponseFraming::CloseDelimited,
    }
}

// ---------------------------------------------------------------------------
// Head writer
// ---------------------------------------------------------------------------

/// Writes a response head to `out`.
///
/// In order: the status line (the canonical reason phrase of `status` when
/// `reason` is `None`), `date: {date}` (omitted when `date` is empty), the
/// caller's `fields`, the framing field for `framing` (`content-length: N`
/// or `transfer-encoding: chunked`), `connection: close` when `close` is set
/// or the framing is close-delimited, and the empty line.
///
/// The framing fields are owned by this function: any `Content-Length` or
/// `Transfer-Encoding` among `fields` is skipped, so they are never
/// duplicated or contradicted.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::encode::{write_response_head, ResponseFraming};
/// use ringstream_core::h1::Version;
///
/// let mut out = Vec::new();
/// let fields = [(&b"content-type"[..], &b"text/plain"[..])];
/// write_response_head(
///     &mut out,
///     Version::Http11,
///     200,
///     None,
///     fields,
///     ResponseFraming::Length(5),
///     b"Sun, 06 Nov 1994 08:49:37 GMT",
///     false,
/// )
/// .unwrap();
/// assert_eq!(
///     out,
///     b"HTTP/1.1 200 OK\r\n\
///       date: Sun, 06 Nov 1994 08:49:37 GMT\r\n\
///       content-type: text/plain\r\n\
///       content-length: 5\r\n\r\n"
/// );
/// ```
///
/// # Errors
///
/// Nothing is written (`out` is left as it was) and an error is returned if
/// `status` is not a three-digit code ([`Error::InvalidStatus`]), `reason`
/// holds a control character, a field name is not a token
/// ([`Error::InvalidFieldName`]), or a field value or `date` holds CR, LF,
/// NUL or another control character ([`Error::InvalidFieldValue`]).
#[allow(clippy::too_many_arguments)]
pub fn write_response_head<'a, I>(
    out: &mut Vec<u8>,
    version: Version,
    status: u16,
    reason: Option<&str>,
    fields: I,
    framing: ResponseFraming,
    date: &[u8],
    close: bool,
) -> Result<(), Error>
where
    I: IntoIterator<Item = (&'a [u8], &'a [u8])>,
{
    let start = out.len();
    let result = write_head_inner(out, version, status, reason, fields, framing, date, close);
    if result.is_err() {
        out.truncate(start);
    }
    result
}

#[allow(clippy::too_many_arguments)]
fn write_head_inner<'a, I>(
    out: &mut Vec<u8>,
    version: Version,
    status: u16,
    reason: Option<&str>,
    fields: I,
    framing: ResponseFraming,
    date: &[u8],
    close: bool,
) -> Result<(), Error>
where
    I: IntoIterator<Item = (&'a [u8], &'a [u8])>,
{
    if !(100..=999).contains(&status) {
        return Err(Error::InvalidStatus);
    }
    // The standard phrases are known to be clean; only a caller's is checked.
    let reason = match reason {
        Some(reason) if !reason.bytes().all(|b| is_ws(b) || is_field_vchar(b)) => {
            return Err(Error::InvalidFieldValue);
        }
        Some(reason) => reason,
        None => reason_phrase(status),
    };
    // `HTTP/1.x ddd ` in one piece: the status has three digits.
    let mut line = [0u8; 13];
    line[..8].copy_from_slice(version.as_str().as_bytes());
    line[8] = b' ';
    line[9] = b'0' + (status / 100) as u8;
    line[10] = b'0' + (status / 10 % 10) as u8;
    line[11] = b'0' + (status % 10) as u8;
    line[12] = b' ';
    out.extend_from_slice(&line);
    out.extend_from_slice(reason.as_bytes());
    out.extend_from_slice(CRLF);

    if !date.is_empty() {
        write_field(out, b"date", date)?;
    }
    for (name, value) in fields {
        if name.eq_ignore_ascii_case(b"content-length")
            || name.eq_ignore_ascii_case(b"transfer-encoding")
        {
            continue;
        }
        write_field(out, name, value)?;
    }
    match framing {
        ResponseFraming::NoBody {
            content_length: Some(n),
        }
        | ResponseFraming::Length(n) => {
            out.extend_from_slice(b"content-length: ");
            write_u64(out, n);
            out.extend_from_slice(CRLF);
        }
        ResponseFraming::Chunked => out.extend_from_slice(b"transfer-encoding: chunked\r\n"),
        ResponseFraming::NoBody {
            content_length: None,
        }
        | ResponseFraming::CloseDelimited => {}
    }
    if close || framing.requires_close() {
        out.extend_from_slice(b"connection: close\r\n");
    }
    out.extend_from_slice(CRLF);
    Ok(())
}

/// Writes `name: value\r\n` after validating both.
fn write_field(out: &mut Vec<u8>, name: &[u8], value: &[u8]) -> Result<(), Error> {
    check_field(name, value, Error::InvalidFieldValue)?;
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(CRLF);
    Ok(())
}

/// Checks a field name is a token and a value is `field-value` (RFC 9110
/// §5.5) without surrounding whitespace; `value_error` is returned for a bad
/// value.
fn check_field(name: &[u8], value: &[u8], value_error: Error) -> Result<(), Error> {
    if !is_token(name) {
        return Err(Error::InvalidFieldName);
    }
    let ok = is_field_value(value)
        && !value.first().is_some_and(|&b| is_ws(b))
        && !value.last().is_some_and(|&b| is_ws(b));
    if ok {
        Ok(())
    } else {
        Err(value_error)
    }
}

/// The canonical reason phrase of a status code (RFC 9110 §15), or `""` for
/// an unregistered code.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::encode::reason_phrase;
///
/// assert_eq!(reason_phrase(404), "Not Found");
/// assert_eq!(reason_phrase(599), "");
/// ```
pub const fn reason_phrase(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        101 => "Switching Protocols",
        102 => "Processing",
        103 => "Early Hints",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        203 => "Non-Authoritative Information",
        204 => "No Content",
        205 => "Reset Content",
        206 => "Partial Content",
        207 => "Multi-Status",
        208 => "Already Reported",
        226 => "IM Used",
        300 => "Multiple Choices",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        305 => "Use Proxy",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        407 => "Proxy Authentication Required",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        412 => "Precondition Failed",
        413 => "Content Too Large",
        414 => "URI Too Long",
        415 => "Unsupported Media Type",
        416 => "Range Not Satisfiable",
        417 => "Expectation Failed",
        421 => "Misdirected Request",
        422 => "Unprocessable Content",
        423 => "Locked",
        424 => "Failed Dependency",
        425 => "Too Early",
        426 => "Upgrade Required",
        428 => "Precondition Required",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        451 => "Unavailable For Legal Reasons",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        506 => "Variant Also Negotiates",
        507 => "Insufficient Storage",
        508 => "Loop Detected",
        511 => "Network Authentication Required",
        _ => "",
    }
}

/// Appends the decimal digits of `n`.
fn write_u64(out: &mut Vec<u8>, mut n: u64) {
    /// "00" to "99".
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859\
        6061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899";
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    // Two digits per division.
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        let pair = n as usize * 2;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    } else {
        i -= 1;
        buf[i] = b'0' + n as u8;
    }
    out.extend_from_slice(&buf[i..]);
}

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
    pub const fn new(len: u64) -> LengthEncoder {
        LengthEncoder { remaining: len }
    }

    /// Accounts for `n` more body bytes about to be written.
    ///
    /// # Errors
    ///
    /// [`Error::BodyOverflow`] if `n` exceeds the bytes remaining; nothing is
    /// accounted then, so the caller must not send those bytes.
    pub fn encode(&mut self, n: usize) -> Result<(), Error> {
        let n = u64::try_from(n).map_err(|_| Error::BodyOverflow)?;
        self.remaining = self.remaining.checked_sub(n).ok_or(Error::BodyOverflow)?;
        Ok(())
    }

    /// Checks the whole body was written.
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
/// use ringstream_core::h1::encode::{ChunkedEncoder, CRLF};
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
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChunkedEncoder {
    uppercase: bool,
}

impl ChunkedEncoder {
    /// The CRLF sent after each chunk's data.
    pub const CRLF: &'static [u8] = CRLF;

    /// An encoder writing chunk sizes in lowercase hex.
    pub const fn new() -> ChunkedEncoder {
        ChunkedEncoder { uppercase: false }
    }

    /// An encoder writing chunk sizes in uppercase hex.
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

    /// Appends one whole chunk (size line, `data`, CRLF) to `out`, copying
    /// the data; does nothing for empty `data`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::encode::ChunkedEncoder;
    ///
    /// let mut out = Vec::new();
    /// ChunkedEncoder::new().write_chunk(b"", &mut out);
    /// ChunkedEncoder::new().write_chunk(b"abc", &mut out);
    /// assert_eq!(out, b"3\r\nabc\r\n");
    /// ```
    pub fn write_chunk(&self, data: &[u8], out: &mut Vec<u8>) {
        if let Some(prefix) = self.chunk_prefix(data.len() as u64) {
            out.extend_from_slice(prefix.as_ref());
            out.extend_from_slice(data);
            out.extend_from_slice(CRLF);
        }
    }

    /// Appends the end of the body: `0\r\n`, the trailer fields, and the
    /// final CRLF.
    ///
    /// # Errors
    ///
    /// Nothing is written and an error is returned if a trailer name is not
    /// a token ([`Error::InvalidFieldName`]), a value holds a control
    /// character or surrounding whitespace ([`Error::InvalidTrailer`]), or a
    /// trailer is a framing field (`Content-Length`, `Transfer-Encoding`,
    /// `Host`: [`Error::ForbiddenTrailer`], RFC 9110 §6.5.1).
    pub fn last_chunk<'a, I>(&self, trailers: I, out: &mut Vec<u8>) -> Result<(), Error>
    where
        I: IntoIterator<Item = (&'a str, &'a [u8])>,
    {
        let start = out.len();
        out.extend_from_slice(b"0\r\n");
        for (name, value) in trailers {
            let name = name.as_bytes();
            let checked = check_field(name, value, Error::InvalidTrailer).and_then(|()| {
                if is_forbidden_trailer(name) {
                    Err(Error::ForbiddenTrailer)
                } else {
                    Ok(())
                }
            });
            if let Err(e) = checked {
                out.truncate(start);
                return Err(e);
            }
            out.extend_from_slice(name);
            out.extend_from_slice(b": ");
            out.extend_from_slice(value);
            out.extend_from_slice(CRLF);
        }
        out.extend_from_slice(CRLF);
        Ok(())
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
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..usize::from(self.len)).unwrap_or(&[])
    }

    /// Length of the size line in bytes, CRLF included.
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
            .field(&bytes::Bytes::copy_from_slice(self.as_bytes()))
            .finish()
    }
}

// ---------------------------------------------------------------------------
// Date
// ---------------------------------------------------------------------------

/// Length of an IMF-fixdate in bytes.
pub const HTTP_DATE_LEN: usize = 29;

/// The largest instant an IMF-fixdate can show, in seconds since the Unix
/// epoch: 9999-12-31 23:59:59 UTC.
pub const MAX_HTTP_DATE_SECS: u64 = 253_402_300_799;

/// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 §5.6.7).
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::encode::HttpDate;
///
/// let date = HttpDate::from_unix_secs(784_111_777);
/// assert_eq!(date.as_str(), "Sun, 06 Nov 1994 08:49:37 GMT");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct HttpDate {
    buf: [u8; HTTP_DATE_LEN],
}

impl HttpDate {
    /// Formats `unix_secs` (seconds since 1970-01-01T00:00:00Z). Instants
    /// after year 9999 are shown as [`MAX_HTTP_DATE_SECS`], since the format
    /// has four year digits.
    pub const fn from_unix_secs(unix_secs: u64) -> HttpDate {
        const DAYS: [&[u8; 3]; 7] = [b"Sun", b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat"];
        const MONTHS: [&[u8; 3]; 12] = [
            b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov",
            b"Dec",
        ];
        let secs = if unix_secs > MAX_HTTP_DATE_SECS {
            MAX_HTTP_DATE_SECS
        } else {
            unix_secs
        };
        let days = secs / 86_400;
        let rem = secs % 86_400;
        let (hour, minute, second) = (rem / 3600, rem % 3600 / 60, rem % 60);
        // 1970-01-01 was a Thursday.
        let weekday = ((days + 4) % 7) as usize;

        // Civil-from-days (proleptic Gregorian calendar), with eras of 400
        // years starting on March 1st so leap days fall at the end.
        let z = days + 719_468;
        let era = z / 146_097;
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + if month <= 2 { 1 } else { 0 };

        let mut buf = *b"Thu, 01 Jan 1970 00:00:00 GMT";
        let name = DAYS[weekday];
        buf[0] = name[0];
        buf[1] = name[1];
        buf[2] = name[2];
        buf[5] = b'0' + (day / 10) as u8;
        buf[6] = b'0' + (day % 10) as u8;
        let name = MONTHS[(month - 1) as usize];
        buf[8] = name[0];
        buf[9] = name[1];
        buf[10] = name[2];
        buf[12] = b'0' + (year / 1000 % 10) as u8;
        buf[13] = b'0' + (year / 100 % 10) as u8;
        buf[14] = b'0' + (year / 10 % 10) as u8;
        buf[15] = b'0' + (year % 10) as u8;
        buf[17] = b'0' + (hour / 10) as u8;
        buf[18] = b'0' + (hour % 10) as u8;
        buf[20] = b'0' + (minute / 10) as u8;
        buf[21] = b'0' + (minute % 10) as u8;
        buf[23] = b'0' + (second / 10) as u8;
        buf[24] = b'0' + (second % 10) as u8;
        HttpDate { buf }
    }

    /// The formatted bytes.
    pub const fn as_bytes(&self) -> &[u8; HTTP_DATE_LEN] {
        &self.buf
    }

    /// The formatted date as text.
    pub fn as_str(&self) -> &str {
        // Every byte written is ASCII.
        core::str::from_utf8(&self.buf).unwrap_or("")
    }
}

impl core::fmt::Debug for HttpDate {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("HttpDate").field(&self.as_str()).finish()
    }
}

impl core::fmt::Display for HttpDate {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `Date` value of the current second, formatted once per second.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::encode::DateCache;
///
/// let mut cache = DateCache::new();
/// assert_eq!(cache.update(0), b"Thu, 01 Jan 1970 00:00:00 GMT");
/// assert_eq!(cache.update(86_400 + 1), b"Fri, 02 Jan 1970 00:00:01 GMT");
/// ```
#[derive(Debug, Clone)]
pub struct DateCache {
    secs: u64,
    date: HttpDate,
}

impl DateCache {
    /// A cache holding the Unix epoch.
    pub const fn new() -> DateCache {
        DateCache {
            secs: 0,
            date: HttpDate::from_unix_secs(0),
        }
    }

    /// The date for `unix_secs`, re-formatted only when the second changed.
    pub fn update(&mut self, unix_secs: u64) -> &[u8; HTTP_DATE_LEN] {
        if unix_secs != self.secs {
            self.secs = unix_secs;
            self.date = HttpDate::from_unix_secs(unix_secs);
        }
        self.date.as_bytes()
    }

    /// The date last formatted.
    pub const fn get(&self) -> &[u8; HTTP_DATE_LEN] {
        self.date.as_bytes()
    }
}

impl Default for DateCache {
    fn default() -> Self {
        DateCache::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The head writer trusts the standard phrases without checking them.
    #[test]
    fn every_standard_reason_phrase_is_clean() {
        for status in 100..=999 {
            let reason = reason_phrase(status);
            assert!(
                reason.bytes().all(|b| is_ws(b) || is_field_vchar(b)),
                "{status}: {reason:?}"
            );
        }
    }

    #[test]
    fn write_u64_formats_extremes() {
        let mut out = Vec::new();
        write_u64(&mut out, 0);
        out.push(b' ');
        write_u64(&mut out, u64::MAX);
        assert_eq!(out, b"0 18446744073709551615");
    }

    #[test]
    fn write_u64_matches_display() {
        let mut n = 1u64;
        let mut values = alloc::vec![0u64, 9, 10, 99, 100, 101, 999, 1000, 40960, u64::MAX];
        while let Some(next) = n.checked_mul(7) {
            values.extend([n - 1, n, n + 1]);
            n = next;
        }
        for v in values {
            let mut out = Vec::new();
            write_u64(&mut out, v);
            assert_eq!(out, alloc::format!("{v}").into_bytes(), "{v}");
        }
    }
}
