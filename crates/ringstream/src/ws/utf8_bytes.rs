//! [`Utf8Bytes`]: `Bytes` known to hold valid UTF-8, the payload of a text
//! message and the reason of a Close.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

use bytes::Bytes;

/// `Bytes` known to be valid UTF-8: the text of a [`Message::Text`] and the
/// reason of a [`CloseFrame`], as axum's `Utf8Bytes`.
///
/// It reads as a `&str` ([`as_str`](Self::as_str), `Deref<Target = str>`,
/// `Display`) and is cheap to clone (a reference count). A received text
/// message's bytes were checked as they arrived (the core's incremental
/// UTF-8 check): they are handed over as they lie in the read block,
/// neither scanned again nor copied. Made from a `String` it takes the
/// string's buffer; from `Bytes` or a `Vec<u8>` it checks them
/// ([`TryFrom`]).
///
/// [`Message::Text`]: super::Message::Text
/// [`CloseFrame`]: super::CloseFrame
///
/// # Examples
///
/// ```
/// use bytes::Bytes;
/// use ringstream::ws::Utf8Bytes;
///
/// let hello = Utf8Bytes::from_static("hello");
/// assert_eq!(hello.as_str(), "hello");
/// assert_eq!(hello, "hello");
/// assert_eq!(hello.len(), 5); // `str`'s methods, through `Deref`
/// assert_eq!(format!("{hello}, world"), "hello, world");
///
/// let owned = Utf8Bytes::from(String::from("wörld"));
/// assert_eq!(Bytes::from(owned), Bytes::from_static("wörld".as_bytes()));
///
/// assert!(Utf8Bytes::try_from(Bytes::from_static(b"\xff")).is_err());
/// ```
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Utf8Bytes(
    /// Valid UTF-8: every constructor checks it, or takes bytes that are
    /// (a `str`, or a payload the core's UTF-8 check has passed).
    Bytes,
);

impl Utf8Bytes {
    /// Text that lives for the whole program, without an allocation or a
    /// copy.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::ws::Utf8Bytes;
    ///
    /// const GOODBYE: Utf8Bytes = Utf8Bytes::from_static("Goodbye");
    /// assert_eq!(GOODBYE.as_str(), "Goodbye");
    /// ```
    #[must_use]
    pub const fn from_static(text: &'static str) -> Utf8Bytes {
        Utf8Bytes(Bytes::from_static(text.as_bytes()))
    }

    /// Bytes that the caller has checked to be valid UTF-8: a text
    /// message's payload or a Close reason that passed the core's UTF-8
    /// check as it arrived. Not checked again (in release builds).
    pub(crate) fn from_checked(bytes: Bytes) -> Utf8Bytes {
        debug_assert!(
            std::str::from_utf8(&bytes).is_ok(),
            "bytes passed as UTF-8 are not"
        );
        Utf8Bytes(bytes)
    }

    /// The text.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::ws::Utf8Bytes;
    ///
    /// let text = Utf8Bytes::from("κόσμε");
    /// assert_eq!(text.as_str().chars().count(), 5);
    /// ```
    pub fn as_str(&self) -> &str {
        // SAFETY: `self.0` is valid UTF-8: `from_static` and the `From`
        // impls take it from a `str` or `String`, `TryFrom` checks it with
        // `std::str::from_utf8`, and `from_checked` is given only payloads
        // the core's `Utf8Validator` passed whole (the decoder's text
        // messages and Close reasons, the inflater's text messages). The
        // bytes are never mutated: `Bytes` is immutable. Checking again
        // here would scan every text message twice.
        unsafe { std::str::from_utf8_unchecked(&self.0) }
    }

    /// The text as bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The underlying `Bytes`, without a copy.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::ws::Utf8Bytes;
    ///
    /// let bytes = Utf8Bytes::from_static("hi").into_bytes();
    /// assert_eq!(&bytes[..], b"hi");
    /// ```
    pub fn into_bytes(self) -> Bytes {
        self.0
    }
}

impl Deref for Utf8Bytes {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Utf8Bytes {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<[u8]> for Utf8Bytes {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl Borrow<str> for Utf8Bytes {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

/// Hashes as the `str` it holds, so that a `HashMap<Utf8Bytes, _>` is
/// looked up with a `&str`.
impl Hash for Utf8Bytes {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for Utf8Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Utf8Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl TryFrom<Bytes> for Utf8Bytes {
    type Error = std::str::Utf8Error;

    /// Checks `bytes`; no copy.
    fn try_from(bytes: Bytes) -> Result<Utf8Bytes, std::str::Utf8Error> {
        std::str::from_utf8(&bytes)?;
        Ok(Utf8Bytes(bytes))
    }
}

impl TryFrom<Vec<u8>> for Utf8Bytes {
    type Error = std::str::Utf8Error;

    /// Checks `bytes`; no copy.
    fn try_from(bytes: Vec<u8>) -> Result<Utf8Bytes, std::str::Utf8Error> {
        Utf8Bytes::try_from(Bytes::from(bytes))
    }
}

impl From<String> for Utf8Bytes {
    /// Takes the string's buffer, without a copy.
    fn from(text: String) -> Utf8Bytes {
        Utf8Bytes(Bytes::from(text))
    }
}

impl From<&str> for Utf8Bytes {
    fn from(text: &str) -> Utf8Bytes {
        Utf8Bytes(Bytes::copy_from_slice(text.as_bytes()))
    }
}

impl From<&String> for Utf8Bytes {
    fn from(text: &String) -> Utf8Bytes {
        Utf8Bytes::from(text.as_str())
    }
}

impl From<Box<str>> for Utf8Bytes {
    fn from(text: Box<str>) -> Utf8Bytes {
        Utf8Bytes::from(String::from(text))
    }
}

impl From<std::borrow::Cow<'_, str>> for Utf8Bytes {
    fn from(text: std::borrow::Cow<'_, str>) -> Utf8Bytes {
        Utf8Bytes::from(text.into_owned())
    }
}

impl From<Utf8Bytes> for Bytes {
    fn from(text: Utf8Bytes) -> Bytes {
        text.0
    }
}

/// Compares with anything a `&str` compares with: `&str`, `String`,
/// `&String`, `Cow<str>`.
impl<T> PartialEq<T> for Utf8Bytes
where
    for<'a> &'a str: PartialEq<T>,
{
    fn eq(&self, other: &T) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<str> for Utf8Bytes {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<Utf8Bytes> for str {
    fn eq(&self, other: &Utf8Bytes) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<Utf8Bytes> for String {
    fn eq(&self, other: &Utf8Bytes) -> bool {
        self.as_str() == other.as_str()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn every_constructor_holds_the_text_it_was_given() {
        let samples = ["", "hello", "wörld", "κόσμε", "🦀 crab", "a\0b"];
        for sample in samples {
            let made = [
                Utf8Bytes::from(sample),
                Utf8Bytes::from(sample.to_string()),
                Utf8Bytes::from(&sample.to_string()),
                Utf8Bytes::try_from(Bytes::copy_from_slice(sample.as_bytes())).unwrap(),
                Utf8Bytes::try_from(sample.as_bytes().to_vec()).unwrap(),
                Utf8Bytes::from_checked(Bytes::copy_from_slice(sample.as_bytes())),
            ];
            for text in made {
                assert_eq!(text.as_str(), sample);
                assert_eq!(text.as_bytes(), sample.as_bytes());
                assert_eq!(text.to_string(), sample);
                assert_eq!(format!("{text:?}"), format!("{sample:?}"));
            }
        }
    }

    #[test]
    fn bytes_that_are_not_utf8_are_refused() {
        let invalid: [&[u8]; 5] = [
            b"\xff",
            b"\xce",
            b"ok\xc0\xafno",
            b"\xed\xa0\x80",
            b"\xf4\x90\x80\x80",
        ];
        for bytes in invalid {
            assert!(Utf8Bytes::try_from(Bytes::from_static(bytes)).is_err());
            assert!(Utf8Bytes::try_from(bytes.to_vec()).is_err());
        }
    }

    #[test]
    fn the_text_is_shared_not_copied() {
        let bytes = Bytes::from(String::from("shared text"));
        let pointer = bytes.as_ptr();
        let text = Utf8Bytes::try_from(bytes).unwrap();
        assert_eq!(text.as_str().as_ptr(), pointer);
        let clone = text.clone();
        assert_eq!(clone.as_str().as_ptr(), pointer);
        assert_eq!(Bytes::from(clone).as_ptr(), pointer);
        assert_eq!(text.into_bytes().as_ptr(), pointer);
    }

    #[test]
    fn compares_and_hashes_as_its_str() {
        let text = Utf8Bytes::from_static("key");
        assert_eq!(text, "key");
        assert_eq!(text, *"key");
        assert_eq!(text, String::from("key"));
        assert_eq!(text, &String::from("key"));
        assert_eq!(text, std::borrow::Cow::from("key"));
        assert_eq!(*"key", text);
        assert_eq!(String::from("key"), text);
        assert_ne!(text, "other");
        let mut map = HashMap::new();
        map.insert(text, 1);
        assert_eq!(map.get("key"), Some(&1));
        assert!(Utf8Bytes::default().is_empty());
    }
}
