//! HAR files (HTTP Archive 1.2, as every browser's developer tools and
//! Playwright save them): their entries, and the journey's steps — one per
//! page request of the site, static files and other hosts left out unless
//! asked, a redirect's hops merged into the step that caused them.

use crate::ImportError;
use base64::Engine as _;
use serde::Deserialize;
use serde_json::Value;
use url::Url;

/// One request and its response, as recorded.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Seconds since the Unix epoch when the request started.
    pub started: f64,
    /// Milliseconds the exchange took.
    pub time_ms: f64,
    pub method: String,
    pub url: Url,
    pub request_headers: Vec<(String, String)>,
    /// The body's MIME type and text (None without a body).
    pub post: Option<(String, String)>,
    pub status: u16,
    pub response_headers: Vec<(String, String)>,
    /// The response body as text (bodies saved in base64 are decoded).
    pub body: String,
    pub mime: String,
    /// Chrome's and Playwright's `_resourceType` (document, xhr, fetch, script, ...).
    pub resource_type: Option<String>,
}

impl Entry {
    pub fn ended(&self) -> f64 {
        self.started + self.time_ms.max(0.0) / 1000.0
    }

    pub fn response_header(&self, name: &str) -> Option<&str> {
        self.response_headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn request_header(&self, name: &str) -> Option<&str> {
        self.request_headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The redirect's target, resolved against the request's URL.
    pub fn location(&self) -> Option<Url> {
        if !(300..400).contains(&self.status) {
            return None;
        }
        let location = self.response_header("location")?;
        self.url.join(location).ok()
    }

    pub fn is_html(&self) -> bool {
        self.mime.contains("html") || self.body.trim_start().starts_with('<')
    }
}

/// A scenario step: the request the browser made, and each response it
/// got (several when it followed redirects).
#[derive(Debug, Clone)]
pub struct Step {
    pub hops: Vec<Entry>,
    /// The recording ended the step on a redirect it did not follow.
    pub unfollowed_redirect: bool,
}

impl Step {
    pub fn first(&self) -> &Entry {
        &self.hops[0]
    }

    pub fn last(&self) -> &Entry {
        self.hops.last().expect("a step has a hop")
    }
}

/// What was left out, for the report.
#[derive(Debug, Default)]
pub struct LeftOut {
    pub static_files: usize,
    /// Host and count.
    pub other_hosts: Vec<(String, usize)>,
    /// Requests that got no response (blocked, cancelled).
    pub no_response: usize,
    /// Entries that are not http(s) (data:, chrome-extension:, ...).
    pub not_http: usize,
}

/// A HAR file as serde reads it: objects and lists typed (a `Value` tree
/// of a 60 MB recording's headers took several times the file's size),
/// scalars as `Value` so that a field of an unexpected type is ignored as
/// before rather than refusing the file.
#[derive(Deserialize)]
struct HarFile {
    log: Option<HarLog>,
}

#[derive(Deserialize)]
struct HarLog {
    entries: Option<Vec<HarEntry>>,
}

#[derive(Deserialize)]
struct HarEntry {
    #[serde(rename = "startedDateTime")]
    started: Option<Value>,
    time: Option<Value>,
    request: Option<HarRequest>,
    response: Option<HarResponse>,
    #[serde(rename = "_resourceType")]
    resource_type: Option<Value>,
}

#[derive(Deserialize)]
struct HarRequest {
    method: Option<Value>,
    url: Option<Value>,
    #[serde(default)]
    headers: Option<Vec<HarHeader>>,
    #[serde(rename = "postData")]
    post_data: Option<HarPost>,
}

#[derive(Deserialize)]
struct HarPost {
    #[serde(rename = "mimeType")]
    mime_type: Option<Value>,
    text: Option<Value>,
    params: Option<Vec<HarHeader>>,
}

#[derive(Deserialize)]
struct HarResponse {
    status: Option<Value>,
    #[serde(default)]
    headers: Option<Vec<HarHeader>>,
    content: Option<HarContent>,
}

#[derive(Deserialize)]
struct HarContent {
    #[serde(rename = "mimeType")]
    mime_type: Option<Value>,
    text: Option<Value>,
    encoding: Option<Value>,
}

/// A header, or a form's parameter (same shape).
#[derive(Deserialize)]
struct HarHeader {
    name: Option<Value>,
    value: Option<Value>,
}

fn text_of(v: Option<Value>) -> Option<String> {
    match v {
        Some(Value::String(s)) => Some(s),
        _ => None,
    }
}

fn pairs(list: Option<Vec<HarHeader>>) -> Vec<(String, String)> {
    list.unwrap_or_default()
        .into_iter()
        .filter_map(|h| Some((text_of(h.name)?, text_of(h.value)?)))
        .collect()
}

/// Reads a HAR file's entries in the order they started.
pub fn read(text: &str) -> Result<Vec<Entry>, ImportError> {
    let root: HarFile = serde_json::from_str(text).map_err(|e| {
        ImportError::Invalid(format!(
            "not a HAR file: it is not valid JSON or not shaped as HAR 1.2 ({e}). Save it from the browser's developer tools (Network, \"Save all as HAR with content\")"
        ))
    })?;
    let entries = root.log.and_then(|l| l.entries).ok_or_else(|| {
        ImportError::Invalid(
            "not a HAR file: it has no log.entries list (a HAR file is JSON with {\"log\": {\"entries\": [...]}})".into(),
        )
    })?;
    let mut out = Vec::with_capacity(entries.len());
    for (i, e) in entries.into_iter().enumerate() {
        let at = |what: &str| ImportError::Invalid(format!("entry {}: {what}", i + 1));
        let request = e.request.ok_or_else(|| at("no request"))?;
        let response = e.response.ok_or_else(|| at("no response"))?;
        let url_text = text_of(request.url).ok_or_else(|| at("the request has no url"))?;
        let Ok(url) = Url::parse(&url_text) else {
            return Err(at(&format!("'{url_text}' is not a URL")));
        };
        let started = e
            .started
            .as_ref()
            .and_then(Value::as_str)
            .and_then(parse_time)
            .unwrap_or(0.0);
        let post = request.post_data.and_then(|p| {
            let mime = text_of(p.mime_type).unwrap_or_default();
            let text = match text_of(p.text) {
                Some(t) => t,
                // Some browsers give only params for forms.
                None => pairs(Some(p.params?))
                    .iter()
                    .map(|(name, value)| format!("{}={}", form_encode(name), form_encode(value)))
                    .collect::<Vec<_>>()
                    .join("&"),
            };
            Some((mime, text))
        });
        let (mime, body) = match response.content {
            Some(c) => {
                let mut body = text_of(c.text).unwrap_or_default();
                if c.encoding.as_ref().and_then(Value::as_str) == Some("base64") {
                    body = base64::engine::general_purpose::STANDARD
                        .decode(body.trim())
                        .map(|b| String::from_utf8_lossy(&b).into_owned())
                        .unwrap_or_default();
                }
                (
                    text_of(c.mime_type)
                        .unwrap_or_default()
                        .to_ascii_lowercase(),
                    body,
                )
            }
            None => (String::new(), String::new()),
        };
        out.push(Entry {
            started,
            time_ms: e.time.as_ref().and_then(Value::as_f64).unwrap_or(0.0),
            method: text_of(request.method)
                .unwrap_or_else(|| "GET".into())
                .to_ascii_uppercase(),
            url,
            request_headers: pairs(request.headers),
            post,
            status: response
                .status
                .as_ref()
                .and_then(Value::as_u64)
                .unwrap_or(0)
                .min(999) as u16,
            response_headers: pairs(response.headers),
            body,
            mime,
            resource_type: text_of(e.resource_type).map(|t| t.to_ascii_lowercase()),
        });
    }
    if out.is_empty() {
        return Err(ImportError::Invalid(
            "the HAR file has no requests: record with the developer tools' Network tab open, then save".into(),
        ));
    }
    // Browsers write entries in the order they finished; a journey runs in
    // the order they started.
    out.sort_by(|a, b| a.started.total_cmp(&b.started));
    Ok(out)
}

fn parse_time(text: &str) -> Option<f64> {
    // UTC ('Z'), as browsers write it; a time with another offset is not
    // read, and the journey then has no think times.
    let t = humantime::parse_rfc3339(text)
        .or_else(|_| humantime::parse_rfc3339_weak(text.trim_end_matches('Z')))
        .ok()?;
    Some(t.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs_f64())
}

/// The origin (scheme, host, port) of a URL, as text without a path.
pub fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// Static files: what a page loads besides itself.
fn is_static(e: &Entry) -> bool {
    if let Some(kind) = &e.resource_type {
        match kind.as_str() {
            "document" | "xhr" | "fetch" | "eventsource" | "websocket" => return false,
            "stylesheet" | "script" | "image" | "font" | "media" | "manifest" | "texttrack"
            | "ping" | "beacon" | "prefetch" => return true,
            _ => {}
        }
    }
    let mime = e.mime.split(';').next().unwrap_or("").trim();
    if mime == "text/css"
        || mime.contains("javascript")
        || ["image/", "font/", "audio/", "video/"]
            .iter()
            .any(|p| mime.starts_with(p))
    {
        return true;
    }
    let path = e.url.path().to_ascii_lowercase();
    [
        ".css", ".js", ".mjs", ".png", ".jpg", ".jpeg", ".gif", ".svg", ".ico", ".webp", ".woff",
        ".woff2", ".ttf", ".otf", ".eot", ".map", ".mp4", ".webm", ".mp3",
    ]
    .iter()
    .any(|ext| path.ends_with(ext))
}

/// The journey's steps: the requests to `base` (static files only with
/// `include_static`), each redirect followed by the browser merged into
/// the step that caused it.
pub fn steps(entries: Vec<Entry>, base: &str, include_static: bool) -> (Vec<Step>, LeftOut) {
    let mut left = LeftOut::default();
    let mut kept: Vec<Entry> = Vec::new();
    for e in entries {
        if !matches!(e.url.scheme(), "http" | "https") {
            left.not_http += 1;
        } else if origin(&e.url) != base {
            let host = e.url.host_str().unwrap_or("").to_string();
            match left.other_hosts.iter_mut().find(|(h, _)| *h == host) {
                Some((_, n)) => *n += 1,
                None => left.other_hosts.push((host, 1)),
            }
        } else if e.status == 0 {
            left.no_response += 1;
        } else if !include_static && is_static(&e) {
            left.static_files += 1;
        } else {
            kept.push(e);
        }
    }
    // Each entry moves into its step (a recording's bodies are held once).
    let mut steps: Vec<Step> = Vec::new();
    let mut kept = kept.into_iter().peekable();
    while let Some(first) = kept.next() {
        let mut step = Step {
            hops: vec![first],
            unfollowed_redirect: false,
        };
        while let Some(location) = step.last().location() {
            match kept.peek() {
                Some(next) if next.method == "GET" && same_target(&next.url, &location) => {
                    step.hops.push(kept.next().expect("peeked"));
                }
                _ => {
                    step.unfollowed_redirect = true;
                    break;
                }
            }
        }
        steps.push(step);
    }
    (steps, left)
}

fn same_target(a: &Url, b: &Url) -> bool {
    let strip = |u: &Url| {
        let mut u = u.clone();
        u.set_fragment(None);
        u
    };
    strip(a) == strip(b)
}

/// The base URL: the one given, or the origin of the recording's first
/// page (its first document, else its first request).
pub fn base_origin(entries: &[Entry], given: Option<&str>) -> Result<String, ImportError> {
    if let Some(given) = given {
        let url = Url::parse(given).map_err(|e| {
            ImportError::Invalid(format!(
                "--base-url '{given}' is not a URL ({e}): write e.g. http://pi.local"
            ))
        })?;
        if !entries.iter().any(|e| origin(&e.url) == origin(&url)) {
            return Err(ImportError::Invalid(format!(
                "the recording has no request to {}: its hosts are {}",
                origin(&url),
                hosts(entries).join(", ")
            )));
        }
        return Ok(origin(&url));
    }
    let page = entries
        .iter()
        .filter(|e| matches!(e.url.scheme(), "http" | "https"))
        .find(|e| e.resource_type.as_deref() == Some("document") || e.mime.contains("html"))
        .or_else(|| {
            entries
                .iter()
                .find(|e| matches!(e.url.scheme(), "http" | "https"))
        })
        .ok_or_else(|| ImportError::Invalid("the recording has no http(s) request".into()))?;
    Ok(origin(&page.url))
}

fn hosts(entries: &[Entry]) -> Vec<String> {
    let mut hosts: Vec<String> = entries.iter().map(|e| origin(&e.url)).collect();
    hosts.sort();
    hosts.dedup();
    hosts
}

/// application/x-www-form-urlencoded encoding of one name or value.
pub fn form_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'*' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Decodes application/x-www-form-urlencoded pairs.
pub fn form_pairs(text: &str) -> Vec<(String, String)> {
    url::form_urlencoded::parse(text.as_bytes())
        .map(|(n, v)| (n.into_owned(), v.into_owned()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(method: &str, url: &str, status: u16, mime: &str) -> serde_json::Value {
        serde_json::json!({
            "startedDateTime": "2026-11-23T10:00:00.000Z",
            "time": 12.5,
            "request": {"method": method, "url": url, "headers": []},
            "response": {"status": status, "headers": [], "content": {"mimeType": mime, "text": ""}},
        })
    }

    #[test]
    fn static_files_other_hosts_and_failed_requests_are_left_out() {
        let mut redirect = entry("POST", "http://site/login", 303, "text/html");
        redirect["response"]["headers"] =
            serde_json::json!([{"name": "Location", "value": "/home#top"}]);
        let har = serde_json::json!({"log": {"entries": [
            entry("GET", "http://site/", 200, "text/html"),
            entry("GET", "http://site/style.css", 200, "text/css"),
            entry("GET", "http://cdn.example/lib.js", 200, "application/javascript"),
            redirect,
            entry("GET", "http://site/home", 200, "text/html"),
            entry("GET", "http://site/gone", 0, ""),
            entry("GET", "data:image/png;base64,AAAA", 200, "image/png"),
        ]}});
        let entries = read(&har.to_string()).unwrap();
        let base = base_origin(&entries, None).unwrap();
        assert_eq!(base, "http://site");
        let (steps, left) = steps(entries.clone(), &base, false);
        assert_eq!(steps.len(), 2, "{steps:?}");
        assert_eq!(steps[1].hops.len(), 2, "the redirect is one step");
        assert!(!steps[1].unfollowed_redirect);
        assert_eq!(left.static_files, 1);
        assert_eq!(left.other_hosts, vec![("cdn.example".to_string(), 1)]);
        assert_eq!(left.no_response, 1);
        assert_eq!(left.not_http, 1);
        let (all, _) = super::steps(entries, &base, true);
        assert_eq!(all.len(), 3, "--include-static keeps the stylesheet");
    }

    #[test]
    fn bad_files_are_named() {
        let e = read("{").unwrap_err().to_string();
        assert!(e.contains("not valid JSON"), "{e}");
        let e = read("{\"log\": {}}").unwrap_err().to_string();
        assert!(e.contains("no log.entries"), "{e}");
        let e = read("{\"log\": {\"entries\": []}}")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no requests"), "{e}");
        let e = read(
            "{\"log\": {\"entries\": [{\"request\": {\"url\": \"nope\"}, \"response\": {}}]}}",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("entry 1: 'nope' is not a URL"), "{e}");
        let entries = read(
            &serde_json::json!({"log": {"entries": [entry("GET", "http://a/", 200, "text/html")]}})
                .to_string(),
        )
        .unwrap();
        let e = base_origin(&entries, Some("http://b"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no request to http://b: its hosts are http://a"),
            "{e}"
        );
    }

    #[test]
    fn times_are_read() {
        let t = parse_time("2026-11-23T10:00:01.500Z").unwrap();
        let u = parse_time("2026-11-23T10:00:00.000Z").unwrap();
        assert!((t - u - 1.5).abs() < 1e-9);
    }
}
