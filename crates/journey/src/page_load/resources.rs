//! Which resources a browser fetches for a page: read from its HTML, and
//! from its style sheets (`@import`, and the images and fonts of the rules
//! the page's elements match).
//!
//! What is fetched, and where it differs from Chromium (the browser the
//! tests compare with):
//! - `<link rel=stylesheet>` (not `alternate stylesheet`, not `disabled`),
//!   `<link rel=preload|modulepreload>`, `<link rel=icon>` (and `shortcut
//!   icon`; headless Chromium fetches it too, not `apple-touch-icon`).
//! - `<script src>` of a JavaScript type (none, `module`, a JavaScript MIME
//!   type); not `nomodule` (a browser with modules skips it).
//! - `<img>`: the `srcset` candidate for one device pixel (`1x`, else the
//!   smallest density, else `src`); width descriptors (`480w`) take `src`.
//!   `loading=lazy` images only near the top of the page: Chromium fetches
//!   them when the user scrolls within about 1,250 px of them, at once for
//!   those within 1,970 px of the top; headroom's users do not scroll, and
//!   where an image sits is estimated ([`super::layout`]). `srcset` is split as
//!   the HTML standard says (a `data:` candidate keeps its commas). In a
//!   `<picture>`, the first `<source>` before the `<img>` whose `type` is
//!   empty or an image type Chromium decodes (AVIF, WebP, JPEG, PNG, GIF,
//!   SVG, BMP, ICO: not JPEG XL), whose `media` applies and whose `srcset`
//!   has a density candidate; else the `<img>`'s own choice (a source's
//!   width descriptors, like an `<img>`'s, need the layout).
//! - `<input type=image src>`, `<video poster>`, `<audio|video src>`
//!   (their `<source src>`: the first one), `<embed src>`, `<object data>`.
//! - CSS (`<style>`, `style=""`, and each fetched style sheet, read by
//!   [`super::css`]): `@import` as a style sheet; the images (`url()`) of
//!   the rules an element of the page matches, as a browser computes the
//!   page's style (not those of `:hover`, `:focus` and other later states,
//!   nor of `@media` queries that do not apply to a screen 1,280 px wide);
//!   a font for each family such a rule uses first, its first `@font-face`
//!   of a format Chromium reads (woff2, woff, truetype, opentype, none
//!   given), once the page's style sheets are in. A browser loads a face
//!   per weight and style the text uses; headroom loads the first.
//! - A page naming no icon: its origin's `/favicon.ico`, once the page
//!   has loaded ([`default_icon`]; the page load asks for it, through the
//!   user's cache, and not again after a 404 or 410, as Chromium).
//! - Not fetched: `data:` and other non-http(s) URLs, the page itself, a
//!   URL twice in one page (the browser's memory cache), frames (their own
//!   page loads), and hosts other than the page's unless they are named.

use super::css::{self, SheetRules, StyleRule};
use scraper::{Html, Selector};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::LazyLock;
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
    /// Whether the page names an icon (`<link rel=icon>`, on any host):
    /// without one a browser asks for its origin's `/favicon.ico`.
    pub names_icon: bool,
}

/// Collects resources in order, each URL once, sorting out other hosts.
struct Collector<'a> {
    page: &'a Url,
    hosts: &'a Hosts,
    seen: HashSet<String>,
    found: Found,
}

impl<'a> Collector<'a> {
    fn new(page: &'a Url, hosts: &'a Hosts) -> Collector<'a> {
        Collector {
            page,
            hosts,
            seen: HashSet::new(),
            found: Found::default(),
        }
    }

    fn add(&mut self, base: &Url, reference: &str, kind: ResourceKind) {
        if let Some(url) = css::join(base, reference) {
            self.add_url(url, kind);
        }
    }

    fn extend(&mut self, found: Found) {
        for resource in found.resources {
            self.add_url(resource.url, resource.kind);
        }
        self.found.other_hosts.extend(found.other_hosts);
    }

    fn add_url(&mut self, url: Url, kind: ResourceKind) {
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

/// The page's style as its sheets arrive; once all are in,
/// [`PageStyle::finish`] computes which images and fonts the page shows,
/// as a browser does after its style sheets loaded.
#[derive(Debug, Clone, Default)]
pub struct PageStyle {
    /// The sheets by their place in the cascade: document order, and an
    /// imported sheet just before the rules of the sheet importing it.
    /// The rules are the user's kept ones, shared (not copied) per page.
    sheets: Vec<(Vec<u32>, Rc<SheetRules>)>,
    /// The place of each linked or imported sheet, by its URL.
    places: HashMap<String, Vec<u32>>,
    next_place: u32,
    /// Families named in `style` attributes.
    inline_families: HashSet<String>,
}

impl PageStyle {
    /// A `<link rel=stylesheet>`'s place, in document order.
    fn reserve(&mut self, url: &Url) {
        let place = vec![self.next_place];
        self.next_place += 1;
        self.places.entry(url.as_str().to_string()).or_insert(place);
    }

    /// A sheet arrived (or came from the cache): its rules take its place;
    /// returns the sheets it imports, to fetch.
    pub fn add_sheet(
        &mut self,
        url: Option<&Url>,
        rules: impl Into<Rc<SheetRules>>,
        page: &Url,
        hosts: &Hosts,
    ) -> Found {
        let rules = rules.into();
        let place = url
            .and_then(|u| self.places.get(u.as_str()).cloned())
            .unwrap_or_else(|| {
                self.next_place += 1;
                vec![self.next_place - 1]
            });
        let mut collector = Collector::new(page, hosts);
        for (j, import) in rules.imports.iter().enumerate() {
            let mut at = place.clone();
            at.push(j as u32);
            self.places.entry(import.as_str().to_string()).or_insert(at);
            collector.add_url(import.clone(), ResourceKind::Stylesheet);
        }
        let mut own = place;
        own.push(u32::MAX);
        self.sheets.push((own, rules));
        collector.found
    }

    /// The images and fonts the page shows: for each element (and its
    /// `::before`/`::after`), the image of the declaration that wins the
    /// cascade (`!important`, then specificity, then order) for each
    /// property; for each family a matched rule uses first, its first face.
    pub fn finish(&self, document: &Html, page: &Url, hosts: &Hosts) -> Found {
        let mut sheets: Vec<&(Vec<u32>, Rc<SheetRules>)> = self.sheets.iter().collect();
        sheets.sort_by(|a, b| a.0.cmp(&b.0));
        let compiled = compile(&sheets);
        let mut collector = Collector::new(page, hosts);
        let mut families = self.inline_families.clone();
        // Elements not drawn (`display: none`, theirs or an ancestor's):
        // their images and fonts are not fetched.
        let mut hidden: HashSet<ego_tree::NodeId> = HashSet::new();
        for element in document
            .root_element()
            .descendants()
            .filter_map(scraper::ElementRef::wrap)
        {
            let parent_hidden = element
                .parent()
                .is_some_and(|parent| hidden.contains(&parent.id()));
            if parent_hidden || displays_none(&element, &compiled) {
                hidden.insert(element.id());
                continue;
            }
            for url in element_images(&element, &compiled, &mut families) {
                collector.add_url(url.clone(), ResourceKind::Image);
            }
        }
        let mut loaded: HashSet<&str> = HashSet::new();
        for (_, rules) in &sheets {
            for (family, url) in &rules.faces {
                if families.contains(family) && loaded.insert(family) {
                    collector.add_url(url.clone(), ResourceKind::Font);
                }
            }
        }
        collector.found
    }
}

/// One selector of a sheet's rule (compiled when the sheet was read),
/// with where the rule stands (its sheet's place and its index in it).
struct Compiled<'r> {
    selector: &'r Selector,
    text: &'r css::SelectorText,
    order: (usize, usize),
    rule: &'r StyleRule,
}

/// A declaration's rank in the cascade: `!important`, specificity, order.
type Rank = (bool, u32, (usize, usize));

fn compile<'r>(sheets: &[&'r (Vec<u32>, Rc<SheetRules>)]) -> Vec<Compiled<'r>> {
    let mut compiled = Vec::new();
    for (sheet, (_, rules)) in sheets.iter().enumerate() {
        for (index, rule) in rules.rules.iter().enumerate() {
            for text in &rule.selectors {
                if let Some(selector) = &text.selector {
                    compiled.push(Compiled {
                        selector,
                        text,
                        order: (sheet, index),
                        rule,
                    });
                }
            }
        }
    }
    compiled
}

/// Whether the declaration of `display` that wins the cascade for
/// `element` (its `style` attribute's, then the rules it matches) is
/// `none`; the `hidden` attribute is `display: none` by default.
fn displays_none(element: &scraper::ElementRef, compiled: &[Compiled]) -> bool {
    let value = element.value();
    let mut winner: Option<(Rank, bool)> = value.attr("hidden").map(|_| ((false, 0, (0, 0)), true));
    let has = |class: &str| value.has_class(class, scraper::CaseSensitivity::CaseSensitive);
    for c in compiled.iter().filter(|c| {
        c.rule.display.is_some()
            && c.text.pseudo.is_none()
            && !c.text.later_state
            && c.text.required_class.as_deref().is_none_or(has)
            && c.selector.matches(element)
    }) {
        let Some(display) = c.rule.display else {
            continue;
        };
        let rank = (display.important, c.text.specificity, c.order);
        if winner.is_none_or(|(best, _)| rank >= best) {
            winner = Some((rank, display.none));
        }
    }
    // The element's own style="" wins over the sheets' (not over their
    // !important).
    if let Some(inline) = value.attr("style") {
        if let Some(display) = css::style_attribute(inline, &UNUSED_BASE).display {
            if !winner.is_some_and(|((important, _, _), _)| important && !display.important) {
                winner = Some(((display.important, u32::MAX, (0, 0)), display.none));
            }
        }
    }
    winner.is_some_and(|(_, none)| none)
}

/// A base URL for reading a `style` attribute's display alone.
static UNUSED_BASE: LazyLock<Url> =
    LazyLock::new(|| Url::parse("http://style.invalid/").expect("a valid URL"));

/// The images `element` shows (its own, its pseudo-elements' with content);
/// the families of the rules it matches go into `families`.
fn element_images<'r>(
    element: &scraper::ElementRef,
    compiled: &'r [Compiled<'r>],
    families: &mut HashSet<String>,
) -> Vec<&'r Url> {
    let mut winners: HashMap<(Option<&str>, css::ImageProperty), (Rank, &css::ImageDeclaration)> =
        HashMap::new();
    let mut content: HashSet<Option<&str>> = HashSet::new();
    let has = |class: &str| {
        element
            .value()
            .has_class(class, scraper::CaseSensitivity::CaseSensitive)
    };
    let matched = compiled.iter().filter(|c| {
        c.text.required_class.as_deref().is_none_or(has) && c.selector.matches(element)
    });
    for c in matched {
        let pseudo = c.text.pseudo.as_deref();
        if c.rule.sets_content {
            content.insert(pseudo);
        }
        if let Some(family) = &c.rule.family {
            families.insert(family.clone());
        }
        for declaration in &c.rule.images {
            let rank = (declaration.important, c.text.specificity, c.order);
            let slot = winners
                .entry((pseudo, declaration.property))
                .or_insert((rank, declaration));
            if rank >= slot.0 {
                *slot = (rank, declaration);
            }
        }
    }
    let mut shown: Vec<_> = winners.into_iter().collect();
    shown.sort_by(|a, b| a.0.cmp(&b.0));
    shown
        .into_iter()
        // A pseudo-element without content has no box to show it.
        .filter(|((pseudo, _), _)| pseudo.is_none() || content.contains(pseudo))
        .flat_map(|(_, (_, declaration))| declaration.images.iter())
        .collect()
}

/// Where a resource redirected to, as a resource of its kind (or another
/// host's, left out unless named).
pub fn redirected(url: Url, kind: ResourceKind, page: &Url, hosts: &Hosts) -> Found {
    let mut collector = Collector::new(page, hosts);
    collector.add_url(url, kind);
    collector.found
}

/// The elements that name resources (compiled once per process).
static NAMING: LazyLock<Selector> = LazyLock::new(|| {
    Selector::parse(
        "link[href], script[src], img, input[src], video, audio, embed[src], object[data], \
         style, [style]",
    )
    .expect("a valid selector")
});
static BASE: LazyLock<Selector> =
    LazyLock::new(|| Selector::parse("base[href]").expect("a valid selector"));

/// The resources a browser fetches for the page at `page` from its HTML
/// (its `<style>` elements and `style` attributes included).
pub fn in_document(document: &Html, page: &Url, hosts: &Hosts, style: &mut PageStyle) -> Found {
    // (The page's default icon, when it names none, comes after the page
    // has loaded: [`default_icon`].)
    let base = base_url(document, page);
    let mut collector = Collector::new(page, hosts);
    // The lazy images near the top, estimated when the page has one.
    let mut near_top: Option<HashSet<ego_tree::NodeId>> = None;
    for element in document.select(&NAMING) {
        let tag = element.value().name();
        let attr = |name: &str| element.value().attr(name);
        match tag {
            "link" => {
                let kind = link_kind(&element);
                collector.found.names_icon |= kind == Some(ResourceKind::Icon);
                if let (Some(kind), Some(href)) = (kind, attr("href")) {
                    if let (ResourceKind::Stylesheet, Some(url)) = (kind, css::join(&base, href)) {
                        style.reserve(&url);
                    }
                    collector.add(&base, href, kind);
                }
            }
            "script" if script_runs(attr("type"), attr("nomodule").is_some()) => {
                if let Some(src) = attr("src") {
                    collector.add(&base, src, ResourceKind::Script);
                }
            }
            // A lazy image waits until the user scrolls near it, unless it
            // is near the top already.
            "img"
                if !attr("loading").is_some_and(|l| l.eq_ignore_ascii_case("lazy"))
                    || near_top
                        .get_or_insert_with(|| super::layout::lazy_images_near_top(document))
                        .contains(&element.id()) =>
            {
                let own = || image_source(attr("srcset"), attr("src"));
                if let Some(chosen) = picture_source(&element).or_else(own) {
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
            "style" if css::media_applies(attr("media").unwrap_or("")) => {
                let text: String = element.text().collect();
                let rules = SheetRules::parse(&text, &base);
                collector.extend(style.add_sheet(None, rules, page, hosts));
            }
            _ => {}
        }
        if let Some(inline) = attr("style") {
            let rule = css::style_attribute(inline, &base);
            for declaration in rule.images {
                for url in declaration.images {
                    collector.add_url(url, ResourceKind::Image);
                }
            }
            if let Some(family) = rule.family {
                style.inline_families.insert(family);
            }
        }
    }
    collector.found
}

/// A resource's kind by its path's extension, for what no element names
/// (a page's `also_loads:`): a style sheet is read for what it names.
pub fn kind_by_extension(url: &Url) -> ResourceKind {
    let name = url.path().rsplit('/').next().unwrap_or_default();
    let extension = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match extension.as_str() {
        "css" => ResourceKind::Stylesheet,
        "js" | "mjs" => ResourceKind::Script,
        "png" | "jpg" | "jpeg" | "gif" | "webp" | "avif" | "svg" | "ico" | "bmp" => {
            ResourceKind::Image
        }
        "woff" | "woff2" | "ttf" | "otf" | "eot" => ResourceKind::Font,
        "mp4" | "webm" | "mp3" | "ogg" | "wav" | "m4a" => ResourceKind::Media,
        _ => ResourceKind::Other,
    }
}

/// The icon a browser asks for when a page names none: `/favicon.ico` of
/// the page's origin (an http or https page's only).
pub fn default_icon(page: &Url) -> Option<Resource> {
    if !matches!(page.scheme(), "http" | "https") {
        return None;
    }
    Some(Resource {
        url: page.join("/favicon.ico").ok()?,
        kind: ResourceKind::Icon,
    })
}

fn base_url(document: &Html, page: &Url) -> Url {
    document
        .select(&BASE)
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
    // Not `apple-touch-icon`: a desktop browser leaves it to iOS.
    if has("icon") {
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
            Some(a) if a == "fetch" => ResourceKind::Other,
            // `as` missing or unknown: a browser does not fetch it.
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
    for (url, descriptor) in srcset_candidates(srcset) {
        let density = match descriptor {
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
            Some((b, _)) => match (density >= 1.0, b >= 1.0) {
                (true, true) => density < b,
                (true, false) => true,
                (false, true) => false,
                (false, false) => density > b,
            },
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

/// The candidates of a `srcset`, each its URL and first descriptor, split
/// as the HTML standard does: a URL runs to the next whitespace (so a
/// `data:` URL keeps its commas); commas that end it, or the first comma
/// outside parentheses after its descriptors, end the candidate.
fn srcset_candidates(srcset: &str) -> Vec<(&str, Option<&str>)> {
    let mut candidates = Vec::new();
    let mut rest = srcset;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == ',');
        if rest.is_empty() {
            return candidates;
        }
        let end = rest
            .find(|c: char| c.is_ascii_whitespace())
            .unwrap_or(rest.len());
        let (url, after) = rest.split_at(end);
        let bare = url.trim_end_matches(',');
        if bare.len() < url.len() {
            // A comma right after the URL: a candidate without descriptors.
            candidates.push((bare, None));
            rest = after;
            continue;
        }
        let stop = descriptors_end(after);
        candidates.push((url, after[..stop].split_ascii_whitespace().next()));
        rest = &after[stop..];
    }
}

/// Where a candidate's descriptors end: at the first comma outside
/// parentheses (or the end).
fn descriptors_end(text: &str) -> usize {
    let mut in_parentheses = false;
    for (i, c) in text.char_indices() {
        match c {
            '(' => in_parentheses = true,
            ')' => in_parentheses = false,
            ',' if !in_parentheses => return i,
            _ => {}
        }
    }
    text.len()
}

/// The image of an `<img>` in a `<picture>`: the first `<source>` before it
/// whose `type` is empty or an image type Chromium decodes, whose `media`
/// applies and whose `srcset` gives a candidate; else the `<img>`'s own.
fn picture_source(img: &scraper::ElementRef) -> Option<String> {
    let picture = img.parent().and_then(scraper::ElementRef::wrap)?;
    if picture.value().name() != "picture" {
        return None;
    }
    picture
        .children()
        .take_while(|child| child.id() != img.id())
        .filter_map(scraper::ElementRef::wrap)
        .filter(|child| child.value().name() == "source")
        .find_map(|source| {
            let attr = |name: &str| source.value().attr(name);
            let fits = attr("type").is_none_or(decoded_image_type)
                && css::media_applies(attr("media").unwrap_or(""));
            // A source's srcset of widths needs the layout, as an img's does.
            fits.then(|| image_source(attr("srcset"), None)).flatten()
        })
}

/// Whether Chromium decodes images of this MIME type (a `<source type>`:
/// parameters after `;` aside).
fn decoded_image_type(kind: &str) -> bool {
    let kind = kind
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    kind.is_empty()
        || matches!(
            kind.as_str(),
            "image/avif"
                | "image/webp"
                | "image/jpeg"
                | "image/jpg"
                | "image/pjpeg"
                | "image/png"
                | "image/x-png"
                | "image/apng"
                | "image/gif"
                | "image/bmp"
                | "image/svg+xml"
                | "image/x-icon"
                | "image/vnd.microsoft.icon"
                | "image/x-xbitmap"
        )
}

#[cfg(test)]
#[path = "resources_tests.rs"]
mod tests;
