//! [`Drain`]: taking a server out of a load balancer's rotation before it
//! stops, and the state a readiness probe reports.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::sync::Notify;

/// A server's drain: once [`start`](Self::start)ed, the server goes on
/// serving every request it gets, but asks its clients to go elsewhere —
/// each HTTP/1.1 response says `Connection: close`, each HTTP/2
/// connection gets GOAWAY — and [`is_draining`](Self::is_draining) says so,
/// for a readiness probe (a `/readyz` that answers `503` now, so the
/// balancer stops sending traffic). A graceful shutdown starts the drain
/// too. The usual sequence on SIGTERM: start the drain, wait a few seconds
/// (the balancer's health-check interval times its failure count), then
/// shut down gracefully.
///
/// Clones share one state: [`Serve::drain`](super::Serve::drain) gives
/// the server's.
///
/// # Examples
///
/// ```
/// use std::convert::Infallible;
/// use ringstream::server::{self, service_fn};
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// let addr = listener.local_addr().unwrap();
/// let serve = server::serve(listener, service_fn(|_req: http::Request<ringstream::Incoming>| async {
///     Ok::<_, Infallible>(http::Response::new(String::from("hi")))
/// }));
/// let drain = serve.drain();
/// tokio::spawn(serve);
///
/// drain.start();
/// assert!(drain.is_draining());
/// // Still served, but told to go.
/// let mut client = tokio::net::TcpStream::connect(addr).await.unwrap();
/// client.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
/// let mut response = String::new();
/// client.read_to_string(&mut response).await.unwrap();
/// assert!(response.starts_with("HTTP/1.1 200 OK\r\n"));
/// assert!(response.contains("\r\nconnection: close\r\n"));
/// # });
/// ```
#[derive(Debug, Clone, Default)]
pub struct Drain {
    inner: Arc<DrainState>,
}

#[derive(Debug, Default)]
struct DrainState {
    draining: AtomicBool,
    started: Arc<Notify>,
}

impl Drain {
    /// A drain not started.
    pub fn new() -> Drain {
        Drain::default()
    }

    /// Starts the drain (again: nothing more happens).
    pub fn start(&self) {
        if !self.inner.draining.swap(true, Ordering::AcqRel) {
            self.inner.started.notify_waiters();
        }
    }

    /// Whether the drain has started (or the server is shutting down).
    pub fn is_draining(&self) -> bool {
        self.inner.draining.load(Ordering::Acquire)
    }

    /// Completes once the drain starts, owning what it waits on (a
    /// connection's future keeps it in place). A start before it was made
    /// is not heard: made first, then [`is_draining`](Self::is_draining)
    /// read, it misses none.
    #[cfg(any(feature = "http2", test))]
    pub(crate) fn started(&self) -> tokio::sync::futures::OwnedNotified {
        self.inner.started.clone().notified_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_waiter_hears_the_start_once_and_clones_share_it() {
        let drain = Drain::new();
        let waiter = drain.clone();
        let waiting = tokio::spawn(async move {
            let started = waiter.started();
            if !waiter.is_draining() {
                started.await;
            }
        });
        tokio::task::yield_now().await;
        assert!(!drain.is_draining());
        drain.start();
        drain.start();
        waiting.await.unwrap();
        // Started before: said by `is_draining`, not heard again.
        assert!(drain.is_draining());
    }
}
