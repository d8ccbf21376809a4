//! The server side of the opening handshake (RFC 6455 §4.2): the checks of
//! the WebSocket fields of an upgrade request, and `Sec-WebSocket-Accept`.
//!
//! The HTTP parts of the request are the HTTP layer's: a `GET` on HTTP/1.1
//! whose head asks for an upgrade
//! ([`RequestHead::upgrade`](crate::h1::RequestHead::upgrade)). What is
//! left is WebSocket's own: `Upgrade` lists `websocket`,
//! `Sec-WebSocket-Version` is `13`, and `Sec-WebSocket-Key` is the base64
//! encoding of 16 bytes. The server then answers `101 Switching Protocols`
//! with `Upgrade: websocket`, `Connection: upgrade` and
//! `Sec-WebSocket-Accept` set to [`accept_key`] of the key.
//!
//! Subprotocols (`Sec-WebSocket-Protocol`) and extensions
//! (`Sec-WebSocket-Extensions`) are left to the application.
//!
//! SHA-1 comes from the `sha1_smol` crate and base64 from the `base64`
//! crate; both work without `std` or allocation.

use core::fmt;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

use crate::h1::{Exchange, Version};
use crate::ws::Error;

/// The GUID a server appends to the key before hashing (RFC 6455 §1.3).
pub const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// The one protocol version spoken, the value of `Sec-WebSocket-Version`
/// (RFC 6455 §4.1), and the value a server lists in that field when it
/// refuses another version.
pub const VERSION: &str = "13";

/// The length of a valid `Sec-WebSocket-Key`: 16 bytes in base64.
pub const KEY_LEN: usize = 24;

/// A `Sec-WebSocket-Accept` value: 28 base64 characters on the stack.
///
/// # Examples
///
/// ```
/// use ringstream_core::ws::accept_key;
///
/// let accept = accept_key(b"dGhlIHNhbXBsZSBub25jZQ==");
/// assert_eq!(accept.as_str(), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
/// assert_eq!(accept.to_string(), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct AcceptKey([u8; 28]);

impl AcceptKey {
    /// The value as text.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::accept_key;
    ///
    /// // The example of RFC 6455 §1.3.
    /// let key = accept_key(b"dGhlIHNhbXBsZSBub25jZQ==");
    /// assert_eq!(key.as_str(), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    /// ```
    pub fn as_str(&self) -> &str {
        // Base64 output is ASCII.
        core::str::from_utf8(&self.0).unwrap_or_default()
    }

    /// The value as bytes, ready for a header value.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::accept_key;
    ///
    /// // The example of RFC 6455 §1.3, as a header value.
    /// let key = accept_key(b"dGhlIHNhbXBsZSBub25jZQ==");
    /// assert_eq!(key.as_bytes(), b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    /// ```
    pub const fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl AsRef<[u8]> for AcceptKey {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl AsRef<str> for AcceptKey {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Display for AcceptKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for AcceptKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("AcceptKey").field(&self.as_str()).finish()
    }
}

/// `Sec-WebSocket-Accept` for `key`: the base64 of the SHA-1 of the key
/// (surrounding whitespace trimmed) followed by [`GUID`] (RFC 6455 §4.2.2).
/// The key is not checked; [`check_key`] or [`accept`] does that.
///
/// # Examples
///
/// The example of RFC 6455 §1.3:
///
/// ```
/// use ringstream_core::ws::accept_key;
///
/// assert_eq!(accept_key(b"dGhlIHNhbXBsZSBub25jZQ==").as_str(), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
/// ```
pub fn accept_key(key: &[u8]) -> AcceptKey {
    let mut sha1 = sha1_smol::Sha1::new();
    sha1.update(key.trim_ascii());
    sha1.update(GUID.as_bytes());
    let digest = sha1.digest().bytes();
    let mut out = [0u8; 28];
    // 20 bytes always encode to exactly 28 characters.
    let written = STANDARD.encode_slice(digest, &mut out).unwrap_or(0);
    debug_assert_eq!(written, out.len());
    AcceptKey(out)
}

/// Checks a `Sec-WebSocket-Key` value: the base64 encoding, with padding,
/// of exactly 16 bytes (RFC 6455 §4.1, §4.2.1). Surrounding whitespace is
/// ignored.
///
/// # Examples
///
/// ```
/// use ringstream_core::ws::{check_key, Error};
///
/// assert_eq!(check_key(b"dGhlIHNhbXBsZSBub25jZQ=="), Ok(()));
/// // 15 bytes; padding in the wrong place; not base64.
/// assert_eq!(check_key(b"dGhlIHNhbXBsZSBub25j"), Err(Error::InvalidKey));
/// assert_eq!(check_key(b"dGhlIHNhbXBsZSBub25jZQ=a"), Err(Error::InvalidKey));
/// assert_eq!(check_key(b"not base64 at all!!!!!=="), Err(Error::InvalidKey));
/// ```
///
/// # Errors
///
/// [`Error::InvalidKey`].
pub fn check_key(key: &[u8]) -> Result<(), Error> {
    let key = key.trim_ascii();
    if key.len() != KEY_LEN {
        return Err(Error::InvalidKey);
    }
    // 24 characters decode to at most 18 bytes.
    let mut decoded = [0u8; 18];
    match STANDARD.decode_slice(key, &mut decoded) {
        Ok(16) => Ok(()),
        _ => Err(Error::InvalidKey),
    }
}

/// Checks a `Sec-WebSocket-Version` value: it must be [`VERSION`]
/// (RFC 6455 §4.2.1). Surrounding whitespace is ignored.
///
/// # Examples
///
/// ```
/// use ringstream_core::ws::{check_version, Error};
///
/// assert_eq!(check_version(b"13"), Ok(()));
/// assert_eq!(check_version(b"8"), Err(Error::UnsupportedVersion));
/// ```
///
/// # Errors
///
/// [`Error::UnsupportedVersion`]: refuse with `426 Upgrade Required` and
/// `Sec-WebSocket-Version: 13` (RFC 6455 §4.4).
pub fn check_version(version: &[u8]) -> Result<(), Error> {
    if version.trim_ascii() == VERSION.as_bytes() {
        Ok(())
    } else {
        Err(Error::UnsupportedVersion)
    }
}

/// Whether an `Upgrade` field value lists the `websocket` protocol
/// (case-insensitively, RFC 6455 §4.2.1, RFC 9110 §7.8).
///
/// # Examples
///
/// ```
/// use ringstream_core::ws::is_websocket_upgrade;
///
/// assert!(is_websocket_upgrade(b"websocket"));
/// assert!(is_websocket_upgrade(b"h2c, WebSocket"));
/// assert!(!is_websocket_upgrade(b"websocket/2"));
/// assert!(!is_websocket_upgrade(b"h2c"));
/// ```
pub fn is_websocket_upgrade(upgrade: &[u8]) -> bool {
    upgrade
        .split(|&b| b == b',')
        .any(|protocol| protocol.trim_ascii().eq_ignore_ascii_case(b"websocket"))
}

/// Checks the WebSocket fields of an upgrade request and returns the
/// `Sec-WebSocket-Accept` value to answer with.
///
/// `fields` are the request's fields as (name, value) pairs; names are
/// compared case-insensitively and other fields are ignored. The checks, in
/// order: an `Upgrade` field lists `websocket`; there is exactly one
/// `Sec-WebSocket-Version` and it is `13`; there is exactly one
/// `Sec-WebSocket-Key` and it is the base64 of 16 bytes.
///
/// # Examples
///
/// ```
/// use ringstream_core::ws::{accept, Error};
///
/// let fields: [(&str, &[u8]); 4] = [
///     ("Host", b"server.example.com"),
///     ("Upgrade", b"websocket"),
///     ("Sec-WebSocket-Key", b"dGhlIHNhbXBsZSBub25jZQ=="),
///     ("Sec-WebSocket-Version", b"13"),
/// ];
/// assert_eq!(accept(fields)?.as_str(), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
///
/// let old: [(&str, &[u8]); 3] = [
///     ("upgrade", b"websocket"),
///     ("sec-websocket-key", b"dGhlIHNhbXBsZSBub25jZQ=="),
///     ("sec-websocket-version", b"8"),
/// ];
/// assert_eq!(accept(old).unwrap_err().status(), 426);
/// # Ok::<(), Error>(())
/// ```
///
/// # Errors
///
/// [`Error::NotWebSocket`], [`Error::UnsupportedVersion`] or
/// [`Error::InvalidKey`]; [`Error::status`] is the status to refuse with.
pub fn accept<'a, I>(fields: I) -> Result<AcceptKey, Error>
where
    I: IntoIterator<Item = (&'a str, &'a [u8])>,
{
    let mut upgrade = false;
    let mut version: Option<&[u8]> = None;
    let mut versions = 0usize;
    let mut key: Option<&[u8]> = None;
    let mut keys = 0usize;
    for (name, value) in fields {
        if name.eq_ignore_ascii_case("upgrade") {
            upgrade |= is_websocket_upgrade(value);
        } else if name.eq_ignore_ascii_case("sec-websocket-version") {
            versions += 1;
            version = Some(value);
        } else if name.eq_ignore_ascii_case("sec-websocket-key") {
            keys += 1;
            key = Some(value);
        }
    }
    if !upgrade {
        return Err(Error::NotWebSocket);
    }
    match version {
        Some(version) if versions == 1 => check_version(version)?,
        _ => return Err(Error::UnsupportedVersion),
    }
    match key {
        Some(key) if keys == 1 => {
            check_key(key)?;
            Ok(accept_key(key))
        }
        _ => Err(Error::InvalidKey),
    }
}

/// Checks a WebSocket opening over HTTP/2 (RFC 8441 §4, §5): an extended
/// CONNECT whose `:protocol` is `websocket`, with exactly one
/// `Sec-WebSocket-Version` of `13`. There is no key and no accept value:
/// a `200` opens the stream as the WebSocket.
///
/// `protocol` is the request's `:protocol` pseudo-field; `fields` its
/// fields as (name, value) pairs, as for [`accept`].
///
/// # Examples
///
/// ```
/// use ringstream_core::ws::{check_extended_connect, Error};
///
/// let fields: [(&str, &[u8]); 2] = [("sec-websocket-version", b"13"), ("origin", b"https://a")];
/// assert_eq!(check_extended_connect(b"websocket", fields), Ok(()));
/// assert_eq!(check_extended_connect(b"webtransport", fields), Err(Error::NotWebSocket));
/// let old: [(&str, &[u8]); 1] = [("sec-websocket-version", b"8")];
/// assert_eq!(check_extended_connect(b"websocket", old), Err(Error::UnsupportedVersion));
/// ```
///
/// # Errors
///
/// [`Error::NotWebSocket`] or [`Error::UnsupportedVersion`];
/// [`Error::status`] is the status to refuse with.
pub fn check_extended_connect<'a, I>(protocol: &[u8], fields: I) -> Result<(), Error>
where
    I: IntoIterator<Item = (&'a str, &'a [u8])>,
{
    if !protocol.eq_ignore_ascii_case(b"websocket") {
        return Err(Error::NotWebSocket);
    }
    let mut version: Option<&[u8]> = None;
    let mut versions = 0usize;
    for (name, value) in fields {
        if name.eq_ignore_ascii_case("sec-websocket-version") {
            versions += 1;
            version = Some(value);
        }
    }
    match version {
        Some(version) if versions == 1 => check_version(version),
        _ => Err(Error::UnsupportedVersion),
    }
}

/// The HTTP side of an opening handshake (RFC 6455 §4.1), in the order a
/// refusal is chosen: a `GET` ([`Error::NotGet`], 405), on HTTP/1.1
/// ([`Error::NotHttp11`]), asking to switch protocols (`Upgrade` and
/// `Connection: upgrade`, RFC 9110 §7.8; [`Error::NotWebSocket`], 426),
/// without a request body ([`Error::RequestBody`]: the bytes after the head
/// are the session's). Then [`accept`] checks the WebSocket fields.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::{Exchange, Field, HeadParser};
/// use ringstream_core::ws::{check_request, Error};
/// use ringstream_core::Limits;
///
/// let mut parser = HeadParser::new(Limits::DEFAULT);
/// let mut fields = [Field::EMPTY; 8];
/// let head = parser
///     .parse(
///         b"POST /ws HTTP/1.1\r\nHost: a\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n",
///         &mut fields,
///     )?
///     .expect("a complete head");
/// assert_eq!(check_request(head.method, &Exchange::new(&head)), Err(Error::NotGet));
/// assert_eq!(Error::NotGet.status(), 405);
/// # Ok::<(), ringstream_core::Error>(())
/// ```
///
/// # Errors
///
/// The first of the errors above that applies; [`Error::status`] is the
/// status to refuse with.
pub fn check_request(method: &str, exchange: &Exchange) -> Result<(), Error> {
    if method != "GET" {
        return Err(Error::NotGet);
    }
    if exchange.version() != Version::Http11 {
        return Err(Error::NotHttp11);
    }
    if !exchange.is_upgrade() {
        return Err(Error::NotWebSocket);
    }
    if !exchange.body_framing().is_empty() {
        return Err(Error::RequestBody);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The order of the HTTP checks, each case failing only the one rule.
    #[cfg(feature = "alloc")]
    #[test]
    fn a_handshake_is_a_bodiless_get_on_http11_asking_to_upgrade() {
        use crate::h1::{Field, HeadParser};
        use crate::Limits;
        let check = |wire: &[u8]| {
            let mut fields = [Field::EMPTY; 8];
            let mut parser = HeadParser::new(Limits::DEFAULT);
            let head = parser.parse(wire, &mut fields).unwrap().unwrap();
            check_request(head.method, &Exchange::new(&head))
        };
        let up = "Host: a\r\nConnection: upgrade\r\nUpgrade: websocket\r\n";
        let wire = |line: &str, extra: &str| alloc::format!("{line}\r\n{up}{extra}\r\n");
        assert_eq!(check(wire("GET / HTTP/1.1", "").as_bytes()), Ok(()));
        assert_eq!(
            check(wire("GET / HTTP/1.1", "Content-Length: 0\r\n").as_bytes()),
            Ok(())
        );
        assert_eq!(
            check(wire("POST / HTTP/1.0", "").as_bytes()),
            Err(Error::NotGet)
        );
        assert_eq!(
            check(wire("HEAD / HTTP/1.1", "").as_bytes()),
            Err(Error::NotGet)
        );
        assert_eq!(
            check(wire("GET / HTTP/1.0", "").as_bytes()),
            Err(Error::NotHttp11)
        );
        assert_eq!(
            check(b"GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\n\r\n"),
            Err(Error::NotWebSocket)
        );
        assert_eq!(
            check(wire("GET / HTTP/1.1", "Content-Length: 5\r\n").as_bytes()),
            Err(Error::RequestBody)
        );
        assert_eq!(
            check(wire("GET / HTTP/1.1", "Transfer-Encoding: chunked\r\n").as_bytes()),
            Err(Error::RequestBody)
        );
        assert_eq!(Error::RequestBody.status(), 400);
        assert_eq!(Error::NotHttp11.status(), 400);
    }

    #[test]
    fn keys_must_be_canonical_base64_of_16_bytes() {
        assert_eq!(check_key(b" AAAAAAAAAAAAAAAAAAAAAA== "), Ok(()));
        // Padding missing, wrong, or a non-zero trailing bit.
        assert_eq!(check_key(b"AAAAAAAAAAAAAAAAAAAAAA"), Err(Error::InvalidKey));
        assert_eq!(
            check_key(b"AAAAAAAAAAAAAAAAAAAAAAA="),
            Err(Error::InvalidKey)
        );
        assert_eq!(
            check_key(b"AAAAAAAAAAAAAAAAAAAAAB=="),
            Err(Error::InvalidKey)
        );
        // URL-safe alphabet.
        assert_eq!(
            check_key(b"________________________"),
            Err(Error::InvalidKey)
        );
        assert_eq!(check_key(b""), Err(Error::InvalidKey));
    }
}
