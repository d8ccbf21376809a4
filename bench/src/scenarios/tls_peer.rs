//! `tls-peer`: run an HTTPS server of the demo's `/bytes/{n}` route (used
//! by `https`), on ringstream or on hyper with tokio-rustls, from PEM files.
//!
//! - `ringstream`: [`Server::tls`](ringstream::server::Server::tls) with a
//!   [`TlsConfig`] read from the files, serving the demo application as
//!   `ringstream serve` does (its defaults, no access log), on a
//!   multi-thread runtime of `--workers` threads;
//! - `hyper`: the hyper peer of `http` (the same handler, plus a `Server`
//!   header as ringstream sends one), behind a
//!   `tokio_rustls::TlsAcceptor` on a rustls `ServerConfig` built as
//!   ringstream builds its own: the aws-lc-rs provider, TLS 1.2 and 1.3,
//!   ALPN `http/1.1`, session tickets from an aws-lc-rs ticketer.
//!
//! Both run in this binary, so they link the same rustls with the same
//! features and provider. `--plain` serves the same without TLS (the idle
//! memory reference).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use anyhow::Context;
use http::HeaderValue;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use ringstream::server::tls::TlsConfig;
use ringstream::server::{Config, Metrics, Server};
use ringstream_cli::app::App;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;

/// The server library a peer is built on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TlsImpl {
    /// ringstream's server with `Server::tls`.
    Ringstream,
    /// hyper 1.x over tokio-rustls.
    Hyper,
}

impl TlsImpl {
    /// The name used on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            TlsImpl::Ringstream => "ringstream",
            TlsImpl::Hyper => "hyper",
        }
    }
}

/// Flags of `tls-peer`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The server to run.
    #[arg(long = "impl", value_enum)]
    pub implementation: TlsImpl,
    /// Certificate chain, PEM.
    #[arg(long, value_name = "FILE")]
    pub cert: PathBuf,
    /// Private key, PEM.
    #[arg(long, value_name = "FILE")]
    pub key: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8443")]
    pub addr: SocketAddr,
    /// Worker threads of the (multi-thread) tokio runtime.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// Connections ringstream serves at once (`Config::max_connections`).
    #[arg(long, default_value_t = 4096)]
    pub max_connections: usize,
    /// Serve plain HTTP instead (the certificate is not read).
    #[arg(long)]
    pub plain: bool,
}

/// Serve until killed.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.workers.max(1))
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        match args.implementation {
            TlsImpl::Ringstream => ringstream_peer(args).await,
            TlsImpl::Hyper => hyper_peer(args).await,
        }
    })
}

/// The one line on stdout: the scenario waits for it, then closes the pipe.
fn announce(args: &Args, addr: SocketAddr) {
    let scheme = if args.plain { "http" } else { "https" };
    println!(
        "{} peer listening on {scheme}://{addr}",
        args.implementation.name()
    );
}

async fn ringstream_peer(args: &Args) -> anyhow::Result<()> {
    let mut server = Server::bind(args.addr).await?;
    if !args.plain {
        let tls = TlsConfig::from_pem_files(&args.cert, &args.key)
            .context("reading the certificate")?;
        server = server.tls(tls);
    }
    let config = Config {
        max_connections: args.max_connections,
        ..Config::default()
    };
    let app = App::new(server.metrics());
    announce(args, server.local_addr()?);
    server.serve(app).with_config(config).await?;
    Ok(())
}

async fn hyper_peer(args: &Args) -> anyhow::Result<()> {
    let acceptor = if args.plain {
        None
    } else {
        Some(tokio_rustls::TlsAcceptor::from(Arc::new(
            hyper_server_config(args).context("reading the certificate")?,
        )))
    };
    let listener = TcpListener::bind(args.addr).await?;
    announce(args, listener.local_addr()?);
    let last_page = Arc::new(AtomicUsize::new(0));
    let app = App::new(Arc::new(Metrics::default()));
    loop {
        let (socket, _) = listener.accept().await?;
        let _ = socket.set_nodelay(true);
        let (last_page, app) = (last_page.clone(), app.clone());
        match acceptor.clone() {
            None => tokio::spawn(hyper_conn(socket, last_page, app)),
            Some(acceptor) => tokio::spawn(async move {
                if let Ok(tls) = acceptor.accept(socket).await {
                    hyper_conn(tls, last_page, app).await;
                }
            }),
        };
    }
}

/// One connection of the hyper peer: the handler of `http`'s hyper peer,
/// with a `Server` header, so that both servers send the same headers
/// (`Date`, `Server`, `Content-Type`, `Content-Length`).
async fn hyper_conn<I>(io: I, last_page: Arc<AtomicUsize>, app: App)
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = service_fn(move |req| hyper_answer(req, last_page.clone(), app.clone()));
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(io), service)
        .await;
}

/// The hyper peers' answer to `req` (also `h2-peer`'s): the handler of
/// `http`'s hyper peer with a `Server` header, as ringstream sends one.
pub async fn hyper_answer(
    req: http::Request<hyper::body::Incoming>,
    last_page: Arc<AtomicUsize>,
    app: App,
) -> Result<http::Response<ringstream_cli::app::AppBody>, Infallible> {
    let mut response = crate::peer::handle(req, last_page, app).await?;
    response
        .headers_mut()
        .insert(http::header::SERVER, HeaderValue::from_static("hyper"));
    Ok(response)
}

/// The hyper peer's TLS configuration, as a hyper user writes it: the
/// default provider, safe default versions, one certificate, ALPN and
/// session tickets (rustls' server sends none without a ticketer).
fn hyper_server_config(args: &Args) -> anyhow::Result<rustls::ServerConfig> {
    hyper_tls_config(&args.cert, &args.key, &[b"http/1.1"])
}

/// A rustls `ServerConfig` as a hyper user writes one, from PEM files,
/// offering the protocols `alpn` (`http/1.1` here, `h2` in `h2-peer`).
pub fn hyper_tls_config(
    cert: &std::path::Path,
    key: &std::path::Path,
    alpn: &[&[u8]],
) -> anyhow::Result<rustls::ServerConfig> {
    let certs = CertificateDer::pem_file_iter(cert)?.collect::<Result<Vec<_>, _>>()?;
    let key = PrivateKeyDer::from_pem_file(key)?;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(certs, key)?;
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    config.ticketer = rustls::crypto::aws_lc_rs::Ticketer::new()?;
    Ok(config)
}
