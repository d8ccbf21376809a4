//! The raw HTTP/2 client of the h2spec port, after h2spec's own
//! `spec/connection.go` and `spec/verifier.go`: frames written as given
//! (illegal ones too), frames read one by one under a deadline, and the
//! `verify_*` checks with h2spec's acceptance rules.
//!
//! As in h2spec, a read that fails (the deadline, the connection's end,
//! anything else) marks the connection closed; only the end of the
//! connection (EOF, a reset) counts as "connection closed", a timeout
//! never passes a check.
//!
//! `H2SPEC_TRACE=1` prints every event read (with `--nocapture`).

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use crate::common;

pub const DATA: u8 = 0x0;
pub const HEADERS: u8 = 0x1;
pub const PRIORITY: u8 = 0x2;
pub const RST_STREAM: u8 = 0x3;
pub const SETTINGS: u8 = 0x4;
pub const PUSH_PROMISE: u8 = 0x5;
pub const PING: u8 = 0x6;
pub const GOAWAY: u8 = 0x7;
pub const WINDOW_UPDATE: u8 = 0x8;
pub const CONTINUATION: u8 = 0x9;

pub const END_STREAM: u8 = 0x1;
pub const ACK: u8 = 0x1;
pub const END_HEADERS: u8 = 0x4;
pub const PADDED: u8 = 0x8;
pub const PRIORITY_FLAG: u8 = 0x20;

pub const NO_ERROR: u32 = 0x0;
pub const PROTOCOL_ERROR: u32 = 0x1;
pub const FLOW_CONTROL_ERROR: u32 = 0x3;
pub const STREAM_CLOSED: u32 = 0x5;
pub const FRAME_SIZE_ERROR: u32 = 0x6;
pub const REFUSED_STREAM: u32 = 0x7;
pub const CANCEL: u32 = 0x8;
pub const COMPRESSION_ERROR: u32 = 0x9;

pub const HEADER_TABLE_SIZE: u16 = 0x1;
pub const ENABLE_PUSH: u16 = 0x2;
pub const MAX_CONCURRENT_STREAMS: u16 = 0x3;
pub const INITIAL_WINDOW_SIZE: u16 = 0x4;
pub const MAX_FRAME_SIZE: u16 = 0x5;
pub const MAX_HEADER_LIST_SIZE: u16 = 0x6;

pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// h2spec's `DefaultWindowSize` and `DefaultFrameSize`.
pub const DEFAULT_WINDOW_SIZE: u32 = 65_535;
pub const DEFAULT_FRAME_SIZE: usize = 16_384;
/// h2spec's default `--max-header-length`.
pub const MAX_HEADER_LEN: usize = 4000;
/// h2spec's default `--timeout`: each read waits this long.
pub const TIMEOUT: Duration = Duration::from_secs(2);

/// What a case returns: `Err` says what h2spec expected and got.
pub type Verdict = Result<(), String>;

/// Header fields, in order, as h2spec's `[]hpack.HeaderField`.
pub type Fields = Vec<(String, String)>;

pub fn field(name: &str, value: &str) -> (String, String) {
    (name.to_owned(), value.to_owned())
}

/// A frame read from the server.
pub struct Frame {
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
    pub payload: Vec<u8>,
}

impl Frame {
    /// The error code of a RST_STREAM or GOAWAY frame.
    pub fn error_code(&self) -> Option<u32> {
        let at = match self.kind {
            RST_STREAM => 0,
            GOAWAY => 4,
            _ => return None,
        };
        let bytes = self.payload.get(at..at + 4)?;
        Some(u32::from_be_bytes(bytes.try_into().unwrap()))
    }

    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

impl fmt::Debug for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const NAMES: [&str; 10] = [
            "DATA",
            "HEADERS",
            "PRIORITY",
            "RST_STREAM",
            "SETTINGS",
            "PUSH_PROMISE",
            "PING",
            "GOAWAY",
            "WINDOW_UPDATE",
            "CONTINUATION",
        ];
        let name = NAMES.get(usize::from(self.kind)).unwrap_or(&"UNKNOWN");
        write!(
            f,
            "{name} Frame (length:{}, flags:0x{:02x}, stream_id:{}",
            self.payload.len(),
            self.flags,
            self.stream
        )?;
        if let Some(code) = self.error_code() {
            write!(f, ", error_code:{code}")?;
        }
        write!(f, ")")
    }
}

/// What one read brings, as h2spec's events.
pub enum Event {
    Frame(Frame),
    /// EOF, or the connection reset.
    Closed,
    Timeout,
    /// Any other failure to read a frame.
    Error(String),
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Frame(frame) => write!(f, "{frame:?}"),
            Event::Closed => write!(f, "connection closed"),
            Event::Timeout => write!(f, "timeout ({TIMEOUT:?})"),
            Event::Error(e) => write!(f, "error reading a frame: {e}"),
        }
    }
}

impl Event {
    fn frame(&self) -> Option<&Frame> {
        match self {
            Event::Frame(frame) => Some(frame),
            _ => None,
        }
    }
}

/// A byte stream to the server: TCP, or TLS over it.
pub trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// Where and how a case connects; what h2spec's `config.Config` holds.
pub struct Dialer {
    pub addr: SocketAddr,
    /// Set for TLS (ALPN `h2`, server name `localhost`).
    pub tls: Option<TlsConnector>,
    /// h2spec's `--path`.
    pub path: &'static str,
}

impl Dialer {
    /// A new connection, nothing sent yet (h2spec's `spec.Dial`).
    pub async fn dial(self: &Arc<Self>) -> Conn {
        let tcp = TcpStream::connect(self.addr).await.unwrap();
        tcp.set_nodelay(true).unwrap();
        let io: Box<dyn Io> = match &self.tls {
            None => Box::new(tcp),
            Some(connector) => {
                let name = ServerName::try_from("localhost").unwrap();
                let tls = connector.connect(name, tcp).await.unwrap();
                let alpn = tls.get_ref().1.alpn_protocol();
                assert_eq!(alpn, Some(&b"h2"[..]), "protocol negotiation failed");
                Box::new(tls)
            }
        };
        Conn {
            io,
            dialer: self.clone(),
            settings: HashMap::new(),
            closed: false,
            windows: HashMap::from([(0, i64::from(DEFAULT_WINDOW_SIZE))]),
        }
    }
}

/// One connection to the server (h2spec's `spec.Conn`).
pub struct Conn {
    io: Box<dyn Io>,
    pub dialer: Arc<Dialer>,
    /// The server's SETTINGS, as the handshake read them.
    pub settings: HashMap<u16, u32>,
    pub closed: bool,
    /// What h2spec thinks the server may still send, per stream (0: the
    /// connection); given back by WINDOW_UPDATE when used up.
    windows: HashMap<u32, i64>,
}

/// Why a frame could not be read.
enum ReadEnd {
    Closed,
    Failed(String),
}

impl From<io::Error> for ReadEnd {
    fn from(e: io::Error) -> ReadEnd {
        match e.kind() {
            io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted => ReadEnd::Closed,
            _ => ReadEnd::Failed(e.to_string()),
        }
    }
}

async fn read_frame(io: &mut dyn Io) -> Result<Frame, ReadEnd> {
    let mut head = [0u8; 9];
    let mut got = 0;
    while got < head.len() {
        let n = match io.read(&mut head[got..]).await {
            Ok(n) => n,
            // A TLS connection closed without close_notify, between
            // records: Go's TLS reads that as EOF too.
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof && got == 0 => 0,
            Err(e) => return Err(e.into()),
        };
        if n == 0 {
            return Err(if got == 0 {
                ReadEnd::Closed
            } else {
                ReadEnd::Failed("EOF inside a frame header".into())
            });
        }
        got += n;
    }
    let len = (usize::from(head[0]) << 16) | (usize::from(head[1]) << 8) | usize::from(head[2]);
    let mut payload = vec![0u8; len];
    io.read_exact(&mut payload).await?;
    Ok(Frame {
        kind: head[3],
        flags: head[4],
        stream: u32::from_be_bytes(head[5..9].try_into().unwrap()) & 0x7fff_ffff,
        payload,
    })
}

impl Conn {
    /// Sends bytes as they are (h2spec's `Send`); a failed write is found
    /// out by the next read.
    pub async fn send(&mut self, bytes: &[u8]) {
        if self.io.write_all(bytes).await.is_ok() {
            let _ = self.io.flush().await;
        }
    }

    pub async fn write_frame(&mut self, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
        self.send(&common::h2_frame(kind, flags, stream, payload))
            .await;
    }

    /// The preface, then SETTINGS (INITIAL_WINDOW_SIZE 65,535), then
    /// frames read until the server's SETTINGS and the ACK of ours came
    /// (the server's acknowledged), within the timeout.
    pub async fn handshake(&mut self) -> Verdict {
        self.send(PREFACE).await;
        self.write_settings(&[(INITIAL_WINDOW_SIZE, DEFAULT_WINDOW_SIZE)])
            .await;
        let exchange = async {
            let (mut local, mut remote) = (false, false);
            while !(local && remote) {
                let frame = match read_frame(&mut *self.io).await {
                    Ok(frame) => frame,
                    Err(ReadEnd::Closed) => return Err("handshake: connection closed".into()),
                    Err(ReadEnd::Failed(e)) => return Err(format!("handshake: {e}")),
                };
                if frame.kind != SETTINGS {
                    continue;
                }
                if frame.has(ACK) {
                    local = true;
                } else {
                    remote = true;
                    for setting in frame.payload.chunks_exact(6) {
                        let id = u16::from_be_bytes([setting[0], setting[1]]);
                        let value = u32::from_be_bytes(setting[2..6].try_into().unwrap());
                        self.settings.insert(id, value);
                    }
                    self.write_settings_ack().await;
                }
            }
            Ok(())
        };
        tokio::time::timeout(TIMEOUT, exchange)
            .await
            .unwrap_or_else(|_| Err("handshake: timeout".into()))
    }

    /// The server's SETTINGS_MAX_FRAME_SIZE.
    pub fn max_frame_size(&self) -> usize {
        self.settings
            .get(&MAX_FRAME_SIZE)
            .map_or(DEFAULT_FRAME_SIZE, |&v| v as usize)
    }

    /// The next event, within the timeout (h2spec's `WaitEvent`). DATA is
    /// given back to the windows as h2spec does.
    pub async fn wait_event(&mut self) -> Event {
        let event = match tokio::time::timeout(TIMEOUT, read_frame(&mut *self.io)).await {
            Err(_) => Event::Timeout,
            Ok(Ok(frame)) => Event::Frame(frame),
            Ok(Err(ReadEnd::Closed)) => Event::Closed,
            Ok(Err(ReadEnd::Failed(e))) => Event::Error(e),
        };
        if std::env::var_os("H2SPEC_TRACE").is_some() {
            eprintln!("[recv] {event:?}");
        }
        match &event {
            Event::Frame(frame) if frame.kind == DATA => {
                let (stream, len) = (frame.stream, frame.payload.len() as i64);
                self.update_window(stream, len).await;
                self.update_window(0, len).await;
            }
            Event::Frame(_) => {}
            _ => self.closed = true,
        }
        event
    }

    async fn update_window(&mut self, stream: u32, len: i64) {
        let window = self
            .windows
            .entry(stream)
            .or_insert(i64::from(DEFAULT_WINDOW_SIZE));
        *window -= len;
        if *window <= 0 {
            let increment = i64::from(DEFAULT_WINDOW_SIZE) - *window;
            *window += increment;
            self.write_window_update(stream, increment as u32).await;
        }
    }

    /// Events until one of frame type `kind` (h2spec's
    /// `WaitEventByType`): that one and true, or the last event seen and
    /// false.
    pub async fn wait_event_by_type(&mut self, kind: u8) -> (Option<Event>, bool) {
        let mut last = None;
        while !self.closed {
            let event = self.wait_event().await;
            if event.frame().is_some_and(|f| f.kind == kind) {
                return (Some(event), true);
            }
            last = Some(event);
        }
        (last, false)
    }

    /// The header block of `fields`: each a literal without indexing,
    /// no Huffman coding.
    pub fn encode(&self, fields: &[(String, String)]) -> Vec<u8> {
        common::literal_block(fields)
    }

    /// h2spec's `CommonHeaders`: GET of the path, on this server.
    pub fn common_headers(&self) -> Fields {
        let scheme = if self.dialer.tls.is_some() {
            "https"
        } else {
            "http"
        };
        vec![
            field(":method", "GET"),
            field(":scheme", scheme),
            field(":path", self.dialer.path),
            field(":authority", &self.dialer.addr.to_string()),
        ]
    }

    /// h2spec's `DummyHeaders`: `n` fields of `MAX_HEADER_LEN` bytes.
    pub fn dummy_headers(&self, n: usize) -> Fields {
        let dummy = "x".repeat(MAX_HEADER_LEN);
        (0..n)
            .map(|i| field(&format!("x-dummy{i}"), &dummy))
            .collect()
    }

    /// The common request head, method `method`, as one HEADERS frame.
    pub async fn request(&mut self, stream: u32, method: &str, end_stream: bool) {
        let mut headers = self.common_headers();
        headers[0].1 = method.to_owned();
        let block = self.encode(&headers);
        self.write_headers(stream, end_stream, true, &block).await;
    }

    pub async fn write_headers(
        &mut self,
        stream: u32,
        end_stream: bool,
        end_headers: bool,
        block: &[u8],
    ) {
        let flags = flag(end_stream, END_STREAM) | flag(end_headers, END_HEADERS);
        self.write_frame(HEADERS, flags, stream, block).await;
    }

    /// HEADERS with a priority (`dependency`, exclusive bit, weight)
    /// and/or `pad` octets of padding, as Go's framer writes them.
    pub async fn write_headers_with(
        &mut self,
        stream: u32,
        block: &[u8],
        priority: Option<(u32, bool, u8)>,
        pad: u8,
    ) {
        let mut flags = END_STREAM | END_HEADERS;
        let mut payload = Vec::new();
        if pad != 0 {
            flags |= PADDED;
            payload.push(pad);
        }
        if let Some(priority) = priority {
            flags |= PRIORITY_FLAG;
            payload.extend_from_slice(&priority_fields(priority));
        }
        payload.extend_from_slice(block);
        payload.extend(std::iter::repeat_n(0, usize::from(pad)));
        self.write_frame(HEADERS, flags, stream, &payload).await;
    }

    pub async fn write_continuation(&mut self, stream: u32, end_headers: bool, block: &[u8]) {
        let flags = flag(end_headers, END_HEADERS);
        self.write_frame(CONTINUATION, flags, stream, block).await;
    }

    pub async fn write_data(&mut self, stream: u32, end_stream: bool, data: &[u8]) {
        let flags = flag(end_stream, END_STREAM);
        self.write_frame(DATA, flags, stream, data).await;
    }

    pub async fn write_data_padded(
        &mut self,
        stream: u32,
        end_stream: bool,
        data: &[u8],
        pad: &[u8],
    ) {
        let mut payload = vec![pad.len() as u8];
        payload.extend_from_slice(data);
        payload.extend_from_slice(pad);
        let flags = flag(end_stream, END_STREAM) | PADDED;
        self.write_frame(DATA, flags, stream, &payload).await;
    }

    pub async fn write_priority(
        &mut self,
        stream: u32,
        dependency: u32,
        exclusive: bool,
        weight: u8,
    ) {
        let payload = priority_fields((dependency, exclusive, weight));
        self.write_frame(PRIORITY, 0, stream, &payload).await;
    }

    pub async fn write_rst_stream(&mut self, stream: u32, code: u32) {
        self.write_frame(RST_STREAM, 0, stream, &code.to_be_bytes())
            .await;
    }

    pub async fn write_settings(&mut self, settings: &[(u16, u32)]) {
        let mut payload = Vec::new();
        for (id, value) in settings {
            payload.extend_from_slice(&id.to_be_bytes());
            payload.extend_from_slice(&value.to_be_bytes());
        }
        self.write_frame(SETTINGS, 0, 0, &payload).await;
    }

    pub async fn write_settings_ack(&mut self) {
        self.write_frame(SETTINGS, ACK, 0, &[]).await;
    }

    pub async fn write_ping(&mut self, ack: bool, data: [u8; 8]) {
        self.write_frame(PING, flag(ack, ACK), 0, &data).await;
    }

    pub async fn write_goaway(&mut self, last_stream: u32, code: u32, debug: &[u8]) {
        let mut payload = last_stream.to_be_bytes().to_vec();
        payload.extend_from_slice(&code.to_be_bytes());
        payload.extend_from_slice(debug);
        self.write_frame(GOAWAY, 0, 0, &payload).await;
    }

    pub async fn write_window_update(&mut self, stream: u32, increment: u32) {
        self.write_frame(WINDOW_UPDATE, 0, stream, &increment.to_be_bytes())
            .await;
    }

    pub async fn write_push_promise(&mut self, stream: u32, promised: u32, block: &[u8]) {
        let mut payload = promised.to_be_bytes().to_vec();
        payload.extend_from_slice(block);
        self.write_frame(PUSH_PROMISE, END_HEADERS, stream, &payload)
            .await;
    }
}

fn flag(set: bool, flag: u8) -> u8 {
    if set {
        flag
    } else {
        0
    }
}

fn priority_fields((dependency, exclusive, weight): (u32, bool, u8)) -> [u8; 5] {
    let mut dep = dependency.to_be_bytes();
    if exclusive {
        dep[0] |= 0x80;
    }
    [dep[0], dep[1], dep[2], dep[3], weight]
}
