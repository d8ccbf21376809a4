//! The HTTP/1.1 load generator of the `peers` scenario: one thread, many
//! keep-alive connections, optional pipelining, on mio (epoll on Linux).
//!
//! It is built to cost the client as little as possible, so that the
//! server, not the client, sets the pace:
//!
//! - the requests are built once: a connection writes `depth` copies of
//!   the same request in one `write`, and the next batch only once every
//!   response of the previous one is in (as wrk's `pipeline.lua` does);
//! - responses are read into one buffer shared by every connection and
//!   counted by [`ResponseCounter`], a sans-IO parser that looks only at
//!   the status line, the end of the head and `Content-Length`, steps
//!   over the body without copying it, and checks its length;
//! - a read shorter than the buffer is taken to have emptied the socket
//!   (an edge-triggered poll then reports any later data), which saves
//!   the read that would only return `WouldBlock`.
//!
//! [`run`] counts the responses completed in a measured window, after a
//! warm-up, with the client thread's CPU time over it; it calls a hook at
//! both edges of the window, where the caller reads the server's CPU
//! time. [`open_idle`] opens connections that each complete one request
//! and then stay open, for memory measurements; [`probe`] fetches one
//! response whole, head and body, to check what a server sends.

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use memchr::memmem;
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

/// Longest response head the counter accepts, in bytes.
const MAX_HEAD: usize = 8 * 1024;

/// Size of the read buffer all connections share, in bytes.
const READ_BUFFER: usize = 256 * 1024;

/// How long the responses still in flight when the window closes may take
/// to arrive.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a response could not be counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResponseError {
    /// The status line is not `HTTP/1.x 200`.
    Status(String),
    /// The head has no `Content-Length` (or one that is not a number).
    NoLength,
    /// The body's `Content-Length` is not the length expected.
    Length {
        /// The length the head announced, in bytes.
        got: u64,
        /// The length expected, in bytes.
        expected: u64,
    },
    /// The head is longer than [`MAX_HEAD`] bytes.
    HeadTooLong,
}

impl std::fmt::Display for ResponseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResponseError::Status(line) => write!(f, "not a 200 response: {line:?}"),
            ResponseError::NoLength => f.write_str("response without Content-Length"),
            ResponseError::Length { got, expected } => {
                write!(f, "body of {got} bytes, {expected} expected")
            }
            ResponseError::HeadTooLong => {
                write!(f, "response head longer than {MAX_HEAD} bytes")
            }
        }
    }
}

impl std::error::Error for ResponseError {}

impl From<ResponseError> for io::Error {
    fn from(e: ResponseError) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, e)
    }
}

/// Counts the complete responses in a stream of bytes fed to it in any
/// pieces: `200` responses framed by `Content-Length`, whose body must be
/// `expected` bytes long when that is given.
///
/// A head split between two pieces is kept until it is whole (at most
/// [`MAX_HEAD`] bytes); a body is stepped over, never copied. Once it has
/// returned an error the counter should be dropped.
#[derive(Debug, Clone)]
pub struct ResponseCounter {
    /// The part of a head that came in an earlier piece.
    head: Vec<u8>,
    /// Body bytes still to come of the current response, if in a body.
    body_left: Option<u64>,
    /// The body length every response must have.
    expected: Option<u64>,
    finder: memmem::Finder<'static>,
}

impl ResponseCounter {
    /// A counter checking that every body is `expected` bytes long, if
    /// given.
    pub fn new(expected: Option<u64>) -> ResponseCounter {
        ResponseCounter {
            head: Vec::new(),
            body_left: None,
            expected,
            finder: memmem::Finder::new(b"\r\n\r\n"),
        }
    }

    /// Whether the counter is between responses (no partial head or body
    /// pending).
    pub fn is_idle(&self) -> bool {
        self.head.is_empty() && self.body_left.is_none()
    }

    /// Takes the next piece of the stream; returns how many responses it
    /// completed.
    ///
    /// # Errors
    ///
    /// A status other than 200, a head without `Content-Length` or one
    /// longer than [`MAX_HEAD`] bytes, or a length other than the one
    /// expected.
    pub fn feed(&mut self, mut data: &[u8]) -> Result<u64, ResponseError> {
        let mut completed = 0;
        while !data.is_empty() {
            if let Some(left) = self.body_left {
                let take = left.min(data.len() as u64);
                data = &data[take as usize..];
                if take == left {
                    self.body_left = None;
                    completed += 1;
                } else {
                    self.body_left = Some(left - take);
                }
                continue;
            }
            let length = if self.head.is_empty() {
                match self.finder.find(data) {
                    Some(at) => {
                        let length = self.parse_head(&data[..at + 4])?;
                        data = &data[at + 4..];
                        length
                    }
                    None => {
                        if data.len() > MAX_HEAD {
                            return Err(ResponseError::HeadTooLong);
                        }
                        self.head.extend_from_slice(data);
                        return Ok(completed);
                    }
                }
            } else {
                // The end of the head may straddle the two pieces: look
                // again from three bytes before the old end.
                let old = self.head.len();
                let room = (MAX_HEAD + 4).saturating_sub(old);
                self.head.extend_from_slice(&data[..data.len().min(room)]);
                let from = old.saturating_sub(3);
                match self.finder.find(&self.head[from..]) {
                    Some(at) => {
                        let end = from + at + 4;
                        let head = std::mem::take(&mut self.head);
                        let length = self.parse_head(&head[..end]);
                        // Keep the allocation for the next split head.
                        self.head = head;
                        self.head.clear();
                        data = &data[end - old..];
                        length?
                    }
                    None if self.head.len() > MAX_HEAD => {
                        return Err(ResponseError::HeadTooLong);
                    }
                    None => return Ok(completed),
                }
            };
            if length == 0 {
                completed += 1;
            } else {
                self.body_left = Some(length);
            }
        }
        Ok(completed)
    }

    /// The body length of a whole head (ending with its blank line).
    fn parse_head(&self, head: &[u8]) -> Result<u64, ResponseError> {
        let status_ok = head.starts_with(b"HTTP/1.") && head.get(8..13) == Some(b" 200 ");
        if !status_ok {
            let line = head.split(|&b| b == b'\r').next().unwrap_or_default();
            return Err(ResponseError::Status(
                String::from_utf8_lossy(line).into_owned(),
            ));
        }
        let length = content_length(head).ok_or(ResponseError::NoLength)?;
        match self.expected {
            Some(expected) if expected != length => Err(ResponseError::Length {
                got: length,
                expected,
            }),
            _ => Ok(length),
        }
    }
}

/// The value of the `Content-Length` header of `head`.
fn content_length(head: &[u8]) -> Option<u64> {
    const NAME: &[u8] = b"content-length:";
    head.split(|&b| b == b'\n').skip(1).find_map(|line| {
        let name = line.get(..NAME.len())?;
        if !name.eq_ignore_ascii_case(NAME) {
            return None;
        }
        let value = std::str::from_utf8(&line[NAME.len()..]).ok()?;
        value.trim().parse().ok()
    })
}

/// What [`run`] drives: `connections` keep-alive connections to `addr`,
/// each sending `request` `depth` at a time.
#[derive(Debug, Clone)]
pub struct Load {
    /// The server.
    pub addr: SocketAddr,
    /// One whole request, sent as is.
    pub request: Vec<u8>,
    /// Requests written at once on a connection (1: no pipelining).
    pub depth: usize,
    /// Connections.
    pub connections: usize,
    /// The body length every response must have, if known.
    pub body_len: Option<u64>,
    /// Bytes each connection sends once, before its first request (a
    /// PROXY header); empty for none.
    pub preamble: Vec<u8>,
}

/// What [`run`] counted in its measured window.
#[derive(Debug, Clone, Copy)]
pub struct Counts {
    /// Responses completed in the window.
    pub responses: u64,
    /// The window's wall time.
    pub wall: Duration,
    /// CPU time of the client's thread in the window.
    pub client_cpu: Duration,
    /// Responses completed over the whole run: warm-up, window and the
    /// drain after it.
    pub total: u64,
}

/// One connection of [`run`].
struct Conn {
    stream: TcpStream,
    counter: ResponseCounter,
    /// Responses still to come of the batch sent.
    in_flight: u64,
    /// Bytes of the batch written so far, while it is being written.
    written: Option<usize>,
}

/// Drives `load` for `warmup`, then counts for `duration`, then waits for
/// the responses still in flight (at most [`DRAIN_TIMEOUT`]) and closes
/// the connections. `mark` is called when the window opens and when it
/// closes, on this thread, just before the counts are read.
///
/// # Errors
///
/// A connection that fails, closes, or answers with a response
/// [`ResponseCounter`] rejects; responses missing after the drain
/// timeout.
pub fn run(
    load: &Load,
    warmup: Duration,
    duration: Duration,
    mut mark: impl FnMut(),
) -> io::Result<Counts> {
    let depth = load.depth.max(1);
    let batch = load.request.repeat(depth);
    let mut poll = Poll::new()?;
    let mut events = Events::with_capacity(1024);
    let mut conns = Vec::with_capacity(load.connections);
    for i in 0..load.connections {
        let mut stream = std::net::TcpStream::connect(load.addr)?;
        stream.set_nodelay(true)?;
        stream.write_all(&load.preamble)?;
        stream.set_nonblocking(true)?;
        let mut stream = TcpStream::from_std(stream);
        poll.registry()
            .register(&mut stream, Token(i), Interest::READABLE)?;
        conns.push(Conn {
            stream,
            counter: ResponseCounter::new(load.body_len),
            in_flight: 0,
            written: None,
        });
    }
    let mut buf = vec![0u8; READ_BUFFER];
    let mut total = 0u64;
    for (i, conn) in conns.iter_mut().enumerate() {
        send(conn, &batch, depth, poll.registry(), Token(i))?;
    }
    let opens = Instant::now() + warmup;
    // Set when the window opens: responses counted, its start, the
    // client's CPU time then.
    let mut window: Option<(u64, Instant, Duration)> = None;
    let mut counts: Option<Counts> = None;
    let mut in_flight: u64 = conns.iter().map(|c| c.in_flight).sum();
    loop {
        let now = Instant::now();
        let timeout = match (window, counts) {
            (None, _) if now >= opens => {
                mark();
                window = Some((total, Instant::now(), crate::scenarios::thread_cpu_time()));
                duration
            }
            (None, _) => opens - now,
            (Some((total0, start, cpu0)), None) if now >= start + duration => {
                let client_cpu = crate::scenarios::thread_cpu_time().saturating_sub(cpu0);
                let wall = start.elapsed();
                mark();
                counts = Some(Counts {
                    responses: total - total0,
                    wall,
                    client_cpu,
                    total: 0,
                });
                DRAIN_TIMEOUT
            }
            (Some((_, start, _)), None) => start + duration - now,
            (Some((_, start, _)), Some(_)) => {
                let left = (start + duration + DRAIN_TIMEOUT).saturating_duration_since(now);
                if left.is_zero() {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("{in_flight} responses still missing after {DRAIN_TIMEOUT:?}"),
                    ));
                }
                left
            }
        };
        if counts.is_some() && in_flight == 0 {
            break;
        }
        match poll.poll(&mut events, Some(timeout)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
        for event in &events {
            let Some(conn) = conns.get_mut(event.token().0) else {
                continue;
            };
            if event.is_writable() && conn.written.is_some() {
                let before = conn.in_flight;
                send(conn, &batch, depth, poll.registry(), event.token())?;
                in_flight += conn.in_flight - before;
            }
            if !event.is_readable() {
                continue;
            }
            let done = receive(conn, &mut buf)?;
            total += done;
            in_flight -= done;
            // The next batch once the last one is answered, until the
            // window closes.
            if conn.in_flight == 0 && counts.is_none() {
                send(conn, &batch, depth, poll.registry(), event.token())?;
                in_flight += conn.in_flight;
            }
        }
    }
    let mut counts = counts.ok_or_else(|| io::Error::other("the window never closed"))?;
    counts.total = total;
    Ok(counts)
}

/// Writes (the rest of) a batch on `conn`, starting a new one if none is
/// being written; waits for writability when the socket is full.
fn send(
    conn: &mut Conn,
    batch: &[u8],
    depth: usize,
    registry: &mio::Registry,
    token: Token,
) -> io::Result<()> {
    let mut at = match conn.written {
        Some(at) => at,
        None => {
            conn.in_flight += depth as u64;
            0
        }
    };
    while at < batch.len() {
        match conn.stream.write(&batch[at..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => at += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if conn.written.is_none() {
                    registry.reregister(
                        &mut conn.stream,
                        token,
                        Interest::READABLE | Interest::WRITABLE,
                    )?;
                }
                conn.written = Some(at);
                return Ok(());
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    if conn.written.take().is_some() {
        registry.reregister(&mut conn.stream, token, Interest::READABLE)?;
    }
    Ok(())
}

/// Reads what `conn` has, counting the responses it completes.
fn receive(conn: &mut Conn, buf: &mut [u8]) -> io::Result<u64> {
    let mut done = 0;
    loop {
        match conn.stream.read(buf) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "the server closed a connection with {} responses to come",
                        conn.in_flight - done
                    ),
                ))
            }
            Ok(n) => {
                let completed = conn.counter.feed(&buf[..n])?;
                if completed > conn.in_flight - done {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "more responses than requests",
                    ));
                }
                done += completed;
                if n < buf.len() {
                    break;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    conn.in_flight -= done;
    Ok(done)
}

/// Opens `n` connections to `addr` one after another; each sends
/// `request` and reads its whole response (whose body must be `body_len`
/// bytes long, if given) before the next is opened. Returns them open
/// and idle.
///
/// # Errors
///
/// A connection that fails, or a response [`ResponseCounter`] rejects.
pub fn open_idle(
    addr: SocketAddr,
    n: usize,
    request: &[u8],
    body_len: Option<u64>,
) -> io::Result<Vec<std::net::TcpStream>> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut conns = Vec::with_capacity(n);
    for _ in 0..n {
        let mut stream = std::net::TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        stream.write_all(request)?;
        let mut counter = ResponseCounter::new(body_len);
        loop {
            let got = stream.read(&mut buf)?;
            if got == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            if counter.feed(&buf[..got])? > 0 {
                if !counter.is_idle() {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "bytes past the one response asked for",
                    ));
                }
                break;
            }
        }
        conns.push(stream);
    }
    Ok(conns)
}

/// One response, whole.
#[derive(Debug, Clone)]
pub struct Probed {
    /// The head, up to and without its blank line.
    pub head: String,
    /// The body.
    pub body: Vec<u8>,
}

impl Probed {
    /// The names of the head's header fields, lowercase, in order.
    pub fn header_names(&self) -> Vec<String> {
        self.head
            .lines()
            .skip(1)
            .filter_map(|line| line.split_once(':'))
            .map(|(name, _)| name.trim().to_ascii_lowercase())
            .collect()
    }

    /// The value of header `name` (any case), if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

/// Sends `request` on a new connection to `addr` and returns the
/// response's head and body (a `200` framed by `Content-Length`).
///
/// # Errors
///
/// As [`open_idle`]; and an answer that is not a `200` with a
/// `Content-Length`.
pub fn probe(addr: SocketAddr, request: &[u8]) -> io::Result<Probed> {
    let mut stream = std::net::TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    stream.write_all(request)?;
    let mut data = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    let finder = memmem::Finder::new(b"\r\n\r\n");
    loop {
        if let Some(at) = finder.find(&data) {
            let head = &data[..at + 4];
            let length = ResponseCounter::new(None).parse_head(head)?;
            let want = at + 4 + usize::try_from(length).map_err(io::Error::other)?;
            if data.len() >= want {
                return Ok(Probed {
                    head: String::from_utf8_lossy(&data[..at]).into_owned(),
                    body: data[at + 4..want].to_vec(),
                });
            }
        }
        let got = stream.read(&mut buf)?;
        if got == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        data.extend_from_slice(&buf[..got]);
    }
}

/// `GET path` on a keep-alive connection, as wrk sends it.
pub fn get(path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").into_bytes()
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    use std::sync::Arc;

    use super::*;

    fn response(body: &[u8]) -> Vec<u8> {
        let mut r = format!(
            "HTTP/1.1 200 OK\r\nServer: x\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        r.extend_from_slice(body);
        r
    }

    /// Feeds `stream` cut at `cuts` and returns the responses counted.
    fn count_in_pieces(stream: &[u8], cuts: &[usize], expected: Option<u64>) -> u64 {
        let mut counter = ResponseCounter::new(expected);
        let mut done = 0;
        let mut from = 0;
        for &cut in cuts.iter().chain([&stream.len()]) {
            done += counter.feed(&stream[from..cut]).unwrap();
            from = cut;
        }
        assert!(counter.is_idle());
        done
    }

    #[test]
    fn one_response_whole() {
        let r = response(b"hello world!!");
        assert_eq!(count_in_pieces(&r, &[], Some(13)), 1);
    }

    #[test]
    fn a_response_split_at_every_offset() {
        let r = response(b"hello world!!");
        for cut in 0..=r.len() {
            assert_eq!(count_in_pieces(&r, &[cut], Some(13)), 1, "cut at {cut}");
        }
    }

    #[test]
    fn a_pipelined_batch_byte_by_byte_and_whole() {
        let mut batch = Vec::new();
        for _ in 0..16 {
            batch.extend_from_slice(&response(b"0123456789abc"));
        }
        assert_eq!(count_in_pieces(&batch, &[], Some(13)), 16);
        let every: Vec<usize> = (1..batch.len()).collect();
        assert_eq!(count_in_pieces(&batch, &every, Some(13)), 16);
        // Two cuts anywhere.
        for a in (0..batch.len()).step_by(7) {
            for b in (a..batch.len()).step_by(31) {
                assert_eq!(count_in_pieces(&batch, &[a, b], Some(13)), 16);
            }
        }
    }

    #[test]
    fn a_body_split_across_reads() {
        let body = vec![b'x'; 40960];
        let r = response(&body);
        let cuts: Vec<usize> = (1..r.len()).step_by(1436).collect();
        assert_eq!(count_in_pieces(&r, &cuts, Some(40960)), 1);
        let mut counter = ResponseCounter::new(None);
        assert_eq!(counter.feed(&r[..100]).unwrap(), 0);
        assert!(!counter.is_idle(), "in the body");
        assert_eq!(counter.feed(&r[100..]).unwrap(), 1);
    }

    #[test]
    fn empty_bodies_count() {
        let mut two = response(b"");
        two.extend_from_slice(&response(b""));
        assert_eq!(count_in_pieces(&two, &[5, 40], Some(0)), 2);
    }

    #[test]
    fn header_names_in_any_case() {
        let r = b"HTTP/1.1 200 Ok\r\nserver: M\r\ncontent-LENGTH:  3\r\n\r\nabc";
        assert_eq!(count_in_pieces(r, &[], Some(3)), 1);
    }

    #[test]
    fn bad_responses_are_errors() {
        let mut counter = ResponseCounter::new(None);
        let e = counter
            .feed(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
            .unwrap_err();
        assert!(matches!(e, ResponseError::Status(ref line) if line.contains("404")));

        let mut counter = ResponseCounter::new(None);
        assert_eq!(
            counter.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
            Err(ResponseError::NoLength)
        );

        let mut counter = ResponseCounter::new(Some(13));
        assert_eq!(
            counter.feed(&response(b"short")),
            Err(ResponseError::Length {
                got: 5,
                expected: 13
            })
        );

        let mut counter = ResponseCounter::new(None);
        assert_eq!(
            counter.feed(b"garbage\r\n\r\n").unwrap_err().to_string(),
            "not a 200 response: \"garbage\""
        );

        let mut counter = ResponseCounter::new(None);
        let endless = vec![b'a'; 1000];
        let mut result = Ok(0);
        for _ in 0..20 {
            result = counter.feed(&endless);
            if result.is_err() {
                break;
            }
        }
        assert_eq!(result, Err(ResponseError::HeadTooLong));
    }

    /// A tiny keep-alive server over a real socket: answers every request
    /// head it reads with `answer`, all the answers to one read in one
    /// write, and counts them.
    fn tiny_server(answer: Vec<u8>) -> (SocketAddr, Arc<AtomicU64>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let answered = Arc::new(AtomicU64::new(0));
        let counter = answered.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let (answer, counter) = (answer.clone(), counter.clone());
                std::thread::spawn(move || {
                    let finder = memmem::Finder::new(b"\r\n\r\n");
                    let mut pending = Vec::new();
                    let mut buf = [0u8; 4096];
                    loop {
                        let n = match stream.read(&mut buf) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => n,
                        };
                        pending.extend_from_slice(&buf[..n]);
                        let mut out = Vec::new();
                        while let Some(at) = finder.find(&pending) {
                            pending.drain(..at + 4);
                            out.extend_from_slice(&answer);
                            counter.fetch_add(1, Relaxed);
                        }
                        if stream.write_all(&out).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        (addr, answered)
    }

    #[test]
    fn every_response_a_server_sends_is_counted() {
        let body = vec![b'z'; 3000];
        let (addr, answered) = tiny_server(response(&body));
        let mut marks = 0;
        let load = Load {
            addr,
            request: get("/bytes/3000"),
            depth: 4,
            connections: 8,
            body_len: Some(3000),
            preamble: Vec::new(),
        };
        let counts = run(
            &load,
            Duration::from_millis(50),
            Duration::from_millis(150),
            || marks += 1,
        )
        .unwrap();
        assert_eq!(marks, 2);
        assert!(counts.responses >= 100, "{counts:?}");
        assert!(counts.responses <= counts.total, "{counts:?}");
        assert_eq!(counts.total % 4, 0, "whole batches of 4: {counts:?}");
        assert_eq!(counts.total, answered.load(Relaxed));
        assert!(counts.wall >= Duration::from_millis(150), "{counts:?}");

        let idle = open_idle(addr, 50, &get("/bytes/3000"), Some(3000)).unwrap();
        assert_eq!(idle.len(), 50);
        assert_eq!(answered.load(Relaxed), counts.total + 50);

        let probed = probe(addr, &get("/bytes/3000")).unwrap();
        assert_eq!(probed.body, body);
        assert_eq!(probed.header("content-length"), Some("3000"));
        assert_eq!(probed.header_names(), ["server", "content-length"]);
    }

    #[test]
    fn a_wrong_length_under_load_is_an_error() {
        let (addr, _) = tiny_server(response(b"short"));
        let load = Load {
            addr,
            request: get("/bytes/13"),
            depth: 1,
            connections: 2,
            body_len: Some(13),
            preamble: Vec::new(),
        };
        let e = run(&load, Duration::ZERO, Duration::from_millis(50), || {}).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{e}");
    }

    /// ringstream's server with the demo's routes, in this process, on a
    /// thread of its own.
    fn ringstream_server() -> (SocketAddr, Arc<ringstream::server::Metrics>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let server = ringstream::server::Server::from_std(listener).unwrap();
                let metrics = server.metrics();
                let app = ringstream_cli::app::App::new(metrics.clone());
                tx.send(metrics).unwrap();
                let _ = server.serve(app).await;
            });
        });
        (addr, rx.recv().unwrap())
    }

    #[test]
    fn pipelined_requests_to_ringstream_are_all_answered() {
        let (addr, metrics) = ringstream_server();
        let probed = probe(addr, &get("/bytes/13")).unwrap();
        assert_eq!(probed.body, ringstream_cli::app::pattern_block()[..13]);
        let mut sent = 1;
        for (depth, connections, size) in [(16, 4, 13), (1, 3, 40960)] {
            let load = Load {
                addr,
                request: get(&format!("/bytes/{size}")),
                depth,
                connections,
                body_len: Some(size),
                preamble: Vec::new(),
            };
            let counts = run(&load, Duration::ZERO, Duration::from_millis(100), || {}).unwrap();
            assert!(counts.responses >= 50, "{counts:?}");
            assert_eq!(counts.total % depth as u64, 0, "{counts:?}");
            sent += counts.total;
        }
        // The server counts a request when its head is read: every one
        // the client sent, since it has every answer.
        assert_eq!(metrics.requests(), sent);
    }
}
