//! What a WebSocket carries: [`Message`] and [`CloseFrame`], shaped as
//! axum's (`axum::extract::ws`), and the [`close_code`] constants.

use bytes::Bytes;
use ringstream_core::ws::CloseCode;

use super::Utf8Bytes;
use crate::error::Error;

/// One WebSocket message, received or to send, as axum's `Message`. Data is
/// `Bytes` (text is [`Utf8Bytes`]): a received message that came in one
/// frame is handed over from the connection's read block without a copy,
/// and a message sent with a large payload goes out without one.
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
///
/// match hello {
///     Message::Text(text) => assert_eq!(text.as_str(), "hello"),
///     _ => unreachable!(),
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// A text message: its bytes are valid UTF-8 (a received one was
    /// checked as it arrived).
    Text(Utf8Bytes),
    /// A binary message.
    Binary(Bytes),
    /// A Ping (at most 125 bytes). A received Ping is answered with a Pong
    /// by the connection itself.
    Ping(Bytes),
    /// A Pong (at most 125 bytes).
    Pong(Bytes),
    /// The close handshake. Received: the peer's Close, answered already
    /// with a Close that echoes its code and reason; `None` when the peer's
    /// Close carried no code. Sent: a Close with the frame's code and
    /// reason, or with 1000 (normal) for `None`; nothing can be sent after
    /// it.
    Close(Option<CloseFrame>),
}

impl Message {
    /// A text message.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::ws::Message;
    ///
    /// let name = String::from("ring");
    /// assert_eq!(Message::text(format!("hello, {name}")).as_text(), Some("hello, ring"));
    /// assert_eq!(Message::text(&name).as_text(), Some("ring"));
    /// ```
    pub fn text(text: impl Into<Utf8Bytes>) -> Message {
        Message::Text(text.into())
    }

    /// A binary message.
    pub fn binary(data: impl Into<Bytes>) -> Message {
        Message::Binary(data.into())
    }

    /// The text of a text message.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Message::Text(text) => Some(text.as_str()),
            _ => None,
        }
    }

    /// The payload: the data of a text or binary message, a Ping's or a
    /// Pong's, or a Close's reason.
    pub fn payload(&self) -> &[u8] {
        match self {
            Message::Text(text) => text.as_bytes(),
            Message::Binary(b) | Message::Ping(b) | Message::Pong(b) => b,
            Message::Close(Some(frame)) => frame.reason.as_bytes(),
            Message::Close(None) => &[],
        }
    }

    /// Whether it is a text or binary message.
    pub fn is_data(&self) -> bool {
        matches!(self, Message::Text(_) | Message::Binary(_))
    }

    /// The payload as `Bytes`, without a copy (as
    /// [`payload`](Self::payload)).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::ws::Message;
    ///
    /// assert_eq!(&Message::text("hi").into_data()[..], b"hi");
    /// assert!(Message::Close(None).into_data().is_empty());
    /// ```
    pub fn into_data(self) -> Bytes {
        match self {
            Message::Text(text) => text.into_bytes(),
            Message::Binary(data) | Message::Ping(data) | Message::Pong(data) => data,
            Message::Close(Some(frame)) => frame.reason.into_bytes(),
            Message::Close(None) => Bytes::new(),
        }
    }

    /// The payload as text, without a copy: a text message's as it is,
    /// any other payload checked as UTF-8.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::ws::Message;
    ///
    /// assert_eq!(Message::binary(&b"hi"[..]).into_text()?, "hi");
    /// assert!(Message::binary(vec![0xff]).into_text().is_err());
    /// # Ok::<(), ringstream::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::WebSocket`] with
    /// [`InvalidUtf8`](ringstream_core::ws::Error::InvalidUtf8) when a
    /// binary, Ping or Pong payload is not UTF-8.
    pub fn into_text(self) -> Result<Utf8Bytes, Error> {
        match self {
            Message::Text(text) => Ok(text),
            Message::Binary(data) | Message::Ping(data) | Message::Pong(data) => {
                Utf8Bytes::try_from(data).map_err(|_| invalid_utf8())
            }
            Message::Close(Some(frame)) => Ok(frame.reason),
            Message::Close(None) => Ok(Utf8Bytes::default()),
        }
    }

    /// The payload as `&str`: a text message's as it is, any other payload
    /// checked as UTF-8.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::ws::Message;
    ///
    /// assert_eq!(Message::text("hi").to_text()?, "hi");
    /// assert_eq!(Message::Ping(bytes::Bytes::from_static(b"ping")).to_text()?, "ping");
    /// # Ok::<(), ringstream::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`into_text`](Self::into_text).
    pub fn to_text(&self) -> Result<&str, Error> {
        match self {
            Message::Text(text) => Ok(text.as_str()),
            Message::Binary(data) | Message::Ping(data) | Message::Pong(data) => {
                std::str::from_utf8(data).map_err(|_| invalid_utf8())
            }
            Message::Close(Some(frame)) => Ok(frame.reason.as_str()),
            Message::Close(None) => Ok(""),
        }
    }
}

fn invalid_utf8() -> Error {
    Error::WebSocket(ringstream_core::ws::Error::InvalidUtf8)
}

impl From<String> for Message {
    fn from(text: String) -> Message {
        Message::Text(text.into())
    }
}

impl From<&str> for Message {
    fn from(text: &str) -> Message {
        Message::Text(text.into())
    }
}

impl From<&[u8]> for Message {
    fn from(data: &[u8]) -> Message {
        Message::Binary(Bytes::copy_from_slice(data))
    }
}

impl From<Bytes> for Message {
    fn from(data: Bytes) -> Message {
        Message::Binary(data)
    }
}

impl From<Vec<u8>> for Message {
    fn from(data: Vec<u8>) -> Message {
        Message::Binary(data.into())
    }
}

impl From<Message> for Vec<u8> {
    fn from(message: Message) -> Vec<u8> {
        message.into_data().into()
    }
}

/// A Close frame's code and reason, as axum's `CloseFrame`: the code is a
/// `u16` (the [`close_code`] constants, or a [`CloseCode`]'s
/// [`as_u16`](CloseCode::as_u16)).
///
/// # Examples
///
/// ```
/// use ringstream::ws::{close_code, CloseCode, CloseFrame, Utf8Bytes};
///
/// let frame = CloseFrame {
///     code: close_code::NORMAL,
///     reason: Utf8Bytes::from_static("Goodbye"),
/// };
/// assert_eq!(frame, CloseFrame::new(CloseCode::NORMAL, "Goodbye"));
/// assert_eq!(frame.close_code(), CloseCode::NORMAL);
/// assert_eq!(frame.reason, "Goodbye");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloseFrame {
    /// The close code. One that may not be sent (see
    /// [`CloseCode::is_valid_on_wire`]) sends a Close without a code.
    pub code: u16,
    /// The reason, at most 123 bytes of UTF-8 (a longer one is cut at a
    /// character boundary when sent).
    pub reason: Utf8Bytes,
}

impl CloseFrame {
    /// A close frame with `code` and `reason`.
    pub fn new(code: CloseCode, reason: impl Into<Utf8Bytes>) -> CloseFrame {
        CloseFrame {
            code: code.as_u16(),
            reason: reason.into(),
        }
    }

    /// The code as a [`CloseCode`].
    pub fn close_code(&self) -> CloseCode {
        CloseCode(self.code)
    }
}

/// The close codes as `u16`, by the names axum gives them
/// (`axum::extract::ws::close_code`), for [`CloseFrame::code`]. The same
/// codes are [`CloseCode`] constants under the RFC's names.
///
/// # Examples
///
/// ```
/// use ringstream::ws::{close_code, CloseCode};
///
/// assert_eq!(close_code::NORMAL, 1000);
/// assert_eq!(close_code::AWAY, CloseCode::GOING_AWAY.as_u16());
/// ```
pub mod close_code {
    use super::CloseCode;

    /// 1000: a normal closure; the purpose of the connection has been
    /// fulfilled ([`CloseCode::NORMAL`]).
    pub const NORMAL: u16 = CloseCode::NORMAL.as_u16();
    /// 1001: the endpoint is going away, a server going down or a browser
    /// leaving the page ([`CloseCode::GOING_AWAY`]).
    pub const AWAY: u16 = CloseCode::GOING_AWAY.as_u16();
    /// 1002: the endpoint ends the connection for a protocol error
    /// ([`CloseCode::PROTOCOL_ERROR`]).
    pub const PROTOCOL: u16 = CloseCode::PROTOCOL_ERROR.as_u16();
    /// 1003: the endpoint received a type of data it cannot accept
    /// ([`CloseCode::UNSUPPORTED_DATA`]).
    pub const UNSUPPORTED: u16 = CloseCode::UNSUPPORTED_DATA.as_u16();
    /// 1005: the Close carried no code; reported, never sent
    /// ([`CloseCode::NO_STATUS`]).
    pub const STATUS: u16 = CloseCode::NO_STATUS.as_u16();
    /// 1006: the connection ended without a Close; reported, never sent
    /// ([`CloseCode::ABNORMAL`]).
    pub const ABNORMAL: u16 = CloseCode::ABNORMAL.as_u16();
    /// 1007: a message's data does not match its type, such as text that
    /// is not UTF-8 ([`CloseCode::INVALID_PAYLOAD`]).
    pub const INVALID: u16 = CloseCode::INVALID_PAYLOAD.as_u16();
    /// 1008: a message violates the endpoint's policy
    /// ([`CloseCode::POLICY_VIOLATION`]).
    pub const POLICY: u16 = CloseCode::POLICY_VIOLATION.as_u16();
    /// 1009: a message is too big to process
    /// ([`CloseCode::MESSAGE_TOO_BIG`]).
    pub const SIZE: u16 = CloseCode::MESSAGE_TOO_BIG.as_u16();
    /// 1010: (a client's) the server did not negotiate an extension the
    /// client requires ([`CloseCode::MANDATORY_EXTENSION`]).
    pub const EXTENSION: u16 = CloseCode::MANDATORY_EXTENSION.as_u16();
    /// 1011: (a server's) an unexpected condition kept it from fulfilling
    /// the request ([`CloseCode::INTERNAL_ERROR`]).
    pub const ERROR: u16 = CloseCode::INTERNAL_ERROR.as_u16();
    /// 1012: the service is restarting ([`CloseCode::SERVICE_RESTART`]).
    pub const RESTART: u16 = CloseCode::SERVICE_RESTART.as_u16();
    /// 1013: the service is overloaded; try again later
    /// ([`CloseCode::TRY_AGAIN_LATER`]).
    pub const AGAIN: u16 = CloseCode::TRY_AGAIN_LATER.as_u16();
}
