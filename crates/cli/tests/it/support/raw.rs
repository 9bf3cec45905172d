//! A misbehaving server scripted at the socket: each accepted connection
//! runs the test's script on its own thread with a [`RawConn`], which can
//! read requests, write any bytes (a status of 999, a thousand headers, a
//! redirect to itself, gzip), close while idle, or reset.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request as the server read it.
#[derive(Debug, Clone)]
pub struct RawRequest {
    pub method: String,
    /// The request target exactly as sent.
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Bytes of the whole request (head and body).
    pub size: usize,
}

impl RawRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// The server's side of one connection.
pub struct RawConn {
    stream: TcpStream,
    buffered: Vec<u8>,
    log: Arc<Mutex<Vec<RawRequest>>>,
}

impl RawConn {
    /// Reads the next request; `None` when the client closed, or nothing
    /// came within `idle` (the caller then closes, like a server's
    /// keep-alive timeout).
    pub fn next_request(&mut self, idle: Duration) -> Option<RawRequest> {
        let _ = self.stream.set_read_timeout(Some(idle));
        let mut chunk = [0u8; 65536];
        loop {
            let mut headers = vec![httparse::EMPTY_HEADER; 4096];
            let mut request = httparse::Request::new(&mut headers);
            if let Ok(httparse::Status::Complete(head)) = request.parse(&self.buffered) {
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
                let method = request.method.unwrap_or("").to_string();
                let target = request.path.unwrap_or("").to_string();
                let length = pairs
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
                    .and_then(|(_, v)| v.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                while self.buffered.len() < head + length {
                    match self.stream.read(&mut chunk) {
                        Ok(0) | Err(_) => return None,
                        Ok(n) => self.buffered.extend_from_slice(&chunk[..n]),
                    }
                }
                let body = self.buffered[head..head + length].to_vec();
                self.buffered.drain(..head + length);
                let parsed = RawRequest {
                    method,
                    target,
                    headers: pairs,
                    body,
                    size: head + length,
                };
                self.log.lock().unwrap().push(parsed.clone());
                return Some(parsed);
            }
            match self.stream.read(&mut chunk) {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.buffered.extend_from_slice(&chunk[..n]),
            }
        }
    }

    pub fn write(&mut self, bytes: &[u8]) {
        let _ = self.stream.write_all(bytes);
    }

    /// A response with a Content-Length and the given extra header lines.
    pub fn respond(&mut self, status_line: &str, headers: &[(&str, &str)], body: &[u8]) {
        let mut out = format!("HTTP/1.1 {status_line}\r\n");
        for (name, value) in headers {
            out.push_str(&format!("{name}: {value}\r\n"));
        }
        out.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        let mut bytes = out.into_bytes();
        bytes.extend_from_slice(body);
        self.write(&bytes);
    }

    /// Closes with RST instead of FIN.
    pub fn reset(self) {
        headroom_testbed::scripted::reset(self.stream);
    }
}

type Script = Arc<dyn Fn(RawConn) + Send + Sync>;

/// A listener on 127.0.0.1 running `script` for every connection.
pub struct RawServer {
    pub addr: SocketAddr,
    pub connections: Arc<AtomicU64>,
    requests: Arc<Mutex<Vec<RawRequest>>>,
    stop: Arc<AtomicBool>,
}

impl RawServer {
    pub fn start(script: impl Fn(RawConn) + Send + Sync + 'static) -> RawServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        listener.set_nonblocking(true).unwrap();
        let connections = Arc::new(AtomicU64::new(0));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let script: Script = Arc::new(script);
        let (count, log, halt) = (connections.clone(), requests.clone(), stop.clone());
        std::thread::spawn(move || {
            while !halt.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let _ = stream.set_nonblocking(false);
                        let _ = stream.set_nodelay(true);
                        count.fetch_add(1, Ordering::SeqCst);
                        let script = script.clone();
                        let conn = RawConn {
                            stream,
                            buffered: Vec::new(),
                            log: log.clone(),
                        };
                        std::thread::spawn(move || script(conn));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(2)),
                }
            }
        });
        RawServer {
            addr,
            connections,
            requests,
            stop,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<RawRequest> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for RawServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The script of a keep-alive server that answers every request with
/// `body` and closes a connection idle for `idle` (Apache's
/// KeepAliveTimeout), without a `Connection: close` header.
pub fn closes_when_idle(idle: Duration, body: &'static str) -> impl Fn(RawConn) + Send + Sync {
    move |mut conn| {
        while conn.next_request(idle).is_some() {
            conn.respond("200 OK", &[], body.as_bytes());
        }
    }
}
