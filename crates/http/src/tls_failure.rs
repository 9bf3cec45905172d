//! A failed TLS handshake in plain words: what the server's certificate (or
//! the server) did wrong, and what the user can do about it. rustls's own
//! text names Rust enum variants (`Other(OtherError(CaUsedAsEndEntity))`).

use rustls::{CertificateError, Error};
use std::io;
use std::time::{Duration, UNIX_EPOCH};

const INSECURE: &str = "--insecure to skip the verification (for test servers only)";

/// What went wrong, from the I/O error a handshake ended with.
pub fn describe_io(error: &io::Error) -> String {
    match error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<Error>())
    {
        Some(tls) => describe(tls),
        None => format!("{error}"),
    }
}

/// What went wrong and what to do, from rustls's error.
pub fn describe(error: &Error) -> String {
    match error {
        Error::InvalidCertificate(certificate) => certificate_problem(certificate),
        Error::AlertReceived(alert) => format!(
            "the server ended the handshake ({}): it may require a client certificate, or share \
             no TLS version or cipher suite with headroom (TLS 1.2 and 1.3)",
            words(&format!("{alert:?}"))
        ),
        Error::NoCertificatesPresented => {
            "the server sent no certificate: its TLS setup needs one (--insecure does not help)"
                .to_string()
        }
        other => format!("{}", Readable(other)),
    }
}

fn certificate_problem(error: &CertificateError) -> String {
    match error {
        CertificateError::UnknownIssuer => format!(
            "the server's certificate is not signed by an authority this machine trusts \
             (a self-signed certificate, or one from a private CA). Add the CA's certificate \
             to the system's trust store (or point SSL_CERT_FILE to it), or use {INSECURE}"
        ),
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
            let when = match error {
                CertificateError::ExpiredContext { not_after, .. } => {
                    format!(" on {}", date(not_after.as_secs()))
                }
                _ => String::new(),
            };
            format!(
                "the server's certificate expired{when}. Renew it on the server (or check this \
                 machine's clock), or use {INSECURE}"
            )
        }
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
            let when = match error {
                CertificateError::NotValidYetContext { not_before, .. } => {
                    format!(" before {}", date(not_before.as_secs()))
                }
                _ => String::new(),
            };
            format!(
                "the server's certificate is not valid yet{when}. Check this machine's clock, \
                 or use {INSECURE}"
            )
        }
        CertificateError::NotValidForName => format!(
            "the server's certificate is for another name than the URL's host. Use the name \
             the certificate was made for in the URL, or use {INSECURE}"
        ),
        CertificateError::NotValidForNameContext {
            expected,
            presented,
        } => {
            let names = if presented.is_empty() {
                "no name".to_string()
            } else {
                let names: Vec<&str> = presented.iter().map(|n| bare_name(n)).collect();
                names.join(", ")
            };
            format!(
                "the server's certificate is for {names}, not for {:?}. Use a name the \
                 certificate was made for in the URL, or use {INSECURE}",
                expected.to_str()
            )
        }
        CertificateError::Revoked => {
            "the server's certificate has been revoked: the server needs a new one".to_string()
        }
        CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => {
            format!(
                "the server's certificate is not one for a TLS server (its extended key usage \
                 does not allow it). Give the server a server certificate, or use {INSECURE}"
            )
        }
        CertificateError::Other(other) if other.to_string() == "CaUsedAsEndEntity" => format!(
            "the server's certificate is a CA certificate (one that signs other certificates) \
             used as the server's own certificate. Give the server a certificate signed by \
             that CA for its name, or use {INSECURE}"
        ),
        CertificateError::Other(other) => format!(
            "the server's certificate was refused ({}). Use {INSECURE}",
            words(&other.to_string())
        ),
        other => format!(
            "the server's certificate was refused: {}. Use {INSECURE}",
            Readable(&Error::InvalidCertificate(other.clone()))
        ),
    }
}

/// `DnsName("example.org")` (as webpki names a presented name) → `example.org`.
fn bare_name(name: &str) -> &str {
    match (name.find("(\""), name.strip_suffix("\")")) {
        (Some(open), Some(inner)) if open + 2 <= inner.len() => &inner[open + 2..],
        _ => name,
    }
}

/// A UTC date, e.g. 2020-01-01.
fn date(unix_seconds: u64) -> String {
    let time = UNIX_EPOCH + Duration::from_secs(unix_seconds);
    let text = humantime::format_rfc3339_seconds(time).to_string();
    text.split('T').next().unwrap_or(&text).to_string()
}

/// rustls's Display, with the enum variant names it shows for some
/// errors (`UnknownRevocationStatus`) as words.
struct Readable<'a>(&'a Error);

impl std::fmt::Display for Readable<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", words(&self.0.to_string()))
    }
}

/// `UnknownRevocationStatus` → `unknown revocation status`, inside any text:
/// each run of letters starting with a capital and holding another is split.
fn words(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for token in text.split_inclusive(|c: char| !c.is_alphanumeric()) {
        let (word, tail) = match token.char_indices().last() {
            Some((at, c)) if !c.is_alphanumeric() => token.split_at(at),
            _ => (token, ""),
        };
        let camel = word.chars().next().is_some_and(char::is_uppercase)
            && word.chars().skip(1).any(char::is_uppercase)
            && word.chars().any(char::is_lowercase);
        if camel {
            for (i, c) in word.chars().enumerate() {
                if c.is_uppercase() && i > 0 {
                    out.push(' ');
                }
                out.extend(c.to_lowercase());
            }
        } else {
            out.push_str(word);
        }
        out.push_str(tail);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presented_names_are_bare() {
        assert_eq!(bare_name("DnsName(\"a.example\")"), "a.example");
        assert_eq!(bare_name("10.0.0.1"), "10.0.0.1");
        assert_eq!(bare_name("X(\")"), "X(\")");
    }

    #[test]
    fn enum_names_become_words() {
        assert_eq!(
            words("invalid peer certificate: UnknownRevocationStatus"),
            "invalid peer certificate: unknown revocation status"
        );
        assert_eq!(
            words("TLS 1.3 HTTP/1.1 (BadEncoding)"),
            "TLS 1.3 HTTP/1.1 (bad encoding)"
        );
    }

    /// A failure with no sentence of its own is still said in words, never
    /// as a Rust value.
    #[test]
    fn other_failures_are_said_in_words() {
        let said = describe(&Error::InvalidCertificate(
            CertificateError::UnknownRevocationStatus,
        ));
        assert_eq!(
            said,
            "the server's certificate was refused: invalid peer certificate: unknown \
             revocation status. Use --insecure to skip the verification (for test servers only)"
        );
        let said = describe(&Error::InvalidCertificate(CertificateError::Other(
            rustls::OtherError(std::sync::Arc::new(io::Error::other("SomethingNew"))),
        )));
        assert!(!said.contains("OtherError"), "{said}");
        assert!(said.contains("(something new)"), "{said}");
        let said = describe(&Error::AlertReceived(
            rustls::AlertDescription::HandshakeFailure,
        ));
        assert!(said.contains("(handshake failure)"), "{said}");
        let said = describe(&Error::DecryptError);
        assert_eq!(said, "cannot decrypt peer's message");
    }
}
