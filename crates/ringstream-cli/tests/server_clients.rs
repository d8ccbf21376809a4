//! The server driven by clients nobody here wrote: `curl` and Python's
//! `http.client`. `.ci/run` installs both; a missing client fails the test
//! loudly instead of skipping it.

mod common;

use std::process::Command;

use common::start_app;
use ringstream::server::Config;
use sha2::{Digest, Sha256};

fn require(tool: &str) {
    let found = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "`{tool}` is required by this test (installed by .ci/run) but was not found"
    );
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("spawn client");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

async fn blocking<F: FnOnce() -> String + Send + 'static>(f: F) -> String {
    tokio::task::spawn_blocking(f).await.expect("client thread")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_reuses_one_connection_for_many_requests() {
    require("curl");
    let server = start_app(Config::default()).await;
    let base = format!("http://{}", server.addr);
    let out = blocking(move || {
        let urls: Vec<String> = (1..=5).map(|n| format!("{base}/bytes/{n}")).collect();
        let mut cmd = Command::new("curl");
        cmd.args([
            "-s",
            "-w",
            "%{http_code} %{num_connects} %{size_download}\\n",
        ]);
        for url in &urls {
            cmd.args(["-o", "/dev/null", url]);
        }
        run(&mut cmd)
    })
    .await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        ["200 1 1", "200 0 2", "200 0 3", "200 0 4", "200 0 5"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_head_http10_and_404() {
    require("curl");
    let server = start_app(Config::default()).await;
    let base = format!("http://{}", server.addr);
    let b = base.clone();
    let head =
        blocking(move || run(Command::new("curl").args(["-s", "-I", &format!("{b}/bytes/1234")])))
            .await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.to_ascii_lowercase().contains("content-length: 1234"),
        "{head}"
    );
    let b = base.clone();
    let old = blocking(move || {
        run(Command::new("curl").args(["-s", "-0", "-D", "-", &format!("{b}/bytes/10")]))
    })
    .await;
    assert!(old.ends_with("\r\n\r\nringstream"), "{old}");
    let b = base.clone();
    let missing = blocking(move || {
        run(Command::new("curl").args(["-s", "-w", "%{http_code}", &format!("{b}/missing")]))
    })
    .await;
    assert!(missing.ends_with("404"), "{missing}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_upload_with_100_continue_and_chunked_echo() {
    require("curl");
    let server = start_app(Config::default()).await;
    let base = format!("http://{}", server.addr);
    let dir = std::env::temp_dir().join(format!("ringstream-curl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("payload.bin");
    let mut data = vec![0u8; 3 * 1024 * 1024 + 17];
    common::Rng(7).fill(&mut data);
    std::fs::write(&file, &data).unwrap();
    let expected = hex::encode(Sha256::digest(&data));

    // curl sends `Expect: 100-continue` for bodies over 1 MiB.
    let (b, f) = (base.clone(), file.clone());
    let out = blocking(move || {
        run(Command::new("curl")
            .args(["-s", "-v", "--data-binary"])
            .arg(format!("@{}", f.display()))
            .arg(format!("{b}/upload")))
    })
    .await;
    assert!(out.contains(&format!("\"bytes\":{}", data.len())), "{out}");
    assert!(out.contains(&expected), "{out}");

    let echoed = dir.join("echoed.bin");
    let (b, f, e) = (base.clone(), file.clone(), echoed.clone());
    blocking(move || {
        run(Command::new("curl")
            .args(["-s", "-H", "Transfer-Encoding: chunked", "--data-binary"])
            .arg(format!("@{}", f.display()))
            .arg("-o")
            .arg(&e)
            .arg(format!("{b}/echo")))
    })
    .await;
    assert_eq!(std::fs::read(&echoed).unwrap(), data);
    let _ = std::fs::remove_dir_all(&dir);
}

const PYTHON_CLIENT: &str = r#"
import hashlib, http.client, json, sys
host, port = sys.argv[1], int(sys.argv[2])
conn = http.client.HTTPConnection(host, port, timeout=30)
# keep-alive: several requests on one connection
for n in (1, 10, 100000):
    conn.request("GET", f"/bytes/{n}")
    r = conn.getresponse()
    body = r.read()
    assert r.status == 200 and len(body) == n, (r.status, len(body))
conn.request("GET", "/api/livedata")
r = conn.getresponse()
doc = json.loads(r.read())
assert r.status == 200 and len(doc["inverters"]) >= 24, r.status
conn.request("HEAD", "/bytes/77")
r = conn.getresponse()
assert r.getheader("content-length") == "77" and r.read() == b""
payload = bytes(range(256)) * 4096
conn.request("POST", "/upload", body=payload)
r = conn.getresponse()
doc = json.loads(r.read())
assert doc == {"bytes": len(payload), "sha256": hashlib.sha256(payload).hexdigest()}, doc
# chunked request body from an iterator
conn.request("POST", "/echo", body=iter([b"abc", b"defg", b"h" * 70000]), encode_chunked=True,
             headers={"Transfer-Encoding": "chunked"})
r = conn.getresponse()
assert r.read() == b"abcdefg" + b"h" * 70000
conn.request("GET", "/nowhere")
r = conn.getresponse()
assert r.status == 404 and r.read()
print("python-ok")
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_http_client_talks_to_the_server() {
    require("python3");
    let server = start_app(Config::default()).await;
    let port = server.addr.port().to_string();
    let out = blocking(move || {
        run(Command::new("python3").args(["-c", PYTHON_CLIENT, "127.0.0.1", &port]))
    })
    .await;
    assert_eq!(out.trim(), "python-ok");
}
