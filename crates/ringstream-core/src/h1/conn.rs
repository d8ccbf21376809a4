//! Connection rules for one request/response exchange on a server
//! connection (RFC 9112 §9, RFC 9110 §10.1.1).
//!
//! An [`Exchange`] is made from a parsed [`RequestHead`] and answers every
//! question a server connection has between reading that head and reading
//! the next one:
//!
//! - which [`Decoder`] reads the request body ([`Exchange::decoder`]);
//! - whether, and when, to send `100 Continue` ([`Exchange::body_wanted`],
//!   [`Exchange::continue_before_head`]);
//! - how the response is framed and which framing and `Connection` fields
//!   its head carries ([`Exchange::write_head`]);
//! - whether the connection is kept alive, and how many bytes of an unread
//!   request body may be drained first ([`Exchange::after_response`]);
//! - whether the request asks for a protocol upgrade
//!   ([`Exchange::is_upgrade`]).
//!
//! # Order of calls
//!
//! 1. [`Exchange::new`] with the head; read the body with
//!    [`decoder`](Exchange::decoder). Before the first read of the body,
//!    call [`body_wanted`](Exchange::body_wanted) and send what it returns.
//! 2. When the response is ready, call
//!    [`continue_before_head`](Exchange::continue_before_head) with what
//!    became of the body, then [`write_head`](Exchange::write_head): it
//!    returns the [`Encoder`] for the response body.
//! 3. After the body, [`after_response`](Exchange::after_response) says
//!    whether to drain the rest of the request body, keep the connection or
//!    close it.
//!
//! Nothing here performs I/O: the connection sends the bytes it is handed
//! and awaits.
//!
//! # Examples
//!
//! ```
//! use ringstream_core::h1::{
//!     BodyState, Exchange, Field, HeadParser, Next, ResponseHead,
//! };
//! use ringstream_core::{Limits, SliceBuf};
//!
//! let mut fields = [Field::EMPTY; 16];
//! let wire = b"POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\
//!              Content-Length: 5\r\n\r\n";
//! let head = HeadParser::new(Limits::DEFAULT).parse(wire, &mut fields)?.unwrap();
//! let mut exchange = Exchange::new(&head);
//!
//! // The service asks for the body: invite the client first.
//! assert_eq!(exchange.body_wanted(), Some(&b"HTTP/1.1 100 Continue\r\n\r\n"[..]));
//! assert_eq!(exchange.body_wanted(), None);
//!
//! // ... the body is read to its end, the service answers ...
//! assert_eq!(exchange.continue_before_head(BodyState::Complete, 0), None);
//! let mut tx = [0u8; 128];
//! let mut out = SliceBuf::new(&mut tx);
//! let head = ResponseHead::new(200).date(b"Sun, 06 Nov 1994 08:49:37 GMT");
//! let encoder = exchange.write_head(&mut out, &head, [], Some(5))?;
//! assert!(out.written().ends_with(b"content-length: 5\r\n\r\n"));
//! assert!(encoder.sends_body());
//! assert_eq!(exchange.after_response(true, 0), Next::KeepAlive);
//! # Ok::<(), ringstream_core::Error>(())
//! ```

use super::decode::Decoder;
use super::encode::Encoder;
use super::framing::BodyFraming;
use super::head::{RequestHead, TargetForm};
use super::response::{write_head_with, ResponseHead};
use super::version::Version;
use crate::out::WriteBuf;
use crate::{Error, Limits};

/// The interim response that invites a client waiting on
/// `Expect: 100-continue` to send its body (RFC 9110 §15.2.1).
pub const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// Where `Expect: 100-continue` stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Continue {
    /// Not asked for (or HTTP/1.0, or no body).
    NotAsked,
    /// Asked for; `100 Continue` not sent yet.
    Due,
    /// `100 Continue` was sent.
    Sent,
}

/// What became of a request body by the time the response head is written.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::BodyState;
///
/// let state = BodyState::Unread { held: false, remaining: Some(10) };
/// assert_ne!(state, BodyState::Complete);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyState {
    /// The body has been read to its end (or there was none).
    Complete,
    /// Part of the body (maybe all of it) has not been read.
    Unread {
        /// Whether the service still holds the body and may read it while
        /// the response is written (an echo does).
        held: bool,
        /// Body bytes still announced, when the framing tells
        /// (`Content-Length`, or the rest of the current chunk).
        remaining: Option<u64>,
    },
}

/// What to do with the connection once a response has been written.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::Next;
///
/// assert_ne!(Next::KeepAlive, Next::Close);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Read the next request.
    KeepAlive,
    /// Read and discard the rest of the request body, at most `limit`
    /// bytes; keep the connection if it ends within them, close otherwise.
    Drain {
        /// Most body bytes to read and discard (bytes).
        limit: u64,
    },
    /// Read no further request: close the connection (after a `101`, the
    /// new protocol takes it over, or it is closed).
    Close,
}

/// The connection rules of one request/response exchange; see the
/// [module docs](self) for the order of calls.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::{Exchange, Field, HeadParser, Next};
/// use ringstream_core::Limits;
///
/// let mut fields = [Field::EMPTY; 8];
/// let head = HeadParser::new(Limits::DEFAULT)
///     .parse(b"GET / HTTP/1.0\r\n\r\n", &mut fields)?
///     .unwrap();
/// // HTTP/1.0 without `Connection: keep-alive` closes after the response.
/// assert_eq!(Exchange::new(&head).after_response(true, 0), Next::Close);
/// # Ok::<(), ringstream_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exchange {
    version: Version,
    is_head: bool,
    framing: BodyFraming,
    keep_alive: bool,
    upgrade: bool,
    /// The request is `OPTIONS *`, about the server as a whole.
    asterisk: bool,
    expect: Continue,
}

impl Exchange {
    /// The rules for the exchange that `head` starts.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{BodyFraming, Exchange, Field, HeadParser, CONTINUE};
    /// use ringstream_core::Limits;
    ///
    /// let wire = b"POST /up HTTP/1.1\r\nhost: a\r\ncontent-length: 3\r\n\
    ///              expect: 100-continue\r\n\r\n";
    /// let mut fields = [Field::EMPTY; 8];
    /// let head = HeadParser::new(Limits::DEFAULT).parse(wire, &mut fields)?.unwrap();
    /// let mut exchange = Exchange::new(&head);
    /// assert_eq!(exchange.body_framing(), BodyFraming::Length(3));
    /// assert!(exchange.is_keep_alive());
    /// // The client waits for `100 Continue` before it sends its body.
    /// assert_eq!(exchange.body_wanted(), Some(CONTINUE));
    /// assert_eq!(exchange.body_wanted(), None);
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    #[inline]
    pub fn new(head: &RequestHead<'_>) -> Exchange {
        let expect = if head.expect_continue && !head.framing.is_empty() {
            Continue::Due
        } else {
            Continue::NotAsked
        };
        Exchange {
            version: head.version,
            is_head: head.method == "HEAD",
            framing: head.framing,
            keep_alive: head.keep_alive,
            upgrade: head.upgrade,
            asterisk: head.target_form == TargetForm::Asterisk,
            expect,
        }
    }

    /// Whether the server answers in the service's place: an `OPTIONS *`
    /// (RFC 9110 §9.3.7, a question about the server itself, which a router
    /// of paths knows nothing of) that the service answered with `status`
    /// 404 gets `200 OK` with an empty body instead.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{Exchange, Field, HeadParser};
    /// use ringstream_core::Limits;
    ///
    /// let mut parser = HeadParser::new(Limits::DEFAULT);
    /// let mut fields = [Field::EMPTY; 4];
    /// let head = parser
    ///     .parse(b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", &mut fields)
    ///     .unwrap()
    ///     .unwrap();
    /// let exchange = Exchange::new(&head);
    /// assert!(exchange.answers_for_service(404));
    /// assert!(!exchange.answers_for_service(200));
    /// ```
    #[inline]
    pub const fn answers_for_service(&self, status: u16) -> bool {
        status == 404 && self.asterisk
    }

    /// The request's HTTP version.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{Exchange, Field, HeadParser, Version};
    /// use ringstream_core::Limits;
    ///
    /// let mut fields = [Field::EMPTY; 8];
    /// let head = HeadParser::new(Limits::DEFAULT).parse(b"GET / HTTP/1.0\r\n\r\n", &mut fields)?.unwrap();
    /// assert_eq!(Exchange::new(&head).version(), Version::Http10);
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    #[inline]
    pub const fn version(&self) -> Version {
        self.version
    }

    /// How the request body is delimited.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{BodyFraming, Exchange, Field, HeadParser};
    /// use ringstream_core::Limits;
    ///
    /// let mut fields = [Field::EMPTY; 8];
    /// let wire = b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
    /// let head = HeadParser::new(Limits::DEFAULT).parse(wire, &mut fields)?.unwrap();
    /// assert_eq!(Exchange::new(&head).body_framing(), BodyFraming::Chunked);
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    #[inline]
    pub const fn body_framing(&self) -> BodyFraming {
        self.framing
    }

    /// Whether the request asks to switch protocols (RFC 9110 §7.8): HTTP/1.1
    /// with `Upgrade` and `Connection: upgrade`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{Exchange, Field, HeadParser};
    /// use ringstream_core::Limits;
    ///
    /// let wire = b"GET /chat HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n";
    /// let mut fields = [Field::EMPTY; 8];
    /// let head = HeadParser::new(Limits::DEFAULT).parse(wire, &mut fields)?.unwrap();
    /// assert!(Exchange::new(&head).is_upgrade());
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    #[inline]
    pub const fn is_upgrade(&self) -> bool {
        self.upgrade
    }

    /// Whether the connection may still carry another request.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{Exchange, Field, HeadParser};
    /// use ringstream_core::Limits;
    ///
    /// let mut fields = [Field::EMPTY; 8];
    /// let wire = b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
    /// let head = HeadParser::new(Limits::DEFAULT).parse(wire, &mut fields)?.unwrap();
    /// assert!(!Exchange::new(&head).is_keep_alive());
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    #[inline]
    pub const fn is_keep_alive(&self) -> bool {
        self.keep_alive
    }

    /// The decoder for the request body (RFC 9112 §6.3).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{Exchange, Field, HeadParser};
    /// use ringstream_core::Limits;
    ///
    /// let wire = b"POST /led HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\non";
    /// let mut fields = [Field::EMPTY; 8];
    /// let head = HeadParser::new(Limits::DEFAULT).parse(wire, &mut fields)?.unwrap();
    /// let body = &wire[head.head_len..];
    /// let mut decoder = Exchange::new(&head).decoder(Limits::DEFAULT);
    /// let progress = decoder.decode(body)?;
    /// assert_eq!(&body[progress.data], b"on");
    /// assert!(progress.finished);
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    #[inline]
    pub fn decoder(&self, limits: Limits) -> Decoder {
        Decoder::new(self.framing, limits)
    }

    /// Close the connection after this exchange (for instance because the
    /// server is shutting down).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{Exchange, Field, HeadParser};
    /// use ringstream_core::Limits;
    ///
    /// let mut fields = [Field::EMPTY; 8];
    /// let wire = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";
    /// let head = HeadParser::new(Limits::DEFAULT).parse(wire, &mut fields)?.unwrap();
    /// let mut exchange = Exchange::new(&head);
    /// assert!(exchange.is_keep_alive());
    /// exchange.close(); // the server is shutting down
    /// assert!(!exchange.is_keep_alive());
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    #[inline]
    pub fn close(&mut self) {
        self.keep_alive = false;
    }

    /// The request body is about to be read for the first time: the bytes to
    /// send before reading ([`CONTINUE`] when the client waits for it), once.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{Exchange, Field, HeadParser};
    /// use ringstream_core::Limits;
    ///
    /// // No `Expect: 100-continue`: nothing to send before reading the body.
    /// let mut fields = [Field::EMPTY; 8];
    /// let wire = b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n";
    /// let head = HeadParser::new(Limits::DEFAULT).parse(wire, &mut fields)?.unwrap();
    /// assert_eq!(Exchange::new(&head).body_wanted(), None);
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    #[inline]
    pub fn body_wanted(&mut self) -> Option<&'static [u8]> {
        if self.expect == Continue::Due {
            self.expect = Continue::Sent;
            Some(CONTINUE)
        } else {
            None
        }
    }

    /// The response is ready and `body` says what became of the request
    /// body: the bytes to send before the response head.
    ///
    /// A client waiting for `100 Continue` is invited now if the service
    /// still holds the body (it may read it while the response is written);
    /// otherwise it was never invited, may or may not send its body, and the
    /// connection will close. A body dropped unread with more than
    /// `drain_limit` bytes announced also closes the connection, and the
    /// response head says so.
    ///
    /// # Examples
    ///
    /// A client waits for `100 Continue`, and the service answers without
    /// asking for the body: the client is never invited, and the connection
    /// closes after the response.
    ///
    /// ```
    /// use ringstream_core::h1::{BodyState, Exchange, Field, HeadParser, Next};
    /// use ringstream_core::Limits;
    ///
    /// let wire = b"PUT /f HTTP/1.1\r\nHost: a\r\nContent-Length: 9\r\nExpect: 100-continue\r\n\r\n";
    /// let mut fields = [Field::EMPTY; 8];
    /// let head = HeadParser::new(Limits::DEFAULT).parse(wire, &mut fields)?.unwrap();
    /// let mut exchange = Exchange::new(&head);
    /// let body = BodyState::Unread { held: false, remaining: Some(9) };
    /// assert_eq!(exchange.continue_before_head(body, 1024), None);
    /// assert_eq!(exchange.after_response(false, 1024), Next::Close);
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    #[inline]
    pub fn continue_before_head(
        &mut self,
        body: BodyState,
        drain_limit: u64,
    ) -> Option<&'static [u8]> {
        let BodyState::Unread { held, remaining } = body else {
            return None;
        };
        if !held && remaining.is_some_and(|n| n > drain_limit) {
            self.keep_alive = false;
        }
        if self.expect != Continue::Due {
            return None;
        }
        if held {
            self.body_wanted()
        } else {
            self.keep_alive = false;
            None
        }
    }

    /// Writes the response head to `out` and returns the encoder of its
    /// body.
    ///
    /// `out` is any [`WriteBuf`]: the `Vec<u8>` of a server on a heap, or a
    /// buffer of fixed size — a [`SliceBuf`](crate::SliceBuf) over a
    /// transmit buffer, a [`FixedRing`](crate::FixedRing) — where a head that
    /// does not fit is [`Error::OutOfSpace`], the exchange unchanged: send
    /// what the buffer holds, then write the head again.
    ///
    /// The framing (RFC 9112 §6.3) is decided from the status, the request
    /// method and version, and the body length: `body_length` when the body
    /// knows it, else a valid `Content-Length` among `fields`. A response
    /// without a body (to `HEAD`, a `304`) advertises only the length a
    /// `GET` would have had: the service's `Content-Length` first (on a
    /// `304`, when it is not `0`), on `HEAD` a non-empty `body_length`,
    /// otherwise none — never one made up from an emptied body, and never
    /// `transfer-encoding` (RFC 9110 §8.6, §9.3.2, §15.4.5). The head
    /// writer owns the framing and connection fields: `Content-Length`,
    /// `Transfer-Encoding` and `Connection` among `fields` are not copied, a
    /// `Connection: close` among them closes the connection, and the head
    /// ends with the fields the decision needs (`content-length` or
    /// `transfer-encoding: chunked`; `connection: close`, or
    /// `connection: keep-alive` for an HTTP/1.0 client kept alive).
    ///
    /// A `101 (Switching Protocols)` ends HTTP on the connection
    /// ([`after_response`](Self::after_response) says [`Next::Close`]); when
    /// a `Connection` field among `fields` lists `upgrade`, its head says
    /// `connection: upgrade` (RFC 9110 §7.8) instead of `connection: close`.
    /// Another response whose fields list `upgrade` (a `426` with
    /// `Upgrade`) keeps that option beside the server's own: `connection:
    /// upgrade`, or `close, upgrade` when the connection closes.
    ///
    /// # Examples
    ///
    /// Into a fixed transmit buffer, without a heap:
    ///
    /// ```
    /// use ringstream_core::h1::{Exchange, Field, HeadParser, ResponseHead};
    /// use ringstream_core::{Error, Limits, SliceBuf};
    ///
    /// let mut fields = [Field::EMPTY; 8];
    /// let head = HeadParser::new(Limits::DEFAULT)
    ///     .parse(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n", &mut fields)?
    ///     .unwrap();
    /// let mut exchange = Exchange::new(&head);
    /// let response = ResponseHead::new(200);
    /// let fields = [(&b"content-type"[..], &b"text/plain"[..])];
    ///
    /// let mut small = [0u8; 32];
    /// let mut tx = SliceBuf::new(&mut small);
    /// let full = exchange.write_head(&mut tx, &response, fields, Some(2));
    /// assert_eq!(full, Err(Error::OutOfSpace));
    /// assert!(tx.is_empty());
    ///
    /// let mut storage = [0u8; 128];
    /// let mut tx = SliceBuf::new(&mut storage);
    /// let encoder = exchange.write_head(&mut tx, &response, fields, Some(2))?;
    /// assert_eq!(
    ///     tx.written(),
    ///     b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\n"
    /// );
    /// assert!(encoder.sends_body());
    /// # Ok::<(), Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Those of [`write_response_head`](super::write_response_head),
    /// [`Error::OutOfSpace`] among them; `out` is left as it was and the
    /// exchange unchanged.
    pub fn write_head<'a, I, O>(
        &mut self,
        out: &mut O,
        head: &ResponseHead<'_>,
        fields: I,
        body_length: Option<u64>,
    ) -> Result<Encoder, Error>
    where
        I: IntoIterator<Item = (&'a [u8], &'a [u8])>,
        O: WriteBuf + ?Sized,
    {
        let mut keep_alive = self.keep_alive;
        let version = self.version;
        let is_head = self.is_head;
        let mut framing = None;
        // After a `101` the connection carries the new protocol, never
        // another HTTP request (RFC 9110 §15.2.2).
        let switching = head.status == 101;
        write_head_with(out, head, fields, |seen| {
            keep_alive &= !seen.close && !switching;
            let length = if is_head || head.status == 304 {
                length_without_body(head.status, seen.content_length, body_length)
            } else {
                body_length.or(seen.content_length)
            };
            let f = super::response_framing(is_head, head.status, version, length);
            keep_alive &= !f.requires_close();
            framing = Some(f);
            // A response that lists `upgrade` among its `Connection`
            // options keeps it (RFC 9110 §7.8: a `426` or a `101` sending
            // `Upgrade` names it there too), beside the server's own.
            let connection: &[u8] = match (seen.upgrade, switching, keep_alive) {
                (true, true, _) => b"upgrade",
                (true, false, false) => b"close, upgrade",
                (true, false, true) if version == Version::Http10 => b"keep-alive, upgrade",
                (true, false, true) => b"upgrade",
                (false, _, false) => b"close",
                (false, _, true) if version == Version::Http10 => b"keep-alive",
                (false, _, true) => b"",
            };
            (f, connection)
        })?;
        self.keep_alive = keep_alive;
        Ok(Encoder::new(framing.unwrap_or(
            super::ResponseFraming::NoBody {
                content_length: None,
            },
        )))
    }

    /// After the response: keep the connection, drain the rest of the
    /// request body (at most `drain_limit` bytes) first, or close.
    /// `body_complete` says whether the request body was read to its end.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::{Exchange, Field, HeadParser, Next};
    /// use ringstream_core::Limits;
    ///
    /// let mut fields = [Field::EMPTY; 8];
    /// let head = HeadParser::new(Limits::DEFAULT)
    ///     .parse(b"GET / HTTP/1.1\r\nhost: a\r\n\r\n", &mut fields)?
    ///     .unwrap();
    /// let mut exchange = Exchange::new(&head);
    /// assert_eq!(exchange.after_response(true, 0), Next::KeepAlive);
    /// // The server is shutting down.
    /// exchange.close();
    /// assert_eq!(exchange.after_response(true, 0), Next::Close);
    /// # Ok::<(), ringstream_core::Error>(())
    /// ```
    #[inline]
    pub fn after_response(&self, body_complete: bool, drain_limit: u64) -> Next {
        if !self.keep_alive {
            Next::Close
        } else if body_complete {
            Next::KeepAlive
        } else if self.expect == Continue::Due {
            // The client was never invited and may never send its body.
            Next::Close
        } else {
            Next::Drain { limit: drain_limit }
        }
    }
}

/// The `Content-Length` a response that carries no body — one to `HEAD`,
/// or a `304` — advertises: the length a `200` to `GET` would have had, or
/// none (RFC 9110 §8.6, §9.3.2, §15.4.5). `field` is the first valid
/// `Content-Length` among the service's fields, `body` the exact size of the
/// body it returned (which the server does not send).
///
/// - The service's own field says it: a framework answering `HEAD` with
///   its `GET` handler sets the `GET` body's length there and empties the
///   body.
/// - On `HEAD` a body of known, non-zero size says it too: the service made
///   the `GET` body.
/// - An empty body says nothing (it is the emptied `GET` body, or a body
///   made for `HEAD`), and a body of unknown size says nothing either
///   (`GET` would be chunked): no length is invented.
/// - A `304` never takes its own body's size, and its field only when it is
///   not `0`: `0` is what a framework writes for the empty body of the
///   `304` itself, not the size of the representation.
const fn length_without_body(status: u16, field: Option<u64>, body: Option<u64>) -> Option<u64> {
    if status == 304 {
        return match field {
            Some(0) | None => None,
            Some(n) => Some(n),
        };
    }
    match (field, body) {
        (Some(n), _) => Some(n),
        (None, Some(0) | None) => None,
        (None, Some(n)) => Some(n),
    }
}
