//! [`CloseCode`]: the status an endpoint gives for closing (RFC 6455
//! §7.4).

use core::fmt;

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
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_core::ws::CloseCode;
    ///
    /// assert_eq!(CloseCode::NORMAL.as_u16(), 1000);
    /// assert_eq!(CloseCode::MESSAGE_TOO_BIG.as_u16(), 1009);
    /// ```
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
