//! In-memory connections for the in-process server scenarios
//! (`server-cpu`, `server-allocs`).
//!
//! A [`Loopback`] hands out connections whose server ends are ordinary
//! `AsyncRead + AsyncWrite` transports. Requests travel to each server
//! through a buffer of their own; responses from every connection land in
//! **one** buffer that the keep-alive [`Client`] consumes in place, without
//! copying them out.
//!
//! Both choices keep the harness out of the comparison. The servers' writes
//! into the shared buffer stand in for the kernel's copy of a socket send:
//! every server pays it, and since all connections write into the same
//! memory, the copy costs the same for each. A client that copied every
//! response into a buffer of its own (as with `tokio::io::duplex`) would
//! add a second copy whose speed depends on where the allocator happened
//! to place each pipe's buffer relative to the client's: on the machine
//! these figures come from, one placement made that copy of a 40 KiB
//! response four times slower than another, so a change in the length of
//! the command line moved one server's figure from 4 µs to 17 µs.
//!
//! Only one response may be in the shared buffer at a time: the client
//! sends a request on one connection and takes its whole response before
//! it sends the next. A server that writes while another connection's
//! response is being read waits, as it would on a full socket.

use std::future::poll_fn;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Connections sharing one response buffer of a fixed capacity.
pub struct Loopback {
    state: Arc<Mutex<State>>,
}

struct State {
    /// Response bytes not yet taken by the client: `responses[start..]`.
    responses: Vec<u8>,
    start: usize,
    /// The connection whose response is in `responses`.
    writer: Option<usize>,
    capacity: usize,
    conns: Vec<Conn>,
}

#[derive(Default)]
struct Conn {
    /// Request bytes not yet read by the server: `requests[start..]`.
    requests: Vec<u8>,
    start: usize,
    server_read: Option<Waker>,
    server_write: Option<Waker>,
    client: Option<Waker>,
    client_closed: bool,
    server_closed: bool,
}

impl Loopback {
    /// A loopback whose response buffer holds `capacity` bytes; it is
    /// allocated once, here.
    pub fn new(capacity: usize) -> Self {
        assert!(capacity > 0, "the response buffer must hold something");
        Self {
            state: Arc::new(Mutex::new(State {
                responses: Vec::with_capacity(capacity),
                start: 0,
                writer: None,
                capacity,
                conns: Vec::new(),
            })),
        }
    }

    /// A new connection: its client end and its server end.
    pub fn connect(&self) -> (Client, Server) {
        let mut state = lock(&self.state);
        let id = state.conns.len();
        state.conns.push(Conn::default());
        (
            Client {
                state: self.state.clone(),
                id,
            },
            Server {
                state: self.state.clone(),
                id,
            },
        )
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn wake(waker: &mut Option<Waker>) {
    if let Some(waker) = waker.take() {
        waker.wake();
    }
}

/// The client end of a connection: sends a request, takes its response.
pub struct Client {
    state: Arc<Mutex<State>>,
    id: usize,
}

impl Client {
    /// Send `request` and take its whole response (`Content-Length`
    /// framed) out of the shared buffer without copying it; returns the
    /// response's length, head included.
    ///
    /// # Panics
    ///
    /// If the server closes the connection first, or its response has no
    /// `Content-Length` or a head longer than the buffer.
    pub async fn exchange(&mut self, request: &[u8]) -> usize {
        self.send(request);
        self.response().await
    }

    /// Send `request` (one or several pipelined requests) without waiting
    /// for an answer.
    pub fn send(&mut self, request: &[u8]) {
        let mut state = lock(&self.state);
        let conn = &mut state.conns[self.id];
        if conn.start == conn.requests.len() {
            conn.requests.clear();
            conn.start = 0;
        }
        conn.requests.extend_from_slice(request);
        wake(&mut conn.server_read);
    }

    /// Take the next whole response (`Content-Length` framed) out of the
    /// shared buffer without copying it; returns its length, head included.
    /// Pipelined responses written together are taken one call at a time.
    ///
    /// # Panics
    ///
    /// As [`exchange`](Self::exchange).
    pub async fn response(&mut self) -> usize {
        let mut total = None;
        let mut taken = 0;
        poll_fn(|cx| {
            let mut state = lock(&self.state);
            let state = &mut *state;
            loop {
                if state.writer != Some(self.id) || state.start == state.responses.len() {
                    let conn = &mut state.conns[self.id];
                    assert!(!conn.server_closed, "server closed the connection");
                    conn.client = Some(cx.waker().clone());
                    return Poll::Pending;
                }
                let pending = &state.responses[state.start..];
                let total = match total {
                    Some(total) => total,
                    None => match response_length(pending) {
                        Some(length) => *total.insert(length),
                        None => {
                            assert!(
                                state.responses.len() < state.capacity,
                                "response head longer than the loopback buffer"
                            );
                            state.conns[self.id].client = Some(cx.waker().clone());
                            return Poll::Pending;
                        }
                    },
                };
                let take = pending.len().min(total - taken);
                state.start += take;
                taken += take;
                if state.start == state.responses.len() {
                    state.responses.clear();
                    state.start = 0;
                    state.writer = None;
                    for conn in &mut state.conns {
                        wake(&mut conn.server_write);
                    }
                }
                if taken == total {
                    return Poll::Ready(total);
                }
            }
        })
        .await
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let mut state = lock(&self.state);
        let conn = &mut state.conns[self.id];
        conn.client_closed = true;
        wake(&mut conn.server_read);
        wake(&mut conn.server_write);
    }
}

/// The length of the response that starts `bytes`, head included, once its
/// head is complete. Kept cheap, since its cost is added to both servers'.
fn response_length(bytes: &[u8]) -> Option<usize> {
    const NAME: &[u8] = b"content-length:";
    let mut body = None;
    let mut line_start = 0;
    for (i, &byte) in bytes.iter().enumerate() {
        if byte != b'\n' {
            continue;
        }
        let line = &bytes[line_start..i];
        line_start = i + 1;
        if line == b"\r" {
            let body = body.expect("response without Content-Length");
            return Some(i + 1 + body);
        }
        if line.len() > NAME.len() && line[..NAME.len()].eq_ignore_ascii_case(NAME) {
            let value = line[NAME.len()..].trim_ascii();
            let value = std::str::from_utf8(value).expect("Content-Length is ASCII");
            body = Some(value.parse::<usize>().expect("Content-Length is a number"));
        }
    }
    None
}

/// The server end of a connection.
pub struct Server {
    state: Arc<Mutex<State>>,
    id: usize,
}

impl AsyncRead for Server {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let mut state = lock(&self.state);
        let conn = &mut state.conns[self.id];
        let pending = &conn.requests[conn.start..];
        if pending.is_empty() {
            if !conn.client_closed {
                conn.server_read = Some(cx.waker().clone());
                return Poll::Pending;
            }
            return Poll::Ready(Ok(()));
        }
        let n = pending.len().min(buf.remaining());
        buf.put_slice(&pending[..n]);
        conn.start += n;
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Server {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_vectored(cx, &[IoSlice::new(buf)])
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let mut state = lock(&self.state);
        let state = &mut *state;
        if state.conns[self.id].client_closed {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        }
        if bufs.iter().all(|buf| buf.is_empty()) {
            return Poll::Ready(Ok(0));
        }
        let mut space = state.capacity - state.responses.len();
        if space == 0 || state.writer.is_some_and(|writer| writer != self.id) {
            state.conns[self.id].server_write = Some(cx.waker().clone());
            return Poll::Pending;
        }
        let mut written = 0;
        for buf in bufs {
            let n = buf.len().min(space);
            state.responses.extend_from_slice(&buf[..n]);
            written += n;
            space -= n;
            if space == 0 {
                break;
            }
        }
        state.writer = Some(self.id);
        wake(&mut state.conns[self.id].client);
        Poll::Ready(Ok(written))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut state = lock(&self.state);
        let conn = &mut state.conns[self.id];
        conn.server_closed = true;
        wake(&mut conn.client);
        Poll::Ready(Ok(()))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let mut state = lock(&self.state);
        let conn = &mut state.conns[self.id];
        conn.server_closed = true;
        wake(&mut conn.client);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A server that answers every request line with a response whose body
    /// is `body`, written in pieces of `piece` bytes.
    async fn answer(mut server: Server, body: Vec<u8>, piece: usize) {
        let mut request = [0u8; 64];
        loop {
            let n = server.read(&mut request).await.unwrap();
            if n == 0 {
                return;
            }
            let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len());
            server.write_all(head.as_bytes()).await.unwrap();
            for chunk in body.chunks(piece) {
                server.write_all(chunk).await.unwrap();
            }
        }
    }

    #[tokio::test]
    async fn responses_longer_than_the_buffer_arrive_whole_on_each_connection() {
        let loopback = Loopback::new(1000);
        let (mut a, server_a) = loopback.connect();
        let (mut b, server_b) = loopback.connect();
        let serve_a = tokio::spawn(answer(server_a, vec![b'a'; 5000], 700));
        let serve_b = tokio::spawn(answer(server_b, vec![b'b'; 10], 3));
        for _ in 0..3 {
            assert_eq!(a.exchange(b"GET / HTTP/1.1\r\n\r\n").await, 41 + 5000);
            assert_eq!(b.exchange(b"GET / HTTP/1.1\r\n\r\n").await, 39 + 10);
        }
        drop(a);
        drop(b);
        serve_a.await.unwrap();
        serve_b.await.unwrap();
    }

    #[tokio::test]
    async fn a_server_that_writes_while_another_response_is_pending_waits() {
        let loopback = Loopback::new(100);
        let (mut a, mut server_a) = loopback.connect();
        let (_b, mut server_b) = loopback.connect();
        server_a
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n")
            .await
            .unwrap();
        let mut cx = Context::from_waker(Waker::noop());
        let unsolicited = Pin::new(&mut server_b).poll_write(&mut cx, b"x");
        assert!(unsolicited.is_pending());
        server_a.write_all(b"ok").await.unwrap();
        // The client takes `a`'s whole response; `b`'s write then goes in.
        assert_eq!(a.exchange(b"").await, 40);
        let unsolicited = Pin::new(&mut server_b).poll_write(&mut cx, b"x");
        assert!(matches!(unsolicited, Poll::Ready(Ok(1))));
    }

    #[tokio::test]
    async fn pipelined_responses_are_taken_one_at_a_time() {
        let loopback = Loopback::new(1000);
        let (mut client, server) = loopback.connect();
        // Three requests in one read: the server writes three responses
        // back to back before the client takes any.
        let serve = tokio::spawn(async move {
            let mut server = server;
            let mut requests = [0u8; 64];
            let n = server.read(&mut requests).await.unwrap();
            assert_eq!(n, 54);
            let response = b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\npppppp\n";
            server.write_all(&response.repeat(3)).await.unwrap();
        });
        client.send(&b"GET / HTTP/1.1\r\n\r\n".repeat(3));
        for _ in 0..3 {
            assert_eq!(client.response().await, 38 + 7);
        }
        drop(client);
        serve.await.unwrap();
    }

    #[test]
    fn response_length_needs_the_whole_head() {
        let response = b"HTTP/1.1 200 OK\r\ncontent-length: 12\r\nX: y\r\n\r\nhello";
        assert_eq!(response_length(response), Some(response.len() - 5 + 12));
        assert_eq!(response_length(&response[..response.len() - 6]), None);
        assert_eq!(
            response_length(b"HTTP/1.1 200 OK\r\nContent-Length:0\r\n\r\n"),
            Some(37)
        );
    }

    #[tokio::test]
    async fn a_closed_client_ends_the_server_s_reads_and_fails_its_writes() {
        let loopback = Loopback::new(100);
        let (client, mut server) = loopback.connect();
        drop(client);
        let mut buf = [0u8; 8];
        assert_eq!(server.read(&mut buf).await.unwrap(), 0);
        let error = server.write(b"late").await.unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::BrokenPipe);
    }
}
