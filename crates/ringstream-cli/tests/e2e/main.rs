//! The end-to-end tests of the `ringstream` binary and its demo app, in one
//! binary (one build and link for all, their slow cases overlapping). The
//! browser test keeps a binary of its own.

mod autobahn;
mod common;

mod cli;
mod load_balancer;
mod methods;
mod server_hyper_client;
mod server_wire;
mod tls;
mod websocket;
mod ws_autobahn;
