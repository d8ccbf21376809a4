//! `ServeDir` over real sockets and through `Service::call` directly.
//!
//! The wire tests write their requests as raw byte strings on a
//! `tokio::net::TcpStream`, so a reader sees exactly what crosses the
//! socket, and parse the replies by hand. Two clients are used: one that
//! asks for `Connection: close` and reads to EOF, and one that keeps the
//! connection open and frames each reply by its `Content-Length`, the way
//! a browser does, sending several requests one after another on the same
//! connection. Nothing outside Rust is needed; every reply has a deadline,
//! so a server that stops answering fails the test instead of hanging it.
//!
//! Every test builds its own tree:
//!
//! ```text
//! base/
//!   outside.txt            never served
//!   outside/secret         never served
//!   root/
//!     index.html  style.css  app.js  blob.bin (1 MiB)  empty.txt
//!     big.txt  big.txt.gz  big.txt.br      precompressed variants
//!     plain.txt                            no variants
//!     link-in.css -> style.css             symlink inside the root
//!     link-out -> ../outside               symlink leaving the root
//!     .env                                 hidden
//!     sub/index.html
//! ```

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use http::{Request, StatusCode};
use http_body::Body;
use http_body_util::BodyExt;
use ringstream::fs::{FileBody, ServeDir};
use ringstream::server::Server;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tower_service::Service;

const INDEX: &str = "<!doctype html><title>root</title>\n";
const SUB_INDEX: &str = "<!doctype html><title>sub</title>\n";
const STYLE: &str = "body { color: #333; }\n";
const APP: &str = "console.log('app');\n";
const SECRET: &str = "TOP-SECRET-OUTSIDE-THE-ROOT";
const GZ: &[u8] = b"\x1f\x8bPRETEND-GZIP-BYTES";
const BR: &[u8] = b"PRETEND-BROTLI-BYTES";
const MIB: usize = 1024 * 1024;
/// The longest a test waits for one reply, in seconds.
const REPLY_DEADLINE_SECS: u64 = 20;

// ---------------------------------------------------------------------------
// Fixture
// ---------------------------------------------------------------------------

/// A temporary directory tree, removed on drop.
struct Tree {
    base: PathBuf,
}

impl Tree {
    fn root(&self) -> PathBuf {
        self.base.join("root")
    }

    fn blob(&self) -> Vec<u8> {
        std::fs::read(self.root().join("blob.bin")).expect("blob")
    }

    fn big(&self) -> Vec<u8> {
        std::fs::read(self.root().join("big.txt")).expect("big.txt")
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

fn tree() -> Tree {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let base = std::env::temp_dir().join(format!("ringstream-fs-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let root = base.join("root");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::create_dir_all(base.join("outside")).unwrap();
    std::fs::write(base.join("outside.txt"), SECRET).unwrap();
    std::fs::write(base.join("outside/secret"), SECRET).unwrap();
    std::fs::write(root.join("index.html"), INDEX).unwrap();
    std::fs::write(root.join("sub/index.html"), SUB_INDEX).unwrap();
    std::fs::write(root.join("style.css"), STYLE).unwrap();
    std::fs::write(root.join("app.js"), APP).unwrap();
    std::fs::write(root.join("empty.txt"), "").unwrap();
    std::fs::write(root.join("plain.txt"), "plain\n").unwrap();
    std::fs::write(root.join(".env"), SECRET).unwrap();
    // 1 MiB of pseudo-random bytes (xorshift), so offsets are distinguishable.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let blob: Vec<u8> = (0..MIB)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()[0]
        })
        .collect();
    std::fs::write(root.join("blob.bin"), &blob).unwrap();
    let big: String = (0..5000)
        .map(|i| format!("line {i:05} of big.txt\n"))
        .collect();
    std::fs::write(root.join("big.txt"), big).unwrap();
    std::fs::write(root.join("big.txt.gz"), GZ).unwrap();
    std::fs::write(root.join("big.txt.br"), BR).unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("style.css", root.join("link-in.css")).unwrap();
        std::os::unix::fs::symlink("../outside", root.join("link-out")).unwrap();
    }
    Tree { base }
}

// ---------------------------------------------------------------------------
// Server and clients
// ---------------------------------------------------------------------------

/// A server on 127.0.0.1 serving `service`; shut down on drop.
struct Running {
    addr: SocketAddr,
    _stop: oneshot::Sender<()>,
}

async fn start(service: ServeDir) -> Running {
    let server = Server::bind("127.0.0.1:0").await.expect("bind");
    let addr = server.local_addr().expect("local addr");
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(server.serve(service).with_graceful_shutdown(async {
        let _ = stopped.await;
    }));
    Running { addr, _stop: stop }
}

/// A parsed HTTP/1.1 response read from a socket.
#[derive(Debug)]
struct Reply {
    status_line: String,
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// Where the head of a response ends: the offset just past its blank line.
fn head_end(raw: &[u8]) -> Option<usize> {
    raw.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

impl Reply {
    /// A whole close-delimited response: the head, and everything after it
    /// as the body.
    fn parse(raw: &[u8]) -> Reply {
        let end = head_end(raw).expect("complete head");
        let mut reply = Reply::parse_head(&raw[..end]);
        reply.body = raw[end..].to_vec();
        reply
    }

    /// The status line and fields of `head` (which ends in its blank line);
    /// the body is left empty.
    fn parse_head(head: &[u8]) -> Reply {
        let head = std::str::from_utf8(head).expect("ascii head");
        let mut lines = head.trim_end_matches("\r\n").split("\r\n");
        let status_line = lines.next().unwrap().to_owned();
        let status = status_line.split(' ').nth(1).unwrap().parse().unwrap();
        let headers = lines
            .map(|l| {
                let (n, v) = l.split_once(':').expect("field");
                (n.trim().to_ascii_lowercase(), v.trim().to_owned())
            })
            .collect();
        Reply {
            status_line,
            status,
            headers,
            body: Vec::new(),
        }
    }

    /// The length of the body that follows this head, in bytes (RFC 9112
    /// §6.3): none after `HEAD`, `1xx`, `204` and `304`, otherwise
    /// `Content-Length`; `None` means "until the connection closes".
    fn body_len(&self, after_head_request: bool) -> Option<usize> {
        if after_head_request || matches!(self.status, 100..=199 | 204 | 304) {
            return Some(0);
        }
        assert_eq!(
            self.header("transfer-encoding"),
            None,
            "ServeDir frames every body with Content-Length"
        );
        self.header("content-length")
            .map(|n| n.parse().expect("numeric Content-Length"))
    }

    fn header(&self, name: &str) -> Option<&str> {
        let mut found = self.headers.iter().filter(|(n, _)| n == name);
        let first = found.next().map(|(_, v)| v.as_str());
        assert!(
            found.next().is_none(),
            "{name} sent twice: {:?}",
            self.headers
        );
        first
    }

    fn must(&self, name: &str) -> &str {
        self.header(name)
            .unwrap_or_else(|| panic!("no {name} in {:?}", self.headers))
    }
}

/// Fails the test when `step` takes longer than [`REPLY_DEADLINE_SECS`].
async fn within_deadline<T>(what: &str, step: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(REPLY_DEADLINE_SECS), step)
        .await
        .unwrap_or_else(|_| panic!("{what}: no reply within {REPLY_DEADLINE_SECS} s"))
}

/// Sends `request` exactly as written (it should ask for
/// `Connection: close`) and reads the reply to EOF.
async fn raw(addr: SocketAddr, request: &str) -> Reply {
    within_deadline(request, async {
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        stream.write_all(request.as_bytes()).await.expect("write");
        let mut out = Vec::new();
        stream.read_to_end(&mut out).await.expect("read");
        Reply::parse(&out)
    })
    .await
}

/// `GET path` with extra header lines (each ending in `\r\n`).
async fn get(addr: SocketAddr, path: &str, extra: &str) -> Reply {
    raw(
        addr,
        &format!("GET {path} HTTP/1.1\r\nHost: t\r\n{extra}Connection: close\r\n\r\n"),
    )
    .await
}

/// A persistent connection: requests go out one at a time, and each reply
/// is framed by its head (`Content-Length`, or no body after `HEAD` and
/// `304`) rather than by the connection closing.
struct KeepAlive {
    stream: TcpStream,
    /// Bytes read past the end of the previous reply.
    buf: Vec<u8>,
}

impl KeepAlive {
    async fn connect(addr: SocketAddr) -> KeepAlive {
        KeepAlive {
            stream: TcpStream::connect(addr).await.expect("connect"),
            buf: Vec::new(),
        }
    }

    /// Sends `request` exactly as written and reads one reply.
    async fn send(&mut self, request: &str) -> Reply {
        let is_head = request.starts_with("HEAD ");
        within_deadline(request, async {
            self.stream
                .write_all(request.as_bytes())
                .await
                .expect("write");
            self.read_reply(is_head).await
        })
        .await
    }

    /// `method target` with the fields a command-line client sends, plus
    /// `extra` lines (each ending in `\r\n`); the connection stays open.
    async fn request(&mut self, method: &str, target: &str, extra: &str) -> Reply {
        self.send(&format!(
            "{method} {target} HTTP/1.1\r\nHost: t\r\nUser-Agent: ringstream-tests\r\nAccept: */*\r\n{extra}\r\n"
        ))
        .await
    }

    /// `GET target` with `extra` header lines.
    async fn get(&mut self, target: &str, extra: &str) -> Reply {
        self.request("GET", target, extra).await
    }

    async fn read_reply(&mut self, after_head_request: bool) -> Reply {
        let end = loop {
            if let Some(end) = head_end(&self.buf) {
                break end;
            }
            assert!(self.fill().await > 0, "connection closed inside a head");
        };
        let mut reply = Reply::parse_head(&self.buf[..end]);
        self.buf.drain(..end);
        match reply.body_len(after_head_request) {
            Some(len) => {
                while self.buf.len() < len {
                    assert!(self.fill().await > 0, "connection closed inside a body");
                }
                reply.body = self.buf.drain(..len).collect();
            }
            None => {
                while self.fill().await > 0 {}
                reply.body = std::mem::take(&mut self.buf);
            }
        }
        reply
    }

    /// Reads once more from the socket into `buf`; 0 at EOF.
    async fn fill(&mut self) -> usize {
        self.buf.reserve(64 * 1024);
        self.stream.read_buf(&mut self.buf).await.expect("read")
    }

    /// `GET target`, following `301`, `302`, `303`, `307` and `308`
    /// redirects by hand on the same connection (at most 5); returns the
    /// final reply and how many redirects were followed.
    async fn get_following(&mut self, target: &str) -> (Reply, usize) {
        let mut target = target.to_owned();
        for redirects in 0..=5 {
            let reply = self.get(&target, "").await;
            if !matches!(reply.status, 301 | 302 | 303 | 307 | 308) {
                return (reply, redirects);
            }
            let location = reply.must("location");
            assert!(
                location.starts_with('/') && !location.starts_with("//"),
                "a same-origin absolute path: {location}"
            );
            target = location.to_owned();
        }
        panic!("more than 5 redirects from {target}");
    }
}

// ---------------------------------------------------------------------------
// Whole files
// ---------------------------------------------------------------------------

// RFC 9110 §8.3 and §8.6: type by extension, exact length, identical bytes.
#[tokio::test]
async fn small_files_have_type_length_and_validators() {
    let tree = tree();
    let server = start(ServeDir::new(tree.root())).await;
    for (path, body, mime) in [
        ("/style.css", STYLE, "text/css; charset=utf-8"),
        ("/app.js", APP, "text/javascript; charset=utf-8"),
        ("/index.html", INDEX, "text/html; charset=utf-8"),
        ("/link-in.css", STYLE, "text/css; charset=utf-8"),
        ("/empty.txt", "", "text/plain; charset=utf-8"),
    ] {
        let reply = get(server.addr, path, "").await;
        assert_eq!(reply.status_line, "HTTP/1.1 200 OK", "{path}");
        assert_eq!(reply.must("content-type"), mime, "{path}");
        assert_eq!(
            reply.must("content-length"),
            body.len().to_string(),
            "{path}"
        );
        assert_eq!(reply.must("accept-ranges"), "bytes");
        assert!(reply.must("etag").starts_with('"') && reply.must("etag").ends_with('"'));
        assert!(reply.must("last-modified").ends_with(" GMT"));
        assert_eq!(reply.header("transfer-encoding"), None);
        assert_eq!(reply.header("vary"), None, "{path} has no variant");
        assert_eq!(reply.body, body.as_bytes(), "{path}");
    }
}

// Media, fonts, archives and Markdown come from the maintained table.
#[tokio::test]
async fn content_types_beyond_the_common_web_files() {
    let tree = tree();
    for name in [
        "clip.mp4",
        "song.mp3",
        "clip.webm",
        "font.woff2",
        "photo.avif",
        "files.zip",
        "README.md",
    ] {
        std::fs::write(tree.root().join(name), name).unwrap();
    }
    let server = start(ServeDir::new(tree.root())).await;
    let mut conn = KeepAlive::connect(server.addr).await;
    for (path, mime) in [
        ("/clip.mp4", "video/mp4"),
        ("/song.mp3", "audio/mpeg"),
        ("/clip.webm", "video/webm"),
        ("/font.woff2", "font/woff2"),
        ("/photo.avif", "image/avif"),
        ("/files.zip", "application/zip"),
        ("/README.md", "text/markdown; charset=utf-8"),
    ] {
        let reply = conn.get(path, "").await;
        assert_eq!(reply.status, 200, "{path}");
        assert_eq!(reply.must("content-type"), mime, "{path}");
        assert_eq!(reply.body, path.trim_start_matches('/').as_bytes());
    }
}

// `ServeDir::mime_type` wins over the table and adds extensions it lacks;
// it applies to the name asked for, HEAD and precompressed variants too.
#[tokio::test]
async fn mime_type_overrides_the_table() {
    let tree = tree();
    std::fs::write(tree.root().join("notes.md"), "# notes\n").unwrap();
    std::fs::write(tree.root().join("LOUD.MD"), "# LOUD\n").unwrap();
    std::fs::write(tree.root().join("scene.glb"), "glTF").unwrap();
    let server = start(
        ServeDir::new(tree.root())
            .precompressed_gzip()
            .mime_type("md", "text/plain; charset=utf-8")
            .mime_type(".GLB", "model/gltf-binary")
            .mime_type("txt", "text/x-first")
            .mime_type("TXT", "text/plain; charset=iso-8859-1"),
    )
    .await;
    let mut conn = KeepAlive::connect(server.addr).await;
    for (path, mime) in [
        ("/notes.md", "text/plain; charset=utf-8"),
        ("/LOUD.MD", "text/plain; charset=utf-8"),
        ("/scene.glb", "model/gltf-binary"),
        ("/plain.txt", "text/plain; charset=iso-8859-1"),
        ("/style.css", "text/css; charset=utf-8"),
        ("/blob.bin", "application/octet-stream"),
    ] {
        let reply = conn.get(path, "").await;
        assert_eq!(reply.status, 200, "{path}");
        assert_eq!(reply.must("content-type"), mime, "{path}");
    }
    let reply = conn.request("HEAD", "/notes.md", "").await;
    assert_eq!(reply.must("content-type"), "text/plain; charset=utf-8");
    let reply = conn.get("/big.txt", "Accept-Encoding: gzip\r\n").await;
    assert_eq!(reply.must("content-encoding"), "gzip");
    assert_eq!(reply.must("content-type"), "text/plain; charset=iso-8859-1");
}

#[tokio::test]
async fn one_mebibyte_file_is_identical_over_closing_and_persistent_connections() {
    let tree = tree();
    let blob = tree.blob();
    // A small block size makes the body many blocks long.
    let server = start(ServeDir::new(tree.root()).block_size(8192)).await;

    let reply = get(server.addr, "/blob.bin", "").await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.must("content-type"), "application/octet-stream");
    assert_eq!(reply.must("content-length"), MIB.to_string());
    assert!(reply.body == blob, "raw body differs from the file");

    // Framed by Content-Length on a connection that stays open: the body
    // ends exactly where the length says, and the connection carries the
    // next request.
    let mut conn = KeepAlive::connect(server.addr).await;
    for _ in 0..2 {
        let reply = conn.get("/blob.bin", "").await;
        assert_eq!(reply.status, 200);
        assert_eq!(reply.must("content-length"), MIB.to_string());
        assert!(
            reply.body == blob,
            "persistent-connection body differs from the file"
        );
    }
}

// RFC 9110 §9.3.2: HEAD has the GET headers and no body.
#[tokio::test]
async fn head_has_get_headers_and_no_body() {
    let tree = tree();
    let server = start(ServeDir::new(tree.root())).await;
    let get_reply = get(server.addr, "/blob.bin", "").await;
    let head = raw(
        server.addr,
        "HEAD /blob.bin HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert_eq!(head.status_line, "HTTP/1.1 200 OK");
    assert_eq!(head.must("content-length"), MIB.to_string());
    for name in ["content-type", "etag", "last-modified", "accept-ranges"] {
        assert_eq!(head.must(name), get_reply.must(name), "{name}");
    }
    assert!(head.body.is_empty());

    // On a persistent connection: no body bytes follow the head, so the
    // next reply starts right after it.
    let mut conn = KeepAlive::connect(server.addr).await;
    let reply = conn.request("HEAD", "/style.css", "").await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.must("content-length"), STYLE.len().to_string());
    let reply = conn.get("/style.css", "").await;
    assert_eq!(reply.status_line, "HTTP/1.1 200 OK");
    assert_eq!(reply.body, STYLE.as_bytes());
}

// ---------------------------------------------------------------------------
// Conditional requests (RFC 9110 §13)
// ---------------------------------------------------------------------------

#[tokio::test]
async fn if_none_match_uses_weak_comparison() {
    let tree = tree();
    let server = start(ServeDir::new(tree.root())).await;
    let first = get(server.addr, "/style.css", "").await;
    let etag = first.must("etag").to_owned();
    let last_modified = first.must("last-modified").to_owned();

    for value in [
        etag.clone(),
        format!("W/{etag}"),
        format!("\"nope\", {etag}"),
        "*".into(),
    ] {
        let reply = get(
            server.addr,
            "/style.css",
            &format!("If-None-Match: {value}\r\n"),
        )
        .await;
        assert_eq!(reply.status_line, "HTTP/1.1 304 Not Modified", "{value}");
        assert_eq!(reply.must("etag"), etag);
        assert_eq!(reply.must("last-modified"), last_modified);
        assert!(reply.body.is_empty());
    }
    let reply = get(server.addr, "/style.css", "If-None-Match: \"other\"\r\n").await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body, STYLE.as_bytes());

    // A cache revalidating on a persistent connection: the tag it stored
    // goes back in If-None-Match, and the 304 carries no body.
    let mut conn = KeepAlive::connect(server.addr).await;
    let stored = conn.get("/style.css", "").await.must("etag").to_owned();
    let reply = conn
        .get("/style.css", &format!("If-None-Match: {stored}\r\n"))
        .await;
    assert_eq!(reply.status, 304);
    assert!(reply.body.is_empty());
    assert_eq!(conn.get("/style.css", "").await.body, STYLE.as_bytes());
}

#[tokio::test]
async fn if_modified_since_past_and_future() {
    let tree = tree();
    let server = start(ServeDir::new(tree.root())).await;
    let future = "If-Modified-Since: Fri, 01 Jan 2100 00:00:00 GMT\r\n";
    let past = "If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n";

    assert_eq!(get(server.addr, "/style.css", future).await.status, 304);
    let reply = get(server.addr, "/style.css", past).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body, STYLE.as_bytes());
    // The exact Last-Modified value is "not modified".
    let lm = get(server.addr, "/style.css", "")
        .await
        .must("last-modified")
        .to_owned();
    let same = format!("If-Modified-Since: {lm}\r\n");
    assert_eq!(get(server.addr, "/style.css", &same).await.status, 304);
    // An obsolete date form is understood (RFC 9110 §5.6.7).
    let asctime = "If-Modified-Since: Fri Jan  1 00:00:00 2100\r\n";
    assert_eq!(get(server.addr, "/style.css", asctime).await.status, 304);
    // An invalid date is ignored.
    let bad = "If-Modified-Since: yesterday\r\n";
    assert_eq!(get(server.addr, "/style.css", bad).await.status, 200);
    // §13.2.2: If-None-Match present means If-Modified-Since is ignored.
    let both = format!("If-None-Match: \"other\"\r\n{future}");
    assert_eq!(get(server.addr, "/style.css", &both).await.status, 200);

    // Both ways on one persistent connection.
    let mut conn = KeepAlive::connect(server.addr).await;
    let reply = conn.get("/style.css", future).await;
    assert_eq!(reply.status, 304);
    assert!(reply.body.is_empty());
    let reply = conn.get("/style.css", past).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body, STYLE.as_bytes());
}

// RFC 9110 §13.1.1 and §13.1.4.
#[tokio::test]
async fn if_match_and_if_unmodified_since() {
    let tree = tree();
    let server = start(ServeDir::new(tree.root())).await;
    let etag = get(server.addr, "/style.css", "")
        .await
        .must("etag")
        .to_owned();
    let ok = get(server.addr, "/style.css", &format!("If-Match: {etag}\r\n")).await;
    assert_eq!(ok.status, 200);
    let weak = get(
        server.addr,
        "/style.css",
        &format!("If-Match: W/{etag}\r\n"),
    )
    .await;
    assert_eq!(weak.status, 412);
    assert_eq!(
        get(server.addr, "/style.css", "If-Match: \"x\"\r\n")
            .await
            .status,
        412
    );
    let old = "If-Unmodified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n";
    assert_eq!(get(server.addr, "/style.css", old).await.status, 412);
    // The obsolete RFC 850 form, with its two-digit year (RFC 9110 §5.6.7).
    let old = "If-Unmodified-Since: Sunday, 06-Nov-94 08:49:37 GMT\r\n";
    assert_eq!(get(server.addr, "/style.css", old).await.status, 412);
    let later = "If-Unmodified-Since: Thursday, 01-Jan-60 00:00:00 GMT\r\n";
    assert_eq!(get(server.addr, "/style.css", later).await.status, 200);
    // Not a valid HTTP-date (the day name is wrong): the field is ignored.
    let wrong_day = "If-Unmodified-Since: Mon, 06 Nov 1994 08:49:37 GMT\r\n";
    assert_eq!(get(server.addr, "/style.css", wrong_day).await.status, 200);
}

// ---------------------------------------------------------------------------
// Ranges (RFC 9110 §14)
// ---------------------------------------------------------------------------

#[tokio::test]
async fn single_byte_ranges() {
    let tree = tree();
    let blob = tree.blob();
    let len = blob.len();
    let server = start(ServeDir::new(tree.root())).await;

    for (spec, start, end) in [
        ("0-99", 0, 99),
        ("100-", 100, len - 1),
        ("-10", len - 10, len - 1),
        ("0-0", 0, 0),
    ] {
        let reply = get(
            server.addr,
            "/blob.bin",
            &format!("Range: bytes={spec}\r\n"),
        )
        .await;
        assert_eq!(reply.status_line, "HTTP/1.1 206 Partial Content", "{spec}");
        assert_eq!(
            reply.must("content-range"),
            format!("bytes {start}-{end}/{len}"),
            "{spec}"
        );
        assert_eq!(
            reply.must("content-length"),
            (end - start + 1).to_string(),
            "{spec}"
        );
        assert_eq!(reply.must("content-type"), "application/octet-stream");
        assert!(reply.body == blob[start..=end], "{spec}");
    }

    let reply = get(server.addr, "/blob.bin", "Range: bytes=5000000-\r\n").await;
    assert_eq!(reply.status_line, "HTTP/1.1 416 Range Not Satisfiable");
    assert_eq!(reply.must("content-range"), format!("bytes */{len}"));

    // Malformed, multiple, or another unit: ignored, the whole file is sent.
    for value in ["bytes=abc", "bytes=9-1", "bytes=0-1,5-6", "lines=1-2"] {
        let reply = get(server.addr, "/blob.bin", &format!("Range: {value}\r\n")).await;
        assert_eq!(reply.status, 200, "{value}");
        assert_eq!(reply.header("content-range"), None);
        assert_eq!(reply.body.len(), len, "{value}");
    }

    // Ranges on a persistent connection, each body framed by its
    // Content-Length.
    let mut conn = KeepAlive::connect(server.addr).await;
    let reply = conn.get("/blob.bin", "Range: bytes=0-99\r\n").await;
    assert_eq!(reply.status, 206);
    assert!(reply.body == blob[..100]);
    let reply = conn.get("/blob.bin", "Range: bytes=-10\r\n").await;
    assert_eq!(reply.status, 206);
    assert!(reply.body == blob[len - 10..]);
}

// RFC 9110 §13.1.5: If-Range with a matching validator keeps the range.
#[tokio::test]
async fn if_range() {
    let tree = tree();
    let server = start(ServeDir::new(tree.root())).await;
    let first = get(server.addr, "/blob.bin", "").await;
    let etag = first.must("etag").to_owned();
    let lm = first.must("last-modified").to_owned();
    let range = "Range: bytes=0-9\r\n";
    let with = |v: &str| format!("{range}If-Range: {v}\r\n");

    assert_eq!(
        get(server.addr, "/blob.bin", &with(&etag)).await.status,
        206
    );
    assert_eq!(get(server.addr, "/blob.bin", &with(&lm)).await.status, 206);
    assert_eq!(
        get(server.addr, "/blob.bin", &with("\"stale\""))
            .await
            .status,
        200
    );
    assert_eq!(
        get(server.addr, "/blob.bin", &with(&format!("W/{etag}")))
            .await
            .status,
        200
    );
    let old = "Sun, 06 Nov 1994 08:49:37 GMT";
    assert_eq!(get(server.addr, "/blob.bin", &with(old)).await.status, 200);
}

// ---------------------------------------------------------------------------
// Precompressed variants (RFC 9110 §12.5.3, §8.4)
// ---------------------------------------------------------------------------

#[tokio::test]
async fn precompressed_variants_follow_accept_encoding() {
    let tree = tree();
    let big = tree.big();
    let server = start(
        ServeDir::new(tree.root())
            .precompressed_gzip()
            .precompressed_br(),
    )
    .await;

    for (accept, body, encoding) in [
        ("gzip", GZ, Some("gzip")),
        ("gzip, deflate, br", BR, Some("br")),
        ("br;q=0.5, gzip", GZ, Some("gzip")),
        ("gzip;q=0", &big[..], None),
        ("gzip;q=0, br;q=0", &big[..], None),
        ("identity", &big[..], None),
        ("*", BR, Some("br")),
    ] {
        let reply = get(
            server.addr,
            "/big.txt",
            &format!("Accept-Encoding: {accept}\r\n"),
        )
        .await;
        assert_eq!(reply.status, 200, "{accept}");
        assert_eq!(reply.header("content-encoding"), encoding, "{accept}");
        assert_eq!(
            reply.must("content-type"),
            "text/plain; charset=utf-8",
            "{accept}"
        );
        assert_eq!(reply.must("vary"), "Accept-Encoding", "{accept}");
        assert_eq!(
            reply.must("content-length"),
            body.len().to_string(),
            "{accept}"
        );
        assert!(reply.body == body, "{accept}");
    }
    // No Accept-Encoding at all: identity, still with Vary.
    let reply = get(server.addr, "/big.txt", "").await;
    assert_eq!(reply.header("content-encoding"), None);
    assert_eq!(reply.must("vary"), "Accept-Encoding");
    assert!(reply.body == big);
    // A file without variants carries no Vary.
    let reply = get(server.addr, "/plain.txt", "Accept-Encoding: gzip, br\r\n").await;
    assert_eq!(reply.header("content-encoding"), None);
    assert_eq!(reply.header("vary"), None);
    // The variant has its own validator.
    let gz = get(server.addr, "/big.txt", "Accept-Encoding: gzip\r\n").await;
    let id = get(server.addr, "/big.txt", "").await;
    assert_ne!(gz.must("etag"), id.must("etag"));

    // The variant on a persistent connection, then the identity file.
    let mut conn = KeepAlive::connect(server.addr).await;
    let reply = conn.get("/big.txt", "Accept-Encoding: gzip\r\n").await;
    assert_eq!(reply.must("content-encoding"), "gzip");
    assert!(reply.body == GZ);
    let reply = conn.get("/big.txt", "").await;
    assert_eq!(reply.header("content-encoding"), None);
    assert!(reply.body == big);
}

#[tokio::test]
async fn precompressed_variants_are_off_by_default() {
    let tree = tree();
    let server = start(ServeDir::new(tree.root())).await;
    let reply = get(server.addr, "/big.txt", "Accept-Encoding: gzip, br\r\n").await;
    assert_eq!(reply.header("content-encoding"), None);
    assert_eq!(reply.header("vary"), None);
    assert!(reply.body == tree.big());
    // Only gzip enabled: br is not offered even when preferred.
    let server = start(ServeDir::new(tree.root()).precompressed_gzip()).await;
    let reply = get(
        server.addr,
        "/big.txt",
        "Accept-Encoding: br, gzip;q=0.1\r\n",
    )
    .await;
    assert_eq!(reply.header("content-encoding"), Some("gzip"));
}

// ---------------------------------------------------------------------------
// Directories, methods, mounting
// ---------------------------------------------------------------------------

#[tokio::test]
async fn directories_serve_their_index() {
    let tree = tree();
    let server = start(ServeDir::new(tree.root())).await;
    let reply = get(server.addr, "/", "").await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.must("content-type"), "text/html; charset=utf-8");
    assert_eq!(reply.body, INDEX.as_bytes());
    let reply = get(server.addr, "/sub/", "").await;
    assert_eq!(reply.body, SUB_INDEX.as_bytes());

    let reply = get(server.addr, "/sub?x=1", "").await;
    assert_eq!(reply.status_line, "HTTP/1.1 301 Moved Permanently");
    assert_eq!(reply.must("location"), "/sub/?x=1");
    // Leading slashes never make a protocol-relative redirect.
    let reply = get(server.addr, "//sub", "").await;
    assert_eq!(reply.must("location"), "/sub/");

    // Following the redirect ends on the index after exactly one hop.
    let mut conn = KeepAlive::connect(server.addr).await;
    let (reply, redirects) = conn.get_following("/sub").await;
    assert_eq!((reply.status, redirects), (200, 1));
    assert_eq!(reply.body, SUB_INDEX.as_bytes());

    let server = start(ServeDir::new(tree.root()).without_index_file()).await;
    assert_eq!(get(server.addr, "/", "").await.status, 404);
}

// RFC 9110 §15.5.6: 405 lists the allowed methods.
#[tokio::test]
async fn other_methods_get_405() {
    let tree = tree();
    let server = start(ServeDir::new(tree.root())).await;
    for method in ["POST", "PUT", "DELETE", "OPTIONS"] {
        let reply = raw(
            server.addr,
            &format!(
                "{method} /style.css HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            ),
        )
        .await;
        assert_eq!(
            reply.status_line, "HTTP/1.1 405 Method Not Allowed",
            "{method}"
        );
        assert_eq!(reply.must("allow"), "GET, HEAD");
    }
    // A form post, body and all.
    let mut conn = KeepAlive::connect(server.addr).await;
    let form = "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 3\r\n";
    let reply = conn
        .send(&format!(
            "POST /style.css HTTP/1.1\r\nHost: t\r\nAccept: */*\r\n{form}\r\nx=1"
        ))
        .await;
    assert_eq!(reply.status, 405);
    assert_eq!(reply.must("allow"), "GET, HEAD");
}

#[tokio::test]
async fn missing_files_are_404_with_a_text_body() {
    let tree = tree();
    let server = start(ServeDir::new(tree.root())).await;
    let reply = get(server.addr, "/nope.css", "").await;
    assert_eq!(reply.status_line, "HTTP/1.1 404 Not Found");
    assert_eq!(reply.must("content-type"), "text/plain; charset=utf-8");
    assert_eq!(reply.body, b"404 Not Found\n");
    assert_eq!(get(server.addr, "/style.css/x", "").await.status, 404);
}

#[tokio::test]
async fn strip_prefix_mounts_the_tree() {
    let tree = tree();
    let server = start(ServeDir::new(tree.root()).strip_prefix("/static")).await;
    let reply = get(server.addr, "/static/style.css", "").await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body, STYLE.as_bytes());
    assert_eq!(
        get(server.addr, "/static/", "").await.body,
        INDEX.as_bytes()
    );
    assert_eq!(
        get(server.addr, "/static", "").await.must("location"),
        "/static/"
    );
    assert_eq!(
        get(server.addr, "/static/sub", "").await.must("location"),
        "/static/sub/"
    );
    assert_eq!(get(server.addr, "/style.css", "").await.status, 404);
    assert_eq!(get(server.addr, "/staticstyle.css", "").await.status, 404);
}

// ---------------------------------------------------------------------------
// Confinement to the root
// ---------------------------------------------------------------------------

#[tokio::test]
async fn nothing_outside_the_root_is_served() {
    let tree = tree();
    let server = start(ServeDir::new(tree.root())).await;
    for target in [
        "/../outside.txt",
        "/..%2foutside.txt",
        "/%2e%2e/outside.txt",
        "/%2E%2E/outside.txt",
        "/.%2e/outside.txt",
        "/sub/..%2f..%2foutside.txt",
        "/sub/../../outside.txt",
        "/sub/%2e%2e/%2e%2e/outside.txt",
        "/link-out/secret",
        "/link-out/",
        "/%00",
        "/style.css%00.txt",
        "/.env",
        "/..%5c..%5coutside.txt",
        "/%ff",
        "/%252e%252e/outside.txt",
        "/%%2e%2e/outside.txt",
        "/%2e%2e%2foutside.txt",
        "/%C0%AE%C0%AE/outside.txt",
    ] {
        let reply = get(server.addr, target, "").await;
        assert!(
            matches!(reply.status, 400 | 404),
            "{target}: {}",
            reply.status_line
        );
        assert!(
            !String::from_utf8_lossy(&reply.body).contains(SECRET),
            "{target} leaked the outside file"
        );
    }
    // The same on one persistent connection, each target sent as is
    // (a client must not normalise the path before it leaves).
    let mut conn = KeepAlive::connect(server.addr).await;
    for target in ["/../outside.txt", "/%2e%2e/outside.txt", "/link-out/secret"] {
        let reply = conn.get(target, "").await;
        assert!(
            matches!(reply.status, 400 | 404),
            "{target}: {}",
            reply.status_line
        );
        assert!(!String::from_utf8_lossy(&reply.body).contains(SECRET));
    }
    // Hidden files can be enabled, and then are served.
    let server = start(ServeDir::new(tree.root()).serve_hidden(true)).await;
    assert_eq!(get(server.addr, "/.env", "").await.status, 200);
    assert_eq!(get(server.addr, "/../outside.txt", "").await.status, 404);
}

// ---------------------------------------------------------------------------
// Without a socket
// ---------------------------------------------------------------------------

async fn call(service: &mut ServeDir, request: Request<()>) -> http::Response<FileBody> {
    std::future::poll_fn(|cx| Service::<Request<()>>::poll_ready(service, cx))
        .await
        .unwrap_or_else(|e: Infallible| match e {});
    service.call(request).await.unwrap_or_else(|e| match e {})
}

#[tokio::test]
async fn service_call_without_a_socket() {
    let tree = tree();
    let mut service = ServeDir::new(tree.root());

    let response = call(&mut service, Request::get("/style.css").body(()).unwrap()).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.body().size_hint().exact(),
        Some(STYLE.len() as u64)
    );
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(bytes, STYLE.as_bytes());

    let response = call(&mut service, Request::get("/missing").body(()).unwrap()).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);

    let response = call(
        &mut service,
        Request::delete("/style.css").body(()).unwrap(),
    )
    .await;
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(response.headers()["allow"], "GET, HEAD");

    let response = call(&mut service, Request::head("/blob.bin").body(()).unwrap()).await;
    assert_eq!(response.headers()["content-length"], MIB.to_string());
    assert!(response.body().is_end_stream());
}

// The memory bound: a file is handed out in blocks of at most `block_size`.
#[tokio::test]
async fn file_body_streams_in_blocks() {
    let tree = tree();
    let blob = tree.blob();
    let mut service = ServeDir::new(tree.root()).block_size(10_000);
    let response = call(&mut service, Request::get("/blob.bin").body(()).unwrap()).await;
    let mut body = response.into_body();
    let mut received = Vec::with_capacity(MIB);
    let mut frames = 0;
    while let Some(frame) = body.frame().await {
        let data = frame.unwrap().into_data().unwrap();
        assert!(!data.is_empty() && data.len() <= 10_000);
        received.extend_from_slice(&data);
        frames += 1;
        assert_eq!(
            body.size_hint().exact(),
            Some((MIB - received.len()) as u64)
        );
    }
    assert_eq!(frames, MIB.div_ceil(10_000));
    assert!(received == blob);

    // A range is streamed the same way, from the right offset.
    let request = Request::get("/blob.bin")
        .header("range", "bytes=12345-54320")
        .body(())
        .unwrap();
    let response = call(&mut service, request).await;
    assert_eq!(response.status(), StatusCode::PARTIAL_CONTENT);
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    assert!(bytes == blob[12345..=54320]);
}
