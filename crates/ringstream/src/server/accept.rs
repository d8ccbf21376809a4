//! The accept loop: each connection in a task of its own, admitted by
//! [`Admission`], and the graceful shutdown.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use super::admit::{Admission, Throttle};
use super::connection::{Connection, ConnectionEnd};
use super::counted::Counted;
use super::slots::SlotGuard;
use super::upgrade::UpgradedGuard;
use super::{Config, ConnectionInfo, Listener, MakeService, Metrics, Server};
use crate::error::Error;

/// Accepts and serves until `signal`, then shuts down gracefully; `make`
/// makes each connection's service.
pub(super) async fn run<L, M, F>(server: Server<L>, mut make: M, signal: F) -> Result<(), Error>
where
    L: Listener,
    M: MakeService,
    F: Future<Output = ()>,
{
    let Server {
        mut listener,
        config,
        metrics,
        #[cfg(feature = "tls")]
        tls,
    } = server;
    let config = Arc::new(config);
    if let Err(e) = listener.set_backlog(config.listen_backlog) {
        let backlog = config.listen_backlog;
        tracing::warn!(error = %e, backlog, "could not set the listen backlog");
    }
    let mut admission = Admission::new(&config);
    let (stop, stopped) = watch::channel(false);
    let mut tasks = JoinSet::new();
    let (upgraded, mut held) = mpsc::unbounded_channel::<UpgradedSlot>();
    let mut signal = std::pin::pin!(signal);
    let mut accept_errors = Throttle::default();
    loop {
        let accepted = tokio::select! {
            biased;
            () = &mut signal => break,
            Some(joined) = tasks.join_next(), if !tasks.is_empty() => {
                log_panic(joined);
                continue;
            }
            Some(upgraded) = held.recv() => {
                tasks.spawn(upgraded.keep());
                continue;
            }
            accepted = listener.accept() => accepted,
        };
        let (socket, info) = match accepted {
            Ok(a) => a,
            Err(e) => {
                if let Some(suppressed) = accept_errors.due() {
                    tracing::warn!(error = %e, suppressed, "accept failed");
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Some(service) = make.make_service(&info) else {
            tracing::error!(remote = %info.remote_addr(), "no service made for the connection: closed");
            continue;
        };
        let parts: ConnectionContext<M> = ConnectionContext {
            service,
            config: config.clone(),
            metrics: metrics.clone(),
            stopped: stopped.clone(),
            upgraded: upgraded.clone(),
            #[cfg(feature = "tls")]
            tls: tls.clone(),
        };
        admission.admit(socket, info, parts, &mut tasks);
    }
    drop(listener);
    let _ = stop.send(true);
    // An idle connection waits on its slot's waker alone (a waiter on the
    // channel for each would cost every connection an allocation).
    admission.wake_all();
    drop(upgraded);
    finish(tasks, held, config.shutdown_timeout).await;
    Ok(())
}

fn log_panic(joined: Result<(), tokio::task::JoinError>) {
    if let Err(e) = joined {
        if e.is_panic() {
            tracing::error!("connection task panicked");
        }
    }
}

/// An upgraded connection's hold on its slot, kept by a task of its own
/// once the connection's task has ended: a few words instead of the whole
/// HTTP connection's state.
pub(super) struct UpgradedSlot {
    hold: UpgradedGuard,
    _open: OpenConnection,
}

impl UpgradedSlot {
    /// Keeps the slot until the service drops the upgraded connection.
    async fn keep(mut self) {
        self.hold.released().await;
    }
}

/// What every connection of a server shares, and its own service.
pub(super) struct ConnectionContext<M: MakeService> {
    service: M::Service,
    config: Arc<Config>,
    pub(super) metrics: Arc<Metrics>,
    stopped: watch::Receiver<bool>,
    /// Where an upgraded connection's hold goes, to be kept by a task of
    /// the server's.
    upgraded: mpsc::UnboundedSender<UpgradedSlot>,
    /// The TLS handshake every connection starts with, if any.
    #[cfg(feature = "tls")]
    tls: Option<Arc<super::tls::Acceptor>>,
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
    parts: ConnectionContext<M>,
    taken: SlotGuard,
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
        } = parts;
        metrics.record_connection_opened();
        let slot = taken.slot();
        // Counted closed however the task ends: at its end, aborted at the
        // shutdown deadline, or unwound by a panicking service.
        let open = OpenConnection {
            metrics: metrics.clone(),
            _slot: taken,
        };
        #[cfg(feature = "tls")]
        let socket = match tls {
            // The connection's slot is held through the handshake, under
            // its own deadline. Boxed: its future, larger than a served
            // connection's, would otherwise size every connection's task.
            Some(tls) => match Box::pin(tls.accept(socket, &metrics)).await {
                Some(tls) => super::tls::Transport::Tls(tls),
                None => return,
            },
            None => super::tls::Transport::Plain(socket),
        };
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
                if let Some(hold) = conn.hand_over(pending) {
                    if let Err(refused) = upgraded.send(UpgradedSlot { hold, _open: open }) {
                        // The server is past its shutdown: keep it here.
                        refused.0.keep().await;
                    }
                }
            }
            Err(e) => tracing::debug!(error = %e, "connection ended with an error"),
        }
    }
}

/// A served connection's slot and its place in `connections_open`, both
/// given back when dropped.
struct OpenConnection {
    pub(super) metrics: Arc<Metrics>,
    _slot: SlotGuard,
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.metrics.record_connection_closed();
    }
}

/// Lets the connections finish within `grace` (upgraded ones included:
/// their holds still arrive on `held`), then closes the rest.
async fn finish(
    mut tasks: JoinSet<()>,
    mut held: mpsc::UnboundedReceiver<UpgradedSlot>,
    grace: Duration,
) {
    let drained = tokio::time::timeout(grace, async {
        loop {
            tokio::select! {
                Some(upgraded) = held.recv() => {
                    tasks.spawn(upgraded.keep());
                }
                joined = tasks.join_next() => match joined {
                    Some(joined) => log_panic(joined),
                    None => match held.recv().await {
                        // A connection task handed its hold over just now.
                        Some(upgraded) => {
                            tasks.spawn(upgraded.keep());
                        }
                        None => break,
                    },
                },
            }
        }
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            open = tasks.len(),
            "shutdown deadline passed; closing connections"
        );
        tasks.shutdown().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::{TcpListener, TcpStream};

    /// How many of `n` clients complete a connect to `listener` (which
    /// accepts none) within 300 ms each.
    async fn connected(listener: &TcpListener, n: usize) -> (usize, Vec<TcpStream>) {
        let addr = listener.local_addr().unwrap();
        let mut open = Vec::new();
        for _ in 0..n {
            let connect = TcpStream::connect(addr);
            if let Ok(Ok(socket)) = tokio::time::timeout(Duration::from_millis(300), connect).await
            {
                open.push(socket);
            }
        }
        (open.len(), open)
    }

    /// Linux drops a SYN when the accept queue is full: with a backlog of
    /// one, most of the clients cannot connect; with 64, all can.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn the_backlog_of_a_listening_socket_is_changed() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        listener.set_backlog(1).unwrap();
        let (small, _held) = connected(&listener, 12).await;
        assert!(small < 12, "{small} of 12 connected with a backlog of 1");

        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        listener.set_backlog(1).unwrap();
        listener.set_backlog(64).unwrap();
        let (large, _held) = connected(&listener, 12).await;
        assert_eq!(large, 12);
    }
}
