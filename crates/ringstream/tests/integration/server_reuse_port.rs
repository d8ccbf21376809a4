//! Listeners that share one port (`SO_REUSEPORT`, Linux): each served on a
//! thread and runtime of its own, as one server per core; both accept and
//! serve connections, their counters add up when shared, and when one
//! stops the other takes every new connection.
#![cfg(target_os = "linux")]

use std::convert::Infallible;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;

use ringstream::server::{service_fn, Metrics, Server};
use ringstream::{Error, Incoming};
use tokio::sync::oneshot;

/// One listener on its own thread and current-thread runtime, answering
/// every request with `name`.
struct Listener {
    addr: SocketAddr,
    stop: oneshot::Sender<()>,
    thread: JoinHandle<Result<(), Error>>,
}

impl Listener {
    /// Binds `addr` with `SO_REUSEPORT` and serves until stopped.
    fn start(name: &'static str, addr: SocketAddr, metrics: Arc<Metrics>) -> Listener {
        let (bound, bound_at) = mpsc::channel();
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let server = match Server::bind_reuse_port(addr).await {
                    Ok(server) => server.with_metrics(metrics),
                    Err(e) => {
                        bound.send(None).unwrap();
                        return Err(e);
                    }
                };
                bound.send(Some(server.local_addr()?)).unwrap();
                server
                    .serve(service_fn(
                        move |_req: http::Request<Incoming>| async move {
                            Ok::<_, Infallible>(http::Response::new(String::from(name)))
                        },
                    ))
                    .with_graceful_shutdown(async move {
                        let _ = stopped.await;
                    })
                    .await
            })
        });
        let addr = bound_at.recv().unwrap().expect("bind with SO_REUSEPORT");
        Listener { addr, stop, thread }
    }

    /// Stops it gracefully and waits until its thread has ended.
    fn stop(self) {
        let _ = self.stop.send(());
        self.thread.join().unwrap().unwrap();
    }
}

/// Which listener answers one request on a new connection.
fn served_by(addr: SocketAddr) -> String {
    let mut conn = TcpStream::connect(addr).unwrap();
    conn.write_all(b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut response = String::new();
    conn.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    let (_, body) = response.split_once("\r\n\r\n").unwrap();
    body.to_owned()
}

#[test]
fn two_listeners_share_a_port_and_both_serve() {
    let metrics = Arc::new(Metrics::default());
    let a = Listener::start("a", "127.0.0.1:0".parse().unwrap(), metrics.clone());
    let b = Listener::start("b", a.addr, metrics.clone());
    assert_eq!(a.addr, b.addr);

    // A listener without the option cannot join them.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let taken = runtime.block_on(Server::bind(a.addr)).unwrap_err();
    assert!(
        matches!(&taken, Error::Io(e) if e.kind() == std::io::ErrorKind::AddrInUse),
        "{taken:?}"
    );

    // The kernel spreads connections by a hash of their addresses: of 64
    // (each from a port of its own), both listeners get some.
    let mut by = std::collections::HashMap::new();
    for _ in 0..64 {
        *by.entry(served_by(a.addr)).or_insert(0) += 1;
    }
    assert_eq!(by.len(), 2, "served by {by:?}");
    assert_eq!(by["a"] + by["b"], 64);
    // One set of counters for both.
    assert_eq!(metrics.requests(), 64);
    assert_eq!(metrics.connections_accepted(), 64);

    // Once one stops, the other takes every new connection.
    let addr = a.addr;
    a.stop();
    for _ in 0..16 {
        assert_eq!(served_by(addr), "b");
    }
    b.stop();
    assert_eq!(metrics.requests(), 80);
    assert_eq!(metrics.connections_open(), 0);
}
