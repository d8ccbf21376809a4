//! How a message body is delimited (RFC 9112 §6.3): a request's, which
//! its head decides, and a response's, which the framing rule decides from
//! the request, the status and what the response knows of its length.

use super::version::Version;

/// How a message body is delimited (RFC 9112 §6.3). A request head decides
/// `None`, `Length` or `Chunked`; `CloseDelimited` is for a response read
/// by a client.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::BodyFraming;
///
/// assert!(BodyFraming::None.is_empty());
/// assert!(BodyFraming::Length(0).is_empty());
/// assert!(!BodyFraming::Chunked.is_empty());
/// assert_eq!(BodyFraming::None.length(), Some(0));
/// assert_eq!(BodyFraming::CloseDelimited.length(), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BodyFraming {
    /// No body (no `Content-Length`, no `Transfer-Encoding`).
    None,
    /// A body of exactly this many bytes (`Content-Length`).
    Length(u64),
    /// A chunked body (`Transfer-Encoding: chunked`).
    Chunked,
    /// A body that ends when the peer closes the connection (a response
    /// without a length; never a request, RFC 9112 §6.3).
    CloseDelimited,
}

impl BodyFraming {
    /// Whether the framing says the body is empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::BodyFraming;
    ///
    /// assert!(BodyFraming::Length(0).is_empty());
    /// // A chunked body may turn out empty, but its framing does not say so.
    /// assert!(!BodyFraming::Chunked.is_empty());
    /// ```
    #[inline]
    pub const fn is_empty(self) -> bool {
        matches!(self, BodyFraming::None | BodyFraming::Length(0))
    }

    /// The body length in bytes, when the framing tells it (`None` is a
    /// length of zero).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::BodyFraming;
    ///
    /// assert_eq!(BodyFraming::Length(42).length(), Some(42));
    /// assert_eq!(BodyFraming::Chunked.length(), None);
    /// ```
    #[inline]
    pub const fn length(self) -> Option<u64> {
        match self {
            BodyFraming::None => Some(0),
            BodyFraming::Length(n) => Some(n),
            BodyFraming::Chunked | BodyFraming::CloseDelimited => None,
        }
    }
}

/// How a response body is delimited on the wire (RFC 9112 §6.3).
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::{response_framing, ResponseFraming};
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
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::ResponseFraming;
    ///
    /// assert!(ResponseFraming::Chunked.has_body());
    /// // A response to `HEAD` advertises a length but sends no body.
    /// assert!(!ResponseFraming::NoBody { content_length: Some(5) }.has_body());
    /// ```
    pub const fn has_body(self) -> bool {
        !matches!(self, ResponseFraming::NoBody { .. })
    }

    /// Whether the connection must close after the response.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::ResponseFraming;
    ///
    /// assert!(ResponseFraming::CloseDelimited.requires_close());
    /// assert!(!ResponseFraming::Length(5).requires_close());
    /// ```
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
/// use ringstream_core::h1::{response_framing, ResponseFraming};
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
