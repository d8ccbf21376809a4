//! Phase 5, the end of an exchange other than by a plain response:
//! rejecting a request, draining an unread request body, and closing
//! without destroying the last response.

use std::future::poll_fn;
use std::task::Poll;
use std::time::Duration;

use ringstream_core::h1::write_error_response;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::timeout_at;

use super::body::BodyPump;
use super::write::HEAD_ROOM;
use crate::body::{poll_body, BodyPiece};
use crate::stream::Stream;

/// How long a closing connection keeps reading what the client still sends.
const LINGER_TIME: Duration = Duration::from_secs(2);

/// Most bytes read and dropped while lingering.
const LINGER_BYTES: usize = 1 << 20;

/// Buffers a bare error `status` dated `date` with `Connection: close`:
/// the rejection of a request, to be flushed before the connection closes.
pub(super) fn write_rejection<T>(stream: &mut Stream<T>, status: u16, date: &[u8])
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    // Cannot fail: a `Vec` has room, and the cached date is a valid value.
    let _ = write_error_response(stream.write_buffer_for(HEAD_ROOM), status, date);
}

/// Logs a rejection: `why` goes to the access log when `access_log` is on
/// (else to the debug log).
pub(super) fn log_rejection(status: u16, why: &(dyn std::fmt::Display + Sync), access_log: bool) {
    if access_log {
        tracing::info!(target: "ringstream::access", status, reason = %why, "request rejected");
    } else {
        tracing::debug!(status, reason = %why, "request rejected");
    }
}

/// Reads and discards what the service left unread of the request body
/// (at most `limit` bytes, within `timeout`), so the connection can be
/// reused. `false`: it is too long (or broken) and the connection must
/// close instead.
pub(super) async fn drain<T>(
    stream: &mut Stream<T>,
    pump: &mut BodyPump,
    limit: u64,
    timeout: Duration,
) -> bool
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    pump.disconnect();
    let mut drained = 0u64;
    let deadline = tokio::time::Instant::now() + timeout;
    let decoder = &mut pump.decoder;
    let result = timeout_at(
        deadline,
        poll_fn(|cx| loop {
            match poll_body(stream, decoder, cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(_)) => return Poll::Ready(false),
                Poll::Ready(Ok(BodyPiece::End(_))) => return Poll::Ready(true),
                Poll::Ready(Ok(BodyPiece::Data(data))) => {
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

/// Closes without destroying the last response: shut down our write half,
/// then read and discard what the client may still be sending (bounded in
/// bytes and time) before closing; each write step is given
/// `write_timeout`. Closing a socket with unread data makes the kernel
/// send a reset, which can discard a response the client has not read
/// yet.
pub(super) async fn linger_close<T>(stream: &mut Stream<T>, write_timeout: Duration)
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    let write_deadline = tokio::time::Instant::now() + write_timeout;
    let closed = timeout_at(write_deadline, stream.close_write()).await;
    if matches!(closed, Ok(Ok(()))) {
        let deadline = tokio::time::Instant::now() + LINGER_TIME;
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
    let write_deadline = tokio::time::Instant::now() + write_timeout;
    let _ = timeout_at(write_deadline, stream.close()).await;
}
