//! The frame decoder: steps over a read buffer and reports events with the
//! number of bytes used.
//!
//! The [`Decoder`] never reads. It is handed whatever bytes have arrived,
//! unmasks payload in place, and answers with a [`Decoded`]: how many bytes
//! it used and at most one [`Event`], whose byte ranges point into the same
//! input, so a connection can split the payload off its read buffer without
//! copying it. "Need more bytes" is an ordinary result (no event), never an
//! error, so any split of the input, down to one byte at a time, decodes to
//! the same messages.
//!
//! # Feeding order
//!
//! 1. Call [`Decoder::decode`] with the buffered bytes.
//! 2. Handle `decoded.event`: its ranges index the input of this call, and
//!    lie within `input[..decoded.consumed]`.
//! 3. Drop `input[..decoded.consumed]`. These bytes must never be fed again:
//!    their payload has been unmasked in place.
//! 4. If there was an event, go to 1 (an event may use no bytes, as
//!    [`Event::MessageEnd`] does). If there was none, the decoder used all
//!    it could: read more input first.
//!
//! Payload is handed out as it arrives, so a message of many megabytes
//! needs no buffer of that size in the codec. A frame head (at most
//! [`MAX_HEAD_LEN`](crate::ws::MAX_HEAD_LEN) bytes) and a whole control
//! frame (at most [`MAX_CONTROL_FRAME_LEN`](crate::ws::MAX_CONTROL_FRAME_LEN)
//! bytes) are handed out only once they are complete in the input, so a
//! read buffer must hold at least 131 bytes.
//!
//! # Events
//!
//! A data message is [`MessageStart`](Event::MessageStart), any number of
//! [`Data`](Event::Data), then [`MessageEnd`](Event::MessageEnd).
//! [`Ping`](Event::Ping) and [`Pong`](Event::Pong) may come between any two
//! events, also between the fragments of a message (RFC 6455 §5.4).
//! [`Close`](Event::Close) is the last event, and may cut a message short.
//!
//! # Errors
//!
//! Every protocol violation is an [`Error`] whose
//! [`close_code`](Error::close_code) the connection is failed with (1002,
//! 1007 or 1009). Violations are reported as early as the bytes allow: a
//! bad first byte of a head before the rest of the head has arrived, a
//! frame over the limits before its payload, an invalid UTF-8 byte in the
//! fragment that carries it. Once a decoder has returned an error it stays
//! failed and returns the same error from every later call.

use core::ops::Range;

use crate::ws::frame::{FirstByte, SecondByte};
use crate::ws::{
    apply_mask, CloseCode, ClosePayload, Error, FrameHeader, MessageKind, OpCode, Utf8Validator,
};

/// Which end of the connection the decoder reads for: it decides whether
/// incoming frames must be masked (RFC 6455 §5.1).
///
/// # Examples
///
/// ```
/// use ringstream_core::ws::{Decoder, Error, Role};
///
/// // An unmasked text frame is what a server sends: a client accepts it,
/// // a server refuses it.
/// let frame = *b"\x81\x02hi";
/// assert!(Decoder::client().decode(&mut frame.clone()).is_ok());
/// assert_eq!(Decoder::server().decode(&mut frame.clone()), Err(Error::UnmaskedFrame));
/// assert_eq!(Decoder::server().role(), Role::Server);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// Reading a client's frames: every frame must be masked.
    Server,
    /// Reading a server's frames: no frame may be masked.
    Client,
}

/// Caps on the sizes a peer controls on a WebSocket connection.
///
/// Payload is handed out as it arrives, so the codec itself never buffers a
/// message; the limits protect whatever assembles one. Both are checked on
/// each frame head, before its payload arrives: a frame that crosses either
/// fails the connection with 1009 (Message Too Big). For a compressed
/// message (permessage-deflate) they count compressed bytes; the layer that
/// inflates bounds the inflated size.
///
/// # Examples
///
/// ```
/// use ringstream_core::ws::Limits;
///
/// let limits = Limits { max_message_len: 1 << 20, ..Limits::DEFAULT };
/// assert_eq!(limits.max_frame_len, 16 << 20);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Maximum size of a data message, the sum of its fragments, in bytes.
    /// Default 16 MiB.
    pub max_message_len: usize,
    /// Maximum payload of one data frame, in bytes. Default 16 MiB, the
    /// same as the message limit: browsers send a message as one frame, so
    /// a lower frame limit would refuse messages the message limit allows.
    /// Lower it to bound frames on a connection whose messages are
    /// unbounded. Control frames are bounded at 125 bytes by the protocol.
    pub max_frame_len: usize,
}

impl Limits {
    /// The default limits, usable in `const` contexts.
    pub const DEFAULT: Limits = Limits {
        max_message_len: 16 << 20,
        max_frame_len: 16 << 20,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// The result of one decode step: bytes used and at most one event.
///
/// # Examples
///
/// ```
/// use ringstream_core::ws::{Decoded, Decoder};
///
/// // Half a frame head: nothing to report yet.
/// let decoded = Decoder::client().decode(&mut [0x81])?;
/// assert_eq!(decoded, Decoded { consumed: 0, event: None });
/// # Ok::<(), ringstream_core::ws::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// Bytes of the input used (frame heads and payload); the caller drops
    /// them and must not feed them again.
    pub consumed: usize,
    /// What the used bytes meant, if anything; `None` means more input is
    /// needed.
    pub event: Option<Event>,
}

impl Decoded {
    const fn new(consumed: usize, event: Option<Event>) -> Decoded {
        Decoded { consumed, event }
    }
}

/// A whole message found by [`Decoder::decode_whole`].
///
/// # Examples
///
/// ```
/// use ringstream_core::ws::{Decoder, MessageKind};
///
/// // A masked binary frame (key 0, so the payload reads as sent).
/// let mut wire = *b"\x82\x83\x00\x00\x00\x00abc";
/// let whole = Decoder::server().decode_whole(&mut wire)?.expect("a whole message");
/// assert_eq!(whole.kind, MessageKind::Binary);
/// assert_eq!(&wire[whole.payload.clone()], b"abc");
/// assert_eq!(whole.consumed, 9);
/// # Ok::<(), ringstream_core::ws::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WholeMessage {
    /// Text (checked as UTF-8) or binary.
    pub kind: MessageKind,
    /// Where its payload lies in the input, unmasked.
    pub payload: Range<usize>,
    /// The input bytes the frame took, head included.
    pub consumed: usize,
}

/// What a decode step found. Ranges index the input of the step that
/// returned them, and their payload bytes are already unmasked.
///
/// # Examples
///
/// ```
/// use ringstream_core::ws::{Decoder, Event};
///
/// // An unmasked Ping, as a server sends it.
/// let mut ping = *b"\x89\x02hi";
/// let decoded = Decoder::client().decode(&mut ping)?;
/// assert_eq!(decoded.event, Some(Event::Ping(2..4)));
/// assert_eq!(decoded.consumed, 4);
/// # Ok::<(), ringstream_core::ws::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A data message begins: its first frame head has been read.
    MessageStart {
        /// Text or binary.
        kind: MessageKind,
        /// RSV1 was set on the first frame: the message is compressed with
        /// permessage-deflate (only with [`Decoder::with_rsv1`]). The
        /// decoder does not validate the UTF-8 of a compressed text
        /// message; the layer that inflates it does.
        compressed: bool,
        /// The message's length when its first frame is also its last;
        /// `None` for a fragmented message, whose length is known only at
        /// its end.
        len: Option<u64>,
    },
    /// Payload of the current message, never empty. A text message's data
    /// has been validated as UTF-8 so far, but a code point may be split
    /// between two `Data` events.
    Data(Range<usize>),
    /// The current message is complete; a text message is valid UTF-8.
    MessageEnd,
    /// A Ping with its payload (at most 125 bytes): answer with a Pong
    /// carrying the same payload (RFC 6455 §5.5.2).
    Ping(Range<usize>),
    /// A Pong with its payload (at most 125 bytes).
    Pong(Range<usize>),
    /// The peer's Close frame. It ends the peer's side: any byte after it
    /// is an error. Answer with a Close frame (echoing the code is usual)
    /// if none was sent yet, then close the connection (RFC 6455 §5.5.1).
    Close {
        /// The close code, valid on the wire; `None` when the frame had no
        /// payload (reported to applications as
        /// [`CloseCode::NO_STATUS`]).
        code: Option<CloseCode>,
        /// The reason, valid UTF-8; empty when there is none.
        reason: Range<usize>,
    },
}

/// A WebSocket frame decoder for one connection.
///
/// See the [module docs](self) for the feeding order and the events.
///
/// # Examples
///
/// A server reads the masked "Hello" of RFC 6455 §5.7, then a Close:
///
/// ```
/// use ringstream_core::ws::{CloseCode, Decoder, Event, MessageKind};
///
/// let mut wire = [
///     0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58, // "Hello"
///     0x88, 0x82, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8, // Close 1000
/// ];
/// let mut decoder = Decoder::server();
/// let mut input = &mut wire[..];
/// let mut text = Vec::new();
/// let mut events = Vec::new();
/// loop {
///     let decoded = decoder.decode(input)?;
///     let Some(event) = decoded.event else { break };
///     if let Event::Data(range) = &event {
///         text.extend_from_slice(&input[range.clone()]);
///     }
///     events.push(event);
///     input = &mut input[decoded.consumed..];
/// }
/// assert_eq!(text, b"Hello");
/// assert_eq!(
///     events[0],
///     Event::MessageStart { kind: MessageKind::Text, compressed: false, len: Some(5) }
/// );
/// assert_eq!(events[2], Event::MessageEnd);
/// assert!(matches!(events[3], Event::Close { code: Some(CloseCode::NORMAL), .. }));
/// assert!(decoder.is_closed());
/// # Ok::<(), ringstream_core::ws::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Decoder {
    role: Role,
    limits: Limits,
    /// RSV1 may be set on the first frame of a data message.
    rsv1: bool,
    state: State,
    /// The data message in progress.
    message: Option<Message>,
    error: Option<Error>,
}

/// The data message in progress.
#[derive(Debug, Clone, Copy)]
struct Message {
    /// Payload bytes declared by the message's frame heads so far.
    len: u64,
    /// The UTF-8 state of an uncompressed text message.
    utf8: Option<Utf8Validator>,
}

#[derive(Debug, Clone, Copy)]
enum State {
    /// Expecting a frame head.
    Head,
    /// Inside a data frame's payload.
    Payload {
        /// Payload bytes still to come.
        remaining: u64,
        mask: Option<[u8; 4]>,
        /// Payload bytes handed out so far, modulo 4: where the mask
        /// resumes.
        offset: usize,
        /// The frame is the last of its message.
        fin: bool,
    },
    /// The peer's Close frame has been read.
    Closed,
}

impl Decoder {
    /// A decoder for `role` with `limits`, RSV bits refused.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{Decoder, Limits, Role};
    ///
    /// let limits = Limits { max_message_len: 4, ..Limits::DEFAULT };
    /// let mut decoder = Decoder::new(Role::Client, limits);
    /// assert_eq!(decoder.role(), Role::Client);
    /// let mut frame = *b"\x82\x05hello";
    /// assert!(decoder.decode(&mut frame).is_err());
    /// ```
    pub const fn new(role: Role, limits: Limits) -> Decoder {
        Decoder {
            role,
            limits,
            rsv1: false,
            state: State::Head,
            message: None,
            error: None,
        }
    }

    /// A server's decoder (client frames must be masked) with the default
    /// [`Limits`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{Decoder, Error};
    ///
    /// // A client's frames must be masked (RFC 6455 §5.1).
    /// let mut unmasked = *b"\x81\x02hi";
    /// assert_eq!(Decoder::server().decode(&mut unmasked).unwrap_err(), Error::UnmaskedFrame);
    /// ```
    pub const fn server() -> Decoder {
        Decoder::new(Role::Server, Limits::DEFAULT)
    }

    /// A client's decoder (server frames must not be masked) with the
    /// default [`Limits`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{Decoder, Error};
    ///
    /// // A server's frames must not be masked (RFC 6455 §5.1).
    /// let mut masked = *b"\x81\x82\x00\x00\x00\x00hi";
    /// assert_eq!(Decoder::client().decode(&mut masked).unwrap_err(), Error::MaskedFrame);
    /// ```
    pub const fn client() -> Decoder {
        Decoder::new(Role::Client, Limits::DEFAULT)
    }

    /// Allows RSV1 on the first frame of a data message, as
    /// permessage-deflate does once negotiated (RFC 7692 §6); the bit is
    /// reported as [`Event::MessageStart`]'s `compressed`. RSV1 on a
    /// continuation or control frame, and RSV2 and RSV3 anywhere, stay
    /// errors.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{Decoder, Error, Event, MessageKind};
    ///
    /// let frame = [0xc1, 0x00]; // FIN + RSV1, text, empty
    /// assert_eq!(Decoder::client().decode(&mut frame.clone()), Err(Error::ReservedBits));
    /// let decoded = Decoder::client().with_rsv1(true).decode(&mut frame.clone())?;
    /// assert_eq!(
    ///     decoded.event,
    ///     Some(Event::MessageStart { kind: MessageKind::Text, compressed: true, len: Some(0) })
    /// );
    /// # Ok::<(), Error>(())
    /// ```
    pub const fn with_rsv1(mut self, allowed: bool) -> Decoder {
        self.rsv1 = allowed;
        self
    }

    /// The role the decoder reads for.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{Decoder, Role};
    ///
    /// assert_eq!(Decoder::server().role(), Role::Server);
    /// assert_eq!(Decoder::client().role(), Role::Client);
    /// ```
    pub const fn role(&self) -> Role {
        self.role
    }

    /// The limits the decoder enforces.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{Decoder, Limits, Role};
    ///
    /// let limits = Limits { max_message_len: 1 << 16, ..Limits::DEFAULT };
    /// assert_eq!(Decoder::new(Role::Server, limits).limits(), limits);
    /// assert_eq!(Decoder::server().limits(), Limits::DEFAULT);
    /// ```
    pub const fn limits(&self) -> Limits {
        self.limits
    }

    /// Decodes one step over `input`, unmasking payload in place; see the
    /// [module docs](self) for the feeding order.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{Decoder, Event};
    ///
    /// let mut decoder = Decoder::client();
    /// let mut wire = *b"\x81\x05hello";
    /// // Part of a head: nothing to report yet, and nothing consumed.
    /// let decoded = decoder.decode(&mut wire[..1])?;
    /// assert_eq!((decoded.consumed, decoded.event), (0, None));
    /// let decoded = decoder.decode(&mut wire)?;
    /// assert!(matches!(decoded.event, Some(Event::MessageStart { len: Some(5), .. })));
    /// # Ok::<(), ringstream_core::ws::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The protocol violation found; [`Error::close_code`] is the code to
    /// fail the connection with. The decoder then stays failed.
    pub fn decode(&mut self, input: &mut [u8]) -> Result<Decoded, Error> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let mut pos = 0usize;
        loop {
            match self.state {
                State::Closed => {
                    if pos < input.len() {
                        return Err(self.fail(Error::FrameAfterClose));
                    }
                    return Ok(Decoded::new(pos, None));
                }
                State::Payload {
                    remaining: 0, fin, ..
                } => {
                    self.state = State::Head;
                    if fin {
                        if let Some(Message {
                            utf8: Some(mut utf8),
                            ..
                        }) = self.message.take()
                        {
                            utf8.finish().map_err(|e| self.fail(e))?;
                        }
                        return Ok(Decoded::new(pos, Some(Event::MessageEnd)));
                    }
                }
                State::Payload {
                    remaining,
                    mask,
                    offset,
                    fin,
                } => {
                    let rest = input.get_mut(pos..).unwrap_or_default();
                    if rest.is_empty() {
                        return Ok(Decoded::new(pos, None));
                    }
                    let take = usize::try_from(remaining).map_or(rest.len(), |r| r.min(rest.len()));
                    let data = &mut rest[..take];
                    if let Some(key) = mask {
                        apply_mask(data, key, offset);
                    }
                    // `take <= remaining`, so this cannot underflow.
                    let remaining = remaining - take as u64;
                    let last = remaining == 0 && fin;
                    if let Some(Message {
                        utf8: Some(utf8), ..
                    }) = &mut self.message
                    {
                        let checked = utf8.feed(data).and_then(|()| match last {
                            true => utf8.finish(),
                            false => Ok(()),
                        });
                        checked.map_err(|e| self.fail(e))?;
                    }
                    self.state = State::Payload {
                        remaining,
                        mask,
                        offset: (offset + take) % 4,
                        fin,
                    };
                    return Ok(Decoded::new(pos + take, Some(Event::Data(pos..pos + take))));
                }
                State::Head => {
                    let rest = input.get(pos..).unwrap_or_default();
                    let Some((header, head_len)) = self.head(rest).map_err(|e| self.fail(e))?
                    else {
                        return Ok(Decoded::new(pos, None));
                    };
                    if header.opcode.is_control() {
                        return self.control(input, pos, header, head_len);
                    }
                    pos += head_len;
                    self.state = State::Payload {
                        remaining: header.payload_len,
                        mask: header.mask,
                        offset: 0,
                        fin: header.fin,
                    };
                    let kind = match header.opcode {
                        OpCode::Text => MessageKind::Text,
                        OpCode::Binary => MessageKind::Binary,
                        _ => {
                            // A continuation: `head` checked that a message
                            // is in progress and that the sum fits.
                            if let Some(message) = &mut self.message {
                                message.len = message.len.saturating_add(header.payload_len);
                            }
                            continue;
                        }
                    };
                    let compressed = header.rsv1;
                    let text = kind == MessageKind::Text && !compressed;
                    self.message = Some(Message {
                        len: header.payload_len,
                        utf8: text.then(Utf8Validator::new),
                    });
                    let event = Event::MessageStart {
                        kind,
                        compressed,
                        len: header.fin.then_some(header.payload_len),
                    };
                    return Ok(Decoded::new(pos, Some(event)));
                }
            }
        }
    }

    /// Reads and checks the frame head at the start of `input`, its bytes
    /// in order: the first byte (opcode, FIN of a control frame, RSV bits,
    /// the place of the frame in the message sequence), the second (the
    /// mask bit for the role, a control frame's length), then the rest of
    /// the length and the limits.
    /// The fast path for the common case: when no message is in progress
    /// and `input` starts with a whole message in one frame — complete,
    /// final, uncompressed, text or binary — unmasks it in place, checks
    /// it (limits, UTF-8 for text) and returns it in one step.
    ///
    /// Returns `Ok(None)` and changes nothing for anything else (a partial
    /// frame, a fragment, a control frame, a compressed frame, no input):
    /// [`decode`](Self::decode) then steps through it.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{Decoder, MessageKind};
    ///
    /// let mut decoder = Decoder::client();
    /// let mut wire = *b"\x81\x02hi\x81\x05";
    /// let whole = decoder.decode_whole(&mut wire).unwrap().unwrap();
    /// assert_eq!(whole.kind, MessageKind::Text);
    /// assert_eq!(&wire[whole.payload.clone()], b"hi");
    /// assert_eq!(whole.consumed, 4);
    /// // The next frame is not complete yet.
    /// assert!(decoder.decode_whole(&mut wire[4..]).unwrap().is_none());
    /// ```
    ///
    /// # Errors
    ///
    /// Those [`decode`](Self::decode) would return for the same bytes
    /// ([`Error::close_code`] is the code to fail the connection with); the
    /// decoder then stays failed.
    pub fn decode_whole(&mut self, input: &mut [u8]) -> Result<Option<WholeMessage>, Error> {
        if self.error.is_some() || self.message.is_some() || !matches!(self.state, State::Head) {
            return Ok(None);
        }
        // FIN set, no reserved bit, text or binary.
        let kind = match input.first() {
            Some(0x81) => MessageKind::Text,
            Some(0x82) => MessageKind::Binary,
            _ => return Ok(None),
        };
        let Some((header, head_len)) = self.head(input).map_err(|e| self.fail(e))? else {
            return Ok(None);
        };
        let Some(end) = usize::try_from(header.payload_len)
            .ok()
            .and_then(|len| head_len.checked_add(len))
        else {
            return Ok(None);
        };
        let Some(payload) = input.get_mut(head_len..end) else {
            return Ok(None);
        };
        if let Some(key) = header.mask {
            apply_mask(payload, key, 0);
        }
        if kind == MessageKind::Text {
            let mut utf8 = Utf8Validator::new();
            utf8.feed(payload)
                .and_then(|()| utf8.finish())
                .map_err(|e| self.fail(e))?;
        }
        Ok(Some(WholeMessage {
            kind,
            payload: head_len..end,
            consumed: end,
        }))
    }

    /// Whether the decoder waits for the first byte of a frame, with no
    /// event left to report without more input: given no bytes,
    /// [`decode`](Self::decode) would return nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::Decoder;
    ///
    /// let mut decoder = Decoder::client();
    /// assert!(decoder.at_frame_start());
    /// let mut frame = *b"\x81\x00";
    /// decoder.decode(&mut frame).unwrap();
    /// // The empty message's end is still to be reported.
    /// assert!(!decoder.at_frame_start());
    /// ```
    pub const fn at_frame_start(&self) -> bool {
        matches!(self.state, State::Head) && self.error.is_none()
    }

    fn head(&self, input: &[u8]) -> Result<Option<(FrameHeader, usize)>, Error> {
        let Some(&b0) = input.first() else {
            return Ok(None);
        };
        let first = FirstByte::parse(b0)?;
        let is_data_start = matches!(first.opcode, OpCode::Text | OpCode::Binary);
        if (first.rsv1 && !(self.rsv1 && is_data_start)) || first.rsv2 || first.rsv3 {
            return Err(Error::ReservedBits);
        }
        match (first.opcode, self.message.is_some()) {
            (OpCode::Continuation, false) => return Err(Error::UnexpectedContinuation),
            (OpCode::Text | OpCode::Binary, true) => return Err(Error::ExpectedContinuation),
            _ => {}
        }
        let Some(&b1) = input.get(1) else {
            return Ok(None);
        };
        let second = SecondByte::parse(first.opcode, b1)?;
        match (self.role, second.masked) {
            (Role::Server, false) => return Err(Error::UnmaskedFrame),
            (Role::Client, true) => return Err(Error::MaskedFrame),
            _ => {}
        }
        let Some((header, len)) = FrameHeader::parse(input)? else {
            return Ok(None);
        };
        if !header.opcode.is_control() {
            if header.payload_len > as_u64(self.limits.max_frame_len) {
                return Err(Error::FrameTooLarge);
            }
            let so_far = self.message.map_or(0, |m| m.len);
            if so_far.saturating_add(header.payload_len) > as_u64(self.limits.max_message_len) {
                return Err(Error::MessageTooLarge);
            }
        }
        Ok(Some((header, len)))
    }

    /// Hands out a control frame once all of it is in `input`.
    fn control(
        &mut self,
        input: &mut [u8],
        pos: usize,
        header: FrameHeader,
        head_len: usize,
    ) -> Result<Decoded, Error> {
        let start = pos + head_len;
        // A control payload is at most 125 bytes (checked by the parse).
        let end = start + header.payload_len as usize;
        let Some(payload) = input.get_mut(start..end) else {
            return Ok(Decoded::new(pos, None));
        };
        if let Some(key) = header.mask {
            apply_mask(payload, key, 0);
        }
        let event = match header.opcode {
            OpCode::Ping => Event::Ping(start..end),
            OpCode::Pong => Event::Pong(start..end),
            _ => {
                let code = match ClosePayload::parse(payload) {
                    Ok(parsed) => parsed.map(|(code, _)| code),
                    Err(e) => return Err(self.fail(e)),
                };
                self.state = State::Closed;
                // A message cut short by the Close is over too.
                self.message = None;
                let reason = if code.is_some() { start + 2 } else { end };
                Event::Close {
                    code,
                    reason: reason..end,
                }
            }
        };
        Ok(Decoded::new(end, Some(event)))
    }

    /// Records `e`: every later call returns it.
    fn fail(&mut self, e: Error) -> Error {
        self.error = Some(e);
        e
    }

    /// Tells the decoder the peer closed the connection.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{Decoder, Error};
    ///
    /// assert_eq!(Decoder::server().finish_eof(), Err(Error::UnexpectedEof));
    /// let mut decoder = Decoder::client();
    /// decoder.decode(&mut [0x88, 0x00])?;
    /// assert_eq!(decoder.finish_eof(), Ok(()));
    /// # Ok::<(), Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::UnexpectedEof`] (close code 1006) unless the peer's Close
    /// frame was read, or the error the decoder had already failed with.
    pub fn finish_eof(&mut self) -> Result<(), Error> {
        if let Some(e) = self.error {
            return Err(e);
        }
        match self.state {
            State::Closed => Ok(()),
            _ => Err(self.fail(Error::UnexpectedEof)),
        }
    }

    /// Whether the peer's Close frame has been read.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::Decoder;
    ///
    /// let mut decoder = Decoder::client();
    /// let mut close = *b"\x88\x02\x03\xe8"; // Close 1000
    /// decoder.decode(&mut close)?;
    /// assert!(decoder.is_closed());
    /// # Ok::<(), ringstream_core::ws::Error>(())
    /// ```
    pub const fn is_closed(&self) -> bool {
        matches!(self.state, State::Closed) && self.error.is_none()
    }

    /// Whether a data message has started and not yet ended.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::Decoder;
    ///
    /// let mut decoder = Decoder::client();
    /// // The first fragment of a text message (FIN unset).
    /// let mut wire = *b"\x01\x03Hel";
    /// assert!(!decoder.in_message());
    /// decoder.decode(&mut wire)?; // the message starts
    /// assert!(decoder.in_message());
    /// # Ok::<(), ringstream_core::ws::Error>(())
    /// ```
    pub const fn in_message(&self) -> bool {
        self.message.is_some()
    }

    /// The error the decoder failed with, if it has.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::Decoder;
    ///
    /// let mut decoder = Decoder::client();
    /// // An opcode no extension defines (0x3).
    /// let mut reserved = *b"\x83\x00";
    /// assert!(decoder.decode(&mut reserved).is_err());
    /// assert!(decoder.error().is_some());
    /// // The decoder stays failed.
    /// assert_eq!(decoder.decode(&mut [0x81, 0x00]).unwrap_err(), decoder.error().unwrap());
    /// ```
    pub const fn error(&self) -> Option<Error> {
        self.error
    }
}

/// A limit as a payload length; a limit beyond `u64` is no limit.
fn as_u64(limit: usize) -> u64 {
    u64::try_from(limit).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_continuations_are_skipped_within_one_call() {
        // Text "a" (no FIN), two empty continuations, a final "b".
        let mut wire = *b"\x01\x01a\x00\x00\x00\x00\x80\x01b";
        let mut decoder = Decoder::client();
        let d = decoder.decode(&mut wire).unwrap();
        assert_eq!(d.consumed, 2);
        let d = decoder.decode(&mut wire[2..]).unwrap();
        assert_eq!((d.consumed, d.event), (1, Some(Event::Data(0..1))));
        let d = decoder.decode(&mut wire[3..]).unwrap();
        assert_eq!((d.consumed, d.event), (7, Some(Event::Data(6..7))));
        let d = decoder.decode(&mut wire[10..]).unwrap();
        assert_eq!((d.consumed, d.event), (0, Some(Event::MessageEnd)));
        assert!(!decoder.in_message());
    }

    #[test]
    fn a_partial_control_frame_is_not_consumed() {
        let mut wire = *b"\x89\x03abc";
        let mut decoder = Decoder::client();
        for cut in 0..wire.len() {
            let d = decoder.decode(&mut wire[..cut]).unwrap();
            assert_eq!(d, Decoded::new(0, None), "{cut}");
        }
        let d = decoder.decode(&mut wire).unwrap();
        assert_eq!(d, Decoded::new(5, Some(Event::Ping(2..5))));
    }
}
