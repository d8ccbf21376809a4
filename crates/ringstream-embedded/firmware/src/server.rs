//! The web server of the firmware programs, whatever their chip and
//! network: the demo app (`examples/demo/app.rs`, the crate root's `app`
//! module) served by ringstream-embedded's connection pool on one TCP
//! port, and the publisher that ticks it once a second.
//!
//! - [`SLOTS`] workers, each an embassy task whose future holds its
//!   connection's HTTP [`Buffers`](ringstream_embedded::http::Buffers);
//! - [`SOCKETS`] TCP sockets: one per slot, and one kept to answer `503`
//!   when all the others hold a connection;
//!
//! all in `.bss`, fixed at build time. `SLOTS` is 4 unless
//! `RINGSTREAM_FIRMWARE_SLOTS` is set at build time (`sizes.sh` builds
//! with 1 and 4 to measure a slot).

use embassy_executor::Spawner;
use embassy_net::Stack;
use embassy_time::{Duration, Instant, Timer};
use ringstream_embedded::http::HttpHandler;
use ringstream_embedded::pool::{self, Pool, SocketBuffers};
use static_cell::StaticCell;

use crate::app::Demo;

/// Connection slots: workers, each serving one connection at a time.
pub const SLOTS: usize = match option_env!("RINGSTREAM_FIRMWARE_SLOTS") {
    Some(slots) => parse_usize(slots),
    None => 4,
};

/// TCP sockets of the pool: one per slot, and one kept to answer `503`.
pub const SOCKETS: usize = SLOTS + 1;

/// The HTTP receive buffer of a connection (request heads, WebSocket
/// frames).
pub const HTTP_RX: usize = 1024;
/// The HTTP transmit buffer of a connection (response heads, chunks,
/// frames).
pub const HTTP_TX: usize = 512;

/// The TCP receive buffer of a socket.
pub const TCP_RX: usize = 1024;
/// The TCP transmit buffer of a socket.
pub const TCP_TX: usize = 1024;

/// The HTTP port.
pub const PORT: u16 = 80;

/// The unix time at boot (no RTC here): 2025-12-07 12:00 UTC, so the
/// simulated inverters are in daylight. A board with an RTC or SNTP sets
/// the demo's clock from that instead.
pub const BOOT_UNIX_SECS: u64 = 1_765_108_800;

/// The HTTP server: the demo app with its buffer sizes and settings.
pub type DemoServer = HttpHandler<Demo, HTTP_RX, HTTP_TX>;
/// The pool of connection slots.
pub type DemoPool = Pool<'static, SOCKETS>;

// `sizes.sh` reads these statics' sizes from the ELF file.
static SOCKET_BUFFERS: StaticCell<[SocketBuffers<TCP_RX, TCP_TX>; SOCKETS]> = StaticCell::new();
static POOL: StaticCell<DemoPool> = StaticCell::new();
static SERVER: StaticCell<DemoServer> = StaticCell::new();

/// Starts the server on `stack`: the pool's listener, [`SLOTS`] workers
/// and the publisher. Call it once; the stack needs [`SOCKETS`] sockets
/// of its `StackResources` for it.
pub fn start(spawner: Spawner, stack: Stack<'static>) {
    let buffers = SOCKET_BUFFERS.init([const { SocketBuffers::new() }; SOCKETS]);
    let pool: &'static DemoPool = POOL.init(Pool::new(stack, pool::Config::new(PORT), buffers));
    let server: &'static DemoServer = SERVER.init(HttpHandler::new(
        Demo::new(BOOT_UNIX_SECS),
        ringstream_embedded::Config::DEFAULT,
    ));
    spawner.spawn(listener(pool).expect("one listener"));
    for _ in 0..SLOTS {
        spawner.spawn(worker(pool, server).expect("SLOTS workers"));
    }
    spawner.spawn(publisher(server.app()).expect("one publisher"));
}

/// The pool's listener: keeps the free sockets listening.
#[embassy_executor::task]
async fn listener(pool: &'static DemoPool) {
    pool.run_listener().await
}

/// One connection slot.
#[embassy_executor::task(pool_size = SLOTS)]
async fn worker(pool: &'static DemoPool, server: &'static DemoServer) {
    pool.run_http_worker(server).await
}

/// Publishes the live totals once a second (`/events`, `/ws/live`).
#[embassy_executor::task]
async fn publisher(demo: &'static Demo) {
    loop {
        demo.tick(BOOT_UNIX_SECS + Instant::now().as_secs());
        Timer::after(Duration::from_secs(1)).await;
    }
}

/// A decimal `usize` at compile time (for `RINGSTREAM_FIRMWARE_SLOTS`).
const fn parse_usize(s: &str) -> usize {
    let bytes = s.as_bytes();
    assert!(!bytes.is_empty(), "RINGSTREAM_FIRMWARE_SLOTS is empty");
    let mut value = 0;
    let mut i = 0;
    while i < bytes.len() {
        let digit = bytes[i];
        assert!(
            digit.is_ascii_digit(),
            "RINGSTREAM_FIRMWARE_SLOTS is not a number"
        );
        value = value * 10 + (digit - b'0') as usize;
        i += 1;
    }
    assert!(value > 0, "RINGSTREAM_FIRMWARE_SLOTS must be at least 1");
    value
}
