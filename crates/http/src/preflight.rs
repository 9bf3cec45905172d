//! Before a run: the target's address resolved and TLS prepared
//! ([`Connector::resolve`]), then one connection opened to tell a user at
//! once that the target is unusable ([`Connector::preflight`]): nothing
//! listens, a TLS port that speaks plain HTTP, no HTTP/2 where it was
//! asked for (over TLS by ALPN, without TLS by a probe).

use crate::conn::{tls_config, Conn, Connector};
use crate::protocol::HttpChoice;
use crate::target::{OriginUrl, Scheme, Target};
use headroom_bundle::manifest::Negotiated;
use rustls::pki_types::ServerName;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// Why the target could not be used at all (before the run starts).
#[derive(Debug, thiserror::Error)]
pub enum PreflightError {
    #[error("cannot resolve '{host}': {source}. Check the host name in the URL, or your DNS")]
    Dns { host: String, source: io::Error },
    #[error("'{host}' resolved to no address")]
    NoAddress { host: String },
    #[error("nothing is listening on {authority} (connection refused). Start the server, or check the port in the URL")]
    Refused { authority: String },
    #[error("no answer from {authority} within {seconds} s. Check that the host is up and no firewall drops the connection")]
    Unreachable { authority: String, seconds: u64 },
    #[error("cannot connect to {authority}: {source}")]
    Connect {
        authority: String,
        source: io::Error,
    },
    // Not `source`: the error is said here in words, and a chain printer
    // would add rustls's text after them.
    #[error("TLS handshake with {authority} failed: {}", crate::tls_failure::describe_io(.cause))]
    Tls { authority: String, cause: io::Error },
    #[error("{authority} answered in plain HTTP, not TLS: use http:// instead of https://")]
    PlainHttp { authority: String },
    #[error("'{host}' is not a valid TLS server name")]
    ServerName { host: String },
    #[error("{authority} does not offer HTTP/2: its TLS handshake (ALPN) chose {chosen}. Use --http auto to fall back to HTTP/1.1 as browsers do, or turn HTTP/2 on in the server (nginx: `listen 443 ssl http2;`, from 1.25 `http2 on;`)")]
    NoHttp2 { authority: String, chosen: String },
    #[error("{authority} does not speak HTTP/2 without TLS (h2c, by prior knowledge): {reason}. Use --http 1.1 for this server, or https:// if it offers HTTP/2 over TLS")]
    NoH2c { authority: String, reason: String },
}

/// Resolves a target and connects once ([`Connector::preflight`]), so an
/// unusable target is an error with a hint rather than a run of failures;
/// what was agreed (HTTP version, TLS) is kept in the connector.
pub async fn connect(
    target: &Target,
    insecure: bool,
    http: HttpChoice,
    wait: std::time::Duration,
) -> Result<Connector, PreflightError> {
    let mut connector = Connector::resolve(target, insecure, http).await?;
    connector.negotiated = Some(connector.preflight(target, wait).await?);
    Ok(connector)
}

impl Connector {
    /// Resolves the target's host and prepares TLS; no connection is made.
    pub async fn resolve(
        target: &Target,
        insecure: bool,
        http: HttpChoice,
    ) -> Result<Connector, PreflightError> {
        let address = tokio::net::lookup_host((target.host.as_str(), target.port))
            .await
            .map_err(|source| PreflightError::Dns {
                host: target.host.clone(),
                source,
            })?
            .next()
            .ok_or_else(|| PreflightError::NoAddress {
                host: target.host.clone(),
            })?;
        let tls = match target.scheme {
            Scheme::Http => None,
            Scheme::Https => {
                let name = ServerName::try_from(target.host.clone()).map_err(|_| {
                    PreflightError::ServerName {
                        host: target.host.clone(),
                    }
                })?;
                Some((
                    TlsConnector::from(Arc::new(tls_config(insecure, http))),
                    name,
                ))
            }
        };
        Ok(Connector {
            address,
            tls,
            http,
            negotiated: None,
        })
    }
    /// Connects once (and shakes hands for TLS) to tell a user at once that
    /// the target is unusable, instead of recording a run of failures.
    pub async fn preflight(
        &self,
        target: &Target,
        wait: std::time::Duration,
    ) -> Result<Negotiated, PreflightError> {
        let authority = target.authority();
        let tcp = match tokio::time::timeout(wait, TcpStream::connect(self.address)).await {
            Err(_) => {
                return Err(PreflightError::Unreachable {
                    authority,
                    seconds: wait.as_secs(),
                })
            }
            Ok(Err(e)) if e.kind() == io::ErrorKind::ConnectionRefused => {
                return Err(PreflightError::Refused { authority })
            }
            Ok(Err(source)) => return Err(PreflightError::Connect { authority, source }),
            Ok(Ok(tcp)) => tcp,
        };
        if let Some((connector, name)) = &self.tls {
            match tokio::time::timeout(wait, connector.connect(name.clone(), tcp)).await {
                Err(_) => {
                    return Err(PreflightError::Unreachable {
                        authority,
                        seconds: wait.as_secs(),
                    })
                }
                Ok(Err(source)) => {
                    if refused_alpn(&source) {
                        return Err(PreflightError::NoHttp2 {
                            authority,
                            chosen: "none of the protocols offered (it refused the handshake: no_application_protocol)".into(),
                        });
                    }
                    if speaks_plain_http(&source)
                        || (said_no_tls(&source) && answers_plain_http(self.address, wait).await)
                    {
                        return Err(PreflightError::PlainHttp { authority });
                    }
                    return Err(PreflightError::Tls {
                        authority,
                        cause: source,
                    });
                }
                Ok(Ok(stream)) => return self.agreed(target, &Conn::Tls(Box::new(stream))),
            }
        }
        let conn = Conn::Plain(tcp);
        let agreed = self.agreed(target, &conn)?;
        if self.http == HttpChoice::Http2 {
            let probe = crate::http2::probe(conn, target);
            let reason = match tokio::time::timeout(wait, probe).await {
                Err(_) => Some(format!("no HTTP/2 answer within {} s", wait.as_secs())),
                Ok(result) => result.err(),
            };
            if let Some(reason) = reason {
                return Err(PreflightError::NoH2c { authority, reason });
            }
        }
        Ok(agreed)
    }

    /// What a connection agreed on, or why it cannot be used as asked.
    fn agreed(&self, target: &Target, conn: &Conn) -> Result<Negotiated, PreflightError> {
        let h2 = self.speaks_h2(conn);
        if let (Conn::Tls(s), HttpChoice::Http2, false) = (conn, self.http, h2) {
            let chosen = match s.get_ref().1.alpn_protocol() {
                Some(p) => String::from_utf8_lossy(p).into_owned(),
                None => "no protocol (HTTP/1.1 implied)".to_string(),
            };
            return Err(PreflightError::NoHttp2 {
                authority: target.authority(),
                chosen,
            });
        }
        let tls = conn.tls_parameters();
        Ok(Negotiated {
            origin: OriginUrl(target).to_string(),
            asked: self.http.name().to_string(),
            protocol: if h2 { "HTTP/2" } else { "HTTP/1.1" }.to_string(),
            tls_version: tls.as_ref().map(|t| t.0.clone()),
            cipher: tls.map(|t| t.1),
        })
    }
}

/// rustls's own error inside an I/O error, if it is one.
fn rustls_error(error: &io::Error) -> Option<&rustls::Error> {
    error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
}

/// The server ended the handshake because it speaks none of the offered
/// protocols (ALPN): asked for HTTP/2 of a server that has only HTTP/1.1.
fn refused_alpn(error: &io::Error) -> bool {
    matches!(
        rustls_error(error),
        Some(rustls::Error::AlertReceived(
            rustls::AlertDescription::NoApplicationProtocol
        ))
    )
}

/// A TLS handshake answered with bytes that are no TLS record: an HTTP
/// server on that port ("HTTP/1.1 400 ...").
fn speaks_plain_http(error: &io::Error) -> bool {
    matches!(
        rustls_error(error),
        Some(rustls::Error::InvalidMessage(
            rustls::InvalidMessage::InvalidContentType
        ))
    )
}

/// A handshake that ended without a word of TLS from the server: it closed
/// or reset the connection, or its first bytes were no TLS record (a
/// corrupt or unknown message). Such a port may serve plain HTTP. A
/// certificate refused, an alert or any other TLS error comes from a
/// server that speaks TLS: it is said as it is, never taken for plain HTTP.
fn said_no_tls(error: &io::Error) -> bool {
    match rustls_error(error) {
        None => true,
        Some(rustls::Error::InvalidMessage(_) | rustls::Error::PeerSentOversizedRecord) => true,
        Some(_) => false,
    }
}

/// How much of a probe's answer is read: nginx's and Apache's pages for a
/// plain request sent to a TLS port are well under 1 KiB.
const PROBE_ANSWER: usize = 4096;

/// After a handshake that ended without a word of TLS (a server that
/// closed on the TLS hello without saying anything): whether the port
/// answers a plain HTTP request in plain HTTP. A TLS server that answers
/// plain requests with an error page saying so (nginx's "The plain HTTP
/// request was sent to HTTPS port", Apache's "speaking plain HTTP to an
/// SSL-enabled server port") does not count.
async fn answers_plain_http(address: SocketAddr, wait: std::time::Duration) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let deadline = tokio::time::Instant::now() + wait;
    let Ok(Ok(mut tcp)) = tokio::time::timeout_at(deadline, TcpStream::connect(address)).await
    else {
        return false;
    };
    if tcp
        .write_all(b"GET / HTTP/1.0\r\nConnection: close\r\n\r\n")
        .await
        .is_err()
    {
        return false;
    }
    let mut answer = Vec::new();
    let mut chunk = [0u8; 1024];
    while answer.len() < PROBE_ANSWER {
        match tokio::time::timeout_at(deadline, tcp.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => answer.extend_from_slice(&chunk[..n]),
            _ => break,
        }
    }
    plain_http_answer(&answer)
}

/// An HTTP answer that is not a TLS server's page about a plain request.
fn plain_http_answer(answer: &[u8]) -> bool {
    let text = String::from_utf8_lossy(answer).to_ascii_lowercase();
    text.starts_with("http/")
        && !text.contains("plain http request was sent to https port")
        && !text.contains("speaking plain http to an ssl-enabled server port")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(error: rustls::Error) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, error)
    }

    /// Only a handshake that got no TLS from the server is followed by a
    /// plain HTTP probe: a refused certificate or an alert is the server's
    /// TLS speaking.
    #[test]
    fn only_a_server_that_said_no_tls_is_probed_for_plain_http() {
        assert!(said_no_tls(&io::Error::from(io::ErrorKind::UnexpectedEof)));
        assert!(said_no_tls(&io::Error::from(
            io::ErrorKind::ConnectionReset
        )));
        assert!(said_no_tls(&failed(rustls::Error::InvalidMessage(
            rustls::InvalidMessage::InvalidContentType
        ))));
        assert!(said_no_tls(&failed(rustls::Error::PeerSentOversizedRecord)));
        for spoken in [
            rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer),
            rustls::Error::InvalidCertificate(rustls::CertificateError::Expired),
            rustls::Error::AlertReceived(rustls::AlertDescription::ProtocolVersion),
            rustls::Error::AlertReceived(rustls::AlertDescription::HandshakeFailure),
            rustls::Error::NoCertificatesPresented,
        ] {
            assert!(!said_no_tls(&failed(spoken.clone())), "{spoken:?}");
        }
    }

    #[test]
    fn a_tls_servers_page_about_a_plain_request_is_no_plain_http() {
        assert!(plain_http_answer(b"HTTP/1.1 200 OK\r\nServer: x\r\n\r\nhi"));
        assert!(plain_http_answer(b"HTTP/1.0 400 Bad Request\r\n\r\n"));
        assert!(!plain_http_answer(
            b"HTTP/1.1 400 Bad Request\r\nServer: nginx/1.22.1\r\n\r\n<html>\r\n<head><title>400 \
              The plain HTTP request was sent to HTTPS port</title></head>"
        ));
        assert!(!plain_http_answer(
            b"HTTP/1.1 400 Bad Request\r\n\r\n<p>Reason: You're speaking plain HTTP to an \
              SSL-enabled server port.<br />"
        ));
        assert!(!plain_http_answer(b"\x15\x03\x01\x00\x02\x02\x46"));
        assert!(!plain_http_answer(b""));
    }
}
