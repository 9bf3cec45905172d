//! A scriptable HTTP/1.1 server on 127.0.0.1 for integration tests: each
//! request is numbered (from 1) and a handler decides its delay, status and
//! body. The server runs on its own runtime, so `kill()` closes every
//! socket at once, like a crashed server.
#![allow(dead_code)]

pub mod raw;
#[allow(unused_imports)]
pub use raw::{closes_when_idle, RawConn, RawServer};

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the server does with one request.
#[derive(Clone, Debug)]
pub struct Reply {
    pub delay: Duration,
    /// Hold the response until this moment (a stop-the-world pause).
    pub hold_until: Option<Instant>,
    pub status: u16,
    pub body: usize,
    pub chunked: bool,
    pub close: bool,
    /// Reset the connection (RST) instead of answering.
    pub reset: bool,
    /// Extra response headers.
    pub headers: Vec<(String, String)>,
    /// The body as text (instead of `body` bytes of 'x').
    pub text: Option<String>,
}

impl Default for Reply {
    fn default() -> Self {
        Reply {
            delay: Duration::ZERO,
            hold_until: None,
            status: 200,
            body: 64,
            chunked: false,
            close: false,
            reset: false,
            headers: Vec::new(),
            text: None,
        }
    }
}

/// Passed to the handler.
pub struct Request {
    /// 1 for the first request the server received.
    pub number: u64,
    pub arrived: Instant,
    /// When the first request arrived.
    pub first: Instant,
    pub method: String,
    /// Path and query.
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn cookie(&self, name: &str) -> Option<String> {
        self.header("cookie")?
            .split(';')
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.to_string())
    }

    /// The path without the query.
    pub fn route(&self) -> &str {
        self.path.split('?').next().unwrap_or("/")
    }

    /// A query or urlencoded form parameter.
    pub fn param(&self, name: &str) -> Option<String> {
        let query = self.path.split_once('?').map(|(_, q)| q).unwrap_or("");
        let body = String::from_utf8_lossy(&self.body).to_string();
        [query, body.as_str()]
            .iter()
            .flat_map(|text| text.split('&'))
            .filter_map(|pair| pair.split_once('='))
            .find(|(n, _)| url_decode(n) == name)
            .map(|(_, v)| url_decode(v))
    }
}

pub fn url_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("00");
                out.push(u8::from_str_radix(hex, 16).unwrap_or(b'?'));
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).to_string()
}

type Handler = Arc<dyn Fn(&Request) -> Reply + Send + Sync>;

pub struct TestServer {
    pub addr: SocketAddr,
    runtime: Option<tokio::runtime::Runtime>,
    pub requests: Arc<AtomicU64>,
}

impl TestServer {
    pub fn start(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> TestServer {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(AtomicU64::new(0));
        let first: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
        let handler: Handler = Arc::new(handler);
        let counter = requests.clone();
        runtime.spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(
                    stream,
                    handler.clone(),
                    counter.clone(),
                    first.clone(),
                ));
            }
        });
        TestServer {
            addr,
            runtime: Some(runtime),
            requests,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// Closes the listener and every connection at once.
    pub fn kill(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.kill();
    }
}

async fn serve(
    mut stream: TcpStream,
    handler: Handler,
    counter: Arc<AtomicU64>,
    first: Arc<Mutex<Option<Instant>>>,
) {
    let _ = stream.set_nodelay(true);
    let mut buf = vec![0u8; 16384];
    let mut filled = 0;
    loop {
        let (head_len, body_len, method, path, request_headers) = loop {
            let mut headers = [httparse::EMPTY_HEADER; 64];
            let mut request = httparse::Request::new(&mut headers);
            match request.parse(&buf[..filled]) {
                Ok(httparse::Status::Complete(n)) => {
                    let length = request
                        .headers
                        .iter()
                        .find(|h| h.name.eq_ignore_ascii_case("content-length"))
                        .and_then(|h| {
                            std::str::from_utf8(h.value)
                                .ok()?
                                .trim()
                                .parse::<usize>()
                                .ok()
                        })
                        .unwrap_or(0);
                    let pairs: Vec<(String, String)> = request
                        .headers
                        .iter()
                        .map(|h| {
                            (
                                h.name.to_string(),
                                String::from_utf8_lossy(h.value).to_string(),
                            )
                        })
                        .collect();
                    break (
                        n,
                        length,
                        request.method.unwrap_or("GET").to_string(),
                        request.path.unwrap_or("/").to_string(),
                        pairs,
                    );
                }
                Ok(httparse::Status::Partial) => {}
                Err(_) => return,
            }
            match stream.read(&mut buf[filled..]).await {
                Ok(0) | Err(_) => return,
                Ok(n) => filled += n,
            }
        };
        while filled < head_len + body_len {
            match stream.read(&mut buf[filled..]).await {
                Ok(0) | Err(_) => return,
                Ok(n) => filled += n,
            }
        }
        let request_body = buf[head_len..head_len + body_len].to_vec();
        buf.copy_within(head_len + body_len..filled, 0);
        filled -= head_len + body_len;
        let arrived = Instant::now();
        let number = counter.fetch_add(1, Ordering::SeqCst) + 1;
        let first_at = *first.lock().unwrap().get_or_insert(arrived);
        let reply = handler(&Request {
            number,
            arrived,
            first: first_at,
            method,
            path,
            headers: request_headers,
            body: request_body,
        });
        if let Some(until) = reply.hold_until {
            tokio::time::sleep_until(until.into()).await;
        }
        if !reply.delay.is_zero() {
            tokio::time::sleep(reply.delay).await;
        }
        if reply.reset {
            // Linger 0: closing sends RST instead of FIN.
            let std_stream = stream.into_std().unwrap();
            socket_reset(std_stream);
            return;
        }
        let body = reply.text.clone().unwrap_or_else(|| "x".repeat(reply.body));
        let mut response = format!("HTTP/1.1 {} Test\r\n", reply.status);
        for (name, value) in &reply.headers {
            response.push_str(&format!("{name}: {value}\r\n"));
        }
        if reply.close {
            response.push_str("Connection: close\r\n");
        }
        if reply.chunked {
            response.push_str("Transfer-Encoding: chunked\r\n\r\n");
            for piece in body.as_bytes().chunks(7) {
                response.push_str(&format!(
                    "{:x}\r\n{}\r\n",
                    piece.len(),
                    std::str::from_utf8(piece).unwrap()
                ));
            }
            response.push_str("0\r\n\r\n");
        } else {
            response.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
        }
        if stream.write_all(response.as_bytes()).await.is_err() || reply.close {
            return;
        }
    }
}

/// Integration tests run one at a time: they measure timing on a machine
/// with few cores, and a test that floods a dead server with reconnects
/// would skew another's percentiles. Hold the guard for the whole test.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The headroom binary built for these tests.
pub fn headroom() -> Command {
    Command::new(env!("CARGO_BIN_EXE_headroom"))
}

pub fn run(args: &[&str]) -> Output {
    headroom().args(args).output().expect("headroom runs")
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
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.cert.der().clone()], key)
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

fn socket_reset(stream: std::net::TcpStream) {
    use std::os::fd::AsRawFd;
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: setting SO_LINGER on a socket we own, with a valid struct.
    unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
    drop(stream);
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

/// Runs headroom starved of CPU on purpose: pinned to core 0 at nice 19,
/// next to two busy loops on the same core.
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
            "19",
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
