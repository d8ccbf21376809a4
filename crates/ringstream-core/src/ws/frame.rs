//! The frame head (RFC 6455 §5.2): parsed from bytes, written to bytes.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-------+-+-------------+-------------------------------+
//! |F|R|R|R| opcode|M| Payload len |    Extended payload length    |
//! |I|S|S|S|  (4)  |A|     (7)     |             (16/64)           |
//! |N|V|V|V|       |S|             |   (if payload len==126/127)   |
//! | |1|2|3|       |K|             |                               |
//! +-+-+-+-+-------+-+-------------+ - - - - - - - - - - - - - - - +
//! |     Extended payload length continued, if payload len == 127  |
//! + - - - - - - - - - - - - - - - +-------------------------------+
//! |                               |Masking-key, if MASK set to 1  |
//! +-------------------------------+-------------------------------+
//! ```
//!
//! Parsing is strict: reserved opcodes, fragmented or oversized control
//! frames, and lengths not in their shortest form (or with the top bit of a
//! 64-bit length set) are errors. Whether the mask and the RSV bits are
//! allowed depends on the role and the negotiated extensions, so the
//! [`Decoder`](crate::ws::Decoder) checks those.

use core::fmt;

use crate::ws::Error;

/// The longest frame head: 2 bytes, an 8-byte length and a 4-byte mask key.
pub const MAX_HEAD_LEN: usize = 14;

/// The longest payload of a control frame (RFC 6455 §5.5).
pub const MAX_CONTROL_PAYLOAD_LEN: usize = 125;

/// The longest whole control frame: a 2-byte head, a 4-byte mask key and
/// 125 bytes of payload. A [`Decoder`](crate::ws::Decoder) hands out a
/// control frame only once all of it is in its input, so a read buffer must
/// hold at least this many bytes.
pub const MAX_CONTROL_FRAME_LEN: usize = 2 + 4 + MAX_CONTROL_PAYLOAD_LEN;

/// The largest payload length a frame can declare: the top bit of the
/// 64-bit length must be 0 (RFC 6455 §5.2).
pub const MAX_PAYLOAD_LEN: u64 = i64::MAX as u64;

/// A frame opcode (RFC 6455 §5.2). The reserved values 0x3–0x7 and 0xB–0xF
/// have no variant: they fail a parse with [`Error::UnknownOpcode`].
///
/// # Examples
///
/// ```
/// use ringstream_core::ws::OpCode;
///
/// assert_eq!(OpCode::from_u8(0x9), Some(OpCode::Ping));
/// assert_eq!(OpCode::from_u8(0x3), None);
/// assert!(OpCode::Close.is_control());
/// assert!(!OpCode::Continuation.is_control());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpCode {
    /// 0x0: a continuation frame of a fragmented message.
    Continuation,
    /// 0x1: the first frame of a text message.
    Text,
    /// 0x2: the first frame of a binary message.
    Binary,
    /// 0x8: a Close frame.
    Close,
    /// 0x9: a Ping frame.
    Ping,
    /// 0xA: a Pong frame.
    Pong,
}

impl OpCode {
    /// The opcode of a 4-bit value, or `None` for a reserved value.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::OpCode;
    ///
    /// assert_eq!(OpCode::from_u8(0x9), Some(OpCode::Ping));
    /// assert_eq!(OpCode::from_u8(0x3), None); // reserved
    /// assert!(OpCode::Ping.is_control());
    /// ```
    pub const fn from_u8(value: u8) -> Option<OpCode> {
        match value {
            0x0 => Some(OpCode::Continuation),
            0x1 => Some(OpCode::Text),
            0x2 => Some(OpCode::Binary),
            0x8 => Some(OpCode::Close),
            0x9 => Some(OpCode::Ping),
            0xA => Some(OpCode::Pong),
            _ => None,
        }
    }

    /// The 4-bit value on the wire.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::OpCode;
    ///
    /// assert_eq!(OpCode::Text.as_u8(), 0x1);
    /// assert_eq!(OpCode::from_u8(OpCode::Close.as_u8()), Some(OpCode::Close));
    /// ```
    pub const fn as_u8(self) -> u8 {
        match self {
            OpCode::Continuation => 0x0,
            OpCode::Text => 0x1,
            OpCode::Binary => 0x2,
            OpCode::Close => 0x8,
            OpCode::Ping => 0x9,
            OpCode::Pong => 0xA,
        }
    }

    /// Whether this is a control opcode (Close, Ping, Pong): at most 125
    /// bytes of payload, never fragmented, allowed between the fragments of
    /// a data message (RFC 6455 §5.5).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::OpCode;
    ///
    /// assert!(OpCode::Close.is_control());
    /// assert!(!OpCode::Continuation.is_control());
    /// ```
    pub const fn is_control(self) -> bool {
        matches!(self, OpCode::Close | OpCode::Ping | OpCode::Pong)
    }
}

/// The type of a data message (RFC 6455 §5.6).
///
/// # Examples
///
/// ```
/// use ringstream_core::ws::{MessageKind, OpCode};
///
/// assert_eq!(MessageKind::Text.opcode(), OpCode::Text);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessageKind {
    /// UTF-8 text.
    Text,
    /// Arbitrary bytes.
    Binary,
}

impl MessageKind {
    /// The opcode of the message's first frame.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{MessageKind, OpCode};
    ///
    /// assert_eq!(MessageKind::Binary.opcode(), OpCode::Binary);
    /// ```
    pub const fn opcode(self) -> OpCode {
        match self {
            MessageKind::Text => OpCode::Text,
            MessageKind::Binary => OpCode::Binary,
        }
    }
}

/// The head of one frame: FIN, the RSV bits, the opcode, the mask key and
/// the payload length.
///
/// # Examples
///
/// A server's unmasked text frame, written and parsed back:
///
/// ```
/// use ringstream_core::ws::{FrameHeader, OpCode};
///
/// let header = FrameHeader::new(OpCode::Text, 5);
/// assert_eq!(header.encode().as_bytes(), [0x81, 0x05]);
///
/// let (parsed, used) = FrameHeader::parse(&[0x81, 0x05, b'H'])?.expect("complete");
/// assert_eq!((parsed, used), (header, 2));
/// // An incomplete head is not an error.
/// assert_eq!(FrameHeader::parse(&[0x81]), Ok(None));
/// # Ok::<(), ringstream_core::ws::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FrameHeader {
    /// The final frame of a message (always set on control frames).
    pub fin: bool,
    /// RSV1: permessage-deflate's "compressed" bit (RFC 7692), else 0.
    pub rsv1: bool,
    /// RSV2: 0 unless an extension defines it.
    pub rsv2: bool,
    /// RSV3: 0 unless an extension defines it.
    pub rsv3: bool,
    /// The opcode.
    pub opcode: OpCode,
    /// The masking key: required on a client's frames, forbidden on a
    /// server's (RFC 6455 §5.1).
    pub mask: Option<[u8; 4]>,
    /// The payload length in bytes, at most [`MAX_PAYLOAD_LEN`].
    pub payload_len: u64,
}

impl FrameHeader {
    /// A final, unmasked frame head without RSV bits: what a server sends
    /// for a whole message or a control frame.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{FrameHeader, OpCode};
    ///
    /// let header = FrameHeader::new(OpCode::Binary, 300);
    /// assert!(header.fin && header.mask.is_none());
    /// // Two bytes, then a 16-bit length.
    /// assert_eq!(header.encoded_len(), 4);
    /// assert_eq!(header.encode().as_bytes(), [0x82, 126, 0x01, 0x2c]);
    /// ```
    pub const fn new(opcode: OpCode, payload_len: u64) -> FrameHeader {
        FrameHeader {
            fin: true,
            rsv1: false,
            rsv2: false,
            rsv3: false,
            opcode,
            mask: None,
            payload_len,
        }
    }

    /// The same head with FIN set to `fin`: clear it on every frame of a
    /// fragmented message but the last.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{FrameHeader, OpCode};
    ///
    /// // "Hel" then "lo": the fragmented text message of RFC 6455 §5.7.
    /// let first = FrameHeader::new(OpCode::Text, 3).with_fin(false);
    /// let last = FrameHeader::new(OpCode::Continuation, 2);
    /// assert_eq!(first.encode().as_bytes(), [0x01, 0x03]);
    /// assert_eq!(last.encode().as_bytes(), [0x80, 0x02]);
    /// ```
    pub const fn with_fin(mut self, fin: bool) -> FrameHeader {
        self.fin = fin;
        self
    }

    /// The same head with a masking key: what a client sends. The payload
    /// must be masked with the same key ([`apply_mask`](crate::ws::apply_mask)).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{FrameHeader, OpCode};
    ///
    /// let head = FrameHeader::new(OpCode::Text, 5).with_mask([0x37, 0xfa, 0x21, 0x3d]);
    /// assert_eq!(head.encode().as_bytes(), [0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d]);
    /// ```
    pub const fn with_mask(mut self, key: [u8; 4]) -> FrameHeader {
        self.mask = Some(key);
        self
    }

    /// The same head with RSV1 set to `rsv1`: permessage-deflate marks the
    /// first frame of a compressed message with it (RFC 7692 §6).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{FrameHeader, OpCode};
    ///
    /// let header = FrameHeader::new(OpCode::Text, 3).with_rsv1(true);
    /// assert_eq!(header.encode().as_bytes(), [0xc1, 0x03]);
    /// ```
    pub const fn with_rsv1(mut self, rsv1: bool) -> FrameHeader {
        self.rsv1 = rsv1;
        self
    }

    /// Parses a frame head at the start of `input`.
    ///
    /// Returns `Ok(None)` while `input` holds only part of the head, and
    /// `Ok(Some((header, len)))` once it is complete, `len` being the head's
    /// size (2 to 14 bytes); the payload follows it. The bytes are checked in
    /// order as far as they go, so a bad first byte is reported even before
    /// the rest of the head has arrived.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{Error, FrameHeader};
    ///
    /// // A 256-byte binary frame uses the 16-bit length (RFC 6455 §5.7).
    /// let (header, len) = FrameHeader::parse(&[0x82, 0x7e, 0x01, 0x00])?.unwrap();
    /// assert_eq!((header.payload_len, len), (256, 4));
    ///
    /// assert_eq!(FrameHeader::parse(&[0x83]), Err(Error::UnknownOpcode));
    /// assert_eq!(FrameHeader::parse(&[0x09]), Err(Error::FragmentedControlFrame));
    /// // 5 fits in 7 bits: the 16-bit form is not allowed for it.
    /// assert_eq!(
    ///     FrameHeader::parse(&[0x82, 0x7e, 0x00, 0x05]),
    ///     Err(Error::InvalidPayloadLength)
    /// );
    /// # Ok::<(), Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::UnknownOpcode`], [`Error::FragmentedControlFrame`],
    /// [`Error::ControlFrameTooLong`], [`Error::InvalidPayloadLength`].
    /// RSV bits and the mask are reported as they are, not judged.
    pub fn parse(input: &[u8]) -> Result<Option<(FrameHeader, usize)>, Error> {
        let Some(&b0) = input.first() else {
            return Ok(None);
        };
        let first = FirstByte::parse(b0)?;
        let Some(&b1) = input.get(1) else {
            return Ok(None);
        };
        let second = SecondByte::parse(first.opcode, b1)?;
        let (payload_len, mut len) = match second.len7 {
            126 => {
                let Some(&[hi, lo]) = input.get(2..4).and_then(|b| b.first_chunk::<2>()) else {
                    return Ok(None);
                };
                let n = u16::from_be_bytes([hi, lo]);
                if n < 126 {
                    return Err(Error::InvalidPayloadLength);
                }
                (u64::from(n), 4)
            }
            127 => {
                let Some(bytes) = input.get(2..10).and_then(|b| b.first_chunk::<8>()) else {
                    return Ok(None);
                };
                let n = u64::from_be_bytes(*bytes);
                if n > MAX_PAYLOAD_LEN || n <= u64::from(u16::MAX) {
                    return Err(Error::InvalidPayloadLength);
                }
                (n, 10)
            }
            n => (u64::from(n), 2),
        };
        let mask = if second.masked {
            let Some(key) = input.get(len..len + 4).and_then(|b| b.first_chunk::<4>()) else {
                return Ok(None);
            };
            len += 4;
            Some(*key)
        } else {
            None
        };
        let header = FrameHeader {
            fin: first.fin,
            rsv1: first.rsv1,
            rsv2: first.rsv2,
            rsv3: first.rsv3,
            opcode: first.opcode,
            mask,
            payload_len,
        };
        Ok(Some((header, len)))
    }

    /// The size of the encoded head in bytes (2 to 14).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{FrameHeader, OpCode};
    ///
    /// assert_eq!(FrameHeader::new(OpCode::Text, 125).encoded_len(), 2);
    /// assert_eq!(FrameHeader::new(OpCode::Text, 126).encoded_len(), 4);
    /// // A client's frame carries a 4-byte mask key.
    /// let masked = FrameHeader { mask: Some([1, 2, 3, 4]), ..FrameHeader::new(OpCode::Text, 70_000) };
    /// assert_eq!(masked.encoded_len(), 14);
    /// ```
    pub const fn encoded_len(&self) -> usize {
        let len = match self.payload_len {
            0..=125 => 2,
            126..=0xFFFF => 4,
            _ => 10,
        };
        if self.mask.is_some() {
            len + 4
        } else {
            len
        }
    }

    /// Writes the head at the start of `out`, using the shortest length
    /// form, and returns its size; `None` (and nothing written) if `out` is
    /// shorter than [`encoded_len`](Self::encoded_len).
    ///
    /// A `payload_len` above [`MAX_PAYLOAD_LEN`] — more than any buffer can
    /// hold — cannot be framed; it is written as given and a peer refuses it.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{FrameHeader, OpCode};
    ///
    /// let mut out = [0u8; 16];
    /// let n = FrameHeader::new(OpCode::Binary, 65536).write(&mut out).unwrap();
    /// assert_eq!(&out[..n], [0x82, 0x7f, 0, 0, 0, 0, 0, 1, 0, 0]);
    /// assert_eq!(FrameHeader::new(OpCode::Binary, 65536).write(&mut out[..9]), None);
    /// ```
    pub fn write(&self, out: &mut [u8]) -> Option<usize> {
        let head = self.encode();
        let bytes = head.as_bytes();
        out.get_mut(..bytes.len())?.copy_from_slice(bytes);
        Some(bytes.len())
    }

    /// The head as bytes on the stack, ready for a vectored write ahead of
    /// the payload.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{FrameHeader, OpCode};
    ///
    /// // A payload over 65,535 bytes takes a 64-bit length.
    /// let head = FrameHeader::new(OpCode::Text, 70_000).encode();
    /// assert_eq!(head.len(), 10);
    /// assert_eq!(&head.as_bytes()[..2], [0x81, 127]);
    /// ```
    pub fn encode(&self) -> FrameHead {
        debug_assert!(self.payload_len <= MAX_PAYLOAD_LEN);
        let mut buf = [0u8; MAX_HEAD_LEN];
        buf[0] = (u8::from(self.fin) << 7)
            | (u8::from(self.rsv1) << 6)
            | (u8::from(self.rsv2) << 5)
            | (u8::from(self.rsv3) << 4)
            | self.opcode.as_u8();
        let mask_bit = if self.mask.is_some() { 0x80 } else { 0 };
        let mut len = match self.payload_len {
            // The match arm bounds the casts.
            n @ 0..=125 => {
                buf[1] = mask_bit | n as u8;
                2
            }
            n @ 126..=0xFFFF => {
                buf[1] = mask_bit | 126;
                buf[2..4].copy_from_slice(&(n as u16).to_be_bytes());
                4
            }
            n => {
                buf[1] = mask_bit | 127;
                buf[2..10].copy_from_slice(&n.to_be_bytes());
                10
            }
        };
        if let Some(key) = self.mask {
            buf[len..len + 4].copy_from_slice(&key);
            len += 4;
        }
        FrameHead {
            buf,
            len: len as u8,
        }
    }
}

/// What the first byte of a head says.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FirstByte {
    pub(crate) fin: bool,
    pub(crate) rsv1: bool,
    pub(crate) rsv2: bool,
    pub(crate) rsv3: bool,
    pub(crate) opcode: OpCode,
}

impl FirstByte {
    /// Checks the opcode, then that a control frame has FIN.
    pub(crate) fn parse(b: u8) -> Result<FirstByte, Error> {
        let opcode = OpCode::from_u8(b & 0x0F).ok_or(Error::UnknownOpcode)?;
        let fin = b & 0x80 != 0;
        if opcode.is_control() && !fin {
            return Err(Error::FragmentedControlFrame);
        }
        Ok(FirstByte {
            fin,
            rsv1: b & 0x40 != 0,
            rsv2: b & 0x20 != 0,
            rsv3: b & 0x10 != 0,
            opcode,
        })
    }
}

/// What the second byte of a head says.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SecondByte {
    pub(crate) masked: bool,
    /// The 7-bit length: the length itself, or 126/127 for the 16/64-bit
    /// forms.
    pub(crate) len7: u8,
}

impl SecondByte {
    /// Checks that a control frame's length fits in 7 bits and is at most
    /// 125 (the longer forms must not be used for lengths that fit).
    pub(crate) fn parse(opcode: OpCode, b: u8) -> Result<SecondByte, Error> {
        let len7 = b & 0x7F;
        if opcode.is_control() && usize::from(len7) > MAX_CONTROL_PAYLOAD_LEN {
            return Err(Error::ControlFrameTooLong);
        }
        Ok(SecondByte {
            masked: b & 0x80 != 0,
            len7,
        })
    }
}

/// An encoded frame head (2 to 14 bytes) held on the stack.
///
/// # Examples
///
/// ```
/// use ringstream_core::ws::{FrameHeader, OpCode};
///
/// let head = FrameHeader::new(OpCode::Binary, 256).encode();
/// assert_eq!(head.as_ref(), [0x82, 0x7e, 0x01, 0x00]);
/// assert_eq!(head.len(), 4);
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct FrameHead {
    buf: [u8; MAX_HEAD_LEN],
    len: u8,
}

impl FrameHead {
    /// The bytes of the head.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{FrameHeader, OpCode};
    ///
    /// assert_eq!(FrameHeader::new(OpCode::Pong, 0).encode().as_bytes(), [0x8a, 0x00]);
    /// ```
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..usize::from(self.len)).unwrap_or(&[])
    }

    /// Length of the head in bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{FrameHeader, OpCode};
    ///
    /// assert_eq!(FrameHeader::new(OpCode::Binary, 1000).encode().len(), 4);
    /// ```
    #[allow(clippy::len_without_is_empty)]
    pub const fn len(&self) -> usize {
        self.len as usize
    }
}

impl AsRef<[u8]> for FrameHead {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl fmt::Debug for FrameHead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("FrameHead").field(&self.as_bytes()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(header: FrameHeader) {
        let head = header.encode();
        assert_eq!(head.len(), header.encoded_len());
        assert_eq!(
            FrameHeader::parse(head.as_bytes()),
            Ok(Some((header, head.len())))
        );
        // Every proper prefix is incomplete, not an error.
        for cut in 0..head.len() {
            assert_eq!(
                FrameHeader::parse(&head.as_bytes()[..cut]),
                Ok(None),
                "{cut}"
            );
        }
    }

    #[test]
    fn heads_round_trip_at_every_length_boundary() {
        for len in [0, 1, 125, 126, 127, 0xFFFF, 0x1_0000, MAX_PAYLOAD_LEN] {
            for opcode in [OpCode::Continuation, OpCode::Text, OpCode::Binary] {
                for fin in [false, true] {
                    let h = FrameHeader::new(opcode, len).with_fin(fin);
                    roundtrip(h);
                    roundtrip(h.with_mask([1, 2, 3, 4]));
                    roundtrip(h.with_rsv1(true));
                }
            }
        }
        for opcode in [OpCode::Close, OpCode::Ping, OpCode::Pong] {
            for len in [0, 125] {
                roundtrip(FrameHeader::new(opcode, len).with_mask([9, 8, 7, 6]));
            }
        }
    }

    #[test]
    fn lengths_must_be_minimal_and_below_two_to_the_63() {
        assert_eq!(
            FrameHeader::parse(&[0x82, 0x7e, 0x00, 0x7d]),
            Err(Error::InvalidPayloadLength)
        );
        assert!(FrameHeader::parse(&[0x82, 0x7e, 0x00, 0x7e])
            .unwrap()
            .is_some());
        assert_eq!(
            FrameHeader::parse(&[0x82, 0x7f, 0, 0, 0, 0, 0, 0, 0xff, 0xff]),
            Err(Error::InvalidPayloadLength)
        );
        assert_eq!(
            FrameHeader::parse(&[0x82, 0x7f, 0x80, 0, 0, 0, 0, 0, 0, 0]),
            Err(Error::InvalidPayloadLength)
        );
    }

    #[test]
    fn control_frames_are_short_and_final() {
        for op in [0x88u8, 0x89, 0x8a] {
            assert_eq!(
                FrameHeader::parse(&[op & 0x0f, 0x00]),
                Err(Error::FragmentedControlFrame)
            );
            for len7 in [126u8, 127] {
                assert_eq!(
                    FrameHeader::parse(&[op, len7]),
                    Err(Error::ControlFrameTooLong)
                );
            }
        }
        for reserved in (0x3..=0x7).chain(0xb..=0xf) {
            assert_eq!(
                FrameHeader::parse(&[0x80 | reserved]),
                Err(Error::UnknownOpcode)
            );
        }
    }
}
