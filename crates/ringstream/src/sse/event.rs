//! Event formatting: the [`Event`] builder, its wire form [`EncodedEvent`],
//! the comments a stream sends on its own, and the `Last-Event-ID` header.
//!
//! This is the only file that knows the `text/event-stream` syntax.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use http::HeaderMap;

/// The `Last-Event-ID` request header, as sent by a reconnecting client.
pub const LAST_EVENT_ID: &str = "last-event-id";

/// The keep-alive comment, in wire bytes.
pub(super) const KEEP_ALIVE_COMMENT: &[u8] = b": keep-alive\n\n";

/// The comment telling a client that it skipped `count` events, in wire
/// bytes.
pub(super) fn dropped_comment(count: u64) -> Bytes {
    Bytes::from(format!(": dropped {count} events\n\n"))
}

/// One server-sent event, built field by field.
///
/// Every field is optional. An event with data is delivered to the client's
/// `onmessage` (or to the listener of its `event` type); an event made only
/// of comments is ignored by clients and serves as a ping.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ringstream::sse::Event;
///
/// let event = Event::new()
///     .id("42")
///     .event("update")
///     .retry(Duration::from_secs(3))
///     .data("line one\r\nline two");
/// assert_eq!(
///     event.encode().bytes(),
///     "id: 42\nevent: update\nretry: 3000\ndata: line one\ndata: line two\n\n"
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    id: Option<String>,
    event: Option<String>,
    data: Option<String>,
    retry: Option<Duration>,
    comments: Vec<String>,
}

/// A field value that cannot be encoded: an `id` or `event` containing a
/// line break (or an `id` containing NUL).
///
/// # Examples
///
/// ```
/// use ringstream::sse::Event;
///
/// let err = Event::new().try_id("a\nb").unwrap_err();
/// assert_eq!(err.field(), "id");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidField {
    field: &'static str,
}

impl InvalidField {
    /// The name of the rejected field (`"id"` or `"event"`).
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

impl std::error::Error for InvalidField {}

fn is_line_break(c: char) -> bool {
    c == '\r' || c == '\n'
}

/// A field whose value must fit on one line: an `id` (which must not contain
/// NUL either, or a client ignores it) or an `event` type.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OneLineField {
    Id,
    Event,
}

impl OneLineField {
    fn name(self) -> &'static str {
        match self {
            OneLineField::Id => "id",
            OneLineField::Event => "event",
        }
    }

    fn forbids(self, c: char) -> bool {
        is_line_break(c) || (self == OneLineField::Id && c == '\0')
    }

    /// The value with every forbidden character removed.
    fn strip(self, value: impl Into<String>) -> String {
        let mut value = value.into();
        value.retain(|c| !self.forbids(c));
        value
    }

    /// The value, unless it contains a forbidden character.
    fn check(self, value: impl Into<String>) -> Result<String, InvalidField> {
        let value = value.into();
        if value.contains(|c| self.forbids(c)) {
            return Err(InvalidField { field: self.name() });
        }
        Ok(value)
    }
}

impl Event {
    /// An empty event; add fields with the builder methods.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::sse::Event;
    ///
    /// assert_eq!(Event::new().data("hi").encode().bytes(), "data: hi\n\n");
    /// ```
    pub fn new() -> Event {
        Event::default()
    }

    /// Set the event id, removing any CR, LF and NUL from it (a client would
    /// split the line at a break and ignore an id containing NUL).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::sse::Event;
    ///
    /// assert_eq!(Event::new().id("7\r\n").encode().bytes(), "id: 7\n\n");
    /// ```
    #[must_use]
    pub fn id(mut self, id: impl Into<String>) -> Event {
        self.id = Some(OneLineField::Id.strip(id));
        self
    }

    /// Set the event id, or reject it if it contains CR, LF or NUL.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::sse::Event;
    ///
    /// assert!(Event::new().try_id("7").is_ok());
    /// assert!(Event::new().try_id("7\r").is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidField`] when the id contains CR, LF or NUL.
    pub fn try_id(mut self, id: impl Into<String>) -> Result<Event, InvalidField> {
        self.id = Some(OneLineField::Id.check(id)?);
        Ok(self)
    }

    /// Set the event type (the client dispatches it to listeners of that
    /// name instead of `onmessage`), removing any CR and LF from it.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::sse::Event;
    ///
    /// assert_eq!(Event::new().event("tick").encode().bytes(), "event: tick\n\n");
    /// ```
    #[must_use]
    pub fn event(mut self, event: impl Into<String>) -> Event {
        self.event = Some(OneLineField::Event.strip(event));
        self
    }

    /// Set the event type, or reject it if it contains CR or LF.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::sse::Event;
    ///
    /// assert!(Event::new().try_event("a\nb").is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidField`] when the type contains CR or LF.
    pub fn try_event(mut self, event: impl Into<String>) -> Result<Event, InvalidField> {
        self.event = Some(OneLineField::Event.check(event)?);
        Ok(self)
    }

    /// Set the data, replacing earlier data. Line breaks (CR, LF or CRLF)
    /// split it into several `data:` lines, which the client joins with LF.
    /// Empty data is sent as one empty `data:` line.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::sse::Event;
    ///
    /// assert_eq!(Event::new().data("a\rb").encode().bytes(), "data: a\ndata: b\n\n");
    /// assert_eq!(Event::new().data("").encode().bytes(), "data:\n\n");
    /// ```
    #[must_use]
    pub fn data(mut self, data: impl Into<String>) -> Event {
        self.data = Some(data.into());
        self
    }

    /// Set the reconnection time the client should wait after losing the
    /// connection, sent in whole milliseconds.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ringstream::sse::Event;
    ///
    /// let event = Event::new().retry(Duration::from_millis(2500));
    /// assert_eq!(event.encode().bytes(), "retry: 2500\n\n");
    /// ```
    #[must_use]
    pub fn retry(mut self, retry: Duration) -> Event {
        self.retry = Some(retry);
        self
    }

    /// Add a comment, which clients ignore. Comments are written before the
    /// fields; a comment with line breaks becomes several comment lines.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::sse::Event;
    ///
    /// let event = Event::new().comment("hello").data("x");
    /// assert_eq!(event.encode().bytes(), ": hello\ndata: x\n\n");
    /// ```
    #[must_use]
    pub fn comment(mut self, comment: impl Into<String>) -> Event {
        self.comments.push(comment.into());
        self
    }

    /// Encode the event into its wire bytes, once; the result is cheap to
    /// clone and to send to any number of clients.
    ///
    /// Field order: comments, `id`, `event`, `retry`, `data`, then the blank
    /// line that ends the event.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::sse::Event;
    ///
    /// let encoded = Event::new().id("1").data("x").encode();
    /// assert_eq!(encoded.id(), Some("1"));
    /// assert_eq!(encoded.bytes(), "id: 1\ndata: x\n\n");
    /// ```
    pub fn encode(&self) -> EncodedEvent {
        let retry = self.retry.map(|retry| retry.as_millis().to_string());
        // Each line is its name, ": ", its value and "\n"; then the blank line.
        let mut len = 1;
        self.for_each_line(retry.as_deref(), |name, value| {
            len += name.len() + value.len() + 3;
        });
        let mut buf = BytesMut::with_capacity(len);
        self.for_each_line(retry.as_deref(), |name, value| {
            put_field(&mut buf, name, value);
        });
        buf.put_u8(b'\n');
        EncodedEvent {
            id: self.id.as_deref().map(Arc::from),
            bytes: buf.freeze(),
        }
    }

    /// Call `visit` with the name and value of every line of the event, in
    /// wire order; `retry` is the reconnection time already in decimal
    /// milliseconds. A comment's name is empty.
    fn for_each_line(&self, retry: Option<&str>, mut visit: impl FnMut(&str, &str)) {
        for comment in &self.comments {
            Lines::new(comment).for_each(|line| visit("", line));
        }
        if let Some(id) = &self.id {
            visit("id", id);
        }
        if let Some(event) = &self.event {
            visit("event", event);
        }
        if let Some(retry) = retry {
            visit("retry", retry);
        }
        if let Some(data) = &self.data {
            Lines::new(data).for_each(|line| visit("data", line));
        }
    }
}

/// Write `name: value\n`, or `name:\n` when the value is empty.
fn put_field(buf: &mut BytesMut, name: &str, value: &str) {
    buf.put_slice(name.as_bytes());
    buf.put_u8(b':');
    if !value.is_empty() {
        buf.put_u8(b' ');
        buf.put_slice(value.as_bytes());
    }
    buf.put_u8(b'\n');
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
        match rest.find(is_line_break) {
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

/// An event in wire form: its bytes, shared by every client that receives
/// it, and its id (kept for `Last-Event-ID` replay).
///
/// # Examples
///
/// ```
/// use ringstream::sse::{EncodedEvent, Event};
///
/// let encoded: EncodedEvent = Event::new().data("x").into();
/// let copy = encoded.clone(); // a reference count, not a copy of the bytes
/// assert_eq!(copy.bytes().as_ptr(), encoded.bytes().as_ptr());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedEvent {
    id: Option<Arc<str>>,
    bytes: Bytes,
}

impl EncodedEvent {
    /// The event's id, if it has one.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// The wire bytes (a cheap reference-counted handle).
    pub fn bytes(&self) -> Bytes {
        self.bytes.clone()
    }

    /// The wire bytes, consuming the event.
    pub fn into_bytes(self) -> Bytes {
        self.bytes
    }

    /// Bytes encoded by another protocol (a WebSocket frame), carried
    /// through the same fan-out.
    pub(crate) fn raw(bytes: Bytes) -> EncodedEvent {
        EncodedEvent { id: None, bytes }
    }
}

impl From<Event> for EncodedEvent {
    fn from(event: Event) -> EncodedEvent {
        event.encode()
    }
}

impl From<&Event> for EncodedEvent {
    fn from(event: &Event) -> EncodedEvent {
        event.encode()
    }
}

/// Read the `Last-Event-ID` header of a request: the id of the last event a
/// reconnecting client received. An absent, empty or non-text header gives
/// `None`.
///
/// # Examples
///
/// ```
/// use ringstream::sse::last_event_id;
///
/// let mut headers = http::HeaderMap::new();
/// assert_eq!(last_event_id(&headers), None);
/// headers.insert("last-event-id", "41".parse().unwrap());
/// assert_eq!(last_event_id(&headers), Some("41"));
/// ```
pub fn last_event_id(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(LAST_EVENT_ID)
        .and_then(|value| value.to_str().ok())
        .filter(|id| !id.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<&str> {
        Lines::new(text).collect()
    }

    #[test]
    fn lines_split_at_every_break_kind() {
        assert_eq!(lines(""), [""]);
        assert_eq!(lines("a"), ["a"]);
        assert_eq!(lines("a\n"), ["a", ""]);
        assert_eq!(lines("a\r\nb\rc\nd"), ["a", "b", "c", "d"]);
        assert_eq!(lines("\r\r\n\n"), ["", "", "", ""]);
        assert_eq!(lines("a\n\rb"), ["a", "", "b"]);
    }
}
