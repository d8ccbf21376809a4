//! The async layer's error type.

use std::fmt;
use std::io;

#[cfg(feature = "tls")]
pub(crate) mod tls;

/// A boxed error from a user's service or body.
///
/// # Examples
///
/// ```
/// use ringstream::{BoxError, Error};
///
/// let cause: BoxError = "the database is down".into();
/// let err = Error::User(cause);
/// assert_eq!(err.kind(), std::io::ErrorKind::Other);
/// assert_eq!(err.status(), None);
/// ```
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// An error of ringstream's async layer: I/O, HTTP framing, a timeout, a
/// closed connection, or a body too large to buffer.
///
/// Every fallible operation of the library returns it, except the `poll_*`
/// methods of [`Stream`](crate::Stream): they are the building blocks of its
/// `AsyncRead` / `AsyncWrite` impls, whose signatures tokio fixes to
/// [`io::Error`], and report what the transport said unchanged.
///
/// The conversions go both ways without losing anything:
///
/// * `From<io::Error>` wraps a transport error as [`Error::Io`], and
///   unwraps an `io::Error` that was made from an `Error`, so a round trip
///   gives the original back.
/// * `From<Error> for io::Error` keeps the [kind](Error::kind) and carries
///   the `Error` itself as the source, so bodies built on it can be read as
///   `AsyncRead`, a `?` works in functions that return [`io::Result`], and
///   the cause stays reachable through
///   [`source`](std::error::Error::source).
/// * `From<ringstream_core::Error>` makes a framing error
///   [`Error::Protocol`] (and the core's `UnexpectedEof` an I/O error of that
///   kind).
///
/// # Examples
///
/// ```
/// use std::io;
/// use ringstream::Error;
///
/// let err = Error::from(ringstream::ringstream_core::Error::InvalidChunkSize);
/// assert_eq!(err.status(), Some(400));
/// assert_eq!(err.kind(), io::ErrorKind::InvalidData);
///
/// let io: io::Error = err.into();
/// assert_eq!(io.kind(), io::ErrorKind::InvalidData);
/// assert!(matches!(Error::from(io), Error::Protocol(_)));
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The transport failed.
    Io(io::Error),
    /// The peer broke HTTP/1.1 framing; carries the core's verdict.
    Protocol(ringstream_core::Error),
    /// A timeout expired; the [`Timeout`] says which one.
    TimedOut(Timeout),
    /// The connection or body was closed before the operation could finish.
    Closed,
    /// A user service or body failed.
    User(BoxError),
    /// More bytes were asked of a buffer than it holds (see
    /// [`Stream::try_consume`](crate::Stream::try_consume)).
    NotBuffered {
        /// The bytes asked for.
        requested: usize,
        /// The bytes buffered.
        buffered: usize,
    },
    /// A body is longer than the most its reader buffers
    /// ([`Incoming::read_all`](crate::Incoming::read_all),
    /// [`Incoming::read_all_limited`](crate::Incoming::read_all_limited)):
    /// the read fails rather than return part of the body. Its
    /// [`status`](Error::status) is 413, like that of the server's own body
    /// limit, which is `Protocol(BodyTooLarge)` (the core's verdict, see
    /// [`Limits::max_body_len`](ringstream_core::Limits::max_body_len)).
    BodyTooLarge {
        /// The most the reader would buffer, in bytes.
        limit: u64,
    },
    /// The WebSocket peer broke RFC 6455; carries the core's verdict, whose
    /// [`close_code`](ringstream_core::ws::Error::close_code) the
    /// connection was closed with.
    WebSocket(ringstream_core::ws::Error),
    /// A TLS configuration could not be built or reloaded (feature `tls`).
    #[cfg(feature = "tls")]
    Tls(tls::TlsError),
    /// An HTTP/2 connection or stream failed (feature `http2`): the peer
    /// broke RFC 9113, reset the stream, or the connection went away;
    /// carries `h2`'s error, whose `reason()` is the error code sent or
    /// received.
    #[cfg(feature = "http2")]
    Http2(h2::Error),
}

/// Which of the server's deadlines expired: what an
/// [`Error::TimedOut`] carries, so a caller can tell them apart without
/// reading its text.
///
/// Its [`Display`](fmt::Display) (and [`as_str`](Timeout::as_str)) names
/// what was under way; an [`Error::TimedOut`] shows it followed by
/// `timed out`.
///
/// # Examples
///
/// ```
/// use ringstream::error::{Error, Timeout};
///
/// let err = Error::TimedOut(Timeout::ResponseWrite);
/// assert!(matches!(err, Error::TimedOut(Timeout::ResponseWrite)));
/// assert_eq!(err.status(), Some(408));
/// assert_eq!(err.to_string(), "response write timed out");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Timeout {
    /// No request body bytes came for
    /// [`Config::body_read_timeout`](crate::server::Config::body_read_timeout).
    RequestBodyRead,
    /// The request body came slower than
    /// [`Config::body_min_rate`](crate::server::Config::body_min_rate) allows.
    RequestBodyRate,
    /// The request body as a whole took longer than
    /// [`Config::body_timeout`](crate::server::Config::body_timeout).
    RequestBodyTotal,
    /// A response write made no progress for
    /// [`Config::write_timeout`](crate::server::Config::write_timeout).
    ResponseWrite,
    /// A WebSocket peer answered no Ping within
    /// [`ws::Config::idle_timeout`](crate::ws::Config::idle_timeout).
    WebSocketPing,
    /// A WebSocket peer took no bytes of a send for
    /// [`ws::Config::write_timeout`](crate::ws::Config::write_timeout).
    WebSocketWrite,
}

impl Timeout {
    /// What was under way when the deadline expired, in lowercase words.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::error::Timeout;
    ///
    /// assert_eq!(Timeout::RequestBodyRead.as_str(), "request body read");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            Timeout::RequestBodyRead => "request body read",
            Timeout::RequestBodyRate => "request body too slow",
            Timeout::RequestBodyTotal => "request body took too long",
            Timeout::ResponseWrite => "response write",
            Timeout::WebSocketPing => "websocket ping",
            Timeout::WebSocketWrite => "websocket write",
        }
    }
}

impl fmt::Display for Timeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Error {
    /// The HTTP status a server answers with for this error, when there is
    /// one (framing errors, timeouts, a body too large).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::Error;
    /// use ringstream::ringstream_core::Error as Framing;
    ///
    /// assert_eq!(Error::BodyTooLarge { limit: 1024 }.status(), Some(413));
    /// assert_eq!(Error::from(Framing::BodyTooLarge).status(), Some(413));
    /// assert_eq!(Error::Closed.status(), None);
    /// ```
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Protocol(e) => Some(e.status()),
            Error::TimedOut(_) => Some(408),
            Error::BodyTooLarge { .. } => Some(413),
            _ => None,
        }
    }

    /// Whether this error is a timeout.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::error::{Error, Timeout};
    ///
    /// assert!(Error::TimedOut(Timeout::RequestBodyRead).is_timeout());
    /// // An I/O error of kind `TimedOut` is the transport's, not a deadline of the server's.
    /// let io = std::io::Error::from(std::io::ErrorKind::TimedOut);
    /// assert!(!Error::Io(io).is_timeout());
    /// ```
    pub fn is_timeout(&self) -> bool {
        matches!(self, Error::TimedOut(_))
    }

    /// The [`io::ErrorKind`] of this error: the transport's for
    /// [`Error::Io`], otherwise the kind it has once converted into an
    /// [`io::Error`].
    ///
    /// | variant | kind |
    /// |---------|------|
    /// | `Io(e)` | `e.kind()` |
    /// | `Protocol(BodyTooLarge)`, `BodyTooLarge { .. }` | [`FileTooLarge`](io::ErrorKind::FileTooLarge) |
    /// | `Protocol(UnexpectedEof)` | [`UnexpectedEof`](io::ErrorKind::UnexpectedEof) |
    /// | `Protocol(_)` (any other) | [`InvalidData`](io::ErrorKind::InvalidData) |
    /// | `TimedOut(_)` | [`TimedOut`](io::ErrorKind::TimedOut) |
    /// | `Closed` | [`NotConnected`](io::ErrorKind::NotConnected) |
    /// | `User(_)` | [`Other`](io::ErrorKind::Other) |
    /// | `NotBuffered { .. }` | [`InvalidInput`](io::ErrorKind::InvalidInput) |
    /// | `WebSocket(_)` | [`InvalidData`](io::ErrorKind::InvalidData) |
    ///
    /// # Examples
    ///
    /// ```
    /// use std::io;
    /// use ringstream::Error;
    ///
    /// let reset = Error::from(io::Error::from(io::ErrorKind::ConnectionReset));
    /// assert_eq!(reset.kind(), io::ErrorKind::ConnectionReset);
    /// assert_eq!(Error::Closed.kind(), io::ErrorKind::NotConnected);
    /// ```
    pub fn kind(&self) -> io::ErrorKind {
        match self {
            Error::Io(e) => e.kind(),
            Error::Protocol(ringstream_core::Error::UnexpectedEof) => io::ErrorKind::UnexpectedEof,
            Error::Protocol(ringstream_core::Error::BodyTooLarge) | Error::BodyTooLarge { .. } => {
                io::ErrorKind::FileTooLarge
            }
            Error::Protocol(_) => io::ErrorKind::InvalidData,
            Error::TimedOut(_) => io::ErrorKind::TimedOut,
            Error::Closed => io::ErrorKind::NotConnected,
            Error::User(_) => io::ErrorKind::Other,
            Error::NotBuffered { .. } => io::ErrorKind::InvalidInput,
            Error::WebSocket(_) => io::ErrorKind::InvalidData,
            #[cfg(feature = "tls")]
            Error::Tls(_) => io::ErrorKind::InvalidInput,
            #[cfg(feature = "http2")]
            Error::Http2(e) => match e.get_io() {
                Some(io) => io.kind(),
                None if e.is_reset() || e.is_go_away() => io::ErrorKind::ConnectionReset,
                None => io::ErrorKind::InvalidData,
            },
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "i/o error: {e}"),
            Error::Protocol(e) => write!(f, "http framing error: {e}"),
            Error::TimedOut(what) => write!(f, "{what} timed out"),
            Error::Closed => f.write_str("connection closed"),
            Error::User(e) => write!(f, "service error: {e}"),
            Error::NotBuffered {
                requested,
                buffered,
            } => write!(f, "{requested} bytes asked for, {buffered} buffered"),
            Error::BodyTooLarge { limit } => {
                write!(f, "body longer than the {limit} bytes its reader buffers")
            }
            Error::WebSocket(e) => write!(f, "websocket protocol error: {e}"),
            #[cfg(feature = "tls")]
            Error::Tls(e) => write!(f, "TLS configuration: {e}"),
            #[cfg(feature = "http2")]
            Error::Http2(e) => write!(f, "http/2 error: {e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            Error::Protocol(e) => Some(e),
            Error::WebSocket(e) => Some(e),
            #[cfg(feature = "tls")]
            Error::Tls(e) => Some(e),
            #[cfg(feature = "http2")]
            Error::Http2(e) => Some(e),
            Error::User(e) => Some(&**e),
            _ => None,
        }
    }
}

impl From<io::Error> for Error {
    /// Wraps `e` as [`Error::Io`], or gives back the `Error` that `e` was
    /// made from.
    fn from(e: io::Error) -> Self {
        if !e.get_ref().is_some_and(|inner| inner.is::<Error>()) {
            return Error::Io(e);
        }
        let kind = e.kind();
        match e.into_inner().map(|inner| inner.downcast::<Error>()) {
            Some(Ok(err)) => *err,
            // Not reached: the check above saw an `Error` inside.
            Some(Err(inner)) => Error::Io(io::Error::new(kind, inner)),
            None => Error::Io(kind.into()),
        }
    }
}

impl From<ringstream_core::Error> for Error {
    fn from(e: ringstream_core::Error) -> Self {
        if e == ringstream_core::Error::UnexpectedEof {
            return Error::Io(io::Error::new(io::ErrorKind::UnexpectedEof, e));
        }
        Error::Protocol(e)
    }
}

impl From<Error> for io::Error {
    /// Unwraps [`Error::Io`]; any other error becomes an `io::Error` of its
    /// [kind](Error::kind) that carries it.
    fn from(e: Error) -> Self {
        match e {
            Error::Io(e) => e,
            e => io::Error::new(e.kind(), e),
        }
    }
}

#[cfg(feature = "http2")]
impl From<h2::Error> for Error {
    fn from(e: h2::Error) -> Self {
        Error::Http2(e)
    }
}

#[cfg(feature = "tls")]
impl From<tls::TlsError> for Error {
    fn from(e: tls::TlsError) -> Self {
        Error::Tls(e)
    }
}
