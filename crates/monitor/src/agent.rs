//! `headroom agent`: runs on the server under test and serves its recent
//! resource samples and fingerprint as JSON over HTTP. Read-only; binds to
//! loopback unless given a token; memory bounded by a ring buffer.
//!
//! `GET /samples?since=N` answers the samples with a sequence number above
//! N and the agent's clock (`now_ms`), from which a client estimates the
//! clock offset; `GET /fingerprint` answers the host's fingerprint;
//! `GET /metrics` the latest sample for Prometheus.

use crate::fingerprint::Fingerprint;
use crate::sampler::{Resources, Sampler, SamplerConfig};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Samples kept: ten minutes at one per second.
pub const RING: usize = 600;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TimedSample {
    pub seq: u64,
    /// The agent's wall clock when the interval ended, epoch ms.
    pub time_ms: u64,
    pub resources: Resources,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SamplesReply {
    pub host: String,
    /// The agent's wall clock when it answered, epoch ms.
    pub now_ms: u64,
    pub samples: Vec<TimedSample>,
}

pub struct AgentConfig {
    pub listen: SocketAddr,
    pub token: Option<String>,
    pub sampler: SamplerConfig,
    /// Serve the network benchmark's endpoints ([`crate::netbench`]).
    pub bench_endpoints: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("refusing to listen on {0} without a token: anyone who can reach it could read this host's figures. Add --token SECRET, or listen on 127.0.0.1")]
    OpenWithoutToken(SocketAddr),
    #[error("the token is empty: an empty token would let anyone read this host's figures. Give a secret, e.g. --token \"$(openssl rand -hex 16)\"")]
    EmptyToken,
    #[error("cannot listen on {address}: {source}")]
    Listen {
        address: SocketAddr,
        source: io::Error,
    },
}

pub fn epoch_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis() as u64
}

/// Compares in time independent of where the strings differ.
pub fn same_token(given: &[u8], expected: &[u8]) -> bool {
    if given.len() != expected.len() {
        return false;
    }
    given
        .iter()
        .zip(expected)
        .fold(0u8, |acc, (a, b)| acc | (a ^ b))
        == 0
}

/// A running agent.
pub struct Agent {
    pub address: SocketAddr,
}

impl Agent {
    /// Binds, starts sampling once a second, and serves until the process ends.
    pub fn start(config: AgentConfig) -> Result<Agent, AgentError> {
        if config.token.as_deref().is_some_and(|t| t.trim().is_empty()) {
            return Err(AgentError::EmptyToken);
        }
        if config.token.is_none() && !config.listen.ip().is_loopback() {
            return Err(AgentError::OpenWithoutToken(config.listen));
        }
        let listener = TcpListener::bind(config.listen).map_err(|source| AgentError::Listen {
            address: config.listen,
            source,
        })?;
        let address = listener.local_addr().map_err(|source| AgentError::Listen {
            address: config.listen,
            source,
        })?;
        let ring: Arc<Mutex<VecDeque<TimedSample>>> =
            Arc::new(Mutex::new(VecDeque::with_capacity(RING)));
        let fingerprint = Arc::new(
            Fingerprint::local(env!("CARGO_PKG_VERSION")).with_server(&config.sampler.processes),
        );
        let host = fingerprint.hostname.clone();
        let samples = ring.clone();
        let mut sampler = Sampler::new(config.sampler);
        std::thread::Builder::new()
            .name("agent-sampler".into())
            .spawn(move || {
                let mut seq = 0;
                sampler.sample();
                loop {
                    std::thread::sleep(Duration::from_secs(1));
                    if let Some(resources) = sampler.sample() {
                        seq += 1;
                        let mut ring = samples.lock().unwrap_or_else(|p| p.into_inner());
                        if ring.len() == RING {
                            ring.pop_front();
                        }
                        ring.push_back(TimedSample {
                            seq,
                            time_ms: epoch_ms(),
                            resources,
                        });
                    }
                }
            })
            .map_err(|source| AgentError::Listen { address, source })?;
        let token = Arc::new(config.token);
        let bench = config.bench_endpoints;
        std::thread::Builder::new()
            .name("agent-http".into())
            .spawn(move || {
                for stream in listener.incoming().flatten() {
                    let (ring, token, fingerprint, host) = (
                        ring.clone(),
                        token.clone(),
                        fingerprint.clone(),
                        host.clone(),
                    );
                    let _ = std::thread::Builder::new()
                        .name("agent-client".into())
                        .spawn(move || {
                            let _ =
                                answer(stream, &ring, token.as_deref(), &fingerprint, &host, bench);
                        });
                }
            })
            .map_err(|source| AgentError::Listen { address, source })?;
        Ok(Agent { address })
    }
}

fn answer(
    mut stream: TcpStream,
    ring: &Mutex<VecDeque<TimedSample>>,
    token: Option<&str>,
    fingerprint: &Fingerprint,
    host: &str,
    bench: bool,
) -> io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut buf = [0u8; 4096];
    let head = match read_head(&mut stream, &mut buf)? {
        Some(Ok(head)) => head,
        Some(Err(())) => return respond(&mut stream, 400, "{\"error\":\"bad request\"}"),
        None => return Ok(()),
    };
    let (path, header_len, filled) = (head.path.as_str(), head.len, head.filled);
    if let Some(expected) = token {
        if !head.bearer_is(expected) {
            return respond(
                &mut stream,
                401,
                "{\"error\":\"missing or wrong token: pass the agent's --token\"}",
            );
        }
    }
    let (route, query) = path.split_once('?').unwrap_or((path, ""));
    if route.starts_with("/bench/") {
        let rest = buf[header_len..filled].to_vec();
        return crate::netbench::serve(stream, route, query, &rest, bench);
    }
    match route {
        "/samples" => {
            let since = query
                .split('&')
                .find_map(|p| p.strip_prefix("since="))
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0);
            let samples: Vec<TimedSample> = {
                let ring = ring.lock().unwrap_or_else(|p| p.into_inner());
                ring.iter().filter(|s| s.seq > since).cloned().collect()
            };
            let reply = SamplesReply {
                host: host.to_string(),
                now_ms: epoch_ms(),
                samples,
            };
            respond(
                &mut stream,
                200,
                &serde_json::to_string(&reply).unwrap_or_default(),
            )
        }
        "/fingerprint" => respond(
            &mut stream,
            200,
            &serde_json::to_string(fingerprint).unwrap_or_default(),
        ),
        "/metrics" => {
            let latest = ring
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .back()
                .cloned();
            let page = crate::agent_metrics::render(
                host,
                &fingerprint.headroom_version,
                latest.as_ref().map(|s| (s.time_ms, &s.resources)),
            );
            respond_as(&mut stream, 200, crate::exposition::CONTENT_TYPE, &page)
        }
        _ => respond(
            &mut stream,
            404,
            "{\"error\":\"try /samples?since=0, /fingerprint or /metrics\"}",
        ),
    }
}

/// A request's head, as the agent and a run's `/metrics` read it.
pub struct Head {
    pub path: String,
    authorization: Option<Vec<u8>>,
    /// Bytes of the head, and bytes read into the buffer (the head and
    /// what followed it).
    pub len: usize,
    pub filled: usize,
}

impl Head {
    /// Whether the request carries `Authorization: Bearer TOKEN`.
    pub fn bearer_is(&self, token: &str) -> bool {
        let given = self
            .authorization
            .as_deref()
            .and_then(|v| v.strip_prefix(b"Bearer "))
            .unwrap_or(b"");
        same_token(given, token.as_bytes())
    }
}

/// Reads a request head into `buf`: `None` when the peer closed first,
/// `Some(Err(()))` for something that is not an HTTP request head (or one
/// larger than `buf`).
pub fn read_head(stream: &mut TcpStream, buf: &mut [u8]) -> io::Result<Option<Result<Head, ()>>> {
    let mut filled = 0;
    loop {
        let n = stream.read(&mut buf[filled..])?;
        if n == 0 {
            return Ok(None);
        }
        filled += n;
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut request = httparse::Request::new(&mut headers);
        match request.parse(&buf[..filled]) {
            Ok(httparse::Status::Complete(len)) => {
                let authorization = request
                    .headers
                    .iter()
                    .find(|h| h.name.eq_ignore_ascii_case("authorization"))
                    .map(|h| h.value.to_vec());
                return Ok(Some(Ok(Head {
                    path: request.path.unwrap_or("/").to_string(),
                    authorization,
                    len,
                    filled,
                })));
            }
            Ok(httparse::Status::Partial) if filled < buf.len() => continue,
            _ => return Ok(Some(Err(()))),
        }
    }
}

fn respond(stream: &mut TcpStream, status: u16, body: &str) -> io::Result<()> {
    respond_as(stream, status, "application/json", body)
}

fn respond_as(
    stream: &mut TcpStream,
    status: u16,
    content_type: &str,
    body: &str,
) -> io::Result<()> {
    let reason = match status {
        200 => "OK",
        401 => "Unauthorized",
        404 => "Not Found",
        _ => "Bad Request",
    };
    write!(
        stream,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// Longest an agent request may take, connect to last byte: a slow or
/// stalled agent costs a gap in the figures, never a hung run.
pub const AGENT_DEADLINE: Duration = Duration::from_secs(2);
/// Largest agent answer read (an hour of samples is about 10 MB).
pub const AGENT_MAX_BYTES: usize = 16 * 1024 * 1024;

/// A minimal blocking HTTP GET to an agent (it answers with Connection: close);
/// returns the status and the body. The whole exchange ends within
/// [`AGENT_DEADLINE`] and reads at most [`AGENT_MAX_BYTES`]; errors say
/// which limit was hit.
pub fn get(authority: &str, path: &str, token: Option<&str>) -> io::Result<(u16, Vec<u8>)> {
    use std::net::ToSocketAddrs;
    let deadline = std::time::Instant::now() + AGENT_DEADLINE;
    let timed_out = || {
        io::Error::new(
            io::ErrorKind::TimedOut,
            format!("no complete answer within {} s", AGENT_DEADLINE.as_secs()),
        )
    };
    let address = authority.to_socket_addrs()?.next().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("{authority} resolves to no address"),
        )
    })?;
    let mut stream = std::net::TcpStream::connect_timeout(&address, Duration::from_millis(800))
        .map_err(|e| match e.kind() {
            io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => timed_out(),
            _ => e,
        })?;
    stream.set_write_timeout(Some(Duration::from_millis(800)))?;
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {authority}\r\n{auth}Connection: close\r\n\r\n"
    )?;
    let sent = std::time::Instant::now();
    let mut raw = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(timed_out());
        }
        stream.set_read_timeout(Some(left))?;
        match std::io::Read::read(&mut stream, &mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                raw.extend_from_slice(&chunk[..n]);
                if raw.len() > AGENT_MAX_BYTES {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("answer larger than {} MiB", AGENT_MAX_BYTES >> 20),
                    ));
                }
                // Another server (one that keeps the connection open, as
                // web servers do) is said at once, not after the deadline.
                if let Some(head) = AnswerHead::parse(&raw) {
                    if !head.is_agents() {
                        return Err(io::Error::other(NotAnAgent {
                            authority: authority.to_string(),
                            status: head.status,
                            reason: head.reason,
                            content_type: head.content_type.unwrap_or_default(),
                            after: sent.elapsed(),
                        }));
                    }
                    if head
                        .content_length
                        .is_some_and(|len| raw.len() >= head.len + len)
                    {
                        raw.truncate(head.len + head.content_length.unwrap_or(0));
                        break;
                    }
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Err(timed_out())
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut response = httparse::Response::new(&mut headers);
    match response.parse(&raw) {
        Ok(httparse::Status::Complete(n)) => Ok((response.code.unwrap_or(0), raw[n..].to_vec())),
        _ if raw.is_empty() => Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "closed the connection without answering",
        )),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not an HTTP answer",
        )),
    }
}

/// The head of an answer, once all of it has arrived.
struct AnswerHead {
    status: u16,
    reason: String,
    content_type: Option<String>,
    content_length: Option<usize>,
    len: usize,
}

impl AnswerHead {
    fn parse(raw: &[u8]) -> Option<AnswerHead> {
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut response = httparse::Response::new(&mut headers);
        let len = match response.parse(raw) {
            Ok(httparse::Status::Complete(len)) => len,
            _ => return None,
        };
        let header = |name: &str| {
            response
                .headers
                .iter()
                .find(|h| h.name.eq_ignore_ascii_case(name))
                .map(|h| String::from_utf8_lossy(h.value).trim().to_string())
        };
        Some(AnswerHead {
            status: response.code.unwrap_or(0),
            reason: response.reason.unwrap_or("").to_string(),
            content_type: header("content-type"),
            content_length: header("content-length").and_then(|v| v.parse().ok()),
            len,
        })
    }

    /// An agent answers JSON, or the Prometheus text format on /metrics;
    /// an answer without a content type is judged by its body.
    fn is_agents(&self) -> bool {
        match &self.content_type {
            None => true,
            Some(t) => {
                let t = t.to_ascii_lowercase();
                t.starts_with("application/json")
                    || t == crate::exposition::CONTENT_TYPE.to_ascii_lowercase()
            }
        }
    }
}

/// A server answered at the agent's address, but not as an agent does: a
/// web server (or another service) is listening there.
#[derive(Debug)]
pub struct NotAnAgent {
    pub authority: String,
    pub status: u16,
    pub reason: String,
    pub content_type: String,
    pub after: Duration,
}

impl std::fmt::Display for NotAnAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.content_type.is_empty() {
            "no content type".to_string()
        } else {
            self.content_type.clone()
        };
        write!(
            f,
            "{} is not a headroom agent: it answered HTTP {}{}{} ({what}) in {} ms, where an \
             agent answers JSON. Start `headroom agent` on that server and give its address \
             (http://HOST:9464 unless its --listen says otherwise)",
            self.authority,
            self.status,
            if self.reason.is_empty() { "" } else { " " },
            self.reason,
            self.after.as_millis()
        )
    }
}

impl std::error::Error for NotAnAgent {}

/// The [`NotAnAgent`] an error of [`get`] holds, if any.
pub fn not_an_agent(error: &io::Error) -> Option<&NotAnAgent> {
    error.get_ref()?.downcast_ref::<NotAnAgent>()
}

/// An agent's fingerprint, or why it could not be had.
pub fn fetch_fingerprint(authority: &str, token: Option<&str>) -> Result<Fingerprint, String> {
    match get(authority, "/fingerprint", token) {
        Err(e) if not_an_agent(&e).is_some() => Err(e.to_string()),
        Ok((200, body)) => serde_json::from_slice(&body).map_err(|e| format!("the agent at {authority} sent no fingerprint: {e}")),
        Ok((401, _)) => Err(format!("the agent at {authority} refused the token: pass its --token with --agent-token")),
        Ok((status, _)) => Err(format!("the agent at {authority} answered {status}")),
        Err(e) => Err(format!("no agent answers at {authority} ({e}): start `headroom agent` there, or check the address")),
    }
}
