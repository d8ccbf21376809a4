//! The [`Event`] writer: the only file that knows the `text/event-stream`
//! syntax (the tokio crate's `sse::Event`, borrowed instead of owned).

use core::fmt;

use embassy_time::Duration;

/// The `Last-Event-ID` request field, sent by a reconnecting client.
pub const LAST_EVENT_ID: &str = "last-event-id";

/// The keep-alive comment, in wire bytes (the tokio crate's).
pub const KEEP_ALIVE_COMMENT: &[u8] = b": keep-alive\n\n";

/// Longest `retry` value in decimal digits (a `u64` of milliseconds).
const RETRY_DIGITS: usize = 20;

/// One server-sent event, borrowing its fields: nothing is copied until it
/// is written (to a stream, or once into a
/// [`Broadcaster`](super::Broadcaster)'s ring).
///
/// Field order on the wire, as in the tokio crate: the comment, `id`,
/// `event`, `retry`, the `data` lines, then the blank line that ends the
/// event. Line breaks (CR, LF or CRLF) in the data split it into several
/// `data:` lines, which the client joins with LF; in a comment, into
/// several comment lines. `id` and `event` must fit on one line: they are
/// checked, and refused with [`InvalidField`] (there is no heap to strip
/// them into), so a bad value never breaks the stream.
///
/// # Examples
///
/// ```
/// use embassy_time::Duration;
/// use ringstream_embedded::sse::Event;
///
/// let event = Event::new()
///     .try_id("42")?
///     .try_event("update")?
///     .retry(Duration::from_secs(3))
///     .data("line one\r\nline two");
/// let mut wire = [0u8; 64];
/// let n = event.encode_into(&mut wire).unwrap();
/// assert_eq!(
///     &wire[..n],
///     b"id: 42\nevent: update\nretry: 3000\ndata: line one\ndata: line two\n\n"
/// );
/// assert_eq!(event.encoded_len(), n);
/// # Ok::<(), ringstream_embedded::sse::InvalidField>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Event<'a> {
    comment: Option<&'a str>,
    id: Option<&'a str>,
    event: Option<&'a str>,
    retry: Option<Retry>,
    data: Option<&'a str>,
}

/// A reconnection time in decimal milliseconds: `digits[start..]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Retry {
    digits: [u8; RETRY_DIGITS],
    start: u8,
}

impl Retry {
    fn new(millis: u64) -> Retry {
        let mut digits = [b'0'; RETRY_DIGITS];
        let mut at = RETRY_DIGITS;
        let mut rest = millis;
        loop {
            at -= 1;
            if let Some(d) = digits.get_mut(at) {
                *d = b'0' + (rest % 10) as u8;
            }
            rest /= 10;
            if rest == 0 || at == 0 {
                break;
            }
        }
        Retry {
            digits,
            start: at as u8,
        }
    }

    fn as_bytes(&self) -> &[u8] {
        self.digits
            .get(usize::from(self.start)..)
            .unwrap_or_default()
    }
}

/// A field value that cannot be encoded: an `id` or `event` containing a
/// line break (or an `id` containing NUL), as the tokio crate refuses it.
///
/// # Examples
///
/// ```
/// use ringstream_embedded::sse::Event;
///
/// let err = Event::new().try_id("a\nb").unwrap_err();
/// assert_eq!(err.field(), "id");
/// assert!(Event::new().try_id("a\0b").is_err());
/// assert!(Event::new().try_event("tick\r").is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidField {
    field: &'static str,
}

impl InvalidField {
    /// The name of the refused field (`"id"` or `"event"`).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::sse::Event;
    ///
    /// // A line break would end the field early.
    /// let refused = Event::new().try_id("7\n8").unwrap_err();
    /// assert_eq!(refused.field(), "id");
    /// ```
    pub fn field(&self) -> &'static str {
        self.field
    }
}

impl fmt::Display for InvalidField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "server-sent event `{}` field contains a line break or NUL",
            self.field
        )
    }
}

impl core::error::Error for InvalidField {}

impl<'a> Event<'a> {
    /// An empty event; add fields with the builder methods. An event made
    /// only of a comment is ignored by clients and serves as a ping.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::sse::Event;
    ///
    /// assert_eq!(Event::new().encoded_len(), 1); // the blank line alone
    /// ```
    pub const fn new() -> Event<'a> {
        Event {
            comment: None,
            id: None,
            event: None,
            retry: None,
            data: None,
        }
    }

    /// Sets the event id, unless it contains CR, LF or NUL (a client would
    /// split the line at a break, and ignores an id containing NUL).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::sse::Event;
    ///
    /// assert!(Event::new().try_id("7").is_ok());
    /// assert!(Event::new().try_id("7\r").is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidField`] when the id contains CR, LF or NUL.
    pub fn try_id(mut self, id: &'a str) -> Result<Event<'a>, InvalidField> {
        if id.contains(['\r', '\n', '\0']) {
            return Err(InvalidField { field: "id" });
        }
        self.id = Some(id);
        Ok(self)
    }

    /// Sets the event type (the client dispatches it to listeners of that
    /// name instead of `onmessage`), unless it contains CR or LF.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::sse::Event;
    ///
    /// assert!(Event::new().try_event("tick").is_ok());
    /// assert!(Event::new().try_event("a\nb").is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidField`] when the type contains CR or LF.
    pub fn try_event(mut self, event: &'a str) -> Result<Event<'a>, InvalidField> {
        if event.contains(['\r', '\n']) {
            return Err(InvalidField { field: "event" });
        }
        self.event = Some(event);
        Ok(self)
    }

    /// Sets the data. Line breaks (CR, LF or CRLF) split it into several
    /// `data:` lines; empty data is one empty `data:` line.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::sse::Event;
    ///
    /// let mut wire = [0u8; 32];
    /// let n = Event::new().data("a\rb").encode_into(&mut wire).unwrap();
    /// assert_eq!(&wire[..n], b"data: a\ndata: b\n\n");
    /// let n = Event::new().data("").encode_into(&mut wire).unwrap();
    /// assert_eq!(&wire[..n], b"data:\n\n");
    /// ```
    #[must_use]
    pub fn data(mut self, data: &'a str) -> Event<'a> {
        self.data = Some(data);
        self
    }

    /// Sets the reconnection time the client waits after losing the
    /// connection, sent in whole milliseconds.
    ///
    /// # Examples
    ///
    /// ```
    /// use embassy_time::Duration;
    /// use ringstream_embedded::sse::Event;
    ///
    /// let mut wire = [0u8; 32];
    /// let event = Event::new().retry(Duration::from_millis(2500));
    /// let n = event.encode_into(&mut wire).unwrap();
    /// assert_eq!(&wire[..n], b"retry: 2500\n\n");
    /// ```
    #[must_use]
    pub fn retry(mut self, retry: Duration) -> Event<'a> {
        self.retry = Some(Retry::new(retry.as_millis()));
        self
    }

    /// Sets a comment, which clients ignore; a comment with line breaks
    /// becomes several comment lines.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::sse::Event;
    ///
    /// let mut wire = [0u8; 32];
    /// let n = Event::new().comment("hello").data("x").encode_into(&mut wire).unwrap();
    /// assert_eq!(&wire[..n], b": hello\ndata: x\n\n");
    /// ```
    #[must_use]
    pub fn comment(mut self, comment: &'a str) -> Event<'a> {
        self.comment = Some(comment);
        self
    }

    /// The event's id, if it has one.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::sse::Event;
    ///
    /// let event = Event::new().try_id("42")?.data("21.5");
    /// assert_eq!(event.id(), Some("42"));
    /// assert_eq!(Event::new().data("21.5").id(), None);
    /// # Ok::<(), ringstream_embedded::sse::InvalidField>(())
    /// ```
    pub fn id(&self) -> Option<&'a str> {
        self.id
    }

    /// The wire bytes of the event, in pieces borrowed from its fields (and
    /// from the event itself, for the `retry` digits): written one after
    /// the other they are the event. Nothing is copied.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::sse::Event;
    ///
    /// let event = Event::new().data("a\nb");
    /// let wire: Vec<u8> = event.pieces().flatten().copied().collect();
    /// assert_eq!(wire, b"data: a\ndata: b\n\n");
    /// ```
    pub fn pieces(&self) -> impl Iterator<Item = &[u8]> + '_ {
        let comment = self
            .comment
            .into_iter()
            .flat_map(|c| Lines::new(c).flat_map(|line| field(b":", b": ", line)));
        let id = self.id.into_iter().flat_map(|v| field(b"id:", b"id: ", v));
        let event = self
            .event
            .into_iter()
            .flat_map(|v| field(b"event:", b"event: ", v));
        let retry = self
            .retry
            .as_ref()
            .into_iter()
            .flat_map(|r| [&b"retry: "[..], r.as_bytes(), b"\n"]);
        let data = self
            .data
            .into_iter()
            .flat_map(|d| Lines::new(d).flat_map(|line| field(b"data:", b"data: ", line)));
        comment
            .chain(id)
            .chain(event)
            .chain(retry)
            .chain(data)
            .chain(core::iter::once(&b"\n"[..]))
    }

    /// Where the id's value starts in the wire bytes, if there is an id.
    pub(super) fn id_offset(&self) -> Option<usize> {
        let id = self.id?;
        let comment = Event {
            comment: self.comment,
            ..Event::new()
        };
        // The comment's lines without the blank line, then `id: `.
        let before = comment.encoded_len() - 1;
        Some(before + if id.is_empty() { 3 } else { 4 })
    }

    /// The length of the event's wire bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::sse::Event;
    ///
    /// // `data: on\n\n`
    /// assert_eq!(Event::new().data("on").encoded_len(), 10);
    /// ```
    pub fn encoded_len(&self) -> usize {
        self.pieces().map(<[u8]>::len).sum()
    }

    /// Writes the event's wire bytes into `out`, returning their length;
    /// `None` (and `out` partly written) when `out` is too short.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::sse::Event;
    ///
    /// let mut wire = [0u8; 9];
    /// assert_eq!(Event::new().data("x").encode_into(&mut wire), Some(9));
    /// assert_eq!(Event::new().data("xy").encode_into(&mut wire), None);
    /// ```
    pub fn encode_into(&self, out: &mut [u8]) -> Option<usize> {
        let mut at = 0;
        for piece in self.pieces() {
            let end = at + piece.len();
            out.get_mut(at..end)?.copy_from_slice(piece);
            at = end;
        }
        Some(at)
    }
}

/// `name: value\n`, or `name:\n` when the value is empty (`bare` is the
/// name with its colon, `spaced` the same with a space after it).
fn field<'v>(bare: &'static [u8], spaced: &'static [u8], value: &'v str) -> [&'v [u8]; 3] {
    let name = if value.is_empty() { bare } else { spaced };
    [name, value.as_bytes(), b"\n"]
}

/// The lines of a text split at CRLF, CR or LF. An empty text is one empty
/// line, and a text ending with a break ends with an empty line.
struct Lines<'a> {
    rest: Option<&'a str>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Lines<'a> {
        Lines { rest: Some(text) }
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let rest = self.rest?;
        match rest.find(['\r', '\n']) {
            None => {
                self.rest = None;
                Some(rest)
            }
            Some(at) => {
                let (line, tail) = rest.split_at(at);
                let skip = if tail.starts_with("\r\n") { 2 } else { 1 };
                self.rest = tail.get(skip..);
                Some(line)
            }
        }
    }
}
