//! `hyper-peer`: run the hyper 1.x peer server (used by `http` and `upload`).

use std::net::SocketAddr;

/// Flags of `hyper-peer`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8081")]
    pub addr: SocketAddr,
    /// Worker threads of the tokio runtime.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
}

/// Serve until killed.
pub fn run(args: &Args) -> anyhow::Result<()> {
    crate::peer::serve(args.addr, args.workers)
}
