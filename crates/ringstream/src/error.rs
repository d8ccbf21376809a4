//! The async layer's error type.

use std::fmt;
use std::io;

/// A boxed error from a user's service or body.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// An error of ringstream's async layer: I/O, HTTP framing, a timeout, or a
/// closed connection.
///
/// It converts into [`io::Error`] (with a matching [`io::ErrorKind`]) so that
/// bodies built on it can be read as `AsyncRead` and composed with the rest
/// of the tokio ecosystem.
///
/// # Examples
///
/// ```
/// use ringstream::Error;
///
/// let err = Error::from(ringstream::ringstream_core::Error::InvalidChunkSize);
/// assert_eq!(err.status(), Some(400));
/// let io: std::io::Error = err.into();
/// assert_eq!(io.kind(), std::io::ErrorKind::InvalidData);
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The transport failed.
    Io(io::Error),
    /// The peer broke HTTP/1.1 framing; carries the core's verdict.
    Protocol(ringstream_core::Error),
    /// A timeout expired; the text says which one.
    TimedOut(&'static str),
    /// The connection or body was closed before the operation could finish.
    Closed,
    /// A user service or body failed.
    User(BoxError),
}

impl Error {
    /// The HTTP status a server answers with for this error, when there is
    /// one (framing errors and timeouts).
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Protocol(e) => Some(e.status()),
            Error::TimedOut(_) => Some(408),
            _ => None,
        }
    }

    /// Whether this error is a timeout.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Error::TimedOut(_))
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
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            Error::Protocol(e) => Some(e),
            Error::User(e) => Some(&**e),
            _ => None,
        }
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::Io(e)
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
    fn from(e: Error) -> Self {
        match e {
            Error::Io(e) => e,
            Error::Protocol(p) => io::Error::new(io::ErrorKind::InvalidData, p),
            Error::TimedOut(what) => io::Error::new(io::ErrorKind::TimedOut, Error::TimedOut(what)),
            Error::Closed => io::Error::new(io::ErrorKind::NotConnected, "connection closed"),
            Error::User(u) => io::Error::other(u),
        }
    }
}
