//! WebSocket (RFC 6455), sans-IO: it is given the bytes of a connection and
//! says what they mean, or what to send.
//!
//! - [`frame`]: the frame head ([`FrameHeader`], parsed and written, with
//!   [`OpCode`] and [`MessageKind`]).
//! - [`mask`]: [`apply_mask`], masking and unmasking in place, a word at a
//!   time, resumable at any payload offset.
//! - [`decode`]: the [`Decoder`], which steps over a read buffer and
//!   reports [`Event`]s with byte ranges into it: messages (fragmented or
//!   not, with control frames between the fragments), pings, pongs and the
//!   peer's close, under [`Limits`] on frame and message size.
//! - [`utf8`]: the [`Utf8Validator`] the decoder runs over text, fed in
//!   pieces split anywhere.
//! - [`close`]: [`CloseCode`] and the Close payload ([`ClosePayload`]).
//! - [`encode`]: the writer side, [`message_head`] and [`ControlFrame`].
//! - [`extension`]: the negotiation of permessage-deflate (RFC 7692):
//!   [`DeflateParams`] parsed from an offer and written as a response,
//!   [`DeflateConfig`] choosing the offer to accept.
//! - [`handshake`]: the server's checks of an upgrade request's WebSocket
//!   fields and the `Sec-WebSocket-Accept` value ([`accept`]).
//! - [`Error`]: the errors of this module, each with the close code (or,
//!   for the handshake, the HTTP status) to answer with.
//!
//! # Examples
//!
//! A server echoes a client's text message and answers its Close:
//!
//! ```
//! use ringstream_core::ws::{
//!     message_head, ClosePayload, CloseCode, ControlFrame, Decoder, Event, FrameHeader,
//!     MessageKind, OpCode, apply_mask,
//! };
//!
//! // What a client sends: a masked "Hi!" and a masked Close 1000.
//! let key = [1, 2, 3, 4];
//! let mut wire = Vec::new();
//! wire.extend_from_slice(FrameHeader::new(OpCode::Text, 3).with_mask(key).encode().as_ref());
//! let mut text = *b"Hi!";
//! apply_mask(&mut text, key, 0);
//! wire.extend_from_slice(&text);
//! wire.extend_from_slice(FrameHeader::new(OpCode::Close, 2).with_mask(key).encode().as_ref());
//! let mut code = 1000u16.to_be_bytes();
//! apply_mask(&mut code, key, 0);
//! wire.extend_from_slice(&code);
//!
//! let mut decoder = Decoder::server();
//! let mut out = Vec::new();
//! let mut message = Vec::new();
//! let mut input = &mut wire[..];
//! loop {
//!     let decoded = decoder.decode(input)?;
//!     match decoded.event {
//!         None => break, // read more from the socket
//!         Some(Event::Data(range)) => message.extend_from_slice(&input[range]),
//!         Some(Event::MessageEnd) => {
//!             out.extend_from_slice(message_head(MessageKind::Text, message.len() as u64).as_ref());
//!             out.append(&mut message);
//!         }
//!         Some(Event::Close { code, .. }) => {
//!             let code = code.unwrap_or(CloseCode::NORMAL);
//!             out.extend_from_slice(ControlFrame::close(&ClosePayload::new(code, "")?).as_ref());
//!         }
//!         Some(_) => {}
//!     }
//!     input = &mut input[decoded.consumed..];
//! }
//! assert_eq!(out, b"\x81\x03Hi!\x88\x02\x03\xe8");
//! # Ok::<(), ringstream_core::ws::Error>(())
//! ```

pub mod close;
pub mod close_code;
pub mod decode;
pub mod encode;
pub mod error;
pub mod extension;
pub mod frame;
pub mod handshake;
pub mod mask;
pub mod utf8;

pub use close::{ClosePayload, MAX_CLOSE_REASON_LEN};
pub use close_code::CloseCode;
pub use decode::{Decoded, Decoder, Event, Limits, Role, WholeMessage};
pub use encode::{message_head, ControlFrame};
pub use error::Error;
pub use extension::{
    DeflateConfig, DeflateHeader, DeflateParams, ParamsError, MAX_DEFLATE_HEADER_LEN,
    MAX_WINDOW_BITS, MIN_WINDOW_BITS, PERMESSAGE_DEFLATE,
};
pub use frame::{
    FrameHead, FrameHeader, MessageKind, OpCode, MAX_CONTROL_FRAME_LEN, MAX_CONTROL_PAYLOAD_LEN,
    MAX_HEAD_LEN, MAX_PAYLOAD_LEN,
};
pub use handshake::{
    accept, accept_key, check_extended_connect, check_key, check_request, check_version,
    is_websocket_upgrade, AcceptKey, GUID, KEY_LEN, VERSION,
};
pub use mask::apply_mask;
pub use utf8::Utf8Validator;
