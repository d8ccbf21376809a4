//! `ringstream serve`'s arguments, and the server configuration they ask
//! for.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgGroup, Parser};
use ringstream::ringstream_core::Limits;
use ringstream::server::{Config, Http2Options, IpNet, ProxyProtocol};

#[derive(Parser, Debug)]
#[command(group(ArgGroup::new("tls").args(["tls_cert", "tls_self_signed"])))]
pub(crate) struct ServeArgs {
    /// Address to listen on (HTTPS with --tls-cert or --tls-self-signed).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub(crate) addr: SocketAddr,
    /// Serve HTTPS with the certificate chain in FILE (PEM, the server's
    /// certificate first, as Let's Encrypt's fullchain.pem). SIGHUP reads
    /// it and --tls-key again.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub(crate) tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub(crate) tls_key: Option<PathBuf>,
    /// Serve HTTPS with a development certificate made at start for
    /// localhost, 127.0.0.1 and ::1. Its SHA-256 fingerprint and the file
    /// it is written to (to trust it: curl --cacert FILE) are logged.
    #[arg(long, conflicts_with_all = ["tls_cert", "tls_key"])]
    pub(crate) tls_self_signed: bool,
    /// Where --tls-self-signed writes its certificate, as DIR/cert.pem
    /// (default: a new directory under the temporary directory, removed
    /// at exit). The key is never written.
    #[arg(long, value_name = "DIR", requires = "tls_self_signed")]
    pub(crate) tls_self_signed_out: Option<PathBuf>,
    /// Require a client certificate signed by one of the CA certificates
    /// in FILE (PEM). SIGHUP reads it again.
    #[arg(long, value_name = "FILE", requires = "tls")]
    pub(crate) tls_client_ca: Option<PathBuf>,
    /// Also listen for plain HTTP on ADDR, answering every request with a
    /// 308 redirect to the same URL over HTTPS on --addr's port.
    #[arg(long, value_name = "ADDR", requires = "tls")]
    pub(crate) redirect_http: Option<SocketAddr>,
    /// Serve the files under this directory at /static/.
    #[arg(long, value_name = "DIR")]
    pub(crate) root: Option<std::path::PathBuf>,
    /// Worker threads of the tokio runtime (default: one per core); with
    /// --reuse-port, the threads that each have a listener of their own.
    #[arg(long)]
    pub(crate) workers: Option<usize>,
    /// Serve on --workers threads (default: one per core) that each have
    /// a runtime and a listener of their own on --addr (SO_REUSEPORT: the
    /// kernel spreads new connections across the listeners; Unix only),
    /// instead of one runtime whose threads share one listener. A
    /// connection stays on the thread that accepted it. --max-connections
    /// is divided among the listeners, as is the cap on TLS handshakes
    /// at once; --redirect-http has one listener of its own.
    #[arg(long)]
    pub(crate) reuse_port: bool,
    /// Maximum connections served at once. At the cap a new client takes
    /// the slot of the connection idle the longest, or gets 503 when every
    /// connection is busy (with --reuse-port, each listener has its share
    /// of the cap, and its clients compete for that share).
    #[arg(long, default_value_t = 1024)]
    pub(crate) max_connections: usize,
    /// Length of the listen queue (capped by the kernel's somaxconn).
    #[arg(long, default_value_t = 1024)]
    pub(crate) listen_backlog: u32,
    /// Send buffer of every connection (SO_SNDBUF), in bytes: the kernel
    /// doubles it for its bookkeeping and no longer grows it. The kernel's
    /// own by default, which grows to megabytes; a smaller one bounds what
    /// the kernel holds for a client that stops reading.
    #[arg(long, value_name = "BYTES")]
    pub(crate) send_buffer: Option<u32>,
    /// Seconds a client may take to send a request head.
    #[arg(long, default_value_t = 10)]
    pub(crate) head_timeout: u64,
    /// Seconds an idle keep-alive connection is kept.
    #[arg(long, default_value_t = 60)]
    pub(crate) idle_timeout: u64,
    /// Seconds one read of a request body may wait for data.
    #[arg(long, default_value_t = 30)]
    pub(crate) body_read_timeout: u64,
    /// Slowest request body allowed, in bytes per second, after the first
    /// --body-read-timeout seconds (0: no minimum).
    #[arg(long, default_value_t = 500)]
    pub(crate) body_min_rate: u64,
    /// Seconds a request body may take as a whole, however fast it comes
    /// (none by default).
    #[arg(long)]
    pub(crate) body_timeout: Option<u64>,
    /// Largest request body, in bytes (1 GiB by default): a longer one gets
    /// 413 and the connection is closed — before any of it is read when its
    /// Content-Length says so, as soon as it grows past the limit when it
    /// is chunked.
    #[arg(long, value_name = "BYTES", default_value_t = Limits::DEFAULT.max_body_len)]
    pub(crate) max_body_size: u64,
    /// Seconds writing a response may make no progress (a client that
    /// reads nothing) before the connection is closed.
    #[arg(long, default_value_t = 30)]
    pub(crate) write_timeout: u64,
    /// Seconds graceful shutdown (Ctrl-C) waits for in-flight requests.
    #[arg(long, default_value_t = 30)]
    pub(crate) shutdown_timeout: u64,
    /// No access-log line per request (target `ringstream::access`).
    #[arg(long)]
    pub(crate) no_access_log: bool,
    /// Speak HTTP/1.1 only: no HTTP/2 over TLS (ALPN `h2`) nor over plain
    /// TCP (a connection that starts with the HTTP/2 preface).
    #[arg(long)]
    pub(crate) no_http2: bool,
    /// Every connection starts with a PROXY header (v1 or v2) from a load
    /// balancer in --proxy-from (HAProxy's send-proxy, nginx's
    /// proxy_protocol, AWS NLB): requests see the client's address. Any
    /// other connection is closed unanswered and counted in /metrics.
    #[arg(long, requires = "proxy_from")]
    pub(crate) proxy_protocol: bool,
    /// A balancer allowed to send PROXY headers, as a CIDR block
    /// (10.0.0.0/8, 192.0.2.7/32); repeat for several.
    #[arg(long, value_name = "CIDR", requires = "proxy_protocol")]
    pub(crate) proxy_from: Vec<IpNet>,
    /// On SIGTERM (or Ctrl-C), drain for this many seconds before shutting
    /// down: requests are still served, but /readyz answers 503 and every
    /// response asks its client to go (Connection: close, HTTP/2 GOAWAY),
    /// so a load balancer takes the server out of rotation first.
    #[arg(long, value_name = "SECONDS", default_value_t = 0)]
    pub(crate) drain_delay: u64,
}

/// The limits and timeouts the arguments ask for.
pub(crate) fn config(args: &ServeArgs) -> Config {
    Config {
        max_connections: args.max_connections,
        listen_backlog: args.listen_backlog,
        head_timeout: Duration::from_secs(args.head_timeout),
        idle_timeout: Duration::from_secs(args.idle_timeout),
        body_read_timeout: Duration::from_secs(args.body_read_timeout),
        body_min_rate: args.body_min_rate,
        body_timeout: args.body_timeout.map(Duration::from_secs),
        write_timeout: Duration::from_secs(args.write_timeout),
        shutdown_timeout: Duration::from_secs(args.shutdown_timeout),
        access_log: !args.no_access_log,
        // The demo never asks a request for its connection's ends (the
        // access line takes them from the connection): three
        // allocations per request saved.
        connection_info: false,
        limits: Limits {
            max_body_len: args.max_body_size,
            ..Limits::DEFAULT
        },
        http2: Http2Options {
            enabled: !args.no_http2,
            ..Http2Options::default()
        },
        proxy_protocol: args
            .proxy_protocol
            .then(|| ProxyProtocol::from(args.proxy_from.iter().copied())),
        ..Config::default()
    }
}
