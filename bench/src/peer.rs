//! The hyper 1.x peer: the same endpoints as `ringstream serve`, written as
//! a hyper user would, so both servers can be driven with the same load.
//!
//! - `GET /bytes/{n}`: `n` bytes of the same shared pattern block, sent as
//!   slices of it (no per-request copy), like ringstream's, with the same
//!   `Content-Type`;
//! - `GET /api/livedata`: the same JSON, printed with `write!` into a
//!   `String` sized by the previous page, then handed over as `Bytes`;
//! - `POST /upload`: the body streamed through SHA-256.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use ringstream::server::Metrics;
use ringstream_cli::app::{App, AppBody};
use sha2::{Digest, Sha256};
use tokio::net::TcpListener;

/// Serve the peer on `addr` with a runtime of `workers` threads, forever.
pub fn serve(addr: SocketAddr, workers: usize) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers.max(1))
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = TcpListener::bind(addr).await?;
        println!("hyper peer listening on http://{}", listener.local_addr()?);
        let last_page = Arc::new(AtomicUsize::new(0));
        let app = App::new(Arc::new(Metrics::default()));
        loop {
            let (socket, _) = listener.accept().await?;
            let _ = socket.set_nodelay(true);
            tokio::spawn(serve_io(socket, last_page.clone(), app.clone()));
        }
    })
}

/// Serve one connection of the peer over any transport (a TCP socket, or
/// an in-memory pipe in `server-cpu`), until it closes.
pub async fn serve_io<I>(io: I, last_page: Arc<AtomicUsize>, app: App)
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = service_fn(move |req| handle(req, last_page.clone(), app.clone()));
    // `pipeline_flush`: pipelined responses are written together, as
    // hyper's own benchmarks configure it (without it, each response of a
    // pipelined batch is flushed alone).
    let _ = hyper::server::conn::http1::Builder::new()
        .pipeline_flush(true)
        .serve_connection(TokioIo::new(io), service)
        .await;
}

/// Answer one request of the peer.
pub async fn handle(
    req: Request<Incoming>,
    last_page: Arc<AtomicUsize>,
    app: App,
) -> Result<Response<AppBody>, Infallible> {
    let path = req.uri().path().to_owned();
    let response = match (req.method(), path.as_str()) {
        (&Method::GET, "/api/livedata") => {
            let hint = last_page.load(Relaxed);
            let mut page = String::with_capacity(if hint == 0 { 1024 } else { hint + hint / 8 });
            let _ = app.write_livedata(&mut page);
            last_page.store(page.len(), Relaxed);
            json(Bytes::from(page))
        }
        (&Method::GET, p) if p.starts_with("/bytes/") => {
            let n: u64 = p["/bytes/".len()..].parse().unwrap_or(0);
            let mut r = Response::new(AppBody::Pattern {
                block: ringstream_cli::app::pattern_block(),
                remaining: n,
            });
            r.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/octet-stream"),
            );
            r
        }
        (&Method::POST, "/upload") => {
            let mut body = req.into_body();
            let mut hasher = Sha256::new();
            let mut total = 0u64;
            while let Some(frame) = body.frame().await {
                match frame {
                    Ok(frame) => {
                        if let Ok(data) = frame.into_data() {
                            total += data.len() as u64;
                            hasher.update(&data);
                        }
                    }
                    Err(_) => {
                        let mut r = Response::new(AppBody::Full(Some(Bytes::from_static(
                            b"upload failed\n",
                        ))));
                        *r.status_mut() = StatusCode::BAD_REQUEST;
                        return Ok(r);
                    }
                }
            }
            let digest = hex::encode(hasher.finalize());
            json(Bytes::from(format!(
                "{{\"bytes\":{total},\"sha256\":\"{digest}\"}}\n"
            )))
        }
        _ => {
            let mut r = Response::new(AppBody::Full(Some(Bytes::from_static(b"not found\n"))));
            *r.status_mut() = StatusCode::NOT_FOUND;
            r
        }
    };
    Ok(response)
}

fn json(data: Bytes) -> Response<AppBody> {
    let mut r = Response::new(AppBody::Full(Some(data)));
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    r
}
