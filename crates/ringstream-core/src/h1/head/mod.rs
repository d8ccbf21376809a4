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

mod field;
mod line;
mod meaning;
mod scan;
mod target;
mod whole;

pub use self::field::Field;
pub use self::target::TargetForm;

use self::line::{ascii_str, split_again};
use self::meaning::interpret;
use self::scan::{general_line, Line, Scan};
use self::whole::{whole_field_line, whole_request_line};
use super::framing::BodyFraming;
use super::version::Version;
use crate::{Error, Limits};

/// The most fields a head may carry, whatever [`Limits::max_fields`] says:
/// a larger `max_fields` is clamped to this count (fields, not bytes).
///
/// Parsing allocates nothing: the fields are written into the caller's
/// storage.
pub const MAX_FIELDS: usize = 128;

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
    /// The target as a path and query, the form a router matches: the
    /// target itself in origin form; after the authority of an
    /// absolute-form target (`http://host/a?b` → `/a?b`, `/` for
    /// `http://host`, `?b` for `http://host?b`: an empty path, which is
    /// `/`), which a server must accept (RFC 9112 §3.2.2); the
    /// target as sent for `*` and for the authority form of `CONNECT`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{Field, HeadParser};
    /// use ringstream_core::Limits;
    ///
    /// let mut fields = [Field::EMPTY; 8];
    /// let mut parser = HeadParser::new(Limits::DEFAULT);
    /// let head = parser
    ///     .parse(b"GET http://a.example/live?x=1 HTTP/1.1\r\nHost: a.example\r\n\r\n", &mut fields)?
    ///     .expect("complete head");
    /// assert_eq!(head.path_and_query(), "/live?x=1");
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    pub fn path_and_query(&self) -> &'b str {
        if self.target_form != TargetForm::Absolute {
            return self.target;
        }
        // `scheme://authority` then the path: the authority ends at the
        // first `/` or `?` after the `//`.
        let after_scheme = self
            .target
            .find("://")
            .and_then(|i| self.target.get(i + 3..))
            .unwrap_or_default();
        match after_scheme.find(['/', '?']) {
            Some(i) => after_scheme.get(i..).unwrap_or("/"),
            // No path: the empty path is `/` (RFC 9110 §4.2.3).
            None => "/",
        }
    }

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
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::HeadParser;
    /// use ringstream_core::Limits;
    ///
    /// let limits = Limits { max_fields: 16, ..Limits::DEFAULT };
    /// assert_eq!(HeadParser::new(limits).limits().max_fields, 16);
    /// ```
    pub const fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Forgets the current head, before parsing the next request on the
    /// connection (whose bytes then start at offset 0 of the buffer passed).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{Field, HeadParser};
    /// use ringstream_core::Limits;
    ///
    /// let wire = b"GET /a HTTP/1.1\r\nHost: d\r\n\r\nGET /b HTTP/1.1\r\nHost: d\r\n\r\n";
    /// let mut parser = HeadParser::new(Limits::DEFAULT);
    /// let mut fields = [Field::EMPTY; 8];
    /// let first = parser.parse(wire, &mut fields)?.unwrap();
    /// assert_eq!(first.target, "/a");
    /// let next = first.head_len;
    /// // The next request's bytes start at offset 0 of the buffer passed.
    /// parser.reset();
    /// let second = parser.parse(&wire[next..], &mut fields)?.unwrap();
    /// assert_eq!(second.target, "/b");
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
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

#[cfg(test)]
mod tests {
    use super::*;

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
