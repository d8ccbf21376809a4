//! The writer side: frame heads for a server's messages and whole control
//! frames, unmasked as a server sends them (RFC 6455 §5.1).
//!
//! A data message goes out as [`message_head`] followed by the untouched
//! payload, in one vectored write; a fragmented one as heads built with
//! [`FrameHeader`] (FIN clear on all but the last, `Continuation` after the
//! first). A control frame is at most 127 bytes, so [`ControlFrame`] holds
//! all of it. A client masks: it builds heads with
//! [`FrameHeader::with_mask`] and masks the payload with
//! [`apply_mask`](crate::ws::apply_mask).

use core::fmt;

use crate::ws::frame::{FrameHead, MAX_CONTROL_PAYLOAD_LEN};
use crate::ws::{ClosePayload, Error, FrameHeader, MessageKind, OpCode};

/// The head of a whole, unfragmented message of `len` bytes, as a server
/// sends it (FIN set, unmasked).
///
/// # Examples
///
/// ```
/// use ringstream_core::ws::{message_head, MessageKind};
///
/// assert_eq!(message_head(MessageKind::Text, 5).as_bytes(), [0x81, 0x05]);
/// assert_eq!(message_head(MessageKind::Binary, 256).as_bytes(), [0x82, 0x7e, 0x01, 0x00]);
/// assert_eq!(
///     message_head(MessageKind::Binary, 65536).as_bytes(),
///     [0x82, 0x7f, 0, 0, 0, 0, 0, 1, 0, 0]
/// );
/// ```
pub fn message_head(kind: MessageKind, len: u64) -> FrameHead {
    FrameHeader::new(kind.opcode(), len).encode()
}

/// A whole unmasked control frame (head and payload) on the stack: a Ping,
/// a Pong, or a Close.
///
/// # Examples
///
/// ```
/// use ringstream_core::ws::{CloseCode, ClosePayload, ControlFrame};
///
/// // The unmasked Ping of RFC 6455 §5.7.
/// let ping = ControlFrame::ping(b"Hello")?;
/// assert_eq!(ping.as_bytes(), b"\x89\x05Hello");
///
/// // A Pong answers a Ping with the same payload.
/// let pong = ControlFrame::pong(b"Hello")?;
/// assert_eq!(pong.as_bytes(), b"\x8a\x05Hello");
///
/// let close = ControlFrame::close(&ClosePayload::new(CloseCode::NORMAL, "bye")?);
/// assert_eq!(close.as_bytes(), b"\x88\x05\x03\xe8bye");
/// # Ok::<(), ringstream_core::ws::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ControlFrame {
    buf: [u8; 2 + MAX_CONTROL_PAYLOAD_LEN],
    len: u8,
}

impl ControlFrame {
    /// A Ping carrying `payload`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{ControlFrame, Error};
    ///
    /// assert_eq!(ControlFrame::ping(b"")?.as_bytes(), b"\x89\x00");
    /// assert!(matches!(ControlFrame::ping(&[0; 126]), Err(Error::ControlFrameTooLong)));
    /// # Ok::<(), Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::ControlFrameTooLong`] if `payload` is over 125 bytes.
    pub fn ping(payload: &[u8]) -> Result<ControlFrame, Error> {
        ControlFrame::new(OpCode::Ping, payload)
    }

    /// A Pong carrying `payload`: the payload of the Ping it answers, or
    /// any payload as an unsolicited heartbeat (RFC 6455 §5.5.3).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::ControlFrame;
    ///
    /// let pong = ControlFrame::pong(b"beat")?;
    /// assert_eq!(pong.as_bytes(), b"\x8a\x04beat");
    /// assert_eq!(pong.len(), 6);
    /// # Ok::<(), ringstream_core::ws::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::ControlFrameTooLong`] if `payload` is over 125 bytes.
    pub fn pong(payload: &[u8]) -> Result<ControlFrame, Error> {
        ControlFrame::new(OpCode::Pong, payload)
    }

    /// A Close carrying `payload` (a code and reason, or nothing).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{ClosePayload, ControlFrame};
    ///
    /// assert_eq!(ControlFrame::close(&ClosePayload::EMPTY).as_bytes(), [0x88, 0x00]);
    /// ```
    pub fn close(payload: &ClosePayload) -> ControlFrame {
        let bytes = payload.as_bytes();
        let mut buf = [0u8; 2 + MAX_CONTROL_PAYLOAD_LEN];
        buf[0] = 0x80 | OpCode::Close.as_u8();
        // A close payload is at most 125 bytes.
        buf[1] = bytes.len() as u8;
        buf[2..2 + bytes.len()].copy_from_slice(bytes);
        ControlFrame {
            buf,
            len: (2 + bytes.len()) as u8,
        }
    }

    fn new(opcode: OpCode, payload: &[u8]) -> Result<ControlFrame, Error> {
        if payload.len() > MAX_CONTROL_PAYLOAD_LEN {
            return Err(Error::ControlFrameTooLong);
        }
        let mut buf = [0u8; 2 + MAX_CONTROL_PAYLOAD_LEN];
        buf[0] = 0x80 | opcode.as_u8();
        buf[1] = payload.len() as u8;
        buf[2..2 + payload.len()].copy_from_slice(payload);
        Ok(ControlFrame {
            buf,
            len: (2 + payload.len()) as u8,
        })
    }

    /// The frame's bytes, head and payload.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::ControlFrame;
    ///
    /// assert_eq!(ControlFrame::ping(b"1")?.as_bytes(), b"\x89\x011");
    /// # Ok::<(), ringstream_core::ws::Error>(())
    /// ```
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..usize::from(self.len)).unwrap_or(&[])
    }

    /// Length of the frame in bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::ControlFrame;
    ///
    /// // A 2-byte head, then the payload.
    /// assert_eq!(ControlFrame::pong(b"beat")?.len(), 6);
    /// # Ok::<(), ringstream_core::ws::Error>(())
    /// ```
    #[allow(clippy::len_without_is_empty)]
    pub const fn len(&self) -> usize {
        self.len as usize
    }
}

impl AsRef<[u8]> for ControlFrame {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl fmt::Debug for ControlFrame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ControlFrame")
            .field(&crate::byte_str::ByteStr(self.as_bytes()))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_payloads_are_bounded() {
        assert_eq!(ControlFrame::ping(&[7; 125]).unwrap().len(), 127);
        assert_eq!(
            ControlFrame::ping(&[7; 126]),
            Err(Error::ControlFrameTooLong)
        );
        assert_eq!(
            ControlFrame::pong(&[7; 126]),
            Err(Error::ControlFrameTooLong)
        );
        assert_eq!(ControlFrame::pong(b"").unwrap().as_bytes(), [0x8a, 0x00]);
    }
}
