//! The HTTP version of a message.

/// The HTTP version of a message: ringstream speaks HTTP/1.0 and HTTP/1.1.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::Version;
///
/// assert_eq!(Version::Http11.as_str(), "HTTP/1.1");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Version {
    /// HTTP/1.0 (RFC 1945).
    Http10,
    /// HTTP/1.1 (RFC 9112).
    Http11,
}

impl Version {
    /// The protocol string as it appears on the wire.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::Version;
    ///
    /// assert_eq!(Version::Http11.as_str(), "HTTP/1.1");
    /// assert_eq!(Version::Http10.as_str(), "HTTP/1.0");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            Version::Http10 => "HTTP/1.0",
            Version::Http11 => "HTTP/1.1",
        }
    }
}
