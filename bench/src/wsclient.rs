//! A WebSocket load client on raw frames, with no WebSocket library: the
//! upgrade request is a fixed string, the one message it sends is built and
//! masked once, and an echo is read by parsing frame headers only, so that
//! the client does as little work per message as a client can.
//!
//! The frame format is RFC 6455 §5.2: a client's frames are masked, a
//! server's are not.

use std::fmt;
use std::io;
use std::net::SocketAddr;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpSocket, TcpStream};

/// The `Sec-WebSocket-Key` every connection sends: the sample nonce of RFC
/// 6455 §1.3. Servers answer it with [`ACCEPT`]; none of them checks that
/// keys differ between connections.
pub const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";

/// The `Sec-WebSocket-Accept` that answers [`KEY`] (RFC 6455 §1.3).
pub const ACCEPT: &str = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";

/// The masking key of every frame the client sends.
pub const MASK: [u8; 4] = [0x37, 0xfa, 0x21, 0x3d];

/// Binary frame opcode.
pub const OP_BINARY: u8 = 0x2;
/// Close frame opcode.
pub const OP_CLOSE: u8 = 0x8;

/// The payload of a message of `len` bytes: a fixed byte pattern.
pub fn payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

/// One final (`FIN`) client frame with `opcode` carrying `payload`, masked
/// with `mask`.
pub fn masked_frame(opcode: u8, payload: &[u8], mask: [u8; 4]) -> Vec<u8> {
    let len = payload.len();
    let mut frame = Vec::with_capacity(len + 14);
    frame.push(0x80 | (opcode & 0x0f));
    if len < 126 {
        frame.push(0x80 | len as u8);
    } else if let Ok(len16) = u16::try_from(len) {
        frame.push(0x80 | 126);
        frame.extend_from_slice(&len16.to_be_bytes());
    } else {
        frame.push(0x80 | 127);
        frame.extend_from_slice(&(len as u64).to_be_bytes());
    }
    frame.extend_from_slice(&mask);
    frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    frame
}

/// What a frame header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Whether this is the last frame of its message.
    pub fin: bool,
    /// The opcode (low four bits of the first byte).
    pub opcode: u8,
    /// Length of the header itself: 2, 4 or 10 bytes (a server's frames
    /// carry no masking key).
    pub header_len: usize,
    /// Length of the payload that follows.
    pub payload_len: u64,
}

/// Why a server's frame header is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderError {
    /// The mask bit is set: servers must not mask (RFC 6455 §5.1).
    Masked,
    /// An RSV bit is set, though no extension was negotiated.
    Reserved,
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderError::Masked => f.write_str("the server sent a masked frame"),
            HeaderError::Reserved => f.write_str("the server set an RSV bit"),
        }
    }
}

/// Parse the header of a server frame at the start of `buf`: `Ok(None)`
/// while `buf` holds too little of it.
pub fn parse_header(buf: &[u8]) -> Result<Option<Header>, HeaderError> {
    let [b0, b1, ..] = *buf else {
        return Ok(None);
    };
    if b0 & 0x70 != 0 {
        return Err(HeaderError::Reserved);
    }
    if b1 & 0x80 != 0 {
        return Err(HeaderError::Masked);
    }
    let (header_len, payload_len) = match b1 & 0x7f {
        126 => match buf.get(2..4) {
            Some(b) => (4, u64::from(u16::from_be_bytes([b[0], b[1]]))),
            None => return Ok(None),
        },
        127 => match buf.get(2..10) {
            Some(b) => {
                let mut be = [0u8; 8];
                be.copy_from_slice(b);
                (10, u64::from_be_bytes(be))
            }
            None => return Ok(None),
        },
        n => (2, u64::from(n)),
    };
    Ok(Some(Header {
        fin: b0 & 0x80 != 0,
        opcode: b0 & 0x0f,
        header_len,
        payload_len,
    }))
}

/// The upgrade request for `path` on `host`.
pub fn upgrade_request(host: &str, path: &str) -> String {
    format!(
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
}

/// Check a response head (up to and including its blank line): `Ok` for
/// `101` with `Upgrade: websocket` and the right `Sec-WebSocket-Accept`,
/// else the reason.
pub fn check_upgrade_response(head: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(head);
    let mut lines = text.split("\r\n");
    let status = lines.next().unwrap_or_default();
    if !status.starts_with("HTTP/1.1 101") {
        return Err(format!("answered `{status}`, not 101"));
    }
    let mut upgrade = false;
    let mut accept = false;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("upgrade") {
            upgrade = value.eq_ignore_ascii_case("websocket");
        } else if name.eq_ignore_ascii_case("sec-websocket-accept") {
            accept = value == ACCEPT;
        }
    }
    match (upgrade, accept) {
        (true, true) => Ok(()),
        (false, _) => Err("answered 101 without `Upgrade: websocket`".into()),
        (_, false) => Err("answered 101 with a wrong or missing Sec-WebSocket-Accept".into()),
    }
}

/// Why a connection could not be upgraded.
#[derive(Debug)]
pub enum ConnectError {
    /// The server answered, but not with a valid `101` (the reason).
    Refused(String),
    /// The socket failed.
    Io(io::Error),
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnectError::Refused(why) => f.write_str(why),
            ConnectError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ConnectError {}

impl From<io::Error> for ConnectError {
    fn from(e: io::Error) -> Self {
        ConnectError::Io(e)
    }
}

/// One upgraded connection and its read buffer; the stream is the TCP
/// connection, or its read half once [`split`](Conn::split).
pub struct Conn<S = TcpStream> {
    stream: S,
    buf: Box<[u8]>,
    start: usize,
    end: usize,
}

impl Conn {
    /// Connect to `addr`, send the upgrade request for `path` and check
    /// the `101`. `buf_len` is the read buffer's size (at least 512 bytes).
    pub async fn connect(
        addr: SocketAddr,
        path: &str,
        buf_len: usize,
    ) -> Result<Self, ConnectError> {
        Conn::connect_with(addr, path, buf_len, None).await
    }

    /// As [`connect`](Self::connect), with the socket's receive buffer
    /// (`SO_RCVBUF`) set to `recv_buffer` bytes before it connects (the
    /// kernel doubles it for its bookkeeping and keeps it from growing),
    /// or left to the kernel with `None`.
    pub async fn connect_with(
        addr: SocketAddr,
        path: &str,
        buf_len: usize,
        recv_buffer: Option<u32>,
    ) -> Result<Self, ConnectError> {
        let socket = match addr {
            SocketAddr::V4(_) => TcpSocket::new_v4()?,
            SocketAddr::V6(_) => TcpSocket::new_v6()?,
        };
        if let Some(size) = recv_buffer {
            socket.set_recv_buffer_size(size)?;
        }
        let stream = socket.connect(addr).await?;
        Conn::upgrade(stream, addr, path, buf_len).await
    }

    /// Send the upgrade request for `path` on `stream`, a connection to
    /// `addr` made earlier, and check the `101`. A server then sees a
    /// connection that waited, on HTTP, for its request (as a browser's
    /// may), where [`connect`](Self::connect) sends the request at once.
    pub async fn upgrade(
        mut stream: TcpStream,
        addr: SocketAddr,
        path: &str,
        buf_len: usize,
    ) -> Result<Self, ConnectError> {
        stream.set_nodelay(true)?;
        stream
            .write_all(upgrade_request(&addr.to_string(), path).as_bytes())
            .await?;
        let mut conn = Conn {
            stream,
            buf: vec![0u8; buf_len.max(512)].into_boxed_slice(),
            start: 0,
            end: 0,
        };
        let head_end = loop {
            if let Some(i) = conn.buf[..conn.end]
                .windows(4)
                .position(|w| w == b"\r\n\r\n")
            {
                break i + 4;
            }
            if conn.end == conn.buf.len() {
                return Err(ConnectError::Refused(
                    "answered with a head longer than the read buffer".into(),
                ));
            }
            if conn.fill().await? == 0 {
                let got = String::from_utf8_lossy(&conn.buf[..conn.end]).into_owned();
                let first = got.lines().next().unwrap_or_default().to_owned();
                return Err(ConnectError::Refused(if first.is_empty() {
                    "closed the connection without answering".into()
                } else {
                    format!("answered `{first}` and closed")
                }));
            }
        };
        check_upgrade_response(&conn.buf[..head_end]).map_err(ConnectError::Refused)?;
        // Anything after the head is already the server's first frame.
        conn.start = head_end;
        Ok(conn)
    }

    /// The receiving side (with what is buffered) and the sending side,
    /// for a task each.
    pub fn split(self) -> (Conn<OwnedReadHalf>, OwnedWriteHalf) {
        let (read, write) = self.stream.into_split();
        let conn = Conn {
            stream: read,
            buf: self.buf,
            start: self.start,
            end: self.end,
        };
        (conn, write)
    }
}

impl<S: AsyncWrite + Unpin> Conn<S> {
    /// Send `frame` (a whole pre-built client frame) as it is.
    pub async fn send(&mut self, frame: &[u8]) -> io::Result<()> {
        self.stream.write_all(frame).await
    }
}

impl<S: AsyncRead + Unpin> Conn<S> {
    /// Read more into the buffer (compacting it first when its end is
    /// reached); returns the bytes read, 0 at end of stream.
    async fn fill(&mut self) -> io::Result<usize> {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        } else if self.end == self.buf.len() {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        let n = self.stream.read(&mut self.buf[self.end..]).await?;
        self.end += n;
        Ok(n)
    }

    async fn fill_some(&mut self) -> io::Result<()> {
        if self.fill().await? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            ));
        }
        Ok(())
    }

    /// Read one whole data message (all its frames up to the final one,
    /// skipping control frames between them) and return its payload
    /// length. With `expect`, the payload must equal it.
    pub async fn read_message(&mut self, expect: Option<&[u8]>) -> io::Result<u64> {
        let total = self
            .read_data(|at, piece| match expect {
                Some(expect) if expect.get(at..at + piece.len()) != Some(piece) => {
                    Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "the echo differs from the message sent",
                    ))
                }
                _ => Ok(()),
            })
            .await?;
        if let Some(expect) = expect {
            if total != expect.len() as u64 {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("echoed {total} bytes for a {}-byte message", expect.len()),
                ));
            }
        }
        Ok(total)
    }

    /// Read one whole data message as [`read_message`](Self::read_message)
    /// does, copying the first `head.len()` bytes of its payload (fewer
    /// when it is shorter) into `head`; returns the payload length.
    pub async fn read_message_head(&mut self, head: &mut [u8]) -> io::Result<u64> {
        self.read_data(|at, piece| {
            if let Some(into) = head.get_mut(at..) {
                let n = into.len().min(piece.len());
                into[..n].copy_from_slice(&piece[..n]);
            }
            Ok(())
        })
        .await
    }

    /// Read one whole data message, handing each piece of its payload to
    /// `piece` with its offset in the message; returns the payload length.
    async fn read_data(
        &mut self,
        mut piece: impl FnMut(usize, &[u8]) -> io::Result<()>,
    ) -> io::Result<u64> {
        let mut total = 0u64;
        loop {
            let header = loop {
                match parse_header(&self.buf[self.start..self.end]) {
                    Ok(Some(h)) => break h,
                    Ok(None) => self.fill_some().await?,
                    Err(e) => {
                        return Err(io::Error::new(io::ErrorKind::InvalidData, e.to_string()))
                    }
                }
            };
            if header.opcode == OP_CLOSE {
                return Err(io::Error::new(
                    io::ErrorKind::ConnectionAborted,
                    "the server sent a close frame",
                ));
            }
            let control = header.opcode & 0x8 != 0;
            self.start += header.header_len;
            let mut left = header.payload_len;
            while left > 0 {
                if self.start == self.end {
                    self.fill_some().await?;
                }
                let n = left.min((self.end - self.start) as u64) as usize;
                if !control {
                    piece(total as usize, &self.buf[self.start..self.start + n])?;
                    total += n as u64;
                }
                self.start += n;
                left -= n as u64;
            }
            if header.fin && !control {
                return Ok(total);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unmask(frame: &[u8], header_len: usize) -> Vec<u8> {
        let mask = &frame[header_len - 4..header_len];
        frame[header_len..]
            .iter()
            .enumerate()
            .map(|(i, b)| b ^ mask[i % 4])
            .collect()
    }

    #[test]
    fn masked_frames_use_the_three_length_forms() {
        for (len, header_len) in [(0, 6), (125, 6), (126, 8), (65_535, 8), (65_536, 14)] {
            let body = payload(len);
            let frame = masked_frame(OP_BINARY, &body, MASK);
            assert_eq!(frame.len(), header_len + len, "len {len}");
            assert_eq!(frame[0], 0x82, "FIN and binary");
            assert_eq!(frame[1] & 0x80, 0x80, "masked");
            assert_eq!(&frame[header_len - 4..header_len], &MASK);
            assert_eq!(unmask(&frame, header_len), body, "len {len}");
        }
        let frame = masked_frame(OP_BINARY, &payload(16_384), MASK);
        assert_eq!(&frame[1..4], &[0x80 | 126, 0x40, 0x00]);
        let frame = masked_frame(OP_BINARY, &payload(70_000), MASK);
        assert_eq!(frame[1], 0x80 | 127);
        assert_eq!(&frame[2..10], &70_000u64.to_be_bytes());
    }

    #[test]
    fn rfc_examples_parse() {
        // RFC 6455 §5.7: an unmasked "Hello", and 256 and 65536 bytes of
        // binary data in one unmasked frame.
        let hello = [0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f];
        assert_eq!(
            parse_header(&hello),
            Ok(Some(Header {
                fin: true,
                opcode: 1,
                header_len: 2,
                payload_len: 5
            }))
        );
        let h = parse_header(&[0x82, 0x7e, 0x01, 0x00]).unwrap().unwrap();
        assert_eq!((h.header_len, h.payload_len), (4, 256));
        let h = parse_header(&[0x82, 0x7f, 0, 0, 0, 0, 0, 1, 0, 0])
            .unwrap()
            .unwrap();
        assert_eq!((h.header_len, h.payload_len), (10, 65_536));
        // A first fragment, not final.
        let h = parse_header(&[0x01, 0x03]).unwrap().unwrap();
        assert!(!h.fin);
    }

    #[test]
    fn partial_headers_ask_for_more() {
        assert_eq!(parse_header(&[]), Ok(None));
        assert_eq!(parse_header(&[0x82]), Ok(None));
        assert_eq!(parse_header(&[0x82, 0x7e, 0x01]), Ok(None));
        assert_eq!(parse_header(&[0x82, 0x7f, 0, 0, 0, 0, 0, 1, 0]), Ok(None));
    }

    #[test]
    fn masked_or_reserved_server_frames_are_refused() {
        let client = masked_frame(OP_BINARY, b"hi", MASK);
        assert_eq!(parse_header(&client), Err(HeaderError::Masked));
        assert_eq!(parse_header(&[0xc2, 0x00]), Err(HeaderError::Reserved));
    }

    #[test]
    fn upgrade_answers_are_checked() {
        let ok = format!(
            "HTTP/1.1 101 Switching Protocols\r\nupgrade: WebSocket\r\nConnection: upgrade\r\n\
             Sec-WebSocket-Accept: {ACCEPT}\r\n\r\n"
        );
        assert_eq!(check_upgrade_response(ok.as_bytes()), Ok(()));
        let not_found = b"HTTP/1.1 404 Not Found\r\ncontent-length: 10\r\n\r\n";
        let err = check_upgrade_response(not_found).unwrap_err();
        assert!(err.contains("404 Not Found"), "{err}");
        let wrong = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\
                      Sec-WebSocket-Accept: nope\r\n\r\n";
        assert!(check_upgrade_response(wrong).is_err());
        let req = upgrade_request("127.0.0.1:1", "/ws/echo");
        assert!(req.starts_with("GET /ws/echo HTTP/1.1\r\n"));
        assert!(req.ends_with("\r\n\r\n"));
        assert!(req.contains(&format!("Sec-WebSocket-Key: {KEY}\r\n")));
    }

    /// A server that answers the upgrade and then echoes one message in
    /// two fragments with a ping between them, the head and the first
    /// frame in one write: the client must put it back together.
    #[test]
    fn reads_fragmented_echo_after_head() {
        with_listener(|listener, addr| async move {
            let server = tokio::spawn(async move {
                let (mut s, _) = listener.accept().await.unwrap();
                let mut req = Vec::new();
                let mut buf = [0u8; 1024];
                while !req.ends_with(b"\r\n\r\n") {
                    let n = s.read(&mut buf).await.unwrap();
                    req.extend_from_slice(&buf[..n]);
                }
                let mut out = format!(
                    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\
                     Connection: Upgrade\r\nSec-WebSocket-Accept: {ACCEPT}\r\n\r\n"
                )
                .into_bytes();
                let body = payload(300);
                out.extend_from_slice(&[0x02, 0x7e, 0x00, 100]);
                out.extend_from_slice(&body[..100]);
                s.write_all(&out).await.unwrap();
                s.write_all(&[0x89, 0x01, b'p']).await.unwrap();
                s.write_all(&[0x80, 0x7e, 0x00, 200]).await.unwrap();
                s.write_all(&body[100..]).await.unwrap();
                // The same message again, for the head reader.
                s.write_all(&[0x02, 0x64]).await.unwrap();
                s.write_all(&body[..100]).await.unwrap();
                s.write_all(&[0x80, 0x7e, 0x00, 200]).await.unwrap();
                s.write_all(&body[100..]).await.unwrap();
                // Then the client's frame: read it whole and check it.
                let frame = masked_frame(OP_BINARY, &payload(64), MASK);
                let mut got = vec![0u8; frame.len()];
                s.read_exact(&mut got).await.unwrap();
                assert_eq!(got, frame);
            });
            let mut conn = Conn::connect(addr, "/ws/echo", 64).await.unwrap();
            let n = conn.read_message(Some(&payload(300))).await.unwrap();
            assert_eq!(n, 300);
            let mut head = [0u8; 120];
            let n = conn.read_message_head(&mut head).await.unwrap();
            assert_eq!(n, 300);
            assert_eq!(&head[..], &payload(300)[..120], "across the two fragments");
            conn.send(&masked_frame(OP_BINARY, &payload(64), MASK))
                .await
                .unwrap();
            server.await.unwrap();
        });
    }

    /// Runs `test` on a current-thread runtime with a listener on a free
    /// loopback port and its address.
    fn with_listener<F: std::future::Future<Output = ()>>(
        test: impl FnOnce(tokio::net::TcpListener, std::net::SocketAddr) -> F,
    ) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            test(listener, addr).await;
        });
    }

    #[test]
    fn refused_upgrade_is_reported() {
        with_listener(|listener, addr| async move {
            tokio::spawn(async move {
                let (mut s, _) = listener.accept().await.unwrap();
                let mut buf = [0u8; 1024];
                let _ = s.read(&mut buf).await.unwrap();
                s.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                    .await
                    .unwrap();
            });
            match Conn::connect(addr, "/ws/echo", 4096).await {
                Err(ConnectError::Refused(why)) => assert!(why.contains("404"), "{why}"),
                Err(e) => panic!("unexpected error {e}"),
                Ok(_) => panic!("a 404 was taken for an upgrade"),
            }
        });
    }
}
