//! The task of one accepted connection: its TLS handshake, the connection
//! served, and its slot given back (or kept for an upgraded connection).

use std::future::Future;
#[cfg(feature = "http2")]
use std::pin::Pin;
use std::sync::Arc;

#[cfg(feature = "http2")]
use futures_util::FutureExt;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use super::addr::ConnectionInfo;
use super::config::Config;
use super::connection::{Connection, ConnectionEnd};
use super::counted::Counted;
use super::make::MakeService;
use super::metrics::Metrics;
use super::proxy;
use super::slots::SlotGuard;
use super::upgrade::UpgradedGuard;

/// An upgraded connection's hold on its slot, kept by a task of its own
/// once the connection's task has ended: a few words instead of the whole
/// HTTP connection's state.
pub(super) struct UpgradedSlot {
    guard: UpgradedGuard,
    _open: OpenConnection,
}

impl UpgradedSlot {
    /// Keeps the slot until the service drops the upgraded connection.
    pub(super) async fn keep(mut self) {
        self.guard.released().await;
    }
}

/// A connection handed from its task to a new, smaller one the accept
/// loop spawns: the first task, sized for an HTTP/1.1 connection (and a
/// TLS handshake), ends.
pub(super) enum HandedOver {
    /// An upgraded connection's hold on its slot.
    Upgraded(UpgradedSlot),
    /// An HTTP/2 connection, served to its end with its slot held.
    #[cfg(feature = "http2")]
    Http2(Pin<Box<dyn Future<Output = ()> + Send>>),
}

impl HandedOver {
    /// Runs what was handed over to its end in a task of `tasks`.
    pub(super) fn spawn_on(self, tasks: &mut JoinSet<()>) {
        match self {
            HandedOver::Upgraded(slot) => tasks.spawn(slot.keep()),
            // The boxed connection is the task's future itself.
            #[cfg(feature = "http2")]
            HandedOver::Http2(connection) => tasks.spawn(connection),
        };
    }

    /// Runs what was handed over to its end, here.
    async fn run(self) {
        match self {
            HandedOver::Upgraded(slot) => slot.keep().await,
            #[cfg(feature = "http2")]
            HandedOver::Http2(connection) => connection.await,
        }
    }
}

/// What every connection of a server shares, and its own service.
pub(super) struct ConnectionContext<M: MakeService> {
    pub(super) service: M::Service,
    pub(super) config: Arc<Config>,
    pub(super) metrics: Arc<Metrics>,
    pub(super) stopped: watch::Receiver<bool>,
    /// Where an upgraded connection's hold, or an HTTP/2 connection, goes
    /// to be kept by a task of the server's.
    pub(super) handed_over: mpsc::UnboundedSender<HandedOver>,
    /// The TLS handshake every connection starts with, if any.
    #[cfg(feature = "tls")]
    pub(super) tls: Option<Arc<super::tls::Acceptor>>,
}

/// Serves one accepted connection to its end, then gives its slot back.
///
/// A plain function returning an `async` block, which holds what it
/// captures once: the connection lives in the block and is served in
/// place, where nested `async fn`s taking it by value would each hold a
/// copy (the task of an idle connection is that much smaller).
// Not an `async fn`, on purpose: see above.
#[allow(clippy::manual_async_fn)]
pub(super) fn serve_accepted<T, M>(
    socket: T,
    info: ConnectionInfo,
    context: ConnectionContext<M>,
    slot_guard: SlotGuard,
) -> impl Future<Output = ()>
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    M: MakeService,
{
    async move {
        let ConnectionContext {
            service,
            config,
            metrics,
            stopped,
            handed_over,
            #[cfg(feature = "tls")]
            tls,
        } = context;
        metrics.record_connection_opened();
        let slot = slot_guard.slot();
        // Counted closed however the task ends: at its end, aborted at the
        // shutdown deadline, or unwound by a panicking service.
        let open = OpenConnection {
            metrics: metrics.clone(),
            slot: slot_guard,
        };
        // Behind a balancer: its PROXY header first, under the head
        // deadline. Boxed: only a listener that takes headers pays for
        // the read's state.
        let (socket, info) = match &config.proxy_protocol {
            Some(settings) => {
                let deadline = tokio::time::Instant::now() + config.head_timeout;
                let read = Box::pin(proxy::read_header(socket, info, settings));
                match tokio::time::timeout_at(deadline, read).await {
                    Ok(Ok(read)) => read,
                    Ok(Err(why)) => {
                        metrics.record_proxy_refused();
                        tracing::debug!(?why, "connection closed: no trusted PROXY header");
                        return;
                    }
                    Err(_) => {
                        metrics.record_proxy_refused();
                        tracing::debug!("connection closed: PROXY header timed out");
                        return;
                    }
                }
            }
            None => (proxy::direct(socket), info),
        };
        #[cfg(feature = "tls")]
        let socket = match tls {
            // The connection's slot is held through the handshake, under
            // its own deadline. Boxed: its future, larger than a served
            // connection's, would otherwise size every connection's task.
            Some(tls) => match Box::pin(tls.accept(socket, &metrics, http2_enabled(&config))).await
            {
                Some(tls) => super::tls::Transport::Tls(tls),
                None => return,
            },
            None => super::tls::Transport::Plain(socket),
        };
        // TLS negotiated HTTP/2 by ALPN: no HTTP/1.1 connection at all.
        #[cfg(all(feature = "tls", feature = "http2"))]
        if socket.negotiated_http2() && config.http2.enabled {
            let http2 = super::h2::Http2Connection {
                service,
                shutdown: super::stop::StopSignal::new(stopped, slot),
                config,
                metrics: metrics.clone(),
                info: Some(info),
            };
            let io = Counted::new(socket, metrics);
            let served = super::h2::serve_http2(io, http2);
            if let Some(refused) = hand_over_http2(served, open, &handed_over) {
                refused.run().await;
            }
            return;
        }
        let mut conn = Connection::new(
            Counted::new(socket, metrics.clone()),
            service,
            config,
            metrics,
            stopped,
            slot,
        )
        .with_info(info)
        .with_upgrades();
        match conn.serve_in_place().await {
            Ok(ConnectionEnd::Closed) => {}
            // Upgraded: a small task of the server's keeps the slot from
            // now on, and this one ends.
            Ok(ConnectionEnd::Upgraded(pending)) => {
                if let Some(guard) = conn.hand_over(pending) {
                    // The slot's waker is this task's, which ends now: let
                    // go of it, or it would keep the task's memory for the
                    // upgraded connection's life.
                    open.slot.upgraded();
                    let slot = HandedOver::Upgraded(UpgradedSlot { guard, _open: open });
                    if let Err(refused) = handed_over.send(slot) {
                        // The server is past its shutdown: keep it here.
                        refused.0.run().await;
                    }
                }
            }
            #[cfg(feature = "http2")]
            Ok(ConnectionEnd::Http2) => {
                let (io, http2) = conn.into_http2();
                let served = super::h2::serve_http2(io, http2);
                if let Some(refused) = hand_over_http2(served, open, &handed_over) {
                    refused.run().await;
                }
            }
            Err(e) => tracing::debug!(error = %e, "connection ended with an error"),
        }
    }
}

/// Boxes an HTTP/2 connection with `open` and sends it to the accept
/// loop, which serves it in a task of its own: the HTTP/2 state alone
/// instead of this task's room for an HTTP/1.1 connection beside it. Not
/// an `async fn`, so that this task's state never holds the connection's
/// future. Past the server's shutdown (no accept loop to spawn it), it is
/// returned, to be served here.
#[cfg(feature = "http2")]
#[must_use]
fn hand_over_http2<F>(
    serve: F,
    open: OpenConnection,
    handed_over: &mpsc::UnboundedSender<HandedOver>,
) -> Option<HandedOver>
where
    F: Future<Output = Result<(), crate::error::Error>> + Send + 'static,
{
    // `map` polls `serve` where it lies: an `async` block awaiting it
    // would hold it twice (as its capture and as the future awaited).
    let connection = Box::pin(serve.map(move |served| {
        if let Err(e) = served {
            tracing::debug!(error = %e, "connection ended with an error");
        }
        drop(open);
    }));
    handed_over
        .send(HandedOver::Http2(connection))
        .err()
        .map(|refused| refused.0)
}

/// Whether the server speaks HTTP/2 (with the feature, as configured).
#[cfg(feature = "tls")]
fn http2_enabled(config: &Config) -> bool {
    cfg!(feature = "http2") && config.http2.enabled
}

/// A served connection's slot and its place in `connections_open`, both
/// given back when dropped.
struct OpenConnection {
    pub(super) metrics: Arc<Metrics>,
    slot: SlotGuard,
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.metrics.record_connection_closed();
    }
}
