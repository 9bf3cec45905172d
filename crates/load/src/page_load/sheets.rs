//! Style sheets read once per worker thread: the users of a thread (they
//! run on it, one task each) share the rules of a sheet with the same URL
//! and the same text, instead of each keeping its own copy (a theme's
//! sheet reads into tens of KB of rules and compiled selectors; 10,000
//! users loading the same page would hold 10,000 copies).
//!
//! Kept by weak reference: a sheet no user holds any more is dropped, and
//! its entry with it when the table is next pruned. No lock: the table is
//! the thread's own.

use super::css::SheetRules;
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::rc::{Rc, Weak};
use url::Url;

/// Entries beyond which dead ones are pruned (on the next insertion).
const PRUNE_AT: usize = 256;

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
}
