//! Which HTTP the users speak (`--http`, a scenario's `defaults: http:`).
//! What a connection agreed on is the manifest's
//! [`headroom_bundle::manifest::Negotiated`].

use serde::{Deserialize, Serialize};

/// The HTTP version asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum HttpChoice {
    /// HTTP/1.1 only (as wrk and JMeter speak).
    #[default]
    #[serde(rename = "1.1")]
    Http1,
    /// HTTP/2: over TLS negotiated by ALPN (refused when the server does
    /// not offer it); without TLS by prior knowledge (h2c).
    #[serde(rename = "2")]
    Http2,
    /// As browsers do: HTTP/2 over TLS when the server offers it, else
    /// HTTP/1.1; always HTTP/1.1 without TLS.
    #[serde(rename = "auto")]
    Auto,
}

impl HttpChoice {
    /// Reads `1.1`, `2` or `auto` (also `1`, `http/1.1`, `h2`).
    pub fn parse(text: &str) -> Result<HttpChoice, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "1.1" | "1" | "http/1.1" | "http1" => Ok(HttpChoice::Http1),
            "2" | "h2" | "http/2" | "http2" | "h2c" => Ok(HttpChoice::Http2),
            "auto" => Ok(HttpChoice::Auto),
            other => Err(format!(
                "the HTTP version is 1.1, 2 (HTTP/2: over TLS by ALPN, without TLS as h2c) or auto (HTTP/2 where the server offers it over TLS, as browsers do), not '{other}'"
            )),
        }
    }

    /// As written on the command line and in files.
    pub fn name(self) -> &'static str {
        match self {
            HttpChoice::Http1 => "1.1",
            HttpChoice::Http2 => "2",
            HttpChoice::Auto => "auto",
        }
    }

    /// The ALPN protocols a TLS client offers for this choice.
    pub fn alpn(self) -> Vec<Vec<u8>> {
        match self {
            HttpChoice::Http1 => vec![b"http/1.1".to_vec()],
            HttpChoice::Http2 => vec![b"h2".to_vec()],
            HttpChoice::Auto => vec![b"h2".to_vec(), b"http/1.1".to_vec()],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_read_and_write_as_users_type_them() {
        for (text, choice) in [
            ("1.1", HttpChoice::Http1),
            ("2", HttpChoice::Http2),
            ("h2c", HttpChoice::Http2),
            ("AUTO", HttpChoice::Auto),
        ] {
            assert_eq!(HttpChoice::parse(text), Ok(choice));
        }
        assert!(HttpChoice::parse("3").unwrap_err().contains("not '3'"));
        assert_eq!(serde_json::to_string(&HttpChoice::Http2).unwrap(), "\"2\"");
        assert_eq!(
            serde_json::from_str::<HttpChoice>("\"1.1\"").unwrap(),
            HttpChoice::Http1
        );
    }
}
