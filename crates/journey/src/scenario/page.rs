//! A page load's resources, fetched as a browser fetches them: up to
//! [`SLOTS`] connections per host for one user over HTTP/1.1, or streams
//! on one connection over HTTP/2, through the user's cache,
//! style sheets read for their own `@import`, fonts and images as they
//! arrive. Each request is one sample under the step's resources label;
//! the page's time runs until the last of them ended.
//!
//! A page load allocates (it reads HTML and CSS); the URL mode and plain
//! journey steps do not go through here.

use super::cookies::CookieJar;
use super::Scenario;
use crate::page_load::cache::{unasked_not_modified, Cache, Headers, Lookup};
use crate::page_load::css::SheetRules;
use crate::page_load::resources::{self, Found, PageStyle, Resource, ResourceKind};
use futures_util::stream::{FuturesUnordered, StreamExt};
use headroom_bundle::sample::{status_error, ErrorKind, Sample};
use headroom_http::client::{HttpClient, Outgoing};
use headroom_http::conn::{Connector, UserTls};
use headroom_http::http1::with_response;
use headroom_http::target::{HostHeader, Scheme, Target, USER_AGENT};
use scraper::Html;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet, VecDeque};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use url::Url;

/// Connections a browser opens to one host for one page (HTTP/1.1).
pub const SLOTS: usize = 6;
/// Most resources one page load fetches; beyond, they are counted as
/// left out (a page of thousands of images does not stall a user).
pub const MOST_RESOURCES: usize = 2_000;

/// What a user keeps between page loads: the browser's cache, the
/// resources each cached style sheet names, and the connections of its
/// slots (slot 0 shares the journey's own; the others give back their
/// read buffers between pages).
pub struct PageState {
    pub cache: Cache,
    /// What each style sheet in the cache names, by its URL: a fresh or
    /// revalidated style sheet is not read again, its rules are applied to
    /// the new page (shared with it, and with the thread's other users who
    /// got the same text: `page_load::sheets`).
    sheet_rules: HashMap<String, Rc<SheetRules>>,
    /// Per slot, per origin: the connection, made when first needed.
    slots: Vec<Vec<Option<HttpClient>>>,
    /// Per origin: the user's TLS sessions, shared by its connections
    /// there (its journey's own and its slots').
    tls: Vec<Option<UserTls>>,
    /// The user's clock for the cache: when the user started.
    started: Instant,
    /// Icons answered 404 or 410: Chromium does not ask for them again
    /// while it runs (other error answers it asks for at each page).
    missing_icons: HashSet<String>,
}

impl PageState {
    pub fn new(origins: usize) -> PageState {
        PageState {
            cache: Cache::new(),
            sheet_rules: HashMap::new(),
            slots: (0..SLOTS)
                .map(|_| (0..origins).map(|_| None).collect())
                .collect(),
            tls: (0..origins).map(|_| None).collect(),
            started: Instant::now(),
            missing_icons: HashSet::new(),
        }
    }
}

/// What a page's resources added up to.
#[derive(Debug, Default, Clone)]
pub struct PageOutcome {
    /// When the last resource ended (`None`: nothing was requested).
    pub end: Option<Instant>,
    pub bytes_received: u64,
    pub bytes_sent: u64,
    pub requests: u32,
    /// Taken from the cache without a request.
    pub from_cache: u32,
    /// Resources on hosts neither the page's nor named, and beyond
    /// [`MOST_RESOURCES`].
    pub left_out: u32,
    /// Resources that failed (an error answer, no answer, a redirect
    /// loop or chain): the page failed with them.
    pub failed: u32,
    /// The first [`MOST_FAILURES_KEPT`] of them, for `scenario try`.
    pub failures: Vec<ResourceFailure>,
}

/// One resource of a page that failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceFailure {
    pub url: String,
    /// 0 when no answer came.
    pub status: u16,
    pub error: ErrorKind,
    pub detail: Option<&'static str>,
}

/// Failed resources a page's outcome names one by one.
pub const MOST_FAILURES_KEPT: usize = 8;
/// Redirects a browser follows for one resource (Chromium's limit; a
/// journey's own steps stop at 10).
pub const MOST_RESOURCE_REDIRECTS: u32 = 20;
/// Why a redirected resource was given up.
const REDIRECT_LOOP: &str = "its redirects came back to a URL already in the chain";
const REDIRECT_CHAIN: &str = "more than 20 redirects in a row (Chromium's ERR_TOO_MANY_REDIRECTS)";

impl PageOutcome {
    /// A resource failed: counted, and named while few.
    fn fail(&mut self, failure: ResourceFailure) {
        self.failed += 1;
        if self.failures.len() < MOST_FAILURES_KEPT {
            self.failures.push(failure);
        }
    }
}

/// The page the runner hands over: where it came from and what it said.
pub struct Page<'a> {
    pub url: Url,
    pub html: &'a str,
    /// The label each resource's sample is recorded under.
    pub label: u16,
    pub vu: u32,
    /// The step's `also_loads:`: fetched besides what the HTML names.
    pub also_loads: &'a [String],
}

/// What a page load needs of the journey: its scenario (hosts, headers,
/// timeout, keep-alive), a connector per origin, and where samples go.
pub struct Context<'a> {
    pub scenario: &'a Scenario,
    pub connectors: &'a [Arc<Connector>],
    pub record: &'a dyn Fn(&Sample),
}

/// Everything the slots share while one page loads.
struct Shared<'a> {
    ctx: &'a Context<'a>,
    page: &'a Page<'a>,
    /// The scenario's `defaults: headers:`, rendered once for the page.
    headers: &'a str,
    /// The page, parsed: style sheets' rules are matched against it.
    document: Html,
    style: RefCell<PageStyle>,
    jar: RefCell<&'a mut CookieJar>,
    cache: RefCell<&'a mut Cache>,
    sheet_rules: RefCell<&'a mut HashMap<String, Rc<SheetRules>>>,
    queue: RefCell<VecDeque<Resource>>,
    seen: RefCell<HashSet<String>>,
    /// Each resource reached by a redirect: the URL that pointed to it
    /// and how many redirects led there (a chain is followed as far as a
    /// browser follows one, a loop is an error).
    redirected_from: RefCell<HashMap<String, (String, u32)>>,
    outcome: RefCell<PageOutcome>,
    clock: Instant,
    /// The origin's `/favicon.ico` when the page names no icon: asked for
    /// once the page has loaded, as a browser does. Its error answer (most
    /// sites have none) is no failure of the page.
    default_icon: RefCell<Option<Resource>>,
    default_icon_url: Option<String>,
    missing_icons: RefCell<&'a mut HashSet<String>>,
}

/// Fetches the resources of `page` (found in its HTML) for one user.
/// `main` holds the journey's own connection per origin; slot 0 uses it.
pub async fn load(
    ctx: &Context<'_>,
    page: &Page<'_>,
    headers: &str,
    state: &mut PageState,
    main: &mut [Option<HttpClient>],
    jar: &mut CookieJar,
) -> PageOutcome {
    let document = crate::page_load::nesting::parse(page.html);
    let mut style = PageStyle::default();
    let found = resources::in_document(
        &document,
        &page.url,
        &ctx.scenario.resource_hosts,
        &mut style,
    );
    let default_icon = if found.names_icon {
        None
    } else {
        resources::default_icon(&page.url)
    };
    let found = with_also_loads(found, page, default_icon.as_ref());
    let mut seen = HashSet::new();
    seen.insert(page.url.as_str().to_string());
    let PageState {
        cache,
        sheet_rules,
        slots,
        tls,
        started,
        missing_icons,
    } = state;
    // The journey's connection to a host holds the user's sessions there.
    for (sessions, client) in tls.iter_mut().zip(main.iter()) {
        if let Some(client) = client {
            *sessions = Some(client.user_tls());
        }
    }
    let shared = Shared {
        ctx,
        page,
        headers,
        document,
        style: RefCell::new(style),
        jar: RefCell::new(jar),
        cache: RefCell::new(cache),
        sheet_rules: RefCell::new(sheet_rules),
        queue: RefCell::new(VecDeque::new()),
        seen: RefCell::new(seen),
        redirected_from: RefCell::new(HashMap::new()),
        outcome: RefCell::new(PageOutcome::default()),
        clock: *started,
        default_icon_url: default_icon.as_ref().map(|r| r.url.to_string()),
        default_icon: RefCell::new(default_icon),
        missing_icons: RefCell::new(missing_icons),
    };
    shared.enqueue(found);
    // Slot 0 takes the journey's connections for the time of the page.
    for (own, main) in slots[0].iter_mut().zip(main.iter_mut()) {
        *own = main.take();
    }
    let mut connections = Connections::new(slots, ctx.connectors, tls);
    shared.fetch_all(&mut connections).await;
    for (own, main) in slots[0].iter_mut().zip(main.iter_mut()) {
        *main = own.take();
    }
    // The user reads the page now: the other slots keep their connections
    // (a browser does) but not their read buffers, 16 KiB each, taken
    // again by the next page that needs them.
    for client in slots[1..].iter_mut().flatten().flatten() {
        client.release_buffer();
    }
    shared.outcome.into_inner()
}

/// The page's resources and, after them, its `also_loads:` (what its
/// scripts asked for in the log), each joined to the page's URL; one its
/// HTML names is fetched once (the page's seen URLs, as for any
/// resource), the default icon as the browser asks for it (the page
/// load's own rule), a URL that does not parse is left out.
fn with_also_loads(mut found: Found, page: &Page<'_>, default_icon: Option<&Resource>) -> Found {
    for also in page.also_loads {
        let Ok(url) = page.url.join(also) else {
            found.other_hosts.push(page.url.clone());
            continue;
        };
        let icon = url.path() == "/favicon.ico" && url.origin() == page.url.origin();
        if icon || default_icon.is_some_and(|d| d.url == url) {
            continue;
        }
        let kind = resources::kind_by_extension(&url);
        found.resources.push(Resource { url, kind });
    }
    found
}

/// How a fetch holds its connection: an HTTP/1.1 slot's, given back when
/// it is done, or a stream on the origin's HTTP/2 connection.
#[derive(Clone, Copy)]
enum Lease {
    Slot(usize),
    Stream,
}

/// A page's connections per origin while it loads, as a browser keeps
/// them: over HTTP/1.1 up to [`SLOTS`], one request at a time on each;
/// over HTTP/2 one, carrying as many streams at once as the server's
/// SETTINGS allow (at most [`MOST_STREAMS`]).
struct Connections<'s> {
    /// Per slot, per origin.
    slots: &'s mut [Vec<Option<HttpClient>>],
    connectors: &'s [Arc<Connector>],
    tls: &'s mut [Option<UserTls>],
    /// Per origin, a bit per slot lent out.
    lent: Vec<u8>,
    /// Per origin, streams open on its HTTP/2 connection.
    streams: Vec<usize>,
}

/// Streams a browser opens at once on one connection, whatever the server
/// allows (Chromium's cap on SETTINGS_MAX_CONCURRENT_STREAMS).
pub const MOST_STREAMS: usize = 256;

impl<'s> Connections<'s> {
    /// Over HTTP/2 a browser keeps one connection per host: the first slot
    /// speaking it there carries the page's streams, the other slots' are
    /// closed (not the journey's own, slot 0's).
    fn new(
        slots: &'s mut [Vec<Option<HttpClient>>],
        connectors: &'s [Arc<Connector>],
        tls: &'s mut [Option<UserTls>],
    ) -> Connections<'s> {
        let origins = connectors.len();
        let connections = Connections {
            slots,
            connectors,
            tls,
            lent: vec![0; origins],
            streams: vec![0; origins],
        };
        for origin in 0..origins {
            if let Some(owner) = connections.owner(origin) {
                // Slot 0's is the journey's own: it stays the journey's.
                for (lane, clients) in connections.slots.iter_mut().enumerate().skip(1) {
                    if lane != owner {
                        clients[origin] = None;
                    }
                }
            }
        }
        connections
    }

    /// The slot whose connection to `origin` speaks HTTP/2.
    fn owner(&self, origin: usize) -> Option<usize> {
        (0..self.slots.len()).find(|&lane| {
            self.slots[lane][origin]
                .as_ref()
                .is_some_and(HttpClient::speaks_h2)
        })
    }

    /// A connection for one request to `origin`, if one is free: a new
    /// stream on its HTTP/2 connection, or a free slot (its connection
    /// made when first used). While the user's first connection to a host
    /// that may speak HTTP/2 is being made, the others wait for it.
    fn lend(&mut self, origin: usize, timeout: Duration) -> Option<(HttpClient, Lease)> {
        if !self.free(origin) {
            return None;
        }
        if let Some(owner) = self.owner(origin) {
            let stream = self.slots[owner][origin].as_ref()?.sharing()?;
            self.streams[origin] += 1;
            return Some((stream, Lease::Stream));
        }
        let lane = (0..self.slots.len()).find(|&lane| self.lent[origin] & (1 << lane) == 0)?;
        self.lent[origin] |= 1 << lane;
        let connector = &self.connectors[origin];
        let client = self.slots[lane][origin].take().unwrap_or_else(|| {
            let tls = self.tls[origin]
                .get_or_insert_with(|| connector.user_tls())
                .clone();
            HttpClient::with_tls(connector.clone(), timeout, tls)
        });
        Some((client, Lease::Slot(lane)))
    }

    /// Whether a connection to `origin` may be lent: a stream below the
    /// HTTP/2 connection's limit, or a slot not lent (none while the
    /// first connection to a host that may speak HTTP/2 is being made).
    fn free(&self, origin: usize) -> bool {
        if let Some(owner) = self.owner(origin) {
            let limit = self.slots[owner][origin]
                .as_ref()
                .and_then(HttpClient::stream_limit)
                .map_or(1, |limit| limit.clamp(1, MOST_STREAMS));
            return self.streams[origin] < limit;
        }
        let known = self
            .slots
            .iter()
            .any(|clients| clients[origin].as_ref().is_some_and(HttpClient::connected));
        let waiting = !known && self.connectors[origin].may_speak_h2() && self.lent[origin] != 0;
        !waiting && self.lent[origin].count_ones() < self.slots.len() as u32
    }

    /// A request is done: its slot's connection back in place, or its
    /// stream closed. A stream that had to open a new HTTP/2 connection
    /// (the old one was closed) leaves it to carry the next streams.
    fn give_back(&mut self, origin: usize, lease: Lease, client: HttpClient) {
        match lease {
            Lease::Slot(lane) => {
                self.lent[origin] &= !(1 << lane);
                self.slots[lane][origin] = Some(client);
            }
            Lease::Stream => {
                self.streams[origin] -= 1;
                let Some(owner) = self.owner(origin) else {
                    return;
                };
                let moved = client.speaks_h2()
                    && self.slots[owner][origin]
                        .as_ref()
                        .is_some_and(|held| !client.shares_connection_with(held));
                if moved {
                    self.slots[owner][origin] = Some(client);
                }
            }
        }
    }
}

/// What a fetch sends to revalidate a cached copy.
#[derive(Default)]
struct Validators {
    etag: Option<String>,
    modified: Option<String>,
}

/// A fetch's buffers: the request, the response's head and its body.
#[derive(Default)]
struct Buffers {
    request: Vec<u8>,
    head: Vec<u8>,
    body: Vec<u8>,
}

impl Shared<'_> {
    /// Adds what a page or a style sheet named: each URL once per page, at
    /// most [`MOST_RESOURCES`].
    fn enqueue(&self, found: Found) {
        let mut outcome = self.outcome.borrow_mut();
        outcome.left_out += found.other_hosts.len() as u32;
        let mut seen = self.seen.borrow_mut();
        let mut queue = self.queue.borrow_mut();
        for resource in found.resources {
            if !seen.insert(resource.url.as_str().to_string()) {
                continue;
            }
            if seen.len() > MOST_RESOURCES + 1 {
                outcome.left_out += 1;
                continue;
            }
            queue.push_back(resource);
        }
    }

    /// Fetches the queue, in order, as connections free up, until it is
    /// empty and nothing is in flight (a style sheet in flight may name
    /// more); then the images and fonts the page's style shows.
    async fn fetch_all(&self, connections: &mut Connections<'_>) {
        let mut in_flight = FuturesUnordered::new();
        let mut spare: Vec<Buffers> = Vec::new();
        let mut style_done = false;
        let origins = self.ctx.connectors.len();
        let mut blocked = vec![false; origins];
        loop {
            let mut at = 0;
            blocked.fill(false);
            let mut all_blocked = 0;
            while all_blocked < origins {
                let origin = match self.queue.borrow().get(at) {
                    None => break,
                    Some(resource) => self.origin_of(&resource.url),
                };
                let Some(origin) = origin else {
                    self.queue.borrow_mut().remove(at);
                    self.outcome.borrow_mut().left_out += 1;
                    continue;
                };
                let Some((mut client, lease)) = connections.lend(origin, self.ctx.scenario.timeout)
                else {
                    all_blocked += usize::from(!std::mem::replace(&mut blocked[origin], true));
                    at += 1;
                    continue;
                };
                let resource = self.queue.borrow_mut().remove(at).expect("looked at");
                if resource.kind == ResourceKind::Icon
                    && self.missing_icons.borrow().contains(resource.url.as_str())
                {
                    // Not there last time: the browser does not ask again.
                    connections.give_back(origin, lease, client);
                    continue;
                }
                let Some(validators) = self.look_up(&resource) else {
                    // Fresh in the cache: nothing to fetch.
                    connections.give_back(origin, lease, client);
                    continue;
                };
                let mut buffers = spare.pop().unwrap_or_default();
                in_flight.push(async move {
                    self.fetch(&resource, origin, &mut client, validators, &mut buffers)
                        .await;
                    (origin, lease, client, buffers)
                });
            }
            match in_flight.next().await {
                Some((origin, lease, client, buffers)) => {
                    connections.give_back(origin, lease, client);
                    spare.push(buffers);
                }
                None if !self.queue.borrow().is_empty() => {
                    // Nothing in flight holds a connection: cannot happen;
                    // counted rather than waited for.
                    let left = self.queue.borrow_mut().drain(..).count();
                    self.outcome.borrow_mut().left_out += left as u32;
                }
                None if !style_done => {
                    // Every style sheet is in: the page's style is known.
                    style_done = true;
                    let shown = self.style.borrow().finish(
                        &self.document,
                        &self.page.url,
                        &self.ctx.scenario.resource_hosts,
                    );
                    self.enqueue(shown);
                }
                None => {
                    // The page has loaded: its default icon, if any.
                    let Some(icon) = self.default_icon.borrow_mut().take() else {
                        return;
                    };
                    self.enqueue(Found {
                        resources: vec![icon],
                        ..Found::default()
                    });
                }
            }
        }
    }

    /// What the user's cache says of a resource: None when it is fresh
    /// there (taken without a request), else the validators to send.
    fn look_up(&self, resource: &Resource) -> Option<Validators> {
        let now = self.clock.elapsed();
        match self.cache.borrow().lookup(resource.url.as_str(), now) {
            Lookup::Fresh => {}
            Lookup::Revalidate {
                if_none_match,
                if_modified_since,
            } => {
                return Some(Validators {
                    etag: if_none_match.map(str::to_string),
                    modified: if_modified_since.map(str::to_string),
                })
            }
            Lookup::Fetch => return Some(Validators::default()),
        }
        self.outcome.borrow_mut().from_cache += 1;
        self.named_by_kept_sheet(resource);
        None
    }

    /// The origin of the scenario a resource's URL is on.
    fn origin_of(&self, url: &Url) -> Option<usize> {
        let https = url.scheme() == "https";
        let host = url
            .host_str()?
            .trim_start_matches('[')
            .trim_end_matches(']');
        let port = url.port_or_known_default()?;
        self.ctx.scenario.origins.iter().position(|o| {
            (o.scheme == Scheme::Https) == https
                && o.host.eq_ignore_ascii_case(host)
                && o.port == port
        })
    }

    /// One resource's request on the connection lent for it, recorded as
    /// a sample; its response kept in the cache and the jar.
    async fn fetch(
        &self,
        resource: &Resource,
        origin: usize,
        client: &mut HttpClient,
        validators: Validators,
        buffers: &mut Buffers,
    ) {
        let Buffers {
            request,
            head,
            body,
        } = buffers;
        let target = &self.ctx.scenario.origins[origin];
        self.build(
            request,
            target,
            &resource.url,
            validators.etag.as_deref(),
            validators.modified.as_deref(),
        );
        let outgoing = Outgoing {
            bytes: request,
            is_head: false,
            keep_alive: self.ctx.scenario.keep_alive,
        };
        let keep = resource.kind == ResourceKind::Stylesheet;
        body.clear();
        head.clear();
        let started = Instant::now();
        let exchange = client
            .send(
                outgoing,
                started,
                &mut |_, chunk| {
                    if keep {
                        crate::page_load::sheets::keep_part(body, chunk)
                    }
                },
                Some(head),
            )
            .await;
        let end = Instant::now();
        let conditional = validators.etag.is_some() || validators.modified.is_some();
        let unasked = unasked_not_modified(exchange.status, conditional);
        // A default icon answered 404 (or any error status) is a site
        // without one: counted by its status, not as an error.
        let default_icon = self.default_icon_url.as_deref() == Some(resource.url.as_str());
        let error = exchange
            .error
            .or_else(|| status_error(exchange.status).filter(|_| !default_icon))
            .or(unasked.map(|u| u.0));
        let detail = exchange.detail.or(unasked.map(|u| u.1));
        (self.ctx.record)(&Sample {
            label: self.page.label,
            vu: self.page.vu,
            intended_start: started,
            actual_start: started,
            connect: exchange.connect,
            tls: exchange.tls,
            first_byte: exchange.first_byte,
            end,
            status: exchange.status,
            bytes_received: exchange.bytes_received,
            bytes_sent: exchange.bytes_sent,
            error,
            failed_check: None,
            detail,
            resent: exchange.resent,
            server_timing: exchange.server_timing,
        });
        {
            let mut outcome = self.outcome.borrow_mut();
            outcome.end = Some(outcome.end.map_or(end, |e| e.max(end)));
            outcome.bytes_received += exchange.bytes_received;
            outcome.bytes_sent += exchange.bytes_sent;
            outcome.requests += 1;
            if let Some(error) = error {
                outcome.fail(ResourceFailure {
                    url: resource.url.to_string(),
                    status: exchange.status,
                    error,
                    detail,
                });
            }
        }
        if resource.kind == ResourceKind::Icon && matches!(exchange.status, 404 | 410) {
            self.missing_icons
                .borrow_mut()
                .insert(resource.url.to_string());
        }
        // An error answer (4xx, 5xx) still sets cookies and may be cached.
        if exchange.error.is_some() {
            return;
        }
        self.keep(resource, exchange.status, head, body, self.clock.elapsed());
    }

    /// Stores the response in the cache and the jar; a style sheet's body
    /// (200) or kept list (304) names more resources.
    fn keep(&self, resource: &Resource, status: u16, head: &[u8], body: &[u8], now: Duration) {
        let url = resource.url.as_str();
        let target_host = resource.url.host_str().unwrap_or_default().to_string();
        let mut sheet: Option<Rc<SheetRules>> = None;
        let mut location: Option<String> = None;
        let _ = with_response(head, |parsed, _| {
            let pairs = parsed
                .headers
                .iter()
                .filter_map(|h| Some((h.name, std::str::from_utf8(h.value).ok()?)));
            let cache_headers = Headers::from_pairs(pairs.clone());
            self.cache
                .borrow_mut()
                .store(url, status, &cache_headers, now);
            let mut jar = self.jar.borrow_mut();
            for (name, value) in pairs.clone() {
                if name.eq_ignore_ascii_case("set-cookie") {
                    jar.store(value, &target_host, resource.url.path(), SystemTime::now());
                } else if name.eq_ignore_ascii_case("location") {
                    location = Some(value.to_string());
                }
            }
            if resource.kind == ResourceKind::Stylesheet && (200..300).contains(&status) {
                let headers: Vec<(&str, &str)> = pairs.collect();
                let mut decoded = Vec::new();
                let css =
                    match headroom_http::content_encoding::decode(&headers, body, &mut decoded) {
                        Ok(true) => String::from_utf8_lossy(&decoded).into_owned(),
                        Ok(false) => String::from_utf8_lossy(body).into_owned(),
                        Err(_) => String::new(),
                    };
                sheet = Some(crate::page_load::sheets::read(&resource.url, &css));
            }
        });
        // A redirected resource: the browser fetches where it points, as a
        // resource of the same kind (a loop ends at a URL seen before).
        if let (true, Some(location)) = (matches!(status, 301 | 302 | 303 | 307 | 308), location) {
            if let Some(url) = crate::page_load::css::join(&resource.url, &location) {
                if let Err(why) = self.follow(&resource.url, &url) {
                    self.outcome.borrow_mut().fail(ResourceFailure {
                        url: resource.url.to_string(),
                        status,
                        error: ErrorKind::Redirects,
                        detail: Some(why),
                    });
                    return;
                }
                let found = resources::redirected(
                    url,
                    resource.kind,
                    &self.page.url,
                    &self.ctx.scenario.resource_hosts,
                );
                self.enqueue(found);
            }
            return;
        }
        match sheet {
            Some(rules) => {
                self.apply(&resource.url, &rules);
                self.sheet_rules.borrow_mut().insert(url.to_string(), rules);
            }
            None if status == 304 => self.named_by_kept_sheet(resource),
            None => {}
        }
    }

    /// Whether a browser follows a resource's redirect from `from` to
    /// `to`: not back into its own chain (a loop), not past
    /// [`MOST_RESOURCE_REDIRECTS`] in a row.
    fn follow(&self, from: &Url, to: &Url) -> Result<(), &'static str> {
        let mut chain = self.redirected_from.borrow_mut();
        let hops = chain.get(from.as_str()).map_or(0, |(_, hops)| *hops) + 1;
        let mut at = Some(from.as_str());
        while let Some(url) = at {
            if url == to.as_str() {
                return Err(REDIRECT_LOOP);
            }
            at = chain.get(url).map(|(before, _)| before.as_str());
        }
        if hops > MOST_RESOURCE_REDIRECTS {
            return Err(REDIRECT_CHAIN);
        }
        chain
            .entry(to.as_str().to_string())
            .or_insert_with(|| (from.as_str().to_string(), hops));
        Ok(())
    }

    /// A style sheet of this page is in: its rules join the page's style,
    /// its imports are fetched.
    fn apply(&self, url: &Url, rules: &Rc<SheetRules>) {
        let imports = self.style.borrow_mut().add_sheet(
            Some(url),
            Rc::clone(rules),
            &self.page.url,
            &self.ctx.scenario.resource_hosts,
        );
        self.enqueue(imports);
    }

    /// A style sheet the cache answered for: its rules as read last time.
    fn named_by_kept_sheet(&self, resource: &Resource) {
        if resource.kind != ResourceKind::Stylesheet {
            return;
        }
        let rules = self
            .sheet_rules
            .borrow()
            .get(resource.url.as_str())
            .cloned();
        if let Some(rules) = rules {
            self.apply(&resource.url, &rules);
        }
    }

    /// A browser's GET for a resource: the scenario's headers, the user's
    /// cookies for it, and the cache's validators.
    fn build(
        &self,
        out: &mut Vec<u8>,
        target: &Target,
        url: &Url,
        etag: Option<&str>,
        modified: Option<&str>,
    ) {
        use std::io::Write as _;
        out.clear();
        let path = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_string(),
        };
        let given = |name: &str| {
            self.headers.lines().any(|l| {
                l.split(':')
                    .next()
                    .is_some_and(|n| n.eq_ignore_ascii_case(name))
            })
        };
        let _ = write!(out, "GET {path} HTTP/1.1\r\n");
        if !given("host") {
            let _ = write!(out, "Host: {}\r\n", HostHeader(target));
        }
        if !given("user-agent") {
            let _ = write!(out, "User-Agent: {USER_AGENT}\r\n");
        }
        if !given("accept") {
            out.extend_from_slice(b"Accept: */*\r\n");
        }
        out.extend_from_slice(self.headers.as_bytes());
        if let (Some(credentials), false) = (&target.authorization, given("authorization")) {
            let _ = write!(out, "Authorization: {credentials}\r\n");
        }
        if !given("referer") {
            write_referer(out, &self.page.url, url);
        }
        let mut cookies = String::new();
        if self.jar.borrow().header_value(
            &target.host,
            &path,
            target.scheme == Scheme::Https,
            SystemTime::now(),
            &mut cookies,
        ) {
            let _ = write!(out, "Cookie: {cookies}\r\n");
        }
        if let Some(etag) = etag {
            let _ = write!(out, "If-None-Match: {etag}\r\n");
        }
        if let Some(modified) = modified {
            let _ = write!(out, "If-Modified-Since: {modified}\r\n");
        }
        if !self.ctx.scenario.keep_alive {
            out.extend_from_slice(b"Connection: close\r\n");
        }
        out.extend_from_slice(b"\r\n");
    }
}

/// The Referer a browser sends for a resource of `page` by its default
/// policy (strict-origin-when-cross-origin): the page's URL without its
/// fragment on the page's origin, only its origin on another, nothing
/// from HTTPS to HTTP. (For what a style sheet names, Chromium sends the
/// sheet's URL; the page's is sent here.)
fn write_referer(out: &mut Vec<u8>, page: &Url, resource: &Url) {
    use std::io::Write as _;
    if page.scheme() == "https" && resource.scheme() != "https" {
        return;
    }
    let whole = page.as_str();
    let same_origin = page.scheme() == resource.scheme()
        && page.host_str() == resource.host_str()
        && page.port_or_known_default() == resource.port_or_known_default();
    if same_origin {
        let end = whole.find('#').unwrap_or(whole.len());
        let _ = write!(out, "Referer: {}\r\n", &whole[..end]);
    } else {
        let _ = write!(out, "Referer: {}/\r\n", page.origin().ascii_serialization());
    }
}

#[cfg(test)]
#[path = "page_tests.rs"]
mod tests;
