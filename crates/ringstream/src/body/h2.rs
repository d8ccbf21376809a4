//! A request body received over HTTP/2: the DATA frames of one stream,
//! handed over as the `Bytes` `h2` read them into (no copy), with the
//! stream's flow-control window given back only as the service takes
//! them, so a body the service reads slowly, or not at all, holds at most
//! one window in memory.

use std::pin::Pin;
use std::task::{ready, Context, Poll};

use h2::RecvStream;
use tokio::time::{sleep_until, Instant, Sleep};

use super::deadline::BodyDeadlines;
use super::piece::BodyPiece;
use super::source::DirectSource;
use super::{Incoming, Kind};
use crate::error::{Error, Timeout};

/// The DATA frames of one stream, under the body deadlines and the
/// server's body limit.
struct Http2Source {
    recv: RecvStream,
    /// The most body bytes the stream may carry.
    max_len: u64,
    received: u64,
    deadlines: BodyDeadlines,
    /// When the body was first read.
    started: Option<Instant>,
    /// The deadline of the read under way, and the timeout it ends in;
    /// armed when a read has to wait.
    deadline: Option<(Pin<Box<Sleep>>, Timeout)>,
}

impl DirectSource for Http2Source {
    fn poll_pull(&mut self, cx: &mut Context<'_>) -> Poll<Result<BodyPiece, Error>> {
        if self.deadlines.measures_the_whole() {
            let started = *self.started.get_or_insert_with(Instant::now);
            if self.deadlines.past_total(Instant::now(), started) {
                return Poll::Ready(Err(Error::TimedOut(Timeout::RequestBodyTotal)));
            }
        }
        let data = if self.recv.is_end_stream() {
            None
        } else {
            match self.recv.poll_data(cx) {
                Poll::Ready(data) => data,
                Poll::Pending => return self.wait(cx),
            }
        };
        self.deadline = None;
        match data {
            Some(Ok(data)) => {
                // Taken by the service: the client may send as much again.
                let _ = self.recv.flow_control().release_capacity(data.len());
                self.received += data.len() as u64;
                if self.received > self.max_len {
                    return Poll::Ready(Err(Error::Protocol(ringstream_core::Error::BodyTooLarge)));
                }
                Poll::Ready(Ok(BodyPiece::Data(data)))
            }
            Some(Err(e)) => Poll::Ready(Err(Error::Http2(e))),
            None => {
                let trailers = ready!(self.recv.poll_trailers(cx)).map_err(Error::Http2)?;
                Poll::Ready(Ok(BodyPiece::End(trailers)))
            }
        }
    }
}

impl Http2Source {
    /// No data yet: wait under the body deadlines.
    fn wait(&mut self, cx: &mut Context<'_>) -> Poll<Result<BodyPiece, Error>> {
        let now = Instant::now();
        let started = *self.started.get_or_insert(now);
        let (deadline, why) = self.deadline.get_or_insert_with(|| {
            let (at, why) = self.deadlines.next(now, started, self.received);
            (Box::pin(sleep_until(at)), why)
        });
        ready!(deadline.as_mut().poll(cx));
        Poll::Ready(Err(Error::TimedOut(*why)))
    }
}

impl Incoming {
    /// The body of an HTTP/2 request: `length` from its `content-length`
    /// (which `h2` holds the DATA frames to), at most `max_len` bytes, its
    /// reads under `deadlines`.
    pub(crate) fn from_http2(
        recv: RecvStream,
        length: Option<u64>,
        max_len: u64,
        deadlines: BodyDeadlines,
    ) -> Incoming {
        if recv.is_end_stream() {
            return Incoming::empty();
        }
        let source = Http2Source {
            recv,
            max_len,
            received: 0,
            deadlines,
            started: None,
            deadline: None,
        };
        Incoming::with_kind(Kind::Direct(Box::new(source)), length)
    }
}
