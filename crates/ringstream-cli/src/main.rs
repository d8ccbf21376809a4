//! The `ringstream` command line: glue over the library.

use std::io::IsTerminal as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::{ArgGroup, Parser, Subcommand};
use ringstream::ringstream_core::Limits;
use ringstream::server::tls::TlsConfig;
use ringstream::server::{Config, Drain, Http2Options, IpNet, ProxyProtocol, Server};
use ringstream_cli::app::App;
use ringstream_cli::https::{RedirectToHttps, SelfSigned};
use tracing_subscriber::EnvFilter;

mod per_core;

/// ringstream: an HTTP/1.1 server that streams bytes at memory speed with
/// memory that does not grow with the payload.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Serve the demo application (live data, metrics, byte streams, echo,
    /// upload, WebSockets). Logs one line per request; set RUST_LOG to
    /// change the level.
    Serve(ServeArgs),
}

#[derive(Parser, Debug)]
#[command(group(ArgGroup::new("tls").args(["tls_cert", "tls_self_signed"])))]
struct ServeArgs {
    /// Address to listen on (HTTPS with --tls-cert or --tls-self-signed).
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// Serve HTTPS with the certificate chain in FILE (PEM, the server's
    /// certificate first, as Let's Encrypt's fullchain.pem). SIGHUP reads
    /// it and --tls-key again.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Serve HTTPS with a development certificate made at start for
    /// localhost, 127.0.0.1 and ::1. Its SHA-256 fingerprint and the file
    /// it is written to (to trust it: curl --cacert FILE) are logged.
    #[arg(long, conflicts_with_all = ["tls_cert", "tls_key"])]
    tls_self_signed: bool,
    /// Where --tls-self-signed writes its certificate, as DIR/cert.pem
    /// (default: a new directory under the temporary directory, removed
    /// at exit). The key is never written.
    #[arg(long, value_name = "DIR", requires = "tls_self_signed")]
    tls_self_signed_out: Option<PathBuf>,
    /// Require a client certificate signed by one of the CA certificates
    /// in FILE (PEM). SIGHUP reads it again.
    #[arg(long, value_name = "FILE", requires = "tls")]
    tls_client_ca: Option<PathBuf>,
    /// Also listen for plain HTTP on ADDR, answering every request with a
    /// 308 redirect to the same URL over HTTPS on --addr's port.
    #[arg(long, value_name = "ADDR", requires = "tls")]
    redirect_http: Option<SocketAddr>,
    /// Serve the files under this directory at /static/.
    #[arg(long, value_name = "DIR")]
    root: Option<std::path::PathBuf>,
    /// Worker threads of the tokio runtime (default: one per core); with
    /// --reuse-port, the threads that each have a listener of their own.
    #[arg(long)]
    workers: Option<usize>,
    /// Serve on --workers threads (default: one per core) that each have
    /// a runtime and a listener of their own on --addr (SO_REUSEPORT: the
    /// kernel spreads new connections across the listeners; Unix only),
    /// instead of one runtime whose threads share one listener. A
    /// connection stays on the thread that accepted it. --max-connections
    /// is divided among the listeners, as is the cap on TLS handshakes
    /// at once; --redirect-http has one listener of its own.
    #[arg(long)]
    reuse_port: bool,
    /// Maximum connections served at once. At the cap a new client takes
    /// the slot of the connection idle the longest, or gets 503 when every
    /// connection is busy (with --reuse-port, each listener has its share
    /// of the cap, and its clients compete for that share).
    #[arg(long, default_value_t = 1024)]
    max_connections: usize,
    /// Length of the listen queue (capped by the kernel's somaxconn).
    #[arg(long, default_value_t = 1024)]
    listen_backlog: u32,
    /// Send buffer of every connection (SO_SNDBUF), in bytes: the kernel
    /// doubles it for its bookkeeping and no longer grows it. The kernel's
    /// own by default, which grows to megabytes; a smaller one bounds what
    /// the kernel holds for a client that stops reading.
    #[arg(long, value_name = "BYTES")]
    send_buffer: Option<u32>,
    /// Seconds a client may take to send a request head.
    #[arg(long, default_value_t = 10)]
    head_timeout: u64,
    /// Seconds an idle keep-alive connection is kept.
    #[arg(long, default_value_t = 60)]
    idle_timeout: u64,
    /// Seconds one read of a request body may wait for data.
    #[arg(long, default_value_t = 30)]
    body_read_timeout: u64,
    /// Slowest request body allowed, in bytes per second, after the first
    /// --body-read-timeout seconds (0: no minimum).
    #[arg(long, default_value_t = 500)]
    body_min_rate: u64,
    /// Seconds a request body may take as a whole, however fast it comes
    /// (none by default).
    #[arg(long)]
    body_timeout: Option<u64>,
    /// Largest request body, in bytes (1 GiB by default): a longer one gets
    /// 413 and the connection is closed — before any of it is read when its
    /// Content-Length says so, as soon as it grows past the limit when it
    /// is chunked.
    #[arg(long, value_name = "BYTES", default_value_t = Limits::DEFAULT.max_body_len)]
    max_body_size: u64,
    /// Seconds writing a response may make no progress (a client that
    /// reads nothing) before the connection is closed.
    #[arg(long, default_value_t = 30)]
    write_timeout: u64,
    /// Seconds graceful shutdown (Ctrl-C) waits for in-flight requests.
    #[arg(long, default_value_t = 30)]
    shutdown_timeout: u64,
    /// No access-log line per request (target `ringstream::access`).
    #[arg(long)]
    no_access_log: bool,
    /// Speak HTTP/1.1 only: no HTTP/2 over TLS (ALPN `h2`) nor over plain
    /// TCP (a connection that starts with the HTTP/2 preface).
    #[arg(long)]
    no_http2: bool,
    /// Every connection starts with a PROXY header (v1 or v2) from a load
    /// balancer in --proxy-from (HAProxy's send-proxy, nginx's
    /// proxy_protocol, AWS NLB): requests see the client's address. Any
    /// other connection is closed unanswered and counted in /metrics.
    #[arg(long, requires = "proxy_from")]
    proxy_protocol: bool,
    /// A balancer allowed to send PROXY headers, as a CIDR block
    /// (10.0.0.0/8, 192.0.2.7/32); repeat for several.
    #[arg(long, value_name = "CIDR", requires = "proxy_protocol")]
    proxy_from: Vec<IpNet>,
    /// On SIGTERM (or Ctrl-C), drain for this many seconds before shutting
    /// down: requests are still served, but /readyz answers 503 and every
    /// response asks its client to go (Connection: close, HTTP/2 GOAWAY),
    /// so a load balancer takes the server out of rotation first.
    #[arg(long, value_name = "SECONDS", default_value_t = 0)]
    drain_delay: u64,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env()
                // The access line carries each request's fields; its span
                // (target ringstream::request) is off unless RUST_LOG asks.
                .unwrap_or_else(|_| EnvFilter::new("info,ringstream::request=warn")),
        )
        .with_target(false)
        // Colour only on a terminal: a log redirected to a file or a pipe
        // stays plain text. `NO_COLOR` turns colour off everywhere.
        .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none())
        .with_writer(std::io::stderr)
        .init();
    let done = match cli.command {
        Command::Serve(args) => serve(args),
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", one_line(&e));
            ExitCode::FAILURE
        }
    }
}

/// An error and its causes on one line, `: `-separated, leaving out a
/// cause whose text the line already holds (ringstream's and the TLS
/// configuration's errors repeat their source's text).
fn one_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

fn serve(args: ServeArgs) -> anyhow::Result<()> {
    if args.reuse_port {
        return per_core::serve(args);
    }
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    runtime.enable_all();
    if let Some(workers) = args.workers {
        runtime.worker_threads(workers.max(1));
    }
    let runtime = runtime.build().context("starting the tokio runtime")?;
    // Before binding, so that a certificate that does not load stops the
    // server before it holds its port. The serving task owns it: the
    // development certificate's directory goes when serving ends.
    let https = Https::new(&args)?;
    runtime.block_on(async move {
        let mut server = match args.send_buffer {
            None => Server::bind(args.addr).await.map_err(anyhow::Error::from),
            Some(size) => bind_with_send_buffer(args.addr, size, args.listen_backlog, false)
                .map(Server::from_listener),
        }
        .with_context(|| format!("binding {}", args.addr))?;
        if let Some(https) = &https {
            server = server.tls(https.config.clone());
        }
        let redirect = bind_redirect(&args).await?;
        let config = config(&args);
        let app = demo_app(&args, server.metrics())?.with_drain(config.drain.clone());
        let drain = config.drain.clone();
        app.spawn_ticker();
        let events = app.events().clone();
        let addr = server.local_addr()?;
        check_open_files(args.max_connections);
        // Listening for signals starts before the address is announced, so
        // no signal can arrive unheard (SIGHUP's default action would end
        // the process).
        let mut signals = Signals::new();
        #[cfg(unix)]
        if let Some(https) = &https {
            https.reload_on_hangup()?;
        }
        // One shutdown for both servers: the first signal starts it, the
        // second ends it at once.
        let (stop, stopping) = tokio::sync::watch::channel(false);
        let (force, forced) = tokio::sync::oneshot::channel::<()>();
        let drain_delay = Duration::from_secs(args.drain_delay);
        tokio::spawn(async move {
            signals.recv().await;
            if drain_for(&drain, drain_delay, &mut signals).await {
                let _ = force.send(());
                return;
            }
            tracing::info!("shutting down; a second signal closes every connection now");
            let _ = stop.send(true);
            signals.recv().await;
            let _ = force.send(());
        });
        let stopped = move || {
            let mut stopping = stopping.clone();
            async move {
                let _ = stopping.wait_for(|stop| *stop).await;
            }
        };
        announce_listening(https.is_some(), addr);
        let redirecting = match redirect {
            Some(redirect) => {
                announce_redirect(redirect.local_addr()?, addr);
                Some(
                    redirect
                        .serve(RedirectToHttps::new(addr.port()))
                        .with_config(config.clone())
                        .with_graceful_shutdown(stopped()),
                )
            }
            None => None,
        };
        let main_stopped = stopped();
        let serving = server
            .serve(app)
            .with_config(config)
            .with_graceful_shutdown(async move {
                main_stopped.await;
                // End the live event streams so their connections can finish.
                events.close();
            });
        let both = async move {
            match redirecting {
                Some(redirecting) => tokio::try_join!(serving, redirecting).map(|_| ()),
                None => serving.await,
            }
        };
        tokio::select! {
            served = both => served?,
            Ok(()) = forced => {
                // Dropping the servers aborts every connection task.
                tracing::warn!("second signal: closing every connection now");
            }
        }
        Ok(())
    })
}

/// `--drain-delay`: drains for `delay` (nothing when it is zero) before
/// the shutdown; true when a second signal cut it short (close now).
async fn drain_for(drain: &Drain, delay: Duration, signals: &mut Signals) -> bool {
    if delay.is_zero() {
        return false;
    }
    tracing::info!(
        seconds = delay.as_secs(),
        "draining: /readyz answers 503, clients are asked to go; a second signal closes every connection now"
    );
    drain.start();
    tokio::select! {
        () = tokio::time::sleep(delay) => false,
        () = signals.recv() => true,
    }
}

/// The `--redirect-http` listener, if one is asked for.
async fn bind_redirect(args: &ServeArgs) -> anyhow::Result<Option<Server>> {
    let Some(addr) = args.redirect_http else {
        return Ok(None);
    };
    let server = Server::bind(addr)
        .await
        .with_context(|| format!("binding --redirect-http {addr}"))?;
    Ok(Some(server))
}

/// Says where the server listens, on stdout and in the log.
fn announce_listening(https: bool, addr: std::net::SocketAddr) {
    let scheme = if https { "https" } else { "http" };
    tracing::info!("ringstream listening on {scheme}://{addr}");
    println!("ringstream listening on {scheme}://{addr}");
}

/// Says that plain HTTP on `from` is redirected to HTTPS on `to`'s port.
fn announce_redirect(from: std::net::SocketAddr, to: std::net::SocketAddr) {
    tracing::info!(
        "redirecting http://{from} to https:// on port {}",
        to.port()
    );
    println!("ringstream redirecting http://{from} to port {}", to.port());
}

/// The limits and timeouts the arguments ask for.
fn config(args: &ServeArgs) -> Config {
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

/// The demo application, counting into `metrics`, with its static files
/// if --root is given.
fn demo_app(
    args: &ServeArgs,
    metrics: std::sync::Arc<ringstream::server::Metrics>,
) -> anyhow::Result<App> {
    let mut app = App::new(metrics);
    if let Some(root) = &args.root {
        anyhow::ensure!(
            root.is_dir(),
            "--root {} is not a directory",
            root.display()
        );
        app = app.with_static_root(root);
    }
    Ok(app)
}

/// What `--tls-cert` or `--tls-self-signed` serves HTTPS with.
struct Https {
    config: TlsConfig,
    /// The files a reload reads again (none for the development certificate
    /// alone, which lives in memory).
    #[cfg_attr(not(unix), allow(dead_code))]
    files: Vec<PathBuf>,
    /// The development certificate's own directory, removed on drop.
    _written: Option<Written>,
}

impl Https {
    /// The TLS configuration the arguments ask for, if any.
    fn new(args: &ServeArgs) -> anyhow::Result<Option<Https>> {
        let mut builder = TlsConfig::builder();
        let mut files = Vec::new();
        let mut written = None;
        if let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) {
            builder = builder.certificate_files(cert, key);
            files.extend([cert.clone(), key.clone()]);
        } else if args.tls_self_signed {
            let (pem, out) = self_signed(args.tls_self_signed_out.as_deref())?;
            builder = builder.certificate_pem(pem.cert_pem.as_bytes(), pem.key_pem.as_bytes());
            written = out;
        } else {
            return Ok(None);
        }
        if let Some(ca) = &args.tls_client_ca {
            builder = builder.client_auth_file(ca, true);
            files.push(ca.clone());
        }
        // A certificate and its key may share one file.
        files.dedup();
        let config = builder.build().with_context(|| {
            if files.is_empty() {
                "TLS configuration".to_string()
            } else {
                format!("TLS configuration from {}", list(&files))
            }
        })?;
        Ok(Some(Https {
            config,
            files,
            _written: written,
        }))
    }

    /// On SIGHUP, reads the certificate files again: new connections get
    /// the new certificate, open ones keep theirs; on an error the old one
    /// stays.
    #[cfg(unix)]
    fn reload_on_hangup(&self) -> anyhow::Result<()> {
        use tokio::signal::unix::{signal, SignalKind};
        let mut hangup = signal(SignalKind::hangup()).context("listening for SIGHUP")?;
        let config = self.config.clone();
        let files = list(&self.files);
        tokio::spawn(async move {
            while hangup.recv().await.is_some() {
                if files.is_empty() {
                    tracing::info!(
                        "SIGHUP: the development certificate has no file to read again; it stays"
                    );
                    continue;
                }
                let config = config.clone();
                match tokio::task::spawn_blocking(move || config.reload()).await {
                    Ok(Ok(())) => tracing::info!(
                        %files,
                        "SIGHUP: TLS certificate reloaded; new connections get it"
                    ),
                    Ok(Err(e)) => tracing::error!(
                        %files,
                        error = %e,
                        "SIGHUP: TLS certificate not reloaded; the old one stays"
                    ),
                    Err(e) => tracing::error!(error = %e, "SIGHUP: the reload failed"),
                }
            }
        });
        Ok(())
    }
}

/// Paths, comma-separated.
fn list(files: &[PathBuf]) -> String {
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    names.join(", ")
}

/// Makes the development certificate, writes it to `out`/cert.pem (or to
/// a new directory of its own) and logs where, with its fingerprint.
fn self_signed(out: Option<&Path>) -> anyhow::Result<(SelfSigned, Option<Written>)> {
    let pem = SelfSigned::generate().context("making the development certificate")?;
    let (dir, written) = match out {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("creating --tls-self-signed-out {}", dir.display()))?;
            (dir.to_path_buf(), None)
        }
        None => {
            let dir = private_temp_dir()?;
            (dir.clone(), Some(Written { dir }))
        }
    };
    let path = dir.join("cert.pem");
    std::fs::write(&path, &pem.cert_pem)
        .with_context(|| format!("writing the development certificate to {}", path.display()))?;
    tracing::info!(
        sha256 = %pem.fingerprint(),
        cert = %path.display(),
        "TLS: a self-signed development certificate for {}; to trust it, \
         use its PEM file (curl --cacert) or check its fingerprint",
        ringstream_cli::https::SELF_SIGNED_NAMES.join(", ")
    );
    Ok((pem, written))
}

/// A new directory under the temporary directory that only this user can
/// write to: no one else can put another certificate in its place.
fn private_temp_dir() -> anyhow::Result<PathBuf> {
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    let base = std::env::temp_dir();
    let mut attempt = 0u32;
    loop {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = base.join(format!("ringstream-tls-{}-{nanos:08x}", std::process::id()));
        match builder.create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 8 => {
                attempt += 1;
            }
            Err(e) => {
                return Err(e).with_context(|| format!("creating {}", dir.display()));
            }
        }
    }
}

/// The development certificate's directory, removed with its file when
/// the server stops.
struct Written {
    dir: PathBuf,
}

impl Drop for Written {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.dir.join("cert.pem"));
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// A listener on `addr` whose connections have a send buffer of `size`
/// bytes: set on the listening socket, which accepted connections inherit
/// it from (Linux, the BSDs). With `reuse_port`, other listeners may share
/// the address (SO_REUSEPORT), as with `Server::bind_reuse_port`.
fn bind_with_send_buffer(
    addr: SocketAddr,
    size: u32,
    backlog: u32,
    reuse_port: bool,
) -> anyhow::Result<tokio::net::TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    // As tokio's own `TcpListener::bind` does on Unix.
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    if reuse_port {
        #[cfg(all(
            unix,
            not(any(target_os = "solaris", target_os = "illumos", target_os = "cygwin"))
        ))]
        socket.set_reuseport(true)?;
        #[cfg(not(all(
            unix,
            not(any(target_os = "solaris", target_os = "illumos", target_os = "cygwin"))
        )))]
        anyhow::bail!("SO_REUSEPORT is not available on this platform");
    }
    socket
        .set_send_buffer_size(size)
        .context("setting the send buffer")?;
    socket.bind(addr)?;
    Ok(socket.listen(backlog)?)
}

/// Ctrl-C, and SIGTERM on Unix, heard as many times as they come. On Unix
/// both handlers are installed when this is made (`ctrl_c()` would install
/// SIGINT's only when first polled, leaving the default action, exit, to a
/// Ctrl-C that comes first), and a signal between two `recv` calls is kept.
struct Signals {
    #[cfg(unix)]
    int: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    fn new() -> Signals {
        #[cfg(unix)]
        let listen = |kind| tokio::signal::unix::signal(kind).ok();
        Signals {
            #[cfg(unix)]
            int: listen(tokio::signal::unix::SignalKind::interrupt()),
            #[cfg(unix)]
            term: listen(tokio::signal::unix::SignalKind::terminate()),
        }
    }

    /// The next Ctrl-C or SIGTERM.
    async fn recv(&mut self) {
        #[cfg(unix)]
        if let (Some(int), Some(term)) = (&mut self.int, &mut self.term) {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
            return;
        }
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// File descriptors the process needs beside its connections (listener,
/// runtime, log, static files being served, and the clients being refused
/// at the cap: up to 64 at once).
const SPARE_FILES: u64 = 128;

/// Makes room for `max_connections` sockets under the open-file limit:
/// raises the soft limit towards the hard one if needed, and warns when
/// the cap still cannot be reached (accepts would fail at the limit).
fn check_open_files(max_connections: usize) {
    let needed = (max_connections as u64).saturating_add(SPARE_FILES);
    let Some((soft, now)) = ringstream_cli::open_files::raise_to(needed) else {
        return;
    };
    if now < needed {
        tracing::warn!(
            max_connections,
            open_file_limit = now,
            "the open-file limit is below --max-connections plus {SPARE_FILES}: \
             accepts will fail before the cap is reached"
        );
    } else if now > soft {
        tracing::info!(from = soft, to = now, "raised the open-file limit");
    }
}
