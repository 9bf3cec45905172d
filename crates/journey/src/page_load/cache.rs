//! A user's browser cache (a private cache in RFC 9111's words): what a
//! returning page load may take without asking, what it must revalidate,
//! and what it fetches again.
//!
//! The rules, as Chromium applies them to a page's resources:
//! - `Cache-Control: no-store` (or `Vary: *`): not kept.
//! - Freshness: `max-age` (a private cache ignores `s-maxage`), else
//!   `Expires` minus `Date`, else, for a response with `Last-Modified` and
//!   a status cacheable by default, a tenth of the time since it was
//!   modified (the heuristic Chromium uses: nginx's static files carry
//!   `Last-Modified` and no `Cache-Control`). Minus `Age`.
//! - `no-cache` (or `Pragma: no-cache` without `Cache-Control`), and any
//!   stale entry: revalidated with `If-None-Match` (its `ETag`) and
//!   `If-Modified-Since` (its `Last-Modified`); without either it is
//!   fetched again. A 304 keeps the entry and takes the new freshness; a
//!   304 to a request without validators is an error (`protocol`).
//! - A `max-age` or `Age` too large to hold, or over 2^31 seconds, counts
//!   as 2^31 seconds (about 68 years; RFC 9111 1.2.2).
//!
//! Entries are keyed by a 64-bit hash of the URL and hold the validators
//! only, so 10,000 users with 40 resources each cost a few megabytes.

use headroom_bundle::sample::ErrorKind;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::time::{Duration, SystemTime};

/// What the cache says about a request for a resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup<'a> {
    /// Fresh: taken from the cache, no request.
    Fresh,
    /// Stale or `no-cache`: ask with these validators (a 304 means the
    /// cached copy is good).
    Revalidate {
        if_none_match: Option<&'a str>,
        if_modified_since: Option<&'a str>,
    },
    /// Not cached (or not revalidatable): fetch it.
    Fetch,
}

#[derive(Debug, Clone)]
struct Entry {
    /// Until when (on the user's clock) it may be used without asking;
    /// `None`: always ask.
    fresh_until: Option<Duration>,
    etag: Option<Box<str>>,
    last_modified: Option<Box<str>>,
}

/// One user's cache. `now` is the user's clock (the time since the user
/// started), so a run's cache behaves the same at any wall-clock time.
#[derive(Debug, Clone, Default)]
pub struct Cache {
    entries: HashMap<u64, Entry>,
}

/// The headers of a response that matter to a cache.
#[derive(Debug, Clone, Copy, Default)]
pub struct Headers<'a> {
    pub cache_control: Option<&'a str>,
    pub pragma: Option<&'a str>,
    pub expires: Option<&'a str>,
    pub date: Option<&'a str>,
    pub age: Option<&'a str>,
    pub etag: Option<&'a str>,
    pub last_modified: Option<&'a str>,
    pub vary: Option<&'a str>,
}

impl<'a> Headers<'a> {
    /// Picks the cache's headers out of a response's (names in any case).
    pub fn from_pairs(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Headers<'a> {
        let mut h = Headers::default();
        for (name, value) in pairs {
            let slot = match name.to_ascii_lowercase().as_str() {
                "cache-control" => &mut h.cache_control,
                "pragma" => &mut h.pragma,
                "expires" => &mut h.expires,
                "date" => &mut h.date,
                "age" => &mut h.age,
                "etag" => &mut h.etag,
                "last-modified" => &mut h.last_modified,
                "vary" => &mut h.vary,
                _ => continue,
            };
            *slot = Some(value.trim());
        }
        h
    }
}

/// The directives of a `Cache-Control` value that a private cache obeys.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Directives {
    no_store: bool,
    no_cache: bool,
    max_age: Option<u64>,
}

fn directives(value: &str) -> Directives {
    let mut d = Directives::default();
    for part in value.split(',') {
        let (name, argument) = match part.split_once('=') {
            Some((n, a)) => (n.trim(), Some(a.trim().trim_matches('"'))),
            None => (part.trim(), None),
        };
        match name.to_ascii_lowercase().as_str() {
            "no-store" => d.no_store = true,
            // `no-cache="Set-Cookie"` names fields; a browser revalidates anyway.
            "no-cache" => d.no_cache = true,
            "max-age" => {
                // An invalid max-age makes the response stale (RFC 9111 4.2.1).
                let seconds = argument.and_then(delta_seconds).unwrap_or(0);
                // The first max-age counts.
                d.max_age.get_or_insert(seconds);
            }
            _ => {}
        }
    }
    d
}

/// The longest delta-seconds a cache takes: a larger or overflowing value
/// counts as 2^31 seconds (RFC 9111 1.2.2), about 68 years.
const MOST_DELTA_SECONDS: u64 = 1 << 31;

/// A delta-seconds value (`max-age`, `Age`): digits only, at most
/// [`MOST_DELTA_SECONDS`]; `None` when it is not a number.
fn delta_seconds(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(
        text.parse::<u64>()
            .map_or(MOST_DELTA_SECONDS, |s| s.min(MOST_DELTA_SECONDS)),
    )
}

/// Statuses a cache may keep with heuristic freshness (RFC 9110 15.1).
fn heuristically_cacheable(status: u16) -> bool {
    matches!(
        status,
        200 | 203 | 204 | 206 | 300 | 301 | 308 | 404 | 405 | 410 | 414 | 501
    )
}

fn date(value: Option<&str>) -> Option<SystemTime> {
    httpdate::parse_http_date(value?).ok()
}

/// How long a response may be used without asking (RFC 9111 4.2.1, 4.2.2),
/// before its `Age`; `None` when it must always be revalidated.
fn lifetime(status: u16, headers: &Headers, d: &Directives) -> Option<Duration> {
    if d.no_cache {
        return None;
    }
    if let Some(seconds) = d.max_age {
        return Some(Duration::from_secs(seconds));
    }
    if let Some(expires) = headers.expires {
        // An invalid Expires (e.g. "0") means already expired.
        let Some(expires) = date(Some(expires)) else {
            return Some(Duration::ZERO);
        };
        let served = date(headers.date).unwrap_or_else(SystemTime::now);
        return Some(expires.duration_since(served).unwrap_or(Duration::ZERO));
    }
    if heuristically_cacheable(status) {
        if let Some(modified) = date(headers.last_modified) {
            let served = date(headers.date).unwrap_or_else(SystemTime::now);
            let age = served.duration_since(modified).unwrap_or(Duration::ZERO);
            return Some(age / 10);
        }
    }
    Some(Duration::ZERO)
}

fn key(url: &str) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    url.hash(&mut hasher);
    hasher.finish()
}

impl Cache {
    pub fn new() -> Cache {
        Cache::default()
    }

    /// Resources held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// What to do for `url` at `now` on the user's clock.
    pub fn lookup(&self, url: &str, now: Duration) -> Lookup<'_> {
        let Some(entry) = self.entries.get(&key(url)) else {
            return Lookup::Fetch;
        };
        if entry.fresh_until.is_some_and(|until| now < until) {
            return Lookup::Fresh;
        }
        if entry.etag.is_none() && entry.last_modified.is_none() {
            return Lookup::Fetch;
        }
        Lookup::Revalidate {
            if_none_match: entry.etag.as_deref(),
            if_modified_since: entry.last_modified.as_deref(),
        }
    }

    /// Takes a response that arrived at `now` for a request to `url`:
    /// keeps it (a 2xx or other cacheable status), refreshes it (a 304), or
    /// drops it (no-store, `Vary: *`, an error status the cache may not
    /// keep).
    pub fn store(&mut self, url: &str, status: u16, headers: &Headers, now: Duration) {
        let k = key(url);
        let mut d = headers.cache_control.map(directives).unwrap_or_default();
        if headers.cache_control.is_none()
            && headers
                .pragma
                .is_some_and(|p| p.to_ascii_lowercase().contains("no-cache"))
        {
            d.no_cache = true;
        }
        let vary_all = headers
            .vary
            .is_some_and(|v| v.split(',').any(|f| f.trim() == "*"));
        if d.no_store || vary_all {
            self.entries.remove(&k);
            return;
        }
        if status == 304 {
            if let Some(entry) = self.entries.get_mut(&k) {
                // The 304 confirms the kept response (a 200): its
                // heuristic runs from the kept Last-Modified if it sent none.
                let previous = entry.last_modified.clone();
                let merged = Headers {
                    last_modified: headers.last_modified.or(previous.as_deref()),
                    ..*headers
                };
                entry.fresh_until = fresh_until(200, &merged, &d, now);
                if let Some(etag) = headers.etag {
                    entry.etag = Some(etag.into());
                }
                if let Some(modified) = headers.last_modified {
                    entry.last_modified = Some(modified.into());
                }
            }
            return;
        }
        let explicit = d.max_age.is_some() || headers.expires.is_some() || d.no_cache;
        if !(heuristically_cacheable(status) || (explicit && (200..300).contains(&status))) {
            self.entries.remove(&k);
            return;
        }
        let entry = Entry {
            fresh_until: fresh_until(status, headers, &d, now),
            etag: headers.etag.map(Into::into),
            last_modified: headers.last_modified.map(Into::into),
        };
        // Never fresh and nothing to revalidate with: of no use.
        let useless = entry.fresh_until.is_none_or(|until| until <= now)
            && entry.etag.is_none()
            && entry.last_modified.is_none();
        if useless {
            self.entries.remove(&k);
        } else {
            self.entries.insert(k, entry);
        }
    }
}

/// The error of a `304 Not Modified` that answered a request sent without
/// validators (neither `If-None-Match` nor `If-Modified-Since`): it
/// confirms a copy the user does not have (RFC 9110 15.4.5: a server sends
/// 304 only to a conditional request), so the resource did not load. A
/// protocol error, with the reason said.
pub fn unasked_not_modified(status: u16, conditional: bool) -> Option<(ErrorKind, &'static str)> {
    (status == 304 && !conditional).then_some((
        ErrorKind::Protocol,
        "304 Not Modified to a request without If-None-Match or If-Modified-Since",
    ))
}

fn fresh_until(status: u16, headers: &Headers, d: &Directives, now: Duration) -> Option<Duration> {
    let lifetime = lifetime(status, headers, d)?;
    let age = headers
        .age
        .and_then(delta_seconds)
        .map(Duration::from_secs)
        .unwrap_or(Duration::ZERO);
    Some(now + lifetime.saturating_sub(age))
}

#[cfg(test)]
#[path = "cache_tests.rs"]
mod tests;
