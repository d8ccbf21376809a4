//! # ringstream
//!
//! Buffered async streams with constant memory, and an HTTP/1.1 and HTTP/2
//! server built on them, on tokio.
//!
//! `ringstream` is the async shell around [`ringstream_core`] (re-exported
//! under its own name): the core is sans-IO — it is given bytes and says what they
//! mean — and this crate owns the sockets.
//!
//! - [`Stream`]: a buffered stream over any `AsyncRead + AsyncWrite` with the
//!   `read_up_to` / `read_partial` / `read_exactly` / `read_until_exclusive` /
//!   `gets` / `peek` / `write_all` / `flush` API of Ruby's io-stream (under
//!   names that do not collide with tokio's `AsyncReadExt` and friends). Reads hand over
//!   [`bytes::Bytes`] split off the read block without a copy, and the block
//!   is reused once the caller drops them, so steady-state reading does not
//!   allocate.
//! - [`Incoming`]: request bodies (fixed, chunked, read-until-close) with the
//!   same reading methods, as an [`http_body::Body`].
//! - [`ResponseStream`]: the response body handlers print into, buffered
//!   (sent with `Content-Length`) or streaming (a bounded ring with
//!   back-pressure).
//! - [`server`]: an HTTP/1.1 and HTTP/2 server for any
//!   `tower_service::Service` — an axum `Router` and a tonic service run on
//!   it unchanged; [`forwarded`]: the client of a request relayed by
//!   trusted HTTP proxies.
//! - [`sse`]: server-sent events with a bounded broadcaster; [`fs`]: static
//!   files streamed from disk.
//!
//! The crates whose types appear in this API are re-exported, so a user needs
//! no extra `[dependencies]` line to name them: [`http`] (requests,
//! responses, header maps), [`bytes`] and [`http_body`].
//!
//! # Examples
//!
//! Reading lines and blocks from a stream:
//!
//! ```
//! use ringstream::Stream;
//! use tokio::io::AsyncWriteExt;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let (mut peer, io) = tokio::io::duplex(1024);
//! peer.write_all(b"HELLO v1\nsome payload").await.unwrap();
//! drop(peer);
//!
//! let mut stream = Stream::new(io);
//! assert_eq!(&stream.gets(1024).await.unwrap().unwrap()[..], b"HELLO v1\n");
//! assert_eq!(&stream.read_up_to(4).await.unwrap().unwrap()[..], b"some");
//! assert_eq!(&stream.read_all().await.unwrap()[..], b" payload");
//! # });
//! ```

pub use bytes;
pub use http;
pub use http_body;
pub use ringstream_core;

#[cfg(feature = "axum")]
pub mod axum;
pub mod body;
pub mod error;
pub mod forwarded;
pub mod fs;
pub mod response;
pub mod server;
pub mod sse;
pub mod stream;
mod wake;
pub mod ws;

pub use body::Incoming;
pub use error::{BoxError, Error};
pub use response::{ResponseStream, ResponseWriter};
pub use stream::{Stream, StreamOptions};

/// Items the crate's macros expand to; not part of the API.
#[doc(hidden)]
pub mod __private {
    use std::marker::PhantomData;

    /// `awrite!` calls `__awrite` on what `write_fmt` returned: the
    /// inherent method of a [`WriteFmt`](crate::response::WriteFmt) makes
    /// it the write; for anything else (a synchronous writer's `Result`)
    /// this identity applies.
    pub trait Awrite: Sized {
        /// `self`, unchanged.
        #[inline]
        fn __awrite(self) -> Self {
            self
        }
    }

    impl<T> Awrite for T {}

    /// Stands for the temporaries of `format_args!` in the bound that
    /// makes `write!(writer, ...).await` a compile error.
    pub struct FormatArgs<'a>(PhantomData<&'a ()>);

    /// Implemented by no type (and no other crate may implement it for
    /// `FormatArgs`): its message is the compile error of
    /// `write!(writer, ...).await`.
    #[diagnostic::on_unimplemented(
        message = "`write!(writer, ...).await` does not compile on a `ResponseWriter`: use `ringstream::awrite!(writer, ...).await`",
        label = "use `ringstream::awrite!` (or `awriteln!`) instead of `write!` (or `writeln!`)",
        note = "`write!` keeps the temporaries of `format_args!`, which are not `Send`, alive across the `.await`: the task would not be `Send`, and `tokio::spawn` and the server refuse such tasks",
        note = "`awrite!` formats in a statement of its own and yields only the write, a `Send` future"
    )]
    pub trait SendAcrossAwait {}
}

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
