//! axum applications on ringstream: what an axum user moves over, served
//! on ringstream's server and checked over real sockets, most of it side
//! by side with `axum::serve`.
//!
//! - `router`: the router of `examples/axum.rs`;
//! - `framing`: `HEAD` and `304` fields against `axum::serve`;
//! - `connect_info`: `into_make_service` and
//!   `into_make_service_with_connect_info` in every form;
//! - `examples`: axum's own JSON, SSE, static-file and `ConnectInfo`
//!   examples;
//! - `app`: a realistic application, every route against `axum::serve`;
//! - `ws_examples`: axum's WebSocket examples (echo and chat).

#[path = "../integration/common/mod.rs"]
mod common;

mod app;
mod connect_info;
mod examples;
mod framing;
mod router;
mod ws_examples;
