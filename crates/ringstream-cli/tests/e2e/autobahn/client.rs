//! A raw WebSocket client for the Autobahn|Testsuite port: the opening
//! handshake, client frames masked with a fresh random key each and written
//! whole or chopped into small TCP writes, and the server's frames read
//! back and checked strictly (unmasked, no RSV bits but the negotiated
//! RSV1, no reserved opcodes, control frames whole and short, valid Close
//! payloads, text that is UTF-8) into [`Event`]s.
//!
//! Nothing here uses ringstream's codec: the client is written from RFC 6455
//! and RFC 7692 so that it checks the server independently.

use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

use base64::Engine as _;
use ringstream_testkit::Rng;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::deflate::{Negotiated, PerMessageDeflate};

pub const CONTINUATION: u8 = 0x0;
pub const TEXT: u8 = 0x1;
pub const BINARY: u8 = 0x2;
pub const CLOSE: u8 = 0x8;
pub const PING: u8 = 0x9;
pub const PONG: u8 = 0xa;

/// The GUID of RFC 6455 §1.3, for `Sec-WebSocket-Accept`.
const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// One client frame, before masking.
#[derive(Clone, Debug)]
pub struct Frame {
    pub fin: bool,
    /// RSV1..RSV3 as the three bits 0b100, 0b010, 0b001 (Autobahn's `rsv`).
    pub rsv: u8,
    pub opcode: u8,
    pub payload: Vec<u8>,
}

impl Frame {
    pub fn new(opcode: u8, payload: impl Into<Vec<u8>>) -> Frame {
        Frame {
            fin: true,
            rsv: 0,
            opcode,
            payload: payload.into(),
        }
    }

    pub fn text(payload: impl Into<Vec<u8>>) -> Frame {
        Frame::new(TEXT, payload)
    }

    pub fn binary(payload: impl Into<Vec<u8>>) -> Frame {
        Frame::new(BINARY, payload)
    }

    pub fn ping(payload: impl Into<Vec<u8>>) -> Frame {
        Frame::new(PING, payload)
    }

    pub fn pong(payload: impl Into<Vec<u8>>) -> Frame {
        Frame::new(PONG, payload)
    }

    /// A Close with `code` and `reason` (the payload as given: any bytes).
    pub fn close(code: u16, reason: &[u8]) -> Frame {
        let mut payload = code.to_be_bytes().to_vec();
        payload.extend_from_slice(reason);
        Frame::new(CLOSE, payload)
    }

    pub fn fin(mut self, fin: bool) -> Frame {
        self.fin = fin;
        self
    }

    pub fn rsv(mut self, rsv: u8) -> Frame {
        self.rsv = rsv;
        self
    }

    /// The frame on the wire, masked with `key`.
    pub fn encode(&self, key: [u8; 4]) -> Vec<u8> {
        let len = self.payload.len();
        let mut out = Vec::with_capacity(len + 14);
        out.push(u8::from(self.fin) << 7 | (self.rsv & 0x7) << 4 | (self.opcode & 0xf));
        match len {
            0..=125 => out.push(0x80 | len as u8),
            126..=0xffff => {
                out.push(0x80 | 126);
                out.extend_from_slice(&(len as u16).to_be_bytes());
            }
            _ => {
                out.push(0x80 | 127);
                out.extend_from_slice(&(len as u64).to_be_bytes());
            }
        }
        out.extend_from_slice(&key);
        let start = out.len();
        out.extend_from_slice(&self.payload);
        for (i, b) in out[start..].iter_mut().enumerate() {
            *b ^= key[i % 4];
        }
        out
    }
}

/// How the bytes of one send go out (Autobahn's `chopsize` and `sync`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chop {
    /// All frames of the send in one write.
    Whole,
    /// Each frame in a write of its own, with a short pause after it
    /// (Autobahn's `sync = True`).
    Frames,
    /// Writes of at most this many bytes, each flushed on its own
    /// (Autobahn's `chopsize`); with a short pause between them when there
    /// are few, so that the server sees them arrive apart.
    Bytes(usize),
}

/// What the server sent: a whole message (inflated when it was
/// compressed), a control frame, or its Close.
#[derive(Clone, PartialEq, Eq)]
pub enum Event {
    Text(Vec<u8>),
    Binary(Vec<u8>),
    Ping(Vec<u8>),
    Pong(Vec<u8>),
    /// The Close's code (`None`: an empty Close) and reason.
    Close(Option<u16>, Vec<u8>),
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (name, payload) = match self {
            Event::Text(p) => ("text", p),
            Event::Binary(p) => ("binary", p),
            Event::Ping(p) => ("ping", p),
            Event::Pong(p) => ("pong", p),
            Event::Close(code, reason) => {
                return match code {
                    Some(code) => write!(f, "close {code} {:?}", Short(reason)),
                    None => write!(f, "close without code"),
                };
            }
        };
        write!(f, "{name} {:?}", Short(payload))
    }
}

/// A payload in a failure message: its length and its first bytes.
pub struct Short<'a>(pub &'a [u8]);

impl fmt::Debug for Short<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let head = &self.0[..self.0.len().min(24)];
        let more = if self.0.len() > head.len() { "…" } else { "" };
        write!(
            f,
            "({} bytes: {:?}{more})",
            self.0.len(),
            String::from_utf8_lossy(head)
        )
    }
}

/// How the server's end of the TCP connection went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// It closed its side (FIN).
    Eof,
    /// The connection was reset or failed.
    Error(String),
}

/// The next thing from the server.
#[derive(Debug)]
pub enum Next {
    Event(Event),
    End(End),
    /// Nothing within the time given.
    Timeout,
}

/// A client connection past the handshake.
pub struct Client {
    writer: OwnedWriteHalf,
    /// Chunks read by the reader task; an empty chunk is the end.
    chunks: mpsc::UnboundedReceiver<Result<Vec<u8>, String>>,
    reader: JoinHandle<()>,
    /// Read bytes not parsed yet.
    buf: Vec<u8>,
    /// The end of the connection, once seen (reported after `buf`).
    ended: Option<End>,
    /// The fragmented message the server is sending: opcode, compressed,
    /// payload so far.
    partial: Option<(u8, bool, Vec<u8>)>,
    /// The server's Close was read.
    close_seen: bool,
    pub rng: Rng,
    /// permessage-deflate, when negotiated.
    pub deflate: Option<PerMessageDeflate>,
    /// Frames this client sent (Autobahn's `txFrameStats`, counted).
    pub frames_sent: usize,
    /// The first write that failed: the server closed the connection
    /// (as it must after a violation, without reading the rest). Nothing
    /// more is written; what the server sent says whether it was right.
    pub write_failed: Option<String>,
}

impl Drop for Client {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl Client {
    /// Connects to `/ws/echo` at `addr`, with `offer` as the
    /// `Sec-WebSocket-Extensions` of the request. Checks the `101`
    /// response, its `Sec-WebSocket-Accept` and, when permessage-deflate
    /// was offered, that the server accepted one of the offers correctly.
    pub async fn connect(
        addr: SocketAddr,
        offer: Option<&str>,
        seed: u64,
    ) -> Result<Client, String> {
        let mut rng = Rng(seed | 1);
        let mut nonce = [0u8; 16];
        rng.fill(&mut nonce);
        let key = base64::engine::general_purpose::STANDARD.encode(nonce);
        let mut tcp = TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        tcp.set_nodelay(true).map_err(|e| format!("nodelay: {e}"))?;
        let mut request = format!(
            "GET /ws/echo HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\n\
             Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
        );
        if let Some(offer) = offer {
            request.push_str(&format!("Sec-WebSocket-Extensions: {offer}\r\n"));
        }
        request.push_str("\r\n");
        tcp.write_all(request.as_bytes())
            .await
            .map_err(|e| format!("handshake write: {e}"))?;

        // The response head; bytes after it are frames.
        let mut buf = Vec::new();
        let head_end = loop {
            if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            let mut chunk = [0u8; 1024];
            let n = tcp
                .read(&mut chunk)
                .await
                .map_err(|e| format!("handshake read: {e}"))?;
            if n == 0 {
                return Err(format!(
                    "the server closed during the handshake: {:?}",
                    String::from_utf8_lossy(&buf)
                ));
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
        let rest = buf[head_end..].to_vec();
        let mut lines = head.split("\r\n");
        let status = lines.next().unwrap_or_default();
        if !status.starts_with("HTTP/1.1 101 ") {
            return Err(format!("handshake refused: {head:?}"));
        }
        let fields: Vec<(String, String)> = lines
            .filter(|l| !l.is_empty())
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        let field = |name: &str| {
            let mut values = fields.iter().filter(|(n, _)| n == name).map(|(_, v)| v);
            let first = values.next().cloned();
            (first, values.next().is_some())
        };
        let expected_accept = {
            let mut sha = sha1_smol::Sha1::new();
            sha.update(key.as_bytes());
            sha.update(GUID.as_bytes());
            base64::engine::general_purpose::STANDARD.encode(sha.digest().bytes())
        };
        match field("sec-websocket-accept") {
            (Some(accept), false) if accept == expected_accept => {}
            other => {
                return Err(format!(
                    "Sec-WebSocket-Accept {other:?}, expected {expected_accept}"
                ))
            }
        }
        if !field("upgrade")
            .0
            .is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
        {
            return Err(format!("101 without Upgrade: websocket: {head:?}"));
        }
        if !field("connection").0.is_some_and(|v| {
            v.split(',')
                .any(|t| t.trim().eq_ignore_ascii_case("upgrade"))
        }) {
            return Err(format!("101 without Connection: upgrade: {head:?}"));
        }
        let deflate = match (offer, field("sec-websocket-extensions")) {
            (_, (Some(_), true)) => return Err("Sec-WebSocket-Extensions twice".into()),
            (None, (Some(response), _)) => {
                return Err(format!("an extension nobody offered: {response:?}"))
            }
            (_, (None, _)) => None,
            (Some(offer), (Some(response), _)) => {
                let negotiated = Negotiated::check(offer, &response)?;
                Some(PerMessageDeflate::new(negotiated))
            }
        };

        let (mut read, writer) = tcp.into_split();
        let (tx, chunks) = mpsc::unbounded_channel();
        let reader = tokio::spawn(async move {
            let mut chunk = vec![0u8; 64 * 1024];
            loop {
                match read.read(&mut chunk).await {
                    Ok(0) => {
                        let _ = tx.send(Ok(Vec::new()));
                        return;
                    }
                    Ok(n) => {
                        if tx.send(Ok(chunk[..n].to_vec())).is_err() {
                            return;
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e.to_string()));
                        return;
                    }
                }
            }
        });
        Ok(Client {
            writer,
            chunks,
            reader,
            buf: rest,
            ended: None,
            partial: None,
            close_seen: false,
            rng,
            deflate,
            frames_sent: 0,
            write_failed: None,
        })
    }

    /// A fresh random masking key.
    pub fn key(&mut self) -> [u8; 4] {
        (self.rng.next_u64() as u32).to_ne_bytes()
    }

    /// Masks and sends `frames` as `chop` says.
    pub async fn send_frames(&mut self, frames: &[Frame], chop: Chop) {
        let mut wire = Vec::new();
        for frame in frames {
            let key = self.key();
            let encoded = frame.encode(key);
            self.frames_sent += 1;
            if chop == Chop::Frames {
                self.write(&encoded, Chop::Whole).await;
                tokio::time::sleep(Duration::from_millis(2)).await;
            } else {
                wire.extend_from_slice(&encoded);
            }
        }
        self.write(&wire, chop).await;
    }

    /// Sends a data message: compressed (RSV1 on the first frame) when
    /// permessage-deflate was negotiated, in frames of at most `fragment`
    /// payload bytes (`0`: one frame).
    pub async fn send_message(&mut self, text: bool, payload: &[u8], fragment: usize, chop: Chop) {
        let (data, rsv) = match &mut self.deflate {
            Some(deflate) => (deflate.compress(payload), 0b100),
            None => (payload.to_vec(), 0),
        };
        let opcode = if text { TEXT } else { BINARY };
        let frames = fragments(opcode, &data, fragment, rsv);
        self.send_frames(&frames, chop).await;
    }

    /// Writes raw bytes as `chop` says; after a failed write, nothing.
    pub async fn write(&mut self, bytes: &[u8], chop: Chop) {
        let size = match chop {
            Chop::Bytes(n) => n.max(1),
            _ => bytes.len().max(1),
        };
        let pieces = bytes.len().div_ceil(size);
        for (i, piece) in bytes.chunks(size).enumerate() {
            if self.write_failed.is_some() {
                return;
            }
            let written = match self.writer.write_all(piece).await {
                Ok(()) => self.writer.flush().await,
                Err(e) => Err(e),
            };
            if let Err(e) = written {
                self.write_failed = Some(e.to_string());
                return;
            }
            if pieces > 1 && i + 1 < pieces {
                if pieces <= 512 {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                } else {
                    tokio::task::yield_now().await;
                }
            }
        }
    }

    /// The next event from the server, within `wait`.
    ///
    /// # Errors
    ///
    /// A server frame that breaks RFC 6455 (or RFC 7692).
    pub async fn next(&mut self, wait: Duration) -> Result<Next, String> {
        let deadline = Instant::now() + wait;
        loop {
            if let Some(event) = self.parse()? {
                return Ok(Next::Event(event));
            }
            if let Some(end) = &self.ended {
                if !self.buf.is_empty() {
                    return Err(format!(
                        "the connection ended inside a frame ({} bytes left)",
                        self.buf.len()
                    ));
                }
                if self.partial.is_some() {
                    return Err("the connection ended inside a fragmented message".into());
                }
                return Ok(Next::End(end.clone()));
            }
            match tokio::time::timeout_at(deadline, self.chunks.recv()).await {
                Err(_) => return Ok(Next::Timeout),
                Ok(None) => self.ended = Some(End::Error("reader gone".into())),
                Ok(Some(Ok(chunk))) if chunk.is_empty() => self.ended = Some(End::Eof),
                Ok(Some(Ok(chunk))) => self.buf.extend_from_slice(&chunk),
                Ok(Some(Err(e))) => self.ended = Some(End::Error(e)),
            }
        }
    }

    /// Parses one server frame off the buffer; a data frame that does not
    /// end its message is gathered and the next one parsed.
    fn parse(&mut self) -> Result<Option<Event>, String> {
        loop {
            let Some((head, payload)) = split_frame(&self.buf)? else {
                return Ok(None);
            };
            let payload = payload.to_vec();
            self.buf.drain(..head.len + payload.len());
            if let Some(event) = self.frame(head, payload)? {
                return Ok(Some(event));
            }
        }
    }

    /// Checks one server frame and turns it into an event, if it completes
    /// one.
    fn frame(&mut self, head: Head, payload: Vec<u8>) -> Result<Option<Event>, String> {
        let Head {
            fin, rsv, opcode, ..
        } = head;
        let control = opcode & 0x8 != 0;
        let deflate = self.deflate.is_some();
        if rsv & 0b011 != 0 {
            return Err(format!("server frame with RSV2/RSV3 set (opcode {opcode})"));
        }
        let first_data = matches!(opcode, TEXT | BINARY);
        if rsv & 0b100 != 0 && !(deflate && first_data) {
            return Err(format!("server frame with RSV1 set (opcode {opcode})"));
        }
        if control {
            if !fin {
                return Err(format!("fragmented server control frame (opcode {opcode})"));
            }
            if payload.len() > 125 {
                return Err(format!("server control frame of {} bytes", payload.len()));
            }
        }
        match opcode {
            PING => Ok(Some(Event::Ping(payload))),
            PONG => Ok(Some(Event::Pong(payload))),
            CLOSE => {
                if self.close_seen {
                    return Err("a second Close from the server".into());
                }
                self.close_seen = true;
                match payload.len() {
                    0 => Ok(Some(Event::Close(None, Vec::new()))),
                    1 => Err("server Close with a one-byte payload".into()),
                    _ => {
                        let code = u16::from_be_bytes([payload[0], payload[1]]);
                        if !valid_close_code(code) {
                            return Err(format!("server Close with invalid code {code}"));
                        }
                        let reason = payload[2..].to_vec();
                        if std::str::from_utf8(&reason).is_err() {
                            return Err("server Close reason is not UTF-8".into());
                        }
                        Ok(Some(Event::Close(Some(code), reason)))
                    }
                }
            }
            TEXT | BINARY => {
                if self.partial.is_some() {
                    return Err("server data frame inside a fragmented message".into());
                }
                self.partial = Some((opcode, rsv & 0b100 != 0, payload));
                self.finish_message(fin)
            }
            CONTINUATION => {
                let Some((_, _, data)) = &mut self.partial else {
                    return Err("server continuation frame without a message".into());
                };
                data.extend_from_slice(&payload);
                self.finish_message(fin)
            }
            other => Err(format!("server frame with reserved opcode {other}")),
        }
    }

    fn finish_message(&mut self, fin: bool) -> Result<Option<Event>, String> {
        if !fin {
            return Ok(None);
        }
        let Some((opcode, compressed, data)) = self.partial.take() else {
            return Ok(None);
        };
        let data = match (&mut self.deflate, compressed) {
            (Some(deflate), true) => deflate.decompress(&data)?,
            _ => data,
        };
        if opcode == TEXT {
            if std::str::from_utf8(&data).is_err() {
                return Err(format!(
                    "server text message is not UTF-8: {:?}",
                    Short(&data)
                ));
            }
            return Ok(Some(Event::Text(data)));
        }
        Ok(Some(Event::Binary(data)))
    }
}

/// Splits `data` into frames of at most `size` payload bytes (`0`: one
/// frame): the first with `opcode` and `rsv`, the others continuations.
pub fn fragments(opcode: u8, data: &[u8], size: usize, rsv: u8) -> Vec<Frame> {
    let size = if size == 0 { data.len().max(1) } else { size };
    let mut chunks: Vec<&[u8]> = data.chunks(size).collect();
    if chunks.is_empty() {
        chunks.push(&[]);
    }
    let last = chunks.len() - 1;
    chunks
        .into_iter()
        .enumerate()
        .map(|(i, chunk)| Frame {
            fin: i == last,
            rsv: if i == 0 { rsv } else { 0 },
            opcode: if i == 0 { opcode } else { CONTINUATION },
            payload: chunk.to_vec(),
        })
        .collect()
}

/// A close code a Close frame may carry (RFC 6455 §7.4 and the IANA
/// registry: 1012–1014 were added later).
pub fn valid_close_code(code: u16) -> bool {
    matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999)
}

/// A server frame head.
struct Head {
    fin: bool,
    rsv: u8,
    opcode: u8,
    len: usize,
}

/// The head and payload of the first frame in `buf`, once it is all
/// there.
fn split_frame(buf: &[u8]) -> Result<Option<(Head, &[u8])>, String> {
    let [b0, b1, ..] = *buf else {
        return Ok(None);
    };
    if b1 & 0x80 != 0 {
        return Err("masked server frame".into());
    }
    let (payload_len, head_len) = match b1 & 0x7f {
        126 => {
            let Some(n) = buf.get(2..4) else {
                return Ok(None);
            };
            let n = u16::from_be_bytes([n[0], n[1]]) as usize;
            if n < 126 {
                return Err(format!("server frame length {n} not in its shortest form"));
            }
            (n, 4)
        }
        127 => {
            let Some(n) = buf.get(2..10) else {
                return Ok(None);
            };
            let n = u64::from_be_bytes(n.try_into().unwrap_or_default());
            if n <= 0xffff || n >> 63 != 0 {
                return Err(format!("server frame length {n} not in its shortest form"));
            }
            (n as usize, 10)
        }
        n => (n as usize, 2),
    };
    let Some(payload) = buf.get(head_len..head_len + payload_len) else {
        return Ok(None);
    };
    let head = Head {
        fin: b0 & 0x80 != 0,
        rsv: (b0 >> 4) & 0x7,
        opcode: b0 & 0xf,
        len: head_len,
    };
    Ok(Some((head, payload)))
}
