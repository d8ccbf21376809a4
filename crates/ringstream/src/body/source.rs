//! Reading a body straight off a [`Stream`] through the core's decoder:
//! data is split off the stream's read block without a copy.

use std::task::{ready, Context, Poll};

use http::{HeaderMap, HeaderName, HeaderValue};
use ringstream_core::h1::Decoder;
use tokio::io::{AsyncRead, AsyncWrite};

use super::piece::BodyPiece;
use crate::error::Error;
use crate::stream::Stream;

/// Something a body can pull data from.
pub(super) trait DirectSource: Send + Sync {
    fn poll_pull(&mut self, cx: &mut Context<'_>) -> Poll<Result<BodyPiece, Error>>;
}

/// A stream and the decoder for the body on it.
pub(crate) struct BodyReader<T> {
    pub(crate) stream: Stream<T>,
    pub(crate) decoder: Decoder,
}

impl<T> DirectSource for BodyReader<T>
where
    T: AsyncRead + AsyncWrite + Unpin + Send + Sync,
{
    fn poll_pull(&mut self, cx: &mut Context<'_>) -> Poll<Result<BodyPiece, Error>> {
        poll_body(&mut self.stream, &mut self.decoder, cx)
    }
}

/// Largest read, in bytes, that reading a long body asks of the transport
/// (a body's pieces are never larger than this or the stream's
/// `maximum_read_size`; shorter bodies use the stream's normal block).
pub const LARGE_BODY_READ: usize = 512 * 1024;

/// Pull the next piece of body data off `stream` through `decoder`.
///
/// Data is split off the stream's read block without a copy; framing bytes
/// are dropped. At the end of the body the trailers (if any) are returned.
pub(crate) fn poll_body<T>(
    stream: &mut Stream<T>,
    decoder: &mut Decoder,
    cx: &mut Context<'_>,
) -> Poll<Result<BodyPiece, Error>>
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    loop {
        if decoder.is_finished() {
            return Poll::Ready(Ok(BodyPiece::End(trailers_of(decoder)?)));
        }
        if !stream.buffered().is_empty() {
            let progress = decoder.decode(stream.buffered())?;
            if !progress.data.is_empty() {
                stream.consume(progress.data.start);
                let data = stream.split_buffered(progress.data.len());
                stream.consume(progress.consumed - progress.data.end);
                return Poll::Ready(Ok(BodyPiece::Data(data)));
            }
            stream.consume(progress.consumed);
            if progress.finished || decoder.is_finished() {
                return Poll::Ready(Ok(BodyPiece::End(trailers_of(decoder)?)));
            }
            if progress.consumed > 0 && !stream.buffered().is_empty() {
                continue;
            }
        }
        // A long body is read in larger pieces (fewer system calls and
        // wake-ups): when a known remainder is large, or when the last read
        // came back full (the peer is sending faster than we read).
        let left = decoder.remaining_hint().unwrap_or(0);
        let want = if stream.last_read_full() {
            LARGE_BODY_READ
        } else {
            left.min(LARGE_BODY_READ as u64) as usize
        };
        if ready!(stream.poll_fill_to(cx, want))? == 0 {
            decoder.finish_eof()?;
            return Poll::Ready(Ok(BodyPiece::End(trailers_of(decoder)?)));
        }
    }
}

fn trailers_of(decoder: &Decoder) -> Result<Option<HeaderMap>, Error> {
    let mut map: Option<HeaderMap> = None;
    for (name, value) in decoder.trailers() {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| Error::Protocol(ringstream_core::Error::InvalidTrailer))?;
        let value = HeaderValue::from_bytes(value)
            .map_err(|_| Error::Protocol(ringstream_core::Error::InvalidTrailer))?;
        map.get_or_insert_with(HeaderMap::new).append(name, value);
    }
    Ok(map)
}
