//! What a log's browsers fetched with each page that a workload's page
//! load may not find in its HTML: the requests a page's scripts make
//! (WordPress's emoji script, a feed a script asks for), learned per page
//! pattern. A resource is learned for a pattern when, of the sessions that
//! viewed the pattern while the resource was not yet theirs, at least
//! [`LEARNED_SHARE`] fetched it naming that page as referer. A session
//! fetches a cached resource once, so it counts once: the workload's page
//! loads fetch it through the user's cache, which decides again as the
//! browsers' did. What cannot be sent (a script's POST, whose body the log
//! does not hold; an error answer; a request carrying a secret) is
//! counted, to be said.

use super::pages::carries_secret;
use super::pattern::fold;
use std::collections::HashMap;

/// The share of a pattern's sessions that must have fetched a resource
/// with it for the workload to fetch it with every load of it.
pub const LEARNED_SHARE: f64 = 0.5;
/// Page patterns and resources told apart at most; past them, their
/// fetches are counted as unlearned.
const MOST_PATTERNS: usize = 2000;
const MOST_RESOURCES: usize = 10_000;
/// Patterns and resources one session keeps track of at most.
const MOST_PER_SESSION: usize = 256;
/// The longest resource target learned.
const MOST_TARGET: usize = 2048;

/// What one open session viewed and fetched, by first time.
#[derive(Debug, Default)]
struct Session {
    /// Pattern id and the time of its first view.
    viewed: Vec<(u32, i64)>,
    /// Resource id, the pattern it named, and the time of its first fetch
    /// naming it: a resource never stored is fetched with every page.
    fetched: Vec<(u32, u32, i64)>,
}

/// Why a page's request is not learned.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Unlearned {
    /// Not a GET: a script's POST (the log holds no body).
    pub not_get: u64,
    /// Answered with an error or a redirect.
    pub errors: u64,
    /// Carried a token or a session key.
    pub secret: u64,
    /// A page's own, not its pattern's: fetched with one page of a
    /// pattern of several, or at a URL that may change (it holds a number
    /// or a query value) fetched only once.
    pub page_specific: u64,
}

/// One request that named a page of its session as referer.
#[derive(Debug, Clone, Copy)]
pub struct Fetch<'a> {
    /// Path and query as sent.
    pub target: &'a [u8],
    /// The page it named, its target hashed.
    pub page: u64,
    pub get: bool,
    pub status: u16,
    pub time: i64,
}

/// A resource with a page pattern, over the sessions closed.
#[derive(Debug, Default, Clone, Copy)]
struct Pair {
    /// Sessions that fetched it naming the pattern.
    fetched: u64,
    /// Sessions that had it before their first view of the pattern (and
    /// did not fetch it with the pattern).
    before: u64,
    /// Its requests naming the pattern, all.
    requests: u64,
    /// The pages (of the pattern) it was fetched with.
    pages: TwoKinds,
}

/// Whether none, one or more than one distinct value (a page's target,
/// hashed) was seen.
#[derive(Debug, Default, Clone, Copy)]
struct TwoKinds {
    first: Option<u64>,
    more: bool,
}

impl TwoKinds {
    fn add(&mut self, value: u64) {
        match self.first {
            None => self.first = Some(value),
            Some(first) if first != value => self.more = true,
            Some(_) => {}
        }
    }
}

/// Builds [`Learned`] from the page views and fetches of a log.
#[derive(Debug, Default)]
pub struct LearnedBuilder {
    patterns: HashMap<String, u32>,
    pattern_names: Vec<String>,
    resources: HashMap<String, u32>,
    resource_names: Vec<String>,
    sessions: HashMap<u64, Session>,
    /// Per pattern id: sessions that viewed it, and its pages seen.
    viewing: Vec<u64>,
    pages: Vec<TwoKinds>,
    /// Per (pattern, resource).
    pairs: HashMap<(u32, u32), Pair>,
    unlearned: Unlearned,
    /// Requests that named a page of their session as referer, all.
    fetches: u64,
}

/// One page pattern's learned resources.
#[derive(Debug, Clone, PartialEq)]
pub struct LearnedPage {
    pub pattern: String,
    /// Sessions that viewed it.
    pub sessions: u64,
    /// Resources fetched with it, the most shared first.
    pub resources: Vec<LearnedResource>,
}

/// A resource fetched with a page pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct LearnedResource {
    /// Path and query as sent.
    pub target: String,
    /// Sessions that fetched it with the pattern.
    pub sessions: u64,
    /// Its requests with the pattern, all.
    pub requests: u64,
    /// Their share of the pattern's sessions that could.
    pub share: f64,
}

/// What the log's browsers fetched with pages, per page pattern.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Learned {
    /// Patterns with a resource fetched with them, in the order of their
    /// text.
    pub pages: Vec<LearnedPage>,
    pub unlearned: Unlearned,
    /// Requests that named a page of their session as referer.
    pub fetches: u64,
}

impl Learned {
    /// The resources at least [`LEARNED_SHARE`] of `pattern`'s sessions
    /// fetched with it.
    pub fn for_pattern(&self, pattern: &str) -> Vec<&LearnedResource> {
        self.pages
            .iter()
            .find(|p| p.pattern == pattern)
            .map(|p| {
                p.resources
                    .iter()
                    .filter(|r| r.share >= LEARNED_SHARE)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Fetches (once a session) of resources too few of their pattern's
    /// sessions fetched to be learned.
    pub fn too_rare(&self) -> u64 {
        self.pages
            .iter()
            .flat_map(|p| &p.resources)
            .filter(|r| r.share < LEARNED_SHARE)
            .map(|r| r.requests)
            .sum()
    }
}

impl LearnedBuilder {
    /// The id of a page pattern (None past [`MOST_PATTERNS`]).
    pub fn pattern_id(&mut self, pattern: &str) -> Option<u32> {
        if let Some(id) = self.patterns.get(pattern) {
            return Some(*id);
        }
        if self.pattern_names.len() >= MOST_PATTERNS {
            return None;
        }
        let id = self.pattern_names.len() as u32;
        self.patterns.insert(pattern.to_string(), id);
        self.pattern_names.push(pattern.to_string());
        self.viewing.push(0);
        self.pages.push(TwoKinds::default());
        Some(id)
    }

    /// A session viewed a page of pattern `pattern` at `time`; `page`
    /// is its target, hashed.
    pub fn viewed(&mut self, session: u64, pattern: u32, page: u64, time: i64) {
        self.pages[pattern as usize].add(page);
        let open = self.sessions.entry(session).or_default();
        if open.viewed.len() < MOST_PER_SESSION && !open.viewed.iter().any(|v| v.0 == pattern) {
            open.viewed.push((pattern, time));
        }
    }

    /// A session fetched `target` (answered `status`) at `time`, naming
    /// its page of pattern `pattern` as referer.
    pub fn fetched(&mut self, session: u64, pattern: u32, fetch: &Fetch<'_>) {
        let Fetch {
            target,
            page,
            get,
            status,
            time,
        } = *fetch;
        self.fetches += 1;
        if !get {
            self.unlearned.not_get += 1;
            return;
        }
        if !(200..300).contains(&status) && status != 304 {
            self.unlearned.errors += 1;
            return;
        }
        let Ok(target) = std::str::from_utf8(target) else {
            self.unlearned.secret += 1;
            return;
        };
        let target = target.split('#').next().unwrap_or_default();
        if target.len() > MOST_TARGET || carries_secret(target) {
            self.unlearned.secret += 1;
            return;
        }
        let id = match self.resources.get(target) {
            Some(id) => *id,
            None if self.resource_names.len() < MOST_RESOURCES => {
                let id = self.resource_names.len() as u32;
                self.resources.insert(target.to_string(), id);
                self.resource_names.push(target.to_string());
                id
            }
            None => return,
        };
        let pair = self.pairs.entry((pattern, id)).or_default();
        pair.requests += 1;
        pair.pages.add(page);
        let open = self.sessions.entry(session).or_default();
        if open.fetched.len() < MOST_PER_SESSION
            && !open.fetched.iter().any(|f| f.0 == id && f.1 == pattern)
        {
            open.fetched.push((id, pattern, time));
        }
    }

    /// A session ended: its views and fetches counted.
    pub fn close(&mut self, session: u64) {
        let Some(open) = self.sessions.remove(&session) else {
            return;
        };
        for (pattern, _) in &open.viewed {
            self.viewing[*pattern as usize] += 1;
        }
        for &(resource, named, _) in &open.fetched {
            self.pairs.entry((named, resource)).or_default().fetched += 1;
        }
        // Patterns first viewed after the session had a resource, and not
        // fetching it again: their pages could not (it was cached).
        let mut firsts: Vec<(u32, i64)> = Vec::new();
        for &(resource, _, at) in &open.fetched {
            match firsts.iter_mut().find(|f| f.0 == resource) {
                Some(first) => first.1 = first.1.min(at),
                None => firsts.push((resource, at)),
            }
        }
        for (resource, first) in firsts {
            for &(pattern, viewed) in &open.viewed {
                let with = open
                    .fetched
                    .iter()
                    .any(|f| f.0 == resource && f.1 == pattern);
                if !with && viewed > first {
                    self.pairs.entry((pattern, resource)).or_default().before += 1;
                }
            }
        }
    }

    /// Every session closed (the caller closes them first), per pattern.
    pub fn finish(self) -> Learned {
        let mut by_pattern: HashMap<u32, Vec<LearnedResource>> = HashMap::new();
        let mut page_specific = 0;
        for (&(pattern, resource), pair) in &self.pairs {
            let Pair {
                fetched,
                before,
                requests,
                pages,
            } = *pair;
            if fetched == 0 {
                continue;
            }
            let target = &self.resource_names[resource as usize];
            // Named by one page of a pattern of several (DokuWiki's syntax
            // page's smileys), or at a URL that may vary seen once (a task
            // runner with the time): that page's own, not the pattern's.
            let one_page = self.pages[pattern as usize].more && !pages.more;
            let seen_once = requests < 2 && fold(target.as_bytes()) != *target;
            if one_page || seen_once {
                page_specific += requests;
                continue;
            }
            let could = self.viewing[pattern as usize]
                .saturating_sub(before)
                .max(fetched);
            by_pattern
                .entry(pattern)
                .or_default()
                .push(LearnedResource {
                    target: target.clone(),
                    sessions: fetched,
                    requests,
                    share: fetched as f64 / could as f64,
                });
        }
        let mut pages: Vec<LearnedPage> = by_pattern
            .into_iter()
            .map(|(pattern, mut resources)| {
                resources.sort_by(|a, b| {
                    b.share
                        .total_cmp(&a.share)
                        .then_with(|| a.target.cmp(&b.target))
                });
                LearnedPage {
                    pattern: self.pattern_names[pattern as usize].clone(),
                    sessions: self.viewing[pattern as usize],
                    resources,
                }
            })
            .collect();
        pages.sort_by(|a, b| a.pattern.cmp(&b.pattern));
        Learned {
            pages,
            unlearned: Unlearned {
                page_specific,
                ..self.unlearned
            },
            fetches: self.fetches,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sessions viewing the front page then a post: the emoji script is
    /// fetched once a session, with whichever page came first; a feed
    /// with every page; a post's comments script with posts only.
    #[test]
    fn a_resource_is_learned_for_the_pages_that_could_fetch_it() {
        let mut b = LearnedBuilder::default();
        let front = b.pattern_id("/").unwrap();
        let post = b.pattern_id("/?p=*").unwrap();
        for s in 0..10u64 {
            // Four sessions start at a post, six at the front page.
            let order = if s < 4 { [post, front] } else { [front, post] };
            for (i, page) in order.into_iter().enumerate() {
                let t = s as i64 * 100_000 + i as i64 * 10_000;
                // The front page is one; the posts are three.
                let instance = if page == post { 10 + s % 3 } else { 1 };
                b.viewed(s, page, instance, t);
                let get = |target: &'static [u8], status| Fetch {
                    target,
                    page: instance,
                    get: true,
                    status,
                    time: t + 1,
                };
                if i == 0 {
                    b.fetched(s, page, &get(b"/wp-emoji.js?ver=6", 200));
                }
                b.fetched(s, page, &get(b"/feed.json", 200));
                if page == post && s % 2 == 0 {
                    b.fetched(s, page, &get(b"/comments.js", 304));
                }
                let post_request = Fetch {
                    get: false,
                    ..get(b"/wp-admin/admin-ajax.php", 200)
                };
                b.fetched(s, page, &post_request);
            }
            b.close(s);
        }
        let learned = b.finish();
        // The feed came with every page: each page had it in every session.
        // The emoji script came with the session's first page: each page
        // had it in every session that could (had not got it before).
        let shares = |pattern| -> Vec<(String, u64, f64)> {
            learned
                .for_pattern(pattern)
                .into_iter()
                .map(|r| (r.target.clone(), r.sessions, r.share))
                .collect()
        };
        let is = |target: &str, sessions, share| (target.to_string(), sessions, share);
        assert_eq!(
            shares("/"),
            vec![is("/feed.json", 10, 1.0), is("/wp-emoji.js?ver=6", 6, 1.0)]
        );
        assert_eq!(
            shares("/?p=*"),
            vec![
                is("/feed.json", 10, 1.0),
                is("/wp-emoji.js?ver=6", 4, 1.0),
                is("/comments.js", 5, 0.5)
            ]
        );
        assert_eq!(learned.too_rare(), 0);
        assert_eq!(learned.unlearned.not_get, 20);
        assert_eq!(learned.fetches, 20 + 10 + 20 + 5);
    }

    /// DokuWiki's task runner, named by each page with its id and the
    /// time: one session, a URL a page.
    #[test]
    fn a_resource_whose_url_changes_with_each_page_is_not_learned() {
        let mut b = LearnedBuilder::default();
        let page = b.pattern_id("/doku.php?id=*").unwrap();
        for (i, id) in ["start", "wiki:syntax", "start"].into_iter().enumerate() {
            let t = i as i64 * 10_000;
            let instance = if id == "start" { 1 } else { 2 };
            b.viewed(1, page, instance, t);
            for target in [
                format!("/lib/exe/taskrunner.php?id={id}&{}", 1_700_000_000 + i),
                "/lib/exe/js.php?t=dokuwiki&tseed=8f".to_string(),
            ] {
                let fetch = Fetch {
                    target: target.as_bytes(),
                    page: instance,
                    get: true,
                    status: 200,
                    time: t + 1,
                };
                b.fetched(1, page, &fetch);
            }
        }
        b.close(1);
        let learned = b.finish();
        let targets: Vec<&str> = learned
            .for_pattern("/doku.php?id=*")
            .iter()
            .map(|r| r.target.as_str())
            .collect();
        assert_eq!(targets, ["/lib/exe/js.php?t=dokuwiki&tseed=8f"]);
        assert_eq!(learned.unlearned.page_specific, 3);
    }

    #[test]
    fn what_cannot_be_sent_is_counted_not_learned() {
        let mut b = LearnedBuilder::default();
        let page = b.pattern_id("/").unwrap();
        b.viewed(1, page, 1, 0);
        for (target, status) in [
            (&b"/gone.js"[..], 404),
            (b"/api?token=4f9a8c1b2e4d5f6a7b8c", 200),
            (b"/moved.css", 302),
        ] {
            let fetch = Fetch {
                target,
                page: 1,
                get: true,
                status,
                time: 1,
            };
            b.fetched(1, page, &fetch);
        }
        b.close(1);
        let learned = b.finish();
        assert!(learned.pages.is_empty());
        assert_eq!(
            learned.unlearned,
            Unlearned {
                not_get: 0,
                errors: 2,
                secret: 1,
                page_specific: 0,
            }
        );
    }
}
