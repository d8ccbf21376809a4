//! `h2-peer`: run an HTTP/2 server of the demo's `/bytes/{n}` route (used
//! by `h2`), on ringstream or on hyper, over h2c (HTTP/2 by prior
//! knowledge on a plain port) or, given PEM files, over TLS (ALPN `h2`).
//!
//! - `ringstream`: [`Server::bind`](ringstream::server::Server::bind)
//!   (with [`Server::tls`](ringstream::server::Server::tls) for TLS)
//!   serving the demo application as `ringstream serve --no-access-log`
//!   does, with its HTTP/2 defaults ([`Http2Options`](ringstream::server::Http2Options):
//!   100 concurrent streams, a 256 KiB stream window and a 1 MiB
//!   connection window, given back as the service reads, 16 KiB frames, a
//!   keep-alive PING after 20 s without a frame), `--max-connections`
//!   connections (4,096) and no limit on the request body's size;
//! - `hyper`: `hyper::server::conn::http2::Builder` on hyper-util's
//!   `TokioExecutor`, with hyper's defaults (200 concurrent streams, 1 MiB
//!   stream and connection windows, no adaptive window, 16 KiB frames, a
//!   400 KiB send buffer per stream, no keep-alive PING), serving the
//!   handler of `tls-peer`'s hyper peer; over TLS behind a
//!   `tokio_rustls::TlsAcceptor` configured as `tls-peer`'s (aws-lc-rs,
//!   TLS 1.2 and 1.3, session tickets) but offering ALPN `h2` alone, as
//!   an HTTP/2-only hyper server does;
//! - `h2`: the `h2` crate's server alone, with its defaults, each stream
//!   answered at once (h2c only): the floor under both others,
//!   which the idle case measures beside them.
//!
//! Both run in this binary, so they link the same rustls, h2 and
//! allocator. With `--slow-upload RATE`, `POST /upload` of both reads its
//! body in pieces of at most 16 KiB, waiting between pieces so as to read
//! no more than RATE bytes a second, and answers `{"bytes":N}`: a service
//! slower than its client, for the memory the server then holds. With
//! `--heap-route`, `GET /heap` answers the bytes the process has allocated
//! and not freed.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::BodyExt;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use ringstream::server::tls::TlsConfig;
use ringstream::server::{Config, Metrics, Server};
use ringstream::Incoming;
use ringstream_cli::app::{App, AppBody};
use tokio::net::TcpListener;
use tokio::time::Instant;

use super::tls_peer::{hyper_answer, hyper_tls_config};

/// The largest piece the slow upload service reads at once.
pub const PIECE: usize = 16 * 1024;

/// The servers `h2-peer` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum H2Impl {
    /// ringstream's server.
    Ringstream,
    /// hyper 1.x's HTTP/2 server.
    Hyper,
    /// The `h2` crate's server alone.
    H2,
}

impl H2Impl {
    /// The name used on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            H2Impl::Ringstream => "ringstream",
            H2Impl::Hyper => "hyper",
            H2Impl::H2 => "h2",
        }
    }
}

/// Flags of `h2-peer`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The server to run.
    #[arg(long = "impl", value_enum)]
    pub implementation: H2Impl,
    /// Certificate chain, PEM: serve over TLS (with `--key`) instead of
    /// h2c.
    #[arg(long, value_name = "FILE", requires = "key")]
    pub cert: Option<PathBuf>,
    /// Private key, PEM.
    #[arg(long, value_name = "FILE", requires = "cert")]
    pub key: Option<PathBuf>,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8443")]
    pub addr: SocketAddr,
    /// Worker threads of the (multi-thread) tokio runtime.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// Connections ringstream serves at once (`Config::max_connections`).
    #[arg(long, default_value_t = 4096)]
    pub max_connections: usize,
    /// Have `POST /upload` read its body at this many bytes a second at
    /// most, in pieces of 16 KiB at most (e.g. 200MB).
    #[arg(long, value_name = "RATE", value_parser = super::parse_size)]
    pub slow_upload: Option<usize>,
    /// Answer `GET /heap` with the bytes the process has allocated and not
    /// freed (this binary's counting allocator): the heap, which unlike
    /// the RSS counts untouched pages of large buffers too.
    #[arg(long)]
    pub heap_route: bool,
}

/// Serve until killed.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.workers.max(1))
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        match args.implementation {
            H2Impl::Ringstream => ringstream_peer(args).await,
            H2Impl::Hyper => hyper_peer(args).await,
            H2Impl::H2 => h2_peer(args).await,
        }
    })
}

/// The one line on stdout: the scenario waits for it, then closes the pipe.
fn announce(args: &Args, addr: SocketAddr) {
    let scheme = if args.cert.is_some() { "https" } else { "http" };
    println!(
        "{} HTTP/2 peer listening on {scheme}://{addr}",
        args.implementation.name()
    );
}

async fn ringstream_peer(args: &Args) -> anyhow::Result<()> {
    let mut server = Server::bind(args.addr).await?;
    if let (Some(cert), Some(key)) = (&args.cert, &args.key) {
        let tls = TlsConfig::from_pem_files(cert, key).context("reading the certificate")?;
        server = server.tls(tls);
    }
    // `ringstream serve`'s configuration (see its `config`): no access
    // log, no connection info asked for; HTTP/2 on by default.
    let mut config = Config {
        max_connections: args.max_connections,
        access_log: false,
        connection_info: false,
        ..Config::default()
    };
    config.limits.max_body_len = u64::MAX;
    let app = App::new(server.metrics());
    announce(args, server.local_addr()?);
    // The demo as it is, unless a route of this peer's own is asked for.
    if args.slow_upload.is_none() && !args.heap_route {
        server.serve(app).with_config(config).await?;
        return Ok(());
    }
    let (slow, heap_route) = (args.slow_upload, args.heap_route);
    let service = ringstream::server::service_fn(move |req: Request<Incoming>| {
        let app = app.clone();
        async move {
            Ok::<_, Infallible>(match slow {
                Some(rate) if is_upload(&req) => {
                    slow_upload_ringstream(req.into_body(), rate).await
                }
                _ if heap_route && is_heap(&req) => heap_answer(),
                _ => app.handle(req).await,
            })
        }
    });
    server.serve(service).with_config(config).await?;
    Ok(())
}

async fn hyper_peer(args: &Args) -> anyhow::Result<()> {
    let acceptor = match (&args.cert, &args.key) {
        (Some(cert), Some(key)) => Some(tokio_rustls::TlsAcceptor::from(Arc::new(
            hyper_tls_config(cert, key, &[b"h2"]).context("reading the certificate")?,
        ))),
        _ => None,
    };
    let listener = TcpListener::bind(args.addr).await?;
    announce(args, listener.local_addr()?);
    let last_page = Arc::new(AtomicUsize::new(0));
    let app = App::new(Arc::new(Metrics::default()));
    let (slow, heap_route) = (args.slow_upload, args.heap_route);
    loop {
        let (socket, _) = listener.accept().await?;
        let _ = socket.set_nodelay(true);
        let (last_page, app) = (last_page.clone(), app.clone());
        match acceptor.clone() {
            None => tokio::spawn(hyper_conn(socket, last_page, app, slow, heap_route)),
            Some(acceptor) => tokio::spawn(async move {
                if let Ok(tls) = acceptor.accept(socket).await {
                    hyper_conn(tls, last_page, app, slow, heap_route).await;
                }
            }),
        };
    }
}

/// One HTTP/2 connection of the hyper peer, with hyper's defaults.
async fn hyper_conn<I>(
    io: I,
    last_page: Arc<AtomicUsize>,
    app: App,
    slow: Option<usize>,
    heap_route: bool,
) where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = service_fn(move |req: Request<hyper::body::Incoming>| {
        let (last_page, app) = (last_page.clone(), app.clone());
        async move {
            match slow {
                Some(rate) if is_upload(&req) => {
                    Ok::<_, Infallible>(slow_upload_hyper(req.into_body(), rate).await)
                }
                _ if heap_route && is_heap(&req) => Ok(heap_answer()),
                _ => hyper_answer(req, last_page, app).await,
            }
        }
    });
    let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
        .serve_connection(TokioIo::new(io), service)
        .await;
}

/// The `h2` crate's server alone, over h2c: every stream answered as it
/// is taken, `GET /bytes/{n}` with the demo's bytes, `GET /heap` with the
/// live heap, anything else with nothing.
async fn h2_peer(args: &Args) -> anyhow::Result<()> {
    anyhow::ensure!(args.cert.is_none(), "the h2 peer serves h2c only");
    let listener = TcpListener::bind(args.addr).await?;
    announce(args, listener.local_addr()?);
    loop {
        let (socket, _) = listener.accept().await?;
        let _ = socket.set_nodelay(true);
        tokio::spawn(async move {
            let Ok(mut conn) = h2::server::handshake(socket).await else {
                return;
            };
            while let Some(Ok((request, mut respond))) = conn.accept().await {
                let body = if is_heap(&request) {
                    Bytes::from(crate::alloc::snapshot().live_heap.to_string())
                } else {
                    let path = request.uri().path();
                    Bytes::from(crate::tlsclient::expected_body(path).unwrap_or_default())
                };
                if let Ok(mut send) = respond.send_response(Response::new(()), false) {
                    let _ = send.send_data(body, true);
                }
            }
        });
    }
}

fn is_upload<B>(req: &Request<B>) -> bool {
    req.method() == Method::POST && req.uri().path() == "/upload"
}

fn is_heap<B>(req: &Request<B>) -> bool {
    req.method() == Method::GET && req.uri().path() == "/heap"
}

/// `GET /heap`'s answer: the live heap, in bytes, in decimal.
fn heap_answer() -> Response<AppBody> {
    let live = crate::alloc::snapshot().live_heap;
    Response::new(AppBody::Full(Some(Bytes::from(live.to_string()))))
}

/// Paces a reader to `rate` bytes a second from its first read.
struct Pace {
    start: Instant,
    rate: f64,
}

impl Pace {
    fn new(rate: usize) -> Pace {
        Pace {
            start: Instant::now(),
            rate: rate.max(1) as f64,
        }
    }

    /// Waits until reading `total` bytes so far keeps to the rate (no
    /// wait under a millisecond, the timer's resolution).
    async fn after(&self, total: u64) {
        let due = self.start + Duration::from_secs_f64(total as f64 / self.rate);
        if due > Instant::now() + Duration::from_millis(1) {
            tokio::time::sleep_until(due).await;
        }
    }
}

/// The slow upload's answer: `{"bytes":N}`, or 400 when the body failed.
fn upload_answer(total: Option<u64>) -> Response<AppBody> {
    let Some(total) = total else {
        let mut r = Response::new(AppBody::Full(Some(Bytes::from_static(b"upload failed\n"))));
        *r.status_mut() = StatusCode::BAD_REQUEST;
        return r;
    };
    let mut r = Response::new(AppBody::Full(Some(Bytes::from(format!(
        "{{\"bytes\":{total}}}\n"
    )))));
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    r
}

/// Reads ringstream's request body slowly: `read_partial` of 16 KiB at
/// most, paced.
async fn slow_upload_ringstream(mut body: Incoming, rate: usize) -> Response<AppBody> {
    let pace = Pace::new(rate);
    let mut total = 0u64;
    loop {
        match body.read_partial(PIECE).await {
            Ok(Some(piece)) => {
                total += piece.len() as u64;
                pace.after(total).await;
            }
            Ok(None) => return upload_answer(Some(total)),
            Err(_) => return upload_answer(None),
        }
    }
}

/// Reads hyper's request body slowly: one frame at a time (a DATA frame
/// carries 16 KiB at most, hyper's and the client's frame size), paced.
async fn slow_upload_hyper(mut body: hyper::body::Incoming, rate: usize) -> Response<AppBody> {
    let pace = Pace::new(rate);
    let mut total = 0u64;
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(frame) => {
                if let Ok(data) = frame.into_data() {
                    total += data.len() as u64;
                    pace.after(total).await;
                }
            }
            Err(_) => return upload_answer(None),
        }
    }
    upload_answer(Some(total))
}
