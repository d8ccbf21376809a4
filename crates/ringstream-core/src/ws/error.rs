//! The WebSocket layer's error type: everything a peer can get wrong in the
//! opening handshake and in RFC 6455 framing.
//!
//! # Why a type of its own
//!
//! [`crate::Error`] is the HTTP layer's: every variant is answered with an
//! HTTP status before the connection closes. Once a connection is upgraded,
//! HTTP is over. A WebSocket endpoint answers a violation with a Close
//! frame and its [close code](Error::close_code) instead (RFC 6455 §7.4).
//! Keeping these errors here leaves [`crate::Error::status`] meaningful for
//! every HTTP variant, and `close_code` meaningful for every WebSocket one.
//! The three handshake variants belong to the HTTP exchange that asks for
//! the upgrade, so they carry the [status](Error::status) to refuse it with.
//! That makes this the one error type of the `ws` module.

use core::fmt;

use crate::ws::close_code::CloseCode;

/// A WebSocket error found by the sans-IO core.
///
/// A frame or message error found by the [`Decoder`](crate::ws::Decoder)
/// is answered with a Close frame carrying [`Error::close_code`], after
/// which the connection is closed: RFC 6455 §7.1.7 calls this *failing the
/// WebSocket connection*. The decoder never recovers, because after a
/// violation the frame boundaries can no longer be trusted.
///
/// A handshake error ([`NotWebSocket`](Error::NotWebSocket),
/// [`UnsupportedVersion`](Error::UnsupportedVersion),
/// [`InvalidKey`](Error::InvalidKey)) is found before any frame is sent: the
/// server refuses the upgrade with an HTTP response of [`Error::status`].
///
/// # Examples
///
/// ```
/// use ringstream_core::ws::{CloseCode, Error};
///
/// assert_eq!(Error::UnmaskedFrame.close_code(), CloseCode::PROTOCOL_ERROR);
/// assert_eq!(Error::InvalidUtf8.close_code(), CloseCode::INVALID_PAYLOAD);
/// assert_eq!(Error::MessageTooLarge.close_code(), CloseCode::MESSAGE_TOO_BIG);
/// assert_eq!(Error::UnsupportedVersion.status(), 426);
/// assert_eq!(Error::InvalidUtf8.to_string(), "invalid utf-8 in text message");
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Error {
    // ---- frame head: 1002 ---------------------------------------------
    /// RSV1, RSV2 or RSV3 is set but no extension that defines it was
    /// negotiated (RFC 6455 §5.2). With permessage-deflate
    /// ([`Decoder::with_rsv1`](crate::ws::Decoder::with_rsv1)) RSV1 is
    /// allowed only on the first frame of a data message (RFC 7692 §6).
    ReservedBits,
    /// The opcode is one of the reserved values 0x3–0x7 or 0xB–0xF
    /// (RFC 6455 §5.2).
    UnknownOpcode,
    /// A frame from a client is not masked (RFC 6455 §5.1).
    UnmaskedFrame,
    /// A frame from a server is masked (RFC 6455 §5.1).
    MaskedFrame,
    /// The payload length is not in its shortest form, or a 64-bit length
    /// has its most significant bit set (RFC 6455 §5.2).
    InvalidPayloadLength,
    /// A control frame without FIN (RFC 6455 §5.5: control frames are
    /// never fragmented).
    FragmentedControlFrame,
    /// A control frame payload longer than 125 bytes (RFC 6455 §5.5). Also
    /// returned by the writer side for a control payload (or close reason)
    /// that would not fit.
    ControlFrameTooLong,
    // ---- message sequence: 1002 ---------------------------------------
    /// A continuation frame with no fragmented message in progress
    /// (RFC 6455 §5.4).
    UnexpectedContinuation,
    /// A text or binary frame while a fragmented message is still in
    /// progress: only continuation and control frames may follow a
    /// non-final data frame (RFC 6455 §5.4).
    ExpectedContinuation,
    // ---- close frame --------------------------------------------------
    /// A Close payload of exactly one byte: a code needs two (RFC 6455
    /// §5.5.1). Close code 1002.
    InvalidClosePayload,
    /// A Close code that may not appear on the wire (RFC 6455 §7.4; see
    /// [`CloseCode::is_valid_on_wire`]). Close code 1002. Also returned by
    /// the writer side for such a code.
    InvalidCloseCode,
    /// The reason in a Close frame is not valid UTF-8 (RFC 6455 §5.5.1).
    /// Close code 1007.
    InvalidCloseReason,
    /// Bytes arrived after the peer's Close frame, which must be its last
    /// (RFC 6455 §5.5.1). Close code 1002.
    FrameAfterClose,
    // ---- payload ------------------------------------------------------
    /// A text message is not valid UTF-8 (RFC 6455 §8.1): an invalid byte
    /// anywhere, even in a fragment before the last, or a code point left
    /// incomplete at the end of the message. Close code 1007.
    InvalidUtf8,
    /// A frame payload is longer than
    /// [`Limits::max_frame_len`](crate::ws::Limits::max_frame_len). Close
    /// code 1009.
    FrameTooLarge,
    /// A message (the sum of its fragments) is longer than
    /// [`Limits::max_message_len`](crate::ws::Limits::max_message_len).
    /// With permessage-deflate, also a message whose inflated size crosses
    /// that limit. Close code 1009.
    MessageTooLarge,
    /// A compressed message (permessage-deflate, RFC 7692) is not valid
    /// DEFLATE data. Close code 1007: the payload is not consistent with
    /// the message.
    InvalidCompressedData,
    // ---- connection ---------------------------------------------------
    /// The connection ended before the peer's Close frame. Its close code,
    /// 1006, is what the application is told; it is never sent (RFC 6455
    /// §7.1.5), and there is no connection left to send it on anyway.
    UnexpectedEof,
    // ---- opening handshake: HTTP status -------------------------------
    /// The handshake is not a `GET` (RFC 6455 §4.1). Refused with `405
    /// Method Not Allowed` and `Allow: GET`.
    NotGet,
    /// The handshake is not on HTTP/1.1 or later (RFC 6455 §4.1): an
    /// HTTP/1.0 request cannot switch protocols. Refused with `400`.
    NotHttp11,
    /// The handshake carries a request body: the bytes after its head
    /// belong to the WebSocket session, so a body would be read as frames
    /// (RFC 6455 §4.1 gives the handshake none). Refused with `400`.
    RequestBody,
    /// The `Upgrade` field does not list `websocket` (RFC 6455 §4.2.1).
    /// Refused with `426 Upgrade Required` and `Upgrade: websocket`
    /// (RFC 9110 §15.5.22).
    NotWebSocket,
    /// `Sec-WebSocket-Version` is missing, repeated, or not `13`. Refused
    /// with `426 Upgrade Required` and `Sec-WebSocket-Version: 13`
    /// (RFC 6455 §4.2.2, §4.4).
    UnsupportedVersion,
    /// `Sec-WebSocket-Key` is missing, repeated, or not the base64 encoding
    /// of 16 bytes (RFC 6455 §4.2.1, §11.3.1). Refused with `400`.
    InvalidKey,
}

impl Error {
    /// The close code to fail the connection with (RFC 6455 §7.4.1): 1002
    /// for a protocol error, 1007 for a payload that is not valid UTF-8 or
    /// not valid compressed data, 1009 for a frame or message over the limits.
    ///
    /// [`UnexpectedEof`](Error::UnexpectedEof) gives 1006, which is only
    /// reported, never sent. The handshake variants give 1002, but they are
    /// answered with an HTTP [`status`](Error::status), as no WebSocket
    /// connection exists yet.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::Error;
    ///
    /// assert_eq!(Error::ReservedBits.close_code().as_u16(), 1002);
    /// assert_eq!(Error::InvalidCloseReason.close_code().as_u16(), 1007);
    /// assert_eq!(Error::FrameTooLarge.close_code().as_u16(), 1009);
    /// ```
    pub const fn close_code(self) -> CloseCode {
        match self {
            Error::InvalidUtf8 | Error::InvalidCloseReason | Error::InvalidCompressedData => {
                CloseCode::INVALID_PAYLOAD
            }
            Error::FrameTooLarge | Error::MessageTooLarge => CloseCode::MESSAGE_TOO_BIG,
            Error::UnexpectedEof => CloseCode::ABNORMAL,
            _ => CloseCode::PROTOCOL_ERROR,
        }
    }

    /// The HTTP status that refuses an upgrade request with this error: 405
    /// for [`NotGet`](Error::NotGet), 426 for
    /// [`NotWebSocket`](Error::NotWebSocket) and
    /// [`UnsupportedVersion`](Error::UnsupportedVersion), 400 otherwise.
    /// Only the handshake variants arise before the upgrade.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::Error;
    ///
    /// assert_eq!(Error::NotWebSocket.status(), 426);
    /// assert_eq!(Error::InvalidKey.status(), 400);
    /// ```
    pub const fn status(self) -> u16 {
        match self {
            Error::NotGet => 405,
            Error::NotWebSocket | Error::UnsupportedVersion => 426,
            _ => 400,
        }
    }

    /// A short lowercase description, the same text as `Display`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::Error;
    ///
    /// assert_eq!(Error::InvalidUtf8.as_str(), Error::InvalidUtf8.to_string());
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            Error::ReservedBits => "reserved bits set without an extension",
            Error::UnknownOpcode => "unknown opcode",
            Error::UnmaskedFrame => "unmasked client frame",
            Error::MaskedFrame => "masked server frame",
            Error::InvalidPayloadLength => "invalid payload length",
            Error::FragmentedControlFrame => "fragmented control frame",
            Error::ControlFrameTooLong => "control frame payload over 125 bytes",
            Error::UnexpectedContinuation => "continuation frame without a message",
            Error::ExpectedContinuation => "new data frame inside a fragmented message",
            Error::InvalidClosePayload => "one-byte close payload",
            Error::InvalidCloseCode => "invalid close code",
            Error::InvalidCloseReason => "invalid utf-8 in close reason",
            Error::FrameAfterClose => "data after close frame",
            Error::InvalidUtf8 => "invalid utf-8 in text message",
            Error::FrameTooLarge => "frame too large",
            Error::MessageTooLarge => "message too large",
            Error::InvalidCompressedData => "invalid compressed data",
            Error::UnexpectedEof => "connection closed without a close frame",
            Error::NotGet => "a websocket handshake is a get",
            Error::NotHttp11 => "a websocket handshake needs http/1.1",
            Error::RequestBody => "a websocket handshake has no body",
            Error::NotWebSocket => "upgrade is not to websocket",
            Error::UnsupportedVersion => "unsupported websocket version",
            Error::InvalidKey => "invalid sec-websocket-key",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl core::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn close_codes_match_rfc_6455_section_7_4_1() {
        let protocol = [
            Error::ReservedBits,
            Error::UnknownOpcode,
            Error::UnmaskedFrame,
            Error::MaskedFrame,
            Error::InvalidPayloadLength,
            Error::FragmentedControlFrame,
            Error::ControlFrameTooLong,
            Error::UnexpectedContinuation,
            Error::ExpectedContinuation,
            Error::InvalidClosePayload,
            Error::InvalidCloseCode,
            Error::FrameAfterClose,
        ];
        for e in protocol {
            assert_eq!(e.close_code().as_u16(), 1002, "{e}");
        }
        assert_eq!(Error::InvalidUtf8.close_code().as_u16(), 1007);
        assert_eq!(Error::InvalidCloseReason.close_code().as_u16(), 1007);
        assert_eq!(Error::InvalidCompressedData.close_code().as_u16(), 1007);
        assert_eq!(Error::FrameTooLarge.close_code().as_u16(), 1009);
        assert_eq!(Error::MessageTooLarge.close_code().as_u16(), 1009);
        assert_eq!(Error::UnexpectedEof.close_code().as_u16(), 1006);
        assert_eq!(
            Error::UnsupportedVersion.to_string(),
            "unsupported websocket version"
        );
    }
}
