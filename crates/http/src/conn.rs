//! Connections to the target: the address is resolved once per run (as wrk
//! and ab do); each connection is plain TCP or TLS (rustls), with Nagle off.
//! TLS offers the HTTP versions asked for by ALPN ([`HttpChoice`]).

use crate::protocol::HttpChoice;
use headroom_bundle::manifest::Negotiated;
use headroom_bundle::sample::{ErrorKind, TlsHandshake};
use rustls::pki_types::ServerName;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

/// An open connection to the target.
pub enum Conn {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl Conn {
    /// TLS agreed on HTTP/2 (ALPN `h2`).
    pub fn alpn_h2(&self) -> bool {
        match self {
            Conn::Plain(_) => false,
            Conn::Tls(s) => s.get_ref().1.alpn_protocol() == Some(b"h2"),
        }
    }

    /// The TLS version and cipher suite agreed on, as IANA names them.
    pub fn tls_parameters(&self) -> Option<(String, String)> {
        let Conn::Tls(s) = self else {
            return None;
        };
        let session = s.get_ref().1;
        let version = match session.protocol_version()? {
            rustls::ProtocolVersion::TLSv1_3 => "TLSv1.3".to_string(),
            rustls::ProtocolVersion::TLSv1_2 => "TLSv1.2".to_string(),
            other => format!("{other:?}"),
        };
        let cipher = session.negotiated_cipher_suite()?.suite();
        Some((version, cipher.as_str().unwrap_or("unknown").to_string()))
    }
}

impl AsyncRead for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_flush(cx),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// TLS sessions one user keeps (a browser keeps a few per host).
const USER_SESSIONS: usize = 4;

/// One user's TLS, as a browser's: its first connection makes a full
/// handshake, its later ones resume the session it was given (TLS 1.3
/// tickets, TLS 1.2 session ids); users never share sessions, so every new
/// user costs the server a full handshake. A clone shares the sessions
/// (a user's several connections to one host). Empty without TLS.
#[derive(Clone)]
pub struct UserTls(Option<TlsConnector>);

/// Opens connections to one target.
pub struct Connector {
    pub address: SocketAddr,
    pub(crate) tls: Option<(TlsConnector, ServerName<'static>)>,
    /// The HTTP version asked for.
    pub http: HttpChoice,
    /// What the run's check agreed on with the server.
    pub negotiated: Option<Negotiated>,
}

impl Connector {
    /// A new user's TLS: a session store of its own, empty.
    pub fn user_tls(&self) -> UserTls {
        UserTls(self.tls.as_ref().map(|(shared, _)| {
            let mut config = rustls::ClientConfig::clone(shared.config());
            config.resumption = rustls::client::Resumption::in_memory_sessions(USER_SESSIONS);
            TlsConnector::from(Arc::new(config))
        }))
    }

    /// Whether a new connection may carry HTTP/2: asked for, or offered
    /// over TLS (`auto`).
    pub fn may_speak_h2(&self) -> bool {
        match self.http {
            HttpChoice::Http1 => false,
            HttpChoice::Http2 => true,
            HttpChoice::Auto => self.tls.is_some(),
        }
    }

    /// Whether a connection just opened carries HTTP/2: TLS agreed on it
    /// by ALPN, or (without TLS) it was asked for (h2c).
    pub fn speaks_h2(&self, conn: &Conn) -> bool {
        match conn {
            Conn::Tls(_) => conn.alpn_h2(),
            Conn::Plain(_) => self.http == HttpChoice::Http2,
        }
    }

    /// Opens one connection; the error kind says why it failed.
    /// Over TLS the user's own sessions are used ([`UserTls`]), and the
    /// handshake is returned beside the connection.
    pub async fn connect(&self, user: &UserTls) -> Result<(Conn, Option<TlsHandshake>), ErrorKind> {
        let tcp = TcpStream::connect(self.address)
            .await
            .map_err(|e| error_kind_of_io(&e))?;
        let _ = tcp.set_nodelay(true);
        let tls = user.0.as_ref().zip(self.tls.as_ref().map(|(_, name)| name));
        let began = std::time::Instant::now();
        match tls {
            None => Ok((Conn::Plain(tcp), None)),
            Some((connector, name)) => match connector.connect(name.clone(), tcp).await {
                Ok(stream) => {
                    let resumed =
                        stream.get_ref().1.handshake_kind() == Some(rustls::HandshakeKind::Resumed);
                    let handshake = TlsHandshake {
                        time: began.elapsed(),
                        resumed,
                    };
                    Ok((Conn::Tls(Box::new(stream)), Some(handshake)))
                }
                Err(e) => Err(match error_kind_of_io(&e) {
                    ErrorKind::Reset | ErrorKind::Timeout => error_kind_of_io(&e),
                    _ => ErrorKind::Tls,
                }),
            },
        }
    }
}

pub(crate) fn tls_config(insecure: bool, http: HttpChoice) -> rustls::ClientConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .expect("ring supports the default TLS versions");
    let mut config = if insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate(provider)))
            .with_no_client_auth()
    } else {
        let mut roots = rustls::RootCertStore::empty();
        let native = rustls_native_certs::load_native_certs();
        for cert in native.certs {
            let _ = roots.add(cert);
        }
        if roots.is_empty() {
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        }
        builder.with_root_certificates(roots).with_no_client_auth()
    };
    config.alpn_protocols = http.alpn();
    config
}

/// `--insecure`: accepts any certificate (self-signed test servers), but
/// still checks the handshake signatures so the connection is real TLS.
#[derive(Debug)]
struct AcceptAnyCertificate(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// Maps an I/O error from connecting, writing or reading to a kind.
pub fn error_kind_of_io(error: &std::io::Error) -> ErrorKind {
    use std::io::ErrorKind as Io;
    match error.kind() {
        Io::ConnectionRefused => ErrorKind::Refused,
        Io::ConnectionReset | Io::ConnectionAborted | Io::BrokenPipe | Io::UnexpectedEof => {
            ErrorKind::Reset
        }
        Io::TimedOut => ErrorKind::Timeout,
        Io::InvalidData => {
            // rustls reports its failures as InvalidData
            if error
                .get_ref()
                .is_some_and(|inner| inner.is::<rustls::Error>())
            {
                ErrorKind::Tls
            } else {
                ErrorKind::Protocol
            }
        }
        _ => ErrorKind::Other,
    }
}
