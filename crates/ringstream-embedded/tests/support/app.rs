//! The handler the tests serve: a few fixed HTTP/1.1 answers, the request
//! head parsed by ringstream-core's `HeadParser`, the response bytes
//! written by hand (the HTTP server on the core comes later).
//!
//! - `GET /hello` answers `hello`.
//! - `GET /payload` answers [`PAYLOAD_LEN`] bytes of [`payload_byte`],
//!   written through a 256-byte buffer.
//! - `POST /echo` with a `Content-Length` answers the body it was sent.
//! - Anything else: 404; a head the parser refuses: the status it maps to.
//!
//! Every answer carries `Connection: close`; the handler returns after it.

use ringstream_core::h1::{BodyFraming, Field, HeadParser};
use ringstream_core::Limits;
use ringstream_embedded::embedded_io_async::{Read, Write};
use ringstream_embedded::Handler;

/// Length of `/payload` in bytes: the size of the seed's live-data page.
pub const PAYLOAD_LEN: usize = 40 * 1024;

/// Byte `i` of `/payload`: a pattern that shows a lost, repeated or
/// misplaced segment.
pub fn payload_byte(i: usize) -> u8 {
    (i.wrapping_mul(31) ^ (i >> 8)) as u8
}

/// Bytes of request head the handler reads at most.
const HEAD_BUF: usize = 512;

/// The test application.
pub struct App;

impl Handler for App {
    async fn serve<IO: Read + Write>(&self, io: &mut IO) -> Result<(), IO::Error> {
        let mut buf = [0u8; HEAD_BUF];
        let mut len = 0;
        let mut parser = HeadParser::new(Limits {
            max_head_len: HEAD_BUF,
            ..Limits::DEFAULT
        });
        // What the head asks for, copied out of `buf` so it can be reused.
        let (route, head_len) = loop {
            let mut fields = [Field::EMPTY; 8];
            match parser.parse(&buf[..len], &mut fields) {
                Ok(Some(head)) => break (Route::of(&head), head.head_len),
                Ok(None) => {}
                Err(e) => return answer_status(io, e.status()).await,
            }
            if len == buf.len() {
                return answer_status(io, 431).await;
            }
            let n = io.read(&mut buf[len..]).await?;
            if n == 0 {
                return Ok(()); // the client went away mid-head
            }
            len += n;
        };
        match route {
            Route::Hello => {
                io.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
                )
                .await
            }
            Route::Payload => {
                write_head(io, 200, PAYLOAD_LEN).await?;
                let mut chunk = [0u8; 256];
                let mut sent = 0;
                while sent < PAYLOAD_LEN {
                    let n = chunk.len().min(PAYLOAD_LEN - sent);
                    for (k, b) in chunk[..n].iter_mut().enumerate() {
                        *b = payload_byte(sent + k);
                    }
                    io.write_all(&chunk[..n]).await?;
                    sent += n;
                }
                io.flush().await
            }
            Route::Echo(body_len) => {
                write_head(io, 200, body_len).await?;
                // The start of the body came with the head.
                let early = (len - head_len).min(body_len);
                io.write_all(&buf[head_len..head_len + early]).await?;
                let mut left = body_len - early;
                while left > 0 {
                    let want = left.min(buf.len());
                    let n = io.read(&mut buf[..want]).await?;
                    if n == 0 {
                        return Ok(()); // the body was cut short
                    }
                    io.write_all(&buf[..n]).await?;
                    left -= n;
                }
                io.flush().await
            }
            Route::NotFound => answer_status(io, 404).await,
        }
    }
}

enum Route {
    Hello,
    Payload,
    Echo(usize),
    NotFound,
}

impl Route {
    fn of(head: &ringstream_core::h1::RequestHead<'_>) -> Route {
        match (head.method, head.target, head.framing) {
            ("GET", "/hello", _) => Route::Hello,
            ("GET", "/payload", _) => Route::Payload,
            ("POST", "/echo", BodyFraming::Length(n)) => match usize::try_from(n) {
                Ok(n) => Route::Echo(n),
                Err(_) => Route::NotFound,
            },
            _ => Route::NotFound,
        }
    }
}

/// `HTTP/1.1 <status> \r\nContent-Length: <len>\r\nConnection: close\r\n\r\n`,
/// formatted into a stack buffer.
async fn write_head<IO: Write>(io: &mut IO, status: u16, len: usize) -> Result<(), IO::Error> {
    let mut head = [0u8; 96];
    let mut w = Cursor {
        buf: &mut head,
        len: 0,
    };
    // The buffer holds any status and length; a failure would be a bug here.
    core::fmt::write(
        &mut w,
        format_args!("HTTP/1.1 {status} \r\nContent-Length: {len}\r\nConnection: close\r\n\r\n"),
    )
    .expect("head fits");
    let n = w.len;
    io.write_all(&head[..n]).await
}

async fn answer_status<IO: Write>(io: &mut IO, status: u16) -> Result<(), IO::Error> {
    write_head(io, status, 0).await?;
    io.flush().await
}

struct Cursor<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl core::fmt::Write for Cursor<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let end = self.len + s.len();
        let dst = self.buf.get_mut(self.len..end).ok_or(core::fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}
