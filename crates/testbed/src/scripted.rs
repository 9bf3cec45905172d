//! A scripted HTTP/1.1 server: a handler decides, for each request, its
//! delay, status, headers and body, or to close or reset the connection.
//! Optionally a pool of workers is held for each request's delay (php-fpm's
//! `pm.max_children`: requests beyond the pool wait). It runs on its own
//! runtime, so [`ScriptedServer::kill`] closes every socket at once, like a
//! crashed server. `headroom demo --serve` is one (the demo site), and so are
//! the servers of the integration tests.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

/// What the server does with one request.
#[derive(Clone, Debug)]
pub struct Reply {
    /// Time the request takes (holding a worker, when there is a pool).
    pub delay: Duration,
    /// Hold the response until this moment (a stop-the-world pause).
    pub hold_until: Option<Instant>,
    pub status: u16,
    /// A body of this many bytes of 'x' (unless `text` is given).
    pub body: usize,
    pub chunked: bool,
    /// Send `Connection: close` and close after the response.
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

/// One request, as the handler sees it.
pub struct Request {
    /// 1 for the first request the server received.
    pub number: u64,
    /// 1 for the first connection the server accepted.
    pub connection: u64,
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

/// Decodes `+` and `%XX` of a URL-encoded text.
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

/// Shared by every connection of one server.
struct Shared {
    handler: Handler,
    requests: Arc<AtomicU64>,
    first: Mutex<Option<Instant>>,
    workers: Option<Semaphore>,
    connections: AtomicU64,
}

pub struct ScriptedServer {
    pub addr: SocketAddr,
    runtime: Option<tokio::runtime::Runtime>,
    /// Requests received so far.
    pub requests: Arc<AtomicU64>,
}

impl ScriptedServer {
    /// Serves on 127.0.0.1 on a free port, without a worker pool.
    pub fn start(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> ScriptedServer {
        let local = SocketAddr::from(([127, 0, 0, 1], 0));
        ScriptedServer::bind(local, None, handler).expect("bind 127.0.0.1:0")
    }

    /// Serves on `addr`; with `workers`, each request holds one of that
    /// many workers for its delay.
    pub fn bind(
        addr: SocketAddr,
        workers: Option<usize>,
        handler: impl Fn(&Request) -> Reply + Send + Sync + 'static,
    ) -> std::io::Result<ScriptedServer> {
        let listener = std::net::TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("headroom-scripted-server")
            .enable_all()
            .build()?;
        let requests = Arc::new(AtomicU64::new(0));
        let shared = Arc::new(Shared {
            handler: Arc::new(handler),
            requests: requests.clone(),
            first: Mutex::new(None),
            connections: AtomicU64::new(0),
            workers: workers.map(Semaphore::new),
        });
        let listener = {
            let _entered = runtime.enter();
            TcpListener::from_std(listener)?
        };
        runtime.spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, shared.clone()));
            }
        });
        Ok(ScriptedServer {
            addr,
            runtime: Some(runtime),
            requests,
        })
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

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One request head and body read from the connection.
struct Incoming {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// Reads the next request (head and `Content-Length` body); `None` when the
/// peer closed or sent something that is not HTTP.
async fn read_request(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    filled: &mut usize,
) -> Option<Incoming> {
    let (head_len, body_len, method, path, headers) = loop {
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut request = httparse::Request::new(&mut headers);
        match request.parse(&buf[..*filled]) {
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
                let pairs = request
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
            Err(_) => return None,
        }
        if *filled == buf.len() {
            // A head larger than the buffer: not what these servers serve.
            return None;
        }
        match stream.read(&mut buf[*filled..]).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => *filled += n,
        }
    };
    if buf.len() < head_len + body_len {
        buf.resize(head_len + body_len, 0);
    }
    while *filled < head_len + body_len {
        match stream.read(&mut buf[*filled..]).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => *filled += n,
        }
    }
    let body = buf[head_len..head_len + body_len].to_vec();
    buf.copy_within(head_len + body_len..*filled, 0);
    *filled -= head_len + body_len;
    Some(Incoming {
        method,
        path,
        headers,
        body,
    })
}

async fn serve(mut stream: TcpStream, shared: Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    let mut buf = vec![0u8; 16384];
    let mut filled = 0;
    let connection = shared.connections.fetch_add(1, Ordering::SeqCst) + 1;
    while let Some(incoming) = read_request(&mut stream, &mut buf, &mut filled).await {
        let arrived = Instant::now();
        let number = shared.requests.fetch_add(1, Ordering::SeqCst) + 1;
        let first = *shared
            .first
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert(arrived);
        let reply = (shared.handler)(&Request {
            number,
            connection,
            arrived,
            first,
            method: incoming.method,
            path: incoming.path,
            headers: incoming.headers,
            body: incoming.body,
        });
        if let Some(until) = reply.hold_until {
            tokio::time::sleep_until(until.into()).await;
        }
        {
            let _worker = match &shared.workers {
                Some(pool) => match pool.acquire().await {
                    Ok(permit) => Some(permit),
                    Err(_) => return,
                },
                None => None,
            };
            if !reply.delay.is_zero() {
                tokio::time::sleep(reply.delay).await;
            }
        }
        if reply.reset {
            if let Ok(std_stream) = stream.into_std() {
                reset(std_stream);
            }
            return;
        }
        if stream.write_all(&response(&reply)).await.is_err() || reply.close {
            return;
        }
    }
}

/// The response's bytes.
fn response(reply: &Reply) -> Vec<u8> {
    let body = reply.text.clone().unwrap_or_else(|| "x".repeat(reply.body));
    let reason = if reply.status == 200 {
        "OK"
    } else {
        "Scripted"
    };
    let mut response = format!("HTTP/1.1 {} {reason}\r\n", reply.status);
    for (name, value) in &reply.headers {
        response.push_str(&format!("{name}: {value}\r\n"));
    }
    if reply.close {
        response.push_str("Connection: close\r\n");
    }
    if reply.chunked {
        response.push_str("Transfer-Encoding: chunked\r\n\r\n");
        for piece in body.as_bytes().chunks(7) {
            response.push_str(&format!("{:x}\r\n", piece.len()));
            response.push_str(&String::from_utf8_lossy(piece));
            response.push_str("\r\n");
        }
        response.push_str("0\r\n\r\n");
    } else {
        response.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    }
    response.into_bytes()
}

/// Closes with RST instead of FIN (linger 0).
pub fn reset(stream: std::net::TcpStream) {
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
