//! The fields a server adds to every response — `date`, and `server` when
//! it names itself — kept as the bytes of a head, ready to be copied in one
//! piece.
//!
//! A head writer given a [`ResponseHead::date`](super::ResponseHead::date)
//! and a [`server`](super::ResponseHead::server) checks both values and
//! copies six pieces for every response. [`ServerFields`] checks the name
//! once, when it is made, and writes the date only when the second changes,
//! so that a response's own fields cost one copy.

use super::date::{HttpDate, HTTP_DATE_LEN};
use super::syntax::{is_field_value, is_ws, CRLF};
use crate::Error;

/// The longest server name [`ServerFields`] holds (bytes).
pub const MAX_SERVER_NAME: usize = 64;

const DATE_PREFIX: &[u8] = b"date: ";
const SERVER_PREFIX: &[u8] = b"server: ";
/// Where the date's value starts in the bytes.
const DATE_AT: usize = DATE_PREFIX.len();
/// The `date` field line: name, value, CRLF.
const DATE_LINE: usize = DATE_PREFIX.len() + HTTP_DATE_LEN + CRLF.len();
const CAPACITY: usize = DATE_LINE + SERVER_PREFIX.len() + MAX_SERVER_NAME + CRLF.len();

/// A response's `date` and `server` field lines, checked once and re-dated
/// once a second: give them to a head with
/// [`ResponseHead::server_fields`](super::ResponseHead::server_fields).
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::{ResponseFraming, ResponseHead, ServerFields, write_response_head};
///
/// let mut own = ServerFields::new(Some(b"ringstream")).unwrap();
/// own.update(784_111_777);
/// assert_eq!(
///     own.as_bytes(),
///     b"date: Sun, 06 Nov 1994 08:49:37 GMT\r\nserver: ringstream\r\n"
/// );
///
/// let mut out = Vec::new();
/// let head = ResponseHead::new(200).server_fields(&own);
/// write_response_head(&mut out, &head, [], ResponseFraming::Length(2), false).unwrap();
/// assert_eq!(
///     out,
///     b"HTTP/1.1 200 OK\r\ndate: Sun, 06 Nov 1994 08:49:37 GMT\r\n\
///       server: ringstream\r\ncontent-length: 2\r\n\r\n"
/// );
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ServerFields {
    bytes: [u8; CAPACITY],
    len: usize,
    /// The second the date was written for.
    secs: u64,
}

impl ServerFields {
    /// The field lines of a server named `server` (no `server` field with
    /// `None`), dated at the Unix epoch until [`update`](Self::update) is
    /// called.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::ServerFields;
    ///
    /// let anonymous = ServerFields::new(None).unwrap();
    /// assert_eq!(anonymous.as_bytes(), b"date: Thu, 01 Jan 1970 00:00:00 GMT\r\n");
    /// assert!(ServerFields::new(Some(b"bad\r\nname")).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidFieldValue`] when the name is not a valid field
    /// value (control bytes, leading or trailing whitespace), is empty, or
    /// is longer than [`MAX_SERVER_NAME`] bytes.
    pub fn new(server: Option<&[u8]>) -> Result<ServerFields, Error> {
        let mut fields = ServerFields::date_only();
        if let Some(name) = server {
            let clean = !name.is_empty()
                && name.len() <= MAX_SERVER_NAME
                && is_field_value(name)
                && !name.first().is_some_and(|&b| is_ws(b))
                && !name.last().is_some_and(|&b| is_ws(b));
            if !clean {
                return Err(Error::InvalidFieldValue);
            }
            for piece in [SERVER_PREFIX, name, CRLF] {
                fields.bytes[fields.len..fields.len + piece.len()].copy_from_slice(piece);
                fields.len += piece.len();
            }
        }
        Ok(fields)
    }

    /// The `date` line alone (no `server` field), dated at the Unix epoch
    /// until [`update`](Self::update) is called.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::ServerFields;
    ///
    /// assert_eq!(ServerFields::date_only(), ServerFields::new(None).unwrap());
    /// ```
    pub fn date_only() -> ServerFields {
        let mut bytes = [0u8; CAPACITY];
        bytes[..DATE_AT].copy_from_slice(DATE_PREFIX);
        bytes[DATE_AT..DATE_AT + HTTP_DATE_LEN]
            .copy_from_slice(HttpDate::from_unix_secs(0).as_bytes());
        bytes[DATE_LINE - CRLF.len()..DATE_LINE].copy_from_slice(CRLF);
        ServerFields {
            bytes,
            len: DATE_LINE,
            secs: 0,
        }
    }

    /// Dates the fields at `unix_secs` (seconds since the Unix epoch); the
    /// date is formatted again only when the second changes.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::ServerFields;
    ///
    /// let mut own = ServerFields::new(None).unwrap();
    /// own.update(784_111_777);
    /// assert_eq!(own.date(), b"Sun, 06 Nov 1994 08:49:37 GMT");
    /// ```
    #[inline]
    pub fn update(&mut self, unix_secs: u64) {
        if unix_secs != self.secs {
            self.secs = unix_secs;
            self.bytes[DATE_AT..DATE_AT + HTTP_DATE_LEN]
                .copy_from_slice(HttpDate::from_unix_secs(unix_secs).as_bytes());
        }
    }

    /// The field lines, each ending in CRLF.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::ServerFields;
    ///
    /// let own = ServerFields::new(Some(b"ringstream")).unwrap();
    /// assert!(own.as_bytes().ends_with(b"\r\nserver: ringstream\r\n"));
    /// ```
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// The date's value, as the last [`update`](Self::update) wrote it.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::h1::ServerFields;
    ///
    /// let own = ServerFields::new(None).unwrap();
    /// assert_eq!(own.date(), b"Thu, 01 Jan 1970 00:00:00 GMT");
    /// ```
    #[inline]
    pub fn date(&self) -> &[u8] {
        &self.bytes[DATE_AT..DATE_AT + HTTP_DATE_LEN]
    }
}

impl core::fmt::Debug for ServerFields {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ServerFields")
            .field("date", &core::str::from_utf8(self.date()).unwrap_or(""))
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_date_changes_only_with_the_second() {
        let mut own = ServerFields::new(Some(b"x")).unwrap();
        own.update(784_111_777);
        let first = own.date().to_vec();
        own.update(784_111_777);
        assert_eq!(own.date(), &first[..]);
        own.update(784_111_778);
        assert_eq!(own.date(), b"Sun, 06 Nov 1994 08:49:38 GMT");
        assert!(own.as_bytes().ends_with(b"GMT\r\nserver: x\r\n"));
    }

    #[test]
    fn a_name_of_the_longest_length_fits_and_one_more_byte_does_not() {
        let name = [b'a'; MAX_SERVER_NAME];
        let own = ServerFields::new(Some(&name)).unwrap();
        assert_eq!(own.as_bytes().len(), CAPACITY);
        let longer = [b'a'; MAX_SERVER_NAME + 1];
        assert_eq!(
            ServerFields::new(Some(&longer)).err(),
            Some(Error::InvalidFieldValue)
        );
    }

    #[test]
    fn names_a_field_value_cannot_hold_are_refused() {
        for bad in [&b""[..], b" lead", b"trail ", b"a\rb", b"a\nb", b"a\x7fb"] {
            assert_eq!(
                ServerFields::new(Some(bad)).err(),
                Some(Error::InvalidFieldValue),
                "{bad:?}"
            );
        }
    }
}
