//! HTTPS and WSS (feature `tls`): the server speaks TLS 1.2 and 1.3 with
//! rustls on its aws-lc-rs provider.
//!
//! A [`TlsConfig`] holds the certificates (one for every name, or one per
//! server name with SNI), optional client-certificate authentication, the
//! handshake's deadline and the number of handshakes under way at once. It
//! can be reloaded while the server runs ([`TlsConfig::reload`]): new
//! connections get the new certificates, open ones keep theirs.
//!
//! [`Server::tls`](crate::server::Server::tls) serves a listener's
//! connections over TLS; everything else (the connection cap, timeouts,
//! upgrades to WebSocket, graceful shutdown) is as over plain TCP. A
//! client that speaks plain HTTP to the TLS port is answered with a plain
//! `400` telling it to use `https://`, at once.
//!
//! Records are read and written through rustls' unbuffered API, in
//! buffers of the thread's block pool that go back to it whenever the
//! connection waits with nothing in them: an idle TLS connection holds
//! rustls' keys and state but no buffer, and costs little more memory
//! than a plain one.
//!
//! # Examples
//!
//! ```no_run
//! use ringstream::server::tls::TlsConfig;
//! use ringstream::server::{service_fn, Server};
//!
//! # async fn run() -> Result<(), ringstream::Error> {
//! let tls = TlsConfig::from_pem_files("cert.pem", "key.pem")?;
//! let server = Server::bind("0.0.0.0:443").await?.tls(tls.clone());
//! // Certificates renewed on disk: new connections get them.
//! tls.reload()?;
//! # let _ = server;
//! # Ok(())
//! # }
//! ```

mod certs;
mod config;
mod either;
mod handshake;
mod record;
mod seal;
mod transport;

pub use crate::error::tls::TlsError;
pub use config::{TlsConfig, TlsConfigBuilder};
pub(crate) use either::Transport;
pub(crate) use handshake::Acceptor;
