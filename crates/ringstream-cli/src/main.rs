//! The `ringstream` command line: glue over the library.

use std::io::IsTerminal as _;
use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
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
    /// upload). Logs one line per request; set RUST_LOG to change the level.
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
    /// Maximum connections served at once.
    #[arg(long, default_value_t = 1024)]
    max_connections: usize,
    /// Seconds a client may take to send a request head.
    #[arg(long, default_value_t = 10)]
    head_timeout: u64,
    /// Seconds an idle keep-alive connection is kept.
    #[arg(long, default_value_t = 60)]
    idle_timeout: u64,
    /// Seconds graceful shutdown (Ctrl-C) waits for in-flight requests.
    #[arg(long, default_value_t = 30)]
    shutdown_timeout: u64,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
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
        let server = Server::bind(args.addr)
            .await
            .with_context(|| format!("binding {}", args.addr))?;
        let config = Config {
            max_connections: args.max_connections,
            head_timeout: Duration::from_secs(args.head_timeout),
            idle_timeout: Duration::from_secs(args.idle_timeout),
            shutdown_timeout: Duration::from_secs(args.shutdown_timeout),
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
        tracing::info!(%addr, "ringstream listening");
        println!("ringstream listening on http://{addr}");
        server
            .serve(app)
            .with_config(config)
            .with_graceful_shutdown(async move {
                shutdown_signal().await;
                tracing::info!("shutting down");
                // End the live event streams so their connections can finish.
                events.close();
            })
            .await?;
        Ok(())
    })
}

/// Ctrl-C, or SIGTERM on Unix.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                    return;
                }
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
