//! The closing handshake's vocabulary: close codes (RFC 6455 §7.4) and the
//! Close frame payload, built and parsed (RFC 6455 §5.5.1).

use core::fmt;

use crate::ws::frame::MAX_CONTROL_PAYLOAD_LEN;
use crate::ws::Error;

/// The longest reason a Close frame can carry: a control payload is at most
/// 125 bytes and the code takes two.
pub const MAX_CLOSE_REASON_LEN: usize = MAX_CONTROL_PAYLOAD_LEN - 2;

/// A close code: the status an endpoint gives for closing (RFC 6455 §7.4).
///
/// Any `u16` can be held; [`is_valid_on_wire`](CloseCode::is_valid_on_wire)
/// says whether it may be sent in, or accepted from, a Close frame.
///
/// # Examples
///
/// ```
/// use ringstream_core::ws::CloseCode;
///
/// assert_eq!(CloseCode::NORMAL.as_u16(), 1000);
/// assert!(CloseCode(4000).is_valid_on_wire());
/// assert!(!CloseCode::NO_STATUS.is_valid_on_wire());
/// assert_eq!(CloseCode::GOING_AWAY.to_string(), "1001");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CloseCode(pub u16);

impl CloseCode {
    /// 1000: the purpose of the connection has been fulfilled.
    pub const NORMAL: CloseCode = CloseCode(1000);
    /// 1001: the endpoint is going away (a server shutting down, a browser
    /// leaving the page).
    pub const GOING_AWAY: CloseCode = CloseCode(1001);
    /// 1002: the peer broke the protocol.
    pub const PROTOCOL_ERROR: CloseCode = CloseCode(1002);
    /// 1003: the endpoint cannot accept this type of data (a text-only
    /// endpoint sent binary, for example).
    pub const UNSUPPORTED_DATA: CloseCode = CloseCode(1003);
    /// 1005: the Close frame carried no code. Reported locally, never sent.
    pub const NO_STATUS: CloseCode = CloseCode(1005);
    /// 1006: the connection ended without a Close frame. Reported locally,
    /// never sent.
    pub const ABNORMAL: CloseCode = CloseCode(1006);
    /// 1007: a message's data is not consistent with its type (text that is
    /// not UTF-8).
    pub const INVALID_PAYLOAD: CloseCode = CloseCode(1007);
    /// 1008: a message violates the endpoint's policy.
    pub const POLICY_VIOLATION: CloseCode = CloseCode(1008);
    /// 1009: a message is too big to process.
    pub const MESSAGE_TOO_BIG: CloseCode = CloseCode(1009);
    /// 1010: (sent by a client) the server did not negotiate an extension
    /// the client requires.
    pub const MANDATORY_EXTENSION: CloseCode = CloseCode(1010);
    /// 1011: (sent by a server) an unexpected condition kept it from
    /// fulfilling the request.
    pub const INTERNAL_ERROR: CloseCode = CloseCode(1011);
    /// 1012: the service is restarting (IANA registry).
    pub const SERVICE_RESTART: CloseCode = CloseCode(1012);
    /// 1013: the service is overloaded; try again later (IANA registry).
    pub const TRY_AGAIN_LATER: CloseCode = CloseCode(1013);
    /// 1014: a gateway or proxy got an invalid response upstream (IANA
    /// registry).
    pub const BAD_GATEWAY: CloseCode = CloseCode(1014);
    /// 1015: the TLS handshake failed. Reported locally, never sent.
    pub const TLS_HANDSHAKE: CloseCode = CloseCode(1015);

    /// The code as a number.
    pub const fn as_u16(self) -> u16 {
        self.0
    }

    /// Whether the code may appear in a Close frame, sent or received
    /// (RFC 6455 §7.4).
    ///
    /// Valid: 1000–1003 and 1007–1011 (RFC 6455 §7.4.1), 1012–1014 (added
    /// to the IANA WebSocket Close Code Number Registry since; peers send
    /// them), and 3000–4999 (registered libraries and frameworks, and
    /// private use, §7.4.2). Invalid: anything below 1000; 1004 (reserved);
    /// 1005, 1006 and 1015, which only report what happened locally; the
    /// unassigned rest of 1000–2999; and 5000 and above. A received invalid
    /// code fails the connection with 1002.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::CloseCode;
    ///
    /// for valid in [1000, 1003, 1007, 1011, 1014, 3000, 4999] {
    ///     assert!(CloseCode(valid).is_valid_on_wire(), "{valid}");
    /// }
    /// for invalid in [0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000] {
    ///     assert!(!CloseCode(invalid).is_valid_on_wire(), "{invalid}");
    /// }
    /// ```
    pub const fn is_valid_on_wire(self) -> bool {
        matches!(self.0, 1000..=1003 | 1007..=1014 | 3000..=4999)
    }
}

impl From<u16> for CloseCode {
    fn from(code: u16) -> CloseCode {
        CloseCode(code)
    }
}

impl From<CloseCode> for u16 {
    fn from(code: CloseCode) -> u16 {
        code.0
    }
}

impl fmt::Display for CloseCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

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
    /// # Errors
    ///
    /// [`Error::InvalidClosePayload`] for a one-byte payload,
    /// [`Error::InvalidCloseCode`] for a code that may not be on the wire,
    /// [`Error::InvalidCloseReason`] for a reason that is not UTF-8, and
    /// [`Error::ControlFrameTooLong`] for more than 125 bytes — in that
    /// order, so a bad code is reported before a bad reason.
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
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..usize::from(self.len)).unwrap_or(&[])
    }

    /// The payload length in bytes.
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
