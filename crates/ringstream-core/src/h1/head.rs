//! Strict HTTP/1.1 request-head parsing (RFC 9112, RFC 9110).
//!
//! [`HeadParser`] is given the bytes received so far on a connection and
//! answers one of three things:
//!
//! - `Ok(None)`: the head is not complete yet; call again with the same
//!   buffer once more bytes have been appended to it;
//! - `Ok(Some(head))`: a valid [`RequestHead`], its fields written into the
//!   caller's slice, and the body framing decided;
//! - `Err(error)`: the head is invalid; [`Error::status`] is the status code
//!   to answer with before closing the connection.
//!
//! # How strict
//!
//! The bytes are first scanned for the end of the head, line by line, and
//! each line is validated as soon as its CRLF arrives, so garbage is
//! rejected early; a field line's field is taken as it is validated. A line
//! already complete when first looked at, of the usual shapes (a method
//! and origin-form target, `HTTP/1.1` or `HTTP/1.0`; a token, a colon and
//! a value), is validated and split in one pass; any other line goes
//! through a general scan that judges it by the same rules. Once the head
//! is complete, the fields of lines validated by earlier calls are split
//! again (one pass over bytes already known to be well formed) and the
//! fields are interpreted. The choices made where the RFCs allow more
//! than one behaviour:
//!
//! - **Line endings** (RFC 9112 §2.2): only CRLF ends a line. A bare CR is
//!   [`Error::BareCr`]; a bare LF is [`Error::MalformedHead`]. The RFC lets a
//!   recipient accept a bare LF, but an intermediary that disagrees about
//!   where a line ends is a request-smuggling vector, so ringstream refuses.
//! - **Empty lines before the request line** (RFC 9112 §2.2) are skipped;
//!   they count towards [`RequestHead::head_len`] and the head-size limit.
//! - **Method** (RFC 9112 §3, RFC 9110 §9.1): after any empty lines, every
//!   byte up to the first SP must be a tchar, and each is checked as it
//!   arrives: a byte that cannot start a request (NUL, 0xFF, the `0x16` of
//!   a TLS handshake sent to a plain-text port, a space) is
//!   [`Error::InvalidMethod`] at once, without waiting for a line end or
//!   for the head timeout. A method longer than [`Limits::max_method_len`]
//!   is longer than any the server implements: [`Error::MethodTooLong`]
//!   (501, as RFC 9112 §3 recommends), as soon as its first byte over the
//!   limit arrives, rather than [`Error::HeadTooLarge`] once the whole head
//!   limit is used up.
//! - **Whitespace** before the first field is
//!   [`Error::WhitespaceBeforeFirstField`], a later line starting with
//!   whitespace (obs-fold) is [`Error::ObsFold`], whitespace between a field
//!   name and its colon is [`Error::WhitespaceBeforeColon`].
//! - **Field values** may hold HTAB, SP, visible ASCII and obs-text
//!   (0x80–0xFF); any other control byte (NUL, DEL, ...) is
//!   [`Error::InvalidFieldValue`]. Whitespace around a value is not part of
//!   it (RFC 9110 §5.5), so `Content-Length:  5 ` means 5.
//! - **Request-target** (RFC 9112 §3.2): only RFC 3986 characters are
//!   allowed (a `%` must start a `%XX` escape); a fragment (`#`) is refused.
//!   Origin-form for every method but `CONNECT`; absolute-form with the
//!   `http` or `https` scheme (any case), no userinfo and a non-empty host;
//!   authority-form (`host:port`) only for `CONNECT`; asterisk-form only for
//!   `OPTIONS`. Anything else is [`Error::InvalidTarget`].
//! - **Version** (RFC 9112 §2.3): `HTTP/1.0` and `HTTP/1.1`. Another
//!   well-formed `HTTP/d.d` is [`Error::UnsupportedVersion`] (505), anything
//!   else [`Error::MalformedHead`].
//! - **Host** (RFC 9112 §3.2, RFC 9110 §7.2): exactly one on HTTP/1.1, at most
//!   one on HTTP/1.0; its value is `uri-host[:port]` with a non-empty host
//!   and a port of at most 65535, else [`Error::InvalidHost`]. An empty
//!   value, which a client sends only for a target without an authority, is
//!   [`Error::InvalidHost`] on HTTP/1.1: every target ringstream accepts has
//!   an authority, and an origin-form or asterisk-form target has none but
//!   the one `Host` carries. On HTTP/1.0, where `Host` may be left out, an
//!   empty value is taken like a missing one. For an absolute-form target
//!   the target's authority is the one that counts and `Host` is not
//!   compared with it.
//! - **Body framing** (RFC 9112 §6.3): see [`RequestHead::framing`]. A
//!   request carrying both `Content-Length` and `Transfer-Encoding` is
//!   rejected ([`Error::ContentLengthWithTransferEncoding`]) rather than
//!   having `Content-Length` ignored as §6.3 permits: the two headers
//!   disagreeing between an intermediary and the server is the classic
//!   request-smuggling attack, and no honest client sends both. Empty list
//!   elements in `Content-Length` and `Transfer-Encoding` are refused for the
//!   same reason.
//!
//! # Order of errors
//!
//! Errors are reported line by line, in the order of the lines, and the
//! answer does not depend on how the bytes were split between calls. A
//! line is judged once its end arrives: a bare CR or LF ends it (and is the
//! error) before the line's own content is judged, except in the request
//! line, whose method bytes and target length are checked as their bytes
//! arrive (so an invalid method or an overlong target is reported even when
//! a bad line end follows, or before any line end has arrived). Within the
//! request line the checks run method bytes (in order, each either not a
//! tchar, [`Error::InvalidMethod`], or one past the method limit,
//! [`Error::MethodTooLong`]), the SP after the method, target length,
//! version, target form. The fields are then interpreted in
//! order (`Host` and `Content-Length` values), after which come the missing
//! `Host`, `Transfer-Encoding` on HTTP/1.0, both `Content-Length` and
//! `Transfer-Encoding`, the transfer codings, and last a `Content-Length`
//! above [`Limits::max_body_len`] ([`Error::BodyTooLarge`], 413): a body too
//! large to accept is refused with its head, before any of it is read.

use super::{is_field_value, is_tchar_byte, is_token, BodyFraming, Version, TCHAR};
use crate::{Error, Limits};

/// The most fields a head may carry, whatever [`Limits::max_fields`] says:
/// a larger `max_fields` is clamped to this count (fields, not bytes).
///
/// Parsing allocates nothing: the fields are written into the caller's
/// storage.
pub const MAX_FIELDS: usize = 128;

/// One field line of a request head: a name and its value.
///
/// Both borrow from the buffer that was parsed. The name is a token (so
/// ASCII); the value has its surrounding whitespace removed and holds no
/// CR, LF, NUL or other control byte except HTAB, but it may hold obs-text
/// (bytes 0x80–0xFF), hence `&[u8]`.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::Field;
///
/// let mut fields = [Field::EMPTY; 16];
/// assert_eq!(fields[0].name, "");
/// fields[0] = Field { name: "Host", value: b"example.com" };
/// assert_eq!(fields[0].value, b"example.com");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Field<'b> {
    /// The field name, as sent (compare it case-insensitively).
    pub name: &'b str,
    /// The field value, without leading or trailing whitespace.
    pub value: &'b [u8],
}

impl Field<'_> {
    /// An empty field, to fill the storage passed to [`HeadParser::parse`].
    pub const EMPTY: Self = Field {
        name: "",
        value: b"",
    };
}

/// The form of a request-target (RFC 9112 §3.2).
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::{Field, HeadParser, TargetForm};
/// use ringstream_core::Limits;
///
/// let mut parser = HeadParser::new(Limits::DEFAULT);
/// let mut fields = [Field::EMPTY; 8];
/// let head = parser
///     .parse(b"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", &mut fields)?
///     .expect("complete head");
/// assert_eq!(head.target_form, TargetForm::Asterisk);
/// # Ok::<(), ringstream_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TargetForm {
    /// `/path?query`: the usual form, for any method but `CONNECT`.
    Origin,
    /// `http://host[:port]/path?query` or the same with `https`.
    Absolute,
    /// `host:port`, only with `CONNECT`.
    Authority,
    /// `*`, only with `OPTIONS`.
    Asterisk,
}

/// A validated request head.
///
/// Everything borrows from the parsed buffer; the fields themselves are in
/// the slice given to [`HeadParser::parse`], `&fields[..field_count]`.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::{BodyFraming, Field, HeadParser, Version};
/// use ringstream_core::Limits;
///
/// let buf = b"POST /upload HTTP/1.1\r\nHost: example.com\r\nContent-Length: 5\r\n\r\nhello";
/// let mut parser = HeadParser::new(Limits::DEFAULT);
/// let mut fields = [Field::EMPTY; 16];
/// let head = parser.parse(buf, &mut fields)?.expect("complete head");
///
/// assert_eq!(head.method, "POST");
/// assert_eq!(head.target, "/upload");
/// assert_eq!(head.version, Version::Http11);
/// assert_eq!(head.framing, BodyFraming::Length(5));
/// assert!(head.keep_alive);
/// assert_eq!(&buf[head.head_len..], b"hello");
/// assert_eq!(head.field(&fields, "host"), Some(&b"example.com"[..]));
/// # Ok::<(), ringstream_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestHead<'b> {
    /// The method, a token, case-sensitive (`GET`, `POST`, ...).
    pub method: &'b str,
    /// The request-target exactly as sent.
    pub target: &'b str,
    /// Which of the four forms the target has.
    pub target_form: TargetForm,
    /// HTTP/1.0 or HTTP/1.1.
    pub version: Version,
    /// How many fields were written to the caller's slice.
    pub field_count: usize,
    /// How the body is delimited (RFC 9112 §6.3): `Chunked` when
    /// `Transfer-Encoding` ends in `chunked`, `Length(n)` from
    /// `Content-Length`, otherwise `None` (a request without either has no
    /// body).
    pub framing: BodyFraming,
    /// Whether the connection may carry another request after this one
    /// (RFC 9112 §9.3): on HTTP/1.1 unless `Connection` lists `close`; on
    /// HTTP/1.0 only if `Connection` lists `keep-alive` and not `close`.
    pub keep_alive: bool,
    /// Whether an HTTP/1.1 request carries `Expect: 100-continue`
    /// (RFC 9110 §10.1.1; ignored on HTTP/1.0). Any other expectation is left
    /// to the caller, in the fields.
    pub expect_continue: bool,
    /// Whether an HTTP/1.1 request asks to switch protocols (RFC 9110
    /// §7.8): it carries an `Upgrade` field and `Connection` lists
    /// `upgrade`. The protocols asked for are left to the caller, in the
    /// fields.
    pub upgrade: bool,
    /// Length of the head in bytes, up to and including the final CRLF CRLF;
    /// the body (if any) starts at this offset of the buffer.
    pub head_len: usize,
}

impl<'b> RequestHead<'b> {
    /// The fields of this head, out of the slice given to
    /// [`HeadParser::parse`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{Field, HeadParser};
    /// use ringstream_core::Limits;
    ///
    /// let mut fields = [Field::EMPTY; 8];
    /// let head = HeadParser::new(Limits::DEFAULT)
    ///     .parse(b"GET / HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n\r\n", &mut fields)?
    ///     .expect("complete head");
    /// let names: Vec<&str> = head.fields(&fields).iter().map(|f| f.name).collect();
    /// assert_eq!(names, ["Host", "Accept"]);
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    pub fn fields<'f>(&self, fields: &'f [Field<'b>]) -> &'f [Field<'b>] {
        fields.get(..self.field_count).unwrap_or(fields)
    }

    /// The value of the first field called `name` (compared
    /// case-insensitively), if any.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{Field, HeadParser};
    /// use ringstream_core::Limits;
    ///
    /// let mut fields = [Field::EMPTY; 8];
    /// let head = HeadParser::new(Limits::DEFAULT)
    ///     .parse(b"GET / HTTP/1.1\r\nHost: a\r\nX-Id: 7\r\n\r\n", &mut fields)?
    ///     .expect("complete head");
    /// assert_eq!(head.field(&fields, "x-id"), Some(&b"7"[..]));
    /// assert_eq!(head.field(&fields, "cookie"), None);
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    pub fn field(&self, fields: &[Field<'b>], name: &str) -> Option<&'b [u8]> {
        self.fields(fields)
            .iter()
            .find(|f| f.name.eq_ignore_ascii_case(name))
            .map(|f| f.value)
    }
}

/// Incremental, strict parser of HTTP/1.1 request heads.
///
/// Feed it the buffer of bytes received so far; when it answers `Ok(None)`,
/// append more bytes to the same buffer and call again. It remembers how far
/// it has scanned, so a head that arrives one byte at a time costs O(n) in
/// total. Once it has answered an error it keeps answering that error until
/// [`reset`](HeadParser::reset); once it has answered a head, a new call
/// with the same buffer answers the same head.
///
/// The buffer passed must start with the head and keep its earlier bytes
/// from call to call, and `fields` should be the same storage each time.
/// Passing a shorter buffer restarts the scan. Changing bytes already
/// scanned is a logic error: the answers are then unspecified (release
/// builds never panic; debug builds may stop on a debug assertion).
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::{Field, HeadParser};
/// use ringstream_core::Limits;
///
/// let wire = b"GET /index.html HTTP/1.1\r\nHost: example.com\r\n\r\n";
/// let mut parser = HeadParser::new(Limits::DEFAULT);
/// let mut fields = [Field::EMPTY; 32];
///
/// // Bytes trickle in: "need more" is an ordinary answer.
/// assert_eq!(parser.parse(&wire[..20], &mut fields)?, None);
/// let head = parser.parse(&wire[..], &mut fields)?.expect("complete head");
/// assert_eq!(head.target, "/index.html");
/// assert_eq!(head.head_len, wire.len());
///
/// // Before the next request on the same connection:
/// parser.reset();
/// # Ok::<(), ringstream_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct HeadParser {
    limits: Limits,
    scan: Scan,
}

/// How far the end-of-head scan has got, carried from call to call.
#[derive(Debug, Clone, Copy)]
struct Scan {
    /// Next byte to examine.
    pos: usize,
    /// Start of the line being scanned.
    line_start: usize,
    /// Method and target of the validated request line, as (start, end)
    /// offsets, and where the field lines start.
    method: (usize, usize),
    target: (usize, usize),
    fields_start: usize,
    /// The request line has been seen and validated.
    request_line_done: bool,
    /// Offset of the first SP of the request line, once seen.
    first_sp: Option<usize>,
    /// The SP ending the request-target has been seen.
    target_done: bool,
    /// Field lines seen so far.
    field_lines: usize,
    /// Version of the validated request line.
    version: Version,
    /// Target form of the validated request line.
    form: TargetForm,
    /// The final answer once known: the head length, or the error.
    outcome: Option<Result<usize, Error>>,
}

impl Scan {
    const START: Scan = Scan {
        pos: 0,
        line_start: 0,
        method: (0, 0),
        target: (0, 0),
        fields_start: 0,
        request_line_done: false,
        first_sp: None,
        target_done: false,
        field_lines: 0,
        version: Version::Http11,
        form: TargetForm::Origin,
        outcome: None,
    };

    /// Takes the request line validated at `line_start`, whose field lines
    /// start at `fields_start`.
    fn set_request_line(&mut self, rl: &RequestLine, line_start: usize, fields_start: usize) {
        self.version = rl.version;
        self.form = rl.form;
        self.method = (line_start, line_start + rl.method_len);
        self.target = (self.method.1 + 1, self.method.1 + 1 + rl.target_len);
        self.fields_start = fields_start;
        self.request_line_done = true;
    }
}

impl HeadParser {
    /// A parser enforcing `limits` (`max_head_len`, `max_fields` clamped to
    /// [`MAX_FIELDS`], `max_target_len`, `max_method_len`, and
    /// `max_body_len` against `Content-Length`).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::HeadParser;
    /// use ringstream_core::Limits;
    ///
    /// let parser = HeadParser::new(Limits { max_head_len: 4096, ..Limits::DEFAULT });
    /// assert_eq!(parser.limits().max_head_len, 4096);
    /// ```
    pub const fn new(limits: Limits) -> Self {
        HeadParser {
            limits,
            scan: Scan::START,
        }
    }

    /// The limits this parser enforces.
    pub const fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Forgets the current head, before parsing the next request on the
    /// connection (whose bytes then start at offset 0 of the buffer passed).
    pub fn reset(&mut self) {
        self.scan = Scan::START;
    }

    /// Parses the request head at the start of `buf`.
    ///
    /// Returns `Ok(None)` when `buf` holds only part of a head: call again
    /// with the same buffer once it has grown. On success the fields are
    /// written to `fields[..head.field_count]`; the body starts at
    /// `buf[head.head_len..]`.
    ///
    /// `fields` is the caller's storage. A head with more fields than
    /// [`Limits::max_fields`] or [`MAX_FIELDS`] is rejected with
    /// [`Error::TooManyFields`]. A head within those limits whose fields do
    /// not fit in `fields` gets the same error, but the parser keeps its
    /// place: call again with at least [`field_lines`](Self::field_lines)
    /// entries (so a caller can start with a small array and fall back to a
    /// larger one). Parsing allocates nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{BodyFraming, Field, HeadParser};
    /// use ringstream_core::{Error, Limits};
    ///
    /// let mut parser = HeadParser::new(Limits::DEFAULT);
    /// let mut fields = [Field::EMPTY; 16];
    /// let head = parser
    ///     .parse(b"PUT /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", &mut fields)?
    ///     .expect("complete head");
    /// assert_eq!(head.framing, BodyFraming::Chunked);
    ///
    /// parser.reset();
    /// let err = parser.parse(b"GET / HTTP/1.1\r\n\r\n", &mut fields).unwrap_err();
    /// assert_eq!(err, Error::MissingHost);
    /// assert_eq!(err.status(), 400);
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Any [`Error`] of the request-line, field or body-framing groups; see
    /// the [module documentation](self) for the rules and their order. In
    /// particular [`Error::HeadTooLarge`] as soon as `buf` holds more than
    /// `max_head_len` bytes without a complete head, and
    /// [`Error::TargetTooLong`] as soon as the request-target grows past
    /// `max_target_len`, and [`Error::MethodTooLong`] as soon as the method
    /// grows past `max_method_len`, even before the head is complete.
    /// [`Error::TooManyFields`] is final when the head has more fields than
    /// the limits allow; when only `fields` is too short, the same call
    /// with more storage succeeds. [`Error::BodyTooLarge`] (413) for a
    /// complete, valid head whose `Content-Length` is above
    /// `max_body_len`.
    pub fn parse<'b>(
        &mut self,
        buf: &'b [u8],
        fields: &mut [Field<'b>],
    ) -> Result<Option<RequestHead<'b>>, Error> {
        let limit = self.limits.max_fields.min(MAX_FIELDS);
        // Fields whose lines this call validates are written to `fields` as
        // they are validated; those of lines validated by earlier calls (or
        // all of them, for an answer already known) are split again.
        let mut earlier_fields = self.scan.field_lines;
        let mut request_line_text = None;
        let head_len = match self.scan.outcome {
            Some(Err(e)) => return Err(e),
            Some(Ok(len)) if len <= buf.len() => len,
            _ => {
                if buf.len() < self.scan.pos {
                    self.scan = Scan::START;
                    earlier_fields = 0;
                }
                match self.advance(buf, limit, fields, &mut request_line_text) {
                    Ok(Some(len)) => {
                        self.scan.outcome = Some(Ok(len));
                        len
                    }
                    Ok(None) => return Ok(None),
                    Err(e) => return Err(self.fail(e)),
                }
            }
        };
        if self.scan.field_lines > fields.len() {
            // Within the limits but more than the caller's storage holds: not
            // remembered, so that a call with more storage succeeds.
            return Err(Error::TooManyFields);
        }
        match finish(
            buf,
            head_len,
            &self.scan,
            request_line_text,
            earlier_fields,
            fields,
            &self.limits,
        ) {
            Ok(head) => Ok(Some(head)),
            Err(e) => Err(self.fail(e)),
        }
    }

    /// The number of field lines of the head so far (of the whole head once
    /// [`parse`](Self::parse) has found its end): how much storage a call
    /// to `parse` needs.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{Field, HeadParser};
    /// use ringstream_core::{Error, Limits};
    ///
    /// let head = b"GET / HTTP/1.1\r\nHost: a\r\nAccept: */*\r\nX-A: 1\r\n\r\n";
    /// let mut parser = HeadParser::new(Limits::DEFAULT);
    /// let mut few = [Field::EMPTY; 2];
    /// assert_eq!(parser.parse(head, &mut few), Err(Error::TooManyFields));
    /// assert_eq!(parser.field_lines(), 3);
    /// let mut more = vec![Field::EMPTY; parser.field_lines()];
    /// let parsed = parser.parse(head, &mut more)?.expect("complete head");
    /// assert_eq!(parsed.field_count, 3);
    /// # Ok::<(), Error>(())
    /// ```
    pub const fn field_lines(&self) -> usize {
        self.scan.field_lines
    }

    fn fail(&mut self, e: Error) -> Error {
        self.scan.outcome = Some(Err(e));
        e
    }

    /// Continues the end-of-head scan; validates each line as its CRLF
    /// arrives, and writes the field of each field line validated to
    /// `fields` while there is room. Returns the head length once the
    /// empty line is found.
    ///
    /// A line looked at for the first time is first tried whole, in one
    /// pass, by [`whole_request_line`] or [`whole_field_line`], which
    /// recognize only complete, valid lines of the usual shapes; anything
    /// else (a line not complete yet, an unusual or invalid one) is left to
    /// the general scan below, from the start of the line, so the answers
    /// are the general scan's. Each line is tried whole at most once: a
    /// head arriving byte by byte still costs O(n).
    ///
    /// A request line recognized whole leaves its method and target, as
    /// text, in `request_line_text`.
    fn advance<'b>(
        &mut self,
        buf: &'b [u8],
        cap: usize,
        fields: &mut [Field<'b>],
        request_line_text: &mut Option<(&'b str, &'b str)>,
    ) -> Result<Option<usize>, Error> {
        let limit = buf.len().min(self.limits.max_head_len);
        let scanned = buf.get(..limit).unwrap_or_default();
        let s = &mut self.scan;
        let mut i = s.pos;
        while i < limit {
            if i == s.line_start {
                if !s.request_line_done {
                    if let Some(whole) = whole_request_line(scanned, i, &self.limits) {
                        let next = whole.cr + 2;
                        s.set_request_line(&whole.line, i, next);
                        *request_line_text = Some((whole.method, whole.target));
                        i = next;
                        s.line_start = i;
                    }
                }
                if s.request_line_done && i == s.line_start {
                    // Field lines, for as long as they come whole.
                    let mut count = s.field_lines;
                    let whole = loop {
                        if scanned.get(i..i + 2) == Some(b"\r\n") {
                            break Some(i + 2);
                        }
                        let Some((field, cr)) = whole_field_line(scanned, i) else {
                            break None;
                        };
                        if let Some(slot) = fields.get_mut(count) {
                            *slot = field;
                        }
                        count += 1;
                        i = cr + 2;
                        if count > cap {
                            break None;
                        }
                    };
                    s.field_lines = count;
                    s.line_start = i;
                    if count > cap {
                        return Err(Error::TooManyFields);
                    }
                    if let Some(len) = whole {
                        s.pos = len;
                        return Ok(Some(len));
                    }
                }
                if i >= limit {
                    break;
                }
            }
            match general_line(s, buf, i, limit, cap, fields, &self.limits)? {
                Line::Next(next) => {
                    i = next;
                    s.line_start = i;
                }
                Line::Head(len) => {
                    s.pos = len;
                    return Ok(Some(len));
                }
                Line::Wait(at) => {
                    i = at;
                    break;
                }
            }
        }
        s.pos = i;
        if buf.len() > self.limits.max_head_len {
            return Err(Error::HeadTooLarge);
        }
        Ok(None)
    }
}

/// Where the general scan of a line got to.
enum Line {
    /// The line was whole and valid; the next starts here.
    Next(usize),
    /// The line was the empty one ending the head, of this length.
    Head(usize),
    /// No line end yet (or only past the size limit): wait here for more.
    Wait(usize),
}

/// The general scan of the line at `buf[s.line_start..]`, from `i` on:
/// any line, whether complete or not, valid or not, in the request line
/// or the fields. Kept out of line: the usual lines, complete on arrival,
/// are taken by [`whole_request_line`] and [`whole_field_line`].
#[inline(never)]
fn general_line<'b>(
    s: &mut Scan,
    buf: &'b [u8],
    mut i: usize,
    limit: usize,
    cap: usize,
    fields: &mut [Field<'b>],
    limits: &Limits,
) -> Result<Line, Error> {
    // Only line ends matter until a line is whole, except in the request
    // line, where a bad method or an overlong target is caught as soon as
    // its bytes arrive.
    let rest = buf.get(i..limit).unwrap_or_default();
    let end = find_line_end(rest).map_or(limit, |off| i + off);
    if !s.request_line_done && !ends_in_crlf(buf, end, limit) {
        // The request line is not complete (or not well ended): check
        // what has arrived. A complete line is checked whole below, by the
        // same rules in the same order.
        track_request_line(s, buf, i, end, limits)?;
    }
    i = end;
    if i >= limit {
        return Ok(Line::Wait(i));
    }
    match buf.get(i) {
        Some(b'\r') => match buf.get(i + 1) {
            None => return Ok(Line::Wait(i)),
            // An LF past the size limit: the head is too large.
            Some(b'\n') if i + 1 >= limit => return Ok(Line::Wait(i)),
            Some(b'\n') => i += 1,
            Some(_) => return Err(Error::BareCr),
        },
        Some(b'\n') => return Err(Error::MalformedHead),
        _ => return Ok(Line::Wait(i)),
    }
    // buf[i] is the LF of a CRLF; the line is buf[line_start..i - 1].
    let line = buf.get(s.line_start..i - 1).unwrap_or_default();
    i += 1;
    if !s.request_line_done {
        if !line.is_empty() {
            let rl = request_line(line, limits)?;
            s.set_request_line(&rl, s.line_start, i);
        }
    } else if line.is_empty() {
        return Ok(Line::Head(i));
    } else {
        let colon = field_line(line, s.field_lines == 0)?;
        let index = s.field_lines;
        s.field_lines += 1;
        if s.field_lines > cap {
            return Err(Error::TooManyFields);
        }
        if let Some(slot) = fields.get_mut(index) {
            *slot = Field {
                name: ascii_str(line.get(..colon))?,
                value: trim_ows(line.get(colon + 1..).unwrap_or_default()),
            };
        }
    }
    Ok(Line::Next(i))
}

/// Whether `buf[end..]` starts with CRLF within the first `limit` bytes.
fn ends_in_crlf(buf: &[u8], end: usize, limit: usize) -> bool {
    end + 1 < limit && buf.get(end..end + 2) == Some(b"\r\n")
}

/// Checks the request-line bytes `buf[from..to]` (no CR or LF among them)
/// as they arrive: each method byte, the target length as it grows.
fn track_request_line(
    s: &mut Scan,
    buf: &[u8],
    from: usize,
    to: usize,
    limits: &Limits,
) -> Result<(), Error> {
    let mut k = from;
    let first_sp = match s.first_sp {
        Some(sp) => sp,
        None => {
            let seg = buf.get(from..to).unwrap_or_default();
            let sp = seg.iter().position(|&b| b == b' ');
            method_bytes(
                seg.get(..sp.unwrap_or(seg.len())).unwrap_or_default(),
                from.saturating_sub(s.line_start),
                limits.max_method_len,
            )?;
            let Some(off) = sp else {
                return Ok(());
            };
            let sp = from + off;
            if sp == s.line_start {
                return Err(Error::InvalidMethod);
            }
            s.first_sp = Some(sp);
            k = sp + 1;
            sp
        }
    };
    if !s.target_done {
        let seg = buf.get(k..to).unwrap_or_default();
        let target_end = match seg.iter().position(|&b| b == b' ') {
            Some(off) => {
                s.target_done = true;
                k + off
            }
            None => to,
        };
        if target_end - first_sp - 1 > limits.max_target_len {
            return Err(Error::TargetTooLong);
        }
    }
    Ok(())
}

/// Offset of the first CR or LF in `s`, looking at eight bytes at a time
/// (the last few one by one).
fn find_line_end(s: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const CR: u64 = LO * b'\r' as u64;
    const LF: u64 = LO * b'\n' as u64;
    let mut off = 0;
    for chunk in s.chunks_exact(8) {
        let Ok(word) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let w = u64::from_le_bytes(word);
        let (cr, lf) = (w ^ CR, w ^ LF);
        // The high bit of every byte of `cr` or `lf` that is zero (a byte
        // above a zero one may be flagged too, never one below it).
        let found = ((cr.wrapping_sub(LO) & !cr) | (lf.wrapping_sub(LO) & !lf)) & HI;
        if found != 0 {
            // The lowest flag is the first CR or LF (little-endian: byte 0
            // is the low one).
            return Some(off + (found.trailing_zeros() / 8) as usize);
        }
        off += 8;
    }
    let tail = s.get(off..)?;
    tail.iter()
        .position(|&b| b == b'\r' || b == b'\n')
        .map(|p| off + p)
}

/// Offset of the first control byte (below 0x20: HTAB, CR and LF among
/// them) or DEL in `s`, looking at eight bytes at a time (the last few one
/// by one).
#[inline(never)]
fn find_control(s: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let mut off = 0;
    for chunk in s.chunks_exact(8) {
        let Ok(word) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let w = u64::from_le_bytes(word);
        // With the high bits cleared, no sum below carries out of its
        // byte: x + 0x60 has the high bit set for x of 0x20 and more, and
        // x + 1 for x = 0x7f alone. So `found` has the high bit of exactly
        // the ASCII bytes below 0x20 or equal to 0x7f.
        let x = w & !HI;
        let found = (!(x + LO * 0x60) | (x + LO)) & !w & HI;
        if found != 0 {
            return Some(off + (found.trailing_zeros() / 8) as usize);
        }
        off += 8;
    }
    let tail = s.get(off..)?;
    tail.iter()
        .position(|&b| b < 0x20 || b == 0x7f)
        .map(|p| off + p)
}

/// A validated request line.
struct RequestLine {
    version: Version,
    form: TargetForm,
    method_len: usize,
    target_len: usize,
}

/// Checks bytes of a method, in order, the first being byte `at` of the
/// method (RFC 9110 §9.1, §5.6.2; RFC 9112 §3): each must be a tchar
/// ([`Error::InvalidMethod`]), and a tchar past `max_len` bytes is
/// [`Error::MethodTooLong`]. So a byte that cannot start or continue a
/// request line, or a method longer than any the server implements, is
/// refused on arrival rather than when its line ends.
#[inline]
fn method_bytes(bytes: &[u8], at: usize, max_len: usize) -> Result<(), Error> {
    let room = max_len.saturating_sub(at).min(bytes.len());
    let (within, over) = bytes.split_at(room);
    if !within.iter().all(|&b| is_tchar_byte(b)) {
        return Err(Error::InvalidMethod);
    }
    match over.first() {
        None => Ok(()),
        Some(&b) if is_tchar_byte(b) => Err(Error::MethodTooLong),
        Some(_) => Err(Error::InvalidMethod),
    }
}

/// Validates a whole request line (without its CRLF): `method SP target SP
/// version`, checked in that order. The method bytes are checked before
/// the SP ending the method is looked for, as [`track_request_line`] does
/// while the line arrives.
fn request_line(line: &[u8], limits: &Limits) -> Result<RequestLine, Error> {
    let sp1 = line.iter().position(|&b| b == b' ');
    let method = line.get(..sp1.unwrap_or(line.len())).unwrap_or_default();
    method_bytes(method, 0, limits.max_method_len)?;
    let sp1 = sp1.ok_or(Error::MalformedHead)?;
    if method.is_empty() {
        return Err(Error::InvalidMethod);
    }
    let rest = line.get(sp1 + 1..).unwrap_or_default();
    let sp2 = rest.iter().position(|&b| b == b' ');
    let target = rest.get(..sp2.unwrap_or(rest.len())).unwrap_or_default();
    if target.len() > limits.max_target_len {
        return Err(Error::TargetTooLong);
    }
    let sp2 = sp2.ok_or(Error::MalformedHead)?;
    let version = rest.get(sp2 + 1..).unwrap_or_default();
    let version = match version {
        b"HTTP/1.1" => Version::Http11,
        b"HTTP/1.0" => Version::Http10,
        [b'H', b'T', b'T', b'P', b'/', major, b'.', minor]
            if major.is_ascii_digit() && minor.is_ascii_digit() =>
        {
            return Err(Error::UnsupportedVersion)
        }
        _ => return Err(Error::MalformedHead),
    };
    if target.is_empty() {
        return Err(Error::MalformedHead);
    }
    let form = target_form(method, target)?;
    Ok(RequestLine {
        version,
        form,
        method_len: method.len(),
        target_len: target.len(),
    })
}

/// A request line recognized whole by [`whole_request_line`].
struct WholeRequestLine<'b> {
    line: RequestLine,
    method: &'b str,
    target: &'b str,
    /// Offset of the CR ending the line.
    cr: usize,
}

/// `HTTP/1.1` and `HTTP/1.0` as little-endian words, to compare eight
/// bytes at once.
const HTTP_11: u64 = u64::from_le_bytes(*b"HTTP/1.1");
const HTTP_10: u64 = u64::from_le_bytes(*b"HTTP/1.0");

/// A whole, valid request line of the usual shape at `head[start..]`: a
/// method other than `CONNECT` within the method limit, SP, an origin-form
/// target within the target limit, SP, `HTTP/1.1` or `HTTP/1.0`, CRLF, all
/// within `head`. `None` for any other line (or one not complete yet),
/// which the general scan and [`request_line`] then judge: the lines this
/// accepts are lines `request_line` accepts, with the same result.
#[inline]
fn whole_request_line<'b>(
    head: &'b [u8],
    start: usize,
    limits: &Limits,
) -> Option<WholeRequestLine<'b>> {
    let method = method_at(head, start);
    let method_end = start + method.len();
    if method.is_empty()
        || method.len() > limits.max_method_len
        || head.get(method_end) != Some(&b' ')
        || method == "CONNECT"
    {
        return None;
    }
    let target_start = method_end + 1;
    if head.get(target_start) != Some(&b'/') {
        return None;
    }
    let target = path_query(head, target_start);
    let target_end = target_start + target.len();
    if target.len() > limits.max_target_len || head.get(target_end) != Some(&b' ') {
        return None;
    }
    let at = target_end + 1;
    let word = u64::from_le_bytes(head.get(at..at + 8)?.try_into().ok()?);
    let version = if word == HTTP_11 {
        Version::Http11
    } else if word == HTTP_10 {
        Version::Http10
    } else {
        return None;
    };
    if head.get(at + 8..at + 10) != Some(b"\r\n") {
        return None;
    }
    Some(WholeRequestLine {
        line: RequestLine {
            version,
            form: TargetForm::Origin,
            method_len: method.len(),
            target_len: target.len(),
        },
        method,
        target,
        cr: at + 8,
    })
}

/// Decides the form of `target` and whether `method` may use it
/// (RFC 9112 §3.2).
fn target_form(method: &[u8], target: &[u8]) -> Result<TargetForm, Error> {
    let connect = method == b"CONNECT";
    let form = if target == b"*" {
        if method != b"OPTIONS" {
            return Err(Error::InvalidTarget);
        }
        TargetForm::Asterisk
    } else if target.first() == Some(&b'/') {
        if !is_path_query(target) {
            return Err(Error::InvalidTarget);
        }
        TargetForm::Origin
    } else if let Some(rest) = strip_scheme(target) {
        let end = rest
            .iter()
            .position(|&b| b == b'/' || b == b'?')
            .unwrap_or(rest.len());
        let authority = rest.get(..end).unwrap_or_default();
        let path = rest.get(end..).unwrap_or_default();
        if !is_host_port(authority, false) || !is_path_query(path) {
            return Err(Error::InvalidTarget);
        }
        TargetForm::Absolute
    } else if connect && is_host_port(target, true) {
        return Ok(TargetForm::Authority);
    } else {
        return Err(Error::InvalidTarget);
    };
    if connect {
        return Err(Error::InvalidTarget);
    }
    Ok(form)
}

/// The part of an absolute-form target after `http://` or `https://`
/// (scheme compared case-insensitively), if it has one of those schemes.
fn strip_scheme(target: &[u8]) -> Option<&[u8]> {
    for scheme in [&b"http://"[..], &b"https://"[..]] {
        if let Some(head) = target.get(..scheme.len()) {
            if head.eq_ignore_ascii_case(scheme) {
                return target.get(scheme.len()..);
            }
        }
    }
    None
}

/// Validates one field line (without its CRLF). `first` is the line right
/// after the request line. Returns the offset of the colon.
fn field_line(line: &[u8], first: bool) -> Result<usize, Error> {
    if let Some(b' ' | b'\t') = line.first() {
        return Err(if first {
            Error::WhitespaceBeforeFirstField
        } else {
            Error::ObsFold
        });
    }
    let colon = line
        .iter()
        .position(|&b| b == b':')
        .ok_or(Error::MalformedHead)?;
    let name = line.get(..colon).unwrap_or_default();
    let trimmed = trim_end_ows(name);
    if trimmed.len() < name.len() && is_token(trimmed) {
        return Err(Error::WhitespaceBeforeColon);
    }
    if !is_token(name) {
        return Err(Error::InvalidFieldName);
    }
    let value = line.get(colon + 1..).unwrap_or_default();
    if !is_field_value(value) {
        return Err(Error::InvalidFieldValue);
    }
    Ok(colon)
}

/// A whole, valid field line at `head[start..]`: a token, a colon, a field
/// value and CRLF, all within `head`. Returns the field (its value without
/// surrounding whitespace) and the offset of the CR; `None` for a line
/// that is not complete or not of that shape, which [`field_line`] then
/// judges once its end has arrived (the lines this accepts are exactly
/// those `field_line` accepts).
#[inline]
fn whole_field_line(head: &[u8], start: usize) -> Option<(Field<'_>, usize)> {
    let name = tchars(head, start);
    let colon = start + name.len();
    if name.is_empty() || head.get(colon) != Some(&b':') {
        return None;
    }
    let mut from = colon + 1;
    while let Some(b' ' | b'\t') = head.get(from) {
        from += 1;
    }
    let cr = value_end(head, from)?;
    let mut to = cr;
    while to > from && matches!(head.get(to - 1), Some(b' ' | b'\t')) {
        to -= 1;
    }
    let value = head.get(from..to)?;
    Some((Field { name, value }, cr))
}

/// The offset of the CR ending a field value that starts at `head[from]`:
/// every byte up to it is a field-value byte (HTAB, SP, VCHAR, obs-text)
/// and it is followed by LF within `head`. `None` otherwise.
#[inline]
fn value_end(head: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    loop {
        let c = at + find_control(head.get(at..)?)?;
        match head.get(c) {
            Some(b'\t') => at = c + 1,
            Some(b'\r') => return (head.get(c + 1) == Some(&b'\n')).then_some(c),
            _ => return None,
        }
    }
}

/// The longest run of tchars at `head[from..]`, as text.
#[inline]
fn tchars(head: &[u8], from: usize) -> &str {
    let rest = head.get(from..).unwrap_or_default();
    let run = rest.get(..run_of(rest, &TCHAR)).unwrap_or_default();
    // SAFETY: every byte of `run` is a tchar, and every tchar is ASCII
    // (`h1::TCHAR` holds no byte above 0x7e; the test
    // `token_and_uri_tables_are_ascii` checks it), so `run` is UTF-8.
    unsafe { core::str::from_utf8_unchecked(run) }
}

/// The longest run of tchars at `head[from..]`, as text, as [`tchars`]
/// finds it, with the run of the usual methods found at once.
#[inline]
fn method_at(head: &[u8], from: usize) -> &str {
    let rest = head.get(from..).unwrap_or_default();
    let len = match rest.get(..5) {
        Some([b'G', b'E', b'T', b' ', _]) => 3,
        Some(b"POST ") => 4,
        _ => run_of(rest, &TCHAR),
    };
    let run = rest.get(..len).unwrap_or_default();
    // SAFETY: `run` is `GET`, `POST` or a run of tchars, which are ASCII
    // (the test `token_and_uri_tables_are_ascii` checks it), so it is
    // UTF-8.
    unsafe { core::str::from_utf8_unchecked(run) }
}

/// The longest run at `head[from..]` of path-and-query characters and
/// `%XX` escapes, as text: an origin-form target, by the rules of
/// [`is_path_query`], when it starts with `/` and is followed by SP.
#[inline]
fn path_query(head: &[u8], from: usize) -> &str {
    let rest = head.get(from..).unwrap_or_default();
    let hex = |j: usize| rest.get(j).is_some_and(u8::is_ascii_hexdigit);
    let mut i = 0;
    loop {
        i += run_of(rest.get(i..).unwrap_or_default(), &PATH_QUERY);
        if rest.get(i) == Some(&b'%') && hex(i + 1) && hex(i + 2) {
            i += 3;
        } else {
            break;
        }
    }
    let run = rest.get(..i).unwrap_or_default();
    // SAFETY: every byte of `run` is either in `PATH_QUERY`, which holds
    // only ASCII (the test `token_and_uri_tables_are_ascii` checks it), or
    // part of an escape: `%` and two ASCII hex digits. So `run` is UTF-8.
    unsafe { core::str::from_utf8_unchecked(run) }
}

/// The length of the longest prefix of `s` whose bytes are all in `class`,
/// looking at the bytes four at a time (one bounds check for four).
#[inline(always)]
fn run_of(s: &[u8], class: &[bool; 256]) -> usize {
    let is = |b: u8| class[usize::from(b)];
    let mut i = 0;
    while let Some(&[a, b, c, d]) = s.get(i..i + 4) {
        if !is(a) {
            return i;
        }
        if !is(b) {
            return i + 1;
        }
        if !is(c) {
            return i + 2;
        }
        if !is(d) {
            return i + 3;
        }
        i += 4;
    }
    while let Some(&b) = s.get(i) {
        if !is(b) {
            break;
        }
        i += 1;
    }
    i
}

/// Completes the parse of a head every line of which the scan has
/// validated: splits again the first `earlier_fields` field lines (those
/// validated by earlier calls, whose fields were written to other storage
/// or not at all; the scan wrote the others to `fields`), then interprets
/// the fields. `request_line_text` is the method and target when this call
/// recognized the request line whole.
///
/// The validation guarantees the shapes relied on here: lines end in CRLF,
/// the request line is `method SP target SP version` with ASCII method and
/// target, and each field line is `token ":" value` with the field count
/// within the caller's storage. A `Content-Length` above the body limit is
/// refused after every other check.
fn finish<'b>(
    buf: &'b [u8],
    head_len: usize,
    scan: &Scan,
    request_line_text: Option<(&'b str, &'b str)>,
    earlier_fields: usize,
    fields: &mut [Field<'b>],
    limits: &Limits,
) -> Result<RequestHead<'b>, Error> {
    let head = buf.get(..head_len).ok_or(Error::MalformedHead)?;
    // A request line validated by an earlier call, possibly over bytes
    // the caller has changed since, is checked again to be text.
    let (method, target) = match request_line_text {
        Some(text) => text,
        None => (
            ascii_str(head.get(scan.method.0..scan.method.1))?,
            ascii_str(head.get(scan.target.0..scan.target.1))?,
        ),
    };
    if earlier_fields > 0 {
        split_again(head, scan.fields_start, earlier_fields, fields)?;
    }
    let field_count = scan.field_lines;
    let version = scan.version;
    let meaning = interpret(
        fields.get(..field_count).ok_or(Error::TooManyFields)?,
        version,
    )?;
    if let BodyFraming::Length(n) = meaning.framing {
        if n > limits.max_body_len {
            return Err(Error::BodyTooLarge);
        }
    }
    Ok(RequestHead {
        method,
        target,
        target_form: scan.form,
        version,
        field_count,
        framing: meaning.framing,
        keep_alive: meaning.keep_alive,
        expect_continue: meaning.expect_continue,
        upgrade: meaning.upgrade,
        head_len,
    })
}

/// Writes the fields of the first `count` field lines of `head`, which
/// start at `fields_start`, to `fields`.
#[cold]
#[inline(never)]
fn split_again<'b>(
    head: &'b [u8],
    fields_start: usize,
    count: usize,
    fields: &mut [Field<'b>],
) -> Result<(), Error> {
    let lines = ValidatedLines {
        rest: head.get(fields_start..).unwrap_or_default(),
        at: fields_start,
    };
    for (index, (at, line)) in lines.take(count).enumerate() {
        let slot = fields.get_mut(index).ok_or(Error::TooManyFields)?;
        let colon = line
            .iter()
            .position(|&b| b == b':')
            .ok_or(Error::MalformedHead)?;
        *slot = Field {
            name: ascii_str(head.get(at..at + colon))?,
            value: trim_ows(line.get(colon + 1..).unwrap_or_default()),
        };
    }
    Ok(())
}

/// The lines of validated head bytes, without their CRLF, each with its
/// offset in the head.
struct ValidatedLines<'b> {
    rest: &'b [u8],
    /// Where `rest` starts in the head.
    at: usize,
}

impl<'b> Iterator for ValidatedLines<'b> {
    type Item = (usize, &'b [u8]);

    fn next(&mut self) -> Option<(usize, &'b [u8])> {
        let end = find_line_end(self.rest)?;
        let line = self.rest.get(..end)?;
        let at = self.at;
        self.rest = self.rest.get(end + 2..).unwrap_or_default();
        self.at += end + 2;
        Some((at, line))
    }
}

/// A piece of a validated head that is ASCII by validation (a method, a
/// target, a field name), as text, checked again: the piece may have been
/// validated by an earlier call.
#[inline]
fn ascii_str(piece: Option<&[u8]>) -> Result<&str, Error> {
    piece
        .and_then(|bytes| core::str::from_utf8(bytes).ok())
        .ok_or(Error::MalformedHead)
}

/// What the fields say about the message.
struct Meaning {
    framing: BodyFraming,
    keep_alive: bool,
    expect_continue: bool,
    upgrade: bool,
}

/// Interprets `Host`, `Content-Length`, `Transfer-Encoding`, `Connection`
/// and `Expect`, in the order given in the module documentation.
fn interpret(fields: &[Field<'_>], version: Version) -> Result<Meaning, Error> {
    let http11 = version == Version::Http11;
    let mut hosts = 0usize;
    let mut content_length: Option<u64> = None;
    let mut transfer_encoding = false;
    let mut close = false;
    let mut keep_alive_token = false;
    let mut expect_continue = false;
    let mut upgrade_token = false;
    let mut upgrade_field = false;
    for f in fields {
        // The names of interest have different lengths: the length picks
        // the one name a field may be.
        let name = f.name.as_bytes();
        let is = |wanted: &[u8]| is_name(name, wanted);
        match name.len() {
            4 if is(b"host") => {
                hosts += 1;
                if hosts > 1 {
                    return Err(Error::DuplicateHost);
                }
                // An empty value says the target has no authority (RFC 9112
                // §3.2), but every target form needs one: HTTP/1.1 must
                // carry it in `Host`. HTTP/1.0 may omit `Host`, and an
                // empty one means the same there.
                let valid = if f.value.is_empty() {
                    !http11
                } else {
                    is_host_port(f.value, false)
                };
                if !valid {
                    return Err(Error::InvalidHost);
                }
            }
            14 if is(b"content-length") => {
                for element in list(f.value) {
                    let n = parse_decimal(element).ok_or(Error::InvalidContentLength)?;
                    match content_length {
                        Some(prev) if prev != n => return Err(Error::InvalidContentLength),
                        _ => content_length = Some(n),
                    }
                }
                if content_length.is_none() {
                    return Err(Error::InvalidContentLength);
                }
            }
            17 if is(b"transfer-encoding") => transfer_encoding = true,
            10 if is(b"connection") => {
                for token in list(f.value) {
                    if token.eq_ignore_ascii_case(b"close") {
                        close = true;
                    } else if token.eq_ignore_ascii_case(b"keep-alive") {
                        keep_alive_token = true;
                    } else if token.eq_ignore_ascii_case(b"upgrade") {
                        upgrade_token = true;
                    }
                }
            }
            7 if is(b"upgrade") => upgrade_field = true,
            6 if is(b"expect") => {
                expect_continue |=
                    http11 && list(f.value).any(|e| e.eq_ignore_ascii_case(b"100-continue"));
            }
            _ => {}
        }
    }
    if http11 && hosts == 0 {
        return Err(Error::MissingHost);
    }
    let framing = if transfer_encoding {
        if !http11 {
            return Err(Error::TransferEncodingOnHttp10);
        }
        if content_length.is_some() {
            return Err(Error::ContentLengthWithTransferEncoding);
        }
        transfer_codings(fields)?;
        BodyFraming::Chunked
    } else {
        match content_length {
            Some(n) => BodyFraming::Length(n),
            None => BodyFraming::None,
        }
    };
    let keep_alive = if http11 {
        !close
    } else {
        keep_alive_token && !close
    };
    Ok(Meaning {
        framing,
        keep_alive,
        expect_continue,
        upgrade: http11 && upgrade_token && upgrade_field,
    })
}

/// Whether the field name `name`, a token, is `lower` (lowercase letters
/// and `-`, at least four bytes) in any case, comparing words: setting bit
/// 0x20 of each byte turns an uppercase letter into its lowercase and
/// leaves `-` alone, and turns no other tchar into a lowercase letter or
/// `-` (only CR, which is no tchar, would become `-`).
#[inline]
fn is_name(name: &[u8], lower: &[u8]) -> bool {
    fn word<const N: usize>(s: &[u8], at: usize) -> [u8; N] {
        s.get(at..at + N)
            .and_then(|w| w.try_into().ok())
            .unwrap_or([0; N])
    }
    let n = lower.len();
    if name.len() != n || n < 4 {
        return false;
    }
    if n >= 8 {
        let same = |at: usize| {
            u64::from_le_bytes(word(name, at)) | 0x2020_2020_2020_2020
                == u64::from_le_bytes(word(lower, at))
        };
        // Whole words, then the last eight bytes (overlapping the words
        // before them when `n` is not a multiple of eight).
        let mut at = 0;
        while at + 8 < n {
            if !same(at) {
                return false;
            }
            at += 8;
        }
        same(n - 8)
    } else {
        let same = |at: usize| {
            u32::from_le_bytes(word(name, at)) | 0x2020_2020 == u32::from_le_bytes(word(lower, at))
        };
        same(0) && same(n - 4)
    }
}

/// Checks the transfer codings of all `Transfer-Encoding` fields, taken
/// together as one list (RFC 9112 §6.1, §6.3).
///
/// A list whose final coding is not a bare `chunked`, which names `chunked`
/// twice, or which holds an empty or malformed element leaves the body
/// length undeterminable: [`Error::InvalidTransferEncoding`] (400). A
/// well-framed list that also applies another coding (`gzip, chunked`) is
/// [`Error::UnknownTransferCoding`] (501): ringstream implements no
/// transfer coding but `chunked`.
fn transfer_codings(fields: &[Field<'_>]) -> Result<(), Error> {
    let mut chunked = 0usize;
    let mut last_chunked = false;
    let mut other = false;
    let mut any = false;
    for f in fields {
        if !f.name.eq_ignore_ascii_case("transfer-encoding") {
            continue;
        }
        for element in list(f.value) {
            any = true;
            let (coding, params) = match element.iter().position(|&b| b == b';') {
                Some(semi) => (trim_ows(element.get(..semi).unwrap_or_default()), true),
                None => (element, false),
            };
            if !is_token(coding) {
                return Err(Error::InvalidTransferEncoding);
            }
            last_chunked = coding.eq_ignore_ascii_case(b"chunked") && !params;
            if coding.eq_ignore_ascii_case(b"chunked") {
                chunked += 1;
            } else {
                other = true;
            }
        }
    }
    if !any || chunked != 1 || !last_chunked {
        return Err(Error::InvalidTransferEncoding);
    }
    if other {
        return Err(Error::UnknownTransferCoding);
    }
    Ok(())
}

/// The elements of a comma-separated list, OWS trimmed. Empty elements are
/// yielded (as empty slices) so the caller can refuse them.
pub(crate) fn list(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value.split(|&b| b == b',').map(trim_ows)
}

/// `1*DIGIT` as a `u64`; `None` if empty, not all digits, or too large.
pub(crate) fn parse_decimal(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    s.iter().try_fold(0u64, |n, &b| {
        if !b.is_ascii_digit() {
            return None;
        }
        n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
    })
}

/// Whether `v` is `uri-host [ ":" port ]` (RFC 9110 §7.2, RFC 3986 §3.2.2):
/// an IP-literal (`[` hex digits, `:` and `.` `]`) or a reg-name (unreserved,
/// sub-delims, `%XX`), then an optional port of at most 65535. The host must
/// not be empty; with `port_required` the port must be present and non-empty.
fn is_host_port(v: &[u8], port_required: bool) -> bool {
    let (host_ok, port) = if v.first() == Some(&b'[') {
        let Some(close) = v.iter().position(|&b| b == b']') else {
            return false;
        };
        let inner = v.get(1..close).unwrap_or_default();
        let ok = !inner.is_empty()
            && inner
                .iter()
                .all(|&b| b.is_ascii_hexdigit() || b == b':' || b == b'.');
        match v.get(close + 1..).unwrap_or_default() {
            [] => (ok, None),
            [b':', port @ ..] => (ok, Some(port)),
            _ => return false,
        }
    } else {
        let (host, port) = match v.iter().position(|&b| b == b':') {
            Some(c) => (
                v.get(..c).unwrap_or_default(),
                Some(v.get(c + 1..).unwrap_or_default()),
            ),
            None => (v, None),
        };
        let ok = !host.is_empty() && is_uri_chars(host, &REG_NAME);
        (ok, port)
    };
    if !host_ok {
        return false;
    }
    match port {
        None => !port_required,
        Some([]) => !port_required,
        Some(p) => p.len() <= 5 && parse_decimal(p).is_some_and(|n| n <= 65535),
    }
}

/// Whether `s` is `*( pchar / "/" / "?" )` (RFC 3986 path and query).
fn is_path_query(s: &[u8]) -> bool {
    is_uri_chars(s, &PATH_QUERY)
}

/// Whether every byte of `s` is `allowed` or starts a `%XX` escape.
fn is_uri_chars(s: &[u8], allowed: &[bool; 256]) -> bool {
    let mut i = 0;
    while let Some(&b) = s.get(i) {
        if allowed[usize::from(b)] {
            i += 1;
        } else if b == b'%' {
            let hex = |j: usize| s.get(j).is_some_and(u8::is_ascii_hexdigit);
            if !(hex(i + 1) && hex(i + 2)) {
                return false;
            }
            i += 3;
        } else {
            return false;
        }
    }
    true
}

/// The bytes that stand for themselves in a path and query: `pchar`
/// (unreserved, sub-delims, `:` and `@`), `/` and `?` (RFC 3986 §3.3,
/// §3.4), by byte value.
static PATH_QUERY: [bool; 256] = uri_table(b":@/?");

/// The bytes that stand for themselves in a `reg-name`: unreserved and
/// sub-delims (RFC 3986 §3.2.2), by byte value.
static REG_NAME: [bool; 256] = uri_table(b"");

/// Unreserved, sub-delims and `extra`, by byte value.
const fn uri_table(extra: &[u8]) -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = is_unreserved(b) || is_sub_delim(b);
        i += 1;
    }
    let mut k = 0;
    while k < extra.len() {
        t[extra[k] as usize] = true;
        k += 1;
    }
    t
}

/// RFC 3986 unreserved.
const fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// RFC 3986 sub-delims.
const fn is_sub_delim(b: u8) -> bool {
    matches!(
        b,
        b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'='
    )
}

fn trim_ows(s: &[u8]) -> &[u8] {
    let start = s
        .iter()
        .position(|&b| b != b' ' && b != b'\t')
        .unwrap_or(s.len());
    trim_end_ows(s.get(start..).unwrap_or_default())
}

fn trim_end_ows(s: &[u8]) -> &[u8] {
    let end = s
        .iter()
        .rposition(|&b| b != b' ' && b != b'\t')
        .map_or(0, |p| p + 1);
    s.get(..end).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_tables_hold_rfc_3986_classes() {
        for b in 0..=255u8 {
            let base = is_unreserved(b) || is_sub_delim(b);
            assert_eq!(REG_NAME[usize::from(b)], base, "{b:#04x}");
            let path = base || matches!(b, b':' | b'@' | b'/' | b'?');
            assert_eq!(PATH_QUERY[usize::from(b)], path, "{b:#04x}");
        }
    }

    /// The byte classes whose runs are taken as text without a UTF-8 check
    /// hold only ASCII.
    #[test]
    fn token_and_uri_tables_are_ascii() {
        for b in 0x80..=0xffu8 {
            assert!(!is_tchar_byte(b), "{b:#04x}");
            assert!(!PATH_QUERY[usize::from(b)], "{b:#04x}");
        }
        assert!(!b"%0123456789abcdefABCDEF".iter().any(|b| !b.is_ascii()));
        let bytes: [u8; 256] = core::array::from_fn(|i| i as u8);
        for from in 0..bytes.len() {
            assert!(tchars(&bytes, from).is_ascii());
            assert!(method_at(&bytes, from).is_ascii());
            assert!(path_query(&bytes, from).is_ascii());
        }
    }

    /// The methods found at once are the runs of tchars a scan finds.
    #[test]
    fn method_fast_path_matches_the_tchar_run() {
        for line in [
            &b"GET / "[..],
            b"GET\t/",
            b"GETX /",
            b"GET",
            b"GET ",
            b"POST /",
            b"POST",
            b"POSTS /",
            b"POS /",
            b"get /",
        ] {
            assert_eq!(method_at(line, 0), tchars(line, 0), "{line:?}");
        }
    }

    /// The word comparison of field names agrees with a byte-by-byte
    /// case-insensitive one for every token that differs from a name of
    /// interest in one byte, at every place.
    #[test]
    fn name_comparison_matches_eq_ignore_ascii_case() {
        for lower in [
            &b"host"[..],
            b"expect",
            b"upgrade",
            b"connection",
            b"content-length",
            b"transfer-encoding",
        ] {
            let mut name = [0u8; 17];
            let name = &mut name[..lower.len()];
            for at in 0..lower.len() {
                for b in (0..=255u8).filter(|&b| is_tchar_byte(b)) {
                    name.copy_from_slice(lower);
                    name[at] = b;
                    assert_eq!(
                        is_name(name, lower),
                        name.eq_ignore_ascii_case(lower),
                        "{name:?}"
                    );
                    name.make_ascii_uppercase();
                    assert_eq!(
                        is_name(name, lower),
                        name.eq_ignore_ascii_case(lower),
                        "{name:?}"
                    );
                }
            }
            assert!(!is_name(&lower[1..], lower));
        }
    }

    /// The word test for control bytes finds the first of them, as a byte
    /// scan does, wherever it is and whatever follows it.
    #[test]
    fn find_control_matches_a_byte_scan() {
        let naive = |s: &[u8]| s.iter().position(|&b| b < 0x20 || b == 0x7f);
        for bad in 0..=255u8 {
            for at in 0..24 {
                let mut buf = [b'a'; 24];
                buf[at] = bad;
                if at + 1 < buf.len() {
                    buf[at + 1] = 0x80;
                }
                for from in 0..buf.len() {
                    assert_eq!(find_control(&buf[from..]), naive(&buf[from..]), "{bad}");
                }
            }
        }
        let all: [u8; 256] = core::array::from_fn(|i| (255 - i) as u8);
        for from in 0..all.len() {
            assert_eq!(find_control(&all[from..]), naive(&all[from..]));
        }
    }

    /// The four-at-a-time run of a byte class ends where a byte scan ends.
    #[test]
    fn run_of_matches_a_byte_scan() {
        let naive = |s: &[u8]| s.iter().position(|&b| !TCHAR[usize::from(b)]);
        for at in 0..12 {
            for len in at..12 {
                let mut buf = [b'a'; 12];
                buf[at] = b' ';
                let s = &buf[..len];
                assert_eq!(run_of(s, &TCHAR), naive(s).unwrap_or(s.len()));
            }
        }
    }

    #[test]
    fn decimal_parsing_is_checked() {
        assert_eq!(parse_decimal(b"0"), Some(0));
        assert_eq!(parse_decimal(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_decimal(b"18446744073709551616"), None);
        assert_eq!(parse_decimal(b""), None);
        assert_eq!(parse_decimal(b"+5"), None);
    }

    #[test]
    fn host_port_forms() {
        assert!(is_host_port(b"example.com", false));
        assert!(is_host_port(b"example.com:8080", true));
        assert!(is_host_port(b"[::1]:80", true));
        assert!(is_host_port(b"[::1]", false));
        assert!(!is_host_port(b"[::1]", true));
        assert!(!is_host_port(b"example.com:65536", false));
        assert!(!is_host_port(b"a b", false));
        assert!(!is_host_port(b"user@host", false));
        assert!(!is_host_port(b"host/path", false));
        assert!(!is_host_port(b"[]", false));
        assert!(!is_host_port(b":80", false));
    }

    #[test]
    fn find_line_end_matches_a_byte_scan() {
        let naive = |s: &[u8]| s.iter().position(|&b| b == b'\r' || b == b'\n');
        let mut buf = [b'a'; 40];
        assert_eq!(find_line_end(&buf), None);
        for at in 0..buf.len() {
            for end in [b'\r', b'\n'] {
                buf = [b'a'; 40];
                buf[at] = end;
                // Bytes that trip the word test without being CR or LF.
                if at + 1 < buf.len() {
                    buf[at + 1] = 0x0c;
                }
                for from in 0..buf.len() {
                    assert_eq!(find_line_end(&buf[from..]), naive(&buf[from..]));
                }
            }
        }
        let tricky = [0x0eu8, 0x0c, 0x8d, 0x8a, 0x0b, 0x0d, 0x00, 0xff, 0x0a];
        for from in 0..tricky.len() {
            assert_eq!(find_line_end(&tricky[from..]), naive(&tricky[from..]));
        }
    }

    #[test]
    fn scan_remembers_how_far_it_looked() {
        let mut p = HeadParser::new(Limits::DEFAULT);
        let mut fields = [Field::EMPTY; 4];
        let wire = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";
        assert_eq!(p.parse(&wire[..18], &mut fields), Ok(None));
        assert_eq!(p.scan.pos, 18);
        assert_eq!(p.scan.line_start, 16);
        assert!(p.scan.request_line_done);
    }
}
