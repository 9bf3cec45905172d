//! What each step's response holds that a later request may send back, and
//! the extractor that reads a value from it. Each response is read once as
//! the steps go by ([`Held::of`], its page parsed and then dropped) and its
//! values are indexed ([`Index`]), so finding where a sent value came from
//! is a look-up, not a search through the earlier pages: a recording of
//! 50,000 requests imports in linear time and memory.
//!
//! An extractor is only chosen when, applied to the recorded response as
//! the runner applies it, it yields exactly the recorded value; the value's
//! own context (an input's name, a meta tag, a JSON key, a cookie, the key
//! or parameter name before it in the text) is preferred over free text.

use crate::har::Step;
use regex::Regex;
use scraper::{Html, Selector};
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

/// How a variable is read from a response.
#[derive(Debug, Clone, PartialEq)]
pub enum Extract {
    /// A CSS selector and the attribute, the n-th match (1-based).
    Css {
        selector: String,
        attribute: String,
        nth: usize,
    },
    Json(String),
    /// A pattern whose group 1 is the value, or (`json_string`) the value
    /// as written inside a JSON string in the page's script.
    Regex {
        pattern: String,
        json_string: bool,
    },
    Cookie(String),
}

/// A value worth tracing when it is not a named input: long enough, no
/// spaces, and looking generated (letters and digits, or long).
pub fn token_like(value: &str) -> bool {
    if value.chars().any(char::is_whitespace) {
        return false;
    }
    let letters = value.chars().any(|c| c.is_ascii_alphabetic());
    let digits = value.chars().any(|c| c.is_ascii_digit());
    (value.len() >= 6 && letters && digits) || value.len() >= 16
}

/// One step's response, as far as correlation reads it.
#[derive(Debug, Default)]
pub struct Held {
    /// Every `input` with a name and a value: (name, value), in document order.
    pub inputs: Vec<(String, String)>,
    /// `meta` elements with a name and a content.
    pub metas: Vec<(String, String)>,
    /// Cookies set by any of the step's responses, the last one of a name kept.
    pub cookies: Vec<(String, String)>,
    /// Forms with a password input: their fields (name, type) in order.
    pub password_forms: Vec<Vec<(String, String)>>,
}

fn selector(text: &str) -> Option<Selector> {
    Selector::parse(text).ok()
}

/// Text inside a CSS attribute selector's double quotes.
pub fn css_string(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

impl Held {
    pub fn of(step: &Step) -> Held {
        let mut held = Held::default();
        for hop in &step.hops {
            for (name, header) in &hop.response_headers {
                if !name.eq_ignore_ascii_case("set-cookie") {
                    continue;
                }
                let pair = header.split(';').next().unwrap_or("");
                if let Some((cookie, v)) = pair.split_once('=') {
                    let (cookie, v) = (cookie.trim().to_string(), v.trim().to_string());
                    held.cookies.retain(|(n, _)| *n != cookie);
                    held.cookies.push((cookie, v));
                }
            }
        }
        let last = step.last();
        if !last.is_html() {
            return held;
        }
        let doc = Html::parse_document(&last.body);
        if let Some(sel) = selector("input[name]") {
            for input in doc.select(&sel) {
                let e = input.value();
                if let (Some(name), Some(value)) = (e.attr("name"), e.attr("value")) {
                    held.inputs.push((name.to_string(), value.to_string()));
                }
            }
        }
        if let Some(sel) = selector("meta[content]") {
            for meta in doc.select(&sel) {
                let e = meta.value();
                if let (Some(name), Some(content)) = (e.attr("name"), e.attr("content")) {
                    held.metas.push((name.to_string(), content.to_string()));
                }
            }
        }
        if let (Some(forms), Some(fields)) = (selector("form"), selector("input, textarea")) {
            for form in doc.select(&forms) {
                let list: Vec<(String, String)> = form
                    .select(&fields)
                    .filter_map(|f| {
                        let name = f.value().attr("name")?;
                        let kind = if f.value().name() == "textarea" {
                            "textarea".to_string()
                        } else {
                            f.value()
                                .attr("type")
                                .unwrap_or("text")
                                .to_ascii_lowercase()
                        };
                        Some((name.to_string(), kind))
                    })
                    .collect();
                if list.iter().any(|(_, t)| t == "password") {
                    held.password_forms.push(list);
                }
            }
        }
        held
    }
}

fn key(parts: &[&str]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    parts.hash(&mut h);
    h.finish()
}

/// Characters that end a word of a page's text, for the index: a token
/// sent back sits between quotes, after `=` or `:`, inside a path.
fn separator(c: char) -> bool {
    c.is_whitespace() || "\"'<>&;,(){}[]=?#|`:\\".contains(c)
}

/// The latest step whose response holds a value, by the value's hash
/// (the text is read again from the step when it is used).
#[derive(Debug, Default)]
pub struct Index {
    /// (input name, value) → step.
    named: HashMap<u64, u32>,
    /// A token-like value anywhere in a response (an input, a meta tag, a
    /// cookie, a JSON string, a word of the body) → step.
    anywhere: HashMap<u64, u32>,
    /// Words of redirects' Location headers.
    located: HashSet<u64>,
    /// Work done (values and words indexed, look-ups), for the tests that
    /// check the import is linear.
    pub work: u64,
}

impl Index {
    /// Adds what step `s` holds.
    pub fn add(&mut self, s: usize, step: &Step, held: &Held) {
        let s = s as u32;
        for (name, value) in &held.inputs {
            self.named.insert(key(&[name, value]), s);
            self.token(value, s);
        }
        for (_, value) in held.metas.iter().chain(&held.cookies) {
            self.token(value, s);
        }
        let last = step.last();
        if last.mime.contains("json") {
            if let Ok(json) = serde_json::from_str::<serde_json::Value>(&last.body) {
                let mut strings = Vec::new();
                json_leaves(&json, String::new(), &mut strings);
                for (_, value) in strings {
                    self.token(&value, s);
                }
            }
        }
        for word in last.body.split(separator) {
            self.word(word, s);
        }
        // Values inside a script's JSON strings (`"csrfToken":"ab+\\"`),
        // as the server made them: their escapes decoded.
        if last.body.contains('\\') {
            for word in last.body.split(|c| c != '\\' && separator(c)) {
                if word.contains('\\') {
                    self.token(&json_unescaped(word), s);
                }
            }
        }
        for hop in &step.hops {
            if let Some(location) = hop.response_header("location") {
                for word in location.split(separator) {
                    self.work += 1;
                    self.located.insert(key(&[word]));
                }
            }
        }
    }

    fn token(&mut self, value: &str, s: u32) {
        self.work += 1;
        if token_like(value) {
            self.anywhere.insert(key(&[value]), s);
        }
    }

    fn word(&mut self, word: &str, s: u32) {
        self.token(word, s);
        // A path's segments (`/edit/8f3a.../`), a base64 value's padding.
        if word.contains('/') {
            for part in word.split('/') {
                self.token(part, s);
            }
        }
        let unpadded = word.trim_end_matches('=');
        if unpadded.len() != word.len() {
            self.token(unpadded, s);
        }
    }

    /// The steps before now whose responses hold `value` (sent in
    /// `field`), latest first: the latest with an input of that name, and
    /// the latest holding it anywhere if it is token-like.
    pub fn latest(&mut self, field: Option<&str>, value: &str) -> Vec<usize> {
        self.work += 1;
        let named = field.and_then(|f| self.named.get(&key(&[f, value])).copied());
        let anywhere = if token_like(value) {
            self.anywhere
                .get(&key(&[value]))
                .or_else(|| self.anywhere.get(&key(&[value.trim_end_matches('=')])))
                .copied()
        } else {
            None
        };
        let mut steps: Vec<usize> = named
            .into_iter()
            .chain(anywhere)
            .map(|t| t as usize)
            .collect();
        steps.sort_unstable_by(|a, b| b.cmp(a));
        steps.dedup();
        steps
    }

    /// A redirect's Location held `value`.
    pub fn in_location(&self, value: &str) -> bool {
        self.located.contains(&key(&[value]))
    }
}

/// A JSON document's strings: (pointer, value).
pub fn json_leaves(json: &serde_json::Value, at: String, out: &mut Vec<(String, String)>) {
    match json {
        serde_json::Value::String(s) => out.push((at, s.clone())),
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                let key = k.replace('~', "~0").replace('/', "~1");
                json_leaves(v, format!("{at}/{key}"), out);
            }
        }
        serde_json::Value::Array(list) => {
            for (i, v) in list.iter().enumerate() {
                json_leaves(v, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// How to read `value` from step `t`'s response (`held` is what it
/// holds), sent in `field`: the first of an input of that name, another
/// input, a meta tag, a cookie, a JSON string, a regular expression keyed
/// on the text before it, that yields exactly `value` on the recording.
pub fn extractor(step: &Step, held: &Held, field: Option<&str>, value: &str) -> Option<Extract> {
    let css = |element: &str, attr: &str, list: &[(String, String)], name: &str| {
        let nth = list
            .iter()
            .filter(|(n, _)| n == name)
            .position(|(_, v)| v == value)?
            + 1;
        let sel = format!("{element}[{attr}=\"{}\"]", css_string(name));
        selector(&sel)?;
        Some(Extract::Css {
            selector: sel,
            attribute: if element == "meta" {
                "content".into()
            } else {
                "value".into()
            },
            nth,
        })
    };
    if let Some(field) = field {
        if let Some(x) = css("input", "name", &held.inputs, field) {
            return Some(x);
        }
    }
    if !token_like(value) {
        return None;
    }
    if let Some((name, _)) = held.inputs.iter().find(|(_, v)| v == value) {
        if let Some(x) = css("input", "name", &held.inputs, name) {
            return Some(x);
        }
    }
    if let Some((name, _)) = held.metas.iter().find(|(_, v)| v == value) {
        if let Some(x) = css("meta", "name", &held.metas, name) {
            return Some(x);
        }
    }
    if let Some((name, _)) = held.cookies.iter().find(|(_, v)| v == value) {
        return Some(Extract::Cookie(name.clone()));
    }
    let last = step.last();
    if last.mime.contains("json") {
        if let Ok(json) = serde_json::from_str::<serde_json::Value>(&last.body) {
            let mut strings = Vec::new();
            json_leaves(&json, String::new(), &mut strings);
            if let Some((pointer, _)) = strings.into_iter().find(|(_, v)| v == value) {
                let pointer = if pointer.is_empty() {
                    "/".into()
                } else {
                    pointer
                };
                // As the runner reads it.
                if json.pointer(&pointer).and_then(|v| v.as_str()) == Some(value) {
                    return Some(Extract::Json(pointer));
                }
            }
        }
    }
    let plain = |pattern| Extract::Regex {
        pattern,
        json_string: false,
    };
    let escaped = || {
        json_escapes(value).into_iter().find_map(|written| {
            regex_for(&last.body, &written).map(|pattern| Extract::Regex {
                pattern,
                json_string: true,
            })
        })
    };
    // A value with a backslash or a quote that a script holds is read
    // from its JSON string (its raw text there is not the value); else
    // from its own text first.
    if value.contains(['\\', '"']) {
        escaped().or_else(|| regex_for(&last.body, value).map(plain))
    } else {
        regex_for(&last.body, value).map(plain).or_else(escaped)
    }
}

/// How a JSON encoder may write `value` inside a string, when that differs
/// from the value: serde's escapes, and PHP's (which also escape `/`).
fn json_escapes(value: &str) -> Vec<String> {
    let quoted = serde_json::to_string(value).unwrap_or_default();
    let inside = quoted[1..quoted.len() - 1].to_string();
    let mut forms = Vec::new();
    let php = inside.replace('/', "\\/");
    if inside != value {
        forms.push(inside);
    }
    if php != value && !forms.contains(&php) {
        forms.push(php);
    }
    forms
}

/// A JSON string's inside with its escapes decoded (`\\` `\/` `\"`
/// `\u00e9` ...), as a `regex:` extractor with `decode: json` reads it;
/// text that is not one is kept as it is.
pub fn json_unescaped(inside: &str) -> String {
    serde_json::from_str::<String>(&format!("\"{inside}\"")).unwrap_or_else(|_| inside.to_string())
}

/// The characters a value's pattern matches: a token's usual ones and the
/// value's others; None for a value with spaces, quotes or angle brackets
/// (text, not a token).
fn value_class(value: &str) -> Option<String> {
    const USUAL: &str = "_.~+/=%";
    let mut class = String::from("[A-Za-z0-9_.~+/=%");
    let mut extra: Vec<char> = Vec::new();
    for c in value.chars() {
        if c.is_whitespace() || "\"'<>".contains(c) {
            return None;
        }
        if c.is_ascii_alphanumeric() || USUAL.contains(c) || c == '-' || extra.contains(&c) {
            continue;
        }
        extra.push(c);
    }
    for c in extra {
        if c.is_alphanumeric() {
            class.push(c);
        } else {
            class.push('\\');
            class.push(c);
        }
    }
    class.push_str("-]+");
    Some(class)
}

/// A regular expression whose first match's group 1 is `value` in `body`,
/// as the runner applies it: the nearest text before an occurrence that
/// names it (holds a letter or digit: `sesskey=`, `"token":"`), the
/// value's characters, and the character after it. None when no such
/// expression yields exactly the value on this body.
pub fn regex_for(body: &str, value: &str) -> Option<String> {
    let class = value_class(value)?;
    for (at, _) in body.match_indices(value).take(8) {
        let after = at + value.len();
        let mut start = at.saturating_sub(64);
        while !body.is_char_boundary(start) {
            start += 1;
        }
        let before = &body[start..at];
        let next = body[after..].chars().next();
        // Prefix candidates, nearest first: each starting after a separator.
        let mut cuts: Vec<usize> = before
            .char_indices()
            .filter(|(_, c)| c.is_whitespace() || "<>\"',;{(&?".contains(*c))
            .map(|(i, c)| i + c.len_utf8())
            .collect();
        cuts.reverse();
        cuts.push(0);
        for cut in cuts {
            let prefix = &before[cut..];
            if !prefix.chars().any(char::is_alphanumeric) {
                continue;
            }
            let suffix = next
                .map(|c| regex::escape(&c.to_string()))
                .unwrap_or_default();
            let pattern = format!("{}({class}){suffix}", regex::escape(prefix));
            let Ok(re) = Regex::new(&pattern) else {
                continue;
            };
            if re
                .captures(body)
                .and_then(|c| c.get(1))
                .is_some_and(|m| m.as_str() == value)
            {
                return Some(pattern);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regexes_are_keyed_on_the_values_own_context_and_verified() {
        let body = r#"<a href="/x?id=7&amp;sesskey=Ab12Cd34Ef">x</a> sesskey=zz"#;
        let pattern = regex_for(body, "Ab12Cd34Ef").unwrap();
        assert_eq!(pattern, "sesskey=([A-Za-z0-9_.~+/=%-]+)\"");
        let re = Regex::new(&pattern).unwrap();
        let other = body.replace("Ab12Cd34Ef", "Qq99Rr88Ss");
        assert_eq!(&re.captures(&other).unwrap()[1], "Qq99Rr88Ss");
        assert_eq!(regex_for(body, "missing"), None);
        // The reported case: free text before a page's title matched a
        // link's text elsewhere. A value with spaces or markup is not read
        // by a pattern at all; one whose first match is another value is
        // not chosen.
        let page = "<h1>Editing Main Page</h1><a>Editing help</a>";
        assert_eq!(regex_for(page, "Main Page"), None);
        let page = "<p>Editing help</p><h1>Editing Sandbox1 </h1>";
        let p = regex_for(page, "Sandbox1").unwrap();
        let got = Regex::new(&p).unwrap().captures(page).unwrap()[1].to_string();
        assert_eq!(got, "Sandbox1", "{p}");
        // A JSON key in a script, a token with a backslash.
        let script = r#"<script>RLCONF={"wgUser":"x","csrfToken":"9f8e7d6c5b4a+\\"};</script>"#;
        let p = regex_for(script, r"9f8e7d6c5b4a+\\").unwrap();
        assert!(p.starts_with("csrfToken"), "{p}");
    }

    fn page(body: &str) -> Step {
        let entry: crate::har::Entry = crate::har::Entry {
            started: 0.0,
            time_ms: 1.0,
            method: "GET".into(),
            url: url::Url::parse("http://wiki.test/edit").unwrap(),
            request_headers: Vec::new(),
            post: None,
            status: 200,
            response_headers: Vec::new(),
            body: body.into(),
            mime: "text/html".into(),
            resource_type: None,
        };
        Step {
            hops: vec![entry],
            unfollowed_redirect: false,
        }
    }

    #[test]
    fn a_value_only_a_scripts_json_string_holds_is_found_and_read_decoded() {
        // MediaWiki's token ends in `+\`, written `+\\` in its script; a
        // PHP encoder writes `/` as `\/`.
        let body = r#"<html><head><script>mw.user.tokens.set({"patrolToken":"+\\","csrfToken":"0f9e8d7c6b5a+\\"});x={"path":"a1b2c3\/d4e5f6"};</script></head><body><input name="wpEditToken" value="ffee0011aabb+\"></body></html>"#;
        let step = page(body);
        let held = Held::of(&step);
        let mut index = Index::default();
        index.add(0, &step, &held);
        for value in [r"0f9e8d7c6b5a+\", "a1b2c3/d4e5f6"] {
            assert_eq!(index.latest(Some("token"), value), vec![0], "{value}");
            let Some(Extract::Regex {
                pattern,
                json_string: true,
            }) = extractor(&step, &held, Some("token"), value)
            else {
                panic!("{value}: no JSON string pattern");
            };
            let got = &Regex::new(&pattern).unwrap().captures(body).unwrap()[1];
            assert_eq!(json_unescaped(got), value, "{pattern}");
        }
        // The form's own token is still read from its input.
        assert!(matches!(
            extractor(&step, &held, Some("wpEditToken"), r"ffee0011aabb+\"),
            Some(Extract::Css { .. })
        ));
    }
}
