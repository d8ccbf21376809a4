//! A minimal blocking WebSocket client (RFC 6455) over a `std` TCP stream,
//! as much as the DevTools protocol needs: the opening handshake to a
//! `ws://` address, text messages out (masked, one frame each), and text
//! messages and pings in (fragmented or not). The connection splits into a
//! [`Reader`] and a [`Writer`] on the same socket, so that one thread may
//! wait for messages while others send.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher as _, Hasher as _};
use std::io::{self, BufRead as _, BufReader, Read as _, Write as _};
use std::net::{Shutdown, TcpStream, ToSocketAddrs as _};
use std::time::Duration;

use base64::Engine as _;

/// The GUID of RFC 6455 §1.3, for `Sec-WebSocket-Accept`.
const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// The largest message taken, in bytes (a full-page screenshot is a few
/// hundred KiB of base64).
const MAX_MESSAGE: usize = 64 << 20;

/// The largest response head to the opening handshake, in bytes.
const MAX_HEAD: usize = 16 << 10;

/// Opcodes (RFC 6455 §5.2).
const CONTINUATION: u8 = 0x0;
const TEXT: u8 = 0x1;
const BINARY: u8 = 0x2;
const CLOSE: u8 = 0x8;
const PING: u8 = 0x9;
const PONG: u8 = 0xA;

/// What the server sent.
pub enum Incoming {
    /// A text message, whole.
    Text(String),
    /// A ping, to be answered with [`Writer::pong`].
    Ping(Vec<u8>),
    /// A close frame: the connection is over.
    Close,
}

/// The receiving half of a connection.
pub struct Reader {
    stream: BufReader<TcpStream>,
}

/// The sending half of a connection.
pub struct Writer {
    stream: TcpStream,
    rng: Rng,
}

/// Connects to `url` (`ws://host:port/path`) and does the opening
/// handshake, each step given at most `timeout`; checks the `101` and its
/// `Sec-WebSocket-Accept`.
pub fn connect(url: &str, timeout: Duration) -> Result<(Reader, Writer), String> {
    let rest = url
        .strip_prefix("ws://")
        .ok_or_else(|| format!("not a ws:// address: {url}"))?;
    let (authority, path) = rest.find('/').map_or((rest, "/"), |i| rest.split_at(i));
    let addr = authority
        .to_socket_addrs()
        .map_err(|e| format!("resolve {authority}: {e}"))?
        .next()
        .ok_or_else(|| format!("no address for {authority}"))?;
    let stream =
        TcpStream::connect_timeout(&addr, timeout).map_err(|e| format!("connect {addr}: {e}"))?;
    let setup = |e: io::Error| format!("set up the socket: {e}");
    stream.set_nodelay(true).map_err(setup)?;
    stream.set_read_timeout(Some(timeout)).map_err(setup)?;
    stream.set_write_timeout(Some(timeout)).map_err(setup)?;

    let mut rng = Rng::new();
    let mut nonce = [0u8; 16];
    rng.fill(&mut nonce);
    let key = base64::engine::general_purpose::STANDARD.encode(nonce);
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {authority}\r\nUpgrade: websocket\r\n\
         Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    let mut writer = Writer {
        stream: stream.try_clone().map_err(setup)?,
        rng,
    };
    writer
        .stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("send the handshake: {e}"))?;

    let mut reader = BufReader::new(stream);
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let before = head.len();
        (&mut reader)
            .take((MAX_HEAD - head.len()) as u64)
            .read_until(b'\n', &mut head)
            .map_err(|e| format!("read the handshake's answer: {e}"))?;
        if head.len() == before {
            return Err(if head.len() >= MAX_HEAD {
                format!("a handshake answer over {MAX_HEAD} bytes")
            } else {
                format!(
                    "the connection closed during the handshake after {:?}",
                    String::from_utf8_lossy(&head)
                )
            });
        }
    }
    let head = String::from_utf8_lossy(&head);
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap_or_default();
    if status.split(' ').nth(1) != Some("101") {
        return Err(format!("the handshake was answered {status:?}"));
    }
    let expected = {
        let mut sha = sha1_smol::Sha1::new();
        sha.update(key.as_bytes());
        sha.update(GUID.as_bytes());
        base64::engine::general_purpose::STANDARD.encode(sha.digest().bytes())
    };
    let accept = lines.find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("sec-websocket-accept")
            .then(|| value.trim())
    });
    if accept != Some(expected.as_str()) {
        return Err(format!(
            "Sec-WebSocket-Accept {accept:?}, expected {expected:?}"
        ));
    }
    // From here on the reader waits as long as the connection lasts; the
    // caller bounds each wait of its own.
    reader.get_ref().set_read_timeout(None).map_err(setup)?;
    Ok((Reader { stream: reader }, writer))
}

impl Reader {
    /// The next text message, ping or close; binary messages and pongs
    /// are passed over.
    pub fn next(&mut self) -> io::Result<Incoming> {
        let mut message = Vec::new();
        let mut message_opcode = None;
        loop {
            let (fin, opcode, payload) = self.frame()?;
            match opcode {
                CLOSE => return Ok(Incoming::Close),
                PING => return Ok(Incoming::Ping(payload)),
                PONG => {}
                TEXT | BINARY if message_opcode.is_none() => {
                    message_opcode = Some(opcode);
                    message = payload;
                }
                CONTINUATION if message_opcode.is_some() => {
                    if message.len() + payload.len() > MAX_MESSAGE {
                        return Err(invalid(format!("a message over {MAX_MESSAGE} bytes")));
                    }
                    message.extend_from_slice(&payload);
                }
                _ => return Err(invalid(format!("unexpected opcode {opcode:#x}"))),
            }
            if fin && message_opcode.is_some() {
                if message_opcode == Some(TEXT) {
                    return String::from_utf8(message)
                        .map(Incoming::Text)
                        .map_err(|_| invalid("a text message that is not UTF-8".to_owned()));
                }
                message_opcode = None;
                message = Vec::new();
            }
        }
    }

    /// One frame: FIN, opcode and the (unmasked) payload.
    fn frame(&mut self) -> io::Result<(bool, u8, Vec<u8>)> {
        let mut head = [0u8; 2];
        self.stream.read_exact(&mut head)?;
        let fin = head[0] & 0x80 != 0;
        let opcode = head[0] & 0x0F;
        let masked = head[1] & 0x80 != 0;
        let len = match head[1] & 0x7F {
            126 => {
                let mut len = [0u8; 2];
                self.stream.read_exact(&mut len)?;
                u64::from(u16::from_be_bytes(len))
            }
            127 => {
                let mut len = [0u8; 8];
                self.stream.read_exact(&mut len)?;
                u64::from_be_bytes(len)
            }
            len => u64::from(len),
        };
        let len = usize::try_from(len)
            .ok()
            .filter(|&len| len <= MAX_MESSAGE)
            .ok_or_else(|| invalid(format!("a frame of {len} bytes")))?;
        let mut mask = [0u8; 4];
        if masked {
            self.stream.read_exact(&mut mask)?;
        }
        let mut payload = vec![0u8; len];
        self.stream.read_exact(&mut payload)?;
        if masked {
            for (i, byte) in payload.iter_mut().enumerate() {
                *byte ^= mask[i % 4];
            }
        }
        Ok((fin, opcode, payload))
    }
}

impl Writer {
    /// Sends `text` as one text message.
    pub fn text(&mut self, text: &str) -> io::Result<()> {
        self.frame(TEXT, text.as_bytes())
    }

    /// Answers a ping.
    pub fn pong(&mut self, payload: &[u8]) -> io::Result<()> {
        self.frame(PONG, payload)
    }

    /// Shuts the socket down both ways: the [`Reader`] then sees its end.
    pub fn shutdown(&self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }

    /// One final frame, masked with a fresh key, in one write.
    fn frame(&mut self, opcode: u8, payload: &[u8]) -> io::Result<()> {
        let mut frame = Vec::with_capacity(payload.len() + 14);
        frame.push(0x80 | opcode);
        match payload.len() {
            len @ 0..=125 => frame.push(0x80 | len as u8),
            len @ 126..=0xFFFF => {
                frame.push(0x80 | 126);
                frame.extend_from_slice(&(len as u16).to_be_bytes());
            }
            len => {
                frame.push(0x80 | 127);
                frame.extend_from_slice(&(len as u64).to_be_bytes());
            }
        }
        let mut mask = [0u8; 4];
        self.rng.fill(&mut mask);
        frame.extend_from_slice(&mask);
        frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        self.stream.write_all(&frame)
    }
}

fn invalid(why: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, why)
}

/// xorshift64*, seeded from the standard library's per-process random
/// keys: the handshake's nonce and the masking keys need only be
/// unpredictable to the page, not cryptographically strong.
struct Rng(u64);

impl Rng {
    fn new() -> Rng {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u64(0x5DEE_CE66);
        Rng(hasher.finish() | 1)
    }

    fn fill(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(8) {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            let bytes = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
    }
}
