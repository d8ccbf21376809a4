//! Server-sent events: `text/event-stream` bodies and a broadcaster that fans
//! events out to many clients with bounded memory.
//!
//! # Pieces
//!
//! - [`Event`] builds one event (`id`, `event`, `data`, `retry`, comments)
//!   and [`Event::encode`] turns it into wire bytes once, as an
//!   [`EncodedEvent`] whose [`Bytes`](bytes::Bytes) are shared, never
//!   copied, by every client that receives it.
//! - [`EventStream`] is an [`http_body::Body`] that yields encoded events and,
//!   when nothing was sent for a while, a keep-alive comment
//!   (`: keep-alive\n\n`, every [`DEFAULT_KEEP_ALIVE`] unless configured), so
//!   that proxies keep the connection open and a vanished client is noticed
//!   by the failing write. [`EventStream::into_http_response`] (or
//!   [`sse_response`]) wraps it in a response with
//!   `content-type: text/event-stream` and `cache-control: no-cache`.
//! - [`Broadcaster`] fans events out: [`Broadcaster::send`] never blocks and
//!   never waits for any client; [`Broadcaster::subscribe`] gives each client
//!   its own [`EventStream`].
//!
//! # Encoding
//!
//! Every field is written as `name: value\n` (the single space after the
//! colon is what a client strips, so values starting with a space survive),
//! or `name:\n` for an empty value, and an event ends with a blank line.
//! Data containing line breaks becomes several `data:` lines; CR, LF and
//! CRLF all count as line breaks, as in the HTML parser, so the client
//! reassembles the data with LF between the lines. Comments are split the
//! same way into several `:` lines. An `id` or `event` value cannot span
//! lines: [`Event::id`] and [`Event::event`] remove CR and LF (and NUL from
//! ids, which a client would otherwise ignore), while [`Event::try_id`] and
//! [`Event::try_event`] reject such values with [`InvalidField`].
//!
//! # Memory and the overflow policy
//!
//! A [`Broadcaster`] keeps the last `capacity` encoded events in one shared
//! ring, whatever the number of clients. Each client is only a cursor into
//! that ring: the events it has not yet taken are its queue, so a client's
//! queue holds at most `capacity` events, and a client that stops reading
//! costs no memory beyond its cursor (plus what its socket buffers hold).
//! Sending appends to the ring and evicts the oldest event once it is full;
//! it never looks at how far behind a client is.
//!
//! A client falls behind when an event it has not yet taken is evicted. What
//! happens then is the [`OverflowPolicy`]:
//!
//! - [`OverflowPolicy::DropOldest`]: the client skips the evicted events and
//!   carries on with the oldest event still retained. The number skipped is
//!   counted per client ([`SubscriberStats::dropped`]) and in total
//!   ([`Broadcaster::dropped_total`]), and with
//!   [`Broadcaster::with_drop_reports`] the client is told with a comment
//!   `: dropped N events` before the next event.
//! - [`OverflowPolicy::Close`]: the client's stream ends (its response
//!   finishes cleanly), so it can reconnect with `Last-Event-ID` and learn
//!   what it missed. Such closes are counted by
//!   [`Broadcaster::closed_for_lag`].
//!
//! Either way a slow client never holds back the others, and the events it
//! missed are counted from the moment they are evicted, even if its stream
//! is not being polled (because its socket is full).
//!
//! # Reconnection and `Last-Event-ID`
//!
//! A reconnecting browser sends the id of the last event it saw in the
//! `Last-Event-ID` header ([`last_event_id`] reads it). The ring doubles as a
//! bounded history: [`Broadcaster::subscribe`] with that id replays the
//! retained events sent after the event carrying it, then continues live.
//! When the id is not retained (too old, or from before a restart) nothing is
//! replayed and the client receives live events only.
//!
//! # Examples
//!
//! ```
//! use http_body_util::BodyExt;
//! use ringstream::sse::{Broadcaster, Event, OverflowPolicy};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let broadcaster = Broadcaster::new(64, OverflowPolicy::DropOldest);
//! let mut client = broadcaster.subscribe(None);
//! broadcaster.send(Event::new().id("1").event("tick").data("one\ntwo"));
//!
//! let frame = client.frame().await.unwrap().unwrap();
//! assert_eq!(
//!     frame.into_data().unwrap(),
//!     "id: 1\nevent: tick\ndata: one\ndata: two\n\n"
//! );
//! # });
//! ```

mod broadcast;
mod event;
mod policy;
pub(crate) mod stream;
pub(crate) mod subscription;

pub use broadcast::Broadcaster;
pub use event::{last_event_id, EncodedEvent, Event, InvalidField, LAST_EVENT_ID};
pub use policy::{OverflowPolicy, SubscriberStats};
pub use stream::{sse_response, EventStream, DEFAULT_KEEP_ALIVE};
