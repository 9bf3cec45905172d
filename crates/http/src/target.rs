//! The target (a base URL) and the request sent to it, validated once and
//! serialised once: the engine writes the same bytes for every request.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Http,
    Https,
}

/// A parsed target URL.
#[derive(Clone, PartialEq, Eq)]
pub struct Target {
    pub scheme: Scheme,
    pub host: String,
    pub port: u16,
    /// Path and query as sent in the request line, e.g. `/page?id=3`.
    pub path_and_query: String,
    /// The URL as the user gave it, normalised, without its password.
    pub url: String,
    /// `Basic ...` from the URL's `user:password@`, sent as the
    /// Authorization header (as curl and k6 do).
    pub authorization: Option<String>,
    /// The URL exactly as given, password included: what a run spec
    /// carries to be parsed again. Never printed nor written to a bundle.
    pub given: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error("'{url}' is not a valid URL ({reason}); write it like http://127.0.0.1:8080/page")]
    Url { url: String, reason: String },
    #[error("'{url}' uses the scheme '{scheme}': headroom speaks http:// and https://")]
    Scheme { url: String, scheme: String },
    #[error("invalid method '{0}': use an HTTP method such as GET, POST or PUT")]
    Method(String),
    #[error("invalid header '{header}': {reason}; write it as 'Name: value'")]
    Header { header: String, reason: String },
}

/// Without the URL as given nor the Authorization value: a password
/// printed by `{:?}` is a password leaked.
impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Target")
            .field("url", &self.url)
            .field("authorization", &self.authorization.as_ref().map(|_| "***"))
            .finish_non_exhaustive()
    }
}

impl Target {
    pub fn parse(input: &str) -> Result<Target, TargetError> {
        let text = input.trim();
        let parsed = url::Url::parse(text).map_err(|e| TargetError::Url {
            url: text.to_string(),
            reason: e.to_string(),
        })?;
        let scheme = match parsed.scheme() {
            "http" => Scheme::Http,
            "https" => Scheme::Https,
            other => {
                return Err(TargetError::Scheme {
                    url: text.to_string(),
                    scheme: other.to_string(),
                })
            }
        };
        let host = match parsed.host() {
            Some(url::Host::Ipv6(addr)) => addr.to_string(),
            Some(host) => host.to_string(),
            None => {
                return Err(TargetError::Url {
                    url: text.to_string(),
                    reason: "no host".into(),
                })
            }
        };
        let port = parsed.port_or_known_default().unwrap_or(match scheme {
            Scheme::Http => 80,
            Scheme::Https => 443,
        });
        let mut path_and_query = parsed.path().to_string();
        if let Some(query) = parsed.query() {
            path_and_query.push('?');
            path_and_query.push_str(query);
        }
        let authorization =
            (!parsed.username().is_empty() || parsed.password().is_some()).then(|| {
                use base64::Engine as _;
                let decode = |text: &str| {
                    url::form_urlencoded::parse(
                        format!("x={}", text.replace('+', "%2B")).as_bytes(),
                    )
                    .next()
                    .map(|(_, v)| v.into_owned())
                    .unwrap_or_default()
                };
                let pair = format!(
                    "{}:{}",
                    decode(parsed.username()),
                    decode(parsed.password().unwrap_or(""))
                );
                format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode(pair)
                )
            });
        let mut shown = parsed.clone();
        if parsed.password().is_some() {
            let _ = shown.set_password(Some("***"));
        }
        Ok(Target {
            scheme,
            host,
            port,
            path_and_query,
            url: shown.to_string(),
            authorization,
            given: text.to_string(),
        })
    }

    /// The Host header value: the port is included unless it is the scheme's default.
    pub fn host_header(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        let default_port = match self.scheme {
            Scheme::Http => 80,
            Scheme::Https => 443,
        };
        if self.port == default_port {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }

    /// `host:port`, for connecting and for messages.
    pub fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.url)
    }
}

pub use headroom_units::secret::redact_credentials;

/// `text` without secrets: URL passwords (see [`redact_credentials`]) and
/// the values of Authorization, Proxy-Authorization, X-Api-Key and
/// X-Auth-Token headers and of Cookie headers (`name=value`), written as
/// `Name: value` on a command line or `Name: value` / `"Name": "value"` in
/// a scenario file; each value becomes `***`.
pub fn redact_secrets(text: &str) -> String {
    use std::sync::LazyLock;
    static SECRET: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(
            r#"(?i)((?:proxy-)?authorization|x-api-key|x-auth-token)(["']?[ \t]*:[ \t]*)("[^"\n]*"|'[^'\n]*'|[^,}\n]*)"#,
        )
        .expect("a valid pattern")
    });
    static COOKIE: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r#"(?i)(cookie)(["']?[ \t]*:[ \t]*)("[^"\n]*="[^"\n]*|"[^"\n]*=[^"\n]*"|'[^'\n]*='?|[^,}\n'"]*=[^,}\n]*)"#)
            .expect("a valid pattern")
    });
    let text = redact_credentials(text);
    let text = SECRET.replace_all(&text, "${1}${2}***");
    COOKIE.replace_all(&text, "${1}${2}***").into_owned()
}

/// What to send: method, extra headers, body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestSpec {
    pub method: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub keep_alive: bool,
}

impl Default for RequestSpec {
    fn default() -> Self {
        RequestSpec {
            method: "GET".into(),
            headers: Vec::new(),
            body: Vec::new(),
            keep_alive: true,
        }
    }
}

pub const USER_AGENT: &str = concat!("headroom/", env!("CARGO_PKG_VERSION"));

fn is_token(text: &str) -> bool {
    !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Parses a `-H 'Name: value'` argument.
pub fn parse_header(text: &str) -> Result<(String, String), TargetError> {
    let fail = |reason: &str| TargetError::Header {
        header: text.to_string(),
        reason: reason.to_string(),
    };
    let (name, value) = text.split_once(':').ok_or_else(|| fail("no ':'"))?;
    let name = name.trim();
    if !is_token(name) {
        return Err(fail("the name has characters a header name cannot have"));
    }
    let value = value.trim();
    if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
        return Err(fail("the value contains a line break"));
    }
    Ok((name.to_string(), value.to_string()))
}

impl RequestSpec {
    pub fn validate(&self) -> Result<(), TargetError> {
        if !is_token(&self.method) {
            return Err(TargetError::Method(self.method.clone()));
        }
        Ok(())
    }

    /// The request's bytes on the wire, serialised once.
    pub fn serialize(&self, target: &Target, path_and_query: &str) -> Vec<u8> {
        let has = |name: &str| {
            self.headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case(name))
        };
        let mut out = Vec::with_capacity(256 + self.body.len());
        let mut line = |text: &str| {
            out.extend_from_slice(text.as_bytes());
            out.extend_from_slice(b"\r\n");
        };
        line(&format!("{} {} HTTP/1.1", self.method, path_and_query));
        if !has("host") {
            line(&format!("Host: {}", target.host_header()));
        }
        if !has("user-agent") {
            line(&format!("User-Agent: {USER_AGENT}"));
        }
        if !has("accept") {
            line("Accept: */*");
        }
        if let (Some(credentials), false) = (&target.authorization, has("authorization")) {
            line(&format!("Authorization: {credentials}"));
        }
        for (name, value) in &self.headers {
            line(&format!("{name}: {value}"));
        }
        if !self.keep_alive && !has("connection") {
            line("Connection: close");
        }
        if (!self.body.is_empty() || matches!(self.method.as_str(), "POST" | "PUT" | "PATCH"))
            && !has("content-length")
        {
            line(&format!("Content-Length: {}", self.body.len()));
        }
        line("");
        out.extend_from_slice(&self.body);
        out
    }
}

/// An origin as the start of a URL: scheme, host and port.
pub struct OriginUrl<'a>(pub &'a Target);

impl std::fmt::Display for OriginUrl<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scheme = if self.0.scheme == Scheme::Https {
            "https"
        } else {
            "http"
        };
        write!(f, "{scheme}://{}", HostHeader(self.0))
    }
}

/// Formats a target's Host header value without allocating.
pub struct HostHeader<'a>(pub &'a Target);

impl std::fmt::Display for HostHeader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let t = self.0;
        let default_port = if t.scheme == Scheme::Https { 443 } else { 80 };
        if t.host.contains(':') {
            write!(f, "[{}]", t.host)?;
        } else {
            f.write_str(&t.host)?;
        }
        if t.port != default_port {
            write!(f, ":{}", t.port)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_targets() {
        let t = Target::parse("http://127.0.0.1:8080/page?x=1").unwrap();
        assert_eq!(
            (t.scheme, t.host.as_str(), t.port),
            (Scheme::Http, "127.0.0.1", 8080)
        );
        assert_eq!(t.path_and_query, "/page?x=1");
        assert_eq!(t.host_header(), "127.0.0.1:8080");
        let t = Target::parse("https://example.org").unwrap();
        assert_eq!((t.port, t.path_and_query.as_str()), (443, "/"));
        assert_eq!(t.host_header(), "example.org");
        let t = Target::parse("http://[::1]:9000/").unwrap();
        assert_eq!(t.authority(), "[::1]:9000");
    }

    #[test]
    fn credentials_in_the_url_become_basic_auth() {
        let t = Target::parse("http://ann:p%40ss+w@127.0.0.1:8080/x").unwrap();
        // "ann:p@ss+w" in base64.
        assert_eq!(t.authorization.as_deref(), Some("Basic YW5uOnBAc3Mrdw=="));
        assert!(!t.url.contains("p%40ss"), "{}", t.url);
        let bytes = RequestSpec::default().serialize(&t, "/x");
        assert!(String::from_utf8(bytes)
            .unwrap()
            .contains("Authorization: Basic YW5uOnBAc3Mrdw==\r\n"));
        assert_eq!(Target::parse("http://h/").unwrap().authorization, None);
    }

    #[test]
    fn secret_headers_are_redacted_from_text() {
        for (text, shown) in [
            ("-HCookie: sid=SECRET2", "-HCookie: ***"),
            (
                "--header=authorization: Bearer SECRET1",
                "--header=authorization: ***",
            ),
            ("AUTHORIZATION : SECRET4", "AUTHORIZATION : ***"),
            (
                "headers: {Authorization: \"Bearer A\", X-Api-Key: k1, Accept: x}",
                "headers: {Authorization: ***, X-Api-Key: ***, Accept: x}",
            ),
            ("  Cookie: \"sid=B\"\n", "  Cookie: ***\n"),
            (
                "  proxy-authorization: 'Basic C'\n",
                "  proxy-authorization: ***\n",
            ),
            // An extractor named cookie is no secret; neither is cookies:.
            (
                "- {name: s, cookie: MoodleSession}",
                "- {name: s, cookie: MoodleSession}",
            ),
            (
                "cookies: clear_each_iteration",
                "cookies: clear_each_iteration",
            ),
        ] {
            assert_eq!(redact_secrets(text), shown, "{text}");
        }
    }

    #[test]
    fn credentials_are_redacted_from_text() {
        assert_eq!(
            redact_credentials("load http://ann:s3cret@h:80/x --out a"),
            "load http://ann:***@h:80/x --out a"
        );
        assert_eq!(
            redact_credentials("base_url: 'https://u:p@w@host/'\nurl: http://plain/x"),
            "base_url: 'https://u:***@host/'\nurl: http://plain/x"
        );
        assert_eq!(
            redact_credentials("http://user@h/ x://y"),
            "http://user@h/ x://y"
        );
    }

    #[test]
    fn rejects_bad_targets() {
        assert!(matches!(
            Target::parse("ftp://x/"),
            Err(TargetError::Scheme { .. })
        ));
        assert!(Target::parse("127.0.0.1:8080").is_err());
        assert!(matches!(
            Target::parse("http://"),
            Err(TargetError::Url { .. })
        ));
        assert!(parse_header("X-A b: 1").is_err());
        assert!(parse_header("novalue").is_err());
        assert_eq!(
            parse_header("X-Key:  v ").unwrap(),
            ("X-Key".into(), "v".into())
        );
        assert!(RequestSpec {
            method: "GE T".into(),
            ..Default::default()
        }
        .validate()
        .is_err());
    }

    proptest::proptest! {
        #[test]
        fn parsers_never_panic(text in "\\PC{0,48}") {
            if let Ok(target) = Target::parse(&text) {
                let _ = target.host_header();
                let _ = RequestSpec::default().serialize(&target, &target.path_and_query);
            }
            let _ = parse_header(&text);
        }
    }

    #[test]
    fn serialises_requests() {
        let t = Target::parse("http://127.0.0.1:8080/p").unwrap();
        let spec = RequestSpec {
            method: "POST".into(),
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: b"{}".to_vec(),
            keep_alive: false,
        };
        let bytes = String::from_utf8(spec.serialize(&t, &t.path_and_query)).unwrap();
        assert!(bytes.starts_with("POST /p HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"));
        assert!(bytes.contains("Content-Type: application/json\r\n"));
        assert!(bytes.contains("Connection: close\r\n"));
        assert!(bytes.ends_with("Content-Length: 2\r\n\r\n{}"));
    }
}
