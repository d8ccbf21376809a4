//! Behind a real HAProxy (Debian's `haproxy`): two `ringstream serve`
//! instances with `--proxy-protocol`, HAProxy sending `send-proxy-v2` and
//! checking `/readyz`. The handlers see the client's own address and
//! port, the health checks are answered, and draining one instance
//! (SIGTERM with `--drain-delay`) during a steady stream of requests loses
//! none of them.
//!
//! Without `haproxy` on the machine the test says SKIPPED and passes;
//! `.ci/run` installs it and sets `RINGSTREAM_REQUIRE_HAPROXY=1`, which
//! makes its absence a failure.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};

use crate::cli::{start_serving, Server};
use std::thread;
use std::time::{Duration, Instant};

fn find_haproxy() -> Option<PathBuf> {
    let candidates = [
        "/usr/sbin/haproxy",
        "/usr/bin/haproxy",
        "/usr/local/sbin/haproxy",
    ];
    candidates.iter().map(PathBuf::from).find(|p| p.exists())
}

/// A `ringstream serve` that takes PROXY headers from 127.0.0.1 and
/// drains for `drain` seconds; its address and every stderr line.
fn start_instance(drain: u64) -> (Server, SocketAddr, Arc<Mutex<Vec<String>>>) {
    let drain = drain.to_string();
    let (instance, addr, lines) = start_serving(&[
        "--workers",
        "1",
        "--proxy-protocol",
        "--proxy-from",
        "127.0.0.1/32",
        "--drain-delay",
        &drain,
    ]);
    let kept = Arc::new(Mutex::new(Vec::new()));
    let keeping = kept.clone();
    thread::spawn(move || {
        for line in lines {
            keeping.lock().unwrap().push(line);
        }
    });
    (instance, addr, kept)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One GET of `path` on `conn` (keep-alive); the status, or `None` when
/// the connection failed.
fn get(conn: &mut TcpStream, path: &str) -> Option<u16> {
    let request = format!("GET {path} HTTP/1.1\r\nHost: lb\r\n\r\n");
    conn.write_all(request.as_bytes()).ok()?;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if conn.read(&mut byte).ok()? == 0 {
            return None;
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
    let status = head.get(9..12)?.parse().ok()?;
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())?;
    let mut body = vec![0u8; length];
    conn.read_exact(&mut body).ok()?;
    Some(status)
}

fn wait_for(what: &str, deadline: Duration, mut done: impl FnMut() -> bool) {
    let until = Instant::now() + deadline;
    while !done() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(50));
    }
}

fn count(lines: &Mutex<Vec<String>>, needle: &str) -> usize {
    lines
        .lock()
        .unwrap()
        .iter()
        .filter(|l| l.contains(needle))
        .count()
}

#[test]
fn haproxy_with_send_proxy_v2_sees_clients_and_drains_without_losing_a_request() {
    let Some(haproxy) = find_haproxy() else {
        let required = std::env::var("RINGSTREAM_REQUIRE_HAPROXY").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "haproxy is required (RINGSTREAM_REQUIRE_HAPROXY=1) but not installed"
        );
        println!("SKIPPED: haproxy is not installed (apt-get install haproxy)");
        return;
    };
    let (mut a, a_addr, a_lines) = start_instance(2);
    let (_b, b_addr, b_lines) = start_instance(2);
    let front = free_port();
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("haproxy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = format!(
        "global\n  maxconn 256\n\
         defaults\n  mode http\n  timeout connect 2s\n  timeout client 10s\n  timeout server 10s\n\
         \x20 retries 3\n  option redispatch\n  retry-on conn-failure empty-response\n\
         frontend front\n  bind 127.0.0.1:{front}\n  default_backend instances\n\
         backend instances\n  balance roundrobin\n\
         \x20 option httpchk GET /readyz\n  http-check expect status 200\n\
         \x20 default-server check inter 100ms fall 1 rise 2 send-proxy-v2 check-send-proxy\n\
         \x20 server a {a_addr}\n  server b {b_addr}\n"
    );
    let config_path = dir.join("haproxy.cfg");
    std::fs::write(&config_path, &config).unwrap();
    let haproxy = Command::new(&haproxy)
        .arg("-db")
        .arg("-f")
        .arg(&config_path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start haproxy");
    let _haproxy = Server(haproxy);
    let front: SocketAddr = format!("127.0.0.1:{front}").parse().unwrap();

    // Both instances up: the health checks answered by each.
    wait_for(
        "the balancer's health checks",
        Duration::from_secs(10),
        || count(&a_lines, "/readyz") > 0 && count(&b_lines, "/readyz") > 0,
    );
    let mut conn = None;
    wait_for("the balancer to serve", Duration::from_secs(10), || {
        let Ok(mut c) = TcpStream::connect(front) else {
            return false;
        };
        let served = get(&mut c, "/healthz") == Some(200);
        conn = Some(c);
        served
    });
    let mut conn = conn.unwrap();
    // The handlers see this client's own address and port.
    let me = conn.local_addr().unwrap().to_string();
    for _ in 0..4 {
        assert_eq!(get(&mut conn, "/bytes/13"), Some(200));
    }
    let mine = |lines: &Mutex<Vec<String>>| {
        lines
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.contains("/bytes/13") && l.contains(&me))
            .count()
    };
    wait_for(
        "both instances to log this client",
        Duration::from_secs(5),
        || mine(&a_lines) > 0 && mine(&b_lines) > 0,
    );

    // A steady stream of requests while instance a drains and stops.
    let stop = Arc::new(AtomicBool::new(false));
    let (results, statuses) = mpsc::channel();
    let streamer = {
        let stop = stop.clone();
        thread::spawn(move || {
            let mut conn = TcpStream::connect(front).unwrap();
            while !stop.load(Ordering::Relaxed) {
                let status = get(&mut conn, "/bytes/13");
                results.send(status).unwrap();
                if status.is_none() {
                    conn = TcpStream::connect(front).unwrap();
                }
                thread::sleep(Duration::from_millis(5));
            }
        })
    };
    thread::sleep(Duration::from_millis(500));
    let pid = a.0.id() as libc::pid_t;
    // SAFETY: sends a signal to the child this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    wait_for("instance a to exit", Duration::from_secs(15), || {
        a.0.try_wait().expect("poll the child").is_some()
    });
    thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::Relaxed);
    streamer.join().unwrap();
    let statuses: Vec<Option<u16>> = statuses.try_iter().collect();
    let failed = statuses.iter().filter(|s| **s != Some(200)).count();
    println!(
        "{} requests while instance a drained and stopped; {failed} failed; a logged {} /readyz, b {}",
        statuses.len(),
        count(&a_lines, "/readyz"),
        count(&b_lines, "/readyz"),
    );
    assert!(statuses.len() > 100, "only {} requests", statuses.len());
    assert_eq!(failed, 0, "requests lost while draining: {statuses:?}");
    assert!(
        a_lines
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("draining")),
        "instance a never drained"
    );
    assert!(a.0.try_wait().unwrap().is_some_and(|s| s.success()));
    let _ = std::fs::remove_dir_all(&dir);
}
