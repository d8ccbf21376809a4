//! `peer-embedded`: ringstream-embedded and picoserve side by side, in
//! one process, over the same in-memory socket ([`pipe`]), polled on one
//! thread with a no-op waker, serving the same routes ([`servers`]).
//! `ringstream-bench embedded` builds it, runs it and prints the table.
//!
//! ```text
//! peer-embedded measure [--budget SECS] [--min-rounds N] [--small-per-round N] [--live-per-round N]
//! peer-embedded instr <ringstream|picoserve> <small|livedata> <requests>
//! ```
//!
//! `measure` checks both servers' answers (status, framing, and the live
//! data's body against the demo's `write_livedata`), prints their heads
//! on stderr, then measures and prints one JSON object per server and
//! route on stdout:
//!
//! - RAM per connection slot: `size_of_val` of the connection-serving
//!   future (before its first poll, so its largest state) and the buffers
//!   the caller gives it; the socket's buffers (1 KiB + 1 KiB, the same
//!   for both) apart;
//! - time per request, wall and the thread's CPU time: rounds of one
//!   connection serving `--small-per-round` (or `--live-per-round`)
//!   keep-alive requests one after the other, the servers alternating
//!   round by round (A B, B A) until `--budget` seconds per route have
//!   passed and each has had `--min-rounds`; the median of the rounds'
//!   time per request;
//! - formatter runs, heap allocations (a counting global allocator),
//!   bytes on the wire, chunks, socket writes and polls per response, in
//!   one counted round.
//!
//! `instr` serves `requests` requests of one route on one server and
//! exits; under `valgrind --tool=callgrind --collect-atstart=no
//! --toggle-collect='*poll_server*'` it gives the instructions the server
//! ran (its own code, the socket's and the timer's, not the client's).

mod pipe;
mod servers;

use std::alloc::{GlobalAlloc, Layout, System};
use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use pipe::{Pipe, SOCKET_BUF};
use ringstream_embedded::http::Buffers;
use servers::{FORMATTER_RUNS, PICO_HTTP, RS_RX, RS_TX};

/// Counts heap allocations (every one, process-wide; the harness makes
/// none while it measures).
struct CountingAlloc;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: defers to the system allocator; only counts.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// The servers compared.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Server {
    Ringstream,
    Picoserve,
}

impl Server {
    const ALL: [Server; 2] = [Server::Ringstream, Server::Picoserve];

    fn name(self) -> &'static str {
        match self {
            Server::Ringstream => "ringstream-embedded",
            Server::Picoserve => "picoserve",
        }
    }

    fn parse(s: &str) -> Option<Server> {
        match s {
            "ringstream" | "ringstream-embedded" => Some(Server::Ringstream),
            "picoserve" => Some(Server::Picoserve),
            _ => None,
        }
    }
}

/// The routes measured.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Route {
    Small,
    LiveData,
}

impl Route {
    const ALL: [Route; 2] = [Route::Small, Route::LiveData];

    fn name(self) -> &'static str {
        match self {
            Route::Small => "small",
            Route::LiveData => "livedata",
        }
    }

    fn request(self) -> &'static [u8] {
        match self {
            Route::Small => b"GET / HTTP/1.1\r\nHost: device\r\n\r\n",
            Route::LiveData => b"GET /api/livedata HTTP/1.1\r\nHost: device\r\n\r\n",
        }
    }

    fn parse(s: &str) -> Option<Route> {
        match s {
            "small" => Some(Route::Small),
            "livedata" => Some(Route::LiveData),
            _ => None,
        }
    }
}

// ---------------------------------------------------------------------------
// The client: reads one response at a time, as bytes arrive.
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Framing {
    Length(usize),
    Chunked,
}

/// One response being read.
struct Client {
    /// The response's bytes so far (capacity reserved once: no
    /// allocation while measuring).
    bytes: Vec<u8>,
    head_end: Option<usize>,
    status: u16,
    framing: Framing,
    /// Chunked: where the next chunk-size line starts.
    cursor: usize,
    body: usize,
    chunks: usize,
    done: bool,
    /// Keep the decoded body (the check only).
    keep_body: bool,
    decoded: Vec<u8>,
}

impl Client {
    fn new() -> Client {
        Client {
            bytes: Vec::with_capacity(256 * 1024),
            head_end: None,
            status: 0,
            framing: Framing::Length(0),
            cursor: 0,
            body: 0,
            chunks: 0,
            done: false,
            keep_body: false,
            decoded: Vec::new(),
        }
    }

    fn begin(&mut self) {
        self.bytes.clear();
        self.head_end = None;
        self.status = 0;
        self.cursor = 0;
        self.body = 0;
        self.chunks = 0;
        self.done = false;
        self.decoded.clear();
    }

    fn feed(&mut self, data: &[u8]) {
        self.bytes.extend_from_slice(data);
        self.advance();
    }

    fn head(&self) -> &str {
        let end = self.head_end.unwrap_or(0);
        std::str::from_utf8(&self.bytes[..end]).unwrap_or("(not UTF-8)")
    }

    fn advance(&mut self) {
        if self.head_end.is_none() {
            let Some(at) = find(&self.bytes, b"\r\n\r\n") else {
                return;
            };
            let end = at + 4;
            self.head_end = Some(end);
            let head = std::str::from_utf8(&self.bytes[..end]).expect("the head is ASCII");
            self.status = head
                .get(9..12)
                .and_then(|s| s.parse().ok())
                .expect("a status line");
            self.framing = Framing::Length(0);
            for line in head.split("\r\n").skip(1) {
                let Some((name, value)) = line.split_once(':') else {
                    continue;
                };
                let value = value.trim();
                if name.eq_ignore_ascii_case("content-length") {
                    self.framing = Framing::Length(value.parse().expect("a content-length"));
                } else if name.eq_ignore_ascii_case("transfer-encoding")
                    && value.eq_ignore_ascii_case("chunked")
                {
                    self.framing = Framing::Chunked;
                }
            }
            self.cursor = end;
        }
        let head_end = self.head_end.unwrap_or(0);
        match self.framing {
            Framing::Length(n) => {
                if self.bytes.len() >= head_end + n {
                    self.body = n;
                    self.done = true;
                    if self.keep_body {
                        self.decoded
                            .extend_from_slice(&self.bytes[head_end..head_end + n]);
                    }
                }
            }
            Framing::Chunked => loop {
                let rest = &self.bytes[self.cursor..];
                let Some(line) = find(rest, b"\r\n") else {
                    return;
                };
                let digits = rest[..line].split(|&b| b == b';').next().unwrap_or(&[]);
                let size = usize::from_str_radix(
                    std::str::from_utf8(digits).expect("a chunk size").trim(),
                    16,
                )
                .expect("a chunk size");
                let data = line + 2;
                if size == 0 {
                    if rest.len() >= data + 2 {
                        assert_eq!(&rest[data..data + 2], b"\r\n", "no trailers");
                        self.done = true;
                    }
                    return;
                }
                if rest.len() < data + size + 2 {
                    return;
                }
                assert_eq!(&rest[data + size..data + size + 2], b"\r\n");
                if self.keep_body {
                    let start = self.cursor + data;
                    let chunk = self.bytes[start..start + size].to_vec();
                    self.decoded.extend_from_slice(&chunk);
                }
                self.body += size;
                self.chunks += 1;
                self.cursor += data + size + 2;
            },
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

// ---------------------------------------------------------------------------
// The driver
// ---------------------------------------------------------------------------

/// Polls a server once: the one function callgrind collects in (`instr`).
#[inline(never)]
fn poll_server<F: Future>(future: Pin<&mut F>, cx: &mut Context<'_>) -> Poll<F::Output> {
    future.poll(cx)
}

/// What one round counted.
#[derive(Default, Clone, Copy)]
struct Counts {
    requests: usize,
    wire: usize,
    body: usize,
    chunks: usize,
    polls: usize,
}

/// One connection: `requests` requests of `route`, each answered before
/// the next is sent, then the client's EOF and the server's end.
fn round<F: Future<Output = ()>>(
    connection: F,
    pipe: &Pipe,
    client: &mut Client,
    route: Route,
    requests: usize,
) -> Counts {
    let mut cx = Context::from_waker(Waker::noop());
    let mut connection = pin!(connection);
    let mut counts = Counts::default();
    let request = route.request();
    for _ in 0..requests {
        client.begin();
        let sent = pipe.client_send(request);
        assert_eq!(sent, request.len(), "the request fits the socket");
        loop {
            counts.polls += 1;
            if poll_server(connection.as_mut(), &mut cx).is_ready() {
                panic!("the server ended the connection before its response");
            }
            counts.wire += pipe.client_recv(|data| client.feed(data));
            if client.done {
                break;
            }
        }
        assert_eq!(client.status, 200, "status of {}", route.name());
        counts.requests += 1;
        counts.body += client.body;
        counts.chunks += client.chunks;
    }
    pipe.client_close();
    let mut spins = 0;
    while poll_server(connection.as_mut(), &mut cx).is_pending() {
        pipe.client_recv(|_| {});
        spins += 1;
        assert!(spins < 1000, "the server does not end at EOF");
    }
    counts
}

/// One round on `server`.
fn serve<P: picoserve::routing::PathRouter>(
    server: Server,
    pico_app: &picoserve::Router<P>,
    pipe: &Pipe,
    client: &mut Client,
    route: Route,
    requests: usize,
) -> Counts {
    pipe.reset();
    match server {
        Server::Ringstream => {
            let mut buffers = Buffers::<RS_RX, RS_TX>::new();
            round(
                servers::ringstream(pipe, &mut buffers),
                pipe,
                client,
                route,
                requests,
            )
        }
        Server::Picoserve => {
            let mut http_buffer = [0u8; PICO_HTTP];
            round(
                servers::picoserve(pico_app, pipe, &mut http_buffer),
                pipe,
                client,
                route,
                requests,
            )
        }
    }
}

// ---------------------------------------------------------------------------
// The modes
// ---------------------------------------------------------------------------

struct Options {
    budget: f64,
    min_rounds: usize,
    small_per_round: usize,
    live_per_round: usize,
}

fn flag(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn usage() -> ! {
    eprintln!(
        "usage: peer-embedded measure [--budget SECS] [--min-rounds N] [--small-per-round N] [--live-per-round N]\n       \
         peer-embedded instr <ringstream|picoserve> <small|livedata> <requests>"
    );
    std::process::exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("measure") => {
            let parse = |name: &str, default: f64| {
                flag(&args, name).map_or(default, |v| v.parse().unwrap_or_else(|_| usage()))
            };
            measure(&Options {
                budget: parse("--budget", 3.0),
                min_rounds: parse("--min-rounds", 31.0) as usize,
                small_per_round: parse("--small-per-round", 100.0) as usize,
                live_per_round: parse("--live-per-round", 2.0) as usize,
            });
        }
        Some("instr") => {
            let server = args
                .get(1)
                .and_then(|s| Server::parse(s))
                .unwrap_or_else(|| usage());
            let route = args
                .get(2)
                .and_then(|s| Route::parse(s))
                .unwrap_or_else(|| usage());
            let requests: usize = args
                .get(3)
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| usage());
            let pipe = Pipe::new();
            let app = servers::pico_app();
            let mut client = Client::new();
            let counts = serve(server, &app, &pipe, &mut client, route, requests);
            println!("requests {}", counts.requests);
        }
        _ => usage(),
    }
}

/// Checks both servers' answers to both routes; prints their heads.
fn check<P: picoserve::routing::PathRouter>(pico_app: &picoserve::Router<P>, pipe: &Pipe) {
    let mut expected = String::new();
    servers::write_livedata(&mut expected, servers::UNIX_SECS).expect("the live data prints");
    for server in Server::ALL {
        for route in Route::ALL {
            let mut client = Client::new();
            client.keep_body = true;
            serve(server, pico_app, pipe, &mut client, route, 1);
            eprintln!(
                "{} {}: {} body bytes\n{}",
                server.name(),
                route.name(),
                client.body,
                client.head().trim_end().replace("\r\n", "\n  ")
            );
            let want = match route {
                Route::Small => servers::HELLO.as_bytes(),
                Route::LiveData => expected.as_bytes(),
            };
            assert!(
                client.decoded == want,
                "{} answered {} with a different body",
                server.name(),
                route.name()
            );
        }
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    }
}

/// The first and third quartiles of sorted `v` (the medians of its lower
/// and upper halves).
fn quartiles(v: &[f64]) -> (f64, f64) {
    let half = v.len() / 2;
    let mut lower = v[..half].to_vec();
    let mut upper = v[v.len() - half..].to_vec();
    if half == 0 {
        return (f64::NAN, f64::NAN);
    }
    (median(&mut lower), median(&mut upper))
}

/// The median and quartiles of the round-by-round ratios `a[r] / b[r]`.
fn ratio_quartiles(a: &[f64], b: &[f64]) -> (f64, f64, f64) {
    let mut ratios: Vec<f64> = a.iter().zip(b).map(|(a, b)| a / b).collect();
    let m = median(&mut ratios);
    let (q1, q3) = quartiles(&ratios);
    (m, q1, q3)
}

/// The calling thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), in
/// nanoseconds: unlike wall time, it leaves out the time the thread
/// waited for a core (the machine is shared).
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable `timespec` that outlives the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn measure(options: &Options) {
    let pipe = Pipe::new();
    let app = servers::pico_app();
    check(&app, &pipe);
    let mut client = Client::new();

    // RAM per connection slot.
    let ram = |server: Server| -> (usize, usize) {
        match server {
            Server::Ringstream => (
                servers::ringstream_future_bytes(&pipe),
                size_of::<Buffers<RS_RX, RS_TX>>(),
            ),
            Server::Picoserve => (servers::picoserve_future_bytes(&app, &pipe), PICO_HTTP),
        }
    };

    for route in Route::ALL {
        let per_round = match route {
            Route::Small => options.small_per_round,
            Route::LiveData => options.live_per_round,
        }
        .max(1);
        // Counted round: formatter runs, allocations, wire bytes, writes.
        let mut counted = Vec::new();
        for server in Server::ALL {
            serve(server, &app, &pipe, &mut client, route, per_round); // warm-up
            FORMATTER_RUNS.store(0, Relaxed);
            let allocations = ALLOCATIONS.load(Relaxed);
            let counts = serve(server, &app, &pipe, &mut client, route, per_round);
            let allocations = ALLOCATIONS.load(Relaxed) - allocations;
            let runs = FORMATTER_RUNS.load(Relaxed);
            counted.push((counts, allocations, runs, pipe.writes.get()));
        }
        // Timed rounds, alternating: wall time and the thread's CPU time.
        let mut wall: Vec<Vec<f64>> = Server::ALL
            .iter()
            .map(|_| Vec::with_capacity(100_000))
            .collect();
        let mut cpu = wall.clone();
        let start = Instant::now();
        while (start.elapsed().as_secs_f64() < options.budget || wall[0].len() < options.min_rounds)
            && wall[0].len() < 100_000
        {
            // A B, then B A: neither server always runs first.
            let mut order = Server::ALL.into_iter().enumerate().collect::<Vec<_>>();
            if wall[0].len() % 2 == 1 {
                order.reverse();
            }
            for (i, server) in order {
                let (t, c) = (Instant::now(), thread_cpu_ns());
                let counts = serve(server, &app, &pipe, &mut client, route, per_round);
                let n = counts.requests as f64;
                cpu[i].push((thread_cpu_ns() - c) as f64 / n);
                wall[i].push(t.elapsed().as_nanos() as f64 / n);
            }
        }
        // picoserve's time over ringstream-embedded's, round by round.
        let (wall_ratio, wall_q1, wall_q3) = ratio_quartiles(&wall[1], &wall[0]);
        let (cpu_ratio, cpu_q1, cpu_q3) = ratio_quartiles(&cpu[1], &cpu[0]);
        for (i, server) in Server::ALL.into_iter().enumerate() {
            let (counts, allocations, runs, writes) = counted[i];
            let n = counts.requests as f64;
            let rounds = wall[i].len();
            let min = wall[i].iter().copied().fold(f64::INFINITY, f64::min);
            let med = median(&mut wall[i]);
            let cpu_med = median(&mut cpu[i]);
            let (future_bytes, buffer_bytes) = ram(server);
            println!(
                "{{\"server\":\"{}\",\"route\":\"{}\",\"requests_per_round\":{},\"rounds\":{},\
                 \"median_ns\":{:.1},\"min_ns\":{:.1},\"cpu_median_ns\":{:.1},\
                 \"formatter_runs\":{},\"allocations\":{},\
                 \"wire_bytes\":{},\"body_bytes\":{},\"chunks\":{},\"socket_writes\":{},\"polls\":{},\
                 \"future_bytes\":{},\"buffer_bytes\":{},\"socket_bytes\":{},\
                 \"picoserve_over_ringstream\":{:.4},\"ratio_q1\":{:.4},\"ratio_q3\":{:.4},\
                 \"cpu_picoserve_over_ringstream\":{:.4},\"cpu_ratio_q1\":{:.4},\"cpu_ratio_q3\":{:.4}}}",
                server.name(),
                route.name(),
                per_round,
                rounds,
                med,
                min,
                cpu_med,
                runs as f64 / n,
                allocations as f64 / n,
                counts.wire as f64 / n,
                counts.body as f64 / n,
                counts.chunks as f64 / n,
                writes as f64 / n,
                counts.polls as f64 / n,
                future_bytes,
                buffer_bytes,
                2 * SOCKET_BUF,
                wall_ratio,
                wall_q1,
                wall_q3,
                cpu_ratio,
                cpu_q1,
                cpu_q3,
            );
        }
    }
}
