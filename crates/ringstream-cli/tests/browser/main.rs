//! The `ringstream serve` dashboard in a real browser: Chromium, driven over
//! the DevTools protocol by the test's own client, loads the page from the
//! real binary and must show the live counters pushed over the `/ws/live`
//! WebSocket (its transport label saying so, its ping answered, its
//! interval changed from the page), a drawn chart and the `/api/livedata`
//! inverter table, with no console error, uncaught exception or failed
//! request. A second tab, whose `WebSocket` fails to open, must fall back
//! to the `/events` stream and show its counters. The full-page screenshot
//! of the first tab is kept as `target/browser/dashboard.png`.
//!
//! The browser is `$RINGSTREAM_CHROMIUM` when set (and then nothing else),
//! otherwise `/usr/bin/chromium` (Debian's `chromium`, which `.ci/run`
//! installs), otherwise `chromium`, `chromium-browser` or `google-chrome` on
//! `PATH`. The test starts that browser itself (headless, a fresh profile,
//! `--remote-debugging-port=0`) and gives it [`BROWSER_START_TIMEOUT`]
//! (15 s) to print its `DevTools listening on ws://…` line on stderr,
//! accept the DevTools connection and tell its version
//! (`Browser.getVersion`); only then is it driven. Without a browser, or
//! with one that exits first (such as Ubuntu's `chromium-browser`, a
//! wrapper that only says it requires the chromium snap), prints no such
//! line in time or does not answer in time, the test passes with a
//! `browser test SKIPPED: …` line on stderr naming the browser and what it
//! printed — unless `RINGSTREAM_REQUIRE_BROWSER=1` (as in `.ci/run`), which
//! makes each of these a failure. Either way the test ends within those
//! 15 s (at once when the browser exits): a browser that does not start is
//! killed with its process group, never waited on.
//!
//! The DevTools client is the test's own: [`cdp`], a blocking client of
//! the protocol over the browser's WebSocket address, on
//! tokio-tungstenite's WebSocket. Each page is a tab attached in a
//! flattened session; its events (console, log, exceptions, network and
//! WebSocket traffic) reach a listener that records them, a page counts
//! as loaded at its `load` event, and every call is given at most
//! [`DEVTOOLS_IDLE_TIMEOUT`] for its answer.
//!
//! Nothing the test starts outlives it, however it ends: `ringstream serve`
//! and the browser are started with `PR_SET_PDEATHSIG` = `SIGKILL` (so the
//! kernel kills them when the test process dies, even by a signal), are
//! killed when their guards drop, and write only into pipes the test reads
//! (or `/dev/null`), never into `cargo test`'s own output. The tests
//! below the dashboard's check this without a browser: fake browsers (a
//! snap wrapper, one that hangs, one that never answers over DevTools) are
//! given up on within the deadline and leave no process behind, and a
//! server started as the test starts it dies when its parent is killed
//! with `SIGKILL`.
//!
//! Environment: `DASHBOARD_MIN_EVENTS=N` waits for N stats pushes before the
//! screenshot (a longer chart); `RINGSTREAM_UPDATE_DOCS_SCREENSHOT=1` also
//! copies the screenshot to `docs/dashboard.png`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Value};

use cdp::{Browser, Event, Page};

mod cdp;

/// Names looked up on `PATH` after `/usr/bin/chromium`.
const BROWSER_NAMES: [&str; 3] = ["chromium", "chromium-browser", "google-chrome"];

/// How long the browser has, from its start, to print its DevTools address,
/// accept the DevTools connection and tell its version. Past it the browser
/// is killed and the test skips (fails under `RINGSTREAM_REQUIRE_BROWSER=1`).
const BROWSER_START_TIMEOUT: Duration = Duration::from_secs(15);

/// How long one DevTools call may go unanswered before the client gives
/// up on it (the opening handshake too).
const DEVTOOLS_IDLE_TIMEOUT: Duration = Duration::from_secs(120);

/// How many of the browser's first stderr lines are kept, to show when it
/// does not start.
const KEPT_BROWSER_LINES: usize = 8;

/// What the browser prints on stderr once it accepts DevTools connections,
/// before the `ws://` address.
const DEVTOOLS_LINE: &str = "DevTools listening on ";

/// The browser window, in CSS pixels (width, height).
const WINDOW: (u32, u32) = (1280, 900);

/// The flags Puppeteer's launcher starts Chromium with for automation: no
/// background work or throttling, no extensions, prompts or keychain.
const DEFAULT_ARGS: [&str; 23] = [
    "--disable-background-networking",
    "--enable-features=NetworkService,NetworkServiceInProcess",
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
    "--disable-breakpad",
    "--disable-client-side-phishing-detection",
    "--disable-component-extensions-with-background-pages",
    "--disable-default-apps",
    "--disable-dev-shm-usage",
    "--disable-extensions",
    "--disable-features=TranslateUI,BlinkGenPropertyTrees",
    "--disable-hang-monitor",
    "--disable-ipc-flooding-protection",
    "--disable-popup-blocking",
    "--disable-prompt-on-repost",
    "--disable-renderer-backgrounding",
    "--disable-sync",
    "--force-color-profile=srgb",
    "--metrics-recording-only",
    "--no-first-run",
    "--enable-automation",
    "--password-store=basic",
    "--use-mock-keychain",
];

/// Flags beyond [`DEFAULT_ARGS`], headless mode, no
/// sandbox (the tests run as root in CI) and no GPU: nothing in the browser
/// reaches out to the network on its own. The HTTPS page comes from
/// `--tls-self-signed`, whose certificate is made after the browser has
/// started: this profile trusts any certificate (it loads nothing but the
/// test's own server).
const EXTRA_FLAGS: [&str; 6] = [
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--ignore-certificate-errors",
];

/// How often a condition in the page is checked again, in milliseconds.
const POLL_MS: u64 = 100;

/// The environment variable that turns a run of this test binary into the
/// helper process of [`a_started_server_dies_when_the_process_that_started_it_is_killed`].
const HELPER_ENV: &str = "RINGSTREAM_BROWSER_TEST_HELPER";

/// What the helper process prints before the server's pid.
const HELPER_PID_LINE: &str = "helper's server pid ";

/// Makes `command`'s process die (`SIGKILL`) when the thread spawning it
/// ends — with the test, however it ends, even killed by a signal. Spawn
/// from the test's own thread (or one that lives as long as the test): the
/// kernel sends the signal when that *thread* exits.
fn dies_with_spawning_thread(command: &mut Command) -> &mut Command {
    // Our pid, taken before the fork: the child compares its parent with it.
    let parent = libc::pid_t::try_from(std::process::id()).expect("a pid fits pid_t");
    // SAFETY: the closure runs in the forked child before `exec`; it only
    // calls `prctl`, `getppid` and `_exit`, which are async-signal-safe, and
    // allocates nothing (`last_os_error` holds a plain errno).
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died between the fork and the prctl,
            // which then fires never.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        })
    }
}

/// Whether RINGSTREAM_REQUIRE_BROWSER=1 makes a browser that cannot be used
/// a failure.
fn browser_required() -> bool {
    std::env::var_os("RINGSTREAM_REQUIRE_BROWSER").is_some_and(|v| v == "1")
}

/// No browser to use, because `why`: a failure under
/// `RINGSTREAM_REQUIRE_BROWSER=1`, otherwise a `browser test SKIPPED` line.
fn skip_or_fail(why: &str) {
    assert!(
        !browser_required(),
        "RINGSTREAM_REQUIRE_BROWSER=1 but {why}; install Debian's `chromium` \
         (apt-get install chromium) or point RINGSTREAM_CHROMIUM at a browser"
    );
    // Straight to the stderr handle: libtest captures `eprintln!`, and a
    // skip must show in plain `cargo test` output.
    let _ = std::io::stderr().write_all(
        format!(
            "browser test SKIPPED: {why} (RINGSTREAM_REQUIRE_BROWSER=1 makes this a failure)\n"
        )
        .as_bytes(),
    );
}

/// A browser this test started, leader of its own process group: dropping
/// it kills the whole group (the browser's renderers and helpers too, and
/// what a wrapper script started), then reaps the leader.
struct BrowserProcess {
    child: Child,
    /// The first [`KEPT_BROWSER_LINES`] lines it printed on stderr.
    first_lines: Arc<Mutex<Vec<String>>>,
}

impl BrowserProcess {
    /// What it printed so far, for a message.
    fn printed(&self) -> String {
        let lines = self.first_lines.lock().unwrap_or_else(|e| e.into_inner());
        if lines.is_empty() {
            "it printed nothing".to_owned()
        } else {
            format!("it printed: {}", lines.join(" | "))
        }
    }
}

impl Drop for BrowserProcess {
    fn drop(&mut self) {
        if let Ok(pid) = libc::pid_t::try_from(self.child.id()) {
            // The leader is not reaped yet (at worst a zombie), so its pid
            // still names this group and no other.
            // SAFETY: kill(2) with a negative pid signals that process
            // group; no memory is involved.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
        // The leader once more, by itself: were it not leading a group,
        // the wait below would last as long as it does.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the browser at `path`, headless on a fresh `profile`, and waits
/// at most `timeout` for its DevTools address. Returns the running browser
/// and its `ws://` address; or, once the browser and its process group are
/// killed, why it did not start and what it printed.
fn start_browser(
    path: &Path,
    profile: &Path,
    timeout: Duration,
) -> Result<(BrowserProcess, String), String> {
    let started = Instant::now();
    let mut command = Command::new(path);
    command
        .arg("--remote-debugging-port=0")
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(DEFAULT_ARGS)
        .args(EXTRA_FLAGS)
        .arg(format!("--window-size={},{}", WINDOW.0, WINDOW.1))
        .args(["--headless", "--disable-gpu", "--no-sandbox"])
        .arg("--disable-setuid-sandbox")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = dies_with_spawning_thread(&mut command)
        .spawn()
        .map_err(|e| format!("{} cannot be run: {e}", path.display()))?;
    let stderr = child.stderr.take().expect("browser stderr");
    let browser = BrowserProcess {
        child,
        first_lines: Arc::new(Mutex::new(Vec::new())),
    };
    let (tx, rx) = mpsc::channel();
    let first_lines = browser.first_lines.clone();
    thread::spawn(move || {
        // Drains the browser's stderr for as long as it runs, so it never
        // blocks on a full pipe; ends when the pipe closes.
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            {
                let mut kept = first_lines.lock().unwrap_or_else(|e| e.into_inner());
                if kept.len() < KEPT_BROWSER_LINES {
                    kept.push(line.clone());
                }
            }
            let _ = tx.send(line);
        }
    });
    let did_not_start = |browser: &BrowserProcess, how: &str| {
        format!(
            "{} did not start within {} s: {how}; {}",
            path.display(),
            timeout.as_secs(),
            browser.printed()
        )
    };
    loop {
        let left = timeout.saturating_sub(started.elapsed());
        match rx.recv_timeout(left) {
            Ok(line) => {
                if let Some((_, url)) = line.split_once(DEVTOOLS_LINE) {
                    let url = url.trim();
                    if url.starts_with("ws://") {
                        return Ok((browser, url.to_owned()));
                    }
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let how = format!("no `{DEVTOOLS_LINE}ws://…` line on its stderr");
                return Err(did_not_start(&browser, &how));
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                // Its stderr closed: it exited (a process closes its files
                // a moment before it can be reaped), or it lives on without
                // stderr; dropping `browser` kills it either way.
                let mut browser = browser;
                let reaped = Instant::now() + Duration::from_millis(500);
                let how = loop {
                    match browser.child.try_wait() {
                        Ok(Some(status)) => break format!("it exited ({status})"),
                        Ok(None) if Instant::now() < reaped => {
                            thread::sleep(Duration::from_millis(10));
                        }
                        _ => break "it closed its stderr".to_owned(),
                    }
                };
                return Err(did_not_start(&browser, &how));
            }
        }
    }
}

/// A browser this test started, driven over the DevTools protocol. The
/// connection is dropped before the process, which then is killed.
struct Launched {
    browser: Browser,
    /// The browser's product and version.
    version: String,
    _process: BrowserProcess,
}

/// Starts the browser at `path` ([`start_browser`]) and connects to it;
/// all within `timeout`, or an error once the browser is killed.
fn launch_browser(path: &Path, profile: &Path, timeout: Duration) -> Result<Launched, String> {
    let started = Instant::now();
    let (process, url) = start_browser(path, profile, timeout)?;
    // The connection's handshake and the first calls have no deadline of
    // their own: on a thread, given what is left of `timeout`. Past it,
    // killing the browser closes the socket the thread waits on.
    let (tx, rx) = mpsc::channel();
    let connect_url = url.clone();
    thread::spawn(move || {
        let connected = Browser::connect(&connect_url, DEVTOOLS_IDLE_TIMEOUT).and_then(|browser| {
            let version = browser.product()?;
            Ok((browser, version))
        });
        let _ = tx.send(connected);
    });
    let not_answered = |how: String| {
        format!(
            "{} did not answer over DevTools ({url}) within {} s: {how}; {}",
            path.display(),
            timeout.as_secs(),
            process.printed()
        )
    };
    match rx.recv_timeout(timeout.saturating_sub(started.elapsed())) {
        Ok(Ok((browser, version))) => Ok(Launched {
            browser,
            version,
            _process: process,
        }),
        Ok(Err(e)) => Err(not_answered(e)),
        Err(_) => Err(not_answered("no answer".to_owned())),
    }
}

/// A child process killed when dropped, so a failing assertion leaves no
/// server behind.
struct ChildGuard {
    child: Child,
    what: &'static str,
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            eprintln!("stopping the {} (pid {})", self.what, self.child.id());
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// Stops the background traffic when dropped.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// A fresh, empty browser profile, removed when dropped.
struct Profile(PathBuf);

impl Drop for Profile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The browser to drive, and where it was looked for.
fn find_chromium() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("RINGSTREAM_CHROMIUM").filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        return if is_executable(&path) {
            Ok(path)
        } else {
            Err(format!(
                "RINGSTREAM_CHROMIUM={} is not an executable file",
                path.display()
            ))
        };
    }
    let debian = Path::new("/usr/bin/chromium");
    if is_executable(debian) {
        return Ok(debian.to_path_buf());
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in BROWSER_NAMES {
            let candidate = dir.join(name);
            if is_executable(&candidate) {
                return Ok(candidate);
            }
        }
    }
    Err(format!(
        "no browser: RINGSTREAM_CHROMIUM unset, no /usr/bin/chromium, none of {} on PATH",
        BROWSER_NAMES.join(", ")
    ))
}

/// Start `ringstream serve` on a free loopback port; returns the guard and
/// the address it printed. The server dies with the calling thread (see
/// [`dies_with_spawning_thread`]) and writes into pipes this process reads,
/// its stderr passed on with a `server: ` prefix.
fn start_server() -> (ChildGuard, SocketAddr) {
    start_server_with(&[], "http")
}

/// `ringstream serve` with `args`, announcing a `scheme://` address.
fn start_server_with(args: &[&str], scheme: &str) -> (ChildGuard, SocketAddr) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ringstream"));
    command
        .args(["serve", "--addr", "127.0.0.1:0"])
        .args(args)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = dies_with_spawning_thread(&mut command)
        .spawn()
        .expect("start the ringstream binary");
    let stdout = child.stdout.take().expect("server stdout");
    let stderr = child.stderr.take().expect("server stderr");
    let guard = ChildGuard {
        child,
        what: "server",
    };
    thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            eprintln!("server: {line}");
        }
    });
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        // Keep draining after the address, so the server never blocks on a
        // full pipe.
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    let prefix = format!("ringstream listening on {scheme}://");
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = rx
            .recv_timeout(left)
            .unwrap_or_else(|e| panic!("the server printed no `{prefix}ADDR` line: {e}"));
        if let Some(addr) = line.strip_prefix(prefix.as_str()) {
            let addr: SocketAddr = addr
                .trim()
                .parse()
                .unwrap_or_else(|e| panic!("bad address in {line:?}: {e}"));
            assert_ne!(addr.port(), 0, "the server printed port 0: {line:?}");
            return (guard, addr);
        }
    }
}

/// One `GET /bytes/4096` on a new connection; true on a complete 200.
fn one_request(addr: SocketAddr) -> bool {
    let Ok(mut conn) = TcpStream::connect_timeout(&addr, Duration::from_secs(2)) else {
        return false;
    };
    let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
    if conn
        .write_all(b"GET /bytes/4096 HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut response = Vec::new();
    if conn.read_to_end(&mut response).is_err() {
        return false;
    }
    response.starts_with(b"HTTP/1.1 200") && response.len() > 4096
}

/// Requests at a rate that rises and falls (1 to ~30 a second), so the
/// chart has a shape, until `stop` is set (at most three minutes).
fn spawn_traffic(
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    sent: Arc<AtomicU64>,
) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        let started = Instant::now();
        while !stop.load(Ordering::Relaxed) && started.elapsed() < Duration::from_secs(180) {
            if one_request(addr) {
                sent.fetch_add(1, Ordering::Relaxed);
            }
            let phase = started.elapsed().as_secs_f64() * 0.7;
            let pause_ms = 30.0 + 300.0 * (1.0 - phase.sin().abs());
            thread::sleep(Duration::from_millis(pause_ms as u64));
        }
    })
}

/// What the page reported through the DevTools protocol.
#[derive(Default)]
struct Seen {
    /// Console errors, uncaught exceptions, failed requests, crashes.
    errors: Vec<String>,
    /// The `data` of each `stats` event on the `/events` stream, as it
    /// arrived on the wire (independent of the page's own handling).
    stats: Vec<String>,
    /// Status and URL of each response the page received.
    responses: Vec<(u32, String)>,
    /// URL of each WebSocket the page opened.
    websockets: Vec<String>,
    /// Status of each WebSocket handshake's response.
    handshakes: Vec<u32>,
    /// Each text message received over a WebSocket, as JSON.
    ws_received: Vec<Value>,
    /// Each text message the page sent over a WebSocket, as JSON.
    ws_sent: Vec<Value>,
}

impl Seen {
    /// The `stats` of each `/ws/live` push received.
    fn pushes(&self) -> Vec<Value> {
        self.ws_received
            .iter()
            .filter(|m| m["type"] == "stats")
            .cloned()
            .collect()
    }
}

/// A WebSocket frame's text payload as JSON (`Null` for another frame).
fn frame_json(frame: &Value) -> Value {
    if frame["opcode"].as_f64() != Some(1.0) {
        return Value::Null;
    }
    frame["payloadData"]
        .as_str()
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or(Value::Null)
}

/// An HTTP status in an event (0 if it has none).
fn status(response: &Value) -> u32 {
    response["status"]
        .as_f64()
        .map_or(0, |status| status as u32)
}

/// A string field of an event (empty if it has none).
fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_owned()
}

fn on_event(seen: &Mutex<Seen>, event: &Event) {
    let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
    let params = &event.params;
    match event.method.as_str() {
        "Runtime.consoleAPICalled" if params["type"] == "error" => {
            let text: Vec<String> = params["args"]
                .as_array()
                .into_iter()
                .flatten()
                .map(
                    |a| match (a.get("value").filter(|v| !v.is_null()), &a["description"]) {
                        (Some(v), _) => v.to_string(),
                        (None, Value::String(d)) => d.clone(),
                        (None, _) => "?".to_owned(),
                    },
                )
                .collect();
            seen.errors
                .push(format!("console.error: {}", text.join(" ")));
        }
        "Runtime.exceptionThrown" => {
            let details = &params["exceptionDetails"];
            let description = text(&details["exception"]["description"]);
            seen.errors.push(format!(
                "uncaught: {} {description}",
                text(&details["text"])
            ));
        }
        "Log.entryAdded" if params["entry"]["level"] == "error" => {
            let entry = &params["entry"];
            seen.errors.push(format!(
                "log: {} ({})",
                text(&entry["text"]),
                entry["url"].as_str().unwrap_or("?")
            ));
        }
        "Network.responseReceived" => {
            let response = &params["response"];
            let (status, url) = (status(response), text(&response["url"]));
            if status >= 400 {
                seen.errors.push(format!("HTTP {status} for {url}"));
            }
            seen.responses.push((status, url));
        }
        "Network.eventSourceMessageReceived" if params["eventName"] == "stats" => {
            seen.stats.push(text(&params["data"]));
        }
        "Network.webSocketCreated" => seen.websockets.push(text(&params["url"])),
        "Network.webSocketHandshakeResponseReceived" => {
            seen.handshakes.push(status(&params["response"]));
        }
        "Network.webSocketFrameReceived" => {
            seen.ws_received.push(frame_json(&params["response"]));
        }
        "Network.webSocketFrameSent" => {
            seen.ws_sent.push(frame_json(&params["response"]));
        }
        "Network.webSocketFrameError" => {
            seen.errors.push(format!(
                "websocket frame error: {}",
                text(&params["errorMessage"])
            ));
        }
        "Inspector.targetCrashed" => seen.errors.push("the page crashed".to_owned()),
        _ => {}
    }
}

/// Evaluates `expression` in the page; its value must be JSON-serialisable.
fn eval(tab: &Page, expression: &str) -> Value {
    let wrapped = format!("JSON.stringify(({expression}))");
    let result = tab
        .evaluate(&wrapped)
        .unwrap_or_else(|e| panic!("evaluate {expression}: {e}"));
    let text = result
        .as_str()
        .unwrap_or_else(|| panic!("evaluate {expression}: no JSON text in {result}"));
    serde_json::from_str(text).unwrap_or_else(|e| panic!("evaluate {expression}: {e}: {text}"))
}

/// What the dashboard shows now.
const SNAPSHOT: &str = r##"(() => {
  const text = (id) => document.getElementById(id)?.textContent ?? null;
  const rows = [...document.querySelectorAll("#inverters tbody tr")];
  return {
    title: document.title,
    status: text("status"),
    status_class: document.getElementById("status")?.className ?? null,
    transport: text("transport"),
    rtt: text("rtt"),
    interval: document.getElementById("interval")?.value ?? null,
    rps: text("rps"),
    requests: text("requests"),
    connections: text("connections"),
    bytes_in: text("bytes-in"),
    bytes_out: text("bytes-out"),
    rss: text("rss"),
    total_power: text("total-power"),
    inverter_count: text("inverter-count"),
    rows: rows.length,
    first_row: rows[0] ? [...rows[0].cells].map((c) => c.textContent) : null,
  };
})()"##;

/// Pixels of the chart canvas in the line's accent colour (#f5b942).
const CHART_LINE_PIXELS: &str = r##"(() => {
  const c = document.getElementById("chart");
  const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 0; i < px.length; i += 4) {
    if (px[i + 3] > 128 && Math.abs(px[i] - 245) < 40 && Math.abs(px[i + 1] - 185) < 40 && Math.abs(px[i + 2] - 66) < 40) n++;
  }
  return n;
})()"##;

/// Polls `predicate` (a JavaScript expression) until it is true; past
/// `deadline`, fails naming `what` and showing what the page shows.
fn wait_for(tab: &Page, deadline: Instant, what: &str, predicate: &str) {
    loop {
        if eval(tab, &format!("Boolean({predicate})")) == Value::Bool(true) {
            return;
        }
        if Instant::now() >= deadline {
            panic!(
                "{what}: not seen in time; the page shows {}",
                eval(tab, SNAPSHOT)
            );
        }
        thread::sleep(Duration::from_millis(POLL_MS));
    }
}

/// Width and height of a PNG, after checking its signature and header.
fn png_size(data: &[u8]) -> (u32, u32) {
    assert!(
        data.starts_with(b"\x89PNG\r\n\x1a\n"),
        "the screenshot is not a PNG"
    );
    assert_eq!(
        data.get(12..16),
        Some(&b"IHDR"[..]),
        "the screenshot has no PNG header chunk"
    );
    let be = |range: std::ops::Range<usize>| {
        let bytes: [u8; 4] = data
            .get(range)
            .and_then(|b| b.try_into().ok())
            .expect("PNG header");
        u32::from_be_bytes(bytes)
    };
    (be(16..20), be(20..24))
}

/// The whole page as a PNG, beyond the window's height.
fn full_page_screenshot(tab: &Page) -> Vec<u8> {
    let size = eval(
        tab,
        "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]",
    );
    let dim = |i: usize| size[i].as_f64().expect("page size");
    let shot = tab
        .call(
            "Page.captureScreenshot",
            json!({
                "format": "png",
                "clip": { "x": 0, "y": 0, "width": dim(0), "height": dim(1), "scale": 1 },
                "fromSurface": true,
                "captureBeyondViewport": true,
            }),
        )
        .expect("capture the screenshot");
    let data = shot["data"].as_str().expect("the screenshot's data");
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .expect("screenshot base64")
}

/// Replaces the page's `WebSocket` with one that fails to open (an error,
/// then a close with 1006), as a browser does when a proxy or the server
/// refuses the upgrade.
const FAILING_WEBSOCKET: &str = r##"window.WebSocket = class extends EventTarget {
  static CONNECTING = 0; static OPEN = 1; static CLOSING = 2; static CLOSED = 3;
  constructor(url) {
    super();
    this.url = url;
    this.readyState = 0;
    setTimeout(() => {
      this.readyState = 3;
      this.dispatchEvent(new Event("error"));
      this.dispatchEvent(new CloseEvent("close", { code: 1006, wasClean: false }));
    }, 50);
  }
  send() { throw new DOMException("the WebSocket is not open", "InvalidStateError"); }
  close() {}
};"##;

/// A tab that reports the page's console, network and WebSocket traffic
/// into the returned `Seen`; `init_script` runs in every document before
/// the page's own scripts. A page load may take up to `wait`.
fn open_tab(
    browser: &Browser,
    wait: Duration,
    init_script: Option<&str>,
) -> (Page, Arc<Mutex<Seen>>) {
    let tab = browser.new_page(wait).expect("open a tab");
    let seen = Arc::new(Mutex::new(Seen::default()));
    let listener = seen.clone();
    tab.on_event(move |event| on_event(&listener, event));
    for domain in ["Runtime", "Log", "Network", "Inspector"] {
        let method = format!("{domain}.enable");
        tab.call(&method, json!({}))
            .unwrap_or_else(|e| panic!("{method}: {e}"));
    }
    if let Some(source) = init_script {
        tab.call(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({ "source": source }),
        )
        .expect("Page.addScriptToEvaluateOnNewDocument");
    }
    (tab, seen)
}

/// Loads `url`, waiting for its `load` event; the document must come with
/// `200`.
fn load(tab: &Page, seen: &Mutex<Seen>, url: &str) {
    tab.navigate(url)
        .unwrap_or_else(|e| panic!("load {url}: {e}"));
    let document_status = seen
        .lock()
        .unwrap()
        .responses
        .iter()
        .find(|(_, u)| u == url)
        .map(|(s, _)| *s);
    assert_eq!(document_status, Some(200), "GET {url}");
}

/// Waits for what the page shows whatever its transport: `live`, the
/// counters, the inverter table and the array power.
fn wait_for_live_page(tab: &Page, deadline: Instant) {
    wait_for(
        tab,
        deadline,
        "#status reads `live`",
        r##"(() => { const s = document.getElementById("status"); return s.textContent === "live" && s.className === "live"; })()"##,
    );
    wait_for(
        tab,
        deadline,
        "the counters (#rps a number, #requests >= 1, #rss a size)",
        r##"(() => {
          const t = (id) => document.getElementById(id).textContent;
          const size = /^\d+(\.\d)? (B|KiB|MiB|GiB|TiB)$/;
          return /^\d+\.\d$/.test(t("rps")) &&
            /^\d+$/.test(t("requests")) && Number(t("requests")) >= 1 &&
            /^\d+$/.test(t("connections")) &&
            size.test(t("bytes-in")) && size.test(t("bytes-out")) &&
            size.test(t("rss")) && t("rss") !== "0 B";
        })()"##,
    );
    wait_for(
        tab,
        deadline,
        "the inverter table (>= 24 rows, `Inverter 01` first) and the array power",
        r##"(() => {
          const rows = [...document.querySelectorAll("#inverters tbody tr")];
          return rows.length >= 24 &&
            /^Inverter 01\b/.test(rows[0].cells[0].textContent) &&
            rows.every((r) => /^Inverter \d{2,}\b/.test(r.cells[0].textContent) && r.cells.length === 7) &&
            /^\d+\.\d kW$/.test(document.getElementById("total-power").textContent) &&
            document.getElementById("inverter-count").textContent === `(${rows.length})`;
        })()"##,
    );
}

/// Checks that `samples` carry every counter, then waits until the page
/// shows the request count of one of them (a newer one may be on its way).
fn wait_for_counts_of(tab: &Page, deadline: Instant, samples: &[Value], what: &str) {
    for sample in samples {
        for key in [
            "requests",
            "requests_per_second",
            "bytes_in",
            "bytes_out",
            "connections_open",
            "errors",
            "rss_bytes",
        ] {
            assert!(
                sample[key].is_number(),
                "{what} without a number `{key}`: {sample}"
            );
        }
    }
    let counts: Vec<String> = samples.iter().map(|e| e["requests"].to_string()).collect();
    wait_for(
        tab,
        deadline,
        &format!("#requests showing the count of a received {what}"),
        &format!(
            "{}.includes(document.getElementById(\"requests\").textContent)",
            serde_json::to_string(&counts).expect("counts as JSON")
        ),
    );
}

/// Waits until `seen` holds `n` items by `get`, failing at `deadline`.
fn wait_for_seen<T>(
    seen: &Mutex<Seen>,
    deadline: Instant,
    n: usize,
    what: &str,
    get: impl Fn(&Seen) -> Vec<T>,
) -> Vec<T> {
    loop {
        let items = get(&seen.lock().unwrap());
        if items.len() >= n {
            return items;
        }
        assert!(
            Instant::now() < deadline,
            "only {} {what} arrived in time",
            items.len()
        );
        thread::sleep(Duration::from_millis(POLL_MS));
    }
}

#[test]
fn dashboard_shows_live_counters_chart_and_inverters_in_chromium() {
    let started = Instant::now();
    let chromium = match find_chromium() {
        Ok(path) => path,
        Err(why) => {
            skip_or_fail(&why);
            return;
        }
    };
    let min_events: usize = std::env::var("DASHBOARD_MIN_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2)
        .max(2);
    // Each stats push takes a second; allow 20 s beyond those.
    let wait = Duration::from_secs(20 + min_events as u64);
    println!("browser {}", chromium.display());

    // Declared before the browser, so removed after it is killed.
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let profile = Profile(tmp.join(format!("chromium-profile-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&profile.0);
    std::fs::create_dir_all(&profile.0).expect("create the browser profile");
    let browser_started = Instant::now();
    let launched = match launch_browser(&chromium, &profile.0, BROWSER_START_TIMEOUT) {
        Ok(launched) => launched,
        Err(why) => {
            skip_or_fail(&why);
            return;
        }
    };
    println!(
        "browser started in {:.1} s",
        browser_started.elapsed().as_secs_f64()
    );
    let browser = &launched.browser;
    let version = &launched.version;

    let (_server, addr) = start_server();
    let url = format!("http://{addr}/");
    println!("server at {url}");
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let _stop_traffic = StopOnDrop(stop.clone());
    let traffic = spawn_traffic(addr, stop.clone(), sent.clone());

    // The page over the WebSocket.
    let (tab, seen) = open_tab(browser, wait, None);
    load(&tab, &seen, &url);
    let deadline = Instant::now() + wait;
    wait_for(
        &tab,
        deadline,
        "#transport reads `via WebSocket`",
        r##"(() => { const t = document.getElementById("transport"); return t.textContent === "via WebSocket" && t.dataset.transport === "WebSocket"; })()"##,
    );
    wait_for_live_page(&tab, deadline);
    // `min_events` pushes on the wire, then the page must show the
    // counters of one of them.
    let pushes = wait_for_seen(&seen, deadline, min_events, "/ws/live pushes", Seen::pushes);
    for push in &pushes {
        assert!(
            push["live"]["power"].is_number() && push["live"]["timestamp"].is_u64(),
            "a push without the array's totals: {push}"
        );
    }
    let stats: Vec<Value> = pushes.iter().map(|p| p["stats"].clone()).collect();
    wait_for_counts_of(&tab, deadline, &stats, "/ws/live push");
    wait_for(
        &tab,
        deadline,
        "#rps above 0 while requests are being sent",
        r##"Number(document.getElementById("rps").textContent) > 0"##,
    );
    // The page pings on open and shows the round trip.
    wait_for(
        &tab,
        deadline,
        "#rtt showing the ping's round trip",
        r##"/^· ping \d+\.\d ms$/.test(document.getElementById("rtt").textContent)"##,
    );
    // With two or more points the page strokes the chart's line in its
    // accent colour.
    wait_for(
        &tab,
        deadline,
        "the chart's line",
        &format!("{CHART_LINE_PIXELS} >= 100"),
    );
    // A command from the page: a faster pace, answered and kept to.
    eval(
        &tab,
        r##"(() => { const s = document.getElementById("interval"); s.value = "500"; s.dispatchEvent(new Event("change")); return true; })()"##,
    );
    wait_for_seen(&seen, deadline, 2, "pushes at the new interval", |seen| {
        seen.pushes()
            .into_iter()
            .filter(|p| p["interval_ms"] == 500)
            .collect()
    });
    let chart_line_pixels = eval(&tab, CHART_LINE_PIXELS).as_u64().unwrap_or(0);
    let shown = eval(&tab, SNAPSHOT);
    let png = full_page_screenshot(&tab);

    // The page whose WebSocket fails: server-sent events instead.
    let (fallback_tab, fallback_seen) = open_tab(browser, wait, Some(FAILING_WEBSOCKET));
    load(&fallback_tab, &fallback_seen, &url);
    let fallback_deadline = Instant::now() + wait;
    wait_for(
        &fallback_tab,
        fallback_deadline,
        "#transport reads `via SSE`",
        r##"(() => { const t = document.getElementById("transport"); return t.textContent === "via SSE" && t.dataset.transport === "SSE"; })()"##,
    );
    wait_for_live_page(&fallback_tab, fallback_deadline);
    let events = wait_for_seen(
        &fallback_seen,
        fallback_deadline,
        2,
        "/events stats events",
        |seen| seen.stats.clone(),
    );
    let events: Vec<Value> = events
        .iter()
        .map(|s| serde_json::from_str(s).unwrap_or_else(|e| panic!("stats event {s}: {e}")))
        .collect();
    wait_for_counts_of(
        &fallback_tab,
        fallback_deadline,
        &events,
        "/events stats event",
    );
    let fallback_shown = eval(&fallback_tab, SNAPSHOT);

    // The page over HTTPS, as browsers load it: HTTP/2 by ALPN, and live.
    let (_tls_server, tls_addr) = start_server_with(&["--tls-self-signed"], "https");
    let tls_url = format!("https://localhost:{}/", tls_addr.port());
    let (tls_tab, tls_seen) = open_tab(browser, wait, None);
    load(&tls_tab, &tls_seen, &tls_url);
    let tls_deadline = Instant::now() + wait;
    let protocol = eval(
        &tls_tab,
        r##"performance.getEntriesByType("navigation")[0].nextHopProtocol"##,
    );
    assert_eq!(protocol, "h2", "the HTTPS page's protocol");
    wait_for_live_page(&tls_tab, tls_deadline);
    let tls_shown = eval(&tls_tab, SNAPSHOT);
    println!("HTTPS page over {protocol} shows {tls_shown}");
    // Its WebSocket opened on the HTTP/2 connection (an extended CONNECT,
    // RFC 8441: the route answers it).
    assert_eq!(tls_shown["transport"], "via WebSocket", "{tls_shown}");
    assert!(
        tls_seen.lock().unwrap().errors.is_empty(),
        "the HTTPS page reported errors: {}",
        tls_seen.lock().unwrap().errors.join(" | ")
    );
    let browser_secs = browser_started.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let _ = traffic.join();

    let seen = seen.lock().unwrap();
    let fallback_seen = fallback_seen.lock().unwrap();
    println!(
        "page shows {shown}; {} pushes, last {}; chart line {chart_line_pixels} px; {version}",
        seen.pushes().len(),
        seen.pushes().last().unwrap_or(&Value::Null)
    );
    println!(
        "fallback page shows {fallback_shown}; {} stats events",
        fallback_seen.stats.len()
    );
    for (what, seen) in [("the page", &seen), ("the fallback page", &fallback_seen)] {
        assert!(
            seen.errors.is_empty(),
            "{what} reported errors: {}",
            seen.errors.join(" | ")
        );
    }

    // Over the WebSocket: one socket to /ws/live, opened with 101; no
    // `/events` stream; the ping and the interval answered.
    assert_eq!(
        seen.websockets,
        [format!("ws://{addr}/ws/live")],
        "the page's WebSockets"
    );
    assert_eq!(seen.handshakes, [101], "the handshake's status");
    assert!(
        !seen.responses.iter().any(|(_, u)| u.ends_with("/events")),
        "the page opened /events beside the WebSocket"
    );
    assert!(seen.stats.is_empty(), "stats events beside the WebSocket");
    let sent_commands: Vec<&Value> = seen.ws_sent.iter().collect();
    assert!(
        sent_commands.iter().any(|c| c["cmd"] == "ping"),
        "no ping sent: {sent_commands:?}"
    );
    assert!(
        sent_commands
            .iter()
            .any(|c| c["cmd"] == "interval" && c["ms"] == 500),
        "no interval sent: {sent_commands:?}"
    );
    assert!(
        seen.ws_received.iter().any(|m| m["type"] == "pong"),
        "no pong received"
    );
    assert!(
        seen.ws_received
            .iter()
            .any(|m| *m == serde_json::json!({"type": "interval", "ms": 500})),
        "the interval was not answered"
    );
    assert!(
        !seen.ws_received.iter().any(|m| m["type"] == "error"),
        "the server answered an error"
    );
    assert_eq!(shown["transport"], "via WebSocket", "{shown}");
    assert_eq!(shown["interval"], "500", "{shown}");
    assert_eq!(shown["status"], "live", "{shown}");
    assert_eq!(shown["status_class"], "live", "{shown}");
    let rows = shown["rows"].as_u64().unwrap_or(0);
    assert!(rows >= 24, "{rows} inverter rows: {shown}");
    assert_eq!(shown["inverter_count"], format!("({rows})"), "{shown}");
    assert!(
        shown["first_row"][0]
            .as_str()
            .is_some_and(|c| c.starts_with("Inverter 01")),
        "{shown}"
    );
    assert!(chart_line_pixels >= 100, "{chart_line_pixels} chart pixels");
    assert!(
        shown["rss"].as_str().is_some_and(|s| s.ends_with("iB")),
        "{shown}"
    );
    assert!(
        shown["total_power"]
            .as_str()
            .is_some_and(|s| s.ends_with(" kW")),
        "{shown}"
    );
    let requests: u64 = shown["requests"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    assert!(requests >= 1, "{shown}");

    // The fallback: no WebSocket reached the server, the counters came
    // over `/events`.
    assert!(
        fallback_seen.websockets.is_empty(),
        "{:?}",
        fallback_seen.websockets
    );
    assert!(
        fallback_seen
            .responses
            .iter()
            .any(|(s, u)| *s == 200 && u.ends_with("/events")),
        "the fallback page did not open /events"
    );
    assert_eq!(fallback_shown["transport"], "via SSE", "{fallback_shown}");
    assert_eq!(fallback_shown["status"], "live", "{fallback_shown}");
    assert_eq!(fallback_shown["rtt"], "", "{fallback_shown}");
    assert!(
        sent.load(Ordering::Relaxed) > 0,
        "the background requests all failed"
    );

    let (width, height) = png_size(&png);
    assert!(
        width >= 1000 && height >= 600,
        "screenshot is {width}x{height}"
    );
    assert!(
        (20_000..20_000_000).contains(&png.len()),
        "screenshot is {} bytes",
        png.len()
    );
    let target = tmp.parent().map_or_else(|| tmp.clone(), Path::to_path_buf);
    let artifact = target.join("browser").join("dashboard.png");
    std::fs::create_dir_all(artifact.parent().unwrap_or(&target))
        .expect("create the artifact directory");
    std::fs::write(&artifact, &png).expect("write the screenshot");
    println!(
        "screenshot ({width}x{height}, {} bytes): {}",
        png.len(),
        artifact.display()
    );
    if std::env::var_os("RINGSTREAM_UPDATE_DOCS_SCREENSHOT").is_some_and(|v| v == "1") {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/dashboard.png");
        std::fs::write(&docs, &png).expect("write the screenshot to docs/");
        println!("updated {}", docs.display());
    }
    println!(
        "browser check {browser_secs:.1} s, whole test {:.1} s, {} background requests",
        started.elapsed().as_secs_f64(),
        sent.load(Ordering::Relaxed)
    );
}

/// Slack on top of a deadline for the checks below: a loaded machine.
const SLACK: Duration = Duration::from_secs(3);

/// The deadline the fake browsers below are given (the dashboard's test
/// gives [`BROWSER_START_TIMEOUT`] on the same code path).
const FAKE_TIMEOUT: Duration = Duration::from_secs(2);

/// A fresh directory for one test's fake browser, removed when dropped.
fn scratch(name: &str) -> Profile {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("browser-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create a scratch directory");
    Profile(dir)
}

/// Writes an executable shell script `name` into `dir` with `body`.
fn fake_browser(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write the fake browser");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .expect("make the fake browser executable");
    path
}

/// Whether process `pid` has ended: gone, or a zombie no one reaped yet
/// (this container's init may not reap the orphans it inherits).
fn has_ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // `pid (comm) S ...`: the state follows the last `)`.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
    }
}

/// Waits up to `limit` for process `pid` to end; false if it still runs.
fn ends_within(pid: u32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while !has_ended(pid) {
        if Instant::now() >= deadline {
            return false;
        }
        thread::sleep(Duration::from_millis(20));
    }
    true
}

/// The pids a fake browser wrote into `file`, one a line, waiting a little
/// for it to have written `n` of them.
fn pids_in(file: &Path, n: usize) -> Vec<u32> {
    let deadline = Instant::now() + SLACK;
    loop {
        let pids: Vec<u32> = std::fs::read_to_string(file)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        if pids.len() >= n || Instant::now() >= deadline {
            return pids;
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// Ubuntu's `chromium-browser` without the snap: a note, exit status 1.
/// The launch gives up as soon as it exits, saying what it printed.
#[test]
fn a_browser_that_exits_at_once_is_given_up_on_with_what_it_printed() {
    let dir = scratch("snap-wrapper");
    let fake = fake_browser(
        &dir.0,
        "chromium-browser",
        "echo \"Command '/usr/bin/chromium-browser' requires the chromium snap to be installed.\" >&2\n\
         echo 'Please install it with:' >&2\n\
         echo 'snap install chromium' >&2\n\
         exit 1",
    );
    let started = Instant::now();
    let Err(why) = launch_browser(&fake, &dir.0, FAKE_TIMEOUT) else {
        panic!("the snap wrapper started as a browser");
    };
    let took = started.elapsed();
    println!("{took:.2?}: {why}");
    assert!(took < FAKE_TIMEOUT, "gave up after {took:?}: {why}");
    for part in [
        "did not start within 2 s",
        "it exited (exit status: 1)",
        "requires the chromium snap to be installed. | Please install it with: | snap install chromium",
    ] {
        assert!(why.contains(part), "{part:?} not in {why:?}");
    }
}

/// A browser that prints something, then hangs, its stderr held open by a
/// child of its own: given up on at the deadline, and the browser and its
/// child are killed.
#[test]
fn a_browser_that_hangs_is_given_up_on_at_the_deadline_and_killed_with_its_children() {
    let dir = scratch("hanging");
    let pids = dir.0.join("pids");
    let fake = fake_browser(
        &dir.0,
        "chromium",
        &format!(
            "echo $$ > '{pids}'\n\
             sleep 600 &\n\
             echo $! >> '{pids}'\n\
             echo 'starting, slowly' >&2\n\
             wait",
            pids = pids.display()
        ),
    );
    let started = Instant::now();
    let Err(why) = launch_browser(&fake, &dir.0, FAKE_TIMEOUT) else {
        panic!("the hanging fake started as a browser");
    };
    let took = started.elapsed();
    println!("{took:.2?}: {why}");
    assert!(
        took >= FAKE_TIMEOUT && took < FAKE_TIMEOUT + SLACK,
        "gave up after {took:?}: {why}"
    );
    for part in [
        "did not start within 2 s: no `DevTools listening on ws://…` line",
        "it printed: starting, slowly",
    ] {
        assert!(why.contains(part), "{part:?} not in {why:?}");
    }
    let pids = pids_in(&pids, 2);
    assert_eq!(pids.len(), 2, "the fake's pids: {pids:?}");
    for pid in pids {
        assert!(
            ends_within(pid, Duration::from_secs(2)),
            "process {pid} of the hanging browser still runs"
        );
    }
}

/// A browser that prints its DevTools address but never answers there (a
/// listener that accepts and stays silent): given up on at the deadline,
/// and killed.
#[test]
fn a_browser_that_does_not_answer_over_devtools_is_given_up_on_at_the_deadline() {
    let dir = scratch("silent");
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a silent listener");
    let port = silent.local_addr().expect("its address").port();
    let pids = dir.0.join("pids");
    let fake = fake_browser(
        &dir.0,
        "chromium",
        &format!(
            "echo $$ > '{pids}'\n\
             echo 'DevTools listening on ws://127.0.0.1:{port}/devtools/browser/fake' >&2\n\
             exec sleep 600",
            pids = pids.display()
        ),
    );
    let started = Instant::now();
    let Err(why) = launch_browser(&fake, &dir.0, FAKE_TIMEOUT) else {
        panic!("the silent fake answered as a browser");
    };
    let took = started.elapsed();
    println!("{took:.2?}: {why}");
    assert!(
        took >= FAKE_TIMEOUT && took < FAKE_TIMEOUT + SLACK,
        "gave up after {took:?}: {why}"
    );
    assert!(
        why.contains(&format!(
            "did not answer over DevTools (ws://127.0.0.1:{port}/devtools/browser/fake) within 2 s: no answer"
        )),
        "{why}"
    );
    let pids = pids_in(&pids, 1);
    assert_eq!(pids.len(), 1, "the fake's pid: {pids:?}");
    assert!(
        ends_within(pids[0], Duration::from_secs(2)),
        "the silent browser (pid {}) still runs",
        pids[0]
    );
}

/// Not a test of its own: the body of the helper process of
/// [`a_started_server_dies_when_the_process_that_started_it_is_killed`]
/// (this binary run again with [`HELPER_ENV`] set), and otherwise nothing.
/// Starts a server as the dashboard's test does, prints its pid, and waits
/// to be killed.
#[test]
fn helper_process_starting_a_server() {
    if std::env::var_os(HELPER_ENV).is_none() {
        return;
    }
    let (server, _addr) = start_server();
    // Past libtest's capture, straight to the parent's pipe.
    let mut out = std::io::stdout();
    let _ = out.write_all(format!("{HELPER_PID_LINE}{}\n", server.child.id()).as_bytes());
    let _ = out.flush();
    // Killed long before; a bound all the same.
    thread::sleep(Duration::from_secs(60));
}

/// A process that starts a server as the dashboard's test does, then is
/// killed with `SIGKILL` (no destructor runs): the server dies with it, and
/// nothing holds the killed process's output pipes open.
#[test]
fn a_started_server_dies_when_the_process_that_started_it_is_killed() {
    let mut command = Command::new(std::env::current_exe().expect("this test binary"));
    command
        .args(["--exact", "helper_process_starting_a_server"])
        .args(["--nocapture", "--test-threads=1", "--quiet"])
        .env(HELPER_ENV, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = dies_with_spawning_thread(&mut command)
        .spawn()
        .expect("start the helper process");
    let stdout = child.stdout.take().expect("helper stdout");
    let stderr = child.stderr.take().expect("helper stderr");
    let mut helper = ChildGuard {
        child,
        what: "helper",
    };
    // Each pipe read to its end on a thread; the channel says when.
    let (lines_tx, lines_rx) = mpsc::channel();
    let (ended_tx, ended_rx) = mpsc::channel();
    let stdout_ended = ended_tx.clone();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
        let _ = stdout_ended.send("stdout");
    });
    let helper_stderr = Arc::new(Mutex::new(String::new()));
    let stderr_text = helper_stderr.clone();
    thread::spawn(move || {
        let mut text = String::new();
        let _ = BufReader::new(stderr).read_to_string(&mut text);
        *stderr_text.lock().unwrap_or_else(|e| e.into_inner()) = text;
        let _ = ended_tx.send("stderr");
    });

    let deadline = Instant::now() + Duration::from_secs(30);
    let server_pid: u32 = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(line) = lines_rx.recv_timeout(left) else {
            panic!(
                "the helper printed no server pid; its stderr: {}",
                helper_stderr.lock().unwrap_or_else(|e| e.into_inner())
            );
        };
        if let Some(pid) = line.strip_prefix(HELPER_PID_LINE) {
            break pid.trim().parse().expect("the server's pid");
        }
    };
    assert!(
        !has_ended(server_pid),
        "the server {server_pid} is not running"
    );

    let helper_pid = libc::pid_t::try_from(helper.child.id()).expect("a pid fits pid_t");
    // SAFETY: kill(2) on our own child, not reaped yet; no memory involved.
    assert_eq!(unsafe { libc::kill(helper_pid, libc::SIGKILL) }, 0);
    let _ = helper.child.wait();
    let killed = Instant::now();
    assert!(
        ends_within(server_pid, Duration::from_secs(2)),
        "the server {server_pid} outlived the helper that started it"
    );
    for _ in 0..2 {
        let left = (killed + Duration::from_secs(2)).saturating_duration_since(Instant::now());
        ended_rx
            .recv_timeout(left)
            .expect("the killed helper's output pipes still held open");
    }
    println!(
        "server {server_pid} ended and the helper's pipes closed {:.0?} after SIGKILL",
        killed.elapsed()
    );
}
