//! The closing handshake's vocabulary: close codes (RFC 6455 §7.4) and the
//! Close frame payload, built and parsed (RFC 6455 §5.5.1).

use core::fmt;

use crate::ws::close_code::CloseCode;
use crate::ws::frame::MAX_CONTROL_PAYLOAD_LEN;
use crate::ws::Error;

/// The longest reason a Close frame can carry: a control payload is at most
/// 125 bytes and the code takes two.
pub const MAX_CLOSE_REASON_LEN: usize = MAX_CONTROL_PAYLOAD_LEN - 2;

/// The payload of a Close frame, built on the stack: empty, or a code in
/// network byte order followed by a UTF-8 reason of at most
/// [`MAX_CLOSE_REASON_LEN`] bytes (RFC 6455 §5.5.1).
///
/// # Examples
///
/// ```
/// use ringstream_core::ws::{CloseCode, ClosePayload};
///
/// let payload = ClosePayload::new(CloseCode::GOING_AWAY, "restarting")?;
/// assert_eq!(payload.as_bytes(), b"\x03\xe9restarting");
/// assert_eq!(
///     ClosePayload::parse(payload.as_bytes())?,
///     Some((CloseCode::GOING_AWAY, "restarting"))
/// );
/// assert!(ClosePayload::EMPTY.as_bytes().is_empty());
/// # Ok::<(), ringstream_core::ws::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ClosePayload {
    buf: [u8; MAX_CONTROL_PAYLOAD_LEN],
    len: u8,
}

impl ClosePayload {
    /// The empty payload: a Close frame without a code (the peer reports
    /// [`CloseCode::NO_STATUS`]).
    pub const EMPTY: ClosePayload = ClosePayload {
        buf: [0; MAX_CONTROL_PAYLOAD_LEN],
        len: 0,
    };

    /// A payload with `code` and `reason`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{CloseCode, ClosePayload, Error};
    ///
    /// let payload = ClosePayload::new(CloseCode::NORMAL, "bye")?;
    /// assert_eq!(payload.as_bytes(), b"\x03\xe8bye");
    /// // 1005 only reports a missing code: it never crosses the wire.
    /// assert!(matches!(ClosePayload::new(CloseCode::NO_STATUS, ""), Err(Error::InvalidCloseCode)));
    /// # Ok::<(), Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCloseCode`] if `code` may not be sent
    /// ([`CloseCode::is_valid_on_wire`]); [`Error::ControlFrameTooLong`] if
    /// `reason` is longer than [`MAX_CLOSE_REASON_LEN`] bytes.
    pub fn new(code: CloseCode, reason: &str) -> Result<ClosePayload, Error> {
        if !code.is_valid_on_wire() {
            return Err(Error::InvalidCloseCode);
        }
        let reason = reason.as_bytes();
        let mut buf = [0; MAX_CONTROL_PAYLOAD_LEN];
        let (head, rest) = buf.split_at_mut(2);
        head.copy_from_slice(&code.0.to_be_bytes());
        rest.get_mut(..reason.len())
            .ok_or(Error::ControlFrameTooLong)?
            .copy_from_slice(reason);
        Ok(ClosePayload {
            buf,
            // At most 2 + 123 bytes.
            len: (2 + reason.len()) as u8,
        })
    }

    /// Parses a received Close payload: `None` for an empty one, else the
    /// code and the reason.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{ClosePayload, Error};
    ///
    /// assert_eq!(ClosePayload::parse(b""), Ok(None));
    /// assert_eq!(ClosePayload::parse(b"\x03"), Err(Error::InvalidClosePayload));
    /// assert_eq!(ClosePayload::parse(b"\x03\xed"), Err(Error::InvalidCloseCode));
    /// assert_eq!(ClosePayload::parse(b"\x03\xe8\xff"), Err(Error::InvalidCloseReason));
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidClosePayload`] for a one-byte payload,
    /// [`Error::InvalidCloseCode`] for a code that may not be on the wire,
    /// [`Error::InvalidCloseReason`] for a reason that is not UTF-8, and
    /// [`Error::ControlFrameTooLong`] for more than 125 bytes — in that
    /// order, so a bad code is reported before a bad reason.
    pub fn parse(payload: &[u8]) -> Result<Option<(CloseCode, &str)>, Error> {
        if payload.len() > MAX_CONTROL_PAYLOAD_LEN {
            return Err(Error::ControlFrameTooLong);
        }
        match payload {
            [] => Ok(None),
            [_] => Err(Error::InvalidClosePayload),
            [hi, lo, reason @ ..] => {
                let code = CloseCode(u16::from_be_bytes([*hi, *lo]));
                if !code.is_valid_on_wire() {
                    return Err(Error::InvalidCloseCode);
                }
                let reason = core::str::from_utf8(reason).map_err(|_| Error::InvalidCloseReason)?;
                Ok(Some((code, reason)))
            }
        }
    }

    /// The payload bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{CloseCode, ClosePayload};
    ///
    /// assert_eq!(ClosePayload::new(CloseCode::GOING_AWAY, "")?.as_bytes(), b"\x03\xe9");
    /// assert_eq!(ClosePayload::EMPTY.as_bytes(), b"");
    /// # Ok::<(), ringstream_core::ws::Error>(())
    /// ```
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..usize::from(self.len)).unwrap_or(&[])
    }

    /// The payload length in bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{CloseCode, ClosePayload};
    ///
    /// // Two bytes of code, then the reason.
    /// assert_eq!(ClosePayload::new(CloseCode::NORMAL, "bye")?.len(), 5);
    /// # Ok::<(), ringstream_core::ws::Error>(())
    /// ```
    #[allow(clippy::len_without_is_empty)]
    pub const fn len(&self) -> usize {
        self.len as usize
    }
}

impl AsRef<[u8]> for ClosePayload {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl fmt::Debug for ClosePayload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match ClosePayload::parse(self.as_bytes()) {
            Ok(Some((code, reason))) => f
                .debug_struct("ClosePayload")
                .field("code", &code.0)
                .field("reason", &reason)
                .finish(),
            _ => f.write_str("ClosePayload::EMPTY"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_u16_code_is_classified_as_rfc_6455_section_7_4_says() {
        for code in 0..=u16::MAX {
            let expected = matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999);
            assert_eq!(CloseCode(code).is_valid_on_wire(), expected, "{code}");
        }
    }

    #[test]
    fn reason_length_is_bounded_by_the_control_payload() {
        let longest = "x".repeat(MAX_CLOSE_REASON_LEN);
        let payload = ClosePayload::new(CloseCode::NORMAL, &longest).unwrap();
        assert_eq!(payload.len(), MAX_CONTROL_PAYLOAD_LEN);
        assert_eq!(
            ClosePayload::parse(payload.as_bytes()),
            Ok(Some((CloseCode::NORMAL, longest.as_str())))
        );
        let too_long = "x".repeat(MAX_CLOSE_REASON_LEN + 1);
        assert_eq!(
            ClosePayload::new(CloseCode::NORMAL, &too_long),
            Err(Error::ControlFrameTooLong)
        );
        assert_eq!(
            ClosePayload::new(CloseCode::ABNORMAL, ""),
            Err(Error::InvalidCloseCode)
        );
    }
}
