//! The task of one accepted connection: its TLS handshake, the connection
//! served, and its slot given back (or kept for an upgraded connection).

use std::future::Future;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, watch};

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

/// What every connection of a server shares, and its own service.
pub(super) struct ConnectionContext<M: MakeService> {
    pub(super) service: M::Service,
    pub(super) config: Arc<Config>,
    pub(super) metrics: Arc<Metrics>,
    pub(super) stopped: watch::Receiver<bool>,
    /// Where an upgraded connection's hold goes, to be kept by a task of
    /// the server's.
    pub(super) upgraded: mpsc::UnboundedSender<UpgradedSlot>,
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
            upgraded,
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
            // Boxed: only an HTTP/2 connection pays for its state.
            if let Err(e) = Box::pin(super::h2::serve_http2(io, http2)).await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            drop(open);
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
                    if let Err(refused) = upgraded.send(UpgradedSlot { guard, _open: open }) {
                        // The server is past its shutdown: keep it here.
                        refused.0.keep().await;
                    }
                }
            }
            #[cfg(feature = "http2")]
            Ok(ConnectionEnd::Http2) => {
                let (io, http2) = conn.into_http2();
                // Boxed: only an HTTP/2 connection pays for its state.
                if let Err(e) = Box::pin(super::h2::serve_http2(io, http2)).await {
                    tracing::debug!(error = %e, "connection ended with an error");
                }
            }
            Err(e) => tracing::debug!(error = %e, "connection ended with an error"),
        }
    }
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
