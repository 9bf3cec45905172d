//! What the integration tests share: the scripted HTTP/1.1 server
//! (`headroom_testbed::scripted`: each request numbered from 1, a handler
//! decides its delay, status and body; `kill()` closes every socket at
//! once, like a crashed server), a raw-socket server, a TLS server, and
//! helpers to run headroom and read what it wrote.
#![allow(dead_code)]

pub mod browser;
pub mod dokuwiki;
pub mod guards;
pub mod mediawiki;
pub mod needs;
pub mod php_site;
pub mod raw;
pub mod site;
pub mod wordpress;
#[allow(unused_imports)]
pub use guards::{light, paced, searching, serial};
#[allow(unused_imports)]
pub(crate) use needs::requires;
#[allow(unused_imports)]
pub use needs::{browser, minutes, program, python, root, service};
#[allow(unused_imports)]
pub use raw::{closes_when_idle, RawConn, RawServer};

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// The scripted server of the integration tests (the demo site's, too).
#[allow(unused_imports)]
pub use headroom_testbed::scripted::{url_decode, Reply, Request, ScriptedServer as TestServer};

/// The headroom binary built for these tests.
pub fn headroom() -> Command {
    Command::new(env!("CARGO_BIN_EXE_headroom"))
}

pub fn run(args: &[&str]) -> Output {
    headroom().args(args).output().expect("headroom runs")
}

/// A finished command's exit code, stdout and stderr, for assertion messages.
pub fn text(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

pub fn stdout_json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// `scenario from-log LOG --out USERS --target BASE` with `extra` flags,
/// which must succeed; what it said.
pub fn workload_from_log(log: &Path, users: &Path, base: &str, extra: &[&str]) -> String {
    let mut args = vec![
        "scenario",
        "from-log",
        log.to_str().unwrap(),
        "--out",
        users.to_str().unwrap(),
        "--target",
        base,
    ];
    args.extend_from_slice(extra);
    let out = run(&args);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    said
}

/// A fresh directory for one test's bundle.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("headroom-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

pub fn manifest(bundle: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(bundle.join("manifest.json")).unwrap()).unwrap()
}

/// The TOTAL rows of intervals.csv, as (second, count) pairs.
pub fn interval_totals(bundle: &Path) -> Vec<(u64, u64)> {
    total_rows(bundle)
        .into_iter()
        .map(|(second, count, _)| (second, count))
        .collect()
}

/// The TOTAL rows of intervals.csv: (second, count, interval_s).
pub fn total_rows(bundle: &Path) -> Vec<(u64, u64, f64)> {
    let mut reader = csv::Reader::from_path(bundle.join("intervals.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (second, label, count, length) =
        (col("second"), col("label"), col("count"), col("interval_s"));
    reader
        .records()
        .map(|r| r.unwrap())
        .filter(|r| &r[label] == "TOTAL")
        .map(|r| {
            (
                r[second].parse().unwrap(),
                r[count].parse().unwrap(),
                r[length].parse().unwrap(),
            )
        })
        .collect()
}

pub fn ms(value: &serde_json::Value) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("not a number: {value}"))
}

/// A TLS server with a fresh self-signed certificate for "localhost",
/// answering every request with 200 and a short body.
pub struct TlsServer {
    pub addr: SocketAddr,
    /// Kept so the server lives as long as this value.
    _runtime: tokio::runtime::Runtime,
}

impl TlsServer {
    pub fn start() -> TlsServer {
        let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(cert.signing_key.serialize_der().into());
        TlsServer::serving(vec![cert.cert.der().clone()], key)
    }

    /// A server presenting this certificate chain.
    #[allow(dead_code)]
    pub fn serving(
        chain: Vec<rustls::pki_types::CertificateDer<'static>>,
        key: rustls::pki_types::PrivateKeyDer<'static>,
    ) -> TlsServer {
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let addr = listener.local_addr().unwrap();
        runtime.spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(stream).await else {
                        return;
                    };
                    let mut buf = vec![0u8; 8192];
                    let mut filled = 0;
                    loop {
                        let head_len = loop {
                            let mut headers = [httparse::EMPTY_HEADER; 64];
                            let mut request = httparse::Request::new(&mut headers);
                            if let Ok(httparse::Status::Complete(n)) = request.parse(&buf[..filled])
                            {
                                break n;
                            }
                            match tls.read(&mut buf[filled..]).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => filled += n,
                            }
                        };
                        buf.copy_within(head_len..filled, 0);
                        filled -= head_len;
                        let response = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
                        if tls.write_all(response).await.is_err() || tls.flush().await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        TlsServer {
            addr,
            _runtime: runtime,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{}", self.addr.port(), path)
    }
}

/// Runs `headroom ARGS --json --out <fresh dir named NAME>`, expects exit 0
/// and returns the JSON summary.
pub fn run_json(name: &str, args: &[&str]) -> serde_json::Value {
    let out = temp_dir(name);
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--json", "--out", out.to_str().unwrap()]);
    let output = run(&all);
    assert!(
        output.status.success(),
        "headroom {all:?} exited {:?}:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stderr)
    );
    stdout_json(&output)
}

/// Runs headroom starved of CPU on purpose: pinned to core 0 at nice 10,
/// next to two busy loops on the same core: about 5% of the core (at
/// nice 19, under 1%, the capacity search took 90 s of the suite).
#[allow(dead_code)]
pub fn run_starved(args: &[&str]) -> Output {
    let hogs: Vec<std::process::Child> = (0..2)
        .map(|_| {
            Command::new("taskset")
                .args(["-c", "0", "sh", "-c", "while :; do :; done"])
                .spawn()
                .expect("taskset (util-linux) runs")
        })
        .collect();
    let output = Command::new("taskset")
        .args([
            "-c",
            "0",
            "nice",
            "-n",
            "10",
            env!("CARGO_BIN_EXE_headroom"),
        ])
        .args(args)
        .output()
        .unwrap();
    for mut hog in hogs {
        let _ = hog.kill();
        let _ = hog.wait();
    }
    output
}

/// A port nobody listens on now.
#[allow(dead_code)]
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[allow(dead_code)]
pub fn wait_for_port(port: u16, child: &mut std::process::Child, what: &str) {
    let started = Instant::now();
    loop {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{what} exited ({status}) before listening on {port}");
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{what} does not listen on {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A plain GET to 127.0.0.1 (Connection: close), with a bearer token when
/// given: the status and the body.
#[allow(dead_code)]
pub fn http_get(port: u16, path: &str, token: Option<&str>) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
        .unwrap_or_default();
    (status, body)
}

/// The share of the machine's CPU (0..1) that was busy over `window`, by
/// /proc/stat (the tests hold `serial()` when they ask: it is other work).
fn machine_busy(window: Duration) -> f64 {
    fn ticks() -> (u64, u64) {
        let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        let fields: Vec<u64> = stat
            .lines()
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .skip(1)
            .filter_map(|f| f.parse().ok())
            .collect();
        let idle = fields.get(3).copied().unwrap_or(0) + fields.get(4).copied().unwrap_or(0);
        (fields.iter().sum(), idle)
    }
    let (total_0, idle_0) = ticks();
    std::thread::sleep(window);
    let (total_1, idle_1) = ticks();
    let total = total_1.saturating_sub(total_0).max(1);
    1.0 - idle_1.saturating_sub(idle_0) as f64 / total as f64
}

/// For a test whose figures need the cores to itself (a CPU-bound
/// server's saturation, a peak memory): waits up to a minute for other
/// work to end. Returns `None` when the cores are quiet; else why not,
/// naming the busiest processes (as `headroom doctor` does), which the
/// test says instead of failing on figures the machine's other work made
/// (under CI, where the machine is the suite's, it fails with that).
#[allow(dead_code)]
pub fn busy_cores() -> Option<String> {
    let waited = Instant::now();
    loop {
        let busy = machine_busy(Duration::from_secs(1));
        if busy < 0.25 {
            return None;
        }
        if waited.elapsed() > Duration::from_secs(60) {
            let roots = headroom_monitor::procfs::Roots::default();
            let top = headroom_monitor::doctor::top_processes(&roots, 3, Duration::from_secs(1));
            return Some(format!(
                "other work kept {:.0}% of the machine's CPU busy for a minute (busiest: {})",
                busy * 100.0,
                top.join(", ")
            ));
        }
    }
}

/// Ends a test that needs quiet cores when other work holds them: said on
/// standard error and passed locally (the figures would be the other
/// work's), a failure under CI. True when the test should stop.
#[allow(dead_code)]
pub fn skip_for_busy_cores(test: &str, why: Option<String>) -> bool {
    let Some(why) = why else {
        return false;
    };
    if std::env::var_os("CI").is_some() {
        panic!("{test} needs quiet cores: {why}");
    }
    eprintln!("{test}: skipped, it needs quiet cores: {why}");
    true
}

/// `headroom report` of a run's bundle: its report.html.
pub fn report_html(bundle: &std::path::Path) -> String {
    let report = headroom()
        .args(["report", bundle.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    std::fs::read_to_string(bundle.join("report.html")).unwrap()
}
