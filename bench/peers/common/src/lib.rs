//! What the peer servers share: the pattern `/bytes/{n}` is served from
//! (the same bytes as `ringstream serve`'s demo), the headers that come
//! with it, and the `--addr` flag.

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

/// The address of `--addr ADDR` (or `--addr=ADDR`) on the command line,
/// `127.0.0.1:8082` without one. Exits with a message on anything else.
pub fn addr_from_args() -> SocketAddr {
    let mut args = std::env::args().skip(1);
    let mut addr = "127.0.0.1:8082".to_owned();
    while let Some(arg) = args.next() {
        match arg.strip_prefix("--addr") {
            Some("") => addr = args.next().unwrap_or_default(),
            Some(value) if value.starts_with('=') => addr = value[1..].to_owned(),
            _ => usage(&format!("unknown argument `{arg}`")),
        }
    }
    addr.parse()
        .unwrap_or_else(|_| usage(&format!("`{addr}` is not an address")))
}

fn usage(why: &str) -> ! {
    eprintln!("{why}\nusage: {} [--addr IP:PORT]", program());
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
    fn paths() {
        assert_eq!(bytes_len("/bytes/13"), Some(13));
        assert_eq!(bytes_len("/bytes/+13"), None);
        assert_eq!(bytes_len("/bytes/x"), None);
        assert_eq!(bytes_len("/bytes/2000000000"), None);
        assert_eq!(bytes_len("/other"), None);
    }
}
