//! headroom's HTTP client: a target's address resolved once and checked
//! before a run ([`preflight`]), connections plain or TLS ([`conn`]),
//! HTTP/1.1 ([`http1`]) and HTTP/2 ([`http2`]) exchanges behind one
//! client ([`client`]), and the count of every request sent ([`sent`]).

pub mod client;
pub mod conn;
pub mod content_encoding;
pub mod exchange;
pub mod http1;
pub mod http2;
pub mod preflight;
pub mod probe;
pub mod protocol;
pub mod sent;
pub mod target;
pub mod tls_failure;
