//! Which resources a browser fetches for a page: read from its HTML, and
//! from its style sheets' `@import` and `url()`.
//!
//! What is fetched, and where it differs from Chromium (the browser the
//! tests compare with):
//! - `<link rel=stylesheet>` (not `alternate stylesheet`, not `disabled`),
//!   `<link rel=preload|modulepreload>`, `<link rel=icon>` (and `shortcut
//!   icon`, `apple-touch-icon`; headless Chromium fetches the icon too).
//! - `<script src>` of a JavaScript type (none, `module`, a JavaScript MIME
//!   type); not `nomodule` (a browser with modules skips it).
//! - `<img>`: the `srcset` candidate for one device pixel (`1x`, else the
//!   smallest density, else `src`); width descriptors (`480w`) take `src`.
//!   `loading=lazy` images are fetched (Chromium fetches them when they come
//!   within about 1,250 px of the window, which most pages' images are).
//!   In a `<picture>`, the `<img>`'s own choice (its `<source>`s are not
//!   read).
//! - `<input type=image src>`, `<video poster>`, `<audio|video src>`
//!   (their `<source src>`: the first one), `<embed src>`, `<object data>`.
//! - CSS (`<style>`, `style=""`, and each fetched style sheet): `@import`
//!   as a style sheet; `url()` in `@font-face`'s `src` as a font, the first
//!   of a format Chromium reads (woff2, woff, truetype, opentype, none
//!   given); every other `url()` as an image. Chromium fetches a rule's
//!   image or font only when an element on the page uses it; JMeter's
//!   "Retrieve All Embedded Resources" fetches them all, as headroom does.
//! - Not fetched: `data:` and other non-http(s) URLs, the page itself, a
//!   URL twice in one page (the browser's memory cache), frames (their own
//!   page loads), and hosts other than the page's unless they are named.

use scraper::{Html, Selector};
use std::collections::HashSet;
use url::Url;

/// What a resource is to the browser (its priority and the report's group).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ResourceKind {
    Stylesheet,
    Script,
    Image,
    Font,
    Icon,
    Media,
    /// `<link rel=preload>` of a kind not listed above, `<embed>`, `<object>`.
    Other,
}

impl ResourceKind {
    pub fn name(self) -> &'static str {
        match self {
            ResourceKind::Stylesheet => "stylesheet",
            ResourceKind::Script => "script",
            ResourceKind::Image => "image",
            ResourceKind::Font => "font",
            ResourceKind::Icon => "icon",
            ResourceKind::Media => "media",
            ResourceKind::Other => "other",
        }
    }
}

/// One resource of a page, its URL absolute and without a fragment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    pub url: Url,
    pub kind: ResourceKind,
}

/// Which hosts a page's resources may come from: the page's own (scheme,
/// host and port) and those named.
#[derive(Debug, Clone, Default)]
pub struct Hosts {
    /// `host` or `host:port`, lower case.
    named: Vec<String>,
}

impl Hosts {
    pub fn new(named: impl IntoIterator<Item = String>) -> Hosts {
        Hosts {
            named: named.into_iter().map(|h| h.to_ascii_lowercase()).collect(),
        }
    }

    fn allows(&self, page: &Url, url: &Url) -> bool {
        if url.origin() == page.origin() {
            return true;
        }
        let Some(host) = url.host_str() else {
            return false;
        };
        let with_port = match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_string(),
        };
        self.named.iter().any(|n| *n == host || *n == with_port)
    }
}

/// What reading a page (or a style sheet) found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    /// In document order, each URL once.
    pub resources: Vec<Resource>,
    /// Resources left out because their host is not the page's nor named.
    pub other_hosts: Vec<Url>,
}

/// Collects resources in order, each URL once, sorting out other hosts.
struct Collector<'a> {
    page: &'a Url,
    hosts: &'a Hosts,
    seen: HashSet<String>,
    found: Found,
}

impl Collector<'_> {
    fn add(&mut self, base: &Url, reference: &str, kind: ResourceKind) {
        let reference = reference.trim();
        if reference.is_empty() || reference.starts_with('#') {
            return;
        }
        let Ok(mut url) = base.join(reference) else {
            return;
        };
        if !matches!(url.scheme(), "http" | "https") {
            return;
        }
        url.set_fragment(None);
        if url == *self.page || !self.seen.insert(url.as_str().to_string()) {
            return;
        }
        if self.hosts.allows(self.page, &url) {
            self.found.resources.push(Resource { url, kind });
        } else {
            self.found.other_hosts.push(url);
        }
    }
}

/// The resources a browser fetches for the HTML page at `page`.
pub fn in_html(html: &str, page: &Url, hosts: &Hosts) -> Found {
    let document = Html::parse_document(html);
    let base = base_url(&document, page);
    let mut collector = Collector {
        page,
        hosts,
        seen: HashSet::new(),
        found: Found::default(),
    };
    let any = Selector::parse(
        "link[href], script[src], img, input[src], video, audio, embed[src], object[data], \
         style, [style]",
    )
    .expect("a valid selector");
    for element in document.select(&any) {
        let tag = element.value().name();
        let attr = |name: &str| element.value().attr(name);
        match tag {
            "link" => {
                if let (Some(kind), Some(href)) = (link_kind(&element), attr("href")) {
                    collector.add(&base, href, kind);
                }
            }
            "script" if script_runs(attr("type"), attr("nomodule").is_some()) => {
                if let Some(src) = attr("src") {
                    collector.add(&base, src, ResourceKind::Script);
                }
            }
            "img" => {
                if let Some(chosen) = image_source(attr("srcset"), attr("src")) {
                    collector.add(&base, &chosen, ResourceKind::Image);
                }
            }
            "input" if attr("type").is_some_and(|t| t.eq_ignore_ascii_case("image")) => {
                if let Some(src) = attr("src") {
                    collector.add(&base, src, ResourceKind::Image);
                }
            }
            "video" | "audio" => {
                if let Some(poster) = attr("poster") {
                    collector.add(&base, poster, ResourceKind::Image);
                }
                let first_source = element
                    .children()
                    .filter_map(scraper::ElementRef::wrap)
                    .find(|c| c.value().name() == "source")
                    .and_then(|c| c.value().attr("src"));
                if let Some(src) = attr("src").or(first_source) {
                    collector.add(&base, src, ResourceKind::Media);
                }
            }
            "embed" => collector.add(&base, attr("src").unwrap_or(""), ResourceKind::Other),
            "object" => collector.add(&base, attr("data").unwrap_or(""), ResourceKind::Other),
            "style" => {
                let css: String = element.text().collect();
                css_into(&css, &base, &mut collector);
            }
            _ => {}
        }
        if let Some(inline) = attr("style") {
            css_into(inline, &base, &mut collector);
        }
    }
    collector.found
}

/// The resources a style sheet at `sheet` names (`@import`, fonts, images),
/// for the page at `page`.
pub fn in_css(css: &str, sheet: &Url, page: &Url, hosts: &Hosts) -> Found {
    let mut collector = Collector {
        page,
        hosts,
        seen: HashSet::new(),
        found: Found::default(),
    };
    css_into(css, sheet, &mut collector);
    collector.found
}

fn base_url(document: &Html, page: &Url) -> Url {
    let base = Selector::parse("base[href]").expect("a valid selector");
    document
        .select(&base)
        .next()
        .and_then(|b| b.value().attr("href"))
        .and_then(|href| page.join(href.trim()).ok())
        .unwrap_or_else(|| page.clone())
}

fn link_kind(element: &scraper::ElementRef) -> Option<ResourceKind> {
    let rel = element.value().attr("rel")?.to_ascii_lowercase();
    let tokens: Vec<&str> = rel.split_ascii_whitespace().collect();
    let has = |t: &str| tokens.contains(&t);
    if has("stylesheet") {
        let off = has("alternate") || element.value().attr("disabled").is_some();
        return (!off).then_some(ResourceKind::Stylesheet);
    }
    if has("icon") || has("apple-touch-icon") {
        return Some(ResourceKind::Icon);
    }
    if has("modulepreload") {
        return Some(ResourceKind::Script);
    }
    if has("preload") {
        let kind = match element.value().attr("as").map(str::to_ascii_lowercase) {
            Some(a) if a == "style" => ResourceKind::Stylesheet,
            Some(a) if a == "script" => ResourceKind::Script,
            Some(a) if a == "image" => ResourceKind::Image,
            Some(a) if a == "font" => ResourceKind::Font,
            Some(a) if a == "audio" || a == "video" || a == "track" => ResourceKind::Media,
            // `as` missing or unknown: a browser does not fetch it.
            Some(a) if a == "fetch" => ResourceKind::Other,
            _ => return None,
        };
        return Some(kind);
    }
    None
}

/// Whether a browser runs (so fetches) a `<script>` of this type.
fn script_runs(kind: Option<&str>, nomodule: bool) -> bool {
    let Some(kind) = kind.map(|k| k.trim().to_ascii_lowercase()) else {
        return !nomodule;
    };
    if kind == "module" {
        return true;
    }
    let javascript = kind.is_empty()
        || matches!(
            kind.as_str(),
            "text/javascript"
                | "application/javascript"
                | "application/ecmascript"
                | "application/x-javascript"
                | "text/ecmascript"
                | "text/x-javascript"
                | "text/jscript"
                | "text/livescript"
        );
    javascript && !nomodule
}

/// The image a browser with one device pixel per CSS pixel chooses.
fn image_source(srcset: Option<&str>, src: Option<&str>) -> Option<String> {
    let src = src.map(str::trim).filter(|s| !s.is_empty());
    let Some(srcset) = srcset.filter(|s| !s.trim().is_empty()) else {
        return src.map(str::to_string);
    };
    let mut best: Option<(f64, &str)> = None;
    for candidate in srcset.split(',') {
        let mut parts = candidate.split_ascii_whitespace();
        let Some(url) = parts.next() else { continue };
        let density = match parts.next() {
            None => 1.0,
            Some(d) if d.ends_with('x') => match d[..d.len() - 1].parse::<f64>() {
                Ok(v) if v > 0.0 => v,
                _ => continue,
            },
            // A width descriptor needs `sizes` and the layout: take `src`.
            Some(_) => return src.map(str::to_string),
        };
        let better = match best {
            None => true,
            Some((b, _)) => {
                let now_ok = density >= 1.0;
                let best_ok = b >= 1.0;
                match (now_ok, best_ok) {
                    (true, true) => density < b,
                    (true, false) => true,
                    (false, true) => false,
                    (false, false) => density > b,
                }
            }
        };
        if better {
            best = Some((density, url));
        }
    }
    match (best, src) {
        // `src` stands for `1x` when srcset has no 1x candidate.
        (Some((d, _)), Some(src)) if d != 1.0 => Some(src.to_string()),
        (Some((_, url)), _) => Some(url.to_string()),
        (None, src) => src.map(str::to_string),
    }
}

/// The URLs a piece of CSS references, in order.
fn css_into(css: &str, base: &Url, collector: &mut Collector) {
    let css = strip_comments(css);
    let mut rest = css.as_str();
    while !rest.is_empty() {
        let at_import = find_ci(rest, "@import");
        let at_font = find_ci(rest, "@font-face");
        let at_url = find_ci(rest, "url(");
        let next = [at_import, at_font, at_url].into_iter().flatten().min();
        let Some(start) = next else { break };
        if Some(start) == at_import {
            let after = &rest[start + "@import".len()..];
            let end = after.find(';').unwrap_or(after.len());
            if let Some(reference) = first_reference(&after[..end]) {
                collector.add(base, &reference, ResourceKind::Stylesheet);
            }
            rest = &after[end..];
        } else if Some(start) == at_font {
            let after = &rest[start..];
            let end = after.find('}').map(|e| e + 1).unwrap_or(after.len());
            if let Some(reference) = font_source(&after[..end]) {
                collector.add(base, &reference, ResourceKind::Font);
            }
            rest = &after[end..];
        } else {
            let after = &rest[start + "url(".len()..];
            let end = after.find(')').unwrap_or(after.len());
            collector.add(base, &unquote(&after[..end]), ResourceKind::Image);
            rest = &after[end..];
        }
    }
}

/// The first source of an `@font-face` rule in a format a browser reads.
fn font_source(rule: &str) -> Option<String> {
    let value = descriptor(rule, "src")?;
    let end = value.find([';', '}']).unwrap_or(value.len());
    for candidate in split_top_level(&value[..end]) {
        let Some(at) = find_ci(candidate, "url(") else {
            continue; // local(...)
        };
        let inner = &candidate[at + 4..];
        let close = inner.find(')').unwrap_or(inner.len());
        let url = unquote(&inner[..close]);
        let readable = match find_ci(candidate, "format(") {
            None => true,
            Some(f) => {
                let format = candidate[f + 7..].to_ascii_lowercase();
                ["woff2", "woff", "truetype", "opentype"]
                    .iter()
                    .any(|known| {
                        format
                            .trim_start()
                            .trim_start_matches(['"', '\''])
                            .starts_with(known)
                    })
            }
        };
        if readable {
            return Some(url);
        }
    }
    None
}

/// What follows `name:` in a rule's block (`name` a whole word, not part of
/// another or of a quoted family name).
fn descriptor<'a>(rule: &'a str, name: &str) -> Option<&'a str> {
    let mut from = 0;
    while let Some(at) = find_ci(&rule[from..], name).map(|a| a + from) {
        let before = rule[..at].trim_end().chars().last();
        let after = rule[at + name.len()..].trim_start();
        if matches!(before, Some('{') | Some(';')) {
            if let Some(value) = after.strip_prefix(':') {
                return Some(value);
            }
        }
        from = at + name.len();
    }
    None
}

/// `a, b(c, d), e` → `a`, `b(c, d)`, `e`.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// `url("a.css") screen` or `"a.css"` → `a.css`.
fn first_reference(text: &str) -> Option<String> {
    let text = text.trim_start();
    if let Some(at) = find_ci(text, "url(").filter(|&at| at == 0) {
        let inner = &text[at + 4..];
        let close = inner.find(')').unwrap_or(inner.len());
        return Some(unquote(&inner[..close]));
    }
    let quote = text.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let inner = &text[1..];
    let close = inner.find(quote)?;
    Some(inner[..close].to_string())
}

fn unquote(text: &str) -> String {
    let text = text.trim();
    let text = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .or_else(|| text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')))
        .unwrap_or(text);
    text.trim().to_string()
}

fn strip_comments(css: &str) -> String {
    let mut out = String::with_capacity(css.len());
    let mut rest = css;
    while let Some(open) = rest.find("/*") {
        out.push_str(&rest[..open]);
        match rest[open + 2..].find("*/") {
            Some(close) => rest = &rest[open + 2 + close + 2..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

/// Byte offset of `needle` (ASCII) in `haystack`, ignoring ASCII case.
fn find_ci(haystack: &str, needle: &str) -> Option<usize> {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    if n.len() > h.len() {
        return None;
    }
    (0..=h.len() - n.len()).find(|&i| h[i..i + n.len()].eq_ignore_ascii_case(n))
}

#[cfg(test)]
#[path = "resources_tests.rs"]
mod tests;
