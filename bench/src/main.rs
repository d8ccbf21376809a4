//! `ringstream-bench`: scenarios measuring ringstream against emulations of
//! the designs it replaces, with time medians and allocation counts.
//!
//! ```text
//! cargo run --release -p ringstream-bench -- response-40k
//! cargo run --release -p ringstream-bench -- response-40k --size 4MiB --json
//! cargo run --release -p ringstream-bench -- response-40k --plot docs/response-40k.svg
//! ```
//!
//! Every scenario accepts the common flags `--json` (one JSON object per
//! variant per line), `--size`, `--runs`, `--budget` and `--plot FILE.svg`
//! (a size sweep drawn on log–log axes), see [`scenarios::Common`].
//!
//! # Adding a scenario
//!
//! 1. Create `bench/src/scenarios/<name>.rs` with a `pub struct Args`
//!    deriving `clap::Args` (flatten `super::Common` into it) and a
//!    `pub fn run(args: &Args) -> anyhow::Result<()>`. Build result rows
//!    with [`report::Row`] (put scenario-specific keys in `extra`) and print
//!    them with [`report::print_table`] or [`report::print_json`]; count
//!    allocations with [`alloc::reset`] and [`alloc::snapshot`]; time with
//!    [`scenarios::time_box`].
//! 2. Register it with one line in the `scenarios!` list in
//!    `bench/src/scenarios/mod.rs`, e.g.
//!    `/// Help text. MyCase => my_case, "my-case";`.
//!
//! Allocation counts are process-wide: the counting allocator below wraps
//! the system allocator for the whole binary.

mod alloc;
mod bars;
mod emulate;
mod loadgen;
mod mempipe;
mod peer;
mod report;
mod scenarios;
mod tlsclient;
mod wsclient;

use clap::Parser;

#[global_allocator]
static GLOBAL: alloc::CountingAlloc = alloc::CountingAlloc;

/// Benchmarks of ringstream's buffers and server.
#[derive(Debug, Parser)]
#[command(name = "ringstream-bench", version, about)]
struct Cli {
    #[command(subcommand)]
    scenario: scenarios::Scenario,
}

fn main() -> anyhow::Result<()> {
    Cli::parse().scenario.run()
}
