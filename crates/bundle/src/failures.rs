//! Failed exchanges kept in a bundle (`--save-failures N`): the first N of
//! each label, each as two files under `failures/` — the exchange in words
//! (why it failed, the request as sent, the response's head) and the
//! response's body as received (at most [`BODY_LIMIT`] bytes) — and one
//! line per failure in `failures/index.jsonl`, which reports read.

use crate::sample::ErrorKind;
use crate::{invalid, io_error, read_error, BundleError};
use serde::{Deserialize, Serialize};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

pub const FAILURES_DIR: &str = "failures";
pub const FAILURES_INDEX: &str = "failures/index.jsonl";
/// The most of a failed response's body kept.
pub const BODY_LIMIT: usize = 64 * 1024;
/// Failures are kept only while the disk has this much free beyond them:
/// the run's own files come first.
pub const DISK_RESERVE: u64 = 64 << 20;

/// Bytes free for this process on the filesystem of `path`; `None` when
/// it cannot be told.
fn free_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs writes into the zeroed struct; the path is NUL-terminated.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut stat) } != 0 {
        return None;
    }
    Some(stat.f_bavail as u64 * stat.f_frsize as u64)
}

/// One failed exchange as a worker captured it.
#[derive(Debug, Clone, Default)]
pub struct FailedExchange {
    pub label: String,
    pub vu: u32,
    /// The VU's iteration (1-based; 0 outside journeys).
    pub iteration: u64,
    /// Seconds from the start of the run to the end of the exchange.
    pub at_s: f64,
    pub error: Option<ErrorKind>,
    /// The failed check's name.
    pub check: Option<String>,
    /// Why, in words, where the error kind alone does not say it.
    pub detail: Option<String>,
    /// 0 when no response came.
    pub status: u16,
    /// The last request as sent (after any redirects): line, headers, body.
    pub request: Vec<u8>,
    /// The response's status line and headers (empty when none came).
    pub response_head: Vec<u8>,
    /// The body's first [`BODY_LIMIT`] bytes, decoded when it was
    /// compressed and whole.
    pub body: Vec<u8>,
    /// More body came than was kept.
    pub body_truncated: bool,
    /// The body's Content-Encoding when it is kept as received (compressed).
    pub body_encoding: Option<String>,
}

/// One line of `failures/index.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailureEntry {
    /// 1, 2, ... in the order the failures were written.
    pub n: u32,
    pub label: String,
    pub vu: u32,
    pub iteration: u64,
    pub at_s: f64,
    /// The error kind's name (`check`, `http_5xx`, `timeout`, ...).
    pub error: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    pub status: u16,
    /// The exchange in words, relative to the bundle.
    pub exchange: String,
    /// The body file, relative to the bundle; none when no body came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    pub body_bytes: u64,
    pub body_truncated: bool,
}

/// Writes failures into a bundle as they come; the directory is made with
/// the first one, so a run without failures has none.
pub struct FailureWriter {
    bundle: PathBuf,
    index: Option<File>,
    written: u32,
}

impl FailureWriter {
    pub fn new(bundle: &Path) -> FailureWriter {
        FailureWriter {
            bundle: bundle.to_path_buf(),
            index: None,
            written: 0,
        }
    }

    /// How many failures were written.
    pub fn written(&self) -> u32 {
        self.written
    }

    pub fn write(&mut self, failure: &FailedExchange) -> Result<FailureEntry, BundleError> {
        let dir = self.bundle.join(FAILURES_DIR);
        let fail = io_error(&dir);
        if self.index.is_none() {
            fs::create_dir_all(&dir).map_err(fail)?;
            let index = OpenOptions::new()
                .create(true)
                .append(true)
                .open(self.bundle.join(FAILURES_INDEX))
                .map_err(fail)?;
            self.index = Some(index);
        }
        let needed = (failure.body.len() + failure.request.len() + 4096) as u64 + DISK_RESERVE;
        if free_bytes(&dir).is_some_and(|free| free < needed) {
            return Err(fail(std::io::Error::other(format!(
                "less than {} MiB would be left free on the disk, and the run's own files come first",
                DISK_RESERVE >> 20
            ))));
        }
        let n = self.written + 1;
        let stem = format!("{n:04}-{}", slug(&failure.label));
        let exchange = format!("{FAILURES_DIR}/{stem}.txt");
        let body = (!failure.body.is_empty()).then(|| {
            format!(
                "{FAILURES_DIR}/{stem}.body.{}",
                extension(&failure.response_head, failure.body_encoding.as_deref())
            )
        });
        let written =
            fs::write(self.bundle.join(&exchange), describe(failure)).and_then(|()| match &body {
                Some(name) => fs::write(self.bundle.join(name), &failure.body),
                None => Ok(()),
            });
        if let Err(e) = written {
            // No half-written file is left for a reader to trip on.
            let _ = fs::remove_file(self.bundle.join(&exchange));
            if let Some(name) = &body {
                let _ = fs::remove_file(self.bundle.join(name));
            }
            return Err(fail(e));
        }
        let entry = FailureEntry {
            n,
            label: failure.label.clone(),
            vu: failure.vu,
            iteration: failure.iteration,
            at_s: (failure.at_s * 1000.0).round() / 1000.0,
            error: failure.error.map_or("none", ErrorKind::name).to_string(),
            check: failure.check.clone(),
            detail: failure.detail.clone(),
            status: failure.status,
            exchange,
            body,
            body_bytes: failure.body.len() as u64,
            body_truncated: failure.body_truncated,
        };
        let mut line = serde_json::to_vec(&entry).expect("an entry serialises");
        line.push(b'\n');
        let index = self.index.as_mut().expect("opened above");
        index.write_all(&line).map_err(fail)?;
        self.written = n;
        Ok(entry)
    }
}

/// The failures a bundle kept (none when it has no index).
pub fn read_index(bundle: &Path) -> Result<Vec<FailureEntry>, BundleError> {
    let path = bundle.join(FAILURES_INDEX);
    let text = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(read_error(&path)(e)),
    };
    let mut entries = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let entry: FailureEntry = match serde_json::from_str(line) {
            Ok(entry) => entry,
            // The last line of a run killed (or out of disk) while writing it.
            Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => break,
            Err(e) => {
                return Err(invalid(
                    &path,
                    format!("line {}: not a failure entry ({e})", i + 1),
                ))
            }
        };
        // Paths come from the file: keep them inside the bundle.
        let inside = |p: &str| p.starts_with("failures/") && !p.contains("..");
        if !inside(&entry.exchange) || entry.body.as_deref().is_some_and(|b| !inside(b)) {
            return Err(invalid(
                &path,
                format!("line {}: a path outside failures/", i + 1),
            ));
        }
        entries.push(entry);
    }
    Ok(entries)
}

/// The exchange in words: why it failed, the request, the response head.
pub fn describe(f: &FailedExchange) -> Vec<u8> {
    let mut out = Vec::with_capacity(f.request.len() + f.response_head.len() + 512);
    let why = match (&f.check, &f.detail, f.error) {
        (Some(check), _, _) => format!("check failed: {check}"),
        (None, Some(detail), Some(kind)) => format!("{}: {detail}", kind.name()),
        (None, None, Some(kind)) => kind.describe().to_string(),
        (None, detail, None) => detail.clone().unwrap_or_default(),
    };
    let _ = writeln!(out, "# {} — {why}", f.label);
    let _ = write!(out, "# VU {}, iteration {}", f.vu, f.iteration);
    if f.at_s > 0.0 {
        let _ = write!(out, ", {:.3} s into the run", f.at_s);
    }
    out.push(b'\n');
    let _ = writeln!(out, "\n## Request (as sent; Authorization values hidden)\n");
    out.extend_from_slice(&redact(&f.request));
    if !f.request.ends_with(b"\n") {
        out.push(b'\n');
    }
    let _ = writeln!(out, "\n## Response\n");
    if f.response_head.is_empty() {
        let _ = writeln!(out, "(no response)");
    } else {
        out.extend_from_slice(&f.response_head);
        let body = match (&f.body_encoding, f.body_truncated) {
            _ if f.body.is_empty() => String::new(),
            (Some(enc), _) => format!("{} bytes kept as received ({enc}-encoded)", f.body.len()),
            (None, true) => format!("first {} bytes kept", f.body.len()),
            (None, false) => format!("{} bytes", f.body.len()),
        };
        if body.is_empty() {
            let _ = writeln!(out, "(no body)");
        } else {
            let _ = writeln!(out, "(body: {body}, in the .body file beside this one)");
        }
    }
    out
}

/// The request with Authorization and Proxy-Authorization values hidden.
fn redact(request: &[u8]) -> Vec<u8> {
    let head_end = memchr_crlf2(request).unwrap_or(request.len());
    let mut out = Vec::with_capacity(request.len());
    for line in request[..head_end].split_inclusive(|&b| b == b'\n') {
        let lower = line.to_ascii_lowercase();
        if lower.starts_with(b"authorization:") || lower.starts_with(b"proxy-authorization:") {
            let colon = line.iter().position(|&b| b == b':').unwrap_or(0);
            out.extend_from_slice(&line[..=colon]);
            out.extend_from_slice(b" [hidden]\r\n");
        } else {
            out.extend_from_slice(line);
        }
    }
    out.extend_from_slice(&request[head_end..]);
    out
}

fn memchr_crlf2(bytes: &[u8]) -> Option<usize> {
    bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| i + 4)
}

/// A file name part from a label: letters, digits, '-' and '_'.
pub fn slug(label: &str) -> String {
    let mut out = String::new();
    for c in label.chars() {
        if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
        if out.len() >= 40 {
            break;
        }
    }
    let out = out.trim_matches('-').to_string();
    if out.is_empty() {
        "request".to_string()
    } else {
        out
    }
}

/// The body file's extension from the response's Content-Type, so that it
/// opens in the right program.
pub fn extension(head: &[u8], encoding: Option<&str>) -> &'static str {
    if let Some(enc) = encoding {
        return match enc {
            "gzip" => "gz",
            "br" => "br",
            _ => "bin",
        };
    }
    let text = String::from_utf8_lossy(head).to_ascii_lowercase();
    let content_type = text
        .lines()
        .find_map(|l| l.strip_prefix("content-type:"))
        .unwrap_or("")
        .trim();
    let mime = content_type.split(';').next().unwrap_or("").trim();
    match mime {
        "text/html" | "application/xhtml+xml" => "html",
        "application/json" | "application/problem+json" => "json",
        "text/xml" | "application/xml" => "xml",
        "text/css" => "css",
        "text/javascript" | "application/javascript" => "js",
        m if m.starts_with("text/") => "txt",
        "" => "txt",
        _ => "bin",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(label: &str) -> FailedExchange {
        FailedExchange {
            label: label.to_string(),
            vu: 3,
            iteration: 2,
            at_s: 1.25,
            error: Some(ErrorKind::Check),
            check: Some("logged in".into()),
            status: 200,
            request: b"POST /login HTTP/1.1\r\nHost: x\r\nAuthorization: Basic c2VjcmV0\r\nContent-Length: 3\r\n\r\na=1".to_vec(),
            response_head: b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n".to_vec(),
            body: b"<p>Invalid login</p>".to_vec(),
            ..FailedExchange::default()
        }
    }

    #[test]
    fn failures_are_written_indexed_and_read_back() {
        let dir = std::env::temp_dir().join(format!("headroom-failures-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        assert!(
            read_index(&dir).unwrap().is_empty(),
            "no index, no failures"
        );
        let mut writer = FailureWriter::new(&dir);
        let a = writer.write(&failure("03 login")).unwrap();
        let mut no_response = failure("../../etc/passwd");
        no_response.response_head.clear();
        no_response.body.clear();
        no_response.check = None;
        no_response.error = Some(ErrorKind::Timeout);
        let b = writer.write(&no_response).unwrap();
        assert_eq!(a.exchange, "failures/0001-03-login.txt");
        assert_eq!(a.body.as_deref(), Some("failures/0001-03-login.body.html"));
        assert_eq!(b.exchange, "failures/0002-etc-passwd.txt");
        assert_eq!(b.body, None);
        assert_eq!(read_index(&dir).unwrap(), vec![a.clone(), b]);
        let text = fs::read_to_string(dir.join(&a.exchange)).unwrap();
        assert!(
            text.starts_with("# 03 login — check failed: logged in\n"),
            "{text}"
        );
        assert!(text.contains("Authorization: [hidden]\r\n"), "{text}");
        assert!(!text.contains("c2VjcmV0"), "{text}");
        assert!(text.contains("\r\n\r\na=1"), "the body stays: {text}");
        assert_eq!(
            fs::read(dir.join(a.body.as_ref().unwrap())).unwrap(),
            b"<p>Invalid login</p>"
        );
        let text = fs::read_to_string(dir.join("failures/0002-etc-passwd.txt")).unwrap();
        assert!(text.contains("(no response)"), "{text}");

        let cut = format!("{}\n{{\"n\":2,\"lab", serde_json::to_string(&a).unwrap());
        fs::write(dir.join(FAILURES_INDEX), cut).unwrap();
        assert_eq!(
            read_index(&dir).unwrap(),
            vec![a.clone()],
            "a cut last line is left out"
        );
        fs::write(dir.join(FAILURES_INDEX), "{\"n\":1}\n").unwrap();
        let e = read_index(&dir).unwrap_err().to_string();
        assert!(e.contains("line 1: not a failure entry"), "{e}");
        let mut bad = serde_json::to_value(&a).unwrap();
        bad["exchange"] = "failures/../../x".into();
        fs::write(dir.join(FAILURES_INDEX), format!("{bad}\n")).unwrap();
        let e = read_index(&dir).unwrap_err().to_string();
        assert!(e.contains("outside failures/"), "{e}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn body_files_are_named_by_content_type() {
        let head = |ct: &str| format!("HTTP/1.1 200 OK\r\nContent-Type: {ct}\r\n\r\n");
        assert_eq!(extension(head("application/json").as_bytes(), None), "json");
        assert_eq!(extension(head("text/plain").as_bytes(), None), "txt");
        assert_eq!(extension(head("image/png").as_bytes(), None), "bin");
        assert_eq!(extension(b"HTTP/1.1 500 x\r\n\r\n", None), "txt");
        assert_eq!(extension(head("text/html").as_bytes(), Some("gzip")), "gz");
    }
}
