//! An access log's line format: nginx's `log_format` syntax
//! (`$remote_addr - $remote_user [$time_local] "$request" ...`), with the
//! presets nginx and Apache write by default (`combined`, `common`). A
//! format is compiled once into literals and fields; a line is matched
//! against it without allocating.

use super::time::{ascii_number, iso8601_ms, local_time_ms, seconds_ms};

/// What a field of a line holds, as the model uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogField {
    /// `$remote_addr`: the client's address.
    Client,
    /// `$time_local`: `10/Oct/2000:13:55:36 -0700`.
    TimeLocal,
    /// `$time_iso8601`: `2000-10-10T13:55:36-07:00`.
    TimeIso,
    /// `$msec`: seconds since the epoch, with milliseconds.
    Msec,
    /// `$request`: `GET /path?q HTTP/1.1`.
    Request,
    /// `$request_method`.
    Method,
    /// `$request_uri`: the path and query.
    Uri,
    /// `$status`.
    Status,
    /// `$body_bytes_sent` or `$bytes_sent`.
    Bytes,
    /// `$http_referer`.
    Referer,
    /// `$http_user_agent`.
    UserAgent,
    /// `$request_time`: seconds, with milliseconds.
    RequestTime,
    /// `$cookie_NAME`: the named cookie (a session's key).
    Cookie(String),
    /// Any other variable: read past, not kept.
    Other(String),
}

/// One piece of a compiled format.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(Vec<u8>),
    Field(LogField),
}

/// A compiled line format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFormat {
    pieces: Vec<Piece>,
    /// The format as given (for messages).
    pub text: String,
}

/// nginx's predefined `combined`, also Apache's `combined` LogFormat.
pub const COMBINED: &str = r#"$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent""#;
/// Apache's (and NCSA's) `common` LogFormat.
pub const COMMON: &str =
    r#"$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent"#;

/// A line's fields, borrowed from it; what the format lacks is `None`.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct LogEntry<'a> {
    /// Milliseconds since the Unix epoch (UTC).
    pub time_ms: i64,
    pub client: Option<&'a [u8]>,
    pub method: &'a [u8],
    /// The path and query as requested.
    pub target: &'a [u8],
    pub status: u16,
    pub bytes: u64,
    pub referer: Option<&'a [u8]>,
    pub user_agent: Option<&'a [u8]>,
    /// The server's time for the request, in ms.
    pub request_time_ms: Option<f64>,
    pub cookie: Option<&'a [u8]>,
}

/// Why a line does not match its format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineError {
    /// The text between two fields is not the format's.
    Shape,
    Time,
    Request,
    Status,
    Bytes,
    /// No time field in the line.
    NoTime,
}

impl LineError {
    pub fn describe(self) -> &'static str {
        match self {
            LineError::Shape => "it does not have the format's shape",
            LineError::Time => "its time is not a time",
            LineError::Request => "its request is not METHOD TARGET PROTOCOL",
            LineError::Status => "its status is not a number from 100 to 599",
            LineError::Bytes => "its byte count is not a number",
            LineError::NoTime => "it has no time",
        }
    }
}

impl LogFormat {
    /// `combined`, `common`, or an nginx `log_format` string.
    pub fn parse(text: &str) -> Result<LogFormat, String> {
        let spec = match text.trim() {
            "combined" => COMBINED,
            "common" => COMMON,
            other => other,
        };
        let mut pieces = Vec::new();
        let mut literal = Vec::new();
        let bytes = spec.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] != b'$' {
                literal.push(bytes[i]);
                i += 1;
                continue;
            }
            // `${name}` or `$name`.
            let (name, next) = if bytes.get(i + 1) == Some(&b'{') {
                let end = spec[i + 2..]
                    .find('}')
                    .ok_or_else(|| format!("the format '{spec}' opens ${{ without a }}"))?;
                (&spec[i + 2..i + 2 + end], i + 3 + end)
            } else {
                let end = spec[i + 1..]
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .map_or(spec.len(), |e| i + 1 + e);
                (&spec[i + 1..end], end)
            };
            if name.is_empty() {
                literal.push(b'$');
                i += 1;
                continue;
            }
            if !literal.is_empty() {
                pieces.push(Piece::Literal(std::mem::take(&mut literal)));
            }
            if matches!(pieces.last(), Some(Piece::Field(_))) {
                return Err(format!(
                    "the format '{spec}' has two variables with nothing between them (${name}): a line could not be split there"
                ));
            }
            pieces.push(Piece::Field(field_of(name)));
            i = next;
        }
        if !literal.is_empty() {
            pieces.push(Piece::Literal(literal));
        }
        let has_time = pieces.iter().any(|p| {
            matches!(
                p,
                Piece::Field(LogField::TimeLocal | LogField::TimeIso | LogField::Msec)
            )
        });
        let has_request = pieces
            .iter()
            .any(|p| matches!(p, Piece::Field(LogField::Request | LogField::Uri)));
        if !has_time || !has_request {
            return Err(format!(
                "the format '{spec}' needs a time ($time_local, $time_iso8601 or $msec) and the request ($request, or $request_uri with $request_method)"
            ));
        }
        Ok(LogFormat {
            pieces,
            text: spec.to_string(),
        })
    }

    /// The named cookie the format logs (`$cookie_NAME`), if any.
    pub fn cookie(&self) -> Option<&str> {
        self.pieces.iter().find_map(|p| match p {
            Piece::Field(LogField::Cookie(name)) => Some(name.as_str()),
            _ => None,
        })
    }

    /// Whether the format logs the status (`$status`).
    pub fn has_status(&self) -> bool {
        self.pieces
            .iter()
            .any(|p| matches!(p, Piece::Field(LogField::Status)))
    }

    /// Whether the format logs the user agent.
    pub fn has_user_agent(&self) -> bool {
        self.pieces
            .iter()
            .any(|p| matches!(p, Piece::Field(LogField::UserAgent)))
    }

    /// Reads one line (without its line end).
    pub fn read<'a>(&self, line: &'a [u8]) -> Result<LogEntry<'a>, LineError> {
        let mut entry = LogEntry {
            method: b"GET",
            ..LogEntry::default()
        };
        let mut timed = false;
        let mut at = 0;
        for (n, piece) in self.pieces.iter().enumerate() {
            match piece {
                Piece::Literal(text) => {
                    if !line[at..].starts_with(text) {
                        return Err(LineError::Shape);
                    }
                    at += text.len();
                }
                Piece::Field(field) => {
                    // A field ends where the next literal starts: its
                    // first byte, searched for; a quoted field may hold
                    // that byte escaped (\").
                    let end = match self.pieces.get(n + 1) {
                        None => line.len(),
                        Some(Piece::Literal(next)) => {
                            field_end(&line[at..], next).ok_or(LineError::Shape)? + at
                        }
                        Some(Piece::Field(_)) => unreachable!("refused by parse"),
                    };
                    let value = &line[at..end];
                    timed |= store(&mut entry, field, value)?;
                    at = end;
                }
            }
        }
        if !timed {
            return Err(LineError::NoTime);
        }
        Ok(entry)
    }
}

/// Where a field ends: the first place `next` (the literal after it)
/// matches, skipping a `\"` inside a quoted field.
fn field_end(rest: &[u8], next: &[u8]) -> Option<usize> {
    let first = next[0];
    let mut from = 0;
    loop {
        let i = memchr_byte(first, &rest[from..])? + from;
        if rest[i..].starts_with(next) && !(first == b'"' && i > 0 && escaped(&rest[..i])) {
            return Some(i);
        }
        from = i + 1;
    }
}

/// Whether the byte after `before` is escaped: an odd run of backslashes.
fn escaped(before: &[u8]) -> bool {
    before.iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 1
}

fn memchr_byte(byte: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&b| b == byte)
}

fn field_of(name: &str) -> LogField {
    match name {
        "remote_addr" | "http_x_forwarded_for" => LogField::Client,
        "time_local" => LogField::TimeLocal,
        "time_iso8601" => LogField::TimeIso,
        "msec" => LogField::Msec,
        "request" => LogField::Request,
        "request_method" => LogField::Method,
        "request_uri" => LogField::Uri,
        "status" => LogField::Status,
        "body_bytes_sent" | "bytes_sent" => LogField::Bytes,
        "http_referer" => LogField::Referer,
        "http_user_agent" => LogField::UserAgent,
        "request_time" => LogField::RequestTime,
        other => match other.strip_prefix("cookie_") {
            Some(cookie) => LogField::Cookie(cookie.to_string()),
            None => LogField::Other(other.to_string()),
        },
    }
}

/// Puts one field's value into the entry; true when it was the time.
fn store<'a>(
    entry: &mut LogEntry<'a>,
    field: &LogField,
    value: &'a [u8],
) -> Result<bool, LineError> {
    let absent = value == b"-";
    match field {
        LogField::Client => entry.client = (!absent).then_some(value),
        LogField::TimeLocal => {
            entry.time_ms = local_time_ms(value).ok_or(LineError::Time)?;
            return Ok(true);
        }
        LogField::TimeIso => {
            entry.time_ms = iso8601_ms(value).ok_or(LineError::Time)?;
            return Ok(true);
        }
        LogField::Msec => {
            entry.time_ms = seconds_ms(value).ok_or(LineError::Time)?;
            return Ok(true);
        }
        LogField::Request => {
            let (method, target) = request_parts(value).ok_or(LineError::Request)?;
            entry.method = method;
            entry.target = target;
        }
        LogField::Method => entry.method = value,
        LogField::Uri => entry.target = value,
        LogField::Status => {
            let status = ascii_number(value).ok_or(LineError::Status)?;
            if !(100..=599).contains(&status) {
                return Err(LineError::Status);
            }
            entry.status = status as u16;
        }
        LogField::Bytes => {
            entry.bytes = if absent {
                0
            } else {
                ascii_number(value).ok_or(LineError::Bytes)?
            }
        }
        LogField::Referer => entry.referer = (!absent).then_some(value),
        LogField::UserAgent => entry.user_agent = (!absent).then_some(value),
        LogField::RequestTime => {
            entry.request_time_ms = seconds_ms(value).map(|ms| ms as f64);
        }
        LogField::Cookie(_) => entry.cookie = (!absent).then_some(value),
        LogField::Other(_) => {}
    }
    Ok(false)
}

/// A logged target as the client sent it: nginx writes a byte it would
/// not print (and `"`, `\\`) as `\xHH`, Apache writes `"` as `\"` and `\\`
/// as `\\\\`; a URL carries each such byte as `%HH`. Anything else is kept.
pub fn unescape_target(target: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if !target.contains(&b'\\') {
        return std::borrow::Cow::Borrowed(target);
    }
    let mut out = Vec::with_capacity(target.len());
    let mut i = 0;
    while i < target.len() {
        let hex = target
            .get(i + 2..i + 4)
            .filter(|h| h.iter().all(u8::is_ascii_hexdigit));
        match (target[i], target.get(i + 1), hex) {
            (b'\\', Some(b'x'), Some(hex)) => {
                out.push(b'%');
                out.extend(hex.iter().map(u8::to_ascii_uppercase));
                i += 4;
            }
            (b'\\', Some(b'"'), _) => {
                out.extend_from_slice(b"%22");
                i += 2;
            }
            (b'\\', Some(b'\\'), _) => {
                out.extend_from_slice(b"%5C");
                i += 2;
            }
            (byte, _, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `GET /path HTTP/1.1` (HTTP/0.9's `GET /path` too): method and target.
fn request_parts(value: &[u8]) -> Option<(&[u8], &[u8])> {
    let space = value.iter().position(|&b| b == b' ')?;
    let method = &value[..space];
    let rest = &value[space + 1..];
    let target = match rest.iter().rposition(|&b| b == b' ') {
        Some(end) if rest[end + 1..].starts_with(b"HTTP/") => &rest[..end],
        _ => rest,
    };
    (!method.is_empty() && method.iter().all(u8::is_ascii_uppercase) && !target.is_empty())
        .then_some((method, target))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_combined_line_gives_its_fields() {
        let format = LogFormat::parse("combined").unwrap();
        let line = br#"192.0.2.7 - - [10/Oct/2026:13:55:36 +0200] "GET /mod/forum/view.php?id=12 HTTP/2.0" 200 5123 "https://school.example/" "Mozilla/5.0 (X11; Linux x86_64) \"quoted\"""#;
        let e = format.read(line).unwrap();
        assert_eq!(e.client, Some(&b"192.0.2.7"[..]));
        assert_eq!(e.method, b"GET");
        assert_eq!(e.target, b"/mod/forum/view.php?id=12");
        assert_eq!((e.status, e.bytes), (200, 5123));
        assert_eq!(e.referer, Some(&b"https://school.example/"[..]));
        assert_eq!(
            e.user_agent,
            Some(&br#"Mozilla/5.0 (X11; Linux x86_64) \"quoted\""#[..])
        );
        // 2026-10-10 11:55:36 UTC.
        assert_eq!(e.time_ms, 1_791_633_336_000);
    }

    #[test]
    fn common_and_custom_formats_read_what_they_log() {
        let common = LogFormat::parse("common").unwrap();
        let e = common
            .read(br#"::1 - ann [01/Jan/2027:00:00:00 +0000] "POST /login HTTP/1.1" 302 -"#)
            .unwrap();
        assert_eq!((e.method, e.status, e.bytes), (&b"POST"[..], 302, 0));
        assert_eq!(e.user_agent, None);
        let custom = LogFormat::parse(
            "$remote_addr [$time_iso8601] $request_method $request_uri $status $request_time $cookie_MoodleSession",
        )
        .unwrap();
        assert_eq!(custom.cookie(), Some("MoodleSession"));
        let e = custom
            .read(
                b"10.0.0.1 [2027-01-01T01:00:00+01:00] GET /course/view.php?id=2 200 0.042 abc123",
            )
            .unwrap();
        assert_eq!(e.time_ms, 1_798_761_600_000);
        assert_eq!(e.target, b"/course/view.php?id=2");
        assert_eq!(e.request_time_ms, Some(42.0));
        assert_eq!(e.cookie, Some(&b"abc123"[..]));
        let msec = LogFormat::parse("$msec \"$request\" $status").unwrap();
        let e = msec.read(b"1798761600.250 \"GET / HTTP/1.1\" 200").unwrap();
        assert_eq!(e.time_ms, 1_798_761_600_250);
    }

    #[test]
    fn logged_escapes_become_percent_encoding() {
        assert_eq!(&*unescape_target(b"/caf\\xC3\\xa9?q=1"), b"/caf%C3%A9?q=1");
        assert_eq!(&*unescape_target(b"/a\\x22b"), b"/a%22b");
        assert_eq!(&*unescape_target(br#"/c\"d\\e"#), b"/c%22d%5Ce");
        assert_eq!(&*unescape_target(b"/a\\xZZ"), b"/a\\xZZ");
        assert_eq!(&*unescape_target(b"/plain"), b"/plain");
    }

    #[test]
    fn lines_that_do_not_match_say_why() {
        let format = LogFormat::parse("combined").unwrap();
        let ok = r#"1.2.3.4 - - [10/Oct/2026:13:55:36 +0200] "GET / HTTP/1.1" 200 5 "-" "curl""#;
        assert!(format.read(ok.as_bytes()).is_ok());
        for (line, why) in [
            ("garbage", LineError::Shape),
            (&ok.replace("10/Oct", "10/Foo") as &str, LineError::Time),
            (
                &ok.replace("\"GET / HTTP/1.1\"", "\"\\x16\\x03\""),
                LineError::Request,
            ),
            (&ok.replace(" 200 ", " 999 "), LineError::Status),
            (&ok.replace(" 5 ", " five "), LineError::Bytes),
            (&ok[..40], LineError::Shape),
        ] {
            assert_eq!(format.read(line.as_bytes()), Err(why), "{line}");
        }
        assert!(LogFormat::parse("$status $body_bytes_sent").is_err());
        assert!(LogFormat::parse("$time_local$request").is_err());
    }
}
