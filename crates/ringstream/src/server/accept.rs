//! The accept loop: each connection in a task of its own, admitted by
//! [`Admission`], and the graceful shutdown.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use super::accepted::{ConnectionContext, HandedOver};
use super::admit::{Admission, Throttle};
use super::bind::Server;
use super::listener::Listener;
use super::make::MakeService;
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
    let (handed_over, mut held) = mpsc::unbounded_channel::<HandedOver>();
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
            Some(handed) = held.recv() => {
                handed.spawn_on(&mut tasks);
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
        let context: ConnectionContext<M> = ConnectionContext {
            service,
            config: config.clone(),
            metrics: metrics.clone(),
            stopped: stopped.clone(),
            handed_over: handed_over.clone(),
            #[cfg(feature = "tls")]
            tls: tls.clone(),
        };
        admission.admit(socket, info, context, &mut tasks);
    }
    drop(listener);
    // Not ready any more (a readiness probe reads the drain), and every
    // response from now on asks its client to go.
    config.drain.start();
    let _ = stop.send(true);
    // An idle connection waits on its slot's waker alone (a waiter on the
    // channel for each would cost every connection an allocation).
    admission.wake_all();
    drop(handed_over);
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

/// Lets the connections finish within `grace` (upgraded ones included:
/// their holds still arrive on `held`), then closes the rest.
async fn finish(
    mut tasks: JoinSet<()>,
    mut held: mpsc::UnboundedReceiver<HandedOver>,
    grace: Duration,
) {
    let drained = tokio::time::timeout(grace, async {
        loop {
            tokio::select! {
                Some(handed) = held.recv() => {
                    handed.spawn_on(&mut tasks);
                }
                joined = tasks.join_next() => match joined {
                    Some(joined) => log_panic(joined),
                    None => match held.recv().await {
                        // A connection task handed its hold over just now.
                        Some(handed) => {
                            handed.spawn_on(&mut tasks);
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
