//! `ringstream serve --reuse-port`: one listener per thread, each thread a
//! current-thread runtime of its own, all on one port (SO_REUSEPORT). The
//! kernel spreads new connections across the listeners, and a connection
//! is served to its end on the thread that accepted it: no task moves
//! between threads, no runtime thread wakes another.
//!
//! The main thread keeps what the whole server shares on a current-thread
//! runtime of its own: the signals, the certificate reload, the dashboard's
//! ticker and the `--redirect-http` listener. The demo application and the
//! server's counters are shared by every listener (both are behind `Arc`),
//! so `/metrics` and `/events` report the server as a whole.
//!
//! `--max-connections` stays a bound on the whole: each listener has its
//! share of it (the kernel's spread is even on average, and an idle
//! connection of one listener is not evicted for a client of another).

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context as _;
use ringstream::server::tls::TlsConfig;
use ringstream::server::{Config, Metrics, Server};
use ringstream_cli::app::App;
use ringstream_cli::https::RedirectToHttps;
use tokio::sync::{mpsc, oneshot, watch};

use super::{bind_with_send_buffer, check_open_files, config, demo_app, Https, ServeArgs, Signals};

/// Serves `args` on one listener per thread.
pub(super) fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let listeners = args
        .workers
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    anyhow::ensure!(
        args.max_connections >= listeners,
        "--max-connections {} is less than the {listeners} listeners of --reuse-port \
         (each serves a share of it, at least one)",
        args.max_connections
    );
    let control = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    // Before binding, as in the default mode.
    let https = Https::new(&args)?;
    let mut threads = Vec::with_capacity(listeners);
    let served = control.block_on(run(&args, https.as_ref(), listeners, &mut threads));
    // Every thread has ended or been told to: they are joined here, after
    // their runtimes are gone.
    for thread in threads {
        if thread.join().is_err() {
            anyhow::bail!("a listener's thread panicked");
        }
    }
    served
}

/// Where a listener's thread says the address it bound, or why it could
/// not.
type Bound = oneshot::Sender<anyhow::Result<SocketAddr>>;

/// What a listener's thread needs beside its share of the cap.
#[derive(Clone)]
struct Shared {
    app: App,
    metrics: Arc<Metrics>,
    tls: Option<TlsConfig>,
    send_buffer: Option<u32>,
    listen_backlog: u32,
    stopping: watch::Receiver<bool>,
    forced: watch::Receiver<bool>,
    ended: mpsc::UnboundedSender<anyhow::Result<()>>,
}

async fn run(
    args: &ServeArgs,
    https: Option<&Https>,
    listeners: usize,
    threads: &mut Vec<std::thread::JoinHandle<()>>,
) -> anyhow::Result<()> {
    let metrics = Arc::new(Metrics::default());
    let config = config(args);
    let app = demo_app(args, metrics.clone())?.with_drain(config.drain.clone());
    let drain = config.drain.clone();
    let redirect = super::bind_redirect(args).await?;
    let (stop, stopping) = watch::channel(false);
    let (force, forced) = watch::channel(false);
    let (ended, mut ends) = mpsc::unbounded_channel();
    let shared = Shared {
        app: app.clone(),
        metrics,
        tls: https.map(|https| https.config.clone()),
        send_buffer: args.send_buffer,
        listen_backlog: args.listen_backlog,
        stopping: stopping.clone(),
        forced: forced.clone(),
        ended,
    };
    // The first listener binds --addr (port 0: a free port); the others
    // then bind the address it got.
    let mut addr = args.addr;
    for i in 0..listeners {
        let (bound, bound_at) = oneshot::channel();
        let config = Config {
            max_connections: share(args.max_connections, listeners, i),
            ..config.clone()
        };
        let shared = shared.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("ringstream-{i}"))
            .spawn(move || listen(addr, config, shared, bound));
        let outcome = match spawned {
            Ok(thread) => {
                threads.push(thread);
                match bound_at.await {
                    Ok(outcome) => outcome,
                    Err(_) => Err(anyhow::anyhow!("the listener's thread ended")),
                }
            }
            Err(e) => Err(e.into()),
        };
        match outcome {
            Ok(at) => addr = at,
            Err(e) => {
                // The listeners already serving stop at once.
                let _ = stop.send(true);
                let _ = force.send(true);
                return Err(e.context(format!("listener {} of {listeners}", i + 1)));
            }
        }
    }
    drop(shared);

    app.spawn_ticker();
    let events = app.events().clone();
    check_open_files(args.max_connections);
    // Before the address is announced, as in the default mode.
    let mut signals = Signals::new();
    #[cfg(unix)]
    if let Some(https) = https {
        https.reload_on_hangup()?;
    }
    let drain_delay = std::time::Duration::from_secs(args.drain_delay);
    tokio::spawn(async move {
        signals.recv().await;
        if super::drain_for(&drain, drain_delay, &mut signals).await {
            tracing::warn!("second signal: closing every connection now");
            let _ = stop.send(true);
            let _ = force.send(true);
            return;
        }
        tracing::info!("shutting down; a second signal closes every connection now");
        let _ = stop.send(true);
        // End the live event streams so their connections can finish.
        events.close();
        signals.recv().await;
        tracing::warn!("second signal: closing every connection now");
        let _ = force.send(true);
    });
    let scheme = if https.is_some() { "https" } else { "http" };
    tracing::info!(
        listeners,
        "ringstream listening on {scheme}://{addr}, one listener per thread"
    );
    println!("ringstream listening on {scheme}://{addr}");

    let redirecting = async {
        let Some(redirect) = redirect else {
            return Ok(());
        };
        super::announce_redirect(redirect.local_addr()?, addr);
        let mut stopping = stopping.clone();
        let mut forced = forced.clone();
        let serving = redirect
            .serve(RedirectToHttps::new(addr.port()))
            .with_config(config.clone())
            .with_graceful_shutdown(async move {
                let _ = stopping.wait_for(|stop| *stop).await;
            });
        tokio::select! {
            served = serving => served.map_err(anyhow::Error::from),
            _ = forced.wait_for(|force| *force) => Ok(()),
        }
    };
    let listening = async {
        // Every listener's end; the channel closes once all have ended.
        let mut first_error = None;
        while let Some(ended) = ends.recv().await {
            if let Err(e) = ended {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    };
    let (listened, redirected) = tokio::join!(listening, redirecting);
    listened.and(redirected)
}

/// The `i`th of `n` shares of `total`: the first `total % n` listeners
/// take one more, so that the shares add up to `total`.
fn share(total: usize, n: usize, i: usize) -> usize {
    total / n + usize::from(i < total % n)
}

/// One listener's thread: binds `addr` with SO_REUSEPORT on a runtime of
/// its own, says where on `bound`, and serves until the shutdown.
fn listen(addr: SocketAddr, config: Config, shared: Shared, bound: Bound) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            let _ = bound.send(Err(
                anyhow::Error::from(e).context("starting the tokio runtime")
            ));
            return;
        }
    };
    let ended = shared.ended.clone();
    let served = runtime.block_on(serve_listener(addr, config, shared, bound));
    // The runtime goes first: connections still open at a forced stop are
    // closed before the main thread hears that this listener has ended.
    drop(runtime);
    let _ = ended.send(served);
}

async fn serve_listener(
    addr: SocketAddr,
    config: Config,
    shared: Shared,
    bound: Bound,
) -> anyhow::Result<()> {
    let Shared {
        app,
        metrics,
        tls,
        send_buffer,
        listen_backlog,
        mut stopping,
        mut forced,
        ended: _,
    } = shared;
    let server = match send_buffer {
        None => Server::bind_reuse_port(addr)
            .await
            .map_err(anyhow::Error::from),
        Some(size) => {
            bind_with_send_buffer(addr, size, listen_backlog, true).map(Server::from_listener)
        }
    }
    .with_context(|| format!("binding {addr} with SO_REUSEPORT"));
    let mut server = match server {
        Ok(server) => server.with_metrics(metrics),
        Err(e) => {
            let _ = bound.send(Err(e));
            return Ok(());
        }
    };
    if let Some(tls) = tls {
        server = server.tls(tls);
    }
    match server.local_addr() {
        Ok(at) => {
            let _ = bound.send(Ok(at));
        }
        Err(e) => {
            let _ = bound.send(Err(e.into()));
            return Ok(());
        }
    }
    let serving = server
        .serve(app)
        .with_config(config)
        .with_graceful_shutdown(async move {
            let _ = stopping.wait_for(|stop| *stop).await;
        });
    tokio::select! {
        served = serving => served?,
        // Dropping the server aborts every connection task.
        _ = forced.wait_for(|force| *force) => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shares_of_the_cap_add_up_to_it() {
        for (total, n) in [(1024, 2), (1025, 2), (10, 3), (3, 3), (1, 1)] {
            let shares: Vec<usize> = (0..n).map(|i| share(total, n, i)).collect();
            assert_eq!(shares.iter().sum::<usize>(), total, "{shares:?}");
            assert!(shares.iter().all(|&s| s >= total / n && s >= 1));
        }
        assert_eq!(share(10, 3, 0), 4);
        assert_eq!(share(10, 3, 2), 3);
    }
}
