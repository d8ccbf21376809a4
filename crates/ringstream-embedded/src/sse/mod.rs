//! Server-sent events (`text/event-stream`), heap-free: the tokio crate's
//! `sse` in memory fixed at build time.
//!
//! - [`Event`]: one event, borrowing its fields; `id` and `event` values
//!   with a line break (or NUL in an id) refused with [`InvalidField`],
//!   multi-line data split into `data:` lines.
//! - [`EventStream`]: the response on a [`Responder`](crate::http::Responder)
//!   — `text/event-stream`, `cache-control: no-cache`, chunked — with each
//!   event sent at once and a keep-alive comment after an idle interval.
//! - [`Broadcaster`]: the last events in one ring of encoded bytes
//!   (`BYTES`, at most `SLOTS` events) read by up to `SUBSCRIBERS`
//!   [`Subscriber`]s, each a read position: one copy of each event however
//!   many clients, a publisher that never waits, an [`OverflowPolicy`]
//!   for a client that falls behind, `Last-Event-ID` resume while the
//!   event is held.

mod broadcast;
mod event;
mod ring;
mod stream;

pub use broadcast::{Broadcaster, OverflowPolicy, PublishError, Received, Subscriber};
pub use event::{Event, InvalidField, KEEP_ALIVE_COMMENT, LAST_EVENT_ID};
pub use stream::{Ended, EventStream, DEFAULT_KEEP_ALIVE};
