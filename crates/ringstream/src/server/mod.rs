//! The HTTP/1.1 and HTTP/2 server: serves any `tower_service::Service` over
//! TCP (or any other transport) with keep-alive, pipelining, `Expect:
//! 100-continue`, strict framing, limits, timeouts and graceful shutdown;
//! HTTP/2 by ALPN over TLS and by the preface on a plain port
//! ([`Http2Options`]); PROXY headers from trusted balancers
//! ([`ProxyProtocol`]) and a [`Drain`] for leaving a balancer's rotation.
//!
//! There are two entry points, shaped like axum's:
//!
//! * [`serve(listener, service)`](serve) (or [`Server::serve`], for a
//!   server made with [`Server::bind`]) returns a [`Serve`]: `.await` it to
//!   serve until the process ends, or call
//!   [`with_graceful_shutdown`](Serve::with_graceful_shutdown) first;
//!   [`with_config`](Serve::with_config) sets the limits and timeouts.
//! * [`serve_connection`] serves one connection over any transport.
//!
//! Both fail with the same [`Error`](crate::Error), and both serve an [`HttpService`]:
//! a tower service of `Request<Incoming>` answering `Response<B>` (an axum
//! `Router`, a [`service_fn`]).
//!
//! # Examples
//!
//! ```no_run
//! use std::convert::Infallible;
//! use std::time::Duration;
//! use ringstream::server::{self, service_fn, Config};
//! use ringstream::{Incoming, ResponseStream};
//!
//! # async fn run() -> Result<(), ringstream::Error> {
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! let service = service_fn(|_req: http::Request<Incoming>| async {
//!     let mut body = ResponseStream::buffered();
//!     std::fmt::Write::write_str(&mut body, "hello\n").unwrap();
//!     Ok::<_, Infallible>(http::Response::new(body))
//! });
//! let config = Config { head_timeout: Duration::from_secs(5), ..Config::default() };
//! server::serve(listener, service)
//!     .with_config(config)
//!     .with_graceful_shutdown(async {
//!         let _ = tokio::time::sleep(Duration::from_secs(60)).await;
//!     })
//!     .await
//! # }
//! ```

mod accept;
mod accepted;
mod addr;
mod admit;
mod bind;
mod config;
mod connection;
mod counted;
mod drain;
mod h2;
mod listener;
mod make;
mod metrics;
mod proxy;
mod refuse;
mod rewind;
mod serve;
mod serve_connection;
mod service;
mod slots;
mod stop;
#[cfg(feature = "tls")]
#[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
pub mod tls;
pub mod upgrade;

pub use addr::{Addr, ConnectionInfo};
pub use bind::Server;
pub use config::Config;
pub use drain::Drain;
pub use h2::Http2Options;
/// A CIDR block, as [`ProxyProtocol::trusted`] lists them (the `ipnet`
/// crate's).
pub use ipnet::IpNet;
pub use listener::Listener;
pub use make::{IntoMakeService, MakeService, ServiceMarker};
pub use metrics::{Metrics, MetricsSnapshot};
pub use proxy::ProxyProtocol;
pub use serve::{serve, Serve, WithGracefulShutdown};
pub use serve_connection::{
    serve_connection, serve_connection_with_info, GracefulConnection, ServeConnection,
};
pub use service::{service_fn, HttpService, ServiceFn};
