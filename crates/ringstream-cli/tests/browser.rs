//! The `ringstream serve` dashboard in a real browser: Chromium, driven over
//! the DevTools protocol by `headless_chrome`, loads the page from the real
//! binary and must show the live counters pushed over the `/ws/live`
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
//! `PATH`. Without one the test passes with a `browser test SKIPPED` line on
//! stderr — unless `RINGSTREAM_REQUIRE_BROWSER=1` (as in `.ci/run`), which
//! makes a missing browser a failure.
//!
//! Environment: `DASHBOARD_MIN_EVENTS=N` waits for N stats pushes before the
//! screenshot (a longer chart); `RINGSTREAM_UPDATE_DOCS_SCREENSHOT=1` also
//! copies the screenshot to `docs/dashboard.png`.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use base64::Engine as _;
use headless_chrome::protocol::cdp::types::Event;
use headless_chrome::protocol::cdp::{Log, Network, Page, Runtime};
use headless_chrome::{Browser, LaunchOptions, Tab};
use serde_json::Value;

/// Names looked up on `PATH` after `/usr/bin/chromium`.
const BROWSER_NAMES: [&str; 3] = ["chromium", "chromium-browser", "google-chrome"];

/// The browser window, in CSS pixels (width, height).
const WINDOW: (u32, u32) = (1280, 900);

/// Flags beyond headless mode, no sandbox (the tests run as root in CI) and
/// no GPU, which `LaunchOptions` sets: nothing in the browser reaches out
/// to the network on its own.
const EXTRA_FLAGS: [&str; 5] = [
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];

/// How often a condition in the page is checked again, in milliseconds.
const POLL_MS: u64 = 100;

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
/// the address it printed.
fn start_server() -> (ChildGuard, SocketAddr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ringstream"))
        .args(["serve", "--addr", "127.0.0.1:0"])
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the ringstream binary");
    let stdout = child.stdout.take().expect("server stdout");
    let guard = ChildGuard {
        child,
        what: "server",
    };
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        // Keep draining after the address, so the server never blocks on a
        // full pipe.
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    let prefix = "ringstream listening on http://";
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = rx
            .recv_timeout(left)
            .unwrap_or_else(|e| panic!("the server printed no `{prefix}ADDR` line: {e}"));
        if let Some(addr) = line.strip_prefix(prefix) {
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
fn frame_json(frame: &Network::WebSocketFrame) -> Value {
    if frame.opcode != 1.0 {
        return Value::Null;
    }
    serde_json::from_str(&frame.payload_data).unwrap_or(Value::Null)
}

fn on_event(seen: &Mutex<Seen>, event: &Event) {
    let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
    match event {
        Event::RuntimeConsoleAPICalled(e)
            if e.params.Type == Runtime::ConsoleAPICalledEventTypeOption::Error =>
        {
            let text: Vec<String> = e
                .params
                .args
                .iter()
                .map(|a| match (&a.value, &a.description) {
                    (Some(v), _) => v.to_string(),
                    (None, Some(d)) => d.clone(),
                    (None, None) => "?".to_owned(),
                })
                .collect();
            seen.errors
                .push(format!("console.error: {}", text.join(" ")));
        }
        Event::RuntimeExceptionThrown(e) => {
            let details = &e.params.exception_details;
            let description = details
                .exception
                .as_ref()
                .and_then(|x| x.description.clone())
                .unwrap_or_default();
            seen.errors
                .push(format!("uncaught: {} {description}", details.text));
        }
        Event::LogEntryAdded(e) if e.params.entry.level == Log::LogEntryLevel::Error => {
            let entry = &e.params.entry;
            seen.errors.push(format!(
                "log: {} ({})",
                entry.text,
                entry.url.as_deref().unwrap_or("?")
            ));
        }
        Event::NetworkResponseReceived(e) => {
            let response = &e.params.response;
            if response.status >= 400 {
                seen.errors
                    .push(format!("HTTP {} for {}", response.status, response.url));
            }
            seen.responses.push((response.status, response.url.clone()));
        }
        Event::NetworkEventSourceMessageReceived(e) if e.params.event_name == "stats" => {
            seen.stats.push(e.params.data.clone());
        }
        Event::NetworkWebSocketCreated(e) => seen.websockets.push(e.params.url.clone()),
        Event::NetworkWebSocketHandshakeResponseReceived(e) => {
            seen.handshakes.push(e.params.response.status);
        }
        Event::NetworkWebSocketFrameReceived(e) => {
            seen.ws_received.push(frame_json(&e.params.response));
        }
        Event::NetworkWebSocketFrameSent(e) => {
            seen.ws_sent.push(frame_json(&e.params.response));
        }
        Event::NetworkWebSocketFrameError(e) => {
            seen.errors
                .push(format!("websocket frame error: {}", e.params.error_message));
        }
        Event::InspectorTargetCrashed(_) => seen.errors.push("the page crashed".to_owned()),
        _ => {}
    }
}

/// Evaluates `expression` in the page; its value must be JSON-serialisable.
fn eval(tab: &Tab, expression: &str) -> Value {
    let wrapped = format!("JSON.stringify(({expression}))");
    let result = tab
        .evaluate(&wrapped, false)
        .unwrap_or_else(|e| panic!("evaluate {expression}: {e}"));
    let text = result
        .value
        .as_ref()
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("evaluate {expression}: no JSON text in {result:?}"));
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
fn wait_for(tab: &Tab, deadline: Instant, what: &str, predicate: &str) {
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
fn full_page_screenshot(tab: &Tab) -> Vec<u8> {
    let size = eval(
        tab,
        "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]",
    );
    let dim = |i: usize| size[i].as_f64().expect("page size");
    let shot = tab
        .call_method(Page::CaptureScreenshot {
            format: Some(Page::CaptureScreenshotFormatOption::Png),
            quality: None,
            clip: Some(Page::Viewport {
                x: 0.0,
                y: 0.0,
                width: dim(0),
                height: dim(1),
                scale: 1.0,
            }),
            from_surface: Some(true),
            capture_beyond_viewport: Some(true),
            optimize_for_speed: None,
        })
        .expect("capture the screenshot");
    base64::engine::general_purpose::STANDARD
        .decode(shot.data)
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
/// the page's own scripts.
fn open_tab(
    browser: &Browser,
    wait: Duration,
    init_script: Option<&str>,
) -> (Arc<Tab>, Arc<Mutex<Seen>>) {
    let tab = browser.new_tab().expect("open a tab");
    tab.set_default_timeout(wait);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let listener = seen.clone();
    tab.add_event_listener(Arc::new(move |event: &Event| on_event(&listener, event)))
        .expect("listen to the page");
    tab.enable_runtime().expect("Runtime.enable");
    tab.enable_log().expect("Log.enable");
    tab.call_method(Network::Enable {
        max_total_buffer_size: None,
        max_resource_buffer_size: None,
        max_post_data_size: None,
        report_direct_socket_traffic: None,
        enable_durable_messages: None,
    })
    .expect("Network.enable");
    if let Some(source) = init_script {
        tab.call_method(Page::AddScriptToEvaluateOnNewDocument {
            source: source.to_owned(),
            world_name: None,
            include_command_line_api: None,
            run_immediately: None,
        })
        .expect("Page.addScriptToEvaluateOnNewDocument");
    }
    (tab, seen)
}

/// Loads `url`; the document must come with `200`.
fn load(tab: &Tab, seen: &Mutex<Seen>, url: &str) {
    tab.navigate_to(url)
        .and_then(|t| t.wait_until_navigated())
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
fn wait_for_live_page(tab: &Tab, deadline: Instant) {
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
fn wait_for_counts_of(tab: &Tab, deadline: Instant, samples: &[Value], what: &str) {
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
            assert!(
                std::env::var_os("RINGSTREAM_REQUIRE_BROWSER").is_none_or(|v| v != "1"),
                "RINGSTREAM_REQUIRE_BROWSER=1 but {why}; install Debian's `chromium` \
                 (apt-get install chromium) or point RINGSTREAM_CHROMIUM at a browser"
            );
            // Straight to the stderr handle: libtest captures `eprintln!`,
            // and a skip must show in plain `cargo test` output.
            let _ = std::io::stderr().write_all(
                format!("browser test SKIPPED: {why} (RINGSTREAM_REQUIRE_BROWSER=1 makes this a failure)\n")
                    .as_bytes(),
            );
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

    let (_server, addr) = start_server();
    let url = format!("http://{addr}/");
    println!("server at {url}");
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let _stop_traffic = StopOnDrop(stop.clone());
    let traffic = spawn_traffic(addr, stop.clone(), sent.clone());

    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let profile = Profile(tmp.join(format!("chromium-profile-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&profile.0);
    std::fs::create_dir_all(&profile.0).expect("create the browser profile");
    let browser_started = Instant::now();
    let options = LaunchOptions {
        path: Some(chromium.clone()),
        headless: true,
        sandbox: false,
        enable_gpu: false,
        window_size: Some(WINDOW),
        user_data_dir: Some(profile.0.clone()),
        args: EXTRA_FLAGS.iter().map(OsStr::new).collect(),
        idle_browser_timeout: Duration::from_secs(120),
        ..LaunchOptions::default()
    };
    let browser =
        Browser::new(options).unwrap_or_else(|e| panic!("launch {}: {e}", chromium.display()));
    let version = browser.get_version().map(|v| v.product).unwrap_or_default();

    // The page over the WebSocket.
    let (tab, seen) = open_tab(&browser, wait, None);
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
    let (fallback_tab, fallback_seen) = open_tab(&browser, wait, Some(FAILING_WEBSOCKET));
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
