//! Response heads: the status line, the caller's fields, the framing and
//! connection fields, and the bare error response a server closes with.
//!
//! Nothing here performs I/O: heads are written into the caller's buffer
//! (any [`WriteBuf`]: a `Vec<u8>`, a fixed slice, a ring), which is left as
//! it was when a head is refused or does not fit.

use super::framing::ResponseFraming;
use super::server_fields::ServerFields;
use super::syntax::{is_field_value, is_field_vchar, is_token, is_ws, list, parse_decimal, CRLF};
use super::version::Version;
use crate::out::{OutOfSpace, WriteBuf};
use crate::Error;

// ---------------------------------------------------------------------------
// Head writer
// ---------------------------------------------------------------------------

/// The start of a response head: status line, `Date` and `Server`.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::ResponseHead;
///
/// let head = ResponseHead::new(404).date(b"Sun, 06 Nov 1994 08:49:37 GMT").server(b"ringstream");
/// assert_eq!(head.status, 404);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseHead<'a> {
    /// The status code, three digits.
    pub status: u16,
    /// The reason phrase; `None` writes the canonical one of `status`.
    pub reason: Option<&'a str>,
    /// The `Date` value ([`HttpDate`](super::HttpDate)); empty writes no `Date` field.
    pub date: &'a [u8],
    /// The `Server` value, if one is sent.
    pub server: Option<&'a [u8]>,
    /// The server's own `date` and `server` lines, checked when they were
    /// made and copied in one piece (after the status line, before `date`
    /// and `server` if those are set too: give one or the other).
    pub server_fields: Option<&'a ServerFields>,
    /// The version of the status line (a server answers `HTTP/1.1` to both
    /// versions, RFC 9110 §6.2).
    pub version: Version,
}

impl<'a> ResponseHead<'a> {
    /// An `HTTP/1.1` head with `status`, its canonical reason, no `Date` and
    /// no `Server`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::response::{write_response_head, ResponseHead};
    /// use ringstream_core::h1::ResponseFraming;
    /// use ringstream_core::SliceBuf;
    ///
    /// let mut tx = [0u8; 64];
    /// let mut out = SliceBuf::new(&mut tx);
    /// let head = ResponseHead::new(204).reason("Nothing Here");
    /// let framing = ResponseFraming::NoBody { content_length: None };
    /// write_response_head(&mut out, &head, [], framing, false)?;
    /// assert_eq!(out.written(), b"HTTP/1.1 204 Nothing Here\r\n\r\n");
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    pub const fn new(status: u16) -> ResponseHead<'a> {
        ResponseHead {
            status,
            reason: None,
            date: b"",
            server: None,
            server_fields: None,
            version: Version::Http11,
        }
    }

    /// With this reason phrase.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::ResponseHead;
    ///
    /// assert_eq!(ResponseHead::new(200).reason, None); // "OK" is written
    /// assert_eq!(ResponseHead::new(200).reason("Fine").reason, Some("Fine"));
    /// ```
    pub const fn reason(mut self, reason: &'a str) -> ResponseHead<'a> {
        self.reason = Some(reason);
        self
    }

    /// With this `Date` value.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{HttpDate, ResponseHead};
    ///
    /// let date = HttpDate::from_unix_secs(784_111_777);
    /// let head = ResponseHead::new(200).date(date.as_bytes());
    /// assert_eq!(head.date, b"Sun, 06 Nov 1994 08:49:37 GMT");
    /// ```
    pub const fn date(mut self, date: &'a [u8]) -> ResponseHead<'a> {
        self.date = date;
        self
    }

    /// With this `Server` value.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::ResponseHead;
    ///
    /// assert_eq!(ResponseHead::new(200).server, None);
    /// assert_eq!(ResponseHead::new(200).server(b"ringstream").server, Some(&b"ringstream"[..]));
    /// ```
    pub const fn server(mut self, server: &'a [u8]) -> ResponseHead<'a> {
        self.server = Some(server);
        self
    }

    /// With these `date` and `server` lines, in place of [`date`](Self::date)
    /// and [`server`](Self::server): checked once, when they were made, so
    /// a head that carries them is written with one copy for both.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{ResponseHead, ServerFields};
    ///
    /// let own = ServerFields::new(Some(b"ringstream")).unwrap();
    /// let head = ResponseHead::new(200).server_fields(&own);
    /// assert!(head.server_fields.is_some() && head.date.is_empty());
    /// ```
    pub const fn server_fields(mut self, fields: &'a ServerFields) -> ResponseHead<'a> {
        self.server_fields = Some(fields);
        self
    }

    /// With this status-line version.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{ResponseHead, Version};
    ///
    /// // A client that needs `HTTP/1.0` in the status line.
    /// let head = ResponseHead::new(200).version(Version::Http10);
    /// assert_eq!(head.version, Version::Http10);
    /// ```
    pub const fn version(mut self, version: Version) -> ResponseHead<'a> {
        self.version = version;
        self
    }
}

/// Writes a response head to `out`: a `Vec<u8>`, or a buffer of fixed size
/// such as a [`SliceBuf`](crate::SliceBuf) over a transmit buffer.
///
/// In order: the status line, `date` and `server` (when set), the caller's
/// `fields`, the framing field for `framing` (`content-length: N` or
/// `transfer-encoding: chunked`), `connection: close` when `close` is set,
/// the framing is close-delimited or a `Connection` field among `fields`
/// lists `close` (`connection: upgrade` instead for a `101` whose
/// `Connection` field lists `upgrade`, RFC 9110 §7.8), and the empty line.
///
/// The framing and connection fields are owned by this function: any
/// `Content-Length`, `Transfer-Encoding` or `Connection` among `fields` is
/// not copied, so they are never duplicated or contradicted. A server
/// connection writes its heads through [`Exchange::write_head`](super::Exchange::write_head),
/// which also decides the framing.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::response::{write_response_head, ResponseHead};
/// use ringstream_core::h1::ResponseFraming;
/// use ringstream_core::SliceBuf;
///
/// let mut tx = [0u8; 128];
/// let mut out = SliceBuf::new(&mut tx);
/// let head = ResponseHead::new(200).date(b"Sun, 06 Nov 1994 08:49:37 GMT");
/// let fields = [(&b"content-type"[..], &b"text/plain"[..])];
/// write_response_head(&mut out, &head, fields, ResponseFraming::Length(5), false).unwrap();
/// assert_eq!(
///     out.written(),
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
/// the status is not a three-digit code ([`Error::InvalidStatus`]), the
/// reason holds a control character, a field name is not a token
/// ([`Error::InvalidFieldName`]), a field value, `date` or `server` holds
/// CR, LF, NUL or another control character ([`Error::InvalidFieldValue`]),
/// or the head does not fit in `out` ([`Error::OutOfSpace`], only from a
/// buffer of fixed size).
pub fn write_response_head<'a, I, O>(
    out: &mut O,
    head: &ResponseHead<'_>,
    fields: I,
    framing: ResponseFraming,
    close: bool,
) -> Result<(), Error>
where
    I: IntoIterator<Item = (&'a [u8], &'a [u8])>,
    O: WriteBuf + ?Sized,
{
    write_head_with(out, head, fields, |seen| {
        let close = close || seen.close || framing.requires_close();
        let connection: &[u8] = if head.status == 101 && seen.upgrade {
            b"upgrade"
        } else if close {
            b"close"
        } else {
            b""
        };
        (framing, connection)
    })
}

/// Writes a head whose framing and `Connection` value (empty: none) are
/// decided by `decide` once the caller's fields have been seen; on an error
/// `out` is rewound to where it was.
pub(crate) fn write_head_with<'a, I, D, O>(
    out: &mut O,
    head: &ResponseHead<'_>,
    fields: I,
    decide: D,
) -> Result<(), Error>
where
    I: IntoIterator<Item = (&'a [u8], &'a [u8])>,
    D: FnOnce(&ResponseFields) -> (ResponseFraming, &'static [u8]),
    O: WriteBuf + ?Sized,
{
    let start = out.mark();
    let result = write_head_inner(out, head, fields, decide);
    if result.is_err() {
        out.rewind(start);
    }
    result
}

fn write_head_inner<'a, I, D, O>(
    out: &mut O,
    head: &ResponseHead<'_>,
    fields: I,
    decide: D,
) -> Result<(), Error>
where
    I: IntoIterator<Item = (&'a [u8], &'a [u8])>,
    D: FnOnce(&ResponseFields) -> (ResponseFraming, &'static [u8]),
    O: WriteBuf + ?Sized,
{
    write_status_line(out, head)?;
    if let Some(own) = head.server_fields {
        out.put(own.as_bytes())?;
    }
    if !head.date.is_empty() {
        write_own_field(out, b"date: ", head.date)?;
    }
    if let Some(server) = head.server {
        write_own_field(out, b"server: ", server)?;
    }
    let mut seen = ResponseFields::default();
    for (name, value) in fields {
        if !seen.note(name, value) {
            write_field(out, name, value)?;
        }
    }
    let (framing, connection) = decide(&seen);
    // The blank line that ends the head joins the last field line: most
    // heads end with their framing field, written in one piece with it.
    let ends_here = connection.is_empty();
    match framing {
        ResponseFraming::NoBody {
            content_length: Some(n),
        }
        | ResponseFraming::Length(n) => write_length_line(out, n, ends_here)?,
        ResponseFraming::Chunked if ends_here => out.put(b"transfer-encoding: chunked\r\n\r\n")?,
        ResponseFraming::Chunked => out.put(b"transfer-encoding: chunked\r\n")?,
        ResponseFraming::NoBody {
            content_length: None,
        }
        | ResponseFraming::CloseDelimited => {
            if ends_here {
                out.put(CRLF)?;
            }
        }
    }
    if !ends_here {
        out.put(b"connection: ")?;
        out.put(connection)?;
        out.put(b"\r\n\r\n")?;
    }
    Ok(())
}

/// `HTTP/1.x ddd reason\r\n`: one copy for the common statuses.
#[inline]
fn write_status_line<O>(out: &mut O, head: &ResponseHead<'_>) -> Result<(), Error>
where
    O: WriteBuf + ?Sized,
{
    if head.reason.is_none() && head.version == Version::Http11 {
        if let Some(line) = common_status_line(head.status) {
            out.put(line)?;
            return Ok(());
        }
    }
    write_any_status_line(out, head)
}

/// [`write_status_line`] for any status, version and reason.
#[inline(never)]
fn write_any_status_line<O>(out: &mut O, head: &ResponseHead<'_>) -> Result<(), Error>
where
    O: WriteBuf + ?Sized,
{
    let status = head.status;
    if !(100..=999).contains(&status) {
        return Err(Error::InvalidStatus);
    }
    // The standard phrases are known to be clean; only a caller's is checked.
    let reason = match head.reason {
        Some(reason) if !reason.bytes().all(|b| is_ws(b) || is_field_vchar(b)) => {
            return Err(Error::InvalidFieldValue);
        }
        Some(reason) => reason,
        None => reason_phrase(status),
    };
    // `HTTP/1.x ddd ` in one piece: the status has three digits.
    let mut line = [0u8; 13];
    line[..8].copy_from_slice(head.version.as_str().as_bytes());
    line[8] = b' ';
    line[9] = b'0' + (status / 100) as u8;
    line[10] = b'0' + (status / 10 % 10) as u8;
    line[11] = b'0' + (status % 10) as u8;
    line[12] = b' ';
    out.put(&line)?;
    out.put(reason.as_bytes())?;
    out.put(CRLF)?;
    Ok(())
}

/// The whole `HTTP/1.1` status line, canonical reason included, of the
/// statuses most responses have: written with one copy.
#[inline]
fn common_status_line(status: u16) -> Option<&'static [u8]> {
    Some(match status {
        200 => b"HTTP/1.1 200 OK\r\n",
        204 => b"HTTP/1.1 204 No Content\r\n",
        206 => b"HTTP/1.1 206 Partial Content\r\n",
        301 => b"HTTP/1.1 301 Moved Permanently\r\n",
        302 => b"HTTP/1.1 302 Found\r\n",
        304 => b"HTTP/1.1 304 Not Modified\r\n",
        400 => b"HTTP/1.1 400 Bad Request\r\n",
        404 => b"HTTP/1.1 404 Not Found\r\n",
        _ => return None,
    })
}

/// Writes a complete error response to `out`: `status` with its reason as
/// a plain-text body and `connection: close`. A server answers a request it
/// cannot serve with it, then closes. A status that is not three digits
/// becomes 500.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::response::write_error_response;
/// use ringstream_core::SliceBuf;
///
/// let mut tx = [0u8; 256];
/// let mut out = SliceBuf::new(&mut tx);
/// write_error_response(&mut out, 400, b"")?;
/// assert_eq!(
///     out.written(),
///     b"HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\n\
///       content-length: 12\r\nconnection: close\r\n\r\nBad Request\n"
/// );
/// # Ok::<(), ringstream_core::Error>(())
/// ```
///
/// # Errors
///
/// Nothing is written (`out` is left as it was) and an error is returned if
/// `date` is not a field value ([`Error::InvalidFieldValue`]) or the
/// response does not fit in `out` ([`Error::OutOfSpace`], only from a buffer
/// of fixed size).
pub fn write_error_response<O>(out: &mut O, status: u16, date: &[u8]) -> Result<(), Error>
where
    O: WriteBuf + ?Sized,
{
    write_error_response_with(out, status, &[], date)
}

/// Writes the answer of a server that has no room for a new connection:
/// `503 Service Unavailable` with `Retry-After: retry_after` (seconds,
/// RFC 9110 §10.2.3) and `connection: close`.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::response::write_unavailable_response;
/// use ringstream_core::SliceBuf;
///
/// let mut tx = [0u8; 256];
/// let mut out = SliceBuf::new(&mut tx);
/// write_unavailable_response(&mut out, 1, b"")?;
/// let text = std::str::from_utf8(out.written()).unwrap();
/// assert!(text.starts_with("HTTP/1.1 503 Service Unavailable\r\n"));
/// assert!(text.contains("\r\nretry-after: 1\r\n"));
/// assert!(text.contains("\r\nconnection: close\r\n"));
/// # Ok::<(), ringstream_core::Error>(())
/// ```
///
/// # Errors
///
/// Those of [`write_error_response`]; `out` is left as it was.
pub fn write_unavailable_response<O>(
    out: &mut O,
    retry_after: u32,
    date: &[u8],
) -> Result<(), Error>
where
    O: WriteBuf + ?Sized,
{
    let mut digits = [0u8; 10];
    let mut at = digits.len();
    let mut n = retry_after;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    write_error_response_with(out, 503, &[(b"retry-after", &digits[at..])], date)
}

/// [`write_error_response`] with more fields after `content-type`.
fn write_error_response_with<O>(
    out: &mut O,
    status: u16,
    extra: &[(&[u8], &[u8])],
    date: &[u8],
) -> Result<(), Error>
where
    O: WriteBuf + ?Sized,
{
    let status = if (100..=999).contains(&status) {
        status
    } else {
        500
    };
    let reason = match reason_phrase(status) {
        "" => "Error",
        reason => reason,
    };
    let head = ResponseHead::new(status).date(date);
    let fields = core::iter::once((&b"content-type"[..], &b"text/plain; charset=utf-8"[..]))
        .chain(extra.iter().copied());
    let framing = ResponseFraming::Length(reason.len() as u64 + 1);
    let start = out.mark();
    write_response_head(out, &head, fields, framing, true)?;
    let body = out.put(reason.as_bytes()).and_then(|()| out.put(b"\n"));
    if body.is_err() {
        out.rewind(start);
    }
    Ok(body?)
}

/// Writes one of the head's own fields, `Date` or `Server`: `prefix` is
/// its name and `": "`, known good, so only the value is checked.
#[inline]
fn write_own_field<O>(out: &mut O, prefix: &'static [u8], value: &[u8]) -> Result<(), Error>
where
    O: WriteBuf + ?Sized,
{
    if !is_clean_value(value) {
        return Err(Error::InvalidFieldValue);
    }
    out.put(prefix)?;
    out.put(value)?;
    out.put(CRLF)?;
    Ok(())
}

/// Writes `name: value\r\n` after validating both.
fn write_field<O>(out: &mut O, name: &[u8], value: &[u8]) -> Result<(), Error>
where
    O: WriteBuf + ?Sized,
{
    check_field(name, value, Error::InvalidFieldValue)?;
    out.put(name)?;
    out.put(b": ")?;
    out.put(value)?;
    out.put(CRLF)?;
    Ok(())
}

/// Checks a field name is a token and a value is `field-value` (RFC 9110
/// §5.5) without surrounding whitespace; `value_error` is returned for a bad
/// value.
pub(crate) fn check_field(name: &[u8], value: &[u8], value_error: Error) -> Result<(), Error> {
    if !is_token(name) {
        return Err(Error::InvalidFieldName);
    }
    if is_clean_value(value) {
        Ok(())
    } else {
        Err(value_error)
    }
}

/// Whether `value` is a `field-value` (RFC 9110 §5.5) without surrounding
/// whitespace.
#[inline]
fn is_clean_value(value: &[u8]) -> bool {
    is_field_value(value)
        && !value.first().is_some_and(|&b| is_ws(b))
        && !value.last().is_some_and(|&b| is_ws(b))
}

/// The canonical reason phrase of a status code (RFC 9110 §15), or `""` for
/// an unregistered code.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::response::reason_phrase;
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

/// `content-length: n\r\n`, with the blank line that ends the head when
/// `ends_head`, written in one piece.
#[inline]
fn write_length_line<O>(out: &mut O, n: u64, ends_head: bool) -> Result<(), OutOfSpace>
where
    O: WriteBuf + ?Sized,
{
    const NAME: &[u8; 16] = b"content-length: ";
    const DIGITS: usize = 20;
    // The name, right before the digits (wherever they start), the digits
    // ending at `NAME.len() + DIGITS`, then CRLF CRLF.
    let mut line = [0u8; NAME.len() + DIGITS + 4];
    let end = NAME.len() + DIGITS;
    line[end..].copy_from_slice(b"\r\n\r\n");
    let start = write_digits(&mut line[..end], n);
    let from = start - NAME.len();
    line[from..start].copy_from_slice(NAME);
    let to = if ends_head { end + 4 } else { end + 2 };
    out.put(&line[from..to])
}

/// Writes `n` in decimal at the end of `buf` (at least 20 bytes long) and
/// returns where its digits start.
#[inline]
fn write_digits(buf: &mut [u8], mut n: u64) -> usize {
    /// "00" to "99".
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859\
        6061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899";
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
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::out::SliceBuf;

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
    fn common_status_lines_match_the_general_form() {
        let mut storage = [0u8; 64];
        for status in 100..=999u16 {
            let Some(line) = common_status_line(status) else {
                continue;
            };
            let general = alloc::format!("HTTP/1.1 {status} {}\r\n", reason_phrase(status));
            assert_eq!(line, general.as_bytes(), "{status}");
            let mut out = SliceBuf::new(&mut storage);
            write_status_line(&mut out, &ResponseHead::new(status)).unwrap();
            assert_eq!(out.written(), general.as_bytes());
        }
        // A caller's reason, or HTTP/1.0, takes the general path.
        let mut out = SliceBuf::new(&mut storage);
        write_status_line(&mut out, &ResponseHead::new(200).reason("Fine")).unwrap();
        assert_eq!(out.written(), b"HTTP/1.1 200 Fine\r\n");
        out.clear();
        let head = ResponseHead::new(200).version(Version::Http10);
        write_status_line(&mut out, &head).unwrap();
        assert_eq!(out.written(), b"HTTP/1.0 200 OK\r\n");
    }

    #[test]
    fn the_length_line_formats_extremes() {
        let mut storage = [0u8; 80];
        let mut out = SliceBuf::new(&mut storage);
        write_length_line(&mut out, 0, false).unwrap();
        write_length_line(&mut out, u64::MAX, true).unwrap();
        assert_eq!(
            out.written(),
            b"content-length: 0\r\ncontent-length: 18446744073709551615\r\n\r\n"
        );
        // All or nothing: 19 bytes do not fit in 18.
        let mut storage = [0u8; 18];
        let mut out = SliceBuf::new(&mut storage);
        assert_eq!(write_length_line(&mut out, 1, false), Err(OutOfSpace));
        assert_eq!(out.written(), b"");
    }

    #[test]
    fn the_length_line_matches_display() {
        let mut n = 1u64;
        let mut values = alloc::vec![0u64, 9, 10, 99, 100, 101, 999, 1000, 40960, u64::MAX];
        while let Some(next) = n.checked_mul(7) {
            values.extend([n - 1, n, n + 1]);
            n = next;
        }
        let mut storage = [0u8; 48];
        for v in values {
            for ends_head in [false, true] {
                let mut out = SliceBuf::new(&mut storage);
                write_length_line(&mut out, v, ends_head).unwrap();
                let end = if ends_head { "\r\n\r\n" } else { "\r\n" };
                let expected = alloc::format!("content-length: {v}{end}");
                assert_eq!(out.written(), expected.as_bytes(), "{v}");
            }
        }
    }
}

/// What a response's own fields say about framing and the connection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ResponseFields {
    /// A `Connection` field lists `close`.
    pub(crate) close: bool,
    /// A `Connection` field lists `upgrade`.
    pub(crate) upgrade: bool,
    /// The value of the first `Content-Length` field, if it is valid.
    pub(crate) content_length: Option<u64>,
    /// A `Content-Length` field was seen (later ones are ignored).
    length_seen: bool,
}

impl ResponseFields {
    /// Takes note of one field the head writer skipped; `true` if it is a
    /// framing or connection field (which the writer must not copy).
    #[inline]
    pub(crate) fn note(&mut self, name: &[u8], value: &[u8]) -> bool {
        match name.len() {
            10 if name.eq_ignore_ascii_case(b"connection") => {
                for token in list(value) {
                    self.close |= token.eq_ignore_ascii_case(b"close");
                    self.upgrade |= token.eq_ignore_ascii_case(b"upgrade");
                }
                true
            }
            14 if name.eq_ignore_ascii_case(b"content-length") => {
                if !self.length_seen {
                    self.length_seen = true;
                    self.content_length = parse_decimal(value);
                }
                true
            }
            17 => name.eq_ignore_ascii_case(b"transfer-encoding"),
            _ => false,
        }
    }
}
