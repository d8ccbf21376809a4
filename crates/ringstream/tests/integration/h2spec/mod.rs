//! A port of h2spec's test cases (summerwind/h2spec: `generic/*`,
//! `http2/*`, `hpack/*`) as wire tests: each case writes the frames
//! h2spec writes and checks the server's answer with h2spec's own
//! acceptance rules (`verify.rs`), one `#[tokio::test]` per case and
//! transport, named after the case's id (`http2/6.5.3/2` is
//! `http2_settings::h2c::c6_5_3_2`). Run them with
//! `cargo test -p ringstream --test integration h2spec`.
//!
//! Every case runs over h2c (prior knowledge) against a service like
//! `ringstream serve`'s: `GET /` answers 200 with a short body, `POST /`
//! reads the request body before answering. The cases that send a
//! request body run again on `/refuse`, which answers `POST` with 405
//! without reading the body (as the demo's `/` does); the generic group
//! runs over TLS (ALPN `h2`) too.
//!
//! Where h2spec's client differs in ways no case depends on: header
//! blocks are literals without indexing (h2spec's Go encoder indexes and
//! Huffman-codes them), and the hpack cases' Huffman-coded fields are
//! h2spec's own bytes.
#![cfg(all(feature = "http2", feature = "tls"))]

use crate::common;

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use http::{Method, Request, Response, StatusCode};
use ringstream::server::tls::TlsConfig;
use ringstream::server::{service_fn, Config, Server};
use ringstream::Incoming;
use rustls::{ClientConfig, RootCertStore};
use tokio_rustls::TlsConnector;

use client::{Conn, Dialer, Verdict, DATA, END_STREAM, HEADERS};

/// One `#[tokio::test]` per case of the module, each against a server of
/// its own over `$transport`: `cases!(H2c: c1_1, c2_1)`; attributes
/// (`#[ignore = "…"]`) go before a case's name.
macro_rules! cases {
    ($transport:ident: $($(#[$meta:meta])* $case:ident),* $(,)?) => {
        $(
            #[tokio::test]
            $(#[$meta])*
            async fn $case() {
                $crate::h2spec::run($crate::h2spec::Transport::$transport, super::$case).await;
            }
        )*
    };
}

mod client;
mod verify;

mod generic;
mod hpack;
mod http2_frames;
mod http2_semantics;
mod http2_settings;
mod http2_streams;

/// The body of `GET /`: long enough for the flow-control cases (h2spec
/// skips them under 5 octets).
const BODY: &str = "ringstream h2spec target\n";

/// How a case reaches the server.
#[derive(Clone, Copy, Debug)]
pub enum Transport {
    /// h2c with prior knowledge, the path `/`.
    H2c,
    /// h2c, the path `/refuse`: `POST` answered 405, its body unread.
    Refuse,
    /// TLS with ALPN `h2`, the path `/`.
    Tls,
}

/// `GET` (and `HEAD`) of any path: 200 with [`BODY`]. `POST /`: the body
/// read whole, then 200 with its length (400 when reading fails). Any
/// other method on `/refuse`: 405 at once.
async fn app(mut req: Request<Incoming>) -> Result<Response<String>, Infallible> {
    let method = req.method().clone();
    if method == Method::GET || method == Method::HEAD {
        return Ok(Response::new(BODY.to_owned()));
    }
    let mut response = Response::new(String::new());
    if req.uri().path() == "/refuse" {
        *response.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
        return Ok(response);
    }
    match req.body_mut().read_all().await {
        Ok(body) => *response.body_mut() = format!("received {} octets\n", body.len()),
        Err(_) => *response.status_mut() = StatusCode::BAD_REQUEST,
    }
    Ok(response)
}

/// A server started for one case; stopped when dropped.
struct Target {
    dialer: Arc<Dialer>,
    _server: Running,
}

enum Running {
    Plain(#[allow(dead_code)] common::TestServer),
    Tls(tokio::task::JoinHandle<()>),
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Running::Tls(task) = self {
            task.abort();
        }
    }
}

impl Target {
    async fn start(transport: Transport) -> Target {
        let config = Config::default();
        let path = match transport {
            Transport::Refuse => "/refuse",
            Transport::H2c | Transport::Tls => "/",
        };
        if !matches!(transport, Transport::Tls) {
            let server = common::start(service_fn(app), config).await;
            let dialer = Dialer {
                addr: server.addr,
                tls: None,
                path,
            };
            return Target {
                dialer: Arc::new(dialer),
                _server: Running::Plain(server),
            };
        }
        let ca = common::tls::Authority::new();
        let issued = ca.issue(&["localhost"]);
        let tls = TlsConfig::from_pem(issued.cert.as_bytes(), issued.key.as_bytes()).unwrap();
        let server = Server::bind("127.0.0.1:0")
            .await
            .unwrap()
            .with_config(config)
            .tls(tls);
        let addr = server.local_addr().unwrap();
        let task = tokio::spawn(async move {
            let _ = server.serve(service_fn(app)).await;
        });
        let mut roots = RootCertStore::empty();
        roots.add(ca.der()).unwrap();
        let mut client = ClientConfig::builder()
            .with_root_certificates(roots)
            .with_no_client_auth();
        client.alpn_protocols = vec![b"h2".to_vec()];
        let dialer = Dialer {
            addr,
            tls: Some(TlsConnector::from(Arc::new(client))),
            path,
        };
        Target {
            dialer: Arc::new(dialer),
            _server: Running::Tls(task),
        }
    }
}

/// Runs `case` on a new connection to a new server; its failure is the
/// test's.
pub async fn run<F, Fut>(transport: Transport, case: F)
where
    F: FnOnce(Conn) -> Fut,
    Fut: Future<Output = Verdict>,
{
    let target = Target::start(transport).await;
    let conn = target.dialer.dial().await;
    if let Err(failure) = case(conn).await {
        panic!("{transport:?}: {failure}");
    }
}

/// h2spec's `ServerDataLength`: the octets of DATA that `GET` of the
/// path brings, on a connection of its own; `None` when the response
/// does not end.
pub async fn server_data_length(conn: &Conn) -> Option<usize> {
    let mut other = conn.dialer.dial().await;
    other.handshake().await.ok()?;
    other.request(1, "GET", true).await;
    let mut len = 0;
    while !other.closed {
        if let client::Event::Frame(frame) = other.wait_event().await {
            if frame.kind == DATA {
                len += frame.payload.len();
            }
            if (frame.kind == DATA || frame.kind == HEADERS) && frame.has(END_STREAM) {
                return Some(len);
            }
        }
    }
    None
}
