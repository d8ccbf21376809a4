//! The wire tests of the library, in one binary (one build and link for
//! all of them, and their slow cases overlap): the server, `Stream`,
//! bodies, static files, SSE and WebSocket over real sockets.
//!
//! Tests that count allocations with a global allocator of their own
//! (`body.rs`, `response.rs`, `server_allocs.rs`, `ws_idle_memory.rs`) stay
//! binaries of their own.

mod common;

mod error;
mod examples;
mod fs;
mod grpc;
mod h2spec;
mod http2;
mod http2_frames;
mod proxy_protocol;
mod server_body_limit;
mod server_cap;
mod server_copy;
mod server_errors;
mod server_fairness;
mod server_reuse_port;
mod server_tls;
mod server_tracing;
mod server_transport;
mod server_upgrade;
mod sse;
mod stream;
mod ws;
mod ws_deflate;
