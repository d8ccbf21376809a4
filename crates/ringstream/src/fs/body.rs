//! `FileBody`: a response body read from disk one block at a time.

use std::fmt;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use bytes::{Bytes, BytesMut};
use http_body::{Body, Frame, SizeHint};
use tokio::io::{AsyncRead, ReadBuf};

/// The body of a [`ServeDir`](super::ServeDir) response.
///
/// A file body reads at most `block_size` bytes at a time from an open
/// `tokio::fs::File` into a reused [`BytesMut`] and hands each block out as
/// [`Bytes`], so a response never holds more than one block of the file in
/// memory however large the file is. Its [`size_hint`](Body::size_hint) is
/// exact, so a server frames it with `Content-Length`.
///
/// Short error pages are a single in-memory chunk. The body of a `HEAD`
/// response or a `304` carries no data and reports no exact size, so the
/// `Content-Length` header the response carries (the length a `GET` would
/// have sent) is what a server advertises.
///
/// If the file turns out shorter than its length when it was opened (it was
/// truncated meanwhile), the body ends with an
/// [`UnexpectedEof`](io::ErrorKind::UnexpectedEof) error rather than
/// sending fewer bytes than it promised.
///
/// # Examples
///
/// ```
/// use http_body::Body;
/// use http_body_util::BodyExt;
/// use ringstream::fs::{FileBody, ServeDir};
/// use tower_service::Service;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let dir = std::env::temp_dir().join(format!("ringstream-doc-file-body-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// std::fs::write(dir.join("notes.txt"), "one\ntwo\n").unwrap();
///
/// let request = http::Request::get("/notes.txt").body(()).unwrap();
/// let body: FileBody = ServeDir::new(&dir).call(request).await.unwrap().into_body();
/// // An exact size: the server frames it with `Content-Length`.
/// assert_eq!(body.size_hint().exact(), Some(8));
/// assert_eq!(&body.collect().await.unwrap().to_bytes()[..], b"one\ntwo\n");
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # });
/// ```
pub struct FileBody {
    kind: Kind,
}

enum Kind {
    /// No data; `exact` says whether the size hint is an exact zero.
    Empty { exact: bool },
    /// One in-memory chunk (taken when sent).
    Full(Option<Bytes>),
    /// A file, read block by block (boxed: an open file is large, and a
    /// body is moved through every response).
    File(Box<Reader>),
}

struct Reader {
    file: tokio::fs::File,
    remaining: u64,
    block_size: usize,
    buf: BytesMut,
}

impl FileBody {
    /// A body without data whose exact length is zero.
    pub(crate) fn empty() -> FileBody {
        FileBody {
            kind: Kind::Empty { exact: true },
        }
    }

    /// A body without data that reports no exact length, for `HEAD` and
    /// `304` responses whose `Content-Length` header describes the
    /// representation rather than this (absent) body.
    pub(crate) fn headers_only() -> FileBody {
        FileBody {
            kind: Kind::Empty { exact: false },
        }
    }

    /// A short in-memory body.
    pub(crate) fn from_static(text: &'static str) -> FileBody {
        FileBody {
            kind: Kind::Full(Some(Bytes::from_static(text.as_bytes()))),
        }
    }

    /// `len` bytes of `file` from its current position.
    pub(crate) fn file(file: tokio::fs::File, len: u64, block_size: usize) -> FileBody {
        FileBody {
            kind: Kind::File(Box::new(Reader {
                file,
                remaining: len,
                block_size: block_size.max(1),
                buf: BytesMut::new(),
            })),
        }
    }
}

impl Body for FileBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        match &mut self.get_mut().kind {
            Kind::Empty { .. } => Poll::Ready(None),
            Kind::Full(chunk) => Poll::Ready(chunk.take().map(|b| Ok(Frame::data(b)))),
            Kind::File(reader) => reader.poll_block(cx).map(|r| r.map(|b| b.map(Frame::data))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Empty { .. } => true,
            Kind::Full(chunk) => chunk.is_none(),
            Kind::File(reader) => reader.remaining == 0,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Empty { exact: true } => SizeHint::with_exact(0),
            Kind::Empty { exact: false } => SizeHint::default(),
            Kind::Full(chunk) => SizeHint::with_exact(chunk.as_ref().map_or(0, |b| b.len() as u64)),
            Kind::File(reader) => SizeHint::with_exact(reader.remaining),
        }
    }
}

impl Reader {
    fn poll_block(&mut self, cx: &mut Context<'_>) -> Poll<Option<io::Result<Bytes>>> {
        if self.remaining == 0 {
            return Poll::Ready(None);
        }
        // Bounded by `remaining`, so this fits in a usize.
        let want = usize::try_from(self.remaining)
            .unwrap_or(usize::MAX)
            .min(self.block_size);
        if self.buf.len() != want {
            // Reclaims the previous block's allocation once its `Bytes` has
            // been dropped downstream.
            self.buf.clear();
            self.buf.resize(want, 0);
        }
        let mut read_buf = ReadBuf::new(&mut self.buf[..]);
        ready!(Pin::new(&mut self.file).poll_read(cx, &mut read_buf))?;
        let n = read_buf.filled().len();
        if n == 0 {
            self.remaining = 0;
            return Poll::Ready(Some(Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "file ended before its advertised length",
            ))));
        }
        self.buf.truncate(n);
        self.remaining = self.remaining.saturating_sub(n as u64);
        Poll::Ready(Some(Ok(self.buf.split().freeze())))
    }
}

impl fmt::Debug for FileBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("FileBody");
        match &self.kind {
            Kind::Empty { .. } => d.field("kind", &"empty"),
            Kind::Full(chunk) => d.field("len", &chunk.as_ref().map_or(0, Bytes::len)),
            Kind::File(reader) => d
                .field("remaining", &reader.remaining)
                .field("block_size", &reader.block_size),
        };
        d.finish()
    }
}
