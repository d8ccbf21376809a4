//! Phase 4, bytes out: the response head through the core's connection
//! rules, the body through the core's [`Encoder`], with vectored writes
//! that never copy a large frame's `Bytes`.

use std::future::{poll_fn, Future};
use std::io::{self, IoSlice};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::{Buf, Bytes};
use http::HeaderMap;
use http_body::Body;
use ringstream_core::h1::HTTP_DATE_LEN;
use ringstream_core::h1::{BodyFrame, Encoder, Exchange, ResponseHead, ServerFields};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::{sleep_until, Sleep};

use super::body::{BodyFailure, BodyPump};
use crate::error::{BoxError, Error, Timeout};
use crate::stream::Stream;

/// Response body frames up to this size (bytes) are copied into the write
/// buffer and coalesced; larger ones go out as vectored writes of their own
/// `Bytes`, never copied.
const SMALL_FRAME: usize = 4 * 1024;

/// Room made in the write buffer for a response head before it is written
/// (bytes; more is made as needed).
pub(super) const HEAD_ROOM: usize = 256;

/// The `Date` (and `Server`) of a connection's responses, and when the
/// last one was dated: the time the connection went idle.
pub(super) struct ResponseDate {
    fields: ServerFields,
    /// When the last response was dated, in milliseconds since the Unix
    /// epoch.
    dated_millis: u64,
}

impl ResponseDate {
    /// `server_header`: the responses name the server.
    pub(super) fn new(server_header: bool) -> ResponseDate {
        let name: Option<&[u8]> = server_header.then_some(b"ringstream");
        ResponseDate {
            fields: ServerFields::new(name).unwrap_or_else(|_| ServerFields::date_only()),
            dated_millis: 0,
        }
    }

    /// The `date` and `server` lines for a head written now.
    #[inline]
    pub(super) fn fields_now(&mut self) -> &ServerFields {
        let (secs, millis) = unix_now();
        // The connection goes idle once this response is out: the slot's
        // idle time is taken from the same reading of the clock.
        self.dated_millis = secs * 1000 + u64::from(millis);
        self.fields.update(secs);
        &self.fields
    }

    /// The `Date` value for a head written now.
    #[inline]
    pub(super) fn now(&mut self) -> [u8; HTTP_DATE_LEN] {
        let mut date = [0u8; HTTP_DATE_LEN];
        date.copy_from_slice(self.fields_now().date());
        date
    }

    /// When the last response was dated, in milliseconds since the Unix
    /// epoch (0 before the first).
    pub(super) fn dated_millis(&self) -> u64 {
        self.dated_millis
    }
}

/// Seconds and milliseconds since the Unix epoch, now ((0, 0) for a clock
/// set before it): read from `CLOCK_REALTIME` as `SystemTime::now` reads
/// it, without its conversion to a `Duration`.
#[cfg(unix)]
#[inline]
fn unix_now() -> (u64, u32) {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock_gettime` writes one `timespec` through the pointer,
    // which points to `now`, a valid and writable `timespec` that outlives
    // the call; `CLOCK_REALTIME` is a clock every Unix has. Nothing else is
    // read or written (checked against `SystemTime::now` by
    // `tests::the_clock_read_directly_agrees_with_system_time`).
    let failed = unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut now) } != 0;
    let (Ok(secs), Ok(nanos)) = (u64::try_from(now.tv_sec), u32::try_from(now.tv_nsec)) else {
        return (0, 0);
    };
    if failed {
        return unix_now_portable();
    }
    (secs, nanos / 1_000_000)
}

/// [`unix_now`] through `SystemTime`.
#[cfg_attr(unix, allow(dead_code))]
fn unix_now_portable() -> (u64, u32) {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or((0, 0), |d| (d.as_secs(), d.subsec_millis()))
}

#[cfg(not(unix))]
#[inline]
fn unix_now() -> (u64, u32) {
    unix_now_portable()
}

/// Writes the response head straight into `stream`'s write buffer (left as
/// it was on an error) and returns the body's encoder.
// Always inlined into `start_response`, its one caller: a call costs
// more than it does (its arguments and the encoder it returns are moved).
#[inline(always)]
pub(super) fn write_head<T>(
    stream: &mut Stream<T>,
    date: &mut ResponseDate,
    exchange: &mut Exchange,
    status: u16,
    headers: &HeaderMap,
    body_length: Option<u64>,
) -> Result<Encoder, ringstream_core::Error>
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    let head = ResponseHead::new(status).server_fields(date.fields_now());
    let fields = headers
        .iter()
        .map(|(name, value)| (name.as_str().as_bytes(), value.as_bytes()));
    exchange.write_head(
        stream.write_buffer_for(HEAD_ROOM),
        &head,
        fields,
        body_length,
    )
}

/// Writes the response body to `stream`, feeding the request body
/// meanwhile (an echo reads while it writes); returns the body bytes sent.
/// A write that makes no progress for `write_timeout` fails. The body is
/// pinned where the caller keeps it, and the future is the poll function
/// itself (no future of its own around it); a close-delimited body is then
/// flushed by the caller.
pub(super) fn write_body<'a, T, B>(
    stream: &'a mut Stream<T>,
    write_timeout: Duration,
    mut body: Pin<&'a mut B>,
    encoder: Encoder,
    pump: &'a mut BodyPump,
    exchange: &'a mut Exchange,
    span: &'a tracing::Span,
) -> impl Future<Output = Result<u64, Error>> + 'a
where
    T: AsyncRead + AsyncWrite + Unpin,
    B: Body,
    B::Error: Into<BoxError>,
{
    let mut out = BodyOut {
        encoder,
        pending: None,
        done: !encoder.sends_body(),
        sent: 0,
        stall: WriteStall::new(write_timeout),
    };
    poll_fn(move |cx| loop {
        if let Err(BodyFailure(e)) = pump.poll(stream, exchange, cx) {
            return Poll::Ready(Err(e));
        }
        if let Err(e) = std::task::ready!(out.poll_send(stream, cx)) {
            return Poll::Ready(Err(e));
        }
        if out.done {
            return Poll::Ready(Ok(out.sent));
        }
        let polled = catch_unwind(AssertUnwindSafe(|| {
            let _entered = span.enter();
            body.as_mut().poll_frame(cx)
        }));
        let frame = match polled {
            Err(_) => return Poll::Ready(Err(Error::User("response body panicked".into()))),
            Ok(Poll::Pending) => {
                // Nothing more yet: let what is written go out.
                let before = stream.pending_write();
                if before > 0 {
                    match stream.poll_flush_buffer(cx) {
                        Poll::Ready(Err(e)) => return Poll::Ready(Err(Error::Io(e))),
                        Poll::Ready(Ok(())) => out.stall.progressed(),
                        Poll::Pending => {
                            let moved = stream.pending_write() != before;
                            return out.stall.poll_stalled(moved, cx);
                        }
                    }
                }
                return Poll::Pending;
            }
            Ok(Poll::Ready(None)) => None,
            Ok(Poll::Ready(Some(Err(e)))) => return Poll::Ready(Err(Error::User(e.into()))),
            Ok(Poll::Ready(Some(Ok(frame)))) => Some(frame),
        };
        if let Err(e) = out.take(frame, stream) {
            return Poll::Ready(Err(e));
        }
        // A body that knows it has ended (a whole body's one frame) is
        // finished now, not polled once more to say so — unless a large
        // frame still waits to go out, which the end must follow.
        if !out.done && out.pending.is_none() && body.is_end_stream() {
            if let Err(e) = out.finish(stream, None) {
                return Poll::Ready(Err(e));
            }
        }
    })
}

/// Sends what is buffered; fails once nothing has moved for `write_timeout`
/// (every byte the client takes pushes the deadline back). A flush that
/// completes at once (the common case) costs no timer.
pub(super) fn flush_within_deadline<T>(
    stream: &mut Stream<T>,
    write_timeout: Duration,
) -> impl Future<Output = Result<(), Error>> + '_
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    let mut stall = WriteStall::new(write_timeout);
    poll_fn(move |cx| {
        let before = stream.pending_write();
        if let Poll::Ready(flushed) = stream.poll_flush_all(cx) {
            return Poll::Ready(flushed.map_err(Error::Io));
        }
        stall.poll_stalled(stream.pending_write() != before, cx)
    })
}

/// The response body on its way out.
struct BodyOut {
    encoder: Encoder,
    pending: Option<PendingFrame>,
    done: bool,
    sent: u64,
    stall: WriteStall,
}

/// The deadline of a response write that makes no progress: armed when a
/// write cannot go on, pushed back by every byte the client takes, and
/// disarmed when the write completes.
struct WriteStall {
    timeout: Duration,
    timer: Option<Pin<Box<Sleep>>>,
    armed: bool,
}

impl WriteStall {
    fn new(timeout: Duration) -> WriteStall {
        WriteStall {
            timeout,
            timer: None,
            armed: false,
        }
    }

    /// The write went through.
    #[inline]
    fn progressed(&mut self) {
        self.armed = false;
    }

    /// The write is pending; `moved`: some bytes went out before it
    /// stopped. Fails once nothing has moved for the timeout.
    fn poll_stalled<T>(&mut self, moved: bool, cx: &mut Context<'_>) -> Poll<Result<T, Error>> {
        if moved || !self.armed {
            self.armed = true;
            let deadline = tokio::time::Instant::now() + self.timeout;
            match &mut self.timer {
                Some(timer) => timer.as_mut().reset(deadline),
                None => self.timer = Some(Box::pin(sleep_until(deadline))),
            }
        }
        let expired = self
            .timer
            .as_mut()
            .is_some_and(|timer| timer.as_mut().poll(cx).is_ready());
        if expired {
            Poll::Ready(Err(Error::TimedOut(Timeout::ResponseWrite)))
        } else {
            Poll::Pending
        }
    }
}

impl BodyOut {
    /// Send what is due: the write buffer once it is large enough, then a
    /// large frame waiting to go out. A write that cannot go on arms the
    /// stall deadline (pushed back by every byte that moves) and fails the
    /// response once it passes.
    #[inline]
    fn poll_send<T>(
        &mut self,
        stream: &mut Stream<T>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), Error>>
    where
        T: AsyncRead + AsyncWrite + Unpin,
    {
        // Nothing due (a small response on its way): checked where the
        // body is written.
        if stream.pending_write() < stream.options().minimum_write_size && self.pending.is_none() {
            return Poll::Ready(Ok(()));
        }
        self.send_due(stream, cx)
    }

    /// [`poll_send`](Self::poll_send) with something due.
    fn send_due<T>(
        &mut self,
        stream: &mut Stream<T>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), Error>>
    where
        T: AsyncRead + AsyncWrite + Unpin,
    {
        // Only a write that went through is progress: a frame that merely
        // joins the write buffer leaves the stall deadline as it is.
        let mut wrote = false;
        if stream.pending_write() >= stream.options().minimum_write_size {
            let before = stream.pending_write();
            match stream.poll_flush_buffer(cx) {
                Poll::Ready(Ok(())) => wrote = true,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(Error::Io(e))),
                Poll::Pending => {
                    let moved = stream.pending_write() != before;
                    return self.stall.poll_stalled(moved, cx);
                }
            }
        }
        if let Some(frame) = &mut self.pending {
            let before = frame.written;
            match frame.poll_write(stream, cx) {
                Poll::Ready(Ok(())) => {
                    self.pending = None;
                    wrote = true;
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(Error::Io(e))),
                Poll::Pending => {
                    let moved = frame.written != before;
                    return self.stall.poll_stalled(moved, cx);
                }
            }
        }
        if wrote {
            self.stall.progressed();
        }
        Poll::Ready(Ok(()))
    }

    #[inline]
    fn take<T>(
        &mut self,
        frame: Option<http_body::Frame<impl Buf>>,
        stream: &mut Stream<T>,
    ) -> Result<(), Error>
    where
        T: AsyncRead + AsyncWrite + Unpin,
    {
        let Some(frame) = frame else {
            return self.finish(stream, None);
        };
        match frame.into_data() {
            Ok(data) => self.data(data, stream),
            Err(frame) => match frame.into_trailers() {
                Ok(trailers) => self.finish(stream, Some(&trailers)),
                Err(_) => Ok(()),
            },
        }
    }

    /// One data frame: a small one is copied into the stream's write buffer
    /// (coalescing many small frames into one write), a large one is queued
    /// to go out as a vectored write of its own `Bytes`.
    #[inline]
    fn data<T>(&mut self, mut data: impl Buf, stream: &mut Stream<T>) -> Result<(), Error>
    where
        T: AsyncRead + AsyncWrite + Unpin,
    {
        let len = data.remaining();
        if len == 0 {
            return Ok(());
        }
        let frame = self.encoder.encode(len)?;
        self.sent += len as u64;
        if len <= SMALL_FRAME {
            let out = stream.write_buffer_for(frame.len() + len);
            out.extend_from_slice(frame.prefix());
            // Copied from where it lies, with no `Bytes` made for it.
            while data.has_remaining() {
                let chunk = data.chunk();
                let n = chunk.len();
                out.extend_from_slice(chunk);
                data.advance(n);
            }
            out.extend_from_slice(frame.suffix());
            return Ok(());
        }
        self.pending = Some(PendingFrame {
            frame,
            data: data.copy_to_bytes(len),
            written: 0,
        });
        Ok(())
    }

    /// The end of the body: the last chunk and trailers, or the check that
    /// a `Content-Length` body is complete.
    #[inline]
    fn finish<T>(
        &mut self,
        stream: &mut Stream<T>,
        trailers: Option<&HeaderMap>,
    ) -> Result<(), Error>
    where
        T: AsyncRead + AsyncWrite + Unpin,
    {
        self.done = true;
        let fields = trailers
            .into_iter()
            .flat_map(|t| t.iter())
            .map(|(n, v)| (n.as_str(), v.as_bytes()));
        self.encoder.finish(fields, stream.write_buffer_for(8))?;
        Ok(())
    }
}

/// One large body frame on its way out: its framing pieces around the data,
/// which is never copied.
struct PendingFrame {
    frame: BodyFrame,
    data: Bytes,
    written: usize,
}

impl PendingFrame {
    fn poll_write<T>(
        &mut self,
        stream: &mut Stream<T>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<()>>
    where
        T: AsyncRead + AsyncWrite + Unpin,
    {
        loop {
            let parts = [self.frame.prefix(), &self.data, self.frame.suffix()];
            let mut skip = self.written;
            let mut slices = [IoSlice::new(&[]); 3];
            let mut count = 0;
            for part in parts {
                if skip >= part.len() {
                    skip -= part.len();
                    continue;
                }
                slices[count] = IoSlice::new(&part[skip..]);
                skip = 0;
                count += 1;
            }
            if count == 0 {
                return Poll::Ready(Ok(()));
            }
            let n = std::task::ready!(stream.poll_write_unbuffered(cx, &slices[..count]))?;
            if n == 0 {
                if stream.pending_write() > 0 {
                    continue;
                }
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.written += n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_read_directly_agrees_with_system_time() {
        for _ in 0..100 {
            let before = unix_now_portable();
            let (secs, millis) = unix_now();
            let after = unix_now_portable();
            assert!(millis < 1000);
            let at = |(s, m): (u64, u32)| s * 1000 + u64::from(m);
            assert!(
                at(before) <= at((secs, millis)),
                "{before:?} then {secs}.{millis}"
            );
            assert!(
                at((secs, millis)) <= at(after),
                "{secs}.{millis} then {after:?}"
            );
        }
    }
}
