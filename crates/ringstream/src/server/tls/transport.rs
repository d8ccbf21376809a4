//! A server-side TLS connection over any transport, driven through
//! rustls' unbuffered API.
//!
//! The ciphertext is read into and written from buffers of the thread's
//! block pool, and each goes back to the pool as soon as the connection
//! waits with nothing in it: an idle TLS connection holds rustls' state
//! (keys, the handshake's outcome) and no buffer. Decrypted bytes go
//! straight into the reader's buffer; only what does not fit is kept.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use rustls::server::UnbufferedServerConnection;
use rustls::unbuffered::{ConnectionState, EncodeError, InsufficientSizeError, UnbufferedStatus};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::record::{make_room, BUFFER, MAX_RECORD, RECORD_OVERHEAD};
use super::seal;
use crate::stream::pool;

/// The most received bytes waiting to be processed: a handshake message
/// of rustls' largest (64 KiB, e.g. a long client certificate chain)
/// spread over records, and the record after it.
const MAX_INCOMING: usize = 64 * 1024 + MAX_RECORD;

/// The most plaintext one write encrypts, and the most ciphertext that
/// waits to be sent before a write waits for the socket.
const MAX_WRITE: usize = 64 * 1024;

/// Hands every decrypted record of a `ReadTraffic` or `ReadEarlyData`
/// state to the reader (see [`take_plaintext`]), adding what each asks to
/// discard; the [`Step`] that follows.
macro_rules! take_records {
    ($state:expr, $discard:expr, $goal:expr, $kept:expr) => {{
        let mut step = Step::Continue;
        while let Some(record) = $state.next_record() {
            match record {
                Ok(record) => {
                    $discard += record.discard;
                    take_plaintext(record.payload, $goal, $kept);
                }
                Err(e) => {
                    step = Step::Failed(tls_error(e));
                    break;
                }
            }
        }
        step
    }};
}

/// A server-side TLS connection over `T`.
pub(crate) struct TlsTransport<T> {
    conn: UnbufferedServerConnection,
    io: T,
    /// Received ciphertext: `incoming[..received]` is not processed yet;
    /// the rest of `incoming` (initialised) is room to read into.
    incoming: Vec<u8>,
    received: usize,
    /// Decrypted bytes a reader's buffer had no room for, from
    /// `plaintext_start` on.
    plaintext: Vec<u8>,
    plaintext_start: usize,
    /// Ciphertext to send: `outgoing[sent..encoded]`.
    outgoing: Vec<u8>,
    encoded: usize,
    sent: usize,
    /// The peer sent its close_notify or closed the transport.
    read_closed: bool,
    /// Our close_notify is encoded.
    close_queued: bool,
}

/// What [`TlsTransport::poll_process`] drives the connection to.
enum Goal<'a, 'b> {
    /// The handshake done (the client's Finished received) and what it
    /// leaves to send encoded.
    Handshake,
    /// Some plaintext in the buffer, or the peer's end.
    Read(&'a mut ReadBuf<'b>),
    /// These bytes (up to [`MAX_WRITE`]) encrypted.
    Write(&'a [IoSlice<'a>]),
    /// Our close_notify encoded.
    CloseNotify,
}

/// What one state of the connection asks for, once its borrows end.
enum Step {
    Continue,
    Pending,
    NeedBytes,
    /// `WriteTraffic` reached while the handshake was under way at the
    /// start of the step: it may have ended within it.
    CheckHandshake,
    PeerClosed,
    /// Both ends sent their close_notify.
    Closed,
    Done(usize),
    Failed(io::Error),
}

impl<T: AsyncRead + AsyncWrite + Unpin> TlsTransport<T> {
    /// A connection with `config`'s certificates over `io`.
    pub(crate) fn new(
        config: std::sync::Arc<rustls::ServerConfig>,
        io: T,
    ) -> io::Result<TlsTransport<T>> {
        let conn = UnbufferedServerConnection::new(config).map_err(io::Error::other)?;
        Ok(TlsTransport {
            conn,
            io,
            incoming: Vec::new(),
            received: 0,
            plaintext: Vec::new(),
            plaintext_start: 0,
            outgoing: Vec::new(),
            encoded: 0,
            sent: 0,
            read_closed: false,
            close_queued: false,
        })
    }

    /// Reads the client's first bytes, without handing them to rustls:
    /// the number read (0 at the end of the stream).
    pub(crate) async fn read_first(&mut self) -> io::Result<usize> {
        std::future::poll_fn(|cx| self.poll_receive(cx)).await
    }

    /// The first byte received, if any.
    pub(crate) fn first_byte(&self) -> Option<u8> {
        self.incoming.get(..self.received)?.first().copied()
    }

    /// Whether the handshake negotiated HTTP/2 by ALPN.
    #[cfg(feature = "http2")]
    pub(crate) fn negotiated_http2(&self) -> bool {
        self.conn.alpn_protocol() == Some(b"h2")
    }

    /// Runs the handshake to its end.
    pub(crate) async fn handshake(&mut self) -> io::Result<()> {
        std::future::poll_fn(|cx| self.poll_process(cx, Goal::Handshake).map_ok(|_| ())).await
    }

    /// The transport, for a client that turned out not to speak TLS.
    pub(crate) fn into_inner(self) -> T {
        self.io
    }

    /// Drives rustls over what was received until `goal` is reached,
    /// reading more from the peer and sending what rustls has to say on
    /// the way. `Done(n)`: the bytes encrypted, for [`Goal::Write`].
    fn poll_process(
        &mut self,
        cx: &mut Context<'_>,
        mut goal: Goal<'_, '_>,
    ) -> Poll<io::Result<usize>> {
        let start = match &goal {
            Goal::Read(buf) => buf.filled().len(),
            _ => 0,
        };
        loop {
            if let Goal::Read(buf) = &goal {
                if buf.filled().len() > start || self.read_closed {
                    return Poll::Ready(Ok(0));
                }
            }
            let handshaking = self.conn.is_handshaking();
            let Self {
                conn,
                io,
                incoming,
                received,
                plaintext,
                outgoing,
                encoded,
                sent,
                close_queued,
                ..
            } = self;
            let UnbufferedStatus { mut discard, state } =
                conn.process_tls_records(&mut incoming[..*received]);
            let step = match state {
                Err(e) => Step::Failed(tls_error(e)),
                Ok(ConnectionState::ReadTraffic(mut traffic)) => {
                    take_records!(traffic, discard, &mut goal, plaintext)
                }
                Ok(ConnectionState::ReadEarlyData(mut early)) => {
                    take_records!(early, discard, &mut goal, plaintext)
                }
                Ok(ConnectionState::EncodeTlsData(mut encode)) => loop {
                    let room = outgoing.get_mut(*encoded..).unwrap_or_default();
                    match encode.encode(room) {
                        Ok(n) => {
                            *encoded += n;
                            break Step::Continue;
                        }
                        Err(EncodeError::InsufficientSize(InsufficientSizeError {
                            required_size,
                        })) => make_room(outgoing, *encoded, required_size),
                        Err(EncodeError::AlreadyEncoded) => break Step::Continue,
                    }
                },
                Ok(ConnectionState::TransmitTlsData(transmit)) => {
                    match poll_send(io, cx, outgoing, encoded, sent) {
                        Poll::Ready(Ok(())) => {
                            transmit.done();
                            Step::Continue
                        }
                        Poll::Ready(Err(e)) => Step::Failed(e),
                        Poll::Pending => Step::Pending,
                    }
                }
                Ok(ConnectionState::BlockedHandshake) => Step::NeedBytes,
                Ok(ConnectionState::WriteTraffic(mut traffic)) => {
                    if handshaking {
                        Step::CheckHandshake
                    } else {
                        match &goal {
                            Goal::Handshake => Step::Done(0),
                            Goal::Read(_) => Step::NeedBytes,
                            Goal::Write(bufs) => {
                                match seal::encrypt(
                                    &mut traffic,
                                    bufs,
                                    MAX_WRITE,
                                    outgoing,
                                    encoded,
                                ) {
                                    Ok(n) => Step::Done(n),
                                    Err(e) => Step::Failed(e),
                                }
                            }
                            Goal::CloseNotify => {
                                let room = RECORD_OVERHEAD + 2;
                                make_room(outgoing, *encoded, room);
                                let spare = outgoing.get_mut(*encoded..).unwrap_or_default();
                                match traffic.queue_close_notify(spare) {
                                    Ok(n) => {
                                        *encoded += n;
                                        *close_queued = true;
                                        Step::Done(0)
                                    }
                                    Err(e) => Step::Failed(io::Error::other(e)),
                                }
                            }
                        }
                    }
                }
                Ok(ConnectionState::PeerClosed) => Step::PeerClosed,
                Ok(ConnectionState::Closed) => Step::Closed,
                Ok(other) => {
                    Step::Failed(io::Error::other(format!("unexpected TLS state {other:?}")))
                }
            };
            self.discard(discard);
            match step {
                Step::Continue => {}
                Step::Pending => return Poll::Pending,
                Step::Done(n) => return Poll::Ready(Ok(n)),
                Step::Failed(e) => {
                    self.send_alert(cx);
                    return Poll::Ready(Err(e));
                }
                Step::PeerClosed => {
                    self.read_closed = true;
                    if matches!(goal, Goal::Handshake) && self.conn.is_handshaking() {
                        return Poll::Ready(Err(io::ErrorKind::UnexpectedEof.into()));
                    }
                    if let Goal::Read(_) = goal {
                        return Poll::Ready(Ok(0));
                    }
                }
                Step::Closed => {
                    self.read_closed = true;
                    return match goal {
                        Goal::Read(_) => Poll::Ready(Ok(0)),
                        Goal::CloseNotify => Poll::Ready(Ok(0)),
                        Goal::Handshake => Poll::Ready(Err(io::ErrorKind::UnexpectedEof.into())),
                        Goal::Write(_) => Poll::Ready(Err(io::ErrorKind::BrokenPipe.into())),
                    };
                }
                Step::CheckHandshake if !self.conn.is_handshaking() => {}
                Step::CheckHandshake | Step::NeedBytes => {
                    if ready!(self.poll_receive(cx))? == 0 {
                        if self.conn.is_handshaking() || self.received > 0 {
                            return Poll::Ready(Err(io::Error::new(
                                io::ErrorKind::UnexpectedEof,
                                "the peer closed the connection within a TLS record",
                            )));
                        }
                        // Closed without a close_notify: the end of the
                        // stream all the same (HTTP's framing tells a cut
                        // message from a whole one).
                        self.read_closed = true;
                        if !matches!(goal, Goal::Write(_) | Goal::CloseNotify) {
                            return Poll::Ready(Ok(0));
                        }
                    }
                }
            }
        }
    }

    /// Reads from the peer into `incoming`'s room, growing it when it is
    /// full; the number read (0 at the end of the stream). The buffer goes
    /// back to the pool when the peer has nothing to send and nothing
    /// waits in it.
    fn poll_receive(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        if self.received == self.incoming.len() {
            // Full of one unfinished message: room for more, up to the
            // largest message rustls takes.
            if self.received >= MAX_INCOMING {
                return Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "TLS message too large",
                )));
            }
            let size = (self.incoming.len() * 2).clamp(BUFFER, MAX_INCOMING);
            make_room(&mut self.incoming, 0, size);
        }
        let room = self.incoming.get_mut(self.received..).unwrap_or_default();
        let mut buf = ReadBuf::new(room);
        match Pin::new(&mut self.io).poll_read(cx, &mut buf) {
            Poll::Ready(Ok(())) => {
                let n = buf.filled().len();
                self.received += n;
                Poll::Ready(Ok(n))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => {
                if self.received == 0 {
                    pool::give_filled(std::mem::take(&mut self.incoming));
                }
                Poll::Pending
            }
        }
    }

    /// Drops the first `n` received bytes (processed by rustls).
    fn discard(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        let n = n.min(self.received);
        self.incoming.copy_within(n..self.received, 0);
        self.received -= n;
    }

    /// After a failure: encodes the alert rustls queued, if any, and sends
    /// it if the socket takes it now.
    fn send_alert(&mut self, cx: &mut Context<'_>) {
        // The received bytes as they are: rustls may still point into them
        // (a handshake message it was joining), and takes no empty slice
        // in their place.
        let received = self.incoming.get_mut(..self.received).unwrap_or_default();
        let UnbufferedStatus { discard, state } = self.conn.process_tls_records(received);
        if let Ok(ConnectionState::EncodeTlsData(mut encode)) = state {
            make_room(&mut self.outgoing, self.encoded, 64);
            let room = self.outgoing.get_mut(self.encoded..).unwrap_or_default();
            if let Ok(n) = encode.encode(room) {
                self.encoded += n;
            }
        }
        self.discard(discard);
        let _ = poll_send(
            &mut self.io,
            cx,
            &mut self.outgoing,
            &mut self.encoded,
            &mut self.sent,
        );
    }

    fn poll_send_all(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        poll_send(
            &mut self.io,
            cx,
            &mut self.outgoing,
            &mut self.encoded,
            &mut self.sent,
        )
    }
}

/// Hands a record's plaintext to a reader's buffer, keeping what does not
/// fit in `kept`.
fn take_plaintext(payload: &[u8], goal: &mut Goal<'_, '_>, kept: &mut Vec<u8>) {
    let mut rest = payload;
    if let Goal::Read(buf) = goal {
        if kept.is_empty() {
            let n = rest.len().min(buf.remaining());
            let (now, later) = rest.split_at(n);
            buf.put_slice(now);
            rest = later;
        }
    }
    kept.extend_from_slice(rest);
}

/// Writes `outgoing[sent..encoded]` to `io`; once all is sent the buffer
/// goes back to the pool.
fn poll_send<T: AsyncWrite + Unpin>(
    io: &mut T,
    cx: &mut Context<'_>,
    outgoing: &mut Vec<u8>,
    encoded: &mut usize,
    sent: &mut usize,
) -> Poll<io::Result<()>> {
    while *sent < *encoded {
        let pending = outgoing.get(*sent..*encoded).unwrap_or_default();
        let n = ready!(Pin::new(&mut *io).poll_write(cx, pending))?;
        if n == 0 {
            return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
        }
        *sent += n;
    }
    *sent = 0;
    *encoded = 0;
    pool::give_filled(std::mem::take(outgoing));
    Poll::Ready(Ok(()))
}

fn tls_error(e: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

impl<T: AsyncRead + AsyncWrite + Unpin> AsyncRead for TlsTransport<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.plaintext_start < this.plaintext.len() {
            let kept = this
                .plaintext
                .get(this.plaintext_start..)
                .unwrap_or_default();
            let n = kept.len().min(buf.remaining());
            buf.put_slice(kept.get(..n).unwrap_or_default());
            this.plaintext_start += n;
            if this.plaintext_start == this.plaintext.len() {
                this.plaintext = Vec::new();
                this.plaintext_start = 0;
            }
            return Poll::Ready(Ok(()));
        }
        if this.read_closed || buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        ready!(this.poll_process(cx, Goal::Read(buf)))?;
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> AsyncWrite for TlsTransport<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_vectored(cx, &[IoSlice::new(buf)])
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if this.encoded - this.sent >= MAX_WRITE {
            ready!(this.poll_send_all(cx))?;
        }
        if bufs.iter().all(|b| b.is_empty()) {
            return Poll::Ready(Ok(0));
        }
        let n = ready!(this.poll_process(cx, Goal::Write(bufs)))?;
        // Sent now if the socket takes it; else by the next write or flush.
        if let Poll::Ready(Err(e)) = this.poll_send_all(cx) {
            return Poll::Ready(Err(e));
        }
        Poll::Ready(Ok(n))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        ready!(this.poll_send_all(cx))?;
        Pin::new(&mut this.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if !this.close_queued {
            ready!(this.poll_process(cx, Goal::CloseNotify))?;
            this.close_queued = true;
        }
        ready!(this.poll_send_all(cx))?;
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rustls::pki_types::ServerName;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// A server-side transport and a rustls client over an in-memory pipe,
    /// both through their handshake.
    async fn pair() -> (
        TlsTransport<tokio::io::DuplexStream>,
        tokio_rustls::client::TlsStream<tokio::io::DuplexStream>,
    ) {
        let ca = ringstream_testkit::tls::Authority::new();
        let issued = ca.issue(&["localhost"]);
        let config =
            crate::server::tls::TlsConfig::from_pem(issued.cert.as_bytes(), issued.key.as_bytes())
                .unwrap()
                .current();
        let mut roots = rustls::RootCertStore::empty();
        roots.add(ca.der()).unwrap();
        let client = rustls::ClientConfig::builder()
            .with_root_certificates(roots)
            .with_no_client_auth();
        let connector = tokio_rustls::TlsConnector::from(Arc::new(client));
        let (near, far) = tokio::io::duplex(64 * 1024);
        let mut server = TlsTransport::new(config, near).unwrap();
        let name = ServerName::try_from("localhost").unwrap();
        let (shook, client) = tokio::join!(server.handshake(), connector.connect(name, far));
        shook.unwrap();
        (server, client.unwrap())
    }

    #[tokio::test]
    async fn a_small_read_keeps_the_rest_of_a_record_and_a_waiting_connection_holds_no_buffer() {
        let (mut server, mut client) = pair().await;
        client.write_all(b"hello, world").await.unwrap();
        client.flush().await.unwrap();
        let mut two = [0u8; 2];
        server.read_exact(&mut two).await.unwrap();
        assert_eq!(&two, b"he");
        assert!(
            !server.plaintext.is_empty(),
            "the rest of the record is kept"
        );
        let mut rest = [0u8; 10];
        server.read_exact(&mut rest).await.unwrap();
        assert_eq!(&rest, b"llo, world");

        // Nothing more to read: the read waits, and gives its buffers back.
        let waited =
            tokio::time::timeout(std::time::Duration::from_millis(50), server.read(&mut rest))
                .await;
        assert!(waited.is_err(), "nothing was sent");
        assert_eq!(server.incoming.capacity(), 0);
        assert_eq!(server.outgoing.capacity(), 0);
        assert_eq!(server.plaintext.capacity(), 0);

        // A write is sent whole, and the buffer goes back once it is.
        server.write_all(b"bye").await.unwrap();
        server.flush().await.unwrap();
        assert_eq!(server.outgoing.capacity(), 0);
        let mut bye = [0u8; 3];
        client.read_exact(&mut bye).await.unwrap();
        assert_eq!(&bye, b"bye");

        // The server's close: a close_notify, which the client reads as a
        // clean end.
        server.shutdown().await.unwrap();
        let mut end = Vec::new();
        client.read_to_end(&mut end).await.unwrap();
        assert!(end.is_empty());
    }

    #[tokio::test]
    async fn a_handshake_message_larger_than_rustls_takes_fails_without_a_panic() {
        let (near, mut far) = tokio::io::duplex(256 * 1024);
        let mut server = TlsTransport::new(config(), near).unwrap();
        // Handshake records whose message never ends: a ClientHello header
        // that announces 16 MiB, then record after record of its body.
        let mut bytes = vec![0x16, 0x03, 0x01, 0x40, 0x00, 0x01, 0xff, 0xff, 0xff];
        bytes.resize(5 + 0x4000, 0);
        for _ in 0..8 {
            bytes.extend_from_slice(&[0x16, 0x03, 0x03, 0x40, 0x00]);
            bytes.resize(bytes.len() + 0x4000, 0);
        }
        far.write_all(&bytes).await.unwrap();
        let failed = tokio::time::timeout(std::time::Duration::from_secs(5), server.handshake())
            .await
            .expect("the server gives up at once")
            .expect_err("a message larger than rustls takes");
        // The alert after the failure is made with the received bytes
        // rustls still points into (an empty slice made it panic).
        assert_eq!(failed.kind(), io::ErrorKind::InvalidData, "{failed}");
        assert!(server.incoming.len() <= MAX_INCOMING);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// Whatever a client sends, in whatever pieces, the handshake ends
        /// in an error or waits for more; it never panics.
        #[test]
        fn no_input_makes_the_handshake_panic(
            records in proptest::collection::vec(
                (0x14u8..0x19, 0u16..600, proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600)),
                1..6,
            ),
            split in 1usize..700,
        ) {
            let mut bytes = Vec::new();
            for (kind, len, body) in &records {
                bytes.extend_from_slice(&[*kind, 0x03, 0x03]);
                bytes.extend_from_slice(&len.to_be_bytes());
                bytes.extend_from_slice(body);
            }
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async {
                let (near, mut far) = tokio::io::duplex(64 * 1024);
                let mut server = TlsTransport::new(config(), near).unwrap();
                for piece in bytes.chunks(split) {
                    far.write_all(piece).await.unwrap();
                }
                drop(far);
                let ended = tokio::time::timeout(std::time::Duration::from_secs(5), server.handshake()).await;
                assert!(matches!(ended, Ok(Err(_))), "{ended:?}");
            });
        }
    }

    /// One server configuration for all the property's cases.
    fn config() -> Arc<rustls::ServerConfig> {
        static CONFIG: std::sync::OnceLock<Arc<rustls::ServerConfig>> = std::sync::OnceLock::new();
        CONFIG
            .get_or_init(|| {
                let ca = ringstream_testkit::tls::Authority::new();
                let issued = ca.issue(&["localhost"]);
                crate::server::tls::TlsConfig::from_pem(
                    issued.cert.as_bytes(),
                    issued.key.as_bytes(),
                )
                .unwrap()
                .current()
            })
            .clone()
    }

    /// A pair after one round trip, so that the client has read everything
    /// the handshake left (the session tickets): what it reads off the
    /// wire next is what the server writes next.
    async fn settled_pair() -> (
        TlsTransport<tokio::io::DuplexStream>,
        tokio_rustls::client::TlsStream<tokio::io::DuplexStream>,
    ) {
        let (mut server, mut client) = pair().await;
        server.write_all(b"x").await.unwrap();
        server.flush().await.unwrap();
        let mut x = [0u8; 1];
        client.read_exact(&mut x).await.unwrap();
        (server, client)
    }

    #[tokio::test]
    async fn small_slices_in_a_row_go_out_in_one_record() {
        let (mut server, mut client) = settled_pair().await;

        let head = [b'h'; 100];
        let body = [b'b'; 100];
        let slices = [
            IoSlice::new(&head),
            IoSlice::new(&body),
            IoSlice::new(b"\r\n"),
        ];
        let n = server.write_vectored(&slices).await.unwrap();
        assert_eq!(n, 202);
        server.flush().await.unwrap();
        // TLS 1.3 with AES-GCM: a record adds a 5-byte header, the
        // content type and a 16-byte tag.
        let mut raw = [0u8; 512];
        let got = client.get_mut().0.read(&mut raw).await.unwrap();
        assert_eq!(got, 202 + 22, "one record, not three");
    }

    #[tokio::test]
    async fn a_head_and_a_large_body_go_out_in_as_few_records_as_their_length_needs() {
        let (mut server, mut client) = settled_pair().await;

        let head = [b'h'; 150];
        let body: Vec<u8> = (0..40 * 1024).map(|i| (i % 251) as u8).collect();
        let slices = [IoSlice::new(&head), IoSlice::new(&body)];
        let n = server.write_vectored(&slices).await.unwrap();
        assert_eq!(n, head.len() + body.len());
        server.flush().await.unwrap();

        // Record by record off the wire: 41,110 bytes fit in three
        // (16 KiB each at most), where a record of its own for the head
        // would make four.
        let raw = &mut client.get_mut().0;
        let (mut records, mut plaintext) = (0, 0);
        while plaintext < n {
            let mut header = [0u8; 5];
            raw.read_exact(&mut header).await.unwrap();
            let len = usize::from(u16::from_be_bytes([header[3], header[4]]));
            let mut record = vec![0u8; len];
            raw.read_exact(&mut record).await.unwrap();
            // The content type byte and the 16-byte tag.
            plaintext += len - 17;
            records += 1;
        }
        assert_eq!(plaintext, n);
        assert_eq!(records, 3);
    }

    #[tokio::test]
    async fn gathered_and_large_slices_arrive_whole_and_in_order() {
        let (mut server, mut client) = pair().await;
        let sizes = [
            0, 1, 4000, 4097, 16_383, 16_384, 16_385, 40_960, 50_000, 65_536,
        ];
        // Each response as slices (a head, a chunk's size line, its data
        // and CRLF), and all of them as one run of bytes.
        let responses: Vec<[Vec<u8>; 4]> = sizes
            .iter()
            .enumerate()
            .map(|(i, &size)| {
                [
                    vec![b'a' + (i as u8); 150],
                    format!("{size:x}\r\n").into_bytes(),
                    (0..size).map(|j| ((i + j) % 251) as u8).collect(),
                    b"\r\n".to_vec(),
                ]
            })
            .collect();
        let sent: Vec<u8> = responses.iter().flatten().flatten().copied().collect();
        let total = sent.len();
        let reader = tokio::spawn(async move {
            let mut got = vec![0u8; total];
            client.read_exact(&mut got).await.unwrap();
            got
        });
        for response in &responses {
            let whole = response.concat();
            let slices = response.each_ref().map(|part| IoSlice::new(part));
            let mut written = server.write_vectored(&slices).await.unwrap();
            // What one call did not take goes in later calls.
            while written < whole.len() {
                written += server.write(whole.get(written..).unwrap()).await.unwrap();
            }
        }
        server.flush().await.unwrap();
        assert!(reader.await.unwrap() == sent, "the bytes arrive as written");
    }

    #[tokio::test]
    async fn a_write_larger_than_one_call_takes_is_taken_in_parts_in_order() {
        let (mut server, mut client) = pair().await;
        let data: Vec<u8> = (0..(3 * MAX_WRITE + 5)).map(|i| (i % 251) as u8).collect();
        let first = server.write(&data).await.unwrap();
        assert_eq!(
            first, MAX_WRITE,
            "one call encrypts at most MAX_WRITE bytes"
        );
        let reader = tokio::spawn(async move {
            let mut got = vec![0u8; 3 * MAX_WRITE + 5];
            client.read_exact(&mut got).await.unwrap();
            got
        });
        server.write_all(&data[first..]).await.unwrap();
        server.flush().await.unwrap();
        assert!(reader.await.unwrap() == data);
    }
}
