//! [`Field`]: one field line of a request head.

/// One field line of a request head: a name and its value.
///
/// Both borrow from the buffer that was parsed. The name is a token (so
/// ASCII); the value has its surrounding whitespace removed and holds no
/// CR, LF, NUL or other control byte except HTAB, but it may hold obs-text
/// (bytes 0x80–0xFF), hence `&[u8]`.
///
/// # Examples
///
/// ```
/// use ringstream_core::h1::Field;
///
/// let mut fields = [Field::EMPTY; 16];
/// assert_eq!(fields[0].name, "");
/// fields[0] = Field { name: "Host", value: b"example.com" };
/// assert_eq!(fields[0].value, b"example.com");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Field<'b> {
    /// The field name, as sent (compare it case-insensitively).
    pub name: &'b str,
    /// The field value, without leading or trailing whitespace.
    pub value: &'b [u8],
}

impl Field<'_> {
    /// An empty field, to fill the storage passed to [`HeadParser::parse`](super::HeadParser::parse).
    pub const EMPTY: Self = Field {
        name: "",
        value: b"",
    };
}
