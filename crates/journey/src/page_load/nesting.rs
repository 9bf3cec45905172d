//! A page's HTML parsed with its nesting bounded. The HTML parser's work
//! grows with the depth of the open elements at each tag (a page of
//! 200,000 nested `<div>`s took 132 s on the worker thread, stalling its
//! other users), so, as Chromium does past 512 levels, an element opened
//! deeper than [`MOST_DEPTH`] does not nest: it is closed at once and what
//! it held follows it as its siblings (its attributes, and so the resources
//! they name, are kept).
//!
//! The depth is counted by one pass over the text that reads tags as the
//! HTML tokenizer does (comments, raw text such as `<script>`, quoted
//! attribute values) and keeps a stack of the elements that nest: not void
//! elements (`<img>`), nor those whose end tag is optional (`<p>`, `<li>`,
//! `<td>`). A page whose count stays within [`MOST_DEPTH`] is parsed as it
//! is, so what is read from an ordinary page does not change.

use scraper::Html;
use std::borrow::Cow;
use std::collections::HashMap;

/// The deepest an element nests (Chromium's HTML parser's limit).
pub const MOST_DEPTH: usize = 512;

/// Open elements an end tag looks through for its own; past them it is
/// taken as stray (as the parser does at a scope's edge), which keeps the
/// pass linear.
const END_TAG_REACH: usize = 32;

/// The document of `html`, its nesting bounded.
pub fn parse(html: &str) -> Html {
    Html::parse_document(&bounded(html))
}

/// `html`, or, when it nests deeper than [`MOST_DEPTH`], `html` with each
/// element opened deeper closed at once (and its own end tag left out).
pub fn bounded(html: &str) -> Cow<'_, str> {
    let mut pass = Pass::default();
    let bytes = html.as_bytes();
    let mut at = 0;
    let mut copied = 0;
    while let Some(offset) = memchr(b'<', &bytes[at..]) {
        let start = at + offset;
        let (end, edit) = pass.markup(bytes, start);
        if let Some(edit) = edit {
            let out = pass
                .out
                .get_or_insert_with(|| String::with_capacity(html.len() + 64));
            out.push_str(&html[copied..start]);
            match edit {
                Edit::CloseAtOnce(name) => {
                    out.push_str(&html[start..end]);
                    out.push_str("</");
                    out.push_str(&name);
                    out.push('>');
                }
                Edit::Drop => {}
            }
            copied = end;
        }
        at = end.max(start + 1);
    }
    match pass.out {
        Some(mut out) => {
            out.push_str(&html[copied..]);
            Cow::Owned(out)
        }
        None => Cow::Borrowed(html),
    }
}

fn memchr(byte: u8, bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|b| *b == byte)
}

/// What the pass changes at a tag.
enum Edit {
    /// A start tag opened too deep: closed right after it.
    CloseAtOnce(String),
    /// The end tag of an element closed at once.
    Drop,
}

#[derive(Default)]
struct Pass {
    /// The elements open (that nest), innermost last.
    open: Vec<String>,
    /// Per name, the elements closed at once whose end tags are still to come.
    closed_early: HashMap<String, usize>,
    /// Open `<svg>` and `<math>` elements: inside them `/>` closes a tag.
    foreign: usize,
    out: Option<String>,
}

impl Pass {
    /// Reads the markup at `start` (a `<`): where it ends, and what changes.
    fn markup(&mut self, bytes: &[u8], start: usize) -> (usize, Option<Edit>) {
        let rest = &bytes[start..];
        if rest.starts_with(b"<!--") {
            return (
                find(bytes, start + 4, b"-->").map_or(bytes.len(), |i| i + 3),
                None,
            );
        }
        if rest.starts_with(b"<!") || rest.starts_with(b"<?") {
            let close: &[u8] = if rest.starts_with(b"<![CDATA[") {
                b"]]>"
            } else {
                b">"
            };
            return (
                find(bytes, start + 2, close).map_or(bytes.len(), |i| i + close.len()),
                None,
            );
        }
        let end_tag = rest.starts_with(b"</");
        let name_start = start + if end_tag { 2 } else { 1 };
        if !bytes.get(name_start).is_some_and(u8::is_ascii_alphabetic) {
            return (start + 1, None);
        }
        let name_end = name_start
            + bytes[name_start..]
                .iter()
                .position(|b| b.is_ascii_whitespace() || *b == b'/' || *b == b'>')
                .unwrap_or(bytes.len() - name_start);
        let name = String::from_utf8_lossy(&bytes[name_start..name_end]).to_ascii_lowercase();
        let (end, self_closing) = tag_end(bytes, name_end);
        if end_tag {
            return (end, self.end_tag(&name));
        }
        if RAW_TEXT.contains(&name.as_str()) {
            return (raw_text_end(bytes, end, &name), None);
        }
        (end, self.start_tag(name, self_closing))
    }

    fn start_tag(&mut self, name: String, self_closing: bool) -> Option<Edit> {
        let foreign_root = name == "svg" || name == "math";
        if VOID.contains(&name.as_str())
            || OPTIONAL_END.contains(&name.as_str())
            || (self_closing && (self.foreign > 0 || foreign_root))
        {
            return None;
        }
        // A link, button or nobr opened inside one of its kind closes it.
        if matches!(name.as_str(), "a" | "button" | "nobr") {
            self.close_open(&name);
        }
        if self.open.len() >= MOST_DEPTH {
            *self.closed_early.entry(name.clone()).or_default() += 1;
            return Some(Edit::CloseAtOnce(name));
        }
        self.foreign += usize::from(foreign_root);
        self.open.push(name);
        None
    }

    fn end_tag(&mut self, name: &str) -> Option<Edit> {
        if let Some(early) = self.closed_early.get_mut(name).filter(|n| **n > 0) {
            *early -= 1;
            return Some(Edit::Drop);
        }
        self.close_open(name);
        None
    }

    /// Closes the open element `name` (and those inside it) as an end tag
    /// does, if it is within reach and not across a scope's edge.
    fn close_open(&mut self, name: &str) {
        let special = SPECIAL.contains(&name);
        let reach = self.open.len().saturating_sub(END_TAG_REACH);
        for i in (reach..self.open.len()).rev() {
            let open = self.open[i].as_str();
            if open == name {
                for closed in self.open.drain(i..) {
                    self.foreign -= usize::from(closed == "svg" || closed == "math");
                }
                return;
            }
            // The parser ignores an end tag that would close across these.
            let edge = if special { SCOPE_EDGE } else { SPECIAL };
            if edge.contains(&open) {
                return;
            }
        }
    }
}

/// Where the tag whose name ends at `from` ends (after its `>`), and
/// whether it ends with `/>`. Quoted attribute values may hold `>`.
fn tag_end(bytes: &[u8], from: usize) -> (usize, bool) {
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'>' => return (i + 1, i > from && bytes[i - 1] == b'/'),
            b'=' => {
                i += 1;
                while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
                    i += 1;
                }
                if let Some(&quote @ (b'"' | b'\'')) = bytes.get(i) {
                    i = memchr(quote, &bytes[i + 1..]).map_or(bytes.len(), |q| i + 1 + q + 1);
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    (bytes.len(), false)
}

/// Where the raw text of a `<name>` element starting at `from` ends: after
/// its end tag (any case), or at the end of the document.
fn raw_text_end(bytes: &[u8], from: usize, name: &str) -> usize {
    if name == "plaintext" {
        return bytes.len();
    }
    let mut at = from;
    while let Some(i) = find(bytes, at, b"</") {
        let after = i + 2 + name.len();
        let named = bytes
            .get(i + 2..after)
            .is_some_and(|n| n.eq_ignore_ascii_case(name.as_bytes()));
        let ends = bytes
            .get(after)
            .is_none_or(|b| b.is_ascii_whitespace() || *b == b'>' || *b == b'/');
        if named && ends {
            return tag_end(bytes, after).0;
        }
        at = i + 2;
    }
    bytes.len()
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|i| from + i)
}

/// Elements without content.
const VOID: &[&str] = &[
    "area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr", "image", "img",
    "input", "keygen", "link", "meta", "param", "source", "track", "wbr",
];

/// Elements a later tag closes without an end tag, so they do not nest by
/// themselves (and headings, which contain text).
const OPTIONAL_END: &[&str] = &[
    "body", "caption", "colgroup", "dd", "dt", "h1", "h2", "h3", "h4", "h5", "h6", "head", "html",
    "li", "optgroup", "option", "p", "rb", "rp", "rt", "rtc", "tbody", "td", "tfoot", "th",
    "thead", "tr",
];

/// Elements whose content is text, not tags.
const RAW_TEXT: &[&str] = &[
    "iframe",
    "noembed",
    "noframes",
    "noscript",
    "plaintext",
    "script",
    "style",
    "textarea",
    "title",
    "xmp",
];

/// The HTML standard's "special" elements (that nest): an end tag of
/// another element does not close across them.
const SPECIAL: &[&str] = &[
    "address",
    "applet",
    "article",
    "aside",
    "blockquote",
    "button",
    "center",
    "details",
    "dir",
    "div",
    "dl",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "frameset",
    "header",
    "hgroup",
    "listing",
    "main",
    "marquee",
    "menu",
    "nav",
    "object",
    "ol",
    "pre",
    "search",
    "section",
    "select",
    "summary",
    "table",
    "template",
    "ul",
    "foreignobject",
    "desc",
    "mi",
    "mo",
    "mn",
    "ms",
    "mtext",
    "annotation-xml",
];

/// The elements that bound a scope: a special element's end tag does not
/// close across them.
const SCOPE_EDGE: &[&str] = &[
    "applet",
    "marquee",
    "object",
    "table",
    "template",
    "foreignobject",
    "desc",
    "mi",
    "mo",
    "mn",
    "ms",
    "mtext",
    "annotation-xml",
];

#[cfg(test)]
#[path = "nesting_tests.rs"]
mod tests;
