//! Ending an exchange other than by a plain response: rejecting a request,
//! draining an unread request body, and closing without destroying the
//! last response.

use std::future::poll_fn;
use std::task::Poll;
use std::time::Duration;

use ringstream_core::h1::write_error_response;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::timeout_at;

use super::dispatch::BodyPump;
use super::write::{WriteStall, HEAD_ROOM};
use super::Connection;
use crate::body::{poll_body, Pulled};

/// How long a closing connection keeps reading what the client still sends.
const LINGER_TIME: Duration = Duration::from_secs(2);

/// Most bytes read and dropped while lingering.
const LINGER_BYTES: usize = 1 << 20;

impl<T, S> Connection<T, S>
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    /// Answer with a bare error status and `Connection: close`; `why` goes
    /// to the access log.
    pub(super) async fn reject(&mut self, status: u16, why: &(dyn std::fmt::Display + Sync)) {
        self.metrics.record_status(status);
        let date = self.date_now();
        // Cannot fail: a `Vec` has room, and the cached date is a valid value.
        let _ = write_error_response(self.stream.write_buffer_for(HEAD_ROOM), status, &date);
        let deadline = tokio::time::Instant::now() + self.config.head_timeout;
        let _ = timeout_at(deadline, self.stream.flush()).await;
        if self.config.access_log {
            tracing::info!(target: "ringstream::access", status, reason = %why, "request rejected");
        } else {
            tracing::debug!(status, reason = %why, "request rejected");
        }
    }

    /// Read and discard what the service left unread of the request body
    /// (at most `limit` bytes, within the body timeout), so the connection
    /// can be reused. `false`: it is too long (or broken) and the connection
    /// must close instead.
    pub(super) async fn drain(&mut self, pump: &mut BodyPump, limit: u64) -> bool {
        pump.disconnect();
        let mut drained = 0u64;
        let deadline = tokio::time::Instant::now() + self.config.body_read_timeout;
        let stream = &mut self.stream;
        let decoder = &mut pump.decoder;
        let result = timeout_at(
            deadline,
            poll_fn(|cx| loop {
                match poll_body(stream, decoder, cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Err(_)) => return Poll::Ready(false),
                    Poll::Ready(Ok(Pulled::End(_))) => return Poll::Ready(true),
                    Poll::Ready(Ok(Pulled::Data(data))) => {
                        drained += data.len() as u64;
                        if drained > limit {
                            return Poll::Ready(false);
                        }
                    }
                }
            }),
        )
        .await;
        pump.complete = matches!(result, Ok(true));
        pump.complete
    }

    /// Close without destroying the last response: shut down our write
    /// half, then read and discard what the client may still be sending
    /// (bounded in bytes and time) before closing. Closing a socket with
    /// unread data makes the kernel send a reset, which can discard a
    /// response the client has not read yet.
    pub(super) async fn linger_close(&mut self) {
        let write_deadline = tokio::time::Instant::now() + self.config.write_timeout;
        let closed = timeout_at(write_deadline, self.stream.close_write()).await;
        if matches!(closed, Ok(Ok(()))) {
            let deadline = tokio::time::Instant::now() + LINGER_TIME;
            let stream = &mut self.stream;
            let _ = timeout_at(deadline, async {
                let mut discarded = 0usize;
                while discarded < LINGER_BYTES {
                    let pending = stream.buffered().len();
                    stream.consume(pending);
                    discarded += pending;
                    match stream.fill().await {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {}
                    }
                }
            })
            .await;
        }
        let write_deadline = tokio::time::Instant::now() + self.config.write_timeout;
        let _ = timeout_at(write_deadline, self.stream.close()).await;
    }

    /// Sends what is buffered; fails once nothing has moved for the write
    /// timeout (every byte the client takes pushes the deadline back). A
    /// flush that completes at once (the common case) costs no timer.
    pub(super) async fn flush_within_deadline(&mut self) -> Result<(), crate::Error> {
        let mut stall = WriteStall::new(self.config.write_timeout);
        let stream = &mut self.stream;
        poll_fn(|cx| {
            let before = stream.pending_write();
            if let Poll::Ready(flushed) = stream.poll_flush_all(cx) {
                return Poll::Ready(flushed.map_err(crate::Error::Io));
            }
            stall.poll_stalled(stream.pending_write() != before, cx)
        })
        .await
    }
}
