//! Starting the servers under test as child processes: `ringstream serve`,
//! the hyper peer (`ringstream-bench hyper-peer`), the WebSocket peers
//! (`ringstream-bench ws-peer`), the HTTPS servers (`ringstream-bench
//! tls-peer`), the HTTP/2 servers (`ringstream-bench h2-peer`) and the
//! framework peers of `bench/peers` (`peer-actix`, `peer-xitca`,
//! `peer-may`), and reading their CPU time and memory from `/proc`.

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

/// A server child process, killed on drop.
pub struct ServerProcess {
    /// `ringstream`, `hyper`, `fastwebsockets`, `tungstenite`,
    /// `actix-web`, `xitca-web` or `may_minihttp`.
    pub name: &'static str,
    /// Where it listens.
    pub addr: SocketAddr,
    child: Child,
}

impl ServerProcess {
    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Resident memory now, in bytes (`VmRSS`).
    pub fn rss(&self) -> anyhow::Result<u64> {
        proc_status_kib(self.pid(), "VmRSS:").map(|k| k * 1024)
    }

    /// Peak resident memory since the last [`reset_peak`](Self::reset_peak),
    /// in bytes (`VmHWM`).
    pub fn peak_rss(&self) -> anyhow::Result<u64> {
        proc_status_kib(self.pid(), "VmHWM:").map(|k| k * 1024)
    }

    /// CPU time the process's live threads have run so far, in
    /// nanoseconds: the sum of `/proc/PID/task/*/schedstat`. Threads that
    /// have exited are not counted (the servers' runtime threads live as
    /// long as they do; the endpoints measured use no blocking pool). On
    /// kernels with paravirtual steal accounting, time the hypervisor stole
    /// from the virtual CPU is not in it, which makes it steadier than
    /// wall-clock throughput on a shared machine.
    pub fn cpu_ns(&self) -> anyhow::Result<u64> {
        cpu_ns_of(self.pid())
    }

    /// CPU time each live thread of the process has run so far: its
    /// thread id, its name (`comm`) and the nanoseconds of its
    /// `/proc/PID/task/TID/schedstat`, in thread id order. Over a window,
    /// the threads whose time grew show which threads did the work.
    pub fn threads_cpu_ns(&self) -> anyhow::Result<Vec<(u32, String, u64)>> {
        let mut threads = Vec::new();
        for task in std::fs::read_dir(format!("/proc/{}/task", self.pid()))? {
            let dir = task?.path();
            let Some(tid) = dir
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.parse().ok())
            else {
                continue;
            };
            // A thread may exit between the listing and the reads.
            let (Ok(stat), Ok(comm)) = (
                std::fs::read_to_string(dir.join("schedstat")),
                std::fs::read_to_string(dir.join("comm")),
            ) else {
                continue;
            };
            let ran = stat
                .split_whitespace()
                .next()
                .context("empty schedstat")?
                .parse()?;
            threads.push((tid, comm.trim_end().to_owned(), ran));
        }
        threads.sort_unstable_by_key(|t| t.0);
        Ok(threads)
    }

    /// Reset the peak resident memory to the current one (Linux
    /// `clear_refs` 5).
    pub fn reset_peak(&self) -> anyhow::Result<()> {
        std::fs::write(format!("/proc/{}/clear_refs", self.pid()), "5").context("resetting VmHWM")
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn proc_status_kib(pid: u32, key: &str) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let line = status
        .lines()
        .find(|l| l.starts_with(key))
        .with_context(|| format!("{key} missing"))?;
    let kib = line[key.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()?;
    Ok(kib)
}

/// CPU time the live threads of process `pid` have run so far, in
/// nanoseconds: the sum of `/proc/PID/task/*/schedstat` (see
/// [`ServerProcess::cpu_ns`]). Also read of load clients (h2load) that
/// run as child processes.
pub fn cpu_ns_of(pid: u32) -> anyhow::Result<u64> {
    let mut total = 0u64;
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let path = task?.path().join("schedstat");
        // A thread may exit between the listing and the read.
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let ran: u64 = text
            .split_whitespace()
            .next()
            .context("empty schedstat")?
            .parse()?;
        total += ran;
    }
    Ok(total)
}

fn free_port() -> anyhow::Result<SocketAddr> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?)
}

fn sibling(name: &str) -> anyhow::Result<PathBuf> {
    let me = std::env::current_exe()?;
    let path = me.with_file_name(name);
    if !path.exists() {
        bail!(
            "{} not found: build it first with `cargo build --release --workspace`",
            path.display()
        );
    }
    Ok(path)
}

/// The command to run `program` with: under `taskset -c CPUS` when `cpus`
/// is given (so that server and load generator do not trade cores between
/// runs), else directly.
///
/// `taskset` is Linux's: elsewhere the program runs unpinned, which is said
/// once on stderr when `cpus` is given.
pub fn pinned(program: &std::path::Path, cpus: Option<&str>) -> Command {
    match cpus {
        #[cfg(target_os = "linux")]
        Some(cpus) => {
            let mut cmd = Command::new("taskset");
            cmd.args(["-c", cpus]).arg(program);
            cmd
        }
        #[cfg(not(target_os = "linux"))]
        Some(_) => {
            super::pinning_unsupported();
            Command::new(program)
        }
        None => Command::new(program),
    }
}

/// Start `ringstream serve` (the binary next to this one) with `workers`
/// runtime threads, on `cpus` if given, taking request bodies of up to
/// `max_body_size` bytes (its default is 1 GiB).
pub fn start_ringstream(
    workers: usize,
    cpus: Option<&str>,
    max_body_size: u64,
) -> anyhow::Result<ServerProcess> {
    start_ringstream_with(
        workers,
        cpus,
        &["--max-body-size", &max_body_size.to_string()],
    )
}

/// Start `ringstream serve` (the binary next to this one) with `workers`
/// runtime threads, on `cpus` if given, with `extra` flags.
pub fn start_ringstream_with(
    workers: usize,
    cpus: Option<&str>,
    extra: &[&str],
) -> anyhow::Result<ServerProcess> {
    let addr = free_port()?;
    let child = pinned(&sibling("ringstream")?, cpus)
        .args([
            "serve",
            "--addr",
            &addr.to_string(),
            "--workers",
            &workers.to_string(),
        ])
        .args(extra)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("starting ringstream serve")?;
    wait_ready(ServerProcess {
        name: "ringstream",
        addr,
        child,
    })
}

/// Start `program` with `args` (plus `--addr` and a free port) as server
/// `name`, on `cpus` if given. The program must print one line on stdout
/// once it listens.
pub fn start_program(
    name: &'static str,
    program: &std::path::Path,
    args: &[&str],
    cpus: Option<&str>,
) -> anyhow::Result<ServerProcess> {
    let addr = free_port()?;
    let child = pinned(program, cpus)
        .args(args)
        .args(["--addr", &addr.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("starting {}", program.display()))?;
    wait_ready(ServerProcess { name, addr, child })
}

/// Start the hyper peer with `workers` runtime threads, on `cpus` if
/// given.
pub fn start_hyper(workers: usize, cpus: Option<&str>) -> anyhow::Result<ServerProcess> {
    let addr = free_port()?;
    let child = pinned(&std::env::current_exe()?, cpus)
        .args([
            "hyper-peer",
            "--addr",
            &addr.to_string(),
            "--workers",
            &workers.to_string(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("starting the hyper peer")?;
    wait_ready(ServerProcess {
        name: "hyper",
        addr,
        child,
    })
}

/// Start a WebSocket peer (`ringstream-bench ws-peer`) on
/// `implementation` with `workers` runtime threads (0: a current-thread
/// runtime), on `cpus` if given, with `extra` flags (`--broadcast`, `--send-buffer`).
pub fn start_ws_peer(
    implementation: super::ws_peer::Impl,
    workers: usize,
    cpus: Option<&str>,
    extra: &[&str],
) -> anyhow::Result<ServerProcess> {
    let addr = free_port()?;
    let child = pinned(&std::env::current_exe()?, cpus)
        .args([
            "ws-peer",
            "--impl",
            implementation.name(),
            "--addr",
            &addr.to_string(),
            "--workers",
            &workers.to_string(),
        ])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("starting the {} peer", implementation.name()))?;
    wait_ready(ServerProcess {
        name: implementation.name(),
        addr,
        child,
    })
}

/// Start an HTTPS server (`ringstream-bench tls-peer`) on
/// `implementation` with `workers` runtime threads, on `cpus` if given,
/// serving with the PEM files `cert` and `key`, or plain HTTP when `plain`.
pub fn start_tls_peer(
    implementation: super::tls_peer::TlsImpl,
    cert: &std::path::Path,
    key: &std::path::Path,
    plain: bool,
    workers: usize,
    cpus: Option<&str>,
) -> anyhow::Result<ServerProcess> {
    let addr = free_port()?;
    let mut cmd = pinned(&std::env::current_exe()?, cpus);
    cmd.args(["tls-peer", "--impl", implementation.name(), "--addr"])
        .arg(addr.to_string())
        .args(["--workers", &workers.to_string(), "--cert"])
        .arg(cert)
        .arg("--key")
        .arg(key);
    if plain {
        cmd.arg("--plain");
    }
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("starting the {} TLS peer", implementation.name()))?;
    wait_ready(ServerProcess {
        name: implementation.name(),
        addr,
        child,
    })
}

/// Start an HTTP/2 server (`ringstream-bench h2-peer`) on
/// `implementation` with `workers` runtime threads, on `cpus` if given:
/// over TLS with the PEM files of `tls` (certificate, key), else h2c;
/// with `extra` flags (`--slow-upload`).
pub fn start_h2_peer(
    implementation: super::h2_peer::H2Impl,
    tls: Option<(&std::path::Path, &std::path::Path)>,
    workers: usize,
    cpus: Option<&str>,
    extra: &[&str],
) -> anyhow::Result<ServerProcess> {
    let addr = free_port()?;
    let mut cmd = pinned(&std::env::current_exe()?, cpus);
    cmd.args(["h2-peer", "--impl", implementation.name(), "--addr"])
        .arg(addr.to_string())
        .args(["--workers", &workers.to_string()])
        .args(extra);
    if let Some((cert, key)) = tls {
        cmd.arg("--cert").arg(cert).arg("--key").arg(key);
    }
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("starting the {} HTTP/2 peer", implementation.name()))?;
    wait_ready(ServerProcess {
        name: implementation.name(),
        addr,
        child,
    })
}

fn wait_ready(mut server: ServerProcess) -> anyhow::Result<ServerProcess> {
    let stdout = server.child.stdout.take().context("server stdout")?;
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(server.addr).is_err() {
        if Instant::now() > deadline {
            bail!("{} did not start listening on {}", server.name, server.addr);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(server)
}
