//! A style sheet read for what a page load needs of it: its `@import`s,
//! its font faces, and its rules that name an image (`url()`) or a font
//! family, each with its selectors, so that only the rules an element of
//! the page matches fetch anything (as a browser does).
//!
//! Not a full CSS parser: blocks, strings, comments and at-rules are read
//! well enough to find these; what it cannot read it skips.

use scraper::Selector;
use url::Url;

/// The width of the window the media queries are read for (px):
/// Playwright's default window, the one the tests compare with.
pub const WINDOW_WIDTH: f64 = 1280.0;

/// What a style sheet names, read once and applied to each page (a user
/// keeps it in an `Rc` beside the cached sheet: pages share it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SheetRules {
    /// `@import`ed style sheets (fetched whatever their media).
    pub imports: Vec<Url>,
    /// `@font-face`: the family and the source a browser would load.
    pub faces: Vec<(String, Url)>,
    pub rules: Vec<StyleRule>,
}

/// A rule that names an image, a font family, or a pseudo-element's
/// `content` (which makes the pseudo-element's box, and so its images).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StyleRule {
    pub selectors: Vec<SelectorText>,
    /// Its declarations of the properties that show an image.
    pub images: Vec<ImageDeclaration>,
    /// The first family of its `font-family` or `font`, lower case.
    pub family: Option<String>,
    /// It gives `content` other than `none`/`normal`.
    pub sets_content: bool,
    /// Its `display`, when it gives one.
    pub display: Option<DisplayDeclaration>,
}

/// A rule's `display`: whether it is `none` (the element and all it holds
/// are not drawn, their images not fetched), and `!important`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DisplayDeclaration {
    pub none: bool,
    pub important: bool,
}

/// One selector of a rule's list, as the cascade needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct SelectorText {
    /// The element part: pseudo-elements removed (`*` when nothing is left).
    pub element: String,
    /// `before` for `a::before` (`:before` too).
    pub pseudo: Option<String>,
    /// Ids, then classes/attributes/pseudo-classes, then types.
    pub specificity: u32,
    /// Matches only in a later state (`:hover`, `:focus`, ...).
    pub later_state: bool,
    /// `element` compiled once, when the sheet is read, for every page
    /// the sheet applies to; `None` in a later state or when it is not a
    /// selector scraper reads (the rule then matches nothing).
    pub selector: Option<Selector>,
    /// A class the element itself must have (from the selector's last
    /// compound), checked before the selector is matched: most of a
    /// theme's rules are for classes a given element does not have.
    pub required_class: Option<String>,
}

/// The properties whose images compete in the cascade.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ImageProperty {
    Background,
    ListStyle,
    Content,
    BorderImage,
    Mask,
}

/// A declaration of an [`ImageProperty`]: its images (none for `none` or
/// a shorthand without one: it still wins over earlier ones).
#[derive(Debug, Clone, PartialEq)]
pub struct ImageDeclaration {
    pub property: ImageProperty,
    pub images: Vec<Url>,
    pub important: bool,
}

impl SheetRules {
    /// Reads `css`, whose URLs are relative to `base` (the sheet's own URL,
    /// or the page's for a `<style>` element).
    pub fn parse(css: &str, base: &Url) -> SheetRules {
        let mut rules = SheetRules::default();
        let css = strip_comments(css);
        rules.read_block(&css, base);
        rules
    }

    fn read_block(&mut self, text: &str, base: &Url) {
        for item in items(text) {
            match item {
                Item::At {
                    name,
                    prelude,
                    block,
                } => self.at_rule(&name, prelude, block, base),
                Item::Qualified { prelude, block } => {
                    let rule = style_rule(prelude, block, base);
                    // Only what decides a fetch is kept: images, fonts,
                    // content, and display (none hides what an element holds).
                    if !rule.images.is_empty()
                        || rule.family.is_some()
                        || rule.sets_content
                        || rule.display.is_some()
                    {
                        self.rules.push(rule);
                    }
                }
            }
        }
    }

    fn at_rule(&mut self, name: &str, prelude: &str, block: Option<&str>, base: &Url) {
        match (name, block) {
            ("import", _) => {
                if let Some(url) = first_url(prelude).and_then(|u| join(base, &u)) {
                    self.imports.push(url);
                }
            }
            ("font-face", Some(block)) => {
                let mut family = None;
                let mut source = None;
                for (property, value) in declarations(block) {
                    match property.as_str() {
                        "font-family" => family = Some(unquote(value).to_ascii_lowercase()),
                        "src" => source = font_source(value),
                        _ => {}
                    }
                }
                if let (Some(family), Some(url)) = (family, source.and_then(|s| join(base, &s))) {
                    self.faces.push((family, url));
                }
            }
            ("media", Some(block)) if media_applies(prelude) => self.read_block(block, base),
            ("supports" | "layer" | "container" | "document", Some(block)) => {
                self.read_block(block, base)
            }
            _ => {}
        }
    }
}

enum Item<'a> {
    At {
        name: String,
        prelude: &'a str,
        block: Option<&'a str>,
    },
    Qualified {
        prelude: &'a str,
        block: &'a str,
    },
}

/// The top-level items of a block of CSS.
fn items(text: &str) -> Vec<Item<'_>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_whitespace() || bytes[i] == b';' || bytes[i] == b'}' {
            i += 1;
            continue;
        }
        if bytes[i] == b'@' {
            let name_end = (i + 1..bytes.len())
                .find(|&j| !(bytes[j].is_ascii_alphanumeric() || bytes[j] == b'-'))
                .unwrap_or(bytes.len());
            let name = text[i + 1..name_end].to_ascii_lowercase();
            let stop = scan_to(text, name_end, b";{");
            let prelude = &text[name_end..stop];
            if stop < bytes.len() && bytes[stop] == b'{' {
                let close = matching_brace(text, stop);
                out.push(Item::At {
                    name,
                    prelude,
                    block: Some(&text[stop + 1..close.min(text.len())]),
                });
                i = close + 1;
            } else {
                out.push(Item::At {
                    name,
                    prelude,
                    block: None,
                });
                i = stop + 1;
            }
            continue;
        }
        let open = scan_to(text, i, b"{");
        if open >= bytes.len() {
            break;
        }
        let close = matching_brace(text, open);
        out.push(Item::Qualified {
            prelude: &text[i..open],
            block: &text[open + 1..close.min(text.len())],
        });
        i = close + 1;
    }
    out
}

/// The bytes of `text` from `from` that are not inside a string, with
/// their offsets (a string's quotes and escapes are skipped whole).
fn outside_strings(text: &str, from: usize) -> impl Iterator<Item = (usize, u8)> + '_ {
    let bytes = text.as_bytes();
    let mut quote: Option<u8> = None;
    let mut escaped = false;
    (from..bytes.len()).filter_map(move |i| {
        let b = bytes[i];
        match quote {
            Some(_) if escaped => escaped = false,
            Some(_) if b == b'\\' => escaped = true,
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'"' || b == b'\'' => quote = Some(b),
            None => return Some((i, b)),
        }
        None
    })
}

/// The first of `stops` at or after `from` outside strings and brackets
/// (the text's length when none).
fn scan_to(text: &str, from: usize, stops: &[u8]) -> usize {
    let mut depth = 0i32;
    for (i, b) in outside_strings(text, from) {
        if depth <= 0 && stops.contains(&b) {
            return i;
        }
        match b {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            _ => {}
        }
    }
    text.len()
}

/// The index of the `}` closing the `{` at `open` (the length when none).
fn matching_brace(text: &str, open: usize) -> usize {
    let mut depth = 0i32;
    for (i, b) in outside_strings(text, open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    text.len()
}

/// `property: value` pairs of a declaration block (property lower case).
pub fn declarations(block: &str) -> Vec<(String, &str)> {
    let mut out = Vec::new();
    let mut from = 0;
    while from < block.len() {
        let end = scan_to(block, from, b";");
        let part = &block[from..end];
        if let Some((property, value)) = part.split_once(':') {
            out.push((property.trim().to_ascii_lowercase(), value.trim()));
        }
        from = end + 1;
    }
    out
}

fn style_rule(prelude: &str, block: &str, base: &Url) -> StyleRule {
    let mut rule = StyleRule {
        selectors: split_selectors(prelude)
            .into_iter()
            .map(selector_text)
            .collect(),
        images: Vec::new(),
        family: None,
        sets_content: false,
        display: None,
    };
    read_declarations(&mut rule, block, base);
    rule
}

/// A `style` attribute's declarations, as a rule without selectors.
pub fn style_attribute(text: &str, base: &Url) -> StyleRule {
    let mut rule = StyleRule::default();
    read_declarations(&mut rule, text, base);
    rule
}

/// The images, the first font family and the `content` of a declaration
/// block (also a `style` attribute's).
pub fn read_declarations(rule: &mut StyleRule, block: &str, base: &Url) {
    for (property, value) in declarations(block) {
        let (value, important) = match value.strip_suffix("important") {
            Some(rest) if rest.trim_end().ends_with('!') => {
                (rest.trim_end().trim_end_matches('!').trim_end(), true)
            }
            _ => (value, false),
        };
        let image_property = match property.as_str() {
            "display" => {
                rule.display = Some(DisplayDeclaration {
                    none: value.trim().eq_ignore_ascii_case("none"),
                    important,
                });
                continue;
            }
            "font-family" => {
                rule.family = first_family(value);
                continue;
            }
            "font" => {
                rule.family = shorthand_family(value).or(rule.family.take());
                continue;
            }
            "background" | "background-image" => ImageProperty::Background,
            "list-style" | "list-style-image" => ImageProperty::ListStyle,
            "content" => {
                let v = value.trim().to_ascii_lowercase();
                rule.sets_content |= v != "none" && v != "normal";
                ImageProperty::Content
            }
            "border-image" | "border-image-source" => ImageProperty::BorderImage,
            "mask" | "mask-image" | "-webkit-mask" | "-webkit-mask-image" => ImageProperty::Mask,
            _ => continue,
        };
        let images: Vec<Url> = urls(value).iter().filter_map(|u| join(base, u)).collect();
        // `content: "x"` names no image and does not hide one: only a
        // content image competes.
        if image_property == ImageProperty::Content && images.is_empty() {
            continue;
        }
        rule.images.push(ImageDeclaration {
            property: image_property,
            images,
            important,
        });
    }
}

/// A selector list split at its top-level commas.
pub fn split_selectors(list: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in list.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(list[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(list[start..].trim());
    parts.retain(|p| !p.is_empty());
    parts
}

/// Pseudo-classes of a state a page is not in when it loads.
const LATER_STATES: [&str; 7] = [
    ":hover",
    ":active",
    ":focus",
    ":visited",
    ":target",
    ":focus-within",
    ":focus-visible",
];
const LEGACY_PSEUDO_ELEMENTS: [&str; 4] = [":before", ":after", ":first-line", ":first-letter"];

fn selector_text(selector: &str) -> SelectorText {
    let lower = selector.to_ascii_lowercase();
    let later_state = LATER_STATES.iter().any(|s| {
        lower.match_indices(s).any(|(at, _)| {
            !lower[at + s.len()..].starts_with(|c: char| c == '-' || c.is_ascii_alphanumeric())
        })
    });
    let mut element = selector.to_string();
    let mut pseudo = None;
    while let Some(at) = element.find("::") {
        let end = element[at + 2..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .map_or(element.len(), |e| at + 2 + e);
        pseudo = Some(element[at + 2..end].to_ascii_lowercase());
        element.replace_range(at..end, "");
    }
    for legacy in LEGACY_PSEUDO_ELEMENTS {
        if let Some(at) = element.to_ascii_lowercase().find(legacy) {
            pseudo = Some(legacy[1..].to_string());
            element.replace_range(at..at + legacy.len(), "");
        }
    }
    let element = element.trim();
    let element = if element.is_empty() || element.ends_with(['>', '+', '~']) {
        format!("{element}*")
    } else {
        element.to_string()
    };
    let selector = if later_state {
        None
    } else {
        Selector::parse(&element).ok()
    };
    SelectorText {
        specificity: specificity(&element),
        required_class: required_class(&element),
        element,
        pseudo,
        later_state,
        selector,
    }
}

/// The first class of a selector's last compound (`ul li.item:hover` →
/// `item`), read up to its first attribute or pseudo-class; `None` when
/// it has none or holds an escape.
pub fn required_class(selector: &str) -> Option<String> {
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in selector.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ' ' | '>' | '+' | '~' if depth == 0 => start = i + 1,
            _ => {}
        }
    }
    let last = &selector[start..];
    let plain = &last[..last.find(['[', ':', '(']).unwrap_or(last.len())];
    if plain.contains('\\') {
        return None;
    }
    let class = &plain[plain.find('.')? + 1..];
    let end = class.find(['.', '#']).unwrap_or(class.len());
    (end > 0).then(|| class[..end].to_string())
}

/// CSS specificity as one number: ids × 10,000 + classes, attributes and
/// pseudo-classes × 100 + types.
pub fn specificity(selector: &str) -> u32 {
    let bytes = selector.as_bytes();
    let (mut ids, mut classes, mut types) = (0u32, 0u32, 0u32);
    let mut i = 0;
    let ident = |mut j: usize| {
        while j < bytes.len()
            && (bytes[j].is_ascii_alphanumeric()
                || bytes[j] == b'-'
                || bytes[j] == b'_'
                || bytes[j] >= 0x80)
        {
            j += 1;
        }
        j
    };
    while i < bytes.len() {
        match bytes[i] {
            b'#' => {
                ids += 1;
                i = ident(i + 1);
            }
            b'.' => {
                classes += 1;
                i = ident(i + 1);
            }
            b'[' => {
                classes += 1;
                i = selector[i..].find(']').map_or(bytes.len(), |e| i + e + 1);
            }
            b':' => {
                let end = ident(i + 1);
                let name = &selector[i + 1..end];
                if !matches!(name, "where" | "is" | "not" | "has") {
                    classes += 1;
                }
                i = end;
                if i < bytes.len() && bytes[i] == b'(' {
                    // The argument of :not(), :is(), :nth-child(): skipped.
                    let mut depth = 0;
                    while i < bytes.len() {
                        match bytes[i] {
                            b'(' => depth += 1,
                            b')' => {
                                depth -= 1;
                                if depth == 0 {
                                    i += 1;
                                    break;
                                }
                            }
                            _ => {}
                        }
                        i += 1;
                    }
                }
            }
            b if b.is_ascii_alphabetic() => {
                types += 1;
                i = ident(i);
            }
            _ => i += 1,
        }
    }
    ids.min(99) * 10_000 + classes.min(99) * 100 + types.min(99)
}

fn first_family(value: &str) -> Option<String> {
    let first = value.split(',').next()?;
    let family = unquote(first.trim_end_matches("!important").trim()).to_ascii_lowercase();
    (!family.is_empty()).then_some(family)
}

/// `bold 14px/1.2 "Open Sans", serif` → `open sans`: the family follows
/// the size (the first word holding a digit).
fn shorthand_family(value: &str) -> Option<String> {
    let first = value.split(',').next()?;
    let words: Vec<&str> = first.split_whitespace().collect();
    let size = words
        .iter()
        .position(|w| w.chars().any(|c| c.is_ascii_digit()))?;
    let family = words[size + 1..].join(" ");
    let family = unquote(&family).to_ascii_lowercase();
    (!family.is_empty()).then_some(family)
}

/// Whether a `@media` prelude applies to a screen `WINDOW_WIDTH` wide:
/// any of its comma-separated queries.
pub fn media_applies(prelude: &str) -> bool {
    let prelude = prelude.trim().to_ascii_lowercase();
    if prelude.is_empty() {
        return true;
    }
    prelude.split(',').any(|query| {
        let query = query.trim();
        let negated = query.starts_with("not ");
        let query = query.trim_start_matches("not ").trim_start_matches("only ");
        let mut applies = true;
        for part in query.split(" and ") {
            let part = part.trim();
            applies &= match part {
                "all" | "screen" => true,
                "print" | "speech" | "tv" | "projection" | "handheld" => false,
                _ if part.starts_with('(') => feature_applies(part),
                _ => true,
            };
        }
        applies != negated
    })
}

fn feature_applies(feature: &str) -> bool {
    let inner = feature.trim_start_matches('(').trim_end_matches(')');
    let Some((name, value)) = inner.split_once(':') else {
        return true;
    };
    let px = |v: &str| -> Option<f64> {
        let v = v.trim();
        if let Some(n) = v.strip_suffix("px") {
            n.trim().parse().ok()
        } else if let Some(n) = v.strip_suffix("em") {
            n.trim().parse::<f64>().ok().map(|n| n * 16.0)
        } else {
            None
        }
    };
    match (name.trim(), px(value)) {
        ("min-width", Some(w)) => WINDOW_WIDTH >= w,
        ("max-width", Some(w)) => WINDOW_WIDTH <= w,
        _ => true,
    }
}

/// The URLs in a value's `url()`s, in order.
pub fn urls(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = value;
    while let Some(at) = find_ci(rest, "url(") {
        let inner = &rest[at + 4..];
        let close = scan_to(inner, 0, b")");
        let url = unquote(&inner[..close.min(inner.len())]);
        if !url.is_empty() {
            out.push(url);
        }
        rest = &inner[close.min(inner.len())..];
    }
    out
}

/// `url("a.css") screen` or `"a.css"` → `a.css`.
fn first_url(prelude: &str) -> Option<String> {
    let text = prelude.trim_start();
    if find_ci(text, "url(") == Some(0) {
        return urls(text).into_iter().next();
    }
    let quote = text.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let inner = &text[1..];
    let close = inner.find(quote)?;
    Some(inner[..close].to_string())
}

/// The first source of an `@font-face` in a format a browser reads.
fn font_source(value: &str) -> Option<String> {
    let mut from = 0;
    while from < value.len() {
        let end = scan_to(value, from, b",");
        let candidate = &value[from..end];
        from = end + 1;
        let Some(url) = urls(candidate).into_iter().next() else {
            continue; // local(...)
        };
        let readable = match find_ci(candidate, "format(") {
            None => true,
            Some(f) => {
                let format = candidate[f + 7..]
                    .trim_start()
                    .trim_start_matches(['"', '\''])
                    .to_ascii_lowercase();
                ["woff2", "woff", "truetype", "opentype"]
                    .iter()
                    .any(|known| format.starts_with(known))
            }
        };
        if readable {
            return Some(url);
        }
    }
    None
}

/// An absolute http(s) URL without its fragment; `None` for `data:` and
/// other schemes.
pub fn join(base: &Url, reference: &str) -> Option<Url> {
    let reference = reference.trim();
    if reference.is_empty() || reference.starts_with('#') {
        return None;
    }
    let mut url = base.join(reference).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    url.set_fragment(None);
    Some(url)
}

pub fn unquote(text: &str) -> String {
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
#[path = "css_tests.rs"]
mod tests;
