//! The `ringstream` binary: `ringstream serve` over a real socket, and the
//! one log line it writes per request.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// Kills the server when the test ends, passed or not.
pub(crate) struct Server(pub(crate) Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start `ringstream serve` at the default log level, with stderr piped
/// (not a terminal); returns the server, its address and its stderr lines.
fn start() -> (Server, SocketAddr, mpsc::Receiver<String>) {
    start_with(&[])
}

/// [`start`] with more command-line arguments.
fn start_with(extra: &[&str]) -> (Server, SocketAddr, mpsc::Receiver<String>) {
    start_serving(&[&["--workers", "1"], extra].concat())
}

/// `ringstream serve --addr 127.0.0.1:0` with `args`, as [`start`].
pub(crate) fn start_serving(args: &[&str]) -> (Server, SocketAddr, mpsc::Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ringstream"))
        .args(["serve", "--addr", "127.0.0.1:0"])
        .args(args)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the ringstream binary");
    let stdout = child.stdout.take().expect("stdout");
    let stderr = child.stderr.take().expect("stderr");
    let server = Server(child);
    let mut first = String::new();
    BufReader::new(stdout)
        .read_line(&mut first)
        .expect("read the address line");
    let addr = first
        .trim()
        .strip_prefix("ringstream listening on http://")
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
        .parse()
        .expect("an address");
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    (server, addr, rx)
}

/// The first stderr line containing `needle`, waiting up to 20 s.
fn log_line(lines: &mpsc::Receiver<String>, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) if line.contains(needle) => return line,
            Ok(_) => continue,
            Err(e) => panic!("no log line with {needle:?}: {e}"),
        }
    }
}

#[test]
fn serve_logs_one_plain_line_per_request() {
    let (_server, addr, lines) = start();
    let mut conn = TcpStream::connect(addr).expect("connect");
    conn.write_all(b"GET /bytes/10 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .expect("send");
    let mut response = Vec::new();
    conn.read_to_end(&mut response).expect("read");
    assert!(response.starts_with(b"HTTP/1.1 200 OK\r\n"));

    let line = log_line(&lines, "/bytes/10");
    // Method, target, status, body bytes and duration, as plain text: the
    // log is not a terminal, so it carries no colour escapes.
    assert!(!line.contains('\x1b'), "escape codes in {line:?}");
    for field in [
        "http.request.method=GET",
        "http.target=/bytes/10",
        "http.response.status_code=200",
        "http.response.body.size=10",
        "duration_us=",
    ] {
        assert!(line.contains(field), "{field} missing from {line:?}");
    }
}

#[test]
fn serve_logs_why_it_rejected_a_request() {
    let (_server, addr, lines) = start();
    let mut conn = TcpStream::connect(addr).expect("connect");
    conn.write_all(
        b"POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n\
          Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    )
    .expect("send");
    let mut response = Vec::new();
    conn.read_to_end(&mut response).expect("read");
    assert!(response.starts_with(b"HTTP/1.1 400 Bad Request\r\n"));

    let line = log_line(&lines, "request rejected");
    let reason = ringstream::ringstream_core::Error::ContentLengthWithTransferEncoding.to_string();
    assert!(line.contains("status=400"), "{line:?}");
    assert!(line.contains(&reason), "{reason:?} missing from {line:?}");
}

#[test]
fn serve_logs_a_request_body_cut_short() {
    let (_server, addr, lines) = start();
    let mut conn = TcpStream::connect(addr).expect("connect");
    conn.write_all(b"POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nonly ten b")
        .expect("send");
    conn.shutdown(std::net::Shutdown::Write)
        .expect("half-close");
    let mut rest = Vec::new();
    let _ = conn.read_to_end(&mut rest);

    let line = log_line(&lines, "request body cut short");
    assert!(line.contains("http.target=/upload"), "{line:?}");
    assert!(line.contains("http.request.method=POST"), "{line:?}");
}

/// `--max-body-size` sets the body limit: an upload of exactly that size is
/// served, one byte more gets 413 (and is logged as rejected).
#[test]
fn serve_takes_the_max_body_size() {
    let (_server, addr, lines) = start_with(&["--max-body-size", "10"]);
    let upload = |length: usize| {
        let mut conn = TcpStream::connect(addr).expect("connect");
        let mut request = format!(
            "POST /upload HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\
             Content-Length: {length}\r\n\r\n"
        )
        .into_bytes();
        request.resize(request.len() + length, b'x');
        conn.write_all(&request).expect("send");
        let mut response = Vec::new();
        conn.read_to_end(&mut response).expect("read");
        String::from_utf8_lossy(&response).into_owned()
    };
    let served = upload(10);
    assert!(served.starts_with("HTTP/1.1 200 OK\r\n"), "{served}");
    assert!(served.contains("\"bytes\":10"), "{served}");
    let refused = upload(11);
    assert!(
        refused.starts_with("HTTP/1.1 413 Content Too Large\r\n"),
        "{refused}"
    );
    let line = log_line(&lines, "request rejected");
    assert!(line.contains("status=413"), "{line:?}");
    assert!(line.contains("body too large"), "{line:?}");
}

/// A second SIGTERM during the graceful shutdown closes every connection at
/// once instead of waiting for the shutdown deadline.
#[cfg(unix)]
#[test]
fn a_second_signal_stops_the_server_at_once() {
    let (mut server, addr, lines) = start();
    // An upload that never finishes keeps the graceful shutdown waiting.
    let mut conn = TcpStream::connect(addr).expect("connect");
    conn.write_all(b"POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 1000000\r\n\r\nslow")
        .expect("send");
    // The request has reached the server once its connection is counted.
    wait_until_accepted(addr);
    let pid = server.0.id() as libc::pid_t;
    // SAFETY: sends a signal to the child this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    log_line(&lines, "shutting down");
    thread::sleep(Duration::from_millis(500));
    assert!(
        server.0.try_wait().expect("poll the child").is_none(),
        "the server should still wait for the upload"
    );
    let second = Instant::now();
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let deadline = second + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = server.0.try_wait().expect("poll the child") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the server ignored the second signal"
        );
        thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
    assert!(second.elapsed() < Duration::from_secs(5));
    drop(conn);
}

/// Waits until the server has answered a request on another connection,
/// so the connections opened before it have been accepted.
fn wait_until_accepted(addr: SocketAddr) {
    let mut probe = TcpStream::connect(addr).expect("connect");
    probe
        .write_all(b"GET /bytes/1 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .expect("send");
    let mut response = Vec::new();
    probe.read_to_end(&mut response).expect("read");
    assert!(response.starts_with(b"HTTP/1.1 200 OK\r\n"));
}

/// `--send-buffer` sets the send buffer of the connections: the server
/// starts, and a response many times that size still arrives whole.
#[test]
fn serve_takes_a_send_buffer() {
    let (_server, addr, _lines) = start_with(&["--send-buffer", "4096"]);
    let mut conn = TcpStream::connect(addr).expect("connect");
    conn.write_all(b"GET /bytes/1000000 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .expect("send");
    let mut response = Vec::new();
    conn.read_to_end(&mut response).expect("read");
    let head_end = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head")
        + 4;
    assert!(response.starts_with(b"HTTP/1.1 200"));
    assert_eq!(response.len() - head_end, 1_000_000);
}

/// `--reuse-port`: one listener per thread on one port. Many clients at
/// once are all served, by both listeners' threads; the counters at
/// `/metrics` are the whole server's; and on SIGTERM a request under way
/// is finished before the server exits.
#[cfg(target_os = "linux")]
#[test]
fn serve_reuse_port_serves_on_every_listener() {
    let (mut server, addr, lines) = start_serving(&[
        "--workers",
        "2",
        "--reuse-port",
        "--max-connections",
        "200",
        "--no-access-log",
    ]);
    let line = log_line(&lines, "one listener per thread");
    assert!(line.contains("listeners=2"), "{line:?}");
    let pid = server.0.id();
    let listeners = listener_threads(pid);
    assert_eq!(listeners.len(), 2, "{listeners:?}");
    let before: Vec<u64> = listeners.iter().map(|&t| ran_ns(pid, t)).collect();

    // 8 clients at once, each opening 8 connections in turn, each with
    // three requests pipelined.
    let clients: Vec<_> = (0..8)
        .map(|_| {
            thread::spawn(move || {
                for _ in 0..8 {
                    let mut conn = TcpStream::connect(addr).expect("connect");
                    conn.write_all(
                        b"GET /bytes/13 HTTP/1.1\r\nHost: t\r\n\r\n\
                          GET /bytes/13 HTTP/1.1\r\nHost: t\r\n\r\n\
                          GET /bytes/13 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
                    )
                    .expect("send");
                    let mut response = String::new();
                    conn.read_to_string(&mut response).expect("read");
                    assert_eq!(
                        response.matches("HTTP/1.1 200 OK\r\n").count(),
                        3,
                        "{response}"
                    );
                }
            })
        })
        .collect();
    for client in clients {
        client.join().expect("a client");
    }
    // 64 connections, spread by a hash of their ports: each listener's
    // thread served a good part of them.
    let ran: Vec<u64> = listeners
        .iter()
        .zip(&before)
        .map(|(&t, before)| ran_ns(pid, t) - before)
        .collect();
    let total: u64 = ran.iter().sum();
    assert!(
        ran.iter().all(|&ns| ns * 10 >= total),
        "the listeners' threads ran {ran:?} ns"
    );

    let counters = metrics(addr);
    assert!(
        counters.contains("\nringstream_requests_total 193\n"),
        "{counters}"
    );

    // An upload under way when the signal comes is finished.
    let before = requests_total(&metrics(addr));
    let mut upload = TcpStream::connect(addr).expect("connect");
    upload
        .write_all(b"POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nhalf ")
        .expect("send");
    // Under way once the server has read its head, by whichever listener:
    // each request counts as its head is read, and the only others are
    // these polls, each counting itself. (An open connection is not
    // enough: a connection still in a listener's queue, or accepted with
    // its head unread, is closed at the signal, not served.)
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut polls = 0;
    loop {
        polls += 1;
        if requests_total(&metrics(addr)) > before + polls {
            break;
        }
        assert!(Instant::now() < deadline, "the upload's head was not read");
        thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: sends a signal to the child this test started.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) }, 0);
    log_line(&lines, "shutting down");
    thread::sleep(Duration::from_millis(200));
    upload.write_all(b"done!").expect("send the rest");
    let mut response = String::new();
    upload.read_to_string(&mut response).expect("read");
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    assert!(response.contains("\"bytes\":10"), "{response}");
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = server.0.try_wait().expect("poll the child") {
            break status;
        }
        assert!(Instant::now() < deadline, "the server did not exit");
        thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
}

/// `--reuse-port` refuses a cap smaller than its listener count.
#[test]
fn serve_reuse_port_needs_a_connection_per_listener() {
    let output = Command::new(env!("CARGO_BIN_EXE_ringstream"))
        .args(["serve", "--addr", "127.0.0.1:0", "--workers", "4"])
        .args(["--reuse-port", "--max-connections", "3"])
        .output()
        .expect("run the ringstream binary");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--max-connections 3 is less than the 4 listeners"),
        "{stderr}"
    );
}

/// The server's counters, from `/metrics`.
fn metrics(addr: SocketAddr) -> String {
    let mut conn = TcpStream::connect(addr).expect("connect");
    conn.write_all(b"GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .expect("send");
    let mut text = String::new();
    conn.read_to_string(&mut text).expect("read");
    text
}

/// `ringstream_requests_total` in a `/metrics` response.
#[cfg(target_os = "linux")]
fn requests_total(metrics: &str) -> u64 {
    metrics
        .lines()
        .find_map(|line| line.strip_prefix("ringstream_requests_total "))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or_else(|| panic!("no ringstream_requests_total in {metrics}"))
}

/// The thread ids of the server's listeners (threads `ringstream-N`).
#[cfg(target_os = "linux")]
fn listener_threads(pid: u32) -> Vec<u32> {
    let mut threads = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).expect("list threads") {
        let dir = task.expect("a thread").path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if comm.trim_end().starts_with("ringstream-") {
            let tid: Option<u32> = dir
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.parse().ok());
            threads.extend(tid);
        }
    }
    threads.sort_unstable();
    threads
}

/// CPU time thread `tid` of `pid` has run, in nanoseconds.
#[cfg(target_os = "linux")]
fn ran_ns(pid: u32, tid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/schedstat"))
        .expect("read schedstat");
    stat.split_whitespace()
        .next()
        .and_then(|ns| ns.parse().ok())
        .expect("run time")
}
