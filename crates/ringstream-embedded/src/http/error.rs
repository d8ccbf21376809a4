//! The error of serving a connection.

use core::fmt;

/// What ended an exchange: an I/O error of the connection, a deadline, a
/// client that went away, or a request the core refused. `E` is the
/// connection's own error type (`IO::Error`).
///
/// # Examples
///
/// ```
/// use ringstream_embedded::http::Error;
///
/// let refused: Error<()> = Error::Http(ringstream_core::Error::InvalidChunkSize);
/// assert_eq!(refused.status(), Some(400));
/// assert_eq!(Error::<()>::TimedOut.status(), Some(408));
/// let bad_field: Error<()> = Error::Response(ringstream_core::Error::InvalidFieldValue);
/// assert_eq!(bad_field.status(), Some(500));
/// assert_eq!(Error::Io(()).status(), None);
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error<E> {
    /// The connection failed.
    Io(E),
    /// A read or write stalled past its deadline
    /// ([`Config::io_timeout`](crate::Config::io_timeout)).
    TimedOut,
    /// The client closed the connection before the request body ended.
    Closed,
    /// The core refused the request: its body (bad chunked framing, a body
    /// over [`Limits::max_body_len`](ringstream_core::Limits)), or a head
    /// that left the receive buffer no room for its body.
    Http(ringstream_core::Error),
    /// The core refused the response: a field that is not a valid field,
    /// a head that does not fit in an empty transmit buffer, a
    /// `Content-Length` body that is short or long. Answered 500 when the
    /// head was not written.
    Response(ringstream_core::Error),
    /// One `write!` produced more than the transmit buffer had room for
    /// (at least half of it is free before a `write!`), or a `Display`
    /// implementation failed. Nothing is formatted twice, so the response
    /// cannot go on.
    Format,
    /// The handler used the [`Responder`](super::Responder) out of order:
    /// a second response head, or body bytes before a head.
    Misuse,
    /// The WebSocket client broke the protocol; the session was closed
    /// with the error's close code.
    WebSocket(ringstream_core::ws::Error),
}

impl<E> Error<E> {
    /// The status the client is answered with when this error comes before
    /// the response head: the core's status for a refused request
    /// ([`ringstream_core::Error::status`]), 408 for a stalled body, 500 for
    /// a response the core refused or a handler's mistake; `None`
    /// when there is nobody to answer (I/O failed, the client left).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::http::Error;
    ///
    /// // A body over the limit, refused before the response began.
    /// let refused: Error<()> = Error::Http(ringstream_embedded::ringstream_core::Error::BodyTooLarge);
    /// assert_eq!(refused.status(), Some(413));
    /// assert_eq!(Error::<()>::Closed.status(), None);
    /// ```
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Http(e) => Some(e.status()),
            Error::TimedOut => Some(408),
            Error::Response(_) | Error::Format | Error::Misuse => Some(500),
            Error::Io(_) | Error::Closed | Error::WebSocket(_) => None,
        }
    }
}

impl<E> From<ringstream_core::Error> for Error<E> {
    fn from(e: ringstream_core::Error) -> Self {
        Error::Http(e)
    }
}

impl<E: fmt::Debug> fmt::Display for Error<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "connection error: {e:?}"),
            Error::TimedOut => f.write_str("timed out"),
            Error::Closed => f.write_str("connection closed within the request body"),
            Error::Http(e) => fmt::Display::fmt(e, f),
            Error::Response(e) => write!(f, "response refused: {e}"),
            Error::Format => f.write_str("formatted output does not fit in the transmit buffer"),
            Error::Misuse => f.write_str("response written out of order"),
            Error::WebSocket(e) => write!(f, "websocket: {e}"),
        }
    }
}

impl<E: fmt::Debug> core::error::Error for Error<E> {}
