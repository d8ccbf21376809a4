//! The HTTP application the tests serve with ringstream-embedded's server.
//!
//! - `GET /hello`: `hello`, with a `content-length`.
//! - `GET /payload`: [`PAYLOAD_LEN`] bytes of [`payload_byte`], known
//!   length, written in 256-byte pieces.
//! - `GET /lines`: [`LINES`] lines of [`LINE_LEN`] bytes (about 40 KB),
//!   length unknown so sent chunked, each printed with `write!` through a
//!   `Display` that counts its runs in [`Demo::formatter_runs`].
//! - `POST /echo`: the request body back, as it is read (a piece read,
//!   a piece written); with the request's length when it has one, chunked
//!   otherwise.
//! - `POST /count`: the body's length and FNV-1a hash, read in pieces
//!   through a 64-byte buffer (nothing holds the body whole).
//! - `GET /wide`: a head with a 300-byte field (more than half the
//!   transmit buffer), then a printed body, chunked.
//! - `GET /too-wide`: a head with a 600-byte field, larger than the
//!   transmit buffer: the server answers 500 instead.
//! - `GET /flash`: [`FLASH`], a page in "flash" (a `static`), known
//!   length; `GET /flash-chunked`: the same between two printed lines,
//!   chunked.
//! - `GET /long-line`: one `write!` of 500 bytes, more than the transmit
//!   buffer has room for: the response cannot go on (`Error::Format`).
//! - Anything else: 404.

use core::cell::Cell;
use core::fmt;

use ringstream_embedded::embedded_io_async::{Read, Write};
use ringstream_embedded::http::{App, Error, Request, Responder, Sent};

/// Length of `/payload` in bytes.
pub const PAYLOAD_LEN: usize = 40 * 1024;

/// Byte `i` of `/payload`.
pub fn payload_byte(i: usize) -> u8 {
    (i.wrapping_mul(31) ^ (i >> 8)) as u8
}

/// Lines of `/lines`.
pub const LINES: usize = 683;
/// Bytes per line of `/lines`, `\n` included.
pub const LINE_LEN: usize = 60;

/// Line `i` of `/lines`, as the server prints it.
pub fn line(i: usize) -> String {
    format!("line {i:05}: {}\n", filler(i))
}

/// The 47 bytes after a line's number.
fn filler(i: usize) -> &'static str {
    const ALPHABET: &str =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let at = i % 26;
    &ALPHABET[at..at + 47]
}

/// FNV-1a, 64 bits: a hash a handler computes piece by piece.
pub fn fnv1a(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// FNV-1a's starting value.
pub const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// A page in flash: 8 KiB, larger than the transmit buffer.
pub static FLASH: [u8; 8192] = {
    let mut page = [0u8; 8192];
    let mut i = 0;
    while i < page.len() {
        page[i] = b'a' + (i % 26) as u8;
        i += 1;
    }
    page
};

/// The test application.
#[derive(Default)]
pub struct Demo {
    /// How many times a line's `Display` ran, over all requests.
    pub formatter_runs: Cell<usize>,
}

/// One line of `/lines`, counting its formatter runs.
struct Line<'a> {
    i: usize,
    runs: &'a Cell<usize>,
}

impl fmt::Display for Line<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.runs.set(self.runs.get() + 1);
        write!(f, "line {:05}: {}", self.i, filler(self.i))
    }
}

impl App for Demo {
    async fn handle<IO: Read + Write>(
        &self,
        request: &Request<'_>,
        responder: &mut Responder<'_, IO>,
    ) -> Result<Sent, Error<IO::Error>> {
        match (request.method(), request.path()) {
            ("GET" | "HEAD", "/hello") => {
                let fields = [("content-type", &b"text/plain"[..])];
                responder.send(200, &fields, b"hello").await
            }
            ("GET" | "HEAD", "/payload") => {
                responder.start(200, &[], Some(PAYLOAD_LEN as u64)).await?;
                let mut piece = [0u8; 256];
                let mut sent = 0;
                while sent < PAYLOAD_LEN {
                    let n = piece.len().min(PAYLOAD_LEN - sent);
                    for (k, b) in piece[..n].iter_mut().enumerate() {
                        *b = payload_byte(sent + k);
                    }
                    responder.write_all(&piece[..n]).await?;
                    sent += n;
                }
                responder.finish().await
            }
            ("GET" | "HEAD", "/lines") => {
                responder.start(200, &[], None).await?;
                for i in 0..LINES {
                    let line = Line {
                        i,
                        runs: &self.formatter_runs,
                    };
                    writeln!(responder, "{line}").await?;
                }
                responder.finish().await
            }
            ("POST", "/echo") => {
                let mut piece = [0u8; 200];
                // Read first, so the head can follow the body's start (and
                // a client waiting on `100-continue` is invited).
                let mut n = responder.read_body(&mut piece).await?;
                responder.start(200, &[], request.content_length()).await?;
                while n > 0 {
                    responder.write_all(&piece[..n]).await?;
                    n = responder.read_body(&mut piece).await?;
                }
                responder.finish().await
            }
            ("POST", "/count") => {
                let mut piece = [0u8; 64];
                let (mut total, mut hash) = (0u64, FNV_START);
                loop {
                    match responder.read_body(&mut piece).await? {
                        0 => break,
                        n => {
                            total += n as u64;
                            hash = fnv1a(hash, &piece[..n]);
                        }
                    }
                }
                responder.start(200, &[], None).await?;
                write!(responder, "{total} {hash:016x}").await?;
                responder.finish().await
            }
            ("GET", "/wide") => {
                // Promoted to a static: not held in the handler's future.
                let value: &'static [u8] = &[b'w'; 300];
                responder.start(200, &[("x-wide", value)], None).await?;
                for i in 0..20 {
                    writeln!(responder, "wide {i}").await?;
                }
                responder.finish().await
            }
            ("GET", "/too-wide") => {
                let value: &'static [u8] = &[b'w'; 600];
                responder.send(200, &[("x-wide", value)], b"never").await
            }
            ("GET", "/flash") => responder.send(200, &[], &FLASH).await,
            ("GET", "/flash-chunked") => {
                responder.start(200, &[], None).await?;
                writeln!(responder, "before").await?;
                responder.write_all(&FLASH).await?;
                writeln!(responder, "after").await?;
                responder.finish().await
            }
            ("GET", "/long-line") => {
                const LONG: &str = concat!(
                    "0123456789012345678901234567890123456789012345678901234567890123456789",
                    "0123456789012345678901234567890123456789012345678901234567890123456789",
                    "0123456789012345678901234567890123456789012345678901234567890123456789",
                    "0123456789012345678901234567890123456789012345678901234567890123456789",
                    "0123456789012345678901234567890123456789012345678901234567890123456789",
                    "0123456789012345678901234567890123456789012345678901234567890123456789",
                    "0123456789012345678901234567890123456789012345678901234567890123456789",
                    "0123456789",
                );
                responder.start(200, &[], None).await?;
                write!(responder, "{LONG}").await?;
                responder.finish().await
            }
            _ => responder.send(404, &[], b"").await,
        }
    }
}
