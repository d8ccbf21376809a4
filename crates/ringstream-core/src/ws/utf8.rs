//! Incremental UTF-8 validation for text messages that arrive in pieces.

use core::str;

use crate::ws::Error;

/// Validates UTF-8 fed in pieces split anywhere, even inside a code point.
///
/// It keeps at most three bytes: the start of a code point cut off at the
/// end of a piece. An invalid byte is reported as soon as it is fed, even
/// mid-message — a sequence that can no longer become valid (`0xE0 0x80`,
/// a surrogate, a lead byte above `0xF4`) fails without waiting for more —
/// and [`finish`](Self::finish) reports a code point left incomplete at the
/// end (RFC 6455 §8.1: a text message must be valid UTF-8 as a whole).
///
/// The [`Decoder`](crate::ws::Decoder) runs one over every uncompressed
/// text message; a permessage-deflate layer runs one over the inflated
/// bytes.
///
/// # Examples
///
/// ```
/// use ringstream_core::ws::{Error, Utf8Validator};
///
/// // "€" is E2 82 AC; here it is split across three pieces.
/// let mut utf8 = Utf8Validator::new();
/// utf8.feed(b"price: \xe2")?;
/// utf8.feed(b"\x82")?;
/// assert!(!utf8.is_complete());
/// utf8.feed(b"\xac")?;
/// utf8.finish()?;
///
/// // 0xE2 0x28 can never be valid: reported at once.
/// let mut utf8 = Utf8Validator::new();
/// utf8.feed(b"\xe2")?;
/// assert_eq!(utf8.feed(b"\x28 and more"), Err(Error::InvalidUtf8));
///
/// // A code point cut off at the end of the message.
/// let mut utf8 = Utf8Validator::new();
/// utf8.feed(b"\xf0\x9f\x98")?;
/// assert_eq!(utf8.finish(), Err(Error::InvalidUtf8));
/// # Ok::<(), Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Utf8Validator {
    /// The start of an incomplete code point: `len` bytes, at most 3.
    pending: [u8; 4],
    len: u8,
}

impl Utf8Validator {
    /// A validator at the start of a text.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::Utf8Validator;
    ///
    /// // "é" split between two pieces.
    /// let mut utf8 = Utf8Validator::new();
    /// utf8.feed(&[0xc3])?;
    /// assert!(!utf8.is_complete());
    /// utf8.feed(&[0xa9])?;
    /// utf8.finish()?;
    /// # Ok::<(), ringstream_core::ws::Error>(())
    /// ```
    pub const fn new() -> Utf8Validator {
        Utf8Validator {
            pending: [0; 4],
            len: 0,
        }
    }

    /// Validates the next piece of the text.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{Error, Utf8Validator};
    ///
    /// // No UTF-8 text holds the byte 0xff.
    /// assert_eq!(Utf8Validator::new().feed(b"ok \xff"), Err(Error::InvalidUtf8));
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidUtf8`] if the text so far cannot be the start of
    /// valid UTF-8. The validator's state is then unspecified; start a new
    /// one for the next text.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let mut bytes = bytes;
        if self.len > 0 {
            // Complete the pending code point from the front of `bytes`.
            let have = usize::from(self.len);
            let need = sequence_len(self.pending[0]).saturating_sub(have);
            let take = need.min(bytes.len());
            let mut joined = self.pending;
            joined[have..have + take].copy_from_slice(&bytes[..take]);
            match str::from_utf8(&joined[..have + take]) {
                Ok(_) => {
                    self.len = 0;
                    bytes = &bytes[take..];
                }
                Err(e) if e.error_len().is_none() => {
                    // Still incomplete: `bytes` ran out before the code
                    // point did.
                    self.pending = joined;
                    self.len = (have + take) as u8;
                    return Ok(());
                }
                Err(_) => return Err(Error::InvalidUtf8),
            }
        }
        match str::from_utf8(bytes) {
            Ok(_) => Ok(()),
            Err(e) if e.error_len().is_none() => {
                // A valid prefix of a code point, at most 3 bytes.
                let rest = &bytes[e.valid_up_to()..];
                self.pending[..rest.len()].copy_from_slice(rest);
                self.len = rest.len() as u8;
                Ok(())
            }
            Err(_) => Err(Error::InvalidUtf8),
        }
    }

    /// Ends the text: checks that no code point is left incomplete, and
    /// resets the validator for the next text.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{Error, Utf8Validator};
    ///
    /// // "€" cut after two of its three bytes.
    /// let mut utf8 = Utf8Validator::new();
    /// utf8.feed(&[0xe2, 0x82])?;
    /// assert_eq!(utf8.finish(), Err(Error::InvalidUtf8));
    /// # Ok::<(), Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidUtf8`] if the text ends inside a code point.
    pub fn finish(&mut self) -> Result<(), Error> {
        let complete = self.is_complete();
        *self = Utf8Validator::new();
        if complete {
            Ok(())
        } else {
            Err(Error::InvalidUtf8)
        }
    }

    /// Whether the text so far ends on a code point boundary.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::Utf8Validator;
    ///
    /// let mut utf8 = Utf8Validator::new();
    /// utf8.feed("€".as_bytes())?;
    /// assert!(utf8.is_complete());
    /// utf8.feed(&[0xe2])?; // the first byte of another "€"
    /// assert!(!utf8.is_complete());
    /// # Ok::<(), ringstream_core::ws::Error>(())
    /// ```
    pub const fn is_complete(&self) -> bool {
        self.len == 0
    }
}

/// The length of the UTF-8 sequence a lead byte starts. Only called on a
/// byte that `str::from_utf8` accepted as the start of a sequence.
const fn sequence_len(lead: u8) -> usize {
    match lead {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    /// Feeds `bytes` in the pieces cut at `cuts` (ascending) and finishes.
    fn validate(bytes: &[u8], cuts: &[usize]) -> Result<(), Error> {
        let mut v = Utf8Validator::new();
        let mut start = 0;
        for &cut in cuts.iter().chain([bytes.len()].iter()) {
            v.feed(&bytes[start..cut])?;
            start = cut;
        }
        v.finish()
    }

    fn samples() -> Vec<Vec<u8>> {
        let mut s: Vec<Vec<u8>> = [
            &b"plain ascii"[..],
            "a\u{e9}\u{20ac}\u{1d11e}z".as_bytes(),
            "\u{10ffff}\u{800}\u{7ff}\u{80}\u{ffff}".as_bytes(),
            b"\xe2\x28\xa1",
            b"\xc0\xaf",
            b"\xed\xa0\x80",
            b"\xf4\x90\x80\x80",
            b"\xf5",
            b"ok\xf0\x9f\x98",
            b"\xe0\x80\x80",
            b"\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80edited",
            b"\x80",
            b"",
        ]
        .iter()
        .map(|b| b.to_vec())
        .collect();
        // Every two-byte sequence, to cover all lead and continuation bytes.
        for a in 0..=255u8 {
            for b in [0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff] {
                s.push([a, b].to_vec());
                s.push([a, b, 0x80, 0x80].to_vec());
            }
        }
        s
    }

    #[test]
    fn any_two_way_split_agrees_with_from_utf8() {
        for bytes in samples() {
            let expected = str::from_utf8(&bytes).is_ok();
            for cut in 0..=bytes.len() {
                assert_eq!(
                    validate(&bytes, &[cut]).is_ok(),
                    expected,
                    "{bytes:x?} at {cut}"
                );
            }
            let every: Vec<usize> = (1..bytes.len()).collect();
            assert_eq!(
                validate(&bytes, &every).is_ok(),
                expected,
                "{bytes:x?} bytewise"
            );
        }
    }

    #[test]
    fn an_invalid_byte_fails_the_feed_that_brings_it() {
        for bytes in samples() {
            let Err(e) = str::from_utf8(&bytes) else {
                continue;
            };
            let Some(error_len) = e.error_len() else {
                continue;
            };
            // The invalid sequence is `bytes[valid_up_to..bad]`; the byte
            // that shows it invalid is its last or the one after it. Fed
            // one byte at a time, the feed of that byte fails.
            let bad = e.valid_up_to() + error_len;
            let mut v = Utf8Validator::new();
            let failed_at = (0..bytes.len()).find(|&i| v.feed(&bytes[i..=i]).is_err());
            assert!(failed_at.is_some_and(|i| i <= bad), "{bytes:x?}");
        }
    }
}
