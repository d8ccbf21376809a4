//! The shared wire-test helpers, and the demo app started with them.
#![allow(dead_code, unused_imports)]

pub use ringstream_testkit::*;

use ringstream::server::Config;
use ringstream_cli::app::App;

/// Start the demo app with `config` (its clock fixed, so pages compare).
pub async fn start_app(config: Config) -> TestServer {
    start_with(config, |metrics| {
        App::new(metrics).with_fixed_time(Some(1_750_000_000))
    })
    .await
}
