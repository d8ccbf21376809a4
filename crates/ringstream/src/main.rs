//! The `ringstream` command line.
use clap::Parser;

/// ringstream: streams bytes at memory speed with constant memory.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Cli {}

fn main() -> anyhow::Result<()> {
    let _cli = Cli::parse();
    Ok(())
}
