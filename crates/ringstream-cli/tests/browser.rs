//! The `ringstream serve` dashboard in a real browser: Chromium, driven over
//! the DevTools protocol by `headless_chrome`, loads the page from the real
//! binary and must show the live counters of the `/events` stream, a drawn
//! chart and the `/api/livedata` inverter table, with no console error,
//! uncaught exception or failed request. The full-page screenshot it takes
//! is kept as `target/browser/dashboard.png`.
//!
//! The browser is `$RINGSTREAM_CHROMIUM` when set (and then nothing else),
//! otherwise `/usr/bin/chromium` (Debian's `chromium`, which `.ci/run`
//! installs), otherwise `chromium`, `chromium-browser` or `google-chrome` on
//! `PATH`. Without one the test passes with a `browser test SKIPPED` line on
//! stderr — unless `RINGSTREAM_REQUIRE_BROWSER=1` (as in `.ci/run`), which
//! makes a missing browser a failure.
//!
//! Environment: `DASHBOARD_MIN_EVENTS=N` waits for N stats events before the
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
    // Each stats event takes a second; allow 20 s beyond those.
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

    tab.navigate_to(&url)
        .and_then(|t| t.wait_until_navigated())
        .unwrap_or_else(|e| panic!("load {url}: {e}"));
    let deadline = Instant::now() + wait;
    let document_status = seen
        .lock()
        .unwrap()
        .responses
        .iter()
        .find(|(_, u)| *u == url)
        .map(|(s, _)| *s);
    assert_eq!(document_status, Some(200), "GET {url}");

    wait_for(
        &tab,
        deadline,
        "#status reads `live`",
        r##"(() => { const s = document.getElementById("status"); return s.textContent === "live" && s.className === "live"; })()"##,
    );
    wait_for(
        &tab,
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
        &tab,
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

    // `min_events` stats events on the wire, then the page must show the
    // counters of one of them (a newer one may be on its way).
    let stats = loop {
        let stats = seen.lock().unwrap().stats.clone();
        if stats.len() >= min_events {
            break stats;
        }
        assert!(
            Instant::now() < deadline,
            "only {} stats event(s) arrived within {} s",
            stats.len(),
            wait.as_secs()
        );
        thread::sleep(Duration::from_millis(POLL_MS));
    };
    let events: Vec<Value> = stats
        .iter()
        .map(|s| serde_json::from_str(s).unwrap_or_else(|e| panic!("stats event {s}: {e}")))
        .collect();
    for event in &events {
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
                event[key].is_number(),
                "stats event without a number `{key}`: {event}"
            );
        }
    }
    let counts: Vec<String> = events.iter().map(|e| e["requests"].to_string()).collect();
    wait_for(
        &tab,
        deadline,
        "#requests showing the count of a received stats event",
        &format!(
            "{}.includes(document.getElementById(\"requests\").textContent)",
            serde_json::to_string(&counts).expect("counts as JSON")
        ),
    );
    wait_for(
        &tab,
        deadline,
        "#rps above 0 while requests are being sent",
        r##"Number(document.getElementById("rps").textContent) > 0"##,
    );
    // With two or more points the page strokes the chart's line in its
    // accent colour.
    wait_for(
        &tab,
        deadline,
        "the chart's line",
        &format!("{CHART_LINE_PIXELS} >= 100"),
    );
    let chart_line_pixels = eval(&tab, CHART_LINE_PIXELS).as_u64().unwrap_or(0);
    let shown = eval(&tab, SNAPSHOT);
    let png = full_page_screenshot(&tab);
    let browser_secs = browser_started.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let _ = traffic.join();

    let seen = seen.lock().unwrap();
    println!(
        "page shows {shown}; {} stats events, last {}; chart line {chart_line_pixels} px; {version}",
        seen.stats.len(),
        seen.stats.last().map_or("none", String::as_str)
    );
    assert!(
        seen.errors.is_empty(),
        "the page reported errors: {}",
        seen.errors.join(" | ")
    );
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
