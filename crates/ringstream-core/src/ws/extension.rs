//! WebSocket extensions (RFC 6455 §9): the negotiation of
//! permessage-deflate (RFC 7692), without allocation.
//!
//! A client lists the extensions it offers in `Sec-WebSocket-Extensions`;
//! permessage-deflate may be offered several times, with different
//! parameters, in order of preference (RFC 7692 §5). A server accepts at
//! most one offer and names it, with its own answer to each parameter, in
//! the `Sec-WebSocket-Extensions` of its `101` response. Once accepted,
//! RSV1 marks a compressed message
//! ([`Decoder::with_rsv1`](crate::ws::Decoder::with_rsv1),
//! [`FrameHeader::with_rsv1`](crate::ws::FrameHeader::with_rsv1)).
//!
//! - [`DeflateParams`]: the four parameters of one offer or one response
//!   (RFC 7692 §7.1), parsed with [`DeflateParams::parse`] and written with
//!   [`DeflateParams::to_header`] into a [`DeflateHeader`] on the stack.
//! - [`DeflateConfig`]: a server's own settings, and
//!   [`negotiate`](DeflateConfig::negotiate), which picks the first valid
//!   offer of a request's fields and answers it.
//!
//! Compression itself is not here: it needs a DEFLATE implementation, which
//! ringstream provides behind its `deflate` feature.
//!
//! # Examples
//!
//! A browser's offer, answered by a server with the default settings:
//!
//! ```
//! use ringstream_core::ws::{DeflateConfig, Role};
//!
//! let offered: [&[u8]; 1] = [b"permessage-deflate; client_max_window_bits"];
//! let params = DeflateConfig::DEFAULT.negotiate(offered).expect("accepted");
//! assert_eq!(params.to_header().as_str(), "permessage-deflate; server_no_context_takeover");
//! // The server compresses each message on its own; the client keeps its
//! // LZ77 window from one message to the next.
//! assert!(params.send_no_context_takeover(Role::Server));
//! assert!(!params.recv_no_context_takeover(Role::Server));
//! assert_eq!(params.recv_window_bits(Role::Server), 15);
//! ```

use core::fmt;

use crate::ws::Role;

/// The extension token of permessage-deflate (RFC 7692 §7).
pub const PERMESSAGE_DEFLATE: &str = "permessage-deflate";

/// The smallest LZ77 window a `*_max_window_bits` parameter may name: 2^8
/// bytes (RFC 7692 §7.1.2).
pub const MIN_WINDOW_BITS: u8 = 8;

/// The largest LZ77 window, and the one used when no parameter limits it:
/// 2^15 bytes, DEFLATE's own maximum (RFC 7692 §7.1.2).
pub const MAX_WINDOW_BITS: u8 = 15;

/// The longest value [`DeflateParams::to_header`] writes: the extension
/// token and all four parameters.
pub const MAX_DEFLATE_HEADER_LEN: usize = 128;

const SERVER_NO_CONTEXT_TAKEOVER: &str = "server_no_context_takeover";
const CLIENT_NO_CONTEXT_TAKEOVER: &str = "client_no_context_takeover";
const SERVER_MAX_WINDOW_BITS: &str = "server_max_window_bits";
const CLIENT_MAX_WINDOW_BITS: &str = "client_max_window_bits";

/// Why a list element is not a valid permessage-deflate offer or response
/// (RFC 7692 §7). A server declines such an offer and looks at the next.
///
/// # Examples
///
/// ```
/// use ringstream_core::ws::{DeflateParams, ParamsError};
///
/// let parse = |s: &str| DeflateParams::parse(s.as_bytes());
/// assert_eq!(parse("x-webkit-deflate-frame"), Err(ParamsError::OtherExtension));
/// assert_eq!(parse("permessage-deflate; level=9"), Err(ParamsError::UnknownParameter));
/// assert_eq!(
///     parse("permessage-deflate; server_no_context_takeover; server_no_context_takeover"),
///     Err(ParamsError::DuplicateParameter)
/// );
/// assert_eq!(parse("permessage-deflate; server_max_window_bits=16"), Err(ParamsError::InvalidValue));
/// assert_eq!(parse("permessage-deflate; ; client_max_window_bits"), Err(ParamsError::Syntax));
/// assert_eq!(ParamsError::InvalidValue.to_string(), "invalid permessage-deflate parameter value");
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParamsError {
    /// The element names another extension.
    OtherExtension,
    /// The element is not `token *( ";" token [ "=" value ] )` (RFC 6455
    /// §9.1): an empty parameter, a name that is not a token, a quoted
    /// string left open.
    Syntax,
    /// A parameter RFC 7692 does not define.
    UnknownParameter,
    /// The same parameter twice.
    DuplicateParameter,
    /// A value where none is allowed, none where one is required, or a
    /// window size that is not a decimal from 8 to 15 without leading
    /// zeros.
    InvalidValue,
}

impl ParamsError {
    /// A short lowercase description, the same text as `Display`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::ParamsError;
    ///
    /// assert_eq!(ParamsError::Syntax.as_str(), ParamsError::Syntax.to_string());
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            ParamsError::OtherExtension => "not permessage-deflate",
            ParamsError::Syntax => "malformed extension parameters",
            ParamsError::UnknownParameter => "unknown permessage-deflate parameter",
            ParamsError::DuplicateParameter => "repeated permessage-deflate parameter",
            ParamsError::InvalidValue => "invalid permessage-deflate parameter value",
        }
    }
}

impl fmt::Display for ParamsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl core::error::Error for ParamsError {}

/// The parameters of one permessage-deflate offer or response (RFC 7692
/// §7.1). After the handshake, the server's response is the agreement both
/// ends follow.
///
/// Window sizes are base-2 logarithms from [`MIN_WINDOW_BITS`] to
/// [`MAX_WINDOW_BITS`]; `None` means the parameter is absent. In an offer,
/// a `client_max_window_bits` without a value (the client supports the
/// parameter and names no limit) reads as `Some(15)`.
///
/// # Examples
///
/// ```
/// use ringstream_core::ws::{DeflateParams, Role};
///
/// let params = DeflateParams::parse(b"permessage-deflate; server_max_window_bits=10; client_no_context_takeover")?;
/// assert_eq!(params.server_max_window_bits, Some(10));
/// assert!(params.client_no_context_takeover);
/// assert_eq!(params.send_window_bits(Role::Server), 10);
/// assert_eq!(params.send_window_bits(Role::Client), 15);
/// assert_eq!(
///     params.to_header().as_str(),
///     "permessage-deflate; client_no_context_takeover; server_max_window_bits=10"
/// );
/// # Ok::<(), ringstream_core::ws::ParamsError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct DeflateParams {
    /// The server resets its compressor after each message: no message it
    /// sends refers back to an earlier one (RFC 7692 §7.1.1.1).
    pub server_no_context_takeover: bool,
    /// The client resets its compressor after each message (RFC 7692
    /// §7.1.1.2).
    pub client_no_context_takeover: bool,
    /// The largest LZ77 window the server compresses with (RFC 7692
    /// §7.1.2.1).
    pub server_max_window_bits: Option<u8>,
    /// The largest LZ77 window the client compresses with (RFC 7692
    /// §7.1.2.2).
    pub client_max_window_bits: Option<u8>,
}

impl DeflateParams {
    /// No parameters: both ends keep their window from one message to the
    /// next, with windows of 2^15 bytes — the element `permessage-deflate`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{DeflateParams, Role};
    ///
    /// let params = DeflateParams::new();
    /// assert_eq!(params.server_window_bits(), 15);
    /// assert!(!params.send_no_context_takeover(Role::Server));
    /// ```
    pub const fn new() -> DeflateParams {
        DeflateParams {
            server_no_context_takeover: false,
            client_no_context_takeover: false,
            server_max_window_bits: None,
            client_max_window_bits: None,
        }
    }

    /// Parses one element of a `Sec-WebSocket-Extensions` list:
    /// `permessage-deflate` and its parameters, as in
    /// `permessage-deflate; client_max_window_bits; server_max_window_bits=10`.
    ///
    /// Names are compared without regard to ASCII case, whitespace around
    /// `;` and `=` is ignored, and a value may be a quoted string
    /// (`server_max_window_bits="10"`, RFC 6455 §9.1).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{DeflateParams, Role};
    ///
    /// let offer = b"permessage-deflate; client_max_window_bits; server_max_window_bits=10";
    /// let params = DeflateParams::parse(offer)?;
    /// assert_eq!(params.send_window_bits(Role::Server), 10);
    /// assert_eq!(params.client_window_bits(), 15);
    /// assert!(DeflateParams::parse(b"x-webkit-deflate-frame").is_err());
    /// # Ok::<(), ringstream_core::ws::ParamsError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ParamsError`]: another extension, or an offer RFC 7692 §7 says to
    /// decline (unknown or repeated parameters, invalid values).
    pub fn parse(element: &[u8]) -> Result<DeflateParams, ParamsError> {
        let mut parts = Split::new(element, b';');
        let name = parts.next().unwrap_or_default().trim_ascii();
        if !name.eq_ignore_ascii_case(PERMESSAGE_DEFLATE.as_bytes()) {
            return Err(if is_token(name) {
                ParamsError::OtherExtension
            } else {
                ParamsError::Syntax
            });
        }
        let mut params = DeflateParams::new();
        let mut seen = [false; 4];
        for part in parts {
            let (name, value) = match part.iter().position(|&b| b == b'=') {
                Some(eq) => (part[..eq].trim_ascii(), Some(part[eq + 1..].trim_ascii())),
                None => (part.trim_ascii(), None),
            };
            if !is_token(name) {
                return Err(ParamsError::Syntax);
            }
            let value = value.map(unquote).transpose()?;
            let index = [
                SERVER_NO_CONTEXT_TAKEOVER,
                CLIENT_NO_CONTEXT_TAKEOVER,
                SERVER_MAX_WINDOW_BITS,
                CLIENT_MAX_WINDOW_BITS,
            ]
            .iter()
            .position(|known| name.eq_ignore_ascii_case(known.as_bytes()))
            .ok_or(ParamsError::UnknownParameter)?;
            if core::mem::replace(&mut seen[index], true) {
                return Err(ParamsError::DuplicateParameter);
            }
            match (index, value) {
                (0, None) => params.server_no_context_takeover = true,
                (1, None) => params.client_no_context_takeover = true,
                (2, Some(value)) => params.server_max_window_bits = Some(window_bits(value)?),
                (3, None) => params.client_max_window_bits = Some(MAX_WINDOW_BITS),
                (3, Some(value)) => params.client_max_window_bits = Some(window_bits(value)?),
                _ => return Err(ParamsError::InvalidValue),
            }
        }
        Ok(params)
    }

    /// The first valid permessage-deflate offer in a request's
    /// `Sec-WebSocket-Extensions` values (one per field line; each a
    /// comma-separated list), skipping other extensions and invalid offers
    /// (RFC 7692 §7). Commas inside quoted strings do not split elements.
    ///
    /// [`DeflateConfig::negotiate`] is this followed by
    /// [`DeflateConfig::accept`]; keep the offer when the settings to
    /// answer it with are known only later.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{DeflateConfig, DeflateParams};
    ///
    /// let fields: [&[u8]; 1] = [b"permessage-deflate; mux, permessage-deflate; client_no_context_takeover"];
    /// let offer = DeflateParams::first_offer(fields).expect("the second element");
    /// assert!(offer.client_no_context_takeover);
    /// assert!(DeflateConfig::DEFAULT.accept(&offer).server_no_context_takeover);
    /// ```
    pub fn first_offer<'a, I>(values: I) -> Option<DeflateParams>
    where
        I: IntoIterator<Item = &'a [u8]>,
    {
        values
            .into_iter()
            .flat_map(|value| Split::new(value, b','))
            .map(<[u8]>::trim_ascii)
            .filter(|element| !element.is_empty())
            .find_map(|element| DeflateParams::parse(element).ok())
    }

    /// The server's LZ77 window: `server_max_window_bits`, or 15 without
    /// it (clamped to 8..=15).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::DeflateParams;
    ///
    /// let params = DeflateParams::parse(b"permessage-deflate; server_max_window_bits=10")?;
    /// assert_eq!(params.server_window_bits(), 10);
    /// assert_eq!(params.client_window_bits(), 15);
    /// # Ok::<(), ringstream_core::ws::ParamsError>(())
    /// ```
    pub const fn server_window_bits(&self) -> u8 {
        clamp_bits(self.server_max_window_bits)
    }

    /// The client's LZ77 window: `client_max_window_bits`, or 15 without
    /// it (clamped to 8..=15).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::DeflateParams;
    ///
    /// let params = DeflateParams::parse(b"permessage-deflate; client_max_window_bits=12")?;
    /// assert_eq!(params.client_window_bits(), 12);
    /// # Ok::<(), ringstream_core::ws::ParamsError>(())
    /// ```
    pub const fn client_window_bits(&self) -> u8 {
        clamp_bits(self.client_max_window_bits)
    }

    /// Whether the end in `role` compresses each message it sends on its
    /// own, resetting its compressor after it.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{DeflateParams, Role};
    ///
    /// let params = DeflateParams::parse(b"permessage-deflate; client_no_context_takeover")?;
    /// // The client resets its compressor after each message...
    /// assert!(params.send_no_context_takeover(Role::Client));
    /// // ...so the server may reset its decompressor.
    /// assert!(params.recv_no_context_takeover(Role::Server));
    /// assert!(!params.send_no_context_takeover(Role::Server));
    /// # Ok::<(), ringstream_core::ws::ParamsError>(())
    /// ```
    pub const fn send_no_context_takeover(&self, role: Role) -> bool {
        match role {
            Role::Server => self.server_no_context_takeover,
            Role::Client => self.client_no_context_takeover,
        }
    }

    /// Whether the messages the end in `role` receives are each compressed
    /// on their own, so that its decompressor may be reset (or dropped)
    /// after each one.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{DeflateParams, Role};
    ///
    /// let params = DeflateParams::parse(b"permessage-deflate; server_no_context_takeover")?;
    /// // The server compresses each message alone: the client may reset.
    /// assert!(params.recv_no_context_takeover(Role::Client));
    /// assert!(!params.recv_no_context_takeover(Role::Server));
    /// # Ok::<(), ringstream_core::ws::ParamsError>(())
    /// ```
    pub const fn recv_no_context_takeover(&self, role: Role) -> bool {
        match role {
            Role::Server => self.client_no_context_takeover,
            Role::Client => self.server_no_context_takeover,
        }
    }

    /// The LZ77 window the end in `role` may compress with.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{DeflateParams, Role};
    ///
    /// let params = DeflateParams::parse(b"permessage-deflate; client_max_window_bits=9")?;
    /// assert_eq!(params.send_window_bits(Role::Client), 9);
    /// assert_eq!(params.recv_window_bits(Role::Server), 9);
    /// assert_eq!(params.send_window_bits(Role::Server), 15);
    /// # Ok::<(), ringstream_core::ws::ParamsError>(())
    /// ```
    pub const fn send_window_bits(&self, role: Role) -> u8 {
        match role {
            Role::Server => self.server_window_bits(),
            Role::Client => self.client_window_bits(),
        }
    }

    /// The LZ77 window of the messages the end in `role` receives.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{DeflateParams, Role};
    ///
    /// let params = DeflateParams::parse(b"permessage-deflate; server_max_window_bits=10")?;
    /// assert_eq!(params.recv_window_bits(Role::Client), 10);
    /// # Ok::<(), ringstream_core::ws::ParamsError>(())
    /// ```
    pub const fn recv_window_bits(&self, role: Role) -> u8 {
        match role {
            Role::Server => self.client_window_bits(),
            Role::Client => self.server_window_bits(),
        }
    }

    /// The element as a `Sec-WebSocket-Extensions` value, on the stack: the
    /// token, then each parameter that is present, in the order
    /// `server_no_context_takeover`, `client_no_context_takeover`,
    /// `server_max_window_bits`, `client_max_window_bits`. Window sizes
    /// outside 8..=15 are clamped.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::DeflateParams;
    ///
    /// let params = DeflateParams {
    ///     server_no_context_takeover: true,
    ///     client_max_window_bits: Some(15),
    ///     ..DeflateParams::new()
    /// };
    /// let header = params.to_header();
    /// assert_eq!(header.as_str(), "permessage-deflate; server_no_context_takeover; client_max_window_bits=15");
    /// assert_eq!(DeflateParams::parse(header.as_bytes()), Ok(params));
    /// assert_eq!(params.to_string(), header.as_str());
    /// ```
    pub fn to_header(&self) -> DeflateHeader {
        let mut header = DeflateHeader {
            buf: [0; MAX_DEFLATE_HEADER_LEN],
            len: 0,
        };
        // The longest value fits the buffer, so this cannot fail.
        let _ = fmt::write(&mut header, format_args!("{self}"));
        header
    }
}

impl fmt::Display for DeflateParams {
    /// Writes the `Sec-WebSocket-Extensions` value of
    /// [`to_header`](DeflateParams::to_header).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(PERMESSAGE_DEFLATE)?;
        if self.server_no_context_takeover {
            write!(f, "; {SERVER_NO_CONTEXT_TAKEOVER}")?;
        }
        if self.client_no_context_takeover {
            write!(f, "; {CLIENT_NO_CONTEXT_TAKEOVER}")?;
        }
        if self.server_max_window_bits.is_some() {
            let bits = self.server_window_bits();
            write!(f, "; {SERVER_MAX_WINDOW_BITS}={bits}")?;
        }
        if self.client_max_window_bits.is_some() {
            let bits = self.client_window_bits();
            write!(f, "; {CLIENT_MAX_WINDOW_BITS}={bits}")?;
        }
        Ok(())
    }
}

/// A `Sec-WebSocket-Extensions` value written by
/// [`DeflateParams::to_header`]: at most [`MAX_DEFLATE_HEADER_LEN`] bytes
/// of ASCII on the stack.
///
/// # Examples
///
/// ```
/// use ringstream_core::ws::DeflateParams;
///
/// let header = DeflateParams::new().to_header();
/// assert_eq!(header.as_bytes(), b"permessage-deflate");
/// assert_eq!(header.to_string(), "permessage-deflate");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct DeflateHeader {
    buf: [u8; MAX_DEFLATE_HEADER_LEN],
    len: usize,
}

impl DeflateHeader {
    /// The value as text.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::DeflateParams;
    ///
    /// let params = DeflateParams::parse(b"permessage-deflate; server_no_context_takeover")?;
    /// assert_eq!(params.to_header().as_str(), "permessage-deflate; server_no_context_takeover");
    /// # Ok::<(), ringstream_core::ws::ParamsError>(())
    /// ```
    pub fn as_str(&self) -> &str {
        // Only ASCII is written.
        core::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }

    /// The value as bytes, ready for a header value.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::DeflateParams;
    ///
    /// assert_eq!(DeflateParams::new().to_header().as_bytes(), b"permessage-deflate");
    /// ```
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl fmt::Write for DeflateHeader {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        let dest = self.buf.get_mut(self.len..end).ok_or(fmt::Error)?;
        dest.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

impl AsRef<[u8]> for DeflateHeader {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl AsRef<str> for DeflateHeader {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Display for DeflateHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for DeflateHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DeflateHeader")
            .field(&self.as_str())
            .finish()
    }
}

/// A server's permessage-deflate settings: what it asks of every
/// connection on top of what the client offers.
///
/// Every valid offer can be accepted: the server answers each parameter
/// within what the offer allows (RFC 7692 §7.1), so the first valid offer
/// is the one taken.
///
/// - `server_no_context_takeover`: sent when the offer asks for it or the
///   server wants it.
/// - `client_no_context_takeover`: sent when the offer announces it or the
///   server wants it.
/// - `server_max_window_bits`: the smaller of the offer's and the
///   server's; sent when the offer names one or the server's is below 15.
/// - `client_max_window_bits`: sent only when the offer has the parameter
///   (without it the client may not be limited, §7.1.2.2), and only when
///   the server's is below what the offer allows.
///
/// # Examples
///
/// The offers of RFC 7692 §5.2 (a preferred offer, then a fallback):
///
/// ```
/// use ringstream_core::ws::{DeflateConfig, DeflateParams};
///
/// let offered: [&[u8]; 1] = [b"permessage-deflate; client_max_window_bits; server_max_window_bits=10, \
///                              permessage-deflate; client_max_window_bits"];
/// let config = DeflateConfig { server_no_context_takeover: false, ..DeflateConfig::DEFAULT };
/// let params = config.negotiate(offered).expect("accepted");
/// assert_eq!(params.to_header().as_str(), "permessage-deflate; server_max_window_bits=10");
///
/// // A server that limits the client's window, to a client that allows it.
/// let config = DeflateConfig { client_max_window_bits: 12, ..config };
/// let params = config.accept(&DeflateParams::parse(b"permessage-deflate; client_max_window_bits")?);
/// assert_eq!(params.to_header().as_str(), "permessage-deflate; client_max_window_bits=12");
/// # Ok::<(), ringstream_core::ws::ParamsError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DeflateConfig {
    /// Compress each message on its own, even when the client does not ask
    /// for it. It costs compression of similar messages and saves the
    /// compressor's state between messages: a compressor can then be
    /// shared by many connections. Default `true`.
    pub server_no_context_takeover: bool,
    /// Ask the client to compress each message on its own, so that the
    /// server keeps no decompressor state between messages. Default
    /// `false`.
    pub client_no_context_takeover: bool,
    /// The largest LZ77 window the server compresses with, 8..=15 (clamped).
    /// Default 15.
    pub server_max_window_bits: u8,
    /// The largest LZ77 window asked of the client, 8..=15 (clamped), when
    /// its offer lets the server set one. Default 15.
    pub client_max_window_bits: u8,
}

impl DeflateConfig {
    /// The default settings, usable in `const` contexts.
    pub const DEFAULT: DeflateConfig = DeflateConfig {
        server_no_context_takeover: true,
        client_no_context_takeover: false,
        server_max_window_bits: MAX_WINDOW_BITS,
        client_max_window_bits: MAX_WINDOW_BITS,
    };

    /// The response to a valid `offer`: the agreement both ends follow.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::{DeflateConfig, DeflateParams};
    ///
    /// let offer = DeflateParams::parse(b"permessage-deflate; client_no_context_takeover; server_max_window_bits=9")?;
    /// let params = DeflateConfig::DEFAULT.accept(&offer);
    /// assert_eq!(
    ///     params.to_header().as_str(),
    ///     "permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=9"
    /// );
    /// # Ok::<(), ringstream_core::ws::ParamsError>(())
    /// ```
    pub const fn accept(&self, offer: &DeflateParams) -> DeflateParams {
        let own_server = clamp_bits(Some(self.server_max_window_bits));
        let server_bits = min_bits(own_server, offer.server_max_window_bits);
        let server_max_window_bits = match offer.server_max_window_bits {
            Some(_) => Some(server_bits),
            None if server_bits < MAX_WINDOW_BITS => Some(server_bits),
            None => None,
        };
        let own_client = clamp_bits(Some(self.client_max_window_bits));
        let client_max_window_bits = match offer.client_max_window_bits {
            Some(allowed) if own_client < clamp_bits(Some(allowed)) => Some(own_client),
            _ => None,
        };
        DeflateParams {
            server_no_context_takeover: offer.server_no_context_takeover
                || self.server_no_context_takeover,
            client_no_context_takeover: offer.client_no_context_takeover
                || self.client_no_context_takeover,
            server_max_window_bits,
            client_max_window_bits,
        }
    }

    /// Picks the first valid permessage-deflate offer in a request's
    /// `Sec-WebSocket-Extensions` values ([`DeflateParams::first_offer`])
    /// and returns the response to it ([`accept`](Self::accept)), or `None`
    /// when there is none: the connection then runs without compression
    /// and the response names no extension.
    ///
    /// Other extensions and invalid offers are skipped (RFC 7692 §7: an
    /// invalid offer is declined). Commas inside quoted strings do not
    /// split elements.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::DeflateConfig;
    ///
    /// let fields: [&[u8]; 2] = [
    ///     b"x-webkit-deflate-frame, permessage-deflate; server_max_window_bits=7",
    ///     b"permessage-deflate; client_max_window_bits=\"10\"",
    /// ];
    /// let params = DeflateConfig::DEFAULT.negotiate(fields).expect("the second offer");
    /// assert_eq!(params.client_max_window_bits, None); // 15 is allowed: nothing to ask
    /// assert!(params.server_no_context_takeover);
    ///
    /// let none: [&[u8]; 1] = [b"permessage-deflate; unknown"];
    /// assert_eq!(DeflateConfig::DEFAULT.negotiate(none), None);
    /// ```
    pub fn negotiate<'a, I>(&self, values: I) -> Option<DeflateParams>
    where
        I: IntoIterator<Item = &'a [u8]>,
    {
        DeflateParams::first_offer(values).map(|offer| self.accept(&offer))
    }
}

impl Default for DeflateConfig {
    fn default() -> Self {
        DeflateConfig::DEFAULT
    }
}

/// A window size clamped to 8..=15; 15 when absent.
const fn clamp_bits(bits: Option<u8>) -> u8 {
    match bits {
        Some(bits) if bits < MIN_WINDOW_BITS => MIN_WINDOW_BITS,
        Some(bits) if bits < MAX_WINDOW_BITS => bits,
        _ => MAX_WINDOW_BITS,
    }
}

/// The smaller of `own` (already clamped) and an offered limit.
const fn min_bits(own: u8, offered: Option<u8>) -> u8 {
    let offered = clamp_bits(offered);
    if offered < own {
        offered
    } else {
        own
    }
}

/// A window size value: `8` to `15`, decimal without leading zeros.
fn window_bits(value: Value) -> Result<u8, ParamsError> {
    match value.as_bytes() {
        [d @ b'8'..=b'9'] => Ok(d - b'0'),
        [b'1', d @ b'0'..=b'5'] => Ok(10 + d - b'0'),
        _ => Err(ParamsError::InvalidValue),
    }
}

/// A parameter value after unquoting: at most two bytes are kept, as no
/// valid value is longer; a longer one is marked so.
#[derive(Debug, Clone, Copy)]
struct Value {
    bytes: [u8; 2],
    /// The value's length, which may exceed the two bytes kept.
    len: usize,
}

impl Value {
    fn as_bytes(&self) -> &[u8] {
        // A value longer than two bytes reads as empty: never valid.
        self.bytes.get(..self.len).unwrap_or_default()
    }

    fn push(&mut self, b: u8) {
        if let Some(slot) = self.bytes.get_mut(self.len) {
            *slot = b;
        }
        self.len += 1;
    }
}

/// A value as written: a token, or a quoted string whose content (after
/// unescaping) is a token (RFC 6455 §9.1).
fn unquote(raw: &[u8]) -> Result<Value, ParamsError> {
    let mut value = Value {
        bytes: [0; 2],
        len: 0,
    };
    match raw {
        [b'"', inner @ .., b'"'] => {
            let mut bytes = inner.iter();
            while let Some(&b) = bytes.next() {
                let b = match b {
                    b'\\' => *bytes.next().ok_or(ParamsError::Syntax)?,
                    b'"' => return Err(ParamsError::Syntax),
                    b => b,
                };
                if !is_tchar(b) {
                    return Err(ParamsError::InvalidValue);
                }
                value.push(b);
            }
            if value.len == 0 {
                return Err(ParamsError::InvalidValue);
            }
        }
        [b'"', ..] => return Err(ParamsError::Syntax),
        raw if is_token(raw) => raw.iter().for_each(|&b| value.push(b)),
        [] => return Err(ParamsError::InvalidValue),
        _ => return Err(ParamsError::Syntax),
    }
    // A valid value is never longer than two bytes; keep the length so
    // that a longer one fails.
    Ok(value)
}

/// `tchar` of RFC 9110 §5.6.2.
const fn is_tchar(b: u8) -> bool {
    matches!(b,
        b'!' | b'#' | b'$' | b'%' | b'&' | b'\'' | b'*' | b'+' | b'-' | b'.' | b'^' | b'_'
        | b'`' | b'|' | b'~' | b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z')
}

fn is_token(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(|&b| is_tchar(b))
}

/// Splits on `sep` outside quoted strings; a backslash inside a quoted
/// string escapes the next byte. A quoted string left open runs to the
/// end.
#[derive(Debug, Clone)]
struct Split<'a> {
    rest: Option<&'a [u8]>,
    sep: u8,
}

impl<'a> Split<'a> {
    fn new(input: &'a [u8], sep: u8) -> Split<'a> {
        Split {
            rest: Some(input),
            sep,
        }
    }
}

impl<'a> Iterator for Split<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let rest = self.rest?;
        let mut quoted = false;
        let mut escaped = false;
        for (i, &b) in rest.iter().enumerate() {
            if escaped {
                escaped = false;
            } else if quoted {
                match b {
                    b'\\' => escaped = true,
                    b'"' => quoted = false,
                    _ => {}
                }
            } else if b == b'"' {
                quoted = true;
            } else if b == self.sep {
                self.rest = Some(&rest[i + 1..]);
                return Some(&rest[..i]);
            }
        }
        self.rest = None;
        Some(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec::Vec;

    fn parse(s: &str) -> Result<DeflateParams, ParamsError> {
        DeflateParams::parse(s.as_bytes())
    }

    fn negotiate(config: &DeflateConfig, fields: &[&str]) -> Option<alloc::string::String> {
        config
            .negotiate(fields.iter().map(|f| f.as_bytes()))
            .map(|params| params.to_header().as_str().to_string())
    }

    /// The server's settings that answer only what is asked.
    const PLAIN: DeflateConfig = DeflateConfig {
        server_no_context_takeover: false,
        ..DeflateConfig::DEFAULT
    };

    #[test]
    fn every_parameter_parses() {
        assert_eq!(parse("permessage-deflate"), Ok(DeflateParams::new()));
        assert_eq!(
            parse("permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=8; client_max_window_bits=15"),
            Ok(DeflateParams {
                server_no_context_takeover: true,
                client_no_context_takeover: true,
                server_max_window_bits: Some(8),
                client_max_window_bits: Some(15),
            })
        );
        // A bare client_max_window_bits: supported, no limit named.
        assert_eq!(
            parse("permessage-deflate;client_max_window_bits").map(|p| p.client_max_window_bits),
            Ok(Some(15))
        );
        // Case and whitespace, quoted values (with an escape).
        assert_eq!(
            parse(" Permessage-Deflate ;\tSERVER_MAX_WINDOW_BITS = \"1\\2\" ; client_max_window_bits=\"9\" "),
            Ok(DeflateParams {
                server_max_window_bits: Some(12),
                client_max_window_bits: Some(9),
                ..DeflateParams::new()
            })
        );
        for bits in 8..=15u8 {
            let text = alloc::format!("permessage-deflate; server_max_window_bits={bits}");
            assert_eq!(parse(&text).map(|p| p.server_window_bits()), Ok(bits));
        }
    }

    #[test]
    fn invalid_offers_are_errors() {
        use ParamsError::*;
        let cases: &[(&str, ParamsError)] = &[
            ("", Syntax),
            ("permessage-deflate-x", OtherExtension),
            (
                "x-webkit-deflate-frame; no_context_takeover",
                OtherExtension,
            ),
            ("permessage-deflate;", Syntax),
            ("permessage-deflate; ; server_no_context_takeover", Syntax),
            ("permessage-deflate; bad name", Syntax),
            ("permessage-deflate; =15", Syntax),
            ("permessage-deflate; mux", UnknownParameter),
            (
                "permessage-deflate; server_no_context_takeover; server_no_context_takeover",
                DuplicateParameter,
            ),
            (
                "permessage-deflate; client_max_window_bits; client_max_window_bits=10",
                DuplicateParameter,
            ),
            (
                "permessage-deflate; server_max_window_bits=10; Server_Max_Window_Bits=10",
                DuplicateParameter,
            ),
            (
                "permessage-deflate; server_no_context_takeover=1",
                InvalidValue,
            ),
            (
                "permessage-deflate; client_no_context_takeover=\"\"",
                InvalidValue,
            ),
            ("permessage-deflate; server_max_window_bits", InvalidValue),
            ("permessage-deflate; server_max_window_bits=", InvalidValue),
            ("permessage-deflate; server_max_window_bits=7", InvalidValue),
            (
                "permessage-deflate; server_max_window_bits=16",
                InvalidValue,
            ),
            (
                "permessage-deflate; server_max_window_bits=010",
                InvalidValue,
            ),
            (
                "permessage-deflate; server_max_window_bits=08",
                InvalidValue,
            ),
            (
                "permessage-deflate; server_max_window_bits=+9",
                InvalidValue,
            ),
            (
                "permessage-deflate; server_max_window_bits=150",
                InvalidValue,
            ),
            (
                "permessage-deflate; server_max_window_bits=99999999999999999999",
                InvalidValue,
            ),
            ("permessage-deflate; client_max_window_bits=0", InvalidValue),
            (
                "permessage-deflate; client_max_window_bits=\"1 0\"",
                InvalidValue,
            ),
            ("permessage-deflate; client_max_window_bits=\"10", Syntax),
            ("permessage-deflate; client_max_window_bits=1 0", Syntax),
            (
                "permessage-deflate; client_max_window_bits=\"1\"0\"",
                Syntax,
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(parse(text), Err(*expected), "{text:?}");
        }
    }

    #[test]
    fn rfc_7692_negotiation_examples() {
        // §5.2: the simplest offer, and its acceptance.
        assert_eq!(
            negotiate(&PLAIN, &["permessage-deflate"]).as_deref(),
            Some("permessage-deflate")
        );
        // §5.2: a preferred offer with a smaller server window, then a
        // fallback; the first is acceptable.
        let offer = "permessage-deflate; client_max_window_bits; server_max_window_bits=10, \
                     permessage-deflate; client_max_window_bits";
        assert_eq!(
            negotiate(&PLAIN, &[offer]).as_deref(),
            Some("permessage-deflate; server_max_window_bits=10")
        );
        // §7.1.1.1: server_no_context_takeover in the offer is accepted by
        // echoing it.
        assert_eq!(
            negotiate(&PLAIN, &["permessage-deflate; server_no_context_takeover"]).as_deref(),
            Some("permessage-deflate; server_no_context_takeover")
        );
        // §7.1.1.2: the client's hint is echoed.
        assert_eq!(
            negotiate(&PLAIN, &["permessage-deflate; client_no_context_takeover"]).as_deref(),
            Some("permessage-deflate; client_no_context_takeover")
        );
        // §7.1.2.1: the server may answer with a smaller window than asked.
        let small = DeflateConfig {
            server_max_window_bits: 9,
            ..PLAIN
        };
        assert_eq!(
            negotiate(&small, &["permessage-deflate; server_max_window_bits=12"]).as_deref(),
            Some("permessage-deflate; server_max_window_bits=9")
        );
        // ... and names its window even when the offer did not.
        assert_eq!(
            negotiate(&small, &["permessage-deflate"]).as_deref(),
            Some("permessage-deflate; server_max_window_bits=9")
        );
        // §7.1.2.2: client_max_window_bits only when offered, at most the
        // offered value.
        let tight = DeflateConfig {
            client_max_window_bits: 10,
            ..PLAIN
        };
        assert_eq!(
            negotiate(&tight, &["permessage-deflate"]).as_deref(),
            Some("permessage-deflate")
        );
        assert_eq!(
            negotiate(&tight, &["permessage-deflate; client_max_window_bits"]).as_deref(),
            Some("permessage-deflate; client_max_window_bits=10")
        );
        assert_eq!(
            negotiate(&tight, &["permessage-deflate; client_max_window_bits=12"]).as_deref(),
            Some("permessage-deflate; client_max_window_bits=10")
        );
        assert_eq!(
            negotiate(&tight, &["permessage-deflate; client_max_window_bits=9"]).as_deref(),
            Some("permessage-deflate")
        );
    }

    #[test]
    fn the_first_valid_offer_wins() {
        let config = DeflateConfig::DEFAULT;
        // Invalid offers before it are skipped, across field lines.
        let fields = [
            "foo; bar=\"a,b\", permessage-deflate; server_max_window_bits=7",
            "",
            "permessage-deflate; mux, permessage-deflate; client_no_context_takeover, permessage-deflate",
        ];
        assert_eq!(
            negotiate(&config, &fields).as_deref(),
            Some("permessage-deflate; server_no_context_takeover; client_no_context_takeover")
        );
        // A comma inside a quoted string does not split the element.
        assert_eq!(
            negotiate(
                &config,
                &["permessage-deflate; x=\"a, permessage-deflate\""]
            ),
            None
        );
        // An open quote swallows the rest of its line only.
        assert_eq!(
            negotiate(
                &config,
                &["foo; x=\"open, permessage-deflate", "permessage-deflate"]
            )
            .as_deref(),
            Some("permessage-deflate; server_no_context_takeover")
        );
        assert_eq!(negotiate(&config, &[]), None);
        assert_eq!(negotiate(&config, &[" , ,"]), None);
    }

    #[test]
    fn accept_stays_within_the_offer() {
        let offers = [
            "permessage-deflate",
            "permessage-deflate; server_no_context_takeover",
            "permessage-deflate; client_no_context_takeover",
            "permessage-deflate; client_max_window_bits",
            "permessage-deflate; client_max_window_bits=8",
            "permessage-deflate; client_max_window_bits=13",
            "permessage-deflate; server_max_window_bits=8",
            "permessage-deflate; server_max_window_bits=15",
            "permessage-deflate; server_max_window_bits=11; client_max_window_bits=11",
        ];
        for offer in offers {
            let offer = parse(offer).unwrap();
            for bits in [0u8, 8, 11, 15, 200] {
                for flags in 0..4 {
                    let config = DeflateConfig {
                        server_no_context_takeover: flags & 1 != 0,
                        client_no_context_takeover: flags & 2 != 0,
                        server_max_window_bits: bits,
                        client_max_window_bits: bits,
                    };
                    let params = config.accept(&offer);
                    // §7.1.1.1: an offered server_no_context_takeover is
                    // always in the response.
                    assert_eq!(
                        params.server_no_context_takeover,
                        offer.server_no_context_takeover || config.server_no_context_takeover
                    );
                    // §7.1.2.1: a named server window is answered, with the
                    // same or a smaller value.
                    if let Some(asked) = offer.server_max_window_bits {
                        assert!(params.server_max_window_bits.is_some_and(|b| b <= asked));
                    }
                    // §7.1.2.2: no client window unless offered; never more
                    // than offered.
                    match (offer.client_max_window_bits, params.client_max_window_bits) {
                        (None, Some(_)) => panic!("client window not offered: {offer:?}"),
                        (Some(asked), Some(answered)) => assert!(answered <= asked),
                        _ => {}
                    }
                    // Whatever is written parses back to itself.
                    let header = params.to_header();
                    assert_eq!(DeflateParams::parse(header.as_bytes()), Ok(params));
                    for bits in [params.server_window_bits(), params.client_window_bits()] {
                        assert!((MIN_WINDOW_BITS..=MAX_WINDOW_BITS).contains(&bits));
                    }
                }
            }
        }
    }

    #[test]
    fn roles_read_their_side() {
        let params = DeflateParams {
            server_no_context_takeover: true,
            client_no_context_takeover: false,
            server_max_window_bits: Some(9),
            client_max_window_bits: None,
        };
        assert!(params.send_no_context_takeover(Role::Server));
        assert!(!params.send_no_context_takeover(Role::Client));
        assert!(!params.recv_no_context_takeover(Role::Server));
        assert!(params.recv_no_context_takeover(Role::Client));
        assert_eq!(params.send_window_bits(Role::Server), 9);
        assert_eq!(params.recv_window_bits(Role::Client), 9);
        assert_eq!(params.send_window_bits(Role::Client), 15);
        assert_eq!(params.recv_window_bits(Role::Server), 15);
    }

    #[test]
    fn the_longest_header_fits() {
        let all = DeflateParams {
            server_no_context_takeover: true,
            client_no_context_takeover: true,
            server_max_window_bits: Some(15),
            client_max_window_bits: Some(200),
        };
        let header = all.to_header();
        assert_eq!(header.as_bytes().len(), MAX_DEFLATE_HEADER_LEN);
        assert!(header.as_str().ends_with("client_max_window_bits=15"));
        let fields: Vec<&[u8]> = alloc::vec![header.as_bytes()];
        assert_eq!(
            DeflateConfig::DEFAULT
                .negotiate(fields)
                .map(|p| p.client_max_window_bits),
            Some(None)
        );
    }
}
