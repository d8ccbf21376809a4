//! The `ringstream` command line: glue over the library.

use std::io::IsTerminal as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use ringstream::server::tls::TlsConfig;
use ringstream::server::{Drain, Server};
use ringstream_cli::app::App;
use ringstream_cli::https::{RedirectToHttps, SelfSigned};
use tracing_subscriber::EnvFilter;

mod args;
mod per_core;

use args::{config, ServeArgs};

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
