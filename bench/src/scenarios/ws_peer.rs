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
//!
//! With `--broadcast` (for `ws-broadcast`) they send every text and binary
//! message a client sends to every client connected instead, the sender
//! too, as `ringstream serve`'s `/ws/broadcast` does: through one
//! `tokio::sync::broadcast` channel of as many messages as that route's
//! ring ([`BROADCAST_HISTORY`]), which every connection's writing half
//! reads at its own pace; one that falls further behind skips the oldest
//! (the channel's `Lagged`), as the route's drop-oldest policy does. Each
//! connection reads and writes in two futures of one task (fastwebsockets'
//! split halves, a `StreamExt::split` of tokio-tungstenite's stream), and
//! each message is framed again for every client by the library.

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use fastwebsockets::{
    upgrade, Frame, FragmentCollector, FragmentCollectorRead, OpCode, Payload, WebSocketError,
};
use futures_util::{SinkExt, StreamExt};
use http::{Request, Response, StatusCode};
use http_body_util::Empty;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use ringstream_cli::app::websocket::BROADCAST_HISTORY;
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

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
    /// Send every message to every client connected instead of echoing it.
    #[arg(long)]
    pub broadcast: bool,
    /// Send buffer (SO_SNDBUF) of every connection, in bytes, as
    /// `ringstream serve --send-buffer` sets it; the kernel's by default.
    #[arg(long, value_name = "BYTES")]
    pub send_buffer: Option<u32>,
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
    let broadcast = args.broadcast;
    runtime.block_on(async move {
        let listener = match args.send_buffer {
            None => TcpListener::bind(args.addr).await?,
            Some(size) => {
                // Set on the listening socket: accepted connections
                // inherit it.
                let socket = if args.addr.is_ipv4() {
                    TcpSocket::new_v4()?
                } else {
                    TcpSocket::new_v6()?
                };
                socket.set_reuseaddr(true)?;
                socket.set_send_buffer_size(size)?;
                socket.bind(args.addr)?;
                socket.listen(1024)?
            }
        };
        // The one line on stdout: the scenarios wait for it, then close
        // the pipe.
        println!(
            "{} peer listening on ws://{}",
            implementation.name(),
            listener.local_addr()?
        );
        let (fws_hub, _) = broadcast::channel::<(OpCode, Bytes)>(BROADCAST_HISTORY);
        let (tungstenite_hub, _) = broadcast::channel::<Message>(BROADCAST_HISTORY);
        loop {
            let (socket, _) = listener.accept().await?;
            let _ = socket.set_nodelay(true);
            match (implementation, broadcast) {
                (Impl::Fastwebsockets, false) => tokio::spawn(fastwebsockets_conn(socket, None)),
                (Impl::Fastwebsockets, true) => {
                    tokio::spawn(fastwebsockets_conn(socket, Some(fws_hub.clone())))
                }
                (Impl::Tungstenite, false) => tokio::spawn(tungstenite_conn(socket)),
                (Impl::Tungstenite, true) => {
                    tokio::spawn(tungstenite_broadcast(socket, tungstenite_hub.clone()))
                }
            };
        }
    })
}

/// The broadcast channel of the fastwebsockets peer: each message's
/// opcode and payload.
type FwsHub = broadcast::Sender<(OpCode, Bytes)>;

async fn fastwebsockets_conn(socket: TcpStream, hub: Option<FwsHub>) {
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(
            TokioIo::new(socket),
            service_fn(move |req| fastwebsockets_upgrade(req, hub.clone())),
        )
        .with_upgrades()
        .await;
}

async fn fastwebsockets_upgrade(
    mut req: Request<Incoming>,
    hub: Option<FwsHub>,
) -> Result<Response<Empty<Bytes>>, Infallible> {
    match upgrade::upgrade(&mut req) {
        Ok((response, upgraded)) => {
            tokio::spawn(async move {
                let _ = match hub {
                    None => tokio::task::unconstrained(fastwebsockets_echo(upgraded)).await,
                    Some(hub) => {
                        tokio::task::unconstrained(fastwebsockets_broadcast(upgraded, hub)).await
                    }
                };
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

async fn fastwebsockets_broadcast(
    upgraded: upgrade::UpgradeFut,
    hub: FwsHub,
) -> Result<(), WebSocketError> {
    let mut subscription = hub.subscribe();
    let (read, mut write) = upgraded.await?.split(tokio::io::split);
    let mut read = FragmentCollectorRead::new(read);
    // What the reading half must answer (a Pong, the Close echoed) goes
    // out through the writing half.
    let (answer, mut answers) = mpsc::channel::<Frame<'static>>(4);
    let reading = async {
        loop {
            let mut send = |frame| {
                let answer = answer.clone();
                async move { answer.send(frame).await.map_err(|_| WebSocketError::ConnectionClosed) }
            };
            let frame = read.read_frame(&mut send).await?;
            match frame.opcode {
                OpCode::Close => return Ok(()),
                OpCode::Text | OpCode::Binary => {
                    let _ = hub.send((frame.opcode, Bytes::copy_from_slice(&frame.payload)));
                }
                _ => {}
            }
        }
    };
    let writing = async {
        loop {
            tokio::select! {
                frame = answers.recv() => match frame {
                    Some(frame) => write.write_frame(frame).await?,
                    None => return Ok(()),
                },
                message = subscription.recv() => match message {
                    Ok((opcode, data)) => {
                        let frame = Frame::new(true, opcode, None, Payload::Borrowed(&data));
                        write.write_frame(frame).await?;
                    }
                    // Skipped the oldest: go on with the oldest kept.
                    Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => return Ok(()),
                },
            }
        }
    };
    tokio::select! {
        done = reading => done,
        done = writing => done,
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

async fn tungstenite_broadcast(socket: TcpStream, hub: broadcast::Sender<Message>) {
    let mut subscription = hub.subscribe();
    let Ok(ws) = tokio_tungstenite::accept_async(socket).await else {
        return;
    };
    let (mut sink, mut stream) = ws.split();
    let reading = async {
        while let Some(Ok(message)) = stream.next().await {
            if message.is_text() || message.is_binary() {
                let _ = hub.send(message);
            }
        }
    };
    let writing = async {
        loop {
            match subscription.recv().await {
                Ok(message) => {
                    if sink.send(message).await.is_err() {
                        return;
                    }
                }
                // Skipped the oldest: go on with the oldest kept.
                Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return,
            }
        }
    };
    tokio::select! {
        () = reading => {}
        () = writing => {}
    }
}
