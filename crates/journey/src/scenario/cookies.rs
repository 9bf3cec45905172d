//! A cookie jar per VU, following RFC 6265's storage model: host-only and
//! domain cookies, default paths, path matching, Max-Age over Expires,
//! expired cookies removed, Secure cookies only over HTTPS, longer paths
//! sent first. Limits as browsers apply them (RFC 6265 section 6.1 sets
//! the minimums): a cookie's name and value at most 4096 bytes, 180 cookies
//! per domain and 3000 in all, the oldest evicted first.

use std::time::{Duration, SystemTime};

/// Largest name + value stored (larger cookies are ignored, as in browsers).
pub const MAX_COOKIE_BYTES: usize = 4096;
/// Cookies kept per domain (Chrome and Firefox: 180).
pub const MAX_PER_DOMAIN: usize = 180;
/// Cookies kept in one jar (Chrome: 3000).
pub const MAX_COOKIES: usize = 3000;

#[derive(Debug, Clone)]
struct Cookie {
    name: String,
    value: String,
    domain: String,
    host_only: bool,
    path: String,
    secure: bool,
    expires: Option<SystemTime>,
    created: u64,
}

#[derive(Debug, Default, Clone)]
pub struct CookieJar {
    cookies: Vec<Cookie>,
    counter: u64,
}

fn domain_matches(host: &str, domain: &str) -> bool {
    host == domain
        || (host.len() > domain.len()
            && host.ends_with(domain)
            && host.as_bytes()[host.len() - domain.len() - 1] == b'.'
            && host.parse::<std::net::IpAddr>().is_err())
}

fn path_matches(request_path: &str, cookie_path: &str) -> bool {
    request_path == cookie_path
        || (request_path.starts_with(cookie_path)
            && (cookie_path.ends_with('/')
                || request_path.as_bytes().get(cookie_path.len()) == Some(&b'/')))
}

/// RFC 6265 5.1.4: the directory of the request path.
fn default_path(request_path: &str) -> &str {
    let path = request_path.split('?').next().unwrap_or("/");
    if !path.starts_with('/') {
        return "/";
    }
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

impl CookieJar {
    pub fn clear(&mut self) {
        self.cookies.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.cookies.is_empty()
    }

    /// Stores one `Set-Cookie` header value received for `host` and `path`.
    /// Invalid cookies, and cookies for a domain the host does not belong
    /// to, are ignored (as browsers do).
    pub fn store(&mut self, header: &str, host: &str, request_path: &str, now: SystemTime) {
        let mut parts = header.split(';');
        let Some((name, value)) = parts.next().and_then(|pair| pair.split_once('=')) else {
            return;
        };
        let name = name.trim();
        if name.is_empty() || name.len() + value.trim().len() > MAX_COOKIE_BYTES {
            return;
        }
        let host = host.to_ascii_lowercase();
        let mut cookie = Cookie {
            name: name.to_string(),
            value: value.trim().trim_matches('"').to_string(),
            domain: host.clone(),
            host_only: true,
            path: default_path(request_path).to_string(),
            secure: false,
            expires: None,
            created: 0,
        };
        let mut max_age: Option<i64> = None;
        for attribute in parts {
            let (key, val) = match attribute.split_once('=') {
                Some((k, v)) => (k.trim(), v.trim()),
                None => (attribute.trim(), ""),
            };
            match key.to_ascii_lowercase().as_str() {
                "expires" => {
                    if let Ok(t) = httpdate::parse_http_date(val) {
                        cookie.expires = Some(t);
                    }
                }
                "max-age" => {
                    if let Ok(seconds) = val.parse::<i64>() {
                        max_age = Some(seconds);
                    }
                }
                "domain" => {
                    let domain = val.trim_start_matches('.').to_ascii_lowercase();
                    if !domain.is_empty() {
                        if !domain_matches(&host, &domain) {
                            return;
                        }
                        cookie.domain = domain;
                        cookie.host_only = false;
                    }
                }
                "path" if val.starts_with('/') => cookie.path = val.to_string(),
                "secure" => cookie.secure = true,
                _ => {}
            }
        }
        if let Some(seconds) = max_age {
            cookie.expires = Some(if seconds <= 0 {
                SystemTime::UNIX_EPOCH
            } else {
                now + Duration::from_secs(seconds as u64)
            });
        }
        let existing = self.cookies.iter().position(|c| {
            c.name == cookie.name && c.domain == cookie.domain && c.path == cookie.path
        });
        let expired = cookie.expires.is_some_and(|t| t <= now);
        match (existing, expired) {
            (Some(i), true) => {
                self.cookies.remove(i);
            }
            (Some(i), false) => {
                cookie.created = self.cookies[i].created;
                self.cookies[i] = cookie;
            }
            (None, true) => {}
            (None, false) => {
                self.counter += 1;
                cookie.created = self.counter;
                self.make_room(&cookie.domain, now);
                self.cookies.push(cookie);
                // Longer paths first, then older first (RFC 6265 5.4 step 2).
                self.cookies.sort_by(|a, b| {
                    b.path
                        .len()
                        .cmp(&a.path.len())
                        .then(a.created.cmp(&b.created))
                });
            }
        }
    }

    /// Before a new cookie for `domain` is stored: drops expired cookies
    /// when a limit is reached, then the oldest of that domain (or of the
    /// whole jar) until there is room.
    fn make_room(&mut self, domain: &str, now: SystemTime) {
        let of_domain = |cookies: &[Cookie]| cookies.iter().filter(|c| c.domain == domain).count();
        if of_domain(&self.cookies) < MAX_PER_DOMAIN && self.cookies.len() < MAX_COOKIES {
            return;
        }
        self.cookies.retain(|c| c.expires.is_none_or(|t| t > now));
        while of_domain(&self.cookies) >= MAX_PER_DOMAIN {
            self.remove_oldest(|c| c.domain == domain);
        }
        while self.cookies.len() >= MAX_COOKIES {
            self.remove_oldest(|_| true);
        }
    }

    fn remove_oldest(&mut self, eligible: impl Fn(&Cookie) -> bool) {
        let oldest = self
            .cookies
            .iter()
            .enumerate()
            .filter(|(_, c)| eligible(c))
            .min_by_key(|(_, c)| c.created)
            .map(|(i, _)| i);
        if let Some(i) = oldest {
            self.cookies.remove(i);
        }
    }

    /// How many cookies the jar holds.
    pub fn len(&self) -> usize {
        self.cookies.len()
    }

    /// Appends the `Cookie` header value for a request to `out`; returns
    /// false when no cookie applies.
    pub fn header_value(
        &self,
        host: &str,
        path: &str,
        https: bool,
        now: SystemTime,
        out: &mut String,
    ) -> bool {
        let path = path.split('?').next().unwrap_or("/");
        let mut any = false;
        for c in &self.cookies {
            let host_ok = if c.host_only {
                host.eq_ignore_ascii_case(&c.domain)
            } else {
                domain_matches(&host.to_ascii_lowercase(), &c.domain)
            };
            if !host_ok
                || !path_matches(path, &c.path)
                || (c.secure && !https)
                || c.expires.is_some_and(|t| t <= now)
            {
                continue;
            }
            if any {
                out.push_str("; ");
            }
            out.push_str(&c.name);
            out.push('=');
            out.push_str(&c.value);
            any = true;
        }
        any
    }

    /// The value of the cookie `name` that a request to `host` would carry.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.cookies
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.value.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_as_browsers_apply_them() {
        let now = SystemTime::now();
        let mut jar = CookieJar::default();
        let big = "v".repeat(4096);
        jar.store(&format!("big={big}"), "h", "/", now);
        assert!(jar.is_empty(), "a cookie over 4096 bytes is ignored");
        jar.store(&format!("ok={}", "v".repeat(4000)), "h", "/", now);
        assert_eq!(jar.len(), 1);
        // 50 new 4 KB cookies per response, 10 responses: the jar and the
        // Cookie header stop growing at 180 cookies.
        for response in 0..10 {
            for i in 0..50 {
                jar.store(
                    &format!("c{response}_{i}={}", "x".repeat(4000)),
                    "h",
                    "/",
                    now,
                );
            }
        }
        assert_eq!(jar.len(), MAX_PER_DOMAIN);
        assert_eq!(jar.value("ok"), None, "the oldest went first");
        assert!(jar.value("c9_49").is_some());
        let mut header = String::new();
        jar.header_value("h", "/", false, now, &mut header);
        assert!(header.len() < 180 * 4020, "{}", header.len());
        // Other domains have their own 180, up to 3000 in all.
        for d in 0..20 {
            for i in 0..180 {
                jar.store(&format!("n{i}=1"), &format!("d{d}.example"), "/", now);
            }
        }
        assert_eq!(jar.len(), MAX_COOKIES);
    }

    fn header(jar: &CookieJar, host: &str, path: &str, https: bool) -> String {
        let mut out = String::new();
        jar.header_value(host, path, https, SystemTime::now(), &mut out);
        out
    }

    #[test]
    fn rfc6265_rules() {
        let now = SystemTime::now();
        let mut jar = CookieJar::default();
        jar.store(
            "MoodleSession=abc; path=/; HttpOnly",
            "lms.example",
            "/login/index.php",
            now,
        );
        jar.store("dir=1", "lms.example", "/course/view.php", now); // default path /course
        jar.store("wide=1; Domain=.example", "lms.example", "/", now);
        jar.store("alien=1; Domain=other.org", "lms.example", "/", now); // rejected
        jar.store("sec=1; Secure", "lms.example", "/", now);
        assert_eq!(
            header(&jar, "lms.example", "/course/view.php?id=2", false),
            "dir=1; MoodleSession=abc; wide=1"
        );
        assert_eq!(
            header(&jar, "lms.example", "/", true),
            "MoodleSession=abc; wide=1; sec=1"
        );
        assert_eq!(
            header(&jar, "www.example", "/", false),
            "wide=1",
            "domain cookie only"
        );
        assert_eq!(
            header(&jar, "lms.example", "/coursework", false),
            "MoodleSession=abc; wide=1",
            "/course does not match /coursework"
        );
        // replacement and expiry
        jar.store("MoodleSession=def; path=/", "lms.example", "/", now);
        assert_eq!(jar.value("MoodleSession"), Some("def"));
        jar.store(
            "MoodleSession=gone; path=/; Max-Age=0",
            "lms.example",
            "/",
            now,
        );
        assert_eq!(jar.value("MoodleSession"), None);
        jar.store(
            "old=1; Expires=Thu, 01 Jan 1970 00:00:01 GMT",
            "lms.example",
            "/",
            now,
        );
        assert_eq!(jar.value("old"), None);
        jar.store("short=1; Max-Age=1", "lms.example", "/", now);
        let mut out = String::new();
        assert!(!jar.header_value("x.org", "/", false, now, &mut out));
        assert!(jar.header_value(
            "lms.example",
            "/",
            false,
            now + Duration::from_secs(0),
            &mut out
        ));
        out.clear();
        jar.header_value(
            "lms.example",
            "/",
            false,
            now + Duration::from_secs(5),
            &mut out,
        );
        assert!(!out.contains("short"), "expired after Max-Age: {out}");
        assert!(
            default_path("/a/b/c") == "/a/b"
                && default_path("/a") == "/"
                && default_path("x") == "/"
        );
        jar.clear();
        assert!(jar.is_empty());
    }
}
