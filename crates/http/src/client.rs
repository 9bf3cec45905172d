//! The per-VU HTTP client: one connection kept alive across requests,
//! one reused read buffer, pre-serialised request bytes. Over HTTP/1.1 the
//! request path allocates nothing and takes no lock; over HTTP/2
//! ([`crate::http2`]) the requests are streams on the user's one connection.

use crate::conn::{Conn, Connector, UserTls};
pub use crate::exchange::Exchange;
use crate::http1::{parse_head, BodyReader, ProtocolError, ResponseHead};
use crate::http2::{Http2Connection, StreamFailure};
use crate::protocol::HttpChoice;
use headroom_bundle::sample::ErrorKind;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::{Instant, Sleep};

/// Initial read buffer; heads larger than this grow it up to [`MAX_HEAD`].
const READ_BUFFER: usize = 16 * 1024;
const MAX_HEAD: usize = 1024 * 1024;

/// A request as the client sends it.
#[derive(Clone, Copy)]
pub struct Outgoing<'a> {
    pub bytes: &'a [u8],
    pub is_head: bool,
    pub keep_alive: bool,
}

struct Io {
    conn: Option<Conn>,
    buf: Vec<u8>,
    /// Bytes at the start of `buf` already received but not yet consumed.
    filled: usize,
    /// `conn` was opened for the request now being sent (HTTP/2 was
    /// offered and the server chose HTTP/1.1): not a reused connection.
    fresh: bool,
}

pub struct HttpClient {
    connector: Arc<Connector>,
    /// This user's TLS sessions.
    tls: UserTls,
    io: Io,
    /// The user's HTTP/2 connection, when it speaks HTTP/2.
    h2: Option<Http2Connection>,
    timeout: Duration,
    /// Re-armed lazily: it only moves when it fires before the current
    /// request's deadline, so most requests never touch the timer wheel.
    timer: Pin<Box<Sleep>>,
    deadline: Instant,
}

impl HttpClient {
    /// A new user's client: TLS sessions of its own.
    pub fn new(connector: Arc<Connector>, timeout: Duration) -> HttpClient {
        let tls = connector.user_tls();
        HttpClient::with_tls(connector, timeout, tls)
    }

    /// Another connection of a user who has one: `tls` is the user's
    /// sessions with that host (a page's resources beside the page).
    pub fn with_tls(connector: Arc<Connector>, timeout: Duration, tls: UserTls) -> HttpClient {
        HttpClient::built(connector, timeout, tls, vec![0; READ_BUFFER])
    }

    fn built(
        connector: Arc<Connector>,
        timeout: Duration,
        tls: UserTls,
        buf: Vec<u8>,
    ) -> HttpClient {
        let deadline = Instant::now() + timeout;
        HttpClient {
            tls,
            connector,
            io: Io {
                conn: None,
                buf,
                filled: 0,
                fresh: false,
            },
            h2: None,
            timeout,
            timer: Box::pin(tokio::time::sleep_until(deadline)),
            deadline,
        }
    }

    /// Gives back the read buffer while the client waits (its connection
    /// stays open); the next `send` takes a new one. For the connections
    /// of a page load's resource slots, idle while their user reads: the
    /// URL mode and journey steps keep theirs (no allocation per request).
    pub fn release_buffer(&mut self) {
        if self.io.filled == 0 {
            self.io.buf = Vec::new();
        }
    }

    /// The bytes the client holds for its responses (its read buffer).
    pub fn buffer_bytes(&self) -> usize {
        self.io.buf.capacity()
    }

    /// Sends one request and reads the whole response, passing the body's
    /// payload to `body` with the response's status. `started` is the
    /// actual start, from which the timeout counts.
    pub async fn send(
        &mut self,
        request: Outgoing<'_>,
        started: std::time::Instant,
        body: &mut impl FnMut(u16, &[u8]),
        head: Option<&mut Vec<u8>>,
    ) -> Exchange {
        let mut exchange = Exchange::default();
        let in_flight = crate::sent::SENT.in_flight();
        self.deadline = Instant::from_std(started) + self.timeout;
        let HttpClient {
            connector,
            tls,
            io,
            h2,
            timer,
            deadline,
            ..
        } = self;
        let outcome = {
            let work = exchange_any((connector, tls), io, h2, request, &mut exchange, body, head);
            tokio::pin!(work);
            loop {
                tokio::select! {
                    biased;
                    outcome = &mut work => break outcome,
                    _ = timer.as_mut() => {
                        if Instant::now() >= *deadline {
                            break Err(ErrorKind::Timeout);
                        }
                        timer.as_mut().reset(*deadline);
                    }
                }
            }
        };
        if let Err(kind) = outcome {
            exchange.error = Some(kind);
            self.io.conn = None;
            self.io.filled = 0;
            self.h2 = None;
        }
        in_flight.done();
        exchange
    }

    /// The user's connection speaks HTTP/2.
    pub fn speaks_h2(&self) -> bool {
        self.h2.is_some()
    }

    /// Whether the client holds a connection (it may have been closed by
    /// the server since).
    pub fn connected(&self) -> bool {
        self.h2.is_some() || self.io.conn.is_some()
    }

    /// Streams the server takes at once on this client's HTTP/2
    /// connection; None unless it speaks HTTP/2.
    pub fn stream_limit(&self) -> Option<usize> {
        self.h2.as_ref().map(Http2Connection::stream_limit)
    }

    /// A client whose requests go as streams on this one's HTTP/2
    /// connection (a page's resources beside the page); None unless it
    /// speaks HTTP/2. It holds no read buffer until it must connect anew.
    pub fn sharing(&self) -> Option<HttpClient> {
        let session = self.h2.as_ref()?.share();
        let mut client = HttpClient::built(
            self.connector.clone(),
            self.timeout,
            self.tls.clone(),
            Vec::new(),
        );
        client.h2 = Some(session);
        Some(client)
    }

    /// This user's TLS sessions with the host, for its other connections.
    pub fn user_tls(&self) -> UserTls {
        self.tls.clone()
    }

    /// Both clients' requests go on one HTTP/2 connection.
    pub fn shares_connection_with(&self, other: &HttpClient) -> bool {
        match (&self.h2, &other.h2) {
            (Some(a), Some(b)) => a.same_connection(b),
            _ => false,
        }
    }
}

/// Said when HTTP/2 was required and a new connection's TLS chose otherwise.
const NOT_H2: &str = "the server did not agree to HTTP/2 in its TLS handshake (ALPN)";
/// Said when a new HTTP/2 connection could not take its first stream.
const CLOSED_AT_ONCE: &str = "the server closed the new HTTP/2 connection before it took a stream";

/// One exchange on the user's HTTP/2 connection, or on HTTP/1.1 (asked
/// for, or chosen by the server when HTTP/2 was offered).
async fn exchange_any(
    (connector, tls): (&Connector, &UserTls),
    io: &mut Io,
    h2: &mut Option<Http2Connection>,
    request: Outgoing<'_>,
    exchange: &mut Exchange,
    body: &mut impl FnMut(u16, &[u8]),
    mut head: Option<&mut Vec<u8>>,
) -> Result<(), ErrorKind> {
    if connector.http == HttpChoice::Http1 {
        return exchange_once((connector, tls), io, request, exchange, body, head).await;
    }
    let mut may_retry = true;
    loop {
        let reused = h2.is_some();
        if !reused {
            if io.conn.is_some() {
                return exchange_once((connector, tls), io, request, exchange, body, head).await;
            }
            let began = std::time::Instant::now();
            let (conn, handshake) = connector.connect(tls).await?;
            exchange.tls = exchange.tls.or(handshake);
            if !connector.speaks_h2(&conn) {
                exchange.connect += began.elapsed();
                if connector.http == HttpChoice::Http2 {
                    exchange.detail = Some(NOT_H2);
                    return Err(ErrorKind::Protocol);
                }
                io.conn = Some(conn);
                io.filled = 0;
                io.fresh = true;
                return exchange_once((connector, tls), io, request, exchange, body, head).await;
            }
            let session = crate::http2::handshake(conn).await;
            exchange.connect += began.elapsed();
            match session {
                Ok(s) => *h2 = Some(s),
                Err(f) => return Err(failed(exchange, f)),
            }
        }
        let Some(session) = h2.as_mut() else {
            return Err(ErrorKind::Other);
        };
        match session
            .exchange(request.bytes, exchange, body, head.as_deref_mut())
            .await
        {
            Ok(()) => {
                if !request.keep_alive {
                    *h2 = None;
                }
                return Ok(());
            }
            // Closed while idle: nothing was sent; a new connection takes it.
            Err(StreamFailure::Closed) if reused => *h2 = None,
            Err(StreamFailure::Unprocessed(kind, detail)) => {
                *h2 = None;
                if !send_again(may_retry, &mut may_retry, exchange) {
                    exchange.detail = Some(detail);
                    return Err(kind);
                }
            }
            Err(f) => {
                *h2 = None;
                return Err(failed(exchange, f));
            }
        }
    }
}

fn failed(exchange: &mut Exchange, failure: StreamFailure) -> ErrorKind {
    match failure {
        StreamFailure::Closed => {
            exchange.detail = Some(CLOSED_AT_ONCE);
            ErrorKind::Reset
        }
        StreamFailure::Unprocessed(kind, detail) => {
            exchange.detail = Some(detail);
            kind
        }
        StreamFailure::Failed(kind, detail) => {
            exchange.detail = detail.or(exchange.detail);
            kind
        }
    }
}

fn protocol(exchange: &mut Exchange, error: ProtocolError) -> ErrorKind {
    exchange.detail = Some(error.reason());
    ErrorKind::Protocol
}

/// Whether a kept-alive connection can no longer carry a request: the
/// server closed it while it was idle (Apache's KeepAliveTimeout), reset
/// it, or sent bytes nobody asked for. Polled once without waiting, as curl
/// and Go's client check a pooled connection before they write on it.
fn unusable(conn: &mut Conn, spare: &mut [u8]) -> bool {
    use tokio::io::AsyncRead;
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    let mut buf = tokio::io::ReadBuf::new(spare);
    // Ready means end of stream, unsolicited bytes, or an error.
    Pin::new(conn).poll_read(&mut context, &mut buf).is_ready()
}

/// Said when a request met a closed connection twice in a row.
const CLOSED_UNDER_REQUEST: &str =
    "the server closed the connection before answering, on a kept-alive connection and again on a new one";

async fn exchange_once(
    connector: (&Connector, &UserTls),
    io: &mut Io,
    request: Outgoing<'_>,
    exchange: &mut Exchange,
    body: &mut impl FnMut(u16, &[u8]),
    mut head_copy: Option<&mut Vec<u8>>,
) -> Result<(), ErrorKind> {
    // A reused connection that fails before a byte of the response came
    // back was, almost always, closed by the server before it read the
    // request: its keep-alive timeout, or a close after every response
    // racing the request (the server's kernel then answers the request with
    // a reset). The request goes again, once, on a new connection, whatever
    // its method, as browsers do; the resend is counted (`resent`), so a
    // server that drops requests stays visible.
    if io.buf.is_empty() {
        // Given back by `release_buffer` while idle, or never taken (a
        // client sharing an HTTP/2 connection).
        io.buf.resize(READ_BUFFER, 0);
    }
    let mut may_retry = true;
    loop {
        let reused = ready_connection(connector, io, exchange).await?;
        let retry = reused && may_retry;
        let Io {
            conn, buf, filled, ..
        } = io;
        let Some(open) = conn.as_mut() else {
            return Err(ErrorKind::Other);
        };
        if let Err(e) = write_request(open, request.bytes).await {
            *conn = None;
            if send_again(retry, &mut may_retry, exchange) {
                continue;
            }
            return Err(crate::conn::error_kind_of_io(&e));
        }
        exchange.bytes_sent = request.bytes.len() as u64;
        let head = match read_head(open, buf, filled, request.is_head, exchange).await {
            Ok(head) => head,
            Err(HeadError::Unreadable(kind)) => return Err(kind),
            Err(HeadError::Lost(kind)) => {
                *conn = None;
                if exchange.bytes_received == 0 && send_again(retry, &mut may_retry, exchange) {
                    continue;
                }
                return Err(kind);
            }
        };
        exchange.status = head.status;
        exchange.server_timing = head.server_timing;
        if let Some(copy) = head_copy.as_deref_mut() {
            copy.clear();
            copy.extend_from_slice(&buf[..head.head_len]);
        }
        let ended = read_body(open, buf, filled, &head, exchange, body).await;
        if ended? == BodyEnd::Closed || !head.keep_alive || !request.keep_alive {
            *conn = None;
            *filled = 0;
        }
        return Ok(());
    }
}

/// Drops a kept-alive connection that can no longer carry a request
/// (leftover bytes or a closed peer) and connects when none is left.
/// Returns whether the request goes on a reused connection.
async fn ready_connection(
    (connector, tls): (&Connector, &UserTls),
    io: &mut Io,
    exchange: &mut Exchange,
) -> Result<bool, ErrorKind> {
    if let Some(conn) = io.conn.as_mut() {
        if !io.fresh && (io.filled > 0 || unusable(conn, &mut io.buf)) {
            io.conn = None;
        }
    }
    let reused = io.conn.is_some() && !std::mem::take(&mut io.fresh);
    if !reused {
        let began = std::time::Instant::now();
        let (conn, handshake) = connector.connect(tls).await?;
        exchange.tls = exchange.tls.or(handshake);
        io.conn = Some(conn);
        io.filled = 0;
        exchange.connect += began.elapsed();
    }
    Ok(reused)
}

/// After the connection was lost before any of the response came back:
/// whether the request goes again (once, on a new connection). A second
/// loss in a row is said in `detail`.
#[inline]
fn send_again(retry: bool, may_retry: &mut bool, exchange: &mut Exchange) -> bool {
    if retry {
        *may_retry = false;
        exchange.resent = true;
        return true;
    }
    if !*may_retry {
        exchange.detail = Some(CLOSED_UNDER_REQUEST);
    }
    false
}

async fn write_request(conn: &mut Conn, bytes: &[u8]) -> std::io::Result<()> {
    conn.write_all(bytes).await?;
    if matches!(conn, Conn::Tls(_)) {
        conn.flush().await?;
    }
    Ok(())
}

/// Why no response head was read.
enum HeadError {
    /// The connection closed or failed (the request may go again when
    /// nothing of the response came back).
    Lost(ErrorKind),
    /// What came back is not a response head the client reads.
    Unreadable(ErrorKind),
}

/// Reads until a final response head is in `buf[..filled]`, skipping
/// interim ones (100 Continue, 103 Early Hints); grows `buf` for a large
/// head up to [`MAX_HEAD`].
async fn read_head(
    conn: &mut Conn,
    buf: &mut Vec<u8>,
    filled: &mut usize,
    request_was_head: bool,
    exchange: &mut Exchange,
) -> Result<ResponseHead, HeadError> {
    let unreadable = |exchange: &mut Exchange, e| HeadError::Unreadable(protocol(exchange, e));
    loop {
        if *filled > 0 {
            if let Some(head) = parse_head(&buf[..*filled], request_was_head)
                .map_err(|e| unreadable(exchange, e))?
            {
                if (100..200).contains(&head.status) && head.status != 101 {
                    buf.copy_within(head.head_len..*filled, 0);
                    *filled -= head.head_len;
                    continue;
                }
                return Ok(head);
            }
        }
        if *filled == buf.len() {
            if buf.len() >= MAX_HEAD {
                return Err(unreadable(exchange, ProtocolError::HeadTooLarge));
            }
            let grown = buf.len() * 2;
            buf.resize(grown, 0);
        }
        match conn.read(&mut buf[*filled..]).await {
            Ok(0) => return Err(HeadError::Lost(ErrorKind::Reset)),
            Ok(n) => {
                if exchange.first_byte.is_none() {
                    exchange.first_byte = Some(std::time::Instant::now());
                }
                exchange.bytes_received += n as u64;
                *filled += n;
            }
            Err(e) => return Err(HeadError::Lost(crate::conn::error_kind_of_io(&e))),
        }
    }
}

/// How a response body ended.
#[derive(PartialEq)]
enum BodyEnd {
    /// At its framing's end; bytes after it stay in the buffer.
    Framed,
    /// The server closed the connection (a body delimited by the close).
    Closed,
}

/// Passes the body's payload to `body`: first what came with the head,
/// then further reads. Whatever followed the response (normally nothing)
/// stays at the start of `buf`.
async fn read_body(
    conn: &mut Conn,
    buf: &mut [u8],
    filled: &mut usize,
    head: &ResponseHead,
    exchange: &mut Exchange,
    body: &mut impl FnMut(u16, &[u8]),
) -> Result<BodyEnd, ErrorKind> {
    let status = head.status;
    let body = &mut |chunk: &[u8]| body(status, chunk);
    let mut reader = BodyReader::new(head.framing);
    let (used, mut done) = reader
        .feed(&buf[head.head_len..*filled], body)
        .map_err(|e| protocol(exchange, e))?;
    let mut consumed_to = head.head_len + used;
    let mut end = *filled;
    while !done {
        match conn.read(&mut buf[..]).await {
            Ok(0) => {
                *filled = 0;
                return match reader.at_close() {
                    Ok(()) => Ok(BodyEnd::Closed),
                    Err(e) => {
                        exchange.detail = Some(e.reason());
                        Err(ErrorKind::Reset)
                    }
                };
            }
            Ok(n) => {
                exchange.bytes_received += n as u64;
                let (used, complete) = reader
                    .feed(&buf[..n], body)
                    .map_err(|e| protocol(exchange, e))?;
                consumed_to = used;
                end = n;
                done = complete;
            }
            Err(e) => return Err(crate::conn::error_kind_of_io(&e)),
        }
    }
    buf.copy_within(consumed_to..end, 0);
    *filled = end - consumed_to;
    Ok(BodyEnd::Framed)
}
