//! The host test harness of ringstream-embedded: embassy-net on embassy's
//! std executor, over an in-memory loopback link, with simulated time.
//!
//! - [`loopback`]: the device (lossy on demand).
//! - [`stack`]: an embassy-net stack at 127.0.0.1/8 on that device.
//! - [`advance_time`]: the clock task; embassy-time's mock driver moves
//!   only when it is told to, so TCP's timers (retransmission, delayed ACK)
//!   and the pool's deadlines run in simulated milliseconds.
//! - [`Client`]: a test client socket on the same stack.
//! - [`app`]: the handler the pool tests serve.
//! - [`http_app`]: the HTTP application the server tests serve (shared
//!   with the tokio test).
//! - [`live`]: the application of the long-lived scenarios (WebSocket,
//!   server-sent events, a 1 MiB download), over [`http_app`]'s routes.
//!
//! Embassy's executor, its task pools and the time driver are statics:
//! one test function per test binary, running its scenarios one after the
//! other inside one executor run.
#![allow(dead_code)] // Each test binary uses part of the harness.

pub mod app;
pub mod http_app;
pub mod live;
pub mod loopback;

use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::task::Poll;

use embassy_net::tcp::{ConnectError, Error as TcpError, TcpSocket};
use embassy_net::{Ipv4Address, Ipv4Cidr, Runner, Stack, StackResources, StaticConfigV4};
use embassy_time::{Duration, MockDriver};

use loopback::{Link, Loopback};

/// The stack's own address; clients connect to it.
pub const ADDRESS: Ipv4Address = Ipv4Address::new(127, 0, 0, 1);

/// An embassy-net stack on a loopback device, with room for `SOCKETS`
/// sockets (server and client sockets together). The resources are
/// leaked: they live as long as the test binary.
pub fn stack<const SOCKETS: usize>() -> (Stack<'static>, Runner<'static, Loopback>, Link) {
    let (device, link) = loopback::loopback();
    let config = embassy_net::Config::ipv4_static(StaticConfigV4 {
        address: Ipv4Cidr::new(ADDRESS, 8),
        gateway: None,
        dns_servers: Default::default(),
    });
    let resources = Box::leak(Box::new(StackResources::<SOCKETS>::new()));
    let (stack, runner) = embassy_net::new(device, config, resources, 0x5eed);
    (stack, runner, link)
}

/// Advances simulated time by 1 ms per executor pass, for ever. It keeps
/// the executor busy, so run it only inside a test that ends.
pub async fn advance_time() -> ! {
    loop {
        MockDriver::get().advance(Duration::from_millis(1));
        yield_now().await;
    }
}

/// Lets every other ready task run once.
pub async fn yield_now() {
    let mut yielded = false;
    poll_fn(|cx| {
        if yielded {
            Poll::Ready(())
        } else {
            yielded = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    })
    .await
}

/// Runs `futures` concurrently and returns their outputs in order.
pub async fn join_all<'a, T>(mut futures: Vec<Pin<Box<dyn Future<Output = T> + 'a>>>) -> Vec<T> {
    let mut outputs: Vec<Option<T>> = futures.iter().map(|_| None).collect();
    poll_fn(|cx| {
        let mut pending = false;
        for (future, output) in futures.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match future.as_mut().poll(cx) {
                    Poll::Ready(value) => *output = Some(value),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

/// Runs two futures concurrently and returns both outputs.
pub async fn join<A, B>(a: impl Future<Output = A>, b: impl Future<Output = B>) -> (A, B) {
    let (mut a, mut b) = (Box::pin(a), Box::pin(b));
    let (mut ra, mut rb) = (None, None);
    poll_fn(|cx| {
        if ra.is_none() {
            if let Poll::Ready(v) = a.as_mut().poll(cx) {
                ra = Some(v);
            }
        }
        if rb.is_none() {
            if let Poll::Ready(v) = b.as_mut().poll(cx) {
                rb = Some(v);
            }
        }
        if ra.is_some() && rb.is_some() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
    match (ra, rb) {
        (Some(a), Some(b)) => (a, b),
        _ => unreachable!("both are ready"),
    }
}

/// Why a client's exchange failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// `connect` failed: with `ConnectionReset`, the server refused it.
    Connect(ConnectError),
    /// Reading or writing failed after the connection was made.
    Io(TcpError),
}

/// Receive buffer of a test client, in bytes.
pub const CLIENT_RX: usize = 4096;
/// Transmit buffer of a test client, in bytes.
pub const CLIENT_TX: usize = 1024;

/// The buffers of a test client; [`Client::socket`] makes its socket.
pub struct Client {
    rx: Vec<u8>,
    tx: Vec<u8>,
}

impl Client {
    pub fn new() -> Self {
        Client {
            rx: vec![0; CLIENT_RX],
            tx: vec![0; CLIENT_TX],
        }
    }

    /// A socket on `stack` over this client's buffers.
    pub fn socket<'a>(&'a mut self, stack: Stack<'a>) -> TcpSocket<'a> {
        TcpSocket::new(stack, &mut self.rx, &mut self.tx)
    }
}

/// Connects to `port` on the stack's own address.
pub async fn connect(socket: &mut TcpSocket<'_>, port: u16) -> Result<(), Failure> {
    socket
        .connect((ADDRESS, port))
        .await
        .map_err(Failure::Connect)
}

/// Sends `request`, reads the whole response (until the server closes),
/// then closes this side too.
pub async fn exchange(socket: &mut TcpSocket<'_>, request: &[u8]) -> Result<Vec<u8>, Failure> {
    use embedded_io_async::Write as _;
    socket.write_all(request).await.map_err(Failure::Io)?;
    socket.flush().await.map_err(Failure::Io)?;
    let mut response = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        match socket.read(&mut buf).await.map_err(Failure::Io)? {
            0 => break,
            n => response.extend_from_slice(&buf[..n]),
        }
    }
    socket.close();
    socket.flush().await.map_err(Failure::Io)?;
    Ok(response)
}

/// Connects to `port`, sends `request` and returns the whole response.
pub async fn request(stack: Stack<'_>, port: u16, request: &[u8]) -> Result<Vec<u8>, Failure> {
    let mut client = Client::new();
    let mut socket = client.socket(stack);
    connect(&mut socket, port).await?;
    exchange(&mut socket, request).await
}
