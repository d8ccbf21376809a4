//! What the peer servers share: the pattern `/bytes/{n}` is served from
//! (the same bytes as `ringstream serve`'s demo), the headers that come
//! with it, and the `--addr` and `--workers` flags.

use std::net::SocketAddr;
use std::sync::OnceLock;

/// Size of the shared pattern block, in bytes: 64 KiB, as in ringstream's
/// demo (`crates/ringstream-cli/src/app/mod.rs`).
pub const PATTERN_BLOCK: usize = 64 * 1024;

/// The line the pattern block repeats, the same as ringstream's demo.
/// `ringstream-bench peers` compares the first body of every peer with
/// ringstream's block, so a change on one side only fails loudly.
const LINE: &[u8] = b"ringstream streams bytes at memory speed with constant memory.\n";

/// `Content-Type` of `/bytes/{n}`, as ringstream sends it.
pub const CONTENT_TYPE: &str = "application/octet-stream";

/// The most `/bytes/{n}` serves, in bytes: 1 GiB, as ringstream's demo.
pub const MAX_BYTES: u64 = 1 << 30;

/// The shared pattern block, made once; every response body is a slice
/// of it (or, past its size, several).
pub fn pattern_block() -> &'static str {
    static BLOCK: OnceLock<String> = OnceLock::new();
    BLOCK.get_or_init(|| {
        let bytes: Vec<u8> = LINE.iter().copied().cycle().take(PATTERN_BLOCK).collect();
        String::from_utf8(bytes).expect("the pattern line is ASCII")
    })
}

/// The `n` of a `/bytes/{n}` path, if it is one and `n` is at most
/// [`MAX_BYTES`].
pub fn bytes_len(path: &str) -> Option<u64> {
    let digits = path.strip_prefix("/bytes/")?;
    if digits.starts_with('+') {
        return None;
    }
    digits.parse().ok().filter(|&n| n <= MAX_BYTES)
}

/// The command line of a peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Args {
    /// `--addr IP:PORT` (`127.0.0.1:8082` without one).
    pub addr: SocketAddr,
    /// `--workers N`: threads that serve connections (1 without one).
    pub workers: usize,
}

/// The flags on the command line, `--addr ADDR` and `--workers N` (or
/// `--addr=ADDR`, `--workers=N`). Exits with a message on anything else.
pub fn args() -> Args {
    parse(std::env::args().skip(1)).unwrap_or_else(|why| usage(&why))
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut addr = "127.0.0.1:8082".to_owned();
    let mut workers = "1".to_owned();
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) => (name.to_owned(), Some(value.to_owned())),
            None => (arg.clone(), None),
        };
        let slot = match name.as_str() {
            "--addr" => &mut addr,
            "--workers" => &mut workers,
            _ => return Err(format!("unknown argument `{arg}`")),
        };
        *slot = match inline {
            Some(value) => value,
            None => args.next().unwrap_or_default(),
        };
    }
    let addr = addr
        .parse()
        .map_err(|_| format!("`{addr}` is not an address"))?;
    let workers = workers
        .parse()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("`{workers}` is not a worker count"))?;
    Ok(Args { addr, workers })
}

fn usage(why: &str) -> ! {
    eprintln!("{why}\nusage: {} [--addr IP:PORT] [--workers N]", program());
    std::process::exit(2)
}

fn program() -> String {
    std::env::args().next().unwrap_or_else(|| "peer".into())
}

/// Says on stdout, in one line, where the server listens: the bench waits
/// for this line before it connects.
pub fn announce(name: &str, addr: SocketAddr) {
    println!("{name} peer listening on http://{addr}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_repeats_the_line() {
        let block = pattern_block().as_bytes();
        assert_eq!(block.len(), PATTERN_BLOCK);
        assert_eq!(&block[..LINE.len()], LINE);
        assert_eq!(&block[LINE.len()..2 * LINE.len()], LINE);
    }

    #[test]
    fn flags() {
        let args = |list: &[&str]| parse(list.iter().map(|a| a.to_string()));
        assert_eq!(
            args(&[]),
            Ok(Args {
                addr: "127.0.0.1:8082".parse().unwrap(),
                workers: 1
            })
        );
        let given = args(&["--addr", "127.0.0.1:9000", "--workers=2"]).unwrap();
        assert_eq!(given.addr.port(), 9000);
        assert_eq!(given.workers, 2);
        assert!(args(&["--workers", "0"]).is_err());
        assert!(args(&["--threads", "2"]).is_err());
    }

    #[test]
    fn paths() {
        assert_eq!(bytes_len("/bytes/13"), Some(13));
        assert_eq!(bytes_len("/bytes/+13"), None);
        assert_eq!(bytes_len("/bytes/x"), None);
        assert_eq!(bytes_len("/bytes/2000000000"), None);
        assert_eq!(bytes_len("/other"), None);
    }
}
