//! What a server's users did, from its access log: when sessions arrived
//! (per minute, and the peak), how many pages each asked for, how long
//! they read between pages (its distribution, with a log-normal fitted),
//! which pages (folded: [`super::pattern`]), methods and statuses, and the
//! share of page resources. A session is a cookie's value when the log has
//! one (`$cookie_NAME`), else a client address with its user agent; it
//! ends after an idle gap (30 minutes, as web analytics count a visit).
//! Only hashes of the keys are held: no address reaches the model.

use super::learned::{Fetch, Learned, LearnedBuilder};
use super::pages::{PageCounts, PagePattern, PageRequest, MAX_PATTERNS};
use super::paths::{PathSlot, Paths, PathsBuilder};
use super::pattern::{fold, is_static};
use hdrhistogram::Histogram;
use headroom_import::access_log::format::unescape_target;
pub use headroom_import::access_log::format::{LogEntry, LogFormat};
pub use headroom_import::access_log::read::LogSpan;
use headroom_import::access_log::read::{log_span, read_logs_within, LogReading, JUMP_BACK_MS};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::path::PathBuf;

/// The idle time that ends a session unless told otherwise.
pub const IDLE_GAP_MS: i64 = 30 * 60 * 1000;
/// The least time between two pages that is a reading time: a page asked
/// for within a second of the one before (a frame, an automatic request, a
/// logged second's rounding) is not read.
pub const MIN_THINK_MS: i64 = 1000;
/// A request that names the session's page as its referer within this
/// time of it is that page's resource (a style sheet or an image a script
/// serves, a request its scripts make), not a page: a logged second's
/// rounding and a second to load.
pub const LOADED_WITHIN_MS: i64 = 2000;
/// The share of a log's pages within a second of their session's page
/// before above which its sessions mix several users (one address and
/// browser for a class behind a proxy): a second between pages then tells
/// nothing, and a session is no one user's walk.
pub const SESSIONS_APART: f64 = 0.5;
/// Pages of a session a resource may name as referer.
const RECENT_PAGES: usize = 8;
/// Resources of a session's pages that a resource may name as referer.
const RECENT_SHEETS: usize = 8;

/// A resource fetched with a page: its target (hashed), the session and
/// the page (pattern, target hashed) it was learned with, and when.
#[derive(Debug, Clone, Copy, Default)]
struct Sheet {
    target: u64,
    session: u64,
    page: u64,
    pattern: u32,
    time: i64,
}
/// Sessions idle for longer than the gap are closed this often (log time).
const SWEEP_MS: i64 = 60 * 1000;

/// How requests are told apart into sessions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionKey {
    /// The named cookie's value.
    Cookie(String),
    /// The client's address with its user agent.
    ClientAndAgent,
}

impl SessionKey {
    pub fn describe(&self, gap_ms: i64) -> String {
        let gap = gap_ms / 60_000;
        match self {
            SessionKey::Cookie(name) => format!(
                "a session is a value of the cookie {name} (requests without it: client address and user agent), ended by {gap} minutes without a request"
            ),
            SessionKey::ClientAndAgent => format!(
                "a session is a client address with its user agent (the log has no session cookie), ended by {gap} minutes without a request"
            ),
        }
    }
}

/// Reads the logs `paths`, written in `format` (`combined`, `common` or an
/// nginx `log_format` string), into a model whose sessions end after
/// `gap_ms` idle. Sessions are the `cookie`'s values when one is named or
/// the format logs one (`$cookie_NAME`), else client and user agent.
pub fn read_model(
    paths: &[PathBuf],
    format: &str,
    cookie: Option<&str>,
    gap_ms: i64,
) -> Result<(TrafficModel, LogReading), String> {
    let format = LogFormat::parse(format)?;
    let key = match (cookie, format.cookie()) {
        (Some(asked), Some(logged)) if asked == logged => SessionKey::Cookie(asked.to_string()),
        (Some(asked), _) => {
            return Err(format!(
                "the format does not log the cookie {asked}: add $cookie_{asked} to the server's log_format (and to --format), or leave out --session-cookie to tell sessions by client and user agent"
            ))
        }
        (None, Some(logged)) => SessionKey::Cookie(logged.to_string()),
        (None, None) => SessionKey::ClientAndAgent,
    };
    let no_request = || {
        format!(
            "no request was read from {} (every line empty or not in the format '{}')",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            format.text
        )
    };
    // A first reading finds the log's span: each request counts in its
    // own minute, whatever the order of the lines.
    let span = log_span(paths, &format)
        .map_err(|e| e.to_string())?
        .ok_or_else(no_request)?;
    let mut builder = TrafficBuilder::new(key, gap_ms, span);
    if !format.has_status() {
        builder = builder.without_statuses();
    }
    let reading = read_logs_within(paths, &format, Some(span), |entry| builder.add(entry))
        .map_err(|e| e.to_string())?;
    if reading.entries == 0 {
        return Err(no_request());
    }
    Ok((builder.finish(), reading))
}

/// One session still open.
#[derive(Debug, Clone, Copy)]
struct Open {
    /// Its key (hashed).
    key: u64,
    last_ms: i64,
    last_page_ms: Option<i64>,
    /// The last pages' targets (hashed), times and patterns (their ids in
    /// the learned resources'), what their resources name as referer:
    /// several, for a session that is many users (a class behind one
    /// address, with one browser).
    recent: [(u64, i64, Option<u32>); RECENT_PAGES],
    /// The last resources fetched with its pages, what their own
    /// resources name as referer (a style sheet's images and fonts).
    sheets: [Sheet; RECENT_SHEETS],
    /// Where the next resource goes in `sheets`.
    next_sheet: u8,
    /// Where the next page goes in `recent`.
    next: u8,
    pages: u32,
    /// The last request answered with a redirect: its time, its referer
    /// (hashed) and whether it was a GET. The browser's request for its
    /// Location follows at once, with the same referer.
    redirect: Option<(i64, Option<u64>, bool)>,
    /// Its pages to send, if the session is drawn into the sample.
    path: PathSlot,
}

/// The traffic of a log, as a model of its users.
#[derive(Debug, Clone)]
pub struct TrafficModel {
    pub key: SessionKey,
    pub gap_ms: i64,
    /// The earliest and the latest request's times.
    pub first_ms: i64,
    pub last_ms: i64,
    /// The clock minute the per-minute counts start at (ms).
    pub first_minute_ms: i64,
    pub requests: u64,
    /// Requests for pages (not static resources, not what pages loaded).
    pub pages: u64,
    pub sessions: u64,
    /// Sessions that asked for no page (only resources or redirects): not
    /// in `pages_per_session`.
    pub sessions_without_pages: u64,
    /// Distinct client addresses with their user agent per UTC day, of
    /// the requests not answered 4xx: goaccess's unique visitors.
    pub visitors: u64,
    /// Sessions that began in each clock minute of the log's span, from
    /// `first_minute_ms`.
    pub arrivals_per_minute: Vec<u32>,
    /// Requests in each clock minute.
    pub requests_per_minute: Vec<u32>,
    /// Pages seen (not resources, not a redirect's answer) in each minute.
    pub views_per_minute: Vec<u32>,
    /// Of those, pages read: not asked for within [`MIN_THINK_MS`] of the
    /// session's page before.
    pub reads_per_minute: Vec<u32>,
    /// Pages a session asked for, of the sessions that asked for one.
    pub pages_per_session: Histogram<u64>,
    /// Time between a session's consecutive pages, ms, of at least
    /// [`MIN_THINK_MS`] (static resources are part of their page, and a
    /// redirect's answer is not a page seen).
    pub think_ms: Histogram<u64>,
    /// Pages that followed the one before within [`MIN_THINK_MS`].
    pub quick: u64,
    /// The log-normal fitted to the think times: mean and standard
    /// deviation of their natural logarithm (in seconds).
    pub think_log_mean: f64,
    pub think_log_sd: f64,
    /// Pages by folded pattern, most asked first: a redirect's target that
    /// a form sent (a POST answered 303) is the form's page view, counted
    /// under the form.
    pub mix: Vec<PagePattern>,
    /// Resources that are not files (a script's style sheet, an image
    /// served by the application, a request a page's script makes): what
    /// named the session's page as referer within [`LOADED_WITHIN_MS`]
    /// of it (before or after it: a log in order of completion writes a
    /// large script before its page), by folded pattern, most asked first.
    pub loaded_by_pages: Vec<(String, u64)>,
    /// What the browsers fetched with each page pattern, named by referer
    /// (what its scripts asked for among it).
    pub learned: Learned,
    /// A sample of the sessions, each its pages to send in order.
    pub paths: Paths,
    pub methods: BTreeMap<String, u64>,
    pub statuses: BTreeMap<u16, u64>,
    /// Whether the log's format has the status (`$status`); without it
    /// every request counts as answered 2xx.
    pub statuses_logged: bool,
}

/// A request held until the requests logged within [`LOADED_WITHIN_MS`]
/// after it are known (a page logged after its resources names them).
struct Held {
    time: i64,
    /// As the client sent it (the log's escapes decoded).
    target: Vec<u8>,
    get: bool,
    status: u16,
    /// The referer's path and query, hashed.
    referer: Option<u64>,
    session: u64,
    client: u64,
    cookie: bool,
    resource: bool,
}

/// Requests held at most, and their targets' bytes (a log of thousands of
/// requests a second holds its last seconds' worth).
const MAX_HELD: usize = 100_000;
const MAX_HELD_BYTES: usize = 64 << 20;
/// The longest pattern text kept; a longer one is cut.
const MAX_PATTERN: usize = 300;

/// Builds a [`TrafficModel`] from a log's entries within its span.
pub struct TrafficBuilder {
    key: SessionKey,
    gap_ms: i64,
    span: LogSpan,
    open: HashMap<u64, Open>,
    swept_ms: i64,
    /// The latest time added.
    latest_ms: i64,
    first_ms: Option<i64>,
    last_ms: i64,
    requests: u64,
    pages: u64,
    sessions: u64,
    sessions_without_pages: u64,
    visitors: std::collections::HashSet<u64>,
    arrivals: Vec<u32>,
    per_minute: Vec<u32>,
    views_per_minute: Vec<u32>,
    reads_per_minute: Vec<u32>,
    pages_per_session: Histogram<u64>,
    think_ms: Histogram<u64>,
    quick: u64,
    /// Sums of ln(think s) and its square, for the fit.
    log_sum: f64,
    log_square_sum: f64,
    log_count: u64,
    mix: PageCounts,
    loaded: HashMap<String, u64>,
    /// Requests of the rarer patterns of `loaded`, folded together, and
    /// how many patterns.
    loaded_other: (u64, u64),
    learned: LearnedBuilder,
    paths: PathsBuilder,
    /// Whether a request with a referer came yet: until one does, pages
    /// are not tracked for the learned resources (a log without referers
    /// teaches nothing, and a day of sessions that never end would hold
    /// their pages).
    referers: bool,
    methods: BTreeMap<String, u64>,
    statuses: BTreeMap<u16, u64>,
    statuses_logged: bool,
    held: VecDeque<Held>,
    held_bytes: usize,
    /// Held requests that are no file, by client and target (hashed).
    ahead: HashMap<(u64, u64), u32>,
}

impl TrafficBuilder {
    /// A builder for the requests within `span` (others are left out).
    pub fn new(key: SessionKey, gap_ms: i64, span: LogSpan) -> TrafficBuilder {
        let minutes = span.minutes();
        TrafficBuilder {
            key,
            gap_ms,
            span,
            open: HashMap::new(),
            swept_ms: i64::MIN,
            latest_ms: i64::MIN,
            first_ms: None,
            last_ms: i64::MIN,
            requests: 0,
            pages: 0,
            sessions: 0,
            sessions_without_pages: 0,
            visitors: std::collections::HashSet::new(),
            arrivals: vec![0; minutes],
            per_minute: vec![0; minutes],
            views_per_minute: vec![0; minutes],
            reads_per_minute: vec![0; minutes],
            pages_per_session: Histogram::new_with_bounds(1, 1_000_000, 3).expect("bounds"),
            think_ms: Histogram::new_with_bounds(1, 7 * 24 * 3_600_000, 3).expect("bounds"),
            quick: 0,
            log_sum: 0.0,
            log_square_sum: 0.0,
            log_count: 0,
            mix: PageCounts::default(),
            loaded: HashMap::new(),
            loaded_other: (0, 0),
            learned: LearnedBuilder::default(),
            paths: PathsBuilder::default(),
            referers: false,
            methods: BTreeMap::new(),
            statuses: BTreeMap::new(),
            statuses_logged: true,
            held: VecDeque::new(),
            held_bytes: 0,
            ahead: HashMap::new(),
        }
    }

    /// A log whose format has no status: every request counts as answered
    /// 2xx.
    pub fn without_statuses(mut self) -> TrafficBuilder {
        self.statuses_logged = false;
        self
    }

    /// The index of a time's clock minute in the per-minute counts.
    fn minute(&self, time: i64) -> usize {
        (time.div_euclid(60_000) - self.span.first_minute) as usize
    }

    /// Adds one request of the log.
    pub fn add(&mut self, entry: &LogEntry<'_>) {
        let time = entry.time_ms;
        if !self.span.contains(time) {
            return;
        }
        self.first_ms = Some(self.first_ms.map_or(time, |first| first.min(time)));
        self.last_ms = self.last_ms.max(time);
        self.requests += 1;
        let minute = self.minute(time);
        self.per_minute[minute] += 1;
        *self
            .methods
            .entry(String::from_utf8_lossy(entry.method).into_owned())
            .or_default() += 1;
        *self.statuses.entry(entry.status).or_default() += 1;
        // goaccess leaves 4xx answers out of its visitors (unless
        // --4xx-to-unique-count).
        if !(400..500).contains(&entry.status) {
            self.visitors.insert(visitor_of(entry));
        }
        // The log begins again (files joined newest first): its sessions
        // end here, as at a file's end.
        if time < self.latest_ms.saturating_sub(JUMP_BACK_MS) {
            self.release(i64::MAX);
            let open: Vec<Open> = self.open.drain().map(|(_, o)| o).collect();
            for session in open {
                self.close(session);
            }
            self.swept_ms = time;
            self.latest_ms = time;
        }
        self.latest_ms = self.latest_ms.max(time);
        // What was logged more than the window before is taken in first:
        // the held requests are then those within it.
        self.release(self.latest_ms.saturating_sub(LOADED_WITHIN_MS));
        let target = unescape_target(entry.target).into_owned();
        let held = Held {
            time,
            get: entry.method == b"GET",
            // Without a status logged, as answered.
            status: if self.statuses_logged {
                entry.status
            } else {
                200
            },
            referer: entry.referer.map(|r| {
                self.referers = true;
                hash_target(referer_target(r))
            }),
            session: self.session_of(entry),
            client: client_key(entry),
            cookie: entry.cookie.is_some(),
            resource: is_static(&target),
            target,
        };
        if !held.resource {
            *self
                .ahead
                .entry((held.client, hash_target(&held.target)))
                .or_default() += 1;
        }
        self.held_bytes += held.target.len();
        self.held.push_back(held);
    }

    /// Takes in the held requests logged before `due` (and any past
    /// [`MAX_HELD`]).
    fn release(&mut self, due: i64) {
        while let Some(front) = self.held.front() {
            if front.time >= due && self.held.len() <= MAX_HELD && self.held_bytes <= MAX_HELD_BYTES
            {
                break;
            }
            let Some(held) = self.held.pop_front() else {
                break;
            };
            self.held_bytes -= held.target.len();
            if !held.resource {
                let key = (held.client, hash_target(&held.target));
                if let Some(n) = self.ahead.get_mut(&key) {
                    *n -= 1;
                    if *n == 0 {
                        self.ahead.remove(&key);
                    }
                }
            }
            self.take(held);
        }
    }

    /// One request into its session.
    fn take(&mut self, request: Held) {
        let time = request.time;
        if time >= self.swept_ms.saturating_add(SWEEP_MS) {
            self.sweep(time);
        }
        let key = request.session;
        let mut session = self.session_at(key, time);
        session.last_ms = session.last_ms.max(time);
        // A log slightly out of order reads as no time between.
        let since_page = session.last_page_ms.map(|before| (time - before).max(0));
        let redirected = is_redirect(request.status);
        // The browser's request for a redirect's Location: the page the
        // user sees, with the redirected request's referer.
        let redirect_target = !request.resource
            && request.get
            && session.redirect.is_some_and(|(at, referer, _)| {
                time.saturating_sub(at) <= LOADED_WITHIN_MS && referer == request.referer
            });
        let after_form = redirect_target && session.redirect.is_some_and(|(_, _, get)| !get);
        if redirect_target {
            session.redirect = None;
        }
        let loaded = !request.resource
            && !redirected
            && !redirect_target
            && self.names_its_page(&request, &session);
        if loaded {
            let pattern = pattern_of(&request.target);
            self.count_loaded(pattern);
        }
        if (loaded || request.resource) && !redirect_target {
            self.learn_fetch(&request, &mut session);
        }
        let page = !request.resource && !loaded;
        // A page seen: not a redirect's answer (the page it points to is).
        let view = page && !redirected;
        if page {
            self.pages += 1;
        }
        let sendable = page
            && !after_form
            && self.mix.add(
                pattern_of(&request.target),
                &PageRequest {
                    target: &request.target,
                    get: request.get,
                    status: request.status,
                    quick: since_page.is_some_and(|ms| ms < MIN_THINK_MS),
                },
            );
        if page && redirected {
            session.redirect = Some((time, request.referer, request.get));
        }
        if view {
            self.count_view(&mut session, &request, since_page);
            if let (true, Ok(target)) = (sendable, std::str::from_utf8(&request.target)) {
                self.paths.walk(&mut session.path, target);
            }
        }
        self.open.insert(key, session);
    }

    /// The session `key` open at `time`, else a new one (the one it
    /// had closed, ended by the gap).
    fn session_at(&mut self, key: u64, time: i64) -> Open {
        let gap = self.gap_ms;
        let open = self
            .open
            .get(&key)
            .copied()
            .filter(|o| time - o.last_ms <= gap);
        match open {
            Some(open) => open,
            None => {
                if let Some(ended) = self.open.remove(&key) {
                    self.close(ended);
                }
                self.sessions += 1;
                let minute = self.minute(time);
                self.arrivals[minute] += 1;
                Open {
                    key,
                    last_ms: time,
                    last_page_ms: None,
                    recent: [(0, i64::MIN, None); RECENT_PAGES],
                    sheets: [Sheet {
                        time: i64::MIN,
                        ..Sheet::default()
                    }; RECENT_SHEETS],
                    next_sheet: 0,
                    next: 0,
                    pages: 0,
                    redirect: None,
                    path: PathSlot::Unbegun,
                }
            }
        }
    }

    /// Whether `request` names as referer a page of its session seen
    /// within [`LOADED_WITHIN_MS`], or one logged after it.
    fn names_its_page(&self, request: &Held, session: &Open) -> bool {
        let time = request.time;
        // A page that sets the session cookie is the cookieless session's:
        // its resources, sent with the new cookie, name it there.
        let named_recently = |open: &Open, named: u64| {
            open.recent
                .iter()
                .any(|&(page, at, _)| page == named && time.saturating_sub(at) <= LOADED_WITHIN_MS)
        };
        request.referer.is_some_and(|named| {
            named_recently(session, named)
                || (request.cookie
                    && self
                        .open
                        .get(&request.client)
                        .is_some_and(|open| named_recently(open, named)))
                // Its page logged after it (in order of completion).
                || self.ahead.contains_key(&(request.client, named))
        })
    }

    /// A resource or a request its page made, for the resources learned
    /// per page: the page it names as referer, seen in its session (or,
    /// with the cookie it was just given, in its client's) within
    /// [`LOADED_WITHIN_MS`]. A browser asks for `/favicon.ico` itself.
    fn learn_fetch(&mut self, request: &Held, session: &mut Open) {
        let Some(named) = request.referer else {
            return;
        };
        if request.target.split(|&b| b == b'?').next() == Some(b"/favicon.ico") {
            return;
        }
        let time = request.time;
        let page_in = |open: &Open| {
            open.recent
                .iter()
                .filter(|&&(page, at, _)| {
                    page == named && time.saturating_sub(at) <= LOADED_WITHIN_MS
                })
                .max_by_key(|r| r.1)
                .and_then(|r| r.2)
                .map(|pattern| (open.key, pattern, named))
        };
        // A style sheet's images and fonts name the sheet: the page's it was.
        let sheet_in = |open: &Open| {
            open.sheets
                .iter()
                .filter(|s| s.target == named && time.saturating_sub(s.time) <= LOADED_WITHIN_MS)
                .max_by_key(|s| s.time)
                .map(|s| (s.session, s.pattern, s.page))
        };
        let found = page_in(session)
            .or_else(|| {
                request
                    .cookie
                    .then(|| self.open.get(&request.client))
                    .flatten()
                    .and_then(page_in)
            })
            .or_else(|| sheet_in(session));
        if let Some((key, pattern, page)) = found {
            session.sheets[usize::from(session.next_sheet)] = Sheet {
                target: hash_target(&request.target),
                session: key,
                page,
                pattern,
                time,
            };
            session.next_sheet = (session.next_sheet + 1) % RECENT_SHEETS as u8;
            let fetch = Fetch {
                target: &request.target,
                page,
                get: request.get,
                status: request.status,
                time,
            };
            self.learned.fetched(key, pattern, &fetch);
        }
    }

    /// Counts a page seen: the reading time before it, its minute's
    /// views and reads; and keeps it as the session's latest page.
    fn count_view(&mut self, session: &mut Open, request: &Held, since_page: Option<i64>) {
        let time = request.time;
        if let Some(think) = since_page {
            self.think(think);
        }
        let minute = self.minute(time);
        self.views_per_minute[minute] += 1;
        if since_page.is_none_or(|ms| ms >= MIN_THINK_MS) {
            self.reads_per_minute[minute] += 1;
        }
        session.last_page_ms = Some(time);
        let pattern = if self.referers {
            self.learned.pattern_id(&pattern_of(&request.target))
        } else {
            None
        };
        let page = hash_target(&request.target);
        if let Some(pattern) = pattern {
            self.learned.viewed(session.key, pattern, page, time);
        }
        session.recent[usize::from(session.next)] = (page, time, pattern);
        session.next = (session.next + 1) % RECENT_PAGES as u8;
        session.pages += 1;
    }

    /// Counts a resource the application serves, the rarer patterns folded
    /// together past [`MAX_PATTERNS`].
    fn count_loaded(&mut self, pattern: String) {
        if self.loaded.len() >= 2 * MAX_PATTERNS && !self.loaded.contains_key(&pattern) {
            let mut counts: Vec<(String, u64)> = self.loaded.drain().collect();
            counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            for (_, n) in counts.drain(MAX_PATTERNS..) {
                self.loaded_other.0 += n;
                self.loaded_other.1 += 1;
            }
            self.loaded.extend(counts);
        }
        *self.loaded.entry(pattern).or_default() += 1;
    }

    /// The model, every session closed.
    pub fn finish(mut self) -> TrafficModel {
        self.release(i64::MAX);
        let open: Vec<Open> = self.open.drain().map(|(_, o)| o).collect();
        for session in open {
            self.close(session);
        }
        let mix = self.mix.finish();
        let mut loaded_by_pages: Vec<(String, u64)> = self.loaded.into_iter().collect();
        loaded_by_pages.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        if self.loaded_other.0 > 0 {
            loaded_by_pages.push((
                format!("(other: {} rarer patterns)", self.loaded_other.1),
                self.loaded_other.0,
            ));
        }
        let n = self.log_count as f64;
        let mean = if n > 0.0 { self.log_sum / n } else { 0.0 };
        let variance = if n > 1.0 {
            ((self.log_square_sum - n * mean * mean) / (n - 1.0)).max(0.0)
        } else {
            0.0
        };
        let first_ms = self.first_ms.unwrap_or(self.span.first_minute * 60_000);
        TrafficModel {
            key: self.key,
            gap_ms: self.gap_ms,
            first_ms,
            last_ms: self.last_ms.max(first_ms),
            first_minute_ms: self.span.first_minute * 60_000,
            requests: self.requests,
            pages: self.pages,
            sessions: self.sessions,
            sessions_without_pages: self.sessions_without_pages,
            visitors: self.visitors.len() as u64,
            arrivals_per_minute: self.arrivals,
            requests_per_minute: self.per_minute,
            views_per_minute: self.views_per_minute,
            reads_per_minute: self.reads_per_minute,
            pages_per_session: self.pages_per_session,
            think_ms: self.think_ms,
            quick: self.quick,
            think_log_mean: mean,
            think_log_sd: variance.sqrt(),
            mix,
            loaded_by_pages,
            learned: self.learned.finish(),
            paths: self.paths.finish(),
            methods: self.methods,
            statuses: self.statuses,
            statuses_logged: self.statuses_logged,
        }
    }

    fn think(&mut self, ms: i64) {
        if ms < MIN_THINK_MS {
            self.quick += 1;
            return;
        }
        let _ = self.think_ms.record(ms as u64);
        let seconds = ms as f64 / 1000.0;
        let ln = seconds.ln();
        self.log_sum += ln;
        self.log_square_sum += ln * ln;
        self.log_count += 1;
    }

    fn close(&mut self, session: Open) {
        self.learned.close(session.key);
        if session.pages == 0 {
            self.sessions_without_pages += 1;
        } else {
            let _ = self.pages_per_session.record(u64::from(session.pages));
        }
    }

    /// Closes the sessions idle for longer than the gap.
    fn sweep(&mut self, now: i64) {
        self.swept_ms = now;
        let gap = self.gap_ms;
        let ended: Vec<u64> = self
            .open
            .iter()
            .filter(|(_, o)| now - o.last_ms > gap)
            .map(|(k, _)| *k)
            .collect();
        for key in ended {
            if let Some(session) = self.open.remove(&key) {
                self.close(session);
            }
        }
    }

    /// A hash of the session's key (the cookie's value, else the client's
    /// address and user agent).
    fn session_of(&self, entry: &LogEntry<'_>) -> u64 {
        let mut hasher = std::hash::DefaultHasher::new();
        match (&self.key, entry.cookie) {
            (SessionKey::Cookie(_), Some(cookie)) => {
                0u8.hash(&mut hasher);
                cookie.hash(&mut hasher);
            }
            _ => return client_key(entry),
        }
        hasher.finish()
    }
}

/// A status that sends the browser elsewhere (not 304, which answers
/// with the page the browser holds).
fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// A target's pattern ([`fold`]), cut to [`MAX_PATTERN`] bytes.
pub(super) fn pattern_of(target: &[u8]) -> String {
    let mut pattern = fold(target);
    if pattern.len() > MAX_PATTERN {
        let mut end = MAX_PATTERN;
        while !pattern.is_char_boundary(end) {
            end -= 1;
        }
        pattern.truncate(end);
        pattern.push('…');
    }
    pattern
}

/// A hash of the client's address and user agent: the session key of a
/// request without the session cookie.
fn client_key(entry: &LogEntry<'_>) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    1u8.hash(&mut hasher);
    entry.client.hash(&mut hasher);
    entry.user_agent.hash(&mut hasher);
    hasher.finish()
}

/// A referer's path and query: what follows its scheme and host.
fn referer_target(referer: &[u8]) -> &[u8] {
    let Some(scheme) = referer.windows(3).position(|w| w == b"://") else {
        return referer;
    };
    let rest = &referer[scheme + 3..];
    match rest.iter().position(|&b| b == b'/') {
        Some(slash) => &rest[slash..],
        None => b"/",
    }
}

/// The key of a page in the learned resources (its target as the log
/// holds it, hashed).
pub fn page_key(target: &[u8]) -> u64 {
    hash_target(target)
}

/// A hash of a page's target, without its fragment.
fn hash_target(target: &[u8]) -> u64 {
    let end = target
        .iter()
        .position(|&b| b == b'#')
        .unwrap_or(target.len());
    let mut hasher = std::hash::DefaultHasher::new();
    target[..end].hash(&mut hasher);
    hasher.finish()
}

/// A hash of the client's address, user agent and UTC day.
fn visitor_of(entry: &LogEntry<'_>) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    entry.client.hash(&mut hasher);
    entry.user_agent.hash(&mut hasher);
    entry.time_ms.div_euclid(86_400_000).hash(&mut hasher);
    hasher.finish()
}

/// The index and count of the largest count (the earliest of equals).
pub fn busiest(counts: &[u32]) -> Option<(usize, u32)> {
    counts
        .iter()
        .copied()
        .enumerate()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
}

/// `n` as a percentage of `of` (0 when `of` is 0).
fn percent_of(n: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        100.0 * n as f64 / of as f64
    }
}

impl TrafficModel {
    /// The minute with the most requests: its index from the first minute
    /// and its count.
    pub fn peak_minute(&self) -> Option<(usize, u32)> {
        busiest(&self.requests_per_minute)
    }

    /// A think time's quantile, in seconds.
    pub fn think_s(&self, quantile: f64) -> Option<f64> {
        (!self.think_ms.is_empty())
            .then(|| self.think_ms.value_at_quantile(quantile) as f64 / 1000.0)
    }

    /// The model in words, a line each (no address, no query value).
    pub fn describe(&self) -> Vec<String> {
        use headroom_units::civil::utc_minute_text;
        let hours = (self.last_ms - self.first_ms) as f64 / 3_600_000.0;
        let mut lines = vec![format!(
            "from {} to {} UTC ({hours:.1} h)",
            utc_minute_text(self.first_ms),
            utc_minute_text(self.last_ms)
        )];
        lines.push(self.describe_requests());
        self.describe_sessions(&mut lines);
        lines.push(self.describe_pages_per_session());
        if let Some(line) = self.describe_think() {
            lines.push(line);
        }
        self.describe_mix(&mut lines);
        self.describe_loaded_by_pages(&mut lines);
        lines
    }

    /// The clock minute `index` minutes after the first, as text.
    fn minute_text(&self, index: usize) -> String {
        headroom_units::civil::utc_minute_text(self.first_minute_ms + index as i64 * 60_000)
    }

    /// The requests' line: pages against resources, the most used methods
    /// and the statuses.
    fn describe_requests(&self) -> String {
        use headroom_units::quantity::group_thousands;
        let top = |counts: Vec<(String, u64)>| -> String {
            counts
                .into_iter()
                .take(4)
                .map(|(name, n)| format!("{name} {:.1}%", percent_of(n, self.requests)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut methods: Vec<(String, u64)> =
            self.methods.iter().map(|(m, n)| (m.clone(), *n)).collect();
        methods.sort_by_key(|m| std::cmp::Reverse(m.1));
        let mut statuses: Vec<(String, u64)> = self
            .statuses
            .iter()
            .map(|(s, n)| (s.to_string(), *n))
            .collect();
        statuses.sort_by_key(|s| std::cmp::Reverse(s.1));
        let statuses = if self.statuses_logged {
            format!("statuses {}", top(statuses))
        } else {
            "no status logged (the format has no $status: every request is taken as answered 2xx, so redirects and errors count as pages; add $status to the server's log_format and to --format)".to_string()
        };
        format!(
            "requests: {}: {} for pages, {} for their resources ({:.1}%); {}; {statuses}",
            group_thousands(self.requests as i64),
            group_thousands(self.pages as i64),
            group_thousands((self.requests - self.pages) as i64),
            100.0 * self.static_share(),
            top(methods),
        )
    }

    /// The share of the pages a user can ask for again that came within
    /// [`MIN_THINK_MS`] of their session's page before.
    pub fn quick_share(&self) -> f64 {
        let (quick, all) = self
            .mix
            .iter()
            .fold((0, 0), |(q, a), p| (q + p.quick, a + p.replayable));
        quick as f64 / all.max(1) as f64
    }

    /// Whether the log's sessions are each one user's: no more than
    /// [`SESSIONS_APART`] of their pages came within a second of the page
    /// before (else one address and browser held several users at once).
    pub fn sessions_apart(&self) -> bool {
        self.quick_share() <= SESSIONS_APART
    }

    /// The sessions' line, their arrivals and the peak minute's requests.
    fn describe_sessions(&self, lines: &mut Vec<String>) {
        use headroom_units::quantity::{count, group_thousands};
        lines.push(format!(
            "sessions: {} ({}); {} (an address with its user agent per day, 4xx answers left out, as goaccess counts them)",
            group_thousands(self.sessions as i64),
            self.key.describe(self.gap_ms),
            count(self.visitors as usize, "visitor", "visitors")
        ));
        if !self.sessions_apart() {
            lines.push(format!(
                "sessions mixed: {:.0}% of the pages came within a second of their session's page before: several users behind one address and browser (a class behind a proxy), which this log cannot tell apart{}",
                100.0 * self.quick_share(),
                match self.key {
                    SessionKey::Cookie(_) => "",
                    _ => "; with the session cookie in the log's format, --session-cookie NAME tells them apart",
                }
            ));
        }
        // Over the log's whole span, its first minute to its last.
        let minutes = self.arrivals_per_minute.len().max(1) as f64;
        if let Some((at, most)) = busiest(&self.arrivals_per_minute) {
            lines.push(format!(
                "arrivals: {:.1} sessions a minute on average (over the log's {}), {} at the peak ({})",
                self.sessions as f64 / minutes,
                count(minutes as usize, "minute", "minutes"),
                most,
                self.minute_text(at)
            ));
        }
        if let Some((at, most)) = self.peak_minute() {
            lines.push(format!(
                "peak minute: {} in the clock minute {} UTC ({:.1} a second)",
                count(most as usize, "request", "requests"),
                self.minute_text(at),
                f64::from(most) / 60.0
            ));
        }
    }

    /// The pages a session asked for: their distribution, or that no
    /// session asked for one.
    fn describe_pages_per_session(&self) -> String {
        use headroom_units::quantity::group_thousands;
        let without = if self.sessions_without_pages > 0 {
            format!(
                " ({} with none, only resources or redirects, left out)",
                group_thousands(self.sessions_without_pages as i64)
            )
        } else {
            String::new()
        };
        if !self.pages_per_session.is_empty() {
            let p = &self.pages_per_session;
            format!(
                "pages a session: median {}, mean {:.1}, 90th percentile {}, most {}{without}",
                p.value_at_quantile(0.5),
                p.mean(),
                p.value_at_quantile(0.9),
                p.max()
            )
        } else {
            format!("pages a session: no session asked for a page{without}")
        }
    }

    /// The reading time between pages and the log-normal fitted to it,
    /// when a session read a page.
    fn describe_think(&self) -> Option<String> {
        use headroom_units::quantity::group_thousands;
        if self.think_ms.is_empty() {
            return None;
        }
        let q = |x: f64| format!("{:.1} s", self.think_s(x).unwrap_or(0.0));
        let median = self.think_log_mean.exp();
        let mean = (self.think_log_mean + self.think_log_sd.powi(2) / 2.0).exp();
        Some(format!(
            "reading between pages ({} of at least 1 s; {} sooner, not read, left out): 10th percentile {}, 25th {}, median {}, 75th {}, 90th {}; a log-normal fits it with median {median:.1} s and σ {:.2} (mean {mean:.1} s)",
            group_thousands(self.think_ms.len() as i64),
            group_thousands(self.quick as i64),
            q(0.1),
            q(0.25),
            q(0.5),
            q(0.75),
            q(0.9),
            self.think_log_sd
        ))
    }

    /// The page mix: the most asked patterns and what the rest add up to.
    fn describe_mix(&self, lines: &mut Vec<String>) {
        use headroom_units::quantity::count;
        lines.push("pages (ids, e-mail addresses and query values folded to *; a form's redirect counted under the form):".to_string());
        let shown = 15;
        let mix_requests = self.mix_requests();
        for page in self.mix.iter().take(shown) {
            lines.push(format!(
                "  {:>5.1}%  {}",
                percent_of(page.count, mix_requests),
                page.pattern
            ));
        }
        if self.mix.len() > shown {
            let rest: u64 = self.mix[shown..].iter().map(|p| p.count).sum();
            lines.push(format!(
                "  {:>5.1}%  {} more",
                percent_of(rest, mix_requests),
                count(self.mix.len() - shown, "pattern", "patterns")
            ));
        }
    }

    /// The resources the application serves that pages loaded, if any.
    fn describe_loaded_by_pages(&self, lines: &mut Vec<String>) {
        use headroom_units::quantity::{count, group_thousands};
        if self.loaded_by_pages.is_empty() {
            return;
        }
        let loaded: u64 = self.loaded_by_pages.iter().map(|l| l.1).sum();
        lines.push(format!(
            "resources the application serves ({} of the requests: each named its session's page as referer within {} s of it, before or after it in the log):",
            group_thousands(loaded as i64),
            LOADED_WITHIN_MS / 1000
        ));
        for (pattern, n) in self.loaded_by_pages.iter().take(5) {
            lines.push(format!(
                "  {:>5.1}%  {pattern}",
                percent_of(*n, self.requests)
            ));
        }
        if self.loaded_by_pages.len() > 5 {
            lines.push(format!(
                "         {} more",
                count(self.loaded_by_pages.len() - 5, "pattern", "patterns")
            ));
        }
    }

    /// The model as JSON (`scenario from-log --json`; docs/json.md).
    pub fn to_json(&self, reading: &LogReading) -> serde_json::Value {
        use headroom_units::civil::utc_minute_text;
        let quantiles = |h: &Histogram<u64>, scale: f64| {
            serde_json::json!({
                "p10": h.value_at_quantile(0.1) as f64 / scale,
                "p25": h.value_at_quantile(0.25) as f64 / scale,
                "p50": h.value_at_quantile(0.5) as f64 / scale,
                "p75": h.value_at_quantile(0.75) as f64 / scale,
                "p90": h.value_at_quantile(0.9) as f64 / scale,
                "mean": h.mean() / scale,
                "max": h.max() as f64 / scale,
            })
        };
        let peak = self.peak_minute().map(|(at, requests)| {
            serde_json::json!({
                "minute": utc_minute_text(self.first_minute_ms + at as i64 * 60_000),
                "requests": requests,
            })
        });
        serde_json::json!({
            "schema_version": 1,
            "files": reading.files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
            "lines": reading.lines,
            "read": reading.entries,
            "bad_lines": reading.bad,
            "backwards": reading.backwards,
            "jumps_back": reading.jumps_back,
            "too_long": reading.too_long,
            "set_aside": reading.set_aside,
            "problems": reading.problems,
            "first_minute": utc_minute_text(self.first_minute_ms),
            "first": utc_minute_text(self.first_ms),
            "last": utc_minute_text(self.last_ms),
            "requests": self.requests,
            "pages": self.pages,
            "static_share": self.static_share(),
            "sessions": self.sessions,
            "sessions_without_pages": self.sessions_without_pages,
            "session_key": self.key.describe(self.gap_ms),
            "visitors": self.visitors,
            "arrivals_per_minute": self.arrivals_per_minute,
            "requests_per_minute": self.requests_per_minute,
            "peak_minute": peak,
            "pages_per_session": (!self.pages_per_session.is_empty())
                .then(|| quantiles(&self.pages_per_session, 1.0)),
            "think_s": (!self.think_ms.is_empty()).then(|| {
                let mut q = quantiles(&self.think_ms, 1000.0);
                q["count"] = self.think_ms.len().into();
                q["sooner_than_1s"] = self.quick.into();
                q["lognormal"] = serde_json::json!({
                    "log_mean": self.think_log_mean,
                    "log_sd": self.think_log_sd,
                    "median": self.think_log_mean.exp(),
                });
                q
            }),
            "mix": self.mix.iter().map(|page| {
                serde_json::json!({
                    "pattern": page.pattern,
                    "count": page.count,
                    "get_2xx": page.replayable,
                    "within_1s": page.quick,
                })
            }).collect::<Vec<_>>(),
            "loaded_by_pages": self.loaded_by_pages.iter().map(|(pattern, n)| {
                serde_json::json!({"pattern": pattern, "count": n})
            }).collect::<Vec<_>>(),
            "learned": self.learned_json(),
            "methods": self.methods,
            "statuses_logged": self.statuses_logged,
            "statuses": self.statuses.iter().map(|(s, n)| (s.to_string(), *n)).collect::<BTreeMap<_, _>>(),
        })
    }

    /// What the browsers fetched with each page pattern, and what was not
    /// learned, for `--json`.
    fn learned_json(&self) -> serde_json::Value {
        let unlearned = self.learned.unlearned;
        serde_json::json!({
            "fetches": self.learned.fetches,
            "pages": self.learned.pages.iter().map(|page| serde_json::json!({
                "pattern": page.pattern,
                "sessions": page.sessions,
                "resources": page.resources.iter().map(|r| serde_json::json!({
                    "target": r.target,
                    "sessions": r.sessions,
                    "requests": r.requests,
                    "share": r.share,
                    "learned": r.share >= super::learned::LEARNED_SHARE,
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "not_learned": {
                "not_get": unlearned.not_get,
                "errors": unlearned.errors,
                "secret": unlearned.secret,
                "page_specific": unlearned.page_specific,
                "too_rare": unlearned.too_rare,
            },
        })
    }

    /// Requests of the pages' mix (a form's redirect counted once).
    pub fn mix_requests(&self) -> u64 {
        self.mix.iter().map(|p| p.count).sum()
    }

    /// The share of requests for page resources (style sheets, scripts,
    /// images, fonts).
    pub fn static_share(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            (self.requests - self.pages) as f64 / self.requests as f64
        }
    }
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
