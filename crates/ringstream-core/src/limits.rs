//! Limits: every size a peer controls has a default and a knob.

/// Caps on everything a peer controls in an HTTP/1.1 request.
///
/// Each field has a default suited to a general-purpose server; every one
/// can be changed. Sizes are in bytes.
///
/// # Examples
///
/// ```
/// use ringstream_core::Limits;
///
/// let limits = Limits { max_fields: 32, ..Limits::default() };
/// assert_eq!(limits.max_fields, 32);
/// assert_eq!(limits.max_head_len, Limits::DEFAULT.max_head_len);
///
/// // Request bodies of at most 10 MiB instead of 1 GiB.
/// let small = Limits { max_body_len: 10 << 20, ..Limits::DEFAULT };
/// assert_eq!(Limits::DEFAULT.max_body_len, 1 << 30);
/// assert_eq!(small.max_fields, 100);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Maximum size of a request head (request line, fields, final CRLF),
    /// in bytes. Exceeding it answers 431. Default 16 KiB.
    pub max_head_len: usize,
    /// Maximum number of header fields. Exceeding it answers 431. Default 100.
    pub max_fields: usize,
    /// Maximum length of the request-target, in bytes. Exceeding it answers
    /// 414. Default 8 KiB.
    pub max_target_len: usize,
    /// Maximum length of the method, in bytes. A longer method is longer than
    /// any the server implements and answers 501 (RFC 9112 §3), as soon as
    /// its first byte over the limit arrives. Default 32 bytes (the longest
    /// registered method, `UPDATEREDIRECTREF`, has 17).
    pub max_method_len: usize,
    /// Maximum bytes of chunk extensions on one chunk-size line, in bytes.
    /// Default 1 KiB.
    pub max_chunk_ext_len: usize,
    /// Maximum size of the whole trailer section, in bytes. Default 8 KiB.
    pub max_trailers_len: usize,
    /// Maximum number of trailer fields. Default 32.
    pub max_trailer_fields: usize,
    /// Maximum size of a request body, in bytes; a body of exactly this
    /// size is accepted. Exceeding it answers 413
    /// ([`Error::BodyTooLarge`](crate::Error::BodyTooLarge)): a
    /// `Content-Length` above it is refused with the head, before any of
    /// the body is read (and before `100 Continue` could be sent), and a
    /// chunked body fails at the chunk-size line of the first chunk that
    /// would take it past the limit, after the data before it. `u64::MAX`
    /// turns the limit off. Default 1 GiB (Apache's `LimitRequestBody`).
    pub max_body_len: u64,
}

impl Limits {
    /// The default limits, usable in `const` contexts.
    pub const DEFAULT: Limits = Limits {
        max_head_len: 16 * 1024,
        max_fields: 100,
        max_target_len: 8 * 1024,
        max_method_len: 32,
        max_chunk_ext_len: 1024,
        max_trailers_len: 8 * 1024,
        max_trailer_fields: 32,
        max_body_len: 1 << 30,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}
