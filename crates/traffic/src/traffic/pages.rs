//! The pages of a log by pattern ([`super::pattern::fold`]): how often each
//! was asked for, how often as a page a user could ask for again (a GET
//! answered 2xx or 304), how often within a second of the session's page before
//! (loaded with a page: a frame, a style sheet served by a script), and
//! the requests themselves that a workload may send again: at most
//! [`MAX_EXAMPLES`] a pattern, none that carries a secret
//! ([`carries_secret`]).

use std::collections::HashMap;

/// The most distinct requests kept a pattern (the most asked of the first
/// ones seen); the rest are counted in their pattern.
pub const MAX_EXAMPLES: usize = 200;

/// The longest request kept (nginx's default buffer for a request line).
pub const MAX_TARGET: usize = 8192;
/// Distinct patterns kept: past twice as many, the rarer ones are folded
/// into one ([`PagePattern::folded`]), so a log of a million distinct
/// paths is held in bounded memory.
pub const MAX_PATTERNS: usize = 2000;
/// Bytes of kept requests, all patterns together; past them, requests are
/// counted, not kept.
const EXAMPLE_BYTES: usize = 32 << 20;

/// Query keys whose values are secrets, whatever they look like.
const SECRET_KEYS: &[&str] = &[
    "sesskey",
    "token",
    "access_token",
    "auth",
    "key",
    "api_key",
    "apikey",
    "password",
    "pass",
    "pwd",
    "secret",
    "session",
    "sid",
    "signature",
    "sig",
    "code",
    "nonce",
    "state",
    "ticket",
    "_wpnonce",
];

/// One pattern's requests.
#[derive(Debug, Clone, Default)]
pub struct PagePattern {
    pub pattern: String,
    /// Requests for it (every method and status).
    pub count: u64,
    /// GETs answered 2xx or 304: pages a user can ask for again.
    pub replayable: u64,
    /// Of those, asked within a second of the session's page before.
    pub quick: u64,
    /// Of those, carrying a secret (a token, a session key): never kept.
    pub secret: u64,
    /// Of those, longer than [`MAX_TARGET`]: not kept.
    pub long: u64,
    /// Kept requests (path and query as sent) with their counts.
    pub examples: HashMap<String, u64>,
    /// The rarer patterns this one holds, folded together (0: a pattern of
    /// its own).
    pub folded: u64,
}

impl PagePattern {
    /// The share of its replayable requests that came within a second of
    /// the page before: near 1 for what a page loads (a frame, a style
    /// sheet a script serves), near 0 for pages users click.
    pub fn quick_share(&self) -> f64 {
        if self.replayable == 0 {
            0.0
        } else {
            self.quick as f64 / self.replayable as f64
        }
    }

    /// The kept requests, most asked first (ties by text).
    pub fn examples_by_count(&self) -> Vec<(&str, u64)> {
        let mut examples: Vec<(&str, u64)> = self
            .examples
            .iter()
            .map(|(target, n)| (target.as_str(), *n))
            .collect();
        examples.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        examples
    }
}

/// The page patterns of a log as they are counted.
#[derive(Debug, Default)]
pub struct PageCounts {
    patterns: HashMap<String, PagePattern>,
    /// The rarer patterns, folded together.
    other: PagePattern,
    example_bytes: usize,
}

/// What one page request was.
pub struct PageRequest<'a> {
    pub target: &'a [u8],
    pub get: bool,
    pub status: u16,
    /// Asked within a second of the session's page before.
    pub quick: bool,
}

impl PageCounts {
    /// Counts a page request; whether a workload may send it again (a GET
    /// answered 2xx or 304, short, without a secret).
    pub fn add(&mut self, pattern: String, request: &PageRequest<'_>) -> bool {
        if self.patterns.len() >= 2 * MAX_PATTERNS && !self.patterns.contains_key(&pattern) {
            self.fold_rarer();
        }
        let entry = self
            .patterns
            .entry(pattern)
            .or_insert_with_key(|pattern| PagePattern {
                pattern: pattern.clone(),
                ..PagePattern::default()
            });
        entry.count += 1;
        // A page answered 304 is one the browser held and asked about
        // again: a view as much as a 200.
        if !(request.get && ((200..300).contains(&request.status) || request.status == 304)) {
            return false;
        }
        entry.replayable += 1;
        if request.quick {
            entry.quick += 1;
        }
        if request.target.len() > MAX_TARGET {
            entry.long += 1;
            return false;
        }
        let Ok(target) = std::str::from_utf8(request.target) else {
            entry.secret += 1;
            return false;
        };
        if carries_secret(target) {
            entry.secret += 1;
            return false;
        }
        if let Some(n) = entry.examples.get_mut(target) {
            *n += 1;
        } else if entry.examples.len() < MAX_EXAMPLES && self.example_bytes < EXAMPLE_BYTES {
            self.example_bytes += target.len();
            entry.examples.insert(target.to_string(), 1);
        }
        true
    }

    /// Folds all but the [`MAX_PATTERNS`] most asked patterns into one.
    fn fold_rarer(&mut self) {
        let mut counts: Vec<u64> = self.patterns.values().map(|p| p.count).collect();
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let least_kept = counts[MAX_PATTERNS - 1];
        let mut kept = 0;
        let rarer: Vec<String> = self
            .patterns
            .iter()
            .filter(|(_, p)| {
                // Of equal counts at the edge, the first met are kept.
                let keep = p.count > least_kept || (p.count == least_kept && kept < MAX_PATTERNS);
                kept += usize::from(keep);
                !keep
            })
            .map(|(k, _)| k.clone())
            .collect();
        for key in rarer {
            let Some(p) = self.patterns.remove(&key) else {
                continue;
            };
            self.example_bytes -= p.examples.keys().map(String::len).sum::<usize>();
            let other = &mut self.other;
            other.count += p.count;
            other.replayable += p.replayable;
            other.quick += p.quick;
            other.secret += p.secret;
            other.long += p.long;
            other.folded += 1 + p.folded;
        }
    }

    /// Every pattern, most asked first (ties by text), the rarer ones
    /// folded together last.
    pub fn finish(self) -> Vec<PagePattern> {
        let mut patterns: Vec<PagePattern> = self.patterns.into_values().collect();
        patterns.sort_by(|a, b| {
            b.count
                .cmp(&a.count)
                .then_with(|| a.pattern.cmp(&b.pattern))
        });
        if self.other.count > 0 {
            patterns.push(PagePattern {
                pattern: format!("(other: {} rarer patterns)", self.other.folded),
                ..self.other
            });
        }
        patterns
    }
}

/// Whether a request's target holds what must not leave the log: a path
/// segment or query value that looks like a token (long, letters with
/// digits), a query key that names a secret (`sesskey`, `token`, ...), or
/// bytes outside printable ASCII (a target as sent is percent-encoded).
pub fn carries_secret(target: &str) -> bool {
    if target.bytes().any(|b| !(0x21..0x7f).contains(&b)) {
        return true;
    }
    let target = target.split('#').next().unwrap_or_default();
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    if path
        .split('/')
        .any(|segment| looks_like_token(segment) || super::pattern::is_address(segment))
    {
        return true;
    }
    query.split('&').filter(|p| !p.is_empty()).any(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = key.to_ascii_lowercase();
        SECRET_KEYS.contains(&key.as_str()) || looks_like_token(value)
    })
}

/// A value of at least 16 characters with both letters and digits, and no
/// word separators (a hash, a session id, a key). A list (escaped commas,
/// bars or colons between its items: MediaWiki's `modules=jquery%2Csite`)
/// is none.
fn looks_like_token(value: &str) -> bool {
    let upper = value.to_ascii_uppercase();
    if ["%2C", "%7C", "%3A"].iter().any(|s| upper.contains(s)) {
        return false;
    }
    let stem = value.split('.').next().unwrap_or(value);
    stem.len() >= 16
        && stem.bytes().any(|b| b.is_ascii_digit())
        && stem.bytes().any(|b| b.is_ascii_alphabetic())
        && !stem.contains('-')
        && !stem.contains("%20")
        && !stem.contains('+')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_told_from_ids() {
        for secret in [
            "/login/logout.php?sesskey=abc",
            "/course/view.php?id=2&token=x",
            "/files/5f2c9a1b7e3d4c6a8b0d/photo",
            "/reset.php?k=9f86d081884c7d659a2feaa0c55ad015",
            "/wp-admin/post.php?_wpnonce=1a2b3c",
            "/caf\u{e9}",
            "/user/alice@example.com/profile",
            "/u/bob%40example.org",
        ] {
            assert!(carries_secret(secret), "{secret}");
        }
        for plain in [
            "/",
            "/course/view.php?id=2",
            "/mod/forum/discuss.php?d=17&parent=3",
            "/2026/11/hello-world-from-the-new-class/",
            "/doku.php?id=wiki%3Asyntax",
            "/index.php?title=Main_Page&action=history",
            "/load.php?lang=en&modules=jquery%2Csite%7Cjquery.client&skin=vector&version=9utu7",
        ] {
            assert!(!carries_secret(plain), "{plain}");
        }
    }

    #[test]
    fn only_gets_answered_2xx_without_secrets_are_kept() {
        let mut counts = PageCounts::default();
        let add = |counts: &mut PageCounts, target: &str, get: bool, status: u16, quick: bool| {
            counts.add(
                super::super::pattern::fold(target.as_bytes()),
                &PageRequest {
                    target: target.as_bytes(),
                    get,
                    status,
                    quick,
                },
            )
        };
        add(&mut counts, "/course/view.php?id=2", true, 200, false);
        add(&mut counts, "/course/view.php?id=2", true, 200, true);
        add(&mut counts, "/course/view.php?id=3", true, 200, false);
        add(&mut counts, "/course/view.php?id=4", true, 303, false);
        add(&mut counts, "/course/view.php?id=3", true, 304, false);
        add(&mut counts, "/course/view.php?id=5", false, 200, false);
        add(
            &mut counts,
            "/course/view.php?id=6&sesskey=q",
            true,
            200,
            false,
        );
        add(&mut counts, "/", true, 200, false);
        let patterns = counts.finish();
        assert_eq!(patterns[0].pattern, "/course/view.php?id=*");
        assert_eq!(patterns[0].count, 6);
        assert_eq!(patterns[0].replayable, 4);
        assert_eq!(patterns[0].quick, 1);
        assert_eq!(patterns[0].secret, 0);
        assert_eq!(
            patterns[0].examples_by_count(),
            vec![("/course/view.php?id=2", 2), ("/course/view.php?id=3", 2)]
        );
        let secret = patterns
            .iter()
            .find(|p| p.pattern == "/course/view.php?id=*&sesskey=*")
            .unwrap();
        assert_eq!((secret.replayable, secret.secret), (1, 1));
        assert!(secret.examples.is_empty());
        // A request longer than nginx's request line is counted, not kept.
        let mut counts = PageCounts::default();
        let long = format!("/search?q={}", "x".repeat(MAX_TARGET));
        add(&mut counts, &long, true, 200, false);
        let patterns = counts.finish();
        assert_eq!((patterns[0].replayable, patterns[0].long), (1, 1));
        assert!(patterns[0].examples.is_empty());
    }
}
