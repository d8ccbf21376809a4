//! `ws-peer`: run a WebSocket echo server built on another library (used
//! by the `ws-*` scenarios), written as that library's own echo example
//! does it:
//!
//! - `fastwebsockets`: hyper 1.x serves the HTTP/1.1 connection, and
//!   `fastwebsockets::upgrade` answers the upgrade and hands over the
//!   socket; each message is read whole through a `FragmentCollector` and
//!   written back from the read buffer (the crate's `echo_server` example,
//!   run `unconstrained` as there);
//! - `tungstenite`: `tokio_tungstenite::accept_async` on the accepted
//!   socket, then every text or binary message is sent back.
//!
//! Both upgrade on any path and echo every text and binary message; pings
//! and close frames are answered by the libraries themselves.

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use fastwebsockets::{upgrade, FragmentCollector, OpCode, WebSocketError};
use futures_util::{SinkExt, StreamExt};
use http::{Request, Response, StatusCode};
use http_body_util::Empty;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};

/// The WebSocket library a peer is built on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Impl {
    /// fastwebsockets 0.10 over hyper 1.x.
    Fastwebsockets,
    /// tokio-tungstenite 0.30.
    Tungstenite,
}

impl Impl {
    /// The name used on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            Impl::Fastwebsockets => "fastwebsockets",
            Impl::Tungstenite => "tungstenite",
        }
    }
}

/// Flags of `ws-peer`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The library to serve with.
    #[arg(long = "impl", value_enum)]
    pub implementation: Impl,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8082")]
    pub addr: SocketAddr,
    /// Worker threads of the tokio runtime (a multi-thread runtime, as
    /// `ringstream serve` and `hyper-peer` use); 0 for a current-thread
    /// runtime.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
}

/// Serve until killed.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let runtime = if args.workers == 0 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(args.workers)
            .enable_all()
            .build()?
    };
    let implementation = args.implementation;
    runtime.block_on(async move {
        let listener = TcpListener::bind(args.addr).await?;
        // The one line on stdout: the scenarios wait for it, then close
        // the pipe.
        println!(
            "{} peer listening on ws://{}",
            implementation.name(),
            listener.local_addr()?
        );
        loop {
            let (socket, _) = listener.accept().await?;
            let _ = socket.set_nodelay(true);
            match implementation {
                Impl::Fastwebsockets => tokio::spawn(fastwebsockets_conn(socket)),
                Impl::Tungstenite => tokio::spawn(tungstenite_conn(socket)),
            };
        }
    })
}

async fn fastwebsockets_conn(socket: TcpStream) {
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(socket), service_fn(fastwebsockets_upgrade))
        .with_upgrades()
        .await;
}

async fn fastwebsockets_upgrade(
    mut req: Request<Incoming>,
) -> Result<Response<Empty<Bytes>>, Infallible> {
    match upgrade::upgrade(&mut req) {
        Ok((response, upgraded)) => {
            tokio::spawn(async move {
                let _ = tokio::task::unconstrained(fastwebsockets_echo(upgraded)).await;
            });
            Ok(response)
        }
        Err(_) => {
            let mut response = Response::new(Empty::new());
            *response.status_mut() = StatusCode::BAD_REQUEST;
            Ok(response)
        }
    }
}

async fn fastwebsockets_echo(upgraded: upgrade::UpgradeFut) -> Result<(), WebSocketError> {
    let mut ws = FragmentCollector::new(upgraded.await?);
    loop {
        let frame = ws.read_frame().await?;
        match frame.opcode {
            OpCode::Close => return Ok(()),
            OpCode::Text | OpCode::Binary => ws.write_frame(frame).await?,
            _ => {}
        }
    }
}

async fn tungstenite_conn(socket: TcpStream) {
    let Ok(mut ws) = tokio_tungstenite::accept_async(socket).await else {
        return;
    };
    while let Some(Ok(message)) = ws.next().await {
        if (message.is_text() || message.is_binary()) && ws.send(message).await.is_err() {
            return;
        }
    }
}
