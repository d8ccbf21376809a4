//! The [`EventStream`]: a `text/event-stream` response on a
//! [`Responder`].

use embassy_time::{with_timeout, Duration};
use embedded_io_async::{Read, Write};

use super::event::KEEP_ALIVE_COMMENT;
use super::{Event, OverflowPolicy, Received, Subscriber};
use crate::http::{Error, Responder, Sent};

/// The default idle interval before [`EventStream::forward`] sends a
/// keep-alive comment: 15 s (the tokio crate's).
pub const DEFAULT_KEEP_ALIVE: Duration = Duration::from_secs(15);

/// A server-sent event stream: the response's head (`text/event-stream`,
/// `cache-control: no-cache`, unknown length, so chunked), then events,
/// each sent at once, and a keep-alive comment whenever the stream has
/// been idle for [`keep_alive`](Self::with_keep_alive) (15 s by default)
/// while it [forwards](Self::forward) a [`Broadcaster`](super::Broadcaster).
///
/// Nothing is allocated: an event goes through the connection's transmit
/// buffer like any body.
///
/// # Examples
///
/// ```
/// use ringstream_embedded::embedded_io_async::{Read, Write};
/// use ringstream_embedded::http::{App, Error, Request, Responder, Sent};
/// use ringstream_embedded::sse::{Event, EventStream};
///
/// struct Countdown;
///
/// impl App for Countdown {
///     async fn handle<IO: Read + Write>(
///         &self,
///         _request: &Request<'_>,
///         responder: &mut Responder<'_, IO>,
///     ) -> Result<Sent, Error<IO::Error>> {
///         let mut stream = EventStream::start(responder, &[]).await?;
///         for n in ["3", "2", "1"] {
///             stream.send(&Event::new().data(n)).await?;
///         }
///         stream.send(&Event::new().try_event("done").unwrap().data("")).await?;
///         stream.finish().await
///     }
/// }
/// ```
pub struct EventStream<'r, 'c, IO: Read + Write> {
    responder: &'r mut Responder<'c, IO>,
    keep_alive: Duration,
}

/// Why [`EventStream::forward`] returned.
///
/// # Examples
///
/// A stream that resumes after `Last-Event-ID` and ends when the
/// broadcaster is closed:
///
/// ```
/// use ringstream_embedded::embedded_io_async::{Read, Write};
/// use ringstream_embedded::http::{serve_connection, App, Buffers, Error, Request, Responder, Sent};
/// use ringstream_embedded::sse::{Broadcaster, Ended, Event, EventStream, OverflowPolicy};
/// use ringstream_embedded::Config;
/// # use core::convert::Infallible;
/// # use ringstream_embedded::embedded_io_async::ErrorType;
/// # /// A connection that was given `input` and keeps what is written to it.
/// # struct Wire<'a> { input: &'a [u8], output: [u8; 1024], written: usize }
/// # fn wire(input: &[u8]) -> Wire<'_> { Wire { input, output: [0; 1024], written: 0 } }
/// # impl Wire<'_> { fn sent(&self) -> &[u8] { &self.output[..self.written] } }
/// # impl ErrorType for Wire<'_> { type Error = Infallible; }
/// # impl Read for Wire<'_> {
/// #     async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
/// #         let n = buf.len().min(self.input.len());
/// #         buf[..n].copy_from_slice(&self.input[..n]);
/// #         self.input = &self.input[n..];
/// #         Ok(n)
/// #     }
/// # }
/// # impl Write for Wire<'_> {
/// #     async fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
/// #         let n = buf.len().min(self.output.len() - self.written);
/// #         self.output[self.written..self.written + n].copy_from_slice(&buf[..n]);
/// #         self.written += n;
/// #         Ok(n)
/// #     }
/// #     async fn flush(&mut self) -> Result<(), Infallible> { Ok(()) }
/// # }
/// # /// This connection never waits: poll the future to its end.
/// # fn block_on<F: core::future::Future>(f: F) -> F::Output {
/// #     let mut f = core::pin::pin!(f);
/// #     let mut cx = core::task::Context::from_waker(std::task::Waker::noop());
/// #     loop {
/// #         if let core::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; }
/// #     }
/// # }
///
/// struct Feed(Broadcaster<4, 256, 1>);
///
/// impl App for Feed {
///     async fn handle<IO: Read + Write>(
///         &self,
///         request: &Request<'_>,
///         responder: &mut Responder<'_, IO>,
///     ) -> Result<Sent, Error<IO::Error>> {
///         let Some(mut subscriber) = self.0.subscribe(request.field("last-event-id")) else {
///             return responder.send(503, &[], b"").await;
///         };
///         let mut stream = EventStream::start(responder, &[]).await?;
///         let mut scratch = [0u8; 64];
///         assert_eq!(stream.forward(&mut subscriber, &mut scratch).await?, Ended::Closed);
///         stream.finish().await
///     }
/// }
///
/// let feed = Feed(Broadcaster::new(OverflowPolicy::DropOldest));
/// feed.0.publish(&Event::new().try_id("1")?.data("21.5")).unwrap();
/// feed.0.publish(&Event::new().try_id("2")?.data("21.6")).unwrap();
/// feed.0.close();
/// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
/// let mut io = wire(b"GET /events HTTP/1.1\r\nHost: device\r\nLast-Event-ID: 1\r\n\
///                     Connection: close\r\n\r\n");
/// let mut buffers = Buffers::<1024, 512>::new();
/// block_on(serve_connection(&mut io, &feed, &mut buffers, &Config::DEFAULT)).unwrap();
/// let sent = core::str::from_utf8(io.sent()).unwrap();
/// assert!(sent.contains("id: 2\ndata: 21.6\n\n"));
/// assert!(!sent.contains("21.5"));
/// # Ok::<(), ringstream_embedded::sse::InvalidField>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The broadcaster was closed and every event held was sent.
    Closed,
    /// The subscriber fell behind under [`OverflowPolicy::Close`]:
    /// `skipped` events were lost. The client reconnects with
    /// `Last-Event-ID`.
    Behind {
        /// Events the client did not get.
        skipped: u64,
    },
    /// The response has no body (`HEAD`): nothing to forward.
    NoBody,
}

impl<'r, 'c, IO: Read + Write> EventStream<'r, 'c, IO> {
    /// Starts the response: `200`, `content-type: text/event-stream`,
    /// `cache-control: no-cache`, then `fields`, with no length (chunked),
    /// and sends the head at once so the client's `EventSource` opens.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{serve_connection, App, Buffers, Error, Request, Responder, Sent};
    /// use ringstream_embedded::sse::{Event, EventStream};
    /// use ringstream_embedded::Config;
    /// # use core::convert::Infallible;
    /// # use ringstream_embedded::embedded_io_async::ErrorType;
    /// # /// A connection that was given `input` and keeps what is written to it.
    /// # struct Wire<'a> { input: &'a [u8], output: [u8; 1024], written: usize }
    /// # fn wire(input: &[u8]) -> Wire<'_> { Wire { input, output: [0; 1024], written: 0 } }
    /// # impl Wire<'_> { fn sent(&self) -> &[u8] { &self.output[..self.written] } }
    /// # impl ErrorType for Wire<'_> { type Error = Infallible; }
    /// # impl Read for Wire<'_> {
    /// #     async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
    /// #         let n = buf.len().min(self.input.len());
    /// #         buf[..n].copy_from_slice(&self.input[..n]);
    /// #         self.input = &self.input[n..];
    /// #         Ok(n)
    /// #     }
    /// # }
    /// # impl Write for Wire<'_> {
    /// #     async fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
    /// #         let n = buf.len().min(self.output.len() - self.written);
    /// #         self.output[self.written..self.written + n].copy_from_slice(&buf[..n]);
    /// #         self.written += n;
    /// #         Ok(n)
    /// #     }
    /// #     async fn flush(&mut self) -> Result<(), Infallible> { Ok(()) }
    /// # }
    /// # /// This connection never waits: poll the future to its end.
    /// # fn block_on<F: core::future::Future>(f: F) -> F::Output {
    /// #     let mut f = core::pin::pin!(f);
    /// #     let mut cx = core::task::Context::from_waker(std::task::Waker::noop());
    /// #     loop {
    /// #         if let core::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; }
    /// #     }
    /// # }
    ///
    /// struct Countdown;
    ///
    /// impl App for Countdown {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         _request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         let mut stream = EventStream::start(responder, &[]).await?;
    ///         for n in ["3", "2", "1"] {
    ///             stream.send(&Event::new().data(n)).await?;
    ///         }
    ///         stream.finish().await
    ///     }
    /// }
    ///
    /// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
    /// let mut io = wire(b"GET /countdown HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n");
    /// let mut buffers = Buffers::<1024, 512>::new();
    /// block_on(serve_connection(&mut io, &Countdown, &mut buffers, &Config::DEFAULT)).unwrap();
    /// let sent = core::str::from_utf8(io.sent()).unwrap();
    /// assert!(sent.contains("\r\ncontent-type: text/event-stream\r\n"));
    /// assert!(sent.contains("data: 3\n\n") && sent.contains("data: 1\n\n"));
    /// ```
    ///
    /// # Errors
    ///
    /// Those of [`Responder::start`] and [`Responder::flush`].
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe (see [`Responder::send`]).
    pub async fn start(
        responder: &'r mut Responder<'c, IO>,
        fields: &[(&str, &[u8])],
    ) -> Result<Self, Error<IO::Error>> {
        const OWN: [(&str, &[u8]); 2] = [
            ("content-type", b"text/event-stream"),
            ("cache-control", b"no-cache"),
        ];
        let all = OWN.iter().chain(fields).copied();
        responder.start_with(200, all, None).await?;
        responder.flush().await?;
        Ok(EventStream {
            responder,
            keep_alive: DEFAULT_KEEP_ALIVE,
        })
    }

    /// Sets the idle interval after which [`forward`](Self::forward) sends
    /// a keep-alive comment (`: keep-alive`), so that proxies and the
    /// client's own timeouts keep the stream open.
    ///
    /// # Examples
    ///
    /// ```
    /// use embassy_time::Duration;
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{App, Error, Request, Responder, Sent};
    /// use ringstream_embedded::sse::{Broadcaster, EventStream, OverflowPolicy};
    ///
    /// struct Feed(Broadcaster<16, 2048, 4>);
    ///
    /// impl App for Feed {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         _request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         let Some(mut subscriber) = self.0.subscribe(None) else {
    ///             return responder.send(503, &[], b"").await;
    ///         };
    ///         // A proxy that drops a stream after 10 s of silence.
    ///         let mut stream = EventStream::start(responder, &[])
    ///             .await?
    ///             .with_keep_alive(Duration::from_secs(5));
    ///         let mut scratch = [0u8; 256];
    ///         stream.forward(&mut subscriber, &mut scratch).await?;
    ///         stream.finish().await
    ///     }
    /// }
    ///
    /// let _feed = Feed(Broadcaster::new(OverflowPolicy::DropOldest));
    /// ```
    #[must_use]
    pub fn with_keep_alive(mut self, interval: Duration) -> Self {
        self.keep_alive = interval;
        self
    }

    /// Writes one event and sends it at once.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{serve_connection, App, Buffers, Error, Request, Responder, Sent};
    /// use ringstream_embedded::sse::{Event, EventStream};
    /// use ringstream_embedded::Config;
    /// # use core::convert::Infallible;
    /// # use ringstream_embedded::embedded_io_async::ErrorType;
    /// # /// A connection that was given `input` and keeps what is written to it.
    /// # struct Wire<'a> { input: &'a [u8], output: [u8; 1024], written: usize }
    /// # fn wire(input: &[u8]) -> Wire<'_> { Wire { input, output: [0; 1024], written: 0 } }
    /// # impl Wire<'_> { fn sent(&self) -> &[u8] { &self.output[..self.written] } }
    /// # impl ErrorType for Wire<'_> { type Error = Infallible; }
    /// # impl Read for Wire<'_> {
    /// #     async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
    /// #         let n = buf.len().min(self.input.len());
    /// #         buf[..n].copy_from_slice(&self.input[..n]);
    /// #         self.input = &self.input[n..];
    /// #         Ok(n)
    /// #     }
    /// # }
    /// # impl Write for Wire<'_> {
    /// #     async fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
    /// #         let n = buf.len().min(self.output.len() - self.written);
    /// #         self.output[self.written..self.written + n].copy_from_slice(&buf[..n]);
    /// #         self.written += n;
    /// #         Ok(n)
    /// #     }
    /// #     async fn flush(&mut self) -> Result<(), Infallible> { Ok(()) }
    /// # }
    /// # /// This connection never waits: poll the future to its end.
    /// # fn block_on<F: core::future::Future>(f: F) -> F::Output {
    /// #     let mut f = core::pin::pin!(f);
    /// #     let mut cx = core::task::Context::from_waker(std::task::Waker::noop());
    /// #     loop {
    /// #         if let core::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; }
    /// #     }
    /// # }
    ///
    /// struct Temperature;
    ///
    /// impl App for Temperature {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         _request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         let mut stream = EventStream::start(responder, &[]).await?;
    ///         stream.send(&Event::new().data("21.5")).await?;
    ///         stream.finish().await
    ///     }
    /// }
    ///
    /// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
    /// let mut io = wire(b"GET /temp HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n");
    /// let mut buffers = Buffers::<1024, 512>::new();
    /// block_on(serve_connection(&mut io, &Temperature, &mut buffers, &Config::DEFAULT)).unwrap();
    /// // The event is one chunk of the response body.
    /// let sent = core::str::from_utf8(io.sent()).unwrap();
    /// assert!(sent.contains("\r\n\r\nc\r\ndata: 21.5\n\n\r\n"));
    /// ```
    ///
    /// # Errors
    ///
    /// Those of [`Responder::write_all`] and [`Responder::flush`].
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: dropped midway, the event is cut off.
    pub async fn send(&mut self, event: &Event<'_>) -> Result<(), Error<IO::Error>> {
        for piece in event.pieces() {
            self.responder.write_all(piece).await?;
        }
        self.responder.flush().await
    }

    /// Writes encoded event bytes (from a
    /// [`Subscriber`](super::Subscriber)) or a comment, and sends them at
    /// once.
    ///
    /// # Examples
    ///
    /// Forwarding by hand what a subscriber holds, as
    /// [`forward`](Self::forward) does:
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{serve_connection, App, Buffers, Error, Request, Responder, Sent};
    /// use ringstream_embedded::sse::{Broadcaster, Event, EventStream, OverflowPolicy, Received};
    /// use ringstream_embedded::Config;
    /// # use core::convert::Infallible;
    /// # use ringstream_embedded::embedded_io_async::ErrorType;
    /// # /// A connection that was given `input` and keeps what is written to it.
    /// # struct Wire<'a> { input: &'a [u8], output: [u8; 1024], written: usize }
    /// # fn wire(input: &[u8]) -> Wire<'_> { Wire { input, output: [0; 1024], written: 0 } }
    /// # impl Wire<'_> { fn sent(&self) -> &[u8] { &self.output[..self.written] } }
    /// # impl ErrorType for Wire<'_> { type Error = Infallible; }
    /// # impl Read for Wire<'_> {
    /// #     async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
    /// #         let n = buf.len().min(self.input.len());
    /// #         buf[..n].copy_from_slice(&self.input[..n]);
    /// #         self.input = &self.input[n..];
    /// #         Ok(n)
    /// #     }
    /// # }
    /// # impl Write for Wire<'_> {
    /// #     async fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
    /// #         let n = buf.len().min(self.output.len() - self.written);
    /// #         self.output[self.written..self.written + n].copy_from_slice(&buf[..n]);
    /// #         self.written += n;
    /// #         Ok(n)
    /// #     }
    /// #     async fn flush(&mut self) -> Result<(), Infallible> { Ok(()) }
    /// # }
    /// # /// This connection never waits: poll the future to its end.
    /// # fn block_on<F: core::future::Future>(f: F) -> F::Output {
    /// #     let mut f = core::pin::pin!(f);
    /// #     let mut cx = core::task::Context::from_waker(std::task::Waker::noop());
    /// #     loop {
    /// #         if let core::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; }
    /// #     }
    /// # }
    ///
    /// struct Feed(Broadcaster<4, 256, 1>);
    ///
    /// impl App for Feed {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         _request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         let Some(mut subscriber) = self.0.subscribe(Some(b"0")) else {
    ///             return responder.send(503, &[], b"").await;
    ///         };
    ///         let mut stream = EventStream::start(responder, &[]).await?;
    ///         let mut buf = [0u8; 64];
    ///         while let Some(Received::Event(n)) = subscriber.try_recv(&mut buf) {
    ///             stream.send_encoded(&buf[..n]).await?;
    ///         }
    ///         stream.finish().await
    ///     }
    /// }
    ///
    /// let feed = Feed(Broadcaster::new(OverflowPolicy::DropOldest));
    /// feed.0.publish(&Event::new().try_id("0")?.data("held")).unwrap();
    /// feed.0.publish(&Event::new().try_id("1")?.data("21.5")).unwrap();
    /// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
    /// let mut io = wire(b"GET /events HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n");
    /// let mut buffers = Buffers::<1024, 512>::new();
    /// block_on(serve_connection(&mut io, &feed, &mut buffers, &Config::DEFAULT)).unwrap();
    /// assert!(core::str::from_utf8(io.sent()).unwrap().contains("id: 1\ndata: 21.5\n\n"));
    /// # Ok::<(), ringstream_embedded::sse::InvalidField>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Those of [`Responder::write_all`] and [`Responder::flush`].
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe (see [`send`](Self::send)).
    pub async fn send_encoded(&mut self, bytes: &[u8]) -> Result<(), Error<IO::Error>> {
        self.responder.write_all(bytes).await?;
        self.responder.flush().await
    }

    /// Sends the keep-alive comment, `: keep-alive\n\n`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{serve_connection, App, Buffers, Error, Request, Responder, Sent};
    /// use ringstream_embedded::sse::{EventStream, KEEP_ALIVE_COMMENT};
    /// use ringstream_embedded::Config;
    /// # use core::convert::Infallible;
    /// # use ringstream_embedded::embedded_io_async::ErrorType;
    /// # /// A connection that was given `input` and keeps what is written to it.
    /// # struct Wire<'a> { input: &'a [u8], output: [u8; 1024], written: usize }
    /// # fn wire(input: &[u8]) -> Wire<'_> { Wire { input, output: [0; 1024], written: 0 } }
    /// # impl Wire<'_> { fn sent(&self) -> &[u8] { &self.output[..self.written] } }
    /// # impl ErrorType for Wire<'_> { type Error = Infallible; }
    /// # impl Read for Wire<'_> {
    /// #     async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
    /// #         let n = buf.len().min(self.input.len());
    /// #         buf[..n].copy_from_slice(&self.input[..n]);
    /// #         self.input = &self.input[n..];
    /// #         Ok(n)
    /// #     }
    /// # }
    /// # impl Write for Wire<'_> {
    /// #     async fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
    /// #         let n = buf.len().min(self.output.len() - self.written);
    /// #         self.output[self.written..self.written + n].copy_from_slice(&buf[..n]);
    /// #         self.written += n;
    /// #         Ok(n)
    /// #     }
    /// #     async fn flush(&mut self) -> Result<(), Infallible> { Ok(()) }
    /// # }
    /// # /// This connection never waits: poll the future to its end.
    /// # fn block_on<F: core::future::Future>(f: F) -> F::Output {
    /// #     let mut f = core::pin::pin!(f);
    /// #     let mut cx = core::task::Context::from_waker(std::task::Waker::noop());
    /// #     loop {
    /// #         if let core::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; }
    /// #     }
    /// # }
    ///
    /// struct Quiet;
    ///
    /// impl App for Quiet {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         _request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         let mut stream = EventStream::start(responder, &[]).await?;
    ///         stream.send_keep_alive().await?;
    ///         stream.finish().await
    ///     }
    /// }
    ///
    /// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
    /// let mut io = wire(b"GET /events HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n");
    /// let mut buffers = Buffers::<1024, 512>::new();
    /// block_on(serve_connection(&mut io, &Quiet, &mut buffers, &Config::DEFAULT)).unwrap();
    /// let comment = core::str::from_utf8(KEEP_ALIVE_COMMENT).unwrap();
    /// assert!(core::str::from_utf8(io.sent()).unwrap().contains(comment));
    /// ```
    ///
    /// # Errors
    ///
    /// See [`send_encoded`](Self::send_encoded).
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe (see [`send`](Self::send)).
    pub async fn send_keep_alive(&mut self) -> Result<(), Error<IO::Error>> {
        self.send_encoded(KEEP_ALIVE_COMMENT).await
    }

    /// Sends the events of `subscriber` as they are published, each at
    /// once, until the broadcaster is closed or the subscriber falls
    /// behind under [`OverflowPolicy::Close`]; a keep-alive comment after
    /// each idle interval. Under [`OverflowPolicy::DropOldest`] a
    /// subscriber that falls behind sends `: dropped N events` and goes on
    /// from the oldest event held.
    ///
    /// Each event is copied from the ring into `scratch` (give it the
    /// length of the longest event; a longer one is skipped as a drop),
    /// then into the transmit buffer.
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{App, Error, Request, Responder, Sent};
    /// use ringstream_embedded::sse::{Broadcaster, EventStream, LAST_EVENT_ID};
    ///
    /// struct Live<'b> {
    ///     events: &'b Broadcaster<16, 2048, 4>,
    /// }
    ///
    /// impl App for Live<'_> {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         let Some(mut subscriber) = self.events.subscribe(request.field(LAST_EVENT_ID)) else {
    ///             return responder.send(503, &[("retry-after", b"1")], b"").await;
    ///         };
    ///         let mut stream = EventStream::start(responder, &[]).await?;
    ///         let mut scratch = [0u8; 256];
    ///         stream.forward(&mut subscriber, &mut scratch).await?;
    ///         stream.finish().await
    ///     }
    /// }
    /// ```
    ///
    /// # Errors
    ///
    /// Those of [`send_encoded`](Self::send_encoded): the client left or
    /// stalled past the write deadline.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe (see [`send`](Self::send)).
    pub async fn forward<const SLOTS: usize, const BYTES: usize, const SUBSCRIBERS: usize>(
        &mut self,
        subscriber: &mut Subscriber<'_, SLOTS, BYTES, SUBSCRIBERS>,
        scratch: &mut [u8],
    ) -> Result<Ended, Error<IO::Error>> {
        if !self.responder.sends_body() {
            return Ok(Ended::NoBody);
        }
        loop {
            match subscriber.try_recv(scratch) {
                Some(Received::Event(len)) => {
                    let bytes = scratch.get(..len).unwrap_or_default();
                    self.send_encoded(bytes).await?;
                }
                Some(Received::Behind { skipped }) => match subscriber.policy() {
                    OverflowPolicy::Close => return Ok(Ended::Behind { skipped }),
                    OverflowPolicy::DropOldest => {
                        let mut note = [0u8; 40];
                        let mut out = ringstream_core::SliceBuf::new(&mut note);
                        let _ = core::fmt::write(
                            &mut out,
                            format_args!(": dropped {skipped} events\n\n"),
                        );
                        let len = out.len();
                        self.send_encoded(note.get(..len).unwrap_or_default())
                            .await?;
                    }
                },
                Some(Received::Closed) => return Ok(Ended::Closed),
                None => {
                    if with_timeout(self.keep_alive, subscriber.ready())
                        .await
                        .is_err()
                    {
                        self.send_keep_alive().await?;
                    }
                }
            }
        }
    }

    /// Ends the response (the end of the chunked body).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream_embedded::embedded_io_async::{Read, Write};
    /// use ringstream_embedded::http::{serve_connection, App, Buffers, Error, Request, Responder, Sent};
    /// use ringstream_embedded::sse::EventStream;
    /// use ringstream_embedded::Config;
    /// # use core::convert::Infallible;
    /// # use ringstream_embedded::embedded_io_async::ErrorType;
    /// # /// A connection that was given `input` and keeps what is written to it.
    /// # struct Wire<'a> { input: &'a [u8], output: [u8; 1024], written: usize }
    /// # fn wire(input: &[u8]) -> Wire<'_> { Wire { input, output: [0; 1024], written: 0 } }
    /// # impl Wire<'_> { fn sent(&self) -> &[u8] { &self.output[..self.written] } }
    /// # impl ErrorType for Wire<'_> { type Error = Infallible; }
    /// # impl Read for Wire<'_> {
    /// #     async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
    /// #         let n = buf.len().min(self.input.len());
    /// #         buf[..n].copy_from_slice(&self.input[..n]);
    /// #         self.input = &self.input[n..];
    /// #         Ok(n)
    /// #     }
    /// # }
    /// # impl Write for Wire<'_> {
    /// #     async fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
    /// #         let n = buf.len().min(self.output.len() - self.written);
    /// #         self.output[self.written..self.written + n].copy_from_slice(&buf[..n]);
    /// #         self.written += n;
    /// #         Ok(n)
    /// #     }
    /// #     async fn flush(&mut self) -> Result<(), Infallible> { Ok(()) }
    /// # }
    /// # /// This connection never waits: poll the future to its end.
    /// # fn block_on<F: core::future::Future>(f: F) -> F::Output {
    /// #     let mut f = core::pin::pin!(f);
    /// #     let mut cx = core::task::Context::from_waker(std::task::Waker::noop());
    /// #     loop {
    /// #         if let core::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; }
    /// #     }
    /// # }
    ///
    /// struct Nothing;
    ///
    /// impl App for Nothing {
    ///     async fn handle<IO: Read + Write>(
    ///         &self,
    ///         _request: &Request<'_>,
    ///         responder: &mut Responder<'_, IO>,
    ///     ) -> Result<Sent, Error<IO::Error>> {
    ///         EventStream::start(responder, &[]).await?.finish().await
    ///     }
    /// }
    ///
    /// // `wire` makes an in-memory connection, as in `serve_connection`'s example.
    /// let mut io = wire(b"GET /events HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n");
    /// let mut buffers = Buffers::<1024, 512>::new();
    /// block_on(serve_connection(&mut io, &Nothing, &mut buffers, &Config::DEFAULT)).unwrap();
    /// // The last chunk ends the body; the client's `EventSource` reconnects.
    /// assert!(io.sent().ends_with(b"\r\n\r\n0\r\n\r\n"));
    /// ```
    ///
    /// # Errors
    ///
    /// Those of [`Responder::finish`].
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe (see [`send`](Self::send)).
    pub async fn finish(self) -> Result<Sent, Error<IO::Error>> {
        self.responder.finish().await
    }
}
