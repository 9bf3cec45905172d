//! Style sheets read once per worker thread: the users of a thread (they
//! run on it, one task each) share the rules of a sheet with the same URL
//! and the same text, instead of each keeping its own copy (a theme's
//! sheet reads into tens of KB of rules and compiled selectors; 10,000
//! users loading the same page would hold 10,000 copies).
//!
//! Kept by weak reference: a sheet no user holds any more is dropped, and
//! its entry with it when the table is next pruned. No lock: the table is
//! the thread's own.
//!
//! A sheet is read up to [`MOST_SHEET_BYTES`] (a browser reads it all; a
//! style sheet of megabytes names its fonts and images near the top); one
//! longer is said once per URL.

use super::css::SheetRules;
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::rc::{Rc, Weak};
use url::Url;

/// Entries beyond which dead ones are pruned (on the next insertion).
const PRUNE_AT: usize = 256;

/// Most of a style sheet's text read for its references.
pub const MOST_SHEET_BYTES: usize = 4 << 20;

/// Sheets over [`MOST_SHEET_BYTES`] named in a warning, at most (a server
/// making up URLs does not fill the terminal).
const MOST_NAMED_OVER: usize = 20;

/// The URLs of the sheets over [`MOST_SHEET_BYTES`] said so far, by every
/// thread.
static SAID_OVER: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Keeps a chunk of a style sheet's body as it arrives: up to
/// [`MOST_SHEET_BYTES`] and one byte more, which says there was more.
pub fn keep_part(body: &mut Vec<u8>, chunk: &[u8]) {
    let room = (MOST_SHEET_BYTES + 1).saturating_sub(body.len());
    body.extend_from_slice(&chunk[..room.min(chunk.len())]);
}

/// The part of `css` read: its first [`MOST_SHEET_BYTES`] (to a whole
/// character), and whether that is all of it.
fn read_part(css: &str) -> (&str, bool) {
    if css.len() <= MOST_SHEET_BYTES {
        return (css, true);
    }
    let mut end = MOST_SHEET_BYTES;
    while !css.is_char_boundary(end) {
        end -= 1;
    }
    (&css[..end], false)
}

/// Says (on stderr, once per URL) that the sheet at `url` was cut; true
/// when it was said now.
fn say_over(url: &Url) -> bool {
    let mut said = SAID_OVER.lock().unwrap_or_else(|e| e.into_inner());
    if said.len() >= MOST_NAMED_OVER || said.iter().any(|u| u == url.as_str()) {
        return false;
    }
    said.push(url.as_str().to_string());
    eprintln!(
        "headroom: warning: style sheet {url} is over {} MiB: only its first {} MiB were read for resources (its later rules' images and fonts are not fetched)",
        MOST_SHEET_BYTES >> 20,
        MOST_SHEET_BYTES >> 20
    );
    true
}

thread_local! {
    static READ: RefCell<Table> = RefCell::new(Table::default());
}

#[derive(Default)]
struct Table {
    sheets: HashMap<(String, u64), Weak<SheetRules>>,
    prune_at: usize,
}

/// The rules of the sheet at `url` whose text is `css`: the ones a user of
/// this thread already holds, or read now.
pub fn read(url: &Url, css: &str) -> Rc<SheetRules> {
    let (css, whole) = read_part(css);
    if !whole {
        say_over(url);
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    css.hash(&mut hasher);
    let key = (url.as_str().to_string(), hasher.finish());
    READ.with(|table| {
        let mut table = table.borrow_mut();
        if let Some(rules) = table.sheets.get(&key).and_then(Weak::upgrade) {
            return rules;
        }
        let rules = Rc::new(SheetRules::parse(css, url));
        if table.sheets.len() >= table.prune_at.max(PRUNE_AT) {
            table.sheets.retain(|_, sheet| sheet.strong_count() > 0);
            table.prune_at = table.sheets.len() * 2;
        }
        table.sheets.insert(key, Rc::downgrade(&rules));
        rules
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_copy_of_a_sheet_per_text_and_none_once_nobody_holds_it() {
        let url = Url::parse("http://lms.example/theme/all.css").unwrap();
        let css = ".x { background: url(x.png) }";
        let first = read(&url, css);
        let second = read(&url, css);
        assert!(Rc::ptr_eq(&first, &second), "the same text is read once");
        let changed = read(&url, ".y { background: url(y.png) }");
        assert!(!Rc::ptr_eq(&first, &changed), "a new version is read");
        let elsewhere = read(&Url::parse("http://lms.example/other.css").unwrap(), css);
        assert!(
            !Rc::ptr_eq(&first, &elsewhere),
            "its URLs resolve elsewhere"
        );
        let weak = Rc::downgrade(&first);
        drop((first, second));
        assert_eq!(weak.strong_count(), 0, "the table holds no user's sheet");
    }

    /// A sheet over 4 MiB is read to 4 MiB and said once per URL (it was
    /// cut silently).
    #[test]
    fn a_sheet_over_the_limit_is_cut_and_said_once() {
        let mut body = Vec::new();
        for _ in 0..5 {
            keep_part(&mut body, &[b'a'; 1 << 20]);
        }
        assert_eq!(
            body.len(),
            MOST_SHEET_BYTES + 1,
            "one byte says there was more"
        );
        let mut css = String::from(".a { background: url(first.png) }\n");
        css.push_str(&"/* padding */".repeat(MOST_SHEET_BYTES / 13));
        css.push_str("é.b { background: url(late.png) }");
        let (part, whole) = read_part(&css);
        assert!(!whole && part.len() <= MOST_SHEET_BYTES && !part.contains("late.png"));
        assert!(read_part(".a {}").1);
        let url = Url::parse("http://lms.example/huge-once.css").unwrap();
        assert!(say_over(&url), "said the first time");
        assert!(!say_over(&url), "not twice");
        let rules = read(&url, &css);
        assert_eq!(rules.rules.len(), 1, "{:?}", rules.rules.len());
    }
}
