//! A body of another kind (an axum body, a body a tower layer wrapped) read
//! through [`Incoming`]'s API: its frames are handed over as they come,
//! never copied.

use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::Body;

use super::piece::BodyPiece;
use super::source::DirectSource;
use super::{Incoming, Kind};
use crate::error::{BoxError, Error};

/// Any `http_body::Body` as a source of [`Incoming`]. The lock makes a
/// body that is only `Send` (axum's) shareable as `Incoming` must be; it
/// is never contended, as only the body's owner polls it.
struct ForeignBody<B> {
    body: Mutex<Pin<Box<B>>>,
}

impl<B> DirectSource for ForeignBody<B>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    fn poll_pull(&mut self, cx: &mut Context<'_>) -> Poll<Result<BodyPiece, Error>> {
        let body = self
            .body
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        loop {
            return match body.as_mut().poll_frame(cx) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(None) => Poll::Ready(Ok(BodyPiece::End(None))),
                Poll::Ready(Some(Err(e))) => Poll::Ready(Err(foreign_error(e.into()))),
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) if data.is_empty() => continue,
                    Ok(data) => Poll::Ready(Ok(BodyPiece::Data(data))),
                    Err(frame) => match frame.into_trailers() {
                        Ok(trailers) => Poll::Ready(Ok(BodyPiece::End(Some(trailers)))),
                        // A frame of a kind this body does not know.
                        Err(_) => continue,
                    },
                },
            };
        }
    }
}

/// The error of a foreign body: ringstream's own when it is one (the body
/// was an `Incoming` before a layer wrapped it), a body over a length
/// limit (with the `axum` feature: `http_body_util::Limited`, as axum's
/// `DefaultBodyLimit` applies it) as
/// [`BodyTooLarge`](ringstream_core::Error::BodyTooLarge), else the body's.
fn foreign_error(e: BoxError) -> Error {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&*e);
    while let Some(error) = cause {
        if let Some(Error::Protocol(protocol)) = error.downcast_ref::<Error>() {
            return Error::Protocol(*protocol);
        }
        #[cfg(feature = "axum")]
        if error.is::<http_body_util::LengthLimitError>() {
            return Error::Protocol(ringstream_core::Error::BodyTooLarge);
        }
        cause = error.source();
    }
    match e.downcast::<Error>() {
        Ok(own) => *own,
        Err(other) => Error::User(other),
    }
}

impl Incoming {
    /// Reads any `http_body::Body` whose data is `Bytes` with `Incoming`'s
    /// API (`read_partial`, `gets`, `read_until_exclusive`, `read_exactly`,
    /// trailers): its frames are handed over as they are, without a copy.
    ///
    /// # Examples
    ///
    /// ```
    /// use bytes::Bytes;
    /// use ringstream::Incoming;
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let body = http_body_util::Full::new(Bytes::from_static(b"one\ntwo\n"));
    /// let mut body = Incoming::from_body(body);
    /// assert_eq!(&body.gets(64).await.unwrap().unwrap()[..], b"one\n");
    /// assert_eq!(&body.gets(64).await.unwrap().unwrap()[..], b"two\n");
    /// assert!(body.gets(64).await.unwrap().is_none());
    /// # });
    /// ```
    pub fn from_body<B>(body: B) -> Incoming
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        let length = body.size_hint().exact();
        if length == Some(0) && body.is_end_stream() {
            return Incoming::empty();
        }
        let source = ForeignBody {
            body: Mutex::new(Box::pin(body)),
        };
        Incoming::with_kind(Kind::Direct(Box::new(source)), length)
    }
}
