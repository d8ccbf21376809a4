//! The `ringstream serve` dashboard in a real browser: Debian's chromium,
//! driven by `playwright-core` from `tests/browser/dashboard.mjs`, loads the
//! page from the real binary and must show the live counters of the
//! `/events` stream, a drawn chart and the `/api/livedata` inverter table,
//! with no console error. The screenshot it takes is kept under `target/`.
//!
//! `.ci/run` installs chromium, node and npm; a missing one fails this test
//! loudly instead of skipping it. `playwright-core` (which downloads no
//! browser) is installed by the test itself, from the pinned
//! `tests/browser/package-lock.json`, into the cargo target directory.
//!
//! Environment: `DASHBOARD_MIN_EVENTS=N` waits for N stats events before the
//! screenshot (a longer chart); `RINGSTREAM_UPDATE_DOCS_SCREENSHOT=1` also
//! copies the screenshot to `docs/dashboard.png`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

/// The browser: Debian's `chromium` package.
const CHROMIUM: &str = "/usr/bin/chromium";

/// Oldest Node.js major version `playwright-core` supports.
const NODE_MAJOR_MIN: u32 = 20;

/// How long the browser script may run, in seconds.
const SCRIPT_TIMEOUT_SECS: u64 = 180;

/// A child process killed when dropped, so a failing assertion leaves no
/// server or browser behind.
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

fn browser_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("browser")
}

/// The first line of `cmd --version`, if it runs and succeeds.
fn version_of(cmd: &str) -> Option<String> {
    let out = Command::new(cmd).arg("--version").output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_owned(),
    )
}

/// Fails, naming every missing tool, unless chromium, node (new enough) and
/// npm are all there.
fn require_tools() -> (String, String) {
    let mut missing = Vec::new();
    let chromium = Path::new(CHROMIUM);
    let executable = {
        use std::os::unix::fs::PermissionsExt;
        chromium
            .metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if !executable {
        missing.push(format!("{CHROMIUM} (Debian package `chromium`)"));
    }
    let node = version_of("node");
    match &node {
        None => missing.push("`node` (Node.js)".to_owned()),
        Some(v) => {
            let major = v
                .trim_start_matches('v')
                .split('.')
                .next()
                .and_then(|m| m.parse::<u32>().ok());
            if major.is_none_or(|m| m < NODE_MAJOR_MIN) {
                missing.push(format!("Node.js {NODE_MAJOR_MIN} or newer (found {v})"));
            }
        }
    }
    let npm = version_of("npm");
    if npm.is_none() {
        missing.push("`npm`".to_owned());
    }
    assert!(
        missing.is_empty(),
        "the browser test needs {} — not found on this machine; `.ci/run` installs them \
         (apt-get install chromium; Node.js {NODE_MAJOR_MIN}+ with npm). Not skipping: the dashboard \
         is only tested in a real browser.",
        missing.join(", ")
    );
    (node.unwrap_or_default(), npm.unwrap_or_default())
}

/// The `playwright-core` version pinned in `tests/browser/package.json`.
fn pinned_playwright() -> String {
    let manifest = std::fs::read_to_string(browser_dir().join("package.json"))
        .expect("read tests/browser/package.json");
    let key = "\"playwright-core\": \"";
    let start = manifest
        .find(key)
        .expect("playwright-core pinned in package.json")
        + key.len();
    let rest = manifest.get(start..).unwrap_or("");
    rest.split('"').next().unwrap_or("").to_owned()
}

/// The version of `playwright-core` installed under `dir`, if any.
fn installed_playwright(dir: &Path) -> Option<String> {
    let manifest =
        std::fs::read_to_string(dir.join("node_modules/playwright-core/package.json")).ok()?;
    let key = "\"version\": \"";
    let start = manifest.find(key)? + key.len();
    Some(manifest.get(start..)?.split('"').next()?.to_owned())
}

/// Lay out `dir` with the script and its pinned dependencies, installing
/// `playwright-core` with `npm ci` unless the pinned version is there.
fn install_playwright(dir: &Path) {
    std::fs::create_dir_all(dir).expect("create the browser test directory");
    for file in ["package.json", "package-lock.json", "dashboard.mjs"] {
        std::fs::copy(browser_dir().join(file), dir.join(file))
            .unwrap_or_else(|e| panic!("copy {file}: {e}"));
    }
    let pinned = pinned_playwright();
    if installed_playwright(dir).as_deref() == Some(pinned.as_str()) {
        println!(
            "playwright-core {pinned} already installed in {}",
            dir.display()
        );
        return;
    }
    let started = Instant::now();
    let out = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(dir)
        .output()
        .expect("run npm");
    assert!(
        out.status.success(),
        "`npm ci` of playwright-core {pinned} in {} failed ({}):\n{}\n{}",
        dir.display(),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        installed_playwright(dir).as_deref(),
        Some(pinned.as_str()),
        "playwright-core after npm ci"
    );
    println!(
        "installed playwright-core {pinned} in {:.1} s",
        started.elapsed().as_secs_f64()
    );
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

/// Run `node dashboard.mjs URL SCREENSHOT` in `dir`; returns exit success,
/// stdout and stderr. The browser script is killed after
/// [`SCRIPT_TIMEOUT_SECS`].
fn run_script(dir: &Path, url: &str, screenshot: &Path) -> (bool, String, String) {
    let mut child = Command::new("node")
        .arg(dir.join("dashboard.mjs"))
        .arg(url)
        .arg(screenshot)
        .current_dir(dir)
        .env("CHROMIUM_PATH", CHROMIUM)
        .env("DASHBOARD_EXPECT_TRAFFIC", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start node");
    let mut stdout = child.stdout.take().expect("node stdout");
    let mut stderr = child.stderr.take().expect("node stderr");
    let mut guard = ChildGuard {
        child,
        what: "browser script",
    };
    let out = thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + Duration::from_secs(SCRIPT_TIMEOUT_SECS);
    let status = loop {
        if let Some(status) = guard.child.try_wait().expect("wait for node") {
            break Some(status);
        }
        if Instant::now() >= deadline {
            let _ = guard.child.kill();
            break None;
        }
        thread::sleep(Duration::from_millis(100));
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    match status {
        Some(status) => (status.success(), stdout, stderr),
        None => (
            false,
            format!("{stdout}\nFAIL: killed after {SCRIPT_TIMEOUT_SECS} s"),
            stderr,
        ),
    }
}

/// The text after `"key":` in a flat JSON object, up to the next `,` or `}`
/// (a string value keeps its quotes).
fn field<'a>(json: &'a str, key: &str) -> &'a str {
    let pat = format!("\"{key}\":");
    let start = json
        .find(&pat)
        .unwrap_or_else(|| panic!("no `{key}` in the summary: {json}"))
        + pat.len();
    let rest = json.get(start..).unwrap_or("");
    if let Some(s) = rest.strip_prefix('"') {
        let end = s.find('"').map_or(rest.len(), |i| i + 2);
        return rest.get(..end).unwrap_or(rest);
    }
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    rest.get(..end).unwrap_or(rest)
}

fn number(json: &str, key: &str) -> f64 {
    let text = field(json, key);
    text.parse()
        .unwrap_or_else(|e| panic!("`{key}` is {text:?}, not a number ({e}): {json}"))
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

#[test]
fn dashboard_shows_live_counters_chart_and_inverters_in_chromium() {
    let started = Instant::now();
    let (node, npm) = require_tools();
    println!("node {node}, npm {npm}, browser {CHROMIUM}");

    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let dir = tmp.join("browser");
    install_playwright(&dir);

    let (_server, addr) = start_server();
    let url = format!("http://{addr}/");
    println!("server at {url}");
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let _stop_traffic = StopOnDrop(stop.clone());
    let traffic = spawn_traffic(addr, stop.clone(), sent.clone());

    let screenshot = dir.join("dashboard.png");
    let _ = std::fs::remove_file(&screenshot);
    let browser_started = Instant::now();
    let (ok, stdout, stderr) = run_script(&dir, &url, &screenshot);
    let browser_secs = browser_started.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let _ = traffic.join();
    println!("{stdout}");
    if !stderr.trim().is_empty() {
        println!("browser script stderr:\n{stderr}");
    }
    assert!(ok, "the browser check failed:\n{stdout}\n{stderr}");

    let summary = stdout
        .lines()
        .find_map(|l| l.strip_prefix("SUMMARY "))
        .unwrap_or_else(|| panic!("no SUMMARY line from the browser script:\n{stdout}"));
    assert_eq!(field(summary, "status"), "\"live\"", "{summary}");
    assert_eq!(field(summary, "status_class"), "\"live\"", "{summary}");
    let rows = number(summary, "rows");
    assert!(rows >= 24.0, "{rows} inverter rows: {summary}");
    assert_eq!(
        field(summary, "inverter_count"),
        format!("\"({rows})\""),
        "{summary}"
    );
    assert!(
        field(summary, "first_row").starts_with("[\"Inverter 01"),
        "{summary}"
    );
    assert!(number(summary, "stats_events") >= 2.0, "{summary}");
    assert!(number(summary, "chart_line_pixels") >= 100.0, "{summary}");
    assert_eq!(number(summary, "page_errors"), 0.0, "{summary}");
    assert!(field(summary, "rss").ends_with("iB\""), "{summary}");
    assert!(
        field(summary, "total_power").ends_with(" kW\""),
        "{summary}"
    );
    let requests: f64 = field(summary, "requests")
        .trim_matches('"')
        .parse()
        .expect("#requests a number");
    assert!(requests >= 1.0, "{summary}");
    assert!(
        sent.load(Ordering::Relaxed) > 0,
        "the background requests all failed"
    );

    let png = std::fs::read(&screenshot)
        .unwrap_or_else(|e| panic!("screenshot {}: {e}", screenshot.display()));
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
    std::fs::copy(&screenshot, &artifact).expect("copy the screenshot");
    println!(
        "screenshot ({width}x{height}, {} bytes): {}",
        png.len(),
        artifact.display()
    );
    if std::env::var_os("RINGSTREAM_UPDATE_DOCS_SCREENSHOT").is_some_and(|v| v == "1") {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/dashboard.png");
        std::fs::copy(&screenshot, &docs).expect("copy the screenshot to docs/");
        println!("updated {}", docs.display());
    }
    println!(
        "browser check {browser_secs:.1} s, whole test {:.1} s, {} background requests",
        started.elapsed().as_secs_f64(),
        sent.load(Ordering::Relaxed)
    );
}
