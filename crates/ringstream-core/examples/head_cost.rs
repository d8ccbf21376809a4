//! Parses one of three fixed request heads N times, for counting the
//! instructions of `HeadParser::parse` under callgrind (deterministic,
//! unlike a timed benchmark):
//!
//! ```text
//! cargo build --release -p ringstream-core --example head_cost
//! valgrind --tool=callgrind --callgrind-out-file=/tmp/hc.%p \
//!     target/release/examples/head_cost short 10000
//! ```
//!
//! Two runs with different N give the cost of one parse: the difference of
//! their totals divided by the difference of N. The heads are `short` (a
//! 35-byte GET with `Host` alone), `browser` (a GET with 12 fields, about
//! 500 bytes) and `post` (a POST with `Content-Length`).

use std::hint::black_box;

use ringstream_core::h1::{Field, HeadParser};
use ringstream_core::Limits;

const SHORT: &[u8] = b"GET /bytes/13 HTTP/1.1\r\nHost: x\r\n\r\n";

const BROWSER: &[u8] = b"GET /static/app.js?v=3 HTTP/1.1\r\n\
Host: www.example.com\r\n\
User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\n\
Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n\
Accept-Language: en-US,en;q=0.5\r\n\
Accept-Encoding: gzip, deflate, br, zstd\r\n\
Referer: https://www.example.com/index.html\r\n\
Connection: keep-alive\r\n\
Cookie: session=4f2a9c1e7b; theme=dark\r\n\
Upgrade-Insecure-Requests: 1\r\n\
Sec-Fetch-Dest: script\r\n\
Sec-Fetch-Mode: no-cors\r\n\
Priority: u=2\r\n\
\r\n";

const POST: &[u8] = b"POST /api/items HTTP/1.1\r\n\
Host: api.example.com:8080\r\n\
User-Agent: curl/8.5.0\r\n\
Accept: */*\r\n\
Content-Type: application/json\r\n\
Content-Length: 27\r\n\
\r\n";

fn main() {
    let mut args = std::env::args().skip(1);
    let which = args.next().unwrap_or_else(|| "short".to_owned());
    let n: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let wire = match which.as_str() {
        "short" => SHORT,
        "browser" => BROWSER,
        "post" => POST,
        other => {
            eprintln!("unknown head {other:?}: short, browser or post");
            std::process::exit(2);
        }
    };
    let mut parser = HeadParser::new(Limits::DEFAULT);
    let mut fields = [Field::EMPTY; 24];
    let mut total = 0usize;
    for _ in 0..n {
        parser.reset();
        match parser.parse(black_box(wire), &mut fields) {
            Ok(Some(head)) => total += black_box(head).head_len,
            other => panic!("{which}: {other:?}"),
        }
    }
    println!("{which}: {} bytes, {n} parses, {total}", wire.len());
}
