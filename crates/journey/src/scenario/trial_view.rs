//! How `scenario try` shows an exchange: the request's method, URL and
//! form fields (every header with -v, Authorization hidden), the
//! response's status, time, cookies set and redirect target, long values
//! cut on screen (the saved files keep everything).

use std::io::Write;
use std::time::Duration;

/// A request's body or a response's header value is cut to this many
/// characters on screen (the saved files keep everything).
pub const SHOWN: usize = 200;

/// `  POST http://host/path` and the form's fields (or the body), and with
/// -v every header.
/// A form field or data column that holds a password by its name
/// (`password`, `passwd`, `pwd`, `pass`): not shown on the terminal. A
/// token is shown: correlating it is what a trial is for.
pub fn password_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name.contains("pass") || name.contains("pwd")
}

pub fn write_request(out: &mut dyn Write, request: &[u8], url: &str, verbose: bool) {
    let (head, body) = split_head(request);
    let head = String::from_utf8_lossy(head);
    let mut lines = head.lines();
    let method = lines
        .next()
        .and_then(|l| l.split(' ').next())
        .unwrap_or("?");
    let _ = writeln!(out, "  {method} {url}");
    let headers: Vec<&str> = lines.filter(|l| !l.is_empty()).collect();
    if verbose {
        for h in &headers {
            let _ = writeln!(out, "    > {}", cut(&hide_authorization(h)));
        }
    }
    if body.is_empty() {
        return;
    }
    let form = headers.iter().any(|h| {
        h.to_ascii_lowercase()
            .starts_with("content-type: application/x-www-form-urlencoded")
    });
    if form {
        let fields: Vec<String> = String::from_utf8_lossy(body)
            .split('&')
            .map(|pair| {
                let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
                let name = form_decode(name);
                // A password field is not shown (a terminal's scrollback,
                // a CI log): its name says it is one.
                let value = if password_name(&name) && !value.is_empty() {
                    "***".to_string()
                } else {
                    quoted(&form_decode(value))
                };
                format!("{name}={value}")
            })
            .collect();
        let _ = writeln!(out, "    form: {}", fields.join(" "));
    } else {
        let _ = writeln!(out, "    body: {}", cut(&String::from_utf8_lossy(body)));
    }
}

/// `  303 See Other in 2.1 ms` with cookies set and where it redirects;
/// with -v every header.
pub fn write_response(
    out: &mut dyn Write,
    status: u16,
    head: &[u8],
    elapsed: Duration,
    verbose: bool,
) {
    if status == 0 {
        let _ = writeln!(out, "  <- no response after {}", millis(elapsed));
        return;
    }
    let text = String::from_utf8_lossy(head);
    let mut lines = text.lines();
    let status_line = lines.next().unwrap_or_default();
    let reason = status_line.splitn(3, ' ').nth(2).unwrap_or("");
    let _ = writeln!(out, "  <- {status} {reason} in {}", millis(elapsed));
    for line in lines.filter(|l| !l.is_empty()) {
        let lower = line.to_ascii_lowercase();
        if verbose {
            let _ = writeln!(out, "    < {}", cut(line));
        } else if lower.starts_with("set-cookie:") || lower.starts_with("location:") {
            let _ = writeln!(out, "    {}", cut(line));
        }
    }
}

/// `0.84 ms`, `12.3 ms`, `1.24 s`.
pub fn millis(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms >= 1000.0 {
        format!("{:.2} s", ms / 1000.0)
    } else if ms >= 10.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.2} ms")
    }
}

/// `812 B`, `5.1 KB`, `2.3 MB` (powers of 1000).
pub fn bytes(n: u64) -> String {
    match n {
        0..1_000 => format!("{n} B"),
        1_000..1_000_000 => format!("{:.1} KB", n as f64 / 1e3),
        _ => format!("{:.1} MB", n as f64 / 1e6),
    }
}

fn split_head(bytes: &[u8]) -> (&[u8], &[u8]) {
    match bytes.windows(4).position(|w| w == b"\r\n\r\n") {
        Some(i) => (&bytes[..i], &bytes[i + 4..]),
        None => (bytes, &[]),
    }
}

fn hide_authorization(line: &str) -> String {
    let lower = line.to_ascii_lowercase();
    if lower.starts_with("authorization:") || lower.starts_with("proxy-authorization:") {
        let name = line.split(':').next().unwrap_or("");
        format!("{name}: [hidden]")
    } else {
        line.to_string()
    }
}

fn cut(text: &str) -> String {
    if text.chars().count() <= SHOWN {
        return text.to_string();
    }
    let kept: String = text.chars().take(SHOWN).collect();
    format!("{kept}… ({} characters)", text.chars().count())
}

/// A value in quotes, cut on screen.
pub fn quoted(value: &str) -> String {
    format!("\"{}\"", cut(value))
}

/// application/x-www-form-urlencoded decoding: '+' is a space, %XX a byte.
fn form_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = |b: u8| (b as char).to_digit(16);
                match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                    (Some(high), Some(low)) => {
                        out.push((high * 16 + low) as u8);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_fields_are_decoded_for_display() {
        assert_eq!(form_decode("a+b%21%zz%4"), "a b!%zz%4");
        assert_eq!(form_decode("%é%"), "%é%");
        assert_eq!(form_decode("message%5Btext%5D"), "message[text]");
        assert_eq!(form_decode("%C3%A9"), "é");
    }

    #[test]
    fn long_values_are_cut_on_screen() {
        let long = "x".repeat(SHOWN + 5);
        assert!(cut(&long).ends_with(&format!("… ({} characters)", SHOWN + 5)));
        assert_eq!(cut("short"), "short");
        assert_eq!(
            hide_authorization("Authorization: Basic c2VjcmV0"),
            "Authorization: [hidden]"
        );
    }

    #[test]
    fn a_form_post_shows_its_fields_and_hides_authorization() {
        let request = b"POST /login HTTP/1.1\r\nAuthorization: Basic c2VjcmV0\r\n\
Content-Type: application/x-www-form-urlencoded\r\n\r\nuser=ann+b&pw=%21x";
        let mut out = Vec::new();
        write_request(&mut out, request, "http://h/login", true);
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "  POST http://h/login\n    > Authorization: [hidden]\n    \
> Content-Type: application/x-www-form-urlencoded\n    form: user=\"ann b\" pw=\"!x\"\n"
        );
    }

    /// WordPress's login form: its password field (`pwd`) is not shown.
    #[test]
    fn a_forms_password_field_is_not_shown() {
        let request = b"POST /wp-login.php HTTP/1.1\r\n\
Content-Type: application/x-www-form-urlencoded\r\n\r\nlog=student01&pwd=Pw-s3cret&testcookie=1";
        let mut out = Vec::new();
        write_request(&mut out, request, "http://h/wp-login.php", false);
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("form: log=\"student01\" pwd=*** testcookie=\"1\""),
            "{text}"
        );
        assert!(!text.contains("s3cret"), "{text}");
    }
}
