//! A sample: one finished request, as plain data. The engine produces them,
//! the recorder folds them; nothing keeps them unless raw samples are asked for.

use std::time::{Duration, Instant};

/// Why a request failed. HTTP 4xx/5xx are failures too (as in JMeter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ErrorKind {
    /// Nothing listened on the port (connection refused).
    Refused = 0,
    /// No complete answer within `--timeout`.
    Timeout,
    /// The connection was reset or closed before the response was complete.
    Reset,
    /// The TLS handshake or TLS stream failed.
    Tls,
    /// The host name did not resolve.
    Dns,
    /// The response was not valid HTTP/1.x.
    Protocol,
    Http4xx,
    Http5xx,
    /// A scenario check failed on an otherwise valid response.
    Check,
    /// Any other I/O error (e.g. no free local port).
    Other,
    /// More redirects than a browser follows (a loop).
    Redirects,
    /// Not sent: a templated value would have put a line break or NUL in
    /// the request line or a header.
    Request,
    /// The page's document came, but a resource it loads failed (an
    /// answer of 4xx or 5xx, a timeout, a reset, too many redirects): the
    /// page failed, as JMeter fails a sample whose embedded resource did.
    Resource,
}

impl ErrorKind {
    pub const COUNT: usize = 13;
    pub const ALL: [ErrorKind; ErrorKind::COUNT] = [
        ErrorKind::Refused,
        ErrorKind::Timeout,
        ErrorKind::Reset,
        ErrorKind::Tls,
        ErrorKind::Dns,
        ErrorKind::Protocol,
        ErrorKind::Http4xx,
        ErrorKind::Http5xx,
        ErrorKind::Check,
        ErrorKind::Other,
        ErrorKind::Redirects,
        ErrorKind::Request,
        ErrorKind::Resource,
    ];

    /// Stable machine name, used in CSV columns and JSON keys.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Refused => "refused",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Reset => "reset",
            ErrorKind::Tls => "tls",
            ErrorKind::Dns => "dns",
            ErrorKind::Protocol => "protocol",
            ErrorKind::Http4xx => "http_4xx",
            ErrorKind::Http5xx => "http_5xx",
            ErrorKind::Check => "check",
            ErrorKind::Other => "other",
            ErrorKind::Redirects => "redirects",
            ErrorKind::Request => "request",
            ErrorKind::Resource => "resource",
        }
    }

    /// What a person reads (JTL responseMessage/failureMessage, summaries).
    pub fn describe(self) -> &'static str {
        match self {
            ErrorKind::Refused => "Connection refused",
            ErrorKind::Timeout => "Timed out",
            ErrorKind::Reset => "Connection reset or closed early",
            ErrorKind::Tls => "TLS error",
            ErrorKind::Dns => "DNS lookup failed",
            ErrorKind::Protocol => "Invalid HTTP response",
            ErrorKind::Http4xx => "HTTP 4xx",
            ErrorKind::Http5xx => "HTTP 5xx",
            ErrorKind::Check => "Check failed",
            ErrorKind::Other => "I/O error",
            ErrorKind::Redirects => "Too many redirects",
            ErrorKind::Request => "Request not sent: a value held a line break or NUL",
            ErrorKind::Resource => "Page resource failed",
        }
    }
}

/// The TLS handshake a request waited for on its new connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TlsHandshake {
    /// From the ClientHello to the handshake's end (part of `connect`).
    pub time: Duration,
    /// The user's earlier session was resumed (no full handshake).
    pub resumed: bool,
}

/// Index of a label in the run's label table.
pub type LabelId = u16;

/// One finished request. Times are monotonic instants; the recorder turns
/// them into durations against the run's start.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub label: LabelId,
    /// The virtual user that sent it (1-based).
    pub vu: u32,
    /// When the request should have started: the schedule's time in the open
    /// model or under a throughput cap, otherwise the actual start.
    pub intended_start: Instant,
    pub actual_start: Instant,
    /// Time to establish the connection (TCP + TLS, as JMeter's Connect);
    /// zero when reused.
    pub connect: Duration,
    /// The TLS handshake of its new connection, when it made one.
    pub tls: Option<TlsHandshake>,
    /// When the first byte of the response arrived, if any did.
    pub first_byte: Option<Instant>,
    pub end: Instant,
    /// HTTP status, 0 when no response was received.
    pub status: u16,
    pub bytes_received: u64,
    pub bytes_sent: u64,
    pub error: Option<ErrorKind>,
    /// The scenario check that failed it (its index in the check table).
    pub failed_check: Option<u16>,
    /// Why it failed, where the kind alone does not say (no commas: it
    /// goes into the JTL's message columns as it is).
    pub detail: Option<&'static str>,
    /// Sent again on a new connection after a kept-alive one failed
    /// before answering (counted, not failed).
    pub resent: bool,
    /// The response's own account of its time (its Server-Timing header).
    pub server_timing: crate::server_timing::ServerTiming,
}

impl Sample {
    /// Response time as the user experiences it: from the intended start
    /// (coordinated omission corrected) to the last byte.
    #[inline]
    pub fn response_time(&self) -> Duration {
        self.end.saturating_duration_since(self.intended_start)
    }

    /// Service time: from the actual start to the last byte.
    #[inline]
    pub fn service_time(&self) -> Duration {
        self.end.saturating_duration_since(self.actual_start)
    }

    /// Time to first byte from the intended start (JMeter's "Latency").
    #[inline]
    pub fn time_to_first_byte(&self) -> Option<Duration> {
        self.first_byte
            .map(|t| t.saturating_duration_since(self.intended_start))
    }

    /// How late the request started against its schedule.
    #[inline]
    pub fn schedule_lag(&self) -> Duration {
        self.actual_start
            .saturating_duration_since(self.intended_start)
    }

    #[inline]
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }
}

/// The kind of failure an HTTP status stands for, if any (4xx and 5xx fail).
#[inline]
pub fn status_error(status: u16) -> Option<ErrorKind> {
    match status {
        400..=499 => Some(ErrorKind::Http4xx),
        500..=599 => Some(ErrorKind::Http5xx),
        _ => None,
    }
}
