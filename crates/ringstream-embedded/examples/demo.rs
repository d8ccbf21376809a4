//! The seed's demo on the embedded server, on the host: the `no_std`,
//! heap-free app of `examples/demo/app.rs` served over real tokio TCP
//! sockets through embedded-io-adapters' `FromTokio`, with the same fixed
//! RAM per connection as on a microcontroller.
//!
//! ```text
//! cargo run -p ringstream-embedded --example demo [-- 127.0.0.1:8081]
//! ```
//!
//! The address is the first argument, else `RINGSTREAM_DEMO_ADDR`, else
//! `127.0.0.1:8081`. Four connection slots, each a local task with its
//! own `Buffers` (1 KiB to receive, 512 bytes to transmit); a fifth client
//! while all four are busy gets `503` with `retry-after: 1`. A publisher
//! task ticks the app once a second (`/events`, `/ws/live`).
//!
//! Time: the crate's examples build with its dev-dependencies, whose
//! embassy-time is the mock driver; a task here advances it with the real
//! clock, so the server's deadlines and timers run in real time.

#[path = "demo/app.rs"]
mod app;

use std::cell::Cell;
use std::mem::size_of;
use std::rc::Rc;
use std::time::{Duration as StdDuration, Instant as StdInstant, SystemTime, UNIX_EPOCH};

use app::Demo;
use embassy_time::{Duration, Instant, MockDriver};
use embedded_io_adapters::tokio_1::FromTokio;
use ringstream_embedded::http::{serve_connection, Buffers};
use ringstream_embedded::Config;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Connection slots: connections served at once.
const SLOTS: usize = 4;
/// Bytes of a slot's receive buffer (request heads, WebSocket frames).
const RX: usize = 1024;
/// Bytes of a slot's transmit buffer (response heads, chunks, frames).
const TX: usize = 512;

const CONFIG: Config = Config::DEFAULT;

/// The answer to a client that finds every slot busy.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\n\
    retry-after: 1\r\ncontent-length: 5\r\nconnection: close\r\n\r\nbusy\n";

fn unix_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// One connection slot's task: the connection served whole with its own
/// buffers, then closed (FIN, the client's rest read and dropped).
async fn slot(stream: TcpStream, app: &'static Demo) {
    let mut io = FromTokio::new(stream);
    let mut buffers = Buffers::<RX, TX>::new();
    let _ = serve_connection(&mut io, app, &mut buffers, &CONFIG).await;
    let mut stream = io.into_inner();
    let _ = stream.shutdown().await;
    let mut sink = [0u8; 256];
    let _ = tokio::time::timeout(StdDuration::from_secs(2), async {
        while matches!(stream.read(&mut sink).await, Ok(n) if n > 0) {}
    })
    .await;
}

/// The size of the future `make` would return, without making one.
fn size_of_future<A, F>(_make: impl FnOnce(A) -> F) -> usize {
    size_of::<F>()
}

fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("RINGSTREAM_DEMO_ADDR").ok())
        .unwrap_or_else(|| "127.0.0.1:8081".to_owned());
    // One app for the whole run, as a firmware's `static`.
    let app: &'static Demo = Box::leak(Box::new(Demo::new(unix_secs())));
    app.tick(unix_secs());

    let slot_future = size_of_future(|stream: TcpStream| slot(stream, app));
    println!("ringstream-embedded demo on http://{addr}/");
    println!(
        "  {SLOTS} slots; per slot: {slot_future} bytes (the slot's task future, holding \
         Buffers<{RX}, {TX}> of {} bytes and a FromTokio<TcpStream> of {} bytes)",
        size_of::<Buffers<RX, TX>>(),
        size_of::<FromTokio<TcpStream>>(),
    );
    println!("  routes: / /api/livedata /events /ws/live");

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async move {
        let listener = TcpListener::bind(&addr).await?;
        // embassy-time's mock clock follows the real one.
        tokio::task::spawn_local(async {
            let start = StdInstant::now();
            loop {
                tokio::time::sleep(StdDuration::from_millis(10)).await;
                let real = start.elapsed().as_micros() as u64;
                let mock = Instant::now().as_micros();
                if real > mock {
                    MockDriver::get().advance(Duration::from_micros(real - mock));
                }
            }
        });
        // The publisher: the totals once a second.
        tokio::task::spawn_local(async move {
            let mut every = tokio::time::interval(StdDuration::from_secs(1));
            loop {
                every.tick().await;
                app.tick(unix_secs());
            }
        });
        let busy = Rc::new(Cell::new(0usize));
        loop {
            let (mut stream, _) = match listener.accept().await {
                Ok(accepted) => accepted,
                Err(_) => continue,
            };
            if busy.get() == SLOTS {
                tokio::task::spawn_local(async move {
                    let _ = stream.write_all(BUSY).await;
                    let _ = stream.shutdown().await;
                });
                continue;
            }
            busy.set(busy.get() + 1);
            let busy = Rc::clone(&busy);
            tokio::task::spawn_local(async move {
                slot(stream, app).await;
                busy.set(busy.get() - 1);
            });
        }
        #[allow(unreachable_code)]
        Ok::<(), std::io::Error>(())
    })
}
