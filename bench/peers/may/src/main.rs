//! The may_minihttp peer of `ringstream-bench peers`: `GET /bytes/{n}` on
//! `--workers` worker threads of may's coroutine scheduler (one by
//! default), written as a may_minihttp user would.
//!
//! may_minihttp takes a `&'static str` body without copying it into the
//! response (it is copied once, into the connection's write buffer, as
//! every response is): the body is a slice of the shared pattern block.
//! Past the block's 64 KiB it is written into the response's own buffer,
//! the framework's way for bodies not known up front. `Content-Type` is
//! set on the response; may_minihttp writes `Server: M`, `Date` and
//! `Content-Length` itself, and its `Server` cannot be changed.
//!
//! ```text
//! peer-may --addr 127.0.0.1:8082 [--workers 2]
//! ```

use std::io;

use may_minihttp::{HttpServer, HttpService, Request, Response};
use peer_common::{bytes_len, pattern_block};

/// The `Content-Type` line of `/bytes/{n}` (may_minihttp takes whole
/// header lines).
const CONTENT_TYPE_LINE: &str = "Content-Type: application/octet-stream";

/// The service: one per connection, nothing in it.
#[derive(Clone)]
struct Bytes;

impl HttpService for Bytes {
    fn call(&mut self, req: Request, rsp: &mut Response) -> io::Result<()> {
        let Some(n) = bytes_len(req.path()) else {
            rsp.status_code(400, "Bad Request");
            rsp.body("expected /bytes/{n}, n at most 1073741824\n");
            return Ok(());
        };
        rsp.header(CONTENT_TYPE_LINE);
        let block = pattern_block();
        match usize::try_from(n) {
            Ok(n) if n <= block.len() => rsp.body(&block[..n]),
            _ => {
                let body = rsp.body_mut();
                let mut remaining = n;
                while remaining > 0 {
                    let take = remaining.min(block.len() as u64) as usize;
                    body.extend_from_slice(&block.as_bytes()[..take]);
                    remaining -= take as u64;
                }
            }
        }
        Ok(())
    }
}

fn main() -> io::Result<()> {
    let peer_common::Args { addr, workers } = peer_common::args();
    // `--workers` threads (1 by default) run the coroutines (may runs one
    // per core by default). may pins its workers to cores itself; the
    // bench pins the whole process with taskset instead, as it does every
    // server.
    may::config().set_workers(workers);
    may::config().set_worker_pin(false);
    let server = HttpServer(Bytes).start(addr)?;
    peer_common::announce("may_minihttp", addr);
    server
        .join()
        .map_err(|_| io::Error::other("the server's coroutine panicked"))
}
