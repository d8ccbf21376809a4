//! What a WebSocket carries: [`Message`] and [`CloseFrame`].

use bytes::Bytes;
use ringstream_core::ws::CloseCode;

/// One WebSocket message, received or to send. Data is `Bytes`: a received
/// message that came in one frame is handed over from the connection's read
/// block without a copy, and a message sent with a large payload goes out
/// without one.
///
/// # Examples
///
/// ```
/// use ringstream::ws::Message;
///
/// let hello = Message::text("hello");
/// assert_eq!(hello.as_text(), Some("hello"));
/// assert!(hello.is_data());
/// assert_eq!(Message::binary(vec![1, 2, 3]).payload().len(), 3);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// A text message: its bytes are valid UTF-8 (a received one was
    /// checked as it arrived).
    Text(Bytes),
    /// A binary message.
    Binary(Bytes),
    /// A Ping (at most 125 bytes). A received Ping is answered with a Pong
    /// by the connection itself.
    Ping(Bytes),
    /// A Pong (at most 125 bytes).
    Pong(Bytes),
    /// The close handshake: a received Close was answered already; `None`
    /// when the peer's Close carried no code.
    Close(Option<CloseFrame>),
}

impl Message {
    /// A text message.
    pub fn text(text: impl Into<String>) -> Message {
        Message::Text(Bytes::from(text.into()))
    }

    /// A binary message.
    pub fn binary(data: impl Into<Bytes>) -> Message {
        Message::Binary(data.into())
    }

    /// The text of a text message.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Message::Text(text) => std::str::from_utf8(text).ok(),
            _ => None,
        }
    }

    /// The payload: the data of a text or binary message, a Ping's or a
    /// Pong's, or a Close's reason.
    pub fn payload(&self) -> &[u8] {
        match self {
            Message::Text(b) | Message::Binary(b) | Message::Ping(b) | Message::Pong(b) => b,
            Message::Close(Some(frame)) => frame.reason.as_bytes(),
            Message::Close(None) => &[],
        }
    }

    /// Whether it is a text or binary message.
    pub fn is_data(&self) -> bool {
        matches!(self, Message::Text(_) | Message::Binary(_))
    }
}

/// A Close frame's code and reason.
///
/// # Examples
///
/// ```
/// use ringstream::ws::{CloseCode, CloseFrame};
///
/// let frame = CloseFrame::new(CloseCode::NORMAL, "bye");
/// assert_eq!(frame.code, CloseCode::NORMAL);
/// assert_eq!(frame.reason, "bye");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloseFrame {
    /// The close code.
    pub code: CloseCode,
    /// The reason, at most 123 bytes of UTF-8 (a longer one is cut at a
    /// character boundary when sent).
    pub reason: String,
}

impl CloseFrame {
    /// A close frame with `code` and `reason`.
    pub fn new(code: CloseCode, reason: impl Into<String>) -> CloseFrame {
        CloseFrame {
            code,
            reason: reason.into(),
        }
    }
}
