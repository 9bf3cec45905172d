//! What a log's browsers fetched with each page that a workload's page
//! load may not find in its HTML: the requests a page's scripts make
//! (WordPress's emoji script, a feed a script asks for), learned per page
//! pattern, and per page where a resource is that page's own (MediaWiki's
//! startup script asks for the modules of the page it runs in). A
//! resource is learned for a pattern (or a page) when, of the sessions
//! that viewed it while the resource was not yet theirs, at least
//! [`LEARNED_SHARE`] fetched it naming that page as referer. A session
//! fetches a cached resource once, so it counts once: the workload's page
//! loads fetch it through the user's cache, which decides again as the
//! browsers' did. What cannot be sent (a script's POST, whose body the log
//! does not hold; an error answer; a request carrying a secret) is
//! counted, to be said.

use super::pages::carries_secret;
use super::pattern::fold;
use std::collections::HashMap;

/// The share of a pattern's (or a page's) sessions that must have fetched
/// a resource with it for the workload to fetch it with every load of it.
pub const LEARNED_SHARE: f64 = 0.5;
/// Page patterns, pages and resources told apart at most; past them,
/// their fetches are counted as unlearned.
const MOST_PATTERNS: usize = 2000;
const MOST_PAGES: usize = 5_000;
const MOST_RESOURCES: usize = 5_000;
/// Pages and resources one session keeps track of at most.
const MOST_PER_SESSION: usize = 64;
/// The longest resource target learned.
const MOST_TARGET: usize = 2048;

/// What one open session viewed and fetched, by first time.
#[derive(Debug, Default)]
struct Session {
    /// Pattern id (as a key) and the time of its first view.
    patterns: Vec<(u64, i64)>,
    /// Page (its target hashed) and the time of its first view.
    pages: Vec<(u64, i64)>,
    /// Resource id, the pattern and the page it named, and the time of its
    /// first fetch naming that page: a resource never stored is fetched
    /// with every page.
    fetched: Vec<(u32, u64, u64, i64)>,
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
    /// Fetched at a URL that may change (it holds a number or a query
    /// value) only once with its page, or with one page of a pattern of
    /// several and too seldom with that page.
    pub page_specific: u64,
    /// Fetched with their page pattern by fewer than [`LEARNED_SHARE`] of
    /// its sessions that could.
    pub too_rare: u64,
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

/// A resource with a pattern or a page, over the sessions closed.
#[derive(Debug, Default, Clone, Copy)]
struct Pair {
    /// Sessions that fetched it naming the pattern (page).
    fetched: u64,
    /// Sessions that had it before their first view of the pattern (page)
    /// and did not fetch it with it.
    before: u64,
    /// Its requests naming the pattern (page), all.
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

/// Sessions that viewed each key (a pattern or a page), and each
/// resource's sessions with it.
#[derive(Debug, Default)]
struct Level {
    viewing: HashMap<u64, u64>,
    pairs: HashMap<(u64, u32), Pair>,
}

impl Level {
    /// One session's views (`viewed`: key, first time) and fetches
    /// (resource, key, first time with the key).
    fn count(&mut self, viewed: &[(u64, i64)], fetched: &[(u32, u64, i64)]) {
        for (key, _) in viewed {
            *self.viewing.entry(*key).or_default() += 1;
        }
        for &(resource, key, _) in fetched {
            self.pairs.entry((key, resource)).or_default().fetched += 1;
        }
        // Keys first viewed after the session had a resource, and not
        // fetching it again: their pages could not (it was cached).
        let mut firsts: Vec<(u32, i64)> = Vec::new();
        for &(resource, _, at) in fetched {
            match firsts.iter_mut().find(|f| f.0 == resource) {
                Some(first) => first.1 = first.1.min(at),
                None => firsts.push((resource, at)),
            }
        }
        for (resource, first) in firsts {
            for &(key, viewed) in viewed {
                let with = fetched.iter().any(|f| f.0 == resource && f.1 == key);
                if !with && viewed > first {
                    self.pairs.entry((key, resource)).or_default().before += 1;
                }
            }
        }
    }

    /// The share of `key`'s sessions that could fetch the resource that
    /// did.
    fn share(&self, key: u64, pair: &Pair) -> f64 {
        let viewing = self.viewing.get(&key).copied().unwrap_or(0);
        let could = viewing.saturating_sub(pair.before).max(pair.fetched);
        pair.fetched as f64 / could.max(1) as f64
    }
}

/// Builds [`Learned`] from the page views and fetches of a log.
#[derive(Debug, Default)]
pub struct LearnedBuilder {
    patterns: HashMap<String, u32>,
    pattern_names: Vec<String>,
    /// Per pattern id: its pages seen.
    pattern_pages: Vec<TwoKinds>,
    /// Each page's pattern.
    page_pattern: HashMap<u64, u32>,
    resources: HashMap<String, u32>,
    resource_names: Vec<String>,
    sessions: HashMap<u64, Session>,
    by_pattern: Level,
    by_page: Level,
    unlearned: Unlearned,
    /// Requests that named a page of their session as referer, all.
    fetches: u64,
}

/// One page pattern's learned resources, or one page's.
#[derive(Debug, Clone, PartialEq)]
pub struct LearnedPage {
    pub pattern: String,
    /// Sessions that viewed it.
    pub sessions: u64,
    /// Resources fetched with it, the most shared first.
    pub resources: Vec<LearnedResource>,
}

/// A resource fetched with a page pattern (or a page).
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
    /// text: every resource of the pattern's own (learned when its share
    /// is at least [`LEARNED_SHARE`]).
    pub pages: Vec<LearnedPage>,
    /// Pages (their targets hashed) with resources learned for them alone
    /// (a page's own, fetched with it by at least [`LEARNED_SHARE`] of its
    /// sessions that could), the most shared first.
    pub own: HashMap<u64, Vec<LearnedResource>>,
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

    /// The resources learned for the page `page` (its target hashed)
    /// alone.
    pub fn for_page(&self, page: u64) -> &[LearnedResource] {
        self.own.get(&page).map(Vec::as_slice).unwrap_or_default()
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
        self.pattern_pages.push(TwoKinds::default());
        Some(id)
    }

    /// A session viewed a page of pattern `pattern` at `time`; `page`
    /// is its target, hashed.
    pub fn viewed(&mut self, session: u64, pattern: u32, page: u64, time: i64) {
        self.pattern_pages[pattern as usize].add(page);
        // Pages past the first MOST_PAGES are learned per pattern only:
        // memory stays flat in the log's length.
        let tracked = self.page_pattern.contains_key(&page) || self.page_pattern.len() < MOST_PAGES;
        if tracked {
            self.page_pattern.insert(page, pattern);
        }
        let open = self.sessions.entry(session).or_default();
        let key = u64::from(pattern);
        if open.patterns.len() < MOST_PER_SESSION && !open.patterns.iter().any(|v| v.0 == key) {
            open.patterns.push((key, time));
        }
        if tracked && open.pages.len() < MOST_PER_SESSION && !open.pages.iter().any(|v| v.0 == page)
        {
            open.pages.push((page, time));
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
            // Past the resources told apart: counted, not learned.
            None => {
                self.unlearned.page_specific += 1;
                return;
            }
        };
        let key = u64::from(pattern);
        let pair = self.by_pattern.pairs.entry((key, id)).or_default();
        pair.requests += 1;
        pair.pages.add(page);
        if self.page_pattern.contains_key(&page) {
            self.by_page.pairs.entry((page, id)).or_default().requests += 1;
        }
        let open = self.sessions.entry(session).or_default();
        if open.fetched.len() < MOST_PER_SESSION
            && !open.fetched.iter().any(|f| f.0 == id && f.2 == page)
        {
            open.fetched.push((id, key, page, time));
        }
    }

    /// A session ended: its views and fetches counted, per pattern and
    /// per page.
    pub fn close(&mut self, session: u64) {
        let Some(open) = self.sessions.remove(&session) else {
            return;
        };
        let mut with_patterns: Vec<(u32, u64, i64)> = Vec::new();
        for &(resource, pattern, _, at) in &open.fetched {
            match with_patterns
                .iter_mut()
                .find(|f| f.0 == resource && f.1 == pattern)
            {
                Some(first) => first.2 = first.2.min(at),
                None => with_patterns.push((resource, pattern, at)),
            }
        }
        self.by_pattern.count(&open.patterns, &with_patterns);
        let with_pages: Vec<(u32, u64, i64)> = open
            .fetched
            .iter()
            .filter(|f| self.page_pattern.contains_key(&f.2))
            .map(|&(resource, _, page, at)| (resource, page, at))
            .collect();
        self.by_page.count(&open.pages, &with_pages);
    }

    /// Every session closed (the caller closes them first): per pattern,
    /// and per page what is a page's own.
    pub fn finish(self) -> Learned {
        let mut by_pattern: HashMap<u32, Vec<LearnedResource>> = HashMap::new();
        // Per (pattern, resource) not learned for the pattern, its requests:
        // its pages' own, or too rare.
        let mut pages_own: HashMap<(u32, u32), u64> = HashMap::new();
        let mut too_rare: HashMap<(u32, u32), u64> = HashMap::new();
        for (&(key, resource), pair) in &self.by_pattern.pairs {
            if pair.fetched == 0 {
                continue;
            }
            let pattern = key as u32;
            let target = &self.resource_names[resource as usize];
            // Named by one page of a pattern of several (DokuWiki's syntax
            // page's smileys), or at a URL that may vary seen once (a task
            // runner with the time): that page's own, not the pattern's.
            let one_page = self.pattern_pages[pattern as usize].more && !pair.pages.more;
            let seen_once = pair.requests < 2 && fold(target.as_bytes()) != *target;
            if one_page || seen_once {
                pages_own.insert((pattern, resource), pair.requests);
                continue;
            }
            let share = self.by_pattern.share(key, pair);
            if share < LEARNED_SHARE {
                too_rare.insert((pattern, resource), pair.requests);
            }
            by_pattern
                .entry(pattern)
                .or_default()
                .push(LearnedResource {
                    target: target.clone(),
                    sessions: pair.fetched,
                    requests: pair.requests,
                    share,
                });
        }
        // What is not its pattern's may be its page's own.
        let mut own: HashMap<u64, Vec<LearnedResource>> = HashMap::new();
        let mut unlearned = self.unlearned;
        for (&(page, resource), pair) in &self.by_page.pairs {
            let Some(&pattern) = self.page_pattern.get(&page) else {
                unlearned.page_specific += pair.requests;
                continue;
            };
            let key = (pattern, resource);
            let own_kind = pages_own.contains_key(&key);
            let Some(left) = pages_own.get_mut(&key).or_else(|| too_rare.get_mut(&key)) else {
                continue;
            };
            *left = left.saturating_sub(pair.requests);
            let target = &self.resource_names[resource as usize];
            let seen_once = pair.requests < 2 && fold(target.as_bytes()) != *target;
            let share = self.by_page.share(page, pair);
            if pair.fetched > 0 && !seen_once && share >= LEARNED_SHARE {
                own.entry(page).or_default().push(LearnedResource {
                    target: target.clone(),
                    sessions: pair.fetched,
                    requests: pair.requests,
                    share,
                });
            } else if own_kind {
                unlearned.page_specific += pair.requests;
            } else {
                unlearned.too_rare += pair.requests;
            }
        }
        // What pages past the ones told apart fetched: per pattern only.
        unlearned.page_specific += pages_own.values().sum::<u64>();
        unlearned.too_rare += too_rare.values().sum::<u64>();
        let by_share = |a: &LearnedResource, b: &LearnedResource| {
            b.share
                .total_cmp(&a.share)
                .then_with(|| a.target.cmp(&b.target))
        };
        for resources in own.values_mut() {
            resources.sort_by(by_share);
        }
        let mut pages: Vec<LearnedPage> = by_pattern
            .into_iter()
            .map(|(pattern, mut resources)| {
                resources.sort_by(by_share);
                LearnedPage {
                    pattern: self.pattern_names[pattern as usize].clone(),
                    sessions: self
                        .by_pattern
                        .viewing
                        .get(&u64::from(pattern))
                        .copied()
                        .unwrap_or(0),
                    resources,
                }
            })
            .collect();
        pages.sort_by(|a, b| a.pattern.cmp(&b.pattern));
        Learned {
            pages,
            own,
            unlearned,
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
        assert_eq!(learned.unlearned.too_rare, 0);
        assert!(learned.own.is_empty());
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

    /// MediaWiki: every page is `/index.php?title=*`, and its startup
    /// script asks for the modules of the page it runs in: each page's
    /// own, learned for that page.
    #[test]
    fn what_one_page_of_a_pattern_fetches_is_learned_for_that_page() {
        let mut b = LearnedBuilder::default();
        let pattern = b.pattern_id("/index.php?title=*").unwrap();
        let (main, recent) = (1u64, 2u64);
        for s in 0..3u64 {
            for (i, (page, modules)) in [(main, "main"), (recent, "rc")].into_iter().enumerate() {
                let t = s as i64 * 100_000 + i as i64 * 10_000;
                b.viewed(s, pattern, page, t);
                let target = format!("/load.php?modules={modules}&version=x{s}");
                let stable = format!("/load.php?modules={modules}");
                for target in [target.as_str(), stable.as_str()] {
                    let fetch = Fetch {
                        target: target.as_bytes(),
                        page,
                        get: true,
                        status: 200,
                        time: t + 1,
                    };
                    b.fetched(s, pattern, &fetch);
                }
            }
            b.close(s);
        }
        let learned = b.finish();
        assert!(learned.for_pattern("/index.php?title=*").is_empty());
        let own = |page| -> Vec<&str> {
            learned
                .for_page(page)
                .iter()
                .map(|r| r.target.as_str())
                .collect()
        };
        assert_eq!(own(main), ["/load.php?modules=main"]);
        assert_eq!(own(recent), ["/load.php?modules=rc"]);
        // A version that changed each time was seen once each: not learned.
        assert_eq!(learned.unlearned.page_specific, 6);
    }

    /// A log of more pages than are told apart: the rest are learned per
    /// pattern only, and every request is still accounted for.
    #[test]
    fn pages_past_the_ones_told_apart_are_counted_not_held() {
        let mut b = LearnedBuilder::default();
        let pattern = b.pattern_id("/page?id=*").unwrap();
        let pages = MOST_PAGES as u64 + 10;
        for page in 0..pages {
            b.viewed(page, pattern, page, 0);
            // 5,000 resources, each fetched with 4 pages.
            let target = format!("/own.js?part={}", page % 5000);
            for time in [1, 2] {
                let fetch = Fetch {
                    target: target.as_bytes(),
                    page,
                    get: true,
                    status: 200,
                    time,
                };
                b.fetched(page, pattern, &fetch);
            }
            b.close(page);
        }
        assert!(b.page_pattern.len() <= MOST_PAGES && b.by_page.viewing.len() <= MOST_PAGES);
        let learned = b.finish();
        assert_eq!(learned.own.len(), MOST_PAGES);
        let held: u64 = learned.own.values().flatten().map(|r| r.requests).sum();
        let unlearned = learned.unlearned;
        assert_eq!(held, 2 * MOST_PAGES as u64);
        assert_eq!((unlearned.too_rare, unlearned.page_specific), (20, 0));
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
                too_rare: 0,
            }
        );
    }
}
