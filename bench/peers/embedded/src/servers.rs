//! The two servers and their one connection's future, with the same two
//! routes:
//!
//! - `GET /`: `Hello, World!` (13 bytes, `text/plain; charset=utf-8`,
//!   with `content-length`);
//! - `GET /api/livedata`: the ~40 KB JSON of ringstream-embedded's demo
//!   (`examples/demo/app.rs`, included below: the same `Line` values),
//!   printed line by line with `write!`, each line's `Display` wrapped in
//!   a counter of formatter runs; sent chunked by both, as its length is
//!   not known in advance.

use core::fmt;
use core::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use embedded_io_async::{Read, Write};
use ringstream_embedded::http::{
    serve_connection_in_place, App, Buffers, Error, Request, Responder, Sent,
};
use ringstream_embedded::Config;

use crate::pipe::{EmbassyTimer, Io, PicoSocket, Pipe};

/// The demo's app, for its `Line` and `LINES` (its `Demo` goes unused).
#[path = "../../../../crates/ringstream-embedded/examples/demo/app.rs"]
#[allow(dead_code, clippy::all)]
pub mod demo;

pub use demo::{write_livedata, Line, LINES};

/// The moment both servers print: noon (the sun at its height, so every
/// inverter produces and the numbers have all their digits).
pub const UNIX_SECS: u64 = 1_765_108_800;

/// The small response's body.
pub const HELLO: &str = "Hello, World!";

/// Formatter runs of the live data's lines, both servers.
pub static FORMATTER_RUNS: AtomicUsize = AtomicUsize::new(0);

/// A `Display` that counts its runs in [`FORMATTER_RUNS`].
pub struct Counted<D>(pub D);

impl<D: fmt::Display> fmt::Display for Counted<D> {
    /// Never inlined: `ringstream-bench embedded` leaves it out of the
    /// instruction count with callgrind's `--toggle-collect=*Counted*`.
    #[inline(never)]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        FORMATTER_RUNS.fetch_add(1, Relaxed);
        self.0.fmt(f)
    }
}

// ---------------------------------------------------------------------------
// ringstream-embedded
// ---------------------------------------------------------------------------

/// ringstream-embedded's receive buffer: its demo's and its docs' start.
pub const RS_RX: usize = 1024;
/// ringstream-embedded's transmit buffer: its demo's and its docs' start.
pub const RS_TX: usize = 512;

/// ringstream-embedded's configuration: its defaults.
pub static RS_CONFIG: Config = Config::DEFAULT;

/// The routes on ringstream-embedded.
pub struct RsApp;

impl App for RsApp {
    async fn handle<IO: Read + Write>(
        &self,
        request: &Request<'_>,
        responder: &mut Responder<'_, IO>,
    ) -> Result<Sent, Error<IO::Error>> {
        match request.path() {
            "/" => {
                responder
                    .send(
                        200,
                        &[("content-type", b"text/plain; charset=utf-8")],
                        HELLO.as_bytes(),
                    )
                    .await
            }
            "/api/livedata" => {
                responder
                    .start(200, &[("content-type", b"application/json")], None)
                    .await?;
                for index in 0..LINES {
                    writeln!(responder, "{}", Counted(Line::at(UNIX_SECS, index))).await?;
                }
                responder.finish().await
            }
            _ => responder.send(404, &[], b"").await,
        }
    }
}

/// One connection on ringstream-embedded as its `embassy-net` pool serves
/// one: `serve_connection_in_place` (body bytes formatted straight into
/// the socket's transmit buffer) with the app, the caller's `Buffers` and
/// the default configuration.
pub async fn ringstream(pipe: &Pipe, buffers: &mut Buffers<RS_RX, RS_TX>) {
    let mut io = Io(pipe);
    let _ = serve_connection_in_place(&mut io, &RsApp, buffers, &RS_CONFIG, None).await;
}

/// The bytes of the `serve_connection_in_place` future alone (no
/// buffers).
pub fn ringstream_future_bytes(pipe: &Pipe) -> usize {
    let mut io = Io(pipe);
    let mut buffers = Buffers::<RS_RX, RS_TX>::new();
    let future = serve_connection_in_place(&mut io, &RsApp, &mut buffers, &RS_CONFIG, None);
    core::mem::size_of_val(&future)
}

// ---------------------------------------------------------------------------
// picoserve
// ---------------------------------------------------------------------------

/// picoserve's HTTP buffer: its examples' (`http_buffer = [0; 2048]`).
pub const PICO_HTTP: usize = 2048;

/// picoserve's configuration: its defaults, with keep-alive (as the
/// harness sends many requests on one connection; ringstream-embedded
/// keeps HTTP/1.1 connections alive by default).
pub static PICO_CONFIG: picoserve::Config =
    picoserve::Config::const_default().keep_connection_alive();

/// The live data as picoserve's chunks: one `write!` per line into its
/// `ChunkWriter` (the way its docs show for a body of unknown length).
pub struct LiveData;

impl picoserve::response::chunked::Chunks for LiveData {
    fn content_type(&self) -> &'static str {
        "application/json"
    }

    async fn write_chunks<W: picoserve::io::Write>(
        self,
        mut writer: picoserve::response::chunked::ChunkWriter<W>,
    ) -> Result<picoserve::response::chunked::ChunksWritten, W::Error> {
        for index in 0..LINES {
            writeln!(writer, "{}", Counted(Line::at(UNIX_SECS, index))).await?;
        }
        writer.finalize().await
    }
}

/// The routes on picoserve.
pub fn pico_app() -> picoserve::Router<impl picoserve::routing::PathRouter> {
    use picoserve::routing::get;
    picoserve::Router::new()
        .route("/", get(|| async { HELLO }))
        .route(
            "/api/livedata",
            get(|| async { picoserve::response::chunked::ChunkedResponse::new(LiveData) }),
        )
}

/// One connection on picoserve: `Server::custom(..).serve(socket)` with
/// the app, the caller's HTTP buffer, keep-alive and embassy-time.
pub async fn picoserve<P: picoserve::routing::PathRouter>(
    app: &picoserve::Router<P>,
    pipe: &Pipe,
    http_buffer: &mut [u8],
) {
    let _ = picoserve::Server::custom(app, EmbassyTimer, &PICO_CONFIG, http_buffer)
        .serve(PicoSocket(pipe))
        .await;
}

/// The bytes of the `Server::serve` future alone (no HTTP buffer).
pub fn picoserve_future_bytes<P: picoserve::routing::PathRouter>(
    app: &picoserve::Router<P>,
    pipe: &Pipe,
) -> usize {
    let mut http_buffer = [0u8; PICO_HTTP];
    let future = picoserve::Server::custom(app, EmbassyTimer, &PICO_CONFIG, &mut http_buffer)
        .serve(PicoSocket(pipe));
    core::mem::size_of_val(&future)
}
