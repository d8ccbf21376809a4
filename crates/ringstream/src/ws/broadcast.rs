//! [`Broadcaster`]: one message to many WebSockets, encoded once, through
//! the fan-out core the server-sent events use — one bounded ring shared by
//! every client, each reading at its own pace.

use std::fmt;
use std::future::poll_fn;

use bytes::{BufMut, Bytes, BytesMut};
use ringstream_core::ws::{message_head, MessageKind};

use super::Message;
use crate::sse::subscription::{Next, Subscription as Cursor};
use crate::sse::{self, EncodedEvent, OverflowPolicy};

/// A WebSocket data frame, encoded once (head and payload in one `Bytes`)
/// for every client that receives it; send it with
/// [`WebSocket::send_frame`](super::WebSocket::send_frame).
///
/// # Examples
///
/// ```
/// use ringstream::ws::{Config, Frame, Message, Role, WebSocket};
/// use ringstream::Stream;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let frame = Frame::encode(&Message::text("tick")).unwrap();
/// let (a, b) = tokio::io::duplex(4096);
/// let mut server = WebSocket::from_stream(Stream::new(a), Role::Server, Config::default());
/// let mut client = WebSocket::from_stream(Stream::new(b), Role::Client, Config::default());
/// // Sent as it is, to as many sockets as need it.
/// server.send_frame(&frame).await.unwrap();
/// server.send_frame(&frame).await.unwrap();
/// assert_eq!(client.recv().await.unwrap().unwrap(), Message::text("tick"));
/// assert_eq!(client.recv().await.unwrap().unwrap(), Message::text("tick"));
/// # });
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Frame(pub(crate) Bytes);

impl Frame {
    /// The frame of a text or binary message (`None` for a control
    /// message, which is not broadcast).
    ///
    /// # Examples
    ///
    /// ```
    /// use ringstream::ws::{Frame, Message};
    ///
    /// let frame = Frame::encode(&Message::text("hi")).unwrap();
    /// assert_eq!(frame.as_bytes(), b"\x81\x02hi");
    /// assert!(Frame::encode(&Message::Ping(Default::default())).is_none());
    /// ```
    pub fn encode(message: &Message) -> Option<Frame> {
        let (kind, data) = match message {
            Message::Text(text) => (MessageKind::Text, text.as_bytes()),
            Message::Binary(data) => (MessageKind::Binary, &data[..]),
            _ => return None,
        };
        let head = message_head(kind, data.len() as u64);
        let mut frame = BytesMut::with_capacity(head.as_bytes().len() + data.len());
        frame.put_slice(head.as_bytes());
        frame.put_slice(data);
        Some(Frame(frame.freeze()))
    }

    /// The frame's wire bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Frame").field("len", &self.0.len()).finish()
    }
}

/// Fans messages out to many WebSockets with bounded memory: the last
/// `capacity` frames are kept in one ring, encoded once, and each
/// [`Subscription`] reads through it at its own pace. [`send`](Self::send)
/// never waits for a client. A client more than `capacity` frames behind
/// skips the oldest ones (counted, [`OverflowPolicy::DropOldest`]) or has
/// its subscription ended ([`OverflowPolicy::Close`]; close its socket with
/// [`CloseCode::POLICY_VIOLATION`](super::CloseCode::POLICY_VIOLATION)). The ring and the
/// policy are the server-sent events' own.
///
/// # Examples
///
/// ```
/// use ringstream::ws::{Broadcaster, Message};
/// use ringstream::sse::OverflowPolicy;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let broadcaster = Broadcaster::new(64, OverflowPolicy::DropOldest);
/// let mut a = broadcaster.subscribe();
/// let mut b = broadcaster.subscribe();
/// broadcaster.send(&Message::text("tick"));
/// assert_eq!(a.recv().await.unwrap().as_bytes(), b"\x81\x04tick");
/// assert_eq!(b.recv().await.unwrap().as_bytes(), b"\x81\x04tick");
/// drop(broadcaster);
/// assert!(a.recv().await.is_none());
/// # });
/// ```
#[derive(Clone)]
pub struct Broadcaster {
    inner: sse::Broadcaster,
}

impl Broadcaster {
    /// A broadcaster retaining the last `capacity` frames (at least one),
    /// handling clients that fall behind with `policy`.
    pub fn new(capacity: usize, policy: OverflowPolicy) -> Broadcaster {
        Broadcaster {
            inner: sse::Broadcaster::new(capacity, policy).with_keep_alive(None),
        }
    }

    /// Encodes `message` once and queues it for every subscriber (a
    /// control message is ignored). Never blocks.
    pub fn send(&self, message: &Message) {
        if let Some(frame) = Frame::encode(message) {
            self.send_frame(frame);
        }
    }

    /// Queues an encoded frame for every subscriber.
    pub fn send_frame(&self, frame: Frame) {
        self.inner.send(EncodedEvent::raw(frame.0));
    }

    /// A subscription receiving the frames sent from now on.
    pub fn subscribe(&self) -> Subscription {
        Subscription {
            cursor: Cursor::new(self.inner.shared().clone(), None, false),
        }
    }

    /// Ends every subscription once it has taken what is left for it.
    pub fn close(&self) {
        self.inner.close();
    }

    /// Subscriptions alive now.
    pub fn subscriber_count(&self) -> usize {
        self.inner.subscriber_count()
    }

    /// Frames sent so far.
    pub fn sent(&self) -> u64 {
        self.inner.sent()
    }

    /// Frames skipped by clients that fell behind, in all.
    pub fn dropped_total(&self) -> u64 {
        self.inner.dropped_total()
    }

    /// Subscriptions ended because their client fell behind
    /// ([`OverflowPolicy::Close`]).
    pub fn closed_for_lag(&self) -> u64 {
        self.inner.closed_for_lag()
    }
}

impl fmt::Debug for Broadcaster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Broadcaster")
            .field("subscribers", &self.subscriber_count())
            .field("sent", &self.sent())
            .finish_non_exhaustive()
    }
}

/// One client's place in a [`Broadcaster`]'s ring.
///
/// # Examples
///
/// A client that falls more than the ring's capacity behind:
///
/// ```
/// use ringstream::sse::OverflowPolicy;
/// use ringstream::ws::{Broadcaster, Message};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let skipping = Broadcaster::new(2, OverflowPolicy::DropOldest);
/// let closing = Broadcaster::new(2, OverflowPolicy::Close);
/// let (mut skips, mut ends) = (skipping.subscribe(), closing.subscribe());
/// for n in ["1", "2", "3"] {
///     skipping.send(&Message::text(n));
///     closing.send(&Message::text(n));
/// }
/// // Under `DropOldest`, the oldest frame is skipped (and counted).
/// assert_eq!(skips.recv().await.unwrap().as_bytes(), b"\x81\x012");
/// assert_eq!(skipping.dropped_total(), 1);
/// // Under `Close`, the subscription ends.
/// assert!(ends.recv().await.is_none());
/// assert_eq!(closing.closed_for_lag(), 1);
/// # });
/// ```
pub struct Subscription {
    cursor: Cursor,
}

impl Subscription {
    /// The next frame for this client; `None` when the broadcaster is
    /// closed (or dropped) and everything was taken, or when the client
    /// fell behind under [`OverflowPolicy::Close`].
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: a frame is taken only when returned.
    pub async fn recv(&mut self) -> Option<Frame> {
        poll_fn(|cx| {
            self.cursor.poll_next(cx).map(|next| match next {
                Next::Event(bytes) => Some(Frame(bytes)),
                Next::Dropped(_) | Next::End => None,
            })
        })
        .await
    }
}

impl fmt::Debug for Subscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription").finish_non_exhaustive()
    }
}
