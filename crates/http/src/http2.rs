//! HTTP/2 under the client (the `h2` crate does the framing, HPACK and
//! flow control): one connection per user, its requests as streams on it.
//!
//! The rest of the engine speaks in HTTP/1.1 bytes (a request serialised
//! once, a response head parsed by httparse), so a request is read from
//! those bytes (headers keep their order; the hop-by-hop ones, which
//! HTTP/2 forbids, are dropped; `Host` becomes `:authority`) and a
//! response's head is written back as `HTTP/2 200` and its header lines.
//! The last request read is kept, so URL mode reads its request once; a
//! stream still allocates (its request's header map, the h2 crate's
//! stream state), where HTTP/1.1 allocates nothing per request.
//!
//! The connection is driven by a task of its own (it answers the server's
//! PINGs and SETTINGS while the user thinks); the user's handle and that
//! task share the connection's state (a lock of the h2 crate's, one per
//! connection, never between users). The bytes on the wire are counted by
//! the socket's wrapper: a sample's bytes are its share of what the
//! connection moved while its stream was open, frames and headers included
//! ([`Wire`]).

use crate::conn::Conn;
use crate::exchange::Exchange;
use bytes::Bytes;
use headroom_bundle::sample::ErrorKind;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Largest response header block accepted (decoded), as for HTTP/1.1.
const MAX_HEADER_LIST: u32 = 1024 * 1024;
/// Receive windows as Chromium sets them (6 MiB a stream, 15 MiB the
/// connection): a page's body never waits on a window update.
const STREAM_WINDOW: u32 = 6 * 1024 * 1024;
const CONNECTION_WINDOW: u32 = 15 * 1024 * 1024;
/// Streams opened at once before the server's SETTINGS say how many it
/// takes (Chromium's assumption; the protocol's default is unlimited).
pub const STREAMS_BEFORE_SETTINGS: usize = 100;

/// Fractions of a byte in [`Wire`]'s shares.
const SHARE_UNIT: u64 = 1 << 16;

/// What one connection moved, shared out among its open streams: each
/// read or write of n bytes while k streams are open adds n/k to each
/// one's share, so a page's streams together count the connection's bytes
/// once (a lone stream counts every byte it saw, as over HTTP/1.1).
#[derive(Debug, Default)]
struct Wire {
    open: AtomicU64,
    /// Bytes per open stream so far, in 1/[`SHARE_UNIT`] of a byte.
    received: AtomicU64,
    sent: AtomicU64,
}

impl Wire {
    fn add(&self, counter: &AtomicU64, n: usize) {
        let open = self.open.load(Ordering::Relaxed);
        if open > 0 && n > 0 {
            counter.fetch_add(n as u64 * SHARE_UNIT / open, Ordering::Relaxed);
        }
    }

    fn snapshot(&self) -> (u64, u64) {
        (
            self.received.load(Ordering::Relaxed),
            self.sent.load(Ordering::Relaxed),
        )
    }
}

/// The connection's socket, counting what passes.
struct Counted {
    conn: Conn,
    wire: Arc<Wire>,
}

impl AsyncRead for Counted {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.conn).poll_read(cx, buf);
        let n = buf.filled().len() - before;
        this.wire.add(&this.wire.received, n);
        polled
    }
}

impl AsyncWrite for Counted {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.conn).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = polled {
            this.wire.add(&this.wire.sent, n);
        }
        polled
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().conn).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().conn).poll_shutdown(cx)
    }
}

/// A request read from its HTTP/1.1 bytes, ready to send again.
struct Parsed {
    bytes: Vec<u8>,
    request: http::Request<()>,
    body: Bytes,
}

/// One user's HTTP/2 connection.
pub struct Http2Connection {
    send: h2::client::SendRequest<Bytes>,
    wire: Arc<Wire>,
    https: bool,
    last: Option<Parsed>,
}

/// Why an exchange on HTTP/2 failed.
pub enum StreamFailure {
    /// The connection could not take a new stream (closed while idle, or
    /// after a GOAWAY): nothing was sent; a new connection may carry it.
    Closed,
    /// The server refused the stream before processing it (a GOAWAY that
    /// names an earlier last stream, or REFUSED_STREAM): safe to send again.
    Unprocessed(ErrorKind, &'static str),
    /// Failed, with the kind and what happened in words.
    Failed(ErrorKind, Option<&'static str>),
}

/// Starts HTTP/2 on an open connection (after ALPN chose `h2`, or by
/// prior knowledge without TLS).
pub async fn handshake(conn: Conn) -> Result<Http2Connection, StreamFailure> {
    let https = matches!(conn, Conn::Tls(_));
    let wire = Arc::new(Wire::default());
    let socket = Counted {
        conn,
        wire: wire.clone(),
    };
    let (send, connection) = h2::client::Builder::new()
        .initial_window_size(STREAM_WINDOW)
        .initial_connection_window_size(CONNECTION_WINDOW)
        .max_header_list_size(MAX_HEADER_LIST)
        .enable_push(false)
        .initial_max_send_streams(STREAMS_BEFORE_SETTINGS)
        .handshake::<_, Bytes>(socket)
        .await
        .map_err(|e| failure(&e))?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(Http2Connection {
        send,
        wire,
        https,
        last: None,
    })
}

/// Whether a server speaks HTTP/2 on this connection: a HEAD of the
/// target's path answered. Err says what happened instead.
pub async fn probe(conn: Conn, target: &crate::target::Target) -> Result<(), String> {
    let mut session = match handshake(conn).await {
        Ok(s) => s,
        Err(f) => return Err(f.words()),
    };
    let head = crate::target::RequestSpec {
        method: "HEAD".into(),
        ..Default::default()
    };
    let request = head.serialize(target, &target.path_and_query);
    // The server logs it: counted with the run's requests.
    crate::sent::probe_sent();
    let mut exchange = Exchange::default();
    session
        .exchange(&request, &mut exchange, &mut |_, _| {}, None)
        .await
        .map_err(|f| f.words())
}

impl StreamFailure {
    /// What happened, in words.
    pub fn words(&self) -> String {
        match self {
            StreamFailure::Closed => "it closed the connection".to_string(),
            StreamFailure::Unprocessed(kind, detail)
            | StreamFailure::Failed(kind, Some(detail)) => {
                format!("{}: {detail}", kind.describe())
            }
            StreamFailure::Failed(kind, None) => kind.describe().to_string(),
        }
    }
}

impl Http2Connection {
    /// Another handle on this connection (a page's resources are streams
    /// on the page's connection).
    pub fn share(&self) -> Http2Connection {
        Http2Connection {
            send: self.send.clone(),
            wire: self.wire.clone(),
            https: self.https,
            last: None,
        }
    }

    /// Streams the server lets this connection open at once (its
    /// SETTINGS_MAX_CONCURRENT_STREAMS; [`STREAMS_BEFORE_SETTINGS`] until
    /// it has said).
    pub fn stream_limit(&self) -> usize {
        self.send.current_max_send_streams()
    }

    /// Both handles are on one connection.
    pub fn same_connection(&self, other: &Http2Connection) -> bool {
        Arc::ptr_eq(&self.wire, &other.wire)
    }

    /// Sends one request (its HTTP/1.1 bytes) and reads the response,
    /// passing the body to `body`; the head, written as HTTP/2's, to
    /// `head` when asked.
    pub async fn exchange(
        &mut self,
        request: &[u8],
        exchange: &mut Exchange,
        body: &mut impl FnMut(u16, &[u8]),
        head: Option<&mut Vec<u8>>,
    ) -> Result<(), StreamFailure> {
        std::future::poll_fn(|cx| self.send.poll_ready(cx))
            .await
            .map_err(|_| StreamFailure::Closed)?;
        let (outgoing, payload) = self.request(request)?;
        self.wire.open.fetch_add(1, Ordering::Relaxed);
        let (received, sent) = self.wire.snapshot();
        let outcome = self.stream(outgoing, payload, exchange, body, head).await;
        // This stream's share of what the connection moved, a failed one's too.
        let (received_now, sent_now) = self.wire.snapshot();
        self.wire.open.fetch_sub(1, Ordering::Relaxed);
        exchange.bytes_received = (received_now - received + SHARE_UNIT / 2) / SHARE_UNIT;
        exchange.bytes_sent = (sent_now - sent + SHARE_UNIT / 2) / SHARE_UNIT;
        outcome
    }

    /// One stream: the request, its body, the response.
    async fn stream(
        &mut self,
        outgoing: http::Request<()>,
        payload: Bytes,
        exchange: &mut Exchange,
        body: &mut impl FnMut(u16, &[u8]),
        head: Option<&mut Vec<u8>>,
    ) -> Result<(), StreamFailure> {
        let (response, mut stream) = self
            .send
            .send_request(outgoing, payload.is_empty())
            .map_err(|e| unprocessed_or(&e))?;
        if !payload.is_empty() {
            stream
                .send_data(payload, true)
                .map_err(|e| unprocessed_or(&e))?;
        }
        let response = response.await.map_err(|e| unprocessed_or(&e))?;
        exchange.first_byte = Some(std::time::Instant::now());
        let status = response.status().as_u16();
        exchange.status = status;
        for value in response.headers().get_all("server-timing") {
            exchange.server_timing.add_header(value.as_bytes());
        }
        if let Some(copy) = head {
            write_head(copy, &response);
        }
        let mut recv = response.into_body();
        while let Some(chunk) = recv.data().await {
            let chunk = chunk.map_err(|e| failure(&e))?;
            body(status, &chunk);
            let _ = recv.flow_control().release_capacity(chunk.len());
        }
        Ok(())
    }

    /// The request to send and its body: the last one again when the bytes
    /// are the same (URL mode), else read from the bytes.
    fn request(&mut self, bytes: &[u8]) -> Result<(http::Request<()>, Bytes), StreamFailure> {
        let same = self.last.as_ref().is_some_and(|p| p.bytes == bytes);
        if !same {
            let (request, body) = read_request(bytes, self.https)
                .map_err(|why| StreamFailure::Failed(ErrorKind::Request, Some(why)))?;
            self.last = Some(Parsed {
                bytes: bytes.to_vec(),
                request,
                body,
            });
        }
        let parsed = self.last.as_ref().expect("set above");
        let mut request = http::Request::new(());
        *request.method_mut() = parsed.request.method().clone();
        *request.uri_mut() = parsed.request.uri().clone();
        *request.version_mut() = http::Version::HTTP_2;
        *request.headers_mut() = parsed.request.headers().clone();
        Ok((request, parsed.body.clone()))
    }
}

/// Headers HTTP/2 forbids (RFC 9113 8.2.2): they describe the HTTP/1.1
/// connection, which HTTP/2 replaces (`Host` and `Transfer-Encoding` are
/// read before).
fn hop_by_hop(name: &str) -> bool {
    ["connection", "keep-alive", "proxy-connection", "upgrade"]
        .iter()
        .any(|h| name.eq_ignore_ascii_case(h))
}

/// An HTTP/1.1 request's bytes as an HTTP/2 request and its body.
fn read_request(bytes: &[u8], https: bool) -> Result<(http::Request<()>, Bytes), &'static str> {
    const UNREADABLE: &str = "the request is not one HTTP/2 can carry (its head did not parse)";
    let mut headers = [httparse::EMPTY_HEADER; 128];
    let mut parsed = httparse::Request::new(&mut headers);
    let head_len = match parsed.parse(bytes) {
        Ok(httparse::Status::Complete(n)) => n,
        _ => return Err(UNREADABLE),
    };
    let method = http::Method::from_bytes(parsed.method.unwrap_or("GET").as_bytes())
        .map_err(|_| UNREADABLE)?;
    let path = parsed.path.unwrap_or("/");
    let mut authority = None;
    let mut builder = http::Request::builder()
        .method(method)
        .version(http::Version::HTTP_2);
    for header in parsed.headers.iter() {
        if header.name.eq_ignore_ascii_case("host") {
            authority = std::str::from_utf8(header.value).ok();
            continue;
        }
        if header.name.eq_ignore_ascii_case("transfer-encoding") {
            return Err("a request body sent chunked (Transfer-Encoding) cannot go over HTTP/2: leave the header out");
        }
        if hop_by_hop(header.name)
            || (header.name.eq_ignore_ascii_case("te") && header.value != b"trailers")
        {
            continue;
        }
        builder = builder.header(header.name, header.value);
    }
    let authority = authority.ok_or("the request has no Host header")?;
    let scheme = if https { "https" } else { "http" };
    let uri = format!("{scheme}://{authority}{path}");
    let request = builder.uri(uri).body(()).map_err(|_| UNREADABLE)?;
    Ok((request, Bytes::copy_from_slice(&bytes[head_len..])))
}

/// The response's head as text: `HTTP/2 200`, then its header lines.
fn write_head(out: &mut Vec<u8>, response: &http::Response<h2::RecvStream>) {
    out.clear();
    out.extend_from_slice(b"HTTP/2 ");
    out.extend_from_slice(response.status().as_str().as_bytes());
    out.extend_from_slice(b"\r\n");
    for (name, value) in response.headers() {
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
}

/// A stream the server did not process may go again; else a failure.
fn unprocessed_or(error: &h2::Error) -> StreamFailure {
    let refused = error.reason() == Some(h2::Reason::REFUSED_STREAM) && error.is_remote();
    if (error.is_go_away() && error.is_remote()) || refused {
        if let StreamFailure::Failed(kind, detail) = failure(error) {
            return StreamFailure::Unprocessed(
                kind,
                detail.unwrap_or("the server refused the stream"),
            );
        }
    }
    failure(error)
}

/// An h2 error in headroom's words.
fn failure(error: &h2::Error) -> StreamFailure {
    if let Some(io) = error.get_io() {
        let kind = crate::conn::error_kind_of_io(io);
        let words = (kind == ErrorKind::Reset)
            .then_some("the connection closed before the stream was complete");
        return StreamFailure::Failed(kind, words);
    }
    let Some(reason) = error.reason() else {
        return StreamFailure::Failed(
            ErrorKind::Protocol,
            Some("HTTP/2 failed (the h2 crate gave no reason)"),
        );
    };
    let (kind, words) = if error.is_go_away() && error.is_remote() {
        (ErrorKind::Reset, go_away_words(reason))
    } else if error.is_reset() && error.is_remote() {
        (ErrorKind::Reset, reset_words(reason))
    } else {
        (ErrorKind::Protocol, broken_words(reason))
    };
    StreamFailure::Failed(kind, Some(words))
}

fn go_away_words(reason: h2::Reason) -> &'static str {
    match reason {
        h2::Reason::NO_ERROR => "the server closed the connection (GOAWAY) before this stream",
        h2::Reason::PROTOCOL_ERROR => "the server closed the connection (GOAWAY PROTOCOL_ERROR)",
        h2::Reason::INTERNAL_ERROR => "the server closed the connection (GOAWAY INTERNAL_ERROR)",
        h2::Reason::ENHANCE_YOUR_CALM => {
            "the server closed the connection (GOAWAY ENHANCE_YOUR_CALM: it found the client too busy)"
        }
        _ => "the server closed the connection (GOAWAY)",
    }
}

fn reset_words(reason: h2::Reason) -> &'static str {
    match reason {
        h2::Reason::REFUSED_STREAM => "the server refused the stream (RST_STREAM REFUSED_STREAM)",
        h2::Reason::CANCEL => "the server cancelled the stream (RST_STREAM CANCEL)",
        h2::Reason::INTERNAL_ERROR => "the server reset the stream (RST_STREAM INTERNAL_ERROR)",
        h2::Reason::PROTOCOL_ERROR => "the server reset the stream (RST_STREAM PROTOCOL_ERROR)",
        h2::Reason::FLOW_CONTROL_ERROR => {
            "the server reset the stream (RST_STREAM FLOW_CONTROL_ERROR)"
        }
        h2::Reason::ENHANCE_YOUR_CALM => {
            "the server reset the stream (RST_STREAM ENHANCE_YOUR_CALM)"
        }
        _ => "the server reset the stream (RST_STREAM)",
    }
}

fn broken_words(reason: h2::Reason) -> &'static str {
    match reason {
        h2::Reason::PROTOCOL_ERROR => {
            "the server broke HTTP/2 (PROTOCOL_ERROR: a malformed frame or header block, or a frame it may not send here, such as a PUSH_PROMISE after headroom disabled push)"
        }
        h2::Reason::FRAME_SIZE_ERROR => {
            "the server sent a frame of a wrong size (FRAME_SIZE_ERROR)"
        }
        h2::Reason::COMPRESSION_ERROR => {
            "the server's header block did not decode (COMPRESSION_ERROR)"
        }
        h2::Reason::FLOW_CONTROL_ERROR => {
            "the server broke HTTP/2's flow control (FLOW_CONTROL_ERROR: it sent more than its window allowed, or a WINDOW_UPDATE grew a window past 2^31-1)"
        }
        h2::Reason::ENHANCE_YOUR_CALM => {
            "the server's header block was too large or endless (ENHANCE_YOUR_CALM)"
        }
        _ => "HTTP/2 failed on this stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_requests_http1_bytes_become_an_http2_request() {
        let bytes = b"POST /login?x=1 HTTP/1.1\r\nHost: wiki.test:8443\r\nUser-Agent: headroom\r\nConnection: keep-alive\r\nCookie: a=1\r\nContent-Length: 3\r\n\r\nu=1";
        let (request, body) = read_request(bytes, true).unwrap();
        assert_eq!(request.method(), http::Method::POST);
        assert_eq!(request.uri(), "https://wiki.test:8443/login?x=1");
        assert_eq!(request.headers()["cookie"], "a=1");
        assert_eq!(request.headers()["user-agent"], "headroom");
        assert!(request.headers().get("connection").is_none());
        assert!(request.headers().get("host").is_none());
        assert_eq!(&body[..], b"u=1");
        let chunked = b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
        assert!(read_request(chunked, false)
            .unwrap_err()
            .contains("chunked"));
        assert!(read_request(b"GET / HTTP/1.1\r\n\r\n", false)
            .unwrap_err()
            .contains("no Host"));
    }
}
