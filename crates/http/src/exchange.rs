//! What one request/response exchange produced, over HTTP/1.1
//! ([`crate::client`]) or HTTP/2 ([`crate::http2`]).

use headroom_bundle::sample::{ErrorKind, TlsHandshake};
use std::time::Duration;

/// What one request/response exchange produced.
#[derive(Debug, Clone, Copy, Default)]
pub struct Exchange {
    pub status: u16,
    pub connect: Duration,
    /// The TLS handshake of the new connection it opened, if it did.
    pub tls: Option<TlsHandshake>,
    pub first_byte: Option<std::time::Instant>,
    pub bytes_received: u64,
    pub bytes_sent: u64,
    pub error: Option<ErrorKind>,
    /// Why, in words, where the kind alone does not say it.
    pub detail: Option<&'static str>,
    /// Sent a second time, on a new connection, after a kept-alive one
    /// failed before answering.
    pub resent: bool,
    /// The response's Server-Timing metrics.
    pub server_timing: headroom_bundle::server_timing::ServerTiming,
}
