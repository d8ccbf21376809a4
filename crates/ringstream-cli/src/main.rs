//! The `ringstream` command line: glue over the library.

use std::io::IsTerminal as _;
use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use ringstream::ringstream_core::Limits;
use ringstream::server::{Config, Server};
use ringstream_cli::app::App;
use tracing_subscriber::EnvFilter;

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
struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// Serve the files under this directory at /static/.
    #[arg(long, value_name = "DIR")]
    root: Option<std::path::PathBuf>,
    /// Worker threads of the tokio runtime (default: one per core).
    #[arg(long)]
    workers: Option<usize>,
    /// Maximum connections served at once. At the cap a new client takes
    /// the slot of the connection idle the longest, or gets 503 when every
    /// connection is busy.
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
}

fn main() -> anyhow::Result<()> {
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
    match cli.command {
        Command::Serve(args) => serve(args),
    }
}

fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    runtime.enable_all();
    if let Some(workers) = args.workers {
        runtime.worker_threads(workers.max(1));
    }
    let runtime = runtime.build().context("starting the tokio runtime")?;
    runtime.block_on(async move {
        let server = match args.send_buffer {
            None => Server::bind(args.addr).await.map_err(anyhow::Error::from),
            Some(size) => bind_with_send_buffer(args.addr, size, args.listen_backlog)
                .map(Server::from_listener),
        }
        .with_context(|| format!("binding {}", args.addr))?;
        let config = Config {
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
            limits: Limits {
                max_body_len: args.max_body_size,
                ..Limits::DEFAULT
            },
            ..Config::default()
        };
        let mut app = App::new(server.metrics());
        if let Some(root) = &args.root {
            anyhow::ensure!(
                root.is_dir(),
                "--root {} is not a directory",
                root.display()
            );
            app = app.with_static_root(root);
        }
        app.spawn_ticker();
        let events = app.events().clone();
        let addr = server.local_addr()?;
        check_open_files(args.max_connections);
        // Listening for signals starts before the address is announced, so
        // no signal can arrive unheard.
        let mut signals = Signals::new();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (force, forced) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            signals.recv().await;
            tracing::info!("shutting down; a second signal closes every connection now");
            let _ = stop.send(());
            signals.recv().await;
            let _ = force.send(());
        });
        tracing::info!(%addr, "ringstream listening");
        println!("ringstream listening on http://{addr}");
        let serving = server
            .serve(app)
            .with_config(config)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
                // End the live event streams so their connections can finish.
                events.close();
            });
        tokio::select! {
            served = serving => served?,
            Ok(()) = forced => {
                // Dropping the server aborts every connection task.
                tracing::warn!("second signal: closing every connection now");
            }
        }
        Ok(())
    })
}

/// A listener on `addr` whose connections have a send buffer of `size`
/// bytes: set on the listening socket, which accepted connections inherit
/// it from (Linux, the BSDs).
fn bind_with_send_buffer(
    addr: SocketAddr,
    size: u32,
    backlog: u32,
) -> anyhow::Result<tokio::net::TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    // As tokio's own `TcpListener::bind` does on Unix.
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
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
