//! What went over the wire when a run loaded pages as a browser does. The
//! run's total counts pages (their time is the one judged); the requests a
//! page is made of (its document, `L (html)`, and its resources,
//! `L (resources)`) are labels beside it. The manifest keeps each label's
//! role ([`LabelRole`]), so a saved bundle, a merged one and a recovered one
//! still say how many requests and bytes that was ([`WireCount`]).
//! Bundles written before (no roles) read as before: no count.

use crate::summary::LabelFigures;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a label stands for, when it is not a plain request (those are not
/// listed in the manifest's `label_roles`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LabelRole {
    /// A group of steps: its samples stand for others'.
    Group,
    /// A page load: its document and resources, until the last arrived.
    Page,
    /// A page load's document request (`L (html)`).
    PageDocument,
    /// A page load's resource requests (`L (resources)`).
    PageResources,
}

/// Every HTTP request of a run that loaded pages, and its bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct WireCount {
    /// Requests that went over the wire: plain steps', and pages'
    /// documents and resources.
    pub requests: u64,
    /// Page loads (the total counts them, beside plain steps).
    pub pages: u64,
    /// Of `requests`: the pages' documents.
    pub documents: u64,
    /// Of `requests`: the pages' resources (what a user's cache answered
    /// is not a request).
    pub resources: u64,
    /// Plain steps' requests.
    pub plain: u64,
    pub bytes_received: u64,
    pub bytes_sent: u64,
}

impl WireCount {
    /// The count from the labels' figures and their roles; `None` when no
    /// label is a page (the total counts the requests then).
    pub fn of(
        labels: &BTreeMap<String, LabelFigures>,
        roles: &BTreeMap<String, LabelRole>,
    ) -> Option<WireCount> {
        if !roles.values().any(|r| *r == LabelRole::Page) {
            return None;
        }
        let mut count = WireCount::default();
        for (name, figures) in labels {
            let on_wire = match roles.get(name) {
                Some(LabelRole::Group) => false,
                Some(LabelRole::Page) => {
                    count.pages += figures.count;
                    false
                }
                Some(LabelRole::PageDocument) => {
                    count.documents += figures.count;
                    true
                }
                Some(LabelRole::PageResources) => {
                    count.resources += figures.count;
                    true
                }
                None => {
                    count.plain += figures.count;
                    true
                }
            };
            if on_wire {
                count.requests += figures.count;
                count.bytes_received += figures.bytes_received;
                count.bytes_sent += figures.bytes_sent;
            }
        }
        Some(count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(count: u64, bytes: u64) -> LabelFigures {
        LabelFigures {
            count,
            bytes_received: bytes,
            bytes_sent: count * 100,
            ..LabelFigures::default()
        }
    }

    #[test]
    fn pages_count_their_documents_and_resources_on_the_wire() {
        let labels: BTreeMap<String, LabelFigures> = [
            ("login", figures(10, 1_000)),
            ("course", figures(20, 90_000)),
            ("course (html)", figures(20, 30_000)),
            ("course (resources)", figures(140, 60_000)),
            ("reading", figures(20, 91_000)),
        ]
        .into_iter()
        .map(|(n, f)| (n.to_string(), f))
        .collect();
        let roles: BTreeMap<String, LabelRole> = [
            ("course", LabelRole::Page),
            ("course (html)", LabelRole::PageDocument),
            ("course (resources)", LabelRole::PageResources),
            ("reading", LabelRole::Group),
        ]
        .into_iter()
        .map(|(n, r)| (n.to_string(), r))
        .collect();
        let count = WireCount::of(&labels, &roles).unwrap();
        assert_eq!(
            count,
            WireCount {
                requests: 170,
                pages: 20,
                documents: 20,
                resources: 140,
                plain: 10,
                bytes_received: 91_000,
                bytes_sent: 17_000,
            }
        );
        // Without pages (or without roles: an older bundle) the total says it.
        assert_eq!(WireCount::of(&labels, &BTreeMap::new()), None);
    }
}
