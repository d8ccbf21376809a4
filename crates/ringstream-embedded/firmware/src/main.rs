//! ringstream-embedded's demo app linked as firmware for a Cortex-M4F
//! (`thumbv7em-none-eabihf`): the same `examples/demo/app.rs` that the
//! host demo serves over tokio, here on embassy's executor and embassy-net,
//! served by the crate's connection pool ([`server`]).
//!
//! - The network device is [`loopback::Loopback`], a stand-in: no NIC,
//!   every packet comes back to the same stack. A self-check task fetches
//!   `/api/livedata` from the server over it every five seconds, so the
//!   program serves real requests with nothing attached.
//! - Time: the SysTick at 1 kHz ([`time`]).
#![no_std]
#![no_main]

#[path = "../../examples/demo/app.rs"]
mod app;
mod loopback;
mod server;
mod time;

use core::sync::atomic::{AtomicU32, Ordering};

use embassy_executor::Spawner;
use embassy_net::tcp::TcpSocket;
use embassy_net::{Ipv4Address, Ipv4Cidr, Runner, Stack, StackResources, StaticConfigV4};
use embassy_time::{Duration, Timer};
use loopback::Loopback;
use ringstream_embedded::embedded_io_async::Write;
use server::{PORT, SOCKETS};
use static_cell::StaticCell;

/// The device's address, on the loopback link.
const ADDRESS: Ipv4Address = Ipv4Address::new(10, 0, 0, 1);

/// The stack's sockets: the server's and the self-check's (`sizes.sh`
/// reads its size from the ELF file).
static RESOURCES: StaticCell<StackResources<{ SOCKETS + 1 }>> = StaticCell::new();

// The self-check's counts, for a debugger to read (`#[used]`: kept, with
// their stores, although the program never reads them back).

/// Self-checks that got the whole of `/api/livedata`.
#[used]
static CHECKS_PASSED: AtomicU32 = AtomicU32::new(0);
/// Self-checks that failed.
#[used]
static CHECKS_FAILED: AtomicU32 = AtomicU32::new(0);
/// Bytes of the last `/api/livedata` response, head and body.
#[used]
static LAST_RESPONSE_LEN: AtomicU32 = AtomicU32::new(0);

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    let core = cortex_m::Peripherals::take().expect("taken once");
    time::init(core.SYST);

    let config = embassy_net::Config::ipv4_static(StaticConfigV4 {
        address: Ipv4Cidr::new(ADDRESS, 24),
        gateway: None,
        dns_servers: Default::default(),
    });
    // A fixed seed (there is no RNG here): TCP's initial sequence numbers
    // are predictable. A board seeds the stack from its RNG.
    let seed = 0x5eed_2b6f_91c4_07d3;
    let resources = RESOURCES.init(StackResources::new());
    let (stack, runner) = embassy_net::new(Loopback::new(), config, resources, seed);

    boot_report();
    spawner.spawn(net(runner).expect("one net task"));
    server::start(spawner, stack);
    spawner.spawn(self_check(stack).expect("one self-check"));
}

/// The network stack.
#[embassy_executor::task]
async fn net(mut runner: Runner<'static, Loopback>) -> ! {
    runner.run().await
}

/// Fetches `/api/livedata` from the server over the loopback link every
/// five seconds and counts the outcome.
#[embassy_executor::task]
async fn self_check(stack: Stack<'static>) {
    let mut rx = [0u8; 1024];
    let mut tx = [0u8; 256];
    for round in 1u32.. {
        Timer::after(Duration::from_secs(5)).await;
        let mut socket = TcpSocket::new(stack, &mut rx, &mut tx);
        socket.set_timeout(Some(Duration::from_secs(10)));
        let fetched = fetch_livedata(&mut socket).await;
        // The server has closed its side after the response: close ours
        // (a FIN), or reset the connection after a failure.
        if fetched.is_some() {
            socket.close();
        } else {
            socket.abort();
        }
        let _ = socket.flush().await;
        match fetched {
            Some(len) => {
                CHECKS_PASSED.fetch_add(1, Ordering::Relaxed);
                LAST_RESPONSE_LEN.store(len, Ordering::Relaxed);
            }
            None => {
                CHECKS_FAILED.fetch_add(1, Ordering::Relaxed);
            }
        }
        report(round, fetched);
    }
}

/// One `GET /api/livedata` with `Connection: close`: the bytes of the
/// response when it is `200` and ends with the JSON's last line.
async fn fetch_livedata(socket: &mut TcpSocket<'_>) -> Option<u32> {
    socket.connect((ADDRESS, PORT)).await.ok()?;
    socket
        .write_all(b"GET /api/livedata HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n")
        .await
        .ok()?;
    socket.flush().await.ok()?;
    // The status line, and the last bytes: the chunked body's end.
    let mut head = [0u8; 12];
    let mut tail = [0u8; 16];
    let mut total: usize = 0;
    let mut buf = [0u8; 256];
    loop {
        let n = socket.read(&mut buf).await.ok()?;
        if n == 0 {
            break;
        }
        for &byte in &buf[..n] {
            if total < head.len() {
                head[total] = byte;
            }
            tail.copy_within(1.., 0);
            tail[tail.len() - 1] = byte;
            total += 1;
        }
    }
    let complete = &head == b"HTTP/1.1 200" && tail.ends_with(b"}}\n\r\n0\r\n\r\n");
    complete.then_some(total as u32)
}

#[cfg(feature = "semihosting")]
fn report(round: u32, fetched: Option<u32>) {
    use cortex_m_semihosting::{debug, hprintln};
    match fetched {
        Some(len) => hprintln!("self-check {}: /api/livedata 200, {} bytes", round, len),
        None => hprintln!("self-check {}: FAILED", round),
    }
    if round == 3 {
        let passed = CHECKS_PASSED.load(Ordering::Relaxed);
        hprintln!(
            "{} of 3 self-checks passed; {} slots",
            passed,
            server::SLOTS
        );
        debug::exit(if passed == 3 {
            debug::EXIT_SUCCESS
        } else {
            debug::EXIT_FAILURE
        });
    }
}

#[cfg(not(feature = "semihosting"))]
fn report(_round: u32, _fetched: Option<u32>) {}

/// Prints what a slot's parts measure, from `size_of` (`sizes.sh` reads
/// the statics from the ELF file instead).
#[cfg(feature = "semihosting")]
fn boot_report() {
    use core::mem::size_of;
    use cortex_m_semihosting::hprintln;
    use ringstream_embedded::http::Buffers;
    use ringstream_embedded::pool::SocketBuffers;
    use server::{DemoPool, DemoServer, HTTP_RX, HTTP_TX, TCP_RX, TCP_TX};
    let future = size_of_future(|(pool, server): (&'static DemoPool, &'static DemoServer)| {
        pool.run_http_worker(server)
    });
    hprintln!(
        "{} slots; per slot: run_http_worker future {} bytes (with Buffers<{}, {}> of {}), \
         SocketBuffers<{}, {}> {} bytes",
        server::SLOTS,
        future,
        HTTP_RX,
        HTTP_TX,
        size_of::<Buffers<HTTP_RX, HTTP_TX>>(),
        TCP_RX,
        TCP_TX,
        size_of::<SocketBuffers<TCP_RX, TCP_TX>>(),
    );
}

#[cfg(not(feature = "semihosting"))]
fn boot_report() {}

/// The size of the future `make` would return, without making one.
#[cfg(feature = "semihosting")]
fn size_of_future<A, F>(_make: impl FnOnce(A) -> F) -> usize {
    core::mem::size_of::<F>()
}

#[panic_handler]
fn panic(_info: &core::panic::PanicInfo) -> ! {
    cortex_m::interrupt::disable();
    #[cfg(feature = "semihosting")]
    {
        cortex_m_semihosting::hprintln!("{}", _info);
        cortex_m_semihosting::debug::exit(cortex_m_semihosting::debug::EXIT_FAILURE);
    }
    loop {
        cortex_m::asm::wfi();
    }
}
